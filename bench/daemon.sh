#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/daemon.sh -- what the service costs, and what its restore buys.
#
#   1. `pagecache daemon` serving a 100,000-file tree (4 KiB files in 1000
#      directories, all cached): the daemon process's own CPU (utime+stime
#      of /proc/PID/stat) and memory (VmRSS, VmHWM of /proc/PID/status)
#      while idle for 60 s, and across its scheduled snapshots; the
#      snapshot children's CPU (the daemon's cutime+cstime: children it
#      reaped), their wall time (the daemon's log), their RSS as sampled
#      every 50 ms (a lower bound), and the peak RSS of the same snapshot
#      command line run by hand under GNU time (/usr/bin/time -v).
#   2. Growth: the daemon's RSS after each of SNAPS snapshots of a
#      10,000-file part of the tree at interval = 1.
#   3. A database at start: bench warmup's SQLite database (--quick: 1.5
#      million rows), its queries' pages snapshotted with
#      `pagecache snapshot -o WORK/pagecache/db.snap DBDIR`, then RUNS
#      interleaved trials of: cold (the database evicted), restored (evicted,
#      then exactly the ExecStart of pagecache-restore@.service, %S = WORK,
#      %i = db, @bindir@ = the build; timed), and warm; each followed by
#      bench warmup's own query worker (`pagecache bench warmup --worker`:
#      a new process, empty SQLite cache, Q1..Q3 of 1000 ids each, timed).
#      Cold means the database's pages evicted (`pagecache evict DBDIR`),
#      not a global drop_caches: the program and libsqlite stay cached, and
#      other work on the machine keeps its cache.
#
# Needs root (the daemon's configuration must be root's), GNU time, jq.
#
# Options:
#   --json FILE   every figure, with how it was measured, as JSON
#   --keep        keep the work directory's data (tree, database) for a rerun
#   -h, --help    this text
# Environment:
#   BENCH_DIR     work directory (default /var/tmp/pagecache-bench-daemon,
#                 made 0700; root's own, bench/workdir.sh)
#   PAGECACHE     the binary (default build/pagecache of this repo)
#   WARMUP_DIR    where bench warmup keeps its database (default
#                 /var/tmp/pagecache-bench): copied from there when it has
#                 warmup-1500000.db, else built by
#                 `pagecache bench warmup --quick --trials 1` (which drops
#                 the whole page cache a few times)
#   UNIT          pagecache-restore@.service.in to take ExecStart from
#                 (default deploy/systemd/ of this repo, else of
#                 /work/wt/units); PAGECACHE_RESTORE_OPTIONS as systemd's
#   IDLE          seconds of the idle measurement (default 60)
#   SNAPS         snapshots of the growth run (default 30)
#   RUNS          trials of the database conditions (default 5)
#
# Usage: make && bash bench/daemon.sh --json /tmp/daemon.json
set -euo pipefail
export LC_ALL=C

