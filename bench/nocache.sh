#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/nocache.sh: `pagecache run --no-cache` against nocache (LD_PRELOAD),
# side by side in one run, on a 1 GiB file: cp, a Python mmap reader and a
# static C reader. For each: the pages of the file (and of cp's copy) left
# cached afterwards, and the run time against the bare command (median of
# RUNS, cold cache each time). Needs root (drop_caches, cgroups).
# Targets (issue 4): under 1% of the file left behind, overhead under 5%.
set -euo pipefail
PAGECACHE=${PAGECACHE:-$(cd "$(dirname "$0")/.." && pwd)/build/pagecache}
RUNS=${RUNS:-5}
[ "$(id -u)" = 0 ] || { echo "bench/nocache.sh: needs root" >&2; exit 1; }
# root writes there: only a directory of its own (bench/workdir.sh)
. "$(dirname "$0")/workdir.sh"
DIR=$(workdir "${BENCH_DIR:-/var/tmp/pagecache-bench}") && DIR=$(workdir "$DIR/nocache") ||
	{ echo "bench/nocache.sh: choose another BENCH_DIR" >&2; exit 1; }
command -v nocache >/dev/null || { apt-get update -qq && apt-get install -y -qq nocache >/dev/null; }
F=$DIR/data-1g
[ -s "$F" ] || { echo "# making $F (1 GiB)"; head -c 1073741824 /dev/urandom >"$F"; sync; }
cat >"$DIR/reader.c" <<'C'
#include <fcntl.h>
#include <unistd.h>
int main(int c, char **v) { static char b[1 << 20]; int fd = open(v[1], O_RDONLY); while (read(fd, b, sizeof b) > 0) ; return 0; }
C
cc -static -O2 -o "$DIR/sreader" "$DIR/reader.c"
PS=$(getconf PAGESIZE)
pages() { fincore -b -n -r -o PAGES "$1" 2>/dev/null || echo 0; }
total=$(( $(stat -c %s "$F") / PS ))

declare -A CMD
CMD[cp]="cp $F $DIR/copy"
CMD[mmap]="python3 -c \"import mmap; f=open('$F','rb'); m=mmap.mmap(f.fileno(),0,access=mmap.ACCESS_READ); s=0
for i in range(0,len(m),mmap.PAGESIZE): s+=m[i]\""
CMD[static]="$DIR/sreader $F"
declare -A WRAP
WRAP[bare]=""
WRAP[nocache]="nocache"
WRAP[pagecache]="$PAGECACHE run --no-cache --"
# cp writes 1 GiB: leaving no trace means writing it back first, which the
# bare cp does not wait for; "bare+sync" is the fair baseline for writers
WRAP[bare+sync]=""

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
printf '%-8s %-10s %9s %12s %12s\n' WORKLOAD WRAPPER "TIME s" "LEFT pages" "LEFT %"
for w in cp mmap static; do
	for how in bare bare+sync nocache pagecache; do
		times=()
		for ((i = 0; i < RUNS; i++)); do
			rm -f "$DIR/copy"; sync; echo 3 >/proc/sys/vm/drop_caches
			s=$(date +%s%N)
			eval "${WRAP[$how]} ${CMD[$w]}" >/dev/null
			[ "$how" = bare+sync ] && sync
			e=$(date +%s%N)
			times+=("$(( (e - s) / 1000 ))")
		done
		left=$(pages "$F")
		[ "$w" = cp ] && left=$(( left + $(pages "$DIR/copy") ))
		t=$(printf '%s\n' "${times[@]}" | median)
		printf '%-8s %-10s %9.3f %12d %11.2f%%\n' "$w" "$how" "$(echo "$t / 1000000" | bc -l)" \
			"$left" "$(echo "100 * $left / $total" | bc -l)"
		eval "T_${w}_${how//+/_}=$t"
	done
	b=$(eval echo \$T_${w}_bare)
	bs=$(eval echo \$T_${w}_bare_sync)
	for how in nocache pagecache; do
		t=$(eval echo \$T_${w}_${how})
		printf '%-8s %-10s overhead %+.1f%% against bare, %+.1f%% against bare+sync\n' "$w" "$how" \
			"$(echo "100 * ($t - $b) / $b" | bc -l)" "$(echo "100 * ($t - $bs) / $bs" | bc -l)"
	done
done
rm -f "$DIR/copy"
echo "# $RUNS runs each, median; LEFT: pages of the 1 GiB file (and of cp's copy) cached afterwards"
