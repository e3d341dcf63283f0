#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/device-readtwice.sh: readtwice at 1, 2, 4, 8, 16 memory cgroups,
# per-cgroup and shared layouts, on a many-core machine (the device
# machine some sessions are lent), RUNS repetitions each (default 3).
# Writes one JSON per cell to $OUT (or ./readtwice-results) and a summary
# table to stdout: aggregate MB/s, its stddev over runs in %, mean per
# reader and the spread across readers (CoV %).
set -u
PC=${PAGECACHE:-build/pagecache}
OUT=${OUT:-readtwice-results}
DUR=${DUR:-5}
RUNS=${RUNS:-3}
. "$(dirname "$0")/workdir.sh"
OUT=$(workdir "$OUT") || exit 1	# written as root: only a directory of its own
echo "# $(nproc) CPUs, $(uname -r), $(awk '/MemTotal/{print $2/1048576 " GiB"}' /proc/meminfo)"
for t in mkfs.ext4 mount; do command -v $t >/dev/null || echo "# missing: $t"; done
printf '%-8s %-11s %10s %8s %12s %8s\n' CGROUPS LAYOUT "AGG MB/s" "+-%" "MEAN/READER" "CoV %"
for n in 1 2 4 8 16; do
	for layout in per-cgroup shared; do
		f="$OUT/rt-$n-$layout.json"
		"$PC" bench readtwice --cgroups "$n" --readers-per-cgroup 2 --layout "$layout" \
			--duration "$DUR" --runs "$RUNS" --size 64G --json >"$f" 2>"$f.err" || { echo "# $n $layout failed: $(head -c 300 "$f.err")"; continue; }
		python3 - "$f" "$n" "$layout" <<'PY' 2>/dev/null || grep -o '"aggregate_mbps": [0-9.]*' "$f"
import json, sys
d = json.load(open(sys.argv[1]))["total"]
print("%-8s %-11s %10.0f %8.1f %12.0f %8.1f" % (sys.argv[2], sys.argv[3], d["aggregate_mbps"], d["aggregate_stddev_percent"], d["mean_mbps_per_reader"], d["cov_percent"]))
PY
	done
done
