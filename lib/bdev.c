/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bdev.c: the block device under a filesystem, and its own page cache.
 *
 * A filesystem's metadata (ext4's inode tables, directory blocks, extent
 * tree blocks, bitmaps, the journal) is cached in the block device's
 * mapping, not in any file's: a snapshot of files cannot bring it back.
 * Pages read through the device file (/dev/X, by anyone) land in that same
 * mapping, and the filesystem's later reads of those blocks find them, so
 * a restore reads the device's recorded pages back through /dev/X.
 *
 * The promise: only the device a filesystem really sits on is opened. Its
 * number (the files' st_dev) is looked up in sysfs (/sys/dev/block/M:m/
 * uevent, DEVNAME), /dev/NAME is reached with O_PATH | O_NOFOLLOW and
 * fstat()ed: it must be a block device whose st_rdev is that number, and
 * only then is it opened for reading, through /proc/self/fd (that very
 * inode; a FIFO or another device in its place is never opened). A name
 * a snapshot records is never opened: it is only shown. The size comes
 * from BLKGETSIZE64 (a device's st_size is 0); residency and reads go
 * through the same code as files' (cachestat, mincore, the warmer), with
 * the device's size given to them. Its pages are found by halving
 * cachestat's ranges, not by mincore: a block read alone through a buffer
 * head leaves its page cached but not uptodate, and mincore counts only
 * uptodate pages (3 of 97 on a test ext4, 6.18); without cachestat those
 * pages are missed. readahead(2) works on a block device; a present page
 * that is not uptodate is skipped by it and made uptodate by the
 * warmer's one-byte pread. Opening the devices takes CAP_DAC_READ_SEARCH,
 * being told their residency CAP_FOWNER.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

bool pc_bdev_allowed(void)
{
	return pc_have_cap(CAP_DAC_READ_SEARCH) && pc_have_cap(CAP_FOWNER);
}

int pc_fd_fs(int fd, uint64_t *ret_dev, uint64_t *ret_fsid)
{
	struct statfs sf;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*ret_dev = st.st_dev;
	*ret_fsid = 0;
	/* both words, low first, as pc_profile_identify records them */
	if (fstatfs(fd, &sf) == 0)
		*ret_fsid = (uint64_t)(uint32_t)sf.f_fsid.__val[0] |
			    (uint64_t)(uint32_t)sf.f_fsid.__val[1] << 32;
	return 0;
}

/* DEVNAME from the device's uevent: "loop0", "nvme0n1p2", maybe "cciss/c0d0". */
static int devname(uint64_t dev, char *ret, size_t len)
{
	char path[96], line[256];
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", major(dev), minor(dev));
	f = pc_sys_fopen_read(path, &rc);
	if (!f)		/* no block device has that number: tmpfs, overlayfs, btrfs, NFS */
		return rc == -ENOENT ? -ENODEV : rc;
	rc = -ENODEV;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strcspn(line, "\n");

		if (strncmp(line, "DEVNAME=", 8))
			continue;
		line[n] = 0;
		/* the kernel's name: relative, no "..", nothing odd */
		if (n == 8 || line[8] == '/' || strstr(line, "..") || n - 8 >= len ||
		    strspn(line + 8, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				     "0123456789._+:-/") != n - 8)
			break;
		memcpy(ret, line + 8, n - 7);
		rc = 0;
		break;
	}
	if (ferror(f))
		rc = errno ? -errno : -EIO;
	fclose(f);
	return rc;
}

/* One component, as sysfs names it: "cciss/c0d0" is "cciss!c0d0". */
static void sysfs_name(char *name)
{
	for (char *p = name; *p; p++)
		if (*p == '/')
			*p = '!';
}

int pc_bdev_name(uint64_t dev, char *ret, size_t len)
{
	char name[PC_BDEV_NAME_MAX];
	int rc = devname(dev, name, sizeof(name));

	if (rc < 0)
		return rc;
	if (strlen(name) >= len)
		return -ENAMETOOLONG;
	sysfs_name(name);
	memcpy(ret, name, strlen(name) + 1);
	return 0;
}

