#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench report: results drawn as one HTML file that stands alone. On the
# committed bench/results and on hand-made files: one document, each SVG
# XML, nothing outside it referenced, a chart per kind of input, the
# tables' numbers the files' (and bench compare's), hostile names escaped,
# odd numbers survived, errors naming the file, -o written atomically and
# never through a device, FIFO, directory or link. Then rendered by
# headless Chromium (make test-deps installs it) and the screenshot must
# not be blank. report-check.py does the reading.
. "$(dirname "$0")/lib.sh"
REPO=$(cd "$(dirname "$0")/../.." && pwd)
RES=$REPO/bench/results
FIX=$REPO/tests/fixtures/bench
CHECK="python3 $REPO/tests/cli/report-check.py"
cd "$T_DIR"

# check NAME SUBCOMMAND ARGS...: every line of report-check.py is one test
check() {
	local name=$1 line; shift
	$CHECK "$@" >chk.out 2>&1
	while IFS= read -r line; do
		case $line in
		ok\ *) t_ok "$name: ${line#ok }" true ;;
		*) t_ok "$name: $line" false ;;
		esac
	done <chk.out
	[ -s chk.out ] || t_ok "$name: report-check.py said nothing" false
}

# ---- usage ----
pc bench report >o 2>e; t_is "report without -o exits 2" $? 2
t_ok "and says -o is needed" grep -q "report needs -o FILE" e
pc bench report -o r.html >o 2>e; t_is "report without files exits 2" $? 2
pc bench report -o r.html --json "$FIX/swapin-a.json" >o 2>e; t_is "report with --json exits 2" $? 2
pc bench warmup -o r.html >o 2>e; t_is "-o is not an experiment's option (exit 2)" $? 2
t_ok "and says so" grep -q "output is not an option of warmup" e
t_ok "report is in bench --help" grep -q "report -o HTML RESULT.json" <(pc bench --help)

# ---- the committed results ----
W11=$RES/warmup-record-11trials-6.18-2vcpu.json W3=$RES/warmup-record-6.18-2vcpu.json
SW=$RES/swapin-6.18-2vcpu.json
pc bench report -o res.html "$W11" "$W3" "$SW" "$FIX/readtwice-a.json" "$FIX/swapin-b.json" >o 2>e
t_is "report of the committed results exits 0" $? 0
t_is "and says nothing" "$(cat e)" ""
t_is "the file is 0644" "$(stat -c %a res.html)" 644
pc bench compare "$W11" "$W3" --json >c1.json 2>/dev/null
pc bench compare "$SW" "$FIX/swapin-b.json" --json >c2.json 2>/dev/null
check "results" doc res.html :: \
	sections res.html warmup-1 warmup-2 readtwice swapin-1 swapin-2 compare-1 compare-2 :: \
	numbers res.html "$W11" "$W3" "$SW" "$FIX/readtwice-a.json" "$FIX/swapin-b.json" :: \
	compare res.html compare-1-table c1.json :: compare res.html compare-2-table c2.json :: \
	drawn res.html
# 4 workloads x 2 charts x 2 vma_ra settings, each with its tuner's run
t_is "the auto rows are marked in the swap-in charts" \
	"$(grep -c 'stroke-dasharray="6 4"' res.html)" 16

