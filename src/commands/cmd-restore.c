/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-restore.c: `pagecache restore`: options, the child that joins
 * --cgroup (the pages are charged to the process that reads), and the
 * rendering of lib/restore.c's callbacks and totals: skipped files (the
 * first SKIP_WARN on stderr), rows with -v, the totals in every format.
 * What is restored, and how a snapshot and its tree are distrusted, is
 * the engine's (lib/restore.c).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "commands/metadata.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* what the command was told, beside the engine's options */
#define PARTLY_NAMED 20

struct restore_cli {
	struct pc_restore_opts o;
	struct cli_opts co;
	const char *cgroup;
	const char *container;		/* --container: its root and cgroup */
	const char *const *snaps;	/* SNAPSHOT...: argv's */
	size_t nsnaps;
	bool list, quiet;
	/* the progress line, while the engine reads */
	struct pc_progress progress;
	struct cli_progress *prog;
	uint64_t total;
	/* files read in part, named where the budget stopped: the first PARTLY_NAMED */
	struct partly {
		char *path;
		uint64_t resident, pages;
	} partly[PARTLY_NAMED];
	size_t npartly;
	uint64_t partly_more;
};

enum {
	OPT_STRICT = CLI_OPT_OWN, OPT_ROOT, OPT_ALLOW_CHANGED, OPT_ORDER, OPT_MAX_TIME,
	OPT_INTO_CGROUP, OPT_IDLE, OPT_DRY_RUN, OPT_NO_METADATA, OPT_CONTAINER,
};
static const struct cli_opt restore_opts[] = {
	{ .name = "root", .id = OPT_ROOT, .arg = "DIR", .comp = CC_DIR,
	  CLI_STRING(struct restore_cli, o.root),
	  .help = "the tree the snapshot's paths are beneath (default /)" },
	{ .name = "strict", .id = OPT_STRICT, CLI_SET(struct restore_cli, o.strict),
	  .help = "skip files modified in place too (size or mtime)" },
	{ .name = "allow-changed", .id = OPT_ALLOW_CHANGED,
	  CLI_SET(struct restore_cli, o.allow_changed),
	  .help = "warm changed and replaced regular files anyway" },
	{ .name = "order", .id = OPT_ORDER, .arg = "ORDER", .comp = CC_WORDS,
	  .words = "disk file access",
	  .help = "disk (the default), file, or access (a recording's)" },
	{ .name = "max-time", .id = OPT_MAX_TIME, .arg = "S",
	  CLI_SECONDS(struct restore_cli, o.max_time), .lo = 0, .hi = 1e9, .range = CLI_BELOW_HI,
	  .bad = "--max-time '%s': seconds, 0 or more (0.5 is half a second)",
	  .help = "stop reading after S seconds; say how far it got" },
	{ .name = "cgroup", .id = OPT_INTO_CGROUP, .arg = "CG", .comp = CC_CGROUP,
	  CLI_STRING(struct restore_cli, cgroup),
	  .help = "read inside memory cgroup CG, charging it the pages" },
	{ .name = "container", .id = OPT_CONTAINER, .arg = "ID|PID",
	  CLI_STRING(struct restore_cli, container),
	  .help = "into a running container: its root and cgroup" },
	CLI_OPT_RATE,
	{ .name = "idle", .id = OPT_IDLE, CLI_SET(struct restore_cli, o.idle),
	  .help = "idle I/O priority, so a live service keeps its disk" },
	{ .name = "dry-run", .id = OPT_DRY_RUN, CLI_SET(struct restore_cli, o.dry_run),
	  .help = "say what would be read; read nothing" },
	{ .name = "no-metadata", .id = OPT_NO_METADATA,
	  CLI_SET(struct restore_cli, o.no_metadata),
	  .help = "skip the snapshot's filesystem metadata records" },
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_SET(struct restore_cli, list),
	  .help = "list each file" },
	{ .name = "quiet", .letter = 'q', .id = 'q', CLI_SET(struct restore_cli, quiet),
	  .help = "no progress line" },
	{ 0 }
};

