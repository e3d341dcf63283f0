#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache lock --watch: files replaced under their names (rename over,
# delete and make again), new files in a tree and files that grew are
# locked again, the old inode's mapping released; a symbolic link swapped
# in is not followed; the budget is never passed; a burst of renames is a
# few rescans; SIGTERM releases everything and exits 0; --daemon watches;
# a full inotify watch limit falls back to a timer. A lock set grows past
# its first size only within --max-mem, and a hole is never locked: a
# user's file truncated larger does not make root pin memory. A directory
# above a named path swapped for a link is not followed: the set stays
# with the directory it began with. A lock set's files take at most half
# of vm.max_map_count mappings.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

if ! t_cap ipc_lock && [ "$(ulimit -l)" != unlimited ] && [ "$(ulimit -l)" -lt 8192 ]; then
	t_skip "lock --watch tests" "$T_WHY and ulimit -l is $(ulimit -l) KiB (needs 8192)"
	t_done; exit
fi

ino() { stat -c %i "$1"; }
# mapped PID INO: the process maps that inode (maps' 5th field)
mapped() { awk -v i="$2" '$5 == i { f = 1 } END { exit !f }' "/proc/$1/maps"; }
not_mapped() { ! mapped "$@"; }
# ev OUT EVENT PATH: a {"watch": ...} line says EVENT of PATH
ev() { jq -e -s --arg e "$2" --arg p "$3" \
	'any(.[]; .watch.event? == $e and .watch.path? == $p)' "$1" >/dev/null 2>&1; }
# evn OUT EVENT PATH-PREFIX: how many lines say EVENT of paths starting so
evn() { jq -s --arg e "$2" --arg p "$3" \
	'[.[] | select(.watch.event? == $e and (.watch.path? // "" | startswith($p)))] | length' "$1" 2>/dev/null; }
# rescans OUT: the walks made, as the last "rescan" line counts them
rescans() { jq -s '[.[] | select(.watch.event? == "rescan") | .watch.rescans] | max // 0' "$1" 2>/dev/null; }
pages_of() { echo $(( ($(stat -c %s "$1") + PS - 1) / PS )); }
# stays FILE: an evict leaves every page of FILE cached (it is locked)
stays() { pc evict "$1" >/dev/null 2>&1; [ "$(cached_pages "$1")" = "$(pages_of "$1")" ]; }
started() { grep -q '"total"' "$1"; }

mkdir -p tree/sub tree/burst stage
mkfile f 256; mkfile g 64; mkfile outside 64
mkfile tree/a 128; mkfile tree/b 64; mkfile tree/sub/c 32
for i in $(seq 50); do mkfile "tree/burst/f$i" 4; done

"$PAGECACHE" lock --watch --max-mem 64M --json f g tree >a.out 2>a.err &	# it grows
A=$!
T_CLEANUP+=("t_kill $A")
t_ok "lock --watch locks and reports" t_wait 20 started a.out
t_is "the first lock holds every file" "$(jq -s '.[0].total.files' a.out)" 55

# ---- rename over, as dpkg does ----
old=$(ino f)
mkfile stage/f.new 512
mv stage/f.new f
new=$(ino f)
t_ok "a file renamed over is locked again" t_wait 10 ev a.out replaced f
t_ok "  the new inode is mapped by the lock" mapped "$A" "$new"
t_ok "  the old inode's mapping is released" not_mapped "$A" "$old"
t_is "  no deleted file stays mapped" "$(grep -c '(deleted)' "/proc/$A/maps")" 0
t_ok "  its pages stay when evicted" stays f
t_is "  the line names the new inode and its bytes" \
	"$(jq -s -c '[.[] | select(.watch.event? == "replaced" and .watch.path? == "f")][0].watch | [.inode, .locked, .previous]' a.out)" \
	"[$new,524288,262144]"

# ---- a new file in a locked tree ----
mkfile tree/sub/new 64
t_ok "a new file in a tree is locked" t_wait 10 ev a.out new tree/sub/new
t_ok "  mapped by the lock" mapped "$A" "$(ino tree/sub/new)"
t_ok "  its pages stay when evicted" stays tree/sub/new

