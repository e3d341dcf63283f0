#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pagecache top: while a reader of our own reads a file it drops from the
# cache first (so every pass both uses and brings in pages): the JSON lines'
# shape (jq, field by field), the reader's row with accesses and misses,
# hit ratios within 0..1, --by file naming the file, --by cgroup naming
# the memory cgroup the test makes (systemd's \x2d escape kept), and the
# cgroup2 one where a separate cgroup2 hierarchy is mounted, --pid and
# --cgroup keeping only what they name; on a terminal (tmux): the header
# and rows in place, a key that sorts, q exits 0 with the terminal as it
# was (icanon, echo), and so does SIGTERM; refused without privilege; no
# tracefs mount left. Everything made here is removed at the end.
# Before Linux 6.12 (for real, or PAGECACHE_FAULT=filemap_get_pages:ENOENT
# here): misses and evictions only, "source": "misses", accesses and hit
# ratios null, sorted by misses (the total's accesses counted by a kprobe
# where the kernel has kprobes: "misses+kprobe"); the rest, which needs the
# use events, is skipped there.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

if ! t_root || ! t_have jq python3; then
	t_skip "top" "${T_WHY:-not root: top needs root or CAP_PERFMON}"
	t_done; exit
fi
mounts_before=$(grep -c ' - tracefs ' /proc/self/mountinfo)
export PC_TOP_TEST=$$	# marks this test's processes (others may trace beside it)
F=$T_DIR/data
mkfile "$F" 8192
# The reader: one long-lived process (so /proc has its name when top looks),
# named pc-top-reader, that drops the file and reads it again, over and over,
# 1 MiB a read(): the kernel reports such a read's remaining range in each of
# its batches, which top must not count again and again.
cat >reader.py <<'EOF'
import os, sys, time
with open('/proc/self/comm', 'w') as c:
    c.write('pc-top-reader')
while True:
    fd = os.open(sys.argv[1], os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    while os.read(fd, 1 << 20):
        pass
    os.close(fd)
    time.sleep(0.02)
EOF
# cgroups the reader goes into later (removed after it is killed: last in, first out)
root=$(ls -d /sys/fs/cgroup/memory 2>/dev/null || echo /sys/fs/cgroup)
self=$(awk -F: '$2=="memory"{print $3} $1=="0"{print $3}' /proc/self/cgroup | head -1)
self=${self%/}
[ "$root" = /sys/fs/cgroup ] && self=
CGN='pc-top\x2dv1-'$$'.scope'		# systemd's escape for "pc-top-v1-PID.scope"
CG=$root$self/$CGN
U=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -1)
U2="$U/pc-top\x2dv2-$$.scope"
T_CLEANUP+=("rmdir '$CG'" "[ -n '$U' ] && rmdir '$U2'")
python3 reader.py "$F" &
R=$!
T_CLEANUP+=("t_kill $R")
t_wait 10 grep -qx pc-top-reader "/proc/$R/comm"

# ---- before 6.12: misses and evictions (this kernel's, or pretended) ----
pc top --json --count 1 --interval 0.1 >src.json 2>&1
if jq -r .source src.json 2>/dev/null | grep -q '^misses'; then
	OLD=""	# the kernel lacks the use events: no pretending needed
else
	OLD="PAGECACHE_FAULT=filemap_get_pages:ENOENT"
fi
env $OLD "$PAGECACHE" top --json --by file --count 2 --interval 0.5 >m.json 2>m.err
t_is "before 6.12: top runs, saying its source is the misses" \
	"$? $(jq -r '.source | sub("[+]kprobe$"; "")' m.json | sort -u)" "0 misses"
t_is "  rows' accesses and hit ratios are null (unknown), never 0" \
	"$(jq '[.rows[]] | map(.accesses == null and .hit_ratio == null) | all' m.json | sort -u)" true
if grep -q '"source": "misses+kprobe"' m.json; then	# a kernel with kprobes
	t_ok "  with kprobes: the total's accesses are counted, its hit ratio within 0..1" \
		jq -se '.[-1].total | .accesses > 0 and .hit_ratio >= 0 and .hit_ratio <= 1' m.json
else
	t_is "  without kprobes: the total's accesses and hit ratio are null too" \
		"$(jq '.total | .accesses == null and .hit_ratio == null' m.json | sort -u)" true
fi
t_is "  the reader's file: misses and evictions (it drops and reads again)" \
	"$(jq -r --arg f "$F" '.rows[] | select(.key == $f) | (.misses > 0 and .evicted > 0)' m.json |
		sort -u | tail -1)" true
