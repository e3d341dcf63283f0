/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-stat.c: `pagecache stat`: how much of files and trees is cached.
 *
 * Counts come from cachestat (dirty, writeback, evicted and recently
 * evicted too), or mincore where cachestat is missing. A file whose
 * residency the kernel refuses to this caller is "unknown", with the
 * reason, and is left out of the cached totals (counted apart), never
 * shown as a made-up number.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define BAR_CELLS 40

struct tot {
	uint64_t files, pages, size, cached, dirty, writeback, evicted, recent;
	uint64_t unknown_files, unknown_pages;
	uint64_t counted;		/* files with cachestat's dirty/evicted counts */
	uint64_t why;			/* the last unknown's reason, as why_code() */
} __attribute__((aligned(64)));

struct cg_name {
	uint64_t ino;
	char *path;
};

struct stat_ctx {
	struct targets t;
	bool by_cgroup;
	struct cg_name *cgs;		/* memory cgroup inode -> path */
	size_t ncgs;
	int verbose;
	bool list;			/* one record per file */
	bool want_bar, want_ranges;
	bool summary;			/* --summary: after the rows, even on a pipe */
	struct tot *tot;		/* per walker thread */
	bool quiet;			/* -q: rows only where asked for, no summary */
};

enum { OPT_BY_CGROUP = CLI_OPT_OWN, OPT_SUMMARY };
static const struct cli_opt stat_opts[] = {
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_COUNT(struct stat_ctx, verbose),
	  .help = "list each file with a residency bar; -vv: ranges too" },
	{ .name = "output", .letter = 'o', .id = 'o', .arg = "COLS", .comp = CC_COLUMNS,
	  .words = "RES PAGES CACHED TOTAL_PAGES SIZE FILE PERCENT DIRTY_PAGES WRITEBACK_PAGES "
	  "EVICTED_PAGES "
	  "RECENTLY_EVICTED_PAGES SOURCE BAR RANGES CGROUPS",
	  .help = "the table's columns, in any case (+COLS: add them)" },
	{ .name = "by-cgroup", .id = OPT_BY_CGROUP, CLI_SET(struct stat_ctx, by_cgroup),
	  .help = "which memory cgroups own each file's cached pages" },
	{ .name = "summary", .id = OPT_SUMMARY, CLI_SET(struct stat_ctx, summary),
	  .help = "the summary after the rows, also with -n, -r or a pipe" },
	{ .name = "quiet", .letter = 'q', .id = 'q', CLI_SET(struct stat_ctx, quiet),
	  .help = "only what -v, -o or a format asks for (vmtouch's -q)" },
	{ 0 }
};

const struct cli_spec stat_spec = {
	.name = "stat",
	.usage =
	"Usage: pagecache stat [OPTIONS] PATH...\n"
	"\n"
	"Show how much of each file or tree is in the page cache: cached pages, and\n"
	"dirty, writeback, evicted and recently evicted pages (cachestat(2)).\n"
	"Directories are walked; a summary is printed like vmtouch's. Files are\n"
	"listed one a row with -v, with -o, or when every PATH is a file, in the\n"
	"order named (a tree's files sorted by path). Under the rows the summary\n"
	"follows on a terminal only: with -n, -r or on a pipe stdout is the table\n"
	"alone, as fincore's (--summary adds it back).\n"
	"\n"
	"Where the kernel refuses residency to you (a file you neither own nor may\n"
	"write), cached is 'unknown' (JSON null) with the reason; mincore(2) would\n"
	"have answered 'all cached' there, and pagecache never passes that on.\n"
	"\n",
	.footer =
	"\n"
	"JSON: {\"files\": [{\"path\", \"size\", \"pages\", \"cached\", \"dirty\",\n"
	"\"writeback\", \"evicted\", \"recently_evicted\", ...}], \"total\": {...},\n"
	"\"errors\": [...]}. Page counts are pages of the system page size.\n"
	"\n"
	"Examples:\n"
	"  pagecache stat /var/lib/postgresql          summary of a tree\n"
	"  pagecache stat -v --range 0-1G big.db       the first GiB, with a bar\n"
	"  find /srv -name '*.ibd' -print0 | pagecache stat --files0-from - --json\n"
	"Exit status: 0 all done, 1 some paths failed (named on stderr), 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", stat_opts }, &cli_format_stat_group,
		    &cli_targets_stat_group },
	.operands = CC_FILE,
};

