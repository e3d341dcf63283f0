/*
 * walk.c: visit every regular file under a set of roots, in parallel.
 *
 * Promises: each directory is read with getdents64 through its own fd and
 * each file opened relative to it (no path re-walks); d_type avoids a stat
 * per entry; FIFOs, sockets and devices inside trees are never opened (and
 * files are opened O_NONBLOCK, so one swapped in by a race cannot hang
 * us); symlinks inside trees are followed only with `follow`; a directory
 * reached twice (symlink loop, bind mount) is walked once; a file with
 * several hardlinks is visited once; -x is judged per root. Files that
 * vanish between listing and opening are reported as such, not as errors.
 * Roots named explicitly are followed if they are symlinks, like ls does.
 */
#define _GNU_SOURCE
#include "pagecache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENTS_BUF (64 * 1024)

struct item {
	struct item *next;
	char *path;
	dev_t root_dev;
	bool is_root;		/* named by the user: follow a symlink */
};

struct idset {
	uint64_t *keys;		/* pairs (dev, ino); 0,0 = empty */
	size_t cap, n;
	pthread_mutex_t lock;
};

struct walker {
	const struct pc_walk_opts *o;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct item *stack;
	unsigned active;
	int stop;		/* first non-zero from file() */
	struct idset dirs, links;
	pthread_mutex_t ev_lock;
};

struct worker {
	struct walker *w;
	unsigned id;
	char *path;		/* scratch for file paths */
	size_t pathcap;
	char *dents;
};

