#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Privilege is capabilities, not uid 0: root without a capability is
# refused with its name, a non-root user given one (ambient) is let in,
# and what the kernel decides by file permission is tried, not guessed.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

# it drops capabilities and grants them to nobody: it must hold each one
if ! t_have setpriv || ! t_cap setuid || ! t_cap setgid || ! t_cap setpcap || ! t_cap sys_admin ||
   ! t_cap dac_read_search || ! t_cap dac_override || ! t_cap ipc_lock; then
	t_skip "capabilities" "$T_WHY (dropped and granted here)"
	t_done; exit
fi
# without CAP CMD...: root, with CAP gone from every set (as a container's root)
without() {
	local c=$1; shift
	setpriv --inh-caps=-"${c//,/,-}" --bounding-set=-"${c//,/,-}" "$@"
}
# nobody_with CAPS CMD...: uid/gid 65534 holding only CAPS (comma-separated), ambient
nobody_with() {
	local c=$1; shift
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all,+"${c//,/,+}" \
		--ambient-caps=+"${c//,/,+}" "$@"
}
NPC=$T_DIR/.pagecache-nobody
as_nobody true	# puts the binary in place
if ! without sys_admin true 2>/dev/null || ! nobody_with ipc_lock true 2>/dev/null; then
	t_skip "capabilities" "setpriv cannot drop or grant capabilities here"
	t_done; exit
fi
mkdir -m 755 own && chown 65534:65534 own	# nobody's files: residency is theirs to see
mkfile own/f 1024 && chown 65534:65534 own/f
chmod 755 .

# snapshot: without CAP_SYS_ADMIN it still works, and says what it left out
cat own/f >/dev/null
without sys_admin "$PAGECACHE" snapshot --json -o s1.snap own/f >s1.json 2>e; rc=$?
t_is "snapshot without CAP_SYS_ADMIN exits 0" "$rc" 0
t_is "and records the cached pages" "$(jq .total.pages s1.json)" 256
t_ok "it says active pages were not recorded, naming the capability" \
	grep -q "active pages not recorded: needs CAP_SYS_ADMIN (kpageflags)" e
t_is "active_pages is unknown, not 0" "$(jq .total.active_pages s1.json)" null
t_is "and the file says so: show's too, and per file" \
	"$(pc show --json s1.snap | jq -c '[.total.active_pages, .files[0].active]')" "[null,null]"
t_ok "show's summary says unknown" grep -q "active pages unknown (not recorded)" <(pc show s1.snap)
as_nobody "$NPC" snapshot -o "$T_DIR/own/s2.snap" own/f >o 2>e; rc=$?
t_is "snapshot as a user without capabilities exits 0" "$rc" 0
t_ok "and says active pages were not recorded (CAP_SYS_ADMIN)" \
	grep -q "active pages not recorded: needs CAP_SYS_ADMIN (kpageflags)" e
t_ok "the summary line says so too" grep -q "active pages not recorded" o
# a user given CAP_SYS_ADMIN and read access to /proc/kpageflags records them
drop own/f; cat own/f >/dev/null; cat own/f >/dev/null	# read twice: active
nobody_with sys_admin,dac_read_search "$NPC" snapshot --json -o "$T_DIR/own/s3.snap" own/f \
	>s3.json 2>e; rc=$?
a3=$(jq .total.active_pages s3.json)
t_is "snapshot as a user with CAP_SYS_ADMIN exits 0" "$rc" 0
if t_mglru; then
	# (the multi-gen LRU: no active list, whatever the capabilities)
	t_is "the multi-gen LRU is on: active pages unknown, not 0" "$a3" null
	t_ok "and it says why" grep -q "active pages not recorded for 1 files: the multi-gen LRU is on" e
else
	t_ok "and records active pages ($a3 of 256)" test "$a3" -gt 0
	t_is "with no warning" "$(cat e)" ""
fi
nobody_with sys_admin "$NPC" snapshot -o "$T_DIR/own/s4.snap" own/f >o 2>e; rc=$?
t_is "CAP_SYS_ADMIN without read permission on kpageflags: still written" "$rc" 0
if t_mglru; then
	t_ok "and the reason names the multi-gen LRU, which no permission would get past" \
		grep -q "the multi-gen LRU is on" e
else
	t_ok "and the reason names the permission" \
		grep -q "needs read permission on /proc/kpageflags (root's, mode 0400: uid 0 or CAP_DAC_READ_SEARCH)" e
fi

