#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Bad input gets a clear error, the right exit code, and loses nothing.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

mkdir -p tree/deep
mkfile tree/f 8
mkfifo tree/fifo
mkfifo lonely-fifo
ln -s . tree/loop
ln -s nowhere tree/dangling
ln -s a tree/ab; ln -s ab tree/a   # a two-link loop

# usage errors: exit 2
pc nosuchverb >o 2>e; t_is "unknown verb exits 2" $? 2
t_ok "unknown verb is named" grep -q "'nosuchverb' is not a command" e
pc >o 2>e; t_is "no verb exits 2" $? 2
pc stat --nosuch tree >o 2>e; t_is "unknown option exits 2" $? 2
t_ok "unknown option is named" grep -q -- "--nosuch" e
pc stat >o 2>e; t_is "no PATH exits 2" $? 2
pc warm --max-mem 12q tree >o 2>e; t_is "bad size exits 2" $? 2
t_ok "bad size is quoted" grep -q "'12q'" e
pc stat --json --range x-y tree >o.json 2>e; t_is "bad range exits 2" $? 2
t_ok "usage error under --json is JSON" jq -e '.usage.error' o.json
pc stat -0 tree >o 2>e; t_is "-0 without --batch exits 2" $? 2
# procfs and sysfs hold interfaces, not data: never opened, a read can act
pc stat /proc/version >o 2>e; t_is "a procfs file named: exit 1" $? 1
t_ok "said why" grep -q "'/proc/version': on a filesystem of kernel interfaces" e
pc stat /proc/sys/vm >o 2>e; t_is "a procfs tree named: exit 1" $? 1
mkdir -p kif; ln -s /proc/version kif/v; mkfile kif/f 4
pc stat --json -f kif >o.json 2>e; t_is "-f (--follow) to a procfs file: skipped, exit 0" $? 0
t_is "only the data file is seen" "$(jq '.total.files' o.json)" 1

# a rate is a rate: not 0 in disguise ("no limit"), not infinity
for r in 1e-300 inf nan -5 0; do
	pc warm --rate "$r" tree >o 2>e; t_is "--rate $r exits 2" $? 2
done
t_ok "and says what a rate is" grep -q "from 1 byte/s up" e
pc warm -q --rate 0.5 tree >o 2>e; t_is "--rate 0.5 (MiB/s) is a rate" $? 0

# help teaches
for v in stat warm evict lock; do
	pc $v --help >h.txt; rc=$?
	t_ok "$v --help exits 0 and has examples" test $rc = 0 -a -n "$(grep -i example h.txt)"
done
pc --help | grep -q "Commands:"; t_is "pagecache --help lists commands" $? 0
pc --version | grep -q '^pagecache [0-9]'; t_is "--version" $? 0

# missing paths: exit 1, named, the rest still done
pc stat --json tree/f missing >o.json 2>e; t_is "a missing path exits 1" $? 1
t_ok "the missing path is named on stderr" grep -q "cannot open 'missing': No such file" e
t_is "the missing path is in JSON errors" "$(jq -r '.errors[0].path' o.json)" missing
t_is "the other file is still reported" "$(jq -r '.total.files' o.json)" 1
t_is "the failure is counted" "$(jq -r '.total.failures' o.json)" 1

# FIFOs, sockets, devices: a tree walk never opens them (a blocking open would hang)
timeout 20 "$PAGECACHE" stat tree >o 2>e; rc=$?
t_is "a tree with a FIFO and symlinks does not hang, exits 0" "$rc" 0
t_ok "special files are counted as skipped" grep -q "Skipped: 1 special, 4 symlinks" o
timeout 20 "$PAGECACHE" stat lonely-fifo >o 2>e; rc=$?
t_is "a FIFO named on the command line is an error, not a hang" "$rc" 1
t_ok "and the message says why" grep -q "not a regular file" e
timeout 20 "$PAGECACHE" stat /dev/null >o 2>e; t_is "a character device is refused" $? 1
blk=$(find /dev -maxdepth 1 -type b 2>/dev/null | head -n1)
if [ -n "$blk" ]; then
	timeout 20 "$PAGECACHE" stat "$blk" >o 2>e; rc=$?
	t_is "a block device named on the command line is refused" "$rc" 1
	t_ok "unopened, and the message says why" grep -q "'$blk': not a regular file or directory" e
else
	t_skip "a block device is refused" "no block device in /dev"
fi

# symlink loops under -f (--follow): terminate, say so
timeout 20 "$PAGECACHE" stat -f tree >o 2>e; rc=$?
t_is "-f over loops terminates; dangling/looping links are failures" "$rc" 1
t_ok "the directory loop is reported" grep -q "already visited" e
t_ok "the two-link loop is named" grep -q "symbolic link loop" e
t_ok "the dangling link is named" grep -q "'tree/dangling': No such file" e

# unreadable directories
if t_cap setuid && t_cap setgid && t_have setpriv; then
	mkdir -p tree2/secret; mkfile tree2/ok 4; mkfile tree2/secret/s 4
	chmod 700 tree2/secret; chmod 755 . tree2
	nobody_pc stat tree2 >o 2>e; rc=$?
	t_is "an unreadable directory exits 1" "$rc" 1
	t_ok "and is named" grep -q "cannot open 'tree2/secret': Permission denied" e
	t_ok "the readable part is still counted" grep -q "Files: 1" o
