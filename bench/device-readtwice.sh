#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/device-readtwice.sh: issue 14's readtwice matrix in one run, made
# for a many-core machine (the device machine some sessions are lent):
# CGROUPS memory cgroups (default 1 80 16 4 40: the control, the thread's
# 80, then the rest, in case the budget cuts it short) x both layouts (one memcg
# per file, all readers in one) x no limit and --limit LIMIT (default
# 256M a cgroup, the shared memcg N x LIMIT) x RUNS repetitions (default 3)
# of DUR seconds (default 3), 2 readers a file, sparse files of SIZE
# (default 64G). The cells run in an interleaved order (layouts and limits
# alternate), each one `pagecache bench readtwice --runs RUNS --json`.
# 20 cells of 3 x 3 s: about 4 minutes on 16 cores, if dropping the cache
# between runs is quick. BUDGET seconds (default 420) caps it: a cell that
# would end past it (at the mean time of the cells before it) is skipped and
# said so, so that the script fits a lent machine's minutes. The limit must be hit
# for reclaim to happen inside the memcgs: each cgroup must read more
# than it (a reader's pages are read twice, so half of what its two
# readers read is new); the table's HITS say whether it was, and a cell
# whose limit was never hit is warned about (a longer DUR or a smaller
# LIMIT then). On a 16-core machine readtwice read about 25 GB/s
# (experiments.md): each of 80 cgroups then reads about 0.9 GB in 3 s, half
# of it new, 1.7 times its 256M.
#
# Writes to $OUT (default ./readtwice-results, a directory of its own):
# one JSON per cell (rt-N-LAYOUT-LIMIT.json, its stderr beside it), and
# matrix.json, all cells' "results" rows in one document (a `bench compare`
# input: rows are told apart by cgroups, layout and limit_bytes) with the
# machine, the settings, the load average before and after each cell and
# each cell's totals. On stdout, the table: aggregate MB/s of each layout
# (mean over the runs, +- its stddev in %), per-cgroup / shared, and the
# charges that hit the limit (per-cgroup/shared, over all runs).
#
#   bash bench/device-readtwice.sh
#   CGROUPS="1 8 80" LIMIT=16M bash bench/device-readtwice.sh   # a 2-CPU VM
# On a lent machine, built there and the files brought back through $OUT:
#   make -j16 && OUT=$OUT/rt bash bench/device-readtwice.sh
set -u
PC=${PAGECACHE:-build/pagecache}
OUT=${OUT:-readtwice-results}
CGROUPS=${CGROUPS:-1 80 16 4 40}
LIMIT=${LIMIT:-256M}
SIZE=${SIZE:-64G}
DUR=${DUR:-3}
RUNS=${RUNS:-3}
READERS=${READERS:-2}
BUDGET=${BUDGET:-420}
. "$(dirname "$0")/workdir.sh"
OUT=$(workdir "$OUT") || exit 1	# written as root: only a directory of its own
command -v python3 >/dev/null || { echo "device-readtwice.sh: needs python3 (the table, matrix.json)" >&2; exit 1; }
for t in mkfs.ext4 mount; do command -v $t >/dev/null || echo "# missing: $t"; done
echo "# $(nproc) CPUs, $(uname -r), $(awk '/MemTotal/{printf "%.1f GiB", $2/1048576}' /proc/meminfo)," \
	"cgroup $(stat -f -c %T /sys/fs/cgroup | sed 's/^cgroup2fs$/v2/; s/^tmpfs$/v1/'), MGLRU $(cat /sys/kernel/mm/lru_gen/enabled 2>/dev/null || echo none)"
