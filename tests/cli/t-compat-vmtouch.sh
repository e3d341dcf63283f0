#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The vmtouch personality beside Debian's vmtouch 1.3.1, on the same tree,
# dropped before each run: stdout (Elapsed masked), stderr, exit status and
# the residency afterwards, case by case, through a symlink named vmtouch
# and as `pagecache vmtouch`; as root and as nobody. What differs on
# purpose (docs/compat.md, vmtouch) is asserted as the difference.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

if ! t_have vmtouch fincore; then
	t_skip "vmtouch compatibility" "$T_WHY"
	t_done; exit
fi
if ! t_root; then	# fincore, the ground truth after each run, is true as root only
	t_skip "vmtouch compatibility" "needs root: the residency afterwards is read with fincore"
	t_done; exit
fi
mkdir rbin bin nbin
ln -s "$(command -v vmtouch)" rbin/vmtouch
ln -s "$PAGECACHE" bin/vmtouch
as_nobody true && ln -s "$T_DIR/.pagecache-nobody" nbin/vmtouch

# the tree: files, a hardlink, symlinks (to a file, to a directory, a loop),
# an empty file, a FIFO
mkdir -p tree/sub
mkfile tree/a 100
head -c 5000 /dev/urandom >tree/sub/b
mkfile tree/sub/c.log 12
: >tree/empty
ln tree/a tree/hard
ln -s a tree/lnk
ln -s sub tree/dirlnk
ln -s .. tree/sub/loop
mkfifo tree/fifo
sync
FILES=(tree/a tree/sub/b tree/sub/c.log)
printf 'tree/a\ntree/sub\n' >list
printf 'tree/a\0tree/sub/b\0' >list0

# run WHO OUT ARGS...: real, sym (a symlink named vmtouch), word (pagecache
# vmtouch); nobody-real, nobody-sym as uid 65534. OUT.all: the exit
# status, stdout, stderr and each file's cached pages afterwards.
run() {
	local who=$1 out=$2 rc f
	shift 2
	case $who in
	real) PATH="$T_DIR/rbin:$PATH" vmtouch "$@" ;;
	sym) PATH="$T_DIR/bin:$PATH" vmtouch "$@" ;;
	word) "$PAGECACHE" vmtouch "$@" ;;
	nobody-real) as_nobody env PATH="$T_DIR/rbin:$PATH" vmtouch "$@" ;;
	nobody-sym) as_nobody env PATH="$T_DIR/nbin:$PATH" vmtouch "$@" ;;
	esac <"${STDIN:-/dev/null}" >"$out.out" 2>"$out.err"
	rc=$?
	sed -i 's/Elapsed: .*/Elapsed: X/' "$out.out"
	{
		echo "exit $rc"
		cat "$out.out"
		echo "-- stderr"
		cat "$out.err"
		echo "-- cached after"
		for f in "${FILES[@]}"; do echo "$f $(cached_pages "$f")"; done
	} >"$out.all"
}

prep() { drop "${FILES[@]}"; ${PREP:-:}; }

# same NAME ARGS...: the personality, both ways, does what vmtouch does
same() {
	local name=$1
	shift
	prep; run real real "$@"
	prep; run sym sym "$@"
	prep; run word word "$@"
	t_is "$name" "$(cat sym.all)" "$(cat real.all)"
	t_is "$name (pagecache vmtouch)" "$(cat word.all)" "$(cat real.all)"
}

# as nobody, on files nobody owns (true residency for both)
same_nobody() {
	local name=$1
	shift
	prep; run nobody-real real "$@"
	prep; run nobody-sym sym "$@"
	t_is "as nobody: $name" "$(cat sym.all)" "$(cat real.all)"
}

warm3() { dd if=tree/a bs=4096 count=3 status=none >/dev/null; }
warm_some() { cat tree/sub/b >/dev/null; dd if=tree/a bs=4096 skip=5 count=4 status=none >/dev/null; }

# ---- what is cached, and the summary --------------------------------------
same "a tree, cold" tree
PREP=warm_some same "a tree, partly cached" tree
PREP=warm_some same "-v: each file's chart" -v tree
PREP=warm3 same "-v of one file, three pages in" -v tree/a
same "-q prints nothing" -q tree
same "an option after the path (GNU permutation)" tree -v
same "-- ends the options" -- tree
same "a trailing slash" tree/
same "two paths" tree/sub tree/a

