/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pc_open_beneath (beneath.c): a hostile path list opens regular files
 * beneath the root and nothing else: no "..", no absolute path, no
 * symbolic link on the way or at the end, no magic link, no FIFO or
 * device (inotify would see an open), no escape by a directory swapped
 * for a link while it runs. Every case runs twice: with openat2, and with
 * openat2 failing ENOSYS (the component walk of older kernels).
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <linux/capability.h>

#include <pthread.h>
#include <stdatomic.h>
#include <sys/inotify.h>
#include <sys/sysmacros.h>

#define is_err(got, want, name) \
	do { int g_ = (got); ok(g_ == (want), "%s: %s (got %d, want %d)", how, name, g_, want); } while (0)

static char root[512], outside[512];
static int rootfd;
static atomic_int stop;

static void mk(const char *fmt, const char *rel, int kind)
{
	char p[1024];

	snprintf(p, sizeof(p), fmt, rel);
	if (kind == 'd' && mkdir(p, 0755) < 0)
		perror(p);
	if (kind == 'f') {
		int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd < 0 || write(fd, "data\n", 5) != 5)
			perror(p);
		close(fd);
	}
	if (kind == 'p' && mkfifo(p, 0644) < 0)
		perror(p);
}

static ino_t ino_of(const char *fmt, const char *rel)
{
	char p[1024];
	struct stat st;

	snprintf(p, sizeof(p), fmt, rel);
	return stat(p, &st) == 0 ? st.st_ino : 0;
}

/* swap root/race between a real directory and a link to outside/ */
static void *swapper(void *arg)
{
	char real[600], link[600], tmp[600];

	(void)arg;
	snprintf(real, sizeof(real), "%s/race", root);
	snprintf(tmp, sizeof(tmp), "%s/race.real", root);
	snprintf(link, sizeof(link), "%s/race.link", root);
	while (!atomic_load(&stop)) {
		rename(real, tmp);
		rename(link, real);	/* race -> outside */
		rename(real, link);
		rename(tmp, real);	/* race is the directory again */
	}
	return NULL;
}

