/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lockset.c: a set of files locked in the page cache (lock.c), kept locked
 * as they are replaced, within two caps. pagecache lock is its client.
 *
 * The caps: a memory budget (budget.c: what is locked is taken from it,
 * and a file that would pass it is refused), and mappings: each piece of a
 * file's data mlocked splits its mapping, and a process has
 * vm.max_map_count of them in all, its own libraries, heap and threads'
 * stacks among them. Files whose data lies in many pieces (a user makes
 * them with a page written every other page, up to PC_LOCK_MAX_RANGES
 * pieces a file) must not use them up: past it mmap and mlock fail with
 * ENOMEM, for a file that needs one mapping as much as for theirs, and so
 * does our own malloc. The set keeps half (by default); a file that would
 * pass it is refused. Taken before a lock (the most it can take), the
 * rest given back after.
 *
 * Watched (pc_lockset_watch), the set follows its files as they are
 * replaced: inotify on the directories that hold them (every directory of
 * a tree, the parent of a file named), and after a burst of changes has
 * gone quiet (200 ms; at most 2 s after the first) the named paths are
 * walked again by the same walker, with the caller's walk options. Each
 * path is resolved once, at the start, and walked again from the
 * directory that held it then, held open: never by its path, so a
 * directory above it swapped for a link leads nowhere; a link at the name
 * itself is followed only with the walk's follow. What is found where it
 * was stays as it is; a new inode at a name (rename over, delete and
 * create) or a new file in a tree is locked after the old inode's mapping
 * is released (the two never count together against the budget); a file
 * whose data changed is locked again, new mapping first. A file refused
 * is not tried (nor said) again until it changes. Where a directory
 * cannot be watched, everything is walked again on a timer as well.
 *
 * What happens is said through the caller's event callback, called from
 * the walk's threads during pc_lockset_add and the first walk, and from
 * the caller's thread during a rescan; never with the set's mutex held.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | \
		    IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK)
#define QUIET_S 0.2		/* a burst is over after this much quiet */
#define BURST_MAX_S 2.0		/* ... or this long after its first change */

/* One file locked. */
struct held {
	struct pc_lock l;
	uint64_t locked;	/* bytes mlocked: the file's data, never a hole */
	dev_t dev;
	ino_t ino;
	char *path;		/* as the walk reached it; NULL when not watched */
	bool seen;		/* a rescan found it where it was */
};

/* A file a rescan found new (or resized): locked after the walk. */
struct cand {
	int fd;			/* taken from the walk */
	struct stat st;
	uint64_t data;		/* its data, as pc_fd_data_maps found it */
	uint64_t maps;		/* ... and the mappings its lock would take */
	char *path;
	ssize_t same;		/* index in locks of this very inode (resized), else -1 */
};

/* A file that could not be locked: said once, not at every rescan. */
struct refused {
	dev_t dev;
	ino_t ino;
	off_t size;
	uint64_t data;
};

/*
 * A named path, as the watch keeps an eye on it. Its links are resolved
 * once, at the start (they are the caller's, as named); from then on it is
 * the name `base` in the directory that held it then, held open (dirfd):
 * what happens to the path above it (a parent renamed, or swapped for a
 * link by whoever may write the grandparent) changes nothing, and no link
 * is ever followed to reach it again.
 */
struct wroot {
	char *path;		/* as named: the name the walk gives */
	char *dir;		/* the directory that held it, resolved: for messages */
	char *base;		/* its last component, resolved: the name looked for */
	int dirfd;		/* O_PATH of dir, or -1 (it had none: never walked again) */
	int fd;			/* during a walk: O_PATH of what is at base, else -1 */
	bool refused;		/* a link replaced it: said once */
	int wd;			/* the watch on dir, or -1 */
};

/* A directory of a tree, watched. */
struct wdir {
	int wd;
	bool seen;		/* entered by the last walk */
};

struct pc_lockset {
	struct pc_lockset_opts o;
	pthread_mutex_t lock;	/* locks, bytes and maps, while a walk's threads add */
	struct held *locks;
	size_t n, cap;
	size_t nsorted;		/* a rescan's: locks[0..nsorted) sorted by inode */
	uint64_t bytes;		/* locked: the sum of locks[].locked */
	uint64_t holes;		/* bytes of holes in the ranges, never locked */
	uint64_t maps;		/* mappings the locks take (taken before each lock) */
	uint64_t max_maps;
	bool stopped;		/* the budget stopped pc_lockset_add */

