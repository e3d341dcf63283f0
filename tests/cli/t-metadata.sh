#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# snapshot --metadata / restore: a filesystem's metadata (inode tables,
# directory blocks) is cached in its block device's mapping; snapshot
# records it as block device records and restore reads them back through
# the device, found from the files' filesystem, never by the recorded
# name. On an ext4 the test makes on a loop device: a walk after a restore
# reads almost nothing from the device, against a walk after a restore
# without the metadata (both measured here, in sectors the device read).
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

if ! t_root; then
	t_skip "metadata on a loop device" "needs root (loop devices, mount)"
	t_done; exit
fi
if ! t_have losetup mkfs.ext4 jq; then
	t_skip "metadata on a loop device" "$T_WHY"
	t_done; exit
fi

# a clean slate for this filesystem alone: its last close drops the
# device's cache, and its inodes and dentries go with the mount (two passes
# of drop_caches would do too, but for the whole machine)
remount() { umount mnt && mount -o noatime "$LOOP" mnt; }
sectors() { awk '{ print $3 }' "/sys/block/$DEV/stat"; }
# the walk a service's start makes: every file's inode, no file's data
walk() { find mnt -type f -print0 | xargs -0 stat >/dev/null; }

# ext4 with its inode tables and journal made now (no lazy init thread
# writing and reading behind the measurements), 4 KiB blocks
truncate -s 128M fs.img
mkfs.ext4 -q -F -b 4096 -E lazy_itable_init=0,lazy_journal_init=0 fs.img
# what is attached and mounted now, undone on every way out (a device
# detached by the test is never detached again: it may be another's by then)
LOOP= HOLD=
detach() {
	# busy (a system-wide recording elsewhere may hold it): detached lazily,
	# and the loop device goes when the last user lets go
	mountpoint -q "$T_DIR/mnt" && { umount "$T_DIR/mnt" || umount -l "$T_DIR/mnt"; }
	[ -n "$LOOP" ] && losetup -d "$LOOP"
	[ -n "$HOLD" ] && losetup -d "$HOLD"
	return 0
}
T_CLEANUP+=(detach)
LOOP=$(losetup -f --show fs.img) || { t_skip "metadata on a loop device" "losetup failed"; t_done; exit; }
DEV=${LOOP#/dev/}
mkdir mnt
mount -o noatime "$LOOP" mnt

# 3000 files in 300 directories
for d in $(seq 1 300); do
	mkdir "mnt/d$d"
	for f in $(seq 1 10); do printf 'file %s of %s\n' "$f" "$d" >"mnt/d$d/f$f"; done
done
# the journal pins fresh metadata until a checkpoint: remount
sync
remount
# Other work on a shared machine drops the whole page cache at times
# (drop_caches, a proactive reclaimer): a step that finds its cache gone
# is taken again, three times at most; a real failure fails every time.
warm() {
	walk
	# and the data of a tenth of them, in a tenth of the directories: a
	# restore opens those files itself (their lookups bring their directories
	# and inodes back anyway); the rest of the tree is the metadata's to bring
	cat mnt/d[1-9]/* mnt/d[12][0-9]/* mnt/d30/* >/dev/null
}
for try in 1 2 3; do
	warm
	pc snapshot --metadata -o s.snap --json mnt >snap.json 2>snap.err; rc=$?
	[ "$(jq .total.files snap.json)" = 300 ] && [ "$(jq .total.metadata_pages snap.json)" -gt 0 ] && break
done
t_is "snapshot --metadata exits 0" "$rc" 0
t_is "one block device recorded" "$(jq .total.metadata_devices snap.json)" 1
t_is "it is the loop device" "$(jq -r '.total.metadata[0].device' snap.json)" "$DEV"
meta_pages=$(jq .total.metadata_pages snap.json)
t_ok "its cached pages are recorded ($meta_pages)" test "$meta_pages" -gt 0
t_is "the files are recorded as before" "$(jq .total.files snap.json)" 300

# the device's own cache, asked through the device by the binary under
# test would prove nothing: the kernel's counters say what was read

# a restore without the metadata, then the walk; the same with it
for try in 1 2 3; do
	remount
	s0=$(sectors)
	pc restore --no-metadata --json s.snap >plain.json 2>plain.err; rc_plain=$?
	s1=$(sectors)
	walk
	s2=$(sectors)
	plain_walk=$((s2 - s1))
	remount
	s3=$(sectors)
	pc restore --json s.snap >meta.json 2>meta.err; rc=$?
	s4=$(sectors)
	walk
	s5=$(sectors)
	meta_walk=$((s5 - s4))
	[ "$(jq .total.files plain.json)" = 300 ] && [ "$(jq .total.files meta.json)" = 300 ] &&
		{ ! t_have_cachestat || { [ "$plain_walk" -ge 256 ] && [ $((meta_walk * 10)) -lt "$plain_walk" ]; }; } &&
		break
	echo "# try $try: walks read $plain_walk and $meta_walk sectors (the cache dropped meanwhile?)"
done
t_is "restore --no-metadata exits 0" "$rc_plain" 0
t_is "--no-metadata: no metadata read" "$(jq .total.metadata_read plain.json)" 0
t_is "--no-metadata: the record is skipped" "$(jq .total.metadata_skipped plain.json)" 1
t_is "--no-metadata: the files restored" "$(jq .total.files plain.json)" 300
t_is "restore exits 0" "$rc" 0
t_is "restore read the device's record" "$(jq .total.metadata_devices meta.json)" 1
t_is "restore: its pages wanted" "$(jq .total.metadata_pages meta.json)" "$meta_pages"
t_ok "restore: metadata pages read" test "$(jq .total.metadata_read meta.json)" -gt 0
t_is "restore: the files restored" "$(jq .total.files meta.json)" 300
t_is "restore: the list names the device" "$(jq -r '.total.metadata[0] | "\(.device) \(.status)"' meta.json)" "$DEV ok"
echo "# sectors read by $DEV: restore --no-metadata $((s1 - s0)), walk after it $plain_walk;" \
	"restore $((s4 - s3)), walk after it $meta_walk"
if t_have_cachestat; then
	t_ok "the walk after a plain restore needs the device ($plain_walk sectors)" \
		test "$plain_walk" -ge 256
	t_ok "the walk after a metadata restore reads under 10% of that ($meta_walk)" \
		test $((meta_walk * 10)) -lt "$plain_walk"
else
	# mincore sees only pages read whole: a block read alone is not uptodate
	t_skip "the walk after a plain restore needs the device" "no cachestat"
	t_skip "the walk after a metadata restore reads under 10% of that" "no cachestat"
fi

pc restore --dry-run --json s.snap >dry.json 2>/dev/null
t_is "--dry-run: the pages counted" "$(jq .total.metadata_pages dry.json)" "$meta_pages"
t_is "--dry-run: nothing read" "$(jq .total.metadata_read dry.json)" 0

# a device's cache is read whole or not at all: one too big for the budget
# is left out and said, and the files still have the budget (theirs are
# cached here: they need none of it)
if t_have_cachestat; then
	for try in 1 2 3; do
		remount
		cat mnt/d[1-9]/* mnt/d[12][0-9]/* mnt/d30/* >/dev/null
		pc restore --max-mem 64k --json s.snap >budget.json 2>budget.err; rc=$?
		[ "$(jq .total.read budget.json)" = 0 ] && break	# else the files' cache went meanwhile
	done
	t_is "metadata over the budget: restore exits 0" "$rc" 0
	t_is "metadata over the budget: the record left out" "$(jq .total.metadata_skipped budget.json)" 1
	t_ok "metadata over the budget: said" grep -q "metadata of '$DEV' not restored: its [0-9]* pages do not fit the memory budget" budget.err
	t_is "metadata over the budget: the files restored" "$(jq -c '[.total.files, .total.budget_stopped]' budget.json)" '[300,false]'
else
	# mincore sees only the few pages read whole: no record too big to test
	for t in "the record left out" "said" "the files restored" "restore exits 0"; do
		t_skip "metadata over the budget: $t" "no cachestat"
	done
fi

pc restore --kv s.snap >kv.out 2>/dev/null
t_ok "key=value: metadata_read" grep -q ' metadata_read=[0-9]' kv.out
pc restore s.snap >human.out 2>/dev/null
t_ok "table: a metadata line" grep -q "^Metadata: $meta_pages pages wanted of 1 block device ($DEV)" human.out

# not root: --metadata records the directories, not the devices (said
# once); restore skips the device records with a note. A user's own
# directory (the kernel tells a user no residency of root's files)
mkdir nd && chown 65534:65534 nd && chown -R 65534:65534 mnt/d1
cat mnt/d1/f1 >/dev/null
nobody_pc snapshot --metadata --json -o "$T_DIR/nd/n.snap" mnt/d1 >nsnap.json 2>nobody.err; rc=$?
t_is "non-root snapshot --metadata: exits 0, written" "$rc $(jq .total.written nsnap.json)" "0 true"
t_is "  says once that the devices need root" \
	"$(grep -c -- "--metadata: the block devices' cache is not recorded: it needs root" nobody.err)" 1
t_is "  no device, its directory recorded" \
	"$(jq -c '.total | [.metadata_devices, .metadata_skipped, .metadata_dirs]' nsnap.json)" "[0,1,1]"
nobody_pc restore --json "$T_DIR/nd/n.snap" >nrest.json 2>/dev/null; rc=$?
t_is "  and a user's restore reads it through the filesystem" \
	"$rc $(jq -c '.total | [.metadata_dirs_read, .metadata_entries]' nrest.json)" "0 [1,10]"
cp s.snap pub.snap && chmod 644 pub.snap
nobody_pc restore --json pub.snap >nobody.json 2>nobody.err; rc=$?
t_is "non-root restore: the record skipped" "$(jq .total.metadata_skipped nobody.json)" 1
t_ok "with a note" grep -q "metadata of 1 block device not restored: needs root" nobody.err

# the device is found from the filesystem, not by the recorded name: the
# same image on another loop device is read through that one
umount mnt
losetup -d "$LOOP"
LOOP=
HOLD=$(losetup -f --show --sizelimit 1048576 fs.img)
LOOP=$(losetup -f --show fs.img)
DEV=${LOOP#/dev/}
mount -o noatime "$LOOP" mnt
remount
pc restore --json s.snap >moved.json 2>moved.err; rc=$?
t_is "moved device: restore exits 0" "$rc" 0
t_is "moved device: read through $DEV (found by its filesystem)" \
	"$(jq -r '.total.metadata[0] | "\(.device) \(.status)"' moved.json)" "$DEV ok"

# a copy elsewhere: the files restore, the record's filesystem is not
# there: said once, not a failure
mkdir copy
for try in 1 2 3; do
	cat mnt/d1/* mnt/d2/* >/dev/null
	pc snapshot --metadata --root "$T_DIR/mnt" -o r.snap --json mnt/d1 mnt/d2 >r.json 2>&1
	[ "$(jq .total.files r.json)" = 20 ] && break
done
cp -a mnt/d1 mnt/d2 copy/
pc restore --root "$T_DIR/copy" --json r.snap >copy.json 2>copy.err; rc=$?
t_is "device missing: restore exits 0" "$rc" 0
t_is "device missing: the files restored" "$(jq .total.files copy.json)" 20
t_is "device missing: the record skipped" "$(jq .total.metadata_skipped copy.json)" 1
t_is "device missing: said once" "$(grep -c "metadata of '$(jq -r '.total.metadata[0].device' copy.json)' not restored: no file of its filesystem" copy.err)" 1

# Where the device cannot be read (a VM's root disk, a container: here
# the bdev_open fault point refuses every device), restore brings the
# metadata back through the filesystem: the recorded directories read and
# their entries statx()ed, in inode order. 2,000 files in 50 directories
# on this ext4; whole-machine drops (drop_caches 3, twice: dentries and
# inodes too, as after a reboot), then a walk counted in the sectors the
# loop device read.
MKSNAP=${MKSNAP:-$(dirname "$PAGECACHE")/tests/mksnap}
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; echo 3 >/proc/sys/vm/drop_caches; }
walkm() { find mnt/m -print0 | xargs -0 stat >/dev/null; }
mkdir mnt/m
for d in $(seq 1 50); do
	mkdir "mnt/m/d$d"
	for f in $(seq 1 40); do printf 'file %s of %s\n' "$f" "$d" >"mnt/m/d$d/f$f"; done
done
remount
for try in 1 2 3; do
	drop
	s0=$(sectors); walkm; s1=$(sectors)
	cold=$((s1 - s0))
	pc snapshot --metadata -o m.snap --json mnt/m >m.json 2>m.err; rc=$?
	drop
	PAGECACHE_FAULT=bdev_open:EPERM pc restore --json m.snap >mfs.json 2>mfs.err; rc_fs=$?
	s2=$(sectors); walkm; s3=$(sectors)
	fsw=$((s3 - s2))
	drop
	pc restore --json m.snap >mdev.json 2>mdev.err; rc_dev=$?
	s4=$(sectors); walkm; s5=$(sectors)
	devw=$((s5 - s4))
	s6=$(sectors); walkm; s7=$(sectors)
	warmw=$((s7 - s6))
	[ "$cold" -ge 256 ] && [ $((fsw * 3)) -lt "$cold" ] && break
	echo "# try $try: walks read $cold cold, $fsw after the filesystem's restore (the cache dropped meanwhile?)"
done
echo "# sectors a walk of 2,050 entries read from $DEV: cold (drop_caches 3, twice) $cold;" \
	"after restore through the filesystem (device refused) $fsw; through the device $devw; warm $warmw"
t_is "nothing cached: snapshot --metadata exits 0" "$rc" 0
t_is "nothing cached: no file recorded" "$(jq .total.files m.json)" 0
t_is "nothing cached: the directories recorded (m and its 50)" "$(jq .total.metadata_dirs m.json)" 51
t_is "nothing cached: the device recorded" "$(jq .total.metadata_devices m.json)" 1
t_is "show: 51 directories, no files" "$(pc show --json m.snap | jq -c '[.total.directories, .total.files, (.directories | length)]')" '[51,0,51]'
t_is "device refused: restore exits 0" "$rc_fs" 0
t_is "device refused: the record left out" "$(jq .total.metadata_skipped mfs.json)" 1
t_ok "device refused: said" grep -q "metadata of '$DEV' not restored: block device .*: Operation not permitted" mfs.err
t_is "device refused: directories read through the filesystem" \
	"$(jq -c '[.total.metadata_dirs_wanted, .total.metadata_dirs_read, .total.metadata_dirs_skipped, .total.metadata_stat_failed]' mfs.json)" '[51,51,0,0]'
t_is "device refused: every entry statted (2,000 files, 50 directories)" "$(jq .total.metadata_entries mfs.json)" 2050
t_ok "device refused: the walk after it reads under a third of a cold walk's sectors ($fsw of $cold)" \
	test $((fsw * 3)) -lt "$cold"
t_is "device allowed: restore exits 0" "$rc_dev" 0
t_is "device allowed: read through the device, not the filesystem" \
	"$(jq -c '[.total.metadata_devices, .total.metadata_dirs_by_device, .total.metadata_dirs_read]' mdev.json)" '[1,51,0]'
if t_have_cachestat; then
	t_ok "device allowed: the walk after it reads under a third of a cold walk's ($devw of $cold)" \
		test $((devw * 3)) -lt "$cold"
else
	t_skip "device allowed: the walk after it reads under a third of a cold walk's" "no cachestat"
fi
PAGECACHE_FAULT=bdev_open:EPERM pc restore --dry-run --json m.snap >mdry.json 2>/dev/null
t_is "dry run: directories to read, none read" \
	"$(jq -c '[.total.metadata_dirs_wanted, .total.metadata_dirs_read, .total.metadata_entries]' mdry.json)" '[51,0,0]'
PAGECACHE_FAULT=bdev_open:EPERM pc restore --no-metadata --json m.snap >mno.json 2>/dev/null
t_is "--no-metadata: no directory read" "$(jq -c '[.total.metadata_dirs_wanted, .total.metadata_dirs_read]' mno.json)" '[0,0]'
PAGECACHE_FAULT=bdev_open:EPERM pc restore m.snap >mfs.out 2>/dev/null
t_ok "table: a directories line" grep -q "^Directories: 51 of 51 read through the filesystem, 2050 entries statted" mfs.out

# a directory gone, another a file now: skipped and counted, not a failure
mv mnt/m/d50 mnt/m/gone && rmdir mnt/m/d49 2>/dev/null || { rm -rf mnt/m/d49; }
printf x >mnt/m/d49
PAGECACHE_FAULT=bdev_open:EPERM pc restore --json m.snap >mgone.json 2>/dev/null; rc=$?
t_is "directories gone: restore exits 0" "$rc" 0
t_is "directories gone: two skipped, the rest read" \
	"$(jq -c '[.total.metadata_dirs_read, .total.metadata_dirs_skipped]' mgone.json)" '[49,2]'

# a version 4 snapshot (no directory records) still reads and restores;
# its files' directory is statted for them where the device is refused
cat mnt/m/d1/f1 >/dev/null
"$MKSNAP" -r "$T_DIR/mnt" v4.snap m/d1/f1 dev:loop99
t_is "version 4: written so (no directories)" "$(od -An -tu4 -j8 -N4 v4.snap | tr -d ' ')" 4
PAGECACHE_FAULT=bdev_open:EPERM pc restore --root "$T_DIR/mnt" --json v4.snap >v4.json 2>/dev/null; rc=$?
t_is "version 4: restore exits 0" "$rc" 0
t_is "version 4: its file restored, its directory's entry statted" \
	"$(jq -c '[.total.files, .total.metadata_dirs_read, .total.metadata_entries]' v4.json)" '[1,1,1]'

# hostile: directory records naming a link out of the root, a path
# through it, and a file; only the real directory is read, and the
# directory outside is never listed (its atime, set old so relatime would
# move it on any read, stays) nor its entries statted
mkdir -p hroot/real out
for f in a b c; do printf x >"out/$f"; printf x >"hroot/real/$f"; done
ln -s ../out hroot/link
touch -a -d '2001-01-01' out
atime=$(stat -c %X out)
"$MKSNAP" -r "$T_DIR/hroot" h.snap dir:link dir:link/x dir:real/a dir:real
PAGECACHE_FAULT=bdev_open:EPERM pc restore --root "$T_DIR/hroot" --json h.snap >h.json 2>h.err; rc=$?
t_is "hostile directories: restore exits 0" "$rc" 0
t_is "hostile directories: only the real one read, its 3 entries statted, 3 skipped" \
	"$(jq -c '[.total.metadata_dirs_read, .total.metadata_entries, .total.metadata_dirs_skipped]' h.json)" '[1,3,3]'
t_is "hostile directories: the directory outside was not read" "$(stat -c %X out)" "$atime"

# a filesystem whose device cannot be read (this VM's root disk refuses
# it; tmpfs has none): named, left out, not a failure
printf x >plain.file
for try in 1 2 3; do
	cat plain.file >/dev/null
	pc snapshot --metadata -o p.snap --json plain.file >p.json 2>p.err; rc=$?
	[ "$(jq .total.files p.json)" = 1 ] && break
done
t_is "unreadable device: snapshot exits 0" "$rc" 0
t_is "unreadable device: recorded or left out" \
	"$(jq '.total.metadata_devices + .total.metadata_skipped' p.json)" 1
if [ "$(jq .total.metadata_skipped p.json)" = 1 ]; then
	t_ok "unreadable device: named on stderr" grep -q "metadata of '.*plain.file' not recorded: block device" p.err
else
	t_skip "unreadable device: named on stderr" "the device under $T_DIR can be read here"
fi

t_done
