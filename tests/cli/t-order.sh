#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# restore --order access and --max-time, show and diff of what snapshot
# format version 3 adds, on snapshots made here by mksnap whose used times
# are known: B's used pages at 100 ms, A's at 500 ms, so access order reads
# B first although A comes first on disk and in the snapshot. Which file is
# read first is shown without timings: a --max-mem of exactly B's used pages
# lets the first piece in and stops the second, so the file that got pages
# is the one read first. Then --max-time 0 (nothing handed out, said so,
# exit 0), old snapshots (version 2 and 3 as their writers made them,
# version 1: restore; --order access of one without times says so and uses
# disk order), a hostile version 3 (refused, naming the section), and a
# block device record never taken for a path. Everything written now is
# version 4 (docs/snapshot-format.md).
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
MKSNAP=${MKSNAP:-$(dirname "$PAGECACHE")/tests/mksnap}
[ -x "$MKSNAP" ] || { echo "Bail out! no mksnap at '$MKSNAP' (make builds it)"; exit 1; }
mk() { "$MKSNAP" "$@" || echo "# mksnap $* failed" >&2; }
PS=$(getconf PAGESIZE)
hver() { od -An -tu4 -j8 -N4 "$1" | tr -d ' '; }	# the header's version

mkdir root
mkfile root/A 256
mkfile root/B 256
pages=$((256 * 1024 / PS))
R=$T_DIR/root
# A first (name, and disk: written first); B's used range is the earliest
mk -r "$R" -M -L 3 -T 1000 v4.snap "A=0+$pages@0+8:500" "B=0+$pages@8+8:100" 'dev:loop0=0+4@0+1:50'
mk -V 3 -r "$R" -M -L 3 -T 1000 v3.snap "A=0+$pages@0+8:500" "B=0+$pages@8+8:100" 'dev:loop0=0+4@0+1:50'
mk -V 2 -r "$R" v2.snap A B
t_is "the writer: a snapshot with times is version 4" "$(hver v4.snap)" 4
t_is "mksnap -V 3 and -V 2 write the old versions" "$(hver v3.snap) $(hver v2.snap)" "3 2"
pc snapshot -o real.snap "$R" >/dev/null 2>&1
t_is "pagecache snapshot writes version 4" "$(hver real.snap)" 4
t_is "show reads version 3 and version 4 alike" "$(pc show --json v3.snap | jq -c .)" \
	"$(pc show --json v4.snap | jq -c .)"

# ---- the plan: --dry-run lists the files in the order of their first read ----
pc restore --root "$R" --order access --dry-run --json v3.snap >dry.json 2>dry.err; rc=$?
t_is "access dry run: exit 0" "$rc" 0
t_is "access dry run: B first (used at 100 ms), then A (500 ms)" \
	"$(jq -c '[.files[] | [(.path | sub(".*/"; "")), .first_use_ms]]' dry.json)" '[["B",100],["A",500]]'
t_is "the total says the order" "$(jq -r .total.order dry.json)" access
pc restore --root "$R" --order file --dry-run --json v3.snap >dryf.json 2>/dev/null
t_is "--order file: A first" "$(jq -c '[.files[].path | sub(".*/"; "")]' dryf.json)" '["A","B"]'
t_is "a block device record is no path: nothing missing, nothing skipped" \
	"$(jq -c '[.total.missing, .total.changed, [.skipped[].path]]' dry.json)" '[0,0,[]]'

# ---- what is read first: a budget of exactly B's used pages ----
drop root/A root/B
pc restore --root "$R" --order access --reserve 0 --max-mem $((8 * PS)) --json v3.snap \
	>bud.json 2>bud.err; rc=$?
t_is "budget of 8 pages: stopped by it (exit 1)" "$rc-$(jq .total.budget_stopped bud.json)" 1-true
t_is "  A, after B in access order, got nothing" "$(cached_pages root/A)" 0
t_is "  B's 8 used pages came in" "$(resident_pages root/B 8)" 8
t_is "  the rest of B was not handed out: 2 files not done" \
	"$(jq -c '[.total.files_not_done, .total.pages_not_done]' bud.json)" "[2,$((2 * pages - 8))]"
drop root/A root/B
pc restore --root "$R" --order file --reserve 0 --max-mem $((8 * PS)) --json v3.snap >/dev/null 2>&1
t_is "the same budget in file order: B got nothing (A was first)" "$(cached_pages root/B)" 0

# ---- a budget short of the plan: the most valuable pages first, across files ----
# A's pages 40-47 were active, its 0-7 used at 500 ms; B's 8-15 used at 100 ms
mk -r "$R" -M -T 1000 pri.snap "A=0+$pages/40+8@0+8:500" "B=0+$pages@8+8:100"
drop root/A root/B
pc restore --root "$R" --reserve 0 --max-mem $((8 * PS)) --json pri.snap >pri8.json 2>pri8.err; rc=$?
t_is "8 pages in disk order: the active ones, though B's were used first" \
	"$rc $(cached_pages root/A) $(cached_pages root/B)" "1 8 0"
