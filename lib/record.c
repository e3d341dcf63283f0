/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record.c: the recording's engine (record.h): trace events -> what a
 * workload really used of each file, and when it first used it, by the
 * path the file has at the end, for `pagecache record`.
 *
 * The kernel's filemap tracepoints (trace.c) say which pages were used:
 * read() and splice asked for them (get_pages), a fault touched one
 * (fault); which were mapped around a fault (map_pages: a *requested*
 * window, kept only where its pages were really there: added during the
 * recording or resident at its end; cached runs of the snapshot, not used
 * ones, since the event does not say which page of it was touched); and
 * which were brought in (add_to_page_cache), which is also how filesystem
 * metadata shows up: pages of the block device's own cache (dev 0:N of
 * the bdev pseudo-filesystem, the inode number the disk's dev_t), kept as
 * PC_IDENT_BDEV records. Pages only readahead brought in and nobody used
 * are not kept.
 *
 * Events name (dev, ino). Files become paths by the traced processes' own
 * open handles (/proc/PID/fd, /proc/PID/map_files) while they run, else by
 * handle (pc_inode_open) right after their first use, else by a walk of
 * the root; nothing is held open between calls (that would keep
 * filesystems busy). The path is the file's at the end (a rename is
 * followed; a file seen while used and gone at the end is dropped and
 * counted as deleted), with no symbolic link in it, relative to the root.
 * Never prints, never exits: failures go to on_error, counts to the
 * result.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "idmap.h"
#include "record.h"
#include "spanset.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define REC_SCAN_TRIES 3	/* a file's processes' handles looked at, at most */

/* ---- what was seen ---- */

struct rfile {
	uint64_t dev, ino;
	struct pc_spanset used;		/* get_pages, fault */
	struct pc_spanset mapped;	/* map_pages: requested */
	struct pc_spanset added;	/* add_to_page_cache */
	char *seen;			/* its path, as seen while it was used */
	uint64_t sdev, sino;		/* seen through an overlay: the overlay
					   file's (dev, ino) the path leads to */
	bool gone;			/* seen deleted while it was used */
	int pfd;			/* at the end: an O_PATH fd of it, -1 */
	bool walk;			/* to be looked for by a walk of --root */
	unsigned scans;			/* looked for among the processes' handles */
	struct statx_timestamp born;	/* its birth time, seen while it was used */
	bool has_born;			/* (where its filesystem keeps one) */
	uint32_t gen;			/* else its inode generation */
	bool has_gen;
};

/*
 * The files left to a walk of the root, and the block devices' own pages
 * (kept after the files: keep_bdevs).
 */
struct walk_set {
	struct rfile **v;
	size_t n, cap, left;		/* left: not found yet (under lock) */
	unsigned long seen;		/* entries the walk came to */
	pthread_mutex_t lock;		/* the walk's threads: left, the files' pfd */
	struct pc_rec *r;		/* its table finds a (dev, ino) */
	const struct pc_rec_resolve_opts *ro;	/* stop() */
	uint64_t devs[16];		/* the filesystems they are on (0: any, too many) */
	size_t ndevs;
	bool hidden;			/* some on one mounted nowhere in our namespace */
};

struct pc_rec {
	struct pc_idmap ids;		/* (dev, ino) -> index into files + 1 */
	struct rfile **files;		/* in order of first use */
	size_t nfiles, nfcap;
	uint64_t t0_ns;
	uint32_t self;
	uint64_t added_pages, events;
	bool nomem;
	bool misses;			/* no use events (before 6.12): what is added is used */
	pid_t *scan;			/* pids with files to pin, this round */
	size_t nscan, scancap;
	size_t scanned_upto;		/* files before this were tried by handle */
	struct rfile **unplaced;	/* of those, not placed yet, with tries left */
	size_t nunplaced, unplacedcap;
	int fddir;			/* /proc/self/fd; -1: none; -2: not opened yet */
	uint64_t devs[16];		/* devices of the events, judged: */
	bool hidden[16];		/* mounted nowhere in our namespace */
	size_t ndevs;
	struct walk_set walk;		/* files left to a walk of the root */
	struct walk_set bdevs;		/* block devices' own pages: after the files */
};

static struct rfile *lookup(struct pc_rec *r, uint64_t dev, uint64_t ino, bool create)
{
	uint32_t i = pc_idmap_get(&r->ids, dev, ino);
	struct rfile *f;

	if (i)
		return r->files[i - 1];
	if (!create || r->nfiles >= UINT32_MAX - 1 ||
	    pc_grow(&r->files, &r->nfcap, r->nfiles, sizeof(*r->files)) < 0 ||
	    !(f = calloc(1, sizeof(*f))))
		return NULL;
	if (pc_idmap_put(&r->ids, dev, ino, (uint32_t)r->nfiles + 1) < 0) {
		free(f);
		return NULL;
	}
	f->dev = dev;
	f->ino = ino;
	f->pfd = -1;
	pc_spanset_init(&f->used);	/* a file's pages as sets (lib/spanset.c) */
	pc_spanset_init(&f->mapped);
	pc_spanset_init(&f->added);
	r->files[r->nfiles++] = f;
	return f;
}

static void want_scan(struct pc_rec *r, pid_t pid)
{
	for (size_t i = 0; i < r->nscan; i++)
		if (r->scan[i] == pid)
			return;
	if (pc_grow(&r->scan, &r->scancap, r->nscan, sizeof(*r->scan)) == 0)
		r->scan[r->nscan++] = pid;
}

