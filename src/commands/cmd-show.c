/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-show.c: `pagecache show` and `pagecache diff`: what a snapshot
 * holds, and how two differ. Both read snapshots as hostile input through
 * libpagecache: a corrupt file is a named failure (exit 1), never a crash.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

/* the first 5 by default; -v adds what a recording knows (format version 3) */
static const struct ocol show_cols[] = {
	{ "pages", "PAGES", false }, { "runs", "RUNS", false },
	{ "active", "ACTIVE", false }, { "size", "SIZE", false },
	{ "path", "FILE", true }, { "used", "USED", false },
	{ "first_use_ms", "FIRST USE MS", false },
};
#define SHOW_DEFAULT_COLS 5

/* block device records: the filesystems' metadata, a table of their own */
static const struct ocol meta_cols[] = {
	{ "pages", "PAGES", false }, { "runs", "RUNS", false },
	{ "size", "SIZE", false }, { "device", "DEVICE", true },
};

static const struct ocol dir_cols[] = {
	{ "inode", "INODE", false }, { "directory", "DIRECTORY", true },
};

static const struct ocol diff_dir_cols[] = {
	{ "status", "STATUS", true }, { "directory", "DIRECTORY", true },
};

/* What show's and diff's own options set. */
struct show_cli {
	int verbose;			/* -v */
};

static const struct cli_opt show_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_COUNT(struct show_cli, verbose),
	  .help = "with a recording's pages used and first-use times" },
	{ 0 }
};

const struct cli_spec show_spec = {
	.name = "show",
	.usage =
	"Usage: pagecache show [OPTIONS] SNAPSHOT\n"
	"\n"
	"Print what a snapshot holds: where and when it was taken, and per file the\n"
	"cached pages, the runs they form and the active pages. A recording\n"
	"(pagecache record) also says how long it ran and how many events it lost,\n"
	"and with -v per file the pages used and when each file was first used; the\n"
	"cached pages of block devices (filesystem metadata: snapshot --metadata,\n"
	"record) are listed apart, under \"metadata\".\n"
	"\n",
	.footer =
	"\n"
	"Example:\n"
	"  pagecache show --json /var/tmp/db.snap | jq '.total.pages'\n"
	"Exit status: 0 read, 1 unreadable or corrupt (said why), 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", show_opts }, &cli_format_group },
	.operands = CC_FILE,
	.cols = show_cols,
	.ncols = sizeof(show_cols) / sizeof(show_cols[0]),
};

static const struct ocol diff_cols[] = {
	{ "status", "STATUS", true },	{ "old_pages", "OLD", false },
	{ "new_pages", "NEW", false },	{ "gained", "GAINED", false },
	{ "lost", "LOST", false },	{ "path", "FILE", true },
};

static const struct ocol diff_meta_cols[] = {
	{ "status", "STATUS", true },	{ "old_pages", "OLD", false },
	{ "new_pages", "NEW", false },	{ "gained", "GAINED", false },
	{ "lost", "LOST", false },	{ "device", "DEVICE (METADATA)", true },
};

static const struct cli_opt diff_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_COUNT(struct show_cli, verbose),
	  .help = "list unchanged files too" },
	{ 0 }
};

const struct cli_spec diff_spec = {
	.name = "diff",
	.usage =
	"Usage: pagecache diff [OPTIONS] OLD NEW\n"
	"\n"
	"Compare two snapshots: files added, removed and changed, and the pages\n"
	"NEW has that OLD had not (gained) and the other way round (lost). Block\n"
	"devices' own cache (filesystem metadata) is compared apart, device by\n"
	"device. With recordings (pagecache record), the JSON says when each file\n"
	"was first used in each, and whether each snapshot was recorded.\n"
	"\n",
	.footer =
	"\n"
	"Example:\n"
	"  pagecache diff before.snap after.snap\n"
	"Exit status: 0 compared, 1 a snapshot is unreadable or corrupt, 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", diff_opts }, &cli_format_group },
	.operands = CC_FILE,
	.cols = diff_cols,
	.ncols = sizeof(diff_cols) / sizeof(diff_cols[0]),
};

static uint64_t run_pages(const uint64_t *runs, size_t n)
{
	uint64_t p = 0;

	for (size_t i = 0; i < n; i++)
		p += runs[2 * i + 1];
	return p;
}

