#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench compare: two result files side by side, mmtests style. Exit codes,
# the JSON keys, the Welch marks, the sign of the change and the rows that
# only one file has. Fixtures: tests/fixtures/bench/ (hand-written; the
# seq real metric is clearly faster in B, seq pswpin is noise, and the
# "seq pc=auto" row is only in A).
. "$(dirname "$0")/lib.sh"
FIX=$(cd "$(dirname "$0")/../fixtures/bench" && pwd)
A=$FIX/swapin-a.json
B=$FIX/swapin-b.json
RT=$FIX/readtwice-a.json
cd "$T_DIR"

# ---- usage and unreadable files ----
pc bench compare >o 2>e; t_is "no files exits 2" $? 2
pc bench compare "$A" >o 2>e; t_is "one file exits 2" $? 2
pc bench compare "$A" nosuch.json >o 2>e; t_is "a missing file exits 1" $? 1
t_ok "and names it" grep -q "nosuch.json" e
pc bench compare "$A" "$RT" >o 2>e; t_is "results of different benches exit 2" $? 2
t_ok "the message names both benches" grep -q "swapin.*readtwice" e
head -c 300 "$A" >cut.json
pc bench compare "$A" cut.json >o 2>e; t_is "corrupt JSON exits 1" $? 1
t_ok "the message names the file and the offset" grep -q "cut.json.*offset 300" e
pc bench compare cut.json "$B" --json >o 2>e; rc=$?
t_is "corrupt JSON with --json exits 1" $rc 1
t_ok "stdout stays valid JSON" jq -e . o
t_is "the error is in the errors list" "$(jq -r '.errors[0].path' o)" cut.json
t_ok "its reason gives the offset" jq -e '.errors[0].reason | test("offset 300")' o
echo '{"bench": "compare", "comparisons": []}' >noresults.json
pc bench compare noresults.json "$B" >o 2>e; t_is "a file without results exits 1" $? 1
t_ok "and says what is missing" grep -q 'no "results"' e