	/* watched */
	bool watching;
	struct pc_walk_opts walk;	/* the caller's, with its events */
	int ifd;		/* inotify; -1: none (rescans on the timer only) */
	unsigned interval;	/* seconds between rescans; 0: on events only */
	bool limit_said;	/* a directory that cannot be watched: said once */
	struct wroot *roots;
	size_t nroots;
	struct wdir *dirs;
	size_t ndirs, dcap;
	struct cand *cands;
	size_t ncands, ccap;
	struct refused *refused;
	size_t nrefused, rcap;
	uint64_t relocks, released, rescans, refusals, refused_bytes;
	double first, last, next;	/* a burst's first and last change, the timer's next */
};


static void emit(const struct pc_lockset *s, struct pc_lockset_event *e)
{
	if (s->o.event)
		s->o.event(e, s->o.arg);
}

int pc_lockset_new(const struct pc_lockset_opts *o, struct pc_lockset **ret)
{
	struct pc_lockset *s;

	if (!o->budget)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	s->max_maps = o->max_maps ? o->max_maps : pc_max_map_count() / 2;
	s->ifd = -1;
	pthread_mutex_init(&s->lock, NULL);
	*ret = s;
	return 0;
}

void pc_lockset_stats(struct pc_lockset *s, struct pc_lockset_stats *ret)
{
	pthread_mutex_lock(&s->lock);
	*ret = (struct pc_lockset_stats){
		.files = s->n, .bytes = s->bytes, .holes = s->holes, .maps = s->maps,
		.max_maps = s->max_maps, .stopped = s->stopped, .relocks = s->relocks,
		.released = s->released, .rescans = s->rescans, .refusals = s->refusals,
		.refused_bytes = s->refused_bytes,
	};
	pthread_mutex_unlock(&s->lock);
}

/* Keep lock l (locked bytes of it) of file st (reached as path); -ENOMEM. Thread-safe. */
static int add_held(struct pc_lockset *s, const struct pc_lock *l, uint64_t locked,
		    const struct stat *st, const char *path)
{
	char *p = NULL;

	if (s->watching && !(p = strdup(path)))
		return -ENOMEM;
	pthread_mutex_lock(&s->lock);
	if (pc_grow(&s->locks, &s->cap, s->n, sizeof(*s->locks)) < 0) {
		pthread_mutex_unlock(&s->lock);
		free(p);
		return -ENOMEM;
	}
	s->locks[s->n++] = (struct held){ *l, locked, st->st_dev, st->st_ino, p, true };
	s->bytes += locked;
	pthread_mutex_unlock(&s->lock);
	return 0;
}

/* The bytes of a file of `size` the range selects, holes and all. */
static uint64_t lock_span(const struct pc_lockset *s, uint64_t size)
{
	uint64_t ps = pc_page_size(), stop;

	if (s->o.off >= size)
		return 0;
	stop = s->o.len == 0 || s->o.len > size - s->o.off ? size : s->o.off + s->o.len;
	return stop - s->o.off / ps * ps;
}

/* Take n mappings of the set's budget of them; false (and e said why) if they would pass it. */
static bool maps_take(struct pc_lockset *s, uint64_t n, struct pc_lockset_event *e)
{
	bool ok;

	pthread_mutex_lock(&s->lock);
	ok = s->maps + n <= s->max_maps;
	if (ok)
		s->maps += n;
	e->maps = n;
	e->maps_taken = s->maps;
	e->maps_max = s->max_maps;
	pthread_mutex_unlock(&s->lock);
	return ok;
}

static void maps_put(struct pc_lockset *s, uint64_t n)
{
	pthread_mutex_lock(&s->lock);
	s->maps -= n < s->maps ? n : s->maps;
	pthread_mutex_unlock(&s->lock);
}

/*
 * A lock made: `taken` was taken for it, it split into `maps`. The rest
 * goes back; more (its data in more pieces since they were counted, at
 * most PC_LOCK_MAX_RANGES) is counted all the same: the mappings exist.
 */