int pc_rec_event(const struct pc_trace_event *e, void *arg)
{
	struct pc_rec *r = arg;
	struct rfile *f;
	uint32_t ms;
	int rc = 0;

	if (e->pid == r->self)
		return 0;	/* our own reads (/proc, the snapshot) are not the workload's */
	r->events++;
	f = lookup(r, e->dev, e->ino, true);
	if (!f) {
		r->nomem = true;
		return 0;
	}
	ms = e->time_ns > r->t0_ns ? (uint32_t)((e->time_ns - r->t0_ns) / 1000000) : 0;
	switch (e->kind) {
	case PC_TR_ADD:
		r->added_pages += e->last - e->first + 1;
		/* misses only: from a cold cache, a page brought in is one the workload used */
		rc = pc_spanset_add(r->misses ? &f->used : &f->added, e->first, e->last, ms);
		break;
	case PC_TR_GET_PAGES:
	case PC_TR_FAULT:
		rc = pc_spanset_add(&f->used, e->first, e->last, ms);
		break;
	case PC_TR_MAP_PAGES:
		rc = pc_spanset_add(&f->mapped, e->first, e->last, ms);
		break;
	}
	if (rc == -ENOMEM)
		r->nomem = true;
	if (!f->seen && !f->gone && f->scans < REC_SCAN_TRIES && major(e->dev) + minor(e->dev))
		want_scan(r, (pid_t)e->pid);
	return 0;
}

/* fd's birth time, where its filesystem keeps one */
static bool birth_of(int fd, struct statx_timestamp *ret)
{
	struct statx sx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &sx) < 0 || !(sx.stx_mask & STATX_BTIME))
		return false;
	*ret = sx.stx_btime;
	return true;
}

/*
 * An O_PATH fd's inode generation (FS_IOC_GETVERSION), on ext2/3/4 only,
 * for inodes that keep no birth time (128-byte inodes, mkfs.ext4 -I 128).
 * The ioctl needs a real open, so only a regular file on a local
 * filesystem is opened: elsewhere an open could wait on a server (FUSE,
 * NFS) while the events pile up.
 */
static bool gen_of(int fd, uint32_t *ret)
{
	struct statfs sf;
	struct stat st;
	char link[64];
	int rfd, gen;
	bool ok;

	if (fstatfs(fd, &sf) < 0 || sf.f_type != EXT4_SUPER_MAGIC || fstat(fd, &st) < 0 ||
	    !S_ISREG(st.st_mode))
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOATIME | O_CLOEXEC);
	if (rfd < 0)
		rfd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0)
		return false;
	ok = ioctl(rfd, FS_IOC_GETVERSION, &gen) == 0;
	close(rfd);
	if (ok)
		*ret = (uint32_t)gen;
	return ok;
}

/*
 * What tells f's inode from a later one of the same number: its birth
 * time, else its generation. sx: fd's statx, where it was asked (with
 * STATX_BTIME), else NULL.
 */
static void note_identity(struct rfile *f, int fd, const struct statx *sx)
{
	if (sx) {
		f->has_born = sx->stx_mask & STATX_BTIME;
		f->born = sx->stx_btime;
	} else {
		f->has_born = birth_of(fd, &f->born);
	}
	f->has_gen = !f->has_born && gen_of(fd, &f->gen);
}

/*
 * Is fd (same dev and inode number) still f? An inode number is reused
 * once the file is deleted and closed: another file born since is not it
 * (a deleted file's pages would be recorded under its path). Where the
 * filesystem keeps no birth time, the generation tells (ext4 gives each
 * new inode another).
 */
static bool same_birth(const struct rfile *f, int fd)
{
	struct statx_timestamp b;
	uint32_t g;

	if (f->has_born)
		return !birth_of(fd, &b) ||
		       (b.tv_sec == f->born.tv_sec && b.tv_nsec == f->born.tv_nsec);
	return !f->has_gen || !gen_of(fd, &g) || g == f->gen;
}

/*
 * Note where fd (an O_PATH fd of f) is: its path now, if the path leads
 * back to it (a dentry the kernel could not connect to its directory has
 * a path that says nothing), or that it is deleted. The fd is closed: no
 * file is held open while recording, so no filesystem is kept busy (a
 * system-wide recording would otherwise make every umount fail). What is
 * known of fd already is not asked again: its fstat (st) or its statx
 * with the birth time (sx), or neither (NULL). The link is read through
 * fddir (an fd of /proc/self/fd: a lookup of one name), or -1.
 */
static void note_path(struct rfile *f, int fd, const struct stat *st, const struct statx *sx,
		      int fddir)
{
	char link[64], path[PATH_MAX + 16];
	struct stat own, pst;
	ssize_t k;

	snprintf(link, sizeof(link), "%s%d", fddir >= 0 ? "" : "/proc/self/fd/", fd);
	k = readlinkat(fddir >= 0 ? fddir : AT_FDCWD, link, path, sizeof(path) - 1);
	if (sx) {
		memset(&own, 0, sizeof(own));
		own.st_dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
		own.st_ino = sx->stx_ino;
		own.st_nlink = sx->stx_nlink;
		st = &own;
	} else if (!st) {
		st = fstat(fd, &own) == 0 ? &own : NULL;
	}
	if (k > 0 && st && st->st_dev == f->dev && st->st_ino == f->ino) {
		path[k] = 0;
		if (st->st_nlink == 0 || (k > 10 && !strcmp(path + k - 10, " (deleted)")))
			f->gone = true;
		else if (path[0] == '/' && stat(path, &pst) == 0 && pst.st_dev == f->dev &&
			 pst.st_ino == f->ino) {
			f->seen = strdup(path);
			note_identity(f, fd, sx);
		}
	}
	close(fd);
}

