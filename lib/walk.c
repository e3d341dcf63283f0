/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * walk.c: visit every regular file under a set of roots, in parallel.
 *
 * Promises: a root named by the caller is followed if it is a symlink
 * (like ls) and opened once (or given as an fd the caller reached it by,
 * root_fds: then its path only names it, and is not walked); everything beneath it is reached from that
 * fd, one component at a time, with openat(parent fd, name, O_NOFOLLOW):
 * no path is ever walked again, so a directory swapped for a symlink
 * mid-walk cannot lead out of the tree. Symlinks inside trees are
 * followed only with `follow`. A file is opened only once it was seen to
 * be a regular file, and handed over only if the fd is that file; where a
 * link may lead anywhere (-L, roots), it is reached with O_PATH and that
 * very inode reopened, so a link retargeted at a device is never opened
 * (open_file says what each path costs and what is left). FIFOs,
 * sockets and devices inside trees are skipped unopened as listed, and
 * one swapped in after the listing is never opened where anyone but the
 * caller or root may write the directory (pc_dir_others_write: the batch
 * opens O_PATH there, and only a regular file is reopened); where only
 * they may, nobody else can swap one in (the batch's open is O_NONBLOCK
 * all the same, judged by its fd's fstat: file_opened; what is mounted on
 * a name is reached O_PATH and reopened, wherever it is); named as roots
 * they are refused unopened (a block device too: opening a device can
 * have effects, and its buffer cache is not a file's page cache). d_type
 * avoids a stat per directory entry; without -L the regular files of one
 * getdents64 buffer are opened together (openq.c: one io_uring_enter for
 * their opens and the last ones' closes, else one openat each), each
 * checked by one fstat before it is handed over (file_opened says why
 * that is enough; the fstat stays: the size is needed, and st_nlink,
 * st_dev and the fd's own type, while d_ino is not the fd's inode across
 * a bind mount or on overlayfs); a directory reached twice is walked
 * once: a loop (it is its own ancestor: a symlink or bind mount back up)
 * is PC_WALK_SKIP_LOOP, a second name for one walked elsewhere (a link
 * to a sibling, a root named twice) PC_WALK_DUP, as a hardlink; a file with several hardlinks is
 * visited once; -x is judged per root. Files and directories that vanish
 * or change between listing and opening are reported as vanished, not as
 * errors.
 *
 * Descriptors are bounded. A queued directory holds a reference on its
 * parent's node (name, dev, ino, fd), not an fd of its own. A node keeps
 * its fd while it is in use or among the most recently used idle ones
 * (at most RLIMIT_NOFILE/8, within 8..256); an evicted one is re-derived
 * when needed by openat from the nearest ancestor still open, one
 * component at a time, each checked against its recorded dev and ino (a
 * mismatch: the directory changed, reported as vanished). Roots keep
 * their fds while anything beneath them is queued; the LIFO queue keeps
 * few roots in flight at once. So open fds stay below the cap plus two
 * per worker, and a batch of files and a ring per worker (a quarter of
 * RLIMIT_NOFILE in all, batch_size), whatever the tree's width or depth.
 * Out of descriptors all the same (a low limit, a caller's own), a worker
 * makes room and waits for the others' (make_room, wait_for_fds).
 *
 * Roots may keep coming (pc_walk_fed: a list of names read as it is
 * walked): the caller's thread appends them beneath everything queued
 * while the workers walk, never more than FEED_HIGH waiting (fewer under
 * a low descriptor limit: a fed root may come with its fd), so memory
 * does not grow with the list; the order is that of pc_walk given them
 * all. What does grow is the set of files seen as roots, (dev, ino) each,
 * that keeps a file named twice to one visit.
 */
#define _GNU_SOURCE
#include "idmap.h"
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DENTS_BUF (64 * 1024)
#define BATCH_MAX 64			/* files opened together (openq.c) */
#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK)
#define FILE_FLAGS (O_RDONLY | O_NOATIME | O_NONBLOCK | O_NOCTTY)
#define PATH_FLAGS (O_PATH | O_NOFOLLOW)	/* a shared directory's files, first */
#define EMFILE_TRIES 40			/* one file's opens out of descriptors */
#define FEED_HIGH 256			/* fed roots queued at most (pc_walk_fed) */

/* A directory entered, kept while anything beneath it is queued. */
struct dnode {
	struct dnode *parent;		/* referenced; NULL for a root */
	struct dnode *prev, *next;	/* on the idle list */
	const char *name;		/* in parent (points into path) */
	char *path;			/* as reached from the root, for display */
	dev_t dev, root_dev;
	ino_t ino;			/* what a re-derived fd must be */
	int fd;				/* -1 while evicted */
	unsigned refs;			/* queued children, child nodes, lister */
	unsigned busy;			/* threads using fd now */
	bool idle;			/* on the idle list: fd may be evicted */
	bool plain;			/* not on a stacking filesystem */
	bool shared;			/* others may write it: files reached by O_PATH */
};

struct item {
	struct item *next;
	struct dnode *parent;		/* referenced; NULL: a root */
	char *path;			/* as reached from the root */
	const char *name;		/* in parent (into path); a root: path */
	int rootfd;			/* a root the caller reached (root_fds), or -1 */
	bool ownfd;			/* rootfd came from the feed: closed with the item */
};

struct idset {
	struct pc_idmap ids;	/* (dev, ino) -> 1: seen */
	pthread_mutex_t lock;
};

struct walker {
	const struct pc_walk_opts *o;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *stack;
	struct item *bottom;	/* the stack's last item: fed roots go beneath it */
	unsigned roots;		/* roots on the stack */
	bool feeding;		/* the feed may bring more: workers wait for it */
	unsigned feed_high;	/* fed roots queued at most: FEED_HIGH, or the fds' share */
	pthread_cond_t fed;	/* the feeder waits here for roots to run low */
	unsigned active;
	int stop;		/* first non-zero from file() */
	struct idset dirs, links;
	pthread_mutex_t ev_lock;
	pthread_mutex_t nlock;	/* nodes: refs, busy, fds, the idle list */
	struct dnode *idle_head, *idle_tail;	/* most recently used first */
	unsigned nopen;		/* evictable (non-root) fds open */
	unsigned maxopen;	/* ... kept open at most when idle */
	unsigned batch;		/* files opened together, per worker */
	uid_t euid;		/* the caller, as pc_dir_others_write judges */
	int procfd;		/* /proc/self/fd, for reopen_file; -1: none */
};

struct worker {
	struct walker *w;
	unsigned id;
	char *dents;
	struct dnode **chain;	/* scratch for re-deriving */
	size_t chaincap;
	struct pc_openq *q;	/* this thread's opens and closes */
	const char **names;	/* the batch: regular files of one dents buffer */
	int *fds;		/* ... opened: fd or -errno */
	unsigned nb;
	unsigned batch;		/* this worker's batch now (w->batch, halved at EMFILE) */
	bool starved;		/* out of fds for EMFILE_TRIES: no more waiting till one comes */
	char *pbuf;		/* the path being handed over */
	size_t pcap;
};

/* 1 if (dev, ino) was new, 0 if seen, -ENOMEM. */
static int idset_add(struct idset *s, uint64_t dev, uint64_t ino)
{
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	if (!pc_idmap_get(&s->ids, dev, ino))
		rc = pc_idmap_put(&s->ids, dev, ino, 1) < 0 ? -ENOMEM : 1;
	pthread_mutex_unlock(&s->lock);
	return rc;
}

static void event(struct walker *w, enum pc_walk_event ev, const char *path, int err)
{
	if (!w->o->event)
		return;
	pthread_mutex_lock(&w->ev_lock);
	w->o->event(ev, path, err, w->o->event_arg);
	pthread_mutex_unlock(&w->ev_lock);
}

static bool matches(const char *const *pats, const char *name)
{
	for (; pats && *pats; pats++)
		if (fnmatch(*pats, name, 0) == 0)
			return true;
	return false;
}

/* ---- nodes and their fds (all under w->nlock) ------------------------ */

static void idle_remove(struct walker *w, struct dnode *d)
{
	if (!d->idle)
		return;
	if (d->prev)
		d->prev->next = d->next;
	else
		w->idle_head = d->next;
	if (d->next)
		d->next->prev = d->prev;
	else
		w->idle_tail = d->prev;
	d->prev = d->next = NULL;
	d->idle = false;
}

static void pin(struct walker *w, struct dnode *d)
{
	d->busy++;
	idle_remove(w, d);
}

/* Close idle fds, the oldest first, until at most keep are open. */
static void evict_idle(struct walker *w, unsigned keep)
{
	while (w->nopen > keep && w->idle_tail) {
		struct dnode *old = w->idle_tail;

		idle_remove(w, old);
		close(old->fd);
		old->fd = -1;
		w->nopen--;
	}
}

/* Done with d's fd: a root keeps it; others go idle, the oldest closed. */
static void unpin(struct walker *w, struct dnode *d)
{
	if (--d->busy || !d->parent || d->fd < 0)
		return;
	d->next = w->idle_head;
	if (w->idle_head)
		w->idle_head->prev = d;
	else
		w->idle_tail = d;
	w->idle_head = d;
	d->idle = true;
	evict_idle(w, w->maxopen);
}

static void unref(struct walker *w, struct dnode *d)
{
	while (d && --d->refs == 0) {
		struct dnode *p = d->parent;

		idle_remove(w, d);
		if (d->fd >= 0) {
			close(d->fd);
			if (p)
				w->nopen--;
		}
		free(d->path);
		free(d);
		d = p;
	}
}

static void node_unpin(struct walker *w, struct dnode *d)
{
	pthread_mutex_lock(&w->nlock);
	unpin(w, d);
	pthread_mutex_unlock(&w->nlock);
}

static void node_unref(struct walker *w, struct dnode *d)
{
	pthread_mutex_lock(&w->nlock);
	unref(w, d);
	pthread_mutex_unlock(&w->nlock);
}

/* Open directory `name` beneath dirfd: never through a symlink unless -L. */
static int open_dir_at(struct walker *w, int dirfd, const char *name)
{
	int fd = openat(dirfd, name, DIR_FLAGS | (w->o->follow ? 0 : O_NOFOLLOW));

	return fd < 0 ? -errno : fd;
}

/*
 * d's fd, pinned until node_unpin(); reopened from the nearest ancestor
 * still open when it was evicted, each step checked against its dev and
 * ino. -ESTALE (or the open's -errno) if the tree changed on the way.
 */
static int node_fd(struct worker *wk, struct dnode *d)
{
	struct walker *w = wk->w;
	struct dnode *cur;
	size_t n = 0;

	pthread_mutex_lock(&w->nlock);
	for (cur = d; cur->fd < 0; cur = cur->parent) {
		if (n == wk->chaincap) {
			size_t ncap = n ? 2 * n : 64;
			struct dnode **nc = realloc(wk->chain, ncap * sizeof(*nc));

			if (!nc) {
				pthread_mutex_unlock(&w->nlock);
				return -ENOMEM;
			}
			wk->chain = nc;
			wk->chaincap = ncap;
		}
		wk->chain[n++] = cur;	/* a root is never evicted: this ends */
	}
	pin(w, cur);
	pthread_mutex_unlock(&w->nlock);
	while (n-- > 0) {
		struct dnode *x = wk->chain[n];
		int fd = open_dir_at(w, cur->fd, x->name);
		struct stat st;

		if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != x->dev || st.st_ino != x->ino)) {
			close(fd);
			fd = -ESTALE;
		}
		pthread_mutex_lock(&w->nlock);
		if (fd >= 0 && x->fd < 0) {
			x->fd = fd;
			w->nopen++;
		} else if (fd >= 0) {
			close(fd);	/* another thread got there first */
		}
		if (fd >= 0)
			pin(w, x);
		unpin(w, cur);
		pthread_mutex_unlock(&w->nlock);
		if (fd < 0)
			return fd;
		cur = x;
	}
	return cur->fd;
}

/* ---- the queue -------------------------------------------------------- */

/* Queue directory `name` of parent (referenced here), or a root (path). */
static int push(struct walker *w, struct dnode *parent, const char *path, int rootfd)
{
	struct item *it = calloc(1, sizeof(*it));
	const char *slash;

	if (!it || !(it->path = strdup(path))) {
		free(it);
		return -ENOMEM;
	}
	it->rootfd = rootfd;
	slash = strrchr(it->path, '/');
	it->name = parent && slash ? slash + 1 : it->path;
	it->parent = parent;
	if (parent) {
		pthread_mutex_lock(&w->nlock);
		parent->refs++;
		pthread_mutex_unlock(&w->nlock);
	}
	pthread_mutex_lock(&w->lock);
	it->next = w->stack;
	if (!w->stack)
		w->bottom = it;
	w->stack = it;
	if (!parent)
		w->roots++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

/*
 * A root from the feed, beneath everything queued: as if every root had
 * been pushed at the start, each tree is walked before the next root is
 * taken, and the roots in the feed's order. The walk owns rootfd.
 */
static int append_root(struct walker *w, const char *path, int rootfd)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it || !(it->path = strdup(path))) {
		free(it);
		return -ENOMEM;
	}
	it->rootfd = rootfd;
	it->ownfd = rootfd >= 0;
	it->name = it->path;
	pthread_mutex_lock(&w->lock);
	if (w->bottom)
		w->bottom->next = it;
	else
		w->stack = it;
	w->bottom = it;
	w->roots++;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

static void item_free(struct walker *w, struct item *it)
{
	if (it->parent)
		node_unref(w, it->parent);
	if (it->ownfd)
		close(it->rootfd);
	free(it->path);
	free(it);
}

static void set_stop(struct walker *w, int rc)
{
	pthread_mutex_lock(&w->lock);
	if (!w->stop)
		w->stop = rc;
	pthread_cond_broadcast(&w->cond);
	pthread_cond_broadcast(&w->fed);	/* the feeder reads no more */
	pthread_mutex_unlock(&w->lock);
}

/* ---- files ------------------------------------------------------------ */

/*
 * -x: is a file of another st_dev than the root on dir's own mount all the
 * same? On an overlay whose layers are on other filesystems (a container
 * root whose upper is not on the lower's filesystem) each layer's files
 * have a device of their own, the directories the overlay's: the mount
 * tells, not the device. Only asked there (a directory on a stacking
 * filesystem).
 */
static bool same_mount(int fd, const struct dnode *dir)
{
	struct statx a, b;

	if (!dir || dir->plain || dir->fd < 0)
		return false;
	return statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &a) == 0 &&
	       statx(dir->fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &b) == 0 &&
	       (a.stx_mask & b.stx_mask & STATX_MNT_ID) && a.stx_mnt_id == b.stx_mnt_id;
}