/* Pages in both sorted run lists. */
static uint64_t overlap(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	uint64_t both = 0;
	size_t i = 0, k = 0;

	while (i < na && k < nb) {
		uint64_t s = a[2 * i] > b[2 * k] ? a[2 * i] : b[2 * k];
		uint64_t ea = a[2 * i] + a[2 * i + 1], eb = b[2 * k] + b[2 * k + 1];
		uint64_t e = ea < eb ? ea : eb;

		if (e > s)
			both += e - s;
		if (ea < eb)
			i++;
		else
			k++;
	}
	return both;
}

/* Open a snapshot or name the failure. */
static struct pc_profile_reader *open_snap(const char *path)
{
	struct pc_profile_reader *r;
	char err[256];
	int rc = pc_profile_open(path, &r, err, sizeof(err));

	if (rc < 0) {
		cli_fail_msg(path, "cannot read snapshot", err);
		return NULL;
	}
	return r;
}

/* A snapshot that failed part way (rc: pc_profile_next's), named with why. */
static void read_failed(const char *path, int rc, struct pc_profile_reader *r)
{
	cli_fail_msg(path, rc == -EBADMSG ? "corrupt snapshot" : "cannot read snapshot",
		     rc == -EBADMSG ? pc_profile_error(r) : strerror(-rc));
}

/* Prometheus text: docs/metrics.md; pages (the snapshot's) are exported in bytes */
static const struct ometric show_metrics[] = {
	{ "total", "created", "created_timestamp_seconds", 0,
	  "When the snapshot was taken (its writer's clock), in seconds since the epoch." },
	{ "total", "files", "files", 0, "Files in the snapshot." },
	{ "total", "pages", "cached_bytes", OM_PAGES, "Bytes the snapshot records as cached." },
	{ "total", "runs", "runs", 0, "Runs of cached pages in the snapshot." },
	{ "total", "active_pages", "active_bytes", OM_PAGES,
	  "Bytes the snapshot records as active (read twice)." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "size", "file_size_bytes", OM_PER_FILE, "Size of the file when the snapshot was taken." },
	{ "files", "pages", "file_cached_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file the snapshot records as cached." },
	{ "files", "active", "file_active_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file the snapshot records as active." },
	{ "files", "mtime", "file_mtime_seconds", OM_PER_FILE,
	  "The file's modification time when the snapshot was taken, in seconds since the epoch." },
};

static const struct ometric diff_metrics[] = {
	{ "total", "added", "added_files", 0, "Files in NEW only." },
	{ "total", "removed", "removed_files", 0, "Files in OLD only." },
	{ "total", "changed", "changed_files", 0, "Files in both whose cached pages differ." },
	{ "total", "gained", "gained_bytes", OM_PAGES, "Bytes cached in NEW and not in OLD." },
	{ "total", "lost", "lost_bytes", OM_PAGES, "Bytes cached in OLD and not in NEW." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "old_pages", "file_old_cached_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file cached in OLD." },
	{ "files", "new_pages", "file_new_cached_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file cached in NEW." },
	{ "files", "gained", "file_gained_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file cached in NEW and not in OLD." },
	{ "files", "lost", "file_lost_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file cached in OLD and not in NEW." },
};

/* -1: go on; else the exit status (--help, --version: 0; a usage error: 2). */
static int parse_format(int argc, char **argv, struct cli_opts *co, struct show_cli *cl,
			const struct cli_spec *spec)
{
	int rc = cli_parse_format_only(spec, cl, co, argc, argv);

	if (rc >= 0)
		return rc;
	out_init(co->fmt, co->bytes, co->noheadings);
	out_set_raw(co->raw);
	out_list_declare("files");
	out_list_declare("metadata");
	out_list_declare("errors");
	return -1;
}

/* Pages the used triples cover. */
static uint64_t used_pages(const struct pc_profile_file *f)
{
	uint64_t p = 0;

	for (size_t i = 0; i < f->nused; i++)
		p += f->used[3 * i + 1];
	return p;
}

/* What version 3's meta says, into a total record */
static void meta_fields(struct orec *rec, const struct pc_profile_meta *m)
{
	orec_bool(rec, "recorded", m->flags & PC_META_RECORDED);
	/* what record saw: every use (6.12's events), or misses only; null: not said */
	if (m->source == PC_META_SRC_USE || m->source == PC_META_SRC_MISSES)
		orec_str(rec, "record_source", m->source == PC_META_SRC_USE ? "use" : "misses", 0);
	else
		orec_null(rec, "record_source");
	orec_u64(rec, "lost_events", m->lost, 0);
	orec_u64(rec, "duration_ms", m->duration_ms, 0);
}

