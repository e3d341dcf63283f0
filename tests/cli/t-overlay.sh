#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# overlayfs, every container's root filesystem: a file read through an
# overlay mount keeps its pages in the real file of a layer (upper or
# lower), the overlay inode's own cache stays empty. Through a mount the
# test makes: stat, snapshot, restore, evict, warm, lock and --pid give the
# real file's numbers; a caller who may not see them gets "unknown" with
# the reason, never 0; and a part of the CLI suite runs with its scratch
# files on the overlay.
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/lib.sh"
cd "$T_DIR"

if ! t_cap sys_admin; then
	t_skip "overlayfs" "$T_WHY: mounting an overlay"
	t_done; exit
fi
# In a container the scratch directory is itself on an overlay, which the
# kernel refuses as an upper layer: the layers go on an ext4 of the test's
# own, mounted over $T_DIR (the loop device goes with the mount)
if [ "$(stat -f -c %T "$T_DIR")" = overlayfs ]; then
	if ! t_have mkfs.ext4; then
		t_skip "overlayfs" "the scratch directory is on an overlay, and $T_WHY"
		t_done; exit
	fi
	mode=$(stat -c %a "$T_DIR")
	truncate -s 256M "$T_DIR.img"
	mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 "$T_DIR.img"
	T_CLEANUP+=("cd /; umount '$T_DIR' || umount -l '$T_DIR'; rm -f '$T_DIR.img'")
	mount -o loop "$T_DIR.img" "$T_DIR" && cd "$T_DIR" && rmdir lost+found && chmod "$mode" . ||
		{ t_skip "overlayfs" "cannot mount an ext4 for the layers"; t_done; exit; }
fi
mkdir l u w m
PS=$(getconf PAGESIZE)
N=$((1024 * 1024 / PS))		# pages of a 1 MiB file
mkfile l/lower 1024		# N pages, only in the lower layer
mkfile l/both 512		# copied up below
if ! mount -t overlay overlay -o "lowerdir=$T_DIR/l,upperdir=$T_DIR/u,workdir=$T_DIR/w" "$T_DIR/m" 2>mnt.err; then
	t_skip "overlayfs" "cannot mount an overlay: $(cat mnt.err)"
	t_done; exit
fi
T_CLEANUP+=("umount -l '$T_DIR/m'")

# cached FILE: our count, plus pages reclaimed since (a proactive reclaimer
# runs here; see resident_pages in lib.sh): stable while the test looks
cached() { pc stat --json "$1" | jq '.files[0] | .cached + .evicted'; }

# stat through the overlay counts the real file's pages
drop l/lower
cat m/lower >/dev/null
t_is "stat through the overlay: the real file's pages" "$(cached m/lower)" "$N"
t_is "the same as the lower file's own count (a page reclaimed since counts: resident_pages)" "$(resident_pages l/lower "$N")" "$N"
t_is "and as fincore through the overlay (mmap reaches the real file)" "$(resident_pages m/lower "$N")" "$N"
drop l/lower
dd if=m/lower of=/dev/null bs="$PS" count=16 iflag=direct status=none	# O_DIRECT: no cache
dd if=m/lower of=/dev/null bs="$PS" skip=$((N / 2)) count=10 status=none 2>/dev/null
# the real file's count right before and right after, as for the tree below:
# without cachestat a page reclaimed between two counts is not counted back
# (the sanitized no-cachestat pass of CI saw 79 of 80)
n=$(cached l/lower)
o=$(cached m/lower)
n2=$(cached l/lower)
t_ok "part read: the same number as the real file ($o; before and after: $n-$n2)" \
	test "$o" -le "$(( n > n2 ? n : n2 ))" -a "$o" -ge "$(( n < n2 ? n : n2 ))"
# the real files' counts right before and right after: pages of the read
# above may still come in (a loaded CI saw 3 more), or go (reclaim)
lo=$(( n + $(cached l/both) ))
pc stat --json m >dir.json 2>dir.err
hi=$(( $(cached l/lower) + $(cached l/both) ))
[ "$hi" -lt "$lo" ] && { t=$lo; lo=$hi; hi=$t; }
tot=$(jq '.total | .cached + .evicted' dir.json)
t_ok "a tree through the overlay: the total is the real files' ($tot; before and after: $lo-$hi)" \
	test "$tot" -ge "$lo" -a "$tot" -le "$hi"

# copy-up: written through the overlay, the real file is now the upper one
printf 'x' | dd of=m/both bs=1 seek=0 conv=notrunc status=none
sync m/both
t_ok "written through the overlay: copied up" test -f u/both
drop u/both
dd if=m/both of=/dev/null bs=4k count=32 status=none
t_is "after the copy-up: the upper file's count" "$(cached m/both)" "$(cached u/both)"
t_ok "and not 0" test "$(cached m/both)" -gt 0