/* Hand over one open regular file (st: its fstat) to file(); closes fd. */
static void hand_over(struct worker *wk, int fd, const struct stat *st, const char *path,
		      dev_t root_dev, bool is_root, const struct dnode *dir)
{
	struct walker *w = wk->w;
	const struct pc_walk_opts *o = w->o;
	struct pc_walk_entry e = { .path = path, .fd = fd, .st = *st, .worker = wk->id };

	if (o->one_fs && !is_root && st->st_dev != root_dev && !same_mount(fd, dir)) {
		event(w, PC_WALK_SKIP_MOUNT, path, 0);
		goto out;
	}
	if (o->max_size && (uint64_t)st->st_size > o->max_size) {
		event(w, PC_WALK_SKIP_SIZE, path, 0);
		goto out;
	}
	/* a file can be reached twice by a hardlink, as a root, or through a link (-L) */
	if (!o->all_links && (st->st_nlink > 1 || is_root || o->follow)) {
		int r = idset_add(&w->links, st->st_dev, st->st_ino);

		if (r < 0) {
			event(w, PC_WALK_ERROR, path, -r);
			goto out;
		}
		if (r == 0) {
			event(w, PC_WALK_DUP, path, 0);
			goto out;
		}
	}
	if (o->file) {
		int rc;

		/*
		 * A file of a plain directory, on its device, is not an
		 * overlay's: residency need not ask statfs again. (An overlay
		 * file shows its layer's device, never that of a directory
		 * outside the overlay, but for a bind mount of one file.)
		 */
		if (dir && dir->plain && st->st_dev == dir->dev)
			pc_stack_hint(fd);
		rc = o->file(&e, o->arg);
		pc_stack_hint(-1);
		if (rc)
			set_stop(w, rc);
	}
out:
	if (e.fd >= 0)	/* -1 if file() kept it */
		pc_openq_close(wk->q, e.fd);
}

