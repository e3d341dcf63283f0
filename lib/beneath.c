/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * beneath.c: open what a hostile list of paths names, and nothing else.
 *
 * A snapshot names files by paths relative to a root; whoever wrote it
 * (or can write the tree beneath the root) may try to make root open
 * something else: a path with "..", a directory swapped for a symbolic
 * link, a FIFO that blocks the reader, a device whose open has effects
 * (/dev/watchdog). pc_open_beneath() promises that the fd it returns is a
 * regular file reached beneath the root without following any link, and
 * that nothing else was ever opened for reading: the last component is
 * reached with O_PATH (which runs no driver's open and cannot block),
 * checked with fstat, and only then reopened through /proc/self/fd, which
 * reopens that very inode whatever has happened to the path since. And
 * it is a file with data: not one of procfs, sysfs, debugfs and their
 * kin, where a read is an action.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

bool pc_fs_type_kernel(unsigned long f_type)
{
	/* configfs, mqueue, rpc_pipefs, nfsd, functionfs, gadgetfs: no constant in linux/magic.h */
	static const unsigned long magic[] = {
		PROC_SUPER_MAGIC,  SYSFS_MAGIC,		DEBUGFS_MAGIC,	    TRACEFS_MAGIC,
		SECURITYFS_MAGIC,  SELINUX_MAGIC,	SMACK_MAGIC,	    CGROUP_SUPER_MAGIC,
		CGROUP2_SUPER_MAGIC, BPF_FS_MAGIC,	EFIVARFS_MAGIC,	    PSTOREFS_MAGIC,
		DEVPTS_SUPER_MAGIC, BINFMTFS_MAGIC,	NSFS_MAGIC,	    HUGETLBFS_MAGIC,
		AUTOFS_SUPER_MAGIC, XENFS_SUPER_MAGIC,	RDTGROUP_SUPER_MAGIC, ANON_INODE_FS_MAGIC,
		0x62656570 /* configfs */, 0x65735543 /* fusectl */, 0x19800202 /* mqueue */,
		0x67596969 /* rpc_pipefs */, 0x6e667364 /* nfsd */, 0xa647361 /* functionfs */,
		0xaee71ee7 /* gadgetfs */,
	};

	for (size_t i = 0; i < sizeof(magic) / sizeof(magic[0]); i++)
		if (f_type == magic[i])
			return true;
	return false;
}

bool pc_fd_kernel_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return true;	/* cannot tell: not opened */
	return pc_fs_type_kernel((unsigned long)sf.f_type);
}

/* openat2 is missing or refused: this kernel or this sandbox */
static bool no_openat2(int rc)
{
	return rc == -ENOSYS || rc == -EPERM || rc == -E2BIG;
}

/* Relative, and no empty, "." or ".." component: else -EXDEV or -EINVAL. */
static int check_path(const char *path)
{
	if (!*path)
		return -ENOENT;
	if (*path == '/')
		return -EXDEV;
	for (const char *s = path; s;) {
		const char *e = strchr(s, '/');
		size_t l = e ? (size_t)(e - s) : strlen(s);

		if (l == 2 && s[0] == '.' && s[1] == '.')
			return -EXDEV;
		if (l == 0 || (l == 1 && s[0] == '.'))
			return -EINVAL;
		if (l > 255)
			return -ENAMETOOLONG;
		s = e ? e + 1 : NULL;
	}
	return 0;
}

/*
 * The component walk for kernels without openat2: each directory on the
 * way is opened O_PATH|O_NOFOLLOW|O_DIRECTORY relative to the last, so a
 * symbolic link anywhere stops it (ELOOP or ENOTDIR, told apart with
 * fstatat). Returns an O_PATH fd of the last component, which may itself
 * be a link (O_PATH|O_NOFOLLOW opens the link): the caller's fstat sees it.
 */
static int walk_components(int rootfd, const char *path)
{
	char comp[256];
	int dfd = rootfd, fd = -1;

	for (const char *s = path;;) {
		const char *e = strchr(s, '/');
		size_t l = e ? (size_t)(e - s) : strlen(s);

		memcpy(comp, s, l);
		comp[l] = 0;
		fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC | (e ? O_DIRECTORY : 0));
		if (fd < 0) {
			int err = errno;
			struct stat st;

			if (err == ENOTDIR && e && fstatat(dfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			    S_ISLNK(st.st_mode))
				err = ELOOP;
			if (dfd != rootfd)
				close(dfd);
			return -err;
		}
		if (dfd != rootfd)
			close(dfd);
		if (!e)
			return fd;
		dfd = fd;
		s = e + 1;
	}
}