usage() { sed -n '3,/^# Usage/s/^# \{0,1\}//p' "$0"; }
JSON= KEEP=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--json) [[ $# -ge 2 ]] || { echo "daemon.sh: --json needs a FILE" >&2; exit 2; }
		JSON=$2; shift 2 ;;
	--json=*) JSON=${1#--json=}; shift ;;
	--keep) KEEP=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "daemon.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench-daemon}
WARMUP_DIR=${WARMUP_DIR:-/var/tmp/pagecache-bench}
IDLE=${IDLE:-60}
SNAPS=${SNAPS:-30}
RUNS=${RUNS:-5}
ROWS=1500000
if [[ -z ${UNIT:-} ]]; then
	UNIT=$REPO/deploy/systemd/pagecache-restore@.service.in
	[[ -f $UNIT ]] || UNIT=/work/wt/units/deploy/systemd/pagecache-restore@.service.in
fi
PAGECACHE_RESTORE_OPTIONS=${PAGECACHE_RESTORE_OPTIONS:-}

say() { printf '%s\n' "$*"; }
die() { printf 'daemon.sh: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "must run as root (the daemon's configuration is root's, evict and restore read any file)"
[[ -x $PAGECACHE ]] || die "no $PAGECACHE: run 'make' in $REPO first"
[[ -x /usr/bin/time ]] || die "needs GNU time (/usr/bin/time; apt-get install time)"
command -v jq >/dev/null || die "needs jq"
command -v cc >/dev/null || die "needs a C compiler (the tree's generator)"
[[ -f $UNIT ]] || die "no unit file $UNIT (set UNIT=.../pagecache-restore@.service.in)"
BINDIR=$(cd "$(dirname "$PAGECACHE")" && pwd)
PAGECACHE=$BINDIR/$(basename "$PAGECACHE")
TCK=$(getconf CLK_TCK)

. "$HERE/workdir.sh"
WORK=$(workdir "$BENCH_DIR") || die "choose another BENCH_DIR"
TREE=$WORK/tree
DBDIR=$WORK/db
DB=$DBDIR/warmup-$ROWS.db

# ------------------------------------------------------------ cleanup
DPID=
stop_daemon() {   # SIGTERM (its final snapshot), then SIGKILL after 60 s
	[[ -n $DPID ]] || return 0
	if kill -0 "$DPID" 2>/dev/null; then
		kill -TERM "$DPID" 2>/dev/null || true
		for _ in $(seq 600); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$DPID" 2>/dev/null || true
	fi
	wait "$DPID" 2>/dev/null || true
	DPID=
}
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	stop_daemon
	rm -rf "$WORK/run" "$WORK/pagecache"
	[[ $KEEP -eq 1 ]] || rm -rf "$TREE" "$DBDIR" "$WORK/gen"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
rm -rf "$WORK/run" "$WORK/pagecache" "$WORK/logs"
mkdir -m 0700 "$WORK/run" "$WORK/pagecache" "$WORK/logs"
RUN=$WORK/run
LOGS=$WORK/logs

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
say "pagecache daemon benchmark: $(uname -r), $(nproc) CPUs, load average $LOAD_START"
say "  binary $PAGECACHE ($("$PAGECACHE" --version | head -n 1)); work directory $WORK"

# ------------------------------------------------------------ helpers
# stat_cpu PID: utime+stime cutime+cstime (clock ticks), fields 14-17
stat_cpu() {
	local s
	s=$(<"/proc/$1/stat") || return 1
	s=${s##*) }      # after the command name: field 3 onwards
	set -- $s
	echo "$(( ${12} + ${13} )) $(( ${14} + ${15} ))"
}
status_kb() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }
ticks_s() { awk -v t="$1" -v h="$TCK" 'BEGIN { printf "%.2f", t / h }'; }
now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { sort -g | awk 'NR == 1 { a = $1 } { b = $1 } END { print a, b }'; }
# the daemon's children (its snapshot job); empty when none
children() { cat "/proc/$DPID/task/$DPID/children" 2>/dev/null || true; }

start_daemon() {   # start_daemon CONF LOG: started, and ready
	"$PAGECACHE" daemon --config "$1" >/dev/null 2>"$2" </dev/null &
	DPID=$!
	for _ in $(seq 300); do
		grep -q 'ready:' "$2" 2>/dev/null && return 0
		kill -0 "$DPID" 2>/dev/null || { cat "$2" >&2; die "the daemon did not start"; }
		sleep 0.1
	done
	die "the daemon was not ready in 30 s"
}
write_conf() {   # write_conf FILE INTERVAL SNAPSHOT PATHS...
	local f=$1 iv=$2 snap=$3
	shift 3
	printf '[daemon]\nsocket = %s\nmetrics = %s\n\n[service tree]\npaths = %s\nsnapshot = %s\ninterval = %s\nrestore = no\n' \
		"$RUN/pc.sock" "$RUN/pc.prom" "$*" "$snap" "$iv" >"$f"
	chmod 0644 "$f"
}

# ------------------------------------------------------------ the tree
say ""
say "== 1. the daemon on a 100,000-file tree"
if [[ ! -f $WORK/.tree-v1 ]]; then
	say "  making $TREE (100 x 10 x 100 files of 4 KiB)..."
	rm -rf "$TREE"
	cat >"$RUN/gen.c" <<'C'
/* gen ROOT: ROOT/dNNN/sNN/fNNN, 100 x 10 x 100 files of 4096 bytes */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char p[4096], buf[4096];
	if (argc != 2) return 2;
	mkdir(argv[1], 0755);
	for (int d = 0; d < 100; d++) {
		snprintf(p, sizeof p, "%s/d%03d", argv[1], d); mkdir(p, 0755);
		for (int s = 0; s < 10; s++) {
			snprintf(p, sizeof p, "%s/d%03d/s%02d", argv[1], d, s); mkdir(p, 0755);
			for (int f = 0; f < 100; f++) {
				snprintf(p, sizeof p, "%s/d%03d/s%02d/f%03d", argv[1], d, s, f);
				memset(buf, 'a' + (d + s + f) % 26, sizeof buf);
				int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
				if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf) { perror(p); return 1; }
				close(fd);
			}
		}
	}
	return 0;
}
C
	cc -O2 -o "$RUN/gen" "$RUN/gen.c" || die "cannot compile the tree's generator"
	"$RUN/gen" "$TREE" || die "cannot make the tree"
	sync
	echo "100x10x100x4096" >"$WORK/.tree-v1"
fi
"$PAGECACHE" warm -q "$TREE" >/dev/null
say "  tree: 100,000 files of 4 KiB in 1,000 directories, warmed (pagecache warm)"

