#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# snapshot / show / diff / restore: the round trip against fincore's ground
# truth, stale and missing files, corrupt snapshots, ENOSPC, a memory cgroup.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

mkdir -p db/sub
for i in 1 2 3 4; do mkfile db/f$i 2048; done
mkfile db/sub/g 512
mkfile db/cold 1024
drop db/*/* db/*
# partial residency: pages 0-99 of f1, 200-299 of f2, all of sub/g
dd if=db/f1 of=/dev/null bs=$PS count=100 status=none
dd if=db/f2 of=/dev/null bs=$PS skip=200 count=100 status=none
cat db/sub/g >/dev/null
declare -A want
for f in db/f1 db/f2 db/f3 db/f4 db/sub/g db/cold; do want[$f]=$(cached_pages $f); done

pc snapshot -o s.snap --json db >snap.json; rc=$?
t_is "snapshot exits 0" "$rc" 0
t_is "snapshot JSON: written" "$(jq .total.written snap.json)" true
t_is "files with nothing cached are left out" "$(jq .total.uncached_files snap.json)" 3
t_ok "the snapshot is small" test "$(stat -c %s s.snap)" -lt 4096

pc show --json s.snap >show.json; rc=$?
t_is "show exits 0" "$rc" 0
t_is "show lists 3 files" "$(jq '.files | length' show.json)" 3
t_is "show: pages per file match what was cached" \
	"$(jq -r '[.files[] | "\(.path)=\(.pages)"] | join(" ")' show.json)" \
	"$(for f in db/f1 db/f2 db/sub/g; do printf '%s=%s ' "${T_DIR#/}/$f" "${want[$f]}"; done | sed 's/ $//')"
for k in path size pages runs active; do
	t_is "show: file key $k" "$(jq ".files[0] | has(\"$k\")" show.json)" true
done

# round trip: drop, restore, every snapshotted page back, few extra
drop db/*/* db/*
pc restore --json s.snap >rest.json; rc=$?
t_is "restore exits 0" "$rc" 0
for f in db/f1 db/f2 db/sub/g; do
	got=$(resident_pages $f)
	t_ok "restored $f: every page back (${want[$f]} wanted, $got cached)" test "$got" -ge "${want[$f]}"
	t_ok "restored $f: few extra" test "$got" -le $((${want[$f]} + 64))
done
t_is "files not in the snapshot stay cold" "$(cached_pages db/f3)" 0
t_is "restore JSON: resident == pages" "$(jq '.total.resident == .total.pages' rest.json)" true
for k in files pages cached_before read resident changed missing failures; do
	t_is "restore total has $k" "$(jq ".total | has(\"$k\")" rest.json)" true
done
# nothing but what a proactive reclaimer took since (it leaves shadow
# entries that cachestat counts as evicted; see resident_pages in lib.sh)
gone=$(pc stat --json db | jq .total.evicted)
pc restore --json s.snap >again.json
if t_have_cachestat; then
	t_ok "a second restore reads nothing ($(jq .total.read again.json) read, $gone reclaimed since)" \
		test "$(jq .total.read again.json)" -le "$gone"
else
	t_skip "a second restore reads nothing but what was reclaimed since" "no cachestat (what was reclaimed since is unknown)"
fi

# dry run reads nothing
drop db/*/* db/*
pc restore --dry-run --json s.snap >dry.json
t_is "--dry-run reads nothing" "$(cached_pages db/f1)" 0
t_is "--dry-run says what it would read" "$(jq '[.files[].to_read] | add' dry.json)" "$(jq .total.pages rest.json)"

# restore elsewhere: --root (a copy on the same filesystem: other inodes, by design)
pc restore s.snap >/dev/null 2>&1
pc snapshot -o rel.snap --root "$T_DIR/db" db >/dev/null
mkdir copy && cp -a db/. copy/ && drop copy/*/* copy/*
pc restore --root "$T_DIR/copy" --json rel.snap >copy.json 2>copy.err; rc=$?
t_is "a copy (cp -a keeps size and mtime) restores under --root" "$rc" 0
t_is "its pages come back" "$(resident_pages copy/f2 "${want[db/f2]}")" "${want[db/f2]}"
t_is "and no more files than the snapshot holds" "$(cached_pages copy/f3)" 0
t_is "the snapshot's files relative to --root" "$(jq -r '.files[0].path // empty' <(pc show --json rel.snap))" "f1"

# stale and missing files: skipped and listed, exit 1 (--strict: a file
# modified in place is restored without it, t-restore-inplace)
drop db/*/* db/*
touch db/f1
rm db/sub/g
pc restore --strict --json s.snap >stale.json 2>stale.err; rc=$?
t_is "stale or missing files make the exit 1" "$rc" 1
t_is "the changed file is listed" "$(jq -r '.skipped[] | select(.reason | test("modified")) | .path' stale.json)" "$T_DIR/db/f1"
t_is "the missing file is listed" "$(jq -r '.skipped[] | select(.reason == "missing") | .path' stale.json)" "$T_DIR/db/sub/g"
t_is "the changed file was not warmed" "$(cached_pages db/f1)" 0
t_is "the unchanged file was" "$(resident_pages db/f2 "${want[db/f2]}")" "${want[db/f2]}"
pc restore --allow-changed s.snap >/dev/null 2>&1
t_ok "--allow-changed warms it anyway" test "$(resident_pages db/f1)" -ge "${want[db/f1]}"

# a symlink or a directory where the file was: changed, never warmed
pc snapshot -o sym.snap db/f2 >/dev/null
mv db/f2 db/f2.real && ln -s f2.real db/f2
pc restore --allow-changed --json sym.snap >sym.json 2>/dev/null; rc=$?
t_is "a symlink in the file's place is skipped (exit 1)" "$rc" 1
t_is "as changed, not as a failure" "$(jq .total.changed,.total.failures sym.json | tr '\n' ' ')" "1 0 "
rm db/f2 && mkdir db/f2
pc restore --allow-changed --json sym.snap >dir.json 2>/dev/null
t_is "a directory in its place is not warmed, even with --allow-changed" "$(jq .total.read dir.json)" 0
rmdir db/f2 && mv db/f2.real db/f2

# --range: only that part is recorded
cat db/f4 >/dev/null
pc snapshot -o range.snap -p 0-64k db/f4 >/dev/null
t_is "snapshot -p 0-64k records 16 pages" "$(jq .total.pages <(pc show --json range.snap))" 16

# diff
cat db/f3 >/dev/null
pc snapshot -o s2.snap db >/dev/null 2>&1
pc diff --json s.snap s2.snap >d.json; rc=$?
t_is "diff exits 0" "$rc" 0
t_is "diff: sub/g removed" "$(jq -r '.files[] | select(.status=="removed") | .path' d.json)" "${T_DIR#/}/db/sub/g"
t_ok "diff: f3's pages count as gained" test "$(jq .total.gained d.json)" -ge "$(cached_pages db/f3)"
t_ok "diff: f3 added" jq -e "[.files[] | select(.status==\"added\") | .path] | index(\"${T_DIR#/}/db/f3\")" d.json

# corrupt snapshots: a clear error, exit 1, no crash, nothing done
drop db/*/* db/*
head -c 100 s.snap >trunc.snap
pc restore trunc.snap >o 2>e; rc=$?
t_is "a truncated snapshot exits 1" "$rc" 1
t_ok "and says so" grep -qE "snapshot 'trunc.snap': .*truncated" e
t_is "and restores nothing from it" "$(cached_pages db/f2)" 0
cp s.snap flip.snap; printf '\xff' | dd of=flip.snap bs=1 seek=60 conv=notrunc status=none
pc show flip.snap >o 2>e; t_is "a bit flip exits 1" $? 1
t_ok "with the reason" grep -qE "checksum|decompress|out of range" e
echo "not a snapshot at all" >junk.snap
pc show --json junk.snap >j.json 2>e; t_is "junk exits 1" $? 1
t_ok "JSON errors name it" jq -e '.errors[0].reason | test("magic")' j.json
pc show missing.snap >o 2>e; t_is "a missing snapshot exits 1" $? 1

# ENOSPC while writing: the old snapshot stays intact
if t_cap sys_admin; then
	mkdir tiny && mount -t tmpfs -o size=8k tmpfs tiny && T_CLEANUP+=("umount '$T_DIR/tiny'")
	cat db/f2 db/f3 db/f4 >/dev/null
	cp s.snap tiny/keep.snap 2>/dev/null || true
	sz=$(stat -c %s tiny/keep.snap)
	dd if=/dev/zero of=tiny/fill bs=1k count=8 status=none 2>/dev/null || true
	for i in $(seq 1 400); do mkfile db/many$i 4; done
	pc snapshot -o tiny/keep.snap db >o 2>e; rc=$?
	t_is "a full disk: snapshot exits 1" "$rc" 1
	t_ok "and says the old one is intact" grep -q "No space left on device; the previous snapshot" e
	t_is "the old snapshot is byte for byte the same size" "$(stat -c %s tiny/keep.snap)" "$sz"
	pc show tiny/keep.snap >/dev/null; t_is "and still reads" $? 0
	t_is "no temp file is left" "$(ls tiny | grep -c tmp)" 0
else
	t_skip "ENOSPC" "$T_WHY (mounting a small tmpfs)"
fi

# a snapshot that would record nothing never replaces a good one (GOOD, of act)
keeps_old() {
	if t_cap setuid && t_cap setgid; then
		chmod 755 . ; chmod 644 act
		cp "$1" keep.snap; chmod 666 keep.snap
		nobody_pc snapshot -o "$T_DIR/keep.snap" act >o 2>e; rc=$?
		t_is "all files failing exits 1" "$rc" 1
		t_is "and leaves the old snapshot" "$(jq .total.files <(pc show --json keep.snap))" 1
	else
		t_skip "a snapshot recording nothing keeps the old one" "$T_WHY (it runs as nobody)"
	fi
}
# active pages (CAP_SYS_ADMIN: kpageflags): recording must not activate what it measures
if t_cap sys_admin && t_mglru; then
	# (Debian 13's kernel): no active list to read; snapshot says unknown,
	# and so does show of the file
	mkfile act 4096
	cat act act >/dev/null
	pc snapshot --json -o a1.snap act >a1.json 2>a1.err
	t_is "the multi-gen LRU is on: snapshot's active pages are unknown, not 0" \
		"$(jq .total.active_pages a1.json)" null
	t_ok "and it says why" grep -q "the multi-gen LRU is on" a1.err
	t_is "show of it: unknown too" "$(jq .total.active_pages <(pc show --json a1.snap))" null
	t_skip "active pages: recorded, kept, restored" "the multi-gen LRU is on: the kernel keeps no active list"
	keeps_old a1.snap
elif t_cap sys_admin; then
	mkfile act 4096
	drop act
	cat act >/dev/null
	pc snapshot -o a1.snap act >/dev/null; pc snapshot -o a2.snap act >/dev/null
	t_is "read once: no active pages, twice in a row" \
		"$(jq .total.active_pages <(pc show --json a1.snap)) $(jq .total.active_pages <(pc show --json a2.snap))" "0 0"
	cat act >/dev/null
	pc snapshot -o a3.snap act >/dev/null
	a3=$(jq .total.active_pages <(pc show --json a3.snap))
	# per-CPU LRU batches may hold a few pages back from the active list for a while
	t_ok "read twice: (nearly) every page active ($a3 of 1024)" test "$a3" -ge 900
	drop act
	pc restore a3.snap >/dev/null
	pc snapshot -o a4.snap act >/dev/null
	a4=$(jq .total.active_pages <(pc show --json a4.snap))
	t_ok "restore makes active pages active again ($a4 of $a3)" test $((a4 * 10)) -ge $((a3 * 9))
	keeps_old a3.snap
else
	t_skip "active pages" "$T_WHY (kpageflags)"
fi

# --cgroup: the reading is charged to that memory cgroup (v1 or v2)
CG=""
if [ -d /sys/fs/cgroup/memory ]; then
	CG=/sys/fs/cgroup/memory/pc-test-$$
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CG=/sys/fs/cgroup/pc-test-$$
fi
T_WHY="no memory cgroup controller"
if [ -n "$CG" ] && t_writable "${CG%/*}" &&
   { mkdir "$CG" 2>cg.err || { T_WHY="cannot make $CG: $(head -1 cg.err)"; false; }; }; then
	T_CLEANUP+=("rmdir '$CG'")
	drop db/*/* db/*
	before=$(awk '$1=="cache"||$1=="file"{print $2}' "$CG/memory.stat")
	pc restore --cgroup "$(basename "$CG")" s.snap >o 2>e; rc=$?
	after=$(awk '$1=="cache"||$1=="file"{print $2}' "$CG/memory.stat")
	t_ok "restore --cgroup: pages charged to the cgroup ($before -> $after bytes)" \
		test $((after - before)) -ge $(( (${want[db/f2]}) * PS ))
	pc restore --cgroup no-such-cgroup-$$ s.snap >o 2>e; rc=$?
	t_is "an unknown cgroup exits 1" "$rc" 1
	"$PAGECACHE" restore --cgroup "$(basename "$CG")" s.snap >o 2>e; rc0=$?
	(trap '' CHLD; "$PAGECACHE" restore --cgroup "$(basename "$CG")" s.snap >o 2>e); rc=$?
	t_is "restore --cgroup with SIGCHLD ignored by its caller: the reader's status" "$rc" "$rc0"
	(trap '' CHLD; "$PAGECACHE" restore --cgroup no-such-cgroup-$$ s.snap >o 2>e); rc=$?
	t_is "and its failure (1)" "$rc" 1
	t_ok "and says so" grep -q "no such memory cgroup" e
	# budget: the cgroup's limit is the budget; never an OOM
	# (32 MiB: room for the process itself, even an ASan build, and a 64 MiB snapshot)
	mkfile db/big64 65536
	cat db/big64 >/dev/null
	pc snapshot -o big.snap db/big64 >/dev/null 2>&1
	drop db/big64
	{ echo $((32 * 1024 * 1024)) >"$CG/memory.limit_in_bytes"; } 2>/dev/null || echo $((32 * 1024 * 1024)) >"$CG/memory.max"
	pc restore --cgroup "$(basename "$CG")" --reserve 0 big.snap >o 2>e; rc=$?
	t_is "a snapshot larger than the cgroup's room stops (exit 1)" "$rc" 1
	t_ok "at the budget, saying so" grep -q "stopped early: the memory cgroup's headroom" e
	ev=$CG/memory.oom_control; [ -e "$ev" ] || ev=$CG/memory.events	# v1, v2
	t_is "and no OOM kill ($(basename "$ev"))" "$(awk '$1 == "oom_kill" { print $2 }' "$ev")" 0
	# with the default reserve (an eighth of the limit here): the file in part, not refused
	drop db/*/* db/*
	pc restore --cgroup "$(basename "$CG")" -v --json big.snap >p.json 2>e; rc=$?
	t_is "the default reserve: exit 1, the file restored in part, by priority" \
		"$rc $(jq -c '[.total.files_partly, .total.prioritized, .files[0].status]' p.json)" \
		'1 [1,true,"partly"]'
	t_ok "  some of it came back ($(jq .total.resident p.json) pages)" \
		test "$(jq .total.resident p.json)" -gt 0
	t_ok "  named with how much" grep -q "big64': [0-9]* of $((65536 * 1024 / PS)) pages" e
	t_is "  and no OOM kill" "$(awk '$1 == "oom_kill" { print $2 }' "$ev")" 0
else
	t_skip "restore --cgroup" "$T_WHY"
fi

# --guard: an empty or much smaller snapshot (a service that is down)
# does not replace the last good one; a big enough one does
mkdir -p gd; mkfile gd/a 256; cat gd/a >/dev/null
pc snapshot -o gd.snap gd >/dev/null 2>&1
before=$(sha256sum <gd.snap)
drop gd/a
pc snapshot -o gd.snap --guard 0 --json gd >gd.json 2>gd.err; rc=$?
t_is "--guard 0: an empty snapshot is not written (exit 0)" "$rc" 0
t_is "--guard: the old snapshot is intact" "$(sha256sum <gd.snap)" "$before"
t_is "--guard: JSON says kept, not written" "$(jq -c '[.total.kept, .total.written]' gd.json)" "[true,false]"
t_ok "--guard: JSON has the kept snapshot's pages" test "$(jq .total.previous_pages gd.json)" -ge 1
t_ok "--guard: says why on stderr" grep -q "kept '.*gd.snap'.*--guard" gd.err
pc warm -p 0-$((16 * PS)) gd/a >/dev/null	# exactly 16 pages: dd would read ahead
n=$(cached_pages gd/a)	# 16, or a few less if reclaim took some since
t_ok "13-16 pages of gd/a cached ($n)" test "$n" -ge 13 -a "$n" -le 16
pc snapshot -o gd.snap --guard 0.5 --json gd >gd.json 2>/dev/null
t_is "--guard 0.5: 16 pages of 256 keep the old one" "$(jq .total.kept gd.json)" true
t_is "--guard 0.5: and the file is unchanged" "$(sha256sum <gd.snap)" "$before"
pc snapshot -o gd.snap --guard 0.05 --json gd >gd.json 2>/dev/null
t_is "--guard 0.05: 16 of 256 pages replace it" "$(jq -c '[.total.kept, .total.written]' gd.json)" "[false,true]"
t_ok "--guard 0.05: the file changed" test "$(sha256sum <gd.snap)" != "$before"
printf 'not a snapshot' >gd.bad
pc snapshot -o gd.bad --guard 0.5 --json gd >gd.json 2>/dev/null
t_is "--guard: a bad old file is replaced" "$(jq -c '[.total.written, .total.previous_pages]' gd.json)" "[true,null]"
pc snapshot -o gd.snap --guard 1.5 gd >/dev/null 2>gd.err; rc=$?
t_is "--guard 1.5 is a usage error (2)" "$rc" 2
t_ok "that names the range" grep -q "a ratio from 0 to 1" gd.err
# a usage error found once PATHs are taken: exit 2 (the sanitized build
# exited 1, its leak check finding the PATHs still held)
pc snapshot -o gd.snap --children gd >/dev/null 2>gd.err; rc=$?
t_is "--children without --pid: a usage error (2)" "$rc.$(grep -c 'needs --pid' gd.err)" "2.1"
# a name near NAME_MAX: its temporary file's name is cut, never too long
long=$(printf 'n%.0s' $(seq 250)).snap
pc snapshot -o "$long" gd >/dev/null 2>gd.err; rc=$?
t_is "-o with a 255-byte name: written" "$rc.$(test -s "$long" && echo kept)" "0.kept"
rm -f "$long"
t_is "no --guard: no kept key" "$(pc snapshot -o gd.snap --json gd 2>/dev/null | jq '.total | has("kept")')" false

# -o at something that is not a file: never replaced (the review made /dev/null a 0600 file)
mkdir -p tgt/dir && mkfifo tgt/fifo && mknod -m 666 tgt/null c 1 3
for o in null fifo dir; do
	pc snapshot -o tgt/$o db >/dev/null 2>tgt.err; rc=$?
	t_is "-o at a $o: exit 1" "$rc" 1
	t_ok "  and says why" grep -q "cannot write snapshot 'tgt/$o'" tgt.err
done
t_is "the device node is still a device node, 0666" "$(stat -c '%F %a' tgt/null)" "character special file 666"
t_is "the FIFO is still a FIFO" "$(stat -c %F tgt/fifo)" "fifo"
t_is "nothing left beside them" "$(ls tgt | tr '\n' ' ')" "dir fifo null "
# --guard reads the old snapshot first: a FIFO there must not hold it up,
# nor a symbolic link be followed (root's snapshot in a shared directory)
timeout 20 "$PAGECACHE" snapshot -o tgt/fifo --guard 0.5 db >/dev/null 2>tgt.err; rc=$?
t_is "--guard, -o at a FIFO: not blocked on it, exit 1" "$rc" 1
t_ok "  and says why" grep -q "cannot write snapshot 'tgt/fifo'" tgt.err
pc snapshot -o tgt/real db >/dev/null 2>&1
ln -s real tgt/glink
pc snapshot -o tgt/glink --guard 0.5 --json db >tgt.json 2>tgt.err; rc=$?
t_is "--guard, -o at a symbolic link: the link is not read as the old snapshot" \
	"$rc.$(jq -c .total.previous_pages tgt.json)" "1.null"
rm -f tgt/glink tgt/real

# a file named twice (its directory and itself) is one file, not a failure
cat db/f1 >/dev/null
pc snapshot -o tgt/twice.snap --json db db/f1 >tgt.json 2>tgt.err; rc=$?
t_is "a file named twice: written, exit 0" "$rc.$(jq .total.written tgt.json)" "0.true"
t_is "  and listed once" "$(pc show --json tgt/twice.snap | jq '[.files[].path] | length == (unique | length)')" true
t_is "  nothing said of it" "$(cat tgt.err)" ""
if [ "$(id -u)" = 0 ]; then
	cat db/f1 >/dev/null	# read twice: its pages active
	pc snapshot -o tgt/twice.snap --json db db/f1 >tgt.json 2>/dev/null
	t_is "  its active pages counted once (the total as the file says)" \
		"$(jq .total.active_pages tgt.json)" "$(pc show --json tgt/twice.snap | jq .total.active_pages)"
fi
ln -s s.snap tgt/link
pc snapshot -o tgt/link db >/dev/null 2>tgt.err; rc=$?
t_is "-o at a symbolic link: refused, the link left (not replaced, not followed)" \
	"$rc.$(stat -c %F tgt/link)" "1.symbolic link"
t_ok "  naming its target" grep -q "it is a symbolic link to 's.snap'" tgt.err

t_done
