#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `pagecache cgroups --json` against the kernel's own memory.stat: a memory
# cgroup made beneath ours holds one process that has read a file (cache),
# written one (dirty), mapped one (mapped_file) and filled a tmpfs file
# (shmem), then waits. Each JSON field must lie between the matching
# memory.stat value read by this test just before and just after the
# command (a number can move only in that time: dirty pages being written
# back, say). No tolerance beyond that. v1 keys are the hierarchical
# total_* ones; v2's are its own names.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

root=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)
self=$(awk -F: '$2=="memory"{print $3} $1=="0"{print $3}' /proc/self/cgroup | head -1)
self=${self%/}
if [ "$root" = /sys/fs/cgroup ] && [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	V=2
	if ! grep -qw memory "$root$self/cgroup.subtree_control" 2>/dev/null; then
		t_skip "cgroups vs memory.stat" "cgroup v2: our cgroup ($self) does not hand the memory controller on"
		t_done; exit
	fi
elif [ -e "$root$self/memory.stat" ]; then
	V=1
else
	t_skip "cgroups vs memory.stat" "no memory cgroup controller mounted here"
	t_done; exit
fi
# A --root that names no cgroup: one error in the JSON document, which
# still comes out whole (an empty list was once passed to qsort as NULL,
# which the sanitized build stops at before anything is printed).
if t_have jq; then
	pc cgroups --json --root "$self/pc-none-$$" >none.json 2>none.err; rc=$?
	t_is "--root of no cgroup: exit 1" "$rc" 1
	t_is "--root of no cgroup: an empty list and one error; one line on stderr" \
		"$(jq -c '[(.cgroups | length), (.errors | length)]' none.json 2>&1) $(grep -c . none.err)" "[0,1] 1"
else
	t_skip "--root of no cgroup" "$T_WHY"
fi
if ! t_writable "$root$self"; then
	t_skip "cgroups vs memory.stat" "$T_WHY: the test makes a memory cgroup there"
	t_done; exit
fi
if ! t_have python3 jq; then
	t_skip "cgroups vs memory.stat" "$T_WHY"
	t_done; exit
fi

NAME=pc-cgroups-$$
CG=$root$self/$NAME
if ! mkdir "$CG" 2>mk.err; then
	t_skip "cgroups vs memory.stat" "cannot create a memory cgroup here: $(head -1 mk.err)"
	t_done; exit
fi
T_CLEANUP+=("rmdir '$CG'")
SHM=/dev/shm/$NAME
T_CLEANUP+=("rm -f '$SHM'")
if [ $V = 1 ]; then
	echo $((512 << 20)) >"$CG/memory.limit_in_bytes"
	LIMIT_FILE=memory.limit_in_bytes USAGE_FILE=memory.usage_in_bytes
else
	echo $((512 << 20)) >"$CG/memory.max"
	LIMIT_FILE=memory.max USAGE_FILE=memory.current
fi

mkfile read.dat 2048
mkfile mapped.dat 512
drop read.dat mapped.dat	# charged to whoever reads them next: the process below
python3 - "$CG" read.dat dirty.dat mapped.dat "$SHM" ready <<'PY' &
import mmap, os, signal, sys
cg, rd, dirty, mapped, shm, ready = sys.argv[1:]
with open(cg + "/cgroup.procs", "w") as f:
    f.write(str(os.getpid()))
with open(rd, "rb") as f:
    while f.read(1 << 20):
        pass
with open(dirty, "wb") as f:
    f.write(os.urandom(768 << 10))
fd = os.open(mapped, os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
s = sum(m[i] for i in range(0, len(m), mmap.PAGESIZE))
with open(shm, "wb") as f:
    f.write(os.urandom(384 << 10))
with open(ready, "w") as f:
    f.write("%d\n" % s)
signal.pause()
PY
pid=$!
T_CLEANUP+=("t_kill $pid")
if ! t_wait 20 test -s ready; then
	t_is "the process in the cgroup read, wrote, mapped and filled shmem" "not ready" "ready"
	t_done; exit
fi
t_is "the process is in the cgroup" "$(cat "$CG/cgroup.procs")" "$pid"

# FIELD v1-key v2-key: the JSON key and where memory.stat has it
if [ $V = 1 ]; then
	FIELDS="file:total_cache active_file:total_active_file inactive_file:total_inactive_file
		dirty:total_dirty writeback:total_writeback shmem:total_shmem
		mapped:total_mapped_file anon:total_rss refaults:total_workingset_refault_file"
else
	FIELDS="file:file active_file:active_file inactive_file:inactive_file
		dirty:file_dirty writeback:file_writeback shmem:shmem mapped:file_mapped
		anon:anon refaults:workingset_refault_file activations:workingset_activate_file"
fi
snap() {	# snap OUT: memory.stat, plus limit and usage as "limit N" and "usage N"
	{ cat "$CG/memory.stat"; echo "limit $(cat "$CG/$LIMIT_FILE")"
	  echo "usage $(cat "$CG/$USAGE_FILE")"; } >"$1"
}
key() { awk -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }' "$1"; }

# Up to three tries: a counter that goes up and back down between the two
# reads (writeback, as the flusher runs) can leave the bracket once; a
# field read from the wrong key or scaled wrongly leaves it every time.
for try in 1 2 3; do
	snap before
	pc cgroups --json --root "$self/$NAME" >c.json 2>c.err; rc=$?
	snap after
	bad=
	row=$(jq -c --arg p "$self/$NAME" '.cgroups[] | select(.path == $p)' c.json 2>/dev/null)
	[ $rc = 0 ] && [ -n "$row" ] || { bad="no row for $self/$NAME (rc $rc)"; continue; }
	for fk in $FIELDS limit:limit usage:usage; do
		f=${fk%%:*} k=${fk#*:}
		got=$(jq -r --arg f "$f" '.[$f] | if . == null then "null" else tostring end' <<<"$row")
		lo=$(key before "$k") hi=$(key after "$k")
		[ "$lo" = max ] && [ "$f" = limit ] && lo=-1 hi=-1	# v2 "max": no limit
		if [ "$lo" = missing ] || [ "$hi" = missing ]; then bad+=" $f($k missing)"; continue; fi
		[ "$lo" -gt "$hi" ] && { t=$lo; lo=$hi; hi=$t; }
		[ "$got" != null ] && [ "$got" -ge "$lo" ] && [ "$got" -le "$hi" ] ||
			bad+=" $f=$got not in [$lo,$hi] ($k)"
	done
	[ -z "$bad" ] && break
done
t_is "every field equals memory.stat's (read before and after the command)" "${bad:-none}" none
[ $V = 1 ] && t_is "v1: activations are null (v1 does not count them)" \
	"$(jq -r '.activations' <<<"$row")" null

# The values are not all zeros: what the process did shows where it should.
ps=$(getconf PAGESIZE)
t_ok "file holds the 2 MiB read in the cgroup" \
	test "$(jq -r .file <<<"$row")" -ge $((2048 * 1024 + 512 * 1024))
t_ok "mapped holds the 512 KiB mapping" test "$(jq -r .mapped <<<"$row")" -ge $((512 * 1024))
t_ok "shmem holds the 384 KiB tmpfs file" test "$(jq -r .shmem <<<"$row")" -ge $((384 * 1024))
t_is "limit is the one set (512 MiB)" "$(jq -r .limit <<<"$row")" $((512 << 20))
t_is "sizes are whole pages" "$(jq -r '[.file, .active_file, .inactive_file, .shmem, .mapped] | map(. % '"$ps"') | add' <<<"$row")" 0
t_done
