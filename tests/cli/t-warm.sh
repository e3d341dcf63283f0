#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache warm: exit 0 means every page resident (checked with fincore),
# whatever the kernel dropped; the budget stops it and says so.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

mkdir -p tree/a tree/b
for i in $(seq 1 40); do mkfile tree/a/f$i $((i * 3)); done
for i in $(seq 1 10); do mkfile tree/b/g$i 200; done
mkfile big 32768
all_cached() {	# every file under $1 fully resident, per fincore
	local f total=0 cached=0 p
	while IFS= read -r -d '' f; do
		p=$(resident_pages "$f")
		cached=$((cached + p))
		total=$((total + ($(stat -c %s "$f") + PS - 1) / PS))
	done < <(find "$1" -type f -print0)
	# without cachestat, pages the proactive reclaimer took since cannot be
	# told apart (no evicted count): 90% then, which no warm that fails meets
	if [ -n "$HAVE_CS" ]; then [ "$cached" = "$total" ]; else [ $((cached * 10)) -ge $((total * 9)) ]; fi
}
cold() { drop $(find "$@" -type f); }
HAVE_CS=; t_have_cachestat && HAVE_CS=1

cold tree
pc warm tree --json >w.json; rc=$?
t_is "warm of a tree exits 0" "$rc" 0
t_ok "every page is resident afterwards (fincore)" all_cached tree
t_is "JSON: resident == pages" "$(jq '.total.resident == .total.pages' w.json)" true
t_is "JSON: 50 files" "$(jq .total.files w.json)" 50
t_ok "JSON: read counts what was cold" test "$(jq .total.read w.json)" -gt 0

if [ -n "$HAVE_CS" ]; then
	# reclaimed since (see resident_pages); a page the reclaimer takes
	# between this count and the warm is read too, so up to three tries: a
	# warm that rereads what is cached fails all three
	for try in 1 2 3; do
		gone=$(pc stat --json tree | jq .total.evicted)
		pc warm tree --json >w2.json
		read2=$(jq .total.read w2.json)
		[ "$read2" -le "$gone" ] && break
	done
	t_ok "a second warm reads only what was reclaimed since (read $read2, reclaimed $gone; try $try)" \
		test "$read2" -le "$gone"
else
	t_skip "a second warm reads only what was reclaimed since" "no cachestat (what was reclaimed since is unknown)"
fi

# warmed_big FAULT [ARG...]: cold big, warm it (PAGECACHE_FAULT=FAULT, warm's
# ARGs) and count what the kernel holds, up to three times (t_tries: the
# machine's reclaimer can take pages between the warm and the count). The
# last warm's exit status in warm_rc, its JSON in wb.json, the pages in
# warm_got, the try in warm_try.
BIG_PAGES=$((32768 * 1024 / PS))
warm_big_once() {
	cold big
	PAGECACHE_FAULT=$1 "$PAGECACHE" warm --json "${@:2}" big >wb.json 2>wb.err; warm_rc=$?
	warm_got=$(resident_pages big $BIG_PAGES)
	[ "$warm_rc" = 0 ] && [ "$warm_got" = $BIG_PAGES ]
}
warmed_big() {
	t_tries 3 warm_big_once "$@"
	warm_try=$T_TRY
}

for eng in threads uring; do
	cold big
	pc warm --engine $eng --json big >e.json 2>e.err; rc=$?
	# io_uring may be forbidden (kernel.io_uring_disabled, a seccomp
	# filter): that refusal alone is a skip; any other error fails
	if [ $eng = uring ] && [ $rc = 1 ] &&
	   grep -qE "cannot start the warming engine 'io_uring': (Function not implemented|Operation not permitted)" e.err; then
		t_skip "engine $eng" "io_uring is refused here: $(head -1 e.err)"
		continue
	fi
	t_is "engine $eng exits 0" "$rc" 0
	warmed_big "${PAGECACHE_FAULT:-}" --engine $eng
	t_is "engine $eng: all of big resident (try $warm_try)" "$warm_got" $BIG_PAGES
done

# io_uring forbidden (seccomp in containers): falls back to readahead
warmed_big uring:ENOSYS
t_is "without io_uring: exit 0" "$warm_rc" 0
t_is "without io_uring the readahead engine is used" "$(jq -r .total.engine wb.json)" readahead
t_is "and warms everything (try $warm_try)" "$warm_got" $BIG_PAGES

# The kernel's silent per-call cap at its worst: one page per readahead call
warmed_big readahead:short --engine threads
t_is "short readahead: still exit 0" "$warm_rc" 0
t_is "short readahead: still every page (try $warm_try)" "$warm_got" $BIG_PAGES

# byte range
cold big
pc warm --range 1M-2M big >/dev/null
t_ok "--range warms that range" test "$(cached_pages big)" -ge $((1024 * 1024 / PS))
t_ok "and not the whole file" test "$(cached_pages big)" -lt $((32768 * 1024 / PS))

