#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache daemon and pagecache status, end to end: the configuration
# checked, restore at start then READY=1 (sd_notify on a socket this test
# listens on), snapshots on the interval, the guard, SIGHUP reload (a bad
# file keeps the running configuration), metrics, status over the socket
# with the peer's credentials, SIGTERM's final snapshot, hostile places.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

t_root || { t_skip "the daemon" "not root (it snapshots others' files; tests need root)"; t_done; exit; }
t_have python3 || { t_skip "the daemon" "$T_WHY"; t_done; exit; }
chmod 755 "$T_DIR"
mkdir -p data state run
mkfile data/a 1024
mkfile data/b 512

# ---- the configuration ----
conf() {	# conf FILE: a file root may read (0644, root's)
	cat >"$1"; chmod 644 "$1"
}
conf good.conf <<EOF
# a comment
[daemon]
socket  = $T_DIR/run/pc.sock   # inline comment
metrics = $T_DIR/run/pagecache.prom
[service db]
paths    = $T_DIR/data
snapshot = $T_DIR/state/db.snap
interval = 1
restore  = yes
max-mem  = 64M
EOF
pc daemon --check --config good.conf >o 2>e; rc=$?
t_is "--check of a good file exits 0" "$rc" 0
t_ok "--check lists the service" grep -q "\[service db\] paths -> $T_DIR/state/db.snap, every 1s" o

bad() {	# bad NAME WANT < <(printf FILE): refused, at its line (not in a pipe: a
	# pipeline's subshell would count its checks apart from the plan)
	conf bad.conf
	pc daemon --check --config bad.conf >o 2>e; local rc=$?
	t_is "refused: $1 (exit 1)" "$rc" 1
	t_ok "and says: $2" grep -qF -- "$2" e
}
bad "a misspelt key" "bad.conf:3: unknown key 'intervall'" < <(printf '[service x]\npaths = /tmp\nintervall = 5\n')
bad "a service without files" "say what to snapshot" < <(printf '[service x]\ninterval = 5\n')
bad "a bad interval" "interval: whole seconds" < <(printf '[service x]\npaths = /tmp\ninterval = soon\n')
bad "a bad size" "max-mem: a size" < <(printf '[service x]\npaths = /tmp\nmax-mem = lots\n')
bad "a bad lock-max" "lock-max: a size such as 64M, not 'lots'" < <(printf '[service x]\npaths = /tmp\nlock = paths\nlock-max = lots\n')
bad "lock-max without lock" "lock-max = needs lock =" < <(printf '[service x]\npaths = /tmp\nlock-max = 1G\n')
bad "a relative path" "is not an absolute path" < <(printf '[service x]\npaths = relative/dir\n')
bad "a service twice" "[service x] given twice (first at line 1)" < <(printf '[service x]\npaths = /tmp\n[service x]\npaths = /tmp\n')
bad "a name with a slash" "a name is 1-64 letters" < <(printf '[service ../x]\npaths = /tmp\n')
bad "an unclosed quote" "double quote is not closed" < <(printf '[service x]\npaths = "/tmp/a b\n')
bad "an unknown section" "unknown section [servce x]" < <(printf '[servce x]\n')
cp good.conf ww.conf; chmod 666 ww.conf
pc daemon --check --config ww.conf >o 2>e; rc=$?
t_is "a world-writable file is refused (exit 1)" "$rc" 1
t_ok "saying why" grep -q "writable by nobody else" e
ln -s good.conf link.conf
pc daemon --check --config link.conf >o 2>e; rc=$?
t_is "a symbolic link is refused (exit 1)" "$rc" 1
t_ok "saying so" grep -q "symbolic link" e
pc daemon --check --config nosuch.conf >o 2>e; rc=$?
t_is "a missing file: exit 1" "$rc" 1
pc daemon --config good.conf extra >o 2>e; rc=$?
t_is "an operand is a usage error (2)" "$rc" 2
printf '[service q]\npaths = "%s/with space" %s/data\n' "$T_DIR" "$T_DIR" | conf q.conf
pc daemon --check --config q.conf >o 2>e
t_is "a quoted path with a space is one path" "$(grep -c 'paths ->' o)" 1

# ---- sd_notify: a socket this test listens on ----
cat >listen.py <<'EOF'
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as f:
    while True:
        f.write(s.recv(4096).decode() + "\n")
EOF
python3 listen.py "$T_DIR/notify.sock" notify.log &
LPID=$!
T_CLEANUP+=("kill $LPID")
t_wait 5 test -S notify.sock

# a snapshot to restore at start: data/a cached, then dropped
cat data/a >/dev/null
pc snapshot -o state/db.snap data >/dev/null 2>&1
wantall=$(pc show --json state/db.snap | jq .total.pages)
want=$(pc show --json state/db.snap | jq --arg f "${T_DIR#/}/data/a" '.files[] | select(.path == $f) | .pages')
drop data/a data/b
t_is "data/a is cold before the daemon starts" "$(cached_pages data/a)" 0

