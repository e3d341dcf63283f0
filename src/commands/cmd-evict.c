/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-evict.c: `pagecache evict`: write back, then drop files from the
 * page cache, and say which pages stayed and why (dirty, mapped or locked
 * by a named process), rather than claim a success the kernel refused.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct evict_tot {
	uint64_t files, pages, before, after, unknown, stayed_files;
} __attribute__((aligned(64)));

struct evict_ctx {
	struct targets t;
	struct evict_tot *tot;
	bool list;
	bool quiet;			/* -q: no summary */
};

static const struct ocol evict_cols[] = {
	{ "cached_before", "BEFORE", false }, { "cached_after", "AFTER", false },
	{ "pages", "TOTAL", false },	      { "path", "FILE", true },
	{ "reason", "WHY", true },
};

static const struct cli_opt evict_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_SET(struct evict_ctx, list),
	  .help = "list each file" },
	{ .name = "quiet", .letter = 'q', .id = 'q', CLI_SET(struct evict_ctx, quiet),
	  .help = "no summary (vmtouch's -q); what stayed is on stderr" },
	{ 0 }
};

const struct cli_spec evict_spec = {
	.name = "evict",
	.usage =
	"Usage: pagecache evict [OPTIONS] PATH...\n"
	"\n"
	"Drop files and trees from the page cache. Dirty pages are written back\n"
	"first (the kernel would otherwise skip them silently), then the range is\n"
	"dropped (POSIX_FADV_DONTNEED) and counted again. Pages that stay are\n"
	"reported with the reason: still dirty, or mapped or locked by a process\n"
	"(named with its PID). Eviction leaves no 'recently evicted' shadows.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache evict /var/log/huge.log\n"
	"  pagecache evict -v -p 1G- big.db          keep the first GiB\n"
	"  pagecache -e big.db                       the same as vmtouch -e\n"
	"Exit status: 0 all dropped, 1 some pages stayed or files failed, 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", evict_opts }, &cli_format_act_group,
		    &cli_targets_group },
	.operands = CC_FILE,
	.cols = evict_cols,
	.ncols = sizeof(evict_cols) / sizeof(evict_cols[0]),
};

/* Prometheus text: docs/metrics.md; pages are exported in bytes */
static const struct ometric metrics[] = {
	{ "total", "files", "files", 0, "Files the last run evicted (or tried to)." },
	{ "total", "pages", "examined_bytes", OM_PAGES,
	  "Bytes examined: the pages of each file (of its --range), times the page size." },
	{ "total", "evicted", "evicted_bytes", OM_PAGES, "Bytes the last run dropped from the cache." },
	{ "total", "stayed", "stayed_bytes", OM_PAGES,
	  "Bytes still cached after the run (mapped, locked or dirty again)." },
	{ "total", "stayed_files", "stayed_files", 0, "Files with pages still cached after the run." },
	{ "total", "unverified_files", "unverified_files", 0,
	  "Files whose residency after the run the kernel would not tell." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "elapsed", "duration_seconds", 0, "How long the last run took." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "pages", "file_examined_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes examined of the file: its pages (of its --range), times the page size." },
	{ "files", "cached_before", "file_cached_before_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file cached before the run; absent if unknown." },
	{ "files", "cached_after", "file_cached_after_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file still cached after the run; absent if unknown." },
	{ "files", "synced", "file_synced", OM_PER_FILE,
	  "1 if the file's dirty pages were written back first, else 0." },
};

static void why_stayed(const struct pc_walk_entry *e, const struct pc_residency *after,
		       char *buf, size_t len)
{
	struct pc_mapper m[4];
	int n;

	if (after->dirty || after->writeback) {
		snprintf(buf, len, "dirty or under writeback (%llu/%llu pages)",
			 (unsigned long long)after->dirty, (unsigned long long)after->writeback);
		return;
	}
	n = pc_fd_mappers(e->fd, m, 4);
	if (n > 0) {
		size_t used = (size_t)snprintf(buf, len, "%s by", m[0].locked ? "locked" : "mapped");

		for (int i = 0; i < n && used < len; i++)
			used += (size_t)snprintf(buf + used, len - used, "%s %d (%s%s)",
						 i ? "," : "", m[i].pid, m[i].comm,
						 m[i].locked ? ", mlocked" : "");
		return;
	}
	snprintf(buf, len, "in use (busy or still being read)");
}