/* A block device record's row: its name, its device number */
static void metadata_row(const struct pc_profile_file *f)
{
	struct orec rec = { 0 };
	char dev[32];

	snprintf(dev, sizeof(dev), "%u:%u", major((dev_t)f->dev), minor((dev_t)f->dev));
	orec_str(&rec, "device", f->path, OF_LABEL);
	orec_str(&rec, "devno", dev, 0);
	orec_u64(&rec, "size", f->size, OF_BYTES);
	orec_u64(&rec, "pages", run_pages(f->runs, f->nruns), OF_PAGES);
	orec_u64(&rec, "runs", f->nruns, 0);
	orec_u64(&rec, "used", used_pages(f), OF_PAGES);
	out_list_add("metadata", &rec);
}

/*
 * A file's layer digest (format version 6: a container's file from an
 * image layer), as `key`, where the snapshot has one: files of other
 * snapshots have no such key, so their rows stay as they were.
 */
static void layer_field(struct orec *rec, const char *key, const struct pc_profile_file *f)
{
	char d[PC_LAYER_TEXT];

	if (!f || !(f->ident & PC_IDENT_LAYER))
		return;
	pc_profile_layer_text(f->layer, 64, d, sizeof(d));
	orec_str(rec, key, d, 0);
}

/* A directory's record (snapshot --metadata): where it is, its inode */
static void directory_row(const struct pc_profile_file *f)
{
	struct orec rec = { 0 };

	orec_str(&rec, "directory", f->path, OF_LABEL);
	orec_u64(&rec, "inode", f->ino, 0);
	orec_u64(&rec, "mtime", (uint64_t)f->mtime_s, 0);
	out_list_add("directories", &rec);
}

