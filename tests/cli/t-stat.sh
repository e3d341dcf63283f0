#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache stat against a ground truth the test makes itself (fincore).
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)
NA=$((1048576 / PS))	# pages of the 1 MiB file a

mkfile a 1024
mkdir -p tree/sub
mkfile tree/x 64
mkfile tree/sub/y 12
drop a tree/x tree/sub/y
# read pages 0-9 and 100-119 of a, with no readahead around them
dd if=a of=/dev/null bs=$PS count=10 iflag=direct status=none   # direct: not cached
dd if=a of=/dev/null bs=$PS skip=100 count=20 status=none 2>/dev/null
want=$(cached_pages a)

pc stat --json a >out.json; rc=$?
t_is "stat of a file exits 0" "$rc" 0
t_ok "stat --json is valid JSON" jq -e . out.json
t_is "cached matches fincore (mincore as root)" "$(jget out.json '.files[0].cached')" "$want"
t_is "total.cached matches too" "$(jget out.json '.total.cached')" "$want"
t_is "pages is size/pagesize" "$(jget out.json '.files[0].pages')" "$NA"
t_is "size in bytes" "$(jget out.json '.files[0].size')" 1048576
for k in path size pages cached dirty writeback evicted recently_evicted; do
	t_is "file has key $k" "$(jget out.json ".files[0] | has(\"$k\")")" true
done
for k in files pages cached dirty writeback evicted recently_evicted; do
	t_is "total has key $k" "$(jget out.json ".total | has(\"$k\")")" true
done

# -vv: page ranges are the runs we read (readahead may extend the second)
pc stat -vv --json a >vv.json
first=$(jget vv.json '.files[0].ranges[0] | "\(.[0]) \(.[1])"')
t_ok "-vv lists cached ranges" test -n "$first"
sum=$(jget vv.json '[.files[0].ranges[][1]] | add // 0')
# the same command's count: a reclaimer may take a page after the fincore above
t_is "ranges add up to cached" "$sum" "$(jget vv.json '.files[0].cached')"
# no more than fincore saw before or right after (a make check under load once
# saw more than the count before: pages still coming in then, not a lie)
after=$(cached_pages a); [ "$after" -gt "$want" ] && want=$after
t_ok "no more than fincore saw, and not none ($sum; fincore $want)" test "$sum" -le "$want" -a "$sum" -gt 0

# a directory: summary; files listed with -v
pc stat tree >human.txt
t_ok "directory summary names Files" grep -q "Files: 2" human.txt
t_ok "and Directories" grep -q "Directories: 2" human.txt
pc stat --json tree >tree.json
t_is "no file list without -v for a tree" "$(jget tree.json '.files | length')" 0
t_is "tree total files" "$(jget tree.json '.total.files')" 2
pc stat -v --json tree >treev.json
t_is "-v lists both files" "$(jget treev.json '[.files[].path] | sort | join(",")')" "tree/sub/y,tree/x"
pc stat -v tree >treev.txt
t_ok "-v human output has a residency bar" grep -q '\[.*\] tree/x' treev.txt

# byte range
cat a >/dev/null
pc stat --json --range "$PS-$((3 * PS))" a >r.json
t_is "--range PS-3*PS is 2 pages" "$(jget r.json '.files[0].pages')" 2
t_is "both cached" "$(jget r.json '.files[0].cached')" 2

# Prometheus and key=value (names and types: t-prom; here the numbers)
# (the reclaimer may take a page of a between the read and the count: the
# value lies between what fincore sees right after, in bytes, and all of a)
cat a >/dev/null
pc stat --prom-per-file a >prom.txt
after=$(($(cached_pages a) * PS))
v=$(sed -n 's/^pagecache_stat_file_cached_bytes{path="a"} \([0-9]*\)$/\1/p' prom.txt)
t_ok "prom has the file's cached bytes ($v; fincore after: $after of $((NA * PS)))" \
	test -n "$v" -a "${v:-0}" -ge "$after" -a "${v:-0}" -le $((NA * PS)) -a $((${v:-1} % PS)) = 0
t_ok "prom has a total, the file's" grep -q "^pagecache_stat_cached_bytes $v\$" prom.txt
t_ok "prom TYPE lines" grep -q '^# TYPE pagecache_stat_cached_bytes gauge$' prom.txt
t_ok "prom: no doubled unit suffix" sh -c "test -s prom.txt && ! grep -E '_(pages_pages|bytes_bytes)' prom.txt"
t_ok "prom: every sample has a TYPE line" sh -c "for m in \$(grep -v '^#' prom.txt | sed 's/[{ ].*//' | sort -u); do grep -q \"^# TYPE \$m \" prom.txt || exit 1; done"
pc stat --prom a >promt.txt
t_is "--prom alone: totals, no series per file" "$(grep -c '{' promt.txt)" 0
cat a >/dev/null	# again: a proactive reclaimer may have taken some since
pc stat --kv a >kv.txt
t_ok "kv has path=a cached=$NA" grep -q "path=a .*cached=$NA " kv.txt

