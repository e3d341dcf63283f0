#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/ab.sh -- this build against another (BASELINE), side by side in one
# run, on the everyday jobs: stat of a tree (metadata and data cached), warm
# of it from a cold cache, snapshot of it (cached), and restore of that
# snapshot into a cold cache. The runs interleave (base, new, base, new,
# ...), so a change of load touches both alike. Prints the median wall time
# of each, the ratio new/baseline, and the load average before and after.
# Made for refactors (issue 23: the engines moved into libpagecache), whose
# promise is no change.
#
# Needs root (drop_caches). Environment: PAGECACHE (default build/pagecache),
# BASELINE (required: an older pagecache binary), FILES (default 20000
# files of 1-16 KiB, in directories of 1,000), RUNS (default 7), BENCH_DIR
# (default /var/tmp/pagecache-bench-ab; the tree is kept for the next run).
# Usage: BASELINE=/path/to/old/pagecache bash bench/ab.sh
# (commands are split on purpose)
# shellcheck disable=SC2086
set -euo pipefail
export LC_ALL=C
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BASELINE=${BASELINE:?BASELINE: an older pagecache binary to compare with}
FILES=${FILES:-20000}
RUNS=${RUNS:-7}
. "$REPO/bench/workdir.sh"
die() { printf 'ab.sh: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (drop_caches)"
BENCH_DIR=$(workdir "${BENCH_DIR:-/var/tmp/pagecache-bench-ab}") || exit 1
T=$BENCH_DIR/tree
if [[ ! -f $BENCH_DIR/.ready-$FILES ]]; then
	rm -rf "$T"
	mkdir -p "$T"
	python3 "$REPO/bench/mktree.py" "$T" "$FILES" 16 random
	: >"$BENCH_DIR/.ready-$FILES"
fi
sync

cold() { sync; echo 3 >/proc/sys/vm/drop_caches; "$1" stat -q "$T" >/dev/null 2>&1 || true; \
	"$1" evict -q "$T" >/dev/null 2>&1 || true; }
# job BIN WHAT: one run, its wall seconds on stdout
job() {
	local bin=$1 what=$2 t0 t1
	case $what in
	stat) "$bin" warm -q "$T" >/dev/null 2>&1 ;;
	warm) cold "$bin" ;;
	snapshot) "$bin" warm -q "$T" >/dev/null 2>&1; rm -f "$BENCH_DIR/s.snap" ;;
	restore) cold "$bin" ;;
	esac
	t0=$EPOCHREALTIME
	case $what in
	stat) "$bin" stat "$T" >/dev/null 2>&1 ;;
	warm) "$bin" warm -q "$T" >/dev/null 2>&1 ;;
	snapshot) "$bin" snapshot --no-active -o "$BENCH_DIR/s.snap" "$T" >/dev/null 2>&1 ;;
	restore) "$bin" restore -q "$BENCH_DIR/ref.snap" >/dev/null 2>&1 ;;
	esac
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }'
}
# the snapshot both restore: the whole tree cached, by the baseline
"$BASELINE" warm -q "$T" >/dev/null
"$BASELINE" snapshot --no-active -o "$BENCH_DIR/ref.snap" "$T" >/dev/null

jobs=(stat warm snapshot restore)
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A W=()
for ((r = 0; r < RUNS; r++)); do
	for j in "${jobs[@]}"; do
		W[base-$j]+="$(job "$BASELINE" "$j") "
		W[new-$j]+="$(job "$PAGECACHE" "$j") "
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
med() { printf '%s\n' $@ | sort -g | awk '{ a[NR] = $1 } END { printf "%.4f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

printf 'bench/ab.sh: %s files (1-16 KiB) in %s; %s runs each, interleaved\n' "$FILES" "$T" "$RUNS"
printf 'baseline %s\nnew      %s\n' "$BASELINE" "$PAGECACHE"
printf 'load average before %s, after %s (%s CPUs)\n' "$LOAD0" "$LOAD1" "$(nproc)"
printf '%-9s %10s %10s %9s\n' job base_med new_med new/base
for j in "${jobs[@]}"; do
	b=$(med ${W[base-$j]}) n=$(med ${W[new-$j]})
	printf '%-9s %10s %10s %9s\n' "$j" "$b" "$n" "$(awk -v a="$n" -v b="$b" 'BEGIN { printf "%.3f", a / b }')"
done
