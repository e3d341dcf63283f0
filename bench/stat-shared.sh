#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/stat-shared.sh -- what the O_PATH opens of shared directories cost
# (lib/walk.c, pc_dir_others_write): pagecache stat of one tree of small
# files twice over, once root's (0755: the batch, as before) and once a
# user's (chown -R nobody: every file reached with O_PATH, fstat'ed, and
# reopened through /proc/self/fd), by this build and by BASELINE (an older
# binary, which batches both), interleaved. Prints the median wall and CPU
# time of each, the ratios new/baseline, and the load average before and
# after. Metadata cached (one run of each first).
#
# Needs root (chown) and perf (CPU time: its task-clock, all threads). Environment: PAGECACHE (default
# build/pagecache), BASELINE (required), FILES (default 30000, in
# directories of 1,000), RUNS (default 11), BENCH_DIR (default
# /var/tmp/pagecache-bench-shared; the trees are kept there for the next run).
# Usage: BASELINE=/path/to/old/pagecache bash bench/stat-shared.sh
# (commands and lists of numbers are split on purpose)
# shellcheck disable=SC2068,SC2086
set -euo pipefail
export LC_ALL=C
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BASELINE=${BASELINE:?BASELINE: an older pagecache binary to compare with}
FILES=${FILES:-30000}
RUNS=${RUNS:-11}
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench-shared}
die() { printf 'stat-shared.sh: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (chown)"
command -v perf >/dev/null || die "needs perf (task-clock)"

# the trees: FILES files of 1..4 KiB, 1,000 a directory
mk() {	# mk DIR OWNER
	[[ -f $1/.ready-$FILES ]] && return
	rm -rf "$1"
	mkdir -p "$1"
	python3 "$REPO/bench/mktree.py" "$1" "$FILES" 4
	chown -R "$2" "$1"
	: >"$1/.ready-$FILES"
}
mk "$BENCH_DIR/root" 0:0
mk "$BENCH_DIR/user" 65534:65534
sync

names=(base-root new-root base-user new-user)
cmds=("$BASELINE stat $BENCH_DIR/root" "$PAGECACHE stat $BENCH_DIR/root"
      "$BASELINE stat $BENCH_DIR/user" "$PAGECACHE stat $BENCH_DIR/user")
for c in "${cmds[@]}"; do $c >/dev/null 2>&1 || true; done	# dentries, inodes: cached
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
TMP=$(mktemp)
trap 'rm -f "$TMP"' EXIT
declare -A W=() C=()
for ((r = 0; r < RUNS; r++)); do
	for i in "${!names[@]}"; do
		t0=$EPOCHREALTIME
		perf stat -x, -e task-clock -o "$TMP" ${cmds[i]} >/dev/null 2>&1 || true
		t1=$EPOCHREALTIME
		W[${names[i]}]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
		C[${names[i]}]+="$(awk -F, '/task-clock/ { printf "%.4f", $1 / 1000 }' "$TMP") "
	done
done
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
med() { printf '%s\n' $@ | sort -g | awk '{ a[NR] = $1 } END { printf "%.4f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$(med ${W[$1]})" -v b="$(med ${W[$2]})" 'BEGIN { printf "%.3f", a / b }'; }
cratio() { awk -v a="$(med ${C[$1]})" -v b="$(med ${C[$2]})" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }

printf 'stat of %s files (1-4 KiB), metadata cached; %s runs each, interleaved\n' "$FILES" "$RUNS"
printf 'load average before %s, after %s (%s CPUs)\n' "$LOAD0" "$LOAD1" "$(nproc)"
printf '%-10s %9s %9s %s\n' run wall_med cpu_med 'walls (s)'
for n in "${names[@]}"; do
	printf '%-10s %9s %9s %s\n' "$n" "$(med ${W[$n]})" "$(med ${C[$n]})" "${W[$n]}"
done
printf 'root tree: new/base wall %s, cpu %s\n' "$(ratio new-root base-root)" "$(cratio new-root base-root)"
printf 'user tree: new/base wall %s, cpu %s\n' "$(ratio new-user base-user)" "$(cratio new-user base-user)"
printf 'new: user tree/root tree wall %s\n' "$(ratio new-user new-root)"