CONF=$RUN/pc.conf
IV=$((IDLE + 15))
write_conf "$CONF" "$IV" "$RUN/tree.snap" "$TREE"
LOG=$LOGS/daemon-100k.log
start_daemon "$CONF" "$LOG"
T_READY=$(now)
sleep 2
read -r c0 k0 <<<"$(stat_cpu "$DPID")"
t0=$(now)
say "  daemon pid $DPID, interval $IV (its first snapshot comes at $IV s); idle for $IDLE s..."
sleep "$IDLE"
read -r c1 k1 <<<"$(stat_cpu "$DPID")"
t1=$(now)
IDLE_RSS=$(status_kb "$DPID" VmRSS)
IDLE_HWM=$(status_kb "$DPID" VmHWM)
IDLE_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
IDLE_TICKS=$((c1 - c0))
IDLE_PCT=$(awk -v t="$IDLE_TICKS" -v h="$TCK" -v s="$IDLE_SECS" 'BEGIN { printf "%.3f", 100 * t / h / s }')
IDLE_CHILD_TICKS=$((k1 - k0))
LOAD_IDLE=$(cut -d' ' -f1-3 /proc/loadavg)
say "  idle: $IDLE_TICKS ticks ($(ticks_s $IDLE_TICKS) s) of CPU in $IDLE_SECS s = $IDLE_PCT % of one core; VmRSS $IDLE_RSS kB, VmHWM $IDLE_HWM kB (load $LOAD_IDLE)"

# sample_snapshot N: wait for the Nth "snapshot written|kept|failed" line of
# the log, sampling the daemon and its child every 50 ms meanwhile
sample_snapshot() {
	local want=$1 cpid= peak=0 hwm rss
	while :; do
		local n
		n=$(grep -cE '\[service tree\]: (snapshot written|kept the last|snapshot failed)' "$LOG" || true)
		[[ $n -ge $want ]] && break
		kill -0 "$DPID" 2>/dev/null || die "the daemon died: $(tail -n 3 "$LOG")"
		for c in $(children); do
			hwm=$(status_kb "$c" VmHWM 2>/dev/null || true)
			[[ -n $hwm && $hwm -gt $peak ]] && peak=$hwm
			cpid=$c
		done
		sleep 0.05
	done
	SAMPLED_CHILD_HWM=$peak
}

# the scheduled snapshot (at IDLE + 15 s), then one more at SIGTERM; the
# tree warmed again first (other work on the machine may drop the cache)
"$PAGECACHE" warm -q "$TREE" >/dev/null
read -r c0 k0 <<<"$(stat_cpu "$DPID")"
r0=$(status_kb "$DPID" VmRSS)
say "  waiting for the scheduled snapshot..."
sample_snapshot 1
read -r c1 k1 <<<"$(stat_cpu "$DPID")"
SNAP1_RSS=$(status_kb "$DPID" VmRSS)
SNAP1_HWM=$(status_kb "$DPID" VmHWM)
SNAP1_DAEMON_TICKS=$((c1 - c0))
SNAP1_CHILD_TICKS=$((k1 - k0))
SNAP1_CHILD_HWM_SAMPLED=$SAMPLED_CHILD_HWM
SNAP1_LINE=$(grep -E '\[service tree\]: snapshot (written|failed)|kept the last' "$LOG" | head -n 1)
SNAP1_SECS=$(sed -n 's/.* in \([0-9.]*\) s.*/\1/p' <<<"$SNAP1_LINE")
SNAP1_PAGES=$(sed -n 's/.* \([0-9]*\) pages in .*/\1/p' <<<"$SNAP1_LINE")
SNAP1_FILES=$(sed -n 's/.*written: \([0-9]*\) files.*/\1/p' <<<"$SNAP1_LINE")
LOAD_SNAP=$(cut -d' ' -f1-3 /proc/loadavg)
say "  scheduled snapshot: ${SNAP1_FILES:-?} files, ${SNAP1_PAGES:-?} pages in ${SNAP1_SECS:-?} s (daemon's log);"
say "    daemon: $SNAP1_DAEMON_TICKS ticks of its own CPU meanwhile, VmRSS $r0 -> $SNAP1_RSS kB (VmHWM $SNAP1_HWM kB);"
say "    child: $SNAP1_CHILD_TICKS ticks ($(ticks_s $SNAP1_CHILD_TICKS) s) of CPU (daemon's cutime+cstime), VmHWM >= $SNAP1_CHILD_HWM_SAMPLED kB (sampled every 50 ms) (load $LOAD_SNAP)"

