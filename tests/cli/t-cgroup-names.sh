#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --cgroup as users name a cgroup: its cgroupfs directory, its path in the
# hierarchy (as systemctl prints it), a systemd unit's name (escapes kept
# literal), a container ID (podman's libpod-ID.scope, docker's, the
# cgroupfs driver's /docker/ID), for memory cgroups this test makes with
# such names beneath our own, spaces and quotes included; what comes out in
# JSON (jq) and Prometheus text (promtool, where installed) is the name,
# byte for byte. Then the v2 paths on a live cgroup v2 memory controller,
# where the kernel can give one (t_v2_memory), or a skip that says why.
# Every cgroup and process made here is removed at the end, on failure too.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

# v1: beneath our own memory cgroup; v2: beneath the root, since ours may
# have processes of its own and so cannot hand the memory controller on
root=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)
self=$(awk -F: '$2=="memory"{print $3} $1=="0"{print $3}' /proc/self/cgroup | head -1)
self=${self%/}
[ "$root" = /sys/fs/cgroup ] && self=
if ! t_writable "$root$self"; then
	t_skip "cgroup names" "$T_WHY: the test makes memory cgroups there"
	t_done; exit
fi
SL="pc-test-$$.slice"
UNIT='pc-test\x2dfoo-'$$'.service'	# systemd's escape for "pc-test-foo-$$.service"
QUOTED="pc-test \"quoted\" 'name' $$.service"
hex64() { head -c 32 /dev/urandom | od -An -v -tx1 | tr -d ' \n'; }
ID1=$(hex64)
ID2=$(hex64)
P=$(hex64); P=${P:0:12}			# two cgroupfs-driver IDs share 12 digits
ID3=${P}0$(hex64 | cut -c14-64)
ID4=${P}1$(hex64 | cut -c14-64)
TOP="$root$self/$SL"
SLEEPERS=()
cg_cleanup() {
	local p
	for p in "${SLEEPERS[@]}"; do kill "$p"; wait "$p"; done 2>/dev/null
	[ -d "$TOP" ] && find "$TOP" -depth -type d -exec rmdir {} + 2>/dev/null
	return 0
}
T_CLEANUP+=(cg_cleanup)
if ! mkdir -p "$TOP/$UNIT" "$TOP/machine.slice/libpod-$ID1.scope" \
	"$TOP/system.slice/docker-$ID2.scope" "$TOP/docker/$ID3" "$TOP/docker/$ID4" \
	"$TOP/$QUOTED" "$TOP/a/pc-dup-$$.service" "$TOP/b/pc-dup-$$.service" 2>mk.err; then
	t_skip "cgroup names" "cannot create a memory cgroup here: $(head -1 mk.err)"
	t_done; exit
fi
if [ -e "$TOP/cgroup.subtree_control" ]; then	# v2: each level hands memory on
	for d in "$TOP" "$TOP/machine.slice" "$TOP/system.slice" "$TOP/docker" "$TOP/a" "$TOP/b"; do
		echo +memory >"$d/cgroup.subtree_control"
	done 2>/dev/null
fi
if ! [ -e "$TOP/$UNIT/memory.limit_in_bytes" ] && ! [ -e "$TOP/$UNIT/memory.max" ]; then
	t_skip "cgroup names" "the cgroups made here have no memory controller ($TOP)"
	t_done; exit
fi

# a process in each, holding a file of its own open
sleeper() {	# sleeper CGDIR FILE
	mkfile "$2" 64
	CG="$1" F="$2" bash -c 'exec 3<"$F"; echo $$ >"$CG/cgroup.procs"; exec sleep 60' &
	SLEEPERS+=($!)
}
sleeper "$TOP/$UNIT" held-unit
sleeper "$TOP/machine.slice/libpod-$ID1.scope" held-libpod
sleeper "$TOP/system.slice/docker-$ID2.scope" held-docker
sleeper "$TOP/$QUOTED" held-quoted
t_wait 10 eval '[ "$(cat "$TOP/$UNIT/cgroup.procs" "$TOP/machine.slice/libpod-$ID1.scope/cgroup.procs" \
		"$TOP/system.slice/docker-$ID2.scope/cgroup.procs" "$TOP/$QUOTED/cgroup.procs" | wc -l)" = 4 ]'