int pc_bdev_open(uint64_t dev, struct pc_bdev *ret)
{
	struct pc_bdev b = { .fd = -1, .dev = dev };
	char name[PC_BDEV_NAME_MAX], path[PC_BDEV_NAME_MAX + 16];
	struct stat st, st2;
	uint64_t size = 0;
	int pfd, fd, rc;

	/* a host whose devices cannot be opened (PAGECACHE_FAULT=bdev_open:EPERM) */
	rc = pc_sys_injected(PC_SYS_BDEV_OPEN);
	if (rc)
		return rc > 0 ? -rc : -EIO;
	rc = devname(dev, name, sizeof(name));
	if (rc < 0)
		return rc;
	snprintf(path, sizeof(path), "/dev/%s", name);
	sysfs_name(name);
	snprintf(b.name, sizeof(b.name), "%s", name);
	/* reached, not opened: nothing is opened until it is known to be the device */
	pfd = pc_sys_openat(AT_FDCWD, path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return pfd == -ELOOP ? -ESTALE : pfd;
	if (fstat(pfd, &st) < 0) {
		rc = -errno;
		close(pfd);
		return rc;
	}
	if (!S_ISBLK(st.st_mode) || (uint64_t)st.st_rdev != dev) {
		close(pfd);
		return -ESTALE;		/* /dev/NAME is something else */
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", pfd);
	fd = pc_sys_openat(AT_FDCWD, path, O_RDONLY | O_NOCTTY | O_CLOEXEC);
	close(pfd);
	if (fd < 0)
		return fd == -ENOENT ? -ENOMEDIUM : fd;		/* no /proc */
	if (fstat(fd, &st2) < 0 || !S_ISBLK(st2.st_mode) || st2.st_rdev != st.st_rdev ||
	    st2.st_ino != st.st_ino || st2.st_dev != st.st_dev) {
		close(fd);
		return -ESTALE;
	}
	if (ioctl(fd, BLKGETSIZE64, &size) < 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	b.fd = fd;
	b.size = size;
	b.st = st2;
	b.st.st_size = (off_t)size;	/* the engine's clip and EOF: the device's size */
	*ret = b;
	return 0;
}

void pc_bdev_close(struct pc_bdev *b)
{
	if (b && b->fd >= 0) {
		close(b->fd);
		b->fd = -1;
	}
}

/*
 * Pages [first, first+n) present, found by halving what cachestat counts:
 * a few calls per run, each costing the pages it finds.
 */
static int bisect(int fd, uint64_t first, uint64_t n, struct pc_runs *a)
{
	uint64_t ps = pc_page_size();
	struct pc_cachestat cs;
	int rc = pc_sys_cachestat(fd, first * ps, n * ps, &cs);

	if (rc < 0)
		return rc;
	if (cs.cache == 0)
		return 0;
	if (cs.cache >= n || n == 1)
		return pc_runs_add(a, first, n);
	rc = bisect(fd, first, n / 2, a);
	return rc < 0 ? rc : bisect(fd, first + n / 2, n - n / 2, a);
}

/*
 * Metadata read by a filesystem is read a block at a time (buffer heads):
 * its page is in the cache, its block valid, but the page itself is not
 * marked uptodate, and mincore reports only uptodate pages. cachestat
 * counts every page present, so it is asked first; mincore only where
 * the kernel lacks cachestat (it then sees only what was read whole, as
 * through /dev/X).
 */
int pc_bdev_cached_runs(const struct pc_bdev *b, uint64_t **ret, size_t *ret_n)
{
	uint64_t pages = (b->size + pc_page_size() - 1) / pc_page_size();
	struct pc_runs a = { 0 };
	int rc;

	if (!pc_fd_residency_allowed(b->fd, &b->st))
		return -EPERM;
	rc = pages ? bisect(b->fd, 0, pages, &a) : 0;
	if (rc == -ENOSYS) {
		free(a.v);
		return pc_fd_resident_runs(b->fd, b->size, 0, 0, ret, ret_n);
	}
	if (rc < 0) {
		free(a.v);
		return rc;
	}
	*ret = a.v;
	*ret_n = a.n;
	return 0;
}

int pc_bdev_snapshot(uint64_t dev, uint64_t fsid, struct pc_profile_file *ret)
{
	struct pc_profile_file f = { 0 };
	struct pc_bdev b;
	int rc = pc_bdev_open(dev, &b);

	if (rc < 0)
		return rc;
	rc = pc_bdev_cached_runs(&b, &f.runs, &f.nruns);
	if (rc == 0 && !(f.path = strdup(b.name)))
		rc = -ENOMEM;
	pc_bdev_close(&b);
	if (rc < 0) {
		pc_profile_file_release(&f);
		return rc;
	}
	f.size = b.size;
	f.dev = dev;
	f.ident = PC_IDENT_BDEV;
	if (fsid) {
		f.fsid = fsid;
		f.ident |= PC_IDENT_FSID;
	}
	*ret = f;
	return 0;
}

bool pc_bdev_matches(const struct pc_profile_file *rec, uint64_t dev, uint64_t fsid, bool fsid_only)
{
	if (!(rec->ident & PC_IDENT_BDEV))
		return false;
	if (rec->ident & PC_IDENT_FSID)
		return fsid && fsid == rec->fsid;
	return !fsid_only && dev == rec->dev;
}

int pc_bdev_restore(uint64_t dev, const struct pc_profile_file *rec, struct pc_budget *budget,
		    bool dry, struct pc_bdev_result *ret)
{
	struct pc_bdev_result res = { 0 };
	uint64_t ps = pc_page_size(), pages, *runs = NULL;
	size_t n = 0;
	struct pc_bdev b;
	int rc = pc_bdev_open(dev, &b);

	if (rc < 0)
		return rc;
	snprintf(res.name, sizeof(res.name), "%s", b.name);
	res.size = b.size;
	/* the recorded pages that lie on the device as it is now */
	pages = (b.size + ps - 1) / ps;
	runs = malloc((rec->nruns ? rec->nruns : 1) * 2 * sizeof(*runs));
	if (!runs) {
		pc_bdev_close(&b);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rec->nruns; i++) {
		uint64_t a = rec->runs[2 * i], e = a + rec->runs[2 * i + 1];

		if (e > pages)
			e = pages;
		if (a >= e)
			continue;
		runs[2 * n] = a;
		runs[2 * n + 1] = e - a;
		n++;
		res.pages += e - a;
	}
	if (!pc_fd_residency_allowed(b.fd, &b.st)) {
		rc = -EPERM;
	} else if (dry) {
		for (size_t i = 0; i < n && rc == 0; i++) {
			struct pc_residency r;

			rc = pc_fd_residency(b.fd, b.size, runs[2 * i] * ps, runs[2 * i + 1] * ps, &r);
			if (rc == 0 && r.source == PC_SRC_NONE)
				rc = -(r.err ? r.err : EPERM);
			res.cached += rc == 0 ? r.cached : 0;
		}
	} else if (n) {
		struct pc_warm_opts wo = { .budget = budget };
		struct pc_warmer *w = NULL;
		struct pc_warm_result wr;
		int fd = dup(b.fd);

		rc = fd < 0 ? -errno : pc_warmer_new(&wo, &w);
		if (rc == 0)
			rc = pc_warmer_add_runs_flags(w, fd, b.name, &b.st, runs, n,
						      PC_WARM_WHOLE);	/* takes fd */
		else if (fd >= 0)
			close(fd);
		if (rc == 0 || rc == -ENOSPC)
			pc_warmer_drain(w);
		if (w && pc_warmer_next_result(w, &wr)) {
			res.read = wr.read;
			res.resident = wr.resident;
			res.cached = wr.pages - wr.read;
			res.err = wr.err;
		}
		pc_warmer_free(w);
	}
	free(runs);
	pc_bdev_close(&b);
	if (rc < 0 && rc != -ENOSPC)
		return rc;
	if (rc == -ENOSPC)
		res.err = ENOSPC;
	*ret = res;
	return 0;
}

const char *pc_bdev_strerror(int err)
{
	switch (err) {
	case ENODEV:
		return "no block device (tmpfs, overlayfs, btrfs, a network filesystem)";
	case ESTALE:
		return "its /dev node is not that device";
	case ENOMEDIUM:
		return "/proc is not mounted";
	}
	return strerror(err);
}
