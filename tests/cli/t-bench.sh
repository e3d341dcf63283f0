#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench warmup runs end to end on a tiny database and reports every
# condition with the JSON keys scripts rely on (behaviour, never timings).
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$T_DIR"

pc bench >o 2>e; t_is "bench without an experiment exits 2" $? 2
pc bench nosuch >o 2>e; t_is "an unknown experiment exits 2" $? 2
pc bench warmup --rows 5 >o 2>e; t_is "too few rows exits 2" $? 2
# it drops the page cache, mounts (readtwice) and makes cgroups: asked of
# the kernel, not of the uid (root in a container may have none of it)
if ! t_writable /proc/sys/vm/drop_caches || ! t_cap sys_admin || ! t_cap chown; then
	t_skip "bench warmup and readtwice" "$T_WHY (drops the page cache, mounts, chowns)"
	t_done; exit
fi
# root keeps its database in --dir: only a directory that is its own, refused
# before any work (nothing is made in it); and no name in it is written through
mkdir -m 777 w777; mkdir -m 700 wnobody wsafe; chown 65534 wnobody; ln -s wsafe wlink
for d in w777 wnobody wlink w777/sub; do
	[ "$d" = w777/sub ] && mkdir -m 700 w777/sub
	pc bench warmup --rows 20000 --trials 1 --dir "$d" >o 2>e; rc=$?
	t_is "bench warmup refuses --dir $d (exit 1)" "$rc" 1
	t_ok "and says why" grep -q "cannot use the work directory '$d'" e
	t_is "before making anything in it" "$(ls -A "$d" | wc -l)" 0
done
t_ok "a directory below one others may write is refused too" grep -q "'.*/w777' above it" e
DEMO_DIR=$T_DIR/w777 PAGECACHE=$PAGECACHE sh "$REPO/tests/demo.sh" >o 2>e
t_ok "make demo refuses such a DEMO_DIR" test $? != 0
t_is "and makes nothing in it" "$(ls -A w777)" sub
mkdir -m 700 wu
echo precious >victim
ln -s "$T_DIR/victim" wu/warmup-20000.db.ids
ln -s "$T_DIR/victim" wu/warmup-20000.db.ids.tmp
pc bench warmup --rows 20000 --trials 1 --dir "$T_DIR/wu" --json >w.json 2>w.err; rc=$?
t_is "bench warmup exits 0" "$rc" 0
t_ok "its JSON is valid" jq -e . w.json
# record (issue 13) adds a cold run under it, its recording restored in
# access and disk order and cut at half the time, and the snapshot cut too
want="cold restored"
command -v vmtouch >/dev/null && want="$want peer"
have_record=0 have_cut=0 have_access=0
pc record --help >/dev/null 2>&1 && have_record=1
pc restore --help 2>/dev/null | grep -q -- --max-time && have_cut=1
pc restore --help 2>/dev/null | grep -q 'access' && have_access=1
[ $have_record = 1 ] && want="$want recording"
[ $have_record$have_access = 11 ] && want="$want recorded-access"
[ $have_record = 1 ] && want="$want recorded-disk"
[ $have_record$have_access$have_cut = 111 ] && want="$want recorded-half"
[ $have_cut = 1 ] && want="$want restored-half"
t_is "every condition is reported" "$(jq -r '[.conditions[].condition] | join(" ")' w.json)" "$want warm"
for k in q1_ms q2_ms q3_ms q1_min_ms q1_max_ms trials; do
	t_is "conditions have $k" "$(jq "[.conditions[] | has(\"$k\")] | all" w.json)" true
done
t_ok "the restored condition reports its prefetch" \
	jq -e '.conditions[] | select(.condition=="restored") | .prefetch_ms > 0 and .prefetch_mib > 0' w.json
t_ok "the database is kept for the next run" test -s "$T_DIR/wu/warmup-20000.db"
t_is "a link planted where it writes is replaced, never written through" "$(cat victim)" precious
t_ok "the ids are a file of their own" test -f wu/warmup-20000.db.ids -a ! -L wu/warmup-20000.db.ids
t_is "setup names the rows" "$(jq .setup.rows w.json)" 20000
t_ok "and the load average before and after" jq -e '[.setup.load_average_start, .setup.load_average_end] | map(test("^[0-9.]+ [0-9.]+ [0-9.]+$")) | all' w.json
t_is "the document names its bench" "$(jq -r .bench w.json)" warmup
t_is "a results row per condition, for bench compare" "$(jq '.results | length' w.json)" "$(jq '.conditions | length' w.json)"
t_ok "with per-trial values" jq -e '[.results[].metrics.q1_ms.values | length == 1] | all' w.json
pc bench compare w.json w.json --json >wc.json 2>/dev/null
t_is "bench compare reads warmup results" "$(jq -r .setup.bench wc.json)" warmup
if [ $have_record = 1 ]; then
	t_is "setup says the recorded conditions ran" "$(jq -c '[.setup.recorded, .setup.recorded_skipped]' w.json)" '[true,null]'
	t_ok "recorded-disk reports its restore's time and bytes read" \
		jq -e '.conditions[] | select(.condition=="recorded-disk") | .prefetch_ms > 0 and .prefetch_mib >= 0 and .from == "recording" and .order == "disk"' w.json
	t_ok "size: the recording's pages, used pages and file beside the snapshot's" \
		jq -e '.size | .profile_pages > 0 and .profile_used_pages > 0 and .profile_used_pages <= .profile_pages and .profile_file_bytes > 0 and .snapshot_pages > 0 and .snapshot_file_bytes > 0 and .pages_ratio > 0' w.json
	t_ok "the recording says how many events it lost" \
		jq -e '.conditions[] | select(.condition=="recording") | .lost_events | type == "number"' w.json
	t_is "the recording is not left in the work directory" "$(ls wu | grep -c '\.rec')" 0
else
	t_skip "the recorded conditions' figures" "this pagecache has no record"
fi
if [ $have_record$have_access$have_cut = 111 ]; then
	for c in recorded-access recorded-half restored-half; do
		t_ok "$c reports its restore's time and bytes read" \
			jq -e --arg c $c '.conditions[] | select(.condition==$c) | .prefetch_ms > 0 and .prefetch_mib >= 0' w.json
	done
	t_is "each says what it restored, in which order" \
		"$(jq -c '[.conditions[] | select(.from) | [.condition, .from, .order] | join(":")]' w.json)" \
		'["restored:snapshot:disk","recorded-access:recording:access","recorded-disk:recording:disk","recorded-half:recording:access","restored-half:snapshot:disk"]'
	t_ok "the cut ones say where they were cut" \
		jq -e '[.conditions[] | select(.condition | endswith("-half")) | .max_time_s > 0 and (.cut_short | type) == "number"] | all and length == 2' w.json
	t_ok "results rows carry the bytes read, for bench compare" \
		jq -e '.results[] | select(.condition=="recorded-access") | .metrics.prefetch_mib.values | length == 1' w.json
else
	t_skip "the access-order and cut conditions' figures" "this pagecache's restore has no --order access or --max-time"
	t_ok "setup says why they were left out" jq -e '(.setup.access_skipped // .setup.cut_skipped) | test("restore has no")' w.json
fi
# where record cannot run (here: its events "missing"), the recorded
# conditions are left out, and the output names them and says why
cat >fakepc <<EOF
#!/bin/sh
case "\$1 \${2:-}" in
"record --help") exit 0 ;;
record*) echo "pagecache: record: cannot open filemap:mm_filemap_get_pages: No such file or directory" >&2; exit 1 ;;
esac
exec "$PAGECACHE" "\$@"
EOF
chmod 755 fakepc
PAGECACHE_EXE=$T_DIR/fakepc "$(dirname "$PAGECACHE")/pagecache-bench" warmup --rows 20000 --trials 1 \
	--dir "$T_DIR/wu" --json >ws.json 2>ws.err; rc=$?