# ---- deleted and made again ----
old=$(ino tree/a)
rm tree/a
mkfile tree/a 96
new=$(ino tree/a)
t_ok "a file deleted and made again is locked" t_wait 10 mapped "$A" "$new"
t_ok "  the old inode's mapping is released" t_wait 10 not_mapped "$A" "$old"
t_ok "  and a line says so" t_wait 10 eval 'ev a.out replaced tree/a || ev a.out new tree/a'
t_ok "  its pages stay when evicted" stays tree/a

# ---- grown in place ----
old=$(ino tree/b)
head -c 65536 /dev/urandom >>tree/b; sync tree/b
t_ok "a file that grew is locked to its new size" t_wait 10 ev a.out resized tree/b
t_is "  the same inode, twice the bytes" \
	"$(jq -s -c '[.[] | select(.watch.event? == "resized" and .watch.path? == "tree/b")][0].watch | [.inode, .locked, .previous]' a.out)" \
	"[$old,131072,65536]"
t_ok "  all of it stays when evicted" stays tree/b

# ---- symbolic links swapped in are not followed ----
ln -s "$T_DIR/outside" tree/link
mkfile tree/marker 4	# in the same burst: its line says the walk was made
t_ok "a link made in a tree (walk done)" t_wait 10 ev a.out new tree/marker
t_ok "  is not followed: its target is not locked" not_mapped "$A" "$(ino outside)"
old=$(ino g)
ln -s "$T_DIR/outside" stage/g.link
mv -T stage/g.link g
t_ok "a link renamed over a file named is not followed: its lock is released" \
	t_wait 10 ev a.out released g
t_ok "  the old file's mapping is gone" not_mapped "$A" "$old"
t_ok "  the target is not locked" not_mapped "$A" "$(ino outside)"
t_ok "  and stderr says why" grep -q "not following 'g': a symbolic link replaced it" a.err

# ---- a burst of renames: a few rescans, not one each ----
before=$(rescans a.out)
for i in $(seq 50); do mkfile "stage/b$i" 8; done
# 50 renames, 20 ms apart (1 s in all): each is more than the kernel's
# event, less than the 200 ms of quiet that ends a burst
perl -e 'use Time::HiRes "sleep"; for (1..50) { rename("stage/b$_", "tree/burst/f$_") or die; sleep 0.02 }'
t_ok "50 files renamed over are all locked again" \
	t_wait 30 eval '[ "$(evn a.out replaced tree/burst/)" = 50 ]'
after=$(rescans a.out)
t_ok "  in at most 5 rescans ($((after - before)))" test $((after - before)) -le 5 -a $((after - before)) -ge 1
t_is "  and no old inode of theirs is mapped" "$(grep -c '(deleted)' "/proc/$A/maps")" 0

kill -TERM "$A"; wait "$A"; rc=$?
t_is "a watch that met a failure (the link) exits 1 at SIGTERM" "$rc" 1
t_is "  its last line counts the re-locks" \
	"$(jq -s -c '[.[] | select(.watch.event? == "stopped")][0].watch | [.relocks >= 55, .released, .failures]' a.out)" \
	"[true,1,1]"

# ---- the budget: never past it ----
mkfile bf 256
"$PAGECACHE" lock --watch --json=short --max-mem 300k bf >b.out 2>b.err &
B=$!
T_CLEANUP+=("t_kill $B")
t_wait 20 started b.out
old=$(ino bf)
mkfile stage/bf 512
mv stage/bf bf
t_ok "a replacement past --max-mem is refused" t_wait 10 ev b.out refused bf
t_ok "  with a clear message" grep -qF "cannot lock 'bf': 512K would pass the memory budget (the --max-mem limit was reached); the replaced file's lock is released" b.err
t_ok "  the new file is not locked" not_mapped "$B" "$(ino bf)"
t_ok "  the old inode's lock is released" not_mapped "$B" "$old"
t_ok "  the lock goes on" kill -0 "$B"
mkfile stage/bf 128
mv stage/bf bf
t_ok "a smaller replacement fits the budget given back" t_wait 10 ev b.out new bf
t_ok "  and is locked" mapped "$B" "$(ino bf)"
t_kill "$B"

