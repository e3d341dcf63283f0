/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * restore.c: a snapshot's pages back into the page cache (pagecache.h,
 * "restore.c"); `pagecache restore` and the daemon's restore jobs are its
 * callers. A file that is still the snapshot's (the same inode,
 * generation or birth time) is restored even if it was modified in place
 * since, as databases do at every checkpoint, its runs clipped to its
 * size (format version 2 on records which of generation and birth time
 * are known, and f_fsid, which unlike st_dev survives a reboot; where
 * neither is known, and for copies under another root, size and mtime
 * decide); one replaced by another file, or no longer a regular file, is
 * skipped (its pages would be the wrong ones), and so is, with strict, any
 * file whose size or mtime changed; missing files are skipped, not fatal.
 * Files are read in the order of their place on disk (FIEMAP) unless told
 * otherwise, through the same verified, budgeted engine as warm
 * (prefetch.c), and by reading, never by touching a mapping. Pages that
 * were active are read twice, so the kernel activates them again.
 *
 * A snapshot is hostile input (copied between hosts, pulled from a
 * registry), and so is the tree it names: the whole snapshot is read
 * before anything is opened; every file is reached beneath the root with
 * pc_open_beneath (no "..", no symbolic link, never a FIFO or a device);
 * the root is the caller's or "/", never one the snapshot chose; fds are
 * held only while a file is checked or read (a reopen must find the same
 * inode), so a snapshot of more files than RLIMIT_NOFILE restores whole;
 * and every page read, the second read of active pages included, counts
 * against the budget.
 *
 * Block device records (snapshot --metadata: the filesystems' metadata)
 * are read first, through the device under the restored files'
 * filesystem (found from the root or a recorded file opened beneath it;
 * never the name the snapshot holds), so the files' lookups find their
 * metadata cached. A device that cannot be had is said (on_warn) and left
 * out: metadata never makes a restore fail. Where a filesystem's device
 * was not read (no record of it, refused, not found, failed), its
 * metadata comes back through the filesystem instead (fsmeta.c): the
 * recorded directories read and their entries statx()ed, in inode order,
 * beneath the root like the files.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

struct item {
	struct pc_profile_file f;	/* path relative to the root, runs */
	uint64_t dev, ino;		/* as checked: a reopen must find them */
	uint64_t disk;			/* physical byte of the first run, for disk order */
	uint64_t pages;			/* pages the snapshot wants */
	size_t order;			/* position in the snapshot (several: in the first
					   that has it, the arguments one after another) */
	size_t src;			/* the input its record is of (several snapshots) */
	bool ok;			/* checked: to be read */
	bool modified;			/* size or mtime changed since the snapshot */
	/* the plan (struct plan): pieces of it, those handed to the warmer, their results */
	size_t npieces, nsent, first_piece;
	uint64_t sent_pages, r_pages, r_read, r_resident;
	uint64_t r_cut;			/* pages the budget cut off its pieces */
	int r_err;
	bool listed;
};

/* a filesystem the snapshot's files were on, and one of its files */
struct meta_fs {
	uint64_t dev, fsid;		/* as recorded */
	char *path;			/* a file of it, relative to the root */
	bool dir;			/* a directory of it (no file of it recorded) */
};

/* the block device records, and what became of them; the directory records */
struct meta_set {
	struct pc_profile_file *recs;
	size_t *src;			/* each record's input (several snapshots) */
	size_t n, cap, srccap;
	bool *read_ok;			/* per record: its device was read */
	struct pc_profile_file *dirs;	/* PC_IDENT_DIR records */
	size_t ndirs, dircap;
	struct meta_fs *fs;
	size_t nfs, fscap;
	struct pc_meta_row *rows;
	size_t nrows, rowcap;
	uint64_t devices, pages, cached, read, unavailable;
};

/* one snapshot of several (pc_restore_open_many), as read */
struct input {
	char *path;
	char root[4096];		/* as recorded */
	bool same_place;		/* root is where we restore */
};

struct pc_restore {
	struct pc_restore_opts o;
	char *snapshot;			/* the first of them */
	struct input *in;
	struct pc_restore_input *inputs;	/* for the totals */
	size_t nin;
	struct item *items;
	size_t n, cap;
	struct meta_set ms;
	uint64_t ps;			/* our page size */
	int snap_ps;			/* the snapshot's (of the one being read) */
	bool same_place;		/* the root is the one the snapshots were taken in */
	bool ran;
	double t0;
	struct pc_restore_result t;
};

static void say_error(struct pc_restore *r, const char *path, const char *what, int err,
		      const char *why)
{
	if (r->o.on_error)
		r->o.on_error(r->o.arg, path, what, err, why);
	r->t.failures++;
}

static void say_skip(struct pc_restore *r, const char *path, enum pc_restore_skip kind,
		     const char *why)
{
	if (kind == PC_RESTORE_MISSING)
		r->t.missing++;
	else
		r->t.changed++;
	if (r->o.on_skip)
		r->o.on_skip(r->o.arg, path, kind, why);
}

__attribute__((format(printf, 2, 3)))
static void say_warn(struct pc_restore *r, const char *fmt, ...)
{
	char msg[8800];
	va_list ap;

	if (!r->o.on_warn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->o.on_warn(r->o.arg, msg);
}

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
 * Runs (pairs, ascending) in pages of snap_ps bytes, as pages of ps:
 * widened to whole pages, those that then overlap merged. In place.
 */
static void widen_runs(uint64_t *runs, size_t *n, uint64_t snap_ps, uint64_t ps)
{
	size_t m = 0;

	for (size_t k = 0; k < *n; k++) {
		uint64_t a = runs[2 * k] * snap_ps / ps;
		uint64_t b = ((runs[2 * k] + runs[2 * k + 1]) * snap_ps + ps - 1) / ps;

		if (m && a <= runs[2 * m - 2] + runs[2 * m - 1]) {
			if (b > runs[2 * m - 2] + runs[2 * m - 1])
				runs[2 * m - 1] = b - runs[2 * m - 2];
			continue;
		}
		runs[2 * m] = a;
		runs[2 * m + 1] = b - a;
		m++;
	}
	*n = m;
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
static void open_failed(struct pc_restore *r, const struct item *it, int err,
			const struct stat *st, const char *missing)
{
	char show[8192];
	const char *why = err == -ESTALE ? "replaced while restoring" : refusal(err, st);

	shown(r->t.root, it, show, sizeof(show));
	if (err == -ENOENT)
		say_skip(r, show, PC_RESTORE_MISSING, missing);
	else if (why)
		say_skip(r, show, PC_RESTORE_CHANGED, why);
	else
		say_error(r, show, "cannot open", -err, NULL);
}

/*
 * Read the active runs twice: the second read activates the pages. They
 * lie inside the cached runs (the reader checks), which the warmer has
 * just read, but what was reclaimed since is read again: that counts
 * against the budget like any read, and a refusal stops here. `cached_only`
 * (a plan by priority, which read the active pages first): once the budget
 * is spent, the ranges still wholly cached are read again, and only those.
 */
static void reactivate(int rootfd, const struct item *it, uint64_t ps, char *buf, size_t buflen,
		       struct pc_budget *budget, bool cached_only)
{
	struct stat st;
	int fd = reopen(rootfd, it, &st);

	if (fd < 0)
		return;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < it->f.nactive && (cached_only || !budget->stopped); i++) {
			uint64_t off = it->f.active[2 * i] * ps, end = off + it->f.active[2 * i + 1] * ps;
			struct pc_residency r;

			if (pc_fd_residency(fd, (uint64_t)st.st_size, off, end - off, &r) < 0 ||
			    r.source == PC_SRC_NONE)
				r.pages = (end - off) / ps, r.cached = 0;
			if (r.pages > r.cached && cached_only && budget->stopped)
				continue;	/* not read, or gone again: nothing more is read */
			if (r.pages > r.cached && !pc_budget_take(budget, (r.pages - r.cached) * ps)) {
				if (cached_only)
					continue;
				break;
			}
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
			if (pc_grow(&pl->v, &pl->cap, pl->n, sizeof(*pl->v)) < 0)
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
				if (pc_grow(&u, &ucap, nu, sizeof(*u)) < 0) {
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
			if (pc_grow(&pl->v, &pl->cap, pl->n, sizeof(*pl->v)) < 0)
				return -ENOMEM;
			pl->v[pl->n] = (struct piece){ .it = it };
			it->first_piece = pl->n++;
			it->npieces = 1;
		}
	}
	return rc;
}

/* A stretch of one file's pages, all of one worth, for the plan by priority. */
struct seg {
	struct item *it;
	uint64_t first, count;
	uint64_t ms;			/* first used, ms into the recording; UINT64_MAX: unknown */
	size_t rank;			/* the file's place in the order asked */
	bool active;
};

static int by_worth(const void *a, const void *b)
{
	const struct seg *x = a, *y = b;

	if (x->active != y->active)
		return x->active ? -1 : 1;
	if (x->ms != y->ms)
		return x->ms < y->ms ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* Cut run [a, e) of it where active and used ranges begin and end; each stretch a seg. */
static int split_run(struct seg **v, size_t *n, size_t *cap, struct item *it, size_t rank,
		     uint64_t a, uint64_t e, size_t *ka, size_t *ku, bool times)
{
	const struct pc_profile_file *f = &it->f;

	while (a < e) {
		uint64_t q = e, ms = UINT64_MAX;
		bool act = false;

		while (*ka < f->nactive && f->active[2 * *ka] + f->active[2 * *ka + 1] <= a)
			(*ka)++;
		while (times && *ku < f->nused && f->used[3 * *ku] + f->used[3 * *ku + 1] <= a)
			(*ku)++;
		if (*ka < f->nactive) {
			uint64_t s = f->active[2 * *ka], t = s + f->active[2 * *ka + 1];

			act = s <= a;
			q = act ? (t < q ? t : q) : (s < q ? s : q);
		}
		if (times && *ku < f->nused) {
			uint64_t s = f->used[3 * *ku], t = s + f->used[3 * *ku + 1];

			if (s <= a)
				ms = f->used[3 * *ku + 2];
			q = s <= a ? (t < q ? t : q) : (s < q ? s : q);
		}
		if (pc_grow(v, cap, *n, sizeof(**v)) < 0)
			return -ENOMEM;
		(*v)[(*n)++] = (struct seg){ it, a, q - a, ms, rank, act };
		a = q;
	}
	return 0;
}

/*
 * The plan when the budget cannot hold it all: the most valuable pages
 * first, across files. Active pages (the kernel had seen them used
 * twice), then the pages a recording saw used, by the time of first use
 * (`times`: not for --order file, which is the caller's order), then the
 * rest, each group in the order asked (disk or file), a file's pages
 * ascending. A file ends up in several pieces; the budget cuts the piece
 * where it runs out (prefetch.c).
 */
static int plan_build_priority(struct plan *pl, struct item **order, size_t n, bool times)
{
	struct seg *v = NULL;
	size_t nv = 0, cap = 0;
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		struct item *it = order[i];
		size_t ka = 0, ku = 0;

		for (size_t r = 0; r < it->f.nruns && rc == 0; r++)
			rc = split_run(&v, &nv, &cap, it, i, it->f.runs[2 * r],
				       it->f.runs[2 * r] + it->f.runs[2 * r + 1], &ka, &ku, times);
		if (rc == 0 && !it->f.nruns) {
			/* nothing to read: a file restored, first (it costs nothing) */
			if (pc_grow(&pl->v, &pl->cap, pl->n, sizeof(*pl->v)) < 0) {
				rc = -ENOMEM;
				break;
			}
			pl->v[pl->n] = (struct piece){ .it = it };
			it->first_piece = pl->n++;
			it->npieces = 1;
		}
	}
	if (rc == 0 && nv)
		qsort(v, nv, sizeof(*v), by_worth);
	for (size_t i = 0; i < nv && rc == 0; i++)
		rc = plan_add(pl, v[i].it, v[i].first, v[i].count);
	free(v);
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

int pc_meta_row_add(struct pc_meta_row **rows, size_t *n, size_t *cap, const char *name,
		    uint64_t dev, uint64_t size, uint64_t pages, const uint64_t *cached,
		    const uint64_t *read, const char *status)
{
	struct pc_meta_row *r;

	if (pc_grow(rows, cap, *n, sizeof(**rows)) < 0)
		return -ENOMEM;
	r = &(*rows)[(*n)++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->status, sizeof(r->status), "%s", status);
	r->dev = dev;
	r->size = size;
	r->pages = pages;
	r->has_cached = cached;
	r->cached = cached ? *cached : 0;
	r->has_read = read;
	r->read = read ? *read : 0;
	r->done = cached || !strcmp(status, "recorded");
	return 0;
}

/* A row of the restore's metadata list (none where memory is short). */
static void row(struct meta_set *ms, const char *name, uint64_t dev, uint64_t size,
		uint64_t pages, const uint64_t *cached, const uint64_t *read, const char *status)
{
	pc_meta_row_add(&ms->rows, &ms->nrows, &ms->rowcap, name, dev, size, pages, cached, read,
			status);
}

/*
 * Are two block device records (of two snapshots) of one device? By the
 * filesystem's id where both have it, else by the device number.
 */
static bool same_device(const struct pc_profile_file *a, const struct pc_profile_file *b)
{
	return a->ident & b->ident & PC_IDENT_FSID ? a->fsid == b->fsid : a->dev == b->dev;
}

/*
 * A record of input src: a block device's is kept aside (true); one of a
 * device an earlier input has a record of is united with it, one record a
 * device. A file's filesystem is noted, for finding the devices (false).
 */
static bool meta_take(struct meta_set *ms, struct pc_profile_file *f, int snap_ps, size_t src)
{
	uint64_t fsid = f->ident & PC_IDENT_FSID ? f->fsid : 0, ps = pc_page_size();
	char *path;

	if (f->ident & PC_IDENT_BDEV) {
		if (snap_ps != (int)ps)
			widen_runs(f->runs, &f->nruns, (uint64_t)snap_ps, ps);
		for (size_t k = 0; k < ms->n && src; k++)
			if (ms->src[k] < src && same_device(&ms->recs[k], f) &&
			    pc_profile_file_merge(&ms->recs[k], f) == 0) {
				if (f->size > ms->recs[k].size)	/* shown only: runs are clipped to it now */
					ms->recs[k].size = f->size;
				pc_profile_file_release(f);
				return true;
			}
		if (pc_grow(&ms->recs, &ms->cap, ms->n, sizeof(*ms->recs)) < 0 ||
		    pc_grow(&ms->src, &ms->srccap, ms->n, sizeof(*ms->src)) < 0) {
			pc_profile_file_release(f);	/* left out: said as unavailable */
			ms->unavailable++;
			return true;
		}
		ms->src[ms->n] = src;
		ms->recs[ms->n++] = *f;
		return true;
	}
	/*
	 * A filesystem's first file (or directory: a tree with nothing
	 * cached has only those) is how its device is found; the files come
	 * a directory at a time: the last filesystem first.
	 */
	for (size_t k = ms->nfs; k-- > 0;)
		if (ms->fs[k].dev == f->dev && ms->fs[k].fsid == fsid)
			goto taken;
	path = strdup(f->path);
	if (!path || pc_grow(&ms->fs, &ms->fscap, ms->nfs, sizeof(*ms->fs)) < 0)
		free(path);
	else
		ms->fs[ms->nfs++] = (struct meta_fs){ f->dev, fsid, path, f->ident & PC_IDENT_DIR };
taken:
	if (f->ident & PC_IDENT_DIR) {
		if (pc_grow(&ms->dirs, &ms->dircap, ms->ndirs, sizeof(*ms->dirs)) < 0)
			pc_profile_file_release(f);	/* one directory less to read */
		else
			ms->dirs[ms->ndirs++] = *f;
		return true;
	}
	return false;
}

/* The device under the filesystem a record was taken of, as it is mounted now; 0: none. */
static uint64_t find_dev(const struct meta_set *ms, const struct pc_profile_file *rec, int rootfd,
			 bool same_place)
{
	uint64_t dev, fsid;

	if (pc_fd_fs(rootfd, &dev, &fsid) == 0 && pc_bdev_matches(rec, dev, fsid, !same_place))
		return dev;
	/* a file the snapshot had on that filesystem, opened beneath the root as restore does */
	for (size_t k = 0; k < ms->nfs; k++) {
		struct stat st;
		bool ok;
		int fd;

		if (!pc_bdev_matches(rec, ms->fs[k].dev, ms->fs[k].fsid, false))
			continue;
		/* a directory reached (O_PATH), never opened: its filesystem is all we ask */
		if (ms->fs[k].dir)
			fd = pc_path_beneath(rootfd, ms->fs[k].path, &st);
		else
			fd = pc_open_beneath(rootfd, ms->fs[k].path, O_NOATIME, &st);
		if (fd >= 0 && ms->fs[k].dir && !S_ISDIR(st.st_mode)) {
			close(fd);
			continue;
		}
		if (fd < 0)
			continue;
		ok = pc_fd_fs(fd, &dev, &fsid) == 0 && pc_bdev_matches(rec, dev, fsid, !same_place);
		close(fd);
		if (ok)
			return dev;
	}
	return 0;
}

static void meta_restore(struct pc_restore *r, int rootfd, struct pc_budget *b, bool dry)
{
	struct meta_set *ms = &r->ms;
	bool same_place = r->same_place;

	if (!ms->n)
		return;
	if (r->o.no_metadata) {	/* asked for: nothing to say */
		ms->unavailable = ms->n;
		return;
	}
	if (!b) {		/* the budget could not be read: neither can the files be */
		ms->unavailable = ms->n;
		return;
	}
	if (!pc_bdev_allowed()) {
		say_warn(r, "metadata of %zu block device%s not restored: %s", ms->n,
			 ms->n == 1 ? "" : "s", PC_BDEV_NEEDS_ROOT);
		for (size_t i = 0; i < ms->n; i++)
			row(ms, ms->recs[i].path, ms->recs[i].dev, ms->recs[i].size, 0, NULL, NULL,
			    "needs root");
		ms->unavailable = ms->n;
		return;
	}
	ms->read_ok = calloc(ms->n, sizeof(*ms->read_ok));
	for (size_t i = 0; i < ms->n && !b->stopped; i++) {
		const struct pc_profile_file *rec = &ms->recs[i];
		struct pc_bdev_result res;
		uint64_t dev = find_dev(ms, rec, rootfd, same_place);
		bool again = false;
		int rc;

		/* one device, one read: a second record of it (a hostile snapshot) is left out */
		for (size_t k = 0; k < ms->nrows && dev; k++)
			again |= ms->rows[k].done && ms->rows[k].dev == dev;
		if (again) {
			row(ms, rec->path, dev, rec->size, 0, NULL, NULL, "another record of a device read");
			ms->unavailable++;
			continue;
		}
		rc = dev ? pc_bdev_restore(dev, rec, b, dry, &res) : -ENOENT;

		if (rc < 0) {
			char num[32], reason[256];

			snprintf(num, sizeof(num), "%u:%u", major(dev), minor(dev));
			if (!dev)
				snprintf(reason, sizeof(reason), "no file of its filesystem found beneath "
					 "the root%s", same_place ? "" : " (--root elsewhere: by "
					 "filesystem id only)");
			else
				snprintf(reason, sizeof(reason), "block device %s: %s", num, pc_bdev_strerror(-rc));
			/* the recorded name is only shown: it was never opened */
			say_warn(r, "metadata of '%s' not restored: %s", rec->path, reason);
			row(ms, rec->path, rec->dev, rec->size, 0, NULL, NULL, reason);
			ms->unavailable++;
			continue;
		}
		if (res.err == ENOSPC) {
			char reason[128];

			/*
			 * Taken whole or not at all (a device's cache may hold a
			 * dd of it): nothing was read. The files are not to pay for
			 * it: the budget is judged afresh for them.
			 */
			snprintf(reason, sizeof(reason), "its %llu pages do not fit the memory budget (%s)",
				 (unsigned long long)(res.pages - res.cached), pc_budget_reason(b->stopped));
			say_warn(r, "metadata of '%s' not restored: %s", res.name, reason);
			row(ms, res.name, dev, res.size, res.pages, &res.cached, &res.read, reason);
			ms->rows[ms->nrows - 1].done = false;
			ms->unavailable++;
			pc_budget_put(b, 0);
			continue;
		}
		ms->devices++;
		if (ms->read_ok && !dry)
			ms->read_ok[i] = true;
		ms->pages += res.pages;
		ms->cached += res.cached;
		ms->read += dry ? 0 : res.read;
		if (res.err)
			say_warn(r, "metadata of '%s' not all restored: %s", res.name, strerror(res.err));
		row(ms, res.name, dev, res.size, res.pages, &res.cached, dry ? NULL : &res.read,
		    dry ? "dry run" : res.err ? strerror(res.err) : "ok");
	}
}

/* Was the filesystem a record (dir or file) was taken on read through its device? */
static bool read_by_device(const struct meta_set *ms, const struct pc_profile_file *f)
{
	uint64_t fsid = f->ident & PC_IDENT_FSID ? f->fsid : 0;

	for (size_t k = 0; ms->read_ok && k < ms->n; k++)
		if (ms->read_ok[k] && pc_bdev_matches(&ms->recs[k], f->dev, fsid, false))
			return true;
	return false;
}

static int by_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int by_file_path(const void *a, const void *b)
{
	return strcmp(((const struct pc_profile_file *)a)->path,
		      ((const struct pc_profile_file *)b)->path);
}

/* a recorded file in a directory that is not recorded itself */
struct named {
	char *parent;			/* "" for the root */
	const char *name;		/* in the item's path */
	uint64_t ino;
};

static int by_parent(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->parent, ((const struct named *)b)->parent);
}

/*
 * Metadata through the filesystem (fsmeta.c), for every filesystem whose
 * block device was not read: the recorded directories read whole, the
 * other directories of recorded files their files statx()ed; both in
 * inode order, before the files' data. Only for a snapshot with metadata
 * records (snapshot --metadata): a plain snapshot asked for none.
 */
static void meta_fs(struct pc_restore *r, int rootfd, bool dry)
{
	struct meta_set *ms = &r->ms;
	struct pc_fsmeta_dir *v = NULL;
	struct named *nm = NULL;
	char **dirpaths = NULL;
	const char **names = NULL;
	uint64_t *inos = NULL;
	size_t nv = 0, nn = 0, ndp = 0;
	struct pc_fsmeta_result res = { 0 };
	double deadline = r->o.max_time >= 0 ? r->t0 + r->o.max_time : 0;

	if (r->o.no_metadata || (!ms->ndirs && !ms->n))
		return;
	v = calloc(ms->ndirs + r->n + 1, sizeof(*v));
	nm = calloc(r->n + 1, sizeof(*nm));
	dirpaths = calloc(ms->ndirs + 1, sizeof(*dirpaths));
	names = calloc(r->n + 1, sizeof(*names));
	inos = calloc(r->n + 1, sizeof(*inos));
	if (!v || !nm || !dirpaths || !names || !inos) {
		say_warn(r, "metadata not read through the filesystem: %s", strerror(ENOMEM));
		goto out;
	}
	/*
	 * One read a directory, however many snapshots recorded it; in path
	 * order, so dirpaths (which the files' parents are looked up in)
	 * comes out sorted
	 */
	if (ms->ndirs > 1)
		qsort(ms->dirs, ms->ndirs, sizeof(*ms->dirs), by_file_path);
	for (size_t i = 0; i < ms->ndirs; i++) {
		const struct pc_profile_file *d = &ms->dirs[i];

		if (i && !strcmp(d->path, ms->dirs[i - 1].path))
			continue;
		dirpaths[ndp++] = d->path;	/* read whole, by the device or here */
		if (read_by_device(ms, d)) {
			r->t.meta_dirs_by_device++;
			continue;
		}
		v[nv++] = (struct pc_fsmeta_dir){ .path = d->path, .ino = d->ino, .whole = true };
	}
	for (size_t i = 0; i < r->n; i++) {
		const char *p = r->items[i].f.path, *slash = strrchr(p, '/');
		char *parent = slash ? strndup(p, (size_t)(slash - p)) : strdup("");

		if (!parent)
			continue;
		if (read_by_device(ms, &r->items[i].f) ||
		    (*parent && ndp && bsearch(&parent, dirpaths, ndp, sizeof(*dirpaths), by_str))) {
			free(parent);
			continue;
		}
		nm[nn++] = (struct named){ parent, slash ? slash + 1 : p, r->items[i].f.ino };
	}
	if (nn)
		qsort(nm, nn, sizeof(*nm), by_parent);
	for (size_t i = 0, k; i < nn; i = k) {
		uint64_t ino = UINT64_MAX;

		for (k = i; k < nn && !strcmp(nm[k].parent, nm[i].parent); k++) {
			names[k] = nm[k].name;
			inos[k] = nm[k].ino;
			ino = nm[k].ino < ino ? nm[k].ino : ino;
		}
		/* its recorded inode is not known: its files' first */
		v[nv++] = (struct pc_fsmeta_dir){ .path = nm[i].parent, .ino = ino, .names = names + i,
						  .inos = inos + i, .nnames = k - i };
	}
	r->t.meta_dirs_wanted = nv;
	if (dry || !nv)
		goto out;
	if (pc_fsmeta_read(rootfd, v, nv, deadline, &res) < 0) {
		say_warn(r, "metadata not read through the filesystem: %s", strerror(ENOMEM));
		goto out;
	}
	r->t.meta_dirs = res.dirs + res.parents;
	r->t.meta_entries = res.entries;
	r->t.meta_dirs_skipped = res.skipped;
	r->t.meta_stat_failed = res.failed;
	if (res.time_stopped)
		r->t.time_stopped = true;
out:
	for (size_t i = 0; i < nn; i++)
		free(nm[i].parent);
	free(nm);
	free(v);
	free(dirpaths);
	free(names);
	free(inos);
}

static void meta_release(struct meta_set *ms)
{
	for (size_t i = 0; i < ms->ndirs; i++)
		pc_profile_file_release(&ms->dirs[i]);
	free(ms->dirs);
	free(ms->read_ok);
	for (size_t i = 0; i < ms->n; i++)
		pc_profile_file_release(&ms->recs[i]);
	for (size_t i = 0; i < ms->nfs; i++)
		free(ms->fs[i].path);
	free(ms->recs);
	free(ms->src);
	free(ms->fs);
	free(ms->rows);
	memset(ms, 0, sizeof(*ms));
}

void pc_restore_free(struct pc_restore *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		pc_profile_file_release(&r->items[i].f);
	free(r->items);
	meta_release(&r->ms);
	for (size_t i = 0; i < r->nin; i++)
		free(r->in[i].path);
	free(r->in);
	free(r->inputs);
	free(r->snapshot);
	free(r);
}

/*
 * The whole snapshot (input k) into r: the files as items, the block
 * device records aside. Pages in ours from here on: runs and used ranges
 * widened where the snapshot's page size is not ours (active unknown).
 */
static int read_snapshot(struct pc_restore *r, struct pc_profile_reader *pr, size_t k)
{
	struct pc_restore_input *in = &r->inputs[k];
	struct pc_profile_file f;
	int rc;

	while ((rc = pc_profile_next(pr, &f)) > 0) {
		struct item *it;

		if (f.ident & PC_IDENT_BDEV)
			in->devices++;
		if (meta_take(&r->ms, &f, r->snap_ps, k))	/* a block device's record, not a file */
			continue;
		if (pc_grow(&r->items, &r->cap, r->n, sizeof(*r->items)) < 0) {
			pc_profile_file_release(&f);
			return -ENOMEM;
		}
		it = &r->items[r->n];
		memset(it, 0, sizeof(*it));
		it->f = f;
		it->src = k;
		it->order = r->n++;
		if (r->snap_ps != (int)r->ps) {
			/* runs are in the snapshot's pages: ours, overlaps merged; active unknown */
			widen_runs(it->f.runs, &it->f.nruns, (uint64_t)r->snap_ps, r->ps);
			used_to_pages(&it->f, (uint64_t)r->snap_ps, r->ps, UINT64_MAX);
			it->f.nactive = 0;
		}
		for (size_t j = 0; j < it->f.nruns; j++)
			it->pages += it->f.runs[2 * j + 1];
		in->files++;
		in->pages += it->pages;
	}
	return rc;
}

static int by_path(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->f.path, y->f.path);

	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

static int by_order(const void *a, const void *b)
{
	const struct item *x = a, *y = b;

	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Several snapshots: one item a path (beneath the one root). Records of
 * the same file (pc_profile_same_file) are united (pc_profile_file_merge:
 * cached and active runs, used times the earliest a page); where they
 * are of two files (it changed between the snapshots), the newer record
 * is kept whole: the later META creation time, and of two made in the
 * same second, the later argument. Each keeps the place of its path's
 * first record, the arguments one after another (--order file).
 */
static int merge_items(struct pc_restore *r)
{
	size_t m = 0, i;
	int rc = 0;

	qsort(r->items, r->n, sizeof(*r->items), by_path);
	for (i = 0; i < r->n; i++) {
		struct item *it = &r->items[i], *keep = m ? &r->items[m - 1] : NULL;

		if (!keep || strcmp(keep->f.path, it->f.path)) {
			if (m != i) {
				r->items[m] = *it;
				memset(it, 0, sizeof(*it));	/* moved: its arrays are the copy's */
			}
			m++;
			continue;
		}
		if (pc_profile_same_file(&keep->f, &it->f)) {
			rc = pc_profile_file_merge(&keep->f, &it->f);
			if (rc < 0)
				break;
			r->inputs[it->src].shared++;
			if (r->inputs[it->src].created >= r->inputs[keep->src].created)
				keep->src = it->src;	/* the newer: whose root judges it */
			pc_profile_file_release(&it->f);
		} else if (r->inputs[it->src].created >= r->inputs[keep->src].created) {
			size_t order = keep->order;	/* sorted: it is the later argument */

			r->inputs[keep->src].superseded++;
			pc_profile_file_release(&keep->f);
			*keep = *it;
			keep->order = order;
			memset(it, 0, sizeof(*it));
		} else {
			r->inputs[it->src].superseded++;
			pc_profile_file_release(&it->f);
		}
	}
	/* those not reached (no memory): kept as they are, for pc_restore_free */
	for (; i < r->n; i++, m++)
		if (m != i) {
			r->items[m] = r->items[i];
			memset(&r->items[i], 0, sizeof(r->items[i]));
		}
	r->n = m;
	if (rc < 0)
		return rc;
	qsort(r->items, r->n, sizeof(*r->items), by_order);
	for (i = 0; i < r->n; i++) {
		struct item *it = &r->items[i];

		it->order = i;
		it->pages = 0;
		for (size_t k = 0; k < it->f.nruns; k++)
			it->pages += it->f.runs[2 * k + 1];
	}
	return 0;
}

int pc_restore_open(const char *snapshot, const struct pc_restore_opts *o, struct pc_restore **ret)
{
	return pc_restore_open_many(&snapshot, 1, o, ret);
}

int pc_restore_open_many(const char *const *snapshots, size_t n, const struct pc_restore_opts *o,
			 struct pc_restore **ret)
{
	struct pc_profile_reader *pr;
	struct pc_restore *r;
	char err[256], host[256] = "";
	int rc;

	if (!o || !o->size || !snapshots || !n)
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->snapshot = strdup(snapshots[0])) || !(r->in = calloc(n, sizeof(*r->in))) ||
	    !(r->inputs = calloc(n, sizeof(*r->inputs)))) {
		if (r) {
			free(r->in);
			free(r->snapshot);
		}
		free(r);
		return -ENOMEM;
	}
	r->nin = n;
	/* a caller built against an older, shorter struct: the rest as zero */
	memcpy(&r->o, o, o->size < sizeof(r->o) ? o->size : sizeof(r->o));
	if (o->size < sizeof(r->o)) {
		memset((char *)&r->o + o->size, 0, sizeof(r->o) - o->size);
		r->o.size = sizeof(r->o);
	}
	r->t0 = pc_now();
	r->ps = pc_page_size();
	r->same_place = true;
	snprintf(r->t.root, sizeof(r->t.root), "/");
	r->t.dry_run = r->o.dry_run;
	r->t.order = r->o.order;
	r->t.inputs = r->inputs;
	r->t.ninputs = n;

	/* every snapshot whole first: nothing is opened unless all of them are whole */
	for (size_t k = 0; k < n; k++) {
		const struct pc_profile_meta *meta;

		if (!(r->in[k].path = strdup(snapshots[k]))) {
			pc_restore_free(r);
			return -ENOMEM;
		}
		r->inputs[k].path = r->in[k].path;
		r->inputs[k].root = r->in[k].root;
		rc = pc_profile_open(snapshots[k], &pr, err, sizeof(err));
		if (rc < 0) {
			say_error(r, snapshots[k], "cannot read snapshot", 0, err);
			pc_restore_free(r);
			return rc;
		}
		meta = pc_profile_get_meta(pr);
		r->snap_ps = (int)meta->page_size;
		snprintf(r->in[k].root, sizeof(r->in[k].root), "%s", meta->root);
		if (k == 0)
			snprintf(host, sizeof(host), "%s", meta->host);
		r->inputs[k].created = meta->created;
		r->inputs[k].recorded = meta->flags & PC_META_RECORDED;
		rc = read_snapshot(r, pr, k);
		if (rc < 0) {
			say_error(r, snapshots[k], "corrupt snapshot",
				  0, rc == -EBADMSG ? pc_profile_error(pr) : strerror(-rc));
			pc_profile_close(pr);
			pc_restore_free(r);
			return rc;
		}
		pc_profile_close(pr);
	}

	/*
	 * The root: the caller's, or "/"; a snapshot taken beneath another
	 * root names it, but only the caller may say to restore there. Of
	 * several, each path is one file only beneath one root: taken beneath
	 * two, they are refused unless the caller says where (--root).
	 */
	for (size_t k = 1; k < n && !r->o.root; k++) {
		char why[9000];

		if (!strcmp(r->in[k].root, r->in[0].root))
			continue;
		snprintf(why, sizeof(why), "taken beneath '%s', and '%s' beneath '%s': snapshots "
			 "restored together must share a root (say where to restore them with --root)",
			 r->in[k].root, snapshots[0], r->in[0].root);
		say_error(r, snapshots[k], "cannot restore", 0, why);
		pc_restore_free(r);
		return -EXDEV;
	}
	if (!r->o.root && strcmp(r->in[0].root, "/")) {
		char why[8800];

		if (!strncmp(r->in[0].root, "container:", 10))	/* snapshot --container's */
			snprintf(why, sizeof(why), "its paths are a container's ('%s' on %s); say "
				 "into which with --container (or beneath which directory with "
				 "--root)", r->in[0].root, host);
		else
			snprintf(why, sizeof(why), "its paths are relative to '%s' on %s; say "
				 "where to restore them with --root (--root '%s' for the same "
				 "place)", r->in[0].root, host, r->in[0].root);
		say_error(r, snapshots[0], "cannot restore", 0, why);
		pc_restore_free(r);
		return -EXDEV;
	}
	snprintf(r->t.root, sizeof(r->t.root), "%s", r->o.root ? r->o.root : "/");
	{
		char *a = pc_abspath(r->t.root);

		for (size_t k = 0; k < n; k++) {
			char *b = pc_abspath(r->in[k].root);

			r->in[k].same_place = a && b && !strcmp(a, b);
			r->same_place &= r->in[k].same_place;
			free(b);
		}
		free(a);
	}
	if (n > 1 && (rc = merge_items(r)) < 0) {
		say_error(r, snapshots[0], "cannot merge", -rc, NULL);
		pc_restore_free(r);
		return rc;
	}
	*ret = r;
	return 0;
}

/*
 * Check each file: one open, beneath the root, closed again. The ones to
 * read get their plan's pages (clipped to the file now) and their place on
 * disk; the others are said and counted.
 */
static void check_files(struct pc_restore *r, int rootfd, bool by_file)
{
	for (size_t i = 0; i < r->n; i++) {
		struct item *it = &r->items[i];
		const char *why;
		char show[8192];
		struct stat st;
		uint64_t pages_now;
		int fd = pc_open_beneath(rootfd, it->f.path, O_NOATIME, &st);

		if (fd < 0) {
			open_failed(r, it, fd, &st, "missing");
			continue;
		}
		why = judge(it, fd, &st, r->in[it->src].same_place, r->o.strict, &it->modified);
		/* allow_changed warms changed regular files; it lifts no other rule */
		if (why && !r->o.allow_changed) {
			say_skip(r, shown(r->t.root, it, show, sizeof(show)), PC_RESTORE_CHANGED, why);
			close(fd);
			continue;
		}
		it->ok = true;
		it->dev = st.st_dev;
		it->ino = st.st_ino;
		/* the plan: recorded pages that lie in the file as it is now */
		pages_now = ((uint64_t)st.st_size + r->ps - 1) / r->ps;
		clip_runs(it->f.runs, &it->f.nruns, pages_now);
		clip_runs(it->f.active, &it->f.nactive, pages_now);
		it->pages = 0;
		for (size_t k = 0; k < it->f.nruns; k++)
			it->pages += it->f.runs[2 * k + 1];
		if (!by_file) {
			/* access order's, and a short budget's in disk order too */
			used_to_pages(&it->f, r->ps, r->ps, pages_now);	/* ours since read */
		} else {
			free(it->f.used);	/* times matter to access and disk order only */
			it->f.used = NULL;
			it->f.nused = 0;
		}
		r->t.modified += it->modified;
		r->t.pages += it->pages;
		if (!by_file && it->f.nruns)
			it->disk = first_physical(fd, it->f.runs[0] * r->ps);
		close(fd);
	}
}

/* A file's row for on_file: what it wants; the caller adds the outcome. */
static void file_row(const struct pc_restore *r, const struct item *it, char *show, size_t len,
		     struct pc_restore_file *ret)
{
	memset(ret, 0, sizeof(*ret));
	ret->path = shown(r->t.root, it, show, len);
	ret->pages = it->pages;
	ret->runs = it->f.nruns;
	if (r->t.order == PC_RESTORE_ACCESS && it->f.nused) {
		ret->has_first_use = true;
		ret->first_use_ms = pc_profile_first_use(&it->f);
	}
}

/* dry run: each file, in the order of its first read, with what is cached of it now */
static void list_plan(struct pc_restore *r, int rootfd, const struct plan *plan)
{
	uint64_t nlisted = 0;

	for (size_t i = 0; i < plan->n; i++) {
		struct item *it = plan->v[i].it;
		struct pc_restore_file row;
		uint64_t cached = 0;
		char show[8192];
		struct stat st;
		int fd;

		if (it->listed)
			continue;
		it->listed = true;
		fd = reopen(rootfd, it, &st);
		if (fd < 0) {
			open_failed(r, it, fd, &st, "missing (removed while restoring)");
			continue;
		}
		for (size_t k = 0; k < it->f.nruns; k++) {
			struct pc_residency res;

			if (pc_fd_residency(fd, (uint64_t)st.st_size, it->f.runs[2 * k] * r->ps,
					    it->f.runs[2 * k + 1] * r->ps, &res) == 0 &&
			    res.source != PC_SRC_NONE)
				cached += res.cached;
		}
		close(fd);
		r->t.cached_before += cached;
		file_row(r, it, show, sizeof(show), &row);
		row.cached = cached;
		row.status = PC_RESTORE_LISTED;
		if (r->o.on_file)
			r->o.on_file(r->o.arg, &row);
		nlisted++;
	}
	r->t.files = nlisted;
	r->t.resident = r->t.cached_before;
}

/* Hand the plan's pieces to the warmer, in order, until done, the budget or the clock says stop. */
static int send_plan(struct pc_restore *r, int rootfd, struct pc_warmer *w, const struct plan *plan,
		     struct item **sent, size_t *ret_nsent, double deadline)
{
	size_t nsent = 0;
	int rc = 0;

	for (size_t i = 0; i < plan->n && rc == 0; i++) {
		struct piece *pc = &plan->v[i];
		struct item *it = pc->it;
		char show[8192];
		struct stat st;
		int fd;

		if (!it->ok)	/* a piece before this one found it gone */
			continue;
		if (deadline && pc_now() >= deadline) {
			r->t.time_stopped = true;	/* what is in flight finishes */
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
			open_failed(r, it, fd, &st, "missing (removed while restoring)");
			continue;
		}
		rc = pc_warmer_add_runs(w, fd, shown(r->t.root, it, show, sizeof(show)), &st, pc->runs,
					pc->nruns);
		if (rc == -ENOSPC)
			break;
		if (rc < 0) {
			it->ok = false;
			say_error(r, show, "cannot restore", -rc, NULL);
		} else {
			sent[nsent++] = it;	/* its result comes back in this order */
			it->nsent++;
			it->sent_pages += pc->pages;
		}
		rc = 0;
	}
	*ret_nsent = nsent;
	return rc;
}

/* The warmer's results, to the files they are for. */
static void take_results(struct pc_restore *r, struct pc_warmer *w, struct item **sent, size_t nsent)
{
	for (size_t k = 0;; k++) {
		struct pc_warm_result res;
		struct item *it;

		if (!pc_warmer_next_result(w, &res))
			break;
		it = result_item(r->t.root, sent, nsent, k, res.path);
		r->t.resident += res.resident;
		if (!res.err)
			r->t.read += res.read;
		r->t.cached_before += res.pages - res.read - res.cut;
		if (res.err == ESTALE)
			say_error(r, res.path, "cannot restore", 0, "the file shrank while it was read");
		else if (res.err)
			say_error(r, res.path, "cannot restore", res.err, NULL);
		if (it) {
			it->r_pages += res.pages;
			it->r_read += res.read;
			it->r_resident += res.resident;
			it->r_cut += res.cut;
			if (res.err && !it->r_err)
				it->r_err = res.err;
		}
	}
}

/* A row a file, in the order of its first read; what was not reached, counted. */
static void report_files(struct pc_restore *r, const struct plan *plan)
{
	for (size_t i = 0; i < plan->n; i++) {
		struct item *it = plan->v[i].it;
		bool whole = it->nsent == it->npieces && !it->r_cut;
		struct pc_restore_file row;
		char show[8192];

		if (it->listed || (!it->ok && !it->nsent))
			continue;
		it->listed = true;
		if (whole && !it->r_err)
			r->t.files++;
		if (!whole) {
			r->t.files_not_done++;
			r->t.pages_not_done += it->pages - it->sent_pages + it->r_cut;
			if (it->nsent)
				r->t.files_partly++;
		}
		if (!r->o.on_file)
			continue;
		file_row(r, it, show, sizeof(show), &row);
		row.pages = whole ? it->r_pages : it->pages;
		row.read = it->r_read;
		row.resident = it->r_resident;
		row.cut = it->pages - it->sent_pages + it->r_cut;
		row.err = it->r_err;
		row.status = it->r_err ? PC_RESTORE_FAILED : whole ? PC_RESTORE_OK :
			     it->nsent ? PC_RESTORE_PARTLY : PC_RESTORE_NOT_REACHED;
		r->o.on_file(r->o.arg, &row);
	}
}

/* Read the plan: pieces to the warmer, results back, active pages again. */
static int read_plan(struct pc_restore *r, int rootfd, struct pc_budget *budget, bool budget_ready,
		     struct item **order, size_t nwarm, const struct plan *plan)
{
	struct pc_warm_opts wo = { .budget = budget, .progress = r->o.progress };
	struct item **sent = calloc(plan->n ? plan->n : 1, sizeof(*sent));
	char *buf = malloc(1 << 20);
	struct pc_warmer *w = NULL;
	double deadline = r->o.max_time >= 0 ? r->t0 + r->o.max_time : 0;
	size_t nsent = 0;
	int rc;

	if (r->o.idle)	/* IOPRIO_CLASS_IDLE for this process */
		syscall(SYS_ioprio_set, 1, 0, 3 << 13);
	rc = budget_ready ? 0 : pc_budget_init(budget, r->o.max_mem,
					       r->o.reserve);
	budget->rate = r->o.rate;
	if (rc == 0)
		rc = pc_warmer_new(&wo, &w);
	if (rc == 0 && !sent)
		rc = -ENOMEM;
	if (rc < 0) {	/* nothing is read: a failure, not a warning */
		say_error(r, r->snapshot, "cannot start reading for", -rc, NULL);
	} else {
		uint64_t total = 0;

		/* the plan's bytes: the files about to be read, known before */
		for (size_t i = 0; i < nwarm; i++)
			total += order[i]->pages * r->ps;
		if (r->o.on_reading)
			r->o.on_reading(r->o.arg, total);
		send_plan(r, rootfd, w, plan, sent, &nsent, deadline);
		pc_warmer_drain(w);
		if (r->o.on_read)
			r->o.on_read(r->o.arg);
		take_results(r, w, sent, nsent);
	}
	report_files(r, plan);
	/*
	 * active pages again: not past max_time, and only of files read whole;
	 * by priority the active pages came first, so of every file, as far
	 * as they are cached
	 */
	for (size_t i = 0; i < nwarm && w && buf && (!budget->stopped || r->t.prioritized) &&
			   !r->t.time_stopped; i++) {
		if (deadline && pc_now() >= deadline)
			break;
		if (order[i]->ok && order[i]->f.nactive &&
		    (order[i]->nsent == order[i]->npieces || r->t.prioritized))
			reactivate(rootfd, order[i], r->ps, buf, 1 << 20, budget, r->t.prioritized);
	}
	free(buf);
	free(sent);
	pc_warmer_free(w);
	return rc;
}

/*
 * Bytes the files lack now, counted until they pass `room`: what the
 * budget will be asked for (cached pages cost it nothing), so a plan
 * mostly cached already is not taken for one the budget cannot hold.
 */
static uint64_t lacking(int rootfd, struct item **order, size_t n, uint64_t ps, uint64_t room)
{
	uint64_t want = 0;

	for (size_t i = 0; i < n && want <= room; i++) {
		const struct item *it = order[i];
		struct stat st;
		int fd = reopen(rootfd, it, &st);

		if (fd < 0) {
			want += it->pages * ps;	/* its reads will say why */
			continue;
		}
		for (size_t k = 0; k < it->f.nruns && want <= room; k++) {
			uint64_t len = it->f.runs[2 * k + 1] * ps;
			struct pc_residency res;

			if (pc_fd_residency(fd, (uint64_t)st.st_size, it->f.runs[2 * k] * ps, len,
					    &res) == 0 && res.source != PC_SRC_NONE)
				want += (res.pages - res.cached) * ps;
			else
				want += len;
		}
		close(fd);
	}
	return want;
}

int pc_restore_run(struct pc_restore *r)
{
	bool by_access = r->o.order == PC_RESTORE_ACCESS, by_file = r->o.order == PC_RESTORE_FILE;
	bool dry = r->o.dry_run, budget_ready = false, have_times = false;
	struct pc_budget budget = { 0 };
	struct plan plan = { 0 };
	struct item **order = NULL;
	size_t nwarm = 0;
	int rootfd, rc = 0;

	if (r->ran)
		return -EALREADY;
	r->ran = true;
	/* the caller's fd of the root, where it reached it itself; else by name */
	rootfd = r->o.root_fd > 2 ? fcntl(r->o.root_fd, F_DUPFD_CLOEXEC, 3)
				  : open(r->t.root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) {
		rc = -errno;
		say_error(r, r->t.root, "cannot open the root", -rc, NULL);
		goto out;
	}

	/* metadata first: the files' lookups below then find it cached */
	if (r->ms.n && !dry && !r->o.no_metadata) {
		if (r->o.idle)	/* IOPRIO_CLASS_IDLE for this process */
			syscall(SYS_ioprio_set, 1, 0, 3 << 13);
		budget_ready = pc_budget_init(&budget, r->o.max_mem,
					      r->o.reserve) == 0;
		budget.rate = r->o.rate;
	}
	meta_restore(r, rootfd, budget_ready || dry ? &budget : NULL, dry);
	/* where a device was not read: the same metadata through the filesystem */
	meta_fs(r, rootfd, dry);

	for (size_t i = 0; i < r->n; i++)
		have_times |= r->items[i].f.nused != 0;
	check_files(r, rootfd, by_file);

	order = calloc(r->n ? r->n : 1, sizeof(*order));
	for (size_t i = 0; i < r->n && order; i++)
		if (r->items[i].ok)
			order[nwarm++] = &r->items[i];
	if (!by_file && order)
		qsort(order, nwarm, sizeof(*order), by_disk);
	if (by_access && !have_times) {
		if (r->nin > 1)
			say_warn(r, "none of the %zu snapshots has access times (none was made by "
				 "pagecache record): disk order", r->nin);
		else
			say_warn(r, "'%s' has no access times (it was not made by pagecache record): "
				 "disk order", r->snapshot);
		r->t.no_access_times = true;
		r->t.order = PC_RESTORE_DISK;
		by_access = false;
	}
	plan.piece_max = r->o.max_time >= 0 && !dry ? PIECE_MAX : 0;
	/*
	 * The budget before the plan: where it cannot hold every page the
	 * plan wants, the most valuable go first, across files.
	 */
	if (!dry && nwarm && !budget_ready) {
		if (r->o.idle)	/* IOPRIO_CLASS_IDLE for this process */
			syscall(SYS_ioprio_set, 1, 0, 3 << 13);
		budget_ready = pc_budget_init(&budget, r->o.max_mem, r->o.reserve) == 0;
		budget.rate = r->o.rate;
	}
	if (!dry && budget_ready) {
		uint64_t room = budget.max_bytes < budget.headroom ? budget.max_bytes : budget.headroom;
		uint64_t want = 0;

		room = room > budget.taken ? room - budget.taken : 0;
		for (size_t i = 0; i < nwarm; i++)
			want += order[i]->pages * r->ps;
		r->t.prioritized = want > room && lacking(rootfd, order, nwarm, r->ps, room) > room;
	}
	if (!order || (r->t.prioritized ? plan_build_priority(&plan, order, nwarm, !by_file)
					: plan_build(&plan, order, nwarm, by_access)) < 0) {
		say_error(r, r->snapshot, "cannot plan the reads of", ENOMEM, NULL);
		nwarm = 0;
	}

	if (dry)
		list_plan(r, rootfd, &plan);
	else if (nwarm)
		rc = read_plan(r, rootfd, &budget, budget_ready, order, nwarm, &plan);
	r->t.budget_stopped = budget.stopped;
	close(rootfd);
	free(order);
	plan_free(&plan);
	pc_budget_release(&budget);
out:
	r->t.meta_devices = r->ms.devices;
	r->t.meta_pages = r->ms.pages;
	r->t.meta_cached = r->ms.cached;
	r->t.meta_read = r->ms.read;
	r->t.meta_skipped = r->ms.unavailable;
	r->t.meta_rows = r->ms.rows;
	r->t.meta_nrows = r->ms.nrows;
	if (dry)
		r->t.read = 0;
	r->t.elapsed = pc_now() - r->t0;
	if (rc < 0)
		return rc;
	return r->t.failures || r->t.changed || r->t.missing || r->t.budget_stopped ? 1 : 0;
}

const struct pc_restore_result *pc_restore_totals(const struct pc_restore *r)
{
	return &r->t;
}
