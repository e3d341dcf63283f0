/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-tune.c: `pagecache tune swap`: the swap readahead state (page-cluster,
 * VMA readahead, the swap devices and whether readahead can happen on
 * them), the readahead hit ratio and fault rates over an interval, and
 * advice. With --auto, a controller (pc_swap_tuner_step in lib/vmstat.c)
 * moves vm.page-cluster from the observed hit ratio until stopped, then
 * puts the original value back, on SIGINT, SIGTERM and SIGHUP too.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "state.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static const struct ocol tune_cols[] = {
	{ "name", "DEVICE", true }, { "type", "TYPE", true },
	{ "size", "SIZE", false }, { "used", "USED", false },
	{ "priority", "PRIO", false }, { "readahead", "READAHEAD", true },
};

/* What tune swap was told. */
struct tune_cli {
	double interval, duration;	/* seconds; duration 0: until stopped */
	int min_pc, max_pc;		/* --min, --max: page-cluster's range */
	bool autom;			/* --auto */
};

#define PC_WORDS "0 1 2 3 4 5 6 7 8 9"
#define BAD_PC "invalid page-cluster '%s' (0-9)"
enum { OPT_AUTO = CLI_OPT_OWN, OPT_DURATION, OPT_MIN, OPT_MAX };
static const struct cli_opt tune_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "interval", .letter = 'i', .id = 'i', .arg = "S",
	  CLI_SECONDS(struct tune_cli, interval), .lo = 0.01, .hi = 3600,
	  .bad = "invalid interval '%s' (0.01-3600 seconds)",
	  .help = "sampling interval in seconds (default 1)" },
	{ .name = "auto", .id = OPT_AUTO, CLI_SET(struct tune_cli, autom),
	  .help = "run the controller" },
	{ .name = "duration", .id = OPT_DURATION, .arg = "S",
	  CLI_SECONDS(struct tune_cli, duration), .lo = 0, .hi = 1e7, .range = CLI_ABOVE_LO,
	  .bad = "invalid duration '%s' (seconds)",
	  .help = "with --auto, stop after S seconds (default: no limit)" },
	{ .name = "min", .id = OPT_MIN, .arg = "N", .comp = CC_WORDS, .words = PC_WORDS,
	  CLI_INT(struct tune_cli, min_pc), .lo = 0, .hi = 9, .bad = BAD_PC,
	  .help = "with --auto, the lowest page-cluster (default 0)" },
	{ .name = "max", .id = OPT_MAX, .arg = "N", .comp = CC_WORDS, .words = PC_WORDS,
	  CLI_INT(struct tune_cli, max_pc), .lo = 0, .hi = 9, .bad = BAD_PC,
	  .help = "with --auto, the highest page-cluster (default 5)" },
	{ 0 }
};