int cmd_show(int argc, char **argv)
{
	struct cli_opts co = { OUT_HUMAN };
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	uint64_t files = 0, pages = 0, runs = 0, active = 0, mrecs = 0, mpages = 0, used = 0;
	uint64_t dirs = 0;
	bool active_unknown = false;
	struct orec rec = { 0 };
	struct show_cli cl = { 0 };
	int rc;

	rc = parse_format(argc, argv, &co, &cl, &show_spec);
	if (rc >= 0)
		return rc;
	out_prom_metrics("show", show_metrics, sizeof(show_metrics) / sizeof(show_metrics[0]));
	if (argc - optind != 1)
		return cli_usage_error("want one SNAPSHOT");
	{	/* before the rows: they are written as they come */
		out_columns("files", show_cols,
			    cl.verbose ? sizeof(show_cols) / sizeof(show_cols[0]) : SHOW_DEFAULT_COLS);
		out_columns("metadata", meta_cols, sizeof(meta_cols) / sizeof(meta_cols[0]));
		out_columns("directories", dir_cols, sizeof(dir_cols) / sizeof(dir_cols[0]));
	}
	r = open_snap(argv[optind]);
	if (r) {
		const struct pc_profile_meta *m = pc_profile_get_meta(r);

		out_prom_page_size(m->page_size);
		active_unknown = m->active == PC_META_ACTIVE_UNKNOWN;

		while ((rc = pc_profile_next(r, &f)) > 0) {
			uint64_t p = run_pages(f.runs, f.nruns), a = run_pages(f.active, f.nactive);

			if (f.ident & PC_IDENT_BDEV) {
				metadata_row(&f);
				mrecs++;
				mpages += p;
				pc_profile_file_release(&f);
				continue;
			}
			if (f.ident & PC_IDENT_DIR) {	/* not a file: listed and counted apart */
				directory_row(&f);
				dirs++;
				pc_profile_file_release(&f);
				continue;
			}
			orec_str(&rec, "path", f.path, OF_LABEL);
			orec_u64(&rec, "size", f.size, OF_BYTES);
			orec_u64(&rec, "pages", p, OF_PAGES);
			orec_u64(&rec, "runs", f.nruns, 0);
			if (active_unknown)
				orec_null(&rec, "active");
			else
				orec_u64(&rec, "active", a, OF_PAGES);
			orec_u64(&rec, "mtime", (uint64_t)f.mtime_s, 0);
			orec_u64(&rec, "used", used_pages(&f), OF_PAGES);
			if (f.nused)
				orec_u64(&rec, "first_use_ms", pc_profile_first_use(&f), 0);
			else
				orec_null(&rec, "first_use_ms");
			layer_field(&rec, "layer", &f);
			used += used_pages(&f);
			out_list_add("files", &rec);
			files++;
			pages += p;
			runs += f.nruns;
			active += a;
			pc_profile_file_release(&f);
		}
		if (rc < 0)
			read_failed(argv[optind], rc, r);
		orec_str(&rec, "root", m->root, 0);
		orec_str(&rec, "host", m->host, 0);
		orec_u64(&rec, "created", m->created, 0);
		orec_u64(&rec, "page_size", m->page_size, OF_BYTES);
		meta_fields(&rec, m);
		if (co.fmt == OUT_HUMAN) {
			time_t t = (time_t)m->created;
			char when[64], a[32], act[48];
			struct tm tm;

			/* the header's time is the writer's word: any 64-bit value */
			if (m->created > (uint64_t)INT64_MAX || !localtime_r(&t, &tm) ||
			    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S %Z", &tm))
				snprintf(when, sizeof(when), "an impossible time (%llu)",
					 (unsigned long long)m->created);
			out_human_line("%s", "");
			out_human_line("Snapshot of %s on %s, %s (pages of %u bytes)", m->root,
				       m->host, when, m->page_size);
			if (active_unknown)
				snprintf(act, sizeof(act), "active pages unknown (not recorded)");
			else
				snprintf(act, sizeof(act), "%llu active", (unsigned long long)active);
			out_human_line("%llu files, %llu pages (%s) in %llu runs, %s",
				       (unsigned long long)files, (unsigned long long)pages,
				       fmt_size(pages * m->page_size, a, sizeof(a)),
				       (unsigned long long)runs, act);
			if (m->flags & PC_META_RECORDED)
				out_human_line("Recorded for %.3f s: %llu pages used (%s)%s; %llu events lost%s",
					       m->duration_ms / 1000.0, (unsigned long long)used,
					       fmt_size(used * m->page_size, a, sizeof(a)),
					       used ? ", in the order restore --order access reads" : "",
					       (unsigned long long)m->lost,
					       m->lost ? " (the ring overflowed: some pages used are not listed)"
						       : "");
			if ((m->flags & PC_META_RECORDED) && m->source == PC_META_SRC_MISSES)
				out_human_line("Misses only (a kernel before 6.12): the pages brought "
					       "into the cache, not uses of pages already cached");
			if (mrecs)
				out_human_line("Metadata: %llu block device%s, %llu pages (%s) of their own "
					       "cache", (unsigned long long)mrecs, mrecs == 1 ? "" : "s",
					       (unsigned long long)mpages,
					       fmt_size(mpages * m->page_size, a, sizeof(a)));
			if (dirs)
				out_human_line("Metadata: %llu director%s (read back through the "
					       "filesystem where the device cannot be)",
					       (unsigned long long)dirs, dirs == 1 ? "y" : "ies");
		}
		pc_profile_close(r);
	}
	orec_u64(&rec, "files", files, 0);
	orec_u64(&rec, "pages", pages, OF_PAGES);
	orec_u64(&rec, "runs", runs, 0);
	if (active_unknown)
		orec_null(&rec, "active_pages");
	else
		orec_u64(&rec, "active_pages", active, OF_PAGES);
	orec_u64(&rec, "used_pages", used, OF_PAGES);
	orec_u64(&rec, "metadata_devices", mrecs, 0);
	orec_u64(&rec, "metadata_pages", mpages, OF_PAGES);
	orec_u64(&rec, "directories", dirs, 0);
	out_object("total", &rec);
	rc = out_flush();
	return rc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}

struct entry {
	struct pc_profile_file f;
	bool seen;
};

/* files, then block devices (a device and a file may share a name), each by name */
static int by_path(const void *a, const void *b)
{
	const struct pc_profile_file *x = &((const struct entry *)a)->f, *y = &((const struct entry *)b)->f;
	unsigned bx = x->ident & (PC_IDENT_BDEV | PC_IDENT_DIR), by = y->ident & (PC_IDENT_BDEV | PC_IDENT_DIR);

	return bx != by ? (bx < by ? -1 : 1) : strcmp(x->path, y->path);
}

/* --verbose: when a file was first used in each (version 3), null where unknown */
static void diff_first_use(struct orec *rec, const char *key, const struct pc_profile_file *f)
{
	if (f && f->nused)
		orec_u64(rec, key, pc_profile_first_use(f), 0);
	else
		orec_null(rec, key);
}

/* a recording on either side: rows say when each file was first used (else the v2 shape) */
static bool diff_times;

static void diff_row(const struct pc_profile_file *fa, const struct pc_profile_file *fb,
		     const char *status, uint64_t pa, uint64_t pb, uint64_t gained, uint64_t lost)
{
	struct orec rec = { 0 };
	const struct pc_profile_file *f = fb ? fb : fa;
	bool bdev = f->ident & PC_IDENT_BDEV;
	const char *path = f->path;

	orec_str(&rec, bdev ? "device" : "path", path, OF_LABEL);
	if (diff_times) {
		diff_first_use(&rec, "old_first_use_ms", fa);
		diff_first_use(&rec, "new_first_use_ms", fb);
	}
	orec_str(&rec, "status", status, 0);
	orec_u64(&rec, "old_pages", pa, OF_PAGES);
	orec_u64(&rec, "new_pages", pb, OF_PAGES);
	orec_u64(&rec, "gained", gained, OF_PAGES);
	orec_u64(&rec, "lost", lost, OF_PAGES);
	layer_field(&rec, "old_layer", fa);
	layer_field(&rec, "new_layer", fb);
	out_list_add(bdev ? "metadata" : "files", &rec);
}

static void dir_row(const struct pc_profile_file *f, const char *status)
{
	struct orec rec = { 0 };

	orec_str(&rec, "directory", f->path, OF_LABEL);
	orec_str(&rec, "status", status, 0);
	out_list_add("directories", &rec);
}

/* OLD as read, NEW as compared with it, and what was counted. */
struct diff_ctx {
	struct entry *ents;		/* OLD's files and devices, sorted by by_path */
	size_t n;
	uint32_t page_size;		/* OLD's: NEW's must be the same */
	char root[sizeof(((struct pc_profile_meta *)0)->root)];	/* OLD's: NEW's too */
	struct orec old_meta, new_meta;	/* their meta_fields, for the total */
	int verbose;			/* -v: unchanged files too */
	uint64_t added, removed, changed, gained, lost;	/* files */
	uint64_t madded, mremoved, mchanged, mgained, mlost;	/* block devices' metadata */
	bool any_bdev;			/* either has metadata: version 3's total */
	uint64_t dadded, dremoved;	/* directories (version 5) */
	bool any_dir;			/* either has directories: their total */
};

/* OLD whole into d, sorted: 0, or -1 where it could not be read (said). */
static int read_old(const char *path, struct diff_ctx *d)
{
	struct pc_profile_reader *ra = open_snap(path);
	struct pc_profile_file f;
	size_t cap = 0;
	int rc;

	if (!ra)
		return -1;
	d->page_size = pc_profile_get_meta(ra)->page_size;
	out_prom_page_size(d->page_size);
	snprintf(d->root, sizeof(d->root), "%s", pc_profile_get_meta(ra)->root);
	meta_fields(&d->old_meta, pc_profile_get_meta(ra));
	diff_times = pc_profile_get_meta(ra)->flags & PC_META_RECORDED;
	while ((rc = pc_profile_next(ra, &f)) > 0) {
		if (d->n == cap) {
			struct entry *ne = realloc(d->ents, (cap = cap ? cap * 2 : 256) * sizeof(*ne));

			if (!ne) {
				rc = -ENOMEM;
				pc_profile_file_release(&f);
				break;
			}
			d->ents = ne;
		}
		d->ents[d->n].f = f;
		d->ents[d->n++].seen = false;
	}
	if (rc < 0)
		read_failed(path, rc, ra);
	pc_profile_close(ra);
	if (d->n)	/* qsort(NULL, 0) is undefined: UBSan stops there */
		qsort(d->ents, d->n, sizeof(*d->ents), by_path);
	for (size_t i = 0; i < d->n; i++) {
		d->any_bdev |= d->ents[i].f.ident & PC_IDENT_BDEV;
		d->any_dir |= d->ents[i].f.ident & PC_IDENT_DIR;
	}
	return rc < 0 ? -1 : 0;
}

/* NEW, where it can be compared with OLD (page size, root); NULL: said why not. */
static struct pc_profile_reader *open_new(const char *path, struct diff_ctx *d)
{
	struct pc_profile_reader *rb = open_snap(path);

	if (rb && pc_profile_get_meta(rb)->page_size != d->page_size) {
		cli_fail_msg(path, "cannot compare",
			     "the snapshots were taken with different page sizes");
		pc_profile_close(rb);
		return NULL;
	}
	/* paths are relative to the root: 'a' under one is not 'a' under another */
	if (rb && strcmp(pc_profile_get_meta(rb)->root, d->root) != 0) {
		char why[2 * sizeof(d->root) + 64];

		snprintf(why, sizeof(why), "the snapshots are of different roots ('%s', then '%s')",
			 d->root, pc_profile_get_meta(rb)->root);
		cli_fail_msg(path, "cannot compare", why);
		pc_profile_close(rb);
		return NULL;
	}
	if (rb) {
		meta_fields(&d->new_meta, pc_profile_get_meta(rb));
		if (pc_profile_get_meta(rb)->flags & PC_META_RECORDED)
			diff_times = true;
	}
	return rb;
}

/* One of NEW's files or devices against OLD's: counted, and its row if it differs. */
static void diff_one(struct diff_ctx *d, const struct pc_profile_file *f)
{
	struct entry key = { .f.path = f->path, .f.ident = f->ident }, *e;
	uint64_t pb = run_pages(f->runs, f->nruns);

	/* d->ents is NULL when OLD holds nothing: no bsearch(NULL) (UBSan) */
	e = d->n ? bsearch(&key, d->ents, d->n, sizeof(*d->ents), by_path) : NULL;
	if (f->ident & PC_IDENT_DIR) {	/* a directory: there or not, no pages */
		d->any_dir = true;
		if (e)
			e->seen = true;
		else
			d->dadded++;
		if (!e || d->verbose)
			dir_row(f, e ? "same" : "added");
	} else if (f->ident & PC_IDENT_BDEV) {	/* metadata: counted apart from files */
		d->any_bdev = true;
		uint64_t pa = e ? run_pages(e->f.runs, e->f.nruns) : 0;
		uint64_t both = e ? overlap(e->f.runs, e->f.nruns, f->runs, f->nruns) : 0;

		if (e)
			e->seen = true;
		d->madded += !e;
		d->mgained += pb - both;
		d->mlost += pa - both;
		if (!e || pa != both || pb != both) {
			d->mchanged++;
			diff_row(e ? &e->f : NULL, f, e ? "changed" : "added", pa, pb, pb - both,
				 pa - both);
		} else if (d->verbose) {
			diff_row(&e->f, f, "same", pa, pb, 0, 0);
		}
	} else if (!e) {
		d->added++;
		d->gained += pb;
		diff_row(NULL, f, "added", 0, pb, pb, 0);
	} else {
		uint64_t pa = run_pages(e->f.runs, e->f.nruns);
		uint64_t both = overlap(e->f.runs, e->f.nruns, f->runs, f->nruns);

		e->seen = true;
		d->gained += pb - both;
		d->lost += pa - both;
		if (pa != both || pb != both) {
			d->changed++;
			diff_row(&e->f, f, "changed", pa, pb, pb - both, pa - both);
		} else if (d->verbose) {
			diff_row(&e->f, f, "same", pa, pb, 0, 0);
		}
	}
}

/* What OLD has and NEW has not: removed. */
static void diff_removed(struct diff_ctx *d)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct pc_profile_file *f = &d->ents[i].f;
		uint64_t pa;

		if (d->ents[i].seen)
			continue;
		pa = run_pages(f->runs, f->nruns);
		if (f->ident & PC_IDENT_DIR) {
			d->dremoved++;
			dir_row(f, "removed");
			continue;
		}
		if (f->ident & PC_IDENT_BDEV) {
			d->mremoved++;
			d->mchanged++;
			d->mlost += pa;
		} else {
			d->removed++;
			d->lost += pa;
		}
		diff_row(f, NULL, "removed", pa, 0, 0, pa);
	}
}