# ---- a user's sparse file: its holes are never locked, the set does not grow ----
# As root watches a file its owner (nobody) may write, the owner truncates
# it from 8 KiB to 64 MiB: a mapping of all of it mlocked would pin 64 MiB
# of zeroed pages the disk never held.
vmlck() { awk '/^VmLck:/ { print $2 }' "/proc/$1/status"; }
mkdir sp; mkfile sp/f 8; chown -R nobody sp; chmod 755 "$T_DIR"
"$PAGECACHE" lock --watch --json=short sp >s.out 2>s.err &
S=$!
T_CLEANUP+=("t_kill $S")
t_wait 20 started s.out
lck0=$(vmlck "$S")
as_nobody truncate -s 64M sp/f
# in the same burst, a new 4 KiB file: its line says the walk was made
as_nobody dd if=/dev/urandom of=sp/m bs=4k count=1 status=none
t_ok "a sparse file grown by its owner: the walk is made" \
	t_wait 10 eval 'ev s.out refused sp/m || ev s.out new sp/m'
lck1=$(vmlck "$S")
t_is "  root's VmLck stays at its data, not 64 MiB of holes (kB)" "$lck1" "$lck0"
t_is "  sp/f keeps its lock, no re-lock" "$(evn s.out resized sp/f)" 0
t_ok "  a new file past the set's first size is refused" ev s.out refused sp/m
t_ok "  with the reason on stderr" grep -qF "cannot lock 'sp/m': 4K would pass the memory budget (the lock set would grow past the 8K it held when first locked;" s.err
t_is "  and on its line" \
	"$(jq -s -c '[.[] | select(.watch.event? == "refused" and .watch.path? == "sp/m")][0].watch | [.reason, .wanted, .locked]' s.out)" \
	'["size",4096,0]'
t_is "  the rescan line counts it" \
	"$(jq -s -c '[.[] | select(.watch.event? == "rescan")][-1].watch | [.refusals, .refused, .locked]' s.out)" \
	'[1,4096,8192]'
t_kill "$S"

# the same file as a lock first finds it: its data is locked, not its holes
pc lock -d --json -P "$T_DIR/sp.pid" sp/f >sp.out 2>sp.err; rc=$?
P=$(cat sp.pid 2>/dev/null)
T_CLEANUP+=("t_kill ${P:-}")
t_is "a sparse file is locked" "$rc" 0
t_is "  its data, its holes left out" "$(jq -c '.total | [.locked, .holes]' sp.out)" "[8192,$((64 * 1048576 - 8192))]"
t_is "  VmLck is its data" "$(vmlck "${P:-none}")" 8
t_kill "${P:-none}"

# ---- growth with data: within --max-mem locked, past it refused ----
mkfile gr 64
"$PAGECACHE" lock --watch --json=short --max-mem 1M gr >g.out 2>g.err &
G=$!
T_CLEANUP+=("t_kill $G")
t_wait 20 started g.out
head -c 262144 /dev/urandom >>gr; sync gr
t_ok "a file grown with data within --max-mem is locked again" t_wait 10 ev g.out resized gr
t_is "  all its data" \
	"$(jq -s -c '[.[] | select(.watch.event? == "resized" and .watch.path? == "gr")][0].watch | [.locked, .previous]' g.out)" \
	'[327680,65536]'
t_is "  VmLck says so" "$(vmlck "$G")" 320
head -c 1048576 /dev/urandom >>gr; sync gr
t_ok "grown past --max-mem: refused" t_wait 10 ev g.out refused gr
t_ok "  with the reason on stderr" grep -qF "(the --max-mem limit was reached); the part locked before stays locked" g.err
t_is "  and on its line" \
	"$(jq -s -c '[.[] | select(.watch.event? == "refused" and .watch.path? == "gr")][0].watch | [.reason, .wanted, .locked]' g.out)" \
	'["max-mem",1376256,327680]'
t_is "  the part locked before stays, no more" "$(vmlck "$G")" 320
kill -TERM "$G"; wait "$G"
t_is "  its last line counts the refusal" \
	"$(tail -n 1 g.out | jq -c '.watch | [.event, .refusals, .refused]')" '["stopped",1,1048576]'