/*
 * pfd: an O_PATH fd of dirfd/name whose fstat (*pst) said regular file.
 * That very inode opened for reading, through /proc/self/fd (or root's
 * procfs of its own where /proc is not mounted: pc_proc_fd_dir),
 * whatever the name is now. With neither, the name is opened again
 * (O_NOFOLLOW | O_NONBLOCK) and kept only if it is the same inode, but
 * only where nobody else may swap it (!shared): in a shared directory a
 * FIFO or device swapped in between this fstat and that open would be
 * opened (in 53 of 1,000 racing walks, issue 21), so it is not opened:
 * -ENOMEDIUM ("/proc is not mounted"). -ESTALE: replaced.
 */
static int reopen_file(const struct walker *w, int pfd, const struct stat *pst, int dirfd,
		       const char *name, bool shared, struct stat *ret_st)
{
	struct stat st;
	int fd = pc_reopen_at(w->procfd, pfd, pst, FILE_FLAGS, w->procfd >= 0 ? NULL : &st);

	if (fd >= 0 && w->procfd >= 0) {
		*ret_st = *pst;	/* the very inode pfd holds: its fstat stands */
		return fd;
	}
	if (fd != -ENOENT || w->procfd >= 0 || access("/proc/self/fd", F_OK) == 0) {
		if (fd >= 0)
			*ret_st = st;
		return fd;
	}
	if (shared)
		return -ENOMEDIUM;
	fd = pc_sys_openat(dirfd, name, FILE_FLAGS | O_NOFOLLOW);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != pst->st_dev ||
	    st.st_ino != pst->st_ino) {
		close(fd);
		return -ESTALE;
	}
	*ret_st = st;
	return fd;
}