t_is "  the very pages 40-47 of A" \
	"$(pc stat --range $((40 * PS))-$((48 * PS)) --json root/A | jq -c '.total | [.pages, .cached]')" "[8,8]"
t_is "  JSON: prioritized, A in part" \
	"$(jq -c '.total | [.prioritized, .files_partly, .files_not_done, .budget_stopped]' pri8.json)" \
	"[true,1,2,true]"
t_ok "  stderr names A with how much came back" \
	grep -q "'$R/A': 8 of $pages pages" pri8.err
drop root/A root/B
pc restore --root "$R" --reserve 0 --max-mem $((16 * PS)) --json -v pri.snap >pri16.json 2>/dev/null
t_is "16 pages: then B's used pages (100 ms) before A's (500 ms)" \
	"$(resident_pages root/A 8) $(resident_pages root/B 8)" "8 8"
t_is "  -v: both partly" "$(jq -c '[.files[] | .status] | unique' pri16.json)" '["partly"]'
t_is "  -v: each row's cut: the pages left out" \
	"$(jq -c '[.files[] | .pages - .cut] | unique' pri16.json)" '[8]'
drop root/A root/B
pc restore --root "$R" --order file --reserve 0 --max-mem $((8 * PS)) pri.snap >/dev/null 2>&1
t_is "--order file: the active pages first too" "$(cached_pages root/A) $(cached_pages root/B)" "8 0"
drop root/A root/B
pc restore --root "$R" --reserve 0 --max-mem $((4 * pages * PS)) --json pri.snap >prin.json 2>/dev/null; rc=$?
t_is "a budget that holds it all: not prioritized, exit 0" \
	"$rc $(jq -c '.total | [.prioritized, .files_partly, .files]' prin.json)" "0 [false,0,2]"
# all cached but 8 pages of B: 16 pages hold what it lacks, though not the plan's
cat root/A root/B >/dev/null
pc evict --range 0-$((8 * PS)) root/B >/dev/null
pc restore --root "$R" --reserve 0 --max-mem $((16 * PS)) --json pri.snap >pric.json 2>/dev/null; rc=$?
t_is "a budget that holds what is missing: not prioritized, exit 0" \
	"$rc $(jq -c '.total | [.prioritized, .read, .budget_stopped]' pric.json)" "0 [false,8,false]"

# ---- a whole access-order restore ----
drop root/A root/B
pc restore --root "$R" --order access -v v3.snap >acc.out 2>acc.err; rc=$?
t_is "access restore: exit 0" "$rc" 0
t_is "  -v lists B first, with its first use" "$(awk '$5 ~ /\/B$/ {print NR":"$6} $5 ~ /\/A$/ {print NR":"$6}' acc.out | tr '\n' ' ')" "2:100 3:500 "
t_is "  every page back" "$(resident_pages root/A "$pages") $(resident_pages root/B "$pages")" "$pages $pages"
t_is "  the device record was not taken for a file beneath the root" "$(grep -c "skipping '.*loop0'" acc.err)" 0

# ---- --max-time ----
drop root/A root/B
pc restore --root "$R" --order access --max-time 0 v3.snap >t0.out 2>t0.err; rc=$?
t_is "--max-time 0: exit 0 (the limit is the user's)" "$rc" 0
t_ok "  a line says it stopped and how far" grep -q "Stopped at --max-time 0 s: 0 of $((2 * pages)) pages handed out.*2 files ($((2 * pages)) pages) not done" t0.out
t_is "  nothing was read" "$(cached_pages root/A) $(cached_pages root/B)" "0 0"
pc restore --root "$R" --order access --max-time 0 --json -v v3.snap >t0.json 2>/dev/null
t_is "  JSON: time_stopped, files and pages not done, read 0" \
	"$(jq -c '.total | [.time_stopped, .max_time, .files_not_done, .pages_not_done, .read, .files]' t0.json)" \
	"[true,0,2,$((2 * pages)),0,0]"
t_is "  -v: each file not reached, B first" \
	"$(jq -c '[.files[] | [(.path | sub(".*/"; "")), .status]]' t0.json)" '[["B","not reached"],["A","not reached"]]'
pc restore --root "$R" --max-time 0 --kv v3.snap >t0.kv 2>/dev/null
t_ok "  kv too" grep -q "time_stopped=yes files_not_done=2" t0.kv
pc restore --root "$R" --order access --max-time 600 --json v3.snap >t600.json 2>/dev/null; rc=$?
t_is "--max-time 600: all done, not stopped, exit 0" \
	"$rc $(jq -c '.total | [.time_stopped, .files_not_done, .pages_not_done, .files]' t600.json)" "0 [false,0,0,2]"
