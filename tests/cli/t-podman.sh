#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache hook under podman, end to end (issue 25): rootful podman with
# everything private to the test (its storage, run and tmp directories, a
# hooks directory whose one JSON runs $PAGECACHE hook with --dir and --log
# in the scratch directory), --network none, the cgroupfs manager, and an
# image made here with `podman import` from the host's own files (sqlite3,
# /bin/sh, sleep and their libraries, and a 20 MB SQLite database made with
# sqlite3 at /data/db.sqlite): no registry is reached.
# A container with the annotation and no snapshot yet starts; at its stop
# the hook's poststop writes the snapshot (the database's path as the
# container sees it); the image's files are evicted; the next container of
# the image starts with them restored by the hook's createRuntime, charged
# to the container's memory cgroup and not to conmon's (where the hook
# itself runs). A corrupt snapshot and a missing one: the container starts
# anyway; io.pagecache.required=true with a corrupt one: the start fails.
# Hostile annotations (../x, /etc/passwd, a name that is a link in the
# directory, a save name out of it) are refused and nothing outside --dir
# is written. Podman's mounts and containers go at the end, on failure too.
# Skipped with the reason where podman cannot run a container here.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"
PS=$(getconf PAGESIZE)
HOOK_BIN=$(readlink -f "$PAGECACHE")

skip_all() { t_skip "podman end to end with the hook" "$1"; t_done; exit 0; }

if [ -n "${PC_CHECK_CONTAINER:-}" ]; then
	skip_all "inside make check-container's container (not tried there: podman would keep its overlay storage on the container's overlay root and make its cgroups in the host's hierarchy)"
fi
t_root || skip_all "not root (the test runs rootful podman: cgroupfs, overlay storage, hooks)"
t_have podman sqlite3 ldd tar || skip_all "$T_WHY"
"$HOOK_BIN" hook --help >/dev/null 2>&1 || skip_all "this pagecache has no 'hook' command"

# ---- podman, private to the test ----
mkdir -m 700 snaps
mkdir hooks.d storage run tmp net
P=(podman --root "$T_DIR/storage" --runroot "$T_DIR/run" --tmpdir "$T_DIR/tmp"
	--network-config-dir "$T_DIR/net" --volumepath "$T_DIR/storage/volumes"
	--events-backend none --cgroup-manager cgroupfs --storage-driver overlay
	--hooks-dir "$T_DIR/hooks.d")
# root here may lack CAP_SYS_RESOURCE: limits no higher than podman's own
RUN=(--network none --ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
IMG=localhost/pc-test-podman:1
pod() { "${P[@]}" "$@"; }
# everything podman made goes: containers (stopped, which runs poststop),
# the image, then whatever it left mounted under the scratch directory,
# deepest first
pod_cleanup() {
	local m
	pod rm -af -t 0
	pod rmi -af
	awk -v d="$T_DIR/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount "$m" || umount -l "$m"; done
}
T_CLEANUP+=("pod_cleanup")

# ---- the image: a root file system from the host's files ----
mkdir -p rootfs/bin rootfs/data rootfs/etc
copy_bin() {
	local b l
	for b in "$@"; do
		cp -L "$b" rootfs/bin/ || return 1
		for l in $(ldd "$b" | grep -oE '/[^ ]+'); do
			mkdir -p "rootfs${l%/*}" && cp -L "$l" "rootfs$l" || return 1
		done
	done
}
copy_bin "$(type -P sqlite3)" /bin/sh "$(type -P sleep)" "$(type -P true)" ||
	skip_all "cannot copy sqlite3, sh, sleep, true and their libraries into an image"
# 20,000 rows of 900 random bytes: 20 MB, every page read by the query
sqlite3 rootfs/data/db.sqlite "pragma page_size=4096;
	create table t(id integer primary key, v blob);
	with recursive c(i) as (select 1 union all select i + 1 from c where i < 20000)
	insert into t select i, randomblob(900) from c;" || skip_all "sqlite3 cannot make the database"
DB_PAGES=$(( ($(stat -c %s rootfs/data/db.sqlite) + PS - 1) / PS ))
QUERY=(/bin/sqlite3 -readonly /data/db.sqlite "select count(*), sum(length(v)) from t")
ANSWER="20000|18000000"
tar -C rootfs -cf rootfs.tar . || skip_all "cannot tar the root file system"
if ! pod import rootfs.tar "$IMG" >import.out 2>import.err; then
	skip_all "podman import fails here: $(tail -1 import.err)"
fi

# a runtime that starts a container here: crun, else runc (crun 1.8 refuses
# a host with cgroup v1 controllers on a tmpfs, "hybrid mode")
RT= why=
for rt in crun runc; do
	if ! command -v "$rt" >/dev/null; then why+="$rt: not installed; "; continue; fi
	if pod --runtime "$rt" run --rm "${RUN[@]}" "$IMG" /bin/true >rt.out 2>rt.err; then
		RT=$rt
		break
	fi
	why+="$rt: $(grep -v '^$' rt.err | tail -1); "
done
[ -n "$RT" ] || skip_all "no runtime starts a container here (${why%; })"
P+=(--runtime "$RT")
echo "# podman $(podman --version | awk '{ print $3 }') with $RT"

cat >hooks.d/pagecache.json <<EOF
{
	"version": "1.0.0",
	"hook": {
		"path": "$HOOK_BIN",
		"args": ["pagecache", "hook", "--dir", "$T_DIR/snaps", "--log", "$T_DIR/hook.log"],
		"timeout": 90
	},
	"when": { "annotations": { "^io\\\\.pagecache\\\\.snapshot\$": ".+" } },
	"stages": ["createRuntime", "poststop"]
}
EOF

# run NAME ARGS...: podman run --rm as container NAME (its ID in cid.NAME);
# the status in RC, output in NAME.out and NAME.err
run() {
	local n=$1
	shift
	RC=0
	pod run --rm --name "pc-$n" --cidfile "cid.$n" "${RUN[@]}" "$@" >"$n.out" 2>"$n.err" || RC=$?
}
# logged ID-FILE ERE: a line of the hook's log about that container
# (named by its ID, or the ID's first 12 characters) matches ERE
logged() {
	local id
	id=$(cut -c1-12 "$1" 2>/dev/null)
	[ -n "$id" ] && grep -F "$id" hook.log 2>/dev/null | grep -qE -- "$2"
}
# nlines ID-FILE: how many lines of the log are about that container (each
# stage writes one at least: two once poststop ran)
nlines() {
	local id
	id=$(cut -c1-12 "$1" 2>/dev/null)
	[ -n "$id" ] && grep -cF "$id" hook.log 2>/dev/null
}
poststop_ran() { [ "$(nlines "$1")" -ge 2 ]; }
# what the lines say: createRuntime's, then poststop's
NONE_RE='no snapshot.* yet'
RESTORED_RE="restored '|: restored"
FAILED_RE='failed|not used|refused|cannot pull'
WROTE_RE='wrote snapshot|snapshot of'

# memcg PID: the process's memory cgroup, as /proc/PID/cgroup names it
memcg() {
	awk -F: '$2 == "memory" { print "v1:" $3; f = 1 } $1 == "0" { v2 = $3 }
		END { if (!f) print "v2:" v2 }' "/proc/$1/cgroup"
}
# memcg_file CG: bytes of page cache charged to it and beneath (v1
# total_cache, v2 file)
memcg_file() {
	case $1 in
	v1:*) awk '$1 == "total_cache" { print $2 }' "/sys/fs/cgroup/memory${1#v1:}/memory.stat" ;;
	v2:*) awk '$1 == "file" { print $2 }' "/sys/fs/cgroup${1#v2:}/memory.stat" ;;
	esac
}

