#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# leftovers.sh record FILE | check FILE: what a test run must leave as it
# found it. `record` notes the state before the run; `check` compares the
# state after with it and fails, listing each thing that is new or changed:
# mounts, loop and zram devices, swaps, the zram module, memory cgroups
# named pc-* or pagecache-*, the knobs the tests and benches touch, state
# files under /run/pagecache, bench directories under /var/tmp, files left
# in this run's PAGECACHE_TEST_DIR, and processes of this run still alive
# (they carry PC_CHECK_RUN=ID in their environment: prove.sh sets it, and
# runs this script without it and with PC_LEFTOVERS_RUN=ID).
# Other people's runs may be going on at the same time: a difference gets
# PC_LEFTOVERS_WAIT seconds (20) to go away, and a name that carries the
# pid of a live process that is not this run's is theirs, not counted.
# PC_LEFTOVERS_IGNORE: an extended regular expression; lines of the state
# it matches are not compared (tests/container/run.sh: "^mount ", since
# the container's mounts are in a namespace of its own).
set -u
run=${PC_LEFTOVERS_RUN:-}
mode=${1:-}
file=${2:-}
[ -n "$file" ] && { [ "$mode" = record ] || [ "$mode" = check ]; } ||
	{ echo "usage: leftovers.sh record|check FILE" >&2; exit 2; }

state() {
	local k d
	awk '{ sep = 0; for (i = 7; i <= NF; i++) if ($i == "-") { sep = i; break }
	       print "mount " $5 " " $(sep + 1) " " $(sep + 2) }' /proc/self/mountinfo
	losetup -a 2>/dev/null | sed 's/^/loop /'
	for d in /sys/block/zram*; do [ -e "$d" ] && echo "zram ${d##*/}"; done
	[ -d /sys/module/zram ] && echo "module zram"
	tail -n +2 /proc/swaps | awk '{ print "swap " $1 }'
	for d in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
		find "$d" -maxdepth 12 -mindepth 1 -type d \( -name 'pc-*' -o -name 'pagecache-*' \) \
			-print -prune 2>/dev/null
	done | sort -u | sed 's/^/cgroup /'
	for k in /proc/sys/vm/page-cluster /proc/sys/vm/swappiness /sys/kernel/mm/swap/vma_ra_enabled \
		 /sys/module/zswap/parameters/enabled; do
		[ -r "$k" ] && echo "knob $k=$(cat "$k")"
	done
	ls -A /run/pagecache 2>/dev/null | sed 's|^|state /run/pagecache/|'
	for d in /var/tmp/pagecache-*; do [ -e "$d" ] && [ "$d" != /var/tmp/pagecache-demo ] && echo "dir $d"; done
	if [ -n "${PAGECACHE_TEST_DIR:-}" ] && [ -d "$PAGECACHE_TEST_DIR" ]; then
		ls -A "$PAGECACHE_TEST_DIR" | sed "s|^|scratch $PAGECACHE_TEST_DIR/|"
	fi
	if [ -n "$run" ]; then
		grep -lzxF "PC_CHECK_RUN=$run" /proc/[0-9]*/environ 2>/dev/null | while read -r d; do
			d=${d%/environ}
			echo "process ${d#/proc/} $({ tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | cut -c1-120)"
		done
	fi
}

# theirs LINE: it names a live process (pid in the name) that is not this run's
theirs() {
	local pid
	case $1 in process\ *) return 1 ;; esac
	for pid in $(grep -oE '[0-9]{3,}' <<<"${1#* }"); do
		[ -d "/proc/$pid" ] || continue
		grep -qzxF "PC_CHECK_RUN=${run:-none}" "/proc/$pid/environ" 2>/dev/null || return 0
	done
	return 1
}

if [ -n "${PC_LEFTOVERS_IGNORE:-}" ]; then
	eval "$(declare -f state | sed '1s/^state/state_all/')"
	state() { state_all | grep -Ev -- "$PC_LEFTOVERS_IGNORE"; }
fi

if [ "$mode" = record ]; then
	state | LC_ALL=C sort -u >"$file"
	exit 0
fi
wait_s=${PC_LEFTOVERS_WAIT:-20}
start=$SECONDS
while :; do
	new=$(state | LC_ALL=C sort -u | LC_ALL=C comm -13 "$file" - | while IFS= read -r l; do
		theirs "$l" || echo "$l"; done)
	gone=$(state | LC_ALL=C sort -u | LC_ALL=C comm -23 "$file" - | grep '^knob ')
	[ -z "$new$gone" ] && exit 0
	[ $((SECONDS - start)) -ge "$wait_s" ] && break
	sleep 1
done
echo "# leftovers: the tests left this behind (new or changed since the run began):"
sed 's/^/#   new: /' <<<"$new" | grep -v '^#   new: $'
sed 's/^/#   was: /' <<<"$gone" | grep -v '^#   was: $'
exit 1
