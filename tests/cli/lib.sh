# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh: TAP helpers for the CLI tests (git's test-lib in miniature).
# Each test script sources this, calls t_ok/t_is/t_skip, and ends with
# t_done. Scratch files live on a disk filesystem (tmpfs ignores fadvise).
set -u
PAGECACHE=${PAGECACHE:-$(cd "$(dirname "$0")/../.." && pwd)/build/pagecache}
T_N=0
T_FAILED=0
T_DIR=$(mktemp -d "${PAGECACHE_TEST_DIR:-/var/tmp}/pc-cli-XXXXXX")
T_CLEANUP=()
t_cleanup() {	# last in, first out: a process is killed before its cgroup is removed
	local i
	for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${T_CLEANUP[i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$T_DIR"
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

pc() { "$PAGECACHE" "$@"; }

t_ok() {	# t_ok NAME CMD...: the command must succeed
	local name=$1; shift
	T_N=$((T_N + 1))
	if "$@" >/dev/null; then echo "ok $T_N - $name"
	else
		echo "not ok $T_N - $name"
		echo "# ${0##*/}: not ok $T_N - $name" >&2	# prove shows stderr without -v
		T_FAILED=$((T_FAILED + 1))
	fi
}

t_is() {	# t_is NAME GOT WANT
	T_N=$((T_N + 1))
	if [ "$2" = "$3" ]; then echo "ok $T_N - $1"
	else
		echo "not ok $T_N - $1"
		# diagnostics on stderr too: prove shows it without -v (CI's log)
		printf "#   got:  '%s'\n#   want: '%s'\n" "$2" "$3"
		printf "# %s: not ok %s - %s\n#   got:  '%s'\n#   want: '%s'\n" "${0##*/}" "$T_N" "$1" "$2" "$3" >&2
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

# t_cap NAME: this process holds capability CAP_NAME (sys_admin, ipc_lock...)
# in its effective set. Privilege is capabilities, not uid 0: root in a
# container may lack them. T_WHY says what is missing, for t_skip.
T_CAPS=(chown dac_override dac_read_search fowner fsetid kill setgid setuid setpcap
	linux_immutable net_bind_service net_broadcast net_admin net_raw ipc_lock ipc_owner
	sys_module sys_rawio sys_chroot sys_ptrace sys_pacct sys_admin sys_boot sys_nice
	sys_resource sys_time sys_tty_config mknod lease audit_write audit_control setfcap
	mac_override mac_admin syslog wake_alarm block_suspend audit_read perfmon bpf
	checkpoint_restore)
t_cap() {
	local c=${1#cap_} i eff
	c=${c,,}
	eff=$(awk '$1 == "CapEff:" { print $2 }' /proc/self/status)
	for i in "${!T_CAPS[@]}"; do
		if [ "${T_CAPS[i]}" = "$c" ]; then
			(( (16#$eff >> i) & 1 )) && return 0
			T_WHY="this process lacks CAP_${c^^}"
			return 1
		fi
	done
	T_WHY="unknown capability '$1'"
	return 1
}
# t_writable PATH: the kernel lets us write PATH (access(2): file mode,
# capabilities, and a read-only mount, as /proc/sys and cgroupfs are in
# many containers). T_WHY says why not.
t_writable() {
	[ -w "$1" ] && return 0
	if [ ! -e "$1" ]; then T_WHY="$1 does not exist"
	else T_WHY="$1 is not writable here (read-only mount, or not ours)"; fi
	return 1
}
# t_have CMD...: every command is installed. T_WHY names the first missing.
t_have() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || { T_WHY="$c is not installed (make test-deps)"; return 1; }
	done
}
# t_wait SECS CMD...: poll CMD every 0.1 s until it succeeds; 1 after SECS
# (a condition, not a sleep: a regression fails the check, it does not hang)
t_wait() {
	local n=$(($1 * 10)); shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
# t_kill PID...: SIGTERM, and SIGKILL what is still there after 10 s; reaps
# our own children. For cleanups: the process is gone when it returns.
t_kill() {
	local p
	[ $# -gt 0 ] || return 0
	kill "$@" 2>/dev/null
	for p in "$@"; do
		t_wait 10 t_gone "$p" || kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	return 0
}
t_gone() {	# t_gone PID: no such process, or a zombie
	local st
	kill -0 "$1" 2>/dev/null || return 0
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	st=${st##*) }
	[ "${st%% *}" = Z ]
}

# as_nobody CMD ARGS...: run as uid/gid 65534 with no capabilities. The
# binary is copied into the scratch directory first: the checkout may sit
# under a directory that nobody cannot enter (mktemp -d makes 0700 ones).
# pagecache-bench goes beside it, where `pagecache bench` looks first.
as_nobody() {
	local bin=$T_DIR/.pagecache-nobody
	[ -x "$bin" ] || { cp "$PAGECACHE" "$bin" && chmod 755 "$T_DIR" "$bin" &&
		cp "$(dirname "$PAGECACHE")/pagecache-bench" "$T_DIR/pagecache-bench"; }
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
# This is the tests' ground truth, not the code under test: the count of
# evicted pages is asked with the kernel's cachestat even in make check's
# pass that injects cachestat:ENOSYS into the binary under test (a page
# reclaimed between a restore and the count failed that pass in CI).
# Only on a kernel without cachestat is evicted null: fincore's count alone.
# resident_pages FILE WANT: for a check that WANT pages are back. evicted
# counts every shadow entry of the file, also of pages outside the WANT a
# snapshot recorded (reclaimed before it was taken: CI's sanitized run got
# 319 for 312 so), so the check is what can be known: fincore sees no more
# than WANT, and what it misses was reclaimed. Then WANT; else the count.
resident_pages() {
	local c e p
	c=$(cached_pages "$1")
	read -r e p < <(PAGECACHE_FAULT= "$PAGECACHE" stat --json "$1" 2>/dev/null |
		jq -r '"\(.files[0].evicted // "null") \(.files[0].pages // 0)"')
	[ "$e" = null ] || [ -z "$e" ] && e=0
	c=${c:-0} p=${p:-0}	# no answer (the file gone): no pages, no "integer expected"
	# taken one after the other: a page reclaimed between the two counts
	# is in both; no file has more pages than it has
	[ $((c + e)) -gt "$p" ] && [ "$c" -le "$p" ] && e=$((p - c))
	if [ -n "${2:-}" ] && [ "$c" -le "$2" ] && [ $((c + e)) -ge "$2" ]; then
		echo "$2"
	else
		echo $((c + e))
	fi
}

# t_tries N CMD...: run CMD (a function whose last step is a check of the
# kernel's page counts: 0 when it holds) up to N times, until it holds; the
# try it held at in T_TRY (N when it never did: then return 1). For counts
# the machine can upset once: its proactive reclaimer (DAMON pageout here,
# on a physical region it judged idle, freshly read pages too) takes pages,
# and a shadow entry the kernel's shrinker reclaims leaves no evicted count
# for resident_pages to add (t-warm lost 12 of 8192 pages, t-record-cold 1
# of 16, once each, in CI's container run). A program that does wrong does
# it every time; say the try in the check's name.
t_tries() {
	local n=$1
	shift
	for ((T_TRY = 1; T_TRY <= n; T_TRY++)); do
		"$@" && return 0
	done
	T_TRY=$n
	return 1
}

# t_mglru: the multi-gen LRU is on (/sys/kernel/mm/lru_gen/enabled, bit 0;
# Debian 13's kernel has it on). There pages are kept in generations, not
# on an active list, so active pages are unknown: snapshots record none and
# say why (lib/kpage.c), and checks that want active pages check that.
# As pc_lru_gen_enabled(): no file, off; a file it cannot read or parse, on.
t_mglru() {
	local v
	[ -e /sys/kernel/mm/lru_gen/enabled ] || return 1
	v=$(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null) || return 0
	[[ $v =~ ^0x[0-9a-fA-F]+$ ]] || return 0
	[ $((v & 1)) = 1 ]
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
	if ! t_cap sys_admin; then
		T_V2_WHY="/sys/fs/cgroup is no cgroup v2 hierarchy with memory, and mounting one needs CAP_SYS_ADMIN"
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

# t_can_nest: may pagecache make memory cgroups beneath where this shell
# runs (run --no-cache, bench readtwice and swapin)? Asked of pagecache
# itself (run --no-cache -- true). On cgroup v2 that takes a cgroup of its
# own: a delegated one it is alone in, or a scope systemd makes for it;
# where neither can be had (v2 without systemd, the shell beside it), 1,
# and T_NEST_WHY says what pagecache said.
t_can_nest() {
	T_NEST_WHY=
	"$PAGECACHE" run --no-cache -- true 2>"$T_DIR/.nest.err" && return 0
	T_NEST_WHY="pagecache cannot make memory cgroups here: $(head -1 "$T_DIR/.nest.err")"
	return 1
}

# t_systemd_scope: does pagecache's room for memory cgroups come from a
# scope systemd makes (cgroup v2 with systemd as PID 1)? Then T_SLICE is
# the cgroup directory of the slice it goes in: our own unit's slice.
t_systemd_scope() {
	local self
	T_SLICE=
	[ -d /run/systemd/system ] && [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
		return 1
	self=$(awk -F: '$1=="0"{print $3}' /proc/self/cgroup)
	T_SLICE=/sys/fs/cgroup$(sed -E 's#^((/[^/]+\.slice)*).*#\1#' <<<"$self")
}

# t_memcg_parent: a cgroup beneath which this test may mkdir memory cgroups
# of its own, in T_MEMCG (its path as /proc/self/cgroup names it): ours,
# where it hands memory on (v1: always); on v2 under systemd, where ours is
# a unit's that does not, a delegated scope made for the test
# (pc-test-PID.scope in our slice: a placeholder process in a leaf, memory
# handed on), gone when the test ends (systemd removes its cgroups once the
# placeholder is killed). 1: T_MEMCG_WHY says why there is none.
t_memcg_parent() {
	local root self scope sp
	T_MEMCG= T_MEMCG_WHY=
	root=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)
	self=$(awk -F: '$2=="memory"{print $3} $1=="0"{print $3}' /proc/self/cgroup | head -1)
	self=${self%/}
	if [ "$root" != /sys/fs/cgroup ] || grep -qw memory "$root$self/cgroup.subtree_control" 2>/dev/null; then
		T_MEMCG=$self
		return 0
	fi
	if ! t_systemd_scope; then
		T_MEMCG_WHY="our cgroup '$self' does not hand memory on (cgroup v2) and no systemd makes a delegated scope"
		return 1
	fi
	scope=$T_SLICE/pc-test-$$.scope
	# systemd-run --scope execs the command: $! is the placeholder
	systemd-run --quiet --scope -p Delegate=yes --unit="pc-test-$$" -- sleep 3600 >/dev/null 2>&1 &
	sp=$!
	T_CLEANUP+=("t_kill $sp")
	if ! t_wait 10 grep -qx "$sp" "$scope/cgroup.procs" || ! mkdir "$scope/hold" ||
	   ! echo "$sp" >"$scope/hold/cgroup.procs" || ! echo +memory >"$scope/cgroup.subtree_control"; then
		T_MEMCG_WHY="cannot make a delegated scope with memory handed on ('$scope')"
		return 1
	fi
	T_MEMCG=${scope#/sys/fs/cgroup}
}