const struct cli_spec tune_spec = {
	.name = "tune",
	.usage =
	"Usage: pagecache tune swap [OPTIONS]\n"
	"\n"
	"Show the swap readahead state and how well readahead does, with advice:\n"
	"vm.page-cluster, /sys/kernel/mm/swap/vma_ra_enabled, each swap device (a\n"
	"rotational one turns VMA readahead off for all; zram skips readahead for\n"
	"private pages), and over an interval the readahead hit ratio\n"
	"(swap_ra_hit / swap_ra), swap-ins and major faults per second.\n"
	"\n"
	"With --auto, adjust vm.page-cluster as the load runs: readahead hits push\n"
	"it up, misses pull it down (two intervals in a row beyond 75% or below 40%\n"
	"to move). At 0 it tries 1 after one interval of swapping, and waits twice\n"
	"as long after each try that found no hits (up to 32 intervals); a try that\n"
	"hits climbs one step an interval. It starts from the value it finds, and\n"
	"reports when it settled (its last move, fruitless tries left out). The\n"
	"original value is restored when stopped (Ctrl-C, SIGTERM, --duration).\n"
	"Needs write permission on\n"
	"/proc/sys/vm/page-cluster: the kernel gives it to uid 0 of the initial user\n"
	"namespace, and no capability stands in for it (a container's root is refused).\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache tune swap                 state, hit ratio over 1 s, advice\n"
	"  pagecache tune swap -i 10 --json\n"
	"  pagecache tune swap --auto --duration 600\n"
	"  pagecache bench swapin --with-auto  the controller against fixed settings\n",
	.groups = { &(struct cli_group){ "Options", tune_opts }, &cli_format_group },
	.operands = CC_WORDS,
	.operand_words = "swap",
	.cols = tune_cols,
	.ncols = sizeof(tune_cols) / sizeof(tune_cols[0]),
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static const char *const vm_names[] = { "swap_ra", "swap_ra_hit", "pswpin", "pgmajfault" };

struct swap_dev {
	char name[256], type[16];
	uint64_t size, used;
	int prio;
	int rotational;		/* -1: unknown */
	bool zram;
};

static int read_swaps(struct swap_dev *d, int max)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long long size, used;

		if (sscanf(line, "%255s %15s %llu %llu %d", d[n].name, d[n].type, &size, &used,
			   &d[n].prio) != 5)
			continue;	/* the header */
		d[n].size = size << 10;
		d[n].used = used << 10;
		d[n].zram = !strncmp(d[n].name, "/dev/zram", 9);
		d[n].rotational = bench_rotational(d[n].name);
		n++;
	}
	fclose(f);
	return n;
}

static double sleep_s(double s)
{
	double t0 = pc_now();
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !stop)
		;
	return pc_now() - t0;
}