env $OLD "$PAGECACHE" top --count 1 --interval 0.3 >m.txt 2>&1
t_ok "  the text says misses only, hits unknown, sorted by misses" \
	sh -c 'grep -q "sort misses" m.txt && grep -Eq "accesses and hits unknown|accesses \(kprobe" m.txt'
if [ -z "$OLD" ]; then
	t_skip "top's use-event checks" "this kernel lacks the filemap use events (Linux 6.12)"
	t_done; exit
fi

# ---- JSON lines ----
pc top --json --count 2 --interval 0.5 >p.json 2>p.err
t_is "--json --count 2: exit 0, two lines" "$? $(wc -l <p.json)" "0 2"
t_is "each line one object with time, interval, by, source, rows, total" \
	"$(jq -c '[keys_unsorted[]]' p.json | sort -u)" '["time","interval","by","source","rows","total"]'
t_is "time is RFC 3339 UTC, interval about 0.5 s, by process" \
	"$(jq -r '[(.time | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\\.[0-9]{3}Z$")),
		   (.interval > 0.3 and .interval < 5), .by] | @tsv' p.json | sort -u)" "true	true	process"
t_is "each row: key, pid, comm, accesses, misses, hit_ratio, evicted, dirtied" \
	"$(jq -c '.rows[] | [keys_unsorted[]]' p.json | sort -u)" \
	'["key","pid","comm","accesses","misses","hit_ratio","evicted","dirtied"]'
t_is "total: the counts, rows, events, lost, /proc/meminfo's cache" \
	"$(jq -c '.total | [keys_unsorted[]]' p.json | sort -u)" \
	'["accesses","misses","hit_ratio","evicted","dirtied","rows","events","lost","lost_total","cached_bytes","dirty_bytes","writeback_bytes","buffers_bytes"]'
t_is "every hit ratio is null (nothing used) or within 0..1, never negative or over 1" \
	"$(jq '[.rows[], .total] | map(.hit_ratio | . == null or (. >= 0 and . <= 1)) | all' p.json | sort -u)" true
t_is "a row's hit ratio is (accesses - misses) / accesses, 0 when misses are more" \
	"$(jq '[.rows[] | select(.accesses > 0) | .hit_ratio - ([.accesses - .misses, 0] | max) / .accesses |
		fabs < 1e-9] | all' p.json | sort -u)" true
t_is "the reader's row: its name, accesses and misses (it drops and reads again)" \
	"$(jq -r --argjson r "$R" '.rows[] | select(.pid == $r) |
		"\(.key) \(.comm) \(.accesses > 0) \(.misses > 0)"' p.json | sort -u | head -1)" \
	"pc-top-reader[$R] pc-top-reader true true"
t_is "its hit ratio is low: it reads only pages it dropped (each batch of a read once, not 4.6x)" \
	"$(jq -r --argjson r "$R" '.rows[] | select(.pid == $r) | .hit_ratio < 0.5' p.json | sort -u)" true
t_is "the totals count at least the reader's pages" \
	"$(jq -r --argjson r "$R" '(.rows[] | select(.pid == $r)) as $x |
		.total.accesses >= $x.accesses and .total.misses >= $x.misses' p.json | sort -u)" true

# processes that live a few ms (a cat of a cached file), gone before /proc is
# read: named from the kernel's exec records, not "[exited]"
cp "$(command -v cat)" pctopcat
drop "$F"; cat "$F" >/dev/null
# The cats start once top's events are open: a child forked before that
# has no fork or exec record to be named by, and may be gone by the
# time its events are read (seen under ASan, where top starts slower)
rm -f cats.go
( while [ ! -e cats.go ]; do sleep 0.01; done
  for i in $(seq 1 300); do ./pctopcat "$F" >/dev/null; done ) &
C=$!
T_CLEANUP+=("t_kill $C")
"$PAGECACHE" top --json --count 2 --interval 0.5 --pid "$C" --children >s.json 2>s.err &
TP=$!
# its exec-record events (one a CPU) come first, then the tracepoints' (more)
t_wait 20 sh -c '[ "$(find /proc/$1/fd -lname "anon_inode:*perf_event*" 2>/dev/null | wc -l)" -gt "$2" ]' \
	- "$TP" "$((2 * $(getconf _NPROCESSORS_CONF)))"
touch cats.go
wait "$TP"
t_kill "$C"
t_is "short-lived processes keep their names (exec records), none is [exited]" \
	"$(jq -s '[.[].rows[].comm] | [(map(select(. == "pctopcat")) | length > 2),
		(map(select(. == "[exited]")) | length)]' -c s.json)" "[true,0]"

