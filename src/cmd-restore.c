/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-restore.c: `pagecache restore`: bring a snapshot's pages back into
 * the page cache. A file that is still the snapshot's (the same inode,
 * generation or birth time) is restored even if it was modified in place
 * since, as databases do at every checkpoint, its runs clipped to its size;
 * one replaced by another file, or no longer a regular file, is skipped and
 * listed (its pages would be the wrong ones), and so is, with --strict, any
 * file whose size or mtime changed; missing files are listed, not fatal. Files are read in the order of their place on disk (FIEMAP)
 * unless told otherwise, through the same verified, budgeted engine as
 * warm, and by reading, never by touching a mapping. Pages that were
 * active are read twice, so the kernel activates them again. With
 * --cgroup, a child that joined that memory cgroup does the reading, so
 * the pages are charged to the container that will use them.
 *
 * A snapshot is hostile input (copied between hosts, pulled from a
 * registry), and so is the tree it names: the whole snapshot is read
 * before anything is opened; every file is reached beneath the root with
 * pc_open_beneath (no "..", no symbolic link, never a FIFO or a device);
 * the root is the user's (--root) or "/" and said so, never one the
 * snapshot chose; fds are held only while a file is checked or read (a
 * reopen must find the same inode), so a snapshot of more files than
 * RLIMIT_NOFILE restores whole; and every page read, the second read of
 * active pages included, counts against the budget.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

struct item {
	struct pc_profile_file f;	/* path relative to the root, runs */
	uint64_t dev, ino;		/* as checked: a reopen must find them */
	uint64_t disk;			/* physical byte of the first run, for --order disk */
	uint64_t pages;			/* pages the snapshot wants */
	size_t order;			/* position in the snapshot */
	bool ok;			/* checked: to be read */
	bool modified;			/* size or mtime changed since the snapshot */
	/* the plan (struct plan): pieces of it, those handed to the warmer, their results */
	size_t npieces, nsent, first_piece;
	uint64_t sent_pages, r_pages, r_read, r_resident;
	int r_err;
	bool listed;
};
enum { OPT_MAX_TIME = 512 };
static const struct cli_opt restore_opts[] = {
	{ "root", 0, 0, 'R', "DIR", CC_DIR, NULL,
	  "the tree the snapshot's paths are relative to, and\nbeneath which every file is opened (default /; a\n"
	  "snapshot taken beneath another root needs it)", 0 },
	{ "strict", 0, 0, 'X', NULL, CC_NONE, NULL,
	  "skip every file whose size or mtime changed since\nthe snapshot, even one modified in place", 0 },
	{ "allow-changed", 0, 0, 'A', NULL, CC_NONE, NULL,
	  "warm changed regular files anyway, replaced ones\ntoo (never links, FIFOs, devices, or anything\n"
	  "outside the root)", 0 },
	{ "order", 0, 0, 'O', "ORDER", CC_WORDS, "disk file access",
	  "disk (default: by position on disk, FIEMAP), file\n(the snapshot's order) or access: the pages a\n"
	  "recording (pagecache record) saw used, in the\norder they were first used, then the rest by disk",
	  0 },
	{ "max-time", 0, 0, OPT_MAX_TIME, "S", CC_NONE, NULL,
	  "stop handing out reads after S seconds (0.5 is\nhalf a second), let those in flight finish, and\n"
	  "say how far it got: with --order access, what\nwas needed first is in", 0 },
	{ "cgroup", 0, 0, 'G', "CG", CC_CGROUP, NULL,
	  "read from inside memory cgroup CG (v1 or v2), so\npages are charged there: its directory, its path\n"
	  "(/system.slice/db.service), its name (db.service) or\na container ID (12+ hex digits)", 0 },
	CLI_OPT_RATE,
	{ "idle", 0, 0, 'I', NULL, CC_NONE, NULL,
	  "idle I/O priority, so a live service keeps its disk", 0 },
	{ "dry-run", 0, 0, 'D', NULL, CC_NONE, NULL, "say what would be read; read nothing", 0 },
	{ "no-metadata", 0, 0, 'E', NULL, CC_NONE, NULL,
	  "do not read the snapshot's block device records\n(filesystem metadata, snapshot --metadata)", 0 },
	{ "verbose", 'v', 0, 'v', NULL, CC_NONE, NULL, "list each file", 0 },
	{ "quiet", 'q', 0, 'q', NULL, CC_NONE, NULL, "no progress line", 0 },
	{ 0 }
};

const struct cli_spec restore_spec = {
	.name = "restore",
	.usage =
	"Usage: pagecache restore [OPTIONS] SNAPSHOT\n"
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
	"reserve, and says how far it got. Pages that were active are read twice.\n"
	"The snapshot is read whole before any file is opened; files are opened\n"
	"beneath the root only, never through a symbolic link, and a FIFO or device\n"
	"in a file's place is never opened.\n"
	"Block device records (snapshot --metadata: the filesystems' metadata) are\n"
	"read first, as root, through the device under the restored files'\n"
	"filesystem (never the name the snapshot holds); one not found is named.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache restore /var/tmp/db.snap\n"
	"  pagecache restore --root /mnt/replica --cgroup system.slice/db.service db.snap\n"
	"  pagecache restore --order access --max-time 2 boot.snap\n"
	"Exit status: 0 all restored, or --max-time ran out (it did what it was\n"
	"told: the report says how far it got); 1 some files replaced (or, with\n"
	"--strict, modified), missing or failed, the\n"
	"budget stopped it, or the snapshot is corrupt; 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", restore_opts }, &cli_budget_group,
		    &cli_format_restore_group },
	.operands = CC_FILE,
};

