/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: pagecache-bench, the program behind `pagecache bench`:
 * reproducible experiments on the kernel's memory manager. Each experiment
 * lives in a file of its own here; this file is their command line. It is
 * a program of its own so that the everyday pagecache does not carry
 * SQLite (warmup's database); pagecache execs it as git runs its helpers
 * (src/cmd-bench.c), with argv as `pagecache bench` got it.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"Usage: pagecache bench EXPERIMENT [OPTIONS]\n"
	"\n"
	"Experiments:\n"
	"  warmup     a database after a restart: cold, restored by pagecache, warmed\n"
	"             by vmtouch, and warm; SQLite query latency per condition\n"
	"  readtwice  vm-scalability's lru-file-readtwice in N memory cgroups: LRU and\n"
	"             lruvec lock scaling, per reader, per cgroup and in aggregate\n"
	"  swapin     swap-in readahead: vm.page-cluster x VMA readahead x workload in a\n"
	"             memory cgroup smaller than the working set (the 2012 table)\n"
	"  compare A.json B.json   two --json results of one bench, mmtests style:\n"
	"             means, change (positive is better), Welch's t-test marks;\n"
	"             files or pipes (<(cmd)), up to 64 MiB each\n"
	"\n"
	"Options of warmup:\n"
	"      --quick            a 1.5 million-row database (about 170 MB), 3 trials\n"
	"      --rows N           rows in the database (default 15,647,665: about 1.8 GB)\n"
	"      --trials N         trials (default 5; conditions shuffled in each)\n"
	"      --dir DIR          where the database is made once and kept\n"
	"                         (default /var/tmp/pagecache-bench, made 0700); it must\n"
	"                         be yours and not writable by group or others\n"
	"  -h, --help             this text\n"
	FORMAT_HELP
	"\n"
	"Options of readtwice:\n"
	"      --cgroups N        memory cgroups, one sparse file each (default 2)\n"
	"      --readers-per-cgroup K   reader processes per cgroup (default 2)\n"
	"      --layout L         per-cgroup (default) or shared (all in one memcg)\n"
	"      --size SIZE        bytes per sparse file (default 64G: holes, no I/O)\n"
	"      --duration S       seconds (default 10; --quick: 2)\n"
	"      --runs N           repetitions, for mean and standard error (default 1)\n"
	"\n"
	"Options of swapin:\n"
	"      --page-cluster LIST   vm.page-cluster values (default 0,1,2,3,4)\n"
	"      --vma-ra LIST      on,off: VMA readahead or cluster readahead (default both)\n"
	"      --workload LIST    seq,random,mt-random,mixed (default all)\n"
	"      --runs N           runs of each setting, interleaved (default 5)\n"
	"      --with-auto        add the tuner of `pagecache tune swap --auto` as a column\n"
	"      --auto-interval S  the tuner's sampling interval (default 0.1)\n"
	"      --working-set SIZE anonymous memory touched (default 192M)\n"
	"      --limit SIZE       the memory cgroup's limit (default 128M)\n"
	"      --passes N         touches = N x pages (default 5)\n"
	"      --threads N        mt-random threads (default 2 per CPU)\n"
	"      --swap-device D    zram-loop (default: a private zram behind a loop device,\n"
	"                         where readahead happens), zram (control: the kernel\n"
	"                         skips readahead on it) or file (a loop device over a\n"
	"                         file in --dir)\n"
	"      --dir DIR          with --swap-device file: where the image goes, in a\n"
	"                         fresh directory of its own (default /var/tmp)\n"
	"      --quick            96M in 64M, 2 passes, page-cluster 0,3, 2 runs\n"
	"\n"
	"They need root: they drop the page cache, make cgroups, mounts and swap\n"
	"devices, and change vm.page-cluster (all undone again, on SIGINT too).\n"
	"Examples:\n"
	"  pagecache bench warmup --quick\n"
	"  pagecache bench swapin --workload seq,random --page-cluster 0,3 --with-auto\n"
	"  pagecache bench swapin --json >before.json; ...; pagecache bench swapin --json >after.json\n"
	"  pagecache bench compare before.json after.json\n";

/* "0,1,3": integers in [lo, hi]; -1 on a bad list */
static int parse_int_list(const char *s, int *out, int max, int lo, int hi)
{
	int n = 0;
	char *end;

	while (*s) {
		long v = strtol(s, &end, 10);

		if (end == s || v < lo || v > hi || n >= max)
			return -1;
		for (int i = 0; i < n; i++)
			if (out[i] == v)
				return -1;
		out[n++] = (int)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n ? n : -1;
}

/* "seq,random": indexes into names[]; -1 on an unknown word */
static int parse_word_list(const char *s, const char *const *names, int nnames, int *out, int max)
{
	char *dup = strdup(s), *save = NULL;
	int n = 0;

	for (char *w = strtok_r(dup, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < nnames && strcmp(names[k], w); k++)
			;
		if (k == nnames || n >= max) {
			free(dup);
			return -1;
		}
		out[n++] = k;
	}
	free(dup);
	return n ? n : -1;
}

/* bench's own options: values past any short option or FORMAT_LONGOPTS letter */
enum {
	O_QUICK = 300, O_ROWS, O_TRIALS, O_DIR, O_WORKER, O_CGROUPS, O_READERS, O_LAYOUT,
	O_SIZE, O_DURATION, O_RUNS, O_PC, O_VMA, O_WORKLOAD, O_AUTO, O_AUTO_INTERVAL, O_WSS,
	O_LIMIT, O_PASSES, O_THREADS, O_SWAPDEV, O_END
};
enum { XB_WARMUP = 1, XB_READTWICE = 2, XB_SWAPIN = 4, X_ALL = 7 };
/* which experiments take each option */
static const unsigned char option_owner[O_END - O_QUICK] = {
	[O_QUICK - O_QUICK] = X_ALL,
	[O_ROWS - O_QUICK] = XB_WARMUP,
	[O_TRIALS - O_QUICK] = XB_WARMUP,
	[O_DIR - O_QUICK] = XB_WARMUP | XB_SWAPIN,
	[O_WORKER - O_QUICK] = XB_WARMUP,
	[O_CGROUPS - O_QUICK] = XB_READTWICE,
	[O_READERS - O_QUICK] = XB_READTWICE,
	[O_LAYOUT - O_QUICK] = XB_READTWICE,
	[O_SIZE - O_QUICK] = XB_READTWICE,
	[O_DURATION - O_QUICK] = XB_READTWICE,
	[O_RUNS - O_QUICK] = XB_READTWICE | XB_SWAPIN,
	[O_PC - O_QUICK] = XB_SWAPIN,
	[O_VMA - O_QUICK] = XB_SWAPIN,
	[O_WORKLOAD - O_QUICK] = XB_SWAPIN,
	[O_AUTO - O_QUICK] = XB_SWAPIN,
	[O_AUTO_INTERVAL - O_QUICK] = XB_SWAPIN,
	[O_WSS - O_QUICK] = XB_SWAPIN,
	[O_LIMIT - O_QUICK] = XB_SWAPIN,
	[O_PASSES - O_QUICK] = XB_SWAPIN,
	[O_THREADS - O_QUICK] = XB_SWAPIN,
	[O_SWAPDEV - O_QUICK] = XB_SWAPIN,
};

/* `pagecache bench compare A.json B.json [--json]` */
static int cmd_bench_compare(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		FORMAT_LONGOPTS,
		{ 0 }
	};
	struct cli_opts co = { OUT_HUMAN };
	int opt, rc;

	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			fputs(usage_text, stdout);
			return 0;
		}
		if (cli_format_opt(&co, opt, argv) < 0)
			return EXIT_USAGE;
	}
	if (argc - optind != 2)
		return cli_usage_error("compare takes two result files: A.json B.json");
	out_init(co.fmt, co.bytes, false);
	out_tag("bench", "compare");
	out_list_declare("comparisons");
	out_list_declare("errors");
	rc = bench_compare(argv[optind], argv[optind + 1]);
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return rc;
}

