#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# bench swapin and tune swap: the output's shape, readahead really
# happening on the swap the bench sets up, and the system left as found
# (sysctls, sysfs knobs, swaps, zram and loop devices, cgroups), after
# SIGINT too. Behaviour only: no timing is asserted.
. "$(dirname "$0")/lib.sh"
cd "$T_DIR"

pc bench swapin --page-cluster 0,0 >o 2>e; t_is "a repeated page-cluster exits 2" $? 2
pc bench swapin --page-cluster 12 >o 2>e; t_is "page-cluster 12 exits 2" $? 2
pc bench swapin --workload seq,sideways >o 2>e; t_is "an unknown workload exits 2" $? 2
pc bench swapin --vma-ra maybe >o 2>e; t_is "a bad --vma-ra exits 2" $? 2
pc bench swapin --working-set 64M --limit 64M >o 2>e; t_is "a limit not below the working set exits 2" $? 2
t_ok "and says why" grep -q "must be below the working set" e
pc bench swapin --swap-device floppy >o 2>e; t_is "an unknown swap device exits 2" $? 2
pc tune >o 2>e; t_is "tune without a tunable exits 2" $? 2
pc tune memory >o 2>e; t_is "an unknown tunable exits 2" $? 2
pc tune swap --duration 3 >o 2>e; t_is "--duration without --auto exits 2" $? 2
pc tune swap --min 4 --max 2 >o 2>e; t_is "--min above --max exits 2" $? 2

pc tune swap -i 0.1 --json >t.json 2>t.err; t_is "tune swap exits 0" $? 0
for k in page_cluster vma_ra_enabled vma_ra_effective interval_s swap_ra swap_ra_hit hit_percent \
	pswpin_per_s pgmajfault_per_s advice; do
	t_is "tune swap reports $k" "$(jq ".swap | has(\"$k\")" t.json)" true
done
t_is "and the swap devices" "$(jq '.devices | type' t.json)" '"array"'
t_is "page_cluster is the sysctl" "$(jq .swap.page_cluster t.json)" "$(cat /proc/sys/vm/page-cluster)"

# what the kernel must let us do, asked of it (root in a container may not)
if ! t_cap sys_admin || ! t_writable /proc/sys/vm/page-cluster ||
   ! t_writable /sys/kernel/mm/swap/vma_ra_enabled || ! t_writable /run; then
	t_skip "bench swapin and tune swap --auto" "$T_WHY (swap devices, cgroups, sysctls)"
	t_done; exit
fi
# swapin's memory cgroup goes beneath ours (v2: a cgroup of its own, or systemd's scope)
if ! t_can_nest; then
	t_skip "bench swapin and tune swap --auto" "$T_NEST_WHY"
	t_done; exit
fi
# --dir of swapin: a directory others may write is refused before anything changes
mkdir -m 777 w777
pc bench swapin --swap-device file --dir "$T_DIR/w777" --quick >o 2>e
t_is "bench swapin refuses a --dir others may write (exit 1)" $? 1
t_ok "and says why" grep -q "cannot use the directory '$T_DIR/w777'" e
t_is "and makes nothing in it" "$(ls -A w777 | wc -l)" 0

# forged state files: root's own file, but naming what no run makes (a file,
# a directory, a knob, a cgroup, a mount of the test's); and files that are
# not root's own (writable by others, another user's, a link), whose lines
# would be ours: nothing of either is undone
mkdir -p /run/pagecache
echo precious >victim; mkdir victimdir cgvictim victimmnt; echo 1 >knobvictim
mount -t tmpfs pc-test-victim victimmnt && T_CLEANUP+=("umount $T_DIR/victimmnt")
# named as the slow device's mount point, but in a directory others may read (0755)
mkdir -m 755 pagecache-swapin-99.forged pagecache-swapin-99.forged/mnt
mount -t tmpfs pc-test-victim pagecache-swapin-99.forged/mnt &&
	T_CLEANUP+=("umount $T_DIR/pagecache-swapin-99.forged/mnt")