NOTIFY_SOCKET=$T_DIR/notify.sock "$PAGECACHE" daemon --config good.conf 2>daemon.log &
DPID=$!
T_CLEANUP+=("kill -9 $DPID")
t_ok "READY=1 once the start-up restore is done" t_wait 20 grep -q '^READY=1' notify.log
t_ok "the restore was logged before READY" grep -q 'restore done: .* read' daemon.log
got=$(resident_pages data/a "$want")
t_ok "restore at start brought data/a back ($got of $want pages)" test "$got" -ge $((want * 9 / 10))
t_ok "STATUS= said what it did" grep -q '^STATUS=' notify.log

st() { pc status --socket run/pc.sock --json "$@"; }
t_ok "status answers" st
st >s.json
t_is "status: one service" "$(jq '.services | length' s.json)" 1
t_is "status: its restore is done" "$(jq -r '.services[0].restore_result' s.json)" done
t_is "status: the pages the restore wanted" "$(jq '.services[0].restore_pages' s.json)" "$wantall"
# (interval 1: one that outlasts its second, under TCG, is still due at
# the time it was queued for; the next is set when it ends)
t_ok "status: next snapshot due after now, or one running or queued" sh -c \
	"case \"\$(jq -r '.services[0].state' s.json)\" in snapshot|queued) exit 0;; esac; [ \"\$(jq '.services[0].next_snapshot_time' s.json)\" -ge $(($(date +%s) - 1)) ]"
pc status --socket run/pc.sock >human 2>&1
t_ok "status: a table for people" grep -q '^SERVICE' human

# ---- snapshots on the interval ----
t_ok "snapshots come every interval (3 within 10 s)" \
	t_wait 10 sh -c "[ \$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq '.services[0].snapshots') -ge 3 ]"
st >s.json
t_is "the last one was written" "$(jq -r '.services[0].snapshot_result' s.json)" written
t_ok "and recorded data/a's pages" test "$(jq '.services[0].snapshot_pages' s.json)" -ge "$((want * 9 / 10))"

# ---- metrics: the textfile ----
t_ok "the metrics file is there" test -f run/pagecache.prom
t_is "metrics: mode 0640 (it names services)" "$(stat -c %a run/pagecache.prom)" 640
if t_have promtool; then
	t_ok "promtool check metrics is clean" sh -c 'promtool check metrics <run/pagecache.prom'
else
	t_skip "promtool check metrics" "$T_WHY"
fi
t_ok "metrics: snapshot bytes of service db" grep -qE '^pagecache_service_snapshot_bytes\{service="db"\} [1-9]' run/pagecache.prom
t_ok "metrics: restore bytes" grep -qE '^pagecache_service_restore_bytes\{service="db"\} [0-9]' run/pagecache.prom
st_prom() { pc status --socket run/pc.sock --prom; }
st_prom >sp.prom
t_ok "status --prom: the same series as the textfile" grep -qE '^pagecache_service_snapshot_bytes\{service="db"\} [1-9]' sp.prom
if t_have promtool; then
	t_ok "status --prom: promtool check metrics is clean" sh -c 'promtool check metrics <sp.prom'
else
	t_skip "status --prom: promtool check metrics" "$T_WHY"
fi
t_ok "metrics: the last snapshot's time" grep -qE '^pagecache_service_last_snapshot_timestamp_seconds\{service="db"\} [0-9]{10}' run/pagecache.prom

# ---- the guard: nothing cached while we cannot tell the service runs ----
cp state/db.snap kept.snap
n0=$(st | jq '.services[0].snapshots')
drop data/a data/b
t_ok "a snapshot after the drop" \
	t_wait 10 sh -c "[ \$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq '.services[0].snapshots') -ge $((n0 + 2)) ]"
t_is "an empty snapshot is kept, not written" "$(st | jq -r '.services[0].snapshot_result')" kept
pc show --json state/db.snap >show.json
t_ok "the last good snapshot is intact (its pages are still there)" test "$(jq .total.pages show.json)" -ge "$((want * 9 / 10))"

# ---- SIGHUP: reload ----
cat data/a >/dev/null
sed 's/^interval = 1/interval = 0/' good.conf | conf good.conf.new
cat >>good.conf.new <<EOF
[service second]
paths = $T_DIR/data/b
snapshot = $T_DIR/state/second.snap
interval = 0
EOF
cp good.conf.new good.conf
: >notify.log
kill -HUP $DPID
t_ok "SIGHUP: two services" t_wait 5 sh -c "[ \$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq '.services | length') = 2 ]"
t_ok "SIGHUP: RELOADING=1 then READY=1" t_wait 5 sh -c 'grep -q "^RELOADING=1" notify.log && grep -q "^READY=1" notify.log'
t_is "SIGHUP: the first keeps its counts" "$(st | jq '.services[0].snapshots >= 3')" true
t_is "SIGHUP: interval 0: no next snapshot" "$(st | jq '.services[0].next_snapshot_time')" null
printf '[service broken\n' >>good.conf
kill -HUP $DPID
t_ok "SIGHUP with a bad file: says so" t_wait 5 grep -q 'keeping the running configuration' daemon.log
t_is "and keeps both services" "$(st | jq '.services | length')" 2
t_ok "the daemon still runs" kill -0 $DPID
cp good.conf.new good.conf

