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
# issue 24: cold metadata (drop_caches twice), and a --metadata snapshot
# restored with the block device refused (the bdev_open fault point)
want="$want cold-meta"
have_meta=0
pc snapshot --help 2>/dev/null | grep -q -- --metadata &&
	PAGECACHE_FAULT=bdev_open:EPERM pc --version >/dev/null 2>&1 && have_meta=1
[ $have_meta = 1 ] && want="$want restored-meta"
t_is "every condition is reported" "$(jq -r '[.conditions[].condition] | join(" ")' w.json)" "$want warm"
for k in q1_ms q2_ms q3_ms q1_min_ms q1_max_ms trials; do
	t_is "conditions have $k" "$(jq "[.conditions[] | has(\"$k\")] | all" w.json)" true
done
t_ok "the restored condition reports its prefetch" \
	jq -e '.conditions[] | select(.condition=="restored") | .prefetch_ms > 0 and .prefetch_mib > 0' w.json
t_ok "the database is kept for the next run" test -s "$T_DIR/wu/warmup-20000.db"
t_is "a link planted where it writes is replaced, never written through" "$(cat victim)" precious
t_ok "the ids are a file of their own" test -f wu/warmup-20000.db.ids -a ! -L wu/warmup-20000.db.ids
if [ $have_record = 1 ]; then
	# before 6.12 (pretended): the recorded conditions still run, record seeing the misses
	PAGECACHE_FAULT=filemap_get_pages:ENOENT pc bench warmup --rows 20000 --trials 1 \
		--dir "$T_DIR/wu" --json >wm.json 2>wm.err
	t_is "before 6.12: the recording runs, record seeing the misses" \
		"$(jq -c '[.conditions[] | select(.condition == "recording") | .record_source]' wm.json)" \
		'["misses"]'
	t_is "  and every recorded condition is there" \
		"$(jq -r '[.conditions[].condition] | join(" ")' wm.json)" \
		"$(jq -r '[.conditions[].condition] | join(" ")' w.json)"
fi
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
	meta_from=
	[ $have_meta = 1 ] && meta_from=',"restored-meta:snapshot:disk"'
	t_is "each says what it restored, in which order" \
		"$(jq -c '[.conditions[] | select(.from) | [.condition, .from, .order] | join(":")]' w.json)" \
		'["restored:snapshot:disk","recorded-access:recording:access","recorded-disk:recording:disk","recorded-half:recording:access","restored-half:snapshot:disk"'"$meta_from"']'
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

# issue 24: --aux-files N small files that each start walks and reads, made
# once beside the database; cold-meta and restored-meta beside the others,
# restored-meta's restore (only it) with the block device refused
cat >logpc <<EOF
#!/bin/sh
[ "\$1" = restore ] && [ "\$2" != --help ] && echo "restore fault=\${PAGECACHE_FAULT:-}" >>"$T_DIR/restores.log"
exec "$PAGECACHE" "\$@"
EOF
chmod 755 logpc
: >restores.log
PAGECACHE_EXE=$T_DIR/logpc "$(dirname "$PAGECACHE")/pagecache-bench" warmup --rows 20000 --trials 1 \
	--aux-files 30 --dir "$T_DIR/wu" --json >wa.json 2>wa.err; rc=$?
t_is "bench warmup --aux-files 30 exits 0" "$rc" 0
t_is "it made 30 small files in nested directories" \
	"$(find wu/warmup-aux-30 -mindepth 3 -type f -name '*.conf' | wc -l)" 30
t_ok "  and keeps them for the next run" test -f wu/warmup-aux-30/.complete
t_is "setup names them" "$(jq -c '[.setup.aux_files, (.setup.aux_dir | endswith("/wu/warmup-aux-30"))]' wa.json)" '[30,true]'
t_is "every condition is reported with them too" "$(jq -r '[.conditions[].condition] | join(" ")' wa.json)" "$want warm"
t_ok "cold-meta has its samples" \
	jq -e '.conditions[] | select(.condition=="cold-meta") | .trials == 1 and .q1_ms > 0 and .start_ms > 0' wa.json
t_is "the drops before each: cold once, cold-meta twice, warm none" \
	"$(jq -c '[.conditions[] | select(.condition | test("^(cold|cold-meta|warm)$")) | .drops]' wa.json)" '[1,2,0]'
t_ok "every condition times its start (the walk, the open)" \
	jq -e '[.conditions[] | .start_ms > 0 and .start_min_ms <= .start_max_ms] | all' wa.json
t_ok "  and the results rows carry it, for bench compare" \
	jq -e '[.results[].metrics.start_ms.values | length == 1] | all' wa.json
if [ $have_meta = 1 ]; then
	t_ok "restored-meta has its samples, its restore's time and what it read" \
		jq -e '.conditions[] | select(.condition=="restored-meta") | .trials == 1 and .q1_ms > 0 and .prefetch_ms > 0 and .prefetch_mib > 0 and .drops == 2' wa.json
	t_ok "  and says it restored metadata with the device refused" \
		jq -e '.conditions[] | select(.condition=="restored-meta") | .metadata == true and .device == "refused" and (.metadata_pages | type) == "number"' wa.json
	t_is "only its restore ran with the block device refused" \
		"$(grep -c 'fault=.*bdev_open:EPERM' restores.log) of $(wc -l <restores.log)" \
		"1 of $(jq '[.conditions[] | select(.from)] | length' wa.json)"
	t_is "setup says restored-meta ran" "$(jq .setup.restored_meta_skipped wa.json)" null
else
	t_skip "restored-meta's figures" "this pagecache has no snapshot --metadata or fault seam"
fi
pc bench compare w.json wa.json --json >wac.json 2>/dev/null
t_is "bench compare reads them beside the run without" "$(jq -r .setup.bench wac.json)" warmup
# a pagecache that cannot refuse the device (one without the fault seam):
# restored-meta left out, saying why
cat >nofaultpc <<EOF
#!/bin/sh
case "\${PAGECACHE_FAULT:-}" in
*bdev_open*) echo "pagecache: PAGECACHE_FAULT is for a pagecache that carries the library" >&2; exit 2 ;;
esac
exec "$PAGECACHE" "\$@"
EOF
chmod 755 nofaultpc
PAGECACHE_EXE=$T_DIR/nofaultpc "$(dirname "$PAGECACHE")/pagecache-bench" warmup --rows 20000 \
	--trials 1 --dir "$T_DIR/wu" --json >wn.json 2>wn.err; rc=$?