t_is "without record, bench warmup still exits 0" "$rc" 0
t_is "and runs the other conditions" "$(jq -r '[.conditions[].condition] | join(" ")' ws.json)" \
	"$(echo "$want" | sed 's/ record[a-z-]*//g') warm"
t_ok "setup says why" jq -e '.setup.recorded == false and (.setup.recorded_skipped | test("record failed: .*mm_filemap_get_pages| restore has no "))' ws.json
PAGECACHE_EXE=$T_DIR/fakepc "$(dirname "$PAGECACHE")/pagecache-bench" warmup --rows 20000 --trials 1 \
	--dir "$T_DIR/wu" >wh.out 2>wh.err
t_ok "the table names the skipped conditions and why" \
	grep -Eq "^recording, recorded-access, recorded-disk and recorded-half skipped: (record failed: .*mm_filemap_get_pages|.* restore has no )" wh.out

# bench/record-overhead.sh: its shape at the smallest sizes (one round, one
# worker run, 100 files), on the database above; record and top are each
# measured or skipped with a reason, and nothing of theirs is left running
WARMUP_DIR=$T_DIR/wu WARMUP_ROWS=20000 ROUNDS=1 QLOOPS=1 FILES=100 BENCH_DIR=$T_DIR/ov \
	bash "$REPO/bench/record-overhead.sh" --quick --json ov.json >ov.out 2>ov.err
t_is "record-overhead.sh exits 0" $? 0
t_is "its JSON names the bench and its sizes" "$(jq -c '[.bench, .rounds, .tree_files, .database.rows]' ov.json)" '["record-overhead",1,100,20000]'
t_ok "and the load average" jq -e '.load_average.start | test("^[0-9.]+ [0-9.]+ [0-9.]+$")' ov.json
t_ok "none has one sample of each workload" jq -e '.conditions.none | (.sqlite_query_ms | length) == 1 and (.cat_ms | length) == 1' ov.json
t_ok "and its cat of 100 cached files is timed finer than 10 ms steps (above 0)" jq -e '.conditions.none.cat_ms[0] > 0' ov.json
for c in record top; do
	t_ok "$c is measured beside it, or skipped saying why" \
		jq -e --arg c $c '(.conditions[$c].round_ratio_cat | length) == 1 and .summary[$c].cat_round_ratio_median > 0 or ([.skipped[] | select(.condition == $c and (.why | length) > 0)] | length) == 1' ov.json