/*
 * Open a regular file for the walk where a name may be a link to
 * anything (-L, and roots), a device included, retargeted at will by
 * whoever owns it: the file is reached with O_PATH, checked with fstat,
 * and only a regular file is opened, that very inode (reopen_file).
 * O_PATH runs no driver's open and cannot block. That costs 5 system
 * calls a file. (Without -L, a file in a tree is opened in its
 * directory's batch: file_opened.)
 * shared: others may write dirfd (a root's: the user named it).
 * Returns the fd, or -errno: -EINVAL not a regular file (*ret_st says
 * what), -ESTALE replaced in between, -ENOMEDIUM no procfs (reopen_file).
 */
static int open_file(const struct walker *w, int dirfd, const char *name, bool shared,
		     struct stat *ret_st)
{
	struct stat pst;
	int pfd, fd;

	pfd = openat(dirfd, name, O_PATH | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &pst) < 0) {
		fd = -errno;
		close(pfd);
		return fd;
	}
	if (!S_ISREG(pst.st_mode)) {
		close(pfd);
		*ret_st = pst;
		return -EINVAL;
	}
	if (pc_fd_kernel_fs(pfd)) {	/* a link to /proc/kmsg, say */
		close(pfd);
		return -EREMOTEIO;
	}
	fd = reopen_file(w, pfd, &pst, dirfd, name, shared, ret_st);
	close(pfd);
	return fd;
}

static bool excluded(const struct pc_walk_opts *o, const char *name)
{
	return (o->include && *o->include && !matches(o->include, name)) ||
	       matches(o->exclude, name);
}

/*
 * With -L, one entry of a directory that is (or links to) a regular file:
 * opened by open_file, so it is handed over only if it is a regular file
 * when opened.
 */
static void do_file(struct worker *wk, const struct dnode *d, const char *name,
		    const char *path, dev_t root_dev)
{
	struct walker *w = wk->w;
	struct stat st;
	int fd;

	if (excluded(w->o, name)) {
		event(w, PC_WALK_SKIP_PATTERN, path, 0);
		return;
	}
	fd = open_file(w, d->fd, name, d->shared, &st);
	if (fd == -EINVAL) {
		/* a directory or a special file now: it was a file when listed */
		event(w, S_ISDIR(st.st_mode) ? PC_WALK_VANISHED : PC_WALK_SKIP_SPECIAL, path,
		      S_ISDIR(st.st_mode) ? ENOENT : 0);
	} else if (fd == -EREMOTEIO) {
		event(w, PC_WALK_SKIP_SPECIAL, path, 0);	/* procfs, sysfs, ... */
	} else if (fd == -ENOENT || fd == -ESTALE) {
		event(w, PC_WALK_VANISHED, path, ENOENT);
	} else if (fd < 0) {
		event(w, PC_WALK_ERROR, path, -fd);
	} else {
		hand_over(wk, fd, &st, path, root_dev, false, d);
	}
}

/*
 * A regular file named as a root (st: stat() of path, followed), or given
 * as rootfd (st: its fstat): that very inode reopened, the path not walked.
 */
static void do_root_file(struct worker *wk, const char *path, int rootfd, const struct stat *st)
{
	struct walker *w = wk->w;
	struct stat fst;
	int fd;

	if (rootfd < 0)
		fd = open_file(w, AT_FDCWD, path, false, &fst);
	else if (pc_fd_kernel_fs(rootfd))
		fd = -EREMOTEIO;
	else
		fd = reopen_file(w, rootfd, st, AT_FDCWD, path, true, &fst);	/* path: a name only */

	if (fd < 0) {
		/* swapped since the stat: not a file (EINVAL), or another one */
		event(w, PC_WALK_ERROR, path, -fd);
		return;
	}
	hand_over(wk, fd, &fst, path, st->st_dev, true, NULL);
}

/* ---- directories ------------------------------------------------------ */

/* dir/name in the worker's buffer (valid until the next join), or NULL. */
static char *join(struct worker *wk, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p = wk->pbuf;

	if (dl + nl + 2 > wk->pcap) {
		size_t ncap = (dl + nl + 2) * 2;

		p = realloc(wk->pbuf, ncap);
		if (!p)
			return NULL;
		wk->pbuf = p;
		wk->pcap = ncap;
	}
	memcpy(p, dir, dl);
	if (dl && dir[dl - 1] == '/')
		dl--;
	p[dl] = '/';
	memcpy(p + dl + 1, name, nl + 1);
	return p;
}

/*
 * Who may change what a directory's names are: anyone but the caller
 * (st: the directory's fstat; f_type: its statfs; euid: the caller's).
 * Renaming, linking or exchanging a name in a directory takes write
 * permission on that directory, so it is shared when
 *   - another user owns it (not root, not the caller): the owner may
 *     write it, or chmod it so;
 *   - its group write bit is set: the group's members may (with a POSIX
 *     ACL, those bits are the ACL's mask, which bounds every named user
 *     and group entry: a write granted to anyone there sets it);
 *   - its others write bit is set, sticky or not (/tmp: anyone may put a
 *     name there and exchange it with one of its own);
 *   - it is on FUSE, SMB/CIFS, 9p or a network or cluster filesystem
 *     (NFS, AFS, CephFS, Lustre, GPFS, OCFS2, GFS2), whose mode bits do not
 *     bind what a lookup answers: a FUSE server, another client or node,
 *     the server itself, a root squashed or mapped to another uid there.
 * Root counts as the caller: a user namespace's root is another uid
 * here, but a container that runs as the host's root is root.
 */
/* not in linux/magic.h: GFS2_MAGIC is linux/gfs2_ondisk.h's; Lustre's
   LL_SUPER_MAGIC (lustre_user.h) and GPFS's are out of tree (coreutils'
   stat.c knows them as S_MAGIC_LUSTRE and S_MAGIC_GPFS) */
#define GFS2_SUPER_MAGIC 0x01161970
#define LUSTRE_SUPER_MAGIC 0x0BD00BD0
#define GPFS_SUPER_MAGIC 0x47504653