# fincore-style columns
cat a >/dev/null
pc stat -o CACHED,FILE -n a >cols.txt
t_is "-o CACHED,FILE -n" "$(cat cols.txt | head -1 | tr -s ' ' | sed 's/^ //')" "$NA a"
# PAGES is fincore's: resident pages (it was the pages selected, which on a
# cold file read like the fake 100%); the pages selected are TOTAL_PAGES
mkfile half $((16 * PS / 1024))
cat half >/dev/null
pc evict --range $((2 * PS))- half >/dev/null 2>&1	# 2 of its 16 pages stay
pc stat -o TOTAL_PAGES,CACHED,PAGES,FILE half >cols.txt
pc stat --json half >cols.json
t_is "-o TOTAL_PAGES is JSON pages: the pages selected" \
	"$(awk 'NR == 2 { print $1 }' cols.txt) $(jq .files[0].pages cols.json)" "16 16"
t_ok "-o CACHED is JSON cached: the 2 left, or fewer if reclaimed since" \
	test "$(awk 'NR == 2 { print $2 }' cols.txt)" -le 2
t_is "-o PAGES is CACHED, as fincore's PAGES" "$(awk 'NR == 2 { print $3 }' cols.txt)" \
	"$(awk 'NR == 2 { print $2 }' cols.txt)"
t_is "their headings" "$(head -n1 cols.txt | tr -s ' ' | sed 's/^ //')" "TOTAL CACHED PAGES FILE"
drop half
t_is "a cold file: PAGES 0, as fincore's (never its size in pages)" \
	"$(pc stat -n -o PAGES half | tr -d ' ') $(fincore -n -o PAGES half 2>/dev/null | tr -d ' ')" "0 0"
t_is "TOTAL is TOTAL_PAGES" "$(pc stat -n -o TOTAL half | head -n1 | tr -d " ")" 16

# batch input: NUL-separated, last record without a terminator (vmtouch drops its last byte)
printf 'tree/x\0tree/sub/y' | pc stat --batch - -0 --json >b.json
t_is "-b - -0 reads both paths whole" "$(jget b.json '[.files[].path] | sort | join(",")')" "tree/sub/y,tree/x"
printf 'tree/x\ntree/sub/y' | pc stat --batch - --json >b2.json
t_is "-b - newline list without trailing newline" "$(jget b2.json '.total.files')" 2

# dirty and evicted counts come from cachestat; without it they are
# unknown (null, "unknown"), never a number the kernel did not give
head -c 65536 /dev/urandom >>tree/x
pc stat --json tree/x >d.json
if t_have_cachestat; then
	t_ok "fresh writes show as dirty" test "$(jget d.json '.files[0].dirty')" -gt 0
	t_is "evicted is a number" "$(jget d.json '.files[0].evicted | type')" number
else
	t_skip "fresh writes show as dirty" "no cachestat"
	t_skip "evicted is a number" "no cachestat"
	t_is "without cachestat: dirty, writeback, evicted, recently_evicted are unknown" \
		"$(jget d.json '[.files[0], .total | .dirty, .writeback, .evicted, .recently_evicted] | map(tostring) | join(",")')" \
		"$(echo null,null,null,null,null,null,null,null)"
	pc stat -o DIRTY_PAGES,FILE tree/x >d.txt 2>&1
	t_ok "and unknown for people" grep -q "^ *unknown tree/x$" d.txt
fi

# Honesty: a user who may not write the file gets unknown, never mincore's fake 100%
if t_cap setuid && t_cap setgid && t_have setpriv; then
	chmod 755 "$T_DIR"; chmod 644 a
	drop a
	nobody_pc stat --json a >u.json 2>u.err
	t_is "unprivileged: cached is null" "$(jget u.json '.files[0].cached')" null
	t_ok "unprivileged: a reason is given" grep -q "refuses" u.json
	t_is "unprivileged: total counts it as unknown" "$(jget u.json '.total.unknown_files')" 1
	nobody_pc stat a >u.txt 2>&1
	t_ok "human output says unknown" grep -q "unknown" u.txt
	chmod 666 a
	nobody_pc stat --json a >w.json
	t_is "writable by the user: real numbers" "$(jget w.json '.files[0].cached')" 0
else
	t_skip "unprivileged honesty" "$T_WHY (it runs as nobody)"
fi

