/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bdev.c: a filesystem's block device is found from its number alone, or
 * not at all; its cached pages are listed exactly; a record is read back
 * through it, clipped to its size, within the budget; a dry run reads
 * nothing. On a loop device of our own (root), detached by the kernel when
 * the test's last fd closes (LO_FLAGS_AUTOCLEAR), whatever way it ends.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>

#define DEV_PAGES 2048u

static uint64_t count_pages(const uint64_t *runs, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += runs[2 * i + 1];
	return t;
}

/* pages of [first, first + n) in the device's cache, by mincore (cachestat
 * came in 6.5: this must hold on 6.1 too) */
static uint64_t cached_in(struct pc_bdev *b, uint64_t first, uint64_t n)
{
	uint64_t *runs = NULL, got = 0;
	size_t nr = 0;

	if (pc_bdev_cached_runs(b, &runs, &nr) != 0)
		return UINT64_MAX;
	for (size_t i = 0; i < nr; i++) {
		uint64_t lo = runs[2 * i], hi = lo + runs[2 * i + 1];

		lo = lo > first ? lo : first;
		hi = hi < first + n ? hi : first + n;
		got += hi > lo ? hi - lo : 0;
	}
	free(runs);
	return got;
}

static void matches(void)
{
	struct pc_profile_file r = { .ident = PC_IDENT_BDEV, .dev = makedev(7, 3) };

	ok(pc_bdev_matches(&r, makedev(7, 3), 99, false), "no fsid recorded: the device number decides");
	ok(!pc_bdev_matches(&r, makedev(7, 3), 99, true), "... but not where only an fsid may (a copy elsewhere)");
	ok(!pc_bdev_matches(&r, makedev(7, 4), 99, false), "another device number: no");
	r.ident |= PC_IDENT_FSID;
	r.fsid = 42;
	ok(pc_bdev_matches(&r, makedev(8, 1), 42, true), "fsid recorded: the same fsid, whatever the device");
	ok(!pc_bdev_matches(&r, makedev(7, 3), 43, false), "fsid recorded: another fsid is not it, same device or not");
	ok(!pc_bdev_matches(&r, makedev(7, 3), 0, false), "fsid recorded: a filesystem without one is not it");
	r.ident = PC_IDENT_FSID;
	ok(!pc_bdev_matches(&r, makedev(7, 3), 42, false), "a file's record is no device's");
}

/* An image of DEV_PAGES pages on a free loop device, autocleared; -1: why in *why. */
static int loop_attach(char *path, size_t len, const char **why)
{
	struct loop_config cfg = { 0 };
	char img[512];
	int ctl, n, fd, imgfd;

	snprintf(img, sizeof(img), "%s", make_file("dev.img", (size_t)DEV_PAGES * pc_page_size()));
	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0) {
		*why = "no /dev/loop-control";
		return -1;
	}
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0) {
		*why = "no free loop device";
		return -1;
	}
	snprintf(path, len, "/dev/loop%d", n);
	imgfd = open(img, O_RDWR | O_CLOEXEC);
	fd = open(path, O_RDWR | O_CLOEXEC);
	cfg.fd = (uint32_t)imgfd;
	cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
	if (imgfd < 0 || fd < 0 || ioctl(fd, LOOP_CONFIGURE, &cfg) < 0) {
		*why = "cannot attach a loop device (taken meanwhile, or LOOP_CONFIGURE missing)";
		if (fd >= 0)
			close(fd);
		if (imgfd >= 0)
			close(imgfd);
		return -1;
	}
	close(imgfd);
	/* where udev runs (a systemd host, the Debian guest), a new block
	 * device is probed (blkid reads its first and last pages) on an event
	 * of its own: let that end first, or its pages land among ours. (In a
	 * container on a host that runs udev, /run/udev is not the host's: the
	 * race stays there. CI's host runs no udev.) */
	if (access("/run/udev/control", F_OK) == 0 &&
	    system("udevadm settle --timeout=30 >/dev/null 2>&1") != 0)
		fprintf(stderr, "# udevadm settle failed: udev's probe may still read the device\n");
	return fd;
}

