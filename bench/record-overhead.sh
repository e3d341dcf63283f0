#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/record-overhead.sh -- what `pagecache record` and `pagecache top`
# cost a read-heavy workload that runs beside them (issue 13's target: under
# 5% slowdown), measured side by side.
#
#   Workloads, everything they read already cached:
#     sqlite  bench warmup's SQLite database (--quick: 1.5 million rows), the
#             query worker of `pagecache bench warmup --worker DB` run
#             QLOOPS times in a row: each a new process with an empty SQLite
#             cache, Q1..Q3 of 1000 ids each (about 3000 page reads by
#             pread(2), each a filemap:mm_filemap_get_pages event). The
#             figure is the sum of the workers' own query times (their
#             timer); the loop's wall time is kept too.
#     cat     `find TREE -type f -print0 | xargs -0 cat >/dev/null` over a
#             tree of FILES files of 4 KiB (in directories of 100), warmed
#             by `pagecache warm` before each round: its wall time.
#   Conditions, alternated in every round (the order rotates by one each
#   round, so that none always runs first after a pause):
#     none    nothing else of ours running;
#     record  `pagecache record -o FILE` system-wide (no CMD, --pid or
#             --cgroup: every process on the machine, this one's test
#             suites included), started 1 s before the workloads and
#             stopped by SIGINT after them (it then writes FILE: not timed);
#             its events and lost events (its --json total) are kept;
#     record-cgroup  `pagecache record --cgroup DIR` of an idle service: a
#             cgroup of its own (made for the run in the hierarchy
#             perf_event is on, removed at the end) holding one sleeping
#             process, while the workloads run elsewhere: what a recording
#             scoped to another service costs them;
#     record-pid  `pagecache record --pid PID` of that sleeping process;
#     baseline  where BASELINE names another pagecache binary (the one
#             before a change): its system-wide record, as record above,
#             interleaved with the others (a copy of it is run);
#     top     `pagecache top --json --interval 1` (output to a file),
#             started 1 s before, stopped by SIGINT after.
#   Each sample is timed: its wall time (bash's EPOCHREALTIME, in
#   microseconds), and the CPU time (/usr/bin/time: user + system, in 10 ms
#   steps) of every process of the workload, where the tracepoints'
#   own cost lands (an event is written into the ring by the task that hit
#   it); the tracer's reading of the rings is its own CPU, which slows the
#   workload's wall time only when the CPUs are busy.
#   Per workload and condition: every sample, the median, the ratio of the
#   median to none's, and the median of the per-round ratios (a round's
#   sample over the same round's none: steadier when other work comes and
#   goes); the tracer's own CPU time (utime+stime of /proc/PID/stat, read
#   just before the stop) per round; record's lost events (its --json
#   output). The load average is kept at the start, per round and at the
#   end: the machine may be shared, and a ratio under load says less.
#   A condition whose command this pagecache lacks, or which fails to
#   start (not root, events missing), is skipped and named in the output.
#
# Needs root (record reads kernel events), jq, GNU time, a C compiler (the tree's
# generator), and bench warmup's database (built once if missing).
#
# Options:
#   --quick       3 rounds (default ROUNDS=7), 10 worker runs a sample
#                 (default QLOOPS=20), the tree as it is
#   --json FILE   every sample and figure, with how it was measured, as JSON
#   --keep        keep the tree for a rerun (the database is kept anyway:
#                 bench warmup's own)
#   -h, --help    this text
# Environment:
#   BENCH_DIR     work directory (default /var/tmp/pagecache-bench-overhead,
#                 made 0700; root's own, bench/workdir.sh)
#   PAGECACHE     the binary (default build/pagecache of this repo)
#   WARMUP_DIR    where bench warmup keeps its database (default
#                 /var/tmp/pagecache-bench); built there by
#                 `pagecache bench warmup --rows ROWS --trials 1` when missing
#                 (which drops the whole page cache a few times)
#   WARMUP_ROWS   the database's rows (default 1500000, --quick's)
#   ROUNDS        rounds (each: every condition once)
#   QLOOPS        worker runs in one sqlite sample
#   FILES         files in the tree (default 20000; a multiple of 100)
#   INTERVAL      top's --interval (default 1)
#
#   CONDITIONS    the conditions to run, of those above (default all;
#                 none is always run: the ratios are to it)
#   BASELINE      an older pagecache binary: the baseline condition
#
# Usage: make && bash bench/record-overhead.sh --json /tmp/record-overhead.json
set -euo pipefail
export LC_ALL=C

