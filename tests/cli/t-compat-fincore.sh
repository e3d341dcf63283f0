#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The fincore personality beside util-linux fincore 2.38 on the same files:
# stdout, stderr and exit status compared byte for byte, case by case, as
# root and as a user. Where they differ, the difference is the one
# docs/compat.md lists (its fincore section), asserted as such here.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

if ! t_have fincore; then
	t_skip "fincore personality beside util-linux fincore" "$T_WHY"
	t_done; exit
fi
REAL=$(command -v fincore)
case $("$REAL" -V 2>/dev/null) in
*" 2.38"*) ;;
*)	t_skip "fincore personality beside util-linux fincore" \
		"$REAL is not util-linux 2.38 ($("$REAL" -V 2>&1 | head -1)): its output is another's"
	t_done; exit ;;
esac

# Both are run by the name fincore, through PATH, so that getopt's messages
# (which name argv[0] as given) can be compared too.
mkdir rb pb
ln -s "$REAL" rb/fincore
ln -s "$PAGECACHE" pb/fincore
real() { PATH=$T_DIR/rb:$PATH fincore "$@"; }
mine() { PATH=$T_DIR/pb:$PATH fincore "$@"; }
word() { "$PAGECACHE" fincore "$@"; }	# `pagecache fincore ARGS`: argv[0] is fincore

# run WHO OUT ARGS...: OUT holds the exit status, stdout and stderr
run() {
	local who=$1 out=$2
	shift 2
	"$who" "$@" >"$out.o" 2>"$out.e"
	{ echo "rc=$?"; cat "$out.o"; echo "-- stderr"; cat "$out.e"; } >"$out"
}
# differ A B: 0 when the same; else the difference on stderr, for prove
differ() {
	cmp -s "$1" "$2" && return 0
	diff "$1" "$2" | sed 's/^/#   /' >&2
	return 1
}
# same NAME ARGS...: both ways of invoking the personality print what fincore prints
same() {
	local name=$1
	shift
	run real r.out "$@"
	run mine p.out "$@"
	run word w.out "$@"
	t_ok "$name" differ r.out p.out
	t_ok "$name (pagecache fincore)" differ r.out w.out
}
# same_cached NAME ARGS...: as same, for output that counts pages: the
# machine's reclaimer may take a page between the two runs, so it is tried
# again (after the state is made again by remake) before it is called wrong
cmp_once() { remake; run real r.out "$@"; run mine p.out "$@"; cmp -s r.out p.out; }
same_cached() {
	local name=$1
	shift
	t_tries 3 cmp_once "$@"
	t_ok "$name (try $T_TRY)" differ r.out p.out
}

# the files: cold, partly cached, whole, empty, sparse ones big enough for
# M and G, odd names, a directory, a symlink, a device. (No T: fincore maps
# and asks mincore 128 MiB at a time, 40 s of system time for 3 TiB.)
head -c 100000 /dev/urandom >cold	# 25 pages of 4 KiB: 100K, 97.7K of size
sync cold
mkfile part 256
mkfile whole 40
: >empty
truncate -s 1M sparse1m
truncate -s 1500000000 sparse15g
mkfile "sp ace" 5
mkfile "é ü" 3
printf x >$'tab\tname'
mkdir dir
ln -s whole link
remake() {
	drop cold part whole
	cat part whole >/dev/null
	# pages 10-29 of part out: what is left is 44 of its 64
	dd if=part of=/dev/null bs="$PS" skip=10 count=20 iflag=nocache status=none
}
remake
FILES=(cold part whole empty sparse1m sparse15g "sp ace" "é ü" $'tab\tname' dir link /dev/null)