echo "# cgroups: $CGROUPS; limit $LIMIT a cgroup (shared: N x $LIMIT); $RUNS runs of $DUR s; files of $SIZE, $READERS readers each"
start=$(date +%s)
: >"$OUT/cells.tsv"
i=0
for n in $CGROUPS; do
	# interleaved: the order of the four cells of one N turns with N
	cells=("per-cgroup none" "shared $LIMIT" "shared none" "per-cgroup $LIMIT")
	for k in 0 1 2 3; do
		set -- ${cells[$(((k + i) % 4))]}
		layout=$1 lim=$2
		f="$OUT/rt-$n-$layout-$lim.json"
		done_cells=$(wc -l <"$OUT/cells.tsv")
		now=$(date +%s)
		if [ "$done_cells" -gt 0 ] &&
		   [ $((now + (now - start) / done_cells)) -ge $((start + BUDGET)) ]; then
			echo "# $n $layout limit $lim skipped: it would end past the budget of $BUDGET s"
			continue
		fi
		l0=$(cut -d' ' -f1-3 /proc/loadavg)
		args=(bench readtwice --cgroups "$n" --readers-per-cgroup "$READERS" --layout "$layout"
		      --duration "$DUR" --runs "$RUNS" --size "$SIZE" --json)
		[ "$lim" = none ] || args+=(--limit "$lim")
		"$PC" "${args[@]}" >"$f" 2>"$f.err"
		rc=$?
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$n" "$layout" "$lim" "$f" "$rc" "$l0" \
			"$(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/cells.tsv"
		[ $rc = 0 ] || echo "# $n $layout limit $lim failed (exit $rc): $(head -c 300 "$f.err")"
	done
	i=$((i + 1))
done
python3 - "$OUT" "$PC" "$CGROUPS" "$LIMIT" "$SIZE" "$DUR" "$RUNS" "$READERS" "$start" <<'PY'
import json, os, platform, sys, time
out, pc, cgroups, limit, size, dur, runs, readers, start = sys.argv[1:]
cells, results = [], []
for line in open(os.path.join(out, "cells.tsv")):
    n, layout, lim, f, rc, l0, l1 = line.rstrip("\n").split("\t")
    cell = {"cgroups": int(n), "layout": layout, "limit": lim, "exit": int(rc),
            "load_average_start": l0, "load_average_end": l1, "file": os.path.basename(f)}
    try:
        d = json.load(open(f))
        cell["total"] = d.get("total")
        cell["errors"] = d.get("errors", [])
        results += d.get("results", [])
    except (OSError, ValueError) as e:
        cell["error"] = "no JSON: %s" % e
    cells.append(cell)
doc = {"bench": "readtwice", "script": "bench/device-readtwice.sh",
       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(start))),
       "wall_s": int(time.time()) - int(start), "kernel": platform.release(), "cpus": os.cpu_count(),
       "mem_total_kib": int(open("/proc/meminfo").read().split()[1]),
       "settings": {"cgroups": [int(x) for x in cgroups.split()], "limit": limit, "size": size,
                    "duration_s": float(dur), "runs": int(runs), "readers_per_cgroup": int(readers)},
       "cells": cells, "results": results}
tmp = os.path.join(out, ".matrix.json.tmp")
with open(tmp, "w") as fh:
    json.dump(doc, fh, indent=1)
os.replace(tmp, os.path.join(out, "matrix.json"))
# the table: aggregate MB/s per layout, mean over runs (+- stddev %)
by = {(c["cgroups"], c["limit"], c["layout"]): c.get("total") for c in cells}
print("%-8s %-7s %16s %16s %13s  %s" % ("CGROUPS", "LIMIT", "PER-CGROUP MB/s", "SHARED MB/s", "PER-CG/SHARED",
                                       "HITS"))
def cellstr(t, key):
    if key not in by:
        return "%16s" % "skipped"
    return "%9.0f +-%4.1f%%" % (t["aggregate_mbps"], t["aggregate_stddev_percent"]) if t else "%16s" % "failed"
for n in sorted(set(int(x) for x in cgroups.split())):
    for lim in ("none", limit):
        a, b = by.get((n, lim, "per-cgroup")), by.get((n, lim, "shared"))
        ratio = "%13.2f" % (a["aggregate_mbps"] / b["aggregate_mbps"]) if a and b and b["aggregate_mbps"] else "%13s" % "-"
        hits = "/".join(str(t["limit_hits"]) if t else "-" for t in (a, b)) if lim != "none" else "-"
        print("%-8d %-7s %16s %16s %s  %s" % (n, lim, cellstr(a, (n, lim, "per-cgroup")),
                                              cellstr(b, (n, lim, "shared")), ratio, hits))
        for layout, t in (("per-cgroup", a), ("shared", b)):
            if lim != "none" and t and not t["limit_hits"]:
                print("# %d %s: the limit was never hit, nothing was reclaimed inside the memcg%s: "
                      "a longer DUR or a smaller LIMIT" % (n, layout, "s" if layout == "per-cgroup" else ""))
print("# %s: %d cells in %d s; load average %s at the start, %s at the end" %
      (os.path.join(out, "matrix.json"), len(cells), doc["wall_s"],
       cells[0]["load_average_start"] if cells else "-", cells[-1]["load_average_end"] if cells else "-"))
PY