int pc_path_beneath(int rootfd, const char *path, struct stat *ret_st)
{
	struct stat st;
	int pfd, rc;

	rc = check_path(path);
	if (rc < 0)
		return rc;
	pfd = pc_sys_openat2(rootfd, path, O_PATH | O_NOFOLLOW,
			     RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (pfd < 0 && no_openat2(pfd))
		pfd = walk_components(rootfd, path);
	if (pfd < 0)
		return pfd;
	if (fstat(pfd, &st) < 0) {
		rc = -errno;
		close(pfd);
		return rc;
	}
	*ret_st = st;
	return pfd;
}

int pc_open_beneath(int rootfd, const char *path, int extra_flags, struct stat *ret_st)
{
	struct stat st;
	int pfd, fd;

	pfd = pc_path_beneath(rootfd, path, &st);
	if (pfd < 0)
		return pfd;
	if (S_ISLNK(st.st_mode) || !S_ISREG(st.st_mode)) {
		close(pfd);
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		*ret_st = st;
		return -EINVAL;
	}
	if (pc_fd_kernel_fs(pfd)) {
		close(pfd);
		return -EREMOTEIO;
	}
	fd = pc_reopen_checked(pfd, &st, extra_flags, ret_st);
	close(pfd);
	return fd == -ENOENT ? -ENOMEDIUM : fd;	/* no /proc: said, not "missing" */
}

int pc_reopen_at(int fddir, int pfd, const struct stat *st, int extra_flags, struct stat *ret_st)
{
	struct stat st2;
	char self[64];
	int fd;

	/* the same inode, now opened for reading: no path is walked again */
	if (fddir >= 0)
		snprintf(self, sizeof(self), "%d", pfd);
	else
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = pc_sys_openat(fddir >= 0 ? fddir : AT_FDCWD, self,
			   O_RDONLY | O_NONBLOCK | O_NOCTTY | extra_flags);
	if (fd < 0 || !ret_st)
		return fd;
	if (fstat(fd, &st2) < 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino ||
	    !S_ISREG(st2.st_mode)) {
		close(fd);
		return -ESTALE;
	}
	*ret_st = st2;
	return fd;
}

int pc_reopen_checked(int pfd, const struct stat *st, int extra_flags, struct stat *ret_st)
{
	return pc_reopen_at(-1, pfd, st, extra_flags, ret_st);
}

/*
 * pc_path_trusted: an absolute path opened one component at a time
 * (O_PATH | O_NOFOLLOW) the way systemd reads a PIDFile=: a symbolic link
 * is followed only where nobody but root (or the caller) could have made
 * or changed it, the link root's and every directory before it root's and
 * writable by nobody else unless sticky. With PC_TRUSTED_NO_FUSE, nothing
 * is looked up on a FUSE mount: each fd's mount is asked of /proc (its
 * fdinfo's mnt_id, against mountinfo read once a lookup), never of the
 * filesystem, before it is fstat()ed or a name is looked up in it (a user
 * may mount one on a directory it owns and stop answering).
 */

/* the mounts, by ID, and which are FUSE (read once a lookup) */
struct mounts {
	int *id;
	bool *fuse;
	size_t n, cap;
};

static void mounts_read(struct mounts *m)
{
	char *line = NULL;
	size_t len = 0;
	FILE *f = fopen("/proc/self/mountinfo", "re");

	m->n = 0;
	if (!f)
		return;
	while (getline(&line, &len, f) > 0) {	/* a line may be long (overlay's options) */
		const char *sep = strstr(line, " - ");

		if (m->n == m->cap) {
			size_t cap = m->cap ? 2 * m->cap : 64;
			int *id = realloc(m->id, cap * sizeof(*id));
			bool *fuse;

			if (id)
				m->id = id;
			fuse = realloc(m->fuse, cap * sizeof(*fuse));
			if (fuse)
				m->fuse = fuse;
			if (!id || !fuse)
				break;
			m->cap = cap;
		}
		m->id[m->n] = atoi(line);
		m->fuse[m->n++] = !sep || !strncmp(sep + 3, "fuse", 4);
	}
	free(line);
	fclose(f);
}

/* is fd on a FUSE mount? true where there is no telling */
static bool mounts_fuse(struct mounts *m, int fd)
{
	int mnt = pc_fdinfo_mnt_id(fd);

	if (mnt < 0)
		return true;
	/* a mount made since the last read: read again, once */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < m->n; i++)
			if (m->id[i] == mnt)
				return m->fuse[i];
		if (!pass)
			mounts_read(m);
	}
	return true;
}

