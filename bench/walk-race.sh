#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/walk-race.sh -- issue 21's race, measured from the command line:
# root runs `pagecache stat DIR` WALKS times while nobody, who owns DIR,
# exchanges (renameat2 RENAME_EXCHANGE) a regular file with a FIFO, and
# another with a character device (1:3, /dev/null, made by root), as fast
# as it can. Counts the walks in which the FIFO was opened (a writer
# blocked in open(O_WRONLY) on a second name of it gets through: one count
# per reader's open) and the device's opens (inotify IN_OPEN; consecutive
# events merge, so a lower bound). test-walk runs the same race in-process.
#
# Needs root, setpriv, mknod, python3. Environment: PAGECACHE (default
# build/pagecache), WALKS (default 1000), DIR (default /var/tmp/pc-walk-race;
# removed at the end), NOPROC=1 (each walk in a mount namespace of its own
# with /proc unmounted: unshare -m, umount -l /proc).
# Usage: bash bench/walk-race.sh
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
WALKS=${WALKS:-1000}
W=${DIR:-/var/tmp/pc-walk-race}
PY=$(command -v /usr/bin/python3 || command -v python3)	# one nobody may run
[[ $(id -u) -eq 0 ]] || { echo "walk-race.sh: must run as root" >&2; exit 1; }
rm -rf "$W"
mkdir -p "$W/d"
pids=()
cleanup() {
	touch "$W/stop"
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	# the writer may be blocked in its open: one reader's open lets it go
	exec 9<>"$W/keep.fifo" && exec 9>&-
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
cd "$W"
for i in $(seq 0 7); do echo x >"d/f$i"; done
echo x >d/x
echo y >d/y
mkfifo d/x.fifo
ln d/x.fifo keep.fifo
mknod -m 666 d/y.dev c 1 3
ln d/y.dev keep.dev	# watched by a name no racer moves
chown -R 65534:65534 "$W"
chmod 755 "$W"
cat >swap.py <<'EOF'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while True:
    libc.renameat2(-100, a, -100, b, 2)  # AT_FDCWD, RENAME_EXCHANGE
EOF
cat >watch.py <<'EOF'
import ctypes, os, select, sys, threading, time
libc = ctypes.CDLL(None, use_errno=True)
keep, dev, stop = sys.argv[1:4]
def put(name, n):
    open(name + ".t", "w").write(str(n)); os.rename(name + ".t", name)
def writer():  # one count per reader's open of the FIFO
    n = 0
    while True:
        fd = os.open(keep, os.O_WRONLY)  # blocks until a reader
        if os.path.exists(stop): return
        n += 1
        put("fifo.count", n)
        p = select.poll(); p.register(fd, select.POLLOUT)
        while not any(ev & select.POLLERR for _, ev in p.poll(100)):
            pass
        os.close(fd)
threading.Thread(target=writer, daemon=True).start()
fd = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(fd, dev.encode(), 0x20)  # IN_OPEN
open("ready", "w").close()
n = 0
while not os.path.exists(stop):
    time.sleep(0.01)
    try:
        n += os.read(fd, 65536).count(b"\x20\x00\x00\x00")
    except BlockingIOError:
        pass
    put("dev.count", n)
EOF
"$PY" watch.py keep.fifo keep.dev stop & pids+=($!)
while [[ ! -e ready ]]; do sleep 0.1; done
setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" swap.py d/x d/x.fifo & pids+=($!)
setpriv --reuid=65534 --regid=65534 --clear-groups "$PY" swap.py d/y d/y.dev & pids+=($!)
sleep 0.2
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || { echo "walk-race.sh: a racer died" >&2; exit 1; }; done
walks_fifo=0 prev=0
for ((i = 0; i < WALKS; i++)); do
	if [[ ${NOPROC:-} == 1 ]]; then
		unshare -m sh -c 'umount -l /proc && exec "$0" stat d' "$PAGECACHE" >/dev/null 2>&1 || true
	else
		"$PAGECACHE" stat d >/dev/null 2>&1 || true
	fi
	c=$(cat fifo.count 2>/dev/null || echo 0)
	if [[ $c != "$prev" ]]; then walks_fifo=$((walks_fifo + 1)); prev=$c; fi
done
sleep 0.2
printf '%s stat%s, %d walks, load %s: FIFO opened %s times (in %d walks); device opened %s times (inotify, at least)\n' \
	"$PAGECACHE" "${NOPROC:+ (no /proc)}" "$WALKS" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(cat fifo.count 2>/dev/null || echo 0)" \
	"$walks_fifo" "$(cat dev.count 2>/dev/null || echo 0)"
