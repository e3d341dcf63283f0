#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# restore of several snapshots at once (a recording of a service's start
# and a snapshot of it running): snapshots of disjoint files restore both;
# records of the same file unite their runs, active runs and used times
# (each page at its earliest time); of a file that changed between them
# the newer record (later creation time, then later argument) is kept
# whole; block device records are one a device; the roots must agree
# unless --root is given; one missing or corrupt snapshot among several
# fails, naming it, and nothing is read; the budget's plan works on the
# merged set; JSON says what each snapshot brought.
. "$(dirname "$0")/lib.sh"
MKSNAP=${MKSNAP:-$(dirname "$PAGECACHE")/tests/mksnap}
[ -x "$MKSNAP" ] || { echo "Bail out! no mksnap at '$MKSNAP' (make builds it)"; exit 1; }
cd "$T_DIR"
R=$T_DIR
PS=$(getconf PAGESIZE)
N=64				# pages per file
mk() { "$MKSNAP" -I "$@"; }

mkdir db
for f in a b c d e f; do mkfile db/$f $((N * PS / 1024)); done

# ---- disjoint files: both restored ----
mk -r "$R" -c 1700000000 s1.snap db/a
mk -r "$R" -c 1700000100 s2.snap db/b
drop db/*
pc restore --root "$R" --json s1.snap s2.snap >two.json 2>two.err; rc=$?
t_is "two snapshots of disjoint files: exit 0, both files restored" \
	"$rc $(jq .total.files two.json) $(resident_pages db/a $N) $(resident_pages db/b $N)" \
	"0 2 $N $N"
t_is "  JSON: snapshot is the first, snapshots lists each, in order" \
	"$(jq -c '.total | [.snapshot, [.snapshots[].path]]' two.json)" '["s1.snap",["s1.snap","s2.snap"]]'
t_is "  each with its counts" \
	"$(jq -c '[.total.snapshots[] | [.root == "'"$R"'", .created, .recorded, .files, .pages, .metadata_devices, .shared, .superseded]]' two.json)" \
	"[[true,1700000000,false,1,$N,0,0,0],[true,1700000100,false,1,$N,0,0,0]]"
pc restore --root "$R" s1.snap s2.snap >two.out 2>/dev/null
t_ok "  people are told how many were merged" grep -qx "Merged 2 snapshots:" two.out
t_ok "  and what each brought" grep -q "^  's2.snap' (snapshot): 1 files, $N pages$" two.out
pc restore --root "$R" --kv s1.snap s2.snap >two.kv 2>/dev/null
t_ok "  key=value: snapshots.count" grep -q "snapshots.count=2" two.kv
pc restore --root "$R" --json s1.snap >one.json 2>/dev/null
t_is "one snapshot: a list of one, nothing merged" \
	"$(jq -c '[.total.snapshot, (.total.snapshots | length), .total.snapshots[0].shared]' one.json)" \
	'["s1.snap",1,0]'
pc restore --root "$R" s1.snap >one.out 2>/dev/null
t_is "  and no merge lines for people" "$(grep -c Merged one.out)" 0

# ---- the same file in both: runs and active runs united ----
mk -r "$R" -c 1700000000 o1.snap "db/c=0+16,32+8/0+4"
mk -r "$R" -c 1700000100 o2.snap "db/c=8+16,60+4/60+2"
drop db/*
pc restore --root "$R" --dry-run --json o1.snap o2.snap >ov.json 2>/dev/null
t_is "overlapping runs united: 0-23, 32-39, 60-63" \
	"$(jq -c '[.total.pages, .files[0].runs]' ov.json)" "[36,3]"
t_is "  counted as one file the second shared" \
	"$(jq -c '[.total.files, [.total.snapshots[] | .shared, .superseded]]' ov.json)" '[1,[0,0,1,0]]'
pc restore --root "$R" --json o1.snap o2.snap >ovr.json 2>/dev/null; rc=$?
t_is "  restored: exit 0, those pages back" \
	"$rc $(jq .total.resident ovr.json)" "0 36"
t_is "  and not the pages between" \
	"$(pc stat --range $((24 * PS))-$((32 * PS)) --json db/c | jq .total.cached)" 0

# ---- a file changed between the two: the newer record, whole ----
mk -r "$R" -c 1700000000 old.snap "db/d=0+8"
touch -d '2001-01-01 00:00:01' db/d	# another mtime: another file to the merge
mk -r "$R" -c 1700000100 new.snap "db/d=40+16"
mk -r "$R" -c 1700000000 same-second.snap "db/d=40+16"
pc restore --root "$R" --dry-run --json old.snap new.snap >ch1.json 2>/dev/null
pc restore --root "$R" --dry-run --json new.snap old.snap >ch2.json 2>/dev/null
t_is "a changed file: the newer record only (16 pages), whichever comes first" \
	"$(jq .total.pages ch1.json) $(jq .total.pages ch2.json)" "16 16"
t_is "  the older one's record superseded" \
	"$(jq -c '[.total.snapshots[] | .superseded]' ch1.json) $(jq -c '[.total.snapshots[] | .superseded]' ch2.json)" \
	"[1,0] [0,1]"
pc restore --root "$R" --dry-run --json same-second.snap old.snap >ch3.json 2>/dev/null
t_is "  made in the same second: the later argument's" "$(jq .total.pages ch3.json)" 8
drop db/d
pc restore --root "$R" --json old.snap new.snap >chr.json 2>/dev/null; rc=$?
t_is "  restored: the newer record's pages, none of the older's" \
	"$rc $(pc stat --range $((40 * PS))-$((56 * PS)) --json db/d | jq .total.cached) $(pc stat --range 0-$((8 * PS)) --json db/d | jq .total.cached)" \
	"0 16 0"

# ---- used times: each page at its earliest; a snapshot without times keeps them ----
mk -r "$R" -M -c 1700000000 r1.snap "db/e=0+$N@0+4:100" "db/f=0+$N@0+4:50"
mk -r "$R" -M -c 1700000100 r2.snap "db/e=0+$N@0+4:10"
mk -r "$R" -c 1700000200 plain.snap "db/e=0+$N" "db/f=0+$N"
pc restore --root "$R" --order access --dry-run --json r1.snap r2.snap >acc.json 2>/dev/null
t_is "two recordings: e first (10 ms, the earlier of 100 and 10), then f (50 ms)" \
	"$(jq -c '[.files[] | [(.path | sub(".*/"; "")), .first_use_ms]]' acc.json)" '[["e",10],["f",50]]'