static bool owner_trusted(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* a directory nobody but root (or the caller) can change */
static bool dir_trusted(const struct stat *st)
{
	return S_ISDIR(st->st_mode) && owner_trusted(st->st_uid) &&
	       (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (st->st_mode & S_ISVTX));
}

int pc_path_trusted(const char *path, unsigned flags, struct pc_trusted *ret)
{
	char rest[PATH_MAX], target[PATH_MAX], done[PATH_MAX] = "";
	struct mounts m = { 0 };
	bool trusted = true;
	int dfd = -1, rc, links = 0, comps = 0;

	ret->link[0] = 0;
	ret->dirs_trusted = false;
	if (path[0] != '/' || strlen(path) >= sizeof(rest))
		return -EINVAL;
	snprintf(rest, sizeof(rest), "%s", path);
	if (flags & PC_TRUSTED_NO_FUSE)
		mounts_read(&m);
	for (char *p = rest;;) {
		char comp[NAME_MAX + 1];
		struct stat st;
		size_t n;
		ssize_t tl;
		int fd;
		bool last;

		if (dfd < 0) {	/* "/", at the start and after an absolute link */
			fd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
			done[0] = 0;
			if (fd < 0) {
				rc = -errno;
				goto out;
			}
		} else {
			while (*p == '/')
				p++;
			n = strcspn(p, "/");
			if (n > NAME_MAX) {
				rc = -ENAMETOOLONG;
				goto out;
			}
			/* a bound on the work one lookup may cost (./././...) */
			if (++comps > PC_TRUSTED_MAX_COMPONENTS) {
				rc = -ELOOP;
				goto out;
			}
			memcpy(comp, p, n);
			comp[n] = 0;
			p += n;
			fd = openat(dfd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0) {
				rc = -errno;
				goto out;
			}
			if (!strcmp(comp, "..")) {
				char *slash = strrchr(done, '/');

				if (slash)
					*slash = 0;
			} else if (strcmp(comp, ".") &&
				   strlen(done) + 1 + n < sizeof(done)) {
				strcat(done, "/");
				strcat(done, comp);
			}
		}
		if ((flags & PC_TRUSTED_NO_FUSE) && mounts_fuse(&m, fd)) {
			close(fd);
			rc = -EREMOTE;
			goto out;
		}
		if (fstat(fd, &st) < 0) {
			rc = -errno;
			close(fd);
			goto out;
		}
		while (*p == '/')
			p++;
		last = !*p;
		if (S_ISLNK(st.st_mode) && (!last || (flags & PC_TRUSTED_FOLLOW_LAST))) {
			if (!trusted || !owner_trusted(st.st_uid)) {
				snprintf(ret->link, sizeof(ret->link), "%s", *done ? done : "/");
				close(fd);
				rc = -EPERM;
				goto out;
			}
			tl = readlinkat(fd, "", target, sizeof(target) - 1);
			close(fd);
			if (tl <= 0 || ++links > 40 || strlen(p) + (size_t)tl + 1 >= sizeof(rest)) {
				rc = tl < 0 ? -errno : tl == 0 ? -ENOENT :
				     links > 40 ? -ELOOP : -ENAMETOOLONG;
				goto out;
			}
			target[tl] = 0;
			/* the link's target, then what was left after it */
			memmove(rest + tl + 1, p, strlen(p) + 1);
			memcpy(rest, target, (size_t)tl);
			rest[tl] = '/';
			p = rest;
			/* its directory again: the link's name came off "done" */
			{
				char *slash = strrchr(done, '/');

				if (slash)
					*slash = 0;
			}
			if (target[0] == '/') {
				close(dfd);
				dfd = -1;
			}
			continue;
		}
		if (S_ISDIR(st.st_mode))
			trusted = trusted && dir_trusted(&st);
		if (dfd >= 0)
			close(dfd);
		dfd = fd;
		if (last) {
			ret->dirs_trusted = trusted;
			rc = dfd;
			dfd = -1;
			goto out;
		}
		if (!S_ISDIR(st.st_mode)) {
			rc = -ENOTDIR;
			goto out;
		}
	}
out:
	if (dfd >= 0)
		close(dfd);
	free(m.id);
	free(m.fuse);
	return rc;
}
