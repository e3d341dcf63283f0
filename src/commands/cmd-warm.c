/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-warm.c: `pagecache warm`: read files into the page cache.
 *
 * Success means every page is resident with its read finished (mincore
 * agrees), not merely queued. Never past the memory budget: --max-mem, and
 * always the default guard (MemAvailable minus a reserve, and the memory
 * cgroup's headroom); where it stops, it says how far it got.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct warm_tot {
	uint64_t files, pages, resident, read, denied;
	uint64_t partly, cut;		/* files the budget cut short; their pages left out */
} __attribute__((aligned(64)));

/* The file a warmer's budget cut short, to name where it stopped. */
struct warm_cut {
	char *path;
	uint64_t resident, pages;
};

struct warm_ctx {
	struct targets t;
	struct pc_budget budget;
	struct pc_warmer **w;		/* one per walker thread */
	unsigned nt;			/* walker threads */
	struct warm_tot *tot;
	struct warm_cut *cut;		/* one per walker thread */
	struct pc_progress progress;
	uint64_t found;			/* bytes of the files found so far: the progress total */
	bool list;			/* -v: a row per file */
	bool quiet;			/* -q: no progress line, no summary */
};

static const struct ocol warm_cols[] = {
	{ "pages", "TOTAL", false }, { "resident", "RESIDENT", false },
	{ "read", "READ", false },   { "check", "CHECK", true },
	{ "status", "STATUS", true }, { "path", "FILE", true },
};

enum { OPT_ENGINE = CLI_OPT_OWN, OPT_CHUNK };
static const struct cli_opt warm_opts[] = {
	CLI_OPT_COLUMNS,
	CLI_OPT_RATE,
	{ .name = "engine", .id = OPT_ENGINE, .arg = "E", .comp = CC_WORDS,
	  .words = "threads uring auto",
	  .help = "threads (readahead(2); the default, auto) or uring" },
	{ .name = "chunk", .id = OPT_CHUNK, .arg = "SIZE", .comp = CC_SIZE,
	  .help = "bytes per read request (default: the device's cap)" },
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_SET(struct warm_ctx, list),
	  .help = "list each file" },
	{ .name = "quiet", .letter = 'q', .id = 'q', CLI_SET(struct warm_ctx, quiet),
	  .help = "no progress line, no summary (vmtouch's -q)" },
	{ 0 }
};

const struct cli_spec warm_spec = {
	.name = "warm",
	.usage =
	"Usage: pagecache warm [OPTIONS] PATH...\n"
	"\n"
	"Read files and trees into the page cache, as fast as the device allows.\n"
	"Reads are issued in chunks no larger than the device's per-call readahead\n"
	"cap (the kernel silently drops the rest of a bigger request), many files at\n"
	"once (io_uring, or readahead(2) from a thread pool where io_uring is not\n"
	"allowed), then every page is checked with mincore(2) and what fell short is\n"
	"read again. Exit 0 means every page is in memory.\n"
	"\n"
	"It never adds more page cache than MemAvailable minus a reserve (default\n"
	"5% of RAM, at least 256M), nor more than the caller's memory cgroup has\n"
	"room for; it stops there and says how far it got (exit 1).\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache warm /var/lib/mysql\n"
	"  pagecache warm --max-mem 2G --rate 200 /srv/index\n"
	"Exit status: 0 all resident, 1 some files failed or the budget stopped it,\n"
	"2 usage.\n",
	.groups = { &(struct cli_group){ "Options", warm_opts }, &cli_budget_group,
		    &cli_format_act_group, &cli_targets_group },
	.operands = CC_FILE,
	.cols = warm_cols,
	.ncols = sizeof(warm_cols) / sizeof(warm_cols[0]),
};

