#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache hook without a container runtime: the OCI state on stdin and a
# bundle made here (config.json's root.path, annotations), as podman and
# CRI-O give them. A restore at createRuntime into the root and the memory
# cgroup of the state's pid, the snapshot back at poststop, and what a
# hostile annotation, a corrupt snapshot, a missing one, a bad --dir or
# --log do: the container starts (exit 0) unless required=true. podman
# itself: t-podman.sh.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

SNAPS=$T_DIR/snaps
mkdir -p bundle/rootfs/data rootfs2/data
mkfile bundle/rootfs/data/db 512
mkfile bundle/rootfs/data/other 64
# state [STATUS] [PID] [ANNOTATIONS-JSON]: the state a runtime writes
state() {
	jq -cn --arg st "${1:-creating}" --argjson pid "${2:-0}" --arg b "$T_DIR/bundle" \
		--argjson ann "${3:-{\}}" \
		'{ociVersion: "1.0.2", id: "0123456789abcdef0123", status: $st, bundle: $b, annotations: $ann}
		 + (if $pid > 0 then {pid: $pid} else {} end)'
}
config() {	# config ROOTPATH: the bundle's config.json
	jq -n --arg r "$1" '{ociVersion: "1.0.2", root: {path: $r}, annotations: {}}' >bundle/config.json
}
config rootfs
hook() { "$PAGECACHE" hook --dir "$SNAPS" --log "$T_DIR/hook.log" "$@"; }
ann() { jq -cn --arg v "$1" '{"io.pagecache.snapshot": $v}'; }

# usage: the admin's hooks.d file; a terminal on stdin
pc hook --max-time 0 </dev/null >o 2>e; t_is "--max-time 0 is a usage error" $? 2
pc hook --dir rel </dev/null >o 2>e; t_is "a relative --dir is a usage error" $? 2
pc hook prestop </dev/null >o 2>e; t_is "an unknown STAGE is a usage error" $? 2
if script -qec true /dev/null >/dev/null 2>&1; then
	script -qec "'$PAGECACHE' hook" /dev/null >tty.out 2>&1; rc=$?
	t_is "a terminal on stdin is a usage error" $rc 2
	t_ok "  saying the state comes from the runtime" grep -q "state comes on stdin" tty.out
else
	t_skip "a terminal on stdin is a usage error" "no script(1)"
fi

# what is not ours: nothing done, exit 0
echo 'not json' | hook >o 2>e; t_is "a state that is not JSON: exit 0" $? 0
t_ok "  said in the log" grep -q "not JSON" hook.log
state creating 0 '{}' | hook >o 2>e; t_is "no annotation: exit 0" $? 0
t_ok "  nothing done, said" grep -q "no io.pagecache.snapshot annotation" hook.log
state running 0 "$(ann db)" | hook >o 2>e; t_is "a status of no stage: exit 0" $? 0
t_ok "  said" grep -q "status 'running' is no stage" hook.log

# the first start: no snapshot yet
state creating $$ "$(ann db)" | hook >o 2>e; t_is "no snapshot yet: exit 0" $? 0
t_ok "  the log says the start is cold" grep -q "no snapshot 'db' yet" hook.log
t_ok "  --dir made, root's alone" test "$(stat -c %a "$SNAPS")" = 700

# poststop: the root's cache, paths as the container names them
cat bundle/rootfs/data/db >/dev/null
drop bundle/rootfs/data/other
state stopped 0 "$(ann db)" | hook -J >ps.json 2>e; t_is "poststop exits 0" $? 0
t_is "  its record says written" "$(jq -r .total.result ps.json)" written
t_ok "  the snapshot is there, 0600" test "$(stat -c %a "$SNAPS/db")" = 600
pc show --json "$SNAPS/db" >show.json
t_is "  paths relative to the root (data/db)" "$(jq -r '[.files[].path] | join(",")' show.json)" data/db
t_is "  its root is root.path" "$(jq -r .total.root show.json)" "$T_DIR/bundle/rootfs"

