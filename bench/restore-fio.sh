#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/restore-fio.sh: pagecache restore of a file set against fio reading
# the same files, the floor: how fast can these bytes come off this disk
# into the page cache. FILES files of SIZE MiB (default 64 of 64 MiB, 4 GiB
# of random bytes, made once beneath BENCH_DIR and removed at the end), a
# snapshot of them all cached; then, for each trial, the page cache dropped
# (drop_caches) before each of the two, their order alternating trial by
# trial (ABBA), and the wall time of each. The ratio fio_time/restore_time
# (1: as fast as fio; the target is 0.9 or more) of each trial and its
# median.
#
# fio's job (FIO_ENGINE, FIO_JOBS, FIO_DEPTH, FIO_BS): sequential buffered
# reads of the whole of every file, one file after another in the order
# restore reads them (they were written one after another, so name order
# is disk order); FIO_JOBS jobs share the files out between them, each
# reading its own. The default, psync with one job and 1 MiB reads, reads
# the way restore does (one thread; readahead does the I/O ahead of the
# reads); the notes in bench/results/README.md say what the others measured.
#
# Root (drop_caches). The trials hold LOCK (default /tmp/pc-test.lock, ""
# for none: the caller holds it), all of them together. Environment: PAGECACHE, BENCH_DIR (default
# /var/tmp/pagecache-bench), FILES, SIZE (MiB), TRIALS (default 5).
# Usage: bash bench/restore-fio.sh [--json FILE] [--keep]
set -euo pipefail
export LC_ALL=C
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
LOCK=${LOCK-/tmp/pc-test.lock}
FILES=${FILES:-64} SIZE=${SIZE:-64} TRIALS=${TRIALS:-5}
FIO_ENGINE=${FIO_ENGINE:-psync} FIO_JOBS=${FIO_JOBS:-1} FIO_DEPTH=${FIO_DEPTH:-1} FIO_BS=${FIO_BS:-1M}
JSON= KEEP=
die() { printf 'restore-fio.sh: %s\n' "$*" >&2; exit 1; }
while [[ $# -gt 0 ]]; do
	case $1 in
	--json) JSON=${2:?--json FILE}; shift 2 ;;
	--json=*) JSON=${1#--json=}; shift ;;
	--keep) KEEP=1; shift ;;
	*) die "unknown argument '$1' (--json FILE, --keep)" ;;
	esac
done
[[ $(id -u) -eq 0 ]] || die "must run as root (drop_caches)"
command -v fio >/dev/null || die "needs fio (apt-get install fio; make deps installs it)"
[[ -x $PAGECACHE ]] || die "no $PAGECACHE (make)"
. "$HERE/workdir.sh"
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench}
W=$(workdir "$BENCH_DIR") && W=$(workdir "$W/restore-fio") || die "choose another BENCH_DIR"
D=$W/set-$FILES-$SIZE
OUT=$(mktemp -d "$W/.run.XXXXXX")
trap 'rm -rf "$OUT"; [[ -n $KEEP ]] || rm -rf "$D" "$D.ready"' EXIT
if [[ ! -f $D.ready ]]; then
	rm -rf "$D"
	mkdir "$D"
	echo "writing $FILES files of $SIZE MiB in $D" >&2
	for ((i = 0; i < FILES; i++)); do
		head -c "$((SIZE << 20))" /dev/urandom >"$(printf '%s/f%03d' "$D" "$i")"
	done
	sync
	: >"$D.ready"
fi
files=("$D"/f*)
"$PAGECACHE" warm -q "$D" >/dev/null
"$PAGECACHE" snapshot -o "$OUT/set.pcs" "$D" >/dev/null
# fio's jobs: the files dealt out in runs, job j reading the j-th run
fioargs=(--output-format=json --readwrite=read --bs="$FIO_BS" --ioengine="$FIO_ENGINE"
	--iodepth="$FIO_DEPTH" --invalidate=0 --direct=0 --file_service_type=sequential
	--group_reporting)