else
	t_skip "unreadable directory" "$T_WHY (the check runs as nobody)"
fi

# a closed stdout is normal (EPIPE), not an error spew
for i in $(seq 300); do mkfile tree/deep/f$i 1; done; pc stat -v tree 2>e | head -c 1 >/dev/null; t_is "EPIPE on stdout is quiet" "$(cat e)" ""

# an unreadable path list is a named failure (exit 1), JSON stays JSON
pc stat --json --batch no-such-list >o.json 2>e; t_is "a missing --batch list exits 1" $? 1
t_is "and is in the JSON errors" "$(jq -r '.errors[0].path' o.json)" no-such-list

# bad fault spec is refused, not ignored
PAGECACHE_FAULT=bogus pc stat tree >o 2>e; t_is "a bad PAGECACHE_FAULT exits 2" $? 2
# ...but never read where the kernel marked the run secure (AT_SECURE): a
# copy with a file capability, run by nobody, who must not inject faults
# into a program more privileged than it is
if t_cap setfcap && t_cap setuid && t_cap setgid && t_have setcap setpriv; then
	mkdir -m 755 fcap && cp "$PAGECACHE" fcap/pc && cp "$PAGECACHE" fcap/plain &&
		chmod 755 "$T_DIR" fcap/pc fcap/plain
	if setcap cap_dac_read_search+ep fcap/pc 2>setcap.err; then
		nb() { PAGECACHE_FAULT=bogus setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all "$@" >o 2>e; }
		nb fcap/plain --version
		t_is "nobody's PAGECACHE_FAULT=bogus, no capability: exit 2 (read)" "$?" 2
		nb fcap/pc --version
		t_is "  with a file capability (AT_SECURE): not read, exit 0" "$?:$(head -c 200 e)" "0:"
		# PAGECACHE_TRACE_RING sizes what a copy with CAP_IPC_LOCK would lock
		nbr() { PAGECACHE_TRACE_RING=3 setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all "$@" >o 2>e; }
		nbr fcap/plain record -o "$T_DIR/r.snap" -- true
		t_is "nobody's PAGECACHE_TRACE_RING=3, no capability: exit 2 (read)" \
			"$?:$(grep -c PAGECACHE_TRACE_RING e)" 2:1
		nbr fcap/pc record -o "$T_DIR/r.snap" -- true
		t_is "  with a file capability (AT_SECURE): not read" "$(grep -c PAGECACHE_TRACE_RING e)" 0
	else
		t_skip "PAGECACHE_FAULT under AT_SECURE" "setcap failed here: $(head -c 100 setcap.err)"
	fi
else
	t_skip "PAGECACHE_FAULT under AT_SECURE" "${T_WHY:-no setcap}"
fi


# a word that is not a command is escaped like any name; one that names a
# file is vmtouch's line (stat of it), its name only a name
: >"a'\$(touch PWNED)'b"
pc "a'\$(touch PWNED)'b" >o 2>e; rc=$?
t_is "a file named like a command substitution: its stat, as vmtouch FILE (exit 0)" "$rc $(grep -c 'Files: 1' o)" "0 1"
t_ok "and nothing is suggested that would run what its name holds" sh -c "! grep -q 'pagecache stat' e"
t_ok "nor run" test ! -e PWNED
pc "$(printf 'x\033[31mRED\377')" >o 2>e
t_ok "an unknown verb's escape sequence and invalid byte come out escaped" \
	sh -c "grep -qF \"'x\\\\x1b[31mRED\\\\xff' is not a command\" e && ! grep -q \$(printf '\\033') e"
pc "$(printf 'x\033')" --json >o 2>e; rc=$?
t_is "with --json, an unknown verb is a JSON usage error" "$rc $(jq -r '.usage.error' o)" "2 not a command"
pc help "$(printf 'y\033')" >o 2>e; rc=$?
t_ok "help with an unknown command escapes it too (exit 2)" \
	sh -c "[ $rc = 2 ] && grep -qF \"'y\\\\x1b' is not a command\" e"
: >plainfile
pc plainfile >o 2>e
t_ok "a plain file name is vmtouch's stat of it" grep -q "Files: 1" o

# bidirectional controls: "evil<U+202E>fdp.exe" would show as "evilexe.pdf" (found by the review in top's rows)
mkdir -p bidi && printf x >"bidi/$(printf 'evil\342\200\256fdp.exe')" && printf y >"bidi/$(printf 'a\342\201\246b')"
pc stat -v bidi >bidi.out 2>&1
t_ok "people see U+202E as its bytes" grep -qF 'evil\xe2\x80\xaefdp.exe' bidi.out
t_ok "and U+2066 too" grep -qF 'a\xe2\x81\xa6b' bidi.out
t_ok "no raw bidi control reaches the table" sh -c "! grep -q \"\$(printf '\342\200\256')\" bidi.out"

t_done