# ---- touch, evict -----------------------------------------------------------
same "-t reads every page" -t tree
same "-tv: charts before and after" -tv tree
same "-tq" -tq tree
PREP=warm_some same "-e drops every page" -e tree
PREP=warm_some same "-ev says Evicting" -ev tree
same "-eq" -eq tree

# ---- links, hardlinks, filesystems ------------------------------------------
same "a symlink named: not followed" tree/lnk
same "a directory symlink named: not followed" tree/dirlnk
same "-f follows named symlinks" -f tree/lnk tree/dirlnk
same "-f in a tree: the loop's directory seen already" -f tree
same "-fh: the loop detected" -fh tree
same "-h counts every hardlink" -h tree
same "-t -h touches every hardlink" -th tree
same "-F: not into another filesystem" -F tree /proc

# ---- ranges, sizes, patterns --------------------------------------------------
PREP=warm_some same "-p 4k-16k" -v -p 4k-16k tree/a
same "-p 8k: the first 8k" -p 8k tree
same "-p 12k-: from 12k" -v -p 12k- tree/a
same "-p past the end: skipped with a warning" -p 200k-300k tree
same "-p with an unaligned start" -p 5000-9000 tree/a
same "-m 10k: larger files skipped" -m 10k tree
same "-m 0.5M" -m 0.5M tree
same "-i sub" -i sub tree
same "-i '*.log'" -i '*.log' tree
same "-I '*.log'" -I '*.log' tree
same "-I and -i together" -I 'b' -i 'c*' tree
same "-i matches a named path" -i tree tree

# ---- lists ------------------------------------------------------------------
same "-b list" -b list
same "-b list and paths" -b list tree/sub/b
same "-0 -b list" -0 -b list0
STDIN=list same "-b - reads stdin" -b - -v
same "-b of a missing list" -b nolist tree/a

# ---- what fails ---------------------------------------------------------------
same "a missing path among others" missing tree/a
same "a FIFO is skipped, not opened" tree/fifo
same "an empty file" tree/empty
same "a character device" /dev/null
same "a bad option: usage, exit 1" -z tree
same "no paths: usage, exit 1"
same "an option without its argument" tree -p
same "-t and -e" -te tree
same "-e and -l" -el tree
same "-l and -L" -lL tree
same "-d without -l" -d tree
same "-w without -d" -w tree
same "-P without -l" -P pid tree
same "-q and -v" -qv tree
same "a bad size" -m 5x tree
same "a bad multiplier" -m 5q tree
same "a range with two hyphens" -p 1-2-3 tree
same "a range out of order" -p 8k-4k tree