/* Prometheus text: docs/metrics.md; pages are exported in bytes */
static const struct ometric metrics[] = {
	{ "total", "files", "files", 0, "Files the last run warmed (or tried to)." },
	{ "total", "pages", "examined_bytes", OM_PAGES,
	  "Bytes to warm: the pages of each file (of its --range), times the page size." },
	{ "total", "resident", "resident_bytes", OM_PAGES,
	  "Bytes of those pages resident when the run ended (verified)." },
	{ "total", "read", "read_bytes", OM_PAGES, "Bytes the last run read into the cache." },
	{ "total", "denied", "denied_files", 0,
	  "Files read in full with pread, since the kernel would not say what is cached." },
	{ "total", "budget_stopped", "budget_stopped", 0,
	  "1 if the memory budget stopped the run early, else 0." },
	{ "total", "partly", "partly_files", 0,
	  "Files the memory budget cut short: warmed up to where it ran out." },
	{ "total", "cut", "cut_bytes", OM_PAGES,
	  "Bytes of those files the budget left out (not read)." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "elapsed", "duration_seconds", 0, "How long the last run took." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "pages", "file_examined_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes to warm of the file: its pages (of its --range), times the page size." },
	{ "files", "resident", "file_resident_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file resident when it was done." },
	{ "files", "read", "file_read_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file the last run read into the cache." },
};

static void report(struct warm_ctx *c, unsigned worker)
{
	struct pc_warm_result r;
	struct warm_tot *t = &c->tot[worker];

	while (pc_warmer_next_result(c->w[worker], &r)) {
		t->files++;
		t->pages += r.pages;
		t->resident += r.resident;
		t->read += r.read;
		if (r.denied)
			t->denied++;
		if (r.cut) {
			struct warm_cut *k = &c->cut[worker];

			t->partly++;
			t->cut += r.cut;
			free(k->path);
			k->path = strdup(r.path);
			k->resident = r.resident;
			k->pages = r.pages;
		}
		if (r.err == ESTALE)
			cli_fail_msg(r.path, "cannot warm", "the file shrank while it was read");
		else if (r.err == ENOMEM)
			cli_fail_msg(r.path, "cannot warm",
				     "pages were evicted as fast as they were read (memory pressure)");
		else if (r.err)
			cli_fail(r.path, r.err, "cannot warm");
		if (c->list) {
			struct orec rec = { 0 };

			orec_str(&rec, "path", r.path, OF_LABEL);
			orec_u64(&rec, "pages", r.pages, OF_PAGES);
			orec_u64(&rec, "resident", r.resident, OF_PAGES);
			orec_u64(&rec, "read", r.read, OF_PAGES);
			orec_str(&rec, "check", r.by_read ? "read" : "mincore", 0);
			orec_str(&rec, "status", r.err ? strerror(r.err) : r.cut ? "partly" : "ok", 0);
			out_list_add("files", &rec);
		}
	}
}

static int warm_file(struct pc_walk_entry *e, void *arg)
{
	struct warm_ctx *c = arg;
	uint64_t size = (uint64_t)e->st.st_size, want;
	int rc;

	want = c->t.off >= size ? 0 : c->t.len && c->t.len < size - c->t.off ? c->t.len
									   : size - c->t.off;
	__atomic_add_fetch(&c->found, want, __ATOMIC_RELAXED);
	rc = pc_warmer_add(c->w[e->worker], e->fd, e->path, &e->st, c->t.off, c->t.len);

	e->fd = -1;	/* the warmer has it now */

	report(c, e->worker);
	if (rc == -ENOSPC)
		return 1;	/* the budget is spent: stop the walk */
	if (rc < 0)
		cli_fail(e->path, -rc, "cannot warm");
	return 0;
}

/* What warm was told that warm_ctx does not keep. */
struct warm_cli {
	struct cli_opts co;
	struct cli_budget bo;
	struct pc_warm_opts wo;		/* --engine, --chunk */
};