/* Is dev mounted nowhere in our mount namespace (a container's layers)? */
static bool dev_hidden(struct pc_rec *r, uint64_t dev)
{
	bool hidden;

	for (size_t i = 0; i < r->ndevs; i++)
		if (r->devs[i] == dev)
			return r->hidden[i];
	if (r->ndevs == sizeof(r->devs) / sizeof(r->devs[0]))
		return false;	/* so many devices: not judged (nor read again) */
	hidden = pc_dev_mounted((dev_t)dev) == 0 && major(dev);	/* not the bdev pseudo-fs */
	r->devs[r->ndevs] = dev;
	r->hidden[r->ndevs++] = hidden;
	return hidden;
}

/*
 * A file of an overlay whose real file is out of reach (inside a container:
 * its layers are on a filesystem mounted nowhere in our namespace): the one
 * file of the events of its inode number on such a device, or NULL. Only
 * a file of an overlay (fd: open on it): a file of the same number on
 * another filesystem is another file. fd -1: the candidate, by the number.
 */
static struct rfile *hidden_one(struct pc_rec *r, int fd, const struct stat *st)
{
	struct rfile *one = NULL, *g;
	struct statfs sf;
	int found = 0;

	for (size_t i = 0; i < r->ndevs; i++)
		if (r->hidden[i] && (g = lookup(r, r->devs[i], (uint64_t)st->st_ino, false))) {
			one = g;
			found++;
		}
	if (found != 1 || (fd >= 0 && (fstatfs(fd, &sf) < 0 || sf.f_type != OVERLAYFS_SUPER_MAGIC)))
		return NULL;
	return one;
}

/*
 * A process's file of an overlay (a container's): events name the real
 * file in a layer, so its path is the one the process used, which leads
 * to the overlay file (sdev, sino), not to the event's inode. Where the
 * real file is out of reach (inside a container: its layers are the
 * host's paths, on a filesystem it does not mount), the overlay shows the
 * real inode number (without xino): the one file of that number on a
 * device of the events that we do not mount is it.
 */
static void note_stacked(struct pc_rec *r, int fd, const struct stat *st)
{
	dev_t devs[6];
	uint64_t inos[6];
	char link[64], path[PATH_MAX + 16];
	struct stat pst;
	bool real;
	ssize_t k;
	int n;

	n = pc_fd_stack_ids(fd, devs, inos, 6, &real);
	if (n >= 0 && n < 6 && !real) {
		struct rfile *one = hidden_one(r, fd, st);

		if (one) {
			devs[n] = (dev_t)one->dev;
			inos[n++] = one->ino;
		}
	}
	for (int i = 0; i < n; i++) {
		struct rfile *f = lookup(r, devs[i], inos[i], false);

		if (!f || f->seen || f->gone)
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		k = readlink(link, path, sizeof(path) - 1);
		if (k <= 0)
			break;
		path[k] = 0;
		if (st->st_nlink == 0 || (k > 10 && !strcmp(path + k - 10, " (deleted)")))
			f->gone = true;
		else if (path[0] == '/' && stat(path, &pst) == 0 && pst.st_dev == st->st_dev &&
			 pst.st_ino == st->st_ino && (f->seen = strdup(path))) {
			f->sdev = st->st_dev;
			f->sino = st->st_ino;
			note_identity(f, fd, NULL);
		}
		break;
	}
	close(fd);
}

/*
 * A file a process maps or holds open (target.c, every name as is: a
 * deleted one is noted gone): where it is, if it is one of the table's or
 * the overlay file of one. Takes the pin, and closes it.
 */
static int scan_file(const struct pc_target_file *tf, void *arg)
{
	struct pc_rec *r = arg;
	struct rfile *f = lookup(r, tf->st->st_dev, tf->st->st_ino, false);

	if (!f)
		note_stacked(r, tf->fd, tf->st);
	else if (!f->seen && !f->gone)
		note_path(f, tf->fd, tf->st, NULL, r->fddir);
	else
		close(tf->fd);
	return 1;	/* taken: not offered again this round */
}

/*
 * Where the round's new files are: through the processes' handles (what
 * they map or hold open: target.c, as --pid's files are found), else
 * by handle (pc_inode_open) now, while the file was just used and its
 * dentry is surely cached (opened after a drop_caches it could be a
 * disconnected dentry, whose path says nothing).
 */