# ---- lock: -l, -L, -d, -w, -P ---------------------------------------------------
# lockpid PIDFILE: the daemon's pid once it wrote its pidfile
lockpid() { t_wait 10 test -s "$1" && cat "$1"; }
locked_kb() { awk '/^VmLck/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
for how in -l -L; do
	for who in real sym; do
		drop "${FILES[@]}"
		run "$who" "$who" -dw "$how" -P "$T_DIR/$who.pid" missing tree/a
		pid=$(lockpid "$who.pid")
		T_CLEANUP+=("t_kill ${pid:-}")
		echo "pages $(cached_pages tree/a) locked $(( $(locked_kb "${pid:-0}") >= 100 ))" >>"$who.all"
		kill "${pid:-}" 2>/dev/null
		t_wait 10 t_gone "${pid:-0}"
		t_wait 10 test ! -e "$who.pid"
		echo "pidfile $(test -e "$who.pid" && echo left || echo removed)" >>"$who.all"
	done
	t_is "-dw $how -P: a missing path warned of, the rest locked, SIGTERM ends it" \
		"$(cat sym.all)" "$(cat real.all)"
	t_ok "-dw $how: it locked" grep -q "^pages 25 locked 1$" sym.all
done
drop "${FILES[@]}"
run sym sym -d -l -P "$T_DIR/d.pid" tree
pid=$(lockpid d.pid)
T_CLEANUP+=("t_kill ${pid:-}")
t_is "-dl: returns at once, quiet" "$(cat sym.out sym.err)" ""
t_wait 10 test "$(cached_pages tree/sub/c.log)" = 3
t_is "-dl: the daemon locked the tree" "$(cached_pages tree/a) $(cached_pages tree/sub/c.log)" "25 3"
kill -INT "${pid:-}" 2>/dev/null
t_ok "-dl: SIGINT ends it" t_wait 10 t_gone "${pid:-0}"
t_ok "-dl: its pidfile removed" t_wait 10 test ! -e d.pid

# ---- differences, on purpose (docs/compat.md) -----------------------------------
# -e of dirty pages: written back first, where vmtouch leaves them cached
for who in real sym; do
	head -c 1048576 /dev/urandom >"tree/dirty-$who"	# not synced: dirty
	PATH="$T_DIR/$([ $who = real ] && echo rbin || echo bin):$PATH" vmtouch -e "tree/dirty-$who" \
		>"$who.out" 2>"$who.err"
	echo "exit $? $(cached_pages "tree/dirty-$who")" >"$who.rc"
	sed -i 's/Elapsed: .*/Elapsed: X/' "$who.out"
done
echo "# vmtouch -e of a dirty file left $(cut -d' ' -f3 real.rc) of 256 pages cached"
t_is "-e of a dirty file: exit 0, nothing left cached" "$(cat sym.rc)" "exit 0 0"
t_is "-e of a dirty file: the summary as vmtouch's" "$(cat sym.out)" "$(sed 's/-real/-sym/' real.out)"
if t_have_cachestat; then	# what counts dirty pages
	t_is "-e of a dirty file: said on stderr" "$(cat sym.err)" \
		"vmtouch: wrote back 256 dirty pages of 1 file before evicting (vmtouch leaves dirty pages cached)"
else
	t_skip "-e of a dirty file: said on stderr" "no cachestat: dirty pages are written back uncounted"
fi
run sym sym -eq tree/dirty-sym
t_is "-eq: not said" "$(cat sym.err)" ""
rm -f tree/dirty-*

# a list that is not text: refused before anything is done (vmtouch walks its junk)
{ printf 'tree/a\n/\n'; head -c 100 /dev/zero; } >binlist
prep
run sym sym -t -b binlist
t_is "-b of a binary list: exit 1, nothing touched" "$(head -1 sym.all) $(cached_pages tree/a)" "exit 1 0"
t_is "-b of a binary list: why" "$(cat sym.err)" \
	"vmtouch: FATAL: binlist is not a list of paths: a NUL byte at offset 9 (-0 reads NUL-separated lists)"
prep; STDIN=binlist run sym sym -t -b - tree/a
t_is "-b - of binary input: refused the same" "$(head -1 sym.all) $(cached_pages tree/a) $(cat sym.err)" \
	"exit 1 0 vmtouch: FATAL: - is not a list of paths: a NUL byte at offset 9 (-0 reads NUL-separated lists)"

# a list's last line without a newline: vmtouch cuts its last byte (tree/sub/b -> tree/sub/)
printf 'tree/a\ntree/sub/b' >lastline
prep; run real real -b lastline
prep; run sym sym -b lastline
t_is "-b, last line without newline: vmtouch takes tree/sub/ (a directory)" \
	"$(grep -c Directories:.1 real.out)" 1
t_is "-b, last line without newline: the file named" "$(sed -n 1,3p sym.out)" \
	"           Files: 2
     Directories: 0
  Resident Pages: 0/27  0/108K  0%"

# a kernel interface file (sysfs): not mapped nor read
f=/sys/kernel/mm/transparent_hugepage/enabled
if [ -f "$f" ]; then
	run sym sym -t "$f"
	t_is "a sysfs file: skipped, said" "$(head -1 sym.all) $(cat sym.err)" \
		"exit 0 vmtouch: WARNING: not touching $f: a file of a kernel interface filesystem, not page cache"
else
	t_skip "a sysfs file" "$f is missing"
fi

# a name with a newline: escaped, it forges no line
mkdir nl && mkfile "nl/x
Files: 9" 4
run sym sym -v nl
t_is "-v: a name's control bytes escaped" "$(sed -n 1p sym.out)" 'nl/x\nFiles: 9'
rm -rf nl

# ---- as nobody ------------------------------------------------------------------
# root's 0644 files: mincore fakes "all resident" to a user who may not
# write them (vmtouch prints 100% of a cold tree); the personality leaves them
# out and says how many
prep; run nobody-real real tree
prep; run nobody-sym sym tree
echo "# vmtouch as nobody on a cold tree: $(grep Resident real.out)"
t_is "as nobody, root's files: not counted as resident" "$(grep Resident sym.out)" \
	"  Resident Pages: 0/0  0/0  "
t_is "as nobody, root's files: the rest as vmtouch's" "$(grep -v Resident sym.out)" \
	"$(grep -v Resident real.out)"
t_is "as nobody, root's files: said on stderr" "$(grep -v WARNING sym.err)" \
	"vmtouch: 3 files (30 pages) of unknown residency: the kernel shows this user no true residency of files it may not write (vmtouch prints them all resident); left out of Resident Pages"
prep; run nobody-sym sym -v tree/a
t_is "as nobody, -v: the chart says unknown" "$(sed -n 2p sym.out)" \
	"$(printf '\r[%s] ?/25\r[%s] ?/25' "$(printf '?%.0s' {1..25})" "$(printf '?%.0s' {1..25})")"
same_nobody "-t of root's files" -t tree
same_nobody "-e of root's files" -e tree
same_nobody "a missing path" -t missing tree/sub
prep; run nobody-real real -tv tree/a
prep; run nobody-sym sym -tv tree/a
q=$(printf '?%.0s' {1..25}) o=$(printf 'O%.0s' {1..25})
t_is "as nobody, -tv of root's file: unknown before, read after" "$(sed -n 2p sym.out)" \
	"$(printf '\r[%s] ?/25\r[%s] 25/25' "$q" "$o")"
t_is "as nobody, -tv of root's file: the rest as vmtouch's" "$(sed 3d sym.all | grep -v unknown)" \
	"$(sed 3d real.all)"

# -t of a range: the pages asked for, where vmtouch's page faults read ahead
# (the whole of a small file)
for who in real sym; do
	prep
	run "$who" "$who" -t -p 5000-9000 tree/a
done
echo "# vmtouch -t -p 5000-9000 of a cold 100K file left $(tail -3 real.all | head -1 | cut -d" " -f2) pages cached"
t_is "-t -p: the output as vmtouch's" "$(head -n -3 sym.all)" "$(head -n -3 real.all)"
t_is "-t -p 5000-9000: pages 1 and 2 read, no more" "$(cached_pages tree/a)" 2

# -dwl as nobody (within its RLIMIT_MEMLOCK), the pidfile in its own directory
mkdir nob && chown 65534:65534 nob
for who in real sym; do
	drop "${FILES[@]}"
	run "nobody-$who" "$who" -dwl -P "$T_DIR/nob/$who.pid" tree/a
	pid=$(lockpid "nob/$who.pid")
	T_CLEANUP+=("t_kill ${pid:-}")
	echo "pages $(cached_pages tree/a)" >>"$who.all"
	kill "${pid:-}" 2>/dev/null
	t_wait 10 t_gone "${pid:-0}"
	t_wait 10 test ! -e "nob/$who.pid"
	echo "pidfile $(test -e "nob/$who.pid" && echo left || echo removed)" >>"$who.all"
done
t_is "as nobody, -dwl -P: locks, SIGTERM ends it" "$(cat sym.all)" "$(cat real.all)"
t_ok "as nobody, -dwl: it locked" grep -q "^pages 25$" sym.all

# files nobody owns: true residency for both
mkdir own && cp tree/a tree/sub/b own/ && chown -R 65534:65534 own && sync
FILES=(own/a own/b)
warm_own() { dd if=own/a bs=4096 count=3 status=none >/dev/null; }
PREP=warm_own same_nobody "its own files" own
PREP=warm_own same_nobody "its own files, -v" -v own
same_nobody "its own files, -t" -t own
PREP=warm_own same_nobody "its own files, -e" -e own
t_done