static int bench_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, O_QUICK },
		{ "rows", required_argument, NULL, O_ROWS },
		{ "trials", required_argument, NULL, O_TRIALS },
		{ "dir", required_argument, NULL, O_DIR },
		{ "worker", required_argument, NULL, O_WORKER },
		{ "cgroups", required_argument, NULL, O_CGROUPS },
		{ "readers-per-cgroup", required_argument, NULL, O_READERS },
		{ "layout", required_argument, NULL, O_LAYOUT },
		{ "size", required_argument, NULL, O_SIZE },
		{ "duration", required_argument, NULL, O_DURATION },
		{ "runs", required_argument, NULL, O_RUNS },
		{ "page-cluster", required_argument, NULL, O_PC },
		{ "vma-ra", required_argument, NULL, O_VMA },
		{ "workload", required_argument, NULL, O_WORKLOAD },
		{ "with-auto", no_argument, NULL, O_AUTO },
		{ "auto-interval", required_argument, NULL, O_AUTO_INTERVAL },
		{ "working-set", required_argument, NULL, O_WSS },
		{ "limit", required_argument, NULL, O_LIMIT },
		{ "passes", required_argument, NULL, O_PASSES },
		{ "threads", required_argument, NULL, O_THREADS },
		{ "swap-device", required_argument, NULL, O_SWAPDEV },
		{ "help", no_argument, NULL, 'h' },
		FORMAT_LONGOPTS,
		{ 0 }
	};
	struct warmup_opts wo = { .dir = "/var/tmp/pagecache-bench", .rows = 15647665, .trials = 5 };
	struct cli_opts co = { OUT_HUMAN };
	struct readtwice_opts ro = { .cgroups = 2, .readers = 2, .size = 64ull << 30, .duration = 10,
				     .runs = 1 };
	struct swapin_opts so = { .pcs = { 0, 1, 2, 3, 4 }, .npc = 5, .vmas = { 1, 0 }, .nvma = 2,
				  .workloads = (1u << WL_COUNT) - 1, .runs = 5, .auto_interval = 0.1,
				  .wss = 192ull << 20, .limit = 128ull << 20, .passes = 5,
				  .device = SWDEV_ZRAM_LOOP };
	bool rows_set = false, trials_set = false, dur_set = false, pc_set = false, runs_set = false;
	bool wss_set = false, limit_set = false, passes_set = false, dir_set = false;
	enum { X_WARMUP, X_READTWICE, X_SWAPIN } x;
	int li = 0;
	char *end;
	int opt, rc, list[16], n;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	cli_begin(argc, argv);
	/* an inherited SIG_IGN would make the kernel reap the helpers: their status lost */
	signal(SIGCHLD, SIG_DFL);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("pagecache %s\n", PC_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "compare"))
		return cmd_bench_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "warmup"))
		x = X_WARMUP;
	else if (!strcmp(argv[1], "readtwice"))
		x = X_READTWICE;
	else if (!strcmp(argv[1], "swapin"))
		x = X_SWAPIN;
	else
		return cli_usage_error("unknown experiment '%s' (see --help)", argv[1]);
	so.threads = ncpu > 0 ? (int)(2 * ncpu) : 4;
	if (so.threads > 16)
		so.threads = 16;
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "h", longopts, &li)) != -1) {
		if (opt >= O_QUICK && opt < O_END && !(option_owner[opt - O_QUICK] & (1u << x)))
			return cli_usage_error("--%s is not an option of %s (see --help)",
					       longopts[li].name, argv[0]);
		switch (opt) {
		case O_CGROUPS:
			ro.cgroups = (int)strtol(optarg, &end, 10);
			if (*end || ro.cgroups < 1 || ro.cgroups > 256)
				return cli_usage_error("invalid cgroup count '%s' (1-256)", optarg);
			break;
		case O_READERS:
			ro.readers = (int)strtol(optarg, &end, 10);
			if (*end || ro.readers < 1 || ro.readers > 64)
				return cli_usage_error("invalid readers per cgroup '%s' (1-64)", optarg);
			break;
		case O_LAYOUT:
			if (!strcmp(optarg, "shared"))
				ro.shared = true;
			else if (strcmp(optarg, "per-cgroup"))
				return cli_usage_error("unknown layout '%s' (per-cgroup or shared)", optarg);
			break;
		case O_SIZE:
			if (pc_parse_size(optarg, &ro.size) < 0 || ro.size < (1u << 20))
				return cli_usage_error("invalid size '%s' (at least 1M)", optarg);
			break;
		case O_DURATION:
			ro.duration = strtod(optarg, &end);
			if (*end || ro.duration <= 0 || ro.duration > 3600)
				return cli_usage_error("invalid duration '%s' (seconds, up to 3600)", optarg);
			dur_set = true;
			break;
		case O_RUNS:
			so.runs = ro.runs = (int)strtol(optarg, &end, 10);
			if (*end || so.runs < 1 || so.runs > 64)
				return cli_usage_error("invalid runs '%s' (1-64)", optarg);
			runs_set = true;
			break;
		case O_PC:
			so.npc = parse_int_list(optarg, so.pcs, 8, 0, 9);
			if (so.npc < 0)
				return cli_usage_error("invalid page-cluster list '%s' (distinct 0-9, "
						       "comma separated)", optarg);
			pc_set = true;
			break;
		case O_VMA: {
			static const char *const onoff[] = { "off", "on" };

			so.nvma = parse_word_list(optarg, onoff, 2, so.vmas, 2);
			if (so.nvma < 0 || (so.nvma == 2 && so.vmas[0] == so.vmas[1]))
				return cli_usage_error("invalid --vma-ra '%s' (on, off or on,off)", optarg);
			break;
		}
		case O_WORKLOAD: {
			static const char *const wl[] = { "seq", "random", "mt-random", "mixed" };

			n = parse_word_list(optarg, wl, WL_COUNT, list, 16);
			if (n < 0)
				return cli_usage_error("invalid workload list '%s' (seq, random, "
						       "mt-random, mixed)", optarg);
			so.workloads = 0;
			for (int i = 0; i < n; i++)
				so.workloads |= 1u << list[i];
			break;
		}
		case O_AUTO:
			so.with_auto = true;
			break;
		case O_AUTO_INTERVAL:
			so.auto_interval = strtod(optarg, &end);
			if (*end || so.auto_interval < 0.01 || so.auto_interval > 60)
				return cli_usage_error("invalid interval '%s' (0.01-60 seconds)", optarg);
			break;
		case O_WSS:
			if (pc_parse_size(optarg, &so.wss) < 0 || so.wss < (16u << 20))
				return cli_usage_error("invalid working set '%s' (at least 16M)", optarg);
			wss_set = true;
			break;
		case O_LIMIT:
			if (pc_parse_size(optarg, &so.limit) < 0 || so.limit < (8u << 20))
				return cli_usage_error("invalid limit '%s' (at least 8M)", optarg);
			limit_set = true;
			break;
		case O_PASSES:
			so.passes = (int)strtol(optarg, &end, 10);
			if (*end || so.passes < 1 || so.passes > 1000)
				return cli_usage_error("invalid passes '%s' (1-1000)", optarg);
			passes_set = true;
			break;
		case O_THREADS:
			so.threads = (int)strtol(optarg, &end, 10);
			if (*end || so.threads < 1 || so.threads > 16)
				return cli_usage_error("invalid threads '%s' (1-16)", optarg);
			break;
		case O_SWAPDEV:
			if (!strcmp(optarg, "zram-loop"))
				so.device = SWDEV_ZRAM_LOOP;
			else if (!strcmp(optarg, "zram"))
				so.device = SWDEV_ZRAM;
			else if (!strcmp(optarg, "file"))
				so.device = SWDEV_FILE;
			else
				return cli_usage_error("unknown swap device '%s' (zram-loop, zram, file)",
						       optarg);
			break;
		case O_QUICK:
			if (!wss_set)
				so.wss = 96ull << 20;
			if (!limit_set)
				so.limit = 64ull << 20;
			if (!passes_set)
				so.passes = 2;
			if (!pc_set) {
				so.pcs[0] = 0;
				so.pcs[1] = 3;
				so.npc = 2;
			}
			if (!runs_set)
				so.runs = 2;
			if (!dur_set)
				ro.duration = 2;
			if (!rows_set)
				wo.rows = 1500000;
			if (!trials_set)
				wo.trials = 3;
			break;
		case O_ROWS:
			wo.rows = strtoull(optarg, &end, 10);
			if (*end || wo.rows < 10000)
				return cli_usage_error("invalid row count '%s' (at least 10000)", optarg);
			rows_set = true;
			break;
		case O_TRIALS:
			wo.trials = (int)strtol(optarg, &end, 10);
			if (*end || wo.trials < 1 || wo.trials > 64)
				return cli_usage_error("invalid trials '%s' (1-64)", optarg);
			trials_set = true;
			break;
		case O_DIR:
			wo.dir = so.dir = optarg;
			dir_set = true;
			break;
		case O_WORKER:
			return bench_warmup_worker(optarg);
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			if (cli_format_opt(&co, opt, argv) < 0)
				return EXIT_USAGE;
			break;
		}
	}
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	out_init(co.fmt, co.bytes, false);
	if (x == X_SWAPIN) {
		if (so.limit >= so.wss)
			return cli_usage_error("the limit (%llu MiB) must be below the working set "
					       "(%llu MiB), or nothing swaps",
					       (unsigned long long)(so.limit >> 20),
					       (unsigned long long)(so.wss >> 20));
		if (!dir_set)
			so.dir = "/var/tmp";
		out_tag("bench", "swapin");
		out_list_declare("results");
		out_list_declare("errors");
		so.progress = co.fmt == OUT_HUMAN && cli_stderr_tty();
		rc = bench_swapin(&so);
		if (out_flush() < 0)
			return EXIT_PARTIAL;
		return rc;
	}
	if (x == X_READTWICE) {
		out_tag("bench", "readtwice");
		out_list_declare("results");
		out_list_declare("cgroups");
		out_list_declare("readers");
		out_list_declare("errors");
		rc = bench_readtwice(&ro);
		if (out_flush() < 0)
			return EXIT_PARTIAL;
		return rc;
	}
	out_tag("bench", "warmup");
	out_list_declare("results");
	out_list_declare("conditions");
	out_list_declare("errors");
	wo.progress = co.fmt == OUT_HUMAN && cli_stderr_tty();
	rc = bench_warmup(&wo);
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return rc;
}

int main(int argc, char **argv)
{
	int rc;

	cli_cmd = "bench";
	opterr = 0;			/* our own message names the option */
	signal(SIGPIPE, SIG_IGN);	/* EPIPE is normal: `pagecache bench compare | head` */
	if (pc_sys_inject_env(getenv("PAGECACHE_FAULT")) < 0) {
		fprintf(stderr, "pagecache: bad PAGECACHE_FAULT '%s'\n", getenv("PAGECACHE_FAULT"));
		return EXIT_USAGE;
	}
	rc = bench_main(argc, argv);
	if (fclose(stdout) != 0 && errno != EPIPE) {
		fprintf(stderr, "pagecache: cannot write output: %s\n", strerror(errno));
		return EXIT_PARTIAL;
	}
	return rc;
}