# createRuntime: restored beneath root.path, into the pid's memory cgroup
drop bundle/rootfs/data/db
if t_memcg_parent; then
	cgroot=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)
	CG=$cgroot$T_MEMCG/pc-hook-$$
	mkdir "$CG"
	T_CLEANUP+=("rmdir '$CG'")
	sleep 300 &
	sp=$!
	T_CLEANUP+=("t_kill $sp")
	echo $sp >"$CG/cgroup.procs"
	state creating $sp "$(ann db)" | hook -J >cr.json 2>e; rc=$?
	t_is "createRuntime exits 0" $rc 0
	t_is "  restored" "$(jq -r .total.result cr.json)" restored
	t_is "  the file's pages are back" "$(resident_pages bundle/rootfs/data/db 128)" 128
	if [ -e "$CG/memory.stat" ]; then
		file=$(awk '$1 == "total_cache" || $1 == "file" { print $2; exit }' "$CG/memory.stat")
		t_ok "  charged to the pid's cgroup (${file:-?} bytes)" test "${file:-0}" -ge $((120 * 4096))
	fi
	t_ok "  the log says so" grep -q "restored 'db' beneath $T_DIR/bundle/rootfs" hook.log
	t_kill $sp
else
	t_skip "createRuntime into the pid's cgroup" "$T_MEMCG_WHY"
fi

# a relative root.path is the bundle's
config rootfs
drop bundle/rootfs/data/db
state creating 0 "$(ann db)" | hook -J >rel.json 2>e
t_is "no pid: still restored (the hook's own cgroup pays, said)" "$(jq -r .total.result rel.json)" restored
t_ok "  the log says which cgroup" grep -q "not charged to its cgroup: the state has no pid" hook.log

# hostile annotations: names only, beneath --dir
for v in ../x /etc/passwd .hidden 'a b' 'x;y'; do
	state creating 0 "$(ann "$v")" | hook -J >h.json 2>e; rc=$?
	t_is "snapshot='$v': exit 0" "$rc" 0
	t_is "  refused" "$(jq -r .total.result h.json)" refused
done
state stopped 0 "$(jq -cn '{"io.pagecache.snapshot": "db", "io.pagecache.save": "../../etc/x"}')" |
	hook -J >h.json 2>e
t_is "save='../../etc/x': refused" "$(jq -r .total.result h.json)" refused
t_ok "  the log names the stage and the annotation" grep -q "poststop 0123456789ab: io.pagecache.save='../../etc/x' is not a NAME" hook.log
t_ok "  nothing written outside --dir" test ! -e "$T_DIR/etc/x"
ln -s /etc/passwd "$SNAPS/evil"
state creating 0 "$(ann evil)" | hook -J >h.json 2>e
t_is "a NAME that is a link in --dir: not used" "$(jq -r .total.result h.json)" failed
state stopped 0 "$(ann evil)" | hook -J >h.json 2>e
t_is "  nor written through" "$(jq -r .total.result h.json)" refused
t_ok "  /etc/passwd untouched" grep -q '^root:' /etc/passwd

# a corrupt snapshot: the start goes on, unless required
printf 'PCSNAP junk' >"$SNAPS/bad"
state creating 0 "$(ann bad)" | hook -J >c.json 2>e; rc=$?
t_is "a corrupt snapshot: exit 0" $rc 0
t_is "  failed, said" "$(jq -r .total.result c.json)" failed
state creating 0 "$(jq -cn '{"io.pagecache.snapshot": "bad", "io.pagecache.required": "true"}')" |
	hook >o 2>e; rc=$?
t_is "  with required=true: exit 1 (the start fails)" $rc 1
t_ok "  the log says why" grep -q "required is true: the start fails" hook.log
state creating 0 "$(jq -cn '{"io.pagecache.snapshot": "none-yet", "io.pagecache.required": "true"}')" |
	hook >o 2>e; rc=$?
t_is "required=true and no snapshot yet: exit 0 (a first start)" $rc 0

# the time limit: a small one stops the restore, the start goes on
drop bundle/rootfs/data/db
state creating 0 "$(jq -cn '{"io.pagecache.snapshot": "db", "io.pagecache.max-time": "forever"}')" |
	hook -J >mt.json 2>e
t_ok "a max-time that is no number: the default, said" grep -q "max-time='forever' is not seconds" hook.log
t_is "  and restored" "$(jq -r .total.result mt.json)" restored

# the admin's --max-time is the most an annotation may ask for
state creating 0 "$(jq -cn '{"io.pagecache.snapshot": "db", "io.pagecache.max-time": "30"}')" |
	hook --max-time 2 -J >mt2.json 2>e
