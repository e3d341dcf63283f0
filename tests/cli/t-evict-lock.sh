#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache evict (dirty first, reasons for what stays) and lock (daemon,
# pidfile, signals, refusals).
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)

mkdir tree
mkfile tree/a 512
cat tree/a >/dev/null
head -c 1048576 /dev/urandom >tree/dirty    # not synced: dirty pages
pc evict --json tree >e.json; rc=$?
t_is "evict exits 0" "$rc" 0
t_is "clean pages gone" "$(cached_pages tree/a)" 0
t_is "dirty pages written and gone" "$(cached_pages tree/dirty)" 0
t_is "JSON counts what stayed" "$(jq .total.stayed e.json)" 0

# a range that is not page-aligned: partly covered pages are not "stayed"
cat tree/a >/dev/null
pc evict --range 100-8292 tree/a >o 2>e; rc=$?
t_is "evict of an unaligned range exits 0" "$rc" 0
t_is "the one whole page inside it is gone" "$(cached_pages tree/a)" 127

# lock keeps pages; evict says who holds them
if ! t_cap ipc_lock && [ "$(ulimit -l)" != unlimited ] && [ "$(ulimit -l)" -lt 1024 ]; then
	t_skip "lock tests" "$T_WHY and ulimit -l is $(ulimit -l) KiB (needs 1024)"
	t_done; exit
fi
drop tree/a
pc lock -d -P "$T_DIR/lock.pid" tree/a >o 2>e; rc=$?
pid=$(cat lock.pid 2>/dev/null)
T_CLEANUP+=("t_kill ${pid:-}")
t_is "lock --daemon returns 0 once locked" "$rc" 0
t_ok "the pidfile names a process" test -n "$pid"
t_ok "the daemon runs" kill -0 "${pid:-none}"
t_is "locked file is fully cached" "$(cached_pages tree/a)" 128
pc evict tree/a >o 2>e; rc=$?
t_is "evicting a locked file exits 1" "$rc" 1
t_ok "the reason names the locker" grep -q "stayed: locked by $pid (pagecache, mlocked)" e
t_is "the pages stayed" "$(cached_pages tree/a)" 128
kill -TERM "${pid:-none}"
t_ok "SIGTERM ends the daemon" t_wait 10 t_gone "${pid:-none}"
t_ok "and removes the pidfile" test ! -e lock.pid
pc evict tree/a >/dev/null
t_is "after unlock, evict works" "$(cached_pages tree/a)" 0

# a missing PATH beside one that exists: the rest is locked and held (as
# vmtouch -dl does), the missing one named, exit 1; the pid printed and in
# the pidfile is the daemon that holds the lock
for how in "-dl -P $T_DIR/m.pid" "lock -d -P $T_DIR/m.pid"; do
	drop tree/a
	rm -f m.pid
	pc $how tree/missing tree/a >o 2>e; rc=$?
	mpid=$(cat m.pid 2>/dev/null)
	T_CLEANUP+=("t_kill ${mpid:-}")
	t_is "pagecache $how MISSING FILE: exit 1 (a path failed)" "$rc" 1
	t_ok "  naming the missing path" grep -qF "'tree/missing'" e
	t_ok "  the pidfile names a process that runs" kill -0 "${mpid:-none}"
	t_ok "  the pid printed is that process" grep -qF "pid ${mpid:-none};" o
	t_is "  which holds the existing file locked" "$(cached_pages tree/a)" 128
	pc evict tree/a >o 2>e
	t_ok "  (evict names it as the locker)" grep -q "locked by ${mpid:-none} " e
	[ -n "$mpid" ] && kill -TERM "$mpid"
	t_ok "  SIGTERM ends it" t_wait 10 t_gone "${mpid:-none}"
done
pc -dl -P "$T_DIR/m.pid" tree/missing >o 2>e; rc=$?
t_is "pagecache -dl -P FILE MISSING (nothing locked): exit 1" "$rc" 1
t_ok "  no pid printed for a process that is gone" sh -c '! grep -q "pid [0-9]" o'
t_ok "  no pidfile" test ! -e m.pid