void pc_rec_scan(struct pc_rec *r)
{
	struct pc_target t = { .every = true, .file = scan_file, .arg = r };
	struct pc_inode_mnts m = { .n = 0 };

	if (r->scanned_upto == r->nfiles && !r->nscan)
		return;	/* nothing new this round */
	if (r->fddir == -2) {	/* once: procfs, not a filesystem a recording keeps busy */
		int fd = pc_proc_fd_dir();

		r->fddir = fd >= 0 ? fd : -1;
	}
	for (size_t i = r->scanned_upto; i < r->nfiles; i++)
		(void)dev_hidden(r, r->files[i]->dev);	/* for note_stacked */
	for (size_t i = 0; i < r->nscan; i++)
		(void)pc_target_pid(&t, r->scan[i]);	/* gone meanwhile: by handle below */
	pc_target_release(&t);
	for (size_t i = r->scanned_upto; i < r->nfiles; i++) {
		struct rfile *f = r->files[i];
		struct statx sx;
		int fd;

		if (f->seen || f->gone)
			continue;
		fd = pc_inode_open_mnts(&m, f->dev, f->ino, O_PATH, &sx);
		if (fd >= 0)
			note_path(f, fd, NULL, &sx, r->fddir);
	}
	pc_inode_mnts_close(&m);	/* nothing held till the next round */
	/* the new files still not placed join those waiting for their processes' scans */
	for (size_t i = r->scanned_upto; i < r->nfiles; i++) {
		struct rfile *f = r->files[i];

		if (f->seen || f->gone)
			continue;
		if (pc_grow(&r->unplaced, &r->unplacedcap, r->nunplaced, sizeof(*r->unplaced)) < 0)
			break;	/* left out: its process scanned again as its events come */
		r->unplaced[r->nunplaced++] = f;
	}
	/*
	 * and a try counted against each of them, those placed or out of
	 * tries dropped: a round looks at these, not at every file (a
	 * long recording's hundreds of thousands, ten times a second)
	 */
	if (r->nscan) {
		size_t k = 0;

		for (size_t i = 0; i < r->nunplaced; i++) {
			struct rfile *f = r->unplaced[i];

			if (!f->seen && !f->gone && ++f->scans < REC_SCAN_TRIES)
				r->unplaced[k++] = f;
		}
		r->nunplaced = k;
	}
	r->scanned_upto = r->nfiles;
	r->nscan = 0;
}


/* ---- at the end: spans to runs and times ---- */

static int by_first(const void *a, const void *b)
{
	const struct pc_span *x = a, *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorted, merged (first, last) of spans sp[0..n) and of pairs (first, count); sp is used up. */
static struct pc_span *present_set(struct pc_span *sp, size_t nsp, const uint64_t *runs,
				   size_t nruns, size_t *ret_n)
{
	size_t n = nsp + nruns, k = 0;
	struct pc_span *v = realloc(sp, (n ? n : 1) * sizeof(*v));

	if (!v) {
		free(sp);
		return NULL;
	}
	k = nsp;
	for (size_t i = 0; i < nruns; i++)
		if (runs[2 * i + 1])
			v[k++] = (struct pc_span){ runs[2 * i], runs[2 * i] + runs[2 * i + 1] - 1, 0 };
	if (k)
		qsort(v, k, sizeof(*v), by_first);
	n = 0;
	for (size_t i = 0; i < k; i++) {
		if (n && v[i].first <= v[n - 1].last + 1) {
			if (v[i].last > v[n - 1].last)
				v[n - 1].last = v[i].last;
		} else {
			v[n++] = v[i];
		}
	}
	*ret_n = n;
	return v;
}

struct result {
	uint64_t *runs;			/* pairs (first, count) */
	size_t nruns;
	uint64_t *used;			/* triples (first, count, ms) */
	size_t nused;
	uint64_t pages;
};

/*
 * The pages of spans (clipped to npages), each at the earliest time a span
 * gave it: elementary segments between all span boundaries, each taking
 * the least ms of the spans over it.
 */
static int resolve_times(struct pc_span *sp, size_t n, uint64_t npages, struct result *res)
{
	uint64_t *b = NULL;
	uint32_t *t = NULL;
	size_t nb = 0, k;
	int rc = -ENOMEM;

	memset(res, 0, sizeof(*res));
	if (!n || !npages)
		return 0;
	b = malloc(2 * n * sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		if (sp[i].first >= npages)
			continue;
		if (sp[i].last >= npages)
			sp[i].last = npages - 1;
		b[nb++] = sp[i].first;
		b[nb++] = sp[i].last + 1;
	}
	if (!nb) {
		free(b);
		return 0;
	}
	qsort(b, nb, sizeof(*b), by_u64);
	k = 0;
	for (size_t i = 0; i < nb; i++)
		if (!k || b[i] != b[k - 1])
			b[k++] = b[i];
	nb = k;				/* segments [b[j], b[j+1]) */
	t = malloc(nb * sizeof(*t));
	if (!t)
		goto out;
	for (size_t j = 0; j < nb; j++)
		t[j] = UINT32_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t lo = 0, hi = nb;

		if (sp[i].first >= npages)
			continue;
		while (lo < hi) {	/* the segment that begins at first */
			size_t mid = (lo + hi) / 2;

			if (b[mid] < sp[i].first)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t j = lo; j + 1 < nb && b[j] <= sp[i].last; j++)
			if (sp[i].ms < t[j])
				t[j] = sp[i].ms;
	}
	res->runs = malloc(2 * nb * sizeof(*res->runs));
	res->used = malloc(3 * nb * sizeof(*res->used));
	if (!res->runs || !res->used)
		goto out;
	for (size_t j = 0; j + 1 < nb; j++) {
		uint64_t first = b[j], count = b[j + 1] - b[j];

		if (t[j] == UINT32_MAX)
			continue;
		res->pages += count;
		if (res->nruns && res->runs[2 * res->nruns - 2] + res->runs[2 * res->nruns - 1] == first)
			res->runs[2 * res->nruns - 1] += count;
		else {
			res->runs[2 * res->nruns] = first;
			res->runs[2 * res->nruns + 1] = count;
			res->nruns++;
		}
		if (res->nused && res->used[3 * res->nused - 3] + res->used[3 * res->nused - 2] == first &&
		    res->used[3 * res->nused - 1] == t[j])
			res->used[3 * res->nused - 2] += count;
		else {
			res->used[3 * res->nused] = first;
			res->used[3 * res->nused + 1] = count;
			res->used[3 * res->nused + 2] = t[j];
			res->nused++;
		}
	}
	rc = 0;
out:
	free(b);
	free(t);
	if (rc) {
		free(res->runs);
		free(res->used);
		memset(res, 0, sizeof(*res));
	}
	return rc;
}

