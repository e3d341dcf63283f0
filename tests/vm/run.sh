#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/vm/run.sh: run a command as root in a Debian guest on its own
# kernel (Debian 12: Linux 6.1, cgroup v2, systemd 252 as PID 1), on a copy
# of this worktree, and bring its output and exit status back.
#
# usage: tests/vm/run.sh [-C DIR] [-e VAR=VALUE]... [--] CMD [ARG]...
#   Run from a worktree root (or name it with -C), after building there on
#   the host (make -j2, plus the test programs the command runs): the guest
#   runs the host's binaries and builds nothing (same Debian release, same
#   libraries). The tree, without .git and objects, is copied to the same
#   path in the guest and CMD runs there with bash, as root, with -e's
#   variables; its output streams to stdout; run.sh exits with its status
#   (125: the guest gave none: it did not boot, crashed or ran out of time).
#   e.g. tests/vm/run.sh -- prove --exec tests/run-one.sh tests/cli/t-stat.sh
#        tests/vm/run.sh -- bash -c 'uname -r; systemctl is-system-running'
# env:
#   PCVM_SUITE    Debian suite of the guest (default bookworm)
#   PCVM_ACCEL    tcg, kvm or auto (default): kvm where /dev/kvm is usable and
#                 runs stock kernels, tcg (emulation, about 3x slower) elsewhere,
#                 e.g. under a PVM hypervisor (kvm_pvm loaded)
#   PCVM_CPUS, PCVM_MEM   guest CPUs (default: 2) and memory in MiB (2560)
#   PCVM_TIMEOUT  seconds before the guest is killed (default 3600)
#   PCVM_OUT      keep the run's files in this directory (log: the output,
#                 rc, console.log: the guest's serial console); by default a
#                 temporary directory, removed at the end
#   PCVM_CACHE    image cache (default /var/tmp/pcvm; see image.sh)
# Needs root, qemu-system-x86 and, for the first run, mmdebstrap (image.sh
# builds the image then, a few minutes, and caches it). No network in the
# guest, no mount or loop device on the host; the guest's disk is a
# throw-away snapshot of the cached image: every run boots the same system.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tree=$PWD
envs=()
while [ $# -gt 0 ]; do
	case $1 in
	-C) tree=$(cd "$2" && pwd); shift 2 ;;
	-e) envs+=("$2"); shift 2 ;;
	--) shift; break ;;
	-h|--help) sed -n '/^# usage:/,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: tests/vm/run.sh [-C DIR] [-e VAR=VALUE]... [--] CMD [ARG]..." >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "run.sh: needs qemu-system-x86_64 (apt-get install qemu-system-x86)" >&2; exit 1; }

cache=${PCVM_CACHE:-/var/tmp/pcvm}
mkdir -p "$cache"
# the image (built once, one build at a time); runs share it read-only
img=$(PCVM_CACHE=$cache "$here/image.sh" | tail -n 1)
[ -s "$img/root.img" ] || { echo "run.sh: no guest image (tests/vm/image.sh failed)" >&2; exit 125; }

accel=${PCVM_ACCEL:-auto}
if [ "$accel" = auto ]; then
	accel=tcg
	if [ -w /dev/kvm ] && [ ! -d /sys/module/kvm_pvm ] &&
		{ [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; }; then
		accel=kvm
	fi
fi
case $accel in
kvm) qaccel=(-accel kvm -cpu host) ;;
tcg) qaccel=(-accel tcg,thread=multi -cpu max) ;;
*) echo "run.sh: PCVM_ACCEL is tcg, kvm or auto, not '$accel'" >&2; exit 2 ;;
esac

if [ -n "${PCVM_OUT:-}" ]; then
	out=$PCVM_OUT
	mkdir -p "$out"
	rm -f "$out/log" "$out/rc" "$out/console.log"
	keep=1
else
	out=$(mktemp -d /var/tmp/pcvm-run.XXXXXX)
	keep=0
fi
qpid=
cleanup() {
	if [ -n "$qpid" ] && kill -0 "$qpid" 2>/dev/null; then
		kill "$qpid" 2>/dev/null
		sleep 1
		kill -9 "$qpid" 2>/dev/null || true
	fi
	[ -n "$qpid" ] && wait "$qpid" 2>/dev/null
	[ "$keep" = 1 ] || rm -rf "$out"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

cp "$here/agent.sh" "$out/agent.sh"
printf '%s\n' "$tree" >"$out/tree"
: >"$out/env"
[ ${#envs[@]} = 0 ] || printf '%s\n' "${envs[@]}" >"$out/env"
{ printf 'exec'; printf ' %q' "$@"; printf '\n'; } >"$out/cmd"
: >"$out/log"

start=$SECONDS
echo "# pcvm: booting $(basename "$img") ($accel, ${PCVM_CPUS:-2} CPUs, ${PCVM_MEM:-2560} MiB) on $tree" >&2
timeout -k 10 "${PCVM_TIMEOUT:-3600}" qemu-system-x86_64 -nodefaults -no-user-config -display none -no-reboot \
	-machine q35 "${qaccel[@]}" -smp "${PCVM_CPUS:-2}" -m "${PCVM_MEM:-2560}" \
	-kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
	-append "root=/dev/vda rw console=ttyS0 pcvm.agent=1 panic=-1 systemd.show_status=0 quiet" \
	-drive "file=$img/root.img,if=virtio,format=raw,snapshot=on,cache=unsafe" \
	-virtfs "local,path=$tree,mount_tag=pcsrc,security_model=none,readonly=on" \
	-virtfs "local,path=$out,mount_tag=pcout,security_model=none" \
	-device virtio-rng-pci -nic none \
	-serial "file:$out/console.log" &
qpid=$!
# the output, as the guest writes it (tail ends when qemu does)
tail -n +1 -F --pid="$qpid" "$out/log" 2>/dev/null &
tpid=$!
qrc=0
wait "$qpid" || qrc=$?
qpid=
[ "$qrc" = 124 ] && echo "# pcvm: timed out after ${PCVM_TIMEOUT:-3600} s (PCVM_TIMEOUT): the guest was killed" >&2
wait "$tpid" 2>/dev/null || true
if [ -s "$out/rc" ]; then
	rc=$(cat "$out/rc")
	echo "# pcvm: guest exited $rc after $((SECONDS - start)) s" >&2
else
	rc=125
	echo "# pcvm: the guest gave no exit status after $((SECONDS - start)) s; its console's end:" >&2
	tail -n 30 "$out/console.log" >&2 || true
fi
exit "$rc"