pc top --json --count 1 --interval 0.5 --by file >f.json 2>f.err
# the row's device: the file's; on an overlay (a container's root) the
# events name the real file in a layer, on a device other than the overlay's
# (the inode number is the same without xino)
if [ "$(stat -f -c %T "$F")" = overlayfs ]; then devq='!='; else devq='=='; fi
t_is "--by file: exit 0, the file by its path, with accesses and misses" \
	"$? $(jq -r --arg f "$F" '.by, (.rows[] | select(.key == $f) |
		"\(.dev '"$devq"' "'"$(stat -c '%Hd:%Ld' "$F")"'") \(.ino == '"$(stat -c %i "$F")"') \(.accesses > 0) \(.misses > 0)")' f.json | paste -sd' ')" \
	"0 file true true true true"

pc top --json --count 1 --interval 0.5 --pid "$R" >pid.json 2>pid.err
t_is "--pid: only that process's row" \
	"$? $(jq -r '.rows | map(.pid) | unique | map(tostring) | join(",")' pid.json)" "0 $R"
t_is "--pid: the totals are its own" \
	"$(jq -r '.total.accesses == .rows[0].accesses and .total.misses == .rows[0].misses' pid.json)" true

# ---- cgroups ----
if mkdir "$CG" 2>mk.err && echo "$R" >"$CG/cgroup.procs" 2>>mk.err; then
	pc top --json --count 1 --interval 0.5 --by cgroup >c.json 2>c.err
	t_is "--by cgroup: the reader's memory cgroup, \\x2d as it is, with accesses and misses" \
		"$? $(jq -r --arg n "/$CGN" '.rows[] | select(.key | endswith($n)) |
			"\(.accesses > 0) \(.misses > 0)"' c.json)" "0 true true"
	pc top --json --count 1 --interval 0.5 --cgroup "$CGN" >cf.json 2>cf.err
	t_is "--cgroup NAME: only the processes in it" \
		"$? $(jq -r '.rows | map(.pid) | unique | map(tostring) | join(",")' cf.json)" "0 $R"
	pc top --count 1 --interval 0.5 --by cgroup --sort key >c.txt 2>c.err
	t_ok "the table shows the name with its backslash escaped for people" \
		grep -qF "/pc-top\\\\x2dv1-$$.scope" c.txt
else
	for n in "--by cgroup: the reader's memory cgroup" "--cgroup NAME" "the table's cgroup name"; do
		t_skip "$n" "cannot make a memory cgroup: $(head -1 mk.err)"
	done
fi
# a cgroup2 hierarchy of its own (a hybrid system's /sys/fs/cgroup/unified):
# events carry the cgroup2 id, named by its path
U=$(awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i + 1) == "cgroup2") print $5; break } }' \
	/proc/self/mountinfo | head -1)
if [ -n "$U" ] && [ "$U" != "$root" ] && mkdir "$U/pc-top\\x2dv2-$$.scope" 2>mk2.err; then
	T_CLEANUP+=("rmdir '$U/pc-top\\x2dv2-$$.scope'")
	echo "$R" >"$U/pc-top\\x2dv2-$$.scope/cgroup.procs"
	pc top --json --count 1 --interval 0.5 --by cgroup >c2.json 2>c2.err
	t_is "--by cgroup: a cgroup2 cgroup by its path from the event's id" \
		"$? $(jq -r --arg k "/pc-top\\x2dv2-$$.scope" '.rows[] | select(.key == $k) |
			"\(.accesses > 0) \(.misses > 0)"' c2.json)" "0 true true"
	echo "$R" >"$U/cgroup.procs"
else
	t_skip "--by cgroup: a cgroup2 cgroup" "no cgroup2 hierarchy beside the memory one${U:+ ($(head -1 mk2.err 2>/dev/null))}"
fi

# ---- plain text ----
pc top --count 2 --interval 0.3 >t.txt 2>t.err
t_is "not a terminal, no --json: a table per interval, exit 0" \
	"$? $(grep -c '^  ACCESSES' t.txt) $(grep -c '^Total: ' t.txt) $(grep -c '^Memory: Cached ' t.txt)" "0 2 2 2"
t_ok "the reader's row in the table" grep -qE "^ +[0-9]+ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9]+ +$R pc-top-reader\$" t.txt

# ---- lost events: a one-page ring cannot hold a 1 MiB read's events ----
PAGECACHE_TRACE_RING=1 pc top --json --count 2 --interval 0.5 --pid "$R" >l.json 2>l.err
t_is "a one-page ring: exit 0, events lost and said in total.lost" \
	"$? $(jq -s '(map(.total.lost) | add) > 0' l.json)" "0 true"
