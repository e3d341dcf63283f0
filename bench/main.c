/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: pagecache-bench, the program behind `pagecache bench`:
 * reproducible experiments on the kernel's memory manager. Each experiment
 * lives in a file of its own here, as do compare and report (compare.c,
 * report.c); this file is their command line. It is
 * a program of its own so that the everyday pagecache does not carry
 * SQLite (warmup's database); pagecache execs it as git runs its helpers
 * (src/commands/cmd-bench.c), with argv as `pagecache bench` got it.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"
#include "options/bench-opts.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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

/*
 * Prometheus text (docs/metrics.md): each experiment's summary, in base
 * units, under pagecache_bench_<experiment>_; the per-run rows and the
 * results' statistics are JSON's. compare has only its timestamp.
 */
static const struct ometric warmup_metrics[] = {
	{ "setup", "rows", "rows", 0, "Rows in the test database." },
	{ "setup", "trials", "trials", 0, "Trials of each condition asked for." },
	{ "conditions", "condition", "condition", OM_LABEL, "" },
	{ "conditions", "trials", "condition_trials", 0, "Trials the condition ran." },
	{ "conditions", "q1_ms", "q1_seconds", OM_MILLI, "Median time of the first query." },
	{ "conditions", "q2_ms", "q2_seconds", OM_MILLI, "Median time of the second query." },
	{ "conditions", "q3_ms", "q3_seconds", OM_MILLI, "Median time of the third query." },
	{ "conditions", "start_ms", "start_seconds", OM_MILLI,
	  "Median time of the start before the first query (--aux-files, the database's open)." },
	{ "conditions", "prefetch_ms", "prefetch_seconds", OM_MILLI,
	  "Median time the prefetch (restore, or the peer tool) took." },
	{ "conditions", "prefetch_mib", "prefetch_bytes", OM_MEBI,
	  "Median bytes the prefetch read." },
	{ "size", "profile_pages", "recording_pages", 0,
	  "Pages of the recording of one cold run (what its restore reads)." },
	{ "size", "profile_used_pages", "recording_used_pages", 0,
	  "Pages the recording has a time of first use for." },
	{ "size", "profile_file_bytes", "recording_file_bytes", 0,
	  "Size of the recording's file." },
	{ "size", "snapshot_pages", "snapshot_pages", 0,
	  "Pages of a snapshot of the same files after the same run." },
	{ "size", "snapshot_file_bytes", "snapshot_file_bytes", 0,
	  "Size of that snapshot's file." },
};

static const struct ometric readtwice_metrics[] = {
	{ "total", "cgroups", "cgroups", 0, "Memory cgroups the readers ran in." },
	{ "total", "readers_per_cgroup", "readers_per_cgroup", 0, "Readers in each cgroup." },
	{ "total", "file_size", "file_size_bytes", 0, "Size of each file read twice." },
	{ "total", "duration_s", "run_duration_seconds", 0, "How long each run read." },
	{ "total", "runs", "runs", 0, "Runs made." },
	{ "total", "limit_bytes", "limit_bytes", 0,
	  "The --limit of each cgroup (absent: no limit)." },
	{ "total", "memcg_limit_bytes", "memcg_limit_bytes", 0,
	  "The limit each memory cgroup was given (shared: cgroups x --limit)." },
	{ "total", "limit_hits", "limit_hits", 0,
	  "Charges that hit a memory cgroup's limit, over all runs (reclaim inside it)." },
	{ "total", "oom_kills", "oom_kills", 0, "Readers the OOM killer killed, over all runs." },
	{ "total", "start_spread_ms", "start_spread_seconds", OM_MILLI,
	  "Time from the first reader's start to the last one's, at worst over the runs." },
	{ "total", "aggregate_mbps", "aggregate_read_bytes_per_second", OM_MEGA,
	  "Mean over the runs of all readers' throughput together." },
	{ "total", "mean_mbps_per_reader", "reader_read_bytes_per_second", OM_MEGA,
	  "Mean throughput of one reader." },
	{ "total", "stddev_mbps", "reader_read_stddev_bytes_per_second", OM_MEGA,
	  "Mean over the runs of the readers' throughput standard deviation." },
};

static const struct ometric swapin_metrics[] = {
	{ "setup", "working_set", "working_set_bytes", 0, "Memory each workload touches." },
	{ "setup", "cgroup_limit", "cgroup_limit_bytes", 0, "The memory cgroup's limit." },
	{ "setup", "runs", "runs", 0, "Runs of each configuration." },
	{ "auto_check", "auto_worst_percent", "auto_worst_loss_ratio", OM_PERCENT,
	  "How much slower --auto was than the best fixed page-cluster, at worst." },
	{ "auto_check", "auto_within_target", "auto_within_target", 0,
	  "1 if that loss is within the 10% target, else 0." },
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
	[O_LIMIT - O_QUICK] = XB_READTWICE | XB_SWAPIN,
	[O_PASSES - O_QUICK] = XB_SWAPIN,
	[O_THREADS - O_QUICK] = XB_SWAPIN,
	[O_SWAPDEV - O_QUICK] = XB_SWAPIN,
	[O_AUX_FILES - O_QUICK] = XB_WARMUP,
};

/* `pagecache bench compare A.json B.json [--json]` */
static int cmd_bench_compare(int argc, char **argv)
{
	struct cli_parser p;
	struct cli_opts co = { OUT_HUMAN };
	int opt, rc;

	/* the output options are stored; any other comes back, an experiment's */
	cli_parser_bind_to(&p, &bench_spec, &(struct cli_bound){ .co = &co }, argc, argv);
	if ((opt = cli_getopt(&p, argc, argv)) >= 0)
		return cli_usage_error("compare takes the output options only (see --help)");
	if (opt == CLI_STOP)
		return p.exit;
	if (argc - optind != 2)
		return cli_usage_error("compare takes two result files: A.json B.json");
	out_init(co.fmt, co.bytes, co.noheadings);
	out_set_raw(co.raw);
	out_prom_metrics("bench_compare", NULL, 0);
	out_tag("bench", "compare");
	out_list_declare("comparisons");
	out_list_declare("errors");
	rc = bench_compare(argv[optind], argv[optind + 1]);
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return rc;
}

/* `pagecache bench report -o HTML RESULT.json...` */
static int cmd_bench_report(int argc, char **argv)
{
	struct cli_parser p;
	const char *out = NULL;
	int opt;

	cli_parser_init(&p, &bench_spec, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		if (opt != O_OUTPUT)
			return cli_usage_error("report takes -o FILE only (see --help)");
		out = p.arg;
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (!out)
		return cli_usage_error("report needs -o FILE, the HTML file to write");
	if (!*out)
		return cli_usage_error("invalid -o '': an empty file name");
	if (argc - optind < 1)
		return cli_usage_error("report takes one or more result files: RESULT.json...");
	return bench_report(out, argv + optind, argc - optind);
}

/* "500us", "2ms", "0.5ms", "1s", "0": nanoseconds, 0 to 1 s; a nonzero figure needs its unit */
static int parse_latency(const char *s, uint64_t *ret_ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	char *end;
	double v;

	if (!*s || !strchr("0123456789.", *s))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -EINVAL;
	if (!*end && v == 0) {
		*ret_ns = 0;
		return 0;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].ns;
			if (v > 1e9)
				return -ERANGE;
			*ret_ns = (uint64_t)(v + 0.5);
			return 0;
		}
	return -EINVAL;
}

/*
 * slow's "LATENCY[,BANDWIDTH]": "1ms", "1ms,100M" (bytes a second, the
 * sizes' suffixes; at least 1M, so that a 32-page read takes at most 128 ms).
 * Returns 0, or cli_usage_error's exit status, the error said.
 */
static int parse_slow(const char *s, uint64_t *ret_ns, uint64_t *ret_bw)
{
	const char *comma = strchr(s, ',');
	size_t n = comma ? (size_t)(comma - s) : strlen(s);
	char lat[64];

	if (n < sizeof(lat)) {
		memcpy(lat, s, n);
		lat[n] = 0;
	}
	if (n >= sizeof(lat) || parse_latency(lat, ret_ns) < 0)
		return cli_usage_error("invalid latency '%.*s' (0 to 1s, with a unit: 500us, 2ms)",
				       (int)n, s);
	*ret_bw = 0;
	if (comma && (pc_parse_size(comma + 1, ret_bw) < 0 || *ret_bw < (1u << 20)))
		return cli_usage_error("invalid bandwidth '%s' (bytes a second, at least 1M: 100M)",
				       comma + 1);
	return 0;
}

static int bench_main(int argc, char **argv)
{
	struct cli_parser p;
	struct warmup_opts wo = { .dir = "/var/tmp/pagecache-bench", .rows = 15647665, .trials = 5 };
	struct cli_opts co = { OUT_HUMAN };
	struct readtwice_opts ro = { .cgroups = 2, .readers = 2, .size = 64ull << 30, .duration = 10,
				     .runs = 1 };
	struct swapin_opts so = { .pcs = { 0, 1, 2, 3, 4 }, .npc = 5, .vmas = { 1, 0 }, .nvma = 2,
				  .workloads = (1u << WL_COUNT) - 1, .runs = 5, .auto_interval = 0.1,
				  .wss = 192ull << 20, .limit = 128ull << 20, .passes = 5,
				  .device = SWDEV_ZRAM_LOOP, .latency_ns = 1000000 };
	bool rows_set = false, trials_set = false, dur_set = false, pc_set = false, runs_set = false;
	bool wss_set = false, limit_set = false, passes_set = false, dir_set = false;
	const char *limit_arg = NULL;
	enum { X_WARMUP, X_READTWICE, X_SWAPIN } x;
	char *end;
	int opt, rc, list[16], n;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	cli_parser_init(&p, &bench_spec, argc, argv);	/* JSON errors under --json */
	/* an inherited SIG_IGN would make the kernel reap the helpers: their status lost */
	signal(SIGCHLD, SIG_DFL);
	if (argc < 2) {
		cli_help(&bench_spec, stderr);
		return EXIT_USAGE;
	}
	if (argv[1][0] == '-') {	/* --help, --version; other options follow EXPERIMENT */
		opt = cli_getopt(&p, argc, argv);
		if (opt == CLI_STOP)
			return p.exit;
		return cli_usage_error("name the experiment first: pagecache bench EXPERIMENT "
				       "[OPTIONS]");
	}
	if (!strcmp(argv[1], "compare"))
		return cmd_bench_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_bench_report(argc - 1, argv + 1);
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
	cli_parser_bind_to(&p, &bench_spec, &(struct cli_bound){ .co = &co }, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		if (opt >= O_QUICK && opt < O_END && !(option_owner[opt - O_QUICK] & (1u << x)))
			return cli_usage_error("--%s is not an option of %s (see --help)",
					       cli_opt_name(&bench_spec, opt), argv[0]);
		switch (opt) {
		case O_CGROUPS:
			ro.cgroups = (int)strtol(p.arg, &end, 10);
			if (*end || ro.cgroups < 1 || ro.cgroups > 256)
				return cli_usage_error("invalid cgroup count '%s' (1-256)", p.arg);
			break;
		case O_READERS:
			ro.readers = (int)strtol(p.arg, &end, 10);
			if (*end || ro.readers < 1 || ro.readers > 64)
				return cli_usage_error("invalid readers per cgroup '%s' (1-64)", p.arg);
			break;
		case O_LAYOUT:
			if (!strcmp(p.arg, "shared"))
				ro.shared = true;
			else if (strcmp(p.arg, "per-cgroup"))
				return cli_usage_error("unknown layout '%s' (per-cgroup or shared)", p.arg);
			break;
		case O_SIZE:
			if (pc_parse_size(p.arg, &ro.size) < 0 || ro.size < (1u << 20))
				return cli_usage_error("invalid size '%s' (at least 1M)", p.arg);
			break;
		case O_DURATION:
			if (cli_parse_decimal(p.arg, 0, 3600, CLI_ABOVE_LO, &ro.duration) < 0)
				return cli_usage_error("invalid duration '%s' (seconds, up to 3600)", p.arg);
			dur_set = true;
			break;
		case O_RUNS:
			so.runs = ro.runs = (int)strtol(p.arg, &end, 10);
			if (*end || so.runs < 1 || so.runs > 64)
				return cli_usage_error("invalid runs '%s' (1-64)", p.arg);
			runs_set = true;
			break;
		case O_PC:
			so.npc = parse_int_list(p.arg, so.pcs, 8, 0, 9);
			if (so.npc < 0)
				return cli_usage_error("invalid page-cluster list '%s' (distinct 0-9, "
						       "comma separated)", p.arg);
			pc_set = true;
			break;
		case O_VMA: {
			static const char *const onoff[] = { "off", "on" };

			so.nvma = parse_word_list(p.arg, onoff, 2, so.vmas, 2);
			if (so.nvma < 0 || (so.nvma == 2 && so.vmas[0] == so.vmas[1]))
				return cli_usage_error("invalid --vma-ra '%s' (on, off or on,off)", p.arg);
			break;
		}
		case O_WORKLOAD: {
			static const char *const wl[] = { "seq", "random", "mt-random", "mixed" };

			n = parse_word_list(p.arg, wl, WL_COUNT, list, 16);
			if (n < 0)
				return cli_usage_error("invalid workload list '%s' (seq, random, "
						       "mt-random, mixed)", p.arg);
			so.workloads = 0;
			for (int i = 0; i < n; i++)
				so.workloads |= 1u << list[i];
			break;
		}
		case O_AUTO:
			so.with_auto = true;
			break;
		case O_AUTO_INTERVAL:
			if (cli_parse_decimal(p.arg, 0.01, 60, 0, &so.auto_interval) < 0)
				return cli_usage_error("invalid interval '%s' (0.01-60 seconds)", p.arg);
			break;
		case O_WSS:
			if (pc_parse_size(p.arg, &so.wss) < 0 || so.wss < (16u << 20))
				return cli_usage_error("invalid working set '%s' (at least 16M)", p.arg);
			wss_set = true;
			break;
		case O_LIMIT:
			if (pc_parse_size(p.arg, &so.limit) < 0 || !so.limit)
				return cli_usage_error("invalid limit '%s' (a size, e.g. 512M)", p.arg);
			if (x == X_SWAPIN && so.limit < (8u << 20))
				return cli_usage_error("invalid limit '%s' (at least 8M)", p.arg);
			ro.limit = so.limit;
			limit_arg = p.arg;
			limit_set = true;
			break;
		case O_PASSES:
			so.passes = (int)strtol(p.arg, &end, 10);
			if (*end || so.passes < 1 || so.passes > 1000)
				return cli_usage_error("invalid passes '%s' (1-1000)", p.arg);
			passes_set = true;
			break;
		case O_THREADS:
			so.threads = (int)strtol(p.arg, &end, 10);
			if (*end || so.threads < 1 || so.threads > 16)
				return cli_usage_error("invalid threads '%s' (1-16)", p.arg);
			break;
		case O_SWAPDEV:
			if (!strcmp(p.arg, "zram-loop"))
				so.device = SWDEV_ZRAM_LOOP;
			else if (!strcmp(p.arg, "zram"))
				so.device = SWDEV_ZRAM;
			else if (!strcmp(p.arg, "file"))
				so.device = SWDEV_FILE;
			else if (!strncmp(p.arg, "slow", 4) && (!p.arg[4] || p.arg[4] == ':')) {
				so.device = SWDEV_SLOW;
				if (p.arg[4] && (rc = parse_slow(p.arg + 5, &so.latency_ns, &so.bandwidth)))
					return rc;
			} else
				return cli_usage_error("unknown swap device '%s' (zram-loop, zram, file, "
						       "slow[:LATENCY[,BANDWIDTH]])", p.arg);
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
			wo.rows = strtoull(p.arg, &end, 10);
			if (*end || wo.rows < 10000)
				return cli_usage_error("invalid row count '%s' (at least 10000)", p.arg);
			rows_set = true;
			break;
		case O_TRIALS:
			wo.trials = (int)strtol(p.arg, &end, 10);
			if (*end || wo.trials < 1 || wo.trials > 64)
				return cli_usage_error("invalid trials '%s' (1-64)", p.arg);
			trials_set = true;
			break;
		case O_AUX_FILES:
			wo.aux_files = strtoull(p.arg, &end, 10);
			if (*end || !*p.arg || *p.arg == '-' || wo.aux_files > 1000000)
				return cli_usage_error("invalid aux file count '%s' (0-1000000)", p.arg);
			break;
		case O_DIR:
			wo.dir = so.dir = p.arg;
			dir_set = true;
			break;
		case O_WORKER:
			return bench_warmup_worker(p.arg, wo.aux_files);
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	out_init(co.fmt, co.bytes, co.noheadings);
	out_set_raw(co.raw);
	if (x == X_SWAPIN) {
		if (so.limit >= so.wss)
			return cli_usage_error("the limit (%llu MiB) must be below the working set "
					       "(%llu MiB), or nothing swaps",
					       (unsigned long long)(so.limit >> 20),
					       (unsigned long long)(so.wss >> 20));
		if (!dir_set)
			so.dir = "/var/tmp";
		out_prom_metrics("bench_swapin", swapin_metrics,
				 sizeof(swapin_metrics) / sizeof(swapin_metrics[0]));
		out_tag("bench", "swapin");
		out_list_declare("results");
		out_list_declare("errors");
		so.progress = co.fmt == OUT_HUMAN && cli_stderr_tty();
		rc = bench_swapin(&so);
		if (out_flush() < 0)
			return EXIT_PARTIAL;
		return rc;
	}
	if (x == X_READTWICE && ro.limit) {
		/*
		 * A reader's own memory is charged to its memcg too: after the
		 * cache is dropped, the program's text it faults in again (about
		 * 1.4M), its anonymous pages and page tables (0.5M). Under 2M a
		 * reader, or 8M a cgroup, the OOM killer comes (2M for two readers
		 * did, 4M did not): refused here, before anything is made.
		 */
		uint64_t floor = (uint64_t)ro.readers * (2u << 20), v;
		const char *env = getenv("PAGECACHE_READTWICE_MIN_LIMIT");	/* the tests' OOM */
		char a[32], b[32];

		if (floor < (8u << 20))
			floor = 8u << 20;
		if (env && *env && pc_parse_size(env, &v) == 0)
			floor = v;
		if (ro.limit < floor)
			return cli_usage_error("limit '%s' is too small for %d readers a cgroup: at least "
					       "%s (about 2M of their own memory each, and room to "
					       "reclaim the file's pages in)", limit_arg, ro.readers,
					       pc_human_size(floor, a, sizeof(a)));
		if (ro.limit >= ro.size)
			cli_warn("the limit (%s) holds a whole file (%s): nothing is reclaimed inside "
				 "the memory cgroups", pc_human_size(ro.limit, a, sizeof(a)),
				 pc_human_size(ro.size, b, sizeof(b)));
		{
			struct pc_memstat m;

			uint64_t room, sum = ro.limit * (uint64_t)ro.cgroups;

			if (pc_memstat_read(&m) == 0 && m.mem_available) {
				room = m.mem_available;
				if (m.cg_limit && m.cg_limit - (m.cg_usage < m.cg_limit ? m.cg_usage
								: m.cg_limit) < room)
					room = m.cg_limit - (m.cg_usage < m.cg_limit ? m.cg_usage : m.cg_limit);
				if (sum > room)
					cli_warn("the limits add up to %s, more than the %s available%s: "
						 "reclaim outside the memory cgroups comes before theirs",
						 pc_human_size(sum, a, sizeof(a)), pc_human_size(room, b, sizeof(b)),
						 room < m.mem_available ? " in our cgroup" : "");
			}
		}
	}
	if (x == X_READTWICE) {
		out_prom_metrics("bench_readtwice", readtwice_metrics,
				 sizeof(readtwice_metrics) / sizeof(readtwice_metrics[0]));
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
	out_prom_metrics("bench_warmup", warmup_metrics,
			 sizeof(warmup_metrics) / sizeof(warmup_metrics[0]));
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
	rc = cli_fault_env();
	if (rc)
		return rc;
	rc = bench_main(argc, argv);
	if (fclose(stdout) != 0 && errno != EPIPE) {
		fprintf(stderr, "pagecache: cannot write output: %s\n", strerror(errno));
		return EXIT_PARTIAL;
	}
	return rc;
}