t_is "without the fault seam, bench warmup still exits 0" "$rc" 0
t_is "  and leaves restored-meta out" \
	"$(jq -r '[.conditions[].condition] | join(" ")' wn.json)" "$(echo "$want" | sed 's/ restored-meta//') warm"
t_ok "  saying why" jq -e '.setup.restored_meta_skipped | test("takes no PAGECACHE_FAULT=bdev_open:EPERM")' wn.json
pc bench swapin --aux-files 3 >o 2>e; t_is "--aux-files is warmup's only (exit 2)" $? 2
pc bench warmup --aux-files 1x >o 2>e; t_is "a bad --aux-files exits 2" $? 2

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

# readtwice reads no residency (no cachestat): make check's second pass, as
# without cachestat, skips it for time; the first pass ran it
if [ "${PC_CHECK_PASS:-}" = nocachestat ]; then
	t_skip "bench readtwice" "it makes no cachestat call: the no-cachestat pass of make check skips it for time (PC_CHECK_PASS=nocachestat)"
	pc bench warmup --page-cluster 3 >o 2>e; t_is "another experiment's option exits 2" $? 2
	t_ok "and names it" grep -q "not an option of warmup" e
	t_done; exit
fi
# readtwice's memory cgroups go beneath ours (v2: a cgroup of its own, or systemd's scope)
if ! t_can_nest; then
	t_skip "bench readtwice" "$T_NEST_WHY"
	t_done; exit
fi