# every committed file: those that are not bench results are named, the rest drawn
pc bench report -o all.html "$RES"/*.json >o 2>e; rc=$?
t_is "report of bench/results/*.json exits 1 (not all are results)" $rc 1
t_ok "it names daemon's file" grep -q "not a bench result in '.*daemon-6.18-2vcpu.json'" e
# (counted by jq, as compare.c judges: a "bench" name and a "results" list;
# the count moves as results are committed)
notres=$(for f in "$RES"/*.json; do jq -e '(.bench | type) == "string" and (.results | type) == "array"' "$f" >/dev/null 2>&1 || echo "$f"; done | wc -l)
t_ok "some committed files are not results" test "$notres" -gt 0
t_is "and each file that is not a result is named" "$(grep -c 'not a bench result in' e)" "$notres"
t_ok "and still draws the rest" $CHECK sections all.html warmup-1 warmup-2 swapin-1 compare-1

# ---- hand-made: readtwice files with and without a limit, with 80 cgroups ----
rt() {	# rt FILE LAYOUT CGROUPS MEAN [LIMIT]
	printf '{"bench": "readtwice", "total": {%s}, "results": [{"cgroups": %s, "readers_per_cgroup": 2, "layout": "%s", "runs": 3, "metrics": {"aggregate_mbps": {"mean": %s, "stddev": 10, "min": %s, "max": %s, "values": [%s, %s, %s]}, "mean_mbps_per_reader": {"mean": 7, "stddev": 1}}}]}\n' \
		"${5:+\"limit_bytes\": $5}" "$3" "$2" "$4" "$(($4 - 10))" "$(($4 + 10))" "$(($4 - 10))" "$4" "$(($4 + 10))" >"$1"
}
rt rt1.json per-cgroup 1 1000; rt rt2.json per-cgroup 80 3000; rt rt3.json shared 80 2500
rt rt4.json shared 80 2000 536870912
pc bench report -o rt.html rt1.json rt2.json rt3.json rt4.json >o 2>e
t_is "report of four readtwice files exits 0" $? 0
check "readtwice" doc rt.html :: numbers rt.html rt1.json rt2.json rt3.json rt4.json :: drawn rt.html
t_is "one chart for them all" "$(grep -c '<svg' rt.html)" 1
t_ok "the limit is in the legend" grep -q '>shared, limit 512M<' rt.html
t_ok "80 cgroups is a category" grep -q '>80</text>' rt.html

# ---- hostile: names, numbers, rows ----
cat >hw.json <<'EOF'
{"bench": "warmup", "results": [
 {"condition": "<script>alert(1)</script>\"'&\u202e\u0007x</svg>", "runs": 3, "metrics": {
  "q1_ms": {"mean": 1e308, "min": -1e308, "max": 1e308, "stddev": 1, "better": "lower", "unit": "m\"s<"},
  "q2_ms": {"values": [-5, 0, 1e300], "better": "lower", "unit": "ms"},
  "q3_ms": {"mean": -20, "stderr": 1, "better": "lower", "unit": "ms"}}},
 {"condition": "cold", "runs": 2, "metrics": {"q1_ms": {"values": [1, 2]}, "q2_ms": {"mean": 5, "stddev": 0},
  "<b>q9</b>": {"mean": 1, "stddev": 0}}},
 {"condition": "bad", "runs": 1, "metrics": {"q1_ms": {"mean": "NaN"}}},
 {"condition": "listed", "runs": 1, "metrics": [{"mean": 1}]},
 "not a row", [1, 2]],
 "setup": {"<img src=x onerror=alert(1)>": "\u202egnp.exe", "n": 1e308, "deep": {"a": [1, {"b": "</table>"}]}}}
EOF
cat >hs.json <<'EOF'
{"bench": "swapin", "results": [
 {"workload": "seq\u202e<b>", "page_cluster": 0, "vma_ra": "<script>", "runs": 2, "metrics": {"real": {"values": [1, 2]}, "pgmajfault": {"values": [10, 1e300]}}},
 {"workload": "seq\u202e<b>", "page_cluster": 1e300, "vma_ra": "<script>", "runs": 2, "metrics": {"real": {"values": [3, 4]}}},
 {"workload": "seq\u202e<b>", "page_cluster": -3, "vma_ra": "off", "runs": 2, "metrics": {"real": {"values": [-3, -4]}}},
 {"workload": "seq\u202e<b>", "page_cluster": "auto", "vma_ra": "off", "runs": 2, "metrics": {"real": {"values": [2, 2]}, "auto_page_cluster": {"values": [1e300, 1e300]}}},
 {"workload": "random", "page_cluster": "nine", "runs": 1, "metrics": {}}]}
EOF
cat >hr.json <<'EOF'
{"bench": "readtwice", "total": {"limit_bytes": -1}, "results": [
 {"cgroups": -1, "layout": "<svg onload=alert(1)>", "runs": 1, "metrics": {"aggregate_mbps": {"mean": 1e308, "stddev": 0}}},
 {"cgroups": 1e300, "layout": "shared", "runs": 1, "metrics": {"aggregate_mbps": {"mean": -5, "stddev": 0}}},
 {"layout": "shared", "runs": 1, "metrics": {}}]}
EOF
printf '{"bench": "<i>x</i>\\u202e\\u2066", "results": [{"name": "a&b\\u0000"}]}\n' >nul.json
printf '{"bench": "<i>x</i>\\u202e\\u2066", "results": [{"name": "a&b", "runs": 2, "metrics": {"m<": {"values": [1, 2], "unit": "\\u2066u"}}}]}\n' >ho.json
cp hw.json hw2.json
pc bench report -o h.html hw.json hs.json hr.json ho.json hw2.json nul.json >o 2>e; rc=$?
t_is "report of hostile files exits 1 (a bad metric, a bad row, a NUL)" $rc 1
t_ok "the bad metric is named" grep -q "invalid metric in 'hw.json': row 'bad', metric 'q1_ms'" e
t_ok "the bad row is named" grep -q "invalid row in 'hw.json': results\[4\]" e
t_ok "metrics that are a list, a row that is a list: named" \
	grep -q "invalid row in 'hw.json': results\[3\].*results\[5\]" <(tr '\n' ' ' <e)
t_ok "the NUL is refused" grep -q "invalid bench result in 'nul.json'" e
t_ok "the report is written all the same" test -s h.html
check "hostile" doc h.html :: sections h.html warmup-1 warmup-2 readtwice swapin-1 compare-1
t_is "no <script in it" "$(grep -ci '<script' h.html)" 0
t_ok "the name is there, escaped" grep -qF '&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;[U+202E][U+0007]x&lt;/svg&gt;' h.html
t_is "no U+202E, U+2066 or BEL as itself" "$(grep -c $'\u202e\\|\u2066\\|\a' h.html)" 0
t_ok "an attribute name is text" grep -qF '&lt;img src=x onerror=alert(1)&gt;' h.html
t_ok "a huge value is in the table as it is" grep -qF '<td class="n">1e+308</td>' h.html
t_is "no NaN or inf reached the SVG" "$(grep -ciE '="[^"]*(nan|inf)' h.html)" 0

# ---- errors ----
pc bench report -o e.html nosuch.json >o 2>e; t_is "a missing file exits 1" $? 1
t_ok "and names it" grep -q "cannot read 'nosuch.json'" e
t_ok "nothing is written" test ! -e e.html
t_ok "and it says so" grep -q "no result to draw: 'e.html' not written" e
echo '{"a": 1}' >notres.json
pc bench report -o e.html notres.json >o 2>e; t_is "a JSON that is not a result exits 1" $? 1
t_ok "and names it" grep -q "not a bench result in 'notres.json'" e
head -c 500 "$SW" >cut.json
pc bench report -o e.html cut.json >o 2>e; t_is "a truncated JSON exits 1" $? 1
t_ok "and names it and the offset" grep -q "invalid JSON in 'cut.json': offset 500" e
pc bench report -o e.html cut.json "$FIX/swapin-a.json" >o 2>e; t_is "one bad file of two exits 1" $? 1
t_ok "and the other is drawn" $CHECK sections e.html swapin-1

# ---- -o: atomic, and never through what is not a regular file ----
# a device node of our own (null's numbers), not /dev/null: a report that wrongly
# replaced it would replace the machine's
mkdir dir.html; mkfifo fifo.html; targets="dir.html fifo.html"
if mknod dev.html c 1 3 2>/dev/null; then targets="$targets dev.html"
else t_skip "-o a device node" "cannot make one here (mknod needs CAP_MKNOD)"; fi
for t in $targets; do
	timeout 20 "$PAGECACHE" bench report -o "$t" "$FIX/swapin-a.json" >o 2>e; rc=$?
	t_is "-o $t is refused (exit 1)" $rc 1
	t_ok "saying why" grep -q "refusing to replace what is not a regular file: '$t'" e
done
t_ok "the FIFO is still a FIFO" test -p fifo.html
[ -e dev.html ] && t_ok "the device is still a device" test -c dev.html
t_ok "the directory is still empty" test -z "$(ls -A dir.html)"
echo precious >victim; ln -s victim link.html
pc bench report -o link.html "$FIX/swapin-a.json" >o 2>e; t_is "-o a symlink exits 0" $? 0
t_is "the file it points at is untouched" "$(cat victim)" precious
t_ok "the link is replaced by the report" test -f link.html -a ! -L link.html
echo old >keep.html
PAGECACHE_FAULT=rename:EIO pc bench report -o keep.html "$FIX/swapin-a.json" >o 2>e
t_is "a failing rename exits 1" $? 1
t_is "and the old file stays" "$(cat keep.html)" old
t_is "no temporary file is left" "$(ls -A | grep -c '\.tmp\.')" 0

# ---- rendered: headless Chromium, the screenshot not blank ----
if ! t_have chromium; then
	t_skip "rendering in headless Chromium" "$T_WHY"
	t_done; exit
fi
shot() {	# shot HTML PNG HEIGHT: a screenshot at half scale (fewer pixels to count)
	timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$T_DIR/chrome" --force-device-scale-factor=0.5 \
		--screenshot="$2" --window-size=1280,"$3" "file://$T_DIR/$1" >/dev/null 2>&1
}
shot res.html res.png 1400; t_ok "Chromium renders the results' report" test -s res.png
shot h.html h.png 1400; t_ok "Chromium renders the hostile report" test -s h.png
check "rendered" pixels res.png 0.04 :: pixels h.png 0.04
t_done
