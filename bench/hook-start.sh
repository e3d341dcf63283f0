#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/hook-start.sh -- what `pagecache hook` buys and costs a podman
# container's start (issue 25, part 5): rootful podman (runc, cgroupfs,
# --network none) with its storage in the work directory, an image made
# with `podman import` from the host's sqlite3 and its libraries and a
# database of DB_MB MB of 900-byte rows made by sqlite3, whose query reads
# every page of it.
#
#   Start to first query: the wall time from `podman run` until the
#   query's answer reaches podman's stdout (the container's start, the
#   hook's createRuntime where there is one, sqlite3's start and the query;
#   not the teardown after it), and the query's own time (sqlite3 .timer).
#     cold      caches dropped (sync; drop_caches 3: podman, runc and the
#               libraries are read again too), no hook (its hooks dir empty)
#     restored  caches dropped, the hook restores the snapshot a warm
#               container's poststop took at the start of the run
#               (io.pagecache.save elsewhere, so every trial restores
#               the same one)
#     warm      everything cached, no hook
#   The hook with no snapshot: the annotation names a snapshot that is not
#   there (createRuntime logs "no snapshot yet"), against no hook at all;
#   caches warm, the container runs `sh -c 'echo up'`: the time to "up";
#   OVERHEAD_TRIALS pairs (a few ms among a start's 150-200 need more).
#   And that hook run by itself: `pagecache hook createRuntime` given a
#   state on stdin as runc gives it (a bundle whose root is the image's
#   root, the pid of a process of ours), HOOK_RUNS times.
#   Conditions interleave within each trial, their order rotating by one
#   every trial. Per condition: every sample, the median; ratios of
#   medians; the load average before and after (the machine may be shared).
#
# Needs root (drop_caches, podman), podman, runc, sqlite3, jq. Drops the
# whole page cache 2 x TRIALS times: run it alone (flock -o
# /tmp/pc-test.lock, as the tests are).
#
# Options:
#   -o FILE       the report (default stdout)
#   --keep        keep the work directory (the image) for a rerun
#   -h, --help    this text
# Environment:
#   TRIALS        trials of each condition (default 5)
#   OVERHEAD_TRIALS  pairs of the hook with no snapshot and none (default 20)
#   HOOK_RUNS     runs of the hook by itself (default 20)
#   DB_MB         the database's size (default 20)
#   BENCH_DIR     work directory (default /var/tmp/pagecache-bench-hook,
#                 made 0700; root's own, bench/workdir.sh)
#   PAGECACHE     the binary (default build/pagecache of this repo)
#
# Usage: make && flock -o /tmp/pc-test.lock bash bench/hook-start.sh -o hook-start.txt
set -euo pipefail
export LC_ALL=C