# the budget: stop before it, say how far it got, exit 1
cold big tree
pc warm --max-mem 4M big >o 2>e; rc=$?
t_is "--max-mem below the need exits 1" "$rc" 1
t_ok "and says why" grep -q "stopped early: the --max-mem limit was reached" e
t_ok "and did not read past it" test "$(cached_pages big)" -le 2048
# a file bigger than the budget is cut where the budget ends, not refused whole
t_ok "and names the file it warmed in part" \
	grep -q "'big' warmed in part ($((4096 * 1024 / PS)) of $((32768 * 1024 / PS)) pages)" e
t_ok "the first 4 MiB of it are in memory" test "$(cached_pages big)" -ge $((4096 * 1024 / PS))
cold big
pc warm --max-mem 4M -v --json big >p.json 2>e; rc=$?
t_is "--json: exit 1, the file partly warmed" \
	"$rc $(jq -c '[.total.partly, .total.cut, .total.read, (.files[0] | .status, .read)]' p.json)" \
	"1 [1,$((32768 * 1024 / PS - 4096 * 1024 / PS)),$((4096 * 1024 / PS)),\"partly\",$((4096 * 1024 / PS))]"
pc warm --reserve 100000G --json tree >r.json 2>e; rc=$?
t_is "a reserve above MemAvailable stops at once" "$rc" 1
t_is "JSON says the budget stopped it" "$(jq .total.budget_stopped r.json)" true
t_ok "with the reason" grep -q "MemAvailable" e

# errors are per file, named
cold tree/a
PAGECACHE_FAULT=pread:EIO,readahead:EIO pc warm --engine threads tree/a/f1 >o 2>e; rc=$?
t_is "an I/O error exits 1" "$rc" 1
t_ok "and names the file" grep -q "cannot warm 'tree/a/f1': Input/output error" e

# a file truncated during warm: reported, never a SIGBUS (warm does not touch maps)
mkfile shrink 16384
cold shrink
# truncated once warm has read some of it (and has more to read: --rate)
( t_wait 30 eval '[ "$(cached_pages shrink)" -gt 0 ]'; truncate -s 1M shrink ) &
tp=$!
T_CLEANUP+=("t_kill $tp")
pc warm --engine threads --rate 4 shrink >o 2>e; rc=$?
wait $tp
t_ok "truncation mid-warm: no crash (exit $rc)" test "$rc" -le 1
t_ok "truncation mid-warm: reported" grep -q "shrank" e

# rate limit: behaviour, not speed. 32 MiB at 0.5 MiB/s is read a chunk at
# a time (a minute in all): once warm has read something, it is still
# running with the rest unread; without the limit it would have read it
# all at once and ended.
cold big
"$PAGECACHE" warm --rate 0.5 big >/dev/null 2>&1 &
wp=$!
T_CLEANUP+=("t_kill $wp")
t_wait 30 eval '[ "$(cached_pages big)" -gt 0 ]'
got=$(cached_pages big)
t_ok "--rate holds reads back: part read ($got of $((32768 * 1024 / PS)) pages), still reading" \
	eval 'kill -0 $wp && [ "$got" -gt 0 ] && [ "$got" -lt $((32768 * 1024 / PS)) ]'
t_kill $wp

# the engine cannot start: said on stderr and in --json's errors, exit 1
PAGECACHE_FAULT=uring:ENOSYS pc warm --engine uring --json big >es.json 2>es.err; rc=$?
t_is "no engine: exit 1, the error in the JSON document" \
	"$rc $(jq -c '[.errors[0].path, .errors[0].reason]' es.json 2>&1)" '1 ["io_uring","Function not implemented"]'
t_ok "... and on stderr" grep -q "cannot start the warming engine 'io_uring'" es.err

# an empty file, or a range past the end, is nothing to warm: not denied
mkdir -p et; : >et/empty; mkfile et/one 4
pc warm et >o 2>e; rc=$?
t_is "warm of a tree with an empty file: exit 0" "$rc" 0
t_ok "  no file counted as denied" sh -c '! grep -q Denied o'
pc warm --json et >o.json 2>e
t_is "  denied: 0 in the JSON" "$(jq .total.denied o.json)" 0
pc -t et/empty >o 2>e
t_ok "pagecache -t EMPTY: not denied" sh -c '! grep -q Denied o'
t_ok "  and no share of nothing (0/0 is no 100%)" sh -c '! grep -q "100" o'
pc warm --json -p 1M- et/one >o.json 2>e
t_is "a range past the end: not denied" "$(jq .total.denied o.json)" 0

# -f: a link to a directory walked elsewhere is no loop (nothing said);
# a link back up the tree is
mkdir -p ft/a ft/b; mkfile ft/a/f 4; ln -s ../a ft/b/to-a
pc -t -f ft >o 2>e; rc=$?
t_is "pagecache -t -f over a link to a sibling directory: exit 0" "$rc" 0
t_ok "  no loop warned of" sh -c '! grep -q "already visited" e'
ln -s .. ft/a/up
pc -t -f ft >o 2>e
t_ok "  a link back up the tree is still named as a loop" grep -q "already visited" e
t_done