pc restore --root "$R" --order access --dry-run --json plain.snap r1.snap >accp.json 2>acc.err
t_is "a snapshot and a recording: the recording's times stay (f at 50 ms first)" \
	"$(jq -c '[.files[] | [(.path | sub(".*/"; "")), .first_use_ms]]' accp.json)" '[["f",50],["e",100]]'
t_is "  no warning that there are no times" "$(grep -c 'no access times' acc.err)" 0
t_is "  recorded says which had them" "$(jq -c '[.total.snapshots[].recorded]' accp.json)" '[false,true]'
pc restore --root "$R" --order access --dry-run s1.snap s2.snap >/dev/null 2>noacc.err
t_ok "  none with times: said once, of them all" \
	grep -qx "pagecache: none of the 2 snapshots has access times (none was made by pagecache record): disk order" noacc.err

# ---- the budget's plan on the merged set: the active pages first ----
mk -r "$R" -c 1700000000 p1.snap "db/a=0+$N"
mk -r "$R" -c 1700000100 p2.snap "db/b=0+$N/48+8"
drop db/a db/b
pc restore --root "$R" --reserve 0 --max-mem $((8 * PS)) --json p1.snap p2.snap >pri.json 2>/dev/null; rc=$?
t_is "a budget of 8 pages: prioritized, the active pages of the second snapshot's file" \
	"$rc $(jq .total.prioritized pri.json) $(cached_pages db/a) $(pc stat --range $((48 * PS))-$((56 * PS)) --json db/b | jq .total.cached)" \
	"1 true 0 8"

# ---- block device records: one a device ----
mk -r "$R" -c 1700000000 m1.snap db/a "dev:loop7=0+4"
mk -r "$R" -c 1700000100 m2.snap db/b "dev:loop7=2+4"
pc restore --root "$R" --dry-run --json m1.snap m2.snap >meta.json 2>/dev/null
t_is "two records of one device: one row, its pages united" \
	"$(jq -c '[(.total.metadata | length), [.total.snapshots[].metadata_devices]]' meta.json)" '[1,[1,1]]'

# ---- the roots must agree ----
mk -r "$R/db" -c 1700000000 sub.snap a
pc restore --json s1.snap sub.snap >root.json 2>root.err; rc=$?
t_is "taken beneath two roots, no --root: exit 1, nothing read" \
	"$rc $(jq .total.read root.json)" "1 0"
t_ok "  the error names the snapshot and both roots" \
	grep -q "cannot restore 'sub.snap': taken beneath '$R/db', and 's1.snap' beneath '$R': snapshots restored together must share a root" root.err
drop db/a
pc restore --root "$R/db" --json sub.snap sub.snap >rootok.json 2>/dev/null; rc=$?
t_is "  --root says where: restored beneath it (the same snapshot twice: one)" \
	"$rc $(resident_pages db/a $N) $(jq -c '[.total.snapshots[].shared]' rootok.json)" "0 $N [0,1]"
pc restore --root "$R/db" --json s1.snap sub.snap >root2.json 2>/dev/null
t_is "  two roots and --root: not refused" "$(grep -c 'share a root' root2.json)" 0

# ---- one missing or corrupt among several: nothing restored ----
head -c $(($(stat -c %s s2.snap) - 8)) s2.snap >bad.snap
drop db/*
pc restore --root "$R" --json s1.snap missing.snap >miss.json 2>miss.err; rc=$?
t_is "a missing snapshot: exit 1, nothing read, not even the first's files" \
	"$rc $(jq .total.read miss.json) $(cached_pages db/a)" "1 0 0"
t_is "  the error names it" "$(jq -c '[.errors[] | .path]' miss.json)" '["missing.snap"]'
pc restore --root "$R" --json s1.snap bad.snap s2.snap >bad.json 2>bad.err; rc=$?
t_is "a corrupt one among three: exit 1, nothing read" \
	"$rc $(jq .total.read bad.json) $(cached_pages db/a) $(cached_pages db/b)" "1 0 0 0"
t_ok "  named, with what is wrong" grep -q "corrupt snapshot 'bad.snap'\|cannot read snapshot 'bad.snap'" bad.err
t_is "  JSON: the snapshots listed by path only" \
	"$(jq -c '[.total.snapshots[] | keys]' bad.json)" '[["path"],["path"],["path"]]'

# ---- usage ----
pc restore >u.out 2>u.err; rc=$?
t_is "no SNAPSHOT is a usage error" "$rc $(grep -c 'want a SNAPSHOT' u.err)" "2 1"
t_done
