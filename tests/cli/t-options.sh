#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Options users already know: vmtouch's command line is done vmtouch's way
# or refused with a message that says what to type (never another action);
# util-linux's output letters; GNU's path lists; --version and help CMD on
# every command; the completions and the man pages say what the option
# tables say; the progress line only on a terminal that can show it.
. "$(dirname "$0")/lib.sh"
MAN=$(cd "$(dirname "$0")/../../docs/man" && pwd)
cd "$T_DIR"
PS=$(getconf PAGESIZE)

mkfile f 256
pages=$(((256 * 1024 + PS - 1) / PS))
cached() { pc stat --json "$1" | jq '.files[0].cached'; }

# ---- vmtouch's command line, read vmtouch's way ----
drop f
pc -t f >o 2>e; t_is "pagecache -t FILE exits 0 (vmtouch -t: warm)" $? 0
t_is "pagecache -t FILE warmed every page" "$(cached f)" "$pages"
pc -e f >o 2>e; t_is "pagecache -e FILE exits 0 (vmtouch -e: evict)" $? 0
t_is "pagecache -e FILE dropped every page" "$(cached f)" 0
pc -v f >o 2>e; t_is "pagecache -v FILE exits 0 (vmtouch -v FILE: stat)" $? 0
t_ok "pagecache -v FILE shows residency" grep -q "Resident Pages" o
pc f >o 2>e; t_is "pagecache FILE (no option, vmtouch FILE): stat, exit 0" $? 0
t_ok "  showing residency" grep -q "Resident Pages" o
pc nosuch-word >o 2>e; t_is "pagecache WORD (no command, no path): usage error" $? 2
t_ok "  saying it is not a command" grep -qF "'nosuch-word' is not a command" e
# a file named like a command: the command wins; alone, it says how to name the file
mkdir -p cmdw; : >cmdw/stat
(cd cmdw && "$PAGECACHE" stat >../o 2>../e); t_is "pagecache stat beside a file 'stat': the command (no PATH: 2)" $? 2
t_ok "  saying how to name the file" grep -qF "pagecache './stat'" e
(cd cmdw && "$PAGECACHE" ./stat >../o 2>../e); t_is "pagecache ./stat: the file" "$?.$(grep -c 'Files: 1' o)" 0.1
# options after the paths, as vmtouch's getopt permutes them
drop f
pc f -t >o 2>e; t_is "pagecache FILE -t (an option after the path): warm, exit 0" $? 0
t_is "  every page warmed" "$(cached f)" "$pages"
pc f -v -e >o 2>e; t_is "pagecache FILE -v -e: evict, exit 0" $? 0
t_is "  every page dropped" "$(cached f)" 0
t_ok "  listing the file (-v)" grep -qE " f +$" o
pc -t -- -t >o 2>e; t_is "pagecache -t -- -t: after --, a path (missing: exit 1)" $? 1
t_ok "  named as a path" grep -qF "'-t'" e
# -q with every action: nothing on stdout, failures on stderr, status as without
pc -t f >/dev/null 2>&1
pc -q f >o 2>e; t_is "pagecache -q FILE (vmtouch -q: stat): exit 0" $? 0
t_is "  prints nothing" "$(cat o e)" ""
pc -eq f >o 2>e; t_is "pagecache -eq FILE: exit 0" $? 0
t_is "  prints nothing" "$(cat o e)" ""
t_is "  and evicted" "$(cached f)" 0
pc -tq f >o 2>e; t_is "pagecache -tq FILE: exit 0" $? 0
t_is "  prints nothing (no summary)" "$(cat o e)" ""
t_is "  and warmed" "$(cached f)" "$pages"
pc -tq f missing >o 2>e; t_is "pagecache -tq FILE MISSING: exit 1" $? 1
t_is "  nothing on stdout" "$(cat o)" ""
t_ok "  the failure on stderr" grep -qF "'missing'" e
pc -q -v f >o 2>e; t_ok "pagecache -q -v FILE: the row asked for, no summary" \
	sh -c 'grep -qE " f$" o && ! grep -q "Resident Pages" o'