/*
 * The spans of f that were used: get_pages and faults, first (*ret_nused
 * of them); then the part of map_pages' requests whose pages were there
 * (added, or resident at the end: rfd >= 0 reads that, else only what was
 * added counts). Those were mapped around a fault, not known to be used:
 * the event names the window, not the page touched (pagecache-record(1)).
 */
static int used_spans(const struct rfile *f, int rfd, uint64_t size, struct pc_span **ret,
		      size_t *ret_n, size_t *ret_nused)
{
	struct pc_span *v = NULL, *mapped = NULL, *present = NULL, *added;
	size_t n = 0, nm = 0, np = 0, nadded;
	uint64_t *runs = NULL;
	size_t nruns = 0;
	int rc = -ENOMEM;

	if (pc_spanset_array(&f->used, &v, &n) < 0)
		return -ENOMEM;
	if (f->mapped.n) {
		if (pc_spanset_array(&f->mapped, &mapped, &nm) < 0 ||
		    pc_spanset_array(&f->added, &added, &nadded) < 0)
			goto out;
		if (rfd >= 0 && pc_fd_resident_runs(rfd, size, 0, 0, &runs, &nruns) < 0) {
			runs = NULL;
			nruns = 0;
		}
		present = present_set(added, nadded, runs, nruns, &np);
		free(runs);
		if (!present)
			goto out;
		/* both sorted and disjoint: one walk meets each pair that overlaps */
		{
			struct pc_span *g = realloc(v, (n + nm + np + 1) * sizeof(*v));

			if (!g)
				goto out;
			v = g;
		}
		for (size_t i = 0, j = 0; i < nm && j < np;) {
			uint64_t a = mapped[i].first > present[j].first ? mapped[i].first
									 : present[j].first;
			uint64_t b = mapped[i].last < present[j].last ? mapped[i].last : present[j].last;

			if (a <= b)
				v[n++] = (struct pc_span){ a, b, mapped[i].ms };
			if (mapped[i].last < present[j].last)
				i++;
			else
				j++;
		}
	}
	*ret = v;
	*ret_n = n;
	*ret_nused = f->used.n;
	v = NULL;
	rc = 0;
out:
	free(v);
	free(mapped);
	free(present);
	return rc;
}

/* ---- the recording's end: files, paths ---- */

/* The block device whose kernel dev_t an event of the bdev filesystem names. */
static bool bdev_of(uint64_t ino, char *name, size_t len, uint64_t *ret_rdev, uint64_t *ret_size)
{
	unsigned ma = (unsigned)(ino >> 20), mi = (unsigned)(ino & 0xfffff);
	char path[128], sz[64];

	if (ino >> 32 || pc_bdev_name(makedev(ma, mi), name, len) < 0)
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/size", ma, mi);
	*ret_size = pc_read_text(path, sz, sizeof(sz)) >= 0 ? strtoull(sz, NULL, 10) * 512 : 0;
	*ret_rdev = makedev(ma, mi);
	return true;
}

static bool stopped(const struct pc_rec_resolve_opts *ro)
{
	return ro->stop && ro->stop(ro->arg);
}

static void failed(const struct pc_rec_resolve_opts *ro, const char *path, const char *what,
		   int err)
{
	if (ro->on_error)
		ro->on_error(ro->arg, path, what, err);
}

static int keep(struct pc_rec_result *o, struct pc_profile_file *pf)
{
	if (pc_grow(&o->pf, &o->cap, o->npf, sizeof(*o->pf)) < 0) {
		pc_profile_file_release(pf);
		return -ENOMEM;
	}
	o->pf[o->npf++] = *pf;
	return 0;
}

static void finish_bdev(struct rfile *f, struct pc_rec_result *o,
			const struct pc_rec_resolve_opts *ro, const char *name, uint64_t rdev,
			uint64_t size)
{
	struct pc_profile_file pf = { 0 };
	struct result res;
	struct pc_span *v, *u = NULL, *ad = NULL;
	size_t n = f->used.n + f->added.n, nu, nad;
	uint64_t npages = size ? (size + pc_page_size() - 1) / pc_page_size() : UINT64_MAX;

	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v) {
		failed(ro, name, "cannot record metadata of", ENOMEM);
		return;
	}
	/* metadata is read through buffer heads: pages added are the pages used */
	if (pc_spanset_array(&f->used, &u, &nu) < 0 || pc_spanset_array(&f->added, &ad, &nad) < 0) {
		free(u);
		free(v);
		failed(ro, name, "cannot record metadata of", ENOMEM);
		return;
	}
	if (nu)	/* memcpy from NULL is undefined, even of 0 bytes */
		memcpy(v, u, nu * sizeof(*v));
	if (nad)
		memcpy(v + nu, ad, nad * sizeof(*v));
	free(u);
	free(ad);
	if (resolve_times(v, n, npages, &res) < 0) {
		free(v);
		failed(ro, name, "cannot record metadata of", ENOMEM);
		return;
	}
	free(v);
	if (!res.nruns) {
		free(res.runs);
		free(res.used);
		return;
	}
	pf.path = strdup(name);
	pf.size = size;
	pf.dev = rdev;
	pf.runs = res.runs;
	pf.nruns = res.nruns;
	pf.ident = PC_IDENT_BDEV;
	pf.used = res.used;
	pf.nused = res.nused;
	if (!pf.path || keep(o, &pf) < 0) {
		failed(ro, name, "cannot record metadata of", ENOMEM);
		return;
	}
	o->bdevs++;
	o->meta_pages += res.pages;
}

