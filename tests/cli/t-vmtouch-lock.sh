#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# vmtouch -l/-L of more than the machine can spare: vmtouch mlocks it all
# and wakes the OOM killer against other processes (mlocked pages cannot
# be reclaimed). pagecache's vmtouch refuses before anything of the file is
# locked, naming why, as vmtouch names a failed mlock (FATAL, exit 1). The
# file is sparse: twice MemTotal of holes, so a test that failed would pin
# nothing, and the old code's answer was to hold on, locked, until killed.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

total=$(($(awk '/^MemTotal:/ { print $2 }' /proc/meminfo) * 1024))
truncate -s $((total * 2)) big || { t_skip "lock past memory" "cannot make a sparse file here"; t_done; exit; }
mkfile small 8
for l in -l -L; do
	timeout 20 "$PAGECACHE" vmtouch $l small big >out 2>err
	t_is "$l of twice MemTotal: refused at once, exit 1" "$?" 1
	t_ok "  naming the file and why" grep -qE "^vmtouch: FATAL: mlock: big \(not locked: .*never pins memory the system needs\)$" err
	t_is "  nothing on stdout" "$(cat out)" ""
done
timeout 20 "$PAGECACHE" vmtouch -dw -l -P pid big >out 2>err
t_is "-dw -l of it: the parent hears the refusal, exit 1" "$?" 1
t_ok "  and no pidfile is left" test ! -e pid
t_done
