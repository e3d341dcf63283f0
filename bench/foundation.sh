#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench/foundation.sh -- pagecache against its peers, on one machine, in one run.
#
#   1. stat of a 100,000-file tree, metadata cached:
#        pagecache stat   vs  vmtouch   vs  a floor (bench/floor-stat.c:
#        getdents64 per directory, openat+cachestat+close per file, 2 threads)
#   2. warm of the tree from a cold cache:
#        pagecache warm -q  vs  vmtouch -t  (and find|xargs cat, for reference);
#        then checks that every page is resident
#   3. warm of a 1.5 GiB file from a cold cache:
#        pagecache warm (auto, --engine threads, --engine uring)  vs  vmtouch -t
#        vs fio O_DIRECT sequential read bandwidth of the same file
#   4. stat of a 1 TiB sparse file: time and peak RSS of
#        pagecache stat  vs  vmtouch  vs  fincore
#
# Needs root (drop_caches), a C compiler, GNU time (/usr/bin/time), vmtouch,
# fio and fincore; missing Debian packages are installed with apt-get when
# possible, and a peer still missing is skipped with a note.
#
# Environment:
#   BENCH_DIR   data directory (default /var/tmp/pagecache-bench, made 0700);
#               the data is made once and reused (marker file
#               $BENCH_DIR/.ready-v1); it must be root's own, not writable by
#               group or others (bench/workdir.sh), or the script stops
#   PAGECACHE   the binary to test (default: build/pagecache of this repo)
#   RUNS        runs per tool for the metadata-cached measurements (default 7)
#   RUNS_COLD   runs per tool for the cold-cache measurements (default 3)
#   SECTIONS    which measurements to run (default "1 2 3 4")
#
# Usage: make && bash bench/foundation.sh 2>&1 | tee /tmp/bench-out.txt
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(dirname "$HERE")
PAGECACHE=${PAGECACHE:-$REPO/build/pagecache}
BENCH_DIR=${BENCH_DIR:-/var/tmp/pagecache-bench}
RUNS=${RUNS:-7}
RUNS_COLD=${RUNS_COLD:-3}
SECTIONS=${SECTIONS:-1 2 3 4}
want() { [[ " $SECTIONS " == *" $1 "* ]]; }

TREE=$BENCH_DIR/tree
BIG=$BENCH_DIR/big-1.5G
SPARSE=$BENCH_DIR/sparse-1T
BIG_BYTES=$((1536 * 1024 * 1024))
NDIRS=100 NSUB=10 NFILES=100          # 100 x 10 x 100 = 100,000 files
MARKER=$BENCH_DIR/.ready-v1
MARKER_TEXT="tree=${NDIRS}x${NSUB}x${NFILES} sizes=4096-65536 seed=1 big=$BIG_BYTES sparse=1T"

say()  { printf '%s\n' "$*"; }
note() { printf '  note: %s\n' "$*"; }
die()  { printf 'foundation.sh: %s\n' "$*" >&2; exit 1; }
hr()   { printf '%s\n' "------------------------------------------------------------------------"; }

# ---------------------------------------------------------------- preflight
[[ $(id -u) -eq 0 ]] || die "must run as root (it writes /proc/sys/vm/drop_caches)"
[[ -x $PAGECACHE ]] || die "no $PAGECACHE: run 'make' in $REPO first"
command -v cc >/dev/null || die "no C compiler (cc)"

have() { command -v "$1" >/dev/null 2>&1; }
APT_DONE=0
apt_install() {   # apt_install PACKAGE...: best effort
	have apt-get || return 1
	if [[ $APT_DONE -eq 0 ]]; then apt-get update -qq >/dev/null 2>&1 || true; APT_DONE=1; fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null 2>&1
}
have vmtouch || { say "installing vmtouch..."; apt_install vmtouch || true; }
have fio     || { say "installing fio...";     apt_install fio || true; }
have fincore || { say "installing util-linux (fincore)..."; apt_install util-linux || true; }
[[ -x /usr/bin/time ]] || { say "installing GNU time..."; apt_install time || true; }
HAVE_VMTOUCH=0; have vmtouch && HAVE_VMTOUCH=1
HAVE_FIO=0;     have fio     && HAVE_FIO=1
HAVE_FINCORE=0; have fincore && HAVE_FINCORE=1
HAVE_GTIME=0;   [[ -x /usr/bin/time ]] && HAVE_GTIME=1
HAVE_JQ=0;      have jq      && HAVE_JQ=1
HAVE_PY=0;      have python3 && HAVE_PY=1
[[ $HAVE_VMTOUCH -eq 1 ]] || note "vmtouch missing: its columns are skipped"
[[ $HAVE_FIO -eq 1 ]]     || note "fio missing: the O_DIRECT reference is skipped"
[[ $HAVE_FINCORE -eq 1 ]] || note "fincore missing: its column is skipped"
[[ $HAVE_GTIME -eq 1 ]]   || note "/usr/bin/time missing: peak RSS is not measured"
[[ $HAVE_JQ -eq 1 || $HAVE_PY -eq 1 ]] || die "need jq or python3 to read JSON"