f0=/run/pagecache/swapin-99$$0.state
printf 'file %s\ndir %s\nknob %s 7\ncgroup %s\nmount %s\nfuse %s\n' "$T_DIR/victim" "$T_DIR/victimdir" \
	"$T_DIR/knobvictim" "$T_DIR/cgvictim" "$T_DIR/victimmnt" "$T_DIR/pagecache-swapin-99.forged/mnt" >$f0
chmod 600 $f0
T_CLEANUP+=("rm -f $f0")
for n in 1 2 3; do
	d=/var/tmp/pagecache-readtwice-99$$$n
	mkdir -m 700 $d && T_CLEANUP+=("rmdir $d")
	f=/run/pagecache/swapin-99$$$n.state
	T_CLEANUP+=("rm -f $f")
	case $n in
	1) echo "dir $d" >$f; chmod 666 $f ;;
	2) echo "dir $d" >$f; chmod 600 $f; chown 65534 $f ;;
	3) echo "dir $d" >forged3; chmod 600 forged3; ln -s "$T_DIR/forged3" $f ;;
	esac
done
pc tune swap --auto --duration 0.2 -i 0.1 >/dev/null 2>f.err
t_ok "a forged state file's file is not removed" test -f victim
t_ok "nor its directory" test -d victimdir
t_is "nor its knob written" "$(cat knobvictim)" 1
t_ok "nor its cgroup removed" test -d cgvictim
t_ok "nor its mount detached" mountpoint -q victimmnt
t_ok "nor one named as the slow device's, in a directory not root's 0700" \
	mountpoint -q pagecache-swapin-99.forged/mnt
t_ok "and it says so for that line too" grep -q "ignoring 'fuse $T_DIR/pagecache-swapin-99.forged/mnt'" f.err
t_ok "and it says so" grep -q "ignoring 'file $T_DIR/victim' in '$f0'" f.err
for n in 1 2 3; do
	t_ok "a state file not root's own ($n) is not acted upon" test -d /var/tmp/pagecache-readtwice-99$$$n
done
t_ok "and it says so" grep -q "ignoring state file '/run/pagecache/swapin-99$$3.state': a symbolic link" f.err

if [ ! -e /sys/class/zram-control/hot_add ]; then
	if ! modprobe zram 2>mp.err; then
		t_skip "bench swapin" "this kernel has no zram (modprobe zram: $(head -1 mp.err))"
		t_done; exit
	fi
	T_CLEANUP+=("rmmod zram")	# loaded here: unloaded at the end (last, LIFO)
fi

# the state a run must leave as it found it
state() {
	echo "pc=$(cat /proc/sys/vm/page-cluster) vma=$(cat /sys/kernel/mm/swap/vma_ra_enabled)" \
	     "zswap=$(cat /sys/module/zswap/parameters/enabled 2>/dev/null)" \
	     "swaps=$(tail -n +2 /proc/swaps | awk '{print $1}' | sort | tr '\n' ,)" \
	     "zram=$(ls /sys/block | grep -c '^zram')" \
	     "loops=$(losetup -a 2>/dev/null | wc -l)" \
	     "cgroups=$(find /sys/fs/cgroup -maxdepth 6 -name 'pc-swapin-*' 2>/dev/null | wc -l)"
}
pc0=$(cat /proc/sys/vm/page-cluster); vma0=$(cat /sys/kernel/mm/swap/vma_ra_enabled)
restore_knobs() { echo "$pc0" >/proc/sys/vm/page-cluster; echo "$vma0" >/sys/kernel/mm/swap/vma_ra_enabled; }
T_CLEANUP+=(restore_knobs)	# after every bench and tuner below is ended (LIFO)
# not the defaults, so "restored" cannot mean "set to the default"
echo 2 >/proc/sys/vm/page-cluster; echo false >/sys/kernel/mm/swap/vma_ra_enabled
before=$(state)