pc stat -q --json f >o.json 2>e; t_is "stat -q --json: the JSON asked for" "$(jq .total.files o.json)" 1
pc evict -q f >o 2>e; t_is "evict -q: exit 0, nothing printed" "$?.$(cat o)" 0.
# vmtouch's -b LIST is the list in every command (stat's letters follow fincore)
printf '%s\n' f >lst
pc -J -b lst >o.json 2>e; t_is "pagecache -b LIST: the list" "$(jq .total.files o.json)" 1
drop f
pc -tb lst >o 2>e; t_is "pagecache -tb LIST: warms the list" "$?.$(cached f)" "0.$pages"
pc -J -vblst >o.json 2>e; t_is "pagecache -vbLIST (attached): the list" "$(jq .total.files o.json)" 1
pc -J lst -e -b lst >o.json 2>e; t_is "pagecache PATH -e -b LIST: both" "$?.$(cached f)" 0.0
pc -vt -p 0-8k f >/dev/null 2>e; t_is "pagecache -vt -p 0-8k FILE exits 0" $? 0
want=$(((8192 + PS - 1) / PS))
t_is "-p 0-8k warmed only those pages" "$(cached f)" "$want"
drop f
pc -t -p 8k f >/dev/null 2>e
t_is "-p 8k (a plain size) is 0-8k, as vmtouch reads it" "$(cached f)" "$want"
pc stat -J -p 0-8k f >r.json 2>e; t_is "stat -p RANGE is the range (was refused)" $? 0
t_is "stat -p 0-8k counts its pages" "$(jq '.files[0].pages' r.json)" "$want"
ln f f.link
pc -h f f.link >o 2>e; t_is "vmtouch's -h (count hardlinks) works" $? 0
t_ok "-h counted both links" grep -qE "Files: 2$" o
mkdir -p d/sub; mkfile d/a 4; mkfile d/sub/b 8; mkfile d/big 64; ln -s ../../f d/sub/l
pc -J -i sub d >o.json 2>e; t_is "vmtouch's -i PAT excludes" "$(jq .total.files o.json)" 2
pc -J -I 'b*' d >o.json 2>e; t_is "vmtouch's -I PAT includes" "$(jq .total.files o.json)" 2
pc -J -m 16k d >o.json 2>e; t_is "vmtouch's -m SIZE skips bigger files" "$(jq .total.files o.json)" 2
pc -J -f d >o.json 2>e; t_is "vmtouch's -f follows links" "$(jq .total.files o.json)" 4
pc -J -F d >o.json 2>e; t_is "vmtouch's -F stays on one filesystem" "$(jq .total.files o.json)" 3
printf '%s\0' d/a d/big >l0
pc -J -b l0 -0 >o.json 2>e; t_is "vmtouch's -b FILE -0" "$(jq .total.files o.json)" 2
pc -t -e f >o 2>e; t_is "-t and -e together: usage error" $? 2
t_ok "  which says what to type" grep -q "run 'pagecache warm' and 'pagecache evict'" e

# lock: -l, -d, -P, -w; the brief's own example
drop f
rm -f 0-4k pidf
if ! t_cap ipc_lock && [ "$(ulimit -l)" != unlimited ] && [ "$(ulimit -l)" -lt $((PS / 1024 * 2)) ]; then
	t_skip "lock -d -p RANGE -P FILE" "RLIMIT_MEMLOCK too low and no CAP_IPC_LOCK"