static uint64_t first_physical(int fd, uint64_t byte)
{
	struct {
		struct fiemap fm;
		struct fiemap_extent fe;
	} q;

	memset(&q, 0, sizeof(q));
	q.fm.fm_start = byte;
	q.fm.fm_length = ~0ull - byte;
	q.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &q.fm) < 0 || q.fm.fm_mapped_extents < 1)
		return UINT64_MAX;	/* no FIEMAP (tmpfs, ...): after the rest */
	return q.fe.fe_physical + (byte > q.fe.fe_logical ? byte - q.fe.fe_logical : 0);
}

static int by_disk(const void *a, const void *b)
{
	const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->disk != y->disk)
		return x->disk < y->disk ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

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

/* The path a user reads: root and the snapshot's relative path. */
static const char *shown(const char *root, const struct item *it, char *buf, size_t len)
{
	size_t rl = strlen(root);

	snprintf(buf, len, "%s%s%s", root, rl && root[rl - 1] == '/' ? "" : "/", it->f.path);
	return buf;
}

/* Why pc_open_beneath refused a file, in words; NULL: a plain failure. */
static const char *refusal(int rc, const struct stat *st)
{
	switch (rc) {
	case -ELOOP:
		return "a symbolic link on the way or at the end (not followed)";
	case -EXDEV:
		return "outside the root";
	case -ENOTDIR:
		return "a directory on the way is not a directory any more";
	case -EREMOTEIO:
		return "on a filesystem of kernel interfaces (proc, sys, ...): not read";
	case -EINVAL:
		return S_ISDIR(st->st_mode)  ? "now a directory" :
		       S_ISFIFO(st->st_mode) ? "now a FIFO (not opened)" :
		       S_ISSOCK(st->st_mode) ? "now a socket (not opened)" :
		       S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode) ? "now a device (not opened)" :
							       "no longer a regular file";
	}
	return NULL;
}

/*
 * Why the file is to be skipped, or NULL; *ret_modified: its size or mtime
 * changed since the snapshot. `same_place`: the paths resolve under the
 * root the snapshot was taken in.
 *
 * The same file is the same inode number with every identity both sides
 * know (generation, birth time) equal, and at least one of them known. It
 * is restored however it was modified in place (a database rewrites its
 * tables, catalogs and control file at every checkpoint). The filesystem
 * is told by its f_fsid where both sides have one (st_dev changes across
 * reboots: anonymous devices of tmpfs, overlayfs and btrfs, renumbered
 * disks), else by st_dev; a file proven the same is the same even where
 * st_dev changed. On the snapshot's filesystem under its own root, a file
 * not the same was replaced. Where neither generation nor birth time is
 * known, a new file that reused the inode number looks the same, so size
 * and mtime decide, as they do for a copy (--root elsewhere, another
 * filesystem: cp -a and rsync -a keep them). --strict: size and mtime
 * decide always, and on the same filesystem the identity too.
 */
static const char *judge(const struct item *it, int fd, const struct stat *st, bool same_place,
			 bool strict, bool *ret_modified)
{
	struct pc_profile_file now = { 0 };
	bool modified, same_fs, gen_differs, btime_differs, proven;
	unsigned both;

	modified = (uint64_t)st->st_size != it->f.size || st->st_mtim.tv_sec != it->f.mtime_s ||
		   (uint32_t)st->st_mtim.tv_nsec != it->f.mtime_ns;
	*ret_modified = modified;
	pc_profile_identify(fd, &now);
	both = it->f.ident & now.ident;
	same_fs = both & PC_IDENT_FSID ? now.fsid == it->f.fsid : (uint64_t)st->st_dev == it->f.dev;
	gen_differs = (both & PC_IDENT_GEN) && now.gen != it->f.gen;
	btime_differs = (both & PC_IDENT_BTIME) &&
			(now.btime_s != it->f.btime_s || now.btime_ns != it->f.btime_ns);
	proven = (uint64_t)st->st_ino == it->f.ino && (both & (PC_IDENT_GEN | PC_IDENT_BTIME)) &&
		 !gen_differs && !btime_differs;

	if (strict && modified)
		return "modified since the snapshot (mtime/size)";
	if (!strict && proven)
		return NULL;
	if (same_place && same_fs) {
		if ((uint64_t)st->st_ino != it->f.ino)
			return "replaced (new inode)";
		if (gen_differs)
			return "replaced (new generation)";
		if (btime_differs)
			return "replaced (new birth time)";
		if (modified)
			return "modified since the snapshot (mtime/size; no generation or birth time "
			       "tells it from a new file)";
		return NULL;
	}
	return modified ? "modified since the snapshot (mtime/size)" : NULL;
}

/* Keep the parts of runs (pairs, ascending) that lie in the first `pages`. */
static void clip_runs(uint64_t *runs, size_t *n, uint64_t pages)
{
	size_t k = 0;

	while (k < *n && runs[2 * k] < pages) {
		if (runs[2 * k] + runs[2 * k + 1] > pages)
			runs[2 * k + 1] = pages - runs[2 * k];
		k++;
	}
	*n = k;
}