static void cases(const char *how)
{
	struct stat st;
	char p[600];
	int fd, in;
	ino_t inside = ino_of("%s/a/f", root);

	fd = pc_open_beneath(rootfd, "a/f", O_NOATIME, &st);
	ok(fd >= 0 && st.st_ino == inside, "%s: a regular file beneath the root opens", how);
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);

		ok((fl & O_ACCMODE) == O_RDONLY && (fl & O_NONBLOCK), "%s: read-only, non-blocking", how);
		close(fd);
	}
	is_err(pc_open_beneath(rootfd, "a/lnk", 0, &st), -ELOOP, "a link as the last component");
	is_err(pc_open_beneath(rootfd, "dirlink/secret", 0, &st), -ELOOP,
	       "a link on the way (to a directory outside)");
	is_err(pc_open_beneath(rootfd, "inlink/f", 0, &st), -ELOOP,
	       "a link on the way, even one that stays inside");
	is_err(pc_open_beneath(rootfd, "../outside/secret", 0, &st), -EXDEV, "'..' leaves the root");
	is_err(pc_open_beneath(rootfd, "a/../a/f", 0, &st), -EXDEV, "'..' anywhere is refused");
	is_err(pc_open_beneath(rootfd, "/etc/passwd", 0, &st), -EXDEV, "an absolute path");
	is_err(pc_open_beneath(rootfd, "a//f", 0, &st), -EINVAL, "an empty component");
	is_err(pc_open_beneath(rootfd, "./a/f", 0, &st), -EINVAL, "a '.' component");
	is_err(pc_open_beneath(rootfd, "a/nosuch", 0, &st), -ENOENT, "missing is ENOENT");
	is_err(pc_open_beneath(rootfd, "a/f/x", 0, &st), -ENOTDIR, "a file on the way");
	is_err(pc_open_beneath(rootfd, "a", 0, &st), -EINVAL, "a directory is not a file");

	/* pc_path_beneath: what is there, O_PATH, a link at the end as itself */
	fd = pc_path_beneath(rootfd, "a", &st);
	ok(fd >= 0 && S_ISDIR(st.st_mode), "%s: path_beneath reaches a directory", how);
	if (fd >= 0)
		close(fd);
	fd = pc_path_beneath(rootfd, "dirlink", &st);
	ok(fd >= 0 && S_ISLNK(st.st_mode), "%s: path_beneath gives a link at the end as a link",
	   how);
	if (fd >= 0)
		close(fd);
	is_err(pc_path_beneath(rootfd, "dirlink/secret", &st), -ELOOP,
	       "path_beneath: a link on the way");

	/* FIFO and device: never opened (inotify sees every real open) */
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	snprintf(p, sizeof(p), "%s/fifo", root);
	inotify_add_watch(in, p, IN_OPEN);
	snprintf(p, sizeof(p), "%s/dev", root);
	inotify_add_watch(in, p, IN_OPEN);
	st.st_mode = 0;
	fd = pc_open_beneath(rootfd, "fifo", 0, &st);
	ok(fd == -EINVAL && S_ISFIFO(st.st_mode), "%s: a FIFO is refused, said to be one", how);
	if (pc_have_cap(CAP_MKNOD)) {
		st.st_mode = 0;
		fd = pc_open_beneath(rootfd, "dev", 0, &st);
		ok(fd == -EINVAL && S_ISCHR(st.st_mode), "%s: a device is refused, said to be one", how);
	} else {
		skip("needs CAP_MKNOD: making a device node", "device refused");
	}
	{
		char ev[4096];
		ssize_t n = read(in, ev, sizeof(ev));

		ok(n < 0 && errno == EAGAIN, "%s: the FIFO and the device were never opened", how);
		/* the watch works: a real open shows */
		int t = open(p, O_RDONLY | O_NONBLOCK);
		if (t >= 0)
			close(t);
		n = read(in, ev, sizeof(ev));
		ok(t < 0 || n > 0, "%s: (and inotify does see a real open)", how);
	}
	close(in);

	/* procfs and sysfs files are regular files, but reading them can act */
	{
		int slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

		is_err(pc_open_beneath(slash, "proc/version", 0, &st), -EREMOTEIO,
		       "a procfs file is not opened");
		if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0)
			is_err(pc_open_beneath(slash, "sys/kernel/mm/transparent_hugepage/enabled", 0, &st),
			       -EREMOTEIO, "nor a sysfs one");
		else
			skip("no /sys/kernel/mm/transparent_hugepage/enabled", "sysfs file refused");
		close(slash);
	}

	/* a magic link (/proc/self/root) is not followed either */
	{
		int pfd = open("/proc/self", O_PATH | O_DIRECTORY | O_CLOEXEC);

		fd = pc_open_beneath(pfd, "root/etc/hostname", 0, &st);
		ok(fd < 0, "%s: no way through a magic link (%d)", how, fd);
		if (fd >= 0)
			close(fd);
		close(pfd);
	}

	/* a directory swapped for a link to outside/, over and over */
	{
		pthread_t th;
		ino_t good = ino_of("%s/race/f", root);
		int opened = 0, escaped = 0;

		atomic_store(&stop, 0);
		pthread_create(&th, NULL, swapper, NULL);
		for (int i = 0; i < 20000; i++) {
			fd = pc_open_beneath(rootfd, "race/f", 0, &st);
			if (fd < 0)
				continue;
			opened++;
			if (st.st_ino != good)
				escaped++;
			close(fd);
		}
		atomic_store(&stop, 1);
		pthread_join(th, NULL);
		ok(escaped == 0, "%s: a directory swapped for a link: never outside (%d of %d opens)",
		   how, escaped, opened);
	}
}

/*
 * pc_path_trusted: a link is followed only where nobody else could have
 * made or changed it; a bounded walk; never a false FUSE.
 */