else
	pc lock -d -p 0-4k -P pidf -J f >l.json 2>e; rc=$?
	t_is "lock -d -p 0-4k -P FILE exits 0" "$rc" 0
	[ -s pidf ] && T_CLEANUP+=("t_kill $(cat pidf)")
	t_ok "  the pidfile is FILE" test -s pidf
	t_ok "  no pidfile named after the range" test ! -e 0-4k
	t_is "  only the range is locked" "$(jq .total.locked l.json)" "$PS"
	[ -s pidf ] && t_kill "$(cat pidf)"
	pc -l -d -w -P pidf f >o 2>e; rc=$?
	t_is "pagecache -l -d -w -P FILE (vmtouch -dlw) exits 0" "$rc" 0
	[ -s pidf ] && T_CLEANUP+=("t_kill $(cat pidf)")
	t_ok "  a daemon holds the lock" kill -0 "$(cat pidf 2>/dev/null || echo 0)"
	[ -s pidf ] && t_kill "$(cat pidf)"
fi
pc lock -d -p "$T_DIR/old.pid" f >o 2>e; t_is "lock -p PIDFILE (the old letter) is refused" $? 2
t_ok "  saying a pidfile is -P FILE" grep -q "a pidfile is -P FILE" e
t_ok "  and nothing was written there" test ! -e "$T_DIR/old.pid"

# letters that would mean two things: refused, saying what to type
pc -t f >/dev/null 2>&1
refuse() {	# refuse NAME WANT-IN-MESSAGE ARGS...
	local name=$1 want=$2; shift 2
	pc "$@" >o 2>e; t_is "$name: usage error" $? 2
	t_ok "  says '$want'" grep -qF -- "$want" e
}
refuse "evict -r (raw elsewhere; the range once)" "-p A-B (--range)" evict -r 0-4k f
t_is "  and nothing was evicted" "$(cached f)" "$pages"
refuse "stat -r 0-4k FILE (raw here; the old range habit)" "type -p 0-4k or --range 0-4k" stat -r 0-4k f
pc stat -r -n -o FILE f >o 2>e; t_is "  stat -r FILE is still raw" "$(head -n 1 o)" f
refuse "stat -o '' (an empty column name)" "unknown column ''" stat -o '' f
refuse "stat -o ," "unknown column ''" stat -o , f
refuse "stat -o RES,,FILE" "unknown column ''" stat -o RES,,FILE f
refuse "stat -L (vmtouch's mlockall; follow elsewhere)" "-f (--follow)" stat -L d
refuse "stat -t" "pagecache warm" stat -t f
refuse "evict -l" "pagecache lock" evict -l f
refuse "stat -P FILE" "pagecache lock -d -P FILE" stat -P x f
refuse "stat -d" "pagecache lock -d" stat -d f
refuse "snapshot -q (no quiet mode there)" "no quiet mode" snapshot -q -o q.snap f
refuse "restore -n (dry run once, no headings elsewhere)" "--dry-run" restore -n x.snap
refuse "evict -Z" "unknown option '-Z'" evict -Z f
refuse "warm --max-mem without a value" "option '--max-mem' needs a value" warm f --max-mem
pc evict --json -r 0-4k f >o.json 2>/dev/null
t_is "a refusal is JSON under --json" "$(jq -r .usage.exit o.json)" 2
pc evict -J -r 0-4k f >o.json 2>/dev/null
t_is "  and under -J" "$(jq -r .usage.exit o.json)" 2