per=$(((FILES + FIO_JOBS - 1) / FIO_JOBS))
for ((j = 0; j < FIO_JOBS; j++)); do
	list=$(printf '%s:' "${files[@]:j*per:per}")
	fioargs+=(--name="read$j" --filename="${list%:}")
done

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
timed() {	# NAME CMD...: the wall time appended to $OUT/NAME
	local name=$1 t0 t1
	shift
	drop
	t0=$EPOCHREALTIME
	# restore's 1 is a named failure (a page that stayed out, say): said, still timed
	"$@" >"$OUT/$name.out" 2>"$OUT/$name.err" || { [[ $? == 1 && $name == restore ]] &&
		head -n3 "$OUT/$name.err" >&2; } || { cat "$OUT/$name.err" >&2; die "$name failed"; }
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", b - a }' >>"$OUT/$name"
}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u +%FT%TZ)
if [[ -n $LOCK ]]; then	# a minute or two: every trial in one hold
	exec 9>"$LOCK"
	flock 9
fi
for ((r = 0; r < TRIALS; r++)); do
	echo "trial $((r + 1)) of $TRIALS" >&2
	if ((r % 2 == 0)); then
		timed restore "$PAGECACHE" restore -q --json "$OUT/set.pcs"
		timed fio fio "${fioargs[@]}"
	else
		timed fio fio "${fioargs[@]}"
		timed restore "$PAGECACHE" restore -q --json "$OUT/set.pcs"
	fi
	# fio read all of it (a job cut short would flatter the floor)
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); b=sum(x["read"]["io_bytes"] for x in j["jobs"]); sys.exit(b != int(sys.argv[2]))' \
		"$OUT/fio.out" "$((FILES * SIZE << 20))" || die "fio did not read every byte"
done
drop
[[ -z $LOCK ]] || exec 9>&-
LOAD1=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$OUT" "$JSON" "$LOAD0" "$LOAD1" "$START" "$(uname -r)" "$(nproc)" "$FILES" "$SIZE" \
	"$FIO_ENGINE" "$FIO_JOBS" "$FIO_DEPTH" "$FIO_BS" "$(fio --version)" <<'EOF'
import json, statistics, sys
out, jpath, load0, load1, start, kernel, cpus, files, size, eng, jobs, depth, bs, fv = sys.argv[1:15]
rt = [float(x) for x in open(out + "/restore")]
ft = [float(x) for x in open(out + "/fio")]
ratios = [f / r for f, r in zip(ft, rt)]
total = int(files) * int(size) << 20
res = {"bench": "restore-fio", "date": start, "kernel": kernel, "cpus": int(cpus),
       "load_before": load0, "load_after": load1, "files": int(files),
       "file_mib": int(size), "bytes": total,
       "fio": {"version": fv, "ioengine": eng, "numjobs": int(jobs), "iodepth": int(depth),
               "bs": bs, "rw": "read", "file_service_type": "sequential", "direct": 0},
       "restore_seconds": rt, "fio_seconds": ft, "ratio_fio_over_restore": ratios,
       "median": {"restore_seconds": statistics.median(rt), "fio_seconds": statistics.median(ft),
                  "ratio": statistics.median(ratios),
                  "restore_mib_s": total / 1048576 / statistics.median(rt),
                  "fio_mib_s": total / 1048576 / statistics.median(ft)},
       "target_ratio": 0.9}
res["target_met"] = res["median"]["ratio"] >= 0.9
m = res["median"]
print("restore-fio: %s files of %s MiB, fio %s numjobs=%s iodepth=%s bs=%s, %d trials, load %s -> %s"
      % (files, size, eng, jobs, depth, bs, len(rt), load0, load1))
print("restore %.2f s (%.0f MiB/s), fio %.2f s (%.0f MiB/s): fio/restore %.3f (per trial: %s); target 0.9: %s"
      % (m["restore_seconds"], m["restore_mib_s"], m["fio_seconds"], m["fio_mib_s"], m["ratio"],
         " ".join("%.3f" % x for x in ratios), "met" if res["target_met"] else "NOT met"))
if jpath:
    with open(jpath, "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
EOF
