/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-lock.c: `pagecache lock`: keep files in the page cache with mlock
 * until SIGTERM, SIGINT or SIGHUP. A lock lasts only while its mapping
 * does, so this process stays; --daemon detaches it after the files are
 * locked (the parent exits with the locking's status, so `pagecache lock
 * --daemon ... && start-service` is safe). Never more than the memory
 * budget: mlocked pages cannot be reclaimed, so overshooting would push
 * the host toward OOM. Only a file's data is locked, never a hole
 * (lib/lock.c): a file's owner could otherwise make us pin its size.
 *
 * --watch keeps the lock set as files are replaced: inotify on the
 * directories that hold them (every directory of a tree, the parent of a
 * file named), and after a burst of changes has gone quiet (200 ms; at
 * most 2 s after the first) the named paths are walked again by the same
 * walker, with the same rules (no link followed without -f, nothing
 * outside the roots, no FIFO or device opened, the budget). What is found
 * where it was stays as it is (each PATH resolved once, at the start, and
 * walked again from the directory that held it then, held open: never by
 * its path, so a directory above it swapped for a link leads nowhere); a
 * new inode at a name (rename over, delete and create) or a new file in a
 * tree is locked, after the mapping of the old inode is released (so the
 * two never count together against the budget); a file whose data changed
 * is locked again, new mapping first.
 * The set never grows past --max-mem, or without it past the bytes it
 * held when first locked: whoever may write one of its files must not
 * decide how much memory root pins; nor how many of our mappings its
 * locks take (half of vm.max_map_count for the whole set).
 * Where a directory cannot be watched (the inotify watch limit) the walk
 * is repeated every --watch-interval seconds instead (30 by default).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys.h"		/* pc_sys_inotify_add_watch (lib/sys.h) */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One file locked. */
struct held {
	struct pc_lock l;
	uint64_t locked;	/* bytes mlocked: the file's data, never a hole */
	dev_t dev;
	ino_t ino;
	char *path;		/* as the walk reached it; NULL without --watch */
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
 * A named PATH, as --watch keeps an eye on it. Its links are resolved once,
 * at the start (they are the caller's, as named); from then on it is the
 * name `base` in the directory that held it then, held open (dirfd): what
 * happens to the path above it (a parent renamed, or swapped for a link by
 * whoever may write the grandparent) changes nothing, and no link is ever
 * followed to reach it again.
 */
struct wroot {
	const char *path;	/* as named: the name the lines give */
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

struct watch {
	int ifd;			/* inotify; -1: none (rescans on the timer only) */
	unsigned interval;		/* seconds between rescans; 0: on events only */
	bool interval_set;		/* --watch-interval given */
	bool limit_said;		/* "cannot watch" said once */
	struct wroot *roots;
	size_t nroots;
	struct wdir *dirs;
	size_t ndirs, dcap;
	struct cand *cands;
	size_t ncands, ccap;
	struct refused *refused;
	size_t nrefused, rcap;
	uint64_t relocks, released, rescans;
	uint64_t refusals, refused_bytes;	/* what the caps and mlock refused */
};

struct lock_ctx {
	struct targets t;
	struct pc_budget budget;
	pthread_mutex_t lock;
	struct held *locks;
	size_t n, cap;
	size_t nsorted;		/* a rescan's: locks[0..nsorted) sorted by inode */
	uint64_t bytes;		/* locked: the sum of locks[].locked */
	uint64_t holes;		/* bytes of holes in the range, never locked */
	uint64_t maps;		/* mappings the locks take (taken before each lock) */
	uint64_t max_maps;	/* ... at most: half of vm.max_map_count */
	bool size_cap;		/* the budget's max is the set's first size, not --max-mem */
	bool list, stopped;
	struct watch *w;	/* --watch; NULL: none */
};

static const struct ocol lock_cols[] = {
	{ "locked", "LOCKED", false }, { "path", "FILE", true },
};

static const struct cli_opt lock_opts[] = {
	CLI_OPT_COLUMNS,
	{ "daemon", 'd', 0, 'd', NULL, CC_NONE, NULL,
	  "detach once everything is locked; the parent exits\n0 when every file is locked and the daemon holds\n"
	  "them; on any failure the daemon releases all and\nexits, and the parent exits 1", 0 },
	/* id past the letters: 'P' is --prom's (OPT_PROM) */
	{ "pidfile", 'P', 0, 'P' + 512, "FILE", CC_FILE, NULL,
	  "write the locking process's PID to FILE (removed\nat exit if it still holds that PID)", 0 },
	{ "wait", 'w', 0, 'w', NULL, CC_NONE, NULL,
	  "vmtouch's -w: with -d, wait until every page is\nlocked (what -d always does)", 0 },
	{ "watch", 0, 0, 'w' + 512, NULL, CC_NONE, NULL,
	  "while locked, lock again what is replaced: a file\n"
	  "renamed over or deleted and made again, a new file\n"
	  "in a tree, a file that grew (inotify); one line\n"
	  "per change, the old inode's lock released; the\n"
	  "set grows only within --max-mem (else not past\n"
	  "its first size)", 0 },
	{ "watch-interval", 0, 0, 'i' + 512, "SECS", CC_NONE, NULL,
	  "with --watch, also walk everything again every\n"
	  "SECS seconds (0: only on changes, the default;\n"
	  "30 where the inotify watch limit is reached)", 0 },
	{ "verbose", 'v', 0, 'v', NULL, CC_NONE, NULL, "list each file", 0 },
	{ 0 }
};

const struct cli_spec lock_spec = {
	.name = "lock",
	.usage =
	"Usage: pagecache lock [OPTIONS] PATH...\n"
	"\n"
	"Load files into the page cache and keep them there (mlock(2)) until\n"
	"SIGTERM, SIGINT or SIGHUP. Locking needs CAP_IPC_LOCK or a large enough\n"
	"'ulimit -l' (RLIMIT_MEMLOCK; uid 0 without the capability is limited too).\n"
	"It never locks more than MemAvailable minus a reserve\n"
	"(default 5% of RAM, at least 256M), nor past the memory cgroup's headroom.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache lock /srv/index/hot.idx             (Ctrl-C to release)\n"
	"  pagecache lock -d -P /run/hot.pid /srv/index && kill $(cat /run/hot.pid)\n"
	"  pagecache -dl -P /run/hot.pid /srv/index    the same, as vmtouch -dl\n"
	"  pagecache lock --watch --max-mem 2G /usr/lib/x86_64-linux-gnu/libssl.so.3 /srv/index\n"
	"                    (kept locked across package upgrades and index rebuilds,\n"
	"                    the set free to grow to 2G)\n"
	"Exit status: 0 all locked (with -d: the daemon holds them; without: released\n"
	"cleanly at the signal), 1 some files failed or the budget stopped it (with\n"
	"--watch: also a re-lock that failed since), 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", lock_opts }, &cli_budget_group,
		    &cli_format_act_group, &cli_targets_group },
	.operands = CC_FILE,
	.cols = lock_cols,
	.ncols = sizeof(lock_cols) / sizeof(lock_cols[0]),
};

/*
 * The kernel lets mlock past RLIMIT_MEMLOCK only with CAP_IPC_LOCK (a
 * limit of 0 without it is EPERM, past a limit ENOMEM), whatever the uid.
 * With the capability the limit is not what failed.
 */
/* Prometheus text: docs/metrics.md */
static const struct ometric metrics[] = {
	{ "total", "files", "files", 0, "Files locked in the cache." },
	{ "total", "locked", "locked_bytes", 0, "Bytes locked in the cache (mlock)." },
	{ "total", "holes", "holes_bytes", 0,
	  "Bytes of holes in the files, left unlocked (only data is locked)." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "budget_stopped", "budget_stopped", 0,
	  "1 if the memory budget stopped the locking early, else 0." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "locked", "file_locked_bytes", OM_PER_FILE, "Bytes of the file locked." },
};

static const char *lock_reason(int err)
{
	static char buf[256];
	struct rlimit rl;

	switch (err) {
	case ENOMEM:
	case EPERM:
	case EAGAIN:
		if (!pc_have_cap(CAP_IPC_LOCK) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			snprintf(buf, sizeof(buf),
				 "locked memory not allowed: RLIMIT_MEMLOCK is %llu KiB "
				 "(needs CAP_IPC_LOCK, or a higher 'ulimit -l'; "
				 "or vm.max_map_count is reached)",
				 (unsigned long long)rl.rlim_cur >> 10);
		else
			snprintf(buf, sizeof(buf), "%s (memory limit or vm.max_map_count)",
				 strerror(err));
		return buf;
	default:
		return strerror(err);
	}
}

/* Keep lock l (locked bytes of it) of file st (reached as path); -ENOMEM. Thread-safe. */
static int add_held(struct lock_ctx *c, const struct pc_lock *l, uint64_t locked,
		    const struct stat *st, const char *path)
{
	char *p = NULL;

	if (c->w && !(p = strdup(path)))
		return -ENOMEM;
	pthread_mutex_lock(&c->lock);
	if (cli_grow(&c->locks, &c->cap, c->n, sizeof(*c->locks)) < 0) {
		pthread_mutex_unlock(&c->lock);
		free(p);
		return -ENOMEM;
	}
	c->locks[c->n++] = (struct held){ *l, locked, st->st_dev, st->st_ino, p, true };
	c->bytes += locked;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* The bytes of a file of `size` the range selects, holes and all. */
static uint64_t lock_span(const struct targets *t, uint64_t size)
{
	uint64_t ps = pc_page_size(), stop;

	if (t->off >= size)
		return 0;
	stop = t->len == 0 || t->len > size - t->off ? size : t->off + t->len;
	return stop - t->off / ps * ps;
}

/*
 * The data of file e that a lock takes (never its holes), and whether
 * some of it lies past the pieces a lock may split a mapping into (said).
 */
static int data_bytes(struct lock_ctx *c, int fd, const struct stat *st, const char *path,
		      uint64_t *ret, uint64_t *ret_maps)
{
	int rc = pc_fd_data_maps(fd, (uint64_t)st->st_size, c->t.off, c->t.len, ret, ret_maps);

	if (rc < 0)
		cli_fail_msg(path, "cannot lock", strerror(-rc));
	else if (rc == 1)
		cli_warn("cannot lock all of '%s': its data lies in more than %d pieces; "
			 "the rest is not locked", path, PC_LOCK_MAX_RANGES);
	return rc;
}

/*
 * The set's budget of mappings: each piece of a file's data mlocked splits
 * its mapping, and a process has vm.max_map_count of them in all (65530 by
 * default), its own libraries, heap and threads' stacks among them. Files
 * whose data lies in many pieces (a user makes them with a page written
 * every other page, up to PC_LOCK_MAX_RANGES pieces a file) must not use
 * them up: past it mmap and mlock fail with ENOMEM, for a file that needs
 * one mapping as much as for theirs, and so does our own malloc. Half is
 * kept for the set; a file that would pass it is refused, said. Taken
 * before the lock (the most it can take), the rest given back after.
 */
static bool maps_take(struct lock_ctx *c, uint64_t n)
{
	bool ok;

	pthread_mutex_lock(&c->lock);
	ok = c->maps + n <= c->max_maps;
	if (ok)
		c->maps += n;
	pthread_mutex_unlock(&c->lock);
	return ok;
}

static void maps_put(struct lock_ctx *c, uint64_t n)
{
	pthread_mutex_lock(&c->lock);
	c->maps -= n < c->maps ? n : c->maps;
	pthread_mutex_unlock(&c->lock);
}

/*
 * A lock made: `taken` was taken for it, it split into `maps`. The rest
 * goes back; more (its data in more pieces since they were counted, at
 * most PC_LOCK_MAX_RANGES) is counted all the same: the mappings exist.
 */
static void maps_settle(struct lock_ctx *c, uint64_t taken, uint64_t maps)
{
	pthread_mutex_lock(&c->lock);
	c->maps = c->maps - (taken < c->maps ? taken : c->maps) + maps;
	pthread_mutex_unlock(&c->lock);
}

/* Why a file's pieces were refused, for stderr. */
static const char *maps_why(const struct lock_ctx *c, uint64_t maps, char *buf, size_t len)
{
	snprintf(buf, len, "its data lies in %llu pieces, and their %llu mappings would pass "
		 "the lock set's budget of them (%llu of %llu taken: half of vm.max_map_count)",
		 (unsigned long long)(maps + 1) / 2, (unsigned long long)maps,
		 (unsigned long long)c->maps, (unsigned long long)c->max_maps);
	return buf;
}

/* Lock fd's data, at most want bytes: 0 (*ret_locked set) or -errno, said. */
static int lock_data(struct lock_ctx *c, int fd, const struct stat *st, const char *path,
		     uint64_t want, struct pc_lock *l, uint64_t *ret_locked)
{
	int rc = pc_fd_lock_max(fd, (uint64_t)st->st_size, c->t.off, c->t.len, want ? want : 1,
				l, ret_locked);

	if (rc < 0)
		cli_fail_msg(path, "cannot lock", lock_reason(-rc));
	else if (!want)	/* max 1 locks no page: all holes */
		*ret_locked = 0;
	return rc;
}

static int lock_file(struct pc_walk_entry *e, void *arg)
{
	struct lock_ctx *c = arg;
	uint64_t size = (uint64_t)e->st.st_size, want, locked;
	uint64_t maps;
	struct pc_lock l;
	struct orec rec = { 0 };
	char why[256];
	int rc;

	if (data_bytes(c, e->fd, &e->st, e->path, &want, &maps) < 0)
		return 0;
	if (!maps_take(c, maps)) {
		cli_fail_msg(e->path, "cannot lock", maps_why(c, maps, why, sizeof(why)));
		return 0;
	}
	if (!pc_budget_take(&c->budget, want)) {
		maps_put(c, maps);
		c->stopped = true;
		return 1;
	}
	rc = lock_data(c, e->fd, &e->st, e->path, want, &l, &locked);
	if (rc < 0) {
		if (want)
			pc_budget_put(&c->budget, want);
		maps_put(c, maps);
		return 0;
	}
	if (want > locked)
		pc_budget_put(&c->budget, want - locked);	/* holes made since the count */
	maps_settle(c, maps, l.maps);
	if (add_held(c, &l, locked, &e->st, e->path) < 0) {
		maps_put(c, l.maps);
		pc_unlock(&l);
		pc_budget_put(&c->budget, locked);
		cli_fail(e->path, ENOMEM, "cannot lock");
		return 0;
	}
	__atomic_add_fetch(&c->holes, lock_span(&c->t, size) - locked, __ATOMIC_RELAXED);
	if (c->list) {
		orec_str(&rec, "path", e->path, OF_LABEL);
		orec_u64(&rec, "locked", locked, OF_BYTES);
		out_list_add("files", &rec);
	}
	return 0;
}

/* ---- --watch ---------------------------------------------------------- */

#define WATCH_MASK (IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE | IN_MOVED_FROM | \
		    IN_DELETE_SELF | IN_MOVE_SELF | IN_EXCL_UNLINK)
#define QUIET_S 0.2		/* a burst is over after this much quiet */
#define BURST_MAX_S 2.0		/* ... or this long after its first change */
#define FALLBACK_INTERVAL 30	/* seconds, where a directory cannot be watched */

/* Milliseconds since the epoch: when an event happened, for logs and scripts. */
static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A directory could not be watched: said once, with the limit where that
 * is why, and from then on everything is walked again on a timer too.
 */
static void watch_failed(struct watch *w, const char *dir, int err)
{
	if (err == ENOENT || err == ENOTDIR)
		return;		/* gone already: the rescan it causes sees that */
	if (!w->interval)
		w->interval = FALLBACK_INTERVAL;
	if (w->limit_said)
		return;
	w->limit_said = true;
	if (!dir) {	/* no inotify instance at all */
		cli_warn("cannot watch: inotify: %s%s; walking everything again every %u s "
			 "instead (--watch-interval)", strerror(err),
			 err == EMFILE ? " (fs.inotify.max_user_instances is reached)" : "",
			 w->interval);
	} else if (err == ENOSPC) {
		unsigned long max = 0;
		FILE *f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");

		if (f) {
			if (fscanf(f, "%lu", &max) != 1)
				max = 0;
			fclose(f);
		}
		cli_warn("cannot watch '%s': the inotify watch limit is reached "
			 "(fs.inotify.max_user_watches = %lu); walking everything again every %u s "
			 "instead (--watch-interval)", dir, max, w->interval);
	} else {
		cli_warn("cannot watch '%s': %s; walking everything again every %u s instead "
			 "(--watch-interval)", dir, strerror(err), w->interval);
	}
}

/* Watch directory `path` of a tree (called by the walk, serialised). */
static void watch_dir(const char *path, void *arg)
{
	struct lock_ctx *c = arg;
	struct watch *w = c->w;
	bool follow = c->t.walk.follow;
	const char *at = path;
	char *anchored = NULL;
	int wd;

	if (w->ifd < 0)
		return;
	/* beneath a root: reached from the root's fd, not by its path */
	for (size_t i = 0; i < w->nroots; i++) {
		const struct wroot *r = &w->roots[i];
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
	wd = pc_sys_inotify_add_watch(w->ifd, at,
				      WATCH_MASK | IN_ONLYDIR | (follow ? 0 : IN_DONT_FOLLOW));
	free(anchored);
	if (wd < 0) {
		watch_failed(w, path, -wd);
		return;
	}
	for (size_t i = 0; i < w->ndirs; i++)
		if (w->dirs[i].wd == wd) {
			w->dirs[i].seen = true;
			return;
		}
	if (cli_grow(&w->dirs, &w->dcap, w->ndirs, sizeof(*w->dirs)) == 0)
		w->dirs[w->ndirs++] = (struct wdir){ wd, true };
}

/*
 * Resolve PATH once: its links followed now, as the caller named it. The
 * directory that holds what it names is kept open (O_PATH), and the last
 * component is the name looked for there. A PATH not there yet: its
 * directory, and its last component as given. 0 or -errno.
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
 * followed (with -f, one at base is: -f follows links), else -errno
 * (-ELOOP: a link is there).
 */
static int root_open(const struct lock_ctx *c, const struct wroot *r)
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
	if (!c->t.walk.follow)
		return -ELOOP;
	fd = openat(r->dirfd, r->base, O_PATH | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * Watch the directory that holds each PATH, through the fd held on it: a
 * file named is replaced there, and a tree's own directory may be (a
 * tree's directories come with the walk). The watch is on that inode: it
 * stays with the directory if it is renamed.
 */
static void watch_parents(struct lock_ctx *c)
{
	struct watch *w = c->w;

	for (size_t i = 0; i < w->nroots && w->ifd >= 0; i++) {
		struct wroot *r = &w->roots[i];
		char at[64];

		if (r->dirfd < 0)
			continue;
		snprintf(at, sizeof(at), "/proc/self/fd/%d", r->dirfd);
		r->wd = pc_sys_inotify_add_watch(w->ifd, at, WATCH_MASK | IN_ONLYDIR);
		if (r->wd < 0)
			watch_failed(w, r->dir, -r->wd);
	}
}

static int watch_init(struct lock_ctx *c, struct watch *w)
{
	c->w = w;
	w->ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (w->ifd < 0)
		watch_failed(w, NULL, errno);
	w->roots = calloc(c->t.npaths ? c->t.npaths : 1, sizeof(*w->roots));
	if (!w->roots)
		return -ENOMEM;
	for (size_t i = 0; i < c->t.npaths; i++) {
		struct wroot *r = &w->roots[w->nroots++];
		int rc;

		*r = (struct wroot){ .path = c->t.paths[i], .dirfd = -1, .fd = -1, .wd = -1 };
		rc = root_resolve(r);
		if (rc < 0)
			cli_fail_msg(r->path, "cannot watch", strerror(-rc));
	}
	c->t.dir = watch_dir;
	c->t.dir_arg = c;
	watch_parents(c);
	return 0;
}

static void watch_release(struct watch *w)
{
	if (w->ifd >= 0)
		close(w->ifd);
	for (size_t i = 0; i < w->nroots; i++) {
		if (w->roots[i].dirfd >= 0)
			close(w->roots[i].dirfd);
		free(w->roots[i].dir);
		free(w->roots[i].base);
	}
	free(w->roots);
	free(w->dirs);
	free(w->cands);
	free(w->refused);
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
 * Walk the named paths as --watch holds them: each from the fd of what is
 * at its name in its directory now (root_open), never by its path. A path
 * that was no link and is one now is not followed (without -f): said once,
 * and its lock is released. The walk's return, or 0.
 */
static int watch_walk(struct lock_ctx *c, int (*fn)(struct pc_walk_entry *, void *))
{
	struct watch *w = c->w;
	const char **saved = c->t.paths, **paths;
	size_t nsaved = c->t.npaths, n = 0;
	int *fds, rc;

	paths = malloc((w->nroots ? w->nroots : 1) * sizeof(*paths));
	fds = malloc((w->nroots ? w->nroots : 1) * sizeof(*fds));
	if (!paths || !fds) {
		free(paths);
		free(fds);
		return -ENOMEM;
	}
	for (size_t i = 0; i < w->nroots; i++) {
		struct wroot *r = &w->roots[i];
		int fd;

		if (r->dirfd < 0)
			continue;	/* said at the start */
		fd = root_open(c, r);
		if (fd == -ELOOP) {
			if (!r->refused)
				cli_fail_msg(r->path, "not following", "a symbolic link replaced it "
					     "(-f follows links); its lock is released");
			r->refused = true;
			continue;
		}
		r->refused = false;
		if (fd < 0) {
			cli_fail(r->path, -fd, "cannot open");	/* as the walk says it */
			continue;
		}
		r->fd = fd;
		paths[n] = r->path;
		fds[n++] = fd;
	}
	c->t.paths = paths;
	c->t.npaths = n;
	c->t.walk.root_fds = fds;
	rc = n ? targets_walk(&c->t, fn, c) : 0;
	c->t.walk.root_fds = NULL;
	c->t.paths = saved;
	c->t.npaths = nsaved;
	for (size_t i = 0; i < w->nroots; i++) {
		if (w->roots[i].fd >= 0)
			close(w->roots[i].fd);
		w->roots[i].fd = -1;
	}
	free(paths);
	free(fds);
	return rc;
}

/*
 * The walk of a rescan (worker threads): a file locked already, with the
 * same data (a file truncated larger has grown only holes), is marked seen
 * and left alone; anything else is kept for after.
 */
static int watch_file(struct pc_walk_entry *e, void *arg)
{
	struct lock_ctx *c = arg;
	struct watch *w = c->w;
	struct held key = { .dev = e->st.st_dev, .ino = e->st.st_ino }, *h;
	uint64_t data, maps = 0;
	ssize_t same = -1;
	char *p;

	if (pc_fd_data_maps(e->fd, (uint64_t)e->st.st_size, c->t.off, c->t.len, &data, &maps) < 0)
		data = lock_span(&c->t, (uint64_t)e->st.st_size);	/* relock says why */
	pthread_mutex_lock(&c->lock);
	h = bsearch(&key, c->locks, c->n, sizeof(*c->locks), cmp_held);
	if (h) {
		struct held *pick = NULL;

		while (h > c->locks && !cmp_held(h - 1, &key))
			h--;	/* every lock of the inode (-H: one a name) */
		for (; h < c->locks + c->n && !cmp_held(h, &key); h++) {
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
			same = pick - c->locks;
			if (pick->locked == data) {
				pthread_mutex_unlock(&c->lock);
				return 0;
			}
		}
	}
	if (cli_grow(&w->cands, &w->ccap, w->ncands, sizeof(*w->cands)) == 0 &&
	    (p = strdup(e->path))) {
		w->cands[w->ncands++] = (struct cand){ e->fd, e->st, data, maps, p, same };
		e->fd = -1;	/* ours now */
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static bool was_refused(struct watch *w, const struct cand *k)
{
	for (size_t i = 0; i < w->nrefused; i++)
		if (w->refused[i].dev == k->st.st_dev && w->refused[i].ino == k->st.st_ino &&
		    w->refused[i].size == k->st.st_size && w->refused[i].data == k->data)
			return true;
	return false;
}

static void refuse(struct watch *w, const struct cand *k)
{
	if (cli_grow(&w->refused, &w->rcap, w->nrefused, sizeof(*w->refused)) == 0)
		w->refused[w->nrefused++] =
			(struct refused){ k->st.st_dev, k->st.st_ino, k->st.st_size, k->data };
}

/*
 * One line per change: {"watch": {...}} in JSON, `human` for people. A
 * refusal says what was wanted and why ("size": past the set's first size,
 * "max-mem", "memory", "cgroup": the budget; "pieces": its data in more
 * pieces than the set's budget of mappings has left; "mlock": the kernel
 * said no).
 */
static void watch_event_why(const char *ev, const char *path, uint64_t locked, uint64_t was,
			    const struct stat *st, const char *human, uint64_t wanted,
			    const char *reason)
{
	struct orec r = { 0 };

	orec_str(&r, "event", ev, 0);
	orec_str(&r, "path", path, 0);
	orec_u64(&r, "locked", locked, OF_BYTES);
	orec_u64(&r, "previous", was, OF_BYTES);
	if (st)
		orec_u64(&r, "inode", (uint64_t)st->st_ino, 0);
	else
		orec_null(&r, "inode");
	if (reason) {
		orec_u64(&r, "wanted", wanted, OF_BYTES);
		orec_str(&r, "reason", reason, 0);
	}
	orec_u64(&r, "time_ms", wall_ms(), 0);
	out_event("watch", &r, human);
}

static void watch_event(const char *ev, const char *path, uint64_t locked, uint64_t was,
			const struct stat *st, const char *human)
{
	watch_event_why(ev, path, locked, was, st, human, 0, NULL);
}

/* Why the budget refused: the short word of the event line, and the words of stderr. */
static const char *budget_word(const struct lock_ctx *c)
{
	switch (c->budget.stopped) {
	case PC_BUDGET_MAX:
		return c->size_cap ? "size" : "max-mem";
	case PC_BUDGET_CGROUP:
		return "cgroup";
	default:
		return "memory";
	}
}

static const char *budget_why(const struct lock_ctx *c, char *buf, size_t len)
{
	char a[32];

	if (c->budget.stopped != PC_BUDGET_MAX || !c->size_cap)
		return cli_budget_reason(c->budget.stopped);
	snprintf(buf, len, "the lock set would grow past the %s it held when first locked; "
		 "--max-mem (lock-max = for the daemon's) lets it grow",
		 pc_human_size(c->budget.max_bytes, a, sizeof(a)));
	return buf;
}

/* The lock of inode st among the sorted ones, under `path` if it has several. */
static struct held *find_held(struct lock_ctx *c, const struct stat *st, const char *path)
{
	struct held key = { .dev = st->st_dev, .ino = st->st_ino }, *h, *first;

	h = bsearch(&key, c->locks, c->nsorted, sizeof(*c->locks), cmp_held);
	if (!h)
		return NULL;
	while (h > c->locks && !cmp_held(h - 1, &key))
		h--;
	for (first = h; h < c->locks + c->nsorted && !cmp_held(h, &key); h++)
		if (!strcmp(h->path, path))
			return h;
	return first;
}

/*
 * Lock candidate k (a new inode at its path, or a file that changed size).
 * 1: locked; 0: refused, and said; -1: refused before, not said again.
 */
static int relock(struct lock_ctx *c, struct cand *k, const struct held *gone)
{
	struct watch *w = c->w;
	uint64_t span = k->data, locked;
	struct held *h = k->same >= 0 ? find_held(c, &k->st, k->path) : NULL;
	uint64_t was = h ? h->locked : gone ? gone->locked : 0, have = h ? h->locked : 0;
	char a[32], b[32], msg[512], why[512], by[256];
	struct pc_lock l;
	int rc;

	if (was_refused(w, k))
		return -1;	/* said already; it has not changed since */
	/* the new mapping is made before the old one goes: both count */
	if (!maps_take(c, k->maps)) {
		char mw[256];

		snprintf(why, sizeof(why), "%s%s", maps_why(c, k->maps, mw, sizeof(mw)),
			 h ? "; the part locked before stays locked" :
			 gone ? "; the replaced file's lock is released" : "");
		cli_fail_msg(k->path, h ? "cannot extend the lock of" : "cannot lock", why);
		w->refusals++;
		w->refused_bytes += span > have ? span - have : 0;
		watch_event_why("refused", k->path, have, was, &k->st, NULL, span, "pieces");
		refuse(w, k);
		return 0;
	}
	pc_budget_put(&c->budget, 0);	/* judged afresh */
	if (span > have && !pc_budget_take(&c->budget, span - have)) {
		snprintf(why, sizeof(why), "%s would pass the memory budget (%s)%s",
			 pc_human_size(span, a, sizeof(a)), budget_why(c, by, sizeof(by)),
			 h ? "; the part locked before stays locked" :
			 gone ? "; the replaced file's lock is released" : "");
		cli_fail_msg(k->path, h ? "cannot extend the lock of" : "cannot lock", why);
		maps_put(c, k->maps);
		w->refusals++;
		w->refused_bytes += span - have;
		watch_event_why("refused", k->path, have, was, &k->st, NULL, span, budget_word(c));
		refuse(w, k);
		return 0;
	}
	/* at most what the budget gave: data written into holes since is not locked */
	rc = lock_data(c, k->fd, &k->st, k->path, span, &l, &locked);
	if (rc < 0) {
		if (span > have)
			pc_budget_put(&c->budget, span - have);
		maps_put(c, k->maps);
		w->refusals++;
		w->refused_bytes += span > have ? span - have : 0;
		watch_event_why("refused", k->path, have, was, &k->st, NULL, span, "mlock");
		refuse(w, k);
		return 0;
	}
	/* the budget holds the larger of the old lock and the new: keep the new */
	if ((span > have ? span : have) > locked)
		pc_budget_put(&c->budget, (span > have ? span : have) - locked);
	maps_settle(c, k->maps, l.maps);
	w->relocks++;
	if (h) {	/* the same inode: the new mapping is locked before the old goes */
		maps_put(c, h->l.maps);
		pc_unlock(&h->l);
		c->bytes = c->bytes - was + locked;
		h->l = l;
		h->locked = locked;
		snprintf(msg, sizeof(msg), "re-locked '%s': its data changed, %s locked (was %s)",
			 k->path, fmt_size(locked, a, sizeof(a)), fmt_size(was, b, sizeof(b)));
		watch_event("resized", k->path, locked, was, &k->st, msg);
		return 1;
	}
	if (add_held(c, &l, locked, &k->st, k->path) < 0) {
		maps_put(c, l.maps);
		pc_unlock(&l);
		pc_budget_put(&c->budget, locked);
		w->relocks--;
		cli_fail(k->path, ENOMEM, "cannot lock");
		return 0;
	}
	if (gone)
		snprintf(msg, sizeof(msg), "re-locked '%s': a new file replaced it, %s locked "
			 "(the old one's %s released)", k->path, fmt_size(locked, a, sizeof(a)),
			 fmt_size(was, b, sizeof(b)));
	else
		snprintf(msg, sizeof(msg), "locked '%s': new, %s", k->path,
			 fmt_size(locked, a, sizeof(a)));
	watch_event(gone ? "replaced" : "new", k->path, locked, was, &k->st, msg);
	return 1;
}

/*
 * Walk the named paths again and bring the locks in line: release what is
 * gone (replaced, deleted, moved away, a link now), lock what is new.
 */
static void rescan(struct lock_ctx *c)
{
	struct watch *w = c->w;
	size_t kept = 0;
	struct held *gone = NULL;
	size_t ngone = 0;
	bool changed;
	char a[32], msg[512];
	int rc;

	w->rescans++;
	for (size_t i = 0; i < c->n; i++)
		c->locks[i].seen = false;
	if (c->n)	/* never qsort(NULL, 0) */
		qsort(c->locks, c->n, sizeof(*c->locks), cmp_held);
	for (size_t i = 0; i < w->ndirs; i++)
		w->dirs[i].seen = false;
	rc = watch_walk(c, watch_file);
	if (rc < 0) {	/* nothing was seen: nothing is taken for gone */
		cli_warn("walk failed: %s; the locks stay as they are until the next change",
			 strerror(-rc));
		for (size_t i = 0; i < w->ncands; i++) {
			close(w->cands[i].fd);
			free(w->cands[i].path);
		}
		w->ncands = 0;
		for (size_t i = 0; i < c->n; i++)
			c->locks[i].seen = true;
		for (size_t i = 0; i < w->ndirs; i++)
			w->dirs[i].seen = true;
	}

	/* directories no longer walked: their watches go */
	for (size_t i = 0; i < w->ndirs; i++) {
		bool root_dir = false;

		for (size_t j = 0; j < w->nroots; j++)
			root_dir |= w->roots[j].wd == w->dirs[i].wd;
		if (w->dirs[i].seen || root_dir)
			w->dirs[kept++] = w->dirs[i];
		else if (w->ifd >= 0)
			inotify_rm_watch(w->ifd, w->dirs[i].wd);
	}
	w->ndirs = kept;

	/* What was not found where it was: released, first (never two at once) */
	kept = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct held *h = &c->locks[i];

		if (h->seen) {
			c->locks[kept++] = *h;
			continue;
		}
		struct held copy = *h, *ng;

		pc_budget_put(&c->budget, h->locked);
		c->bytes -= h->locked;
		maps_put(c, h->l.maps);
		pc_unlock(&h->l);	/* the old inode's pages may go now */
		ng = realloc(gone, (ngone + 1) * sizeof(*gone));
		if (ng) {
			gone = ng;
			gone[ngone++] = copy;	/* its path and length, for the lines */
		} else {
			free(copy.path);
		}
	}
	changed = ngone > 0;
	c->n = kept;
	c->nsorted = kept;	/* sorted still: relock finds resized files by inode */

	if (w->ncands)	/* qsort(NULL, 0) is undefined: UBSan stops there */
		qsort(w->cands, w->ncands, sizeof(*w->cands), cmp_cand);
	for (size_t i = 0; i < w->ncands; i++) {
		struct cand *k = &w->cands[i];
		struct held *old = NULL;

		for (size_t j = 0; k->same < 0 && j < ngone; j++)
			if (gone[j].path && !strcmp(gone[j].path, k->path))
				old = &gone[j];
		rc = relock(c, k, old);
		changed |= rc >= 0;
		if (rc == 0 && old)
			w->released++;	/* the new file refused: the name holds none now */
		if (old) {
			free(old->path);
			old->path = NULL;	/* replaced, not gone */
		}
		close(k->fd);
		free(k->path);
	}
	w->ncands = 0;
	for (size_t j = 0; j < ngone; j++) {
		if (!gone[j].path)
			continue;
		w->released++;
		snprintf(msg, sizeof(msg), "released '%s': gone from where it was "
			 "(deleted, moved away or no longer selected)", gone[j].path);
		watch_event("released", gone[j].path, 0, gone[j].locked, NULL, msg);
		free(gone[j].path);
	}
	free(gone);
	if (changed) {
		struct orec r = { 0 };

		snprintf(msg, sizeof(msg), "watching: %zu files locked, %s", c->n,
			 fmt_size(c->bytes, a, sizeof(a)));
		orec_str(&r, "event", "rescan", 0);
		orec_u64(&r, "files", c->n, 0);
		orec_u64(&r, "locked", c->bytes, OF_BYTES);
		orec_u64(&r, "relocks", w->relocks, 0);
		orec_u64(&r, "released", w->released, 0);
		orec_u64(&r, "rescans", w->rescans, 0);
		orec_u64(&r, "refusals", w->refusals, 0);
		orec_u64(&r, "refused", w->refused_bytes, OF_BYTES);
		orec_u64(&r, "failures", cli_failures(), 0);
		orec_u64(&r, "time_ms", wall_ms(), 0);
		out_event("watch", &r, msg);
	}
	fflush(stderr);
}

/* Read what inotify says; true if it touches the lock set. */
static bool watch_read(struct watch *w)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool dirty = false;
	ssize_t n;

	while ((n = read(w->ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;
			bool known = false;

			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				dirty = true;	/* events were lost: everything is looked at */
				continue;
			}
			for (size_t i = 0; i < w->ndirs && !known; i++)
				known = w->dirs[i].wd == ev->wd;
			if (known) {	/* a tree's: any name, or the directory itself */
				dirty = true;
				continue;
			}
			for (size_t i = 0; i < w->nroots; i++) {
				const struct wroot *r = &w->roots[i];

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

/*
 * Wait for a signal, rescanning after each burst of changes (and on the
 * timer). Returns the signal.
 */
static int watch_loop(struct lock_ctx *c, const sigset_t *set)
{
	struct watch *w = c->w;
	double first = 0, last = 0, next = w->interval ? now_s() + w->interval : 0;
	int sfd = signalfd(-1, set, SFD_CLOEXEC);

	if (sfd < 0) {
		int sig;

		cli_warn("cannot watch: signalfd: %s; the files stay locked as they are",
			 strerror(errno));
		fflush(stderr);
		while (sigwait(set, &sig) != 0)
			;
		return sig;
	}
	for (;;) {
		struct pollfd pf[2] = { { sfd, POLLIN, 0 }, { w->ifd, POLLIN, 0 } };
		double t = now_s(), due = -1;
		int timeout = -1;

		if (first)
			due = last + QUIET_S < first + BURST_MAX_S ? last + QUIET_S : first + BURST_MAX_S;
		if (next && (due < 0 || next < due))
			due = next;
		if (due >= 0)
			timeout = due <= t ? 0 : (int)((due - t) * 1000) + 1;
		if (poll(pf, w->ifd >= 0 ? 2 : 1, timeout) < 0 && errno != EINTR)
			break;
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				close(sfd);
				return (int)si.ssi_signo;
			}
		}
		t = now_s();
		if (w->ifd >= 0 && (pf[1].revents & POLLIN) && watch_read(w)) {
			if (!first)
				first = t;
			last = t;
		}
		if ((first && (t >= last + QUIET_S || t >= first + BURST_MAX_S)) ||
		    (next && t >= next)) {
			first = last = 0;
			rescan(c);
			if (w->interval)
				next = now_s() + w->interval;
		}
	}
	cli_warn("cannot watch: poll: %s", strerror(errno));
	close(sfd);
	{
		int sig;

		while (sigwait(set, &sig) != 0)
			;
		return sig;
	}
}

/*
 * What we wrote at --pidfile, so that exit removes it only while it is
 * still ours: another process may have written its own there since.
 */
struct pidfile {
	const char *path;
	dev_t dev;
	ino_t ino;
};

/*
 * Written beside FILE under a name of our own making (mkostemp: O_CREAT |
 * O_EXCL, so a link planted there makes it fail, never followed), then
 * renamed into place: rename replaces a symlink at FILE, it never writes
 * through one.
 */
static int write_pidfile(struct pidfile *pf)
{
	char tmp[4096], buf[32];
	struct stat st;
	int fd, n, err;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", pf->path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", getpid());
	errno = 0;	/* a short write sets none */
	if (fchmod(fd, 0644) < 0 || fstat(fd, &st) < 0 || write(fd, buf, (size_t)n) != n ||
	    fsync(fd) < 0) {
		err = errno ? errno : EIO;
		close(fd);
		unlink(tmp);
		return -err;
	}
	if (close(fd) < 0 || rename(tmp, pf->path) < 0) {
		err = errno;
		unlink(tmp);
		return -err;
	}
	pf->dev = st.st_dev;
	pf->ino = st.st_ino;
	return 0;
}

/* Remove the pidfile if the file there is still the one we wrote, with our pid. */
static void remove_pidfile(const struct pidfile *pf)
{
	char buf[32], want[32];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(pf->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == pf->dev &&
	    st.st_ino == pf->ino ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		return;
	buf[n] = 0;
	snprintf(want, sizeof(want), "%d\n", getpid());
	if (!strcmp(buf, want))
		unlink(pf->path);
}

int cmd_lock(int argc, char **argv)
{
	struct cli_parser p;
	struct lock_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct cli_opts co = { OUT_HUMAN };
	struct cli_budget bo = CLI_BUDGET_INIT;
	struct pidfile pf = { NULL };
	struct watch w = { .ifd = -1 };
	bool daemon = false, watch = false, held;
	unsigned failed0 = 0;
	struct orec rec = { 0 };
	int opt, rc, pipefd[2] = { -1, -1 }, sig;
	sigset_t set;
	char a[32];
	unsigned char status;

	targets_init(&c.t);
	cli_parser_init(&p, &lock_spec, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case 'd':
			daemon = true;
			break;
		case 'P' + 512:
			pf.path = p.arg;
			break;
		case 'w':	/* -d waits until all is locked anyway */
			break;
		case 'w' + 512:
			watch = true;
			break;
		case 'i' + 512: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(p.arg, &end, 10);
			if (!*p.arg || *end || *p.arg == '-' || errno || v > 86400) {
				cli_usage_error("invalid --watch-interval '%s' (seconds, 0 to 86400)",
						p.arg);
				return EXIT_USAGE;
			}
			w.interval = (unsigned)v;
			w.interval_set = true;
			break;
		}
		case 'M': case 'S': case 'T':
			if (cli_budget_opt(&bo, opt, p.arg) < 0)
				return EXIT_USAGE;
			break;
		case 'v':
			c.list = true;
			break;
		default:
			if (cli_common_opt(&co, &c.t, opt, p.arg, argv) < 0)
				return EXIT_USAGE;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (cli_start(&co, &c.t, argc, argv) < 0)
		return EXIT_USAGE;
	if ((w.interval_set && !watch) || (watch && (c.t.npids || c.t.cgroup))) {
		if (!watch)
			cli_usage_error("--watch-interval needs --watch");
		else
			cli_usage_error("--watch keeps PATHs locked, not the files of --pid or --cgroup");
		targets_release(&c.t);	/* a sanitized build's leak check: exit 2, not 1 */
		return EXIT_USAGE;
	}
	out_prom_metrics("lock", metrics, sizeof(metrics) / sizeof(metrics[0]));
	c.list = c.list || co.prom_per_file;
	if (pc_budget_init(&c.budget, bo.max_mem, bo.reserve) < 0) {
		cli_warn("cannot read memory state");
		return EXIT_PARTIAL;
	}
	c.max_maps = pc_max_map_count() / 2;	/* the rest: ours, and headroom */

	/*
	 * Signals wait for sigwait below; the walker's threads inherit the
	 * mask. A shell starts background jobs with SIGINT ignored, and an
	 * ignored signal is discarded even while blocked: take it back.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (daemon) {
		pid_t pid;

		if (pipe2(pipefd, O_CLOEXEC) < 0) {
			cli_warn("cannot create a pipe: %s", strerror(errno));
			return EXIT_PARTIAL;
		}
		fflush(stdout);
		pid = fork();	/* before locking: mlock is not inherited */
		if (pid < 0) {
			cli_warn("cannot fork: %s", strerror(errno));
			return EXIT_PARTIAL;
		}
		if (pid > 0) {
			int st;

			close(pipefd[1]);
			if (read(pipefd[0], &status, 1) == 1) {
				/* a daemon that failed is gone before we say so */
				if (status)
					waitpid(pid, &st, 0);
				_exit(status);
			}
			waitpid(pid, &st, 0);
			fprintf(stderr, "pagecache: the lock daemon exited before it was ready (%s %d)\n",
				WIFSIGNALED(st) ? "signal" : "status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			_exit(EXIT_PARTIAL);
		}
		close(pipefd[0]);
		setsid();
	}
	if (watch) {	/* before the walk: nothing replaced meanwhile is missed */
		struct rlimit rl;

		/* a rescan holds the new files open until it locks them */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		if (watch_init(&c, &w) < 0) {
			cli_warn("cannot watch: %s", strerror(ENOMEM));
			c.stopped = true;
		}
	}

	if (c.list) {	/* before the walk: rows are written as they come */
		out_sort("files", "path");
		out_columns("files", lock_cols, sizeof(lock_cols) / sizeof(lock_cols[0]));
	}
	/* with --watch, as every rescan will: from the directories held */
	rc = c.w && w.roots ? watch_walk(&c, lock_file) : targets_walk(&c.t, lock_file, &c);
	if (rc < 0)
		cli_warn("walk failed: %s", strerror(-rc));
	if (c.stopped)
		cli_warn("stopped early: %s; %zu files locked (%s)",
			 cli_budget_reason(c.budget.stopped), c.n, pc_human_size(c.bytes, a, sizeof(a)));
	/*
	 * From now on the set grows only as far as a cap allows: --max-mem
	 * (the budget's max already), else the bytes it holds now. A file's
	 * owner may not make root pin more by growing it.
	 */
	if (c.w && !bo.max_mem) {
		c.budget.max_bytes = c.bytes;
		c.size_cap = true;
	}
	if (pf.path && c.n && (rc = write_pidfile(&pf)) < 0) {
		cli_warn("cannot write pidfile '%s': %s", pf.path, strerror(-rc));
		pf.path = NULL;
		c.stopped = true;
	}

	orec_u64(&rec, "files", c.n, 0);
	orec_u64(&rec, "locked", c.bytes, OF_BYTES);
	orec_u64(&rec, "holes", c.holes, OF_BYTES);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_u64(&rec, "pid", (uint64_t)getpid(), 0);
	orec_bool(&rec, "budget_stopped", c.budget.stopped != 0);
	out_object("total", &rec);
	if (co.fmt == OUT_HUMAN) {
		char hb[64] = "";

		if (c.holes)
			snprintf(hb, sizeof(hb), " (%s of holes left out)",
				 fmt_size(c.holes, a, sizeof(a)));
		out_human_line("Locked %zu files, %s%s, pid %d%s", c.n,
			       fmt_size(c.bytes, a, sizeof(a)), hb, getpid(),
			       c.n ? "; SIGTERM or Ctrl-C releases them" : "");
	}
	rc = out_flush();	/* --prom-file: a file that could not be written fails the run */
	fflush(stderr);
	status = cli_failures() || c.stopped || rc < 0 ? EXIT_PARTIAL : 0;

	if (daemon) {
		int devnull = open("/dev/null", O_RDWR);

		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
			if (devnull > 2)
				close(devnull);
		}
		if (!c.n)
			status = EXIT_PARTIAL;
		if (write(pipefd[1], &status, 1) != 1)
			status = EXIT_PARTIAL;
		close(pipefd[1]);
	}
	/* A daemon that failed holds nothing: exit 1 must mean no daemon. */
	failed0 = cli_failures();
	held = c.n > 0;
	if (c.n && !(daemon && status)) {
		if (c.w) {
			sig = watch_loop(&c, &set);
		} else {
			do
				rc = sigwait(&set, &sig);
			while (rc != 0);
		}
	}
	for (size_t i = 0; i < c.n; i++) {
		pc_unlock(&c.locks[i].l);
		free(c.locks[i].path);
	}
	if (c.w && held && !(daemon && status)) {	/* the watch's totals: what a supervisor logs */
		char msg[256];

		orec_str(&rec, "event", "stopped", 0);
		orec_u64(&rec, "files", c.n, 0);
		orec_u64(&rec, "locked", c.bytes, OF_BYTES);
		orec_u64(&rec, "relocks", w.relocks, 0);
		orec_u64(&rec, "released", w.released, 0);
		orec_u64(&rec, "rescans", w.rescans, 0);
		orec_u64(&rec, "refusals", w.refusals, 0);
		orec_u64(&rec, "refused", w.refused_bytes, OF_BYTES);
		orec_u64(&rec, "failures", cli_failures(), 0);
		orec_u64(&rec, "time_ms", wall_ms(), 0);
		snprintf(msg, sizeof(msg), "Released %zu files, %s; %llu re-locked and %llu released "
			 "while watching (%llu rescans)", c.n, fmt_size(c.bytes, a, sizeof(a)),
			 (unsigned long long)w.relocks, (unsigned long long)w.released,
			 (unsigned long long)w.rescans);
		out_event("watch", &rec, msg);
		if (cli_failures() != failed0)
			status = EXIT_PARTIAL;	/* a re-lock failed: said when it did */
	}
	if (c.w)
		watch_release(&w);
	free(c.locks);
	if (pf.path)
		remove_pidfile(&pf);
	pc_budget_release(&c.budget);
	targets_release(&c.t);
	return held ? status : EXIT_PARTIAL;
}