static const struct {
	const char *name, *key, *header;
	bool left;
} all_cols[] = {
	{ "RES", "cached_bytes", "RES", false },
	/*
	 * PAGES is fincore's: the pages resident, as CACHED (JSON "cached").
	 * The pages examined (JSON "pages") are TOTAL_PAGES, headed TOTAL: a
	 * fincore user who types PAGES must never read the file's size in
	 * pages as if it were cached (a cold file's "10" where fincore says 0).
	 */
	{ "CACHED", "cached", "CACHED", false },
	{ "PAGES", "cached", "PAGES", false },
	{ "TOTAL_PAGES", "pages", "TOTAL", false },
	{ "TOTAL", "pages", "TOTAL", false },
	{ "SIZE", "size", "SIZE", false },
	{ "PERCENT", "percent", "%", false },
	{ "DIRTY_PAGES", "dirty", "DIRTY", false },
	{ "WRITEBACK_PAGES", "writeback", "WRITEBACK", false },
	{ "EVICTED_PAGES", "evicted", "EVICTED", false },
	{ "RECENTLY_EVICTED_PAGES", "recently_evicted", "RECENT", false },
	{ "SOURCE", "source", "SOURCE", true },
	{ "BAR", "bar", "RESIDENCY", true },
	{ "FILE", "path", "FILE", true },
	{ "RANGES", "ranges", "RANGES", true },
	{ "CGROUPS", "owners", "CGROUPS (pages)", true },
};
#define NCOLS (sizeof(all_cols) / sizeof(all_cols[0]))

/* Prometheus text: docs/metrics.md; pages are exported in bytes */
static const struct ometric metrics[] = {
	{ "total", "files", "files", 0, "Files examined by the last run." },
	{ "total", "directories", "directories", 0, "Directories walked by the last run." },
	{ "total", "size", "size_bytes", 0, "Sum of the sizes of the files." },
	{ "total", "pages", "examined_bytes", OM_PAGES,
	  "Bytes examined: the pages of each file (of its --range), times the page size." },
	{ "total", "cached", "cached_bytes", OM_PAGES,
	  "Bytes of the files resident in the page cache (whole pages); absent if unknown." },
	{ "total", "dirty", "dirty_bytes", OM_PAGES,
	  "Bytes of the files in dirty pages (cachestat); absent without cachestat." },
	{ "total", "writeback", "writeback_bytes", OM_PAGES,
	  "Bytes of the files under writeback (cachestat); absent without cachestat." },
	{ "total", "evicted", "evicted_bytes", OM_PAGES,
	  "Bytes of the files evicted whose shadow entries remain (cachestat)." },
	{ "total", "recently_evicted", "recently_evicted_bytes", OM_PAGES,
	  "Bytes of the files evicted recently enough that a read back is a refault (cachestat)." },
	{ "total", "unknown_files", "unknown_files", 0,
	  "Files whose residency the kernel refuses to this caller (not in cached_bytes)." },
	{ "total", "unknown_pages", "unknown_bytes", OM_PAGES, "Bytes of those files (their pages)." },
	{ "total", "skipped", "skipped_entries", 0,
	  "Entries skipped: special files, symlinks, loops, other filesystems, too big, excluded, hardlinks seen." },
	{ "total", "vanished", "vanished_files", 0, "Files that vanished during the walk." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "elapsed", "duration_seconds", 0, "How long the last run took." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "size", "file_size_bytes", OM_PER_FILE, "Size of the file." },
	{ "files", "pages", "file_examined_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes examined of the file: its pages (of its --range), times the page size." },
	{ "files", "cached", "file_cached_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file resident in the page cache (whole pages); absent if unknown." },
	{ "files", "dirty", "file_dirty_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file in dirty pages (cachestat)." },
	{ "files", "writeback", "file_writeback_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file under writeback (cachestat)." },
	{ "files", "evicted", "file_evicted_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file evicted whose shadow entries remain (cachestat)." },
	{ "files", "recently_evicted", "file_recently_evicted_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file evicted recently enough that a read back is a refault (cachestat)." },
};

static struct ocol cols[NCOLS];
static size_t ncols;