# ---- the comparison, as JSON ----
pc bench compare "$A" "$B" --json >c.json 2>c.err; rc=$?
t_is "compare exits 0" $rc 0
t_ok "its JSON is valid" jq -e . c.json
t_is "matched rows, every metric" "$(jq '.comparisons | length' c.json)" 5
for k in row metric better mean_kind base_mean new_mean base_stddev new_stddev pdiff welch_p \
	significant mmtests_significant runs_base runs_new; do
	t_is "comparisons have $k" "$(jq "[.comparisons[] | has(\"$k\")] | all" c.json)" true
done
sel() { jq -r ".comparisons[] | select(.row == \"$1\" and .metric == \"$2\") | $3" c.json; }
t_is "rows are labelled by identity" "$(jq -r '[.comparisons[].row] | unique | join(",")' c.json)" \
	"random pc=0 vma=off,seq pc=3 vma=on"
t_is "a clear change is significant" "$(sel 'seq pc=3 vma=on' real .significant)" true
t_is "and passes the mmtests rule" "$(sel 'seq pc=3 vma=on' real .mmtests_significant)" true
t_ok "its p is small" jq -e '.comparisons[] | select(.row == "seq pc=3 vma=on" and .metric == "real")
	| .welch_p < 0.001' c.json
t_is "noise is not significant" "$(sel 'seq pc=3 vma=on' pswpin .significant)" false
t_is "faster is better for a time" "$(sel 'seq pc=3 vma=on' real .better)" lower
t_ok "a lower time gives a positive pdiff" jq -e '.comparisons[] |
	select(.row == "seq pc=3 vma=on" and .metric == "real") | .pdiff > 10 and .pdiff < 11' c.json
t_is "runs are reported" "$(sel 'seq pc=3 vma=on' real '"\(.runs_base) \(.runs_new)"')" "5 5"
t_is "a hit percentage is higher-is-better by its name" \
	"$(sel 'seq pc=3 vma=on' ra_hit_percent .better)" higher
t_is "and shown as Hmean (per-run values, all positive)" \
	"$(sel 'seq pc=3 vma=on' ra_hit_percent .mean_kind)" hmean
t_is "a time is shown as Amean" "$(sel 'seq pc=3 vma=on' real .mean_kind)" amean
t_is "rows match whatever the member order and number spelling" \
	"$(sel 'random pc=0 vma=off' real .new_mean)" 2.45
t_ok "without values, stddev is stderr * sqrt(runs)" jq -e '.comparisons[] |
	select(.row == "random pc=0 vma=off" and .metric == "real") |
	(.base_stddev - 0.05 * (5 | sqrt) | fabs) < 1e-4' c.json
t_ok "and Welch still runs" jq -e '.comparisons[] |
	select(.row == "random pc=0 vma=off" and .metric == "real") | .welch_p > 0.5' c.json
t_is "the row only in A is listed" "$(jq -r '.unmatched | map("\(.row)/\(.only_in)") | join(",")' c.json)" \
	"seq pc=auto vma=on/base"
t_is "with its identity" "$(jq -c '.unmatched[0].identity' c.json)" \
	'{"page_cluster":"auto","vma_ra":"on","workload":"seq"}'
t_is "setup names the bench" "$(jq -r .setup.bench c.json)" swapin
t_is "and the test" "$(jq -r '"\(.setup.test) \(.setup.alpha)"' c.json)" "welch 0.05"
t_is "no errors" "$(jq '.errors | length' c.json)" 0
t_is "5 runs a side: no warning" "$(cat c.err)" ""

# ---- pipes: bench compare <(cmd) <(cmd) ----
pc bench compare <(cat "$A") <(cat "$B") --json >p.json 2>p.err; rc=$?
t_is "compare reads pipes (exit 0)" $rc 0
t_is "and finds the same rows" "$(jq '.comparisons | length' p.json)" 5
pc bench compare <(head -c 70000000 /dev/zero | tr '\0' ' ') "$B" >o 2>e; rc=$?
t_is "a stream over 64 MiB exits 1" $rc 1
t_ok "and says so" grep -q "larger than the limit" e

# ---- the comparison, for people ----
pc bench compare "$A" "$B" >h.txt 2>h.err; rc=$?
t_is "human compare exits 0" $rc 0
t_ok "the significant mean is marked *...*" grep -Eq '^Amean +real +1\.23 \(   0\.00%\) +1\.10 \* +10\.42%\*$' h.txt
t_ok "the other is in (...)" grep -Eq '^Amean +pswpin +1000\.00 \(   0\.00%\) +1001\.20 \( +-0\.12%\)$' h.txt
t_ok "Hmean rows for rates" grep -Eq '^Hmean +ra_hit_percent ' h.txt
t_ok "Min, Stddev, CoeffVar and Max rows" sh -c "grep -q '^Min ' h.txt && grep -q '^Stddev ' h.txt &&
	grep -q '^CoeffVar ' h.txt && grep -q '^Max ' h.txt"
t_ok "the unmatched row is named" grep -q "only in base.*seq pc=auto vma=on" h.txt
t_ok "the test is stated" grep -q "^significance: Welch's t-test, two-sided, alpha 0.05" h.txt

# ---- few runs, rates, broken metrics ----
pc bench compare "$RT" "$RT" --json >r.json 2>r.err; rc=$?
t_is "readtwice results compare" $rc 0
t_ok "fewer than 5 runs warns" grep -q "fewer than 5 runs the marks are noise" r.err
t_is "aggregate_mbps is higher-is-better, Hmean" \
	"$(jq -r '.comparisons[0] | "\(.row): \(.better) \(.mean_kind)"' r.json)" "cgroups=4 shared: higher hmean"
t_is "no change: pdiff 0, not significant" \
	"$(jq -r '.comparisons[0] | "\(.pdiff) \(.significant)"' r.json)" "0 false"
cat >broken.json <<'EOF'
{"bench": "swapin", "results": [
  {"workload": "seq", "page_cluster": 3, "vma_ra": "on", "runs": 5, "metrics": {
    "real": {"stderr": 0.01},
    "pswpin": {"mean": 1001, "stderr": 3.1},
    "swap_ra": {"mean": 5, "stderr": 1}
  }},
  "not a row"
]}
EOF
pc bench compare "$A" broken.json --json >b.json 2>b.err; rc=$?
t_is "a metric without a mean exits 1" $rc 1
t_ok "and says which" grep -q "row 'seq pc=3 vma=on', metric 'real': no numeric \"mean\"" b.err
t_ok "a row that is not an object is named" grep -q 'results\[1\] is not an object' b.err
t_is "the good metric is still compared" "$(jq -r '[.comparisons[].metric] | join(",")' b.json)" pswpin
t_is "metrics on one side only are listed" \
	"$(jq -r '[.unmatched[] | select(.metric) | "\(.metric)/\(.only_in)"] | join(",")' b.json)" \
	"ra_hit_percent/base,swap_ra/new"
# ---- hostile names: a row's identity is printed with DEL and C1 escaped ----
cat >c1.json <<'EOF'
{"bench": "swapin", "results": [
  {"workload": "c1\u009b[2J\u007f", "runs": 5, "metrics": {"real": {"mean": 1, "stderr": 0.1}}}
]}
EOF
pc bench compare c1.json "$A" --json >c1o.json 2>c1.err
t_ok "the unmatched row's identity is valid JSON" jq -e '.unmatched[0].identity.workload' c1o.json
t_is "and reads back as the name" \
	"$(jq -r '.unmatched[0].identity.workload' c1o.json | od -An -tx1 | tr -d ' \n')" "6331c29b5b324a7f0a"
t_ok "no raw DEL or C1 byte on stdout" sh -c "! LC_ALL=C grep -q \"\$(printf '[\\177\\302]')\" c1o.json"
t_ok "the identity has them as \\u00XX" grep -qF '{"workload":"c1\u009b[2J\u007f"}' c1o.json
# ---- a NUL in a name: refused, not cut short ("a\u0000x" and "a\u0000y" were both "a") ----
cat >nul.json <<'EOF'
{"bench": "swapin", "results": [
  {"workload": "a\u0000x", "runs": 5, "metrics": {"real": {"mean": 1, "stderr": 0.1}}},
  {"workload": "a\u0000y", "runs": 5, "metrics": {"real": {"mean": 2, "stderr": 0.1}}}
]}
EOF
cat >nulkey.json <<'EOF'
{"bench": "swapin", "results": [
  {"workload": "seq", "page_cluster": 3, "vma_ra": "on", "runs": 5,
   "metrics": {"real\u0000x": {"mean": 1, "stderr": 0.1}}}
]}
EOF
cat >nulunit.json <<'EOF'
{"bench": "swapin", "results": [
  {"workload": "seq", "page_cluster": 3, "vma_ra": "on", "runs": 5,
   "metrics": {"real": {"mean": 1, "stderr": 0.1, "unit": "s\u0000ms"}}}
]}
EOF
pc bench compare nul.json nul.json >o 2>e; t_is "a NUL in a row's string exits 1" $? 1
t_ok "and says where" grep -q "invalid bench result in 'nul.json': a string in results\[0\].workload holds a NUL" e
t_ok "no row is compared" sh -c '! grep -q "^a" o'
pc bench compare "$A" nulkey.json --json >o 2>e; t_is "a NUL in a metric name exits 1" $? 1
t_is "it is in the errors list" "$(jq -r '.errors[0].reason' o)" \
	"a member name in results[0].metrics holds a NUL (U+0000), which no bench writes"
t_is "and nothing is compared" "$(jq '.comparisons | length' o)" 0
pc bench compare "$A" nulunit.json >o 2>e; t_is "a NUL in a unit exits 1" $? 1
t_ok "and says where" grep -q "results\[0\].metrics.real.unit holds a NUL" e
t_done