const struct cli_spec restore_spec = {
	.name = "restore",
	.usage =
	"Usage: pagecache restore [OPTIONS] SNAPSHOT...\n"
	"\n"
	"Bring the pages a snapshot recorded back into the page cache, so a service\n"
	"restarted (or moved) starts warm. A file modified in place since the\n"
	"snapshot (the same inode, generation and birth time; a database's tables)\n"
	"is restored, its recorded pages clipped to its size; a file replaced by\n"
	"another (a new inode, generation or birth time: rename over it) or no longer\n"
	"a regular file is skipped and listed, as is, in a copy under --root or on\n"
	"another filesystem, a file whose size or mtime changed; missing files are\n"
	"listed. Pages already cached cost no I/O. Every\n"
	"page read is verified resident, as with warm, and the memory budget holds:\n"
	"it stops before MemAvailable (or the cgroup's headroom) falls below the\n"
	"reserve, cutting a file where it runs out, and says how far it got; when\n"
	"what is missing does not fit, the active pages go first, then those a\n"
	"recording saw used first, then the rest. Active pages are read twice.\n"
	"The snapshot is read whole before any file is opened; files are opened\n"
	"beneath the root only, never through a symbolic link, and a FIFO or device\n"
	"in a file's place is never opened.\n"
	"Block device records (snapshot --metadata: the filesystems' metadata) are\n"
	"read first, as root, through the device under the restored files'\n"
	"filesystem (never the name the snapshot holds); one not found is named.\n"
	"Where a device is not read (refused: a VM's root disk, a container, not\n"
	"root), the recorded directories are read and their entries statx()ed, in\n"
	"inode order, beneath the root: the walk a start does, done first.\n"
	"Several snapshots are restored as one (a recording of the service's start\n"
	"and a snapshot of it running): taken beneath one root (else --root), each\n"
	"read whole first; the same file's pages united, each used page at its\n"
	"earliest time; of a file that changed between them, the newer record.\n"
	"--container (its ID or a prefix, its cgroup, or a process in it) restores\n"
	"beneath the container's root as its processes see it, charging its cgroup:\n"
	"a snapshot --container of one container warms another of the same image.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache restore /var/tmp/db.snap\n"
	"  pagecache restore --root /mnt/replica --cgroup system.slice/db.service db.snap\n"
	"  pagecache restore --order access --max-time 2 boot.snap\n"
	"  pagecache restore running.pcs start.pcs\n"
	"  pagecache restore --container 3f2a9c1b7e44 db.snap\n"
	"Exit status: 0 all restored, or --max-time ran out (it did what it was\n"
	"told: the report says how far it got); 1 some files replaced (or, with\n"
	"--strict, modified), missing or failed, the\n"
	"budget stopped it, or the snapshot is corrupt; 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", restore_opts }, &cli_budget_group,
		    &cli_format_restore_group },
	.operands = CC_FILE,
};

/* Prometheus text: docs/metrics.md; pages are exported in bytes */
static const struct ometric metrics[] = {
	{ "total", "dry_run", "dry_run", 0, "1 if the last run was a --dry-run, else 0." },
	{ "total", "files", "files", 0, "Files restored (listed, with --dry-run)." },
	{ "total", "pages", "wanted_bytes", OM_PAGES,
	  "Bytes the snapshot has cached of the files restored." },
	{ "total", "cached_before", "cached_before_bytes", OM_PAGES,
	  "Bytes of those already cached before the run." },
	{ "total", "read", "read_bytes", OM_PAGES, "Bytes the last run read into the cache." },
	{ "total", "resident", "resident_bytes", OM_PAGES,
	  "Bytes of those resident when the run ended." },
	{ "total", "metadata_pages", "metadata_wanted_bytes", OM_PAGES,
	  "Bytes of block devices' cache (filesystem metadata) the snapshot wants." },
	{ "total", "metadata_read", "metadata_read_bytes", OM_PAGES,
	  "Bytes of those the last run read through the devices." },
	{ "total", "metadata_skipped", "metadata_skipped_devices", 0,
	  "Block device records not read (--no-metadata, not root, device not found)." },
	{ "total", "changed", "changed_files", 0, "Files skipped: replaced since the snapshot." },
	{ "total", "modified", "modified_files", 0,
	  "Files restored though modified in place since the snapshot." },
	{ "total", "missing", "missing_files", 0, "Files of the snapshot not found." },
	{ "total", "failures", "failures", 0, "Files that failed (named on stderr)." },
	{ "total", "budget_stopped", "budget_stopped", 0,
	  "1 if the memory budget stopped the run early, else 0." },
	{ "total", "elapsed", "duration_seconds", 0, "How long the last run took." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "pages", "file_wanted_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes the snapshot has cached of the file." },
	{ "files", "cached", "file_cached_before_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of those already cached (--dry-run)." },
	{ "files", "to_read", "file_to_read_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of those a run would read (--dry-run)." },
	{ "files", "read", "file_read_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of the file the last run read into the cache." },
	{ "files", "resident", "file_resident_bytes", OM_PAGES | OM_PER_FILE,
	  "Bytes of those resident when the file was done." },
};