# the final snapshot at SIGTERM: its wall time from the log, the whole stop timed
"$PAGECACHE" warm -q "$TREE" >/dev/null
ts=$(now)
kill -TERM "$DPID"
wait "$DPID" || true
DPID=
te=$(now)
STOP_SECS=$(awk -v a="$ts" -v b="$te" 'BEGIN { printf "%.2f", b - a }')
FINAL_LINE=$(grep -E '\[service tree\]: (snapshot written|kept the last|snapshot failed)' "$LOG" | tail -n 1)
FINAL_SECS=$(sed -n 's/.* in \([0-9.]*\) s.*/\1/p' <<<"$FINAL_LINE")
say "  SIGTERM: final snapshot in ${FINAL_SECS:-?} s (log), the daemon gone $STOP_SECS s after the signal"
LOG_LINES_1=$(wc -l <"$LOG")

# the same command line by hand, under GNU time (the daemon's child runs
# `pagecache snapshot --kv -o SNAP --guard 0.5 -- PATHS`)
HAND_WALL=() HAND_RSS=() HAND_CPU=()
for i in 1 2 3; do
	"$PAGECACHE" warm -q "$TREE" >/dev/null
	/usr/bin/time -v -o "$RUN/time.$i" "$PAGECACHE" snapshot --kv -o "$RUN/hand.snap" --guard 0.5 -- "$TREE" >"$RUN/hand.kv" 2>/dev/null || true
	HAND_RSS+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$RUN/time.$i")")
	HAND_WALL+=("$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (k = 1; k <= n; k++) s = s * 60 + a[k]; print s }' "$RUN/time.$i")")
	HAND_CPU+=("$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$RUN/time.$i")")
done
HAND_PAGES=$(tr ' ' '\n' <"$RUN/hand.kv" | sed -n 's/^pages=//p' | tail -n 1)   # the last run's
say "  by hand, 3 runs under /usr/bin/time -v: wall ${HAND_WALL[*]} s, CPU ${HAND_CPU[*]} s, max RSS ${HAND_RSS[*]} kB (${HAND_PAGES:-?} pages)"
# for comparison: the same without the active-page probe (--no-active, which
# bench warmup's snapshot uses and the daemon's does not)
"$PAGECACHE" warm -q "$TREE" >/dev/null
/usr/bin/time -v -o "$RUN/time.na" "$PAGECACHE" snapshot --kv --no-active -o "$RUN/hand.snap" --guard 0.5 -- "$TREE" >"$RUN/na.kv" 2>/dev/null || true
NA_PAGES=$(tr ' ' '\n' <"$RUN/na.kv" | sed -n 's/^pages=//p' | tail -n 1)
NA_WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ { n = split($2, a, ":"); s = 0; for (k = 1; k <= n; k++) s = s * 60 + a[k]; print s }' "$RUN/time.na")
NA_CPU=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$RUN/time.na")
NA_RSS=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$RUN/time.na")
say "  the same with --no-active, once: wall $NA_WALL s, CPU $NA_CPU s, max RSS $NA_RSS kB (${NA_PAGES:-?} pages)"

# steady state at the configured interval of 30 s: how much of a core the
# snapshots take, and whether they keep to the schedule
STEADY=${STEADY:-120}
say ""
say "== 1b. interval = 30 on the 100,000-file tree, for $STEADY s"
"$PAGECACHE" warm -q "$TREE" >/dev/null
write_conf "$CONF" 30 "$RUN/tree30.snap" "$TREE"   # its own: no guard against the last part's
LOG=$LOGS/daemon-interval30.log
start_daemon "$CONF" "$LOG"
read -r c0 k0 <<<"$(stat_cpu "$DPID")"
t0=$(now)
sleep "$STEADY"
read -r c1 k1 <<<"$(stat_cpu "$DPID")"
t1=$(now)
ST_RSS=$(status_kb "$DPID" VmRSS)
ST_HWM=$(status_kb "$DPID" VmHWM)
ST_SECS=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
ST_STARTED=$(grep -c 'snapshot started' "$LOG" || true)
ST_KEPT=$(grep -c 'kept the last' "$LOG" || true)
ST_DONE=$(grep -cE '\[service tree\]: (snapshot written|kept the last|snapshot failed)' "$LOG" || true)
ST_DTICKS=$((c1 - c0)) ST_CTICKS=$((k1 - k0))
ST_CPCT=$(awk -v t="$ST_CTICKS" -v h="$TCK" -v s="$ST_SECS" 'BEGIN { printf "%.1f", 100 * t / h / s }')
ST_DPCT=$(awk -v t="$ST_DTICKS" -v h="$TCK" -v s="$ST_SECS" 'BEGIN { printf "%.3f", 100 * t / h / s }')
ST_DURS=$(sed -n 's/.*\[service tree\]: snapshot written: .* in \([0-9.]*\) s.*/\1/p' "$LOG" | tr '\n' ' ')
ST_PAGES=$(sed -n 's/.*\[service tree\]: snapshot written: .* \([0-9]*\) pages in .*/\1/p' "$LOG" | tr '\n' ' ')
LOAD_ST=$(cut -d' ' -f1-3 /proc/loadavg)
stop_daemon
say "  in $ST_SECS s: $ST_STARTED snapshots started, $ST_DONE finished ($ST_KEPT kept by the guard; written ones' walls: $ST_DURS s, pages: $ST_PAGES); children (reaped) $ST_CTICKS ticks = $ST_CPCT % of one core; daemon $ST_DTICKS ticks = $ST_DPCT %; VmRSS $ST_RSS kB, VmHWM $ST_HWM kB (load $LOAD_ST)"