bool pc_dir_others_write(const struct stat *st, unsigned long f_type, uid_t euid)
{
	switch (f_type) {
	case FUSE_SUPER_MAGIC:
	case SMB_SUPER_MAGIC:
	case CIFS_SUPER_MAGIC:
	case SMB2_SUPER_MAGIC:
	case V9FS_MAGIC:
	case NFS_SUPER_MAGIC:		/* v2, v3 and v4 alike */
	case AFS_SUPER_MAGIC:		/* OpenAFS */
	case AFS_FS_MAGIC:		/* kAFS */
	case CEPH_SUPER_MAGIC:
	case LUSTRE_SUPER_MAGIC:
	case GPFS_SUPER_MAGIC:
	case OCFS2_SUPER_MAGIC:
	case GFS2_SUPER_MAGIC:
		return true;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return true;
	return st->st_uid != 0 && st->st_uid != euid;
}

/*
 * Without -L, an entry listed as a regular file (d_type, or the fstatat
 * the lister needed for DT_UNKNOWN). What is in the directory can be
 * swapped in after the listing, by whoever may write it: a FIFO, a socket
 * or a device (a device only by CAP_MKNOD; a hard link to one is
 * cross-filesystem, or refused by protected_hardlinks).
 *
 * Where only the caller or root may write the directory, nobody else can
 * swap anything in: the file was opened as listed (FILE_FLAGS, fd): with
 * O_NOFOLLOW, so a link is not followed (ELOOP), and O_NONBLOCK, so a
 * FIFO cannot block the open; the fd's fstat says what it is, and only a
 * regular file is handed over. In a shared directory (pc_dir_others_write)
 * that open would run a device's driver or let a FIFO's writer through
 * (issue 21: a racer exchanging a file and a FIFO with RENAME_EXCHANGE had
 * the FIFO opened in 78 of 150 walks): fd is then an O_PATH fd
 * (PATH_FLAGS, in the same batch), which opens nothing; its fstat
 * decides, and only a regular file is opened, that very inode, through
 * /proc/self/fd (reopen_file). That is an open a file more (a procfs
 * lookup) and a close more in the ring: about twice the CPU time of the
 * batch on a tree of small files (docs/security.md), so it is kept to
 * shared directories. fd: the open's fd or -errno; this takes it.
 */
static bool no_fds(int fd)
{
	return fd == -EMFILE || fd == -ENFILE;
}

/*
 * Out of descriptors (a low hard limit, and a caller such as warm keeping
 * its own in flight): the closes queued are made and the idle directory
 * fds closed (re-derived when needed); while the other workers hold the
 * rest (each for one file or directory at a time), a pause that grows
 * with *tries, staggered by worker so that they do not meet again. False
 * once EMFILE_TRIES opens were out of descriptors: the open fails, and
 * until an open of this worker succeeds again each is tried once more
 * only, without a pause (the caller may hold every fd there is: a walk
 * must not wait on each of its files then).
 */
static bool may_retry(struct worker *wk, unsigned tries)
{
	if (tries < (wk->starved ? 1 : EMFILE_TRIES))
		return true;
	wk->starved = true;
	return false;
}

static bool wait_for_fds(struct worker *wk, unsigned *tries)
{
	struct walker *w = wk->w;

	if (!may_retry(wk, *tries))
		return false;
	pc_openq_flush(wk->q);
	pthread_mutex_lock(&w->nlock);
	evict_idle(w, 0);
	pthread_mutex_unlock(&w->nlock);
	if ((*tries)++)
		nanosleep(&(struct timespec){ .tv_nsec = *tries * 1000000L + wk->id % 8 * 125000L },
			  NULL);
	return true;
}

/*
 * The same for the open of the batch's file i; first the batch's fds after
 * i, opened and not yet looked at, are closed, to be opened again one by
 * one as their turn comes (in a shared directory they are O_PATH fds, each
 * wanting a second fd for its reopen: kept, they made the retry fail
 * again), and this worker's batches are halved.
 */
static bool make_room(struct worker *wk, unsigned i, unsigned *tries)
{
	for (unsigned j = i + 1; j < wk->nb; j++) {
		if (wk->fds[j] >= 0) {
			pc_openq_close(wk->q, wk->fds[j]);
			wk->fds[j] = -EMFILE;
		}
	}
	if (wk->batch > 1)
		wk->batch /= 2;
	return wait_for_fds(wk, tries);
}

static void file_opened(struct worker *wk, const struct dnode *d, unsigned i, int flags)
{
	struct walker *w = wk->w;
	const char *name = wk->names[i];
	int fd = wk->fds[i];
	char *path = join(wk, d->path, name);
	bool opath = flags & O_PATH;	/* fd is an O_PATH fd */
	bool mounted = false;		/* ... of what is mounted on the name */
	unsigned tries = 0;		/* opens out of descriptors */
	struct stat st;
	int rc;

	if (!path) {
		event(w, PC_WALK_ERROR, d->path, ENOMEM);
		pc_openq_close(wk->q, fd);
		return;
	}
again:
	if (no_fds(fd)) {
		/* out of descriptors, or one the batch gave back (make_room) */
		while (no_fds(fd) && make_room(wk, i, &tries))
			fd = pc_openq_open_one(d->fd, name, flags);
		opath = flags & O_PATH;
		mounted = false;
	}
	if (fd == -EXDEV) {
		/*
		 * Something is mounted on the name (a file bind-mounted over
		 * it, as runtimes mask files with /dev/null; FUSE that a user
		 * mounted on a file of its own): reached O_PATH across the
		 * mount and judged by that fd, as a shared directory's names
		 * are, in every directory. Never by name after a look: a FUSE
		 * server holding root's getattr can detach its mount and
		 * exchange the name with a FIFO before it answers "regular
		 * file" (issue 21; t-stat-uring).
		 */
		fd = pc_sys_openat(d->fd, name, PATH_FLAGS);
		opath = mounted = true;
	}
	if (fd == -ELOOP) {
		event(w, PC_WALK_SKIP_SYMLINK, path, 0);	/* a link now */
		return;
	}
	if (fd == -ENXIO || fd == -ENODEV) {
		event(w, PC_WALK_SKIP_SPECIAL, path, 0);	/* a socket, a device now */
		return;
	}
	if (fd == -ENOENT) {
		event(w, PC_WALK_VANISHED, path, ENOENT);
		return;
	}
	if (fd < 0) {
		event(w, PC_WALK_ERROR, path, -fd);
		return;
	}
	rc = pc_sys_fstat(fd, &st);
	if (rc < 0 || !S_ISREG(st.st_mode)) {
		/* at once, not with the next batch: a FIFO swapped in since the
		   listing lets its writer through for as long as it is open */
		close(fd);
		if (rc < 0)
			event(w, PC_WALK_ERROR, path, -rc);
		else if (S_ISDIR(st.st_mode))	/* a file when listed: that one is gone */
			event(w, PC_WALK_VANISHED, path, ENOENT);
		else if (S_ISLNK(st.st_mode))	/* O_PATH | O_NOFOLLOW: the link itself */
			event(w, PC_WALK_SKIP_SYMLINK, path, 0);
		else
			event(w, PC_WALK_SKIP_SPECIAL, path, 0);
		return;
	}
	if (opath) {
		int pfd = fd;
		struct stat pst = st;

		/* what -x or the kind of filesystem rules out is not opened at all */
		if (w->o->one_fs && st.st_dev != d->root_dev && !same_mount(pfd, d)) {
			pc_openq_close(wk->q, pfd);
			event(w, PC_WALK_SKIP_MOUNT, path, 0);
			return;
		}
		if (mounted && pc_fd_kernel_fs(pfd)) {	/* /proc/kmsg bound there, say */
			pc_openq_close(wk->q, pfd);
			event(w, PC_WALK_SKIP_SPECIAL, path, 0);
			return;
		}
		fd = reopen_file(w, pfd, &pst, d->fd, name, d->shared, &st);
		if (no_fds(fd) && may_retry(wk, tries)) {
			/* from the O_PATH open again, that fd let go meanwhile:
			   two workers each holding one and waiting for a second
			   would wait each other out */
			close(pfd);
			goto again;
		}
		pc_openq_close(wk->q, pfd);
		if (fd == -ENOENT || fd == -ESTALE) {
			event(w, PC_WALK_VANISHED, path, ENOENT);
			return;
		}
		if (fd < 0) {
			event(w, PC_WALK_ERROR, path, -fd);
			return;
		}
	}
	wk->starved = false;	/* fds came back, if they were short */
	hand_over(wk, fd, &st, path, d->root_dev, false, d);
}

/* Open the batch (names in wk->dents) together, then hand each over. */
static void flush_files(struct worker *wk, const struct dnode *d)
{
	struct walker *w = wk->w;
	int flags = d->shared ? PATH_FLAGS : FILE_FLAGS | O_NOFOLLOW;

	if (!wk->nb)
		return;
	pc_openq_openat(wk->q, d->fd, wk->names, wk->nb, flags, wk->fds);
	for (unsigned i = 0; i < wk->nb; i++) {
		if (w->stop)
			pc_openq_close(wk->q, wk->fds[i]);
		else
			file_opened(wk, d, i, flags);
	}
	wk->nb = 0;
}

/*
 * List d (pinned, one reference held by the caller; dst: its fstat) and
 * queue what is in it.
 */
static void list_dir(struct worker *wk, struct dnode *d, const struct stat *dst)
{
	struct walker *w = wk->w;
	const struct pc_walk_opts *o = w->o;
	struct statfs sf;
	struct stat st;
	long n;

	/*
	 * procfs, sysfs and their kin hold interfaces, not data: a tree there
	 * is not listed (a root there is refused). Judged per directory: the
	 * files in one are on its filesystem, but for bind mounts of single
	 * files, which only root makes. One statfs tells that and overlayfs.
	 */
	if (fstatfs(d->fd, &sf) < 0 || pc_fs_type_kernel((unsigned long)sf.f_type)) {
		event(w, d->parent ? PC_WALK_SKIP_SPECIAL : PC_WALK_ERROR, d->path,
		      d->parent ? 0 : EREMOTEIO);
		return;
	}
	d->plain = (unsigned long)sf.f_type != OVERLAYFS_SUPER_MAGIC;
	d->shared = pc_dir_others_write(dst, (unsigned long)sf.f_type, w->euid);
	event(w, PC_WALK_DIR, d->path, 0);
	while ((n = syscall(SYS_getdents64, d->fd, wk->dents, DENTS_BUF)) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (void *)(wk->dents + off);
			const char *name = de->d_name;
			unsigned char type = de->d_type;
			char *path;

			off += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (w->stop) {
				wk->nb = 0;
				return;
			}
			if (type == DT_REG && !o->follow) {
				/* the common case: no path made until it is handed over */
				if (excluded(o, name)) {
					path = join(wk, d->path, name);
					event(w, path ? PC_WALK_SKIP_PATTERN : PC_WALK_ERROR,
					      path ? path : d->path, path ? 0 : ENOMEM);
					continue;
				}
				wk->names[wk->nb++] = name;
				if (wk->nb >= wk->batch)
					flush_files(wk, d);
				continue;
			}
			path = join(wk, d->path, name);
			if (!path) {
				event(w, PC_WALK_ERROR, d->path, ENOMEM);
				continue;
			}
			if (type == DT_UNKNOWN) {
				if (fstatat(d->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
					event(w, errno == ENOENT ? PC_WALK_VANISHED : PC_WALK_ERROR,
					      path, errno);
					continue;
				}
				type = IFTODT(st.st_mode);
			}
			if (type == DT_LNK) {
				if (!o->follow) {
					event(w, PC_WALK_SKIP_SYMLINK, path, 0);
					continue;
				}
				if (fstatat(d->fd, name, &st, 0) < 0) {
					event(w, PC_WALK_ERROR, path, errno);
					continue;
				}
				type = IFTODT(st.st_mode);
			}
			if (type == DT_DIR) {
				if (matches(o->exclude, name))
					event(w, PC_WALK_SKIP_PATTERN, path, 0);
				else if (push(w, d, path, -1) < 0)
					event(w, PC_WALK_ERROR, path, ENOMEM);
			} else if (type == DT_REG && o->follow) {
				do_file(wk, d, name, path, d->root_dev);
			} else if (type == DT_REG) {	/* DT_UNKNOWN, a file */
				if (excluded(o, name)) {
					event(w, PC_WALK_SKIP_PATTERN, path, 0);
					continue;
				}
				wk->names[wk->nb++] = name;
				if (wk->nb >= wk->batch)
					flush_files(wk, d);
			} else {
				event(w, PC_WALK_SKIP_SPECIAL, path, 0);
			}
		}
		flush_files(wk, d);	/* before the next getdents64 reuses the names */
	}
	flush_files(wk, d);
	if (n < 0)
		event(w, PC_WALK_ERROR, d->path, errno);
}

/*
 * Is the directory st one of d's ancestors, or d itself? Then reaching it
 * again is a loop (a symlink or a bind mount back up the tree); a
 * directory seen elsewhere (a link to a sibling, a root named twice) is
 * only a second name for it, as a hardlink is. The chain is referenced
 * and its dev and ino never change: no lock.
 */
static bool on_path(const struct dnode *d, const struct stat *st)
{
	for (; d; d = d->parent)
		if (d->dev == st->st_dev && d->ino == st->st_ino)
			return true;
	return false;
}

/*
 * Enter a directory: fd open (ours), st its fstat. Becomes a node that
 * takes over path and the reference on parent, is listed, and lives on
 * while anything beneath it is queued.
 */
static void enter_dir(struct worker *wk, struct dnode *parent, char *path, const char *name,
		      int fd, const struct stat *st)
{
	struct walker *w = wk->w;
	struct dnode *d = calloc(1, sizeof(*d));
	int r;

	if (!d) {
		event(w, PC_WALK_ERROR, path, ENOMEM);
		close(fd);
		free(path);
		node_unref(w, parent);
		return;
	}
	d->parent = parent;
	d->path = path;
	d->name = name;
	d->dev = st->st_dev;
	d->ino = st->st_ino;
	d->root_dev = parent ? parent->root_dev : st->st_dev;
	d->fd = fd;
	d->refs = 1;
	d->busy = 1;
	if (parent) {
		pthread_mutex_lock(&w->nlock);
		w->nopen++;
		pthread_mutex_unlock(&w->nlock);
	}
	r = idset_add(&w->dirs, st->st_dev, st->st_ino);
	if (r < 0)
		event(w, PC_WALK_ERROR, path, -r);
	else if (r == 0)
		event(w, on_path(parent, st) ? PC_WALK_SKIP_LOOP : PC_WALK_DUP, path, 0);
	else
		list_dir(wk, d, st);
	pthread_mutex_lock(&w->nlock);
	unpin(w, d);
	unref(w, d);
	pthread_mutex_unlock(&w->nlock);
}

/* A queued directory beneath a root: opened from its parent's fd. */
static void do_dir(struct worker *wk, struct item *it)
{
	struct walker *w = wk->w;
	struct dnode *parent = it->parent;
	unsigned tries = 0;	/* opens out of descriptors */
	struct stat st;
	int pfd, fd;

	while (no_fds(pfd = node_fd(wk, parent)) && wait_for_fds(wk, &tries))
		;
	if (pfd < 0) {
		/* an ancestor was removed, or replaced by another directory or a link */
		bool gone = pfd != -ENOMEM && !no_fds(pfd);

		event(w, gone ? PC_WALK_VANISHED : PC_WALK_ERROR, it->path, gone ? ENOENT : -pfd);
		return;
	}
	while (no_fds(fd = open_dir_at(w, pfd, it->name)) && wait_for_fds(wk, &tries))
		;
	if (fd >= 0)
		wk->starved = false;
	node_unpin(w, parent);
	if (fd < 0) {
		/* ENOTDIR, or ELOOP without -L: replaced by a file or a symlink */
		bool gone = fd == -ENOENT || fd == -ENOTDIR || (fd == -ELOOP && !w->o->follow);

		event(w, gone ? PC_WALK_VANISHED : PC_WALK_ERROR, it->path, -fd);
		return;
	}
	if (fstat(fd, &st) < 0) {
		event(w, PC_WALK_ERROR, it->path, errno);
		close(fd);
		return;
	}
	if (w->o->one_fs && st.st_dev != parent->root_dev) {
		event(w, PC_WALK_SKIP_MOUNT, it->path, 0);
		close(fd);
		return;
	}
	enter_dir(wk, parent, it->path, it->name, fd, &st);
	it->parent = NULL;	/* the node took both */
	it->path = NULL;
}

/*
 * A root named by the caller: followed if a symlink, never opened unless
 * a file or directory. One given as an fd is what the fd holds.
 */
static void do_root(struct worker *wk, struct item *it)
{
	struct walker *w = wk->w;
	struct stat st;
	int fd;

	if ((it->rootfd < 0 ? stat(it->path, &st) : fstat(it->rootfd, &st)) < 0) {
		event(w, PC_WALK_ERROR, it->path, errno);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		do_root_file(wk, it->path, it->rootfd, &st);
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		/* FIFOs, sockets, character and block devices: never opened */
		event(w, PC_WALK_ERROR, it->path, EINVAL);
		return;
	}
	/* O_DIRECTORY: nothing else is opened */
	fd = it->rootfd < 0 ? open(it->path, DIR_FLAGS) : openat(it->rootfd, ".", DIR_FLAGS);
	if (fd < 0) {
		event(w, PC_WALK_ERROR, it->path, errno);
		return;
	}
	if (fstat(fd, &st) < 0) {
		event(w, PC_WALK_ERROR, it->path, errno);
		close(fd);
		return;
	}
	enter_dir(wk, NULL, it->path, it->path, fd, &st);
	it->path = NULL;
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct walker *w = wk->w;

	/* made here: a ring is this thread's (IORING_SETUP_SINGLE_ISSUER) */
	if (pc_openq_new(w->batch >= 4 ? w->batch : 0, &wk->q) < 0)
		wk->q = NULL;	/* no memory for it: the same calls, one by one */
	for (;;) {
		struct item *it;

		pthread_mutex_lock(&w->lock);
		while (!w->stack && (w->active || w->feeding) && !w->stop) {
			if (pc_openq_pending(wk->q)) {	/* no fds held while idle */
				pthread_mutex_unlock(&w->lock);
				pc_openq_flush(wk->q);
				pthread_mutex_lock(&w->lock);
				continue;
			}
			pthread_cond_wait(&w->cond, &w->lock);
		}
		if (!w->stack || w->stop) {
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			break;
		}
		it = w->stack;
		w->stack = it->next;
		if (!w->stack)
			w->bottom = NULL;
		if (!it->parent && --w->roots <= w->feed_high / 4)
			pthread_cond_signal(&w->fed);
		w->active++;
		pthread_mutex_unlock(&w->lock);

		if (it->parent)
			do_dir(wk, it);
		else
			do_root(wk, it);
		item_free(w, it);

		pthread_mutex_lock(&w->lock);
		w->active--;
		if (!w->stack && !w->active)
			pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	pc_openq_free(wk->q);	/* every fd it was to close is closed */
	wk->q = NULL;
	return NULL;
}

/* Idle directory fds kept open: an eighth of what we may open, 8..256. */
static unsigned fd_cap(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 64;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 8 > 256)
		return 256;
	return rl.rlim_cur / 8 < 8 ? 8 : (unsigned)(rl.rlim_cur / 8);
}

/*
 * Files each worker opens together: a quarter of what we may open, shared
 * by the workers, less one for the ring; 1..BATCH_MAX.
 */
static unsigned batch_size(unsigned nt)
{
	struct rlimit rl;
	uint64_t lim = 1024, b;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		lim = rl.rlim_cur == RLIM_INFINITY ? BATCH_MAX * 8 * nt : rl.rlim_cur;
	b = lim / 4 / nt;
	b = b > 1 ? b - 1 : 1;
	return b > BATCH_MAX ? BATCH_MAX : (unsigned)b;
}

/*
 * Fed roots queued at most: each may hold an fd (a caller's checked
 * root), beside the idle directories' eighth and the batches' quarter of
 * what we may open: an eighth more, 2..FEED_HIGH.
 */
static unsigned feed_high(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 8;
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur / 8 > FEED_HIGH)
		return FEED_HIGH;
	return rl.rlim_cur / 8 < 2 ? 2 : (unsigned)(rl.rlim_cur / 8);
}