static int add_col(const char *name)
{
	for (size_t i = 0; i < NCOLS; i++) {
		if (strcasecmp(name, all_cols[i].name))
			continue;
		if (ncols >= NCOLS)
			return -1;
		cols[ncols].key = all_cols[i].key;
		cols[ncols].header = all_cols[i].header;
		cols[ncols++].left = all_cols[i].left;
		return 0;
	}
	return -1;
}

static int parse_cols(const char *arg)
{
	char *copy = strdup(arg), *rest, *c;
	int rc = 0;

	if (!copy)
		return -1;
	rest = copy;
	if (*rest == '+')
		rest++;
	else
		ncols = 0;
	/* strsep, not strtok: '' and ',' are an empty name, refused as the others do */
	while (rc == 0 && (c = strsep(&rest, ",")))
		if (add_col(c) < 0) {
			cli_usage_error("unknown column '%s' (see --help)", c);
			rc = -1;
		}
	free(copy);
	return rc;
}

struct bar_arg {
	uint64_t first, pages;
	uint64_t res[BAR_CELLS], all[BAR_CELLS];
	uint64_t *ranges;
	size_t nranges, cap;
	bool want_ranges;
};

static int bar_run(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct bar_arg *b = arg;
	uint64_t cells = b->pages < BAR_CELLS ? b->pages : BAR_CELLS;
	uint64_t rel = first - b->first;

	/* Cell k holds pages [ceil(k*pages/cells), ceil((k+1)*pages/cells)). */
	for (uint64_t p = rel; p < rel + n && p < b->pages;) {
		uint64_t cell = p * cells / b->pages;
		uint64_t next = ((cell + 1) * b->pages + cells - 1) / cells;
		uint64_t stop = next < rel + n ? next : rel + n;

		b->all[cell] += stop - p;
		if (resident)
			b->res[cell] += stop - p;
		p = stop;
	}
	if (resident && b->want_ranges) {
		if (b->nranges == b->cap) {
			size_t nc = b->cap ? b->cap * 2 : 16;
			uint64_t *nr = realloc(b->ranges, nc * 2 * sizeof(*nr));

			if (!nr)
				return -ENOMEM;
			b->ranges = nr;
			b->cap = nc;
		}
		b->ranges[2 * b->nranges] = first;
		b->ranges[2 * b->nranges + 1] = n;
		b->nranges++;
	}
	return 0;
}

static void bar_text(const struct bar_arg *b, char *out)
{
	int cells = b->pages < BAR_CELLS ? (int)b->pages : BAR_CELLS;

	out[0] = '[';
	for (int i = 0; i < cells; i++)
		out[i + 1] = b->res[i] == 0 ? ' ' : b->res[i] == b->all[i] ? 'O' : 'o';
	out[cells + 1] = ']';
	out[cells + 2] = 0;
}

/* Every memory cgroup's directory inode (what /proc/kpagecgroup gives), by its path. */
static int map_cgroup(const struct pc_cgroup_entry *e, void *arg)
{
	struct stat_ctx *c = arg;
	struct stat st;
	struct cg_name *n;

	if (e->depth && e->name[0] == '.')
		return PC_CGROUP_WALK_SKIP;
	if (fstat(e->fd, &st) < 0 || !(n = realloc(c->cgs, (c->ncgs + 1) * sizeof(*n))))
		return PC_CGROUP_WALK_SKIP;
	c->cgs = n;
	c->cgs[c->ncgs].ino = st.st_ino;
	c->cgs[c->ncgs++].path = strdup(*e->rel ? e->rel : "/");
	return 0;
}

struct owners {
	uint64_t ino[64], n[64];
	int k;
};

static int owner_cb(uint64_t page, uint64_t flags, uint64_t cg, void *arg)
{
	struct owners *o = arg;

	(void)page;
	(void)flags;
	for (int i = 0; i < o->k; i++)
		if (o->ino[i] == cg) {
			o->n[i]++;
			return 0;
		}
	if (o->k < 64) {
		o->ino[o->k] = cg;
		o->n[o->k++] = 1;
	}
	return 0;
}

/*
 * Who owns the file's cached pages: a "cgroups" list in rec (path and
 * pages of each) and an "owners" line for people ("/a=12,/b=3").
 */