/*
 * Skipped files: each in the "skipped" list (JSON has them all), and the
 * first SKIP_WARN on stderr; then only a count at the end, unless -v: a
 * snapshot of a tree that is gone would otherwise flood the terminal.
 */
#define SKIP_WARN 20
static uint64_t nskipped;
static bool warn_all;

static void skip_row(const char *path, const char *why)
{
	struct orec r = { 0 };

	orec_str(&r, "path", path, 0);
	orec_str(&r, "reason", why, 0);
	out_list_add("skipped", &r);
	if (nskipped++ < SKIP_WARN || warn_all)
		cli_warn("skipping '%s': %s", path, why);
}

static int parse(struct restore_cli *c, int argc, char **argv)
{
	struct cli_parser p;
	struct cli_budget bo = CLI_BUDGET_INIT;
	int opt;

	cli_parser_bind_to(&p, &restore_spec,
			   &(struct cli_bound){ .base = c, .co = &c->co, .bo = &bo }, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case OPT_ORDER:
			if (!strcmp(p.arg, "file"))
				c->o.order = PC_RESTORE_FILE;
			else if (!strcmp(p.arg, "access"))
				c->o.order = PC_RESTORE_ACCESS;
			else if (!strcmp(p.arg, "disk"))
				c->o.order = PC_RESTORE_DISK;
			else
				return cli_usage_error("unknown order '%s' (disk, file or access)", p.arg);
			break;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	c->o.max_mem = bo.max_mem;
	c->o.reserve = bo.reserve;
	c->o.rate = bo.rate;
	if (argc - optind < 1)
		return cli_usage_error("want a SNAPSHOT (or several)");
	if (c->o.strict && c->o.allow_changed)
		return cli_usage_error("--strict and --allow-changed contradict each other");
	if (c->container && (c->o.root || c->cgroup))
		return cli_usage_error("--container is the container's root and its cgroup: not "
				       "with --root or --cgroup");
	c->snaps = (const char *const *)argv + optind;
	c->nsnaps = (size_t)(argc - optind);
	return -1;
}

static void start_output(struct restore_cli *c)
{
	static const struct ocol wcols[] = {
		{ "pages", "PAGES", false }, { "read", "READ", false },
		{ "resident", "RESIDENT", false }, { "status", "STATUS", true },
		{ "path", "FILE", true }, { "first_use_ms", "FIRST USE MS", false },
	}, dcols[] = {
		{ "pages", "PAGES", false }, { "cached", "CACHED", false },
		{ "to_read", "TO READ", false }, { "runs", "RUNS", false },
		{ "path", "FILE", true }, { "first_use_ms", "FIRST USE MS", false },
	};

	warn_all = c->list;
	c->list = c->list || c->co.prom_per_file;
	out_init(c->co.fmt, c->co.bytes, c->co.noheadings);
	out_set_raw(c->co.raw);
	out_prom_metrics("restore", metrics, sizeof(metrics) / sizeof(metrics[0]));
	out_list_declare("files");
	out_list_declare("skipped");
	out_list_declare("errors");
	/* before the rows: they are written as they come; access order: first use after the path */
	if (c->list)
		out_columns("files", c->o.dry_run ? dcols : wcols,
			    c->o.order == PC_RESTORE_ACCESS ? 6 : 5);
}

/* ---- the engine's callbacks ---- */

static void on_reading(void *arg, uint64_t bytes)
{
	struct restore_cli *c = arg;

	c->total = bytes;
	if (!c->quiet && c->co.fmt == OUT_HUMAN)
		c->prog = cli_progress_start(&c->progress, "restoring", &c->total);
}

static void on_read(void *arg)
{
	struct restore_cli *c = arg;

	cli_progress_stop(c->prog);
	c->prog = NULL;
}

static void on_skip(void *arg, const char *path, enum pc_restore_skip kind, const char *why)
{
	(void)arg;
	(void)kind;
	skip_row(path, why);
}

static void on_error(void *arg, const char *path, const char *what, int err, const char *why)
{
	(void)arg;
	if (why)
		cli_fail_msg(path, what, why);
	else
		cli_fail(path, err, what);
}

static void on_warn(void *arg, const char *msg)
{
	(void)arg;
	cli_warn("%s", msg);
}

static void on_file(void *arg, const struct pc_restore_file *f)
{
	static const char *const status[] = {
		[PC_RESTORE_OK] = "ok", [PC_RESTORE_PARTLY] = "partly",
		[PC_RESTORE_NOT_REACHED] = "not reached",
	};
	struct restore_cli *c = arg;
	struct orec rec = { 0 };

	if (f->status == PC_RESTORE_PARTLY) {
		if (c->npartly < PARTLY_NAMED &&
		    (c->partly[c->npartly].path = strdup(f->path))) {
			c->partly[c->npartly].resident = f->resident;
			c->partly[c->npartly++].pages = f->pages;
		} else {
			c->partly_more++;
		}
	}
	/* a dry run lists every file, -v or not; a run with -v */
	if (!c->list && f->status != PC_RESTORE_LISTED)
		return;
	orec_str(&rec, "path", f->path, OF_LABEL);
	orec_u64(&rec, "pages", f->pages, OF_PAGES);
	if (f->status == PC_RESTORE_LISTED) {
		orec_u64(&rec, "cached", f->cached, OF_PAGES);
		orec_u64(&rec, "to_read", f->pages - f->cached, OF_PAGES);
		orec_u64(&rec, "runs", f->runs, 0);
	} else {
		orec_u64(&rec, "read", f->read, OF_PAGES);
		orec_u64(&rec, "resident", f->resident, OF_PAGES);
		orec_u64(&rec, "cut", f->cut, OF_PAGES);
		orec_str(&rec, "status", f->status == PC_RESTORE_FAILED ? strerror(f->err) :
					 status[f->status], 0);
	}
	/* access order's column: when the file was first used, in ms of the recording */
	if (c->o.order == PC_RESTORE_ACCESS && f->has_first_use)
		orec_u64(&rec, "first_use_ms", f->first_use_ms, 0);
	else if (c->o.order == PC_RESTORE_ACCESS)
		orec_null(&rec, "first_use_ms");
	out_list_add("files", &rec);
}

/* ---- the report ---- */

/*
 * The snapshots restored together, each with its counts: a list under
 * the total (JSON snapshots[], key=value snapshots.count, snapshots.N.*),
 * as given; before they were read (an open that failed), their paths.
 */
static void inputs_report(const struct restore_cli *c, const struct pc_restore_result *t,
			  struct orec *rec)
{
	for (size_t i = 0; i < c->nsnaps; i++) {
		const struct pc_restore_input *in = i < t->ninputs ? &t->inputs[i] : NULL;
		struct orec r = { 0 };

		orec_str(&r, "path", c->snaps[i], 0);
		if (in) {
			orec_str(&r, "root", in->root, 0);
			orec_u64(&r, "created", in->created, 0);
			orec_bool(&r, "recorded", in->recorded);
			orec_u64(&r, "files", in->files, 0);
			orec_u64(&r, "pages", in->pages, OF_PAGES);
			orec_u64(&r, "metadata_devices", in->devices, 0);
			orec_u64(&r, "shared", in->shared, 0);
			orec_u64(&r, "superseded", in->superseded, 0);
		}
		orec_list_add(rec, "snapshots", &r);
	}
}

/* Several snapshots: a line saying what each brought (one: nothing more than before). */
static void inputs_human(const struct pc_restore_result *t)
{
	if (t->ninputs < 2)
		return;
	out_human_line("Merged %zu snapshots:", t->ninputs);
	for (size_t i = 0; i < t->ninputs; i++) {
		const struct pc_restore_input *in = &t->inputs[i];
		char more[160] = "", meta[64] = "";

		if (in->shared || in->superseded)
			snprintf(more, sizeof(more), "; %llu also in an earlier one (united), "
				 "%llu left out for a newer record",
				 (unsigned long long)in->shared, (unsigned long long)in->superseded);
		if (in->devices)
			snprintf(meta, sizeof(meta), ", metadata of %llu block device%s",
				 (unsigned long long)in->devices, in->devices == 1 ? "" : "s");
		out_human_line("  '%s' (%s): %llu files, %llu pages%s%s", in->path,
			       in->recorded ? "recorded" : "snapshot", (unsigned long long)in->files,
			       (unsigned long long)in->pages, meta, more);
	}
}

static void report(const struct restore_cli *c, const struct pc_restore_result *t, double t0)
{
	struct meta_set ms = {
		.rows = (struct pc_meta_row *)t->meta_rows, .nrows = t->meta_nrows,
		.devices = t->meta_devices, .pages = t->meta_pages, .cached = t->meta_cached,
		.read = t->meta_read, .unavailable = t->meta_skipped,
		.dirs = t->meta_dirs, .dirs_wanted = t->meta_dirs_wanted, .entries = t->meta_entries,
		.dirs_skipped = t->meta_dirs_skipped, .stat_failed = t->meta_stat_failed,
		.dirs_by_device = t->meta_dirs_by_device,
	};
	uint64_t ps = pc_page_size(), todo = t->dry_run ? t->pages - t->cached_before : t->read;
	bool access = t->order == PC_RESTORE_ACCESS;
	struct orec rec = { 0 };
	char a[32];

	orec_str(&rec, "snapshot", c->snaps[0], 0);
	orec_str(&rec, "root", t->root, 0);
	orec_bool(&rec, "dry_run", t->dry_run);
	orec_u64(&rec, "files", t->files, 0);
	orec_u64(&rec, "pages", t->pages, OF_PAGES);
	orec_u64(&rec, "cached_before", t->cached_before, OF_PAGES);
	orec_u64(&rec, "read", t->read, OF_PAGES);
	orec_u64(&rec, "read_bytes", t->read * ps, OF_BYTES);
	orec_u64(&rec, "resident", t->resident, OF_PAGES);
	orec_u64(&rec, "changed", t->changed, 0);
	orec_u64(&rec, "modified", t->modified, 0);
	orec_u64(&rec, "missing", t->missing, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_bool(&rec, "budget_stopped", t->budget_stopped != 0);
	meta_report(&ms, &rec, true);
	orec_str(&rec, "order", access ? "access" : t->order == PC_RESTORE_FILE ? "file" : "disk", 0);
	if (c->o.max_time >= 0)
		orec_f64(&rec, "max_time", c->o.max_time);
	else
		orec_null(&rec, "max_time");
	orec_bool(&rec, "time_stopped", t->time_stopped);
	orec_u64(&rec, "files_not_done", t->files_not_done, 0);
	orec_u64(&rec, "pages_not_done", t->pages_not_done, OF_PAGES);
	orec_u64(&rec, "files_partly", t->files_partly, 0);
	orec_bool(&rec, "prioritized", t->prioritized);
	orec_f64(&rec, "elapsed", pc_now() - t0);
	inputs_report(c, t, &rec);
	out_object("total", &rec);
	if (c->co.fmt != OUT_HUMAN)
		return;
	if (c->list)
		out_human_line("%s", "");
	out_human_line("%s %llu files beneath '%s': %llu pages wanted, %llu already cached, "
		       "%llu %s (%s), %llu changed, %llu missing, %.3g s",
		       t->dry_run ? "Would restore" : "Restored", (unsigned long long)t->files, t->root,
		       (unsigned long long)t->pages, (unsigned long long)t->cached_before,
		       (unsigned long long)todo, t->dry_run ? "to read" : "read",
		       fmt_size(todo * ps, a, sizeof(a)), (unsigned long long)t->changed,
		       (unsigned long long)t->missing, pc_now() - t0);
	meta_human(&ms, true, t->dry_run);
	inputs_human(t);
	if (t->modified)
		out_human_line("%llu of them modified in place since the snapshot: their "
			       "recorded pages inside their size %s",
			       (unsigned long long)t->modified,
			       t->dry_run ? "would be read" : "were read");
	if (t->time_stopped)
		out_human_line("Stopped at --max-time %g s: %llu of %llu pages handed out (and read); "
			       "%llu files (%llu pages) not done%s",
			       c->o.max_time, (unsigned long long)(t->pages - t->pages_not_done),
			       (unsigned long long)t->pages, (unsigned long long)t->files_not_done,
			       (unsigned long long)t->pages_not_done,
			       access && t->pages > t->pages_not_done ? "; those were the first used" : "");
}

/*
 * --cgroup: a child joins the memory cgroup and does the rest (the pages
 * are charged to the process that reads); the parent waits. Returns -1 in
 * the child (go on), else the exit status. SIGCHLD inherited as ignored
 * would reap the child before the wait and lose its status: default first.
 */
static int fork_reader(void)
{
	pid_t pid;
	int st;

	signal(SIGCHLD, SIG_DFL);
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		cli_warn("cannot fork: %s", strerror(errno));
		return EXIT_PARTIAL;
	}
	if (pid == 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR) {
			cli_warn("cannot wait for the reader: %s", strerror(errno));
			return EXIT_PARTIAL;
		}
	return WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_PARTIAL;
}

/* Join (or, for a dry run, only find) the memory cgroup; false: said why. */
static bool join_cgroup(const struct restore_cli *c)
{
	char cgdir[4096], why[1024];
	int rc = pc_cgroup_resolve(c->cgroup, cgdir, sizeof(cgdir), why, sizeof(why));

	if (rc < 0) {
		cli_fail_msg(c->cgroup, c->o.dry_run ? "cannot use memory cgroup" :
				       "cannot join memory cgroup", why);
		return false;
	}
	if (c->o.dry_run)	/* a dry run reads nothing, but the cgroup must still exist */
		return true;
	rc = pc_cgroup_enter(cgdir, getpid());
	if (rc < 0) {
		cli_fail(cgdir, -rc, "cannot join memory cgroup");
		return false;
	}
	return true;
}

int cmd_restore(int argc, char **argv)
{
	struct restore_cli c = { .o = PC_RESTORE_OPTS_INIT, .co = { OUT_HUMAN } };
	struct pc_restore_result none = { .root = "/" };
	const struct pc_restore_result *t = &none;
	struct pc_restore *r = NULL;
	bool child = false;
	double t0 = pc_now();
	int rc;

	rc = parse(&c, argc, argv);
	if (rc >= 0)
		return rc;
	start_output(&c);
	c.o.progress = &c.progress;
	c.o.on_reading = on_reading;
	c.o.on_read = on_read;
	c.o.on_skip = on_skip;
	c.o.on_file = on_file;
	c.o.on_error = on_error;
	c.o.on_warn = on_warn;
	c.o.arg = &c;
	none.dry_run = c.o.dry_run;
	none.order = c.o.order;
	if (c.container) {
		static char root[64], cgdir[4096];

		if (cli_container(c.container, root, sizeof(root), cgdir, sizeof(cgdir)) < 0) {
			report(&c, t, t0);
			out_flush();
			return EXIT_PARTIAL;
		}
		c.o.root = root;
		c.cgroup = cgdir;
	}

	if (c.cgroup && !c.o.dry_run) {
		rc = fork_reader();
		if (rc >= 0)
			return rc;
		child = true;
	}
	if ((!c.cgroup || join_cgroup(&c)) &&
	    pc_restore_open_many(c.snaps, c.nsnaps, &c.o, &r) == 0) {
		/* a dry run that got to its list has rows */
		if (pc_restore_run(r) >= 0 && c.o.dry_run)
			c.list = true;
		t = pc_restore_totals(r);
	}
	cli_progress_stop(c.prog);
	if (t->budget_stopped) {
		cli_warn("stopped early: %s; %llu of %llu pages restored%s",
			 cli_budget_reason(t->budget_stopped), (unsigned long long)t->resident,
			 (unsigned long long)t->pages,
			 t->prioritized ? " (active pages first, then by first use, then the rest)"
					: "");
		for (size_t i = 0; i < c.npartly; i++) {
			char pct[32];

			cli_warn("'%s': %llu of %llu pages (%s)", c.partly[i].path,
				 (unsigned long long)c.partly[i].resident,
				 (unsigned long long)c.partly[i].pages,
				 fmt_percent(c.partly[i].resident, c.partly[i].pages, pct, sizeof(pct)));
		}
		if (c.partly_more)
			cli_warn("and %llu more files restored in part (-v lists them)",
				 (unsigned long long)c.partly_more);
	}
	for (size_t i = 0; i < c.npartly; i++)
		free(c.partly[i].path);
	if (nskipped > SKIP_WARN && !warn_all)
		cli_warn("and %llu more files skipped (-v names every one; --json lists them)",
			 (unsigned long long)(nskipped - SKIP_WARN));
	report(&c, t, t0);
	rc = out_flush();
	rc = rc < 0 || cli_failures() || t->changed || t->missing || t->budget_stopped ? EXIT_PARTIAL : 0;
	pc_restore_free(r);
	if (child)
		_exit(rc);
	return rc;
}