# ------------------------------------------------------------ growth
say ""
say "== 2. the daemon's RSS across $SNAPS snapshots (10,000 files, interval = 1)"
SMALL=()
for d in 0 1 2 3 4 5 6 7 8 9; do SMALL+=("$TREE/d00$d"); done
write_conf "$CONF" 1 "$RUN/small.snap" "${SMALL[@]}"
LOG=$LOGS/daemon-growth.log
start_daemon "$CONF" "$LOG"
GROWTH_RSS=() GROWTH_HWM=()
read -r g0 gk0 <<<"$(stat_cpu "$DPID")"
GROWTH_RSS0=$(status_kb "$DPID" VmRSS)
for i in $(seq "$SNAPS"); do
	sample_snapshot "$i"
	GROWTH_RSS+=("$(status_kb "$DPID" VmRSS)")
	GROWTH_HWM+=("$(status_kb "$DPID" VmHWM)")
done
read -r g1 gk1 <<<"$(stat_cpu "$DPID")"
GROWTH_FDS=$(ls "/proc/$DPID/fd" | wc -l)
stop_daemon
GROWTH_WRITTEN=$(grep -c 'snapshot written' "$LOG" || true)
GROWTH_KEPT=$(grep -c 'kept the last' "$LOG" || true)
GROWTH_LOG_LINES=$(wc -l <"$LOG")
GROWTH_CHILD_LINES=$(grep -vc 'pagecache daemon:' "$LOG" || true)
GROWTH_PAGES=$(sed -n 's/.*\[service tree\]: snapshot written: .* \([0-9]*\) pages in .*/\1/p' "$LOG" | tr '\n' ' ')
say "  VmRSS (kB) at start $GROWTH_RSS0, after each snapshot: ${GROWTH_RSS[*]}"
say "  VmHWM after the last: ${GROWTH_HWM[-1]} kB; daemon CPU $((g1 - g0)) ticks, children $((gk1 - gk0)) ticks; open fds at the end $GROWTH_FDS"
say "  $GROWTH_WRITTEN written (pages: $GROWTH_PAGES), $GROWTH_KEPT kept by the guard; $GROWTH_LOG_LINES log lines for $SNAPS snapshots, $GROWTH_CHILD_LINES of them the children's standard error"
say "  logs: $LOGS"

# ------------------------------------------------------------ the database
say ""
say "== 3. a database at start: restore through pagecache-restore@.service's command line"
mkdir -p -m 0700 "$DBDIR"
if [[ ! -f $DB || ! -f $DB.ids ]]; then
	if [[ -f $WARMUP_DIR/warmup-$ROWS.db && -f $WARMUP_DIR/warmup-$ROWS.db.ids ]]; then
		say "  copying bench warmup's database from $WARMUP_DIR"
		cp "$WARMUP_DIR/warmup-$ROWS.db" "$DB.tmp" && mv "$DB.tmp" "$DB"
		cp "$WARMUP_DIR/warmup-$ROWS.db.ids" "$DB.ids"
	else
		say "  building it with pagecache bench warmup --quick --trials 1 --dir $DBDIR (drops the page cache)"
		"$PAGECACHE" bench warmup --quick --trials 1 --dir "$DBDIR" >/dev/null
	fi
fi
DB_BYTES=$(stat -c %s "$DB")
worker() { "$PAGECACHE" bench warmup --worker "$DB" >"$RUN/worker.out" && head -n 1 "$RUN/worker.out"; }
cached_pages() { "$PAGECACHE" stat --json "$DBDIR" | jq '.total.cached'; }
evict() { "$PAGECACHE" evict "$DBDIR" >/dev/null; }