static int owners_of(struct stat_ctx *c, const struct pc_walk_entry *e, struct orec *rec)
{
	uint64_t *runs = NULL;
	size_t nruns = 0;
	struct owners o = { .k = 0 };
	char *human = NULL;
	size_t hlen = 0;
	FILE *h;
	int rc = pc_fd_resident_runs(e->fd, (uint64_t)e->st.st_size, c->t.off, c->t.len, &runs, &nruns);

	if (rc == 0)
		rc = pc_fd_probe_pages(e->fd, (uint64_t)e->st.st_size, runs, nruns, true, owner_cb, &o);
	free(runs);
	if (rc < 0)
		return rc;
	h = open_memstream(&human, &hlen);
	if (!h)
		return -ENOMEM;
	orec_list_add(rec, "cgroups", NULL);
	for (int i = 0; i < o.k; i++) {
		struct orec item = { 0 };
		const char *name = NULL;
		char num[32];

		for (size_t k = 0; k < c->ncgs && !name; k++)
			if (c->cgs[k].ino == o.ino[i])
				name = c->cgs[k].path;
		if (!name) {
			snprintf(num, sizeof(num), o.ino[i] ? "inode:%llu" : "(none)",
				 (unsigned long long)o.ino[i]);
			name = num;
		}
		orec_str(&item, "path", name, 0);
		orec_u64(&item, "cached", o.n[i], 0);
		orec_list_add(rec, "cgroups", &item);
		fprintf(h, "%s%s=%llu", i ? "," : "", name, (unsigned long long)o.n[i]);
	}
	if (fclose(h) != 0) {
		free(human);
		return -ENOMEM;
	}
	orec_str(rec, "owners", human, OF_HUMAN);	/* escaped when shown */
	free(human);
	return 0;
}

/* An unknown's reason, kept per thread in one number. */
static uint64_t why_code(const struct pc_residency *r)
{
	return (uint64_t)r->err << 1 | r->stacked;
}

static const char *unknown_reason(uint64_t why, char *buf, size_t len)
{
	int err = (int)(why >> 1);
	const char *refused = "the kernel refuses residency to callers who neither own nor may "
			      "write the file (cachestat: EPERM; mincore would fake 'all cached')";
	const char *what;

	if (!(why & 1)) {
		if (err == EOPNOTSUPP)
			return "the kernel keeps no page-cache counts for this file (hugetlbfs)";
		return refused;
	}
	switch (err) {
	case EPERM: what = "finding it needs CAP_SYS_ADMIN (the layers' trusted.overlay xattrs)"; break;
	case EXDEV: what = "its mount is not in this mount namespace"; break;
	case EOPNOTSUPP: what = "a redirected directory or metacopy file is on its path"; break;
	case ENOTDIR: what = "the mount names its layers by relative paths"; break;
	case ESTALE: what = "the layers do not hold what the overlay shows (changing?)"; break;
	default: what = strerror(err); break;
	}
	snprintf(buf, len, "overlayfs keeps the pages in the real file of a layer, out of reach "
		 "here (%s); and %s", what, refused);
	return buf;
}

