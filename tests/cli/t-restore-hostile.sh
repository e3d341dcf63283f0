#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# restore with a hostile snapshot or a hostile tree (issue 9): the snapshot
# is made with libpagecache's own writer (tests/unit/mksnap.c), or by hand
# where the writer refuses. Nothing outside the root is read, no link is
# followed, no FIFO is opened, nothing is opened before the whole snapshot
# has been read, the snapshot's own root is not taken without --root, and
# more files than RLIMIT_NOFILE restore whole.
. "$(dirname "$0")/lib.sh"
MKSNAP=${MKSNAP:-$(dirname "$PAGECACHE")/tests/mksnap}
[ -x "$MKSNAP" ] || { echo "Bail out! no mksnap at '$MKSNAP' (make builds it)"; exit 1; }
cd "$T_DIR" || exit 1
mk() { "$MKSNAP" "$@" || echo "# mksnap $* failed" >&2; }

mkdir -p root/d outside
mkfile root/d/f 64
mkfile outside/victim 64
ln -s ../outside root/via	# a link on the way out of the root
ln -s ../outside/victim root/d/last	# a link as the last component
mkfifo root/fifo
R=$T_DIR/root

# a FIFO "opened" shows: a writer blocked on it gets through and says so
fifo_watch() {
	rm -f opened
	( exec 3>"$R/fifo"; echo yes >"$T_DIR/opened" ) &
	WATCH=$!
	T_CLEANUP+=("kill $WATCH")
}
fifo_opened() {
	sleep 0.2
	kill "$WATCH" 2>/dev/null; wait "$WATCH" 2>/dev/null
	[ -e opened ] && echo opened || echo "not opened"
}

# 1. a link on the way and at the end: not followed, the victim not read
drop outside/victim root/d/f
mk -r "$R" s1.snap d/f via/victim d/last
pc restore --root "$R" --json s1.snap >s1.json 2>s1.err; rc=$?
t_is "links in a snapshot: exit 1 (skipped files)" "$rc" 1
t_is "the file beneath the root is restored" "$(cached_pages root/d/f)" 16
t_is "nothing outside the root was read" "$(cached_pages outside/victim)" 0
t_is "a link on the way is named" \
	"$(jq -r '.skipped[] | select(.path|endswith("via/victim")) | .reason' s1.json)" \
	"a symbolic link on the way or at the end (not followed)"
t_is "a link at the end is named" \
	"$(jq -r '.skipped[] | select(.path|endswith("d/last")) | .reason' s1.json)" \
	"a symbolic link on the way or at the end (not followed)"
# --allow-changed lifts none of it
drop outside/victim
pc restore --root "$R" --allow-changed s1.snap >/dev/null 2>&1
t_is "--allow-changed does not follow links either" "$(cached_pages outside/victim)" 0

# 2. a FIFO is never opened (a device the same way: tests/unit/test-beneath)
mk -r "$R" s2.snap fifo=0+1 d/f
fifo_watch
pc restore --root "$R" --json s2.snap >s2.json 2>s2.err; rc=$?
t_is "a FIFO in a snapshot is not opened" "$(fifo_opened)" "not opened"
t_is "and is said to be one" "$(jq -r '.skipped[0].reason' s2.json)" "now a FIFO (not opened)"
t_is "restore exits 1" "$rc" 1

# 2b. files of kernel interfaces (procfs, sysfs) are regular files, and a
# read of some acts: a snapshot of / cannot name them
mk s2b.snap proc/version=0+1/0+1 proc/sys/vm/page-cluster=0+1
pc restore --json s2b.snap >s2b.json 2>/dev/null
t_is "procfs files in a snapshot are not read" \
	"$(jq -r '[.skipped[].reason] | unique | join(",")' s2b.json)" \
	"on a filesystem of kernel interfaces (proc, sys, ...): not read"

# 3. nothing is opened before the whole snapshot is read: a corrupt tail
mk -r "$R" s3.snap fifo=0+1 d/f
head -c $(($(stat -c %s s3.snap) - 5)) s3.snap >s3cut.snap
fifo_watch
drop root/d/f
pc restore --root "$R" s3cut.snap >o 2>e; rc=$?
t_is "a truncated snapshot: exit 1" "$rc" 1
t_is "nothing opened from it, not even the files before the damage" "$(fifo_opened)" "not opened"
t_is "nothing read from it" "$(cached_pages root/d/f)" 0

# 4. the snapshot does not choose the root: it says where, the user confirms
mk -r "$R" s4.snap d/f
drop root/d/f
pc restore s4.snap >o 2>e; rc=$?
t_is "a snapshot taken beneath another root needs --root" "$rc" 1
t_ok "and says which root and how" grep -q "relative to '$R'.*--root" e
t_is "nothing read without it" "$(cached_pages root/d/f)" 0
pc restore --root "$R" --json s4.snap >s4.json 2>/dev/null; rc=$?
t_is "with --root it restores" "$rc" 0
t_is "the root is in the output" "$(jq -r .total.root s4.json)" "$R"
mk s5.snap "${T_DIR#/}/root/d/f"
pc restore s5.snap 2>/dev/null | tail -n 1 >o
t_ok "a snapshot of / restores beneath '/', and says so" grep -q "beneath '/'" o