# stat --by-cgroup: kpagecgroup, the same capability
cat own/f >/dev/null
without sys_admin "$PAGECACHE" stat --by-cgroup own/f >o 2>e; rc=$?
t_is "stat --by-cgroup without CAP_SYS_ADMIN is refused" "$rc" 2
t_ok "naming the capability" grep -q -- "--by-cgroup needs CAP_SYS_ADMIN (kpagecgroup)" e
if [ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	cat own/f >/dev/null
	nobody_with sys_admin,dac_read_search "$NPC" stat --by-cgroup --json own/f >b.json 2>e; rc=$?
	t_is "stat --by-cgroup as a user with CAP_SYS_ADMIN exits 0" "$rc" 0
	t_ok "and names the owning cgroups" test "$(jq '.files[0].cgroups | length' b.json)" -ge 1
else
	t_skip "stat --by-cgroup as a user" "no memory cgroup controller"
fi

# lock: past RLIMIT_MEMLOCK only with CAP_IPC_LOCK, whoever asks
mkfile own/big 16384 && chown 65534:65534 own/big
without ipc_lock bash -c "ulimit -l 64; exec '$PAGECACHE' lock own/big" >o 2>e; rc=$?
t_is "root without CAP_IPC_LOCK, ulimit -l 64: lock exits 1" "$rc" 1
t_ok "naming CAP_IPC_LOCK" grep -q "RLIMIT_MEMLOCK is 64 KiB (needs CAP_IPC_LOCK" e
nobody_with ipc_lock bash -c "ulimit -l 64; exec '$NPC' lock -d -P '$T_DIR/own/l.pid' own/big" \
	>o 2>e; rc=$?
pid=$(cat own/l.pid 2>/dev/null)
T_CLEANUP+=("t_kill ${pid:-}")
t_is "a user with CAP_IPC_LOCK locks past ulimit -l 64" "$rc" 0
t_is "the daemon runs as that user" "$(stat -c %u /proc/"${pid:-0}" 2>/dev/null)" 65534
t_is "and holds all 16 MiB locked" \
	"$(awk '/^VmLck:/ { print $2 }' /proc/"${pid:-0}"/status 2>/dev/null)" 16384
t_kill ${pid:-}

# tune swap --auto: a sysctl is written by uid 0 of the host, not by a capability
if grep -q '^swap_ra ' /proc/vmstat && [ -w /proc/sys/vm/page-cluster ]; then
	pcl=$(cat /proc/sys/vm/page-cluster)
	nobody_with dac_override,sys_admin "$NPC" tune swap --auto --duration 0.2 -i 0.1 >o 2>e; rc=$?
	t_is "tune --auto as a user with CAP_DAC_OVERRIDE and CAP_SYS_ADMIN exits 1" "$rc" 1
	t_ok "saying what write permission is missing" \
		grep -q "needs write permission on it: a sysctl file, writable only by uid 0 of the initial user namespace" e
	without all "$PAGECACHE" tune swap --auto --duration 0.3 -i 0.1 >o 2>e; rc=$?
	if grep -q "another tune swap --auto or swapin bench is running" e; then
		t_skip "tune --auto as root without capabilities" "another tuner is running"
	else
		t_is "root without any capability may tune (the kernel allows it)" "$rc" 0
	fi
	t_is "and vm.page-cluster is back" "$(cat /proc/sys/vm/page-cluster)" "$pcl"
else
	t_skip "tune swap --auto" "this kernel lacks vm.page-cluster or the swap_ra counters"
fi

# run --no-cache: cgroup writes are file permissions
if [ -d /sys/fs/cgroup/memory ] || grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
	as_nobody "$NPC" run --no-cache -- true >o 2>e; rc=$?
	t_is "run --no-cache as a user who may not write the cgroup exits 1" "$rc" 1
	if t_systemd_scope; then
		# v2 under systemd: a user with no manager of its own gets no scope, and says so
		t_ok "saying why systemd gave it no scope" grep -q "no scope of our own: cannot reach systemd's user bus" e
	else
		t_ok "saying which permission is missing" grep -q "needs write permission on" e
	fi
	without sys_admin,dac_override "$PAGECACHE" run --no-cache -- true >o 2>e; rc=$?
	t_is "root without CAP_SYS_ADMIN or CAP_DAC_OVERRIDE still runs (its cgroup is root's)" "$rc" 0
else
	t_skip "run --no-cache" "no memory cgroup controller"
fi

# the experiments: mount(2) and swapon(2) are CAP_SYS_ADMIN's
without sys_admin "$PAGECACHE" bench readtwice --cgroups 1 --duration 0.3 --size 64M >o 2>e; rc=$?
t_is "bench readtwice without CAP_SYS_ADMIN exits 1" "$rc" 1
t_ok "naming CAP_SYS_ADMIN" grep -q "needs CAP_SYS_ADMIN (it mounts" e
without sys_admin "$PAGECACHE" bench swapin >o 2>e; rc=$?
t_is "bench swapin without CAP_SYS_ADMIN exits 1" "$rc" 1
t_ok "naming CAP_SYS_ADMIN" grep -q "needs CAP_SYS_ADMIN (swapon)" e
if [ -e /sys/kernel/mm/swap/vma_ra_enabled ]; then
	nobody_with sys_admin "$NPC" bench swapin >o 2>e; rc=$?
	t_is "bench swapin as a user with CAP_SYS_ADMIN only exits 1" "$rc" 1
	t_ok "naming the write permission it lacks" \
		grep -q "vma_ra_enabled': needs write permission on it (root's, mode 0644: uid 0 or CAP_DAC_OVERRIDE)" e
else
	t_skip "bench swapin knobs" "no /sys/kernel/mm/swap/vma_ra_enabled"
fi

t_done
