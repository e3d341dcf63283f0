#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# run.sh [COMMAND...]: run COMMAND (default: make check) as root in a
# container made here, with the tree on an overlay root, as Docker or
# Podman would have it: `make check-container` (and .ci/run) runs it.
#
# The lower layer is a Debian 12 root file system made with mmdebstrap from
# Debian's packages, with everything make deps and make test-deps install
# (the package list is read from the Makefile's `need` lines), so the run
# inside is offline. It is made once and kept in $PCCTR_CACHE
# (/var/tmp/pcctr), keyed by the package list, the mirrors and this
# script's ROOTFS_REV; debs the host's apt cache holds are used from there.
#
# The container: new mount, PID, UTS, IPC and network namespaces (the
# network one has only lo: nothing outside is reached); root is an overlay
# of that lower layer with a fresh upper layer, entered by pivot_root; a
# fresh /proc and /sys, the host's /dev and /sys/fs/cgroup bound in (a
# privileged container's view: the tests make loop devices and memory
# cgroups); no tracefs (pagecache mounts its own where it needs one). The
# tree (git's tracked and untracked-but-not-ignored files, so not build/)
# is copied in through the overlay to /src/pagecache, and /tmp and /var/tmp
# are the overlay's too, so the tests' scratch files (PAGECACHE_TEST_DIR,
# under /var/tmp) live on it. COMMAND runs there from /src/pagecache with a
# clean environment (PC_CHECK_CONTAINER=1 in it: t-podman skips), under a
# PID 1 that reaps orphans.
#
# Everything goes with the namespaces: the mounts (all made in the private
# mount namespace, so the host's cgroup mounts are never touched), and the
# processes (the PID namespace's are killed when its PID 1 exits, and
# unshare --kill-child kills that if this script is killed). The upper
# layer is removed after (PCCTR_KEEP=1 keeps it); tests/leftovers.sh,
# recorded before and checked after, fails the run if the tests inside left
# anything on the host (loop devices, cgroups, swap, knobs).
# The output is shown and kept in $PCCTR_CACHE/run-*.log (last.log links
# to the latest); the exit status is
# COMMAND's (or 1 for leftovers, 2 for a usage error, 3 if the container
# could not be made).
#
# Needs root, mmdebstrap, util-linux's unshare and pivot_root, and overlayfs.
# PCCTR_MIRROR: the Debian mirror (http://deb.debian.org/debian);
# PCCTR_SECURITY: its security mirror ("" for none).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${PCCTR_CACHE:-/var/tmp/pcctr}
suite=bookworm
mirror=${PCCTR_MIRROR:-http://deb.debian.org/debian}
security=${PCCTR_SECURITY-http://deb.debian.org/debian-security}
# bump when the way the root file system is made changes
ROOTFS_REV=1
CPATH_DEFAULT=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

die() { echo "container: $*" >&2; exit 3; }

# ---- inside: PID 1 of the new namespaces, still on the host's root --------
if [ "${1:-}" = --inside ]; then
	shift
	run=$1 lower=$2
	shift 2
	root=$run/root
	mount --make-rprivate /
	mount -t overlay overlay -o "lowerdir=$lower,upperdir=$run/upper,workdir=$run/work" "$root"
	mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
	mount -t sysfs -o nosuid,nodev,noexec sysfs "$root/sys"
	mount --rbind /sys/fs/cgroup "$root/sys/fs/cgroup"
	mount --rbind /dev "$root/dev"
	mount --make-rslave "$root/dev"
	ip link set lo up
	hostname pcctr
	# the tree, through the overlay
	mkdir -p "$root/src/pagecache"
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$top" ls-files -z --cached --others --exclude-standard |
			(cd "$top" && xargs -0 sh -c 'for f; do [ -e "$f" ] || [ -L "$f" ] && printf "%s\0" "$f"; done; :' sh) |
			tar -C "$top" --null -T - -cf - | tar -C "$root/src/pagecache" -xf -
	else
		tar -C "$top" --exclude=./build --exclude=./.git -cf - . | tar -C "$root/src/pagecache" -xf -
	fi
	cd "$root"
	pivot_root . mnt
	umount -l /mnt
	cd /src/pagecache
	# PID 1: run the command, reap what is orphaned to us, pass its status
	# on. Job control (set -m), since a shell without it starts a command
	# with & ignoring SIGINT and SIGQUIT, and the tests' would inherit that.
	exec env -i PATH="$CPATH_DEFAULT" HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" PC_CHECK_CONTAINER=1 \
		/bin/bash -c 'set -m; "$@" & c=$!; set +m; rc=0; wait $c || rc=$?; exit $rc' pcctr-init "$@"
fi

# ---- outside --------------------------------------------------------------
[ "$(id -u)" = 0 ] || { echo "container: needs root (mounts and namespaces)" >&2; exit 2; }
for t in mmdebstrap unshare pivot_root ip; do
	command -v "$t" >/dev/null || die "needs $t (Debian: mmdebstrap, util-linux, iproute2)"
done
[ $# -gt 0 ] || set -- make check

# packages: what the Makefile's deps and test-deps install, the compiler,
# and what the harness uses inside
packages() {
	sed -n '/^deps:/,/^$/p;/^test-deps:/,/^$/p' "$top/Makefile" |
		sed -n 's/.*call need,.*,\([^,]*\))$/\1/p' |
		sed 's/^\$\$(apt-cache show util-linux-extra.*/util-linux-extra/'
	printf '%s\n' build-essential iproute2 ca-certificates
}
pkgs=$(packages | LC_ALL=C sort -u | tr '\n' ' ')
key=$(printf '%s\n' "$ROOTFS_REV" "$suite" "$mirror" "$security" "$pkgs" | sha256sum | cut -c1-16)
lower=$cache/rootfs-$key
mkdir -p "$cache"

# one build at a time; a run waiting here uses what the other made
exec 9>"$cache/.lock"
flock 9
if [ ! -e "$lower/.pcctr-ready" ]; then
	echo "# container: making the Debian 12 root file system $lower"
	echo "#   packages: $pkgs"
	s=$SECONDS
	rm -rf "$lower.tmp"
	sources=("deb $mirror $suite main" "deb $mirror $suite-updates main")
	[ -n "$security" ] && sources+=("deb $security $suite-security main")
	# the host's apt cache seeds the download (apt checks each deb's hash)
	mmdebstrap --mode=root --variant=apt --include="${pkgs// /,}" \
		--aptopt='APT::Install-Recommends "false"' \
		--setup-hook='mkdir -p "$1/var/cache/apt/archives"; for f in /var/cache/apt/archives/*.deb; do [ -e "$f" ] && ln -f "$f" "$1/var/cache/apt/archives/" 2>/dev/null || cp "$f" "$1/var/cache/apt/archives/" 2>/dev/null; done; :' \
		--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
		"$suite" "$lower.tmp" "${sources[@]}" || die "mmdebstrap failed"
	touch "$lower.tmp/.pcctr-ready"
	mv "$lower.tmp" "$lower"
	echo "# container: root file system made in $((SECONDS - s)) s ($(du -sh "$lower" | cut -f1))"
	# older ones (another package list) go, unless a run has one mounted
	for d in "$cache"/rootfs-*; do
		[ "$d" = "$lower" ] && continue
		grep -qsF "lowerdir=$d," /proc/[0-9]*/mountinfo || rm -rf "$d"
	done
fi

exec 9>&-
find "$cache" -maxdepth 1 -name 'run-*.log' -mtime +7 -delete

run=$(mktemp -d "$cache/run-XXXXXX")
trap '[ "${PCCTR_KEEP:-0}" = 1 ] || rm -rf "$run"' EXIT
mkdir "$run/upper" "$run/work" "$run/root"
log=$run.log
ln -sfn "$log" "$cache/last.log"
before=$run/leftovers.before
# the container's mounts are its namespace's: a mount seen here is not its
export PC_LEFTOVERS_IGNORE='^mount '
"$top/tests/leftovers.sh" record "$before"
echo "# container: $* in an overlay root (lower $lower, upper $run/upper)"
s=$SECONDS
# In the background with job control: its own process group, no signal
# ignored. unshare ignores SIGINT and SIGTERM while it waits, and a PID 1
# takes from outside only what it handles, so on either this kills unshare
# (SIGKILL), whose --kill-child takes PID 1 and with it the namespaces.
set -m
unshare --mount --pid --uts --ipc --net --fork --kill-child --propagation private \
	"$here/run.sh" --inside "$run" "$lower" "$@" > >(tee "$log") 2>&1 &
upid=$!
set +m
trap 'kill -KILL $upid 2>/dev/null' INT TERM HUP
rc=0
wait $upid || rc=$?
while kill -0 $upid 2>/dev/null; do wait $upid || rc=$?; done
wait	# tee
trap - INT TERM HUP
echo "# container: exit $rc after $((SECONDS - s)) s; log $log"
if ! "$top/tests/leftovers.sh" check "$before"; then
	echo "# container: the run left the above behind on the host"
	[ "$rc" = 0 ] && rc=1
fi
[ "${PCCTR_KEEP:-0}" = 1 ] && echo "# container: upper layer kept in $run/upper"
exit "$rc"