static int evict_file(struct pc_walk_entry *e, void *arg)
{
	struct evict_ctx *c = arg;
	struct evict_tot *t = &c->tot[e->worker];
	struct pc_evict_result r;
	struct orec rec = { 0 };
	char why[256] = "";
	int rc;

	rc = pc_fd_evict(e->fd, (uint64_t)e->st.st_size, c->t.off, c->t.len, &r);
	if (rc < 0) {
		cli_fail(e->path, -rc, "cannot evict");
		return 0;
	}
	t->files++;
	t->pages += r.after.pages;
	if (r.after.source == PC_SRC_NONE) {
		t->unknown++;
	} else {
		t->before += r.before.source == PC_SRC_NONE ? 0 : r.before.cached;
		t->after += r.after.cached;
		if (r.after.cached) {
			t->stayed_files++;
			why_stayed(e, &r.after, why, sizeof(why));
			cli_warn("%llu of %llu pages of '%s' stayed: %s",
				 (unsigned long long)r.after.cached,
				 (unsigned long long)r.after.pages, e->path, why);
		}
	}
	if (!c->list)
		return 0;
	orec_str(&rec, "path", e->path, OF_LABEL);
	orec_u64(&rec, "pages", r.after.pages, OF_PAGES);
	if (r.before.source == PC_SRC_NONE)
		orec_null(&rec, "cached_before");
	else
		orec_u64(&rec, "cached_before", r.before.cached, OF_PAGES);
	if (r.after.source == PC_SRC_NONE)
		orec_null(&rec, "cached_after");
	else
		orec_u64(&rec, "cached_after", r.after.cached, OF_PAGES);
	orec_bool(&rec, "synced", r.synced);
	orec_str(&rec, "reason", *why ? why : r.after.source == PC_SRC_NONE ? "not verified: "
				 "the kernel refuses residency to this caller" : "", 0);
	out_list_add("files", &rec);
	return 0;
}

int cmd_evict(int argc, char **argv)
{
	struct cli_parser p;
	struct evict_ctx c = { 0 };
	struct cli_opts co = { OUT_HUMAN };
	struct evict_tot sum = { 0 };
	struct orec rec = { 0 };
	unsigned nt;
	double t0;
	int opt, rc;

	targets_init(&c.t);
	cli_parser_bind_to(&p, &evict_spec, &(struct cli_bound){ .base = &c, .co = &co, .t = &c.t },
			   argc, argv);
	opt = cli_getopt_all(&p, argc, argv);
	rc = cli_files_begin(&p, opt, &co, &c.t, argc, argv);
	if (rc >= 0)
		return rc;
	out_prom_metrics("evict", metrics, sizeof(metrics) / sizeof(metrics[0]));
	c.list = c.list || co.prom_per_file;
	nt = pc_walk_threads(&c.t.walk);
	c.tot = cli_alloc_totals(nt, sizeof(*c.tot), _Alignof(__typeof__(*c.tot)));
	if (!c.tot)
		return EXIT_PARTIAL;
	t0 = cli_files_walk(&c.t, c.list, evict_cols, sizeof(evict_cols) / sizeof(evict_cols[0]),
			    evict_file, &c);
	cli_sum_totals(&sum, c.tot, nt, sizeof(sum));
	free(c.tot);
	orec_u64(&rec, "files", sum.files, 0);
	orec_u64(&rec, "pages", sum.pages, OF_PAGES);
	orec_u64(&rec, "evicted", sum.before > sum.after ? sum.before - sum.after : 0, OF_PAGES);
	orec_u64(&rec, "stayed", sum.after, OF_PAGES);
	orec_u64(&rec, "stayed_files", sum.stayed_files, 0);
	orec_u64(&rec, "unverified_files", sum.unknown, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_f64(&rec, "elapsed", pc_now() - t0);
	out_object("total", &rec);
	if (co.fmt == OUT_HUMAN && !c.quiet) {
		char a[32];

		if (c.list)
			out_human_line("%s", "");
		out_human_line("           Files: %llu", (unsigned long long)sum.files);
		out_human_line("   Evicted Pages: %llu  %s",
			       (unsigned long long)(sum.before - (sum.after < sum.before ? sum.after : sum.before)),
			       fmt_size((sum.before > sum.after ? sum.before - sum.after : 0) *
						pc_page_size(), a, sizeof(a)));
		out_human_line("          Stayed: %llu pages in %llu files%s",
			       (unsigned long long)sum.after, (unsigned long long)sum.stayed_files,
			       sum.after ? " (reasons above)" : "");
		if (sum.unknown)
			out_human_line("      Unverified: %llu files (the kernel refuses residency to "
				       "this caller; dropped but not counted)",
				       (unsigned long long)sum.unknown);
		cli_human_failures();
		out_human_line("         Elapsed: %.3g seconds", pc_now() - t0);
	}
	rc = out_flush();
	targets_release(&c.t);
	if (rc < 0)
		return EXIT_PARTIAL;
	return cli_failures() || sum.stayed_files ? EXIT_PARTIAL : 0;
}
