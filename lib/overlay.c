/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * overlay.c: the real file behind a file of a stacking filesystem.
 *
 * A file read through an overlayfs mount (every container's root) keeps
 * its pages in the cache of the real file, in the upper or a lower layer;
 * the overlay inode's own mapping stays empty, so cachestat on the overlay
 * fd says 0 while mincore through a mapping of it (mmap reaches the real
 * file) sees them. To count with cachestat we find the real file as the
 * kernel's lookup does:
 *   - the mount, by the fd's mount ID, in /proc/self/mountinfo: its root
 *     within the overlay, its mount point, and its layers (upperdir, then
 *     lowerdir in order, in both the "a:b" and the "lowerdir+=" forms;
 *     data-only layers hold no names and are not searched);
 *   - the fd's path (readlink of /proc/self/fd/N) less the mount point is
 *     the path inside the overlay;
 *   - each directory component, layer by layer: a whiteout (a 0:0 character
 *     device, or an empty file with the overlay.whiteout xattr) or a
 *     non-directory hides it and every lower layer; an opaque directory
 *     (overlay.opaque = "y") hides the lower ones; a missing one drops only
 *     that layer;
 *   - the last component: the first layer that has it; a metacopy file
 *     keeps only metadata, so the data is sought further down.
 * Every open is beneath the layer's directory, no link followed, and the
 * file found must be a regular file of the overlay file's size.
 *
 * What is not handled (redirected directories, a metacopy with a redirect,
 * layers given as relative paths, a mount of another mount namespace, the
 * trusted.* xattrs without CAP_SYS_ADMIN) comes back as an error, and the
 * caller says "unknown" or counts through the mapping where mincore is
 * honest; never 0.
 *
 * Mounts are keyed by STATX_MNT_ID_UNIQUE (6.8). Before it, by
 * mountinfo's mount ID, which the next mount takes at once (so does the
 * anonymous device number: on 6.18, three overlays mounted and unmounted
 * in a row at one place were "63 0:49" each time): such an entry holds
 * only until the mount table changes (POLLPRI on an open mountinfo).
 * A mapping of an overlay file is the real file's: /proc/PID/maps shows
 * the real (dev, ino) before 6.6, and from then on the overlay's device
 * with the real inode number, which files of one number in different
 * layers share when the layers are on several filesystems (on 6.18 an
 * upper and a lower file, both inode 13 on two ext4 images, were both
 * "00:28 13"), so pc_fd_mappers checks a matching line by stat of its
 * /proc/PID/map_files entry where it may. Other stacking, checked on
 * 6.18: idmapped and bind mounts share the inode (nothing to do); FUSE
 * without passthrough (bindfs, fuse-overlayfs) keeps its own cache, on
 * which cachestat and mincore agree; FUSE passthrough (libfuse 3.16;
 * Debian 12 has 3.14), ecryptfs (not built here) and shiftfs (not in
 * mainline) are untested.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#ifndef OVERLAYFS_SUPER_MAGIC
#define OVERLAYFS_SUPER_MAGIC 0x794c7630
#endif

#define OVL_MAX_LAYERS 500	/* the kernel's OVL_MAX_STACK */

struct ovl_mount {
	uint64_t unique;	/* STATX_MNT_ID_UNIQUE, 0 where unknown */
	int mnt_id;
	dev_t sbdev;		/* the overlay superblock's device (mountinfo's) */
	char *point;		/* mount point, as in our mount namespace */
	char *root;		/* the mount's root inside the overlay */
	char **layers;		/* upper (if any) first, then the lowers */
	int nlayers;
	bool userxattr;
	int err;		/* why its layers are unusable, else 0 */
	bool has_upper;		/* layers[0] is the upper */
	bool metacopy;		/* metacopy=on: files may hold metadata only */
	bool xino;		/* xino=on: inode numbers carry a layer in high bits */
	bool stale;		/* keyed by a reusable ID and the mount table
				   changed since: never answers again */
	struct ovl_mount *next;
};

/* Parsed mounts: a list that lives as long as the process (readers hold no lock). */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ovl_mount *cache;
static int table_fd = -1;	/* /proc/self/mountinfo, polled for changes */

static __thread int plain_fd = -1;

void pc_stack_hint(int fd)
{
	plain_fd = fd;
}

bool pc_fd_is_stacked(int fd)
{
	struct statfs sf;

	if (fd >= 0 && fd == plain_fd)
		return false;	/* the walk knows: a plain directory's file */
	return fstatfs(fd, &sf) == 0 && (unsigned long)sf.f_type == OVERLAYFS_SUPER_MAGIC;
}

static void mount_free(struct ovl_mount *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nlayers; i++)
		free(m->layers[i]);
	free(m->layers);
	free(m->point);
	free(m->root);
	free(m);
}

static int add_layer(struct ovl_mount *m, const char *path, size_t len)
{
	char **nl;

	if (m->nlayers >= OVL_MAX_LAYERS)
		return -E2BIG;
	nl = realloc(m->layers, (m->nlayers + 1) * sizeof(*nl));
	if (!nl)
		return -ENOMEM;
	m->layers = nl;
	if (!(nl[m->nlayers] = strndup(path, len)))
		return -ENOMEM;
	m->nlayers++;
	if (path[0] != '/')
		m->err = ENOTDIR;	/* relative to the mounter's cwd: unknowable */
	return 0;
}