done
t_is "no record or top of its own is left" "$(pgrep -f "pagecache (record --json -o $T_DIR/ov|top --json --interval)" | wc -l)" 0
t_is "nor its tree" "$(ls -A ov)" ""

# readtwice: shape, and nothing left behind (mounts, loop devices, cgroups), SIGINT too
left() { echo "$(mount | grep -c pagecache-readtwice) $(find /sys/fs/cgroup -maxdepth 6 -name 'pc-readtwice-*' 2>/dev/null | wc -l) $(losetup -a 2>/dev/null | grep -c pagecache-readtwice)"; }
pc bench readtwice --cgroups 2 --readers-per-cgroup 2 --duration 1 --size 256M --json >rt.json 2>rt.err; rc=$?
t_is "bench readtwice exits 0" "$rc" 0
t_ok "aggregate_mbps is reported" jq -e '.total.aggregate_mbps > 0' rt.json
t_is "one row per cgroup" "$(jq '.cgroups | length' rt.json)" 2
t_is "one row per reader" "$(jq '.readers | length' rt.json)" 4
t_ok "per-cgroup rows add up to the aggregate" \
	jq -e '(([.cgroups[].mbps] | add) - .total.aggregate_mbps) | fabs < 0.01' rt.json
t_is "nothing left behind (mounts, cgroups, loops)" "$(left)" "0 0 0"
pc bench readtwice --cgroups 2 --layout shared --duration 1 --size 256M --json >rs.json 2>/dev/null
t_is "--layout shared runs" "$(jq -r .total.layout rs.json)" shared
t_is "and has one cgroup row, with every reader" "$(jq '.cgroups | length' rs.json) $(jq '[.readers[].cgroup] | unique | length' rs.json)" "1 1"
t_is "reader rows name their file" "$(jq -c '[.readers[].file] | unique' rs.json)" "[0,1]"
"$PAGECACHE" bench readtwice --cgroups 2 --duration 30 --size 256M >/dev/null 2>ri.err &
bp=$!
T_CLEANUP+=("t_kill $bp")
# in the middle of it: its mount, cgroups and loop device are all there
t_wait 60 eval '[ "$(left)" != "0 0 0" ] && ! [[ "$(left)" = *" 0"* || "$(left)" = "0 "* ]]'
kill -INT $bp; wait $bp; rc=$?
t_is "SIGINT stops it (exit 130)" "$rc" 130
t_is "and it still cleans up" "$(left)" "0 0 0"
"$PAGECACHE" bench readtwice --cgroups 2 --duration 30 --size 256M >/dev/null 2>&1 &
bp=$!
T_CLEANUP+=("t_kill $bp")
t_wait 60 eval '! [[ "$(left)" = *" 0"* || "$(left)" = "0 "* ]] && [ -e /run/pagecache/readtwice-$bp.state ]'
kill -9 $bp; wait $bp 2>/dev/null
t_ok "kill -9 leaves mounts behind" test "$(left)" != "0 0 0"
pc bench readtwice --cgroups 1 --duration 0.5 --size 256M --runs 2 --json >rr.json 2>rr.err
t_ok "the next run undoes them and says so" grep -q "undid what a killed run (pid $bp)" rr.err
t_is "nothing is left behind" "$(left)" "0 0 0"
t_is "--runs 2: one results row" "$(jq '.results | length' rr.json)" 1
t_is "with runs 2" "$(jq '.results[0].runs' rr.json)" 2
t_is "and two values per metric" "$(jq '.results[0].metrics.aggregate_mbps.values | length' rr.json)" 2
t_is "reader rows name their run" "$(jq '[.readers[].run] | unique' -c rr.json)" "[1,2]"
pc bench readtwice --layout sideways >o 2>e; t_is "a bad layout exits 2" $? 2
pc bench warmup --page-cluster 3 >o 2>e; t_is "another experiment's option exits 2" $? 2
t_ok "and names it" grep -q "not an option of warmup" e
pc bench readtwice --kv --cgroups 1 --duration 0.3 --size 64M >o 2>e
t_is "--kv works with bench (it used to be taken for --readers-per-cgroup)" $? 0
t_ok "and prints key=value" grep -q "aggregate_mbps=" o
pc bench readtwice --prom --cgroups 1 --duration 0.3 --size 64M >o 2>e
t_is "--prom works with bench" $? 0
t_ok "and prints metrics" grep -q "^pagecache_bench_readtwice_aggregate_read_bytes_per_second " o
pc bench readtwice --json --cgroups 0 >o 2>e; t_ok "a usage error with --json is one JSON document" jq -e .usage o
t_done