# names FILE STRING...: FILE has every STRING (in any order)
names() {
	local f=$1 s
	shift
	for s in "$@"; do grep -qF -- "$s" "$f" || return 1; done
}

# held_by SPEC: the held-* files stat --cgroup SPEC lists, space-separated
held_by() {
	"$PAGECACHE" stat --cgroup "$1" --json >by.json 2>by.err; echo "rc=$?"
	jq -r '[.files[].path | select(test("/held-")) | sub(".*/"; "")] | sort | join(" ")' by.json
}

# the forms of one unit's cgroup
t_is "the cgroupfs directory (was refused: no such memory cgroup)" \
	"$(held_by "$TOP/$UNIT")" "$(printf 'rc=0\nheld-unit')"
t_is "the path in the hierarchy, as systemctl show -p ControlGroup prints it" \
	"$(held_by "$self/$SL/$UNIT")" "$(printf 'rc=0\nheld-unit')"
t_is "the path without its leading slash" \
	"$(held_by "${self#/}/$SL/$UNIT")" "$(printf 'rc=0\nheld-unit')"
t_is "the unit's name, its escape literal" "$(held_by "$UNIT")" "$(printf 'rc=0\nheld-unit')"
t_is "a slice's name: its cgroups and the ones below" "$(held_by "$SL")" \
	"$(printf 'rc=0\nheld-docker held-libpod held-quoted held-unit')"
t_is "a name with spaces and quotes" "$(held_by "$QUOTED")" "$(printf 'rc=0\nheld-quoted')"
pc stat --cgroup "pc-test-foo-$$.service" >o 2>e; rc=$?
t_is "the unescaped name is another name (exit 1)" "$rc" 1
t_ok "and the message says what was tried" grep -qF "no such memory cgroup: tried the memory cgroup '$root/pc-test-foo-$$.service', and no cgroup of that name among the" e

# containers
t_is "a podman container's full ID (libpod-ID.scope)" "$(held_by "$ID1")" "$(printf 'rc=0\nheld-libpod')"
t_is "its first 12 digits" "$(held_by "${ID1:0:12}")" "$(printf 'rc=0\nheld-libpod')"
t_is "a docker container's 16 (docker-ID.scope)" "$(held_by "${ID2:0:16}")" "$(printf 'rc=0\nheld-docker')"
pc stat --cgroup "${ID3:0:13}" --json >o.json 2>e; rc=$?
t_is "the cgroupfs driver's /docker/ID" "$rc $(jq -r '.errors | length' o.json)" "0 0"
pc stat --cgroup "$P" --json >amb.json 2>amb.err; rc=$?
t_is "a prefix two containers share: refused (exit 1)" "$rc" 1
t_ok "naming both" names amb.err "container ID prefix matches 2 cgroups" \
	"'$self/$SL/docker/$ID3'" "'$self/$SL/docker/$ID4'"
t_is "and --json says so in its errors" \
	"$(jq -r '.errors[0].reason | test("container ID prefix matches 2 cgroups")' amb.json)" true

# names that are not one
pc stat --cgroup "pc-dup-$$.service" >o 2>e; rc=$?
t_is "a name two cgroups have: refused (exit 1)" "$rc" 1
t_ok "naming both" names e "the name matches 2 cgroups (name one by its path): '" \
	"'$self/$SL/a/pc-dup-$$.service'" "'$self/$SL/b/pc-dup-$$.service'"
pc stat --cgroup "$self/$SL/../$SL" >o 2>e; t_is "'..' is refused (exit 1)" $? 1
t_ok "saying why" grep -q "would leave the memory hierarchy" e
pc stat --cgroup "$self/$SL/none" >o 2>e; t_is "a path that is not there (exit 1)" $? 1
t_ok "the message names the directory tried" grep -qF "tried the memory cgroup '$TOP/none'" e

# restore --cgroup by a unit's name: the pages are charged there (stat --by-cgroup)
mkfile owned 1024
cat owned >/dev/null
pc snapshot -o own.snap owned >/dev/null
drop owned
pc restore --cgroup "$UNIT" own.snap >o 2>e; rc=$?
t_is "restore --cgroup UNIT exits 0" "$rc" 0
pc stat --by-cgroup --json owned >own.json 2>own.err
t_ok "stat --by-cgroup --json is JSON" jq -e . own.json
if t_cap sys_admin; then	# --by-cgroup reads /proc/kpagecgroup
	t_is "every restored page is charged to the unit's cgroup, its name exact in JSON" \
		"$(jq --arg p "$self/$SL/$UNIT" '[.files[0].cgroups[] | select(.path == $p) | .cached] | add' own.json)" \
		"$(jq '.files[0].cached' own.json)"
else
	t_skip "every restored page is charged to the unit's cgroup" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
fi
pc restore --dry-run --cgroup "${ID1:0:12}" own.snap >o 2>e; t_is "restore --dry-run takes a container ID" $? 0
pc restore --cgroup "$P" own.snap >o 2>e; rc=$?
t_is "and refuses an ambiguous one (exit 1)" "$rc" 1
t_ok "naming both" grep -qF "docker/$ID4'" e

# every name, exactly, in JSON and Prometheus text
(cd "$TOP/.." && find "$SL" -type d | sed "s|^|$self/|" | LC_ALL=C sort) >want.txt
for form in "$SL" "$TOP" "$self/$SL"; do
	pc cgroups --root "$form" --json >cg.json 2>cg.err; rc=$?
	t_is "cgroups --root '$form' exits 0" "$rc" 0
	t_ok "its JSON is valid" jq -e . cg.json
	jq -r '.cgroups[].path' cg.json | LC_ALL=C sort >got.txt
	t_ok "every cgroup's path comes back exactly" cmp -s got.txt want.txt
done
t_is "the escaped unit's path, to the byte" \
	"$(jq -r --arg p "$self/$SL/$UNIT" '[.cgroups[] | select(.path == $p)] | length' cg.json)" 1
pc cgroups --root "${ID2:0:12}" --json >cg1.json 2>cg.err
t_is "cgroups --root takes a container ID" "$(jq -r '[.cgroups[].path] | join(" ")' cg1.json)" \
	"$self/$SL/system.slice/docker-$ID2.scope"
pc cgroups --root "$SL" --prom >cg.prom 2>cg.err; rc=$?
t_is "cgroups --prom exits 0" "$rc" 0
# the label's value is the name's text as in JSON (systemd's \x2d as it
# is), then the format's escapes (its backslash doubled)
t_ok "the escape's backslash is escaped in the label" \
	grep -qF "cgroup=\"$self/$SL/pc-test\\\\x2dfoo-$$.service\"" cg.prom
t_ok "and the quotes" grep -qF "cgroup=\"$self/$SL/pc-test \\\"quoted\\\" 'name' $$.service\"" cg.prom
pc stat --by-cgroup --prom owned >own.prom 2>own.err
if command -v promtool >/dev/null; then
	# clean: 1 is not the text format, 3 lint (no HELP, units, _total)
	promtool check metrics <cg.prom >pt.out 2>&1; rc=$?
	t_ok "promtool passes cgroups --prom ($rc)" test "$rc" = 0 -a ! -s pt.out
	if t_cap sys_admin; then
		promtool check metrics <own.prom >pt.out 2>&1; rc=$?
		t_ok "and stat --by-cgroup --prom ($rc)" test "$rc" = 0 -a ! -s pt.out
	else
		t_skip "and stat --by-cgroup --prom" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
	fi
else
	t_skip "promtool passes cgroups --prom" "promtool is not installed (apt-get install prometheus)"
	t_skip "and stat --by-cgroup --prom" "promtool is not installed (apt-get install prometheus)"
fi

cg_cleanup
t_is "every cgroup made here is gone" "$(ls -d "$TOP" 2>/dev/null)" ""

# ---- cgroup v2 for real: run --no-cache, restore --cgroup, cgroups, --by-cgroup ----
if ! t_v2_memory; then
	t_skip "cgroup v2: run, restore --cgroup, cgroups, stat --by-cgroup" "$T_V2_WHY"
	t_done; exit
fi
echo "# cgroup v2 with memory at $T_V2${T_V2_PRIVATE:+ (a private mount)}"
V2CG="pc-test-v2-$$"
V2ON=
v2_cleanup() {
	t_v2 sh -c "rmdir '$T_V2/$V2CG'" 2>/dev/null
	[ -n "$V2ON" ] && t_v2 sh -c "echo -memory >'$T_V2/cgroup.subtree_control'" 2>/dev/null
	return 0
}
T_CLEANUP+=(v2_cleanup)
t_v2 "$PAGECACHE" cgroups --json >v2.json 2>v2.err; rc=$?
t_is "v2: cgroups exits 0" "$rc" 0
t_ok "v2: with rows" test "$(jq '.cgroups | length' v2.json)" -ge 1
mkfile v2cold 4096
drop v2cold
t_v2 "$PAGECACHE" run --no-cache -- cat v2cold >/dev/null 2>v2run.err; rc=$?
if [ "$rc" != 0 ] && grep -qE "^pagecache: cannot run: (other processes share our cgroup|our cgroup '.*' is not given the memory controller)" v2run.err; then
	# run's own refusals: our cgroup is shared, or memory is not delegated to
	# it (a stated reason); any other error fails
	t_skip "v2: run --no-cache" "$(head -1 v2run.err)"
else
	t_is "v2: run --no-cache exits 0" "$rc" 0
	t_is "v2: run --no-cache takes back what CMD read" "$(cached_pages v2cold)" 0
fi
# a cgroup of the test's own, beneath the root (the root hands memory on)
if ! t_v2 grep -qw memory "$T_V2/cgroup.subtree_control"; then
	t_v2 sh -c "echo +memory >'$T_V2/cgroup.subtree_control'" && V2ON=1
fi
if t_v2 mkdir "$T_V2/$V2CG" 2>/dev/null && t_v2 test -e "$T_V2/$V2CG/memory.max"; then
	cat v2cold >/dev/null
	"$PAGECACHE" snapshot -o v2.snap v2cold >/dev/null
	drop v2cold
	t_v2 "$PAGECACHE" restore --cgroup "$V2CG" v2.snap >o 2>e; rc=$?
	t_is "v2: restore --cgroup NAME exits 0" "$rc" 0
	if t_cap sys_admin; then
		t_v2 "$PAGECACHE" stat --by-cgroup --json v2cold >v2own.json 2>v2own.err
		t_is "v2: every restored page is charged to it (stat --by-cgroup)" \
			"$(jq --arg p "/$V2CG" '[.files[0].cgroups[] | select(.path == $p) | .cached] | add' v2own.json)" \
			"$(jq '.files[0].cached' v2own.json)"
	else
		t_skip "v2: every restored page is charged to it" "$T_WHY (--by-cgroup reads /proc/kpagecgroup)"
	fi
	t_v2 "$PAGECACHE" cgroups --root "$T_V2/$V2CG" --json >v2r.json 2>v2r.err
	t_is "v2: cgroups --root takes its directory" "$(jq -r '[.cgroups[].path] | join(" ")' v2r.json)" "/$V2CG"
	t_v2 "$PAGECACHE" stat --cgroup "/$V2CG" >o 2>e
	t_is "v2: stat --cgroup by path exits 0" $? 0
	t_v2 sh -c "cat '$T_V2/$V2CG/cgroup.procs' | while read p; do echo \$p >'$T_V2/cgroup.procs'; done"
	v2_cleanup
	V2ON=
else
	t_skip "v2: restore --cgroup" "cannot make a v2 memory cgroup beneath the root"
fi
t_done
