#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vmtouch -P in a directory another user may write: a symlink planted at
# the pidfile's name is replaced, never written through (root would
# truncate the file it points to), and a FIFO planted there neither hangs
# the daemon nor is opened; exit removes only the pidfile it wrote.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

mkdir pub
mkfile f 16
echo precious >victim

# plant KIND: something at pub/pid before the run
plant() {
	rm -f pub/pid
	case $1 in
	symlink) ln -s "$T_DIR/victim" pub/pid ;;
	fifo) mkfifo pub/pid ;;
	esac
}
for kind in symlink fifo; do
	plant "$kind"
	"$PAGECACHE" vmtouch -l -q -P "$T_DIR/pub/pid" f &
	pid=$!
	T_CLEANUP+=("t_kill $pid")
	t_ok "-P over a planted $kind: the pidfile written in its place" \
		t_wait 10 test -f pub/pid -a ! -L pub/pid -a -s pub/pid
	t_is "-P over a planted $kind: it names the daemon" "$(cat pub/pid 2>/dev/null)" "$pid"
	t_is "-P over a planted $kind: the file it pointed to untouched" "$(cat victim)" precious
	kill "$pid" 2>/dev/null
	t_ok "-P over a planted $kind: SIGTERM ends it" t_wait 10 t_gone "$pid"
	wait "$pid" 2>/dev/null
	t_ok "-P over a planted $kind: its pidfile removed" test ! -e pub/pid
done

# a pidfile replaced by another's while it ran is not removed
"$PAGECACHE" vmtouch -l -q -P "$T_DIR/pub/pid" f &
pid=$!
T_CLEANUP+=("t_kill $pid")
t_wait 10 test -s pub/pid
echo 1 >pub/other && mv pub/other pub/pid
kill "$pid" 2>/dev/null
t_ok "-P replaced by another's: it ends" t_wait 10 t_gone "$pid"
wait "$pid" 2>/dev/null
t_is "-P replaced by another's: that one is left" "$(cat pub/pid 2>/dev/null)" 1
t_done