# ---- who sees what: the peer's credentials ----
nobody_pc status --socket run/pc.sock --json >nb.json 2>nb.err; rc=$?
t_is "status as nobody answers (exit 0)" "$rc" 0
t_is "nobody sees no service (it may write none of their files)" "$(jq '.services | length' nb.json)" 0
mkdir -p pub && mkfile pub/mine 64 && chown 65534:65534 pub/mine
cat >>good.conf <<EOF
[service nobodys]
paths = $T_DIR/pub/mine
snapshot = $T_DIR/state/nobodys.snap
interval = 1
restore = no
EOF
kill -HUP $DPID
t_wait 5 sh -c "[ \$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq '.services | length') = 3 ]"
# judged on what its last snapshot recorded of each file it read: so each
# change below is seen once two more snapshots were taken
nobodys_snaps() { st | jq '.services[] | select(.service == "nobodys") | .snapshots'; }
nobodys_ge() { [ "$(nobodys_snaps)" -ge "$1" ]; }
nb_after() {	# nb_after: nobody's services, once two more snapshots of nobodys ended
	t_wait 10 nobodys_ge $(($(nobodys_snaps) + 2))
	nobody_pc status --socket run/pc.sock --json 2>/dev/null | jq -r '[.services[].service] | join(",")'
}
t_is "nobody sees exactly the service of its own file" "$(nb_after)" nobodys
chmod 444 pub/mine
t_is "nobody still sees it with the file read-only (it owns it: mincore's rule)" "$(nb_after)" nobodys
chown 0:0 pub/mine; chmod 666 pub/mine
t_is "or root's file that anyone may write" "$(nb_after)" nobodys
chgrp 65534 pub/mine; chmod 646 pub/mine
t_is "but not root's file of its group with no group write bit (the kernel's rule)" "$(nb_after)" ""
chgrp 0 pub/mine; chmod 644 pub/mine
t_is "nor root's file it may not write" "$(nb_after)" ""
t_is "root sees all three" "$(st | jq '.services | length')" 3

# ---- SIGTERM: the final snapshot ----
drop data/b	# a different picture: data/a whole, data/b not at all (more
cat data/a >/dev/null	# than the guard's half of the last one, so it is written)
kill -TERM $DPID
t_ok "SIGTERM: the daemon stops" t_wait 20 t_gone $DPID
wait $DPID; rc=$?
t_is "and exits 0" "$rc" 0
t_ok "after a final snapshot of each service" grep -q 'final snapshots' daemon.log
t_is "the final snapshot is the cache at stop (data/a, not data/b)" \
	"$(pc show --json state/db.snap | jq -r '[.files[].path | sub(".*/"; "")] | join(",")')" a
t_ok "the second service's final snapshot too" test -f state/second.snap
t_ok "the socket is gone" test ! -e run/pc.sock
t_ok "STOPPING=1 was said" grep -q '^STOPPING=1' notify.log

# ---- a lock set: kept locked, re-locked when a file is replaced ----
if t_cap ipc_lock; then
	mkdir -p hot
	mkfile hot/lib.so 256
	cat >lock.conf <<EOF