/*
 * Open a checked file again, beneath the root; it must be the very inode
 * that was checked (-ESTALE otherwise: replaced while we worked).
 */
static int reopen(int rootfd, const struct item *it, struct stat *st)
{
	int fd = pc_open_beneath(rootfd, it->f.path, O_NOATIME, st);

	if (fd >= 0 && ((uint64_t)st->st_dev != it->dev || (uint64_t)st->st_ino != it->ino)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

/*
 * A file could not be opened (err from pc_open_beneath or reopen; st as
 * they filled it): say why, and count it. `missing`: the words for ENOENT.
 */
static void open_failed(const char *root, const struct item *it, int err, const struct stat *st,
			const char *missing, uint64_t *nchanged, uint64_t *nmissing)
{
	char show[8192];
	const char *why = err == -ESTALE ? "replaced while restoring" : refusal(err, st);

	shown(root, it, show, sizeof(show));
	if (err == -ENOENT) {
		(*nmissing)++;
		skip_row(show, missing);
	} else if (why) {
		(*nchanged)++;
		skip_row(show, why);
	} else {
		cli_fail(show, -err, "cannot open");
	}
}

/*
 * Read the active runs twice: the second read activates the pages. They
 * lie inside the cached runs (the reader checks), which the warmer has
 * just read, but what was reclaimed since is read again: that counts
 * against the budget like any read, and a refusal stops here.
 */
static void reactivate(int rootfd, const struct item *it, uint64_t ps, char *buf, size_t buflen,
		       struct pc_budget *budget)
{
	struct stat st;
	int fd = reopen(rootfd, it, &st);

	if (fd < 0)
		return;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < it->f.nactive && !budget->stopped; i++) {
			uint64_t off = it->f.active[2 * i] * ps, end = off + it->f.active[2 * i + 1] * ps;
			struct pc_residency r;

			if (pc_fd_residency(fd, (uint64_t)st.st_size, off, end - off, &r) < 0 ||
			    r.source == PC_SRC_NONE)
				r.pages = (end - off) / ps, r.cached = 0;
			if (r.pages > r.cached && !pc_budget_take(budget, (r.pages - r.cached) * ps))
				break;
			while (off < end) {
				size_t n = end - off < buflen ? (size_t)(end - off) : buflen;
				long got = pc_sys_pread(fd, buf, n, off);

				if (got <= 0)
					break;
				off += (uint64_t)got;
			}
		}
	close(fd);
}

/*
 * The plan: what is handed to the warmer, in order, as pieces (runs of
 * one file, ascending). --order disk and file: one piece a file, its
 * runs, in the files' order. --order access: first the used ranges a
 * recording saw, by the time each was first used (ties: the snapshot's
 * file order, then the page), a file's consecutive ranges merged into
 * one piece while they ascend; then each file's other pages, the files
 * in disk order. With --max-time, no piece is more than PIECE_MAX pages,
 * so the clock is looked at every few MiB however large a file.
 */
#define PIECE_MAX 2048u

struct piece {
	struct item *it;
	uint64_t *runs;			/* pairs, ascending */
	size_t nruns;
	uint64_t pages;
};

struct plan {
	struct piece *v;
	size_t n, cap;
	uint64_t piece_max;		/* pages a piece at most; 0: no limit */
};

static void plan_free(struct plan *pl)
{
	for (size_t i = 0; i < pl->n; i++)
		free(pl->v[i].runs);
	free(pl->v);
	memset(pl, 0, sizeof(*pl));
}

/* Append pages [first, first+count) of it: to the last piece where they follow on, else a new one. */
static int plan_add(struct plan *pl, struct item *it, uint64_t first, uint64_t count)
{
	while (count) {
		struct piece *pc = pl->n ? &pl->v[pl->n - 1] : NULL;
		uint64_t take = count, end;

		if (pc && pc->it == it && pc->nruns &&
		    first >= (end = pc->runs[2 * (pc->nruns - 1)] + pc->runs[2 * (pc->nruns - 1) + 1]) &&
		    (!pl->piece_max || pc->pages < pl->piece_max)) {
			uint64_t *nr;

			if (pl->piece_max && take > pl->piece_max - pc->pages)
				take = pl->piece_max - pc->pages;
			if (first == end) {
				pc->runs[2 * (pc->nruns - 1) + 1] += take;
			} else {
				nr = realloc(pc->runs, (pc->nruns + 1) * 2 * sizeof(*nr));
				if (!nr)
					return -ENOMEM;
				pc->runs = nr;
				pc->runs[2 * pc->nruns] = first;
				pc->runs[2 * pc->nruns + 1] = take;
				pc->nruns++;
			}
		} else {
			if (cli_grow(&pl->v, &pl->cap, pl->n, sizeof(*pl->v)) < 0)
				return -ENOMEM;
			if (pl->piece_max && take > pl->piece_max)
				take = pl->piece_max;
			pc = &pl->v[pl->n];
			memset(pc, 0, sizeof(*pc));
			pc->runs = malloc(2 * sizeof(*pc->runs));
			if (!pc->runs)
				return -ENOMEM;
			pc->it = it;
			pc->runs[0] = first;
			pc->runs[1] = take;
			pc->nruns = 1;
			if (!it->npieces++)
				it->first_piece = pl->n;
			pl->n++;
		}
		pc->pages += take;
		first += take;
		count -= take;
	}
	return 0;
}

/*
 * The used triples (first, count, ms) of a file in the snapshot's pages,
 * as ours: widened to whole pages, those that then overlap merged (the
 * earlier time kept), clipped to the file's pages now. In place.
 */
static void used_to_pages(struct pc_profile_file *f, uint64_t snap_ps, uint64_t ps, uint64_t pages_now)
{
	size_t m = 0;

	for (size_t k = 0; k < f->nused; k++) {
		uint64_t a = f->used[3 * k] * snap_ps / ps, ms = f->used[3 * k + 2];
		uint64_t b = ((f->used[3 * k] + f->used[3 * k + 1]) * snap_ps + ps - 1) / ps;

		if (b > pages_now)
			b = pages_now;
		if (m && a < f->used[3 * (m - 1)] + f->used[3 * (m - 1) + 1])
			a = f->used[3 * (m - 1)] + f->used[3 * (m - 1) + 1];
		if (m && a == f->used[3 * (m - 1)] + f->used[3 * (m - 1) + 1] &&
		    snap_ps != ps && b > a && f->used[3 * (m - 1) + 2] > ms)
			f->used[3 * (m - 1) + 2] = ms;	/* a shared page: the earlier time */
		if (a >= b)
			continue;
		f->used[3 * m] = a;
		f->used[3 * m + 1] = b - a;
		f->used[3 * m + 2] = ms;
		m++;
	}
	f->nused = m;
}

struct use {
	uint64_t ms, first, count;
	struct item *it;
};

static int by_use(const void *a, const void *b)
{
	const struct use *x = a, *y = b;

	if (x->ms != y->ms)
		return x->ms < y->ms ? -1 : 1;
	if (x->it->order != y->it->order)
		return x->it->order < y->it->order ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * The plan for the files to read (order: as --order disk or file put
 * them). access: the used ranges first, by time; then the rest.
 */
static int plan_build(struct plan *pl, struct item **order, size_t n, bool access)
{
	struct use *u = NULL;
	size_t nu = 0, ucap = 0;
	int rc = 0;

	if (access) {
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; k < order[i]->f.nused; k++) {
				if (cli_grow(&u, &ucap, nu, sizeof(*u)) < 0) {
					free(u);
					return -ENOMEM;
				}
				u[nu++] = (struct use){ order[i]->f.used[3 * k + 2], order[i]->f.used[3 * k],
							order[i]->f.used[3 * k + 1], order[i] };
			}
		if (nu)
			qsort(u, nu, sizeof(*u), by_use);
		for (size_t i = 0; i < nu && rc == 0; i++)
			rc = plan_add(pl, u[i].it, u[i].first, u[i].count);
		free(u);
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct item *it = order[i];
		size_t k = 0;

		for (size_t r = 0; r < it->f.nruns && rc == 0; r++) {
			uint64_t a = it->f.runs[2 * r], e = a + it->f.runs[2 * r + 1];

			/* the run less the used ranges (both ascending) */
			while (access && k < it->f.nused && a < e) {
				uint64_t us = it->f.used[3 * k], ue = us + it->f.used[3 * k + 1];

				if (ue <= a) {
					k++;
					continue;
				}
				if (us >= e)
					break;
				if (us > a && (rc = plan_add(pl, it, a, us - a)) < 0)
					break;
				a = ue < e ? ue : e;
				if (ue <= e)
					k++;
			}
			if (rc == 0 && a < e)
				rc = plan_add(pl, it, a, e - a);
		}
		if (rc == 0 && !it->npieces) {
			/* nothing to read (all past its end now): still a file restored, as before */
			if (cli_grow(&pl->v, &pl->cap, pl->n, sizeof(*pl->v)) < 0)
				return -ENOMEM;
			pl->v[pl->n] = (struct piece){ .it = it };
			it->first_piece = pl->n++;
			it->npieces = 1;
		}
	}
	return rc;
}

/* The file a warmer result is for: the k-th handed out, as a rule; else by its path. */
static struct item *result_item(const char *root, struct item **sent, size_t nsent, size_t k,
				const char *path)
{
	char show[8192];

	if (k < nsent && !strcmp(shown(root, sent[k], show, sizeof(show)), path))
		return sent[k];
	for (size_t i = 0; i < nsent; i++)
		if (!strcmp(shown(root, sent[i], show, sizeof(show)), path))
			return sent[i];
	return NULL;
}

/* --order access's column: when the file was first used, in ms of the recording; null if never */
static void first_use(struct orec *rec, const struct item *it)
{
	if (it->f.nused)
		orec_u64(rec, "first_use_ms", pc_profile_first_use(&it->f), 0);
	else
		orec_null(rec, "first_use_ms");
}

int cmd_restore(int argc, char **argv)
{
	struct cli_parser p;
	struct cli_opts co = { OUT_HUMAN };
	const char *rootarg = NULL, *cgroup = NULL, *snap;
	bool allow = false, strict = false, by_file = false, idle = false, dry = false, list = false, quiet = false;
	bool by_access = false, time_stopped = false, have_times = false;
	double max_time = -1, deadline = 0;
	struct plan plan = { 0 };
	uint64_t nnot_done = 0, pages_not_done = 0;
	struct pc_progress progress = { 0 };
	struct cli_progress *prog = NULL;
	struct cli_budget bo = CLI_BUDGET_INIT;
	uint64_t ps = pc_page_size();
	uint64_t wanted = 0, cached_before = 0, read = 0, resident = 0, nchanged = 0, nmissing = 0;
	uint64_t nmodified = 0, total = 0;
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	struct item *items = NULL, **order = NULL;
	size_t n = 0, cap = 0, nwarm = 0, nlisted = 0;
	int rootfd = -1;
	struct pc_budget budget = { 0 };
	struct pc_warmer *w = NULL;
	struct orec rec = { 0 };
	char err[256], root[4096] = "/", cgdir[4096], why[1024];
	bool same_place = true, budget_ready = false;
	struct meta_set ms = { 0 };
	size_t ndone = 0;
	double t0 = pc_now();
	int opt, rc, snap_ps;

	cli_parser_init(&p, &restore_spec, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case 'R':
			rootarg = p.arg;
			break;
		case 'A':
			allow = true;
			break;
		case 'X':
			strict = true;
			break;
		case 'O':
			by_file = by_access = false;
			if (!strcmp(p.arg, "file"))
				by_file = true;
			else if (!strcmp(p.arg, "access"))
				by_access = true;
			else if (strcmp(p.arg, "disk"))
				return cli_usage_error("unknown order '%s' (disk, file or access)", p.arg);
			break;
		case OPT_MAX_TIME:
			if (cli_parse_decimal(p.arg, 0, 1e9, CLI_BELOW_HI, &max_time) < 0)
				return cli_usage_error("--max-time '%s': seconds, 0 or more (0.5 is half "
						       "a second)", p.arg);
			break;
		case 'G':
			cgroup = p.arg;
			break;
		case 'M': case 'S': case 'T':
			if (cli_budget_opt(&bo, opt, p.arg) < 0)
				return EXIT_USAGE;
			break;
		case 'I':
			idle = true;
			break;
		case 'D':
			dry = true;
			break;
		case 'E':
			ms.skip = true;
			break;
		case 'v':
			list = true;
			break;
		case 'q':
			quiet = true;
			break;
		default:
			if (cli_format_opt(&co, opt, argv) < 0)
				return EXIT_USAGE;
			break;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	warn_all = list;
	list = list || co.prom_per_file;
	out_init(co.fmt, co.bytes, co.noheadings);
	out_set_raw(co.raw);
	out_prom_metrics("restore", metrics, sizeof(metrics) / sizeof(metrics[0]));
	out_list_declare("files");
	out_list_declare("skipped");
	out_list_declare("errors");
	if (list) {	/* before the rows: they are written as they come */
		static const struct ocol wcols[] = {
			{ "pages", "PAGES", false }, { "read", "READ", false },
			{ "resident", "RESIDENT", false }, { "status", "STATUS", true },
			{ "path", "FILE", true }, { "first_use_ms", "FIRST USE MS", false },
		}, dcols[] = {
			{ "pages", "PAGES", false }, { "cached", "CACHED", false },
			{ "to_read", "TO READ", false }, { "runs", "RUNS", false },
			{ "path", "FILE", true }, { "first_use_ms", "FIRST USE MS", false },
		};
		/* --order access: when each file was first used, after the path */
		if (dry)
			out_columns("files", dcols, by_access ? 6 : 5);
		else
			out_columns("files", wcols, by_access ? 6 : 5);
	}
	if (argc - optind != 1)
		return cli_usage_error("want one SNAPSHOT");
	if (strict && allow)
		return cli_usage_error("--strict and --allow-changed contradict each other");
	snap = argv[optind];

	if (cgroup && !dry) {
		pid_t pid;
		int st;

		/*
		 * A child joins and reads; the pages are charged to the cgroup.
		 * SIGCHLD inherited as ignored would reap it before we wait and
		 * lose its status: back to the default first.
		 */
		signal(SIGCHLD, SIG_DFL);
		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			cli_warn("cannot fork: %s", strerror(errno));
			return EXIT_PARTIAL;
		}
		if (pid > 0) {
			while (waitpid(pid, &st, 0) < 0)
				if (errno != EINTR) {
					cli_warn("cannot wait for the reader: %s", strerror(errno));
					return EXIT_PARTIAL;
				}
			return WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_PARTIAL;
		}
		rc = pc_cgroup_resolve(cgroup, cgdir, sizeof(cgdir), why, sizeof(why));
		if (rc < 0) {
			cli_fail_msg(cgroup, "cannot join memory cgroup", why);
			goto report;	/* the same JSON shape on every path */
		}
		rc = pc_cgroup_enter(cgdir, getpid());
		if (rc < 0) {
			cli_fail(cgdir, -rc, "cannot join memory cgroup");
			goto report;
		}
	} else if (cgroup) {
		/* a dry run reads nothing, but the cgroup must still exist */
		rc = pc_cgroup_resolve(cgroup, cgdir, sizeof(cgdir), why, sizeof(why));
		if (rc < 0) {
			cli_fail_msg(cgroup, "cannot use memory cgroup", why);
			goto report;
		}
	}

	rc = pc_profile_open(snap, &r, err, sizeof(err));
	if (rc < 0) {
		cli_fail_msg(snap, "cannot read snapshot", err);
		goto report;
	}
	snap_ps = (int)pc_profile_get_meta(r)->page_size;
	/* the whole snapshot first: nothing is opened from one that is not whole */
	while ((rc = pc_profile_next(r, &f)) > 0) {
		struct item *it;

		if (meta_take(&ms, &f, snap_ps))	/* a block device's record, not a file */
			continue;
		if (cli_grow(&items, &cap, n, sizeof(*items)) < 0) {
			pc_profile_file_release(&f);
			rc = -ENOMEM;
			break;
		}
		it = &items[n];
		memset(it, 0, sizeof(*it));
		it->f = f;
		it->order = n++;
		if (snap_ps != (int)ps) {
			/* runs are in the snapshot's pages: widen to ours, merging overlaps */
			size_t m = 0;

			for (size_t k = 0; k < f.nruns; k++) {
				uint64_t a = f.runs[2 * k] * (uint64_t)snap_ps / ps;
				uint64_t b = ((f.runs[2 * k] + f.runs[2 * k + 1]) * (uint64_t)snap_ps + ps - 1) / ps;

				if (m && a <= f.runs[2 * (m - 1)] + f.runs[2 * (m - 1) + 1]) {
					uint64_t s = f.runs[2 * (m - 1)];

					if (b > s + f.runs[2 * (m - 1) + 1])
						f.runs[2 * (m - 1) + 1] = b - s;
					continue;
				}
				f.runs[2 * m] = a;
				f.runs[2 * m + 1] = b - a;
				m++;
			}
			it->f.nruns = f.nruns = m;
			it->f.nactive = 0;
		}
		for (size_t k = 0; k < f.nruns; k++)
			it->pages += f.runs[2 * k + 1];
	}
	if (rc < 0) {
		/* nothing is done from a snapshot that is not whole */
		cli_fail_msg(snap, "corrupt snapshot", rc == -EBADMSG ? pc_profile_error(r)
								       : strerror(-rc));
		pc_profile_close(r);
		goto report;
	}

	/*
	 * The root: the user's, or "/"; a snapshot taken beneath another
	 * root names it, but only the user may say to restore there.
	 */
	{
		const char *recorded = pc_profile_get_meta(r)->root;
		char *a, *b;

		if (!rootarg && strcmp(recorded, "/")) {
			char why[8800];

			snprintf(why, sizeof(why), "its paths are relative to '%s' on %s; say where "
				 "to restore them with --root (--root '%s' for the same place)",
				 recorded, pc_profile_get_meta(r)->host, recorded);
			cli_fail_msg(snap, "cannot restore", why);
			pc_profile_close(r);
			goto report;
		}
		snprintf(root, sizeof(root), "%s", rootarg ? rootarg : "/");
		a = cli_abspath(root);
		b = cli_abspath(recorded);
		same_place = a && b && !strcmp(a, b);
		free(a);
		free(b);
	}
	pc_profile_close(r);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		cli_fail(root, errno, "cannot open the root");
		goto report;
	}

	/* metadata first: the files' lookups below then find it cached */
	if (ms.n && !dry && !ms.skip) {
		if (idle)	/* IOPRIO_CLASS_IDLE for this process */
			syscall(SYS_ioprio_set, 1, 0, 3 << 13);
		budget_ready = pc_budget_init(&budget, bo.max_mem, bo.reserve) == 0;
		budget.rate = bo.rate;
	}
	meta_restore(&ms, rootfd, same_place, budget_ready || dry ? &budget : NULL, dry);

	for (size_t i = 0; i < n; i++)
		have_times |= items[i].f.nused != 0;
	/* check each file: one open, beneath the root, closed again */
	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];
		const char *why;
		char show[8192];
		struct stat st;
		uint64_t pages_now;
		int fd = pc_open_beneath(rootfd, it->f.path, O_NOATIME, &st);

		if (fd < 0) {
			open_failed(root, it, fd, &st, "missing", &nchanged, &nmissing);
			continue;
		}
		why = judge(it, fd, &st, same_place, strict, &it->modified);
		/* --allow-changed warms changed regular files; it lifts no other rule */
		if (why && !allow) {
			nchanged++;
			skip_row(shown(root, it, show, sizeof(show)), why);
			close(fd);
			continue;
		}
		it->ok = true;
		it->dev = st.st_dev;
		it->ino = st.st_ino;
		/* the plan: recorded pages that lie in the file as it is now */
		pages_now = ((uint64_t)st.st_size + ps - 1) / ps;
		clip_runs(it->f.runs, &it->f.nruns, pages_now);
		clip_runs(it->f.active, &it->f.nactive, pages_now);
		it->pages = 0;
		for (size_t k = 0; k < it->f.nruns; k++)
			it->pages += it->f.runs[2 * k + 1];
		if (by_access) {
			used_to_pages(&it->f, (uint64_t)snap_ps, ps, pages_now);
		} else {
			free(it->f.used);	/* times matter to --order access only */
			it->f.used = NULL;
			it->f.nused = 0;
		}
		nmodified += it->modified;
		wanted += it->pages;
		if (!by_file && it->f.nruns)
			it->disk = first_physical(fd, it->f.runs[0] * ps);
		close(fd);
	}

	order = calloc(n ? n : 1, sizeof(*order));
	for (size_t i = 0; i < n && order; i++)
		if (items[i].ok)
			order[nwarm++] = &items[i];
	if (!by_file && order)
		qsort(order, nwarm, sizeof(*order), by_disk);
	if (by_access && !have_times) {
		cli_warn("'%s' has no access times (it was not made by pagecache record): disk order",
			 snap);
		by_access = false;
	}
	plan.piece_max = max_time >= 0 && !dry ? PIECE_MAX : 0;
	if (order && plan_build(&plan, order, nwarm, by_access) < 0) {
		cli_fail(snap, ENOMEM, "cannot plan the reads of");
		nwarm = 0;
	}

	if (dry) {
		for (size_t i = 0; i < plan.n; i++) {
			struct item *it = plan.v[i].it;
			uint64_t cached = 0;
			char show[8192];
			struct stat st;
			int fd;

			if (it->listed)	/* files in the order of their first read */
				continue;
			it->listed = true;
			fd = reopen(rootfd, it, &st);

			if (fd < 0) {
				open_failed(root, it, fd, &st, "missing (removed while restoring)", &nchanged,
					    &nmissing);
				continue;
			}
			for (size_t k = 0; k < it->f.nruns; k++) {
				struct pc_residency res;

				if (pc_fd_residency(fd, (uint64_t)st.st_size, it->f.runs[2 * k] * ps,
						    it->f.runs[2 * k + 1] * ps, &res) == 0 &&
				    res.source != PC_SRC_NONE)
					cached += res.cached;
			}
			close(fd);
			cached_before += cached;
			orec_str(&rec, "path", shown(root, it, show, sizeof(show)), OF_LABEL);
			orec_u64(&rec, "pages", it->pages, OF_PAGES);
			orec_u64(&rec, "cached", cached, OF_PAGES);
			orec_u64(&rec, "to_read", it->pages - cached, OF_PAGES);
			orec_u64(&rec, "runs", it->f.nruns, 0);
			if (by_access)
				first_use(&rec, it);
			out_list_add("files", &rec);
			nlisted++;
		}
		list = true;
	} else if (nwarm) {
		struct pc_warm_opts wo = { .budget = &budget, .progress = &progress };
		char *buf = malloc(1 << 20);
		struct item **sent = calloc(plan.n ? plan.n : 1, sizeof(*sent));
		size_t nsent = 0;

		if (max_time >= 0)
			deadline = t0 + max_time;

		if (idle)	/* IOPRIO_CLASS_IDLE for this process */
			syscall(SYS_ioprio_set, 1, 0, 3 << 13);
		rc = budget_ready ? 0 : pc_budget_init(&budget, bo.max_mem, bo.reserve);
		budget.rate = bo.rate;
		if (rc == 0)
			rc = pc_warmer_new(&wo, &w);
		if (rc == 0 && !sent)
			rc = -ENOMEM;
		if (rc < 0)	/* nothing is read: a failure, not a warning */
			cli_fail(snap, -rc, "cannot start reading for");
		if (!quiet && co.fmt == OUT_HUMAN)
			{
			/* the plan's bytes: the files about to be read, known before */
			total = 0;
			for (size_t i = 0; i < nwarm; i++)
				total += order[i]->pages * ps;
			prog = cli_progress_start(&progress, "restoring", &total);
		}
		for (size_t i = 0; i < plan.n && rc == 0; i++) {
			struct piece *pc = &plan.v[i];
			struct item *it = pc->it;
			char show[8192];
			struct stat st;
			int fd;

			if (!it->ok)	/* a piece before this one found it gone */
				continue;
			if (deadline && pc_now() >= deadline) {
				time_stopped = true;	/* what is in flight finishes below */
				break;
			}
			fd = reopen(rootfd, it, &st);
			if (fd == -EMFILE || fd == -ENFILE) {
				/* out of fds: let the files in flight finish, then again */
				pc_warmer_drain(w);
				fd = reopen(rootfd, it, &st);
			}
			if (fd < 0) {
				it->ok = false;
				open_failed(root, it, fd, &st, "missing (removed while restoring)", &nchanged,
					    &nmissing);
				continue;
			}
			rc = pc_warmer_add_runs(w, fd, shown(root, it, show, sizeof(show)), &st,
						pc->runs, pc->nruns);
			if (rc == -ENOSPC)
				break;
			if (rc < 0) {
				it->ok = false;
				cli_fail(show, -rc, "cannot restore");
			} else {
				sent[nsent++] = it;	/* its result comes back in this order */
				it->nsent++;
				it->sent_pages += pc->pages;
			}
			rc = 0;
		}
		if (w)
			pc_warmer_drain(w);
		cli_progress_stop(prog);
		for (size_t k = 0; w; k++) {
			struct pc_warm_result res;
			struct item *it;

			if (!pc_warmer_next_result(w, &res))
				break;
			it = result_item(root, sent, nsent, k, res.path);
			resident += res.resident;
			if (!res.err)
				read += res.read;
			cached_before += res.pages - res.read;
			if (res.err == ESTALE)
				cli_fail_msg(res.path, "cannot restore", "the file shrank while it was read");
			else if (res.err)
				cli_fail(res.path, res.err, "cannot restore");
			if (it) {
				it->r_pages += res.pages;
				it->r_read += res.read;
				it->r_resident += res.resident;
				if (res.err && !it->r_err)
					it->r_err = res.err;
			}
		}
		/* a row a file, in the order of its first read; what was not reached, counted */
		for (size_t i = 0; i < plan.n; i++) {
			struct item *it = plan.v[i].it;
			bool whole = it->nsent == it->npieces;
			char show[8192];

			if (it->listed || (!it->ok && !it->nsent))
				continue;
			it->listed = true;
			if (whole && !it->r_err)
				ndone++;
			if (!whole) {
				nnot_done++;
				pages_not_done += it->pages - it->sent_pages;
			}
			if (list) {
				orec_str(&rec, "path", shown(root, it, show, sizeof(show)), OF_LABEL);
				orec_u64(&rec, "pages", whole ? it->r_pages : it->pages, OF_PAGES);
				orec_u64(&rec, "read", it->r_read, OF_PAGES);
				orec_u64(&rec, "resident", it->r_resident, OF_PAGES);
				orec_str(&rec, "status", it->r_err ? strerror(it->r_err) :
							 whole ? "ok" : it->nsent ? "partly" : "not reached", 0);
				if (by_access)
					first_use(&rec, it);
				out_list_add("files", &rec);
			}
		}
		/* active pages again: not past --max-time, and only of files read whole */
		for (size_t i = 0; i < nwarm && buf && !budget.stopped && !time_stopped; i++) {
			if (deadline && pc_now() >= deadline)
				break;
			if (order[i]->ok && order[i]->f.nactive && order[i]->nsent == order[i]->npieces)
				reactivate(rootfd, order[i], ps, buf, 1 << 20, &budget);
		}
		free(buf);
		free(sent);
		pc_warmer_free(w);
		if (budget.stopped)
			cli_warn("stopped early: %s; %llu of %llu pages restored",
				 pc_budget_reason(budget.stopped), (unsigned long long)resident,
				 (unsigned long long)wanted);
	}