# a short sampling interval, so even a short run gives the tuner many steps
pc bench swapin --workload seq,random --page-cluster 0,3 --vma-ra on,off --runs 2 \
	--working-set 32M --limit 24M --passes 1 --with-auto --auto-interval 0.02 --json >s.json 2>s.err; rc=$?
t_is "bench swapin exits 0" "$rc" 0
t_ok "its JSON is valid" jq -e . s.json
t_is "it says which bench" "$(jq -r .bench s.json)" swapin
t_is "one row per workload x setting (2 x 2 x (2 + auto))" "$(jq '.results | length' s.json)" 12
t_is "rows name workload, page_cluster, vma_ra, runs" \
	"$(jq '[.results[] | has("workload") and has("page_cluster") and has("vma_ra") and .runs == 2] | all' s.json)" true
for m in real user sys pgmajfault pgpgin pgpgout pswpin pswpout swap_ra swap_ra_hit; do
	t_is "every row has $m as mean and stderr" \
		"$(jq "[.results[].metrics.$m | has(\"mean\") and has(\"stderr\") and (.values | length) == 2] | all" s.json)" true
done
t_is "the tuner's rows have page_cluster \"auto\"" \
	"$(jq '[.results[] | select(.page_cluster == "auto")] | length' s.json)" 4
# (pswpout of a random row can be 0 in every run: its swap-ins stay in the
# swap cache with their slots, and reclaim drops them clean, writing nothing)
t_ok "it swapped: pswpin in every row, pswpout in every seq row" \
	jq -e '[.results[] | .metrics.pswpin.mean > 0 and (.workload != "seq" or .metrics.pswpout.mean > 0)] | all' s.json
t_ok "readahead really happens on this swap: seq at page-cluster 3 reads ahead" \
	jq -e '[.results[] | select(.workload == "seq" and .page_cluster == 3) | .metrics.swap_ra.mean > 1000] | all' s.json
t_ok "and page-cluster 0 reads nothing ahead" \
	jq -e '[.results[] | select(.page_cluster == 0) | .metrics.swap_ra.mean == 0] | all' s.json
t_ok "readahead cuts seq's major faults to under a third of page-cluster 0's" \
	jq -e '([.results[] | select(.workload == "seq" and .page_cluster == 3 and .vma_ra == "on")][0].metrics.pgmajfault.mean * 3) <
	       ([.results[] | select(.workload == "seq" and .page_cluster == 0 and .vma_ra == "on")][0].metrics.pgmajfault.mean)' s.json
# the tuner moves the way the hits say, however many intervals a run lasts
# (every run starts at 0, and the first probe comes at the first interval)
t_is "every auto run starts at page-cluster 0, and says so" "$(jq .setup.auto_start_page_cluster s.json)" 0
t_ok "the tuner's time-weighted page-cluster is a value it may take (0-7), each run" \
	jq -e '[.results[] | select(.page_cluster == "auto") | .metrics.auto_page_cluster.values[] | . >= 0 and . <= 7] | all' s.json
t_ok "from 0, seq's readahead hits take it up (it leaves 0 in every run)" \
	jq -e '[.results[] | select(.workload == "seq" and .page_cluster == "auto") | .metrics.auto_page_cluster.values[] > 0] | all' s.json
t_ok "and it settles: the interval of its last move is reported, at least 1 on seq" \
	jq -e '[.results[] | select(.workload == "seq" and .page_cluster == "auto") | .metrics.auto_converge_intervals.values[] >= 1] | all' s.json
t_ok "only the tuner's rows have its metrics, and no row the slow device's" \
	jq -e '[.results[] | (.page_cluster == "auto") == (.metrics | has("auto_converge_intervals")) and
	       (.metrics | has("device_reads") | not)] | all' s.json
# (random's hits vary by interval: VMA readahead hits sometimes, and the tuner
# may step up for a while; on the whole it must sit lower than on seq's)
t_ok "on random's misses it sits lower than on seq's hits, on the whole" \
	jq -e 'def m(w): [.results[] | select(.workload == w and .page_cluster == "auto") | .metrics.auto_page_cluster.values[]] | add / length;
	       m("random") < m("seq")' s.json