static int tune_auto(double interval, double duration, int min_pc, int max_pc)
{
	struct bench_knob pc_knob = { .path = "/proc/sys/vm/page-cluster" };
	struct bench_state state = { .fd = -1 };
	struct sigaction sa = { .sa_handler = on_signal }, old[3];
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct pc_swap_tuner t;
	uint64_t prev[4], cur[4];
	char v[16];
	double t0 = pc_now(), pc_time = 0, time_acc = 0;
	int rc = 0, moves = 0;
	bool human = out_format() == OUT_HUMAN;

	/*
	 * May we write it? Opening for writing asks the kernel what the write
	 * would (a sysctl's permission is its mode against the euid: uid 0 of
	 * the initial user namespace; no capability counts) and changes nothing.
	 */
	{
		int fd = open(pc_knob.path, O_WRONLY | O_CLOEXEC);

		if (fd < 0) {
			int err = errno;

			cli_fail_msg(pc_knob.path, "cannot tune",
				     err == EACCES || err == EPERM
					     ? "--auto needs write permission on it: a sysctl file, "
					       "writable only by uid 0 of the initial user namespace "
					       "(no capability stands in for it)"
				     : err == EROFS ? "--auto cannot write it: /proc/sys is mounted "
						      "read-only here (a container's)"
						    : strerror(err));
			return EXIT_PARTIAL;
		}
		close(fd);
	}
	{
		long live = 0;

		/* ours first, locked, so two starting at once see each other */
		if (bench_state_open(&state, "tune") < 0)
			cli_warn("cannot keep a state file in /run/pagecache: a kill -9 would "
				 "leave vm.page-cluster changed");
		bench_state_recover("tune", &live);	/* a killed --auto left its page-cluster */
		bench_state_recover("swapin", &live);
		if (live) {
			cli_fail_msg("/proc/sys/vm/page-cluster", "cannot tune", "another tune swap "
				     "--auto or swapin bench is running");
			bench_state_close(&state);
			return EXIT_PARTIAL;
		}
	}
	/* after the recovery (its swapoff is swap-in the tuner must not count) */
	if (pc_read_text(pc_knob.path, v, sizeof(v)) < 0 || pc_vmstat_read(vm_names, prev, 4) < 4) {
		cli_fail_msg("/proc/vmstat", "cannot tune",
			     "this kernel lacks vm.page-cluster or the swap_ra counters");
		bench_state_close(&state);
		return EXIT_PARTIAL;
	}
	sigemptyset(&sa.sa_mask);	/* before the first change */
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	pc_swap_tuner_init(&t, atoi(v));
	t.min_pc = min_pc;
	t.max_pc = max_pc;
	if (t.pc < min_pc || t.pc > max_pc) {
		t.pc = t.pc < min_pc ? min_pc : max_pc;
		snprintf(v, sizeof(v), "%d", t.pc);
		bench_knob_set(&pc_knob, v);
	}
	if (human) {
		printf("tune swap --auto: page-cluster %d, every %.3g s, between %d and %d; Ctrl-C "
		       "stops and restores it\n", t.pc, interval, min_pc, max_pc);
		fflush(stdout);
	}
	while (!stop && (duration <= 0 || pc_now() - t0 < duration)) {
		double dt = sleep_s(interval), now = pc_now() - t0;
		int before = t.pc, pc;

		if (pc_vmstat_read(vm_names, cur, 4) < 4) {
			rc = -EIO;
			break;
		}
		pc_time += before * dt;
		time_acc += dt;
		pc = pc_swap_tuner_step(&t, cur[0] - prev[0], cur[1] - prev[1], cur[2] - prev[2]);
		if (pc != before) {
			struct orec rec = { 0 };

			snprintf(v, sizeof(v), "%d", pc);
			rc = bench_knob_set(&pc_knob, v);
			if (rc < 0)
				break;
			moves++;
			orec_f64(&rec, "time_s", now);
			orec_u64(&rec, "from", (uint64_t)before, 0);
			orec_u64(&rec, "to", (uint64_t)pc, 0);
			if (t.last_ratio >= 0)
				orec_f64(&rec, "hit_percent", 100 * t.last_ratio);
			else
				orec_null(&rec, "hit_percent");
			orec_f64(&rec, "pswpin_per_s", dt > 0 ? (double)(cur[2] - prev[2]) / dt : 0);
			out_list_add("steps", &rec);
			if (human) {
				char hits[16] = "none";

				if (t.last_ratio >= 0)
					snprintf(hits, sizeof(hits), "%.0f%%", 100 * t.last_ratio);
				printf("%8.1f s  page-cluster %d -> %d  (readahead hits %s, %.0f "
				       "swap-ins/s)\n", now, before, pc, hits,
				       dt > 0 ? (double)(cur[2] - prev[2]) / dt : 0);
				fflush(stdout);
			}
		}
		memcpy(prev, cur, sizeof(prev));
	}
	if (bench_knob_restore(&pc_knob) < 0) {
		cli_warn("could not restore vm.page-cluster to %s", pc_knob.orig);
		rc = -EIO;
	} else {
		bench_state_close(&state);
	}
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	{
		struct orec rec = { 0 };
		double el = pc_now() - t0;

		orec_f64(&rec, "duration_s", el);
		orec_u64(&rec, "moves", (uint64_t)moves, 0);
		/* the last move that stayed: fruitless probes from 0 do not count */
		orec_u64(&rec, "converge_intervals", t.settled_at, 0);
		orec_f64(&rec, "converge_s", (double)t.settled_at * interval);
		orec_u64(&rec, "probes", t.probes, 0);
		orec_f64(&rec, "mean_page_cluster", time_acc > 0 ? pc_time / time_acc : t.pc);
		if (pc_knob.changed)	/* the restore failed */
			orec_null(&rec, "restored_to");
		else
			orec_str(&rec, "restored_to", pc_knob.saved ? pc_knob.orig : v, 0);
		out_object("auto", &rec);
		if (!pc_knob.changed)
			out_human_line("stopped after %.1f s, %d moves, mean page-cluster %.2f, "
				       "settled after %llu intervals (%.1f s; %llu probes from 0); "
				       "vm.page-cluster is back to %s", el, moves,
				       time_acc > 0 ? pc_time / time_acc : t.pc,
				       (unsigned long long)t.settled_at, (double)t.settled_at * interval,
				       (unsigned long long)t.probes, pc_knob.saved ? pc_knob.orig : v);
	}
	return rc < 0 ? EXIT_PARTIAL : 0;
}