/*
 * "lowerdir=a:b::c": ':' separates layers, "::" starts the data-only ones,
 * '\' escapes the next character (the kernel's own unescaping).
 */
static int add_lowerdir_list(struct ovl_mount *m, const char *v)
{
	size_t len = strlen(v);
	char *buf = malloc(len + 1);
	size_t n = 0;
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (size_t i = 0; i <= len && rc == 0; i++) {
		if (v[i] == '\\' && i + 1 < len) {
			buf[n++] = v[++i];
		} else if (v[i] == ':' || v[i] == 0) {
			if (n)
				rc = add_layer(m, buf, n);
			n = 0;
			if (v[i] == ':' && v[i + 1] == ':')
				break;		/* data-only layers: never looked up by name */
		} else {
			buf[n++] = v[i];
		}
	}
	free(buf);
	return rc;
}

/* The superblock options of an overlay mount line (after the fs source). */
static int parse_superopts(struct ovl_mount *m, char *opts)
{
	char *upper = NULL, *save = NULL;
	int rc = 0;
	struct ovl_mount lowers = { 0 };

	for (char *o = strtok_r(opts, ",", &save); o && rc == 0; o = strtok_r(NULL, ",", &save)) {
		pc_mnt_unescape(o);
		if (!strncmp(o, "upperdir=", 9)) {
			upper = o + 9;
		} else if (!strncmp(o, "lowerdir=", 9)) {
			rc = add_lowerdir_list(&lowers, o + 9);
		} else if (!strncmp(o, "lowerdir+=", 10)) {
			rc = add_layer(&lowers, o + 10, strlen(o + 10));
		} else if (!strcmp(o, "userxattr")) {
			m->userxattr = true;
		} else if (!strcmp(o, "xino=on")) {
			m->xino = true;
		} else if (!strcmp(o, "metacopy=on")) {
			m->metacopy = true;	/* shown only when on */
		}
	}
	if (rc == 0 && upper) {
		struct ovl_mount u = { 0 };

		rc = add_lowerdir_list(&u, upper);	/* one path, '\' unescaped */
		if (rc == 0 && u.nlayers == 1) {
			rc = add_layer(m, u.layers[0], strlen(u.layers[0]));
			m->has_upper = rc == 0;
		}
		for (int i = 0; i < u.nlayers; i++)
			free(u.layers[i]);
		free(u.layers);
	}
	for (int i = 0; i < lowers.nlayers; i++) {
		if (rc == 0)
			rc = add_layer(m, lowers.layers[i], strlen(lowers.layers[i]));
		free(lowers.layers[i]);
	}
	free(lowers.layers);
	if (rc == 0 && !m->nlayers)
		rc = -ENOENT;
	if (lowers.err && !m->err)
		m->err = lowers.err;
	return rc;
}

/* Parse one line of mountinfo text for mount `id`; 1 if it was that mount. */
int pc_ovl_parse_mountinfo_line(char *line, int id, struct ovl_mount **ret)
{
	char *f[6] = { 0 }, *p = line, *sep, *fstype, *src, *opts;
	unsigned maj, min;
	int mid;
	struct ovl_mount *m;
	int rc;

	if (sscanf(line, "%d ", &mid) != 1 || mid != id)
		return 0;
	for (int i = 0; i < 6; i++) {
		f[i] = strsep(&p, " ");
		if (!f[i] || !p)
			return -EINVAL;
	}
	if (sscanf(f[2], "%u:%u", &maj, &min) != 2)
		return -EINVAL;
	sep = strstr(p, " - ");
	if (!sep && strncmp(p, "- ", 2) == 0)
		sep = p - 1;
	if (!sep)
		return -EINVAL;
	p = sep + 3;
	fstype = strsep(&p, " ");
	src = p ? strsep(&p, " ") : NULL;
	opts = p ? strsep(&p, " \n") : NULL;
	if (!fstype || !src || !opts)
		return -EINVAL;
	if (strcmp(fstype, "overlay"))
		return -EXDEV;		/* not an overlay after all */
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->mnt_id = id;
	m->sbdev = makedev(maj, min);
	pc_mnt_unescape(f[3]);
	pc_mnt_unescape(f[4]);
	m->root = strdup(f[3]);
	m->point = strdup(f[4]);
	rc = m->root && m->point ? parse_superopts(m, opts) : -ENOMEM;
	if (rc < 0) {
		mount_free(m);
		return rc;
	}
	*ret = m;
	return 1;
}

#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U	/* Linux 6.8 */
#endif

/* The mount's ID that is never reused (6.8+), else 0. */
static uint64_t mount_unique_id(int fd)
{
	struct statx stx;

	if (pc_sys_injected(PC_SYS_STATX_MNT_UNIQUE) > 0)
		return 0;	/* the tests' kernel before 6.8 */
	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID_UNIQUE, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID_UNIQUE))
		return stx.stx_mnt_id;
	return 0;
}