static void maps_settle(struct pc_lockset *s, uint64_t taken, uint64_t maps)
{
	pthread_mutex_lock(&s->lock);
	s->maps = s->maps - (taken < s->maps ? taken : s->maps) + maps;
	pthread_mutex_unlock(&s->lock);
}

/* Lock fd's data, at most want bytes: 0 (*ret_locked set) or -errno. */
static int lock_data(struct pc_lockset *s, int fd, const struct stat *st, uint64_t want,
		     struct pc_lock *l, uint64_t *ret_locked)
{
	int rc = pc_fd_lock_max(fd, (uint64_t)st->st_size, s->o.off, s->o.len, want ? want : 1, l,
				ret_locked);

	if (rc == 0 && !want)	/* max 1 locks no page: all holes */
		*ret_locked = 0;
	return rc;
}

int pc_lockset_add(struct pc_lockset *s, int fd, const struct stat *st, const char *path)
{
	struct pc_lockset_event e = { .kind = PC_LOCKSET_FAILED, .path = path, .st = st };
	uint64_t size = (uint64_t)st->st_size, want, maps, locked;
	struct pc_lock l;
	int rc = pc_fd_data_maps(fd, size, s->o.off, s->o.len, &want, &maps);

	if (rc < 0) {
		e.why = PC_LOCKSET_WHY_DATA;
		e.err = -rc;
		emit(s, &e);
		return 0;
	}
	if (rc == 1) {
		e.kind = PC_LOCKSET_PARTIAL;
		emit(s, &e);
		e.kind = PC_LOCKSET_FAILED;
	}
	if (!maps_take(s, maps, &e)) {
		e.why = PC_LOCKSET_WHY_PIECES;
		emit(s, &e);
		return 0;
	}
	if (!pc_budget_take(s->o.budget, want)) {
		maps_put(s, maps);
		__atomic_store_n(&s->stopped, true, __ATOMIC_RELAXED);
		return 1;
	}
	rc = lock_data(s, fd, st, want, &l, &locked);
	if (rc < 0) {
		if (want)
			pc_budget_put(s->o.budget, want);
		maps_put(s, maps);
		e.why = PC_LOCKSET_WHY_MLOCK;
		e.err = -rc;
		emit(s, &e);
		return 0;
	}
	if (want > locked)
		pc_budget_put(s->o.budget, want - locked);	/* holes made since the count */
	maps_settle(s, maps, l.maps);
	if (add_held(s, &l, locked, st, path) < 0) {
		maps_put(s, l.maps);
		pc_unlock(&l);
		pc_budget_put(s->o.budget, locked);
		e.why = PC_LOCKSET_WHY_NOMEM;
		e.err = ENOMEM;
		emit(s, &e);
		return 0;
	}
	__atomic_add_fetch(&s->holes, lock_span(s, size) - locked, __ATOMIC_RELAXED);
	e.kind = PC_LOCKSET_LOCKED;
	e.locked = locked;
	emit(s, &e);
	return 0;
}

/* ---- watched ------------------------------------------------------------ */

/*
 * A directory could not be watched: said once, and from then on
 * everything is walked again on a timer too.
 */
static void watch_failed(struct pc_lockset *s, const char *dir, int err)
{
	struct pc_lockset_event e = { .kind = PC_LOCKSET_UNWATCHED, .path = dir, .err = err };

	if (err == ENOENT || err == ENOTDIR)
		return;		/* gone already: the rescan it causes sees that */
	if (!s->interval)
		s->interval = PC_LOCKSET_FALLBACK_INTERVAL;
	if (s->limit_said)
		return;
	s->limit_said = true;
	e.interval = s->interval;
	emit(s, &e);
}