/*
 * Prometheus text: docs/metrics.md. The kernel's counters as they are
 * (a rate is PromQL's to take), swap pages in bytes; tune swap --auto has
 * its own prefix, so both can share a textfile directory.
 */
static const struct ometric show_metrics[] = {
	{ "swap", "page_cluster", "page_cluster", 0,
	  "vm.page-cluster: swap readahead reads up to 2^N pages." },
	{ "swap", "vma_ra_enabled", "vma_readahead_enabled", 0,
	  "1 if VMA-based swap readahead is enabled, else 0." },
	{ "swap", "vma_ra_effective", "vma_readahead_effective", 0,
	  "1 if VMA-based swap readahead is used (no rotational swap device), else 0." },
	{ "swap", "vmstat_swap_ra", "readahead_bytes_total", OM_COUNTER | OM_PAGES,
	  "Bytes read ahead from swap since boot (/proc/vmstat swap_ra)." },
	{ "swap", "vmstat_swap_ra_hit", "readahead_hit_bytes_total", OM_COUNTER | OM_PAGES,
	  "Bytes read ahead from swap and then used, since boot (/proc/vmstat swap_ra_hit)." },
	{ "swap", "vmstat_pswpin", "swapin_bytes_total", OM_COUNTER | OM_PAGES,
	  "Bytes swapped in since boot (/proc/vmstat pswpin)." },
	{ "swap", "vmstat_pgmajfault", "major_faults_total", OM_COUNTER,
	  "Major page faults since boot (/proc/vmstat pgmajfault)." },
	{ "devices", "name", "device", OM_LABEL, "" },
	{ "devices", "size", "device_size_bytes", 0, "Size of the swap device or file." },
	{ "devices", "used", "device_used_bytes", 0, "Swap in use on the device or file." },
	{ "devices", "priority", "device_priority", 0, "The swap device's priority." },
	{ "devices", "rotational", "device_rotational", 0,
	  "1 if the swap device is rotational, else 0; absent if unknown." },
};

static const struct ometric auto_metrics[] = {
	{ "auto", "duration_s", "duration_seconds", 0, "How long the last --auto run took." },
	{ "auto", "moves", "moves", 0, "Changes of vm.page-cluster the last --auto run made." },
	{ "auto", "mean_page_cluster", "mean_page_cluster", 0,
	  "vm.page-cluster over the last --auto run, weighted by time." },
	{ "auto", "converge_s", "converge_seconds", 0,
	  "When the last --auto run made its last move that stayed (fruitless probes from 0 left out)." },
	{ "auto", "probes", "probes", 0, "Probes of page-cluster 1 from 0 the last --auto run made." },
};

