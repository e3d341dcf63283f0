#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/stat-floor.sh -- pagecache stat of the 100,000-file tree against the
# floor (bench/floor-stat.c: getdents64 per directory, openat + cachestat +
# close per file, 2 threads, no sizes), side by side in one run, metadata
# cached: wall and CPU time (median of interleaved runs), the ratio to the
# floor, the load average before and after, and the system calls per file
# of each (perf's syscall tracepoints, one more run each).
#
# Tools: the floor; the floor with an fstat a file (what a tool that reports
# sizes cannot do without); pagecache (io_uring opens and closes, the default); the
# same with PAGECACHE_FAULT=uring:ENOSYS (no ring: the walk's fallback);
# BASELINE, an older pagecache binary, where given; and VARIANTS, builds made
# to measure an idea (a call left out, say) before it is kept, where given.
#
# Needs root, the tree of bench/foundation.sh (run it once: SECTIONS=1 makes
# it and the floor program), GNU time; perf for the system call counts.
#
# Environment: BENCH_DIR (as foundation.sh, default /var/tmp/pagecache-bench),
# PAGECACHE (default build/pagecache), BASELINE (optional), VARIANTS (optional:
# "NAME=BINARY ...", each run as pagecache is), RUNS (default 11), THREADS
# (pagecache's -j; default: its own).
# Usage: bash bench/stat-floor.sh [--json FILE]
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench}
BASELINE=${BASELINE:-}
VARIANTS=${VARIANTS:-}
RUNS=${RUNS:-11}
THREADS=${THREADS:-}
JSON=
[[ ${1:-} == --json ]] && JSON=${2:?--json FILE}
die() { printf 'stat-floor.sh: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (the tree is root's)"
[[ -x /usr/bin/time ]] || die "needs GNU time (/usr/bin/time)"
TREE=$BENCH_DIR/tree FLOOR=$BENCH_DIR/floor-stat
[[ -f $BENCH_DIR/.ready-v1 && -d $TREE ]] || die "no tree in $BENCH_DIR: run SECTIONS=1 bash bench/foundation.sh first"
cc -O2 -pthread -o "$BENCH_DIR/floor-stat" "$HERE/floor-stat.c" || die "cannot build the floor"
TMP=$(mktemp -d "$BENCH_DIR/.sf.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$PAGECACHE" "$TMP/pagecache"
[[ -z $BASELINE ]] || cp "$BASELINE" "$TMP/baseline"
J=${THREADS:+-j$THREADS}

names=(floor floor+fstat pagecache pagecache-no-uring)
cmds=("$FLOOR $TREE 2" "$FLOOR $TREE 2 fstat" "$TMP/pagecache stat $J $TREE" "env PAGECACHE_FAULT=uring:ENOSYS $TMP/pagecache stat $J $TREE")
if [[ -n $BASELINE ]]; then names+=(baseline); cmds+=("$TMP/baseline stat $J $TREE"); fi
for v in $VARIANTS; do
	n=${v%%=*} b=${v#*=}
	[[ $n != "$v" && $n =~ ^[A-Za-z0-9_+-]+$ && -x $b ]] || die "VARIANTS: '$v' is not NAME=BINARY"
	[[ " ${names[*]} " != *" $n "* ]] || die "VARIANTS: the name '$n' is taken"
	cp "$b" "$TMP/$n"
	names+=("$n")
	cmds+=("$TMP/$n stat $J $TREE")
done

for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || true; done	# dentries, inodes: cached
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A W=() C=()
for ((r = 0; r < RUNS; r++)); do
	for i in "${!names[@]}"; do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%e %U %S' -o "$TMP/t" ${cmds[i]} >/dev/null 2>&1 || true
		t1=$EPOCHREALTIME
		read -r e u s <"$TMP/t"
		W[${names[i]}]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
		C[${names[i]}]+="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') "
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
med() { printf '%s\n' $@ | sort -g | awk '{ a[NR] = $1 } END { printf "%.4f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mn() { printf '%s\n' $@ | sort -g | head -n 1; }

# system calls per file: one more run each under perf
FILES=$(find "$TREE" -type f | wc -l)
declare -A SC=()
if command -v perf >/dev/null; then
	for i in "${!names[@]}"; do
		SC[${names[i]}]=$(perf stat -x, -e raw_syscalls:sys_enter ${cmds[i]} 2>&1 >/dev/null |
			awk -F, -v f="$FILES" '/raw_syscalls/ { printf "%.3f", $1 / f }')
	done
fi

printf 'stat of %s files, metadata cached; %s runs each, interleaved\n' "$FILES" "$RUNS"
printf 'load average before %s, after %s (%s CPUs)\n' "$LOAD0" "$LOAD1" "$(nproc)"
printf '%-20s %8s %8s %8s %10s %12s\n' tool wall_med wall_min cpu_med wall/floor syscalls/file
fw=$(med ${W[floor]})
for n in "${names[@]}"; do
	printf '%-20s %8s %8s %8s %10s %12s\n' "$n" "$(med ${W[$n]})" "$(mn ${W[$n]})" "$(med ${C[$n]})" \
		"$(awk -v a="$(med ${W[$n]})" -v b="$fw" 'BEGIN { printf "%.2fx", a / b }')" "${SC[$n]:--}"
done
if [[ -n $JSON ]]; then
	{
		printf '{"what": "pagecache stat of a %s-file tree (bench/foundation.sh) against bench/floor-stat.c, metadata cached",\n' "$FILES"
		printf ' "how": "bash bench/stat-floor.sh: %s interleaved runs of each; wall from EPOCHREALTIME around GNU time (which adds its own start to every tool alike), cpu its %%U+%%S (10 ms steps); medians; syscalls_per_file from perf raw_syscalls:sys_enter in one more run",\n' "$RUNS"
		printf ' "host": "%s, %s CPUs", "load_average": {"before": "%s", "after": "%s"},\n' "$(uname -r)" "$(nproc)" "$LOAD0" "$LOAD1"
		printf ' "tools": {'
		sep=
		for i in "${!names[@]}"; do
			n=${names[i]}
			printf '%s\n  "%s": {"command": "%s", "wall_s": [%s], "cpu_s": [%s], "wall_median_s": %s, "cpu_median_s": %s, "wall_vs_floor": %s, "syscalls_per_file": %s}' \
				"$sep" "$n" "${cmds[i]//$TMP\//}" "$(echo ${W[$n]} | tr ' ' ,)" "$(echo ${C[$n]} | tr ' ' ,)" \
				"$(med ${W[$n]})" "$(med ${C[$n]})" \
				"$(awk -v a="$(med ${W[$n]})" -v b="$fw" 'BEGIN { printf "%.3f", a / b }')" "${SC[$n]:-null}"
			sep=,
		done
		printf '\n }}\n'
	} >"$JSON"
	command -v jq >/dev/null && jq -e . "$JSON" >/dev/null
fi
