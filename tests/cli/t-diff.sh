#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# diff: two snapshots made here (mksnap, with libpagecache's writer) with
# known page runs, so every JSON number is known in advance: files added,
# removed, changed and (with -v) the same, pages gained and lost, totals.
# Then the errors: a missing file, a file that is no snapshot, a truncated
# one, one corrupt past its header (nothing of OLD called removed), two
# snapshots of different roots (refused), usage; each with its exit code,
# and stdout still JSON that names the file.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
MKSNAP=${MKSNAP:-$(dirname "$PAGECACHE")/tests/mksnap}
[ -x "$MKSNAP" ] || { echo "Bail out! no mksnap at '$MKSNAP' (make builds it)"; exit 1; }
mk() { "$MKSNAP" "$@" || echo "# mksnap $* failed" >&2; }

# the paths are not there: mksnap gives each 1 MiB, the runs are ours
mk -r /pc-diff-root old.snap a=0+4,10+2 b=0+8 c=0+3
mk -r /pc-diff-root new.snap a=0+6,20+1 b=0+8 d=5+5
# a: old 0-3,10-11 (6), new 0-5,20 (7): both 0-3 (4), gained 4,5,20, lost 10,11

pc diff --json old.snap new.snap >d.json 2>d.err; rc=$?
t_is "diff exits 0" $rc 0
t_is "nothing on stderr" "$(cat d.err)" ""
t_is "files: changed, removed, added, sorted by path, page counts exact" \
	"$(jq -c '.files' d.json)" \
	'[{"path":"a","status":"changed","old_pages":6,"new_pages":7,"gained":3,"lost":2},{"path":"c","status":"removed","old_pages":3,"new_pages":0,"gained":0,"lost":3},{"path":"d","status":"added","old_pages":0,"new_pages":5,"gained":5,"lost":0}]'
t_is "totals" "$(jq -c '.total' d.json)" '{"added":1,"removed":1,"changed":1,"gained":8,"lost":5}'
t_is "no errors" "$(jq -c '.errors' d.json)" '[]'

# two snapshots of nothing: nothing changed (sorting no entries is no
# error; a SANITIZE=1 build stopped on qsort(NULL, 0) here)
mk -r /pc-diff-root empty.snap
pc diff --json empty.snap empty.snap >e.json 2>e.err; rc=$?
t_is "diff of two empty snapshots exits 0" "$rc.$(cat e.err)" "0."
t_is "  and changed nothing" "$(jq -c '.total' e.json)" '{"added":0,"removed":0,"changed":0,"gained":0,"lost":0}'
# an empty OLD: every file of NEW added (its empty table once went to
# bsearch as NULL, where the sanitized build stopped before any output)
pc diff --json empty.snap new.snap >e2.json 2>e2.err; rc=$?
t_is "diff of an empty OLD exits 0, nothing on stderr" "$rc.$(cat e2.err)" "0."
t_is "  and adds every file of NEW" "$(jq -c '.total' e2.json)" '{"added":3,"removed":0,"changed":0,"gained":20,"lost":0}'

pc diff --json -v old.snap new.snap >v.json
t_is "-v lists the unchanged file too" "$(jq -c '[.files[] | select(.status == "same")]' v.json)" \
	'[{"path":"b","status":"same","old_pages":8,"new_pages":8,"gained":0,"lost":0}]'
t_is "-v changes no total" "$(jq -c '.total' v.json)" "$(jq -c '.total' d.json)"

pc diff --json new.snap old.snap >r.json
t_is "the other way round: gained and lost swap" "$(jq -c '.total' r.json)" \
	'{"added":1,"removed":1,"changed":1,"gained":5,"lost":8}'
t_is "... and added and removed" "$(jq -r '[.files[] | "\(.path):\(.status)"] | join(" ")' r.json)" \
	"a:changed c:added d:removed"

pc diff --json old.snap old.snap >s.json; rc=$?
t_is "a snapshot against itself: exit 0, nothing changed" \
	"$rc $(jq -c '[.files, .total]' s.json)" \
	'0 [[],{"added":0,"removed":0,"changed":0,"gained":0,"lost":0}]'

pc diff --kv old.snap new.snap >k.txt; rc=$?
t_is "--kv exits 0" $rc 0
t_is "--kv: the totals line" "$(tail -1 k.txt)" "added=1 removed=1 changed=1 gained=8 lost=5"

# errors: exit 1, a message that names the file, JSON still on stdout
err_case() {	# err_case NAME WANT-REASON-PATTERN OLD NEW
	local name=$1 pat=$2 rc
	pc diff --json "$3" "$4" >e.json 2>e.err; rc=$?
	t_is "$name: exit 1" $rc 1
	t_ok "$name: stdout is JSON" jq -e . e.json
	t_is "$name: the error names the file" "$(jq -r '.errors[0].path' e.json 2>/dev/null)" "$5"
	t_ok "$name: says why ($pat)" grep -q -- "$pat" e.err
}
err_case "missing OLD" "No such file or directory" nope.snap new.snap nope.snap
err_case "missing NEW" "No such file or directory" old.snap nope.snap nope.snap
t_is "missing NEW: nothing compared, no file listed" "$(jq -c '.files' e.json)" '[]'
echo "not a snapshot" >text.txt
err_case "a text file as OLD" "not a pagecache snapshot" text.txt new.snap text.txt
err_case "a text file as NEW" "not a pagecache snapshot" new.snap text.txt text.txt
head -c 60 new.snap >trunc.snap
err_case "a truncated snapshot" "truncated" old.snap trunc.snap trunc.snap
mk -R -r /pc-diff-root dup.snap a=0+6 a=0+6
err_case "a path listed twice" "listed twice" old.snap dup.snap dup.snap
t_is "a corrupt snapshot says 'corrupt snapshot'" "$(jq -r '.errors[0].error' e.json)" "corrupt snapshot"
err_case "a corrupt OLD" "listed twice" dup.snap old.snap dup.snap
t_is "a NEW corrupt past its header: no file called removed" \
	"$(pc diff --json old.snap dup.snap 2>/dev/null | jq -c '[.files[] | select(.status == "removed") | .path]')" '[]'
mk -r /pc-diff-other other.snap a=0+4,10+2 b=0+8 c=0+3
pc diff --json old.snap other.snap >o.json 2>o.err; rc=$?
t_is "snapshots of different roots: refused (exit 1, one error)" \
	"$rc $(jq -c '.errors | length' o.json)" "1 1"
t_ok "... saying so" grep -q "different roots" o.err

pc diff old.snap >u.out 2>u.err; rc=$?
t_is "one snapshot: usage, exit 2" $rc 2
t_ok "... and says what it wants" grep -q "want two snapshots" u.err
pc diff --no-such-option old.snap new.snap >/dev/null 2>&1; rc=$?
t_is "an unknown option: exit 2" $rc 2
pc diff --help >h.out; rc=$?
t_is "--help exits 0" $rc 0
t_ok "--help states the exit codes" grep -q "Exit status: 0 compared, 1" h.out
t_done