t_ok "max-time above --max-time: refused, said" grep -q "max-time='30' is not seconds above 0 and at most --max-time 2" hook.log

# log lines are lines: an annotation's newline does not forge one
n0=$(wc -l <hook.log)
state creating 0 "$(jq -cn '{"io.pagecache.snapshot": "x\n2026-01-01T00:00:00Z pagecache hook: FAKE"}')" |
	hook >o 2>e
t_is "an annotation with a newline: one log line" "$(($(wc -l <hook.log) - n0))" 1
t_ok "  no forged line" bash -c "! grep -q '^2026-01-01T00:00:00Z pagecache hook: FAKE' '$T_DIR/hook.log'"

# the guard: a root with nothing cached keeps the last snapshot
drop bundle/rootfs/data/db bundle/rootfs/data/other
state stopped 0 "$(ann db)" | hook -J >g.json 2>e
t_is "poststop of a cold root: the old snapshot kept" "$(jq -r .total.result g.json)" kept
t_is "  still the old one" "$(pc show --json "$SNAPS/db" | jq -r '.files | length')" 1

# poststop after the root was unmounted (CRI-O): said, the snapshot kept
mkdir -p empty-root
config "$T_DIR/empty-root"
state stopped 0 "$(ann db)" | hook -J >er.json 2>e; rc=$?
t_is "poststop of an empty root: exit 0" $rc 0
t_is "  nothing taken" "$(jq -r .total.result er.json)" none
t_ok "  said" grep -q "is empty (unmounted before poststop" hook.log
t_is "  the old snapshot stays" "$(pc show --json "$SNAPS/db" | jq -r '.files | length')" 1
config rootfs

# a hung mount under the root (FUSE, NFS): the child is killed at the
# limit and, stuck in the kernel, left a second later; the start goes on
STALLFS=${STALLFS:-$(dirname "$PAGECACHE")/tests/stallfs}
mkdir -p bundle/rootfs/m ctl
mkfile bundle/rootfs/m/x 16
cat bundle/rootfs/m/x >/dev/null
pc snapshot -o "$SNAPS/stall" --root bundle/rootfs bundle/rootfs/m >/dev/null 2>&1
if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	t_skip "a hung mount under the root" "this kernel has no FUSE (/dev/fuse)"
elif [ ! -x "$STALLFS" ]; then
	t_skip "a hung mount under the root" "no stallfs at '$STALLFS' (make check builds it)"
else
	T_CLEANUP+=("umount -l $T_DIR/bundle/rootfs/m")
	"$STALLFS" --any-user "$T_DIR/bundle/rootfs/m" "$T_DIR/ctl" &
	sfpid=$!
	T_CLEANUP+=("t_kill $sfpid" "touch $T_DIR/ctl/release")
	if t_wait 5 grep -q " $T_DIR/bundle/rootfs/m fuse.pc-stallfs " /proc/mounts; then
		touch ctl/arm
		(state creating 0 "$(ann stall)" | hook --max-time 1 -J >st.json 2>e; echo $? >st.rc) &
		hp=$!
		t_wait 15 test -s st.rc
		t_is "the hook returns while the mount still hangs, exit 0" "$(cat st.rc 2>/dev/null)" 0
		t_is "  stopped at the limit, said" "$(jq -r .total.result st.json 2>/dev/null)" stopped
		touch ctl/release
		wait $hp 2>/dev/null
	else
		t_skip "a hung mount under the root" "stallfs did not mount"
	fi
	umount -l "$T_DIR/bundle/rootfs/m"
fi

# --dir and --log that are not ours alone
mkdir -p open && chmod 777 open
state creating 0 "$(ann db)" | "$PAGECACHE" hook --dir "$T_DIR/open" --log "$T_DIR/hook.log" -J >d.json 2>e
t_is "a --dir others may write: not used" "$(jq -r .total.result d.json)" failed
ln -s /etc/passwd linklog
state creating 0 '{}' | "$PAGECACHE" hook --dir "$SNAPS" --log "$T_DIR/linklog" >o 2>e; rc=$?
t_is "a --log that is a link: exit 0" $rc 0
t_ok "  not written through, said" grep -q "cannot open --log" e
t_ok "  /etc/passwd untouched" grep -q '^root:' /etc/passwd
t_done