# readtwice: shape, and nothing left behind (mounts, loop devices, cgroups, and v2's
# leaf of our own), SIGINT too
# (left PID: that run's; left: those of runs no longer alive, so that another
# readtwice running on the host meanwhile is not taken for a leftover)
ofpid() {	# NAMES... on stdin, each with its run's pid after PREFIX; those of $1, or of dead pids
	local line p
	while read -r line; do
		p=${line#*"$2"}; p=${p%%[!0-9]*}
		if [ -n "$1" ]; then [ "$p" = "$1" ] && echo "$line"; elif [ ! -d "/proc/$p" ]; then echo "$line"; fi
	done
}
left() {
	local w=${1:-}
	echo "$(mount | grep -o '/var/tmp/pagecache-readtwice-[0-9]*[^ ]*' | ofpid "$w" pagecache-readtwice- | wc -l) $(find /sys/fs/cgroup -maxdepth 6 \( -name 'pc-readtwice-*' -o -name 'pagecache-run-*-self' \) 2>/dev/null | sed 's/pc-readtwice-/pc-rt-/; s/pagecache-run-/pc-rt-/' | ofpid "$w" pc-rt- | wc -l) $(losetup -a 2>/dev/null | grep -o 'pagecache-readtwice-[0-9]*' | ofpid "$w" pagecache-readtwice- | wc -l)"
}
pc bench readtwice --cgroups 2 --readers-per-cgroup 2 --duration 0.5 --size 256M --json >rt.json 2>rt.err; rc=$?
t_is "bench readtwice exits 0" "$rc" 0
t_ok "aggregate_mbps is reported" jq -e '.total.aggregate_mbps > 0' rt.json
t_is "one row per cgroup" "$(jq '.cgroups | length' rt.json)" 2
t_is "one row per reader" "$(jq '.readers | length' rt.json)" 4
t_ok "per-cgroup rows add up to the aggregate" \
	jq -e '(([.cgroups[].mbps] | add) - .total.aggregate_mbps) | fabs < 0.01' rt.json
t_is "without --limit, total.limit_bytes and memcg_limit_bytes are null" \
	"$(jq -c '[.total | has("limit_bytes"), .total.limit_bytes, .total.memcg_limit_bytes]' rt.json)" '[true,null,null]'
t_is "and so is each cgroup's limit" "$(jq -c '[.cgroups[].limit_bytes]' rt.json)" '[null,null]'
t_is "the results row has no limit_bytes (it matches results from before --limit)" \
	"$(jq '.results[0] | has("limit_bytes")' rt.json)" false
t_is "no reader was OOM-killed, nor anything else" "$(jq -c '[.total.oom_kills, .total.oom_kills_elsewhere]' rt.json)" '[0,0]'
t_ok "the load average is recorded" jq -e '[.total.load_average_start, .total.load_average_end] | map(test("^[0-9.]+ [0-9.]+ [0-9.]+$")) | all' rt.json
t_is "nothing left behind (mounts, cgroups, loops)" "$(left)" "0 0 0"
pc bench readtwice --cgroups 2 --layout shared --duration 0.5 --size 256M --json >rs.json 2>/dev/null
t_is "--layout shared runs" "$(jq -r .total.layout rs.json)" shared
t_is "and has one cgroup row, with every reader" "$(jq '.cgroups | length' rs.json) $(jq '[.readers[].cgroup] | unique | length' rs.json)" "1 1"
t_is "reader rows name their file" "$(jq -c '[.readers[].file] | unique' rs.json)" "[0,1]"

# --limit: on every memory cgroup, read back from the kernel; 64M files in 8M
# cgroups, so reclaim happens inside them (their limit is hit)
pc bench readtwice --cgroups 2 --duration 0.5 --size 64M --limit 8M --json >rl.json 2>rl.err; rc=$?
t_is "bench readtwice --limit exits 0" "$rc" 0
t_is "total.limit_bytes is the limit, and so is each memcg's" \
	"$(jq -c '[.total.limit_bytes, .total.memcg_limit_bytes]' rl.json)" '[8388608,8388608]'
t_is "every cgroup has it, as the kernel read it back" "$(jq -c '[.cgroups[].limit_bytes]' rl.json)" '[8388608,8388608]'
t_ok "reclaim happened inside them (charges hit the limit)" jq -e '.total.limit_hits > 0 and ([.cgroups[].limit_hits > 0] | all)' rl.json
t_is "and nobody was OOM-killed" "$(jq -c '[.total.oom_kills, [.cgroups[].oom_kills]]' rl.json)" '[0,[0,0]]'
t_is "the results row names the limit (for bench compare)" "$(jq '.results[0].limit_bytes' rl.json)" 8388608
t_is "the cgroup version is said" "$(jq '.total.cgroup_version' rl.json)" "$(stat -f -c %T /sys/fs/cgroup | grep -q cgroup2 && echo 2 || echo 1)"
pc bench readtwice --cgroups 2 --duration 0.5 --size 64M --limit 8M >rlh.out 2>/dev/null
t_ok "the table says the limit" grep -q '^  limit 8M on each memcg (cgroup v[12]); [0-9]* charges hit it, 0 OOM kills' rlh.out
t_is "nothing left behind" "$(left)" "0 0 0"
pc bench readtwice --cgroups 3 --layout shared --duration 0.5 --size 8M --limit 8M --json >rls.json 2>rls.err
t_is "shared: the one memcg gets cgroups x the limit" \
	"$(jq -c '[.total.limit_bytes, .total.memcg_limit_bytes, [.cgroups[].limit_bytes]]' rls.json)" '[8388608,25165824,[25165824]]'
t_ok "a limit that holds a whole file is warned about" grep -q "the limit (8M) holds a whole file (8M): nothing is reclaimed" rls.err
pc bench readtwice --cgroups 3 --layout shared --duration 0.3 --size 64M --limit 8M >rlsh.out 2>/dev/null
t_ok "and the table says so" grep -q '^  limit 8M per file: 24M on the one memcg (3 x 8M, cgroup v[12])' rlsh.out
# bad limits are refused before anything is made
for l in 0 abc 12x -5M; do
	pc bench readtwice --limit "$l" >o 2>e; rc=$?
	t_is "--limit '$l' exits 2" "$rc" 2
	t_ok "and says it is invalid" grep -q "invalid limit '$l'" e
done
pc bench readtwice --limit 7M >o 2>e; rc=$?
t_is "a limit below 8M exits 2" "$rc" 2
t_ok "saying what it takes" grep -q "limit '7M' is too small for 2 readers a cgroup: at least 8M" e
pc bench readtwice --limit 12M --readers-per-cgroup 8 >o 2>e
t_ok "2M a reader: 8 readers need 16M" grep -q "limit '12M' is too small for 8 readers a cgroup: at least 16M" e
pc bench readtwice --limit 4M --json >o 2>e
t_ok "with --json, one JSON document" jq -e '.usage.error | test("too small")' o
pc bench swapin --limit 4M >o 2>e; rc=$?
t_is "swapin's --limit is still at least 8M" "$rc:$(grep -c "invalid limit '4M' (at least 8M)" e)" 2:1
t_is "nothing was made for them" "$(left)" "0 0 0"
# an OOM kill (a limit below the floor, for this test only) is found and said,
# and only readers die
PAGECACHE_READTWICE_MIN_LIMIT=4K "$PAGECACHE" bench readtwice --cgroups 2 --duration 0.5 --size 64M \
	--limit 4K --json >ro.json 2>ro.err; rc=$?
t_is "readers killed by the OOM killer: exit 1" "$rc" 1
t_ok "it says so, naming the cgroup" grep -q "the OOM killer killed readers in '.*/pc-readtwice-[0-9]*-[01]': [12] of its 2, under its limit of 4K" ro.err
t_ok "and so does the JSON" jq -e '[.errors[] | select(.error == "the OOM killer killed readers in")] | length >= 1' ro.json
t_is "and it still cleans up" "$(left)" "0 0 0"

# --cgroups 80 (Alex Shi's 80 containers): 64G files make a 5 TiB image, whose
# metadata the tmpfs must hold; 160 readers, each limit set
pc bench readtwice --cgroups 80 --duration 0.2 --limit 8M --json >r80.json 2>r80.err; rc=$?
t_is "--cgroups 80 exits 0" "$rc" 0
t_is "with 80 cgroup rows and 160 readers" "$(jq -c '[(.cgroups | length), (.readers | length)]' r80.json)" '[80,160]'
t_ok "every reader read" jq -e '[.readers[].bytes > 0] | all' r80.json
t_is "every cgroup has its limit" "$(jq -c '[.cgroups[].limit_bytes] | unique' r80.json)" '[8388608]'
t_ok "the start spread is reported" jq -e '.total.start_spread_ms >= 0' r80.json
t_is "nothing left behind" "$(left)" "0 0 0"

"$PAGECACHE" bench readtwice --cgroups 2 --duration 30 --size 256M --limit 24M >/dev/null 2>ri.err &
bp=$!
T_CLEANUP+=("t_kill $bp")
# in the middle of it: its mount, cgroups and loop device are all there, each with its limit
t_wait 60 eval '[ "$(left $bp)" != "0 0 0" ] && ! [[ "$(left $bp)" = *" 0"* || "$(left $bp)" = "0 "* ]]'
lim() { for d in $(find /sys/fs/cgroup -maxdepth 6 -name "pc-readtwice-$bp-*"); do cat "$d/memory.limit_in_bytes" "$d/memory.max" 2>/dev/null; done | sort | uniq -c | awk '{ print $1 "x" $2 }'; }
t_wait 20 eval '[ "$(lim)" = 2x25165824 ]'
t_is "during the run, the kernel has the limit on both cgroups" "$(lim)" 2x25165824
kill -INT $bp; wait $bp; rc=$?
t_is "SIGINT stops it (exit 130)" "$rc" 130
t_is "and it still cleans up" "$(left)" "0 0 0"
"$PAGECACHE" bench readtwice --cgroups 2 --duration 30 --size 256M --limit 16M >/dev/null 2>&1 &
bp=$!
T_CLEANUP+=("t_kill $bp")
t_wait 60 eval '! [[ "$(left $bp)" = *" 0"* || "$(left $bp)" = "0 "* ]] && [ -e /run/pagecache/readtwice-$bp.state ] && [ "$(lim)" = 2x16777216 ]'
kill -9 $bp; wait $bp 2>/dev/null
t_ok "kill -9 leaves mounts behind" test "$(left)" != "0 0 0"
t_is "and its limited cgroups" "$(lim)" 2x16777216
pc bench readtwice --cgroups 1 --duration 0.3 --size 256M --runs 2 --json >rr.json 2>rr.err
t_ok "the next run undoes them and says so" grep -q "undid what a killed run (pid $bp)" rr.err
t_is "nothing is left behind" "$(left)" "0 0 0"
t_is "--runs 2: one results row" "$(jq '.results | length' rr.json)" 1
t_is "with runs 2" "$(jq '.results[0].runs' rr.json)" 2
t_is "and two values per metric" "$(jq '.results[0].metrics.aggregate_mbps.values | length' rr.json)" 2
t_is "reader rows name their run" "$(jq '[.readers[].run] | unique' -c rr.json)" "[1,2]"

# cgroup v2: memory.max, on this host's v2 hierarchy or a private mount of one
if t_v2_memory; then
	t_v2 "$PAGECACHE" bench readtwice --cgroups 2 --duration 0.5 --size 64M --limit 8M --json >r2.json 2>r2.err; rc=$?
	t_is "v2: bench readtwice --limit exits 0" "$rc" 0
	t_is "v2: it ran on v2, each cgroup with its memory.max" "$(jq -c '[.total.cgroup_version, [.cgroups[].limit_bytes]]' r2.json)" '[2,[8388608,8388608]]'
	t_ok "v2: reclaim happened inside them" jq -e '.total.limit_hits > 0' r2.json
	t_is "v2: nothing left behind" "$(t_v2 sh -c "find /sys/fs/cgroup -maxdepth 6 \( -name 'pc-readtwice-*' -o -name 'pagecache-run-*-self' \) | wc -l")" 0
else
	t_skip "bench readtwice --limit on cgroup v2" "$T_V2_WHY"
fi
pc bench readtwice --layout sideways >o 2>e; t_is "a bad layout exits 2" $? 2
pc bench warmup --page-cluster 3 >o 2>e; t_is "another experiment's option exits 2" $? 2
t_ok "and names it" grep -q "not an option of warmup" e
pc bench readtwice --kv --cgroups 1 --duration 0.3 --size 64M >o 2>e
t_is "--kv works with bench (it used to be taken for --readers-per-cgroup)" $? 0
t_ok "and prints key=value" grep -q "aggregate_mbps=" o
t_ok "no limit: limit_bytes=max" grep -q " limit_bytes=max memcg_limit_bytes=max " o
pc bench readtwice --prom --cgroups 1 --duration 0.3 --size 64M --limit 16M >o 2>e
t_is "--prom works with bench" $? 0
t_ok "and prints metrics" grep -q "^pagecache_bench_readtwice_aggregate_read_bytes_per_second " o
t_ok "the limit among them" grep -qx "pagecache_bench_readtwice_limit_bytes 16777216" o
t_ok "and the OOM kills" grep -qx "pagecache_bench_readtwice_oom_kills 0" o

# bench/device-readtwice.sh, the many-core matrix: its shape at the smallest sizes
# (1 cgroup, both layouts, with and without a limit, 1 run of 0.2 s)
OUT=$T_DIR/dm CGROUPS=1 RUNS=1 DUR=0.2 SIZE=16M LIMIT=8M PAGECACHE=$PAGECACHE \
	bash "$REPO/bench/device-readtwice.sh" >dm.out 2>dm.err
t_is "device-readtwice.sh exits 0" $? 0
t_is "matrix.json has every cell, each exited 0" "$(jq -c '[.cells[] | [.cgroups, .layout, .limit, .exit]] | sort' dm/matrix.json)" \
	'[[1,"per-cgroup","8M",0],[1,"per-cgroup","none",0],[1,"shared","8M",0],[1,"shared","none",0]]'
t_is "and their results rows, told apart by limit_bytes" "$(jq -c '[.results[] | [.layout, .limit_bytes]] | sort' dm/matrix.json)" \
	'[["per-cgroup",null],["per-cgroup",8388608],["shared",null],["shared",8388608]]'
t_ok "with the load average of each cell" jq -e '[.cells[].load_average_start | test("^[0-9.]+ [0-9.]+ [0-9.]+$")] | all' dm/matrix.json
t_is "the table has a line per cgroup count and limit" "$(grep -cE '^1 +(none +[0-9]+ \+- *[0-9.]+% +[0-9]+ \+- *[0-9.]+% +[0-9.]+  -|8M +[0-9]+ \+- *[0-9.]+% +[0-9]+ \+- *[0-9.]+% +[0-9.]+  [0-9]+/[0-9]+)$' dm.out)" 2
OUT=$T_DIR/dm0 CGROUPS="1 2" RUNS=1 DUR=0.2 SIZE=16M LIMIT=8M BUDGET=0 PAGECACHE=$PAGECACHE \
	bash "$REPO/bench/device-readtwice.sh" >dm0.out 2>/dev/null
t_is "past its BUDGET, it runs no more cells, and says so" \
	"$(jq '.cells | length' dm0/matrix.json) $(grep -c 'skipped: it would end past the budget of 0 s' dm0.out)" "1 7"
pc bench compare dm/matrix.json dm/matrix.json >dmc.out 2>/dev/null
t_is "bench compare reads matrix.json" $? 0
t_ok "and names the limited rows by their limit" grep -q "^cgroups=1 readers_per_cgroup=2 shared limit=8388608" dmc.out
pc bench readtwice --json --cgroups 0 >o 2>e; t_ok "a usage error with --json is one JSON document" jq -e .usage o
t_done