/* One interval of observation, and what it suggests. */
static int tune_show(double interval)
{
	struct swap_dev d[32];
	int n = read_swaps(d, 32), pc = -1;
	uint64_t v0[4], v1[4];
	char buf[32], vma[16] = "", rot[256] = "", advice[400];
	bool only_zram = n > 0, vma_on;
	double dt, ratio = -1;

	if (pc_read_text("/proc/sys/vm/page-cluster", buf, sizeof(buf)) == 0)
		pc = atoi(buf);
	pc_read_text("/sys/kernel/mm/swap/vma_ra_enabled", vma, sizeof(vma));
	vma_on = !strcmp(vma, "true") || !strcmp(vma, "1");
	if (pc_vmstat_read(vm_names, v0, 4) < 4) {
		cli_fail_msg("/proc/vmstat", "cannot read",
			     "no swap_ra counters (a kernel before 4.14, or no swap support)");
		return EXIT_PARTIAL;
	}
	dt = sleep_s(interval);
	if (pc_vmstat_read(vm_names, v1, 4) < 4) {
		cli_fail_msg("/proc/vmstat", "cannot read", "the counters went away");
		return EXIT_PARTIAL;
	}
	for (int i = 0; i < n; i++) {
		if (!d[i].zram)
			only_zram = false;
		if (d[i].rotational == 1 && !rot[0])
			memcpy(rot, d[i].name, sizeof(rot));
	}
	for (int i = 0; i < n; i++) {
		struct orec rec = { 0 };

		orec_str(&rec, "name", d[i].name, 0);
		orec_str(&rec, "type", d[i].type, 0);
		orec_u64(&rec, "size", d[i].size, OF_BYTES);
		orec_u64(&rec, "used", d[i].used, OF_BYTES);
		orec_f64(&rec, "priority", d[i].prio);	/* swapon's default is negative */
		if (d[i].rotational < 0)
			orec_null(&rec, "rotational");
		else
			orec_bool(&rec, "rotational", d[i].rotational);
		orec_str(&rec, "readahead", d[i].zram ? "none (synchronous device)" :
			 (vma_on && !rot[0]) ? "vma" : "cluster", 0);
		out_list_add("devices", &rec);
	}
	{
		uint64_t ra = v1[0] - v0[0], hit = v1[1] - v0[1], in = v1[2] - v0[2];

		if (ra)
			ratio = (double)(hit < ra ? hit : ra) / (double)ra;
		if (n == 0)
			snprintf(advice, sizeof(advice), "no swap is on: nothing to tune");
		else if (only_zram)
			snprintf(advice, sizeof(advice),
				 "swap is zram only: the kernel reads private pages from it one at "
				 "a time, with no readahead, so page-cluster changes little");
		else if (in < 64)
			snprintf(advice, sizeof(advice),
				 "too little swap-in in %.1f s (%llu pages) to judge readahead", dt,
				 (unsigned long long)in);
		else if (pc == 0)
			snprintf(advice, sizeof(advice),
				 "readahead is off (page-cluster 0) while swapping in %.0f pages/s: "
				 "`pagecache tune swap --auto` finds out whether it would pay",
				 (double)in / dt);
		else if (ratio < 0 || ratio < 0.40)
			snprintf(advice, sizeof(advice),
				 "readahead is mostly wasted (%s of pages read ahead were used): a "
				 "smaller page-cluster saves swap I/O", ratio < 0 ? "none" :
				 (snprintf(buf, sizeof(buf), "%.0f%%", 100 * ratio), buf));
		else if (ratio >= 0.75)
			snprintf(advice, sizeof(advice),
				 "readahead pays (%.0f%% of pages read ahead were used): a larger "
				 "page-cluster may cut major faults further", 100 * ratio);
		else
			snprintf(advice, sizeof(advice), "page-cluster %d suits this load "
				 "(%.0f%% readahead hits)", pc, 100 * ratio);
		{
			struct orec rec = { 0 };

			if (pc >= 0)
				orec_u64(&rec, "page_cluster", (uint64_t)pc, 0);
			else
				orec_null(&rec, "page_cluster");
			orec_bool(&rec, "vma_ra_enabled", vma_on);
			orec_bool(&rec, "vma_ra_effective", vma_on && !rot[0]);
			orec_f64(&rec, "interval_s", dt);
			orec_u64(&rec, "swap_ra", ra, 0);
			orec_u64(&rec, "swap_ra_hit", hit, 0);
			if (ratio >= 0)
				orec_f64(&rec, "hit_percent", 100 * ratio);
			else
				orec_null(&rec, "hit_percent");
			orec_f64(&rec, "pswpin_per_s", (double)in / dt);
			orec_f64(&rec, "pgmajfault_per_s", (double)(v1[3] - v0[3]) / dt);
			orec_str(&rec, "advice", advice, 0);
			/* the counters themselves, at the end: what a rate is taken of */
			orec_u64(&rec, "vmstat_swap_ra", v1[0], 0);
			orec_u64(&rec, "vmstat_swap_ra_hit", v1[1], 0);
			orec_u64(&rec, "vmstat_pswpin", v1[2], 0);
			orec_u64(&rec, "vmstat_pgmajfault", v1[3], 0);
			out_object("swap", &rec);
		}
		if (out_format() == OUT_HUMAN) {
			out_columns("devices", tune_cols, sizeof(tune_cols) / sizeof(tune_cols[0]));
			int most = pc >= 0 ? 1 << pc : 0;

			if (vma_on && !rot[0] && pc > 5)
				most = 32;	/* VMA readahead's window stops at 1 << 5 */
			out_human_line("page-cluster %d (up to %d pages a readahead); VMA readahead %s%s%s",
				       pc, most, vma_on ? "on" : "off",
				       vma_on && rot[0] ? ", but not in effect: rotational swap " : "",
				       vma_on && rot[0] ? rot : "");
			if (ratio >= 0)
				out_human_line("over %.1f s: readahead hits %.1f%% (%llu of %llu), %.0f "
					       "swap-ins/s, %.0f major faults/s", dt, 100 * ratio,
					       (unsigned long long)(hit < ra ? hit : ra),
					       (unsigned long long)ra,
					       (double)in / dt, (double)(v1[3] - v0[3]) / dt);
			else
				out_human_line("over %.1f s: no readahead, %.0f swap-ins/s, %.0f major "
					       "faults/s", dt, (double)in / dt,
					       (double)(v1[3] - v0[3]) / dt);
			out_human_line("advice: %s", advice);
		}
	}
	return 0;
}

