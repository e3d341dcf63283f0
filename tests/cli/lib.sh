# lib.sh: TAP helpers for the CLI tests (git's test-lib in miniature).
# Each test script sources this, calls t_ok/t_is/t_skip, and ends with
# t_done. Scratch files live on a disk filesystem (tmpfs ignores fadvise).
set -u
PAGECACHE=${PAGECACHE:-$(cd "$(dirname "$0")/../.." && pwd)/build/pagecache}
T_N=0
T_FAILED=0
T_DIR=$(mktemp -d "${PAGECACHE_TEST_DIR:-/var/tmp}/pc-cli-XXXXXX")
T_CLEANUP=()
t_cleanup() {
	local c
	for c in "${T_CLEANUP[@]}"; do eval "$c" >/dev/null 2>&1 || true; done
	rm -rf "$T_DIR"
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

pc() { "$PAGECACHE" "$@"; }

t_ok() {	# t_ok NAME CMD...: the command must succeed
	local name=$1; shift
	T_N=$((T_N + 1))
	if "$@" >/dev/null; then echo "ok $T_N - $name"
	else echo "not ok $T_N - $name"; T_FAILED=$((T_FAILED + 1)); fi
}

t_is() {	# t_is NAME GOT WANT
	T_N=$((T_N + 1))
	if [ "$2" = "$3" ]; then echo "ok $T_N - $1"
	else
		echo "not ok $T_N - $1"
		echo "#   got:  '$2'"
		echo "#   want: '$3'"
		T_FAILED=$((T_FAILED + 1))
	fi
}

t_skip() {	# t_skip NAME REASON
	T_N=$((T_N + 1))
	echo "ok $T_N - $1 # skip $2"
}

t_done() {
	echo "1..$T_N"
	[ "$T_FAILED" = 0 ]
}

t_root() { [ "$(id -u)" = 0 ]; }

# as_nobody CMD ARGS...: run as uid/gid 65534 with no capabilities. The
# binary is copied into the scratch directory first: the checkout may sit
# under a directory that nobody cannot enter (mktemp -d makes 0700 ones).
as_nobody() {
	local bin=$T_DIR/.pagecache-nobody
	[ -x "$bin" ] || { cp "$PAGECACHE" "$bin" && chmod 755 "$T_DIR" "$bin"; }
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
}
nobody_pc() { as_nobody "$T_DIR/.pagecache-nobody" "$@"; }

# mkfile PATH KiB: non-zero data, synced
mkfile() {
	head -c "$(($2 * 1024))" /dev/urandom >"$1" && sync "$1"
}

# drop PATH...: evict with the kernel's own tool, independent of ours
drop() {
	local f
	sync "$@" 2>/dev/null	# dirty pages would stay
	for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none 2>/dev/null; done
}

# cached_pages FILE: the ground truth, from util-linux fincore (mincore; true as root)
cached_pages() {
	fincore -b -n -r -o PAGES "$1"
}

# resident_pages FILE: fincore's count, plus pages reclaimed since (they
# leave shadow entries, which cachestat counts as evicted; the tests drop
# with DONTNEED, which leaves none). Some machines run a proactive reclaimer
# (DAMON pageout here) that takes idle pages within seconds of a warm.
# Without cachestat evicted is null (unknown): fincore's count alone.
resident_pages() {
	local c e p
	c=$(cached_pages "$1")
	read -r e p < <("$PAGECACHE" stat --json "$1" 2>/dev/null |
		jq -r '"\(.files[0].evicted // "null") \(.files[0].pages // 0)"')
	[ "$e" = null ] && e=0
	# taken one after the other: a page reclaimed between the two counts
	# is in both; no file has more pages than it has
	[ $((c + e)) -gt "$p" ] && [ "$c" -le "$p" ] && e=$((p - c))
	echo $((c + e))
}

# t_have_cachestat: 0 if the binary counts with cachestat(2) here, 1 if
# not (a kernel before 6.5, or PAGECACHE_FAULT=cachestat:ENOSYS, as the
# second pass of make check runs): the binary is asked, on a file of our
# own, where its numbers came from; never guessed from the kernel version.
# Checks of what only cachestat knows (dirty, writeback, evicted,
# recently_evicted) skip with "no cachestat" when it says 1.
t_have_cachestat() {
	if [ -z "${T_HAVE_CS:-}" ]; then
		printf x >"$T_DIR/.cs-probe"
		T_HAVE_CS=$("$PAGECACHE" stat --json "$T_DIR/.cs-probe" 2>/dev/null |
			jq -r '.files[0].source // "none"')
	fi
	[ "$T_HAVE_CS" = cachestat ]
}

# jget JSON-FILE FILTER
jget() { jq -r "$2" "$1"; }

# t_v2_memory: a live cgroup v2 hierarchy with the memory controller, for
# the v2 paths. 0: T_V2 is its root as the commands see it (/sys/fs/cgroup)
# and t_v2 CMD... runs CMD there: as it is where /sys/fs/cgroup is already
# one, else in a private mount namespace with a cgroup2 mount over
# /sys/fs/cgroup (the hierarchy is the kernel's one; only the mount is
# private). 1: T_V2_WHY says why there is none (a controller is in one
# hierarchy only: bound to a v1 mount, v2 cannot have it).
t_v2_memory() {
	local probe ctl v1
	T_V2= T_V2_WHY= T_V2_PRIVATE=
	if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] &&
	   grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
		T_V2=/sys/fs/cgroup
		return 0
	fi
	if ! t_root; then
		T_V2_WHY="/sys/fs/cgroup is no cgroup v2 hierarchy with memory, and mounting one needs root"
		return 1
	fi
	if ! command -v unshare >/dev/null; then
		T_V2_WHY="/sys/fs/cgroup is no cgroup v2 hierarchy with memory, and unshare(1) is missing"
		return 1
	fi
	probe=$T_DIR/.v2-probe
	mkdir -p "$probe"
	if ! ctl=$(unshare -m sh -c 'mount --make-rprivate / 2>/dev/null; mount -t cgroup2 none "$1" && cat "$1/cgroup.controllers"' sh "$probe" 2>&1); then
		T_V2_WHY="cannot mount a private cgroup2 hierarchy: $ctl"
		return 1
	fi
	if ! grep -qw memory <<<"$ctl"; then
		v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)memory(,|$)/ { print $2; exit }' /proc/self/mounts)
		T_V2_WHY="the memory controller is bound to cgroup v1${v1:+ ($v1)}, so a cgroup2 mount gets only: ${ctl:-no controller}"
		return 1
	fi
	T_V2=/sys/fs/cgroup
	T_V2_PRIVATE=1
}
t_v2() {
	if [ -n "${T_V2_PRIVATE:-}" ]; then
		unshare -m sh -c 'mount --make-rprivate / 2>/dev/null; mount -t cgroup2 none /sys/fs/cgroup && exec "$@"' sh "$@"
	else
		"$@"
	fi
}