[daemon]
socket = $T_DIR/run/pc.sock
[service hot]
paths = $T_DIR/hot
snapshot = $T_DIR/state/hot.snap
restore = no
interval = 0
lock = paths
lock-max = 1M
EOF
	chmod 644 lock.conf
	"$PAGECACHE" daemon --config lock.conf 2>lock.log &
	LKD=$!
	T_CLEANUP+=("kill -9 $LKD")
	locked() { [ "$(st | jq -r '.services[0].locked')" = true ]; }
	t_ok "lock set: held" t_wait 10 locked
	lpid=$(st | jq '.services[0].lock_pid')
	# a fork of the daemon calling the engine, as its jobs are: nothing exec'd
	t_is "lock set: its child is named pc-lock" "$(cat "/proc/$lpid/comm")" pc-lock
	t_ok "lock set: its child is the daemon forked, not a program it ran" \
		cmp -s "/proc/$lpid/cmdline" "/proc/$LKD/cmdline"
	vmlck_ge() { [ "$(awk '/^VmLck:/ { print $2 }' "/proc/$lpid/status")" -ge "$1" ]; }
	t_ok "lock set: its child has hot/lib.so's 256 KiB locked" t_wait 10 vmlck_ge 256
	# its report came back through the pipe, whole: the first walk's figures
	t_ok "lock set: the daemon has its report (1 file, 256 KiB in pages)" \
		t_wait 10 grep -q "\[service hot\]: its lock holds 1 files, $((256 * 1024 / $(getconf PAGESIZE))) pages\$" lock.log
	ino0=$(stat -c %i hot/lib.so)
	mkfile hot/lib.so.new 512 && mv hot/lib.so.new hot/lib.so	# an upgrade: rename over
	ino1=$(stat -c %i hot/lib.so)
	t_ok "lock set: the new version is locked (512 KiB)" t_wait 10 vmlck_ge 512
	old_gone() { ! grep -q " $ino0 .*(deleted)" "/proc/$lpid/maps"; }
	t_ok "lock set: the old inode ($ino0) is let go" t_wait 10 old_gone
	t_ok "lock set: the new inode ($ino1) is mapped" grep -q " $ino1 " "/proc/$lpid/maps"
	t_is "lock set: the same locking process" "$(st | jq '.services[0].lock_pid')" "$lpid"
	# lock-max = 1M is its --max-mem: a version past it is refused, the old one let go
	mkfile hot/lib.so.new 2048 && mv hot/lib.so.new hot/lib.so
	t_ok "lock set: a version past lock-max is refused" \
		t_wait 10 grep -q "cannot lock '$T_DIR/hot/lib.so': 2M would pass the memory budget (the --max-mem limit was reached)" lock.log
	t_is "lock set: nothing of it is locked" "$(awk '/^VmLck:/ { print $2 }' "/proc/$lpid/status")" 0
	kill -9 $LKD; wait $LKD 2>/dev/null
	t_ok "a daemon killed with -9 takes its lock with it" t_wait 10 t_gone "$lpid"
	rm -f run/pc.sock
else
	t_skip "lock set" "$T_WHY"
fi

# ---- hostile places ----
mkdir -m 777 open
cat >hostile.conf <<EOF
[daemon]
socket = $T_DIR/run/pc.sock
[service h]
paths = $T_DIR/data
snapshot = $T_DIR/open/h.snap
restore = no
[service p]
pid-file = $T_DIR/fifo.pid
snapshot = $T_DIR/state/p.snap
restore = no
interval = 1
EOF
chmod 644 hostile.conf
mkfifo fifo.pid
ln -s /nonexistent run/pc.sock.x; rm run/pc.sock.x
"$PAGECACHE" daemon --config hostile.conf 2>hostile.log &
HPID=$!
T_CLEANUP+=("kill -9 $HPID")
t_ok "started with hostile places" t_wait 10 test -S run/pc.sock
t_ok "a snapshot directory others can write is refused, said" grep -q 'not using .*open/h.snap' hostile.log
t_is "and the service shows as refused" "$(st | jq -r '.services[] | select(.service == "h") | .state')" refused
sleep 2.5	# two intervals of service p, whose pid-file is a FIFO
t_ok "a FIFO pid-file hangs nothing (status answers)" st
t_is "and the service counts as down" "$(st | jq -r '.services[] | select(.service == "p") | .up')" false
"$PAGECACHE" daemon --config hostile.conf 2>second.log; rc=$?
t_is "a second daemon on the same socket refuses to start (exit 1)" "$rc" 1
t_ok "saying another answers there" grep -q 'another daemon answers' second.log
kill -9 $HPID; wait $HPID 2>/dev/null
t_ok "a daemon killed with -9 leaves its socket" test -S run/pc.sock
"$PAGECACHE" daemon --config hostile.conf 2>third.log &
HPID=$!
T_CLEANUP+=("kill -9 $HPID")
t_ok "the next one takes the stale socket over" t_wait 10 st
t_kill $HPID
printf 'x' >run/plain
sed "s|^socket = .*|socket = $T_DIR/run/plain|" hostile.conf >h2.conf; chmod 644 h2.conf
"$PAGECACHE" daemon --config h2.conf 2>fourth.log; rc=$?
t_is "a socket path that is a plain file is not replaced (exit 1)" "$rc" 1
t_is "and the file is intact" "$(cat run/plain)" x
pc status --socket run/nosuch.sock >o 2>e; rc=$?
t_is "status without a daemon: exit 1" "$rc" 1
t_ok "saying it is not running" grep -q 'not running' e