# A kernel without cachestat: mincore path, same numbers
cat a >/dev/null
PAGECACHE_FAULT=cachestat:ENOSYS pc stat --json a >m.json
# fincore after it, and what was reclaimed since (cachestat's evicted, where
# the kernel has cachestat: asked of it also in make check's pass that
# injects cachestat:ENOSYS, as resident_pages does; CI's such pass saw 3
# pages reclaimed and counted 0): the count must lie between (nothing is
# read meanwhile)
mc=$(jget m.json '.files[0].cached')
fc=$(cached_pages a)
ev=$(PAGECACHE_FAULT= pc stat --json a | jq '.files[0].evicted // 0')
t_ok "mincore fallback gives the same count ($mc; fincore after: $fc, $ev reclaimed)" \
	test "$mc" -ge "$fc" -a "$mc" -le $((fc + ev))
t_is "and says where it came from" "$(jget m.json '.files[0].source')" mincore

# A file name with a newline, ESC, a C1 CSI, a backslash and a byte that is
# not UTF-8: one row for people, escaped (\n \x1b \xc2\x9b \\ \xff), never a
# forged row or a terminal control; JSON and Prometheus keep it exact.
mkdir names
evil=$'names/x\n  4K 1 4K 100% 0 0 FORGED\e[2J\xc2\x9bq\\b\xff'
mkfile "$evil" 4
mkfile names/plain 4
pc stat -v names >n.txt 2>n.err
t_is "stat -v: no raw control character" "$(LC_ALL=C grep -c $'[\x01-\x1f\x7f]\|\xc2[\x80-\x9f]' n.txt)" 0
t_is "one row each (2 files)" "$(awk 'NR > 1 && /^$/ { exit } NR > 1' n.txt | wc -l)" 2
t_ok "the name is shown escaped" grep -qF 'names/x\n  4K 1 4K 100% 0 0 FORGED\x1b[2J\xc2\x9bq\\b\xff' n.txt
pc stat -o FILE,SIZE --batch - <<<"$T_DIR/names/plain" >o1.txt 2>o1.err
t_ok "a plain name is shown as it is" grep -qx "$T_DIR/names/plain *4K" o1.txt
pc stat --kv -v names >n.kv
t_is "kv: one line a file" "$(grep -c '^path=' n.kv)" 2
t_is "kv: no raw control character (C1 included)" "$(LC_ALL=C grep -c $'[\x01-\x1f\x7f]\\|\xc2[\x80-\x9f]' n.kv)" 0
pc stat --json -v names >n.json
t_is "JSON has the exact name" "$(jq -r '[.files[].path | select(test("FORGED"))] | length' n.json)" 1
t_ok "JSON escapes the control characters" grep -qF 'FORGED\u001b[2J' n.json
pc stat --prom-per-file names >n.prom
t_is "prom: the newline is \\n in the label, one sample a metric" \
	"$(grep -c 'path=".*names/x\\n  4K.*FORGED' n.prom)" "$(grep -c 'names/plain' n.prom)"
t_is "prom: only UTF-8" "$(LC_ALL=C grep -c $'\xff' n.prom)" 0
pc stat "names/gone"$'\e[2J\n' >/dev/null 2>g.err
t_is "a warning on stderr is escaped too" "$(cat g.err)" "pagecache: cannot open 'names/gone\x1b[2J\n': No such file or directory"

# ---- table columns are padded to screen columns, not bytes ----
# (C.UTF-8: the table reads its UTF-8 cells in it; wc -L counts columns in it)
if ! locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
	t_skip "table widths in screen columns" "no C.UTF-8 locale here (locale -a)"
else
	mkdir u8
	printf 1 >u8/cafe; printf 12 >u8/café; printf 123 >u8/日本語; printf 1234 >u8/$'e\xcc\x81'
	LC_ALL=C.UTF-8 pc stat -o file,size u8/* >w.txt
	sed '/^$/,$d' w.txt >t.txt
	t_is "four rows and the header" "$(wc -l <t.txt)" 5
	t_is "every line as wide on screen (é one column, 日 two, a combining accent none)" \
		"$(while IFS= read -r l; do printf '%s' "$l" | LC_ALL=C.UTF-8 wc -L; done <t.txt |
		   sort -u | wc -l)" 1
	t_ok "the SIZE column lines up after 日本語" grep -qx 'u8/日本語    3' t.txt
fi

# ---- --kv shows the per-file cgroup list: cgroups.count=N, cgroups.I.KEY=value ----
if ! t_cap sys_admin; then
	t_skip "stat --by-cgroup --kv" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
else
	mkfile owned 16
	cat owned >/dev/null
	pc stat --by-cgroup --json owned >bc.json 2>bc.err
	pc stat --by-cgroup --kv owned >bc.kv 2>bc.err
	t_ok "the JSON has a cgroup list" jq -e '.files[0].cgroups | length > 0' bc.json
	t_is "kv gives it, as the JSON has it" "$(head -1 bc.kv | sed 's/.* cgroups\.count=/cgroups.count=/')" \
		"$(jq -r '.files[0].cgroups | "cgroups.count=\(length)" + ([to_entries[] |
			" cgroups.\(.key).path=\(.value.path) cgroups.\(.key).cached=\(.value.cached)"] | add)' bc.json)"
fi

t_done