/* -1: go on; else the exit status. */
static int parse(struct warm_ctx *c, struct warm_cli *cl, int argc, char **argv)
{
	struct cli_bound to = { .base = c, .co = &cl->co, .t = &c->t, .bo = &cl->bo };
	struct cli_parser p;
	int opt;

	targets_init(&c->t);
	cli_parser_bind_to(&p, &warm_spec, &to, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case OPT_ENGINE:
			if (!strcmp(p.arg, "uring") || !strcmp(p.arg, "io_uring"))
				cl->wo.engine = PC_ENGINE_URING;
			else if (!strcmp(p.arg, "threads") || !strcmp(p.arg, "readahead"))
				cl->wo.engine = PC_ENGINE_THREADS;
			else if (!strcmp(p.arg, "auto"))
				cl->wo.engine = PC_ENGINE_AUTO;
			else
				return cli_usage_error("unknown engine '%s' (uring, threads, auto)",
						       p.arg);
			break;
		case OPT_CHUNK:
			if (pc_parse_size(p.arg, &cl->wo.chunk) < 0 || cl->wo.chunk < pc_page_size())
				return cli_usage_error("invalid chunk '%s' (at least one page)",
						       p.arg);
			break;
		}
	}
	return cli_files_begin(&p, opt, &cl->co, &c->t, argc, argv);
}

/* The budget, then a warmer for each walker thread. -1: go on; else the exit status. */
static int start_warmers(struct warm_ctx *c, struct warm_cli *cl)
{
	int rc = pc_budget_init(&c->budget, cl->bo.max_mem, cl->bo.reserve);

	if (rc < 0) {
		cli_fail("/proc/meminfo", -rc, "cannot read memory state from");
		return EXIT_PARTIAL;
	}
	c->budget.rate = cl->bo.rate;
	cl->wo.budget = &c->budget;
	cl->wo.progress = &c->progress;
	c->nt = pc_walk_threads(&c->t.walk);
	c->w = calloc(c->nt, sizeof(*c->w));
	c->tot = cli_alloc_totals(c->nt, sizeof(*c->tot), _Alignof(__typeof__(*c->tot)));
	c->cut = calloc(c->nt, sizeof(*c->cut));
	if (!c->w || !c->tot || !c->cut) {
		cli_fail("memory", ENOMEM, "cannot start warming:");
		return EXIT_PARTIAL;
	}
	for (unsigned i = 0; i < c->nt; i++) {
		rc = pc_warmer_new(&cl->wo, &c->w[i]);
		if (rc < 0) {
			cli_fail(cl->wo.engine == PC_ENGINE_URING ? "io_uring" : "readahead", -rc,
				 "cannot start the warming engine");
			return EXIT_PARTIAL;
		}
	}
	return -1;
}

/* What start_warmers made, released (as far as it got: c->w may be NULL). */
static void stop_warmers(struct warm_ctx *c)
{
	for (unsigned i = 0; c->w && i < c->nt; i++)
		pc_warmer_free(c->w[i]);
	for (unsigned i = 0; c->cut && i < c->nt; i++)
		free(c->cut[i].path);
	free(c->cut);
	free(c->w);
	free(c->tot);
	pc_budget_release(&c->budget);
}

/* Where the budget stopped the walk: how far it got, and the files it cut. */
static void say_stopped(const struct warm_ctx *c, const struct warm_tot *sum)
{
	const struct pc_budget *b = &c->budget;

	cli_warn("stopped early: %s; %llu files warmed (%llu MiB read, %llu MiB allowed)",
		 cli_budget_reason(b->stopped), (unsigned long long)sum->files,
		 (unsigned long long)(sum->read * pc_page_size() >> 20),
		 (unsigned long long)((b->max_bytes < b->headroom ? b->max_bytes
								  : b->headroom) >> 20));
	for (unsigned i = 0; c->cut && i < c->nt; i++)
		if (c->cut[i].path)
			cli_warn("'%s' warmed in part (%llu of %llu pages)", c->cut[i].path,
				 (unsigned long long)c->cut[i].resident,
				 (unsigned long long)c->cut[i].pages);
}