# ---- util-linux's output letters ----
mkfile 'a b' 4
pc stat -J f >j1.json; pc stat --json f >j2.json
t_is "-J is --json" "$(jq -c '.files[0] | [.path, .pages]' j1.json)" "$(jq -c '.files[0] | [.path, .pages]' j2.json)"
pc stat -n -o PAGES,FILE f >o
t_is "-n -o PAGES,FILE: two columns, no heading" "$(head -n 1 o | awk '{ print NF, $2 }')" "2 f"
pc stat -o PAGES,FILE f >o
t_is "-o PAGES,FILE: the heading" "$(head -n 1 o | awk '{ print $1, $2 }')" "PAGES FILE"
pc stat -r -n -o FILE,TOTAL_PAGES 'a b' >o
t_is "-r: raw, a space in a value as \\x20" "$(head -n 1 o)" 'a\x20b 1'
pc -t f >/dev/null 2>&1
pc evict -v -n -o file,after f >o 2>e
t_is "evict -o FILE,AFTER: those columns, in that order (any case)" "$(head -n 1 o | awk '{ print NF, $1, $2 }')" "2 f 0"
pc -t f >/dev/null 2>&1
pc evict -v -o FILE,NOSUCH f >o 2>e; t_is "evict -o with an unknown column: usage error" $? 2
t_ok "  naming the columns there are" grep -qF "unknown column 'NOSUCH' (columns: BEFORE,AFTER,TOTAL,FILE,WHY)" e
t_is "  and nothing was evicted" "$(cached f)" "$pages"
pc lock -o +NOSUCH f >o 2>e; t_is "lock -o +LIST checks the names before locking" $? 2
pc stat --bytes -n -o SIZE f >o
t_is "--bytes: exact sizes" "$(head -n 1 o | tr -d ' ')" $((256 * 1024))

# ---- GNU's path lists, odd names ----
nl=$'new\nline'; mkfile "$nl" 4; mkfile ./-dash 4; mkfile ' lead' 4
printf '%s\n' 'a b' -dash ' lead' >list
pc stat -J --files-from list >o.json 2>e
t_is "--files-from: names with spaces, a leading dash, a leading blank" "$(jq .total.files o.json)" 3
printf '%s\0' "$nl" 'a b' >list0
pc stat -J --files0-from list0 >o.json 2>e
t_is "--files0-from: a name with a newline" "$(jq .total.files o.json)" 2
t_is "  recorded whole" "$(jq -r '[.files[].path] | sort | .[1]' o.json)" "$nl"
pc stat -J --files0-from - <list0 >o.json 2>e
t_is "--files0-from - reads stdin" "$(jq .total.files o.json)" 2
# every list is read, each with its own separator
printf '%s\n' f >list1
pc stat -J --files-from list --files-from list1 >o.json 2>e
t_is "two --files-from: both are read" "$(jq .total.files o.json)" 4
pc stat -J --files0-from list0 --batch list1 >o.json 2>e
t_is "--files0-from X -b Y: Y stays newline-separated" "$(jq .total.files o.json)" 3
# a list that cannot be read is a failure that names it, never 'Files: 0'
pc evict -b . >o 2>e; t_is "-b DIRECTORY: exit 1" $? 1
t_ok "  naming the list" grep -qF "cannot read path list '.'" e
pc evict -b - <&- >o 2>e; t_is "-b - with stdin closed: exit 1" $? 1
t_ok "  naming the list" grep -qF "cannot read path list '-'" e
# a NUL inside a newline-separated name: refused, not read as the name up to it
printf 'f\0zzz\n' | pc stat -J --batch - >o.json 2>e; t_is "a NUL inside a listed name: exit 1" $? 1
t_is "  and that name is not examined" "$(jq .total.files o.json)" 0
t_ok "  but named" grep -qF "skipping a listed name that starts 'f': it holds a NUL byte" e