# root writes there: only a directory of its own (bench/workdir.sh)
. "$HERE/workdir.sh"
BENCH_DIR=$(workdir "$BENCH_DIR") || die "choose another BENCH_DIR"
TREE=$BENCH_DIR/tree BIG=$BENCH_DIR/big-1.5G SPARSE=$BENCH_DIR/sparse-1T MARKER=$BENCH_DIR/.ready-v1
TMP=$(mktemp -d "$BENCH_DIR/.run.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
# Test a private copy, so a concurrent 'make' cannot swap the binary mid-run.
cp "$PAGECACHE" "$TMP/pagecache"
PAGECACHE_SRC=$PAGECACHE
PAGECACHE=$TMP/pagecache

# json_get FILE EXPR: EXPR is a jq path such as .total.cached
json_get() {
	if [[ $HAVE_JQ -eq 1 ]]; then
		jq -r "$2" "$1" 2>/dev/null || echo "?"
	else
		python3 - "$1" "$2" 2>/dev/null <<'PY' || echo "?"
import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].strip('.').replace('[', '.').replace(']', '').split('.'):
    v = v[int(k)] if k.isdigit() else v[k]
print(v)
PY
	fi
}

# ------------------------------------------------------------------ helpers
GEN_SRC=$TMP/gen.c
cat >"$GEN_SRC" <<'C'
/* gen: bench data, written fast.
 *   gen tree ROOT NDIRS NSUB NFILES MIN MAX SEED   files of MIN..MAX bytes
 *   gen file PATH BYTES SEED                       one file of random data
 * Content comes from an 8 MiB xorshift pool, at a random offset per file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#define POOL (8u << 20)
static uint64_t s;
static uint64_t rnd(void) { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static unsigned char *pool;
static void fill(unsigned char *p, size_t n) {
	for (size_t i = 0; i + 8 <= n; i += 8) { uint64_t r = rnd() | 0x0101010101010101ull; memcpy(p + i, &r, 8); }
}
static void xwrite(int fd, const void *b, size_t n, const char *what) {
	while (n) { ssize_t w = write(fd, b, n); if (w < 0) { if (errno == EINTR) continue; perror(what); exit(1); }
		b = (const char *)b + w; n -= w; }
}
int main(int argc, char **argv) {
	if (argc >= 5 && !strcmp(argv[1], "file")) {
		s = strtoull(argv[4], 0, 10) * 2654435761u + 7;
		uint64_t left = strtoull(argv[3], 0, 10);
		size_t bs = 1u << 20; unsigned char *b = malloc(bs);
		int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0) { perror(argv[2]); return 1; }
		while (left) { size_t n = left < bs ? left : bs; fill(b, n); xwrite(fd, b, n, argv[2]); left -= n; }
		if (fsync(fd) || close(fd)) { perror(argv[2]); return 1; }
		return 0;
	}
	if (argc < 9 || strcmp(argv[1], "tree")) { fprintf(stderr, "usage: see source\n"); return 2; }
	const char *root = argv[2];
	int nd = atoi(argv[3]), ns = atoi(argv[4]), nf = atoi(argv[5]);
	long mn = atol(argv[6]), mx = atol(argv[7]);
	unsigned long seed = strtoul(argv[8], 0, 10);
	s = seed * 2654435761u + 1;
	pool = malloc(POOL); fill(pool, POOL);
	mkdir(root, 0755);
	int nproc = 2;   /* two writers: top-level dirs split by parity */
	for (int w = 0; w < nproc; w++) {
		pid_t pid = fork();
		if (pid < 0) { perror("fork"); return 1; }
		if (pid) continue;
		char path[4096];
		for (int d = w; d < nd; d += nproc) {
			s = (seed + 1000003ul * (d + 1)) * 2654435761u + 3;
			snprintf(path, sizeof path, "%s/d%03d", root, d);
			if (mkdir(path, 0755) && errno != EEXIST) { perror(path); _exit(1); }
			for (int u = 0; u < ns; u++) {
				snprintf(path, sizeof path, "%s/d%03d/s%02d", root, d, u);
				if (mkdir(path, 0755) && errno != EEXIST) { perror(path); _exit(1); }
				for (int f = 0; f < nf; f++) {
					snprintf(path, sizeof path, "%s/d%03d/s%02d/f%03d", root, d, u, f);
					long sz = mn + (long)(rnd() % (uint64_t)(mx - mn + 1));
					size_t off = rnd() % (POOL - (size_t)mx);
					int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
					if (fd < 0) { perror(path); _exit(1); }
					xwrite(fd, pool + off, (size_t)sz, path);
					close(fd);
				}
			}
		}
		_exit(0);
	}
	int st, bad = 0;
	while (wait(&st) > 0) if (!WIFEXITED(st) || WEXITSTATUS(st)) bad = 1;
	return bad;
}
C
GEN=$BENCH_DIR/gen
FLOOR=$BENCH_DIR/floor-stat
cc -O2 -o "$GEN" "$GEN_SRC" || die "cannot compile the data generator"
cc -O2 -pthread -o "$FLOOR" "$HERE/floor-stat.c" || die "cannot compile bench/floor-stat.c"