static int stat_file(struct pc_walk_entry *e, void *arg)
{
	struct stat_ctx *c = arg;
	struct tot *t = &c->tot[e->worker];
	uint64_t size = (uint64_t)e->st.st_size, ps = pc_page_size();
	struct pc_residency r;
	struct orec rec = { 0 };
	int rc;

	rc = pc_fd_residency(e->fd, size, c->t.off, c->t.len, &r);
	if (rc < 0) {
		cli_fail(e->path, -rc, "cannot read residency of");
		return 0;
	}
	t->files++;
	t->pages += r.pages;
	t->size += size;
	if (r.source == PC_SRC_NONE) {
		t->unknown_files++;
		t->unknown_pages += r.pages;
		t->why = why_code(&r);
	} else {
		t->cached += r.cached;
		t->counted += r.source == PC_SRC_CACHESTAT;
		t->dirty += r.dirty;
		t->writeback += r.writeback;
		t->evicted += r.evicted;
		t->recent += r.recently_evicted;
	}
	if (!c->list)
		return 0;

	rec.order = targets_rank(&c->t, e->path);	/* fincore's order: as named */
	orec_str(&rec, "path", e->path, OF_LABEL);
	orec_u64(&rec, "size", size, OF_BYTES);
	orec_u64(&rec, "pages", r.pages, OF_PAGES);
	if (r.source == PC_SRC_NONE) {
		orec_null(&rec, "cached");
		orec_null(&rec, "cached_bytes");
		orec_null(&rec, "dirty");
		orec_null(&rec, "writeback");
		orec_null(&rec, "evicted");
		orec_null(&rec, "recently_evicted");
		orec_null(&rec, "percent");
		orec_null(&rec, "source");
		char why[512];

		orec_str(&rec, "reason", unknown_reason(why_code(&r), why, sizeof(why)), 0);
		out_list_add("files", &rec);
		return 0;
	}
	orec_u64(&rec, "cached", r.cached, OF_PAGES);
	orec_u64(&rec, "cached_bytes", r.cached * ps, OF_BYTES);
	if (r.source == PC_SRC_CACHESTAT) {
		orec_u64(&rec, "dirty", r.dirty, OF_PAGES);
		orec_u64(&rec, "writeback", r.writeback, OF_PAGES);
		orec_u64(&rec, "evicted", r.evicted, OF_PAGES);
		orec_u64(&rec, "recently_evicted", r.recently_evicted, OF_PAGES);
	} else {	/* mincore knows nothing of these */
		orec_null(&rec, "dirty");
		orec_null(&rec, "writeback");
		orec_null(&rec, "evicted");
		orec_null(&rec, "recently_evicted");
	}
	if (r.pages)
		orec_f64(&rec, "percent", 100.0 * (double)r.cached / (double)r.pages);
	else	/* nothing selected: not 100% cached (shown as -) */
		orec_none(&rec, "percent");
	orec_str(&rec, "source", r.source == PC_SRC_CACHESTAT ? "cachestat" : "mincore", 0);
	if ((c->want_bar || c->want_ranges) && r.pages) {
		struct bar_arg b = { .first = c->t.off / ps, .pages = r.pages,
				     .want_ranges = c->want_ranges };
		char text[BAR_CELLS + 3];

		if (r.cached) {
			rc = pc_fd_scan(e->fd, size, c->t.off, c->t.len, bar_run, &b);
			if (rc < 0) {
				free(b.ranges);
				orec_release(&rec);
				cli_fail(e->path, -rc, "cannot map pages of");
				return 0;
			}
		}
		bar_text(&b, text);
		if (c->want_bar)
			orec_str(&rec, "bar", text, OF_HUMAN);
		if (c->want_ranges)
			orec_ranges(&rec, "ranges", b.ranges, b.nranges);
		else
			free(b.ranges);
	}
	if (c->by_cgroup && r.cached) {
		rc = owners_of(c, e, &rec);
		if (rc < 0)
			cli_fail_msg(e->path, "cannot tell the memory cgroups of",
				     pc_kpage_reason(-rc, true));
	} else if (c->by_cgroup) {
		orec_list_add(&rec, "cgroups", NULL);
	}
	out_list_add("files", &rec);
	return 0;
}

/* What stat was told that stat_ctx does not keep. */
struct stat_cli {
	struct cli_opts co;
	const char *colspec;		/* -o COLS; NULL: the default columns */
};

/* -1: go on; else the exit status. */
static int parse(struct stat_ctx *c, struct stat_cli *cl, int argc, char **argv)
{
	struct cli_parser p;
	int opt;

	targets_init(&c->t);
	cli_parser_bind_to(&p, &stat_spec,
			   &(struct cli_bound){ .base = c, .co = &cl->co, .t = &c->t }, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0)
		if (opt == 'o')	/* into stat_cli, not the bound stat_ctx */
			cl->colspec = p.arg;
	return cli_files_begin(&p, opt, &cl->co, &c->t, argc, argv);
}

/*
 * The table's columns (the default ones, or -o's) and what they need:
 * bars, ranges, the memory cgroups' names. -1: go on; else the exit status.
 */