static void trusted(const char *d)
{
	char p[4096], want[1024];
	struct pc_trusted tr;
	struct stat st;
	int fd;

	snprintf(p, sizeof(p), "%s/t", d);
	mk("%s", p, 'd');
	snprintf(p, sizeof(p), "%s/t/f", d);
	mk("%s", p, 'f');
	snprintf(p, sizeof(p), "%s/t/l", d);
	(void)!symlink("f", p);
	snprintf(p, sizeof(p), "%s/t/open", d);
	mk("%s", p, 'd');
	chmod(p, 0777);		/* writable by all, not sticky */
	snprintf(p, sizeof(p), "%s/t/open/l", d);
	(void)!symlink("../f", p);

	fd = pc_path_trusted(d, PC_TRUSTED_NO_FUSE, &tr);
	ok(fd >= 0, "pc_path_trusted: the scratch directory (no false FUSE) (got %d)", fd);
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && tr.dirs_trusted) {
		snprintf(p, sizeof(p), "%s/t/l", d);
		fd = pc_path_trusted(p, PC_TRUSTED_FOLLOW_LAST | PC_TRUSTED_NO_FUSE, &tr);
		ok(fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode),
		   "pc_path_trusted: the caller's link in trusted directories is followed");
		if (fd >= 0)
			close(fd);
	} else {
		skip("the scratch directory is under one others may change", "a trusted link");
	}
	snprintf(p, sizeof(p), "%s/t/l", d);
	fd = pc_path_trusted(p, 0, &tr);
	ok(fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode),
	   "pc_path_trusted: the last link is not followed without FOLLOW_LAST");
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/t/open/l", d);
	snprintf(want, sizeof(want), "%s/t/open/l", d);
	fd = pc_path_trusted(p, PC_TRUSTED_FOLLOW_LAST, &tr);
	ok(fd == -EPERM && !strcmp(tr.link, want),
	   "pc_path_trusted: a link in a directory others may write is refused, named (got %d, '%s')",
	   fd, tr.link);
	if (fd >= 0)
		close(fd);
	snprintf(p, sizeof(p), "%s/t/", d);
	for (int i = 0; i < PC_TRUSTED_MAX_COMPONENTS; i++)
		strcat(p, "./");
	strcat(p, "f");
	fd = pc_path_trusted(p, 0, &tr);
	ok(fd == -ELOOP, "pc_path_trusted: more than %d components: -ELOOP (got %d)",
	   PC_TRUSTED_MAX_COMPONENTS, fd);
	if (fd >= 0)
		close(fd);
}

int main(void)
{
	const char *d = scratch_dir();
	char fmt[600], ofmt[600], p[600];

	snprintf(root, sizeof(root), "%s/root", d);
	snprintf(outside, sizeof(outside), "%s/outside", d);
	snprintf(fmt, sizeof(fmt), "%s/%%s", root);
	snprintf(ofmt, sizeof(ofmt), "%s/%%s", outside);
	mk("%s", root, 'd');
	mk("%s", outside, 'd');
	mk(ofmt, "secret", 'f');
	mk(ofmt, "f", 'f');
	mk(fmt, "a", 'd');
	mk(fmt, "a/f", 'f');
	mk(fmt, "race", 'd');
	mk(fmt, "race/f", 'f');
	mk(fmt, "fifo", 'p');
	snprintf(p, sizeof(p), "%s/a/lnk", root);
	(void)!symlink("../../outside/secret", p);
	snprintf(p, sizeof(p), "%s/dirlink", root);
	(void)!symlink(outside, p);
	snprintf(p, sizeof(p), "%s/inlink", root);
	(void)!symlink("a", p);
	snprintf(p, sizeof(p), "%s/race.link", root);
	(void)!symlink(outside, p);
	if (pc_have_cap(CAP_MKNOD)) {
		snprintf(p, sizeof(p), "%s/dev", root);
		if (mknod(p, S_IFCHR | 0644, makedev(1, 3)) < 0)
			perror(p);
	}
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	ok(rootfd >= 0, "root opens");

	cases("openat2");
	pc_sys_inject(PC_SYS_OPENAT2, ENOSYS, 0, 0);
	cases("component walk");
	pc_sys_inject_reset();

	close(rootfd);
	trusted(d);
	rm_scratch();
	return done_testing();
}