/* NEW read through against OLD, and closed; then, if it was read whole, what it lacks. */
static void compare_new(struct diff_ctx *d, struct pc_profile_reader *rb, const char *path)
{
	struct pc_profile_file f;
	int rc;

	while ((rc = pc_profile_next(rb, &f)) > 0) {
		diff_one(d, &f);
		pc_profile_file_release(&f);
	}
	if (rc < 0)
		read_failed(path, rc, rb);
	pc_profile_close(rb);
	/* a NEW read only in part: what it did not get to is not "removed" */
	if (rc >= 0)
		diff_removed(d);
}

/* The "total" object: every format's. */
static void total_rec(struct diff_ctx *d)
{
	struct orec rec = { 0 };

	orec_u64(&rec, "added", d->added, 0);
	orec_u64(&rec, "removed", d->removed, 0);
	orec_u64(&rec, "changed", d->changed, 0);
	orec_u64(&rec, "gained", d->gained, OF_PAGES);
	orec_u64(&rec, "lost", d->lost, OF_PAGES);
	/* what version 3 adds, where either side has it (else the shape stays version 2's) */
	if (d->any_bdev) {
		orec_u64(&rec, "metadata_added", d->madded, 0);
		orec_u64(&rec, "metadata_removed", d->mremoved, 0);
		orec_u64(&rec, "metadata_changed", d->mchanged - d->madded - d->mremoved, 0);
		orec_u64(&rec, "metadata_gained", d->mgained, OF_PAGES);
		orec_u64(&rec, "metadata_lost", d->mlost, OF_PAGES);
	}
	/* directories (version 5), where either side has them; not files */
	if (d->any_dir) {
		orec_u64(&rec, "directories_added", d->dadded, 0);
		orec_u64(&rec, "directories_removed", d->dremoved, 0);
	}
	if (diff_times && d->old_meta.n)
		orec_object(&rec, "old", &d->old_meta);
	if (diff_times && d->new_meta.n)
		orec_object(&rec, "new", &d->new_meta);
	orec_release(&d->old_meta);
	orec_release(&d->new_meta);
	out_object("total", &rec);
}

