#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/million.sh: does every command scale with the number of files? For
# each N (10,000, 100,000, 1,000,000 files of 1-4 KiB, 1,000 a directory,
# made with bench/mktree.py in a scratch directory beneath BENCH_DIR and
# removed at the end), its metadata cached (an untimed stat: a first trial
# after another session's drop_caches would time the inode tables' reads
# too, 2.8x per file at 1,000,000) and its data evicted, then timed one
# after another:
# warm (reads every file), stat, snapshot, show, diff (of two snapshots of
# the warm tree), evict, restore; each with its wall time, peak RSS (GNU
# time's %M) and time per file in microseconds, and the snapshot's size.
# Linear or better: a command's time per file at the largest N within 1.2x
# of its time at the smallest (the table's "ratio" row says it for each).
#
# Root (warm, evict and restore of root's tree; restore reads as root). The
# timed part holds LOCK (default /tmp/pc-test.lock, the test suite's lock:
# no test drops the cache under it): the first round, then the others;
# making the tree does not. Trials are interleaved across N (each N once,
# then again), medians.
#
# Environment: PAGECACHE (default build/pagecache), BENCH_DIR (default
# /var/tmp/pagecache-bench), LOCK ("" for none), TRIALS (default 3; a size
# of 1,000,000 or more runs once: minutes a trial).
# Usage: bash bench/million.sh [--sizes N,N,...] [--quick] [--json FILE] [--keep]
#   --quick: 10,000 and 100,000 only; --keep: leave the trees for another run.
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
LOCK=${LOCK-/tmp/pc-test.lock}
TRIALS=${TRIALS:-3}
SIZES=10000,100000,1000000
JSON= KEEP=
die() { printf 'million.sh: %s\n' "$*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
	case $1 in
	--sizes) SIZES=${2:?--sizes N,N,...}; shift 2 ;;
	--sizes=*) SIZES=${1#--sizes=}; shift ;;
	--quick) SIZES=10000,100000; shift ;;
	--json) JSON=${2:?--json FILE}; shift 2 ;;
	--json=*) JSON=${1#--json=}; shift ;;
	--keep) KEEP=1; shift ;;
	*) die "unknown argument '$1' (--sizes N,..., --quick, --json FILE, --keep)" ;;
	esac
done
[[ $SIZES =~ ^[0-9]+(,[0-9]+)*$ ]] || die "--sizes wants numbers separated by commas"
[[ $(id -u) -eq 0 ]] || die "must run as root (warm, evict and restore of its tree)"
[[ -x /usr/bin/time ]] || die "needs GNU time (/usr/bin/time)"
[[ -x $PAGECACHE ]] || die "no $PAGECACHE (make)"
. "$HERE/workdir.sh"
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench}
W=$(workdir "$BENCH_DIR") && W=$(workdir "$W/million") || die "choose another BENCH_DIR"
IFS=, read -r -a NS <<<"$SIZES"
need=0
for n in "${NS[@]}"; do need=$((need + n + n / 1000 + 1)); done
free=$(df -Pi "$W" | awk 'NR == 2 { print $4 }')
[[ $free == - || $free -gt $need ]] || die "$need inodes wanted beneath $W, $free free"
OUT=$(mktemp -d "$W/.run.XXXXXX")
cleanup() {
	rm -rf "$OUT"
	[[ -n $KEEP ]] || for n in "${NS[@]}"; do rm -rf "$W/tree-$n"; done
}
trap cleanup EXIT

# The tree of n files, made once (kept with --keep: .ready says it is whole).
for n in "${NS[@]}"; do
	t=$W/tree-$n
	[[ -f $t.ready ]] && [[ -d $t ]] && continue
	rm -rf "$t" "$t.ready"
	mkdir "$t"
	echo "making $n files in $t" >&2
	python3 "$HERE/mktree.py" "$t" "$n" 4
	sync
	: >"$t.ready"
done
[[ -n $KEEP ]] || trap 'cleanup; rm -f "$W"/tree-*.ready' EXIT

# step NAME N TRIAL CMD...: timed; one line of the raw results
step() {
	local name=$1 n=$2 trial=$3 e m t0 t1
	shift 3
	t0=$EPOCHREALTIME
	if ! /usr/bin/time -f '%e %M' -o "$OUT/time" "$@" >/dev/null 2>"$OUT/err"; then
		# exit 1 is a named failure (a file vanished, say): said, still timed
		[[ $(tail -n1 "$OUT/time") =~ ^[0-9.]+\ [0-9]+$ ]] || {
			cat "$OUT/err" >&2; die "$name failed on $n files"; }
		echo "million.sh: $name on $n files exited non-zero:" >&2
		head -n5 "$OUT/err" >&2
	fi
	t1=$EPOCHREALTIME
	read -r e m < <(tail -n1 "$OUT/time")
	e=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')	# %e: 10 ms steps
	printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$n" "$trial" "$e" "$m" >>"$OUT/raw"
}