t_ok "the tuner is checked against the best fixed setting" \
	jq -e '.auto_check | has("auto_worst_percent") and has("auto_worst_at") and has("auto_worst_welch_p") and
	       (.auto_within_target | type) == "boolean" and (.fixed_worst_percent | has("0") and has("3"))' s.json
t_is "the system is left as found (sysctls, knobs, swaps, devices, cgroups)" "$(state)" "$before"

# compare reads what the bench wrote: against itself, every row and metric
# matched with no change; against a copy whose seq rows took twice as long
# (real, 100 s more each run), exactly those are marked as significant
pc bench compare s.json s.json --json >c.json 2>c.err; rc=$?
t_is "bench compare of a result with itself exits 0" "$rc" 0
t_ok "and matches every row's metrics (as many comparisons as metrics with values)" \
	jq -e '(.comparisons | length) > 0 and (.unmatched | length) == 0' c.json
t_is "and finds no change in any" "$(jq '[.comparisons[] | select(.significant or .pdiff != 0)] | length' c.json)" 0
jq '(.results[] | select(.workload == "seq") | .metrics.real) |= (.values |= map(. + 100) | .mean += 100)' \
	s.json >s2.json
pc bench compare s.json s2.json --json >c2.json 2>c2.err; rc=$?
t_is "bench compare against a slower copy exits 0" "$rc" 0
t_is "it marks seq's real time, and only that, as significantly worse" \
	"$(jq -c '[.comparisons[] | select(.significant) | [(.row | startswith("seq")), .metric, .pdiff < 0]] | unique' c2.json)" \
	'[[true,"real",true]]'

# SIGINT in the middle: exit 130, everything undone
swaps0=$(wc -l </proc/swaps)
"$PAGECACHE" bench swapin --workload seq --page-cluster 0 --vma-ra on --runs 20 \
	--working-set 64M --limit 48M --passes 3 >/dev/null 2>si.err &
bp=$!
T_CLEANUP+=("t_kill $bp")
t_wait 60 eval '[ "$(wc -l </proc/swaps)" -gt "$swaps0" ]'	# in the middle: its swap is on
kill -INT $bp; wait $bp; rc=$?
t_is "SIGINT stops bench swapin (exit 130)" "$rc" 130
t_is "and the system is left as found" "$(state)" "$before"

# kill -9 cannot be caught: the next run undoes what the killed one left
"$PAGECACHE" bench swapin --workload seq --page-cluster 4 --vma-ra on --runs 20 \
	--working-set 64M --limit 48M --passes 3 >/dev/null 2>/dev/null &
bp=$!
T_CLEANUP+=("t_kill $bp")
t_wait 60 eval '[ "$(cat /proc/sys/vm/page-cluster)" = 4 ] && [ "$(wc -l </proc/swaps)" -gt "$swaps0" ]'
kill -9 $bp; wait $bp 2>/dev/null
# (not "its swap is on": each run cycles its swap off and on, and a kill
# inside swapoff leaves it off; the knob stays as set until the end)
t_is "a killed bench leaves what it set (page-cluster 4)" "$(cat /proc/sys/vm/page-cluster)" 4
t_ok "and a state file naming what it changed" ls /run/pagecache/swapin-$bp.state
pc tune swap --auto --duration 0.2 -i 0.1 >/dev/null 2>k.err
t_ok "the next run (tune swap --auto) undoes it and says so" grep -q "undid what a killed run (pid $bp)" k.err
t_is "the system is as found again" "$(state)" "$before"
t_ok "and the state file is gone" test ! -e /run/pagecache/swapin-$bp.state
"$PAGECACHE" tune swap --auto --min 5 --max 5 -i 0.1 >/dev/null 2>&1 &
tp=$!
T_CLEANUP+=("t_kill $tp")
t_wait 10 eval '[ "$(cat /proc/sys/vm/page-cluster)" = 5 ]'
pc bench swapin --quick >o 2>e; t_is "bench swapin refuses to run beside tune swap --auto" $? 1
t_ok "and says why" grep -q "share vm.page-cluster" e
kill -9 $tp; wait $tp 2>/dev/null
t_is "a killed tune swap --auto leaves page-cluster 5" "$(cat /proc/sys/vm/page-cluster)" 5
pc tune swap --auto --duration 0.2 -i 0.1 --json >k.json 2>k.err
t_is "the next one puts back 2 first" "$(jq -r .auto.restored_to k.json)" 2
t_ok "it reports when it settled and its probes from 0 (nothing swaps: never moved)" \
	jq -e '.auto | .converge_intervals == 0 and .converge_s == 0 and .probes == 0' k.json