int main(void)
{
	uint64_t ps = pc_page_size(), *runs = NULL, fsid = 0, dev = 0;
	struct pc_bdev b = { .fd = -1 };
	struct pc_bdev_result res;
	struct pc_profile_file rec = { 0 };
	struct pc_budget budget;
	char loop[64], name[PC_BDEV_NAME_MAX], *buf = malloc(ps);
	const char *why = NULL;
	struct stat st;
	size_t n = 0;
	int fd, rc;

	pc_sys_inject_env(getenv("PAGECACHE_FAULT"));
	matches();

	stat("/proc/self", &st);
	is_u64(-pc_bdev_open(st.st_dev, &b), ENODEV, "procfs has no block device: -ENODEV");
	is_u64(-pc_bdev_name(makedev(4095, 1048575), name, sizeof(name)), ENODEV,
	       "a number no device has: -ENODEV");
	fd = open(make_file("plain", 4096), O_RDONLY);
	fstat(fd, &st);
	ok(pc_fd_fs(fd, &dev, &fsid) == 0 && dev == (uint64_t)st.st_dev,
	   "pc_fd_fs: the file's st_dev");
	close(fd);

	if (!pc_bdev_allowed()) {
		skip("needs root (CAP_DAC_READ_SEARCH and CAP_FOWNER)", "a loop device's cache");
		rm_scratch();
		return done_testing();
	}
	fd = loop_attach(loop, sizeof(loop), &why);
	if (fd < 0) {
		skip(why, "a loop device's cache");
		rm_scratch();
		return done_testing();
	}
	fstat(fd, &st);
	rc = pc_bdev_open(st.st_rdev, &b);
	ok(rc == 0, "pc_bdev_open of %s (%d)", loop, rc);
	is_u64(b.size, (uint64_t)DEV_PAGES * ps, "its size is BLKGETSIZE64's");
	ok(!strcmp(b.name, loop + 5), "its name is the kernel's (%s)", b.name);
	ok(S_ISBLK(b.st.st_mode) && b.st.st_rdev == st.st_rdev, "it is that block device");

	/* pages 10-19 and 100, nothing read ahead */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	for (uint64_t p = 10; p < 20; p++)
		pread(fd, buf, ps, (off_t)(p * ps));
	pread(fd, buf, ps, (off_t)(100 * ps));
	rc = pc_bdev_cached_runs(&b, &runs, &n);
	ok(rc == 0 && n == 2 && runs[0] == 10 && runs[1] == 10 && runs[2] == 100 && runs[3] == 1,
	   "its cached pages: exactly the runs read (%zu runs, %llu pages)", n,
	   (unsigned long long)count_pages(runs, n));
	free(runs);

	rc = pc_bdev_snapshot(st.st_rdev, 1234, &rec);
	ok(rc == 0 && rec.ident == (PC_IDENT_BDEV | PC_IDENT_FSID) && rec.fsid == 1234 &&
	   rec.dev == st.st_rdev && rec.size == b.size && !strcmp(rec.path, b.name),
	   "a record: name, number, size, the filesystem's id");
	is_u64(count_pages(rec.runs, rec.nruns), 11, "... and its pages");

	/* read back after a drop; a run past the end is clipped */
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	rec.runs = realloc(rec.runs, (rec.nruns + 1) * 2 * sizeof(*rec.runs));
	rec.runs[2 * rec.nruns] = DEV_PAGES - 1;
	rec.runs[2 * rec.nruns + 1] = 100;	/* 99 pages past the end */
	rec.nruns++;
	pc_budget_init(&budget, UINT64_MAX, 0);
	rc = pc_bdev_restore(st.st_rdev, &rec, &budget, true, &res);
	ok(rc == 0 && res.pages == 12 && res.cached == 0 && res.read == 0,
	   "dry run: 12 pages on the device, none cached, none read");
	is_u64(cached_in(&b, 0, DEV_PAGES), 0, "dry run: the device's cache is still empty");
	rc = pc_bdev_restore(st.st_rdev, &rec, &budget, false, &res);
	ok(rc == 0 && res.err == 0, "restore (%d, %s)", rc, strerror(res.err));
	is_u64(res.read, 12, "restore read the 12 pages");
	is_u64(res.resident, 12, "... verified resident");
	is_u64(cached_in(&b, 10, 10), 10, "pages 10-19 are cached again");
	pc_budget_release(&budget);

	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	pc_budget_init(&budget, 4 * ps, 0);
	rc = pc_bdev_restore(st.st_rdev, &rec, &budget, false, &res);
	ok(rc == 0 && res.err == ENOSPC && res.read == 0, "a budget of 4 pages: stopped, nothing read");
	pc_budget_release(&budget);

	pc_sys_inject(PC_SYS_OPEN, EPERM, 0, 0);
	is_u64(-pc_bdev_open(st.st_rdev, &b), EPERM, "a device the kernel refuses: -EPERM");
	pc_sys_inject_reset();
	pc_sys_inject(PC_SYS_BDEV_OPEN, EPERM, 0, 0);	/* PAGECACHE_FAULT=bdev_open:EPERM */
	is_u64(-pc_bdev_open(st.st_rdev, &b), EPERM, "the bdev_open fault point refuses it: -EPERM");
	pc_sys_inject_reset();
	is_u64(pc_sys_inject_env("bdev_open:EPERM"), 0, "bdev_open is a fault point's name");
	is_u64(-pc_bdev_open(st.st_rdev, &b), EPERM, "  and refuses by PAGECACHE_FAULT's spelling");
	pc_sys_inject_reset();
	ok(pc_bdev_open(makedev(major(st.st_rdev), minor(st.st_rdev)), &b) == 0,
	   "and opened again once allowed");

	pc_bdev_close(&b);
	pc_bdev_close(&b);	/* twice is fine */
	pc_profile_file_release(&rec);
	close(fd);		/* the last: the kernel detaches the loop device */
	free(buf);
	rm_scratch();
	return done_testing();
}