for bad in -1 abc 1e99 ''; do
	pc restore --root "$R" --max-time "$bad" v3.snap >/dev/null 2>e; rc=$?
	t_is "--max-time '$bad': usage error" "$rc-$(grep -c 'max-time' e)" 2-1
done

# ---- old snapshots ----
drop root/A root/B
pc restore --root "$R" --json v2.snap >v2.json 2>v2.err; rc=$?
t_is "a version 2 snapshot restores: exit 0, 2 files" "$rc $(jq .total.files v2.json)" "0 2"
pc restore --root "$R" --order access --dry-run --json v2.snap >v2a.json 2>v2a.err; rc=$?
t_is "--order access of a snapshot without times: exit 0, disk order" "$rc $(jq -r .total.order v2a.json)" "0 disk"
t_is "  said once on stderr" "$(grep -c 'has no access times.*disk order' v2a.err)" 1
mk -R -r "$R" v1.snap A B
t_is "mksnap -R writes version 1" "$(hver v1.snap)" 1
pc restore --root "$R" --order access --json v1.snap >v1.json 2>/dev/null; rc=$?
t_is "a version 1 snapshot restores" "$rc $(jq .total.files v1.json)" "0 2"

# ---- hostile version 3 (by hand: what the writer refuses) ----
mk -R -r "$R" bad1.snap "A=0+4@2+8:5" B
pc restore --root "$R" bad1.snap >o 2>e; rc=$?
t_is "used pages outside the cached runs: exit 1" "$rc" 1
t_ok "  the message names the section and the file" grep -q "corrupt snapshot.*section 2: used pages of 'A' that are not cached" e
t_is "  nothing was restored" "$(jq .total.files <(pc restore --root "$R" --json bad1.snap 2>/dev/null))" 0
mk -R -r "$R" bad2.snap "A=0+8@4+2:5,2+1:9" B
pc restore --root "$R" bad2.snap >o 2>e; rc=$?
t_is "used ranges out of order: exit 1" "$rc" 1
t_ok "  named" grep -q "section 2: used range of 'A' outside the file or empty" e
mk -R -r "$R" bad3.snap A 'dev:a/b=0+1'
pc restore --root "$R" bad3.snap >o 2>e; rc=$?
t_is "a device name that is a path: exit 1" "$rc" 1
t_ok "  named" grep -q "section 2: block device name 'a/b' is not one safe component" e
pc show bad1.snap >o 2>e; rc=$?
t_is "show refuses it too" "$rc-$(grep -c 'section 2: used pages' e)" 1-1

# ---- show and diff ----
pc show --json v3.snap >show.json
t_is "show: recorded, lost events, duration, used pages" \
	"$(jq -c '.total | [.recorded, .lost_events, .duration_ms, .used_pages, .files]' show.json)" '[true,3,1000,16,2]'
t_is "show: per file the first use" "$(jq -c '[.files[] | [.path, .used, .first_use_ms]]' show.json)" \
	'[["A",8,500],["B",8,100]]'
t_is "show: the device as metadata, not a file" \
	"$(jq -c '[.metadata[] | [.device, .devno, .pages]], .total.metadata_devices' show.json | tr '\n' ' ')" \
	'[["loop0","7:0",4]] 1 '
pc show -v v3.snap >show.out
t_ok "show -v: the FIRST USE MS column" grep -qE "^ +$pages +1 +0 +256K B +8 +100$" show.out
t_ok "show: a line says it was recorded" grep -q "Recorded for 1.000 s: 16 pages used.*; 3 events lost" show.out
t_ok "show: a metadata table" grep -qE "^ +4 +1 +1G loop0$" show.out
pc show --json v2.snap >show2.json
t_is "show of a plain snapshot: not recorded, no metadata" \
	"$(jq -c '[.total.recorded, .total.metadata_devices, .files[0].first_use_ms]' show2.json)" '[false,0,null]'
pc diff --json v2.snap v3.snap >diff.json
t_is "diff: the device added as metadata, no file changed" \
	"$(jq -c '[.total.added, .total.changed, .total.metadata_added, [.metadata[] | .device + ":" + .status]]' diff.json)" \
	'[0,0,1,["loop0:added"]]'
t_is "diff: which side was recorded" "$(jq -c '[.total.old.recorded, .total.new.recorded]' diff.json)" '[false,true]'
t_is "diff -v: first use per file" \
	"$(pc diff -v --json v2.snap v3.snap | jq -c '[.files[] | [.path, .old_first_use_ms, .new_first_use_ms]]')" \
	'[["A",null,500],["B",null,100]]'
t_is "diff of plain snapshots keeps its shape" "$(pc diff --json v2.snap v2.snap | jq -c .total)" \
	'{"added":0,"removed":0,"changed":0,"gained":0,"lost":0}'

t_done