same_cached "default table, every kind of file" "${FILES[@]}"
same_cached "a missing file among them: named, the rest shown, exit 1" cold missing whole
same_cached "-J: fincore's JSON" -J "${FILES[@]}"
same_cached "-b: bytes" -b "${FILES[@]}"
same_cached "-n: no header" -n cold part
same_cached "-r: raw, names escaped" -r "${FILES[@]}"
same_cached "-Jb: numbers in JSON" -Jb cold part sparse15g "sp ace"
same_cached "-rn -b" -rn -b cold part
same_cached "-J -n" -J -n part
same_cached "long options" --json --bytes --noheadings --raw part
for col in PAGES SIZE FILE RES; do
	same_cached "-o $col alone" -o "$col" cold part
	same_cached "-o $col -J" -o "$col" -J part "é ü"
	same_cached "-o $col -J -b" -o "$col" -J -b part
done
same_cached "-o +LIST appends" -o +RES,PAGES part
same_cached "-o in another order, lower case" -o file,pages,res,size part
same_cached "--output=LIST" --output=PAGES,FILE part
same_cached "the last -o counts" -o SIZE -o PAGES part
same_cached "options after the files (permutation)" part -b -o PAGES,FILE -r
same_cached "-- ends options" -b -- part -n
same_cached "no files but a directory: an empty table" dir
same_cached "only a missing file: exit 1" missing
same_cached "-J with only a missing file" -J missing

same "unknown column: named from there on, exit 1" -o PAGES,NOPE,FILE part
same "a trailing comma: an unknown column" -o PAGES, part
same "empty -o: exit 1, silent" -o '' part
same "-o +: exit 1, silent" -o + part
same "more than 8 columns: exit 1, silent" -o RES,RES,RES,RES,RES,RES,RES,RES,RES part
same "no file: said, exit 1" -b
same "no arguments" 
same "an unknown option" -x part
same "an unknown long option" --bogus part
same "-o without its list" -o
same "an abbreviation of a long option (--js)" --js part
same "an argument to --json" --json=1 part
if [ -S /dev/log ]; then
	same "a socket: failed to open" /dev/log
else
	t_skip "a socket: failed to open" "no /dev/log socket here"
fi

# stdout full, and stdout closed early (fincore dies of SIGPIPE)
t_is "a full stdout: write error, exit 1" "$(mine part 2>&1 >/dev/full; echo "rc=$?")" \
	"$(real part 2>&1 >/dev/full; echo "rc=$?")"
# a pipe with no reader left, made so without a race: a FIFO's reader closed
mkfifo gone
exec 5<>gone 6>gone 5<&-
t_is "a reader gone: SIGPIPE, as fincore" "$(mine part >&6 2>&1; echo "rc=$?")" \
	"$(real part >&6 2>&1; echo "rc=$?")"
exec 6>&-

# -h: fincore's usage, but it names our manual page, which lists the differences
run real r.out --help
run mine p.out --help
sed -i 's/see fincore(1)/see pagecache-fincore(1)/' r.out
t_ok "--help: fincore's, naming pagecache-fincore(1)" differ r.out p.out
run mine p.out -h part
t_ok "-h: the same usage" differ r.out p.out
# -V: not util-linux's version, which would be a false claim
mine -V >p.out
t_ok "-V says pagecache" grep -q "^fincore from pagecache .*util-linux fincore 2.38" p.out

# A FIFO: with a writer, both show it as an empty file
mkfifo fifo
exec 3<>fifo
same "a FIFO with a writer: a row of zeros" fifo
exec 3<&-
# with none, fincore blocks in open(2) for ever; the personality does not
timeout 2 "$REAL" fifo >/dev/null 2>&1
t_is "a FIFO with no writer: util-linux fincore hangs" "$?" 124
run mine f.out fifo
t_ok "a FIFO with no writer: the personality shows the same row" differ r.out f.out
# a file with a size that cannot be mapped (sysfs): fincore fails in mmap
sysf=/sys/kernel/mm/transparent_hugepage/enabled
if [ -r "$sysf" ] && [ "$(stat -c %s "$sysf")" -gt 0 ]; then
	run real r.out "$sysf"
	run mine p.out "$sysf"
	t_ok "a sysfs file: util-linux fincore fails to map it" grep -q "failed to do mmap" r.out
	if [ "${PC_CHECK_PASS:-}" = nocachestat ]; then
		# no cachestat: lib maps the file for mincore, as fincore does
		t_is "a sysfs file, no cachestat: it fails as fincore does" \
			"$(mine -rn "$sysf" 2>&1; echo "rc=$?")" \
			"fincore: failed to do mincore: $sysf: No such device