# ---- what a review found (each failed before its fix) ----
# a slow start-up restore: 4 MiB at 1 MiB/s
mkdir -p slow; mkfile slow/big 4096; cat slow/big >/dev/null
pc snapshot -o state/slow.snap slow >/dev/null 2>&1
cp state/slow.snap slow.orig
slowconf() {	# slowconf FILE EXTRA-SERVICE-LINES...
	local f=$1; shift
	{ printf '[daemon]\nsocket = %s/run/pc.sock\n' "$T_DIR"
	  printf '[service slow]\npaths = %s/slow\nsnapshot = %s/state/slow.snap\nrate = 1\ninterval = 1\n' "$T_DIR" "$T_DIR"
	  printf '%s\n' "$@"; } >"$f"; chmod 644 "$f"
}
# 1. a service removed by SIGHUP while its start-up restore runs: ready all the same
drop slow/big
slowconf r1.conf "[service other]" "paths = $T_DIR/data/b" "snapshot = $T_DIR/state/other.snap" "interval = 1" "restore = no"
{ printf '[daemon]\nsocket = %s/run/pc.sock\n' "$T_DIR"
  printf '[service other]\npaths = %s/data/b\nsnapshot = %s/state/other.snap\ninterval = 1\nrestore = no\n' "$T_DIR" "$T_DIR"; } >r2.conf
chmod 644 r2.conf; cp r1.conf cur.conf
: >notify.log
NOTIFY_SOCKET=$T_DIR/notify.sock "$PAGECACHE" daemon --config cur.conf 2>r.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 5 grep -q 'restore started' r.log
# the job is a forked child of the daemon, named so (no exec names it)
t_ok "the restore runs in a child named pc-restore" pgrep -x -P $RPID pc-restore
cp r2.conf cur.conf; kill -HUP $RPID
t_ok "a service removed during its start-up restore: the daemon gets ready" t_wait 10 grep -q '^READY=1' notify.log
t_ok "and its interval snapshots run" t_wait 10 sh -c "[ \$(\"$PAGECACHE\" status --socket run/pc.sock --json | jq '.services[0].snapshots') -ge 2 ]"
t_ok "the removed service's restore was stopped" t_wait 10 sh -c "! pgrep -x -P $RPID pc-restore >/dev/null"
t_kill $RPID
# 2. SIGTERM during the start-up restore keeps the snapshot it was restoring
drop slow/big
slowconf t2.conf
"$PAGECACHE" daemon --config t2.conf 2>t2.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 5 grep -q 'restore started' t2.log
kill -TERM $RPID; t_wait 20 t_gone $RPID; wait $RPID
t_ok "SIGTERM during a start-up restore: the snapshot is kept as it was" cmp -s state/slow.snap slow.orig
t_ok "and the log says why" grep -q 'its restore did not end' t2.log
# 3. a job past its timeout is stopped and counted as failed; the daemon goes on
drop slow/big
slowconf t3.conf; sed -i 's/^rate = 1$/rate = 1\ntimeout = 1/' t3.conf
: >notify.log
NOTIFY_SOCKET=$T_DIR/notify.sock "$PAGECACHE" daemon --config t3.conf 2>t3.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_ok "a restore past its timeout is stopped, and the daemon gets ready" t_wait 15 grep -q '^READY=1' notify.log
t_ok "saying so" grep -q 'its restore ran past 1 s' t3.log
t_is "and its result is timeout" "$(st | jq -r '.services[0].restore_result')" timeout
t_kill $RPID
# 4. a sticky directory others can write is no place for a snapshot
mkdir -m 1777 sticky
sed "s|$T_DIR/state/slow.snap|$T_DIR/sticky/slow.snap|" t2.conf >t4.conf; chmod 644 t4.conf
"$PAGECACHE" daemon --config t4.conf 2>t4.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
t_is "a sticky snapshot directory is refused too" "$(st | jq -r '.services[0].state')" refused
t_kill $RPID
# 5. a pid-file another user wrote names only that user's processes
mkdir -p svcrun; chown 65534 svcrun
sleep 1000 3<data/a &
SPID=$!
T_CLEANUP+=("kill $SPID")
echo $SPID >svcrun/v.pid; chown 65534 svcrun/v.pid
printf '[daemon]\nsocket = %s/run/pc.sock\n[service v]\npid-file = %s/svcrun/v.pid\nsnapshot = %s/state/v.snap\nrestore = no\n' \
	"$T_DIR" "$T_DIR" "$T_DIR" >t5.conf; chmod 644 t5.conf
"$PAGECACHE" daemon --config t5.conf 2>t5.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
t_is "a pid-file of uid 65534 naming root's process: not running" "$(st | jq -r '.services[0].up')" false
t_ok "said in the log" grep -q 'not its owner.s process, ignored' t5.log
t_kill $RPID
t_ok "and no snapshot of root's process's files was taken at stop" test ! -e state/v.snap
# 6. a key given twice is refused
bad "interval given twice" "bad.conf:4: interval given twice" < <(printf '[service x]\npaths = /tmp\ninterval = 5\ninterval = 6\n')
# 7. the client believes only root's daemon, or its own
cat >fake.py <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(1)
while True:
    c, _ = s.accept()
    try: c.sendall(b"pagecache-status 1\nfields\tservice\nfake\nend\n")
    except OSError: pass
    c.close()
