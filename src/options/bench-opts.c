/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-opts.c: the option table of `pagecache bench` (pagecache-bench's
 * parser, bench/main.c), kept in src/ as data so that pagecache's
 * completions and the man page check read the same table. An option
 * taken by some experiments only is refused by the others (option_owner
 * in bench/main.c).
 */
#include "cli.h"
#include "options/bench-opts.h"

static const struct cli_opt warmup_opts[] = {
	{ .name = "quick", .id = O_QUICK,
	  .help = "1.5M rows, 3 trials (readtwice: 2 s; swapin smaller)" },
	{ .name = "rows", .id = O_ROWS, .arg = "N",
	  .help = "rows in the database (default 15,647,665: 1.8 GB)" },
	{ .name = "trials", .id = O_TRIALS, .arg = "N",
	  .help = "trials (default 5; conditions shuffled in each)" },
	{ .name = "dir", .id = O_DIR, .arg = "DIR", .comp = CC_DIR,
	  .help = "where the database (swapin: the image) is made" },
	{ .name = "aux-files", .id = O_AUX_FILES, .arg = "N",
	  .help = "small files each start walks and reads (default 0)" },
	{ .name = "worker", .id = O_WORKER, .arg = "DB", .comp = CC_FILE,
	  .help = "internal: the query worker of one condition" },
	{ 0 }
};

static const struct cli_opt readtwice_opts[] = {
	{ .name = "cgroups", .id = O_CGROUPS, .arg = "N",
	  .help = "memory cgroups, one sparse file each (default 2)" },
	{ .name = "readers-per-cgroup", .id = O_READERS, .arg = "K",
	  .help = "reader processes per cgroup (default 2)" },
	{ .name = "layout", .id = O_LAYOUT, .arg = "L", .comp = CC_WORDS,
	  .words = "per-cgroup shared",
	  .help = "per-cgroup (default) or shared (all in one memcg)" },
	{ .name = "size", .id = O_SIZE, .arg = "SIZE", .comp = CC_SIZE,
	  .help = "bytes per sparse file (default 64G: holes, no I/O)" },
	{ .name = "duration", .id = O_DURATION, .arg = "S",
	  .help = "seconds (default 10; --quick: 2)" },
	{ .name = "runs", .id = O_RUNS, .arg = "N",
	  .help = "repetitions (default 1; swapin: 5, interleaved)" },
	{ .name = "limit", .id = O_LIMIT, .arg = "SIZE", .comp = CC_SIZE,
	  .help = "each memory cgroup's limit (default none; swapin 128M)" },
	{ 0 }
};

static const struct cli_opt swapin_opts[] = {
	{ .name = "page-cluster", .id = O_PC, .arg = "LIST",
	  .help = "vm.page-cluster values (default 0,1,2,3,4)" },
	{ .name = "vma-ra", .id = O_VMA, .arg = "LIST", .comp = CC_WORDS,
	  .words = "on off on,off",
	  .help = "on,off: VMA or cluster readahead (default both)" },
	{ .name = "workload", .id = O_WORKLOAD, .arg = "LIST", .comp = CC_WORDS,
	  .words = "seq random mt-random mixed",
	  .help = "seq,random,mt-random,mixed (default all)" },
	{ .name = "with-auto", .id = O_AUTO,
	  .help = "add pagecache tune swap --auto's tuner as a column" },
	{ .name = "auto-interval", .id = O_AUTO_INTERVAL, .arg = "S",
	  .help = "the tuner's sampling interval (default 0.1)" },
	{ .name = "working-set", .id = O_WSS, .arg = "SIZE", .comp = CC_SIZE,
	  .help = "anonymous memory touched (default 192M)" },
	{ .name = "passes", .id = O_PASSES, .arg = "N", .help = "touches = N x pages (default 5)" },
	{ .name = "threads", .id = O_THREADS, .arg = "N",
	  .help = "mt-random threads (default 2 per CPU)" },
	{ .name = "swap-device", .id = O_SWAPDEV, .arg = "D", .comp = CC_WORDS,
	  .words = "zram-loop zram file slow",
	  .help = "zram-loop (default), zram, file or slow[:LAT[,BW]]" },
	{ 0 }
};

static const struct cli_opt report_opts[] = {
	{ .name = "output", .letter = 'o', .id = O_OUTPUT, .arg = "FILE", .comp = CC_FILE,
	  .help = "the HTML file to write (required)" },
	{ 0 }
};

const struct cli_spec bench_spec = {
	.name = "bench",
	.usage =
	"Usage: pagecache bench EXPERIMENT [OPTIONS]\n"
	"\n"
	"Experiments:\n"
	"  warmup     a database after a restart: cold, restored by pagecache (from a\n"
	"             snapshot, or from a recording in access or disk order, or cut\n"
	"             short), warmed by vmtouch, and warm; SQLite query latency per\n"
	"             condition, and the recording's size beside the snapshot's;\n"
	"             cold-meta and restored-meta as after a reboot (dentries, inodes\n"
	"             and metadata blocks dropped too; a --metadata snapshot restored\n"
	"             with the block device refused)\n"
	"  readtwice  vm-scalability's lru-file-readtwice in N memory cgroups: LRU and\n"
	"             lruvec lock scaling, per reader, per cgroup and in aggregate\n"
	"  swapin     swap-in readahead: vm.page-cluster x VMA readahead x workload in a\n"
	"             memory cgroup smaller than the working set (the 2012 table)\n"
	"  compare A.json B.json   two --json results of one bench, mmtests style:\n"
	"             means, change (positive is better), Welch's t-test marks;\n"
	"             files or pipes (<(cmd)), up to 64 MiB each\n"
	"  report -o HTML RESULT.json...   --json results drawn: one self-contained\n"
	"             HTML file (no script, font or link outside it) with an SVG chart\n"
	"             and a table of its numbers for each: warmup's latency per\n"
	"             condition (min, median, max), readtwice's MB/s per layout and\n"
	"             cgroup count (all readtwice files in one chart), swapin's real\n"
	"             time and major faults against page-cluster per workload (auto\n"
	"             marked), and the first result of each bench compared with each\n"
	"             later one of that bench that shares rows, as compare does it\n"
	"\n",
	.footer =
	"\n"
	"They need root: they drop the page cache, make cgroups, mounts and swap\n"
	"devices, and change vm.page-cluster (all undone again, on SIGINT too).\n"
	"Examples:\n"
	"  pagecache bench warmup --quick\n"
	"  pagecache bench readtwice --cgroups 80 --limit 256M --layout shared\n"
	"  pagecache bench swapin --workload seq,random --page-cluster 0,3 --with-auto\n"
	"  pagecache bench swapin --json >before.json; ...; pagecache bench swapin --json >after.json\n"
	"  pagecache bench compare before.json after.json\n"
	"  pagecache bench report -o report.html before.json after.json rt-*.json\n",
	.groups = { &(struct cli_group){ "Options of warmup (--quick, --dir: of swapin too)", warmup_opts },
		    &(struct cli_group){ "Options of readtwice (--runs, --limit: of swapin too)", readtwice_opts },
		    &(struct cli_group){ "Options of swapin", swapin_opts },
		    &(struct cli_group){ "Options of report", report_opts }, &cli_format_group },
	.operands = CC_WORDS,
	.operand_words = "warmup readtwice swapin compare report",
};