report:
	if (nskipped > SKIP_WARN && !warn_all)
		cli_warn("and %llu more files skipped (-v names every one; --json lists them)",
			 (unsigned long long)(nskipped - SKIP_WARN));
	if (rootfd >= 0)
		close(rootfd);
	for (size_t i = 0; i < n; i++)
		pc_profile_file_release(&items[i].f);
	free(items);
	free(order);
	plan_free(&plan);

	orec_str(&rec, "snapshot", snap, 0);
	orec_str(&rec, "root", root, 0);
	orec_bool(&rec, "dry_run", dry);
	orec_u64(&rec, "files", dry ? nlisted : ndone, 0);
	orec_u64(&rec, "pages", wanted, OF_PAGES);
	orec_u64(&rec, "cached_before", cached_before, OF_PAGES);
	orec_u64(&rec, "read", dry ? 0 : read, OF_PAGES);
	orec_u64(&rec, "read_bytes", dry ? 0 : read * ps, OF_BYTES);
	orec_u64(&rec, "resident", dry ? cached_before : resident, OF_PAGES);
	orec_u64(&rec, "changed", nchanged, 0);
	orec_u64(&rec, "modified", nmodified, 0);
	orec_u64(&rec, "missing", nmissing, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_bool(&rec, "budget_stopped", budget.stopped != 0);
	meta_report(&ms, &rec, true);
	orec_str(&rec, "order", by_access ? "access" : by_file ? "file" : "disk", 0);
	if (max_time >= 0)
		orec_f64(&rec, "max_time", max_time);
	else
		orec_null(&rec, "max_time");
	orec_bool(&rec, "time_stopped", time_stopped);
	orec_u64(&rec, "files_not_done", nnot_done, 0);
	orec_u64(&rec, "pages_not_done", pages_not_done, OF_PAGES);
	orec_f64(&rec, "elapsed", pc_now() - t0);
	out_object("total", &rec);
	if (co.fmt == OUT_HUMAN) {
		char a[32];

		if (list)
			out_human_line("%s", "");
		out_human_line("%s %zu files beneath '%s': %llu pages wanted, %llu already cached, "
			       "%llu %s (%s), %llu changed, %llu missing, %.3g s",
			       dry ? "Would restore" : "Restored", dry ? nlisted : ndone, root,
			       (unsigned long long)wanted,
			       (unsigned long long)cached_before,
			       (unsigned long long)(dry ? wanted - cached_before : read),
			       dry ? "to read" : "read",
			       fmt_size((dry ? wanted - cached_before : read) * ps, a, sizeof(a)),
			       (unsigned long long)nchanged, (unsigned long long)nmissing,
			       pc_now() - t0);
		meta_human(&ms, true, dry);
		if (nmodified)
			out_human_line("%llu of them modified in place since the snapshot: their "
				       "recorded pages inside their size %s",
				       (unsigned long long)nmodified, dry ? "would be read" : "were read");
		if (time_stopped)
			out_human_line("Stopped at --max-time %g s: %llu of %llu pages handed out (and read); "
				       "%llu files (%llu pages) not done%s",
				       max_time, (unsigned long long)(wanted - pages_not_done),
				       (unsigned long long)wanted, (unsigned long long)nnot_done,
				       (unsigned long long)pages_not_done,
				       by_access && wanted > pages_not_done ? "; those were the first used" : "");
	}
	pc_budget_release(&budget);
	meta_release(&ms);
	rc = out_flush();
	if (cgroup && !dry)
		_exit(rc < 0 || cli_failures() || nchanged || nmissing || budget.stopped ? EXIT_PARTIAL : 0);
	return rc < 0 || cli_failures() || nchanged || nmissing || budget.stopped ? EXIT_PARTIAL : 0;
}