/* Watch directory `path` of a tree (called by the walk, serialised). */
static void watch_dir(struct pc_lockset *s, const char *path)
{
	bool follow = s->walk.follow;
	const char *at = path;
	char *anchored = NULL;
	int wd;

	if (s->ifd < 0)
		return;
	/* beneath a root: reached from the root's fd, not by its path */
	for (size_t i = 0; i < s->nroots; i++) {
		const struct wroot *r = &s->roots[i];
		size_t l = strlen(r->path);

		while (l > 1 && r->path[l - 1] == '/')
			l--;
		if (r->fd < 0 || strncmp(path, r->path, l) || (path[l] && path[l] != '/'))
			continue;
		if (asprintf(&anchored, "/proc/self/fd/%d%s", r->fd, path + l) < 0)
			return;
		at = anchored;
		follow |= !path[l] || !strcmp(path + l, "/");	/* the magic link to the root */
		break;
	}
	wd = pc_sys_inotify_add_watch(s->ifd, at,
				      WATCH_MASK | IN_ONLYDIR | (follow ? 0 : IN_DONT_FOLLOW));
	free(anchored);
	if (wd < 0) {
		watch_failed(s, path, -wd);
		return;
	}
	for (size_t i = 0; i < s->ndirs; i++)
		if (s->dirs[i].wd == wd) {
			s->dirs[i].seen = true;
			return;
		}
	if (pc_grow(&s->dirs, &s->dcap, s->ndirs, sizeof(*s->dirs)) == 0)
		s->dirs[s->ndirs++] = (struct wdir){ wd, true };
}

/*
 * Resolve a named path once: its links followed now, as the caller named
 * it. The directory that holds what it names is kept open (O_PATH), and
 * the last component is the name looked for there. A path not there yet:
 * its directory, and its last component as given. 0 or -errno.
 */
static int root_resolve(struct wroot *r)
{
	char *real = realpath(r->path, NULL), *slash;

	if (!real) {
		char *copy, *pdir, *name;
		int err = errno;

		if (err != ENOENT || !(copy = strdup(r->path)))
			return -err;
		slash = strrchr(copy, '/');
		name = slash ? slash + 1 : copy;
		if (slash)
			*slash = 0;
		pdir = realpath(!slash ? "." : *copy ? copy : "/", NULL);
		if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || !pdir ||
		    asprintf(&real, "%s/%s", strcmp(pdir, "/") ? pdir : "", name) < 0) {
			err = pdir ? ENOENT : errno;
			free(pdir);
			free(copy);
			return -err;
		}
		free(pdir);
		free(copy);
	}
	slash = strrchr(real, '/');	/* absolute: there is one */
	if (!(r->base = strdup(slash[1] ? slash + 1 : "."))) {
		free(real);
		return -ENOMEM;
	}
	if (slash == real)
		slash[1] = 0;	/* in "/" (or "/" itself: base ".") */
	else
		*slash = 0;
	r->dir = real;
	r->dirfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return r->dirfd < 0 ? -errno : 0;
}

/*
 * What root r names now, O_PATH, reached from its directory with no link
 * followed (with the walk's follow, one at base is), else -errno (-ELOOP:
 * a link is there).
 */