t_is "lost_total is the sum so far" "$(jq -s '.[1].total.lost_total == .[0].total.lost + .[1].total.lost' l.json)" true
PAGECACHE_TRACE_RING=1 pc top --count 2 --interval 0.5 --pid "$R" >l.txt 2>l.err
t_ok "the table says LOST, and so does stderr at the end" \
	eval 'grep -q "^LOST [0-9]* events this interval" l.txt && grep -q "events lost (ring overflow)" l.err'
PAGECACHE_TRACE_RING=3 pc top --count 1 >/dev/null 2>e.err
t_is "PAGECACHE_TRACE_RING not a power of two: a usage error" "$?" 2

# ---- a terminal ----
if t_have tmux; then
	S=pc-top-$$
	T_CLEANUP+=("tmux -L $S kill-server")
	tmux -L "$S" -f /dev/null new-session -d -x 150 -y 40 \
		"stty -a >stty.before; '$PAGECACHE' top --interval 0.3; echo \$? >rc; stty -a >stty.after; sleep 30"
	shown() { tmux -L "$S" capture-pane -p >pane; grep -q "$1" pane; }
	t_wait 10 shown "pc-top-reader"
	t_ok "in tmux: the header, the system line and the rows, in place" \
		eval 'grep -q "^pagecache top - .*by process" pane && grep -q "^Total: " pane &&
		      grep -q "^  ACCESSES .* COMMAND" pane && grep -q " $R pc-top-reader" pane'
	tmux -L "$S" send-keys m
	t_ok "the key m sorts by misses" t_wait 5 shown "sort misses"
	tmux -L "$S" send-keys q
	t_wait 10 test -s stty.after	# written after rc
	t_is "q: exit 0" "$(cat rc 2>/dev/null)" 0
	t_is "the terminal as it was (stty -a)" "$(diff stty.before stty.after >/dev/null && echo same)" same
	tmux -L "$S" kill-server
	rm -f rc stty.after
	S=pc-top2-$$	# a server of its own: the old one may still be going away
	T_CLEANUP+=("tmux -L $S kill-server")
	tmux -L "$S" -f /dev/null new-session -d -x 150 -y 40 \
		"stty -a >stty.before; '$PAGECACHE' top --interval 0.3; echo \$? >rc; stty -a >stty.after; sleep 30"
	t_wait 10 shown "ACCESSES"
	TOP=$(pgrep -f -n "^$PAGECACHE top --interval 0.3\$")
	t_ok "top holds perf events while it runs" \
		eval '[ -n "$TOP" ] && ls -l /proc/$TOP/fd | grep -q "anon_inode:\[perf_event\]"'
	kill -TERM "$TOP"
	t_wait 10 test -s stty.after	# written after rc
	t_is "SIGTERM: exit 0, the terminal as it was" \
		"$(cat rc 2>/dev/null) $(diff stty.before stty.after >/dev/null && echo same)" "0 same"
	tmux -L "$S" kill-server
else
	for n in "in tmux" "the key m" "q: exit 0" "the terminal as it was" "perf events" "SIGTERM"; do
		t_skip "$n" "$T_WHY"
	done
fi

# ---- refusals ----
nobody_pc top --count 1 --interval 0.2 >n.out 2>n.err
t_is "not root: exit 1, nothing on stdout" "$? $(wc -c <n.out)" "1 0"
t_ok "and it says what it needs" grep -q "cannot trace.*CAP_PERFMON" n.err
nobody_pc top --json --count 1 --interval 0.2 >n.json 2>/dev/null
t_is "--json: the error as JSON" "$? $(jq -r '.errors[0].error' n.json)" "1 cannot trace"
pc top --by bogus >/dev/null 2>e.err
t_is "--by bogus: a usage error" "$?" 2
pc top --children >/dev/null 2>e.err
t_is "--children without --pid: a usage error" "$?" 2
pc top --count 0 >/dev/null 2>e.err
t_is "--count 0: a usage error" "$?" 2
pc top --json --interval 0 >u.json 2>/dev/null
t_is "--json: a usage error as JSON" "$? $(jq -r '.usage.exit' u.json)" "2 2"
"$PAGECACHE" top --json --interval 0.3 >k.json 2>/dev/null &
K=$!
T_CLEANUP+=("t_kill $K")
t_wait 10 test -s k.json
kill -KILL "$K"; wait "$K" 2>/dev/null
t_is "no tracefs mount left behind, kill -9 included" \
	"$(grep -c ' - tracefs ' /proc/self/mountinfo)" "$mounts_before"
t_is "and no process of this test holds a perf event" \
	"$(for p in $(grep -lzx "PC_TOP_TEST=$$" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3); do
		ls -l /proc/$p/fd 2>/dev/null; done | grep -c 'perf_event')" 0
t_done
