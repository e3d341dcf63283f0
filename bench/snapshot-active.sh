#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/snapshot-active.sh -- what recording active pages costs `pagecache
# snapshot`: snapshot of a tree of small files, all cached and read twice
# (so their pages are on the active list), against snapshot --no-active of
# the same tree, side by side in one run. The runs interleave (active,
# no-active, [baseline,] ...), so a change of load touches all alike.
# Prints the median wall and CPU time of each, the ratio to --no-active,
# the pages and active pages the snapshots recorded (the first run's and
# the last's: the tree stayed cached and active throughout), and the load
# average before and after.
#
# Needs root (kpageflags). Run it under the test lock, so no test drops
# the cache meanwhile: flock -o /tmp/pc-test.lock bash bench/snapshot-active.sh
# Environment: PAGECACHE (default build/pagecache), BASELINE (optional: an
# older pagecache binary, its active snapshot timed too), FILES (default
# 100000 files of 1-16 KiB of random bytes, in directories of 1,000;
# bench/mktree.py), RUNS (default 7), BENCH_DIR (default
# /var/tmp/pagecache-bench-active; the tree is kept for the next run).
# Usage: bash bench/snapshot-active.sh [--json FILE]
# (commands are split on purpose)
# shellcheck disable=SC2086
set -euo pipefail
export LC_ALL=C
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BASELINE=${BASELINE:-}
FILES=${FILES:-100000}
RUNS=${RUNS:-7}
JSON=
[[ ${1:-} == --json ]] && JSON=${2:?--json FILE}
. "$REPO/bench/workdir.sh"
die() { printf 'snapshot-active.sh: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (kpageflags)"
[[ -x /usr/bin/time ]] || die "needs GNU time (/usr/bin/time)"
BENCH_DIR=$(workdir "${BENCH_DIR:-/var/tmp/pagecache-bench-active}") || exit 1
T=$BENCH_DIR/tree
if [[ ! -f $BENCH_DIR/.ready-$FILES ]]; then
	rm -rf "$T" "$BENCH_DIR"/.ready-*
	mkdir -p "$T"
	python3 "$REPO/bench/mktree.py" "$T" "$FILES" 16 random
	: >"$BENCH_DIR/.ready-$FILES"
fi
sync
TMP=$(mktemp -d "$BENCH_DIR/.sa.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
cp "$PAGECACHE" "$TMP/pagecache"
[[ -z $BASELINE ]] || cp "$BASELINE" "$TMP/baseline"

# every page cached and active: read twice in a row (the second read of a
# page on the inactive list moves it to the active one)
for _ in 1 2; do find "$T" -type f -print0 | xargs -0 -P 2 -n 1000 cat >/dev/null; done

names=(active no-active)
cmds=("$TMP/pagecache snapshot -o $TMP/active.snap $T"
	"$TMP/pagecache snapshot --no-active -o $TMP/no-active.snap $T")
if [[ -n $BASELINE ]]; then
	names+=(baseline)
	cmds+=("$TMP/baseline snapshot -o $TMP/baseline.snap $T")
fi
# pages and active pages of the active snapshot just written
counts() { "$TMP/pagecache" show --json "$TMP/active.snap" | jq -r '"\(.total.pages) \(.total.active_pages)"'; }

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A W=() C=()
for ((r = 0; r < RUNS; r++)); do
	for i in "${!names[@]}"; do
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%U %S' -o "$TMP/t" ${cmds[i]} >/dev/null 2>&1 ||
			die "${cmds[i]} failed"
		t1=$EPOCHREALTIME
		read -r u s <"$TMP/t"
		W[${names[i]}]+="$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') "
		C[${names[i]}]+="$(awk -v u="$u" -v s="$s" 'BEGIN { print u + s }') "
	done
	((r == 0)) && FIRST=$(counts)
done
LAST=$(counts)
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
med() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { printf "%.4f", (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
mn() { printf '%s\n' "$@" | sort -g | head -n 1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }

read -r p0 a0 <<<"$FIRST"
read -r p1 a1 <<<"$LAST"
printf 'snapshot of %s files of 1-16 KiB, all cached, read twice; %s runs each, interleaved\n' "$FILES" "$RUNS"
printf 'pages recorded %s, active %s (first run); %s, %s (last run)\n' "$p0" "$a0" "$p1" "$a1"
printf 'load average before %s, after %s (%s CPUs)\n' "$LOAD0" "$LOAD1" "$(nproc)"
printf '%-12s %8s %8s %8s %14s %14s\n' tool wall_med wall_min cpu_med wall/no-active cpu/no-active
nw=$(med ${W[no-active]}) nc=$(med ${C[no-active]})
for n in "${names[@]}"; do
	printf '%-12s %8s %8s %8s %14s %14s\n' "$n" "$(med ${W[$n]})" "$(mn ${W[$n]})" "$(med ${C[$n]})" \
		"$(ratio "$(med ${W[$n]})" "$nw")x" "$(ratio "$(med ${C[$n]})" "$nc")x"
done
if [[ -n $JSON ]]; then
	{
		printf '{"what": "pagecache snapshot (active pages from /proc/kpageflags) against snapshot --no-active, a tree of %s files of 1-16 KiB (bench/mktree.py, random bytes) all cached and read twice",\n' "$FILES"
		printf ' "how": "bash bench/snapshot-active.sh under flock -o /tmp/pc-test.lock: %s interleaved runs of each; wall from EPOCHREALTIME around GNU time, cpu its %%U+%%S (10 ms steps); medians; ratios to the no-active median of the same run",\n' "$RUNS"
		printf ' "host": "%s, %s CPUs", "load_average": {"before": "%s", "after": "%s"},\n' "$(uname -r)" "$(nproc)" "$LOAD0" "$LOAD1"
		printf ' "pages": {"first_run": %s, "last_run": %s}, "active_pages": {"first_run": %s, "last_run": %s},\n' "$p0" "$p1" "$a0" "$a1"
		printf ' "tools": {'
		sep=
		for i in "${!names[@]}"; do
			n=${names[i]}
			printf '%s\n  "%s": {"command": "%s", "wall_s": [%s], "cpu_s": [%s], "wall_median_s": %s, "cpu_median_s": %s, "wall_vs_no_active": %s, "cpu_vs_no_active": %s}' \
				"$sep" "$n" "${cmds[i]//$TMP\//}" "$(echo ${W[$n]} | tr ' ' ,)" "$(echo ${C[$n]} | tr ' ' ,)" \
				"$(med ${W[$n]})" "$(med ${C[$n]})" "$(ratio "$(med ${W[$n]})" "$nw")" \
				"$(ratio "$(med ${C[$n]})" "$nc")"
			sep=,
		done
		printf '\n }}\n'
	} >"$JSON"
	command -v jq >/dev/null && jq -e . "$JSON" >/dev/null
fi
