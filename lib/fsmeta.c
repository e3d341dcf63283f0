/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fsmeta.c: a filesystem's metadata brought back through the filesystem,
 * for restore where its block device cannot be read (a VM's root disk, a
 * container, no CAP_SYS_ADMIN-like rights, no block device at all).
 *
 * What a service's start does to metadata is a walk: `find`, `git status`,
 * a build, a database opening its files. So the same is done here before
 * the files' data: each recorded directory is read (getdents64) and each
 * entry statx()ed, entries in inode order and directories too, so the
 * inode table blocks are read in the order they lie on disk; the kernel
 * keeps the directory blocks, dentries and inodes that this brings in.
 * For a directory that is not recorded itself, only the named entries
 * (the recorded files in it) are statx()ed.
 *
 * The promises are restore's: every directory is reached beneath the root
 * (pc_path_beneath: RESOLVE_BENEATH, no symbolic link followed, no "..")
 * and must be a directory; it is opened for reading through that very
 * inode ("." of its O_PATH fd), never by name again; an entry is never
 * opened, only statx()ed relative to the directory's fd with
 * AT_SYMLINK_NOFOLLOW and AT_NO_AUTOMOUNT (a link is not followed, an
 * automount not triggered); procfs, sysfs and their kin are not read.
 * A directory gone or no longer a directory is skipped and counted, never
 * a failure. Nothing is printed; the caller counts.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENTS_BUF (64 * 1024)

struct dent {
	uint64_t ino;
	char *name;
};

static int by_ino(const void *a, const void *b)
{
	uint64_t x = ((const struct dent *)a)->ino, y = ((const struct dent *)b)->ino;

	return x < y ? -1 : x > y;
}

static int dir_by_ino(const void *a, const void *b)
{
	uint64_t x = ((const struct pc_fsmeta_dir *)a)->ino, y = ((const struct pc_fsmeta_dir *)b)->ino;

	return x < y ? -1 : x > y;
}

/* The directory at path beneath the root ("": the root), opened for reading; -errno. */
static int open_dir(int rootfd, const char *path)
{
	struct stat st;
	int pfd, fd;

	if (!*path)
		pfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	else
		pfd = pc_path_beneath(rootfd, path, &st);
	if (pfd < 0)
		return *path ? pfd : -errno;
	if (fstat(pfd, &st) < 0 || !S_ISDIR(st.st_mode)) {
		close(pfd);
		return -ENOTDIR;	/* a link (not followed) or a file in its place */
	}
	if (pc_fd_kernel_fs(pfd)) {
		close(pfd);
		return -EREMOTEIO;
	}
	/* that very inode: "." of the O_PATH fd, never the path again */
	fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC);
	if (fd < 0 && errno == EPERM)	/* O_NOATIME: not the owner, no CAP_FOWNER */
		fd = openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(pfd);
	return fd;
}

static int stat_one(int dfd, const char *name)
{
	struct statx stx;

	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_BASIC_STATS, &stx) < 0)
		return -errno;
	return 0;
}

/* Every entry of dfd, by inode: their statx. */
static int read_whole(int dfd, char *buf, double deadline, struct pc_fsmeta_result *res)
{
	struct dent *v = NULL;
	size_t n = 0, cap = 0;
	long got;
	int rc = 0;

	while ((got = syscall(SYS_getdents64, dfd, buf, DENTS_BUF)) > 0) {
		for (long off = 0; off < got && rc == 0;) {
			struct linux_dirent64 *de = (void *)(buf + off);
			const char *name = de->d_name;

			off += de->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (pc_grow(&v, &cap, n, sizeof(*v)) < 0 || !(v[n].name = strdup(name))) {
				rc = -ENOMEM;
				break;
			}
			v[n++].ino = de->d_ino;
		}
		if (rc < 0)
			break;
	}
	if (got < 0 && rc == 0)
		rc = -errno;
	if (n)
		qsort(v, n, sizeof(*v), by_ino);
	for (size_t i = 0; i < n; i++) {
		if (!res->time_stopped && deadline && pc_now() >= deadline)
			res->time_stopped = true;
		if (!res->time_stopped) {
			if (stat_one(dfd, v[i].name) == 0)
				res->entries++;
			else
				res->failed++;	/* gone meanwhile: nothing to bring back */
		}
		free(v[i].name);
	}
	free(v);
	return rc;
}

int pc_fsmeta_read(int rootfd, struct pc_fsmeta_dir *dirs, size_t n, double deadline,
		   struct pc_fsmeta_result *ret)
{
	struct pc_fsmeta_result res = { 0 };
	char *buf = malloc(DENTS_BUF);

	if (!buf)
		return -ENOMEM;
	if (n)
		qsort(dirs, n, sizeof(*dirs), dir_by_ino);
	for (size_t i = 0; i < n; i++) {
		struct pc_fsmeta_dir *d = &dirs[i];
		int dfd, rc;

		if (deadline && pc_now() >= deadline) {
			res.time_stopped = true;
			break;
		}
		dfd = open_dir(rootfd, d->path);
		if (dfd < 0) {
			/* gone, or not a directory now: nothing of it to bring back */
			res.skipped++;
			continue;
		}
		if (d->whole) {
			rc = read_whole(dfd, buf, deadline, &res);
			if (rc < 0)
				res.failed++;
			else
				res.dirs++;
		} else {
			struct dent *v = calloc(d->nnames ? d->nnames : 1, sizeof(*v));

			/* the recorded files alone, by their recorded inode */
			for (size_t k = 0; v && k < d->nnames; k++)
				v[k] = (struct dent){ d->inos ? d->inos[k] : 0, (char *)d->names[k] };
			if (v && d->nnames)
				qsort(v, d->nnames, sizeof(*v), by_ino);
			for (size_t k = 0; v && k < d->nnames && !res.time_stopped; k++) {
				if (deadline && pc_now() >= deadline) {
					res.time_stopped = true;
					break;
				}
				if (stat_one(dfd, v[k].name) == 0)
					res.entries++;
				else
					res.failed++;
			}
			free(v);
			res.parents++;
		}
		close(dfd);
		if (res.time_stopped)
			break;
	}
	free(buf);
	*ret = res;
	return 0;
}