static void finish_file(struct rfile *f, struct pc_rec_result *o,
			const struct pc_rec_resolve_opts *ro)
{
	const char *root = ro->root;
	size_t rootlen = strlen(root);
	struct pc_profile_file pf = { 0 };
	char link[64], path[PATH_MAX + 16];
	struct result res, ures;
	struct pc_span *v = NULL;
	struct stat st;
	size_t n = 0, nused = 0;
	uint64_t npages;
	ssize_t k;
	int fd = f->pfd, rfd;

	if (!f->used.n && !f->mapped.n) {
		o->unused++;	/* only brought in (readahead, or metadata of a file): not used */
		return;
	}
	if (fd < 0) {
		o->unresolved++;
		return;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		o->unresolved++;
		goto out;
	}
	if (st.st_nlink == 0) {
		o->deleted++;
		goto out;
	}
	k = readlink(link, path, sizeof(path) - 1);
	if (k <= 0 || path[0] != '/') {
		o->unresolved++;
		goto out;
	}
	path[k] = 0;
	if (k > 10 && !strcmp(path + k - 10, " (deleted)")) {
		o->deleted++;
		goto out;
	}
	{
		/* a disconnected dentry's path is not the file's: it must lead to it */
		struct stat pst;

		if (stat(path, &pst) < 0 || pst.st_dev != st.st_dev || pst.st_ino != st.st_ino) {
			o->unresolved++;
			goto out;
		}
	}
	if (strncmp(path, root, rootlen) || (rootlen > 1 && path[rootlen] != '/') ||
	    !path[rootlen]) {
		o->outside++;
		goto out;
	}
	/* a readable fd of this very inode, for residency and its identity */
	rfd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd >= 0) {
		struct stat rst;

		if (fstat(rfd, &rst) < 0 || rst.st_ino != st.st_ino || rst.st_dev != st.st_dev) {
			close(rfd);
			rfd = -1;
		}
	}
	/* the cached runs: all of it; the used triples: what was read or faulted */
	npages = ((uint64_t)st.st_size + pc_page_size() - 1) / pc_page_size();
	if (used_spans(f, rfd, (uint64_t)st.st_size, &v, &n, &nused) < 0 ||
	    resolve_times(v, nused, npages, &ures) < 0) {
		failed(ro, path, "cannot record", ENOMEM);
		free(v);
		if (rfd >= 0)
			close(rfd);
		goto out;
	}
	if (resolve_times(v, n, npages, &res) < 0) {
		failed(ro, path, "cannot record", ENOMEM);
		free(v);
		free(ures.runs);
		free(ures.used);
		if (rfd >= 0)
			close(rfd);
		goto out;
	}
	free(v);
	free(ures.runs);
	free(res.used);
	res.used = ures.used;
	res.nused = ures.nused;
	if (!res.nruns) {	/* all of it past the end of a file that shrank */
		o->unused++;
		if (rfd >= 0)
			close(rfd);
		goto out;
	}
	pf.path = strdup(path + rootlen + (rootlen > 1));
	pf.size = (uint64_t)st.st_size;
	pf.mtime_s = st.st_mtim.tv_sec;
	pf.mtime_ns = (uint32_t)st.st_mtim.tv_nsec;
	pf.dev = st.st_dev;
	pf.ino = st.st_ino;
	if (rfd >= 0) {
		pc_profile_identify(rfd, &pf);
		close(rfd);
	}
	pf.runs = res.runs;
	pf.nruns = res.nruns;
	pf.used = res.used;
	pf.nused = res.nused;
	if (!pf.path || keep(o, &pf) < 0) {
		failed(ro, path, "cannot record", ENOMEM);
		goto out;
	}
	o->files++;
	o->pages += ures.pages;
	o->mapped += res.pages - ures.pages;
out:
	close(fd);
	f->pfd = -1;
}

/*
 * The last resort for files that neither the processes' handles nor a
 * file handle found (filesystems whose handles need the generation: XFS,
 * btrfs): a walk of the root (walk.c: in parallel, no link followed, no
 * FIFO or device opened), only through the filesystems those files are
 * on, at most WALK_MAX entries; it ends once all are found.
 */
#define WALK_MAX 1000000

static bool walk_dev(const struct walk_set *w, dev_t dev)
{
	for (size_t i = 0; i < w->ndevs; i++)
		if (!w->devs[i] || w->devs[i] == dev)
			return true;
	return false;
}

static int add_root(char ***v, size_t *n, size_t *cap, const char *path)
{
	char *p = strdup(path);

	if (!p || pc_grow(v, cap, *n, sizeof(**v)) < 0) {
		free(p);
		return -ENOMEM;
	}
	(*v)[(*n)++] = p;
	return 0;
}

/*
 * Where the walk starts: the root, where it is on one of the files'
 * filesystems, and each mount point beneath it that is on one, each
 * walked on its own filesystem only (one_fs): a filesystem none of them
 * is on is never entered. A mount point that mountinfo escapes (a space
 * in its name) is not one we try. Where any filesystem may hold them (an
 * overlay's, or too many to tell), the root alone, across all of them.
 */