drop_caches() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# Other work on a 2-CPU box skews every figure: measure how busy the CPUs
# are for one second while this script sleeps, and say so when they are.
load_note() {
	local a b
	read -r -a a < <(head -n 1 /proc/stat)
	sleep 1
	read -r -a b < <(head -n 1 /proc/stat)
	local busy
	busy=$(awk -v u1="${a[1]}" -v n1="${a[2]}" -v s1="${a[3]}" -v i1="${a[4]}" -v w1="${a[5]}" -v q1="${a[6]}" -v sq1="${a[7]}" -v st1="${a[8]}" \
	           -v u2="${b[1]}" -v n2="${b[2]}" -v s2="${b[3]}" -v i2="${b[4]}" -v w2="${b[5]}" -v q2="${b[6]}" -v sq2="${b[7]}" -v st2="${b[8]}" \
	           'BEGIN { busy = (u2 + n2 + s2 + q2 + sq2 + st2) - (u1 + n1 + s1 + q1 + sq1 + st1);
	                    idle = (i2 + w2) - (i1 + w1); t = busy + idle;
	                    printf "%.0f", (t > 0 ? 100 * busy / t : 0) }')
	say "  CPU busy with other work (1 s sample before this section): ${busy}%"
	if [[ $busy -gt 10 ]]; then note "the machine is busy: the figures below may be skewed"; fi
	BUSY_MAX=$(( busy > ${BUSY_MAX:-0} ? busy : ${BUSY_MAX:-0} ))
}

# run_one CMD...: runs CMD once (stdout to $TMP/out, stderr to $TMP/err).
# Sets T (wall seconds, from $EPOCHREALTIME), RSS (peak KiB, GNU time; '-'
# without it) and RC.
run_one() {
	local t0 t1
	RC=0
	if [[ $HAVE_GTIME -eq 1 ]]; then
		t0=$EPOCHREALTIME
		/usr/bin/time -f '%M' -o "$TMP/rss" "$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
		t1=$EPOCHREALTIME
		RSS=$(tail -n 1 "$TMP/rss")
	else
		t0=$EPOCHREALTIME
		"$@" >"$TMP/out" 2>"$TMP/err" || RC=$?
		t1=$EPOCHREALTIME
		RSS=-
	fi
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
}

median() { printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) printf "%.4f", a[(NR + 1) / 2]; else printf "%.4f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
maxof()  { printf '%s\n' "$@" | grep -v '^-$' | sort -g | tail -n 1; }
div()    { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) print "-"; else printf "%.2f", a / b }'; }
mib()    { [[ $1 == - || -z $1 ]] && { echo -; return; }; awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
mbps()   { awk -v b="$1" -v t="$2" 'BEGIN { if (t == 0) print "-"; else printf "%.0f", b / t / 1e6 }'; }

# run_tool NAME CMD...: one logged run; appends T to array TIMES_<key>
declare -A TIMES=() RSSES=() FAILS=()
run_tool() {
	local key=$1; shift
	run_one "$@"
	TIMES[$key]+="$T "
	RSSES[$key]+="$RSS "
	printf '  %-26s %8.4f s  rss %7s MiB  rc %s\n' "$key" "$T" "$(mib "$RSS")" "$RC"
	if [[ $RC -ne 0 ]]; then
		FAILS[$key]+="rc=$RC "
		sed 's/^/      stderr: /' "$TMP/err" | head -n 5
	fi
}
med_of() { local -a a; read -r -a a <<<"${TIMES[$1]:-}"; [[ ${#a[@]} -gt 0 ]] && median "${a[@]}" || echo -; }
rss_of() { local -a a; read -r -a a <<<"${RSSES[$1]:-}"; [[ ${#a[@]} -gt 0 ]] && maxof "${a[@]}" || echo -; }

# ---------------------------------------------------------------------- data
make_data() {
	say "making bench data under $BENCH_DIR (once; reused on later runs)"
	rm -rf "$TREE" "$BIG" "$SPARSE" "$MARKER"
	local t0=$EPOCHREALTIME
	"$GEN" tree "$TREE" $NDIRS $NSUB $NFILES 4096 65536 1 || die "tree generation failed"
	say "  tree: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	t0=$EPOCHREALTIME
	"$GEN" file "$BIG" $BIG_BYTES 2 || die "big file generation failed"
	say "  1.5 GiB file: $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s"
	truncate -s 1T "$SPARSE"
	sync
	printf '%s\n' "$MARKER_TEXT" >"$MARKER"
}
if [[ -f $MARKER && $(cat "$MARKER") == "$MARKER_TEXT" && -d $TREE && -f $BIG && -f $SPARSE ]]; then
	say "reusing bench data under $BENCH_DIR ($MARKER)"
else
	make_data
fi
[[ $(stat -c %s "$BIG") -eq $BIG_BYTES ]] || die "$BIG has the wrong size; remove $MARKER to remake"
[[ $(stat -c %s "$SPARSE") -eq $((1 << 40)) ]] || die "$SPARSE has the wrong size; remove $MARKER to remake"

TREE_FILES=$(find "$TREE" -type f | wc -l)
TREE_DIRS=$(find "$TREE" -type d | wc -l)
TREE_BYTES=$(find "$TREE" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
[[ $TREE_FILES -eq $((NDIRS * NSUB * NFILES)) ]] || die "tree has $TREE_FILES files, want $((NDIRS * NSUB * NFILES)); remove $MARKER to remake"

say ""
say "pagecache foundation benchmark -- $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
say "  host:      $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
say "  fs:        $(df --output=source,fstype "$BENCH_DIR" | tail -n 1 | tr -s ' ')"
say "  pagecache: $PAGECACHE_SRC ($("$PAGECACHE" --version 2>&1 | head -n 1), sha256 $(sha256sum "$PAGECACHE" | cut -c1-12))"
say "  vmtouch:   $([[ $HAVE_VMTOUCH -eq 1 ]] && { vmtouch 2>&1 || true; } | grep -o 'vmtouch v[0-9.]*' | head -n 1 || echo missing)"
say "  fio:       $([[ $HAVE_FIO -eq 1 ]] && fio --version || echo missing)"
say "  fincore:   $([[ $HAVE_FINCORE -eq 1 ]] && fincore --version | head -n 1 || echo missing)"
say "  tree:      $TREE_FILES files, $TREE_DIRS dirs, $(awk -v b="$TREE_BYTES" 'BEGIN { printf "%.2f GB (%.2f GiB)", b / 1e9, b / 2^30 }')"
say "  big file:  $BIG ($BIG_BYTES bytes)"
say "  sparse:    $SPARSE (1 TiB, $(du -k "$SPARSE" | cut -f1) KiB allocated)"
say "  runs:      $RUNS metadata-cached, $RUNS_COLD cold (median reported)"
# Background reclaim changes what "100% resident" can mean: look for it.
for k in /sys/kernel/mm/damon/admin/kdamonds/*/; do
	[[ -f $k/state && $(cat "$k/state" 2>/dev/null) == on ]] || continue
	for a in "$k"contexts/*/schemes/*/action; do
		[[ -f $a && $(cat "$a") == pageout ]] || continue
		note "DAMON pageout scheme active (kdamond pid $(cat "$k/pid" 2>/dev/null)): idle page"
		note "cache is reclaimed in the background, so a residency check can fall short"
		note "of 100% after a successful warm; 'evicted' counts pages reclaimed since read"
		break 2
	done
done
T_START=$EPOCHREALTIME

# ---------------------------------------------------- 1. stat, metadata cached
if want 1; then
	say ""
	hr
	say "1. stat of the tree, metadata cached ($TREE_FILES files)"
	hr
	load_note
	drop_caches
	"$PAGECACHE" stat "$TREE" >/dev/null 2>&1 || true      # warm dentries/inodes
	# one untimed warm-up run per tool, then interleaved timed runs
	"$PAGECACHE" stat "$TREE" >/dev/null 2>&1 || true
	if [[ $HAVE_VMTOUCH -eq 1 ]]; then vmtouch "$TREE" >/dev/null 2>&1 || true; fi
	"$FLOOR" "$TREE" 2 >/dev/null 2>&1 || true
	for ((i = 1; i <= RUNS; i++)); do
		run_tool "pagecache stat" "$PAGECACHE" stat "$TREE"
		if [[ $HAVE_VMTOUCH -eq 1 ]]; then run_tool "vmtouch" vmtouch "$TREE"; fi
		run_tool "floor (2 threads)" "$FLOOR" "$TREE" 2
	done
	say "  floor says:     $(cat "$TMP/out")"
	"$PAGECACHE" stat --json "$TREE" >"$TMP/stat.json" 2>/dev/null || true
	say "  pagecache says: files=$(json_get "$TMP/stat.json" .total.files) cached=$(json_get "$TMP/stat.json" .total.cached)/$(json_get "$TMP/stat.json" .total.pages) pages"
	S1_PC=$(med_of "pagecache stat"); S1_VM=$(med_of "vmtouch"); S1_FL=$(med_of "floor (2 threads)")
	S1_PC_RSS=$(rss_of "pagecache stat")
fi

# ------------------------------------------------------- 2. warm tree, cold
if want 2; then
	say ""
	hr
	say "2. warm of the tree from a cold cache ($(awk -v b="$TREE_BYTES" 'BEGIN { printf "%.2f GB", b / 1e9 }'))"
	hr
	load_note
	S2_FULL=0 S2_ALLREAD=0 S2_SHORT=""
	for ((i = 1; i <= RUNS_COLD; i++)); do
		drop_caches
		run_tool "pagecache warm -q" "$PAGECACHE" warm -q "$TREE"
		grep -h 'Read:' "$TMP/out" | sed 's/^ */      pagecache says: /' || true
		"$PAGECACHE" stat --json "$TREE" >"$TMP/warm.json" 2>/dev/null || true
		c=$(json_get "$TMP/warm.json" .total.cached); p=$(json_get "$TMP/warm.json" .total.pages)
		ev=$(json_get "$TMP/warm.json" .total.evicted)
		vr=""
		[[ $HAVE_VMTOUCH -eq 0 ]] || vr=", vmtouch says $(vmtouch "$TREE" 2>/dev/null | awk '/Resident Pages/ { print $NF }')"
		say "      resident after warm: $c/$p pages, $ev evicted since read (pagecache stat)$vr"
		if [[ $c == "$p" ]]; then
			S2_FULL=$((S2_FULL + 1)); S2_ALLREAD=$((S2_ALLREAD + 1))
		else
			S2_SHORT+="run $i: $c/$p cached, $ev evicted; "
			# evicted pages left shadow entries: they were read, then reclaimed
			if [[ $c =~ ^[0-9]+$ && $ev =~ ^[0-9]+$ && $((c + ev)) -ge $p ]]; then S2_ALLREAD=$((S2_ALLREAD + 1)); fi
		fi
		if [[ $HAVE_VMTOUCH -eq 1 ]]; then
			drop_caches
			run_tool "vmtouch -t" vmtouch -t -q "$TREE"
		fi
		drop_caches
		run_tool "find | xargs cat" bash -c 'find "$1" -type f -print0 | xargs -0 cat >/dev/null' _ "$TREE"
	done
	S2_PC=$(med_of "pagecache warm -q"); S2_VM=$(med_of "vmtouch -t"); S2_CAT=$(med_of "find | xargs cat")
	S2_PC_RSS=$(rss_of "pagecache warm -q")
fi

# ---------------------------------------------------- 3. warm big file, cold
if want 3; then
	say ""
	hr
	say "3. warm of the 1.5 GiB file from a cold cache"
	hr
	load_note
	declare -A S3_RES
	for ((i = 1; i <= RUNS_COLD; i++)); do
		for e in auto threads uring; do
			drop_caches
			if [[ $e == auto ]]; then
				run_tool "pagecache warm ($e)" "$PAGECACHE" warm -q "$BIG"
			else
				run_tool "pagecache warm ($e)" "$PAGECACHE" warm -q --engine "$e" "$BIG"
			fi
			grep -h 'Read:' "$TMP/out" | sed 's/^ */      pagecache says: /' || true
			"$PAGECACHE" stat --json "$BIG" >"$TMP/big.json" 2>/dev/null || true
			c=$(json_get "$TMP/big.json" .total.cached); p=$(json_get "$TMP/big.json" .total.pages)
			[[ $c == "$p" ]] || { S3_RES[$e]="NO ($c/$p)"; say "      NOT fully resident: $c/$p pages"; }
		done
		if [[ $HAVE_VMTOUCH -eq 1 ]]; then
			drop_caches
			run_tool "vmtouch -t big" vmtouch -t -q -m 2G "$BIG"
		fi
		if [[ $HAVE_FIO -eq 1 ]]; then
			drop_caches
			run_tool "fio O_DIRECT" fio --name=seq --filename="$BIG" --rw=read --bs=1M --direct=1 \
				--ioengine=libaio --iodepth=32 --readonly --output-format=json
			bw=$(json_get "$TMP/out" '.jobs[0].read.bw_bytes' 2>/dev/null || echo 0)
			[[ $bw =~ ^[0-9.]+$ ]] || bw=0
			TIMES["fio bw"]+="$bw "
			# this round's ratios: the device's speed drifts between rounds
			for e in auto threads uring; do
				local_t=$(printf '%s\n' ${TIMES["pagecache warm ($e)"]} | tail -n 1)
				TIMES["pct $e"]+="$(awk -v b=$BIG_BYTES -v t="$local_t" -v f="$bw" 'BEGIN { if (t == 0 || f == 0) print 0; else printf "%.1f", 100 * b / t / f }') "
			done
			say "      fio read bandwidth: $(awk -v b="$bw" 'BEGIN { printf "%.0f", b / 1e6 }') MB/s"
		fi
	done
	S3_VM=$(med_of "vmtouch -t big")
	S3_FIO_BW=$(med_of "fio bw"); [[ $S3_FIO_BW == - ]] || S3_FIO_MBS=$(awk -v b="$S3_FIO_BW" 'BEGIN { printf "%.0f", b / 1e6 }')
	S3_FIO_MBS=${S3_FIO_MBS:--}
	declare -A S3_T
	for e in auto threads uring; do S3_T[$e]=$(med_of "pagecache warm ($e)"); done
fi

# ------------------------------------------------------ 4. stat sparse 1 TiB
if want 4; then
	say ""
	hr
	say "4. stat of the 1 TiB sparse file (time, peak RSS)"
	hr
	load_note
	"$PAGECACHE" stat "$SPARSE" >/dev/null 2>&1 || true
	for ((i = 1; i <= RUNS; i++)); do
		run_tool "pagecache stat 1T" "$PAGECACHE" stat "$SPARSE"
		if [[ $HAVE_VMTOUCH -eq 1 ]]; then run_tool "vmtouch 1T" timeout 120 vmtouch -m 2048G "$SPARSE"; fi
		if [[ $HAVE_FINCORE -eq 1 ]]; then run_tool "fincore 1T" timeout 120 fincore "$SPARSE"; fi
	done
	S4_PC=$(med_of "pagecache stat 1T"); S4_PC_RSS=$(rss_of "pagecache stat 1T")
	S4_VM=$(med_of "vmtouch 1T");        S4_VM_RSS=$(rss_of "vmtouch 1T")
	S4_FC=$(med_of "fincore 1T");        S4_FC_RSS=$(rss_of "fincore 1T")
fi

# ------------------------------------------------------------------ summary
verdict() { awk -v v="$1" -v op="$2" -v t="$3" 'BEGIN { if (v == "-") { print "n/a"; exit }
	ok = (op == ">=") ? v >= t : (op == "<=") ? v <= t : v < t; print ok ? "PASS" : "MISS" }'; }
say ""
hr
say "SUMMARY (median of runs; times in seconds, wall clock incl. process start)"
hr
row() { printf '%-44s %-28s %s\n' "$1" "$2" "$3"; }
row "measure" "figure" "target / result"

if want 1; then
	say ""
	say "1. stat tree, metadata cached"
	row "   pagecache stat" "$S1_PC s (rss $(mib "$S1_PC_RSS") MiB)" ""
	row "   vmtouch" "$S1_VM s" ""
	row "   floor (getdents+openat+cachestat, 2 thr)" "$S1_FL s" ""
	r=$(div "$S1_VM" "$S1_PC"); row "   speedup vs vmtouch (vmtouch/pagecache)" "${r}x" ">= 4x      $(verdict "$r" '>=' 4)"
	r=$(div "$S1_PC" "$S1_FL"); row "   pagecache / floor" "${r}x" "<= 1.3x    $(verdict "$r" '<=' 1.3)"
fi

if want 2; then
	say ""
	say "2. warm tree from cold"
	row "   pagecache warm -q" "$S2_PC s ($(mbps "$TREE_BYTES" "$S2_PC") MB/s)" ""
	row "   vmtouch -t" "$S2_VM s ($(mbps "$TREE_BYTES" "$S2_VM") MB/s)" ""
	row "   find | xargs cat (reference)" "$S2_CAT s ($(mbps "$TREE_BYTES" "$S2_CAT") MB/s)" ""
	r=$(div "$S2_VM" "$S2_PC"); row "   speedup vs vmtouch -t" "${r}x" ">= 6x      $(verdict "$r" '>=' 6)"
	r=$(div "$S2_CAT" "$S2_PC"); row "   speedup vs cat" "${r}x" ""
	row "   100% resident after pagecache warm" "$S2_FULL of $RUNS_COLD runs" "all        $([[ $S2_FULL -eq $RUNS_COLD ]] && echo PASS || echo MISS)"
	row "   every page read (cached + evicted)" "$S2_ALLREAD of $RUNS_COLD runs" ""
	[[ -z $S2_SHORT ]] || say "     short: ${S2_SHORT%; }"
fi

if want 3; then
	say ""
	say "3. warm 1.5 GiB file from cold"
	row "   fio O_DIRECT seq read (libaio, qd32, 1M)" "$S3_FIO_MBS MB/s" ""
	for e in auto threads uring; do
		t=${S3_T[$e]}; m=$(mbps "$BIG_BYTES" "$t")
		pct=$( [[ $S3_FIO_MBS == - || $m == - ]] && echo - || awk -v a="$m" -v b="$S3_FIO_MBS" 'BEGIN { printf "%.0f", 100 * a / b }')
		res=${S3_RES[$e]:-}
		pr=$(med_of "pct $e"); [[ $pr == - ]] || pr=$(printf '%.0f' "$pr")
		row "   pagecache warm --engine $e" "$t s ($m MB/s)" "$pct% of fio (per-round median $pr%)  >= 80%  $(verdict "$pr" '>=' 80)${res:+  resident: $res}"
	done
	row "   vmtouch -t -m 2G" "$S3_VM s ($(mbps "$BIG_BYTES" "$S3_VM") MB/s)" \
		"pagecache(auto) is $(div "$S3_VM" "${S3_T[auto]}")x faster"
fi

if want 4; then
	say ""
	say "4. stat 1 TiB sparse file"
	row "   pagecache stat" "$S4_PC s, $(mib "$S4_PC_RSS") MiB" "< 0.5 s $(verdict "$S4_PC" '<' 0.5), <= 16 MiB $(verdict "$(mib "$S4_PC_RSS")" '<=' 16)"
	row "   vmtouch -m 2048G" "$S4_VM s, $(mib "$S4_VM_RSS") MiB" ""
	row "   fincore" "$S4_FC s, $(mib "$S4_FC_RSS") MiB" ""
fi

if [[ ${#FAILS[@]} -gt 0 ]]; then
	say ""
	say "non-zero exits:"
	for k in "${!FAILS[@]}"; do say "   $k: ${FAILS[$k]}"; done
fi
say ""
[[ ${BUSY_MAX:-0} -le 10 ]] || say "note: other work used up to ${BUSY_MAX}% CPU before a section; rerun on a quiet machine for firm figures"
say "benchmark time: $(awk -v a="$T_START" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.0f", b - a }') s"
