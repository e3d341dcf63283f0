#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The native `pagecache stat` never disagrees with util-linux fincore on a
# letter or a column name (issue 27): -b is --bytes, PAGES is resident
# pages, the table alone on a pipe or with -n/-r, rows in argument order,
# no "100%" of nothing. Each check runs fincore beside it where it can.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

head -c $((64 * PS)) /dev/urandom >big.bin	# random bytes: not a list of paths
printf 'hello\n' >small.txt
mkfile c 8; mkfile a 8; mkfile b 8
: >empty
mkdir -p tree/sub emptydir
mkfile tree/z 4; mkfile tree/sub/y 4
sync

# ---- -b is fincore's --bytes, never a list of paths ----
cat big.bin small.txt >/dev/null
timeout 60 "$PAGECACHE" stat -b big.bin small.txt >o 2>e; rc=$?
t_is "stat -b big.bin small.txt: exit 0 (was a walk of / from a binary 'list')" "$rc" 0
t_is "  both files' rows" "$(awk 'NR > 1 { print $NF }' o | tr '\n' ' ')" "big.bin small.txt "
t_is "  sizes in exact bytes (fincore -b)" \
	"$(awk '$NF == "big.bin" { print $3 }' o) $(awk '$NF == "small.txt" { print $3 }' o)" \
	"$((64 * PS)) 6"
t_is "  nothing on stderr" "$(cat e)" ""
t_is "-b -n -o SIZE: exact, as fincore -b -n -o SIZE" \
	"$(pc stat -b -n -o SIZE big.bin | tr -d ' ')" "$(fincore -b -n -o SIZE big.bin | tr -d ' ')"
printf '%s\n' a c >list
pc stat --batch list -J >o.json 2>e
t_is "the list is --batch" "$(jq -r '[.files[].path] | join(",")' o.json)" "a,c"
pc stat --files-from list -J >o.json 2>e
t_is "  or --files-from" "$(jq -r '[.files[].path] | join(",")' o.json)" "a,c"

# ---- PAGES is resident pages, as fincore's ----
drop c
t_is "a cold file: -o PAGES 0, as fincore's" \
	"$(pc stat -n -o PAGES c | tr -d ' ') $(fincore -n -o PAGES c | tr -d ' ')" "0 0"
t_is "  TOTAL_PAGES is the file's pages" "$(pc stat -n -o TOTAL_PAGES c | tr -d ' ')" \
	$(((8192 + PS - 1) / PS))
cat c >/dev/null
t_is "a warm file: PAGES as fincore's" \
	"$(pc stat -n -o PAGES c | tr -d ' ')" "$(fincore -n -o PAGES c | tr -d ' ')"
t_is "the heading is PAGES" "$(pc stat -o PAGES c | head -n 1 | tr -d ' ')" PAGES
pc warm -v -o TOTAL,FILE c >o 2>e; t_is "warm -o TOTAL: the pages examined" $? 0
pc warm -v -o PAGES c >o 2>e; t_is "warm -o PAGES (was the pages examined): refused" $? 2
pc evict -v -o PAGES c >o 2>e; t_is "evict -o PAGES (was the pages examined): refused" $? 2

# ---- the summary: not under rows on a pipe, nor with -n or -r ----
pc stat a c >o
t_ok "rows on a pipe: the table alone" sh -c '! grep -q "Resident Pages" o'
t_is "  just a heading and two rows" "$(wc -l <o)" 3
pc stat -n -r -o PAGES,FILE a c >o
t_is "-n -r -o PAGES,FILE: the rows alone, as fincore's" "$(wc -l <o)" 2
pc stat --summary a c >o
t_ok "--summary brings it back" grep -q "Resident Pages" o
pc stat --summary -n a c >o
t_ok "  also with -n" grep -q "Resident Pages" o
pc stat tree >o
t_ok "a tree without -v: the summary is the output, kept on a pipe" grep -q "Files: 2$" o
if t_have script; then
	script -qec "$PAGECACHE stat a c" /dev/null >o 2>&1
	t_ok "on a terminal, under the rows" grep -q "Resident Pages" o
	script -qec "$PAGECACHE stat -n a c" /dev/null >o 2>&1
	t_ok "  but not with -n" sh -c '! grep -q "Resident Pages" o'
else
	t_skip "on a terminal, under the rows" "$T_WHY"
	t_skip "  but not with -n" "$T_WHY"
fi

# ---- rows in argument order, a tree's files sorted at its place ----
pc stat -n -o FILE c a tree b >o
t_is "stat c a tree b: c, a, the tree sorted, b" "$(tr -d ' ' <o | tr '\n' ' ')" \
	"c a tree/sub/y tree/z b "
t_is "  fincore's order for files" "$(pc stat -n -o FILE c a b | tr '\n' ' ')" \
	"$(fincore -n -o FILE c a b | tr -d ' ' | tr '\n' ' ')"
pc stat -J c a b >o.json
t_is "  JSON too" "$(jq -r '[.files[].path] | join(",")' o.json)" "c,a,b"
pc stat -n -o FILE ./c "$PWD/a" >o
t_is "  as named (./c, an absolute path)" "$(tr '\n' ' ' <o)" "./c $PWD/a "

# ---- no percentage of nothing ----
pc stat emptydir >o
t_ok "an empty tree: no '100.0%'" sh -c '! grep -q "100" o'
t_ok "  '0/0  0/0  -'" grep -qE "Resident Pages: 0/0  0/?0? +-$|Resident Pages: 0/0  0B?/0B?  -$" o
pc stat -J empty >o.json
t_is "an empty file: JSON percent null" "$(jq .files[0].percent o.json)" null
t_is "  '-' in the table" "$(pc stat -n -o PERCENT empty | tr -d ' ')" "-"
pc stat -J -p 1M-2M a >o.json
t_is "a range past the end: percent null" "$(jq .files[0].percent o.json)" null
t_done