# the snapshot: what the queries leave cached, from a cold start
evict
worker >/dev/null
"$PAGECACHE" snapshot -o "$WORK/pagecache/db.snap" "$DBDIR" --kv >"$RUN/dbsnap.kv"
SNAP_DB_PAGES=$(tr ' ' '\n' <"$RUN/dbsnap.kv" | sed -n 's/^pages=//p')
# the unit's ExecStart, as systemd would run it
EXEC=$(sed -n 's/^ExecStart=//p' "$UNIT")
CMDLINE=${EXEC//@bindir@/$BINDIR}
CMDLINE=${CMDLINE//%S/$WORK}
CMDLINE=${CMDLINE//%i/db}
CMDLINE=${CMDLINE//\$PAGECACHE_RESTORE_OPTIONS/$PAGECACHE_RESTORE_OPTIONS}
set -f
read -r -a RESTORE_ARGV <<<"$CMDLINE"
set +f
say "  database $DB ($DB_BYTES bytes); snapshot of $SNAP_DB_PAGES pages (what one run of the queries from cold left cached)"
say "  unit: $UNIT"
say "  ExecStart: $EXEC"
say "  run as:    ${RESTORE_ARGV[*]}"

declare -A Q1 Q2 Q3 CACHED_BEFORE
RESTORE_MS=() RESTORE_RC=() RESTORED_PAGES=()
run_cond() {
	local c=$1 t=$2 out a b rc
	case $c in
	cold) evict ;;
	restored)
		evict
		a=$(now)
		rc=0
		"${RESTORE_ARGV[@]}" >/dev/null 2>"$RUN/restore.err" || rc=$?
		b=$(now)
		RESTORE_MS+=("$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.1f", (b - a) * 1000 }')")
		RESTORE_RC+=("$rc")
		RESTORED_PAGES+=("$(cached_pages)")
		;;
	warm) ;;
	esac
	CACHED_BEFORE[$c]="${CACHED_BEFORE[$c]:-} $(cached_pages)"
	out=$(worker) || die "the query worker failed"
	read -r q1 q2 q3 <<<"$out"
	Q1[$c]="${Q1[$c]:-} $q1" Q2[$c]="${Q2[$c]:-} $q2" Q3[$c]="${Q3[$c]:-} $q3"
}
LOAD_DB0=$(cut -d' ' -f1-3 /proc/loadavg)
for t in $(seq "$RUNS"); do
	if (( t % 2 )); then order="cold restored warm"; else order="restored cold warm"; fi
	for c in $order; do run_cond "$c" "$t"; done
done
LOAD_DB1=$(cut -d' ' -f1-3 /proc/loadavg)
for c in cold restored warm; do
	m=$(tr ' ' '\n' <<<"${Q1[$c]}" | grep . | median)
	r=$(tr ' ' '\n' <<<"${Q1[$c]}" | grep . | minmax)
	say "  Q1 $c: median $m ms (range $r) over $RUNS runs; Q2 median $(tr ' ' '\n' <<<"${Q2[$c]}" | grep . | median) ms, Q3 $(tr ' ' '\n' <<<"${Q3[$c]}" | grep . | median) ms; database pages cached before each:${CACHED_BEFORE[$c]}"
done
RM=$(printf '%s\n' "${RESTORE_MS[@]}" | median)
say "  restore (the unit's command line): median $RM ms (range $(printf '%s\n' "${RESTORE_MS[@]}" | minmax)), exit ${RESTORE_RC[*]}, pages cached after it: ${RESTORED_PAGES[*]}"
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)
say ""
say "load average: start $LOAD_START, idle $LOAD_IDLE, snapshot $LOAD_SNAP, database $LOAD_DB0 -> $LOAD_DB1, end $LOAD_END"