unsigned pc_walk_threads(const struct pc_walk_opts *o)
{
	long n;

	if (o && o->threads)
		return o->threads;
	n = sysconf(_SC_NPROCESSORS_ONLN) * 2;
	return n < 2 ? 2 : n > 16 ? 16 : (unsigned)n;
}

/*
 * The caller's thread, while the workers walk: the feed's roots onto the
 * stack, never more than feed_high queued, until it ends or the walk stops.
 */
static void feed_roots(struct walker *w, const struct pc_walk_feed *f)
{
	for (;;) {
		const char *path;
		int fd = -1, rc;
		bool stop;

		pthread_mutex_lock(&w->lock);
		while (w->roots >= w->feed_high && !w->stop)
			pthread_cond_wait(&w->fed, &w->lock);
		stop = w->stop;
		pthread_mutex_unlock(&w->lock);
		if (stop)
			break;
		rc = f->next(f->arg, &path, &fd);
		if (rc == 0)
			break;
		if (rc > 0 && (rc = append_root(w, path, fd)) < 0 && fd >= 0)
			close(fd);
		if (rc < 0) {
			set_stop(w, rc);
			break;
		}
	}
	pthread_mutex_lock(&w->lock);
	w->feeding = false;
	pthread_cond_broadcast(&w->cond);	/* the workers may end now */
	pthread_mutex_unlock(&w->lock);
}