PY
python3 fake.py "$T_DIR/fake.sock" &
FPID=$!
T_CLEANUP+=("kill $FPID")
t_wait 5 test -S fake.sock; chmod 777 fake.sock
pc status --socket fake.sock --json >o 2>e
t_is "root's own fake server is believed (root's, like the daemon)" "$(jq -r '.services[0].service' o)" fake
kill $FPID; wait $FPID 2>/dev/null; rm -f fake.sock
chmod 777 pub
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all /usr/bin/python3 fake.py "$T_DIR/pub/fake.sock" &
FPID=$!
T_CLEANUP+=("kill $FPID")
t_wait 5 test -S pub/fake.sock
pc status --socket pub/fake.sock >o 2>e; rc=$?
t_is "another user's program on the socket is not believed (exit 1)" "$rc" 1
t_ok "saying so" grep -q "neither root's nor yours" e
t_kill $FPID

# 8. active = no: the snapshots record no active page (snapshot --no-active)
if t_cap sys_admin; then
	mkdir -p act; mkfile act/f 256; cat act/f act/f >/dev/null	# read twice: active
	printf '[daemon]\nsocket = %s/run/pc.sock\n[service act]\npaths = %s/act\nsnapshot = %s/state/act.snap\nrestore = no\ninterval = 0\nactive = no\n' \
		"$T_DIR" "$T_DIR" "$T_DIR" >t8.conf; chmod 644 t8.conf
	"$PAGECACHE" daemon --config t8.conf 2>t8.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_wait 10 test -S run/pc.sock
	t_kill $RPID
	t_is "active = no: the final snapshot has no active page" "$(pc show --json state/act.snap | jq .total.active_pages)" 0
	sed 's/^active = no$/active = yes/' t8.conf >t8b.conf; chmod 644 t8b.conf
	cat act/f act/f >/dev/null
	"$PAGECACHE" daemon --config t8b.conf 2>t8b.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_wait 10 test -S run/pc.sock
	t_kill $RPID
	if t_mglru; then
		t_is "active = yes (the default), under the multi-gen LRU: unknown, not 0" \
			"$(pc show --json state/act.snap | jq .total.active_pages)" null
	else
		t_ok "active = yes (the default): it has" test "$(pc show --json state/act.snap | jq .total.active_pages)" -gt 0
	fi
else
	t_skip "active = no" "$T_WHY"
fi

# ---- a restore that read nothing is never "done" (issue 22) ----
cat data/a >/dev/null
pc snapshot -o state/hot.snap data/a >/dev/null 2>&1
cat data/a >/dev/null
printf '[daemon]\nsocket = %s/run/pc.sock\n[service hot]\npaths = %s/data/a\nsnapshot = %s/state/hot.snap\ninterval = 0\n' \
	"$T_DIR" "$T_DIR" "$T_DIR" >hot.conf; chmod 644 hot.conf
"$PAGECACHE" daemon --config hot.conf 2>hot.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
hot_ended() { [ "$(st | jq -r '.services[0].restore_result')" != null ]; }
t_wait 10 hot_ended
t_is "a restore of pages all cached reads nothing: cached, not done" "$(st | jq -r '.services[0].restore_result')" cached
t_kill $RPID

# ---- recording = : restored with the snapshot, merged (issue 24) ----
cat data/a data/b >/dev/null
pc snapshot -o state/rec.snap data/a >/dev/null 2>&1
pc snapshot -o state/rec.start.pcs data/b >/dev/null 2>&1	# what the start read elsewhere
printf '[daemon]\nsocket = %s/run/pc.sock\n[service rec]\npaths = %s/data/a\nsnapshot = %s/state/rec.snap\nrecording = %s/state/rec.start.pcs\ninterval = 0\n' \
	"$T_DIR" "$T_DIR" "$T_DIR" "$T_DIR" >rec.conf; chmod 644 rec.conf
t_ok "daemon --check says the recording is restored too" \
	sh -c "'$PAGECACHE' daemon --check --config rec.conf | grep -q 'restored at start with its recording'"
drop data/a data/b
"$PAGECACHE" daemon --config rec.conf 2>rec.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
t_wait 10 hot_ended
t_is "recording = : its restore is done, the pages of both wanted" \
	"$(st | jq -r '.services[0] | "\(.restore_result) \(.restore_pages)"')" \
	"done $(($(pc show --json state/rec.snap | jq .total.pages) + $(pc show --json state/rec.start.pcs | jq .total.pages)))"
t_ok "  the recording's file came back too" test "$(cached_pages data/b)" -gt 0
t_kill $RPID
mv state/rec.start.pcs rec.start.away
drop data/a data/b
"$PAGECACHE" daemon --config rec.conf 2>rec2.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
t_wait 10 hot_ended
t_is "no recording yet: the snapshot alone, done" \
	"$(st | jq -r '.services[0].restore_result') $(cached_pages data/b)" "done 0"