usage() { sed -n '3,/^# Usage/s/^# \{0,1\}//p' "$0"; }
OUT= KEEP=0
while [[ $# -gt 0 ]]; do
	case $1 in
	-o) [[ $# -ge 2 ]] || { echo "hook-start.sh: -o needs a FILE" >&2; exit 2; }
		OUT=$2; shift 2 ;;
	--keep) KEEP=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "hook-start.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench-hook}
TRIALS=${TRIALS:-5}
HOOK_RUNS=${HOOK_RUNS:-20}
OVERHEAD_TRIALS=${OVERHEAD_TRIALS:-20}
DB_MB=${DB_MB:-20}

die() { printf 'hook-start.sh: %s\n' "$*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || die "must run as root (drop_caches, rootful podman)"
[[ -x $PAGECACHE ]] || die "no $PAGECACHE: run 'make' in $REPO first"
for c in podman runc sqlite3 jq ldd tar; do
	command -v "$c" >/dev/null || die "needs $c"
done
[[ $TRIALS =~ ^[1-9][0-9]*$ && $HOOK_RUNS =~ ^[1-9][0-9]*$ && $DB_MB =~ ^[1-9][0-9]*$ &&
   $OVERHEAD_TRIALS =~ ^[1-9][0-9]*$ ]] || die "TRIALS, OVERHEAD_TRIALS, HOOK_RUNS and DB_MB are counts"
PAGECACHE=$(readlink -f "$PAGECACHE")
"$PAGECACHE" hook --help >/dev/null 2>&1 || die "$PAGECACHE has no 'hook' command"

. "$HERE/workdir.sh"
WORK=$(workdir "$BENCH_DIR") || die "choose another BENCH_DIR"
exec 9>"$WORK/.lock"
flock -n 9 || die "another run is using $WORK (wait for it, or set BENCH_DIR)"

P=(podman --root "$WORK/storage" --runroot "$WORK/run" --tmpdir "$WORK/tmp"
	--network-config-dir "$WORK/net" --volumepath "$WORK/storage/volumes"
	--events-backend none --cgroup-manager cgroupfs --storage-driver overlay --runtime runc)
RUN=(--rm --network none --ulimit nofile=20000:20000 --ulimit nproc=32768:32768)
IMG=localhost/pagecache-bench-hook:1
HOOKS=$WORK/hooks.d
NOHOOKS=$WORK/nohooks.d
SNAPS=$WORK/snaps
# (.timer from stdin: sqlite3 times no SQL given as an argument)
QUERY=(/bin/sh -c 'printf ".timer on\nselect count(*), sum(length(v)) from t;\n" | /bin/sqlite3 -readonly /data/db.sqlite')

cleanup() {
	local rc=$? m
	"${P[@]}" rm -af -t 0 >/dev/null 2>&1 || true
	[[ $KEEP -eq 1 ]] || "${P[@]}" rmi -af >/dev/null 2>&1 || true
	awk -v d="$WORK/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
		while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
	[[ $KEEP -eq 1 ]] || rm -rf "$WORK"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ the image
mkdir -p "$HOOKS" "$NOHOOKS"
mkdir -p -m 700 "$SNAPS"
if ! "${P[@]}" image exists "$IMG" 2>/dev/null; then
	rm -rf "$WORK/rootfs"
	mkdir -p "$WORK/rootfs/bin" "$WORK/rootfs/data" "$WORK/rootfs/etc"
	for b in "$(type -P sqlite3)" /bin/sh "$(type -P sleep)" "$(type -P true)"; do
		cp -L "$b" "$WORK/rootfs/bin/"
		for l in $(ldd "$b" | grep -oE '/[^ ]+'); do
			mkdir -p "$WORK/rootfs${l%/*}"
			cp -L "$l" "$WORK/rootfs$l"
		done
	done
	rows=$((DB_MB * 1000 * 1000 / 1000))
	sqlite3 "$WORK/rootfs/data/db.sqlite" "pragma page_size=4096;
		create table t(id integer primary key, v blob);
		with recursive c(i) as (select 1 union all select i + 1 from c where i < $rows)
		insert into t select i, randomblob(900) from c;"
	tar -C "$WORK/rootfs" -cf "$WORK/rootfs.tar" .
	"${P[@]}" import "$WORK/rootfs.tar" "$IMG" >/dev/null 2>&1 || die "podman import failed"
	rm -rf "$WORK/rootfs" "$WORK/rootfs.tar"
fi
ROWS=$("${P[@]}" --hooks-dir "$NOHOOKS" run "${RUN[@]}" "$IMG" /bin/sqlite3 -readonly /data/db.sqlite "select count(*) from t")
LAYER_DB=$(find "$WORK/storage/overlay" -path '*/diff/data/db.sqlite' | head -1)
DB_BYTES=$(stat -c %s "$LAYER_DB")

rm -f "$SNAPS"/* "$WORK/hook.log"
cat >"$HOOKS/pagecache.json" <<EOF
{
	"version": "1.0.0",
	"hook": {
		"path": "$PAGECACHE",
		"args": ["pagecache", "hook", "--dir", "$SNAPS", "--log", "$WORK/hook.log"],
		"timeout": 90
	},
	"when": { "annotations": { "^io\\\\.pagecache\\\\.snapshot\$": ".+" } },
	"stages": ["createRuntime", "poststop"]
}
EOF

# ------------------------------------------------------------ measuring
now_us() { local t=${EPOCHREALTIME/./}; echo "$((10#$t))"; }
cold() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# timed HOOKSDIR ARGS...: podman run; prints "START_MS QUERY_MS": the
# milliseconds from the run to its first line of output, and sqlite3's own
# "Run Time: real" (or - where the command has no timer)
timed() {
	local hd=$1 t0 first= q=- line
	shift
	t0=$(now_us)
	while IFS= read -r line; do
		[[ -n $first ]] || first=$(now_us)
		[[ $line =~ ^Run\ Time:\ real\ ([0-9.]+) ]] && q=${BASH_REMATCH[1]}
	done < <("${P[@]}" --hooks-dir "$hd" run "${RUN[@]}" "$@" 2>>"$WORK/podman.err")
	[[ -n $first ]] || die "podman run $* gave no output (see $WORK/podman.err)"
	[[ $q = - ]] || q=$(awk -v s="$q" 'BEGIN { printf "%.1f", s * 1000 }')
	awk -v a="$t0" -v b="$first" -v q="$q" 'BEGIN { printf "%.1f %s\n", (b - a) / 1000, q }'
}
declare -A S Q
add() { S[$1]+="${S[$1]:+ }$2"; Q[$1]+="${Q[$1]:+ }$3"; }
median() { tr ' ' '\n' | grep -v '^-$' | sort -g | awk '{ v[NR] = $1 } END {
	if (!NR) { print "-"; exit } print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# the snapshot the restored trials restore: a warm container's poststop
"${P[@]}" --hooks-dir "$HOOKS" run "${RUN[@]}" --annotation io.pagecache.snapshot=db "$IMG" \
	"${QUERY[@]}" >/dev/null 2>>"$WORK/podman.err"
[[ -s $SNAPS/db ]] || die "the hook's poststop wrote no snapshot (see $WORK/hook.log)"
SNAP_SUMMARY=$("$PAGECACHE" show "$SNAPS/db" | tail -1)

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
START=$(date -u '+%Y-%m-%d %H:%M:%S')
conds=(cold restored warm)
for ((t = 0; t < TRIALS; t++)); do
	for ((k = 0; k < ${#conds[@]}; k++)); do
		c=${conds[(k + t) % ${#conds[@]}]}
		case $c in
		cold) cold; r=$(timed "$NOHOOKS" "$IMG" "${QUERY[@]}") ;;
		restored) cold; r=$(timed "$HOOKS" --annotation io.pagecache.snapshot=db \
				--annotation io.pagecache.save=db-after "$IMG" "${QUERY[@]}") ;;
		warm) "${P[@]}" --hooks-dir "$NOHOOKS" run "${RUN[@]}" "$IMG" "${QUERY[@]}" >/dev/null 2>&1
			r=$(timed "$NOHOOKS" "$IMG" "${QUERY[@]}") ;;
		esac
		add "$c" ${r% *} ${r#* }
	done
done
# the hook with no snapshot against none, in pairs whose order alternates
for ((t = 0; t < OVERHEAD_TRIALS; t++)); do
	for c in $( ((t % 2)) && echo "hookmissing nohook" || echo "nohook hookmissing"); do
		case $c in
		nohook) r=$(timed "$NOHOOKS" "$IMG" /bin/sh -c 'echo up') ;;
		hookmissing) rm -f "$SNAPS/missing"
			r=$(timed "$HOOKS" --annotation io.pagecache.snapshot=missing \
				--annotation io.pagecache.save=missing-after "$IMG" /bin/sh -c 'echo up') ;;
		esac
		add "$c" ${r% *} ${r#* }
	done
done

# the hook by itself, as runc runs it: a state on stdin, the bundle's
# config.json naming a root (the image's, mounted), a pid of ours
MNT=$("${P[@]}" image mount "$IMG")
mkdir -p "$WORK/bundle"
printf '{"ociVersion":"1.0.2","root":{"path":"%s"}}\n' "$MNT" >"$WORK/bundle/config.json"
sleep 600 &
SPID=$!
state=$(printf '{"ociVersion":"1.0.2","id":"benchhook0000","status":"creating","pid":%d,"bundle":"%s","annotations":{"io.pagecache.snapshot":"missing"}}' \
	"$SPID" "$WORK/bundle")
HOOK_MS=()
for ((i = 0; i < HOOK_RUNS; i++)); do
	t0=$(now_us)
	env -i "$PAGECACHE" hook -q --dir "$SNAPS" --log "$WORK/hook-alone.log" createRuntime <<<"$state" ||
		die "the hook by itself failed (see $WORK/hook-alone.log)"
	t1=$(now_us)
	HOOK_MS+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')")
done
kill "$SPID"; wait "$SPID" 2>/dev/null || true
"${P[@]}" image unmount "$IMG" >/dev/null
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

# ------------------------------------------------------------ the report
m() { median <<<"${S[$1]}"; }
mq() { median <<<"${Q[$1]}"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }
diffms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f", a - b }'; }
hook_alone=$(printf '%s ' "${HOOK_MS[@]}" | sed 's/ $//' | median)
report() {
	echo "# bench/hook-start.sh: podman start to first query, with and without pagecache hook"
	echo "# $START UTC; $(uname -r); $(nproc) CPUs; $(podman --version) with runc $(runc --version | awk 'NR == 1 { print $3 }')"
	echo "# pagecache $("$PAGECACHE" --version 2>/dev/null | head -1)"
	echo "# database: $ROWS rows, $DB_BYTES bytes; snapshot: $SNAP_SUMMARY"
	echo "# trials: $TRIALS of each start, interleaved; load average $LOAD_START at the start, $LOAD_END at the end"
	echo
	echo "Start to first query (ms; query = sqlite3's own Run Time)"
	printf '%-10s %9s %9s   %s\n' condition start query "samples (start/query)"
	for c in cold restored warm; do
		read -ra a <<<"${S[$c]}"
		read -ra b <<<"${Q[$c]}"
		s=
		for ((i = 0; i < ${#a[@]}; i++)); do s+="${a[i]}/${b[i]} "; done
		printf '%-10s %9s %9s   %s\n' "$c" "$(m "$c")" "$(mq "$c")" "$s"
	done
	echo
	echo "restored / cold: start $(ratio "$(m restored)" "$(m cold)"), query $(ratio "$(mq restored)" "$(mq cold)")"
	echo "restored / warm: start $(ratio "$(m restored)" "$(m warm)"), query $(ratio "$(mq restored)" "$(mq warm)")"
	echo "cold / warm:     start $(ratio "$(m cold)" "$(m warm)"), query $(ratio "$(mq cold)" "$(mq warm)")"
	echo
	echo "The hook with no snapshot ($OVERHEAD_TRIALS pairs, caches warm; ms from podman run to the container's first line)"
	printf '%-12s %9s   %s\n' condition median samples
	printf '%-12s %9s   %s\n' "no hook" "$(m nohook)" "${S[nohook]}"
	printf '%-12s %9s   %s\n' "hook, none" "$(m hookmissing)" "${S[hookmissing]}"
	echo "added by the hook: $(diffms "$(m hookmissing)" "$(m nohook)") ms (ratio $(ratio "$(m hookmissing)" "$(m nohook)")); the median of the pairs' differences: $(paste -d' ' <(tr ' ' '\n' <<<"${S[hookmissing]}") <(tr ' ' '\n' <<<"${S[nohook]}") | awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $1 - $2 }' | median) ms"
	echo "the hook by itself (createRuntime, snapshot missing, $HOOK_RUNS runs): median $hook_alone ms"
	echo "  samples: ${HOOK_MS[*]}"
	echo
	echo "hook log of the restored trials:"
	grep -F "restored 'db'" "$WORK/hook.log" | sed 's/^/  /' || true
}
if [[ -n $OUT ]]; then report >"$OUT"; else report; fi