# ---- every command: --version, -V, help CMD ----
cmds=$(pc --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
ver=$(pc --version)
for c in $cmds; do
	t_is "$c --version" "$(pc $c --version 2>&1)" "$ver"
	t_is "$c -V" "$(pc $c -V 2>&1)" "$ver"
	pc $c --help >h1 2>&1; pc help $c >h2 2>&1; rc=$?
	t_is "help $c exits 0" "$rc" 0
	t_ok "help $c is $c --help" cmp -s h1 h2
done
pc help nosuch >o 2>e; t_is "help of no command: usage error" $? 2

# ---- the man pages list exactly the tables' options ----
man_opts() {	# the option words of a man page's OPTIONS section's tags
	awk '/^\.SH /{ on = ($2 == "OPTIONS") } on && /^\.T[PQ]/ { tag = 1; next }
	     on && tag { print; tag = 0 }' "$1" | sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
		grep -oE '(^|[] ,"(|[])--?[A-Za-z0-9][A-Za-z0-9-]*' | sed 's/^[^-]*//' |
		grep -E '^--|^-.$' | sort -u
}
for c in $cmds; do
	pc --list-options "$c" >lo 2>/dev/null || { t_skip "man page of $c" "$c has no option table yet"; continue; }
	tr ' ' '\n' <lo | grep -E '^-' | sort -u >want
	m=$MAN/pagecache-$c.1; [ -e "$m" ] || m=$MAN/pagecache-$c.8	# the daemon's is in section 8
	man_opts "$m" >got
	t_ok "$(basename "$m") lists exactly $c's options" cmp -s want got
	cmp -s want got || diff want got | sed 's/^/# /' >&2
done

# ---- completions ----
pc --completion bash >comp.bash; t_is "--completion bash" $? 0
comp() {	# comp WORD...: what bash completes the last word to
	bash -c '. ./comp.bash; complete -p pagecache >/dev/null || exit 3
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _pagecache; printf "%s\n" "${COMPREPLY[@]}"' \
		comp "$@" 2>/dev/null
}
t_is "bash: complete -p names the function" "$(bash -c '. ./comp.bash; complete -p pagecache')" \
	"complete -F _pagecache pagecache"
t_ok "bash: commands" grep -qx stat <(comp pagecache st)
t_is "bash: stat --ra" "$(comp pagecache stat --ra | sort | tr '\n' ' ')" "--range --raw "
t_is "bash: warm --engine" "$(comp pagecache warm --engine '' | sort | tr '\n' ' ')" "auto threads uring "
t_ok "bash: lock -P takes a file" grep -qx list0 <(comp pagecache lock -P lis)
t_ok "bash: --pid takes a process" grep -qx "$$" <(comp pagecache stat --pid '')
t_ok "bash: help CMD" grep -qx restore <(comp pagecache help res)
t_ok "bash: tune's tunable" grep -qx swap <(comp pagecache tune '')
t_is "bash: evict -o offers its columns" "$(comp pagecache evict -o '' | tr '\n' ' ')" "BEFORE AFTER TOTAL FILE WHY "
# names are data, never code: compgen -W would run $(...) in a cgroup's name
t_is "bash: a cgroup named \$(touch ...) is offered whole" "$(bash -c '. ./comp.bash
	_pagecache_cgroups() { printf "%s\0" "/\$(touch\${IFS}PWNED_BY_CGROUP)" /ok; }
	COMP_WORDS=(pagecache stat --cgroup ""); COMP_CWORD=3; _pagecache; printf "%s\n" "${COMPREPLY[@]}"' 2>/dev/null)" \
	"/\$(touch\${IFS}PWNED_BY_CGROUP)
/ok"
t_ok "  and not run" test ! -e PWNED_BY_CGROUP
bash -c '. ./comp.bash; _pagecache_cgroups() { printf "%s\0" "/\$(touch\${IFS}PWNED_BY_CGROUP)"; }
	COMP_WORDS=(pagecache cgroups --root ""); COMP_CWORD=3; _pagecache' 2>/dev/null
t_ok "  nor by cgroups --root" test ! -e PWNED_BY_CGROUP
mkdir -p cdir && : >'cdir/sp ace' && : >'cdir/*' && : >'cdir/$(touch PWNED_BY_FILE)'
t_is "bash: file names stay whole (no splitting, no globbing)" "$(comp pagecache stat cdir/ | sort)" \
	"cdir/\$(touch PWNED_BY_FILE)
cdir/*
cdir/sp ace"
t_ok "  and are not run" test ! -e PWNED_BY_FILE
t_is "bash: --json= offers its styles" "$(comp pagecache stat --json = '' | tr '\n' ' ')" "pretty short "
t_is "bash: --json=s" "$(comp pagecache warm --json = s)" "short"
t_is "bash: -o completes the last item of a list" "$(comp pagecache stat -o RES,C | tr '\n' ' ')" "RES,CACHED RES,CGROUPS "
t_is "bash: -o +item" "$(comp pagecache evict -o +wh)" "+WHY"
t_ok "bash: vmtouch's pagecache -t offers files" grep -qx 'cdir/sp ace' <(comp pagecache -t cdir/)
t_is "  not commands" "$(comp pagecache -t st)" ""
miss=
for c in $cmds; do
	pc --list-options "$c" >lo 2>/dev/null || continue
	offered=$(comp pagecache "$c" -)
	for o in $(tr ' ' '\n' <lo | grep -E '^--'); do
		grep -qx -- "$o" <<<"$offered" || miss+=" $c:$o"
	done
done
t_is "bash: every long option of every table is offered" "$miss" ""
B=$(dirname "$PAGECACHE")
if [ -f "$B/completion/pagecache" ] && [ "$B/completion/pagecache" -nt "$PAGECACHE" ]; then
	t_ok "make's \$(B)/completion/pagecache is the generated script" cmp -s comp.bash "$B/completion/pagecache"
else
	t_skip "make's \$(B)/completion/pagecache" "not built next to $PAGECACHE (make completion)"
fi
if t_have zsh; then
	pc --completion zsh >_pagecache
	t_ok "zsh: the script parses" zsh -n _pagecache
	zcomp() {	# what _pagecache hands to _arguments / _describe for WORD...
		zsh -f -c '_arguments() { print -rl -- "$@"; }
			_describe() { print -rl -- "${(@P)${@[-1]}}"; }
			words=("$@"); CURRENT=$#; source ./_pagecache' zcomp "$@" 2>&1
	}
	t_ok "zsh: commands" grep -q '^stat:' <(zcomp pagecache '')
	t_ok "zsh: stat's -p/--range" grep -qF -- '--range[' <(zcomp pagecache stat '')
	t_ok "zsh: lock's --pidfile takes a file" grep -q -- '--pidfile\[.*:FILE:_files' <(zcomp pagecache lock '')
	miss=
	for c in $cmds; do
		pc --list-options "$c" >lo 2>/dev/null || continue
		offered=$(zcomp pagecache "$c" '')
		for o in $(tr ' ' '\n' <lo | grep -E '^-'); do
			grep -qF -- "$o[" <<<"$offered" || grep -qF -- "$o=[" <<<"$offered" || miss+=" $c:$o"
		done
	done
	t_is "zsh: every option of every table is offered" "$miss" ""
else
	t_skip "zsh completion" "$T_WHY"
fi

# ---- the progress line ----
mkfile slow 2048
if t_have script; then
	drop slow
	TERM=xterm script -qec "'$PAGECACHE' warm --chunk 64k --rate 1M slow" /dev/null >pty.out 2>&1
	t_ok "on a terminal: a percentage" grep -qE '[0-9]+% ' pty.out
	t_ok "  and an ETA" grep -q 'ETA [0-9]' pty.out
	drop slow	# one default chunk: paced in pieces, so the line moves (it sat at 0%)
	TERM=xterm script -qec "'$PAGECACHE' warm --rate 1M slow" /dev/null >pty.out 2>&1
	t_ok "  a file of one chunk at --rate 1M: a percentage between 0 and 100" \
		grep -aqE '(^|[^0-9])[1-9][0-9]?% ' pty.out
	drop slow
	TERM=dumb script -qec "'$PAGECACHE' warm --chunk 64k --rate 1M slow" /dev/null >pty.out 2>&1
	t_ok "TERM=dumb: no progress line" bash -c '! grep -q ETA pty.out'
else
	t_skip "the progress line on a terminal" "$T_WHY"
fi
drop slow
pc warm --chunk 64k --rate 1M slow >o 2>e
t_ok "stderr not a terminal: no progress line" bash -c '! grep -q ETA e'

t_done