t_ok "  the log says so" grep -q "no recording (.*rec.start.pcs: No such file or directory): restoring the snapshot alone" rec2.log
t_kill $RPID

# ---- a `cgroup =` service (issue 22): up while a process is in its cgroup ----
CGROOT=""
if [ -d /sys/fs/cgroup/memory ]; then
	CGROOT=/sys/fs/cgroup/memory
elif grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	CGROOT=/sys/fs/cgroup
fi
SLICE=pc-test-daemon-$$.slice	# a slice of ours, as system.slice is systemd's
T_WHY="no memory cgroup controller"
if [ -n "$CGROOT" ] && t_writable "$CGROOT" &&
   { mkdir "$CGROOT/$SLICE" 2>cg.err || { T_WHY="cannot make $CGROOT/$SLICE: $(head -1 cg.err)"; false; }; }; then
	T_CLEANUP+=("rmdir '$CGROOT/$SLICE'")
	# v2: the slice hands memory on to its services (as systemd's do)
	[ "$CGROOT" = /sys/fs/cgroup ] && echo +memory >"$CGROOT/$SLICE/cgroup.subtree_control"
	mkdir "$CGROOT/$SLICE/up.service"
	T_CLEANUP+=("rmdir '$CGROOT/$SLICE/up.service'")
	sleep 1000 &
	UPID=$!
	T_CLEANUP+=("kill $UPID")
	echo $UPID >"$CGROOT/$SLICE/up.service/cgroup.procs"
	printf '[daemon]\nsocket = %s/run/pc.sock\nmetrics = %s/run/cg.prom\n[service up]\ncgroup = %s/up.service\nsnapshot = %s/state/up.snap\nrestore = no\ninterval = 0\n' \
		"$T_DIR" "$T_DIR" "$SLICE" "$T_DIR" >cg1.conf; chmod 644 cg1.conf
	"$PAGECACHE" daemon --config cg1.conf 2>cg1.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_wait 10 test -S run/pc.sock
	t_is "cgroup =: up while a process is in its cgroup" "$(st | jq -r '.services[0].up')" true
	t_ok "cgroup =: pagecache_service_up 1" t_wait 10 grep -q '^pagecache_service_up{service="up"} 1$' run/cg.prom
	t_kill $UPID
	t_is "cgroup =: down once its cgroup is empty" "$(st | jq -r '.services[0].up')" false
	t_kill $RPID

	# a service ordered After=pagecache.service: its cgroup comes after the
	# daemon is ready; its restore waits for it, then is charged to it
	cat data/a >/dev/null
	pc snapshot -o state/late.snap data/a >/dev/null 2>&1
	lwant=$(pc show --json state/late.snap | jq .total.pages)
	drop data/a
	printf '[daemon]\nsocket = %s/run/pc.sock\n[service late]\npaths = %s/data/a\ncgroup = %s/late.service\nsnapshot = %s/state/late.snap\ninterval = 0\n' \
		"$T_DIR" "$T_DIR" "$SLICE" "$T_DIR" >cg2.conf; chmod 644 cg2.conf
	: >notify.log
	NOTIFY_SOCKET=$T_DIR/notify.sock "$PAGECACHE" daemon --config cg2.conf 2>cg2.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_ok "cgroup not there yet: READY=1 all the same (the service waits for it)" t_wait 10 grep -q '^READY=1' notify.log
	t_is "its restore is waiting" "$(st | jq -r '.services[0].state')" waiting
	t_ok "STATUS= says so" grep -q '^STATUS=.*restores waiting for the cgroup of late' notify.log
	t_is "and has no result yet" "$(st | jq -r '.services[0].restore_result')" null
	t_ok "the log says it waits, and for how long" grep -q "memory cgroup '$SLICE/late.service' is not there yet: its restore waits up to 30[0-9] s" cg2.log
	t_is "nothing read meanwhile" "$(cached_pages data/a)" 0
	mkdir "$CGROOT/$SLICE/late.service"
	T_CLEANUP+=("rmdir '$CGROOT/$SLICE/late.service'")
	late_done() { [ "$(st | jq -r '.services[0].restore_result')" = done ]; }
	t_ok "the cgroup appears: the restore runs into it (done)" t_wait 20 late_done
	t_ok "saying so" grep -q 'its memory cgroup is there' cg2.log
	got=$(resident_pages data/a "$lwant")
	t_ok "data/a is back ($got of $lwant pages)" test "$got" -ge $((lwant * 9 / 10))
	charged=$(awk '$1 == "cache" || $1 == "file" { print $2; exit }' "$CGROOT/$SLICE/late.service/memory.stat")
	t_ok "charged to the service's cgroup ($charged bytes)" test "$charged" -ge $((lwant * PS * 9 / 10))
	t_kill $RPID
	# it never comes: given up after cgroup-wait, and not "done"
	sed 's/^interval = 0$/interval = 0\ncgroup-wait = 1/; s|/late.service|/never.service|' cg2.conf >cg3.conf; chmod 644 cg3.conf
	"$PAGECACHE" daemon --config cg3.conf 2>cg3.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_wait 10 test -S run/pc.sock
	never() { [ "$(st | jq -r '.services[0].restore_result')" = no-cgroup ]; }
	t_ok "a cgroup that never appears: no-cgroup after cgroup-wait" t_wait 10 never
	t_ok "said in the log" grep -q "\[service late\]: not restored: its memory cgroup is not there after cgroup-wait" cg3.log
	t_is "and its state is idle again" "$(st | jq -r '.services[0].state')" idle
	t_kill $RPID
	# a reload while a restore waits: the new file names no cgroup (or no
	# restore); the wait ends, and the restore goes on without one
	drop data/a
	sed "s|/late.service|/late2.service|" cg2.conf >cg5.conf; chmod 644 cg5.conf
	"$PAGECACHE" daemon --config cg5.conf 2>cg5.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_wait 10 test -S run/pc.sock
	waiting() { [ "$(st | jq -r '.services[0].state')" = waiting ]; }
	t_wait 10 waiting
	grep -v '^cgroup = ' cg5.conf >cg5.new; chmod 644 cg5.new; mv cg5.new cg5.conf
	kill -HUP $RPID
	reloaded() { grep -A5 'SIGHUP: reading' cg5.log | grep -q ' services'; }
	t_wait 10 reloaded
	rdone() { [ "$(st | jq -r '.services[0].restore_result')" = done ]; }
	t_ok "reload to no cgroup = while its restore waited: restored without one" t_wait 20 rdone
	t_ok "the daemon is still there" kill -0 $RPID
	t_kill $RPID

	# a bare name is root's to give: a user who owns a subtree (a delegated
	# user@UID.service) makes a cgroup of the service's name there before
	# the service starts; root's restore must not join it (charged to the
	# user, under the user's limits, frozen or killed at the user's will)
	mkdir "$CGROOT/$SLICE/usr.slice"
	T_CLEANUP+=("rmdir '$CGROOT/$SLICE/usr.slice'")
	chown nobody "$CGROOT/$SLICE/usr.slice"
	[ "$CGROOT" = /sys/fs/cgroup ] && echo +memory >"$CGROOT/$SLICE/usr.slice/cgroup.subtree_control"
	runuser -u nobody -- mkdir "$CGROOT/$SLICE/usr.slice/hij-$$.service"
	T_CLEANUP+=("rmdir '$CGROOT/$SLICE/usr.slice/hij-$$.service'")
	drop data/a
	sed "s|^cgroup = .*|cgroup = hij-$$.service|" cg3.conf >cg4.conf; chmod 644 cg4.conf
	"$PAGECACHE" daemon --config cg4.conf 2>cg4.log &
	RPID=$!
	T_CLEANUP+=("kill -9 $RPID")
	t_wait 10 test -S run/pc.sock
	ended() { [ "$(st | jq -r '.services[0].restore_result')" != null ]; }
	t_wait 10 ended
	t_is "a user's cgroup of the service's name: root's restore does not join it" \
		"$(st | jq -r '.services[0].restore_result')" no-cgroup
	hcharged=$(awk '$1 == "cache" || $1 == "file" { print $2; exit }' "$CGROOT/$SLICE/usr.slice/hij-$$.service/memory.stat")
	t_is "nothing charged to the user's cgroup" "$hcharged" 0
	t_kill $RPID