# evict through the overlay: counted, and gone from the real file
cat m/lower >/dev/null
pc evict --json m/lower >ev.json 2>ev.err; rc=$?
t_is "evict through the overlay exits 0" "$rc" 0
t_is "it counts the pages it dropped" "$(jq .total.evicted ev.json)" "$N"
t_is "and they are gone from the real file" "$(cached_pages l/lower)" 0
head -c 65536 /dev/urandom >m/dirty	# dirty pages of a new upper file
pc evict --json m/dirty >evd.json 2>evd.err; rc=$?
t_is "dirty pages through the overlay: written, then dropped" "$rc/$(cached_pages u/dirty)" 0/0

# warm through the overlay: verified against the real file
drop l/lower
pc warm --json m/lower >wa.json 2>wa.err; rc=$?
t_is "warm through the overlay exits 0" "$rc" 0
t_is "it says every page is resident" "$(jq .total.resident wa.json)" "$N"
t_is "and the real file has them" "$(resident_pages l/lower "$N")" "$N"

# snapshot and restore through the overlay
cat m/lower >/dev/null
pc snapshot -o ovl.snap m/lower >sn.out 2>sn.err; rc=$?
after=$(cached_pages l/lower)
t_is "snapshot through the overlay exits 0" "$rc" 0
# the reclaimer may take a page between the read and the snapshot (and
# drop's DONTNEED clears its shadow entry): what was recorded lies between
# what fincore sees right after and all of the file, and is what comes back
rec=$(pc show --json ovl.snap | jq '.total.pages')
t_ok "it records the pages, not 'nothing cached' ($rec; fincore after: $after of $N)" \
	test "${rec:-0}" -gt 0 -a "${rec:-0}" -ge "$after" -a "${rec:-0}" -le "$N"
drop l/lower
pc restore --json ovl.snap >re.json 2>re.err; rc=$?
t_is "restore through the overlay exits 0" "$rc" 0
t_is "it reports them resident" "$(jq .total.resident re.json)" "$rec"
t_is "and the real file has them back" "$(resident_pages l/lower "$rec")" "$rec"

# lock through the overlay pins the real file's pages
drop l/lower
pc lock -d -P "$T_DIR/lock.pid" m/lower >lk.out 2>lk.err; rc=$?
T_CLEANUP+=("kill \$(cat '$T_DIR/lock.pid')")
t_is "lock through the overlay exits 0" "$rc" 0
t_is "the real file is cached" "$(cached_pages l/lower)" "$N"
pc evict m/lower >o 2>e; rc=$?
t_is "evict of the locked file: exit 1, the pages stayed" "$rc/$(cached_pages l/lower)" "1/$N"
lp=$(cat lock.pid)
t_ok "and says who locks them" grep -q "locked by $lp" e
# an overlay on it: the locker's maps name a file of a lower level (the
# inner overlay's, or on 6.1 the real one), never the device stat shows
# here; with and without cachestat (6.1: through the mapping)
mkdir u4 w4 m4
if mount -t overlay overlay -o "lowerdir=$T_DIR/m,upperdir=$T_DIR/u4,workdir=$T_DIR/w4" "$T_DIR/m4" 2>mnt4.err; then
	T_CLEANUP+=("umount -l '$T_DIR/m4'")
	for f in "" cachestat:ENOSYS; do
		PAGECACHE_FAULT=$f pc evict m4/lower >o4 2>e4
		t_ok "an overlay on it${f:+ ($f)}: evict names the locker, not 'in use'" \
			grep -q "locked by $lp" e4
	done
else
	t_skip "evict's reason through an overlay on an overlay" "cannot mount: $(cat mnt4.err)"
fi