/* The summary for people, after the tables. */
static void human_summary(const struct diff_ctx *d)
{
	if (d->added + d->removed + d->changed + d->mchanged + d->dadded + d->dremoved)
		out_human_line("%s", "");	/* a blank line after the table (escaped if in the text) */
	if (d->mchanged)
		out_human_line("%llu block devices' metadata added, removed or changed",
			       (unsigned long long)d->mchanged);
	if (d->dadded + d->dremoved)
		out_human_line("%llu directories added, %llu removed", (unsigned long long)d->dadded,
			       (unsigned long long)d->dremoved);
	out_human_line("%llu files added, %llu removed, %llu changed; %llu pages gained, "
		       "%llu lost",
		       (unsigned long long)d->added, (unsigned long long)d->removed,
		       (unsigned long long)d->changed, (unsigned long long)d->gained,
		       (unsigned long long)d->lost);
}

int cmd_diff(int argc, char **argv)
{
	struct cli_opts co = { OUT_HUMAN };
	struct diff_ctx d = { 0 };
	struct pc_profile_reader *rb = NULL;
	struct show_cli cl = { 0 };
	int rc;

	rc = parse_format(argc, argv, &co, &cl, &diff_spec);
	if (rc >= 0)
		return rc;
	d.verbose = cl.verbose;
	out_prom_metrics("diff", diff_metrics, sizeof(diff_metrics) / sizeof(diff_metrics[0]));
	if (argc - optind != 2)
		return cli_usage_error("want two snapshots, OLD and NEW");
	if (read_old(argv[optind], &d) == 0)
		rb = open_new(argv[optind + 1], &d);
	/* before the rows: they are written as they come */
	out_sort("files", "path");
	out_columns("files", diff_cols, sizeof(diff_cols) / sizeof(diff_cols[0]));
	out_sort("metadata", "device");
	out_columns("metadata", diff_meta_cols, sizeof(diff_meta_cols) / sizeof(diff_meta_cols[0]));
	out_sort("directories", "directory");
	out_columns("directories", diff_dir_cols, sizeof(diff_dir_cols) / sizeof(diff_dir_cols[0]));
	if (rb)
		compare_new(&d, rb, argv[optind + 1]);
	for (size_t i = 0; i < d.n; i++)
		pc_profile_file_release(&d.ents[i].f);
	free(d.ents);
	total_rec(&d);
	if (co.fmt == OUT_HUMAN && !cli_failures())
		human_summary(&d);
	rc = out_flush();
	return rc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}
