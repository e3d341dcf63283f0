#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/check.sh PROGRAM...: make check-vm's guest side, run by
# tests/vm/run.sh in the guest on the copy of the tree: the programs given
# (the Makefile's VM_TESTS: the suites that depend on the kernel, cgroups
# and systemd) through tests/prove.sh as make check runs them, with the
# binaries the host built. The kernel and system it ran on come first in
# the output.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
echo "# check-vm: $(uname -r), $(. /etc/os-release && echo "$PRETTY_NAME"), $(systemctl --version | head -1)," \
	"cgroup $(stat -fc %T /sys/fs/cgroup), $(nproc) CPUs, $(awk '/MemTotal/ { print int($2 / 1024) " MiB" }' /proc/meminfo)"
export PAGECACHE=$PWD/$B/pagecache MKSNAP=$PWD/$B/tests/mksnap STALLFS=$PWD/$B/tests/stallfs
# each program's time limit (tests/run-one.sh): emulation is slow
export PC_TEST_TIMEOUT=${PC_TEST_TIMEOUT:-1200}
# t-containers' dup2 race: 50 looks, not 200 (they took 2 to 10 minutes
# here; make check on the host and in the container makes all 200)
export PC_RACE_LOOKS=${PC_RACE_LOOKS:-50}
start=$(date +%s)
# (the last --exec wins: run-one.sh, with the unit tests' failures on stderr)
tests/prove.sh --timer --exec "$PWD/tests/vm/run-one-diag.sh" "$@"
rc=$?
echo "# check-vm: prove took $(($(date +%s) - start)) s, exit $rc"
exit "$rc"