static int root_open(const struct pc_lockset *s, const struct wroot *r)
{
	struct stat st;
	int fd;

	if (!strcmp(r->base, ".")) {	/* "/" itself */
		fd = openat(r->dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	fd = pc_path_beneath(r->dirfd, r->base, &st);
	if (fd < 0 || !S_ISLNK(st.st_mode))
		return fd;
	close(fd);
	if (!s->walk.follow)
		return -ELOOP;
	fd = openat(r->dirfd, r->base, O_PATH | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Watch the directory that holds each path, through the fd held on it: a
 * file named is replaced there, and a tree's own directory may be (a
 * tree's directories come with the walk). The watch is on that inode: it
 * stays with the directory if it is renamed.
 */
static void watch_parents(struct pc_lockset *s)
{
	for (size_t i = 0; i < s->nroots && s->ifd >= 0; i++) {
		struct wroot *r = &s->roots[i];
		char at[64];

		if (r->dirfd < 0)
			continue;
		snprintf(at, sizeof(at), "/proc/self/fd/%d", r->dirfd);
		r->wd = pc_sys_inotify_add_watch(s->ifd, at, WATCH_MASK | IN_ONLYDIR);
		if (r->wd < 0)
			watch_failed(s, r->dir, -r->wd);
	}
}

int pc_lockset_watch(struct pc_lockset *s, const char *const *paths, size_t n,
		     const struct pc_walk_opts *walk, unsigned interval)
{
	s->watching = true;
	s->walk = *walk;
	s->interval = interval;
	s->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (s->ifd < 0)
		watch_failed(s, NULL, errno);
	s->roots = calloc(n ? n : 1, sizeof(*s->roots));
	if (!s->roots)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct wroot *r = &s->roots[s->nroots];
		int rc;

		*r = (struct wroot){ .path = strdup(paths[i]), .dirfd = -1, .fd = -1, .wd = -1 };
		if (!r->path)
			return -ENOMEM;
		s->nroots++;
		rc = root_resolve(r);
		if (rc < 0) {
			struct pc_lockset_event e = { .kind = PC_LOCKSET_UNRESOLVED, .path = r->path,
						      .err = -rc };

			emit(s, &e);
		}
	}
	watch_parents(s);
	return 0;
}

/* The walk's events: its directories are watched, and all go on to the caller's. */
static void walk_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct pc_lockset *s = arg;

	if (ev == PC_WALK_DIR)
		watch_dir(s, path);
	if (s->walk.event)
		s->walk.event(ev, path, err, s->walk.event_arg);
}

/*
 * Walk the named paths as the watch holds them: each from the fd of what
 * is at its name in its directory now (root_open), never by its path. A
 * path that was no link and is one now is not followed (without follow):
 * said once, and its lock is released. The walk's return, or 0.
 */
static int walk_roots(struct pc_lockset *s, int (*fn)(struct pc_walk_entry *, void *))
{
	struct pc_walk_opts o = s->walk;
	const char **paths;
	size_t n = 0;
	int *fds, rc;

	paths = malloc((s->nroots ? s->nroots : 1) * sizeof(*paths));
	fds = malloc((s->nroots ? s->nroots : 1) * sizeof(*fds));
	if (!paths || !fds) {
		free(paths);
		free(fds);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nroots; i++) {
		struct wroot *r = &s->roots[i];
		struct pc_lockset_event e = { .kind = PC_LOCKSET_UNOPENED, .path = r->path };
		int fd;

		if (r->dirfd < 0)
			continue;	/* said at the start */
		fd = root_open(s, r);
		if (fd == -ELOOP) {
			e.kind = PC_LOCKSET_LINK;
			if (!r->refused)
				emit(s, &e);
			r->refused = true;
			continue;
		}
		r->refused = false;
		if (fd < 0) {
			e.err = -fd;
			emit(s, &e);
			continue;
		}
		r->fd = fd;
		paths[n] = r->path;
		fds[n++] = fd;
	}
	o.file = fn;
	o.arg = s;
	o.event = walk_event;
	o.event_arg = s;
	o.root_fds = fds;
	rc = n ? pc_walk(paths, n, &o) : 0;
	for (size_t i = 0; i < s->nroots; i++) {
		if (s->roots[i].fd >= 0)
			close(s->roots[i].fd);
		s->roots[i].fd = -1;
	}
	free(paths);
	free(fds);
	return rc;
}

static int add_file(struct pc_walk_entry *e, void *arg)
{
	return pc_lockset_add(arg, e->fd, &e->st, e->path);
}

int pc_lockset_walk(struct pc_lockset *s)
{
	int rc = walk_roots(s, add_file);

	s->next = s->interval ? pc_now() + s->interval : 0;
	return rc;
}

static int cmp_held(const void *a, const void *b)
{
	const struct held *x = a, *y = b;

	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	return x->ino < y->ino ? -1 : x->ino > y->ino;
}

static int cmp_cand(const void *a, const void *b)
{
	return strcmp(((const struct cand *)a)->path, ((const struct cand *)b)->path);
}

/*
 * The walk of a rescan (worker threads): a file locked already, with the
 * same data (a file truncated larger has grown only holes), is marked seen
 * and left alone; anything else is kept for after.
 */
static int rescan_file(struct pc_walk_entry *e, void *arg)
{
	struct pc_lockset *s = arg;
	struct held key = { .dev = e->st.st_dev, .ino = e->st.st_ino }, *h;
	uint64_t data, maps = 0;
	ssize_t same = -1;
	char *p;

	if (pc_fd_data_maps(e->fd, (uint64_t)e->st.st_size, s->o.off, s->o.len, &data, &maps) < 0)
		data = lock_span(s, (uint64_t)e->st.st_size);	/* relock says why */
	pthread_mutex_lock(&s->lock);
	/* s->locks is NULL until the first lock: no bsearch(NULL) */
	h = s->n ? bsearch(&key, s->locks, s->n, sizeof(*s->locks), cmp_held) : NULL;
	if (h) {
		struct held *pick = NULL;

		while (h > s->locks && !cmp_held(h - 1, &key))
			h--;	/* every lock of the inode (all links: one a name) */
		for (; h < s->locks + s->n && !cmp_held(h, &key); h++) {
			if (!strcmp(h->path, e->path)) {
				pick = h;
				break;
			}
			if (!pick && !h->seen)
				pick = h;
		}
		if (pick) {
			pick->seen = true;
			if (strcmp(pick->path, e->path) && (p = strdup(e->path))) {
				free(pick->path);	/* renamed inside a tree */
				pick->path = p;
			}
			same = pick - s->locks;
			if (pick->locked == data) {
				pthread_mutex_unlock(&s->lock);
				return 0;
			}
		}
	}
	if (pc_grow(&s->cands, &s->ccap, s->ncands, sizeof(*s->cands)) == 0 &&
	    (p = strdup(e->path))) {
		s->cands[s->ncands++] = (struct cand){ e->fd, e->st, data, maps, p, same };
		e->fd = -1;	/* ours now */
	}
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static bool was_refused(const struct pc_lockset *s, const struct cand *k)
{
	for (size_t i = 0; i < s->nrefused; i++)
		if (s->refused[i].dev == k->st.st_dev && s->refused[i].ino == k->st.st_ino &&
		    s->refused[i].size == k->st.st_size && s->refused[i].data == k->data)
			return true;
	return false;
}

/* Candidate k refused for e->why: counted, said, and not tried again until it changes. */
static void refuse(struct pc_lockset *s, const struct cand *k, struct pc_lockset_event *e)
{
	s->refusals++;
	s->refused_bytes += k->data > e->locked ? k->data - e->locked : 0;
	e->kind = PC_LOCKSET_REFUSED;
	emit(s, e);
	if (pc_grow(&s->refused, &s->rcap, s->nrefused, sizeof(*s->refused)) == 0)
		s->refused[s->nrefused++] =
			(struct refused){ k->st.st_dev, k->st.st_ino, k->st.st_size, k->data };
}

/* The lock of inode st among the sorted ones, under `path` if it has several. */
static struct held *find_held(struct pc_lockset *s, const struct stat *st, const char *path)
{
	struct held key = { .dev = st->st_dev, .ino = st->st_ino }, *h, *first;

	h = s->nsorted ? bsearch(&key, s->locks, s->nsorted, sizeof(*s->locks), cmp_held) : NULL;
	if (!h)
		return NULL;
	while (h > s->locks && !cmp_held(h - 1, &key))
		h--;
	for (first = h; h < s->locks + s->nsorted && !cmp_held(h, &key); h++)
		if (!strcmp(h->path, path))
			return h;
	return first;
}

/*
 * Lock candidate k (a new inode at its path, or a file that changed size;
 * gone: the lock its name held, released). 1: locked; 0: refused, and
 * said; -1: refused before, not said again.
 */
static int relock(struct pc_lockset *s, struct cand *k, const struct held *gone)
{
	struct held *h = k->same >= 0 ? find_held(s, &k->st, k->path) : NULL;
	uint64_t span = k->data, have = h ? h->locked : 0, locked;
	struct pc_lockset_event e = {
		.path = k->path, .st = &k->st, .locked = have, .wanted = span,
		.previous = h ? h->locked : gone ? gone->locked : 0,
		.kept = h != NULL, .replaced = !h && gone,
	};
	struct pc_lock l;
	int rc;

	if (was_refused(s, k))
		return -1;	/* said already; it has not changed since */
	/* the new mapping is made before the old one goes: both count */
	if (!maps_take(s, k->maps, &e)) {
		e.why = PC_LOCKSET_WHY_PIECES;
		refuse(s, k, &e);
		return 0;
	}
	pc_budget_put(s->o.budget, 0);	/* judged afresh */
	if (span > have && !pc_budget_take(s->o.budget, span - have)) {
		maps_put(s, k->maps);
		e.why = PC_LOCKSET_WHY_BUDGET;
		refuse(s, k, &e);
		return 0;
	}
	/* at most what the budget gave: data written into holes since is not locked */
	rc = lock_data(s, k->fd, &k->st, span, &l, &locked);
	if (rc < 0) {
		if (span > have)
			pc_budget_put(s->o.budget, span - have);
		maps_put(s, k->maps);
		e.why = PC_LOCKSET_WHY_MLOCK;
		e.err = -rc;
		refuse(s, k, &e);
		return 0;
	}
	/* the budget holds the larger of the old lock and the new: keep the new */
	if ((span > have ? span : have) > locked)
		pc_budget_put(s->o.budget, (span > have ? span : have) - locked);
	maps_settle(s, k->maps, l.maps);
	e.locked = locked;
	if (h) {	/* the same inode: the new mapping is locked before the old goes */
		maps_put(s, h->l.maps);
		pc_unlock(&h->l);
		s->bytes = s->bytes - h->locked + locked;
		h->l = l;
		h->locked = locked;
		s->relocks++;
		e.kind = PC_LOCKSET_RESIZED;
		emit(s, &e);
		return 1;
	}
	if (add_held(s, &l, locked, &k->st, k->path) < 0) {
		maps_put(s, l.maps);
		pc_unlock(&l);
		pc_budget_put(s->o.budget, locked);
		e.kind = PC_LOCKSET_FAILED;
		e.why = PC_LOCKSET_WHY_NOMEM;
		e.err = ENOMEM;
		emit(s, &e);
		return 0;
	}
	s->relocks++;
	e.kind = gone ? PC_LOCKSET_REPLACED : PC_LOCKSET_NEW;
	emit(s, &e);
	return 1;
}

/* A rescan's walk failed: nothing was seen, so nothing is taken for gone. */
static void rescan_failed(struct pc_lockset *s, int err)
{
	struct pc_lockset_event e = { .kind = PC_LOCKSET_WALK_FAILED, .err = err };

	emit(s, &e);
	for (size_t i = 0; i < s->ncands; i++) {
		close(s->cands[i].fd);
		free(s->cands[i].path);
	}
	s->ncands = 0;
	for (size_t i = 0; i < s->n; i++)
		s->locks[i].seen = true;
	for (size_t i = 0; i < s->ndirs; i++)
		s->dirs[i].seen = true;
}

/* Directories no longer walked: their watches go. */
static void unwatch_unseen(struct pc_lockset *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->ndirs; i++) {
		bool root_dir = false;

		for (size_t j = 0; j < s->nroots; j++)
			root_dir |= s->roots[j].wd == s->dirs[i].wd;
		if (s->dirs[i].seen || root_dir)
			s->dirs[kept++] = s->dirs[i];
		else if (s->ifd >= 0)
			inotify_rm_watch(s->ifd, s->dirs[i].wd);
	}
	s->ndirs = kept;
}

/*
 * What was not found where it was: released, first (never two at once).
 * Their paths and sizes go to *ret_gone, for the lines.
 */
static size_t release_unseen(struct pc_lockset *s, struct held **ret_gone)
{
	struct held *gone = NULL;
	size_t kept = 0, ngone = 0;

	for (size_t i = 0; i < s->n; i++) {
		struct held *h = &s->locks[i], copy, *ng;

		if (h->seen) {
			s->locks[kept++] = *h;
			continue;
		}
		copy = *h;
		pc_budget_put(s->o.budget, h->locked);
		s->bytes -= h->locked;
		maps_put(s, h->l.maps);
		pc_unlock(&h->l);	/* the old inode's pages may go now */
		ng = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (ng) {
			gone = ng;
			gone[ngone++] = copy;	/* its path and length, for the lines */
		} else {
			free(copy.path);
		}
	}
	s->n = kept;
	s->nsorted = kept;	/* sorted still: relock finds resized files by inode */
	*ret_gone = gone;
	return ngone;
}

int pc_lockset_rescan(struct pc_lockset *s)
{
	struct held *gone;
	size_t ngone;
	bool changed;
	int rc;

	s->rescans++;
	for (size_t i = 0; i < s->n; i++)
		s->locks[i].seen = false;
	if (s->n)	/* never qsort(NULL, 0) */
		qsort(s->locks, s->n, sizeof(*s->locks), cmp_held);
	for (size_t i = 0; i < s->ndirs; i++)
		s->dirs[i].seen = false;
	rc = walk_roots(s, rescan_file);
	if (rc < 0)
		rescan_failed(s, -rc);
	unwatch_unseen(s);
	ngone = release_unseen(s, &gone);
	changed = ngone > 0;

	if (s->ncands)	/* qsort(NULL, 0) is undefined: UBSan stops there */
		qsort(s->cands, s->ncands, sizeof(*s->cands), cmp_cand);
	for (size_t i = 0; i < s->ncands; i++) {
		struct cand *k = &s->cands[i];
		struct held *old = NULL;

		for (size_t j = 0; k->same < 0 && j < ngone; j++)
			if (gone[j].path && !strcmp(gone[j].path, k->path))
				old = &gone[j];
		rc = relock(s, k, old);
		changed |= rc >= 0;
		if (rc == 0 && old)
			s->released++;	/* the new file refused: the name holds none now */
		if (old) {
			free(old->path);
			old->path = NULL;	/* replaced, not gone */
		}
		close(k->fd);
		free(k->path);
	}
	s->ncands = 0;
	for (size_t j = 0; j < ngone; j++) {
		struct pc_lockset_event e = { .kind = PC_LOCKSET_RELEASED, .path = gone[j].path,
					      .previous = gone[j].locked };

		if (!gone[j].path)
			continue;
		s->released++;
		emit(s, &e);
		free(gone[j].path);
	}
	free(gone);
	if (changed) {
		struct pc_lockset_stats st;
		struct pc_lockset_event e = { .kind = PC_LOCKSET_RESCAN, .stats = &st };

		pc_lockset_stats(s, &st);
		emit(s, &e);
	}
	return changed;
}

/* Read what inotify says; true if it touches the lock set. */
static bool watch_read(struct pc_lockset *s)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool dirty = false;
	ssize_t n;

	while ((n = read(s->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;
			bool known = false;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				dirty = true;	/* events were lost: everything is looked at */
				continue;
			}
			for (size_t i = 0; i < s->ndirs && !known; i++)
				known = s->dirs[i].wd == ev->wd;
			if (known) {	/* a tree's: any name, or the directory itself */
				dirty = true;
				continue;
			}
			for (size_t i = 0; i < s->nroots; i++) {
				const struct wroot *r = &s->roots[i];

				if (r->wd != ev->wd)
					continue;
				if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED) ||
				    (ev->len && !strcmp(ev->name, r->base)))
					dirty = true;
			}
		}
	}
	return dirty;
}