# ------------------------------------------------------------ JSON
if [[ -n $JSON ]]; then
	arr() { printf '%s\n' "$@" | grep . | jq -R 'tonumber' | jq -s .; }
	qarr() { tr ' ' '\n' <<<"$1" | grep . | jq -R 'tonumber' | jq -s .; }
	jq -n \
	--arg kernel "$(uname -r)" --arg cpus "$(nproc)" --arg version "$("$PAGECACHE" --version | head -n 1)" \
	--arg date "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --arg tck "$TCK" \
	--arg load_start "$LOAD_START" --arg load_idle "$LOAD_IDLE" --arg load_snap "$LOAD_SNAP" \
	--arg load_db "$LOAD_DB0 -> $LOAD_DB1" --arg load_end "$LOAD_END" \
	--arg idle_secs "$IDLE_SECS" --arg idle_ticks "$IDLE_TICKS" --arg idle_pct "$IDLE_PCT" \
	--arg idle_child "$IDLE_CHILD_TICKS" --arg idle_rss "$IDLE_RSS" --arg idle_hwm "$IDLE_HWM" \
	--arg s_files "${SNAP1_FILES:-null}" --arg s_pages "${SNAP1_PAGES:-null}" --arg s_secs "${SNAP1_SECS:-null}" \
	--arg s_dticks "$SNAP1_DAEMON_TICKS" --arg s_cticks "$SNAP1_CHILD_TICKS" --arg s_rss0 "$r0" \
	--arg s_rss "$SNAP1_RSS" --arg s_hwm "$SNAP1_HWM" --arg s_chwm "$SNAP1_CHILD_HWM_SAMPLED" \
	--arg f_secs "${FINAL_SECS:-null}" --arg stop_secs "$STOP_SECS" --arg loglines "$LOG_LINES_1" \
	--argjson hand_wall "$(arr "${HAND_WALL[@]}")" --argjson hand_cpu "$(arr "${HAND_CPU[@]}")" \
	--argjson hand_rss "$(arr "${HAND_RSS[@]}")" --arg hand_pages "${HAND_PAGES:-null}" \
	--arg na_wall "$NA_WALL" --arg na_cpu "$NA_CPU" --arg na_rss "$NA_RSS" --arg na_pages "${NA_PAGES:-null}" \
	--arg st_secs "$ST_SECS" --arg st_started "$ST_STARTED" --arg st_done "$ST_DONE" --arg st_kept "$ST_KEPT" --arg st_dt "$ST_DTICKS" --arg st_ct "$ST_CTICKS" \
	--arg st_cpct "$ST_CPCT" --arg st_dpct "$ST_DPCT" --argjson st_durs "$(arr $ST_DURS)" --argjson st_pages "$(arr $ST_PAGES)" --argjson g_pages "$(arr $GROWTH_PAGES)" --arg g_cl "$GROWTH_CHILD_LINES" --arg st_rss "$ST_RSS" --arg st_hwm "$ST_HWM" --arg load_st "$LOAD_ST" \
	--argjson cbc "$(qarr "${CACHED_BEFORE[cold]}")" --argjson cbr "$(qarr "${CACHED_BEFORE[restored]}")" --argjson cbw "$(qarr "${CACHED_BEFORE[warm]}")" \
	--arg snaps "$SNAPS" --arg g_rss0 "$GROWTH_RSS0" --argjson g_rss "$(arr "${GROWTH_RSS[@]}")" \
	--argjson g_hwm "$(arr "${GROWTH_HWM[@]}")" --arg g_dt "$((g1 - g0))" --arg g_ct "$((gk1 - gk0))" \
	--arg g_fds "$GROWTH_FDS" --arg g_w "$GROWTH_WRITTEN" --arg g_k "$GROWTH_KEPT" --arg g_ll "$GROWTH_LOG_LINES" \
	--arg db "$DB" --arg db_bytes "$DB_BYTES" --arg snap_pages "$SNAP_DB_PAGES" \
	--arg unit "$UNIT" --arg exec "$EXEC" --arg cmdline "${RESTORE_ARGV[*]}" --arg runs "$RUNS" \
	--argjson rms "$(arr "${RESTORE_MS[@]}")" --argjson rrc "$(arr "${RESTORE_RC[@]}")" \
	--argjson rpages "$(arr "${RESTORED_PAGES[@]}")" \
	--argjson q1c "$(qarr "${Q1[cold]}")" --argjson q1r "$(qarr "${Q1[restored]}")" --argjson q1w "$(qarr "${Q1[warm]}")" \
	--argjson q2c "$(qarr "${Q2[cold]}")" --argjson q2r "$(qarr "${Q2[restored]}")" --argjson q2w "$(qarr "${Q2[warm]}")" \
	--argjson q3c "$(qarr "${Q3[cold]}")" --argjson q3r "$(qarr "${Q3[restored]}")" --argjson q3w "$(qarr "${Q3[warm]}")" \
	'def n: if . == "null" or . == "" then null else tonumber end;
	 def stats: (sort) as $s | { runs: ., median: (if ($s|length) % 2 == 1 then $s[($s|length - 1) / 2] else ($s[($s|length) / 2 - 1] + $s[($s|length) / 2]) / 2 end), min: $s[0], max: $s[-1] };
	{
	  bench: "daemon", script: "bench/daemon.sh", date: $date, kernel: $kernel, cpus: ($cpus|n), version: $version,
	  clock_ticks_per_second: ($tck|n),
	  load_average: { start: $load_start, idle: $load_idle, snapshot: $load_snap, database: $load_db, end: $load_end,
	    how: "/proc/loadavg (1, 5, 15 min) when each part was measured; other work ran on the machine" },
	  tree: { files: 100000, directories: 1000, file_bytes: 4096, how: "100 x 10 x 100 files written by a generator, then pagecache warm" },
	  idle: { seconds: ($idle_secs|n), daemon_cpu_ticks: ($idle_ticks|n), daemon_cpu_percent_of_one_core: ($idle_pct|n),
	    children_cpu_ticks: ($idle_child|n), vmrss_kb: ($idle_rss|n), vmhwm_kb: ($idle_hwm|n),
	    how: "daemon serving the 100,000-file tree (interval = idle seconds + 15, restore no, no status client), from 2 s after ready: utime+stime of /proc/PID/stat over the window; VmRSS and VmHWM of /proc/PID/status at its end" },
	  snapshot_100k: { files: ($s_files|n), pages: ($s_pages|n), wall_seconds: ($s_secs|n),
	    daemon_cpu_ticks: ($s_dticks|n), daemon_vmrss_kb_before: ($s_rss0|n), daemon_vmrss_kb_after: ($s_rss|n), daemon_vmhwm_kb_after: ($s_hwm|n),
	    child_cpu_ticks: ($s_cticks|n), child_vmhwm_kb_sampled: ($s_chwm|n),
	    final_snapshot_at_sigterm_seconds: ($f_secs|n), sigterm_to_exit_seconds: ($stop_secs|n), daemon_log_lines: ($loglines|n),
	    how: "the first scheduled snapshot: wall time, files and pages from the daemon log line; daemon CPU = its utime+stime from the end of the idle window to the log line; child CPU = the daemon cutime+cstime over the same span (children it reaped); child VmHWM = the largest /proc/CHILD/status VmHWM seen polling every 50 ms (a lower bound); final = the snapshot the daemon takes at SIGTERM (log), and the time from kill -TERM to its exit" },
	  snapshot_100k_by_hand: { wall_seconds: $hand_wall, cpu_seconds: $hand_cpu, max_rss_kb: $hand_rss, pages: ($hand_pages|n),
	    how: "the daemon child command line, pagecache snapshot --kv -o FILE --guard 0.5 -- TREE, run 3 times under /usr/bin/time -v (Elapsed, User+System time, Maximum resident set size)" },
	  snapshot_100k_no_active_by_hand: { wall_seconds: ($na_wall|n), cpu_seconds: ($na_cpu|n), max_rss_kb: ($na_rss|n), pages: ($na_pages|n),
	    how: "the same command line with --no-active (no active-page probe), once, under /usr/bin/time -v" },
	  interval_30: { seconds: ($st_secs|n), snapshots_started: ($st_started|n), snapshots_finished: ($st_done|n), snapshots_kept: ($st_kept|n), snapshot_walls_seconds: $st_durs, snapshot_pages: $st_pages,
	    children_cpu_ticks: ($st_ct|n), children_cpu_percent_of_one_core: ($st_cpct|n), daemon_cpu_ticks: ($st_dt|n), daemon_cpu_percent_of_one_core: ($st_dpct|n),
	    vmrss_kb: ($st_rss|n), vmhwm_kb: ($st_hwm|n), load_average: $load_st,
	    how: "a daemon on the 100,000-file tree with interval 30 (the tree warmed first, but other work on the machine may reclaim it: see snapshot_pages), from ready for the window: counts and figures of log lines, daemon utime+stime and cutime+cstime (children it reaped) of /proc/PID/stat" },
	  growth: { snapshots: ($snaps|n), files: 10000, vmrss_kb_at_start: ($g_rss0|n), vmrss_kb_after_each: $g_rss, vmhwm_kb_after_each: $g_hwm,
	    daemon_cpu_ticks: ($g_dt|n), children_cpu_ticks: ($g_ct|n), open_fds_at_end: ($g_fds|n), written: ($g_w|n), written_pages: $g_pages, kept: ($g_k|n), log_lines: ($g_ll|n), log_lines_from_children: ($g_cl|n),
	    how: "a second daemon on 10 of the 100 top directories (10,000 files, as cached as other work on the machine left them), interval 1: VmRSS and VmHWM of /proc/PID/status read right after each snapshot log line (written or kept by the guard)" },
	  database: { path: $db, bytes: ($db_bytes|n), rows: 1500000, snapshot_pages: ($snap_pages|n), runs: ($runs|n),
	    unit: $unit, exec_start: $exec, command_line: $cmdline,
	    restore_ms: ($rms|stats), database_pages_cached_before_query: { cold: $cbc, restored: $cbr, warm: $cbw }, restore_exit: $rrc, cached_pages_after_restore: $rpages,
	    q1_ms: { cold: ($q1c|stats), restored: ($q1r|stats), warm: ($q1w|stats) },
	    q2_ms: { cold: ($q2c|stats), restored: ($q2r|stats), warm: ($q2w|stats) },
	    q3_ms: { cold: ($q3c|stats), restored: ($q3r|stats), warm: ($q3w|stats) },
	    how: "bench warmup --quick database (copied from its work directory, or built by it); snapshot = pagecache snapshot -o WORK/pagecache/db.snap DBDIR after pagecache evict DBDIR and one run of the queries; each run: cold = pagecache evict DBDIR (the database only; program and libraries stay cached), restored = evict then the unit ExecStart with %S = WORK, %i = db, @bindir@ = the build, wall time from before its exec to its exit, warm = nothing; then pagecache bench warmup --worker DB (a new process, SQLite cache empty, 1000 ids a query, its own timer); conditions alternate in order, warm last" }
	}' >"$JSON"
	say "JSON: $JSON"
fi