rc=1"
	else
		t_is "a sysfs file: the personality shows no page cached" \
			"$(mine -rn -o RES,PAGES "$sysf"; echo "rc=$?")" "$(printf '0B 0\nrc=0')"
	fi
else
	t_skip "a sysfs file" "$sysf is not here"
fi

# sizes fincore would take long to count: its rounding, on its own
truncate -s 3T sparse3t
truncate -s $((5 * 1024 ** 4 + 52 * 1024 ** 3)) sparse5t
t_is "sizes in T, rounded as util-linux rounds" "$(mine -rn -o SIZE sparse3t sparse5t)" "$(printf '3T\n5.1T')"
rm sparse3t sparse5t

# Residency afterwards: the personality reads nothing
drop cold
mine cold part whole >/dev/null
t_is "the personality leaves a cold file cold" "$(cached_pages cold)" 0

# As a user: root's 0644 files are ones the kernel fakes residency for
if t_cap setuid && t_cap setgid && t_have setpriv; then
	chmod 755 "$T_DIR" rb pb
	as_nobody true
	mkdir ub
	ln -s "$T_DIR/.pagecache-nobody" ub/fincore
	ureal() { as_nobody env PATH="$T_DIR/rb:$PATH" fincore "$@"; }
	umine() { as_nobody env PATH="$T_DIR/ub:$PATH" fincore "$@"; }
	chmod 644 cold part whole
	mkfile mine.dat 20
	chown 65534:65534 mine.dat
	mkfile secret 4
	chmod 600 secret
	drop cold mine.dat
	cat mine.dat >/dev/null

	# the lie: fincore says a cold file is all in memory
	t_is "as a user: util-linux fincore says cold is all cached (the fake)" \
		"$(ureal -rn -o PAGES cold)" 25
	run umine u.out cold
	t_is "as a user: the personality says unknown" \
		"$(umine -rn -o PAGES,RES,SIZE,FILE cold 2>/dev/null)" "unknown unknown 97.7K cold"
	t_ok "as a user: and says why, on stderr" \
		grep -q "^fincore: PAGES and RES are unknown for files you may not write" u.out
	t_is "as a user: said once for several files" \
		"$(umine cold part whole 2>&1 >/dev/null | grep -c unknown)" 1
	t_is "as a user: exit 0 (the files were fine)" "$(umine cold >/dev/null 2>&1; echo $?)" 0
	t_is "as a user: -J gives null" \
		"$(umine -J cold 2>/dev/null | jq -c '.fincore[0]')" \
		'{"res":null,"pages":null,"size":"97.7K","file":"cold"}'
	t_is "as a user: -Jb gives null, size a number" \
		"$(umine -Jb cold 2>/dev/null | jq -c '.fincore[0]')" \
		'{"res":null,"pages":null,"size":100000,"file":"cold"}'
	t_is "as a user: the table keeps fincore's layout" \
		"$(umine cold mine.dat 2>/dev/null)" \
		"$(printf '    RES   PAGES  SIZE FILE\nunknown unknown 97.7K cold\n    20K       5   20K mine.dat')"
	# where the kernel tells the truth, both say the same
	run ureal r.out mine.dat secret
	run umine p.out mine.dat secret
	t_ok "as a user: own file and an unreadable one, as fincore" differ r.out p.out
	run ureal r.out -J -b mine.dat
	run umine p.out -J -b mine.dat
	t_ok "as a user: own file in JSON, as fincore" differ r.out p.out
	t_is "as a user: the cold file stays cold" "$(cached_pages cold)" 0
else
	t_skip "as a user" "$T_WHY (it runs as nobody)"
fi

t_done
