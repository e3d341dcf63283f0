#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache daemon and status against a hostile local user (issue 21): a
# configured path on a FUSE file system that stops answering must not
# freeze the daemon through a user's status; a path its user swaps for a
# link to root's secret file must not show that file's residency through
# status; and status's time limit covers its connect (a daemon that never
# accepts, its backlog full). Each failed before its fix.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

t_root || { t_skip "the daemon, hostile" "not root (tests need root)"; t_done; exit; }
t_have python3 jq setpriv || { t_skip "the daemon, hostile" "$T_WHY"; t_done; exit; }
STALLFS=${STALLFS:-$(dirname "$PAGECACHE")/tests/stallfs}
chmod 755 "$T_DIR"
mkdir -p run state
st() { pc status --socket run/pc.sock --json "$@"; }
nb() { nobody_pc status --socket run/pc.sock --json "$@"; }
snaps() {	# snaps SERVICE: its snapshot count, as root sees it
	st | jq --arg s "$1" '.services[] | select(.service == $s) | .snapshots'
}
snaps_ge() { [ "$(snaps "$1")" -ge "$2" ]; }

# every directory from / down to $1 is root's and writable by nobody else
# (a sticky one aside): where a link root makes may be followed
trusted_chain() {
	local d=$1 u m
	while :; do
		read -r u m < <(stat -c '%u %a' "$d") || return 1
		[ "$u" = 0 ] || return 1
		(( (8#$m & 8#22) == 0 || (8#$m & 8#1000) )) || return 1
		[ "$d" = / ] && return 0
		d=$(dirname "$d")
	done
}

# ---- the files: a user's, and root's secret in a directory only root enters ----
mkdir -m 700 secret
mkfile secret/f.bin 2048; chmod 600 secret/f.bin; cat secret/f.bin >/dev/null
mkdir usr; chown 65534:65534 usr
mkfile usr/f 64; chown 65534:65534 usr/f; cat usr/f >/dev/null
user_pages=$((64 * 1024 / PS))
ln -s "$T_DIR/secret/f.bin" rootlink	# root's link, in root's directories

have_fuse=yes
if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	have_fuse="this kernel has no FUSE (/dev/fuse)"
elif [ ! -x "$STALLFS" ]; then
	have_fuse="no stallfs at '$STALLFS' (make check builds it)"
fi
mkdir stall ctl
if [ "$have_fuse" = yes ]; then
	# a user's FUSE server that stops answering: once armed, every lookup
	# (and the root's getattr) is held until ctl/release
	T_CLEANUP+=("umount -l $T_DIR/stall")
	"$STALLFS" --any-user "$T_DIR/stall" "$T_DIR/ctl" &
	SFPID=$!
	T_CLEANUP+=("t_kill $SFPID" "touch $T_DIR/ctl/release")
	if t_wait 5 grep -q " $T_DIR/stall fuse.pc-stallfs " /proc/mounts; then
		touch ctl/arm
	else
		have_fuse="stallfs did not mount"
	fi
fi

# ---- 1. a user's status while a configured path hangs ----
# Before: a non-root status forked a check that stat()ed every configured
# path as the peer, then waited for it without end (waitpid); on a hung
# FUSE mount the check sat in D state past SIGKILL, and the daemon froze:
# no status, no signal, no snapshot. And a job in D state was waited for
# without end when the daemon stopped, and a pid-file there was read by
# the daemon itself for every status.
if [ "$have_fuse" = yes ]; then
	# hung: no timeout =, its final snapshot first in the file
	cat >h.conf <<EOF2
[daemon]
socket = $T_DIR/run/pc.sock
stop-timeout = 20
[service hung]
paths = $T_DIR/stall/f
snapshot = $T_DIR/state/hung.snap
interval = 0
restore = no
[service other]
paths = $T_DIR/usr/f
snapshot = $T_DIR/state/other.snap
interval = 1
restore = no
[service pidf]
pid-file = $T_DIR/stall/svc.pid
snapshot = $T_DIR/state/pidf.snap
interval = 0
restore = no
EOF2
	chmod 644 h.conf
	# metrics = on the hung mount: before, the daemon wrote there from its
	# loop and froze at the first write (SIGTERM included)
	printf '[daemon]\nmetrics = %s\n[service m]\npaths = %s\nsnapshot = %s\n' \
		"$T_DIR/stall/m.prom" "$T_DIR/usr/f" "$T_DIR/state/m.snap" >m.conf
	timeout -k 2 10 "$PAGECACHE" daemon --check --config m.conf >m.out 2>m.err; rc=$?
	t_is "metrics = on a FUSE mount is refused (exit 1)" "$rc" 1
	t_ok "saying why" grep -q "not using $T_DIR/stall/m.prom for its metrics: .* is on a FUSE mount" m.err
	"$PAGECACHE" daemon --config h.conf 2>hung.log &
	DPID=$!
	T_CLEANUP+=("kill -9 $DPID")
	t_wait 10 test -S run/pc.sock
	as_nobody true	# its copy of the binary made first
	timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$T_DIR/.pagecache-nobody" status --socket run/pc.sock --json >nb.json 2>nb.err; rc=$?
	t_is "a user's status answers while a configured path hangs (exit 0)" "$rc" 0
	timeout 30 "$PAGECACHE" status --socket run/pc.sock --json >root.json 2>root.err; rc=$?
	t_is "and root's status after it answers too (exit 0)" "$rc" 0
	t_is "root sees the three services" "$(jq '.services | length' root.json 2>/dev/null)" 3
	t_is "a pid-file on the hung mount is not read: the service counts as down" \
		"$(jq -r '.services[] | select(.service == "pidf") | .up' root.json 2>/dev/null)" false
	t_ok "saying why" grep -q 'svc.pid is on a FUSE mount: not read' hung.log
	kill -HUP $DPID
	t_ok "a SIGHUP after it is taken at once" t_wait 5 grep -q 'SIGHUP: reading' hung.log
	n=$(grep -c "\[service other\]: snapshot started" hung.log)
	t_ok "and the snapshots go on" t_wait 10 sh -c "[ \$(grep -c '\[service other\]: snapshot started' hung.log) -ge $((n + 2)) ]"
	# the final snapshot of hung hangs in the kernel past SIGKILL, and it
	# has no timeout =. Before: it took the whole stop budget (90 s) and
	# the final snapshots after it were not taken.
	kill -TERM $DPID
	t_ok "SIGTERM while a snapshot hangs there: the daemon stops all the same" t_wait 30 t_gone $DPID
	t_ok "letting that job go, and saying so" grep -q 'still there after SIGKILL' hung.log
	t_ok "its final snapshot said not taken" grep -q '\[service hung\]: its final snapshot was not taken' hung.log
	t_ok "the other service's final snapshot taken all the same" \
		sh -c "sed -n '/final snapshots, then stopping/,\$p' hung.log | grep -q '\[service other\]: snapshot written'"
	touch ctl/release
	t_kill $SFPID $DPID
	umount -l "$T_DIR/stall" 2>/dev/null
	rm -f run/pc.sock
else
	t_skip "a user's status while a configured path hangs" "$have_fuse"
fi

cat >d.conf <<EOF2
[daemon]
socket = $T_DIR/run/pc.sock
[service swap]
paths = $T_DIR/usr/f
snapshot = $T_DIR/state/swap.snap
interval = 1
restore = no
[service rootlink]
paths = $T_DIR/rootlink
snapshot = $T_DIR/state/rootlink.snap
interval = 1
restore = no
[service rest]
paths = $T_DIR/usr/g
snapshot = $T_DIR/state/rest.snap
interval = 1
restore = yes
[service pidlink]
pid-file = $T_DIR/usr/run/app.pid
snapshot = $T_DIR/state/pidlink.snap
interval = 0
restore = no
EOF2
chmod 644 d.conf
# root's pid-file, in root's directory, naming root's process; the
# user's run/ is about to become a link to it
mkdir rootrun usr/run; chown 65534:65534 usr/run
sleep 300 &
RPID=$!
T_CLEANUP+=("t_kill $RPID")
echo $RPID >rootrun/app.pid
cat usr/f secret/f.bin >/dev/null	# cached now, whatever part 1 took
# the previous run's snapshot of a user's file, restored at start
mkfile usr/g 64; chown 65534:65534 usr/g; cat usr/g >/dev/null
"$PAGECACHE" snapshot -o state/rest.snap "$T_DIR/usr/g" >/dev/null 2>&1
"$PAGECACHE" daemon --config d.conf 2>daemon.log &
DPID=$!
T_CLEANUP+=("kill -9 $DPID")
t_ok "the daemon starts" t_wait 10 test -S run/pc.sock

# ---- 2. a user swaps its configured path for a link to root's secret ----
# Before: the snapshot followed the link and recorded root's file, and
# status, judging the path as it was when asked (swapped back), showed
# the user the residency of a file it cannot even list.
t_ok "the user's file is snapshotted" t_wait 10 sh -c \
	"[ \"\$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq '.services[] | select(.service == \"swap\") | .snapshot_result')\" = '\"written\"' ]"
# own_pages N: its own file's pages, all of them or what the machine's
# reclaimer left (a page of usr/f taken between the cat and the daemon's
# snapshot gave 15 of 16 once here): never none, never more than the file
own_pages() { [ "${1:-0}" -ge 1 ] && [ "$1" -le "$user_pages" ] && echo ok || echo "$1"; }
t_is "the user sees its own service, its pages" \
	"$(own_pages "$(nb 2>/dev/null | jq '.services[] | select(.service == "swap") | .snapshot_pages')")" ok
as_nobody sh -c "mv '$T_DIR/usr/f' '$T_DIR/usr/f.real' && ln -s '$T_DIR/secret/f.bin' '$T_DIR/usr/f'"
n=$(snaps swap)
t_ok "two snapshots while the link is there" t_wait 10 snaps_ge swap $((n + 2))
as_nobody sh -c "rm '$T_DIR/usr/f' && mv '$T_DIR/usr/f.real' '$T_DIR/usr/f'"
drop usr/f	# the next one is empty: kept, so the figures stay the link's, if any
n=$(snaps swap)
t_wait 10 snaps_ge swap $((n + 2))
nb >nb.json 2>nb.err
t_is "the user sees no residency of root's secret file (no row with more than its own $user_pages pages)" \
	"$(jq --argjson p "$user_pages" '[.services[] | select(.snapshot_pages > $p)] | length' nb.json)" 0
t_is "its service still shows its own file's pages" \
	"$(own_pages "$(jq '.services[] | select(.service == "swap") | .snapshot_pages' nb.json)")" ok
t_ok "the snapshot did not follow the user's link, and said so" \
	grep -q "not following '$T_DIR/usr/f': the link $T_DIR/usr/f is not root's" daemon.log
if trusted_chain "$T_DIR"; then
	t_ok "a link root made in root's directories is followed (root's file recorded)" \
		test "$(st | jq '.services[] | select(.service == "rootlink") | .snapshot_pages')" -gt "$user_pages"
	t_is "and the user does not see what it recorded (root's file, 0600)" \
		"$(jq '[.services[] | select(.service == "rootlink")] | length' nb.json)" 0
else
	t_skip "a link root made is followed" "$T_DIR is under a directory not root's alone"
	t_skip "and the user does not see what it recorded" "as above"
fi

# ---- 2c. the start-up restore's figures ----
# Before: a peer that may see a service saw its restore figures too, but
# they come from the previous run's snapshot, whose owners were never
# judged (a link followed then, a file since chmod-ed).
t_wait 10 sh -c "[ \"\$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq -r '.services[] | select(.service == \"rest\") | .snapshot_result')\" = written ]"
t_ok "root sees the restore's figures" \
	test "$(st | jq '.services[] | select(.service == "rest") | .restore_pages')" -gt 0
nb >nb.json 2>nb.err
t_is "the user sees the service" \
	"$(jq '[.services[] | select(.service == "rest")] | length' nb.json)" 1
t_is "but none of its restore's figures" \
	"$(jq -c '.services[] | select(.service == "rest") | [.restore_result, .restore_pages, .restore_read_pages]' nb.json)" \
	'[null,null,null]'

# ---- 2b. a user's link to root's pid-file ----
# Before: links on the way to a pid-file were followed whoever made them,
# and a pid-file that is root's may name any process: the user's service
# was "up" as root's process, whose files root's snapshot then recorded.
as_nobody sh -c "rmdir '$T_DIR/usr/run' && ln -s '$T_DIR/rootrun' '$T_DIR/usr/run'"
t_is "a pid-file reached through a user's link is not read: the service counts as down" \
	"$(st | jq -r '.services[] | select(.service == "pidlink") | .up')" false
t_ok "saying why" grep -q "not reading $T_DIR/usr/run/app.pid: the link $T_DIR/usr/run is not root's" daemon.log
t_kill $RPID

kill -TERM $DPID
t_ok "SIGTERM: the daemon stops" t_wait 20 t_gone $DPID
wait $DPID; rc=$?
t_is "and exits 0" "$rc" 0

# ---- 4. a metrics directory a user owns ----
# Before: only "absolute" was asked of metrics =; the daemon wrote there
# from its loop, so the directory's owner could mount FUSE on it (or plant
# a link) and freeze the daemon at the next write.
mkdir usr/mdir; chown 65534:65534 usr/mdir
sed "s|^socket = .*|&\nmetrics = $T_DIR/usr/mdir/m.prom|" d.conf >m2.conf
timeout -k 2 5 "$PAGECACHE" daemon --config m2.conf 2>m2.err; rc=$?
t_is "a daemon with metrics = in a user's directory does not start (exit 1)" "$rc" 1
t_ok "saying why" grep -q "not using $T_DIR/usr/mdir/m.prom for its metrics: .*not root's" m2.err
rm -f run/pc.sock

# ---- 5. a link swapped in between --safe-links's check and the walk ----
# Before: the path was judged, then walked again by name; a user
# exchanging its file and a link to root's secret (RENAME_EXCHANGE in a
# loop) had root's file recorded in about 1 of 4 snapshots. Now the walk
# starts from the fd the check reached.
PY=/usr/bin/python3	# not root's pyenv shim, which nobody cannot run
[ -x "$PY" ] || PY=$(command -v python3)
if as_nobody "$PY" -c 'import ctypes; ctypes.CDLL(None).renameat2' 2>/dev/null; then
	mkdir race; mkfile race/f 64; ln -s "$T_DIR/secret/f.bin" race/alt
	chown -R -h 65534:65534 race
	cat >race.py <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)	# RENAME_EXCHANGE
PY
	# setpriv execs it: $! is the racer itself
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$PY" race.py "$T_DIR/race/f" "$T_DIR/race/alt" >/dev/null 2>&1 &
	RACER=$!
	T_CLEANUP+=("kill $RACER")
	n=0
	for i in $(seq 30); do
		"$PAGECACHE" snapshot --safe-links --owners --kv -o race.snap -- "$T_DIR/race/f" \
			2>/dev/null | grep -q 'owners=0:' && n=$((n + 1))
	done
	kill $RACER; wait $RACER 2>/dev/null
	t_is "30 snapshots of a user's path it swaps for a link: none records root's file" "$n" 0
else
	t_skip "a link swapped in after the check" "no python3 with renameat2 for nobody"
fi

# ---- 3. status's time limit covers its connect ----
# Before: connect() had no limit; with the daemon's backlog full (it was
# frozen) root's status hung for as long as the daemon did.
cat >full.py <<'PY'
import socket, sys, time
path, ready = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX); s.bind(path); s.listen(0)
held = []
for _ in range(64):		# fill the backlog: it never accepts
    c = socket.socket(socket.AF_UNIX); c.setblocking(False)
    try:
        c.connect(path)
    except BlockingIOError:
        open(ready, "w").write("full\n")
        break
    held.append(c)
time.sleep(600)
PY
python3 full.py "$T_DIR/full.sock" full.ready &
FPID=$!
T_CLEANUP+=("kill $FPID")
t_ok "a socket whose backlog is full" t_wait 5 test -s full.ready
timeout 30 "$PAGECACHE" status --socket full.sock >o 2>e; rc=$?
t_is "status against it gives up within its limit (exit 1, not killed)" "$rc" 1
t_ok "saying it did not answer in time" grep -q "did not answer within" e
t_kill $FPID

# ---- 4. root = DIR: a user's link there leads the restore nowhere ----
# Before (the fork of issue 23): the start-up restore opened root = by
# name, following every link; a user who owns a directory on the way
# swapped the root for a link to root's secret directory, with a file of
# the same name, size and mtime, and root's restore read root's file.
mkdir -p usr/rt/app secret/app
mkfile secret/app/f 256; chmod 600 secret/app/f
head -c $((256 * 1024)) /dev/zero >usr/rt/app/f; touch -r secret/app/f usr/rt/app/f
chown -R 65534:65534 usr/rt
cat usr/rt/app/f >/dev/null
pc snapshot --root "$T_DIR/usr/rt/app" -o state/rt.snap "$T_DIR/usr/rt/app" >/dev/null 2>&1
chmod 644 state/rt.snap
as_nobody sh -c "mv '$T_DIR/usr/rt/app' '$T_DIR/usr/rt/app.old' && ln -s '$T_DIR/secret/app' '$T_DIR/usr/rt/app'"
drop secret/app/f
printf '[daemon]\nsocket = %s/run/pc.sock\n[service rt]\nroot = %s/usr/rt/app\npaths = %s/usr/rt/app\nsnapshot = %s/state/rt.snap\nrestore = yes\ninterval = 0\n' \
	"$T_DIR" "$T_DIR" "$T_DIR" "$T_DIR" >rt.conf
chmod 644 rt.conf
"$PAGECACHE" daemon --config rt.conf 2>rt.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
rt_ended() { [ "$(st | jq -r '.services[0].restore_result')" != null ]; }
t_wait 10 test -S run/pc.sock
t_wait 10 rt_ended
t_is "root = a user's link to root's directory: the restore is refused" \
	"$(st | jq -r '.services[0].restore_result')" failed
t_ok "saying why" grep -q "not restoring beneath '$T_DIR/usr/rt/app': the link $T_DIR/usr/rt/app is not root's" rt.log
t_is "root's file was not read" "$(cached_pages secret/app/f)" 0
t_kill $RPID

# ---- 5. a snapshot job of which every file failed writes nothing ----
# Before: the job's engine failures were not counted as the command's, so
# a service whose every path lay outside its root wrote an empty snapshot
# and said "written"; `snapshot` itself writes none.
mkdir -p rt2/tree rt2/other
mkfile rt2/other/f 16; cat rt2/other/f >/dev/null
printf '[daemon]\nsocket = %s/run/pc.sock\n[service b]\nroot = %s/rt2/tree\npaths = %s/rt2/other\nsnapshot = %s/state/b.snap\nrestore = no\ninterval = 0\n' \
	"$T_DIR" "$T_DIR" "$T_DIR" "$T_DIR" >b.conf
chmod 644 b.conf
"$PAGECACHE" daemon --config b.conf 2>b.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
kill -TERM $RPID
t_wait 20 sh -c "! kill -0 $RPID 2>/dev/null"
t_ok "every file of a snapshot job failed: no snapshot written" test ! -e state/b.snap
t_ok "the log says the snapshot failed" grep -q '\[service b\]: snapshot failed' b.log

t_done