static int pick_columns(struct stat_ctx *c, const struct stat_cli *cl)
{
	/* Default columns, fincore's first, then ours. */
	ncols = 0;
	for (const char *d = "RES,CACHED,SIZE,PERCENT,DIRTY_PAGES,EVICTED_PAGES"; d;) {
		char n[32];
		const char *comma = strchr(d, ',');
		size_t l = comma ? (size_t)(comma - d) : strlen(d);

		memcpy(n, d, l);
		n[l] = 0;
		add_col(n);
		d = comma ? comma + 1 : NULL;
	}
	if (c->verbose && cl->co.fmt == OUT_HUMAN)
		add_col("BAR");
	add_col("FILE");
	if (c->verbose >= 2)
		add_col("RANGES");
	if (cl->colspec && parse_cols(cl->colspec) < 0) {
		targets_release(&c->t);
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < ncols; i++) {
		if (!strcmp(cols[i].key, "bar"))
			c->want_bar = true;
		if (!strcmp(cols[i].key, "ranges"))
			c->want_ranges = true;
	}
	if (c->verbose >= 2)
		c->want_ranges = true;
	if (c->by_cgroup) {
		char mount[64];
		int version;

		if (!pc_have_cap(CAP_SYS_ADMIN)) {	/* page frame numbers, for kpagecgroup */
			targets_release(&c->t);	/* nothing held at exit: LeakSanitizer */
			return cli_usage_error("--by-cgroup %s", pc_kpage_reason(EPERM, true));
		}
		if (pc_cgroup_root(mount, sizeof(mount), &version) == 0)
			pc_cgroup_walk(mount, map_cgroup, c);
		add_col("CGROUPS");
	}
	return -1;
}