int pc_walk(const char *const *roots, size_t nroots, const struct pc_walk_opts *o)
{
	return pc_walk_fed(roots, nroots, NULL, o);
}

int pc_walk_fed(const char *const *roots, size_t nroots, const struct pc_walk_feed *feed,
		const struct pc_walk_opts *o)
{
	struct walker w = { .o = o, .feeding = feed != NULL };
	unsigned nt = pc_walk_threads(o);
	struct worker *wks = calloc(nt, sizeof(*wks));
	pthread_t *tids = calloc(nt, sizeof(*tids));
	unsigned started = 0;
	int rc = 0;

	if (!wks || !tids) {
		free(wks);
		free(tids);
		return -ENOMEM;
	}
	w.maxopen = fd_cap();
	w.batch = batch_size(nt);
	w.feed_high = feed_high();
	w.euid = geteuid();
	w.procfd = pc_proc_fd_dir();	/* no /proc: -1, and reopen_file says what then */
	pthread_mutex_init(&w.lock, NULL);
	pthread_mutex_init(&w.ev_lock, NULL);
	pthread_mutex_init(&w.nlock, NULL);
	pthread_cond_init(&w.cond, NULL);
	pthread_cond_init(&w.fed, NULL);
	pthread_mutex_init(&w.dirs.lock, NULL);
	pthread_mutex_init(&w.links.lock, NULL);
	/* Pushed in reverse so the stack pops them in the order given. */
	for (size_t i = nroots; i-- > 0 && rc == 0;)
		rc = push(&w, NULL, roots[i], o->root_fds ? o->root_fds[i] : -1);
	for (unsigned i = 0; i < nt && rc == 0; i++) {
		wks[i].w = &w;
		wks[i].id = i;
		wks[i].dents = malloc(DENTS_BUF);
		wks[i].batch = w.batch;
		wks[i].names = calloc(w.batch, sizeof(*wks[i].names));
		wks[i].fds = calloc(w.batch, sizeof(*wks[i].fds));
		if (!wks[i].dents || !wks[i].names || !wks[i].fds) {
			rc = -ENOMEM;
			break;
		}
		if (pthread_create(&tids[i], NULL, worker_main, &wks[i]) != 0) {
			if (!started)
				rc = -EAGAIN;
			break;
		}
		started++;
	}
	if (rc)
		set_stop(&w, rc);
	if (feed)
		feed_roots(&w, feed);	/* returns at once after a stop */
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	while (w.stack) {
		struct item *it = w.stack;

		w.stack = it->next;
		item_free(&w, it);	/* closes what they held open */
	}
	for (unsigned i = 0; i < nt; i++) {
		free(wks[i].dents);
		free(wks[i].chain);
		free(wks[i].names);
		free(wks[i].fds);
		free(wks[i].pbuf);
	}
	free(wks);
	free(tids);
	if (w.procfd >= 0)
		close(w.procfd);
	pc_idmap_free(&w.dirs.ids);
	pc_idmap_free(&w.links.ids);
	pthread_mutex_destroy(&w.lock);
	pthread_mutex_destroy(&w.ev_lock);
	pthread_mutex_destroy(&w.nlock);
	pthread_cond_destroy(&w.cond);
	pthread_cond_destroy(&w.fed);
	pthread_mutex_destroy(&w.dirs.lock);
	pthread_mutex_destroy(&w.links.lock);
	return rc ? rc : w.stop;
}