int pc_lockset_fd(const struct pc_lockset *s)
{
	return s->ifd;
}

int pc_lockset_timeout(const struct pc_lockset *s)
{
	double t = pc_now(), due = -1;

	if (s->first)
		due = s->last + QUIET_S < s->first + BURST_MAX_S ? s->last + QUIET_S :
								    s->first + BURST_MAX_S;
	if (s->next && (due < 0 || s->next < due))
		due = s->next;
	if (due < 0)
		return -1;
	return due <= t ? 0 : (int)((due - t) * 1000) + 1;
}

int pc_lockset_dispatch(struct pc_lockset *s)
{
	double t = pc_now();

	if (s->ifd >= 0 && watch_read(s)) {
		if (!s->first)
			s->first = t;
		s->last = t;
	}
	if ((s->first && (t >= s->last + QUIET_S || t >= s->first + BURST_MAX_S)) ||
	    (s->next && t >= s->next)) {
		s->first = s->last = 0;
		pc_lockset_rescan(s);
		if (s->interval)
			s->next = pc_now() + s->interval;
		return 1;
	}
	return 0;
}

void pc_lockset_free(struct pc_lockset *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++) {
		pc_unlock(&s->locks[i].l);
		free(s->locks[i].path);
	}
	free(s->locks);
	if (s->ifd >= 0)
		close(s->ifd);
	for (size_t i = 0; i < s->nroots; i++) {
		if (s->roots[i].dirfd >= 0)
			close(s->roots[i].dirfd);
		free(s->roots[i].path);
		free(s->roots[i].dir);
		free(s->roots[i].base);
	}
	free(s->roots);
	free(s->dirs);
	for (size_t i = 0; i < s->ncands; i++) {
		close(s->cands[i].fd);
		free(s->cands[i].path);
	}
	free(s->cands);
	free(s->refused);
	pthread_mutex_destroy(&s->lock);
	free(s);
}