static int is_dir(const char *path, void *arg)
{
	struct stat st;

	(void)arg;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* List files with -v, -o or --by-cgroup, or when no PATH (listed ones too) is a directory. */
static bool list_files(struct stat_ctx *c, const struct stat_cli *cl)
{
	if (c->verbose || cl->colspec || c->by_cgroup || cl->co.prom_per_file)
		return true;
	return !c->quiet && !targets_each_name(&c->t, is_dir, NULL);
}

/*
 * Is the summary printed? Always when it is the whole output (a tree's,
 * without rows); under rows only on a terminal without -n or -r, as
 * fincore prints none: a script that reads the rows from a pipe gets the
 * table alone. --summary asks for it anyway.
 */
static bool want_summary(const struct stat_ctx *c, const struct stat_cli *cl)
{
	if (c->summary || !c->list)
		return true;
	if (cl->co.noheadings || cl->co.raw)
		return false;
	return isatty(STDOUT_FILENO);
}

/* The threads' totals in *sum, why the last unknown was (EPERM's if none); c's freed. */
static void sum_totals(struct stat_ctx *c, unsigned nt, struct tot *sum)
{
	cli_sum_totals(sum, c->tot, nt, sizeof(*sum));
	sum->why = EPERM << 1;
	for (unsigned i = 0; i < nt; i++)
		if (c->tot[i].unknown_files)
			sum->why = c->tot[i].why;
	free(c->tot);
	for (size_t i = 0; i < c->ncgs; i++)
		free(c->cgs[i].path);
	free(c->cgs);
}

static uint64_t skipped(const struct targets *t)
{
	return t->special + t->symlinks + t->loops + t->mounts + t->toobig + t->excluded + t->dups;
}

/* The "total" object: every format's. */
static void total_rec(const struct stat_ctx *c, const struct tot *sum, double t0)
{
	struct orec rec = { 0 };

	orec_u64(&rec, "files", sum->files, 0);
	orec_u64(&rec, "directories", c->t.dirs, 0);
	orec_u64(&rec, "pages", sum->pages, OF_PAGES);
	orec_u64(&rec, "size", sum->size, OF_BYTES);
	if (sum->files && sum->unknown_files == sum->files) {
		orec_null(&rec, "cached");
		orec_null(&rec, "cached_bytes");
	} else {
		orec_u64(&rec, "cached", sum->cached, OF_PAGES);
		orec_u64(&rec, "cached_bytes", sum->cached * pc_page_size(), OF_BYTES);
	}
	if (sum->counted || !sum->files) {
		orec_u64(&rec, "dirty", sum->dirty, OF_PAGES);
		orec_u64(&rec, "writeback", sum->writeback, OF_PAGES);
		orec_u64(&rec, "evicted", sum->evicted, OF_PAGES);
		orec_u64(&rec, "recently_evicted", sum->recent, OF_PAGES);
	} else {	/* no file had cachestat's counts */
		orec_null(&rec, "dirty");
		orec_null(&rec, "writeback");
		orec_null(&rec, "evicted");
		orec_null(&rec, "recently_evicted");
	}
	orec_u64(&rec, "unknown_files", sum->unknown_files, 0);
	orec_u64(&rec, "unknown_pages", sum->unknown_pages, OF_PAGES);
	orec_u64(&rec, "skipped", skipped(&c->t), 0);
	orec_u64(&rec, "vanished", c->t.vanished, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_f64(&rec, "elapsed", pc_now() - t0);
	out_object("total", &rec);
}

/* The summary for people, vmtouch's, after the table if there is one. */
static void human_summary(const struct stat_ctx *c, const struct stat_cli *cl,
			  const struct tot *sum, double t0)
{
	const struct targets *t = &c->t;
	char a[32], b[32], pct[16], whybuf[512];
	uint64_t known = sum->pages - sum->unknown_pages;

	if (c->list && !cl->co.noheadings && sum->files)
		out_human_line("%s", "");
	out_human_line("           Files: %llu", (unsigned long long)sum->files);
	out_human_line("     Directories: %llu", (unsigned long long)t->dirs);
	if (sum->files && sum->unknown_files == sum->files)
		out_human_line("  Resident Pages: unknown/%llu  (%s)",
			       (unsigned long long)sum->pages,
			       unknown_reason(sum->why, whybuf, sizeof(whybuf)));
	else
		out_human_line("  Resident Pages: %llu/%llu  %s/%s  %s",
			       (unsigned long long)sum->cached, (unsigned long long)known,
			       fmt_size(sum->cached * pc_page_size(), a, sizeof(a)),
			       fmt_size(known * pc_page_size(), b, sizeof(b)),
			       fmt_percent(sum->cached, known, pct, sizeof(pct)));
	if (sum->unknown_files && sum->unknown_files != sum->files)
		out_human_line("         Unknown: %llu files, %llu pages (not counted above: "
			       "no write permission, the kernel refuses residency)",
			       (unsigned long long)sum->unknown_files,
			       (unsigned long long)sum->unknown_pages);
	if (sum->counted || !sum->files) {
		out_human_line(" Dirty/Writeback: %llu/%llu pages",
			       (unsigned long long)sum->dirty, (unsigned long long)sum->writeback);
		out_human_line("         Evicted: %llu pages (%llu recently)",
			       (unsigned long long)sum->evicted, (unsigned long long)sum->recent);
	} else {
		out_human_line(" Dirty/Writeback: unknown (needs cachestat(2), Linux 6.5+)");
	}
	if (skipped(t))
		out_human_line("         Skipped: %llu special, %llu symlinks, %llu loops, "
			       "%llu other-fs, %llu too big, %llu excluded, %llu hardlinks",
			       (unsigned long long)t->special, (unsigned long long)t->symlinks,
			       (unsigned long long)t->loops, (unsigned long long)t->mounts,
			       (unsigned long long)t->toobig, (unsigned long long)t->excluded,
			       (unsigned long long)t->dups);
	cli_human_failures();
	out_human_line("         Elapsed: %.3g seconds", pc_now() - t0);
}

int cmd_stat(int argc, char **argv)
{
	struct stat_ctx c = { 0 };
	struct stat_cli cl = { .co = { OUT_HUMAN } };
	struct tot sum = { 0 };
	unsigned nt;
	double t0;
	int rc;

	rc = parse(&c, &cl, argc, argv);
	if (rc >= 0)
		return rc;
	out_prom_metrics("stat", metrics, sizeof(metrics) / sizeof(metrics[0]));
	rc = pick_columns(&c, &cl);
	if (rc >= 0)
		return rc;
	c.list = list_files(&c, &cl);
	nt = pc_walk_threads(&c.t.walk);
	c.tot = cli_alloc_totals(nt, sizeof(*c.tot), _Alignof(__typeof__(*c.tot)));
	if (!c.tot)
		return EXIT_PARTIAL;
	t0 = cli_files_walk(&c.t, c.list, cols, ncols, stat_file, &c);
	sum_totals(&c, nt, &sum);
	total_rec(&c, &sum, t0);
	if (cl.co.fmt == OUT_HUMAN && !c.quiet && want_summary(&c, &cl))
		human_summary(&c, &cl, &sum, t0);
	rc = out_flush();
	targets_release(&c.t);
	if (rc < 0) {
		cli_warn("cannot write output: %s", strerror(-rc));
		return EXIT_PARTIAL;
	}
	return cli_failures() ? EXIT_PARTIAL : 0;
}