# 5. a path twice, active pages that were not cached: refused whole
mk -R -r "$R" s6.snap d/f=0+2 d/f=0+2
drop root/d/f
pc restore --root "$R" s6.snap >o 2>e; rc=$?
t_is "a path listed twice: refused" "$rc" 1
t_ok "named" grep -q "listed twice" e
t_is "and nothing read" "$(cached_pages root/d/f)" 0
mkfile root/big 8192
drop root/big
mk -R -r "$R" s7.snap "big=0+2/0+2048"
pc restore --root "$R" --max-mem 8K s7.snap >o 2>e; rc=$?
t_is "active pages outside the cached ones: refused" "$rc" 1
t_ok "named" grep -q "not cached" e
t_ok "and not read past the budget (was 8 MiB for --max-mem 8K)" test "$(cached_pages root/big)" -le 2

# 6. more files than RLIMIT_NOFILE: all restored (no fd held per file)
mkdir -p root/many
for i in $(seq 0 299); do head -c 4096 /dev/urandom >root/many/f$i; done
sync
mk -r "$R" -n 300 s8.snap 'many/f%d'
for i in $(seq 0 299); do drop root/many/f$i; done
(ulimit -n 64; pc restore --root "$R" --json s8.snap >s8.json 2>s8.err); rc=$?
t_is "300 files under ulimit -n 64: exit 0" "$rc" 0
t_is "all 300 restored" "$(jq .total.files s8.json)" 300

# 7. show: a created time no clock can show is said, not a crash
mk -c $((1 << 62)) s11.snap "${T_DIR#/}/root/d/f"
pc show s11.snap >o 2>e; rc=$?
t_is "show of a snapshot made in the year 10^11: exit 0" "$rc" 0
t_ok "says the time is impossible" grep -q "an impossible time (4611686018427387904)" o

# 8. a row costs its fields, not a fixed record: 100,000 files listed in
# 100 MB of address space (the old 1.8 KB rows were cut at 32,768, silently)
mk -n 100000 s12.snap 'x/d%d/file'
if grep -q __asan_init "$PAGECACHE"; then	# ASan reserves terabytes of address space
	t_skip "show under ulimit -v" "an ASan build cannot run under an address-space limit"
else
	(ulimit -v 100000; pc show --json s12.snap >s12.json 2>e); rc=$?
	t_is "show of 100,000 files under ulimit -v 100M: exit 0" "$rc" 0
	t_is "every row is there" "$(jq '.files | length' s12.json)" 100000
	# and with too little memory: said, exit 1, never a crash (it aborted).
	# Rows stream, so show needs a few MB whatever the snapshot's size: the
	# limits climb from where the program cannot even load (exit 127) to
	# where it succeeds; every failure in between must be said, exit 1
	bad= fails=0
	for v in $(seq 3000 1000 40000); do
		(ulimit -v $v; pc show s12.snap >/dev/null 2>e); rc=$?
		[ "$rc" = 127 ] && continue
		[ "$rc" = 0 ] && break
		fails=$((fails + 1))
		[ "$rc" = 1 ] && grep -q "out of memory\|Cannot allocate memory" e || bad="$bad $v:$rc"
	done
	t_is "show with too little memory: exit 1 with the reason, at every limit tried" \
		"${bad:-none}, $([ "$fails" -gt 0 ] && echo some tried)" "none, some tried"
fi

# 8b. a snapshot of 300 missing files: 20 named on stderr, then a count;
# -v names every one, JSON lists every one
mk -n 300 s13.snap 'gone/f%d'
pc restore s13.snap >o 2>e
t_is "20 skipped files named, then one line" "$(wc -l <e)" 21
t_ok "that says how many more" grep -q "and 280 more files skipped" e
pc restore -v s13.snap >o 2>e
t_is "-v names all 300" "$(grep -c "skipping" e)" 300
pc restore --json s13.snap >s13.json 2>/dev/null
t_is "JSON lists all 300" "$(jq '.skipped | length' s13.json)" 300

# 9. restore follows no link, so snapshot records where files really are:
# a soname link named on the command line, a data directory that is a link
mkdir -p root/real
mkfile root/real/data 64
mkfile root/lib.so.0.1 64
ln -s real root/datalink
ln -s lib.so.0.1 root/lib.so.0
pc snapshot -o s9.snap --root "$R" "$R/datalink" "$R/lib.so.0" >/dev/null 2>&1
t_is "snapshot records the files' real paths" \
	"$(pc show --json s9.snap | jq -r '[.files[].path] | sort | join(" ")')" "lib.so.0.1 real/data"
drop root/real/data root/lib.so.0.1
pc restore --root "$R" s9.snap >o 2>e; rc=$?
t_is "and restore finds them (exit 0)" "$rc" 0
t_is "the data file is back" "$(cached_pages root/real/data)" 16
t_is "the library is back" "$(cached_pages root/lib.so.0.1)" 16
ln -s "$R" rootlink
pc snapshot -o s10.snap --root "$T_DIR/rootlink" "$T_DIR/rootlink/real" >/dev/null 2>&1
t_is "a --root that is a link is recorded as its target" "$(pc show --json s10.snap | jq -r .total.root)" "$R"

t_done