# --pid: a process mapping a file through the overlay
pc stat --pid "$lp" --json >pid.json 2>pid.err
t_is "--pid: the overlay file has the real file's count" \
	"$(jq "[.files[] | select(.path == \"$T_DIR/m/lower\")][0].cached" pid.json)" "$N"
kill "$lp"
for i in $(seq 50); do kill -0 "$lp" 2>/dev/null || break; sleep 0.1; done

# a container's process: its overlay mounted in its own mount namespace,
# not in ours. --pid from outside counts what the same command counts inside.
mkdir u3 w3 m3
drop l/lower
unshare -m --propagation private bash -c "mount -t overlay overlay -o 'lowerdir=$T_DIR/l,upperdir=$T_DIR/u3,workdir=$T_DIR/w3' '$T_DIR/m3' && exec '$PAGECACHE' lock '$T_DIR/m3/lower'" >ns.out 2>ns.err &
np=$!
T_CLEANUP+=("kill $np")
for i in $(seq 50); do grep -q "$T_DIR/m3/lower" /proc/$np/maps 2>/dev/null && break; sleep 0.1; done
if grep -q "$T_DIR/m3/lower" /proc/$np/maps 2>/dev/null; then
	mountpoint -q "$T_DIR/m3"; rc=$?	# util-linux: 32 "not a mountpoint", 1 an error
	t_is "the container's mount is not in ours (mountpoint: not one)" "$rc" 32
	pc stat --pid "$np" --json >nsp.json 2>nsp.err
	# named through /proc/PID/root: the path is the process's, not ours
	out=$(jq "[.files[] | select(.path == \"/proc/$np/root$T_DIR/m3/lower\")][0] | .cached" nsp.json)
	in=$(nsenter -t "$np" -m "$PAGECACHE" stat --json "$T_DIR/m3/lower" | jq '.files[0].cached')
	t_is "--pid from outside the container: the count seen inside" "$out" "$in"
	t_is "which is all of the locked file" "$in" "$N"
	kill "$np"
else
	t_skip "--pid of a process in its own mount namespace" "it did not start: $(cat ns.err)"
fi

# -x (vmtouch's -F) on an overlay whose layers are on other filesystems (a
# container root whose upper is not on the lower's): each layer's files
# have a device of their own, not the directories' (the overlay's); they
# are on the same mount all the same. A file bind-mounted there is not.
sl=$(mktemp -d /dev/shm/pc-ovl-XXXXXX)
T_CLEANUP+=("rm -rf '$sl'")
mkdir u5 w5 m5
echo a >"$sl/a"; echo b >"$sl/b"
if mount -t overlay overlay -o "lowerdir=$sl,upperdir=$T_DIR/u5,workdir=$T_DIR/w5" "$T_DIR/m5" 2>mnt5.err; then
	T_CLEANUP+=("umount -l '$T_DIR/m5'")
	echo c >m5/c			# in the upper, on this test's filesystem
	t_ok "layers on other filesystems: the files' devices differ from the directory's" \
		test "$(stat -c %d m5/a)" != "$(stat -c %d m5)"
	t_is "-x counts the files of every layer" "$(pc -J -F m5 2>/dev/null | jq .total.files)" 3
	if mount --bind "$T_DIR/mnt5.err" m5/b 2>/dev/null; then
		t_is "and not a file mounted over one of them" \
			"$(pc -J -F m5 2>/dev/null | jq .total.files)" 2
		umount m5/b
	fi
else
	t_skip "-x on an overlay of layers on other filesystems" "cannot mount: $(cat mnt5.err)"
fi

# record: the events name the real file in a layer; the snapshot names the
# file by the path the process used (through the overlay)
drop l/lower
if pc record -o rec.snap -- bash -c 'exec 3<m/lower; cat <&3 >/dev/null' >rec.out 2>rec.err; then
	t_is "record through the overlay: the file by the path the process used" \
		"$(pc show --json rec.snap | jq -r --arg p "${T_DIR#/}/m/lower" \
			'[.files[] | select(.path == $p or (.path | endswith("/lower")))][0].path')" \
		"${T_DIR#/}/m/lower"
elif grep -q "6.12" rec.err; then
	t_skip "record through the overlay" "this kernel lacks the filemap use events (Linux 6.12)"
else
	t_ok "record through the overlay ($(cat rec.err))" false
fi

# inside a container: the upper layer's filesystem is mounted nowhere in
# our namespace (a loop filesystem unmounted once the overlay holds it), so
# the events name an inode we cannot open; the file is found by the one
# inode of the overlay file's number on such a device
if [ -s rec.snap ] && t_have mkfs.ext4; then
	mkdir l7 m7 lp
	mkfile l7/f 256
	truncate -s 32M lp.img && mkfs.ext4 -q -F lp.img 2>/dev/null
	unshare -m --propagation private bash -c '
		mount -o loop lp.img lp && mkdir lp/u lp/w &&
		mount -t overlay overlay -o "lowerdir=$1/l7,upperdir=$1/lp/u,workdir=$1/lp/w" m7 &&
		umount -l lp || exit 9
		head -c 1M /dev/urandom >m7/up && head -c 64k /dev/urandom >m7/up2 && sync m7
		"$2" evict m7/up m7/up2 >/dev/null 2>&1
		grep -c " $1/lp " /proc/self/mountinfo >hidden.n
		stat -c %i m7/up >up.ino
		"$2" record -o rec7.snap -- bash -c "exec 3<m7/up; cat <&3 >/dev/null; sleep 0.3"
		# top --by file: a reader that drops the file and reads it again
		timeout 10 python3 -c "if 1:
			import os, time
			while True:
			    fd = os.open(\"m7/up\", os.O_RDONLY)
			    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
			    while os.read(fd, 1 << 16):
			        pass
			    time.sleep(0.05)
			    os.close(fd)" &
		rd=$!
		"$2" top --json --count 1 --interval 0.5 --by file >top7.json 2>top7.err
		kill $rd; wait $rd
		# gone before it is looked for: found by the walk of --root
		exec "$2" record -o rec8.snap --root "$1/m7" -- cat m7/up2
		' - "$T_DIR" "$PAGECACHE" >rec7.out 2>rec7.err; rc=$?
	if [ "$rc" = 9 ]; then
		t_skip "record with the layer's filesystem out of our namespace" "cannot mount: $(cat rec7.err)"
	else
		t_is "the layer's filesystem is mounted nowhere in the namespace" "$(cat hidden.n)" 0
		t_is "record there: the upper file by the path through the overlay" \
			"$(pc show --json rec7.snap | jq -r '[.files[].path | select(endswith("/up"))] | join(" ")')" \
			"${T_DIR#/}/m7/up"
		t_is "and a file of a process gone since, by the walk of --root" \
			"$(pc show --json rec8.snap | jq -r '[.files[].path] | join(" ")')" up2
		t_is "top --by file there: the row by the path through the overlay, its inode's" \
			"$(jq -r --arg p "$T_DIR/m7/up" '.rows[] | select(.key == $p) | .ino' top7.json)" \
			"$(cat up.ino)"
	fi
fi

# the match by inode number is for a file of such an overlay only: a file
# of the same number on another filesystem (a copy of the layer's image,
# mounted here), open in the traced process before the overlay's, is
# another file
if [ -s rec.snap ] && t_have mkfs.ext4; then
	mkdir l9 m9 lq dq
	truncate -s 32M lq.img && mkfs.ext4 -q -F lq.img 2>/dev/null
	unshare -m --propagation private bash -c '
		mount -o loop lq.img lq && mkdir lq/u lq/w &&
		head -c 192k /dev/urandom | base64 >lq/u/up && umount lq &&
		cp lq.img dq.img && mount -o loop,ro dq.img dq &&	# dq/u/up: another file, its number
		mount -o loop lq.img lq &&
		mount -t overlay overlay -o "lowerdir=$1/l9,upperdir=$1/lq/u,workdir=$1/lq/w" m9 &&
		umount -l lq || exit 9
		test "$(stat -c %i m9/up)" = "$(stat -c %i dq/u/up)" || exit 8
		# read by the process that holds both (bash itself), the other
		# first; twice (when the rounds look at its fds varies)
		for i in 1 2; do
			"$2" evict m9/up >/dev/null 2>&1
			"$2" record -o rec9.$i.snap -- bash -c "exec 3<dq/u/up 4<m9/up; mapfile a <&4; sleep 0.3"
		done
		' - "$T_DIR" "$PAGECACHE" >rec9.out 2>rec9.err; rc=$?
	if [ "$rc" = 9 ] || [ "$rc" = 8 ]; then
		t_skip "record: a file of the same inode number elsewhere" "cannot set up ($rc): $(cat rec9.err)"
	else
		t_is "a traced process's file of the same number elsewhere is not named" \
			"$(for i in 1 2; do pc show --json rec9.$i.snap | jq -r '[.files[].path | select(endswith("/up"))] | join(" ")'; done | sort -u)" \
			"${T_DIR#/}/m9/up"
	fi
fi

# evict's reason on an overlay whose layers are on two filesystems: maps
# shows the overlay's device with the real inode number, which a lower
# file (here a copy of the upper's image: the same number) shares; the
# process that locks that other file is not named
if t_have mkfs.ext4; then
	mkdir m10 lr dr
	truncate -s 32M lr.img && mkfs.ext4 -q -F lr.img 2>/dev/null
	T_CLEANUP+=("kill \$(cat '$T_DIR/lk10a.pid' '$T_DIR/lk10b.pid' 2>/dev/null) 2>/dev/null")
	unshare -m --propagation private bash -c '
		mount -o loop lr.img lr && mkdir lr/u lr/w && mkfile() { head -c 256k /dev/urandom >"$1"; } &&
		mkfile lr/u/up && umount lr && cp lr.img dr.img &&
		mount -o loop dr.img dr && mkdir dr/u/sub && mv dr/u/up dr/u/sub/other &&
		mount -o loop lr.img lr &&
		mount -t overlay overlay -o "lowerdir=$1/dr/u,upperdir=$1/lr/u,workdir=$1/lr/w" m10 || exit 9
		test "$(stat -c %i m10/up)" = "$(stat -c %i m10/sub/other)" || exit 8
		"$2" lock -d -P "$1/lk10a.pid" m10/up >/dev/null &&
		"$2" lock -d -P "$1/lk10b.pid" m10/sub/other >/dev/null || exit 7
		cat "$1/lk10a.pid" >"$1/a10.pid"	# the pidfiles go with the lockers
		"$2" evict m10/up
		kill $(cat "$1/lk10a.pid" "$1/lk10b.pid")
		' - "$T_DIR" "$PAGECACHE" >ev10.out 2>ev10.err; rc=$?
	if [ "$rc" -ge 7 ]; then
		t_skip "evict's reason, layers on two filesystems" "cannot set up ($rc): $(cat ev10.err)"
	else
		t_is "evict's reason, layers on two filesystems: the locker of the file only" \
			"$(grep -o 'locked by .*' ev10.err | grep -o '[0-9]* (' | tr -d ' (' | tr '\n' ' ')" \
			"$(cat a10.pid) "
	fi
fi

# top --by file: the same, the row named by the path through the overlay
if [ -s rec.snap ]; then
	(while :; do cat m/lower >/dev/null; sleep 0.05; done) &
	rd=$!
	T_CLEANUP+=("t_kill $rd")
	pc top --json --count 1 --interval 0.5 --by file >top.json 2>top.err
	t_kill "$rd"
	t_is "top --by file through the overlay: the row by the path through it" \
		"$(jq -r --arg p "$T_DIR/m/lower" '[.rows[] | select(.key == $p)] | length > 0' top.json)" true
fi

# a caller the kernel refuses: unknown, with the reason, never 0
cat m/lower >/dev/null
chmod 755 "$T_DIR" m
nobody_pc stat --json m/lower >nb.json 2>nb.err; rc=$?
t_is "not the owner, no write permission: cached is unknown (null)" "$(jq '.files[0].cached' nb.json)" null
t_ok "with the reason" jq -e '.files[0].reason | test("refuses")' nb.json
chown 65534 m/both
dd if=m/both of=/dev/null bs=4k count=16 status=none
nobody_pc stat --json m/both >nbo.json 2>nbo.err
t_is "the owner, without CAP_SYS_ADMIN to find the real file: counted through the mapping" \
	"$(jq -r '.files[0].source' nbo.json)" mincore
t_ok "and not 0" test "$(jq '.files[0].cached' nbo.json)" -gt 0

# layers named by relative paths (as Docker mounts them): the real file is
# out of reach, so root counts through the mapping, never 0
mkdir u2 w2 m2
(cd "$T_DIR" && mount -t overlay overlay -o lowerdir=l,upperdir=u2,workdir=w2 m2) 2>mnt2.err
if mountpoint -q m2; then
	T_CLEANUP+=("umount -l '$T_DIR/m2'")
	cat m2/lower >/dev/null
	pc stat --json m2/lower >rel.json 2>rel.err
	t_is "relative layers: counted through the mapping" "$(jq -r '.files[0].source' rel.json)" mincore
	t_is "all of it" "$(jq '.files[0].cached' rel.json)" "$N"
else
	t_skip "relative layers" "cannot mount: $(cat mnt2.err)"
fi

# a part of the CLI suite, its scratch files on the overlay. make check's
# second pass (as without cachestat, PC_CHECK_PASS=nocachestat) skips these
# nested runs for time: its first pass ran them, and both run the scripts
# themselves, off the overlay
mkdir m/scratch
for t in t-stat.sh t-warm.sh t-evict-lock.sh t-snapshot.sh; do
	if [ "${PC_CHECK_PASS:-}" = nocachestat ]; then
		t_skip "$t passes with its files on the overlay" \
			"the no-cachestat pass of make check skips the nested runs for time (PC_CHECK_PASS=nocachestat)"
		continue
	fi
	PAGECACHE_TEST_DIR=$T_DIR/m/scratch bash "$HERE/$t" >"suite-$t.out" 2>&1; rc=$?
	t_is "$t passes with its files on the overlay" "$rc" 0
	# what failed, on stderr too: prove shows it without -v (CI's log)
	[ "$rc" = 0 ] || { grep -A3 '^not ok' "suite-$t.out" | sed 's/^/#   /'
		grep -A3 '^not ok' "suite-$t.out" | sed "s/^/# t-overlay, $t: /" >&2; }
done
t_done