else
	t_skip "a cgroup = service" "$T_WHY"
fi

# ---- root = DIR: the start-up restore is beneath it too ----
# The snapshot's paths are relative to root; a restore without it was
# refused ("its paths are relative to ...") at every start.
mkdir -p rt/data
head -c $((16 * PS)) /dev/urandom >rt/data/f
cat rt/data/f >/dev/null
conf rt.conf <<EOF
[daemon]
socket = $T_DIR/run/pc.sock
[service rt]
root = $T_DIR/rt
paths = $T_DIR/rt/data
snapshot = $T_DIR/state/rt.snap
restore = yes
interval = 0
EOF
pc snapshot --root rt -o state/rt.snap rt/data >/dev/null 2>&1
drop rt/data/f
"$PAGECACHE" daemon --config rt.conf 2>rt.log &
RPID=$!
T_CLEANUP+=("kill -9 $RPID")
t_wait 10 test -S run/pc.sock
rt_ended() { [ "$(st | jq -r '.services[0].restore_result')" != null ]; }
t_wait 10 rt_ended
t_is "root = DIR: the start-up restore is done beneath it" "$(st | jq -r '.services[0].restore_result')" done
t_ok "and brought the file back" test "$(resident_pages rt/data/f 16)" -ge 14
t_kill $RPID

t_done