# ---- no snapshot yet: the container starts; its stop writes one ----
run first --annotation io.pagecache.snapshot=db "$IMG" "${QUERY[@]}"
t_is "no snapshot yet: the container runs its query (exit 0)" "$RC $(cat first.out)" "0 $ANSWER"
t_ok "the hook's createRuntime says there was no snapshot yet" \
	logged cid.first "$NONE_RE"
t_wait 10 poststop_ran cid.first
t_ok "poststop wrote the snapshot $T_DIR/snaps/db" test -s snaps/db
t_ok "and logged it" logged cid.first "$WROTE_RE"
t_is "the log is the hook's own: made 0600" "$(stat -c %a hook.log 2>&1)" 600
pc show --json snaps/db >db.json 2>db.err
snap_pages=$(jq '[.files[] | select((.path | ltrimstr("/")) == "data/db.sqlite") | .pages][0] // 0' db.json)
t_ok "it lists /data/db.sqlite as the container sees it, $snap_pages of $DB_PAGES pages" \
	test "$snap_pages" -ge $((DB_PAGES * 3 / 4))
t_is "and no path of the host's" "$(jq -r '[.files[].path | select(test("storage|merged|overlay"))] | length' db.json)" 0

# ---- the image's files evicted; the next start restores them ----
LAYER_DB=$(find storage/overlay -path '*/diff/data/db.sqlite' | head -1)
t_ok "the database is the image layer's file (the query copied nothing up)" \
	test "$(find storage/overlay -path '*/diff/data/db.sqlite' | wc -l)" = 1
pc evict "$T_DIR/storage" >evict.out 2>evict.err
t_is "evict on the storage directory leaves none of the database" "$(cached_pages "$LAYER_DB")" 0

# conmon's cgroup (where the hook runs: all conmons share it), from a
# container of its own; what is charged to it counted before the start
pod run -d --name pc-probe "${RUN[@]}" "$IMG" /bin/sleep 600 >probe.out 2>&1
conmon_cg=$(memcg "$(pod inspect -f '{{.State.ConmonPid}}' pc-probe 2>/dev/null)" 2>/dev/null)
pod rm -f -t 0 pc-probe >/dev/null 2>&1
conmon_before=$(memcg_file "$conmon_cg" 2>/dev/null)
pod run -d --name pc-held --cidfile cid.held "${RUN[@]}" --annotation io.pagecache.snapshot=db \
	"$IMG" /bin/sleep 600 >held.out 2>held.err
