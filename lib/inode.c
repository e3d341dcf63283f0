/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * inode.c: files opened by the numbers the kernel names them by: a
 * (dev, ino) from a trace event, through a file handle on a mount of that
 * filesystem (pc_inode_open_mnts; pc_inode_open in trace.c is its public
 * face), and our own fds, through a /proc/self/fd that is procfs
 * (pc_proc_fd_dir). Apart from trace.c and beneath.c because record.c
 * uses both: where pagecache links libpagecache.so, which hides them,
 * record.o and this file are linked into pagecache itself (Makefile:
 * CLI_HIDDEN_OBJ), so this file needs nothing else hidden but the system
 * call seam.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/mount.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- (dev, ino) -> a file ------------------------------------------------------ */

void pc_mnt_unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = 0;
}

static int open_handle(int mfd, uint64_t ino, int flags)
{
	union {
		struct file_handle fh;
		char space[sizeof(struct file_handle) + 16];
	} h;
	int fd;

	memset(&h, 0, sizeof(h));
	if (ino <= UINT32_MAX) {
		uint32_t w[2] = { (uint32_t)ino, 0 };	/* FILEID_INO32_GEN, gen 0 */

		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
		memcpy(h.fh.f_handle, w, 8);
	} else {
		uint32_t w[3] = { (uint32_t)ino, (uint32_t)(ino >> 32), 0 };	/* XFS's 64-bit */

		h.fh.handle_bytes = 12;
		h.fh.handle_type = 0x81;
		memcpy(h.fh.f_handle, w, 12);
	}
	fd = pc_sys_open_by_handle(mfd, &h.fh, flags | O_CLOEXEC);
	return fd;
}

/*
 * The mount a dev was last opened through: a recording opens thousands of
 * files on a few filesystems, and mountinfo need not be read for each.
 */
static pthread_mutex_t mnt_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t dev;
	char path[4096];
} mnt_cache[8];
static unsigned mnt_next;

/* The mount at path, if it is one of dev (not covered by another): an fd of it, or -1. */
static int mount_fd(const char *path, uint64_t dev)
{
	struct stat st;
	int mfd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);

	if (mfd >= 0 && (fstat(mfd, &st) < 0 || st.st_dev != dev)) {
		close(mfd);	/* covered by another mount */
		mfd = -1;
	}
	return mfd;
}

/*
 * Through the mount mfd of dev: an fd of (dev, ino), a regular file, or
 * -errno; its statx (its birth time too, where the filesystem keeps one).
 */
static int open_in(int mfd, uint64_t dev, uint64_t ino, int flags, struct statx *ret_sx)
{
	struct statx sx;
	int fd = open_handle(mfd, ino, flags);

	if (fd < 0)
		return fd;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx) < 0 ||
	    makedev(sx.stx_dev_major, sx.stx_dev_minor) != dev || sx.stx_ino != ino ||
	    !S_ISREG(sx.stx_mode)) {
		close(fd);
		return -ESTALE;
	}
	if (ret_sx)
		*ret_sx = sx;
	return fd;
}

/* mfd, a mount of dev's root, kept for the round's next opens (m has room), else closed. */
static void mnts_keep(struct pc_inode_mnts *m, uint64_t dev, int mfd, bool whole)
{
	if (m && whole && m->n < sizeof(m->fd) / sizeof(m->fd[0])) {
		m->dev[m->n] = dev;
		m->fd[m->n++] = mfd;
	} else {
		close(mfd);
	}
}

void pc_inode_mnts_close(struct pc_inode_mnts *m)
{
	while (m->n)
		close(m->fd[--m->n]);
}

int pc_inode_open_mnts(struct pc_inode_mnts *m, uint64_t dev, uint64_t ino, int flags,
		       struct statx *ret_sx)
{
	int err = 0, rc = -ENODEV, fd, mfd;
	FILE *f;
	char *line = NULL, cached[4096] = "";
	size_t cap = 0;
	/* mounts of dev: those of the filesystem's root first (their paths are whole) */
	char *mnts[2][8];
	int nm[2] = { 0, 0 };