int pc_fdinfo_mnt_id(int fd)
{
	char path[64], line[128];
	FILE *f;
	int id = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			break;
	fclose(f);
	return id >= 0 ? id : -ENOENT;
}

/* The mount's ID as mountinfo shows it (reused after an unmount). */
static int mount_id_of(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_MNT_ID, &stx) == 0 &&
	    (stx.stx_mask & STATX_MNT_ID))
		return (int)stx.stx_mnt_id;
	return pc_fdinfo_mnt_id(fd);
}

/*
 * Has the mount table changed since we last asked? The kernel flags a
 * change to every open /proc/self/mountinfo (poll: POLLPRI), once per
 * reader, since 2.6.15. Where it cannot be opened: always, so nothing
 * keyed by a reusable ID is trusted. Called under cache_lock.
 */
static bool table_changed(void)
{
	struct pollfd p = { .events = POLLPRI };

	if (table_fd < 0) {
		table_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
		return true;	/* nothing read before this is known to hold */
	}
	p.fd = table_fd;
	return poll(&p, 1, 0) != 0;	/* POLLPRI|POLLERR, or poll failed */
}

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

/* Do two parses of a mount say the same? */
static bool mount_same(const struct ovl_mount *a, const struct ovl_mount *b)
{
	if (a->mnt_id != b->mnt_id || a->sbdev != b->sbdev || a->nlayers != b->nlayers || a->err != b->err ||
	    a->userxattr != b->userxattr || a->has_upper != b->has_upper ||
	    a->metacopy != b->metacopy || a->xino != b->xino || !same_str(a->point, b->point) ||
	    !same_str(a->root, b->root))
		return false;
	for (int i = 0; i < a->nlayers; i++)
		if (!same_str(a->layers[i], b->layers[i]))
			return false;
	return true;
}

/*
 * The overlay mount of fd, parsed once and kept, under its unique ID where
 * the kernel has one (6.8+); a mount that is not in our namespace is
 * remembered too, so each of its files does not read mountinfo again.
 * Before 6.8 only mountinfo's ID is there, and the kernel gives it (and
 * the overlay's anonymous device number) to the next mount as soon as one
 * is unmounted: an entry kept under it holds only until the mount table
 * changes (a new overlay on a recycled ID would otherwise be answered with
 * the old one's layers), then the line is read again. Entries are never
 * freed (callers hold them without the lock): one that parses the same
 * again is taken back, so a busy mount table does not grow the list.
 */
static int mount_get(int fd, const struct ovl_mount **ret)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	struct ovl_mount *m = NULL;
	uint64_t uid = mount_unique_id(fd);
	int id = -1, rc = -EXDEV;	/* not in our mount namespace */

	pthread_mutex_lock(&cache_lock);
	for (m = cache; uid && m; m = m->next)
		if (m->unique == uid)
			goto found;
	if (!uid && table_changed())
		for (m = cache; m; m = m->next)
			if (!m->unique)
				m->stale = true;
	id = mount_id_of(fd);
	if (id < 0) {
		rc = id;
		goto out;
	}
	for (m = cache; !uid && m; m = m->next)
		if (!m->unique && !m->stale && m->mnt_id == id)
			goto found;
	m = NULL;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		rc = -errno;
		goto out;
	}
	while (getline(&line, &cap, f) > 0) {
		int r = pc_ovl_parse_mountinfo_line(line, id, &m);

		if (r == 0)
			continue;
		rc = r < 0 ? r : 0;
		break;
	}
	free(line);
	fclose(f);
	if (rc == -EXDEV && uid && (m = calloc(1, sizeof(*m))))
		m->err = EXDEV;		/* remembered: not ours */
	if (rc == 0 && !uid) {
		/* the same mount as one kept before the table changed? */
		for (struct ovl_mount *o = cache; o; o = o->next)
			if (!o->unique && o->stale && mount_same(o, m)) {
				mount_free(m);
				m = o;
				m->stale = false;
				goto found;
			}
	}
	if (rc == 0 || (rc == -EXDEV && m)) {
		m->unique = uid;
		m->mnt_id = id;
		m->next = cache;
		cache = m;
		goto found;
	}
out:
	pthread_mutex_unlock(&cache_lock);
	return rc;
found:
	pthread_mutex_unlock(&cache_lock);
	*ret = m;
	return m->err == EXDEV ? -EXDEV : 0;
}

static int xattr_get(int fd, const char *name_at, bool user, const char *what, char *buf,
		     size_t len)
{
	char key[64], path[PATH_MAX + 64];
	ssize_t n;

	snprintf(key, sizeof(key), "%s.overlay.%s", user ? "user" : "trusted", what);
	if (name_at) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", fd, name_at);
		n = lgetxattr(path, key, buf, len);
	} else {
		n = fgetxattr(fd, key, buf, len);
	}
	if (n < 0 && errno == ERANGE)
		return (int)len + 1;	/* present, longer than asked for */
	if (n < 0)
		return errno == ENODATA || errno == ENOTSUP ? 0 : -errno;
	return (int)n + 1;	/* > 0: present, n bytes */
}