static uint64_t mix(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

/* 1 if (dev, ino) was new, 0 if seen, -ENOMEM. */
static int idset_add(struct idset *s, uint64_t dev, uint64_t ino)
{
	int rc = 1;

	dev++;		/* keep (0, 0) free as the empty marker */
	pthread_mutex_lock(&s->lock);
	if ((s->n + 1) * 2 > s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 1024;
		uint64_t *nk = calloc(ncap, 2 * sizeof(uint64_t));

		if (!nk) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < s->cap; i++) {
			uint64_t d = s->keys[2 * i], n = s->keys[2 * i + 1];
			size_t j;

			if (!d)
				continue;
			for (j = mix(d, n) & (ncap - 1); nk[2 * j]; j = (j + 1) & (ncap - 1))
				;
			nk[2 * j] = d;
			nk[2 * j + 1] = n;
		}
		free(s->keys);
		s->keys = nk;
		s->cap = ncap;
	}
	for (size_t j = mix(dev, ino) & (s->cap - 1);; j = (j + 1) & (s->cap - 1)) {
		if (!s->keys[2 * j]) {
			s->keys[2 * j] = dev;
			s->keys[2 * j + 1] = ino;
			s->n++;
			break;
		}
		if (s->keys[2 * j] == dev && s->keys[2 * j + 1] == ino) {
			rc = 0;
			break;
		}
	}
out:
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

static int push(struct walker *w, const char *path, dev_t root_dev, bool is_root)
{
	struct item *it = calloc(1, sizeof(*it));

	if (!it || !(it->path = strdup(path))) {
		free(it);
		return -ENOMEM;
	}
	it->root_dev = root_dev;
	it->is_root = is_root;
	pthread_mutex_lock(&w->lock);
	it->next = w->stack;
	w->stack = it;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

static void set_stop(struct walker *w, int rc)
{
	pthread_mutex_lock(&w->lock);
	if (!w->stop)
		w->stop = rc;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

/* Open and hand over one regular file; dirfd/name locate it. */
static void do_file(struct worker *wk, int dirfd, const char *name, const char *path,
		    dev_t root_dev, bool follow, bool is_root)
{
	struct walker *w = wk->w;
	const struct pc_walk_opts *o = w->o;
	struct pc_walk_entry e = { .path = path, .worker = wk->id };
	int fd;

	if (!is_root && ((o->include && *o->include && !matches(o->include, name)) ||
			 matches(o->exclude, name))) {
		event(w, PC_WALK_SKIP_PATTERN, path, 0);
		return;
	}
	fd = pc_sys_openat(dirfd, name, O_RDONLY | O_NOATIME | O_NONBLOCK |
					    (follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		if (fd == -ENOENT && !is_root)
			event(w, PC_WALK_VANISHED, path, ENOENT);
		else if (fd == -ELOOP && !follow)
			event(w, PC_WALK_SKIP_SYMLINK, path, 0);
		else
			event(w, PC_WALK_ERROR, path, -fd);
		return;
	}
	if (fstat(fd, &e.st) < 0) {
		event(w, PC_WALK_ERROR, path, errno);
		goto out;
	}
	if (S_ISBLK(e.st.st_mode) && is_root) {
		uint64_t sz;

		/* A device named explicitly: its buffer cache, like fincore. */
		if (ioctl(fd, BLKGETSIZE64, &sz) < 0) {
			event(w, PC_WALK_ERROR, path, errno);
			goto out;
		}
		e.st.st_size = (off_t)sz;
	} else if (!S_ISREG(e.st.st_mode)) {
		event(w, is_root ? PC_WALK_ERROR : PC_WALK_SKIP_SPECIAL, path,
		      is_root ? EINVAL : 0);
		goto out;
	}
	if (o->one_fs && !is_root && e.st.st_dev != root_dev) {
		event(w, PC_WALK_SKIP_MOUNT, path, 0);
		goto out;
	}
	if (o->max_size && (uint64_t)e.st.st_size > o->max_size) {
		event(w, PC_WALK_SKIP_SIZE, path, 0);
		goto out;
	}
	if (!o->all_links && (e.st.st_nlink > 1 || is_root)) {
		int r = idset_add(&w->links, e.st.st_dev, e.st.st_ino);

		if (r < 0) {
			event(w, PC_WALK_ERROR, path, -r);
			goto out;
		}
		if (r == 0) {
			event(w, PC_WALK_DUP, path, 0);
			goto out;
		}
	}
	e.fd = fd;
	if (o->file) {
		int rc = o->file(&e, o->arg);

		if (rc)
			set_stop(w, rc);
	}
	fd = e.fd;	/* -1 if file() kept it */
out:
	if (fd >= 0)
		close(fd);
}

static char *join(struct worker *wk, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name), need = dl + nl + 2;

	if (need > wk->pathcap) {
		char *p = realloc(wk->path, need * 2);

		if (!p)
			return NULL;
		wk->path = p;
		wk->pathcap = need * 2;
	}
	memcpy(wk->path, dir, dl);
	if (dl && dir[dl - 1] == '/')
		dl--;
	wk->path[dl] = '/';
	memcpy(wk->path + dl + 1, name, nl + 1);
	return wk->path;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

static void do_dir(struct worker *wk, struct item *it)
{
	struct walker *w = wk->w;
	const struct pc_walk_opts *o = w->o;
	struct stat st;
	int fd, r;
	long n;

	fd = open(it->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK |
				    (it->is_root || o->follow ? 0 : O_NOFOLLOW));
	if (fd < 0) {
		event(w, errno == ENOENT && !it->is_root ? PC_WALK_VANISHED : PC_WALK_ERROR,
		      it->path, errno);
		return;
	}
	if (fstat(fd, &st) < 0) {
		event(w, PC_WALK_ERROR, it->path, errno);
		goto out;
	}
	if (it->is_root)
		it->root_dev = st.st_dev;
	else if (o->one_fs && st.st_dev != it->root_dev) {
		event(w, PC_WALK_SKIP_MOUNT, it->path, 0);
		goto out;
	}
	r = idset_add(&w->dirs, st.st_dev, st.st_ino);
	if (r <= 0) {
		event(w, r < 0 ? PC_WALK_ERROR : PC_WALK_SKIP_LOOP, it->path, r < 0 ? -r : 0);
		goto out;
	}
	event(w, PC_WALK_DIR, it->path, 0);
	while ((n = syscall(SYS_getdents64, fd, wk->dents, DENTS_BUF)) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(wk->dents + off);
			const char *name = d->d_name;
			unsigned char type = d->d_type;
			char *path;

			off += d->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (w->stop)
				goto out;
			path = join(wk, it->path, name);
			if (!path) {
				event(w, PC_WALK_ERROR, it->path, ENOMEM);
				goto out;
			}
			if (type == DT_UNKNOWN) {
				if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
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
				if (fstatat(fd, name, &st, 0) < 0) {
					event(w, PC_WALK_ERROR, path, errno);
					continue;
				}
				type = IFTODT(st.st_mode);
			}
			if (type == DT_DIR) {
				if (matches(o->exclude, name)) {
					event(w, PC_WALK_SKIP_PATTERN, path, 0);
					continue;
				}
				if (push(w, path, it->root_dev, false) < 0)
					event(w, PC_WALK_ERROR, path, ENOMEM);
			} else if (type == DT_REG) {
				do_file(wk, fd, name, path, it->root_dev, o->follow, false);
			} else {
				event(w, PC_WALK_SKIP_SPECIAL, path, 0);
			}
		}
	}
	if (n < 0)
		event(w, PC_WALK_ERROR, it->path, errno);
out:
	close(fd);
}

static void do_root(struct worker *wk, struct item *it)
{
	struct stat st;

	if (stat(it->path, &st) < 0) {
		event(wk->w, PC_WALK_ERROR, it->path, errno);
		return;
	}
	if (S_ISDIR(st.st_mode))
		do_dir(wk, it);
	else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode))
		do_file(wk, AT_FDCWD, it->path, it->path, st.st_dev, true, true);
	else
		event(wk->w, PC_WALK_ERROR, it->path, EINVAL);	/* FIFO etc. */
}

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct walker *w = wk->w;

	for (;;) {
		struct item *it;

		pthread_mutex_lock(&w->lock);
		while (!w->stack && w->active && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (!w->stack || w->stop) {
			pthread_cond_broadcast(&w->cond);
			pthread_mutex_unlock(&w->lock);
			break;
		}
		it = w->stack;
		w->stack = it->next;
		w->active++;
		pthread_mutex_unlock(&w->lock);

		if (it->is_root)
			do_root(wk, it);
		else
			do_dir(wk, it);
		free(it->path);
		free(it);

		pthread_mutex_lock(&w->lock);
		w->active--;
		if (!w->stack && !w->active)
			pthread_cond_broadcast(&w->cond);
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

unsigned pc_walk_threads(const struct pc_walk_opts *o)
{
	long n;

	if (o && o->threads)
		return o->threads;
	n = sysconf(_SC_NPROCESSORS_ONLN) * 2;
	return n < 2 ? 2 : n > 16 ? 16 : (unsigned)n;
}

int pc_walk(const char *const *roots, size_t nroots, const struct pc_walk_opts *o)
{
	struct walker w = { .o = o };
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
	pthread_mutex_init(&w.lock, NULL);
	pthread_mutex_init(&w.ev_lock, NULL);
	pthread_cond_init(&w.cond, NULL);
	pthread_mutex_init(&w.dirs.lock, NULL);
	pthread_mutex_init(&w.links.lock, NULL);
	/* Pushed in reverse so the stack pops them in the order given. */
	for (size_t i = nroots; i-- > 0 && rc == 0;)
		rc = push(&w, roots[i], 0, true);
	for (unsigned i = 0; i < nt && rc == 0; i++) {
		wks[i].w = &w;
		wks[i].id = i;
		wks[i].dents = malloc(DENTS_BUF);
		if (!wks[i].dents) {
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
	for (unsigned i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	while (w.stack) {
		struct item *it = w.stack;

		w.stack = it->next;
		free(it->path);
		free(it);
	}
	for (unsigned i = 0; i < nt; i++) {
		free(wks[i].dents);
		free(wks[i].path);
	}
	free(wks);
	free(tids);
	free(w.dirs.keys);
	free(w.links.keys);
	pthread_mutex_destroy(&w.lock);
	pthread_mutex_destroy(&w.ev_lock);
	pthread_cond_destroy(&w.cond);
	pthread_mutex_destroy(&w.dirs.lock);
	pthread_mutex_destroy(&w.links.lock);
	return rc ? rc : w.stop;
}
