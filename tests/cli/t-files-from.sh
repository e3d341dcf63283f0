#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Path lists (-b, --files-from, --files0-from) are read while they are
# walked, a few hundred names at a time: every name is still walked once,
# after argv's paths and in the lists' order; stat's choice to list files
# (no directory among the names) still sees every name, a pipe's too; a
# list that is not one (a binary file, a name longer than PATH_MAX) is
# refused with one message that names it, not a failure a line. t-options
# has the lists' odd names and separators, t-badinput the missing list.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

mkdir -p d/sub
(cd d && seq -f f%04g 1500 | xargs touch)
mkfile d/sub/x 8
find "$PWD/d" -type f | sort >list
t_is "1,501 files listed" "$(wc -l <list)" 1501

# more names than the walk ever holds at once: every one walked, once
pc stat -J --files-from list >o.json 2>e; t_is "a long list: exit 0" $? 0
t_is "  every name walked" "$(jq .total.files o.json)" 1501
t_is "  each once" "$(jq -r '.files[].path' o.json | sort -u | wc -l)" 1501
pc stat -J --files-from - <list >o.json 2>e
t_is "from stdin" "$(jq .total.files o.json)" 1501
tr '\n' '\0' <list | pc stat -J -0 --batch - >o.json 2>e
t_is "NUL-separated, from a pipe" "$(jq .total.files o.json)" 1501

# a name listed twice, and named on the command line too, is one file
{ head -n 3 list; head -n 3 list; } >twice
pc stat -J --batch twice "$(head -n 1 list)" >o.json 2>e
t_is "listed twice and named: each file once" "$(jq .total.files o.json)" 3
ln d/f0001 hl
printf '%s\n' "$PWD/hl" >l1
printf '%s\n' "$PWD/d/f0001" >l2
pc stat -J -v --batch l2 --batch l1 hl >o.json 2>e
t_is "a hardlink named and listed: one file" "$(jq .total.files o.json)" 1
t_is "  the others skipped as seen" "$(jq .total.skipped o.json)" 2

# stat lists files when no name is a directory: a listed one counts
pc stat --files-from list >o 2>e
t_ok "files only: each listed" grep -q "d/sub/x$" o
{ head -n 2 list; echo "$PWD/d/sub"; tail -n 2 list; } >withdir
pc stat --batch withdir >o 2>e
t_ok "a directory in the list: totals only" sh -c '! grep -q "d/sub/x$" o'
t_ok "  and every name walked" grep -q "Files: 5$" o
pc stat --batch - <withdir >o 2>e
t_ok "the same from a file on stdin" grep -q "Files: 5$" o
cat withdir | pc stat --batch - >o 2>e
t_ok "from a pipe (kept to be read again): totals only" sh -c '! grep -q "d/sub/x$" o'
t_ok "  and every name walked" grep -q "Files: 5$" o
cat list | pc stat --batch - >o 2>e
t_ok "a pipe of files only: each listed" grep -q "d/sub/x$" o

# snapshot of a list, and with --safe-links (each root checked as it comes)
pc snapshot -o s.pcs -b list >o 2>e; t_is "snapshot -b LIST: exit 0" $? 0
pc snapshot --safe-links -o s2.pcs -b list >o 2>e; t_is "  with --safe-links: exit 0" $? 0
# each root checked as it comes holds an fd while it waits: under a low
# limit no more wait than the limit has room for (a directory first keeps
# the walk busy while the list is fed), so no check fails for want of one
{ echo "$PWD/d"; cat list; } >dirfirst
(ulimit -n 64; "$PAGECACHE" snapshot --safe-links -o s3.pcs -b dirfirst) >o 2>e
t_is "  --safe-links under ulimit -n 64: exit 0" $? 0
t_ok "  no root dropped unchecked" sh -c '! grep -q "cannot check" e'
if t_root; then
	pc warm -q -b list >o 2>e
	pc snapshot --json -o s.pcs -b list >o.json 2>e
	t_is "  recording every cached file listed" "$(jget o.json .total.files)" 1
fi

# not a list: refused with one message, nothing of it walked
head -c 200000 /dev/urandom >big.bin
printf 'a\0b\n' >>big.bin
pc stat -J --batch big.bin >o.json 2>e; t_is "a binary file as a list: exit 1" $? 1
t_is "  one failure" "$(jq '.errors | length' o.json)" 1
t_ok "  naming the list" grep -qF "cannot read path list 'big.bin'" e
t_ok "  saying why" grep -qF "not a list of names" e
t_is "  and nothing walked" "$(jq .total.files o.json)" 0
{ head -n 2 list; head -c 5000 /dev/zero | tr '\0' a; echo; tail -n 2 list; } >long
pc stat -J --batch long >o.json 2>e; t_is "a name longer than PATH_MAX: exit 1" $? 1
t_ok "  the list refused" grep -qF "a name longer than PATH_MAX (name 3)" e
t_is "  the names before it walked" "$(jq .total.files o.json)" 2
printf '%s\n' "$PWD/d/f0001" 'caf\351' "$PWD/d/f0002" >latin1
pc stat -J --batch latin1 >o.json 2>e; t_is "a Latin-1 name is a name (not found: exit 1)" $? 1
t_is "  the names after it walked" "$(jq .total.files o.json)" 2
t_ok "  no list refused" sh -c '! grep -q "not a list of names" e'
# past its first names a list has shown itself one: a bad line there is
# skipped with one failure, and the names after it are still read
{ head -n 9 list; printf 'x\0y\n'; head -c 5000 /dev/zero | tr '\0' a; echo; tail -n 2 list; } >late
pc stat -J --batch late >o.json 2>e; t_is "bad lines after the first names: exit 1" $? 1
t_is "  every good name walked" "$(jq .total.files o.json)" 11
t_is "  one failure a bad line" "$(jq '.errors | length' o.json)" 2
t_ok "  the list not refused" sh -c '! grep -q "not a list of names" e'
t_ok "  the NUL named" grep -qF "skipping a listed name that starts 'x': it holds a NUL byte" e
t_ok "  the long one named" grep -qF "it is longer than PATH_MAX" e
# lists after a refused one are read
pc stat -J --batch big.bin --batch latin1 >o.json 2>e
t_is "a list after a refused one is read" "$(jq .total.files o.json)" 2

# lock reads its lists before it waits for signals: a pipe whose writer
# never ends is stopped by SIGTERM, as before lists were read as walked
mkfifo ff
sleep 60 >ff &
wpid=$!
"$PAGECACHE" lock -b - <ff >o 2>e &	# not pc(): $! must be pagecache itself
lpid=$!
sleep 1
kill -TERM "$lpid" 2>/dev/null
for _ in $(seq 50); do kill -0 "$lpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$lpid" 2>/dev/null; then
	t_ok "lock -b - waiting on a pipe: SIGTERM stops it" false
	kill -KILL "$lpid"
else
	t_ok "lock -b - waiting on a pipe: SIGTERM stops it" true
fi
wait "$lpid" 2>/dev/null
kill "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null

t_done