/* A whiteout hides the name in this layer and all below. */
static int is_whiteout(int dfd, const char *name, const struct stat *st, bool user)
{
	char v[8];

	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
		return 1;
	if (S_ISREG(st->st_mode) && st->st_size == 0)
		return xattr_get(dfd, name, user, "whiteout", v, sizeof(v)) > 0;
	return 0;
}

static int open_layer_root(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * The layers' directories for one directory of the overlay: dfd[i] open in
 * layer i, or -1 where the layer has no such directory or it is hidden.
 * Each thread keeps the last one: a walk looks up a directory's files one
 * after another. Only the upper layer changes under a live overlay; a
 * directory it lacked when cached is checked for again at each use.
 */
struct ovl_dir {
	const struct ovl_mount *m;
	char *rel;		/* "" for the root */
	int *dfd;
	int anc;		/* the upper lacked this dir: its deepest ancestor
				   there, else -1 */
	int nfds;		/* fds it holds */
	char *missing;		/* and the name under anc that was missing */
};

#define DIR_SLOTS 32		/* directories remembered per thread, */
#define DIR_FDS 64		/* holding at most this many fds in all, and at
				   most 1/64 of RLIMIT_NOFILE (a walk has up
				   to 16 threads, and fds of its own) */

struct ovl_tls {
	struct ovl_dir *slot[DIR_SLOTS];
	uint64_t used[DIR_SLOTS];	/* when last used: the least is dropped */
	uint64_t clock;
	int fds, cap;
};

static pthread_key_t dir_key;
static pthread_once_t dir_once = PTHREAD_ONCE_INIT;

static void dir_free(void *p)
{
	struct ovl_dir *d = p;

	if (!d)
		return;
	for (int i = 0; d->dfd && i < d->m->nlayers; i++)
		if (d->dfd[i] >= 0)
			close(d->dfd[i]);
	if (d->anc >= 0)
		close(d->anc);
	free(d->missing);
	free(d->dfd);
	free(d->rel);
	free(d);
}

static void tls_free(void *p)
{
	struct ovl_tls *t = p;

	for (unsigned i = 0; t && i < DIR_SLOTS; i++)
		dir_free(t->slot[i]);
	free(t);
}

static void dir_key_make(void)
{
	pthread_key_create(&dir_key, tls_free);
}

static struct ovl_tls *tls_get(void)
{
	struct ovl_tls *t;

	pthread_once(&dir_once, dir_key_make);
	t = pthread_getspecific(dir_key);
	if (!t && (t = calloc(1, sizeof(*t))) && pthread_setspecific(dir_key, t) != 0) {
		free(t);
		t = NULL;
	}
	return t;
}

/* Is directory `base` an ancestor of (or the same as) `rel`? */
static bool dir_under(const char *base, const char *rel)
{
	size_t n = strlen(base);

	return n == 0 || (strncmp(base, rel, n) == 0 && (rel[n] == '/' || rel[n] == 0));
}

/* Directory `rel`'s layers, from those of `base` (an ancestor) or the roots. */
static int dir_build(const struct ovl_mount *m, const char *rel, const struct ovl_dir *base,
		     struct ovl_dir **ret)
{
	int n = m->nlayers, rc = 0;
	struct ovl_dir *d = calloc(1, sizeof(*d));
	char *copy = strdup(rel + (base ? strlen(base->rel) : 0)), *save = NULL;

	if (!d || !copy || !(d->dfd = malloc(n * sizeof(int))) || !(d->rel = strdup(rel))) {
		free(copy);
		if (d) {
			free(d->dfd);
			free(d->rel);
			free(d);
		}
		return -ENOMEM;
	}
	d->m = m;
	d->anc = -1;
	for (int i = 0; i < n; i++)
		d->dfd[i] = -1;
	/* trusted.overlay.* reads as absent without CAP_SYS_ADMIN: opaque
	 * directories and whiteouts would go unseen */
	if (!m->userxattr && !pc_have_cap(CAP_SYS_ADMIN)) {
		rc = -EPERM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		if (!base)
			d->dfd[i] = open_layer_root(m->layers[i]);
		else if (base->dfd[i] < 0)
			continue;
		else if ((d->dfd[i] = fcntl(base->dfd[i], F_DUPFD_CLOEXEC, 0)) < 0)
			d->dfd[i] = -errno;
		if (d->dfd[i] < 0) {
			rc = d->dfd[i];
			d->dfd[i] = -1;
			goto out;
		}
	}
	if (base && base->anc >= 0) {
		d->anc = fcntl(base->anc, F_DUPFD_CLOEXEC, 0);
		d->missing = strdup(base->missing);
		if (d->anc < 0 || !d->missing) {
			rc = d->anc < 0 ? -errno : -ENOMEM;
			goto out;
		}
	}
	for (char *comp = strtok_r(copy, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		bool hide = false;

		/* which layers have this directory, and which are hidden */
		for (int i = 0; i < n; i++) {
			struct stat st, st2;
			char v[8];
			int nfd, x;

			if (d->dfd[i] < 0)
				continue;
			if (hide) {
				close(d->dfd[i]);
				d->dfd[i] = -1;
				continue;
			}
			if (fstatat(d->dfd[i], comp, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				if (errno != ENOENT) {
					rc = -errno;
					goto out;
				}
				if (i == 0 && m->has_upper) {
					/* a copy-up would make it: keep where to look */
					d->anc = d->dfd[0];
					d->dfd[0] = -1;
					if (!(d->missing = strdup(comp))) {
						rc = -ENOMEM;
						goto out;
					}
					continue;
				}
				close(d->dfd[i]);
				d->dfd[i] = -1;
				continue;
			}
			if (!S_ISDIR(st.st_mode)) {
				/* a whiteout or a file: nothing of this name below */
				close(d->dfd[i]);
				d->dfd[i] = -1;
				hide = true;
				continue;
			}
			nfd = openat(d->dfd[i], comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0) {
				rc = -errno;
				goto out;
			}
			close(d->dfd[i]);
			d->dfd[i] = nfd;
			if (fstat(nfd, &st2) < 0 || st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
				rc = -ESTALE;
				goto out;
			}
			x = xattr_get(nfd, NULL, m->userxattr, "redirect", v, sizeof(v));
			if (x > 0)
				x = -EOPNOTSUPP;	/* a renamed merged directory */
			if (x == 0)
				x = xattr_get(nfd, NULL, m->userxattr, "opaque", v, sizeof(v));
			if (x < 0) {
				rc = x;
				goto out;
			}
			if (x == 2 && v[0] == 'y')
				hide = true;
		}
	}
out:
	free(copy);
	if (rc < 0) {
		dir_free(d);
		return rc;
	}
	for (int i = 0; i < n; i++)
		d->nfds += d->dfd[i] >= 0;
	d->nfds += d->anc >= 0;
	*ret = d;
	return 0;
}

/*
 * The layers of directory `rel`: this thread's cached one, or built anew
 * from the nearest cached ancestor.
 */
static int dir_get(const struct ovl_mount *m, const char *rel, struct ovl_dir **ret)
{
	struct ovl_tls *t = tls_get();
	struct ovl_dir *d, *base = NULL;
	int rc;

	if (!t)
		return -ENOMEM;
	unsigned bi = 0, victim;

	for (unsigned i = 0; i < DIR_SLOTS; i++) {
		struct stat st;

		d = t->slot[i];
		if (!d || d->m != m || !dir_under(d->rel, rel))
			continue;
		/* did the upper layer gain this directory (a copy-up) since? */
		if (d->anc >= 0 &&
		    !(fstatat(d->anc, d->missing, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT))
			continue;
		if (strcmp(d->rel, rel) == 0) {
			t->used[i] = ++t->clock;
			*ret = d;
			return 0;
		}
		if (!base || strlen(d->rel) > strlen(base->rel)) {
			base = d;
			bi = i;
		}
	}
	if (!t->cap) {
		struct rlimit rl;

		t->cap = DIR_FDS;
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
		    rl.rlim_cur / 64 < DIR_FDS)
			t->cap = rl.rlim_cur / 64 > 2 ? (int)(rl.rlim_cur / 64) : 2;
	}
	if (base)
		t->used[bi] = ++t->clock;	/* an ancestor: likely asked again */
	if (*rel && (!base || strrchr(rel, '/') > rel + strlen(base->rel))) {
		/* the parent first (kept too: its other children come next) */
		char *parent = strndup(rel, (size_t)(strrchr(rel, '/') ? strrchr(rel, '/') - rel : 0));

		if (!parent)
			return -ENOMEM;
		rc = dir_get(m, parent, &base);
		free(parent);
		if (rc < 0)
			return rc;
	}
	rc = dir_build(m, rel, base, &d);
	if ((rc == -EMFILE || rc == -ENFILE) && t->fds) {
		/* out of fds: what this thread remembers goes, then once more */
		for (unsigned i = 0; i < DIR_SLOTS; i++) {
			dir_free(t->slot[i]);
			t->slot[i] = NULL;
		}
		t->fds = 0;
		return dir_get(m, rel, ret);
	}
	if (rc < 0)
		return rc;
	/* room: the least recently used go, for a free slot and under the fd cap */
	for (;;) {
		int lru = -1, free_slot = -1;

		for (unsigned i = 0; i < DIR_SLOTS; i++) {
			if (!t->slot[i])
				free_slot = (int)i;
			else if (lru < 0 || t->used[i] < t->used[lru])
				lru = (int)i;
		}
		if ((free_slot >= 0 && t->fds + d->nfds <= t->cap) || lru < 0) {
			victim = free_slot >= 0 ? (unsigned)free_slot : 0;
			break;
		}
		t->fds -= t->slot[lru]->nfds;
		dir_free(t->slot[lru]);
		t->slot[lru] = NULL;
	}
	t->slot[victim] = d;
	t->used[victim] = ++t->clock;
	t->fds += d->nfds;
	*ret = d;
	return 0;
}

/*
 * Find `rel` (no leading '/') through m's layers: an O_RDONLY fd of the real
 * regular file, which must be `size` bytes long.
 */
/*
 * Is the real file found (in layer i, st) the overlay file `ost`? The
 * overlay shows the real inode number (the low 32 bits of it with xino),
 * or, for a file copied up, that of its origin: a lower file of that name.
 */
static bool same_file(const struct ovl_mount *m, const struct ovl_dir *d, int i, const char *name,
		      const struct stat *st, const struct stat *ost)
{
	uint64_t mask = m->xino ? 0xffffffffull : ~0ull;

	if (((uint64_t)st->st_ino & mask) == ((uint64_t)ost->st_ino & mask))
		return true;
	if (i != 0 || !m->has_upper)
		return false;
	for (int j = 1; j < m->nlayers; j++) {
		struct stat lst;

		if (d->dfd[j] < 0 || fstatat(d->dfd[j], name, &lst, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		return S_ISREG(lst.st_mode) &&
		       ((uint64_t)lst.st_ino & mask) == ((uint64_t)ost->st_ino & mask);
	}
	return false;
}

/*
 * Find `rel` (no leading '/') through m's layers: an O_RDONLY fd of the real
 * regular file, which must be `ost`'s size and (unless ost is NULL: the
 * tests' plain directories) the file the overlay shows.
 */
static int ovl_lookup(const struct ovl_mount *m, const char *rel, uint64_t size,
		      const struct stat *ost, int *ret_layer)
{
	const char *name = strrchr(rel, '/');
	char *dir = name ? strndup(rel, (size_t)(name - rel)) : strdup("");
	struct ovl_dir *d;
	int rc;

	name = name ? name + 1 : rel;
	if (!dir)
		return -ENOMEM;
	if (!*name) {
		free(dir);
		return -EINVAL;
	}
	rc = dir_get(m, dir, &d);
	free(dir);
	if (rc < 0)
		return rc;
	/* the file: the first layer that has it */
	for (int i = 0; i < m->nlayers; i++) {
		struct stat st, st2;
		char v[8];
		int pfd, fd, x;

		if (d->dfd[i] < 0)
			continue;
		/* O_PATH: what is there now is looked at before it is opened */
		pfd = openat(d->dfd[i], name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (pfd < 0) {
			if (errno != ENOENT)
				return -errno;
			continue;
		}
		if (fstat(pfd, &st) < 0) {
			rc = -errno;
			close(pfd);
			return rc;
		}
		x = is_whiteout(d->dfd[i], name, &st, m->userxattr);
		if (x != 0 || !S_ISREG(st.st_mode)) {
			close(pfd);
			return x < 0 ? x : x > 0 ? -ENOENT : -ESTALE;	/* not what the overlay shows */
		}
		/* only that regular file is opened: never a FIFO or device swapped in */
		fd = pc_reopen_checked(pfd, &st, O_CLOEXEC, &st2);
		close(pfd);
		if (fd < 0)
			return fd;
		if (pc_fd_kernel_fs(fd)) {
			close(fd);
			return -EREMOTEIO;
		}
		x = m->metacopy ? xattr_get(fd, NULL, m->userxattr, "metacopy", v, sizeof(v)) : 0;
		if (x > 0) {
			/* metadata only: the data is further down, unless redirected */
			x = xattr_get(fd, NULL, m->userxattr, "redirect", v, sizeof(v));
			close(fd);
			if (x != 0)
				return x < 0 ? x : -EOPNOTSUPP;
			continue;
		}
		if (x < 0 || (uint64_t)st2.st_size != size ||
		    (ost && !same_file(m, d, i, name, &st2, ost))) {
			close(fd);
			return x < 0 ? x : -ESTALE;
		}
		if (ret_layer)
			*ret_layer = i;
		return fd;
	}
	return -ENOENT;
}

/* pc_ovl_lookup_in, and the index in m->layers of the layer the data comes from */
static int lookup_in(const struct ovl_mount *m, const char *path, uint64_t size,
		     const struct stat *ost, int *ret_layer)
{
	size_t pl = strlen(m->point), rl;
	const char *tail;
	char *rel;
	int rc;

	if (m->err)
		return -m->err;
	if (strcmp(m->point, "/") == 0)
		tail = path;
	else if (strncmp(path, m->point, pl) == 0 && (path[pl] == '/' || path[pl] == 0))
		tail = path + pl;
	else
		return -EXDEV;		/* not under the mount point we know */
	rl = strlen(m->root) + strlen(tail) + 2;
	rel = malloc(rl);
	if (!rel)
		return -ENOMEM;
	snprintf(rel, rl, "%s/%s", m->root, tail);
	/* the path inside the overlay: no ".", "..", or empty name in it */
	for (char *s = rel; *s;) {
		char *e = strchrnul(s, '/');
		size_t cl = (size_t)(e - s);

		if ((cl == 1 && s[0] == '.') || (cl == 2 && s[0] == '.' && s[1] == '.')) {
			free(rel);
			return -EINVAL;
		}
		s = *e ? e + 1 : e;
	}
	rc = ovl_lookup(m, rel + strspn(rel, "/"), size, ost, ret_layer);
	free(rel);
	return rc;
}

int pc_ovl_lookup_in(const struct ovl_mount *m, const char *path, uint64_t size,
		     const struct stat *ost)
{
	return lookup_in(m, path, size, ost, NULL);
}

void pc_ovl_mount_free(struct ovl_mount *m)
{
	struct ovl_dir *d;

	struct ovl_tls *t = tls_get();

	for (unsigned i = 0; t && i < DIR_SLOTS; i++)
		if ((d = t->slot[i]) && d->m == m) {
			t->fds -= d->nfds;
			dir_free(d);
			t->slot[i] = NULL;
		}
	mount_free(m);
}

/*
 * The file in fd's overlay's layers: an fd, itself stacked maybe; or
 * -errno. ret_m, ret_layer (may be NULL): the mount, and the index in its
 * layers of the one the file's data comes from.
 */
static int real_in(int fd, const struct ovl_mount **ret_m, int *ret_layer)
{
	struct stat st;
	char link[64], *path;
	const struct ovl_mount *m = NULL;
	ssize_t n;
	int rc;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if (st.st_nlink == 0)
		return -ENOENT;		/* unlinked: no name to look it up by */
	rc = mount_get(fd, &m);
	if (rc < 0)
		return rc;
	path = malloc(PATH_MAX);
	if (!path)
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, PATH_MAX - 1);
	if (n < 0 || n >= PATH_MAX - 1) {
		rc = n < 0 ? -errno : -ENAMETOOLONG;
		free(path);
		return rc;
	}
	path[n] = 0;
	rc = path[0] == '/' ? lookup_in(m, path, (uint64_t)st.st_size, &st, ret_layer) : -EXDEV;
	free(path);
	if (rc >= 0 && ret_m)
		*ret_m = m;
	return rc;
}

static int real_once(int fd)
{
	return real_in(fd, NULL, NULL);
}

int pc_fd_layer(int fd, char **ret_dir, bool *ret_upper)
{
	const struct ovl_mount *m = NULL;
	int layer = -1, rfd;

	if (!pc_fd_is_stacked(fd))
		return -EXDEV;
	rfd = real_in(fd, &m, &layer);
	if (rfd < 0)
		return rfd;
	/* a layer on an overlay itself: which of the inner one's is not asked */
	if (pc_fd_is_stacked(rfd)) {
		close(rfd);
		return -ELOOP;
	}
	close(rfd);
	if (!m || layer < 0 || layer >= m->nlayers)
		return -ENOENT;
	/* entries are never freed (mount_get): the name stays; the caller's copy all the same */
	*ret_upper = layer == 0 && m->has_upper;
	*ret_dir = strdup(m->layers[layer]);
	return *ret_dir ? 0 : -ENOMEM;
}

static int real_at(int fd, int depth)
{
	int rc = real_once(fd);

	if (rc >= 0 && pc_fd_is_stacked(rc)) {
		/* a layer on an overlay itself: once more (the kernel stacks 2 deep) */
		int inner = depth < 1 ? real_at(rc, depth + 1) : -ELOOP;

		close(rc);
		rc = inner;
	}
	return rc;
}

int pc_fd_real(int fd)
{
	return real_at(fd, 0);
}

int pc_fd_stack_ids(int fd, dev_t *devs, uint64_t *inos, int max, bool *ret_real)
{
	int n = 0, cur = fd;
	bool real = false;

	if (max < 2)
		return -EINVAL;
	if (!pc_fd_is_stacked(fd)) {
		*ret_real = false;
		return 0;
	}
	/* each level: its superblock's device, then the file in its layers */
	for (int depth = 0; depth < 2 && n + 2 <= max; depth++) {
		const struct ovl_mount *m;
		struct stat st, rst;
		int rfd;

		if (fstat(cur, &st) < 0)
			break;
		if (mount_get(cur, &m) == 0 && m->sbdev != st.st_dev && !m->xino) {
			devs[n] = m->sbdev;	/* with xino the number has the layer in it */
			inos[n++] = (uint64_t)st.st_ino;
		}
		rfd = real_once(cur);
		if (rfd < 0)
			break;
		if (fstat(rfd, &rst) == 0) {
			devs[n] = rst.st_dev;
			inos[n++] = (uint64_t)rst.st_ino;
		}
		if (cur != fd)
			close(cur);
		cur = rfd;
		if (!pc_fd_is_stacked(cur)) {
			real = true;	/* the last pair: the real file */
			break;
		}
	}
	if (cur != fd)
		close(cur);
	if (real && n > 1) {
		/* the real file first */
		dev_t d = devs[n - 1];
		uint64_t i = inos[n - 1];

		memmove(devs + 1, devs, (size_t)(n - 1) * sizeof(*devs));
		memmove(inos + 1, inos, (size_t)(n - 1) * sizeof(*inos));
		devs[0] = d;
		inos[0] = i;
	}
	*ret_real = real;
	return n;
}

/*
 * Our overlay mounts, for pc_fd_unstack: read again when the mount table
 * changed (its own poll of mountinfo). A snapshot list, freed as a whole
 * under the lock, since its users hold it only under the lock.
 */
static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ovl_mount *all;
static int all_fd = -1;

static int all_load(void)
{
	struct pollfd p = { .events = POLLPRI };
	char *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (all_fd >= 0) {
		p.fd = all_fd;
		if (poll(&p, 1, 0) == 0)
			return 0;	/* unchanged since read */
	} else {
		all_fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	}
	while (all) {
		struct ovl_mount *n = all->next;

		mount_free(all);
		all = n;
	}
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct ovl_mount *m = NULL;
		int id;

		if (!strstr(line, " - overlay ") || sscanf(line, "%d ", &id) != 1)
			continue;
		if (pc_ovl_parse_mountinfo_line(line, id, &m) == 1 && !m->err) {
			m->next = all;
			all = m;
		} else if (m) {
			mount_free(m);
		}
	}
	free(line);
	fclose(f);
	return 0;
}

/* Does the file at `path` (an overlay's) name (dev, ino) somewhere down its stack? */
static bool shows(const char *path, dev_t dev, uint64_t ino)
{
	dev_t devs[6];
	uint64_t inos[6];
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), n;
	bool yes = false, real;

	if (fd < 0)
		return false;
	n = pc_fd_stack_ids(fd, devs, inos, 6, &real);
	for (int i = 0; i < n && !yes; i++)
		yes = devs[i] == dev && inos[i] == ino;
	close(fd);
	return yes;
}

int pc_fd_unstack(int fd, char **ret_path)
{
	char link[64], *real = malloc(PATH_MAX), *cand = NULL;
	struct stat st;
	ssize_t k;
	int rc = -ENOENT;

	if (!real)
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	k = readlink(link, real, PATH_MAX - 1);
	if (k <= 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		free(real);
		return k < 0 ? -errno : -EINVAL;
	}
	real[k] = 0;
	pthread_mutex_lock(&all_lock);
	if (all_load() < 0)
		all = NULL;
	for (struct ovl_mount *m = all; m && rc == -ENOENT; m = m->next) {
		for (int i = 0; i < m->nlayers && rc == -ENOENT; i++) {
			size_t ll = strlen(m->layers[i]), rl = strlen(m->root);
			const char *rel = real + ll;

			if (strncmp(real, m->layers[i], ll) || *rel != '/')
				continue;
			/* the mount shows the overlay from its root down */
			if (strcmp(m->root, "/")) {
				if (strncmp(rel, m->root, rl) || rel[rl] != '/')
					continue;
				rel += rl;
			}
			free(cand);
			if (asprintf(&cand, "%s%s", strcmp(m->point, "/") ? m->point : "", rel) < 0) {
				cand = NULL;
				rc = -ENOMEM;
			} else if (shows(cand, st.st_dev, (uint64_t)st.st_ino)) {
				rc = 0;
			}
		}
	}
	pthread_mutex_unlock(&all_lock);
	free(real);
	if (rc == 0)
		*ret_path = cand;
	else
		free(cand);
	return rc;
}

int pc_dev_mounted(dev_t dev)
{
	char *line = NULL;
	size_t cap = 0;
	int seen = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return -errno;
	while (!seen && getline(&line, &cap, f) > 0) {
		unsigned ma, mi;

		seen = sscanf(line, "%*d %*d %u:%u", &ma, &mi) == 2 && makedev(ma, mi) == dev;
	}
	free(line);
	fclose(f);
	return seen;
}

/* pid's fd or mapping at `path` (a /proc link): an overlay's file numbered ino, out of reach? */
static bool stacked_hidden(const char *path, uint64_t ino, struct stat *st)
{
	dev_t devs[6];
	uint64_t inos[6];
	bool real = false;
	int fd = open(path, O_PATH | O_CLOEXEC), n;

	if (fd < 0)
		return false;
	n = fstat(fd, st) == 0 && S_ISREG(st->st_mode) && (uint64_t)st->st_ino == ino &&
	    pc_fd_is_stacked(fd) ? pc_fd_stack_ids(fd, devs, inos, 6, &real) : -1;
	close(fd);
	return n >= 0 && !real;
}

int pc_pid_stacked_path(pid_t pid, uint64_t ino, char **ret_path)
{
	static const char *const subs[] = { "fd", "map_files" };
	char dir[64], path[384], link[PATH_MAX];
	struct stat st;
	dev_t one_dev = 0;
	ino_t one_ino = 0;
	int found = 0;

	*ret_path = NULL;
	for (size_t s = 0; s < sizeof(subs) / sizeof(subs[0]) && found < 2; s++) {
		struct dirent *de;
		DIR *d;

		snprintf(dir, sizeof(dir), "/proc/%d/%s", (int)pid, subs[s]);
		d = opendir(dir);
		if (!d)
			continue;
		while (found < 2 && (de = readdir(d))) {
			ssize_t k;

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			if (!stacked_hidden(path, ino, &st) ||
			    (found && st.st_dev == one_dev && st.st_ino == one_ino))
				continue;	/* not it, or the same file again */
			k = readlink(path, link, sizeof(link) - 1);
			if (k <= 0 || link[0] != '/')
				continue;
			link[k] = 0;
			one_dev = st.st_dev;
			one_ino = st.st_ino;
			if (!found++ && !(*ret_path = strdup(link))) {
				closedir(d);
				return -ENOMEM;
			}
		}
		closedir(d);
	}
	if (found == 1)
		return 0;
	free(*ret_path);
	*ret_path = NULL;
	return -ENOENT;
}