/* The "total" object: every format's. */
static void total_rec(const struct warm_ctx *c, const struct warm_tot *sum, double el)
{
	struct orec rec = { 0 };

	orec_u64(&rec, "files", sum->files, 0);
	orec_u64(&rec, "pages", sum->pages, OF_PAGES);
	orec_u64(&rec, "resident", sum->resident, OF_PAGES);
	orec_u64(&rec, "read", sum->read, OF_PAGES);
	orec_u64(&rec, "read_bytes", sum->read * pc_page_size(), OF_BYTES);
	orec_u64(&rec, "denied", sum->denied, 0);
	orec_u64(&rec, "partly", sum->partly, 0);
	orec_u64(&rec, "cut", sum->cut, OF_PAGES);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_str(&rec, "engine", pc_warmer_engine(c->w[0]), 0);
	orec_bool(&rec, "budget_stopped", c->budget.stopped != 0);
	if (c->budget.stopped)
		orec_str(&rec, "budget_reason", cli_budget_reason(c->budget.stopped), 0);
	orec_f64(&rec, "elapsed", el);
	out_object("total", &rec);
}

/* The summary for people, after the table if there is one. */
static void human_summary(const struct warm_ctx *c, const struct warm_tot *sum, double el)
{
	char a[32], b[32], r[32];

	if (c->list)
		out_human_line("%s", "");
	out_human_line("           Files: %llu", (unsigned long long)sum->files);
	out_human_line("  Resident Pages: %llu/%llu  %s/%s  %s",
		       (unsigned long long)sum->resident, (unsigned long long)sum->pages,
		       fmt_size(sum->resident * pc_page_size(), a, sizeof(a)),
		       fmt_size(sum->pages * pc_page_size(), b, sizeof(b)),
		       fmt_percent(sum->resident, sum->pages, r, sizeof(r)));
	out_human_line("            Read: %s in %.3g s (%s/s, %s)",
		       fmt_size(sum->read * pc_page_size(), a, sizeof(a)), el,
		       pc_human_size(el > 0 ? (uint64_t)((double)sum->read *
							 (double)pc_page_size() / el)
					    : 0,
				     r, sizeof(r)),
		       pc_warmer_engine(c->w[0]));
	if (sum->partly)
		out_human_line("          Partly: %llu files cut short by the budget "
			       "(%llu pages left out)",
			       (unsigned long long)sum->partly, (unsigned long long)sum->cut);
	if (sum->denied)
		out_human_line("          Denied: %llu files the kernel refuses residency to "
			       "(mincore would lie): proven by reading them in full",
			       (unsigned long long)sum->denied);
	cli_human_failures();
}

int cmd_warm(int argc, char **argv)
{
	struct warm_ctx c = { 0 };
	struct warm_cli cl = { .co = { OUT_HUMAN }, .bo = CLI_BUDGET_INIT };
	struct warm_tot sum = { 0 };
	struct cli_progress *prog = NULL;
	double t0, el;
	int rc;

	rc = parse(&c, &cl, argc, argv);
	if (rc >= 0)
		return rc;
	out_prom_metrics("warm", metrics, sizeof(metrics) / sizeof(metrics[0]));
	c.list = c.list || cl.co.prom_per_file;
	rc = start_warmers(&c, &cl);
	if (rc >= 0) {	/* said in the errors too: --json's document comes out */
		stop_warmers(&c);
		out_flush();
		targets_release(&c.t);
		return rc;
	}
	if (!c.quiet && cl.co.fmt == OUT_HUMAN)
		prog = cli_progress_start(&c.progress, "warming", &c.found);
	t0 = cli_files_walk(&c.t, c.list, warm_cols, sizeof(warm_cols) / sizeof(warm_cols[0]),
			    warm_file, &c);
	for (unsigned i = 0; i < c.nt; i++) {
		pc_warmer_drain(c.w[i]);
		report(&c, i);
	}
	el = pc_now() - t0;
	cli_progress_stop(prog);
	cli_sum_totals(&sum, c.tot, c.nt, sizeof(sum));
	if (c.budget.stopped)
		say_stopped(&c, &sum);
	total_rec(&c, &sum, el);
	if (cl.co.fmt == OUT_HUMAN && !c.quiet)
		human_summary(&c, &sum, el);
	stop_warmers(&c);
	rc = out_flush();
	targets_release(&c.t);
	if (rc < 0)
		return EXIT_PARTIAL;
	return cli_failures() || c.budget.stopped ? EXIT_PARTIAL : 0;
}