static int walk_roots(const char *root, struct walk_set *w, char ***ret, size_t *ret_n)
{
	size_t n = 0, cap = 0, rootlen = strlen(root), len = 0;
	char **v = NULL, *line = NULL;
	struct stat st;
	FILE *f;
	int rc = 0;

	*ret = NULL;
	*ret_n = 0;
	if (w->hidden || walk_dev(w, 0) || (stat(root, &st) == 0 && walk_dev(w, st.st_dev)))
		rc = add_root(&v, &n, &cap, root);
	if (rc < 0 || w->hidden || walk_dev(w, 0))
		goto out;
	f = fopen("/proc/self/mountinfo", "re");
	while (f && rc == 0 && getline(&line, &len, f) > 0 && !stopped(w->ro)) {
		char *mp = line;

		/* ID, parent ID, major:minor, root, then the mount point */
		for (int i = 0; i < 4 && mp; i++)
			if ((mp = strchr(mp, ' ')))
				mp++;
		if (!mp || !strchr(mp, ' '))
			continue;
		*strchr(mp, ' ') = 0;
		if (strchr(mp, '\\') || strncmp(mp, root, rootlen) ||
		    (rootlen > 1 && mp[rootlen] != '/'))
			continue;	/* escaped, or not beneath the root */
		if (strcmp(mp, root) && stat(mp, &st) == 0 && S_ISDIR(st.st_mode) &&
		    walk_dev(w, st.st_dev))
			rc = add_root(&v, &n, &cap, mp);
	}
	free(line);
	if (f)
		fclose(f);
out:
	if (rc < 0) {
		while (n)
			free(v[--n]);
		free(v);
		return rc;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* A regular file the walk came to: one of those looked for? (the walk's threads) */
static int walk_file(struct pc_walk_entry *e, void *arg)
{
	struct walk_set *w = arg;
	struct rfile *f;
	bool stacked = false;
	int rc = 0;

	if (__atomic_add_fetch(&w->seen, 1, __ATOMIC_RELAXED) > WALK_MAX || stopped(w->ro))
		return 1;
	pthread_mutex_lock(&w->lock);
	f = lookup(w->r, e->st.st_dev, e->st.st_ino, false);
	if (!f && w->hidden && (f = hidden_one(w->r, -1, &e->st)))
		stacked = true;	/* a candidate: its fd tells */
	if (f && f->walk && f->pfd < 0 && (!stacked || hidden_one(w->r, e->fd, &e->st) == f)) {
		f->pfd = e->fd;	/* that very file: the walk opened it */
		e->fd = -1;
		rc = --w->left == 0;	/* all found: the walk is over */
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}

static void walk_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct walk_set *w = arg;

	(void)path;
	(void)err;
	if (ev == PC_WALK_DIR)	/* directories count against WALK_MAX too */
		__atomic_add_fetch(&w->seen, 1, __ATOMIC_RELAXED);
}

static void walk_root(const char *root, struct walk_set *w)
{
	struct pc_walk_opts wo = { .file = walk_file, .event = walk_event, .arg = w,
				   .event_arg = w };
	char **roots;
	size_t nroots;

	w->left = w->n;
	for (size_t i = 0; i < w->n; i++) {
		size_t k = 0;

		while (k < w->ndevs && w->devs[k] != w->v[i]->dev)
			k++;
		if (k == w->ndevs && w->ndevs < 16)
			w->devs[w->ndevs++] = w->v[i]->dev;
		else if (k == w->ndevs)
			w->devs[0] = 0;	/* too many to tell: every filesystem */
		if (dev_hidden(w->r, w->v[i]->dev))
			w->hidden = true;
	}
	if (walk_roots(root, w, &roots, &nroots) < 0)
		return;
	wo.one_fs = !w->hidden && !walk_dev(w, 0);
	pthread_mutex_init(&w->lock, NULL);
	if (nroots && !stopped(w->ro))
		(void)pc_walk((const char *const *)roots, nroots, &wo);	/* what it found counts */
	pthread_mutex_destroy(&w->lock);
	while (nroots)
		free(roots[--nroots]);
	free(roots);
}

static int by_path(const void *a, const void *b)
{
	const struct pc_profile_file *x = a, *y = b;

	return strcmp(x->path, y->path);
}

/*
 * One file used, at the end: its path found (where it was seen, else by
 * its handle) and finished; or left to a walk of the root, or to the block
 * devices (bdevs), or counted as unused or deleted.
 */
static void resolve_one(struct pc_rec *r, const struct pc_rec_resolve_opts *ro,
			struct pc_rec_result *o, struct rfile *f)
{
	char name[64];
	uint64_t rdev, size;
	int fd;

	/* the bdev pseudo-filesystem (no mount): the inode number is a disk's dev_t */
	if (!major(f->dev) && !f->seen && !f->gone) {
		fd = pc_inode_open(f->dev, f->ino, O_PATH);
		if (fd >= 0)
			close(fd);	/* a file after all */
		else if (fd == -ENODEV && bdev_of(f->ino, name, sizeof(name), &rdev, &size)) {
			if (pc_grow(&r->bdevs.v, &r->bdevs.cap, r->bdevs.n, sizeof(*r->bdevs.v)) == 0)
				r->bdevs.v[r->bdevs.n++] = f;	/* after the files: see keep_bdevs */
			return;
		}
	}
	if (!f->used.n && !f->mapped.n) {
		o->unused++;	/* only brought in (readahead, a file's metadata): not used */
		return;
	}
	/* where it was seen, if it is still there; else where it is now */
	if (f->seen) {
		struct stat pst;

		fd = open(f->seen, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &pst) < 0 ||
				pst.st_dev != (f->sdev ? f->sdev : f->dev) ||
				pst.st_ino != (f->sdev ? f->sino : f->ino) ||
				!same_birth(f, fd))) {
			close(fd);
			fd = -1;
		}
		if (fd >= 0)
			f->pfd = fd;
	}
	if (f->pfd < 0) {
		f->pfd = pc_inode_open(f->dev, f->ino, O_PATH);
		if (f->pfd >= 0 && !same_birth(f, f->pfd)) {
			close(f->pfd);	/* its inode number, another file's now */
			f->pfd = -1;
		}
	}
	if (f->pfd >= 0 && !f->sdev) {
		/* a layer's file: by the path through the overlay, as a
		   container's process named it */
		char *op = NULL;
		int ofd;

		if (pc_fd_unstack(f->pfd, &op) == 0 &&
		    (ofd = open(op, O_PATH | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			close(f->pfd);
			f->pfd = ofd;
		}
		free(op);
	}
	if (f->pfd < 0 && (f->seen || f->gone)) {
		f->pfd = -1;
		o->deleted++;	/* it was there while used, and is no more */
		return;
	}
	if (f->pfd < 0) {
		f->pfd = -1;
		if (pc_grow(&r->walk.v, &r->walk.cap, r->walk.n, sizeof(*r->walk.v)) == 0) {
			r->walk.v[r->walk.n++] = f;	/* found by a walk of the root, or never */
			f->walk = true;
			return;
		}
	}
	finish_file(f, o, ro);
}

/* The files no path or handle found: a walk of the root, then finished. */
static void resolve_walked(struct pc_rec *r, const struct pc_rec_resolve_opts *ro,
			   struct pc_rec_result *o)
{
	r->walk.r = r;
	r->walk.ro = ro;
	walk_root(ro->root, &r->walk);
	for (size_t i = 0; i < r->walk.n; i++) {
		if (stopped(ro)) {	/* cut short: not found, or not read */
			o->cut++;
			if (r->walk.v[i]->pfd >= 0)
				close(r->walk.v[i]->pfd);
			r->walk.v[i]->pfd = -1;
			continue;
		}
		finish_file(r->walk.v[i], o, ro);
	}
}

/*
 * Metadata of the block devices under the recording: the one the root is
 * on, and those of the files kept; not of every disk the system touched.
 */
static void keep_bdevs(struct pc_rec *r, const struct pc_rec_resolve_opts *ro,
		       struct pc_rec_result *o)
{
	for (size_t i = 0, nfiles = o->npf; i < r->bdevs.n; i++) {
		struct rfile *f = r->bdevs.v[i];
		char name[64];
		uint64_t rdev, size;
		bool ours;

		if (!bdev_of(f->ino, name, sizeof(name), &rdev, &size))
			continue;
		ours = rdev == ro->root_dev;
		for (size_t k = 0; k < nfiles && !ours; k++)
			ours = o->pf[k].dev == rdev;
		if (ours)
			finish_bdev(f, o, ro, name, rdev, size);
		else
			o->other_bdevs++;
	}
}

int pc_rec_resolve(struct pc_rec *r, const struct pc_rec_resolve_opts *ro,
		   struct pc_rec_result *ret)
{
	if (!ro || ro->size != sizeof(*ro) || !ro->root)
		return -EINVAL;
	memset(ret, 0, sizeof(*ret));
	for (size_t i = 0; i < r->nfiles; i++) {
		struct rfile *f = r->files[i];

		if (f->dev == 0)
			continue;
		if (stopped(ro)) {	/* cut short: not looked for */
			ret->cut += f->used.n || f->mapped.n;
			continue;
		}
		resolve_one(r, ro, ret, f);
	}
	if (r->walk.n)
		resolve_walked(r, ro, ret);
	keep_bdevs(r, ro, ret);
	if (ret->npf)
		qsort(ret->pf, ret->npf, sizeof(*ret->pf), by_path);
	return 0;
}

void pc_rec_result_release(struct pc_rec_result *res)
{
	for (size_t i = 0; i < res->npf; i++)
		pc_profile_file_release(&res->pf[i]);
	free(res->pf);
	res->pf = NULL;
	res->npf = res->cap = 0;
}

int pc_rec_new(const struct pc_rec_opts *o, struct pc_rec **ret)
{
	struct pc_rec *r;

	if (!o || o->size != sizeof(*o))
		return -EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->self = o->self;
	r->fddir = -2;
	r->misses = o->misses;
	r->t0_ns = o->t0_ns;
	*ret = r;
	return 0;
}

void pc_rec_stats(const struct pc_rec *r, struct pc_rec_stats *ret)
{
	ret->events = r->events;
	ret->added_pages = r->added_pages;
	ret->nomem = r->nomem;
}

void pc_rec_free(struct pc_rec *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nfiles; i++) {
		struct rfile *f = r->files[i];

		if (f->pfd >= 0)
			close(f->pfd);
		free(f->seen);
		pc_spanset_release(&f->used);
		pc_spanset_release(&f->mapped);
		pc_spanset_release(&f->added);
		free(f);
	}
	free(r->files);
	if (r->fddir >= 0)
		close(r->fddir);
	pc_idmap_free(&r->ids);
	free(r->scan);
	free(r->unplaced);
	free(r->walk.v);
	free(r->bdevs.v);
	free(r);
}