t_is "a container of the image with the snapshot starts, held running" "$(pod inspect -f '{{.State.Running}}' pc-held 2>&1)" true
PID=$(pod inspect -f '{{.State.Pid}}' pc-held 2>/dev/null)
t_ok "the hook's createRuntime restored (logged)" logged cid.held "$RESTORED_RE"
res=$(resident_pages "$LAYER_DB" "$snap_pages")
t_ok "the database's pages are resident ($res of the $snap_pages restored)" test "$res" -ge $((snap_pages * 3 / 4))
if [ -n "$PID" ] && [ -r "/proc/$PID/cgroup" ]; then
	ctr_cg=$(memcg "$PID")
	charged=$(memcg_file "$ctr_cg")
	t_ok "they are charged to the container's memory cgroup ${ctr_cg#v?:} ($((${charged:-0} / 1024)) KiB)" \
		test "${charged:-0}" -ge $((snap_pages * 3 / 4 * PS))
	conmon_after=$(memcg_file "$conmon_cg" 2>/dev/null)
	grew=$(( ${conmon_after:-0} - ${conmon_before:-0} ))
	t_ok "not to conmon's ${conmon_cg#v?:}, where the hook runs (it grew by $((grew / 1024)) KiB)" \
		test -n "$conmon_after" -a "$conmon_cg" != "$ctr_cg" -a "$grew" -lt $((snap_pages / 4 * PS))
else
	t_is "the held container's process" "none" "pid $PID"
fi
pod rm -f -t 0 pc-held >/dev/null 2>&1
t_wait 10 poststop_ran cid.held
t_ok "its stop took the snapshot again" logged cid.held "$WROTE_RE|kept snapshot"

# ---- a corrupt snapshot, a missing one: the container starts anyway ----
head -c 8192 /dev/urandom >snaps/bad
run corrupt --annotation io.pagecache.snapshot=bad "$IMG" "${QUERY[@]}"
t_is "a corrupt snapshot: the container starts anyway" "$RC $(cat corrupt.out)" "0 $ANSWER"
t_ok "the failure is logged" logged cid.corrupt "$FAILED_RE"
run missing --annotation io.pagecache.snapshot=nosuch "$IMG" "${QUERY[@]}"
t_is "a missing snapshot: the container starts" "$RC $(cat missing.out)" "0 $ANSWER"
t_ok "logged as none yet" logged cid.missing "$NONE_RE"

# ---- required: a corrupt snapshot fails the start ----
head -c 8192 /dev/urandom >snaps/bad2
run required --annotation io.pagecache.snapshot=bad2 --annotation io.pagecache.required=true \
	"$IMG" "${QUERY[@]}"
t_ok "io.pagecache.required=true with a corrupt snapshot: the start fails (exit $RC)" \
	test "$RC" != 0 -a ! -s required.out
t_ok "the failure is logged" logged cid.required "$FAILED_RE"
pod rm -f -t 0 pc-required >/dev/null 2>&1

# ---- hostile annotations: refused, nothing written outside --dir ----
# (a link in --dir to a good snapshot: a restore through it would succeed)
cp snaps/db outside.snap
ln -s "$T_DIR/outside.snap" snaps/link
sum_before=$(sha256sum outside.snap /etc/passwd)
i=0
for a in "snapshot=../x" "snapshot=/etc/passwd" "snapshot=link" "snapshot=db,save=../y" \
	 "snapshot=db,save=link"; do
	i=$((i + 1))
	args=()
	IFS=, read -ra kv <<<"$a"
	for k in "${kv[@]}"; do args+=(--annotation "io.pagecache.$k"); done
	run "hostile$i" "${args[@]}" "$IMG" "${QUERY[@]}"
	t_is "io.pagecache.$a: the container starts" "$RC $(cat "hostile$i.out")" "0 $ANSWER"
	t_wait 10 poststop_ran "cid.hostile$i"
	case $a in
	*save=link) ;;	# replacing the link in --dir is no write outside it
	*save=*)
		t_ok "io.pagecache.$a: the save is refused (logged)" \
			eval 'logged "cid.hostile$i" "no snapshot taken|$FAILED_RE" &&
				! logged "cid.hostile$i" "$WROTE_RE|kept snapshot"' ;;
	*)
		t_ok "io.pagecache.$a: the restore is refused (logged)" \
			eval 'logged "cid.hostile$i" "$FAILED_RE" &&
				! logged "cid.hostile$i" "$RESTORED_RE|$NONE_RE"' ;;
	esac
done
t_is "nothing outside --dir was written (the link's target, /etc/passwd)" \
	"$(sha256sum outside.snap /etc/passwd)" "$sum_before"
t_ok "no x or y beside --dir" test ! -e x -a ! -e y -a ! -e ../x -a ! -e ../y

# ---- podman's leftovers ----
pod_cleanup >/dev/null 2>&1
t_is "no container is left" "$(pod ps -aq 2>&1)" ""
t_is "nothing is left mounted under the scratch directory" "$(mount | grep -F "$T_DIR/")" ""
[ -n "${PC_PODMAN_KEEPLOG:-}" ] && cp hook.log "$PC_PODMAN_KEEPLOG"
t_done