usage() { sed -n '3,/^# Usage/s/^# \{0,1\}//p' "$0"; }
JSON= KEEP=0 QUICK=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--json) [[ $# -ge 2 ]] || { echo "record-overhead.sh: --json needs a FILE" >&2; exit 2; }
		JSON=$2; shift 2 ;;
	--json=*) JSON=${1#--json=}; shift ;;
	--keep) KEEP=1; shift ;;
	--quick) QUICK=1; shift ;;
	-h|--help) usage; exit 0 ;;
	*) echo "record-overhead.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench-overhead}
WARMUP_DIR=${WARMUP_DIR:-/var/tmp/pagecache-bench}
if [[ $QUICK -eq 1 ]]; then
	ROUNDS=${ROUNDS:-3}
	QLOOPS=${QLOOPS:-10}
else
	ROUNDS=${ROUNDS:-7}
	QLOOPS=${QLOOPS:-20}
fi
FILES=${FILES:-20000}
INTERVAL=${INTERVAL:-1}
ROWS=${WARMUP_ROWS:-1500000}

say() { printf '%s\n' "$*"; }
die() { printf 'record-overhead.sh: %s\n' "$*" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || die "must run as root (record reads kernel events; the database is root's)"
[[ -x $PAGECACHE ]] || die "no $PAGECACHE: run 'make' in $REPO first"
command -v jq >/dev/null || die "needs jq"
[[ -x /usr/bin/time ]] || die "needs GNU time (/usr/bin/time; apt-get install time)"
command -v cc >/dev/null || die "needs a C compiler (the tree's generator)"
[[ $ROUNDS =~ ^[1-9][0-9]*$ && $QLOOPS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS and QLOOPS are counts"
[[ $FILES =~ ^[1-9][0-9]*00$ ]] || die "FILES must be a multiple of 100"
[[ $ROWS =~ ^[1-9][0-9]*$ ]] || die "WARMUP_ROWS is a count"
BINDIR=$(cd "$(dirname "$PAGECACHE")" && pwd)
PAGECACHE=$BINDIR/$(basename "$PAGECACHE")

. "$HERE/workdir.sh"
WORK=$(workdir "$BENCH_DIR") || die "choose another BENCH_DIR"
# one run at a time in WORK: a second would remove the first one's files
exec 9>"$WORK/.lock"
flock -n 9 || die "another run is using $WORK (wait for it, or set BENCH_DIR)"
TREE=$WORK/tree
RUN=$WORK/run
DB=$WARMUP_DIR/warmup-$ROWS.db

# ------------------------------------------------------------ cleanup
TPID=
stop_tracer() {   # SIGINT (record writes its file), then TERM, then KILL
	[[ -n $TPID ]] || return 0
	if kill -0 "$TPID" 2>/dev/null; then
		kill -INT "$TPID" 2>/dev/null || true
		for _ in $(seq 1200); do kill -0 "$TPID" 2>/dev/null || break; sleep 0.1; done
		kill -TERM "$TPID" 2>/dev/null || true
		for _ in $(seq 100); do kill -0 "$TPID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$TPID" 2>/dev/null || true
	fi
	wait "$TPID" 2>/dev/null || true
	TPID=
}
IDLE_PID= IDLE_CG=
cleanup() {
	local rc=$?
	trap - EXIT INT TERM HUP
	stop_tracer
	if [[ -n $IDLE_PID ]]; then
		kill "$IDLE_PID" 2>/dev/null || true
		wait "$IDLE_PID" 2>/dev/null || true
	fi
	# empty once its process is gone (a moment for the kernel to see it)
	for _ in 1 2 3 4 5; do [[ -z $IDLE_CG ]] || rmdir "$IDLE_CG" 2>/dev/null && break; sleep 0.2; done
	rm -rf "$RUN"
	[[ $KEEP -eq 1 ]] || rm -rf "$TREE" "$WORK/.tree-$FILES" "$WORK/.lock"
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP
rm -rf "$RUN"
mkdir -m 0700 "$RUN"

LOAD_START=$(cut -d' ' -f1-3 /proc/loadavg)
say "pagecache record/top overhead: $(uname -r), $(nproc) CPUs, load average $LOAD_START"
say "  binary $PAGECACHE ($("$PAGECACHE" --version | head -n 1)); work directory $WORK"

now() { date +%s.%N; }
ms_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", (b - a) * 1000 }'; }
stat_cpu() {   # utime+stime of PID, clock ticks
	local s
	s=$(<"/proc/$1/stat") || return 1
	s=${s##*) }
	set -- $s
	echo $(( ${12} + ${13} ))
}
TCK=$(getconf CLK_TCK)

# ------------------------------------------------------------ what runs
CONDS=(none)
declare -A SKIPPED=()
WANT=" ${CONDITIONS:-record record-cgroup record-pid top baseline} "
for c in ${CONDITIONS:-}; do
	[[ $c =~ ^(none|record|record-cgroup|record-pid|top|baseline)$ ]] || die "CONDITIONS: no condition '$c'"
done
want() { [[ $WANT == *" $1 "* ]]; }
if "$PAGECACHE" record --help >/dev/null 2>&1; then
	want record && CONDS+=(record)
else
	SKIPPED[record]="$PAGECACHE has no record command"
fi
# the idle service of the scoped recordings: a sleeping process in a cgroup of
# its own, in the hierarchy perf_event is on (v1's perf_event, else cgroup2:
# what record --cgroup opens)
perf_cgroup_root() {
	awk '$0 ~ / - cgroup / && $NF ~ /(^|,)perf_event(,|$)/ { print $5; found = 1; exit }
	     / - cgroup2 / && !v2 { v2 = $5 }
	     END { if (!found && v2 != "") print v2 }' /proc/self/mountinfo
}
if [[ -z ${SKIPPED[record]:-} ]] && { want record-cgroup || want record-pid; }; then
	sleep 1000000 </dev/null >/dev/null 2>&1 &
	IDLE_PID=$!
	want record-pid && CONDS+=(record-pid)
	if want record-cgroup; then
		CGROOT=$(perf_cgroup_root)
		if [[ -z $CGROOT ]]; then
			SKIPPED[record-cgroup]="no cgroup hierarchy with perf_event and no cgroup2 mounted"
		elif ! mkdir "$CGROOT/pagecache-bench-idle-$$" 2>/dev/null; then
			SKIPPED[record-cgroup]="cannot make a cgroup in $CGROOT"
		else
			IDLE_CG=$CGROOT/pagecache-bench-idle-$$
			if echo "$IDLE_PID" >"$IDLE_CG/cgroup.procs" 2>/dev/null; then
				CONDS+=(record-cgroup)
			else
				SKIPPED[record-cgroup]="cannot move a process into $IDLE_CG"
			fi
		fi
	fi
fi
if "$PAGECACHE" top --help >/dev/null 2>&1; then
	want top && CONDS+=(top)
else
	SKIPPED[top]="$PAGECACHE has no top command"
fi
BASELINE=${BASELINE:-}
if [[ -n $BASELINE ]] && want baseline; then
	cp "$BASELINE" "$RUN/baseline" || die "cannot copy BASELINE '$BASELINE'"
	if "$RUN/baseline" record --help >/dev/null 2>&1; then
		CONDS+=(baseline)
	else
		SKIPPED[baseline]="$BASELINE has no record command"
	fi
fi

# ------------------------------------------------------------ the data
if [[ ! -f $DB || ! -f $DB.ids ]]; then
	say "  building bench warmup's database in $WARMUP_DIR (pagecache bench warmup --rows $ROWS --trials 1; drops the page cache)"
	"$PAGECACHE" bench warmup --rows "$ROWS" --trials 1 --dir "$WARMUP_DIR" >/dev/null
fi
DB_BYTES=$(stat -c %s "$DB")
if [[ ! -f $WORK/.tree-$FILES ]]; then
	say "  making $TREE ($FILES files of 4 KiB, 100 a directory)..."
	rm -rf "$TREE"
	cat >"$RUN/gen.c" <<'C'
/* gen ROOT N: ROOT/dNNN/fNN, N files of 4096 bytes, 100 a directory */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(int argc, char **argv) {
	char p[4096], buf[4096];
	if (argc != 3) return 2;
	int n = atoi(argv[2]);
	mkdir(argv[1], 0755);
	for (int d = 0; d < n / 100; d++) {
		snprintf(p, sizeof p, "%s/d%03d", argv[1], d); mkdir(p, 0755);
		for (int f = 0; f < 100; f++) {
			snprintf(p, sizeof p, "%s/d%03d/f%02d", argv[1], d, f);
			memset(buf, 'a' + (d + f) % 26, sizeof buf);
			int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write(fd, buf, sizeof buf) != sizeof buf) { perror(p); return 1; }
			close(fd);
		}
	}
	return 0;
}
C
	cc -O2 -o "$RUN/gen" "$RUN/gen.c" || die "cannot compile the tree's generator"
	"$RUN/gen" "$TREE" "$FILES" || die "cannot make the tree"
	sync
	touch "$WORK/.tree-$FILES"
fi
say "  database $DB ($DB_BYTES bytes), tree $TREE ($FILES files); $ROUNDS rounds, $QLOOPS worker runs a sqlite sample"
[[ ${#SKIPPED[@]} -eq 0 ]] || for c in "${!SKIPPED[@]}"; do say "  $c skipped: ${SKIPPED[$c]}"; done

# ------------------------------------------------------------ the workloads
# /usr/bin/time -f '%U %S' of a shell running the workload: the CPU time of
# every process it ran (rusage of waited-for children); its wall time from
# bash's EPOCHREALTIME around it, in microseconds (time's own %e counts in
# 10 ms steps: a cat of a small cached tree read 0 ms, and a ratio to it had
# no meaning)
timed() {   # timed OUT CMD...: the command's output in OUT; prints "wall_ms cpu_s"
	local out=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	/usr/bin/time -f '%U %S' -o "$RUN/time" "$@" >"$out"
	t1=$EPOCHREALTIME
	awk -v t0="$t0" -v t1="$t1" '{ printf "%.3f %.3f", (t1 - t0) * 1000, $1 + $2 }' "$RUN/time"
}
sqlite_sample() {   # prints: sum of the workers' Q1+Q2+Q3 (ms), the loop's wall (ms), its CPU (s)
	local wc
	wc=$(timed "$RUN/sqlite.out" bash -c 'for i in $(seq "$1"); do "$2" bench warmup --worker "$3" | head -n 1; done' \
		- "$QLOOPS" "$PAGECACHE" "$DB") || return 1
	echo "$(awk '{ s += $1 + $2 + $3 } END { printf "%.3f", s }' "$RUN/sqlite.out") $wc"
}
cat_sample() {   # prints: wall (ms), CPU (s)
	timed /dev/null sh -c 'find "$1" -type f -print0 | xargs -0 cat' - "$TREE"
}
warm_all() {
	"$PAGECACHE" warm -q "$TREE" "$DB" "$DB.ids" >/dev/null
	"$PAGECACHE" bench warmup --worker "$DB" >/dev/null   # its binary and libraries too
	cat_sample >/dev/null
}

start_tracer() {   # start_tracer COND ROUND: TPID set (empty for none); 1 if it did not start
	local c=$1 r=$2
	TPID=
	case $c in
	none) return 0 ;;
	record) "$PAGECACHE" record --json -o "$RUN/sys-$r.rec" >"$RUN/record-$r.json" 2>"$RUN/record-$r.err" </dev/null & ;;
	record-cgroup) "$PAGECACHE" record --json -o "$RUN/cg-$r.rec" --cgroup "$IDLE_CG" \
		>"$RUN/record-cgroup-$r.json" 2>"$RUN/record-cgroup-$r.err" </dev/null & ;;
	record-pid) "$PAGECACHE" record --json -o "$RUN/pid-$r.rec" --pid "$IDLE_PID" \
		>"$RUN/record-pid-$r.json" 2>"$RUN/record-pid-$r.err" </dev/null & ;;
	baseline) "$RUN/baseline" record --json -o "$RUN/base-$r.rec" >"$RUN/baseline-$r.json" \
		2>"$RUN/baseline-$r.err" </dev/null & ;;
	top) "$PAGECACHE" top --json --interval "$INTERVAL" >"$RUN/top-$r.jsonl" 2>"$RUN/top-$r.err" </dev/null & ;;
	esac
	TPID=$!
	sleep 1
	kill -0 "$TPID" 2>/dev/null || { wait "$TPID" 2>/dev/null || true; TPID=; return 1; }
}

ratio() {   # ratio A B: "A/B " to 4 places, nothing where B is not above 0
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.4f ", a / b }'
}
declare -A SQ=() SW=() SC=() CT=() CC=() TC=() PAIR_SQ=() PAIR_CT=() PAIR_SC=() PAIR_CC=()
LOADS=() LOST=() EVENTS=() TOPLINES=()
declare -A SCOPED_EVENTS=() SCOPED_LOST=()
for c in "${CONDS[@]}"; do SQ[$c]= SW[$c]= SC[$c]= CT[$c]= CC[$c]= TC[$c]=; done
for r in $(seq "$ROUNDS"); do
	warm_all
	n=${#CONDS[@]}
	declare -A RS=() RC=() RSC=() RCC=()
	for i in $(seq 0 $((n - 1))); do
		c=${CONDS[$(( (i + r - 1) % n ))]}
		[[ -z ${SKIPPED[$c]:-} ]] || continue
		if ! start_tracer "$c" "$r"; then
			SKIPPED[$c]="did not start: $(tail -n 1 "$RUN/$c-$r.err" 2>/dev/null || echo '?')"
			say "  $c skipped: ${SKIPPED[$c]}"
			continue
		fi
		read -r qsum qwall qcpu <<<"$(sqlite_sample)"
		read -r cms ccpu <<<"$(cat_sample)"
		cpu=0
		[[ -z $TPID ]] || cpu=$(stat_cpu "$TPID" 2>/dev/null || echo 0)
		stop_tracer
		SQ[$c]+="$qsum " SW[$c]+="$qwall " SC[$c]+="$qcpu " CT[$c]+="$cms " CC[$c]+="$ccpu "
		TC[$c]+="$(awk -v t="$cpu" -v h="$TCK" 'BEGIN { printf "%.2f", t / h }') "
		RS[$c]=$qsum RC[$c]=$cms RSC[$c]=$qcpu RCC[$c]=$ccpu
		if [[ $c == record ]]; then
			LOST+=("$(jq -r '.total.lost_events // "null"' "$RUN/record-$r.json" 2>/dev/null || echo null)")
			EVENTS+=("$(jq -r '.total.events // "null"' "$RUN/record-$r.json" 2>/dev/null || echo null)")
			rm -f "$RUN/sys-$r.rec"
		elif [[ $c == record-* || $c == baseline ]]; then
			SCOPED_EVENTS[$c]+="$(jq -r '.total.events // "null"' "$RUN/$c-$r.json" 2>/dev/null || echo null) "
			SCOPED_LOST[$c]+="$(jq -r '.total.lost_events // "null"' "$RUN/$c-$r.json" 2>/dev/null || echo null) "
			rm -f "$RUN/cg-$r.rec" "$RUN/pid-$r.rec" "$RUN/base-$r.rec"
		fi
		[[ $c != top ]] || TOPLINES+=("$(wc -l <"$RUN/top-$r.jsonl")")
	done
	for c in "${!RS[@]}"; do
		[[ $c != none && -n ${RS[none]:-} ]] || continue
		# a ratio only over a none sample that measured something (CPU
		# time counts in 10 ms steps: a short sample can read 0)
		PAIR_SQ[$c]+="$(ratio "${RS[$c]}" "${RS[none]}")"
		PAIR_CT[$c]+="$(ratio "${RC[$c]}" "${RC[none]}")"
		PAIR_SC[$c]+="$(ratio "${RSC[$c]}" "${RSC[none]}")"
		PAIR_CC[$c]+="$(ratio "${RCC[$c]}" "${RCC[none]}")"
	done
	unset RS RC RSC RCC
	LOADS+=("$(cut -d' ' -f1-3 /proc/loadavg)")
	say "  round $r: $(for c in "${CONDS[@]}"; do [[ -n ${SQ[$c]} ]] && printf '%s sqlite %s ms cat %s ms; ' "$c" "$(awk '{ print $NF }' <<<"${SQ[$c]}")" "$(awk '{ print $NF }' <<<"${CT[$c]}")"; done)(load ${LOADS[-1]})"
done
LOAD_END=$(cut -d' ' -f1-3 /proc/loadavg)

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{ v[NR] = $1 } END { if (!NR) print "null"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
pct() { awk -v r="$1" 'BEGIN { if (r == "null" || r == "") print "null"; else printf "%.1f", (r - 1) * 100 }'; }
say ""
say "medians over $ROUNDS rounds (slowdown: median of the per-round ratios to none):"
for c in "${CONDS[@]}"; do
	[[ -n ${SQ[$c]} ]] || continue
	line="  $c: sqlite $(median <<<"${SQ[$c]}") ms, cat $(median <<<"${CT[$c]}") ms"
	[[ $c == none ]] || line+="; slowdown sqlite $(pct "$(median <<<"${PAIR_SQ[$c]:-}")") %, cat $(pct "$(median <<<"${PAIR_CT[$c]:-}")") %; workload CPU time sqlite $(pct "$(median <<<"${PAIR_SC[$c]:-}")") %, cat $(pct "$(median <<<"${PAIR_CC[$c]:-}")") %; its own CPU $(median <<<"${TC[$c]}") s a round"
	say "$line"
done
for c in "${!SKIPPED[@]}"; do say "  $c skipped: ${SKIPPED[$c]}"; done
say "  load average: start $LOAD_START, end $LOAD_END"

if [[ -n $JSON ]]; then
	arr() { printf '%s\n' "$@" | sed '/^$/d' | jq -sc 'map(if . == "null" then null else (tonumber? // .) end)'; }
	conds='{}'
	for c in "${CONDS[@]}"; do
		[[ -n ${SQ[$c]} ]] || continue
		conds=$(jq -c --arg c "$c" --argjson sq "$(arr ${SQ[$c]})" --argjson sw "$(arr ${SW[$c]})" \
			--argjson ct "$(arr ${CT[$c]})" --argjson tc "$(arr ${TC[$c]})" \
			--argjson sc "$(arr ${SC[$c]})" --argjson cc "$(arr ${CC[$c]})" \
			--argjson psq "$(arr ${PAIR_SQ[$c]:-})" --argjson pct "$(arr ${PAIR_CT[$c]:-})" \
			--argjson psc "$(arr ${PAIR_SC[$c]:-})" --argjson pcc "$(arr ${PAIR_CC[$c]:-})" \
			'. + { ($c): { sqlite_query_ms: $sq, sqlite_wall_ms: $sw, sqlite_cpu_s: $sc, cat_ms: $ct, cat_cpu_s: $cc,
			  tracer_cpu_s: $tc, round_ratio_sqlite: $psq, round_ratio_cat: $pct,
			  round_ratio_sqlite_cpu: $psc, round_ratio_cat_cpu: $pcc } }' <<<"$conds")
	done
	scoped='{}'
	for c in "${!SCOPED_EVENTS[@]}"; do
		scoped=$(jq -c --arg c "$c" --argjson e "$(arr ${SCOPED_EVENTS[$c]})" --argjson l "$(arr ${SCOPED_LOST[$c]})" \
			'. + { ($c): { events: $e, lost_events: $l } }' <<<"$scoped")
	done
	skipped=$(for c in "${!SKIPPED[@]}"; do jq -cn --arg c "$c" --arg w "${SKIPPED[$c]}" '{ condition: $c, why: $w }'; done | jq -sc .)
	jq -n --arg date "$(date -u +%FT%TZ)" --arg kernel "$(uname -r)" --arg cpus "$(nproc)" \
		--arg version "$("$PAGECACHE" --version | head -n 1)" --arg baseline "$BASELINE" --arg rounds "$ROUNDS" --arg qloops "$QLOOPS" \
		--arg files "$FILES" --arg rows_db "$ROWS" --arg db "$DB" --arg db_bytes "$DB_BYTES" --arg interval "$INTERVAL" \
		--arg quick "$QUICK" --arg load_start "$LOAD_START" --arg load_end "$LOAD_END" \
		--argjson loads "$(printf '%s\n' "${LOADS[@]}" | jq -Rsc 'split("\n") | map(select(. != ""))')" \
		--argjson lost "$(arr "${LOST[@]:-}")" --argjson events "$(arr "${EVENTS[@]:-}")" --argjson toplines "$(arr "${TOPLINES[@]:-}")" \
		--argjson conds "$conds" --argjson skipped "$skipped" --argjson scoped "$scoped" \
		'def n: tonumber;
		 def med: (sort) as $s | if ($s|length) == 0 then null elif ($s|length) % 2 == 1 then $s[($s|length - 1) / 2] else ($s[($s|length) / 2 - 1] + $s[($s|length) / 2]) / 2 end;
		 def r3: if . == null then null else (. * 1000 | round) / 1000 end;
		 def div(a; b): if a == null or b == null or b == 0 then null else a / b end;
		{
		  bench: "record-overhead", script: "bench/record-overhead.sh", date: $date, kernel: $kernel, cpus: ($cpus|n), version: $version,
		  baseline: (if $baseline == "" then null else $baseline end), quick: ($quick == "1"), rounds: ($rounds|n), sqlite_worker_runs_per_sample: ($qloops|n), tree_files: ($files|n),
		  database: { path: $db, bytes: ($db_bytes|n), rows: ($rows_db|n) },
		  top_interval_s: ($interval|n),
		  load_average: { start: $load_start, after_each_round: $loads, end: $load_end,
		    how: "/proc/loadavg (1, 5, 15 min); the machine is shared: other work ran beside every condition alike (alternated), but a ratio under load says less than on a quiet machine" },
		  conditions: $conds,
		  summary: ($conds | to_entries | map({ key: .key, value: {
		    sqlite_query_ms_median: (.value.sqlite_query_ms | med), cat_ms_median: (.value.cat_ms | med),
		    sqlite_ratio_of_medians: (div(.value.sqlite_query_ms | med; $conds.none.sqlite_query_ms | med) | r3),
		    cat_ratio_of_medians: (div(.value.cat_ms | med; $conds.none.cat_ms | med) | r3),
		    sqlite_round_ratio_median: (.value.round_ratio_sqlite | med | r3),
		    cat_round_ratio_median: (.value.round_ratio_cat | med | r3),
		    sqlite_cpu_round_ratio_median: (.value.round_ratio_sqlite_cpu | med | r3),
		    cat_cpu_round_ratio_median: (.value.round_ratio_cat_cpu | med | r3),
		    tracer_cpu_s_median: (.value.tracer_cpu_s | med) } }) | from_entries),
		  record_events: $events, record_lost_events: $lost, other_records: $scoped,
		  top_lines_written: $toplines, skipped: $skipped,
		  target: "under 5% slowdown (issue 13, issue 26): a round ratio median under 1.05; record-cgroup and record-pid (scoped to an idle service, the workloads elsewhere) under 2% (issue 26)",
		  how: "each round: the tree, the database, the worker binary warmed (pagecache warm, one worker run, one cat); then each condition in an order rotated by one per round: its tracer started (record: pagecache record --json -o FILE, system-wide; record-cgroup and record-pid: the same with --cgroup or --pid of an idle service, a sleeping process in a cgroup of its own made for the run, the workloads outside it; top: pagecache top --json --interval S), 1 s, the sqlite sample (QLOOPS runs of pagecache bench warmup --worker DB in a row; the sum of their own Q1+Q2+Q3 timers, the loop wall time and CPU time), the cat sample (find TREE -type f -print0 | xargs -0 cat >/dev/null: wall time and CPU time); wall time from bash EPOCHREALTIME (microseconds) around, and CPU time (user + system of the workload processes) from, /usr/bin/time -f %U %S of a shell running the workload, the tracer CPU (utime+stime) read, SIGINT to it and wait (record then writes its file: not timed). round_ratio = the condition sample over the same round none sample, left out of a round whose none sample read 0 (CPU time counts in 10 ms steps)"
		}' >"$JSON"
	say "JSON: $JSON"
fi