trial() {
	local n=$1 r=$2 t=$W/tree-$1 s=$OUT/s$1
	# the tree's inodes and directories cached, whatever dropped them
	# since (another session's drop_caches): data is what is timed
	"$PAGECACHE" stat "$t" >/dev/null
	"$PAGECACHE" evict "$t" >/dev/null
	step warm "$n" "$r" "$PAGECACHE" warm -q "$t"
	step stat "$n" "$r" "$PAGECACHE" stat "$t"
	step snapshot "$n" "$r" "$PAGECACHE" snapshot -o "$s.a" "$t"
	printf 'size\t%s\t%s\t%s\t0\n' "$n" "$r" "$(stat -c %s "$s.a")" >>"$OUT/raw"
	step show "$n" "$r" "$PAGECACHE" show "$s.a"
	"$PAGECACHE" snapshot -o "$s.b" "$t" >/dev/null 2>&1
	step diff "$n" "$r" "$PAGECACHE" diff "$s.a" "$s.b"
	step evict "$n" "$r" "$PAGECACHE" evict "$t"
	step restore "$n" "$r" "$PAGECACHE" restore -q "$s.a"
	rm -f "$s.a" "$s.b"
}

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%FT%TZ)
# the lock held for the first round (a few minutes with 1,000,000 files),
# then for the others together (the smaller sizes only: seconds each)
for ((r = 0; r < TRIALS; r++)); do
	if [[ -n $LOCK ]] && ((r < 2)); then
		[[ $r == 0 ]] || exec 9>&-
		exec 9>"$LOCK"
		flock 9
	fi
	for n in "${NS[@]}"; do
		((r == 0 || n < 1000000)) || continue
		echo "trial $((r + 1)): $n files" >&2
		trial "$n" "$r"
	done
done
[[ -z $LOCK ]] || exec 9>&-
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)

python3 - "$OUT/raw" "$JSON" "$LOAD0" "$LOAD1" "$START" "$(uname -r)" "$(nproc)" \
	"$("$PAGECACHE" --version 2>/dev/null | head -n1)" <<'EOF'
import json, statistics, sys
raw, jpath, load0, load1, start, kernel, cpus, version = sys.argv[1:9]
steps = ["warm", "stat", "snapshot", "show", "diff", "evict", "restore"]
d = {}
for line in open(raw):
    name, n, trial, e, m = line.split("\t")
    d.setdefault((name, int(n)), []).append((float(e), int(m)))
ns = sorted({n for _, n in d})
res = {"bench": "million", "date": start, "kernel": kernel, "cpus": int(cpus),
       "pagecache": version, "load_before": load0, "load_after": load1,
       "file_sizes": "1-4 KiB, 1,000 a directory", "rows": [], "scaling": {}}
for n in ns:
    row = {"files": n, "trials": len(d.get(("warm", n), []))}
    for s in steps:
        v = d.get((s, n))
        if not v:
            continue
        sec = statistics.median(e for e, _ in v)
        row[s] = {"seconds": sec, "us_per_file": sec / n * 1e6,
                  "peak_rss_kib": max(m for _, m in v), "runs": [e for e, _ in v]}
    row["snapshot_bytes"] = int(statistics.median(e for e, _ in d[("size", n)]))
    row["snapshot_bytes_per_file"] = row["snapshot_bytes"] / n
    res["rows"].append(row)
lo, hi = res["rows"][0], res["rows"][-1]
for s in steps:
    if s in lo and s in hi and lo is not hi:
        r = hi[s]["us_per_file"] / lo[s]["us_per_file"]
        res["scaling"][s] = {"ratio": r, "linear": r <= 1.2,
                             "rss_ratio": hi[s]["peak_rss_kib"] / lo[s]["peak_rss_kib"]}
if any(r["files"] >= 1000000 for r in res["rows"]):
    big = [r for r in res["rows"] if r["files"] >= 1000000][0]
    res["snapshot_1m_under_10mb"] = big["snapshot_bytes"] < 10 * 1000 * 1000
out = []
out.append("pagecache bench/million.sh, %s, Linux %s, %s CPUs, load %s -> %s" %
           (start, kernel, cpus, load0, load1))
out.append("time per file in us (median of trials), peak RSS in MiB; snapshot size")
hdr = "%-9s" % "files" + "".join("%17s" % s for s in steps) + "%14s" % "snapshot"
out.append(hdr)
for row in res["rows"]:
    cells = []
    for s in steps:
        if s in row:
            cells.append("%17s" % ("%.2f us %5.1fM" % (row[s]["us_per_file"],
                                                     row[s]["peak_rss_kib"] / 1024)))
        else:
            cells.append("%17s" % "-")
    out.append("%-9d" % row["files"] + "".join(cells) +
               "%14s" % ("%.2f MB" % (row["snapshot_bytes"] / 1e6)))
if res["scaling"]:
    out.append("%-9s" % "ratio" + "".join(
        "%17s" % ("%.2fx %s" % (res["scaling"][s]["ratio"],
                                 "ok" if res["scaling"][s]["linear"] else "NOT"))
        if s in res["scaling"] else "%17s" % "-" for s in steps))
    out.append("ratio: time per file at %d files / at %d (linear or better: <= 1.2x)" %
               (hi["files"], lo["files"]))
if "snapshot_1m_under_10mb" in res:
    out.append("snapshot of 1,000,000 files under 10 MB: %s" %
               ("yes" if res["snapshot_1m_under_10mb"] else "no"))
print("\n".join(out))
if jpath:
    res["table"] = out
    with open(jpath, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
EOF