# ---- a parent directory swapped for a link: the watch stays where it began ----
# The directory that holds a named file is the user's: it renames it away
# and puts a link to root's private directory in its place. The rescan its
# move causes must not follow that link: root would pin a file of root's
# the user picked, and its inode and size would be said in the lines. The
# same for the directory above a tree.
mkdir -p u/d2 u/d3/t rs/t; chown -R nobody u; chmod 700 rs
as_nobody sh -c 'head -c 65536 /dev/urandom >u/d2/f; head -c 8192 /dev/urandom >u/d3/t/a'
mkfile rs/f 40; mkfile rs/t/secret 40; chmod 600 rs/f rs/t/secret
"$PAGECACHE" lock --watch --json=short --max-mem 1M u/d2/f u/d3/t >u.out 2>u.err &
U=$!
T_CLEANUP+=("t_kill $U")
t_wait 20 started u.out
held=$(ino u/d2/f)
# the swap, then data added to the file where it is now: its line says the walk was made
as_nobody sh -c "cd u && mv d2 d2old && ln -s '$T_DIR/rs' d2 && sleep 0.5 &&
	head -c 4096 /dev/urandom >>d2old/f"
t_ok "a parent swapped for a link: the rescans follow the directory held" \
	t_wait 10 ev u.out resized u/d2/f
t_ok "  root's file behind the link is not mapped" not_mapped "$U" "$(ino rs/f)"
t_is "  nor named in any line" \
	"$(jq -s --argjson i "$(ino rs/f)" '[.[] | select(.watch.inode? == $i)] | length' u.out)" 0
t_ok "  the file held stays locked" mapped "$U" "$held"
held=$(ino u/d3/t/a)
as_nobody sh -c "cd u && mv d3 d3old && ln -s '$T_DIR/rs' d3 && sleep 0.5 &&
	head -c 4096 /dev/urandom >d3old/t/new"
t_ok "the parent of a tree swapped for a link: the tree held is walked" \
	t_wait 10 ev u.out new u/d3/t/new
t_ok "  root's file behind the link is not mapped" not_mapped "$U" "$(ino rs/t/secret)"
t_ok "  the tree's file stays locked" mapped "$U" "$held"
t_is "  nothing replaced or released" "$(( $(evn u.out replaced u/) + $(evn u.out released u/) ))" 0
t_kill "$U"

# ---- the set's budget of mappings: half of vm.max_map_count ----
# Each piece of data mlocked splits a mapping: files whose data lies one
# page in two (1024 pieces each, the most a file is locked in) would take
# 2047 mappings each. A lock set takes at most half of vm.max_map_count;
# a file past that is refused with the reason, the others are locked, and
# the process keeps mappings of its own (on main the set took them all).
mmc=$(cat /proc/sys/vm/max_map_count)
if [ "$mmc" -gt 300000 ]; then
	t_skip "the budget of mappings" "vm.max_map_count is $mmc: too many files to fill half"