t_is "and leaves 2" "$(cat /proc/sys/vm/page-cluster)" 2

# the control: plain zram, where the kernel skips readahead for private pages
pc bench swapin --swap-device zram --workload seq --page-cluster 3 --vma-ra on --runs 1 \
	--working-set 32M --limit 24M --passes 1 --json >z.json 2>z.err
t_is "--swap-device zram runs" $? 0
t_ok "and on it swap-in reads nothing ahead (the kernel bypasses the swap cache)" \
	jq -e '.results[0].metrics.swap_ra.mean < 100 and .results[0].metrics.pswpin.mean > 1000' z.json
t_is "left as found" "$(state)" "$before"

# the slow device: a loop device (direct I/O) over a file of a FUSE daemon
# that answers each read LATENCY after it came; small, so it takes seconds
daemons() { pgrep -x pc-slowdev | wc -l; }
fusemounts() { grep -c '^pagecache-slow ' /proc/mounts; }
if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	t_skip "--swap-device slow" "this kernel has no FUSE (/dev/fuse)"
else
	d0=$(daemons)
	pc bench swapin --swap-device slow:200us --workload seq --page-cluster 0,3 --vma-ra on \
		--runs 1 --working-set 16M --limit 8M --passes 1 --json >sl.json 2>sl.err
	t_is "--swap-device slow:200us runs" $? 0
	t_is "it names the device" "$(jq -r .setup.swap sl.json)" \
		"slow: a loop device over a FUSE file, reads delayed"
	t_is "and its latency, in seconds" "$(jq .setup.device_latency_s sl.json)" 0.0002
	t_ok "setup counts the runs made again after an OOM kill" jq -e '.setup.oom_retries | type == "number"' sl.json
	t_ok "swap goes through the daemon: every row swapped in, and it served reads" \
		jq -e '[.results[].metrics | .pswpin.mean > 1000 and .device_reads.mean > 0] | all' sl.json
	t_ok "every read it served was answered no sooner than its latency" \
		jq -e '.setup.device_reads_answered > 0 and .setup.device_reads_delayed == .setup.device_reads_answered and
		       .setup.device_mean_read_s >= 0.0002' sl.json
	t_ok "at page-cluster 0 every page swapped in is a read of its own" \
		jq -e '.results[] | select(.page_cluster == 0) | .metrics.device_reads.mean >= .metrics.pswpin.mean' sl.json
	t_ok "at 3 readahead brings several pages with one read" \
		jq -e '.results[] | select(.page_cluster == 3) | .metrics.device_reads.mean * 2 < .metrics.pswpin.mean' sl.json
	t_is "after it the system is as found" "$(state)" "$before"
	t_is "no FUSE mount of it is left" "$(fusemounts)" 0
	t_is "nor its daemon" "$(daemons)" "$d0"
	pc bench swapin --swap-device slow:fast --quick >o 2>e; t_is "a latency without a unit exits 2" $? 2
	t_ok "and says what it takes" grep -q "with a unit: 500us, 2ms" e

	# slow:LAT,BW: a read of N bytes costs LAT + N/BW, transfers one at a time
	pc bench swapin --swap-device slow:100us,20M --workload seq --page-cluster 0,3 --vma-ra on \
		--runs 1 --working-set 16M --limit 8M --passes 1 --json >sb.json 2>sb.err
	t_is "--swap-device slow:100us,20M runs" $? 0
	t_is "setup gives its bandwidth, bytes a second" "$(jq .setup.device_bandwidth sb.json)" 20971520
	t_ok "each read took its latency and its bytes' transfer at least" \
		jq -e '.setup.device_reads_answered > 0 and .setup.device_reads_delayed == .setup.device_reads_answered and
		       .setup.device_mean_read_s >= 0.0001 + .setup.device_read_bytes / .setup.device_reads / 20971520' sb.json
	t_is "a device without one gives none" "$(jq .setup.device_bandwidth sl.json)" null
	t_is "after it the system is as found" "$(state)" "$before"
	t_is "no FUSE mount of it is left" "$(fusemounts)" 0
	pc bench swapin --swap-device slow:1ms,100 --quick >o 2>e; t_is "a bandwidth under 1M exits 2" $? 2
	t_ok "and says what it takes" grep -q "invalid bandwidth '100' (bytes a second, at least 1M: 100M)" e
	pc bench swapin --swap-device slow:1ms,fast --quick >o 2>e; t_is "a bandwidth that is no size exits 2" $? 2
	pc bench swapin --swap-device slow:1x,100M --quick >o 2>e; t_is "a bad latency before it exits 2" $? 2
	t_ok "naming the latency alone" grep -q "invalid latency '1x'" e

	# kill -9: the daemon outlives the bench (swap may still be on it), the next run ends it
	"$PAGECACHE" bench swapin --swap-device slow:200us --workload seq --page-cluster 0 --vma-ra on \
		--runs 50 --working-set 16M --limit 8M --passes 2 >/dev/null 2>/dev/null &
	bp=$!
	T_CLEANUP+=("t_kill $bp")
	t_wait 60 eval '[ "$(wc -l </proc/swaps)" -gt "$swaps0" ]'
	dp=$(pgrep -x -P $bp pc-slowdev)
	kill -9 $bp; wait $bp 2>/dev/null
	t_ok "a killed bench leaves its FUSE mount" grep -q "^pagecache-slow [^ ]*/pagecache-swapin-$bp\." /proc/mounts
	t_ok "and its daemon, alive" test -n "$dp" -a -d "/proc/$dp"
	t_ok "and its loop device" eval 'losetup -a | grep -q "pagecache-swapin-$bp\..*/mnt/swap.img"'
	pc tune swap --auto --duration 0.2 -i 0.1 >/dev/null 2>sk.err
	t_ok "the next run undoes it and says so" grep -q "undid what a killed run (pid $bp)" sk.err
	t_ok "its daemon ends with the unmount" t_wait 10 t_gone "$dp"
	t_is "no FUSE mount of it is left" "$(fusemounts)" 0
	t_ok "nor its directory" eval '! ls -d /var/tmp/pagecache-swapin-$bp.* 2>/dev/null'
	t_is "the system is as found again (swaps, loop devices, knobs, cgroups)" "$(state)" "$before"
fi

# tune swap --auto restores what it found, on SIGTERM too
pc tune swap --auto --min 5 --max 5 -i 0.1 --duration 0.5 --json >a.json 2>a.err
t_is "tune swap --auto exits 0" $? 0
t_is "and reports what it restored" "$(jq -r .auto.restored_to a.json)" 2
t_is "vm.page-cluster is back to 2" "$(cat /proc/sys/vm/page-cluster)" 2
"$PAGECACHE" tune swap --auto --min 5 --max 5 -i 0.1 >/dev/null 2>&1 &
tp=$!
T_CLEANUP+=("t_kill $tp")
t_ok "while running (clamped to --min 5) it sets 5" t_wait 10 eval '[ "$(cat /proc/sys/vm/page-cluster)" = 5 ]'
kill -TERM $tp; wait $tp
t_is "SIGTERM restores 2" "$(cat /proc/sys/vm/page-cluster)" 2
t_done
