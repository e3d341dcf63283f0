#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The guest's half of tests/vm/run.sh: run.sh puts it in the run's scratch
# share, and the image's stub (/usr/local/sbin/pcvm-agent, started once at
# boot by pcvm-agent.service when the kernel command line says pcvm.agent=1)
# mounts that share and runs it. It mounts the host's two 9p shares (pcsrc: the worktree, read-only;
# pcout: a scratch directory of the run), copies the tree to the path it has
# on the host (so that paths built into it hold, and the tests' files are on
# the guest's ext4, not on 9p), runs the host's command there as root, writes
# its output to pcout/log and its exit status to pcout/rc, and powers off.
set -u
out=/mnt/pcout
mkdir -p /mnt/pcsrc "$out"
modprobe -q 9pnet_virtio 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,ro pcsrc /mnt/pcsrc &&
{ mountpoint -q "$out" || mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 pcout "$out"; } || {
	echo "pcvm-agent: cannot mount the 9p shares" >/dev/console
	systemctl poweroff
	exit 1
}
finish() {
	echo "$1" >"$out/rc"
	sync
	umount "$out" /mnt/pcsrc 2>/dev/null
	systemctl poweroff --no-block
	# a stop job that hangs must not keep the host waiting for its timeout
	sleep 120
	systemctl poweroff --force --force
}
tree=$(cat "$out/tree")
{
	echo "# pcvm: $(uname -sr), $(. /etc/os-release && echo "$PRETTY_NAME"), systemd $(systemctl --version | sed -n '1s/^systemd \([0-9]*\).*/\1/p'), up $(cut -d' ' -f1 /proc/uptime) s"
	mkdir -p "$tree"
	# the tree without its git metadata, objects and the fuzzers
	tar -C /mnt/pcsrc --exclude=./.git --exclude=./build/fuzz --exclude='*.o' -cf - . | tar -C "$tree" -xf - ||
		{ echo "pcvm-agent: cannot copy the tree in"; }
	echo "# pcvm: tree copied to $tree, up $(cut -d' ' -f1 /proc/uptime) s"
} >"$out/log" 2>&1
cd "$tree" || finish 125
env=()
[ -s "$out/env" ] && mapfile -t env < <(grep . "$out/env")
env "${env[@]}" HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	bash "$out/cmd" >>"$out/log" 2>&1 </dev/null
rc=$?
echo "# pcvm: exit $rc, up $(cut -d' ' -f1 /proc/uptime) s" >>"$out/log"
finish "$rc"