	if (!(flags & O_PATH))
		flags |= O_NONBLOCK | O_NOCTTY;	/* whatever it turns out to be, never wait */
	for (unsigned i = 0; m && i < m->n; i++)
		if (m->dev[i] == dev)
			return open_in(m->fd[i], dev, ino, flags, ret_sx);
	pthread_mutex_lock(&mnt_lock);
	for (unsigned i = 0; i < 8; i++)
		if (mnt_cache[i].path[0] && mnt_cache[i].dev == dev)
			memcpy(cached, mnt_cache[i].path, sizeof(cached));
	pthread_mutex_unlock(&mnt_lock);
	if (cached[0] && (mfd = mount_fd(cached, dev)) >= 0) {
		fd = open_in(mfd, dev, ino, flags, ret_sx);
		mnts_keep(m, dev, mfd, true);
		return fd;
	}
	f = pc_sys_fopen_read("/proc/self/mountinfo", &err);
	if (!f)
		return err;
	while (getline(&line, &cap, f) > 0) {
		unsigned ma, mi;
		char root[4096], mnt[4096];
		int k;

		if (sscanf(line, "%*d %*d %u:%u %4095s %4095s", &ma, &mi, root, mnt) != 4 ||
		    makedev(ma, mi) != dev)
			continue;
		pc_mnt_unescape(mnt);
		k = strcmp(root, "/") != 0;
		if (nm[k] < 8 && (mnts[k][nm[k]] = strdup(mnt)))
			nm[k]++;
	}
	free(line);
	fclose(f);
	for (int k = 0; k < 2 && rc < 0; k++) {
		for (int i = 0; i < nm[k] && rc < 0; i++) {
			mfd = mount_fd(mnts[k][i], dev);
			if (mfd < 0)
				continue;
			rc = open_in(mfd, dev, ino, flags, ret_sx);
			if (k == 0) {	/* a mount of the root: its paths are whole */
				pthread_mutex_lock(&mnt_lock);
				mnt_cache[mnt_next % 8].dev = dev;
				snprintf(mnt_cache[mnt_next % 8].path, sizeof(mnt_cache[0].path), "%s",
					 mnts[k][i]);
				mnt_next++;
				pthread_mutex_unlock(&mnt_lock);
			}
			mnts_keep(m, dev, mfd, k == 0 && rc >= 0);
		}
	}
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < nm[k]; i++)
			free(mnts[k][i]);
	return rc;
}

/* ---- our own fds ---------------------------------------------------------------- */

/*
 * Where /proc is not mounted (a chroot, a container, a mount namespace
 * that unmounted it), a procfs of our own, mounted nowhere: fsopen,
 * fsconfig and fsmount (5.2+) give a detached mount, seen by nobody else
 * and gone with the last fd of it. It takes CAP_SYS_ADMIN over this pid
 * namespace (root; not a user namespace's root where procfs is masked):
 * else -EPERM, and the caller does without.
 */
static int private_proc_fd_dir(void)
{
#if defined(SYS_fsopen) && defined(SYS_fsconfig) && defined(SYS_fsmount)
	int fs, mnt, fd;

	fs = (int)syscall(SYS_fsopen, "proc", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	if (syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		fd = -errno;
		close(fs);
		return fd;
	}
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC,
			   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	fd = mnt < 0 ? -errno : 0;
	close(fs);
	if (fd < 0)
		return fd;
	/* "self" is the caller's process in this pid namespace, as in /proc */
	fd = openat(mnt, "self/fd", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	fd = fd < 0 ? -errno : fd;
	close(mnt);	/* the fd of self/fd holds the mount */
	return fd;
#else
	return -ENOSYS;
#endif
}

int pc_proc_fd_dir(void)
{
	struct statfs sf;
	int fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		fd = -errno;
	else if (fstatfs(fd, &sf) < 0 || (unsigned long)sf.f_type != PROC_SUPER_MAGIC) {
		close(fd);	/* something else mounted there: not ours to trust */
		fd = -ENOENT;
	}
	if (fd < 0) {
		int own = private_proc_fd_dir();

		if (own >= 0)
			return own;
	}
	return fd;
}
