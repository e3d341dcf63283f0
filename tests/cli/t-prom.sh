#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --prom: every command's Prometheus text passes `promtool check metrics`
# (HELP, TYPE, base units, _total on counters), alone and all together (a
# prefix per command: no duplicate series in one textfile directory); each
# metric is listed in docs/metrics.md; series per file only with
# --prom-per-file, any file name a lossless UTF-8 label; --prom-file
# replaces its file atomically, and a failed write leaves the old one and
# no temporary file.
. "$(dirname "$0")/lib.sh"
DOC=$(cd "$(dirname "$0")/../../docs" && pwd)/metrics.md
FIX=$(cd "$(dirname "$0")/../fixtures/bench" && pwd)
cd "$T_DIR"
PS=$(getconf PAGESIZE)
# make check's second pass injects cachestat:ENOSYS: keep it beside ours
fault() { PAGECACHE_FAULT="${PAGECACHE_FAULT:+$PAGECACHE_FAULT,}$1" "${@:2}"; }

if ! t_have promtool python3; then
	t_skip "promtool checks" "$T_WHY is not installed (apt-get install prometheus python3)"
	t_done
	exit
fi
# clean FILE: not empty, and promtool has nothing to say (exit 1: not the
# format, 3: lint)
clean() { [ -s "$1" ] && promtool check metrics <"$1" >"$1.pt" 2>&1 && ! [ -s "$1.pt" ]; }
# documented FILE: every metric family in FILE is in docs/metrics.md
documented() {
	local m
	for m in $(sed -n 's/^# TYPE \([^ ]*\) .*/\1/p' "$1"); do
		grep -qF "\`$m\`" "$DOC" || { echo "$m is not in docs/metrics.md"; return 1; }
	done
}

mkdir -p d out
mkfile d/a 64
mkfile d/b 16
cat d/a d/b >/dev/null

# ---- each command alone ----
pc stat --prom d >out/stat.prom
pc warm --prom d >out/warm.prom
pc snapshot -o s1.snap --prom d >out/snapshot.prom
pc show --prom s1.snap >out/show.prom
pc evict --prom d/b >out/evict.prom
pc snapshot -o s2.snap d >/dev/null
pc diff --prom s1.snap s2.snap >out/diff.prom
pc restore --prom s1.snap >out/restore.prom
pc bench compare --prom "$FIX/swapin-a.json" "$FIX/swapin-b.json" >out/bench_compare.prom
CMDS="stat warm snapshot show evict diff restore bench_compare"
if pc cgroups --prom >cg.prom 2>cg.err; then
	mv cg.prom out/cgroups.prom
	CMDS="$CMDS cgroups"
else
	t_skip "cgroups --prom" "no memory cgroup here: $(head -n1 cg.err)"
fi
if pc tune swap --interval 0.05 --prom >tune.prom 2>tune.err; then
	mv tune.prom out/tune_swap.prom
	CMDS="$CMDS tune_swap"
else
	t_skip "tune swap --prom" "$(head -n1 tune.err)"
fi
"$PAGECACHE" lock --prom d/a >lock.prom 2>lock.err &	# not pc: $! is the binary
LOCK=$!
T_CLEANUP+=("t_kill $LOCK")
if t_wait 10 grep -q last_run_timestamp lock.prom; then
	mv lock.prom out/lock.prom
	CMDS="$CMDS lock"
else
	t_skip "lock --prom" "cannot lock here: $(head -n1 lock.err)"
fi
t_kill "$LOCK"
for c in $CMDS; do
	t_ok "promtool passes ${c/_/ } --prom" clean "out/$c.prom"
	t_ok "and each of its metrics is in docs/metrics.md" documented "out/$c.prom"
	t_ok "and it says when it ran" grep -q "^pagecache_${c}_last_run_timestamp_seconds [0-9]" "out/$c.prom"
	t_ok "and every name has its command's prefix" sh -c "! grep -v '^#' out/$c.prom | grep -qv '^pagecache_${c}_'"
done
t_is "stat: cached bytes in bytes, whole pages" \
	"$(sed -n 's/^pagecache_stat_cached_bytes //p' out/stat.prom)" $(((16 + 64) * 1024 / PS * PS))
t_is "--prom alone: totals, no series per file" "$(grep -c 'path=' out/*.prom | grep -vc ':0$')" 0
t_ok "no rate where the counter belongs" sh -c "! grep -q '_per_s' out/*.prom"