else
	nfrag=$(( mmc / 2 / 2047 + 2 ))
	# frag FILE...: a page of data every other page, 1024 of them
	frag() { perl -e 'my $ps = shift; my $b = "x" x $ps;
		for my $f (@ARGV) { open(my $h, ">", $f) or die;
			for my $i (0..1023) { sysseek($h, 2 * $i * $ps, 0); syswrite($h, $b) } }' \
		"$PS" "$@"; }
	mkdir frag
	frag $(seq -f frag/f%g "$nfrag")
	mkfile legit 64
	"$PAGECACHE" lock --json=short -j1 frag legit >m.out 2>m.err &
	M=$!
	T_CLEANUP+=("t_kill $M")
	t_wait 30 started m.out
	fragmaps=$(grep -c "$T_DIR/frag/" "/proc/$M/maps")
	t_ok "files in many pieces take at most half of vm.max_map_count ($fragmaps of $mmc)" \
		test "$fragmaps" -le $(( mmc / 2 ))
	t_ok "  the file that needs one mapping is locked" mapped "$M" "$(ino legit)"
	t_is "  those past the budget are refused, the rest locked" \
		"$(jq -c '.total? // empty | [.files, .failures]' m.out)" \
		"[$(( mmc / 2 / 2047 + 1 )),$(( nfrag - mmc / 2 / 2047 ))]"
	t_ok "  with the reason" grep -q "mappings would pass the lock set's budget of them" m.err
	t_ok "  no mapping failed (ENOMEM)" eval '! grep -q "Cannot allocate memory" m.err'
	t_kill "$M"
	# --watch: a file in many pieces arriving once the budget is spent is refused, said
	mkdir fw; mv frag/* fw/
	"$PAGECACHE" lock --watch --json=short --max-mem 1G -j1 fw >n.out 2>n.err &
	N=$!
	T_CLEANUP+=("t_kill $N")
	t_wait 30 started n.out
	frag stage/f1new; mv stage/f1new fw/
	t_ok "a new file past the budget of mappings is refused" t_wait 10 ev n.out refused fw/f1new
	t_is "  its reason on its line" \
		"$(jq -s -c '[.[] | select(.watch.event? == "refused" and .watch.path? == "fw/f1new")][0].watch.reason' n.out)" \
		'"pieces"'
	t_kill "$N"
	rm -rf fw frag
fi

# ---- SIGTERM: everything released, exit 0 (a supervisor's child) ----
mkfile h 64
"$PAGECACHE" lock --watch --json=short h >c.out 2>c.err &
C=$!
T_CLEANUP+=("t_kill $C")
t_wait 20 started c.out
mkfile stage/h 32
mv stage/h h
t_ok "the child re-locks" t_wait 10 ev c.out replaced h
kill -TERM "$C"; wait "$C"; rc=$?
t_is "SIGTERM ends a clean watch with 0" "$rc" 0
t_is "  its last line" "$(tail -n 1 c.out | jq -c '.watch | [.event, .files, .relocks, .failures]')" '["stopped",1,1,0]'
t_is "  nothing on stderr" "$(cat c.err)" ""
pc evict h >/dev/null 2>&1
t_is "  and the pages are free to go" "$(cached_pages h)" 0

# ---- a tree removed, then made again ----
mkdir rel; mkfile rel/y 16
"$PAGECACHE" lock --watch --json=short rel >r.out 2>r.err &
R=$!
T_CLEANUP+=("t_kill $R")
t_wait 20 started r.out
rm -r rel
t_ok "a tree removed is released" t_wait 10 ev r.out released rel/y
mkdir rel; mkfile rel/z 16
t_ok "  and locked when made again (its parent is watched)" t_wait 10 ev r.out new rel/z
t_ok "  mapped by the lock" mapped "$R" "$(ino rel/z)"
t_kill "$R"

# ---- --daemon --watch: the daemon watches ----
mkfile d 64
pc lock -d --watch --max-mem 1M -P "$T_DIR/d.pid" d >d.out 2>d.err; rc=$?
D=$(cat d.pid 2>/dev/null)
T_CLEANUP+=("t_kill ${D:-}")
t_is "lock -d --watch returns 0 once locked" "$rc" 0
mkfile stage/d 128
mv stage/d d
t_ok "the daemon locks the replacement" t_wait 10 mapped "${D:-none}" "$(ino d)"
kill -TERM "${D:-none}"
t_ok "SIGTERM ends it" t_wait 10 t_gone "${D:-none}"
t_ok "  and removes its pidfile" test ! -e d.pid

# ---- no inotify watch: said once, a timer instead ----
mkfile e 64
PAGECACHE_FAULT=inotify_add_watch:ENOSPC "$PAGECACHE" lock --watch --watch-interval 1 \
	--json=short e tree/sub >e.out 2>e.err &
E=$!
T_CLEANUP+=("t_kill $E")
t_wait 20 started e.out
t_ok "a full watch limit is said, with the sysctl" grep -q "fs.inotify.max_user_watches" e.err
mkfile stage/e 32
mv stage/e e
t_ok "  and the timer's walk locks the replacement" t_wait 10 ev e.out replaced e
t_is "  said once, whatever the walks" "$(grep -c "cannot watch" e.err)" 1
t_kill "$E"

# ---- usage ----
pc lock --watch-interval 5 f >o 2>e; rc=$?
t_is "--watch-interval without --watch: usage error" "$rc" 2
pc lock --watch --watch-interval soon f >o 2>e; rc=$?
t_is "--watch-interval takes seconds" "$rc" 2
pc lock --watch --pid $$ >o 2>e; rc=$?
t_is "--watch with --pid: usage error" "$rc" 2

t_done