int cmd_tune(int argc, char **argv)
{
	struct cli_parser p;
	struct cli_opts co = { OUT_HUMAN };
	struct tune_cli cl = { .interval = 1, .max_pc = 5 };
	int opt, rc;

	cli_parser_init(&p, &tune_spec, argc, argv);	/* unbound: nothing stored yet */
	if (argc < 2) {
		cli_help(&tune_spec, stderr);
		return EXIT_USAGE;
	}
	if (argv[1][0] == '-') {	/* --help, --version; any other option wants the tunable first */
		opt = cli_getopt(&p, argc, argv);
		if (opt == CLI_STOP)
			return p.exit;
		return cli_usage_error("name the tunable first: pagecache tune swap [OPTIONS]");
	}
	if (strcmp(argv[1], "swap"))
		return cli_usage_error("unknown tunable '%s' (only: swap)", argv[1]);
	argc--;
	argv++;
	rc = cli_parse_format_only(&tune_spec, &cl, &co, argc, argv);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (cl.min_pc > cl.max_pc)
		return cli_usage_error("--min %d is above --max %d", cl.min_pc, cl.max_pc);
	if (cl.duration > 0 && !cl.autom)
		return cli_usage_error("--duration goes with --auto");
	out_init(co.fmt, co.bytes, co.noheadings);
	out_set_raw(co.raw);
	if (cl.autom)
		out_prom_metrics("tune_swap_auto", auto_metrics,
				 sizeof(auto_metrics) / sizeof(auto_metrics[0]));
	else
		out_prom_metrics("tune_swap", show_metrics,
				 sizeof(show_metrics) / sizeof(show_metrics[0]));
	if (cl.autom) {
		out_list_declare("steps");
		out_list_declare("errors");
		rc = tune_auto(cl.interval, cl.duration, cl.min_pc, cl.max_pc);
	} else {
		out_list_declare("devices");
		out_list_declare("errors");
		rc = tune_show(cl.interval);
	}
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return rc;
}