# ---- all together, as in one textfile directory ----
cat out/*.prom >all.txt
t_ok "promtool passes all of them together (no metric twice)" clean all.txt
t_is "no series twice" "$(grep -v '^#' all.txt | sed 's/ [^ ]*$//' | sort | uniq -d)" ""

# ---- --prom-per-file: any name, a lossless UTF-8 label ----
mkdir h
for n in 'q"uote' 'back\slash' $'new\nline' $'bad\xffbyte' 'bad\xffbyte' $'tab\tand\e[2J' 'plain' 'ünï'; do
	printf x >"h/$n"
done
NH=$(find h -type f -printf x | wc -c)
pc stat --prom-per-file h >pf-stat.prom
pc warm --prom-per-file h >pf-warm.prom
pc snapshot -o h.snap h >/dev/null
pc show --prom-per-file h.snap >pf-show.prom
pc evict --prom-per-file h >pf-evict.prom
pc restore --prom-per-file h.snap >pf-restore.prom
for f in pf-*.prom; do
	t_ok "promtool passes ${f%.prom} with hostile names" clean "$f"
	t_ok "and each of its metrics is in docs/metrics.md" documented "$f"
done
t_is "a series per file" "$(grep -c '^pagecache_stat_file_size_bytes{' pf-stat.prom)" "$NH"
t_ok "labels are UTF-8" iconv -f UTF-8 -t UTF-8 -o /dev/null pf-stat.prom
# undo the format's escapes, then JSON's text escapes (\xHH for a byte that
# is not UTF-8, \\ for a backslash that could read as one): exact names
cat >decode.py <<'EOF'
import os, re, sys
got = set()
for line in open(sys.argv[1], encoding="utf-8"):
    m = re.match(r'pagecache_stat_file_size_bytes\{path="((?:[^"\\]|\\.)*)"\}', line)
    if not m:
        continue
    v = re.sub(r'\\(.)', lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), m.group(1))
    v = re.sub(r'\\(\\|x[89a-f][0-9a-f])', lambda e: "\\" if e.group(1) == "\\"
               else chr(0xdc00 + int(e.group(1)[1:], 16)), v)
    got.add(v.encode("utf-8", "surrogateescape"))
want = {b"h/" + n for n in os.listdir(b"h")}
sys.exit(0 if got == want else print(sorted(got ^ want)) or 1)
EOF
t_ok "each label decodes to its file's exact name" python3 decode.py pf-stat.prom
t_ok "a byte 0xff and the text \\xff are two labels" \
	sh -c 'grep -qF "path=\"h/bad\\\\xffbyte\"" pf-stat.prom && grep -qF "path=\"h/bad\\\\\\\\xffbyte\"" pf-stat.prom'
pc stat -H --prom-per-file d/a d/a >dup.prom
t_ok "a path given twice is one series" clean dup.prom

# ---- --prom-file: atomic ----
mkdir tf
pc stat --prom-file tf/stat.prom d >o 2>e; rc=$?
t_is "--prom-file exits 0" "$rc" 0
t_is "and prints nothing" "$(cat o)" ""
t_ok "the file passes promtool" clean tf/stat.prom
rm -f tf/stat.prom.pt
t_is "mode 0644: a collector running as another user reads totals" "$(stat -c %a tf/stat.prom)" 644
cp tf/stat.prom old.prom
for f in write:ENOSPC fsync:EIO rename:EIO; do
	fault "$f" "$PAGECACHE" stat --prom-file tf/stat.prom d >o 2>e; rc=$?
	t_is "$f: exits 1" "$rc" 1
	t_ok "and says so, naming the file" grep -q "cannot write 'tf/stat.prom'" e
	t_ok "the old file stays as it was" cmp -s tf/stat.prom old.prom
	t_is "and no temporary file is left" "$(ls -A tf)" "stat.prom"
done
pc stat --prom-file nodir/x.prom d >o 2>e; rc=$?
t_is "a missing directory exits 1" "$rc" 1
echo keep >target
ln -s "$T_DIR/target" tf/link.prom
pc stat --prom-file tf/link.prom d >o 2>e
t_is "a symlink at FILE is replaced, not followed" "$(cat target)" keep
t_ok "by the file" test -f tf/link.prom -a ! -L tf/link.prom
pc stat --prom-per-file --prom-file tf/pf.prom d >o 2>e
t_is "--prom-per-file: mode 0640 (labels name other users' files)" "$(stat -c %a tf/pf.prom)" 640
t_ok "with a series per file" grep -q '^pagecache_stat_file_cached_bytes{path="d/a"}' tf/pf.prom
pc stat --json --prom-file x.prom d >o 2>e; rc=$?
t_is "--json with --prom-file is a usage error" "$rc" 2
t_ok "and no file is written" test ! -e x.prom

# a device node, FIFO or directory where the file should go is never
# replaced (root's --prom-file /dev/null must not make /dev/null a file)
mknod tf/nulldev c 1 3 2>/dev/null && have_node=1 || have_node=
mkfifo tf/fifo; mkdir tf/dir.prom
for t in ${have_node:+nulldev} fifo dir.prom; do
	pc stat --prom-file "tf/$t" d >o 2>e; rc=$?
	t_is "--prom-file onto tf/$t (not a regular file): refused, exit 2" "$rc $(grep -c 'is not a regular file' e)" "2 1"
done
[ -n "$have_node" ] && t_is "and the device node is still one" "$(stat -c %F tf/nulldev)" "character special file"
t_is "the FIFO is still a FIFO" "$(stat -c %F tf/fifo)" fifo


# ---- --prom-label: runs of one command share a textfile directory ----
# node_exporter merges every file of the directory into one scrape; two
# stat outputs without a label that tells them apart are the same series,
# which it refuses ("collected before with the same name and label values")
pc stat --prom-label db=one --prom-file out/one.prom d/a >o 2>e; rc1=$?
pc stat --prom-label db=two --prom-label 'note=a"b\c' --prom-per-file --prom-file out/two.prom d/b >o 2>e; rc2=$?
t_is "--prom-label runs exit 0" "$rc1 $rc2" "0 0"
t_ok "every series of a run carries its labels, the timestamp too" \
	sh -c '! grep -v "^#" out/one.prom | grep -qv "{db=\"one\"}"'
t_ok "before the row's own labels, escaped as the format wants" \
	grep -qF 'pagecache_stat_file_cached_bytes{db="two",note="a\"b\\c",path="d/b"}' out/two.prom
t_ok "and each passes promtool" sh -c 'promtool check metrics <out/one.prom && promtool check metrics <out/two.prom'
for bad in path=x 1x=y __x=y noeq =v; do
	pc stat --prom-label "$bad" d >o 2>e; rc=$?
	t_is "--prom-label '$bad' is a usage error that says why" "$rc $(grep -c -- '^pagecache stat: --prom-label' e)" "2 1"
done
pc stat --prom-label a=1 --prom-label a=2 d >o 2>e
t_is "a label given twice is a usage error" "$? $(grep -c 'given twice' e)" "2 1"
if t_have prometheus-node-exporter curl; then
	# scrape(DIR): node_exporter's textfile collector on DIR; the scrape in
	# DIR.scrape, its log in DIR.log
	scrape() {
		local port pid
		for port in $(shuf -i 20000-60000 -n 5); do
			prometheus-node-exporter --collector.disable-defaults --collector.textfile \
				--collector.textfile.directory="$1" --web.listen-address=127.0.0.1:$port \
				>"$1.log" 2>&1 &
			pid=$!
			if t_wait 10 curl -sf -o "$1.scrape" "http://127.0.0.1:$port/metrics"; then
				kill "$pid"; wait "$pid" 2>/dev/null
				return 0
			fi
			kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		done
		return 1
	}
	mkdir ne1 ne2
	cp out/one.prom out/two.prom ne1/
	pc stat --prom-file ne2/a.prom d/a; pc stat --prom-file ne2/b.prom d/b
	if scrape ne1 && scrape ne2; then
		t_is "node_exporter scrapes both labelled runs, without an error" \
			"$(grep -c '^pagecache_stat_files{' ne1.scrape) $(grep -c 'collected before' ne1.log)" "2 0"
		t_ok "the scrape passes promtool" promtool check metrics <ne1.scrape
		t_ok "(without labels, node_exporter refuses the second run's series)" \
			grep -q 'pagecache_stat_files.*collected before with the same name and label values' ne2.log
	else
		t_skip "node_exporter scrapes" "node_exporter did not answer on 127.0.0.1 (see ne1.log)"
	fi
else
	t_skip "node_exporter scrapes" "$T_WHY"
fi

# every command that lists --prom-label takes it (cgroups, status, show,
# diff, restore, record and tune took their --prom but refused the label)
pc snapshot -o lbl.snap d >/dev/null 2>&1
pc show --prom --prom-label site=a lbl.snap >lbl.prom 2>lbl.err; rc=$?
t_is "show --prom-label: exit 0" "$rc" 0
t_ok "  its series carry the label" grep -q '^pagecache_show_files{site="a"}' lbl.prom

t_done