# --pidfile on hostile ground: a link planted at the temporary name the
# old code used (FILE.tmp.PID: bash's pid, which exec keeps) is never
# written through, and a pidfile that another process replaced is its own
echo victim-data >victim
bash -c 'ln -s "$1/victim" "$1/fg.pid.tmp.$$"; exec "$2" lock -P "$1/fg.pid" "$1/tree/a"' \
	_ "$T_DIR" "$PAGECACHE" >/dev/null 2>&1 &
lp=$!
T_CLEANUP+=("t_kill $lp")
t_wait 10 test -s fg.pid
t_is "a link planted at FILE.tmp.PID is not written through" "$(cat victim)" victim-data
t_ok "the pidfile is a file of its own, not the link" test ! -L fg.pid
t_is "it holds the locking pid" "$(cat fg.pid)" "$lp"
echo 1 >other.pid && mv other.pid fg.pid	# another process's pidfile now
kill -TERM $lp; wait $lp
t_is "a pidfile another process replaced is not removed at exit" "$(cat fg.pid 2>/dev/null)" 1

# foreground lock, SIGINT
"$PAGECACHE" lock --json tree/a >l.json 2>/dev/null &
lp=$!
T_CLEANUP+=("t_kill $lp")
t_wait 10 test -s l.json
t_is "foreground lock reports JSON once locked" "$(jq .total.files l.json)" 1
kill -INT $lp; wait $lp; rc=$?
t_is "SIGINT releases and exits 0" "$rc" 0

# refused locked memory: a clear error, exit 1 (tree/big is made whatever
# the branch: the --max-mem checks below need it)
mkfile tree/big 16384
if t_cap setuid && t_cap setgid && t_have setpriv; then
	chmod 755 . tree; chmod 644 tree/a
	chmod 644 tree/big
	as_nobody true	# puts the binary in place
	as_nobody bash -c "ulimit -l 64; exec '$T_DIR/.pagecache-nobody' lock tree/big" >o 2>e; rc=$?
	t_is "lock beyond RLIMIT_MEMLOCK exits 1" "$rc" 1
	t_ok "with a clear reason" grep -q "locked memory not allowed: RLIMIT_MEMLOCK is 64 KiB" e
else
	t_skip "RLIMIT_MEMLOCK refusal" "$T_WHY (the refusal is checked as nobody)"
fi
PAGECACHE_FAULT=mlock:EPERM pc lock tree/a >o 2>e; rc=$?
t_is "an injected mlock EPERM exits 1 without waiting" "$rc" 1

# the budget applies to lock too
pc lock --max-mem 1M tree/big >o 2>e; rc=$?
t_is "lock over --max-mem exits 1 without waiting" "$rc" 1
t_ok "and says so" grep -q "stopped early" e
pc lock -d -P "$T_DIR/l2.pid" --max-mem 1M tree/a tree/big >o 2>e; rc=$?
T_CLEANUP+=("pkill -f '[l]ock -d -p $T_DIR/l2.pid'")
t_is "a daemon that cannot lock everything exits 1" "$rc" 1
# the daemon reports, releases everything and exits, and lock -d waits for
# that before it exits 1: none is found at once
# (pgrep: 1 is "none matched"; 2 and up are errors, not "none")
if t_have pgrep; then
	no_daemon() { pgrep -f "[l]ock -d -p $T_DIR/l2.pid" >/dev/null 2>&1; [ $? = 1 ]; }
	t_ok "and leaves no daemon behind (pgrep finds none, at once)" no_daemon
else
	t_skip "no daemon left behind" "$T_WHY"
fi
t_ok "nor its pidfile" test ! -e l2.pid

# a usage error found once PATHs are taken: exit 2 (the sanitized build
# exited 1, its leak check finding the PATHs still held)
pc lock --children . >/dev/null 2>lk.err; rc=$?
t_is "lock --children without --pid: a usage error (2)" "$rc.$(grep -c 'needs --pid' lk.err)" "2.1"
t_done
