/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * state.c: what a run of pagecache changes in the system, noted so that a
 * killed run can be undone by the next; the work directories root keeps
 * things in; exec hygiene for the programs a run starts. A state file is
 * held open and flock()ed for its run's life (forked children let go of
 * it): a run is alive exactly while its lock is held. Root must not be
 * steered by what other users can write: a work directory is used only
 * when it is the caller's own and nobody else can change it or the path to
 * it; a state file only when it is root's own; and a state file's lines
 * only when what they name looks like what a run makes.
 */
#define _GNU_SOURCE
#include "state.h"
#include "cli.h"
#include "pagecache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/swap.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif
#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif

void bench_exec_prep(void)
{
	struct sigaction cur;
	sigset_t none;

	/*
	 * What exec keeps: ignored signals and the mask (an ignored SIGPIPE
	 * would make `CMD | head` run on). Every one back to its default; the
	 * C library keeps 32 and 33 to itself and refuses to touch them, yet
	 * they can come ignored (make and prove do that): those go through the
	 * system call itself, whose SIG_DFL with no flags and no mask is all
	 * zeros, whatever its layout on the architecture.
	 */
	for (int sig = 1; sig < NSIG; sig++) {
		unsigned long dfl[8] = { 0 };

		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		if (sigaction(sig, NULL, &cur) < 0)
			syscall(SYS_rt_sigaction, sig, dfl, NULL, (size_t)8);
		else if (cur.sa_handler != SIG_DFL)
			signal(sig, SIG_DFL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * ---- work directories ----
 * Root creates, replaces and removes names in them, so nobody else may be
 * able to: the directory is the caller's, not writable by group or others,
 * and every directory above it is root's or the caller's and not writable by
 * others either unless sticky (/tmp, /var/tmp: there others cannot rename or
 * remove root's entries). Then the path to it is as safe as its fd, and so
 * are paths other programs (SQLite, mkfs, mount) are given.
 */
static int dir_fail(char *why, size_t wlen, int rc, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int dir_fail(char *why, size_t wlen, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (why && wlen)
		vsnprintf(why, wlen, fmt, ap);
	va_end(ap);
	return rc;
}

int bench_workdir_open(const char *dir, unsigned flags, char *ret_path, size_t plen, char *why,
		       size_t wlen)
{
	uid_t me = geteuid();
	struct stat st, root;
	char link[64], path[PATH_MAX];
	ssize_t n;
	int fd, up, rc = 0;

	if (why && wlen)
		why[0] = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && (flags & BENCH_WD_CREATE)) {
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return dir_fail(why, wlen, -errno, "cannot make it: %s", strerror(errno));
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		rc = -errno;
		if (rc == -ELOOP || rc == -ENOTDIR)
			return dir_fail(why, wlen, rc, "not a directory (a symbolic link is not followed)");
		return dir_fail(why, wlen, rc, "%s", strerror(-rc));
	}
	if (fstat(fd, &st) < 0 || stat("/", &root) < 0) {
		rc = -errno;
		close(fd);
		return dir_fail(why, wlen, rc, "%s", strerror(-rc));
	}
	if (flags & BENCH_WD_SHARED) {
		/* only a fresh directory is made in it: a sticky /var/tmp will do */
		if ((st.st_uid != 0 && st.st_uid != me) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))
			rc = dir_fail(why, wlen, -EPERM, "owned by uid %u, mode %04o: others could "
				      "replace what is made in it", (unsigned)st.st_uid,
				      (unsigned)(st.st_mode & 07777));
	} else if (st.st_uid != me) {
		rc = dir_fail(why, wlen, -EPERM, "owned by uid %u, not by uid %u: a work directory "
			      "must be the caller's own", (unsigned)st.st_uid, (unsigned)me);
	} else if (st.st_mode & 022) {
		rc = dir_fail(why, wlen, -EPERM, "mode %04o: a work directory must not be writable "
			      "by group or others", (unsigned)(st.st_mode & 07777));
	}
	/* every directory above it, by "..", not by a path that could change */
	up = rc < 0 ? -1 : dup(fd);
	while (up >= 0 && !(st.st_dev == root.st_dev && st.st_ino == root.st_ino)) {
		int next = openat(up, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (next < 0 || fstat(next, &st) < 0) {
			rc = dir_fail(why, wlen, -errno, "cannot check the directories above it: %s",
				      strerror(errno));
			if (next >= 0)
				close(next);
			break;
		}
		close(up);
		up = next;
		if ((st.st_uid != 0 && st.st_uid != me) ||
		    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
			snprintf(link, sizeof(link), "/proc/self/fd/%d", up);
			n = readlink(link, path, sizeof(path) - 1);
			path[n > 0 ? n : 0] = 0;
			rc = dir_fail(why, wlen, -EPERM, "'%s' above it is owned by uid %u, mode %04o: "
				      "others could move it", path, (unsigned)st.st_uid,
				      (unsigned)(st.st_mode & 07777));
			break;
		}
	}
	if (up >= 0)
		close(up);
	if (rc == 0 && ret_path) {
		snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
		n = readlink(link, ret_path, plen - 1);
		if (n <= 0 || (size_t)n >= plen - 1 || ret_path[0] != '/')
			rc = dir_fail(why, wlen, -ENAMETOOLONG, "cannot name it");
		else
			ret_path[n] = 0;
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

int bench_workdir_fresh(int parentfd, const char *prefix, char *ret_name, size_t nlen)
{
	for (int tries = 0; tries < 100; tries++) {
		static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
		unsigned char r[6];
		char suffix[7];
		struct stat st;
		int fd;

		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -EIO;
		for (int i = 0; i < 6; i++)
			suffix[i] = abc[r[i] % (sizeof(abc) - 1)];
		suffix[6] = 0;
		if ((size_t)snprintf(ret_name, nlen, "%s%s", prefix, suffix) >= nlen)
			return -ENAMETOOLONG;
		if (mkdirat(parentfd, ret_name, 0700) < 0) {
			if (errno == EEXIST)
				continue;
			return -errno;
		}
		fd = openat(parentfd, ret_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
			close(fd);
			return -EPERM;
		}
		return fd;
	}
	return -EEXIST;
}

int bench_file_create(int dirfd, const char *name, int flags, mode_t mode)
{
	int fd = openat(dirfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC,
			mode);

	return fd < 0 ? -errno : fd;
}

int bench_file_ours(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022) ||
	    st.st_nlink != 1)
		return -EPERM;
	return 0;
}

static struct bench_state *attached;

int bench_knob_set(struct bench_knob *k, const char *value)
{
	int rc;

	if (!k->saved) {
		char line[400];

		rc = pc_read_text(k->path, k->orig, sizeof(k->orig));
		if (rc < 0)
			return rc;
		k->saved = true;
		snprintf(line, sizeof(line), "%s %s", k->path, k->orig);
		bench_state_put(attached, "knob", line);
	}
	rc = pc_write_text(k->path, value);
	if (rc == 0)
		k->changed = true;
	return rc;
}

int bench_knob_restore(struct bench_knob *k)
{
	int rc = 0;

	if (k->changed) {
		rc = pc_write_text(k->path, k->orig);
		if (rc == 0)
			k->changed = false;
	}
	return rc;
}

/*
 * ---- surviving a kill -9 ----
 * An experiment that changes the system notes each change, as it makes
 * it, in /run/pagecache/KIND-PID.state ("knob PATH VALUE", "swap DEV",
 * "loop DEV", "zram ID", "file PATH", "cgroup DIR", "mount DIR", "fuse DIR", "dir DIR"). A clean exit removes
 * the file. The next run of that kind finds the files of dead processes
 * and undoes their lines in reverse order (a SIGKILL cannot be caught).
 */
#define STATE_DIR "/run/pagecache"

/* /run/pagecache (made 0700 if missing), used only if it is root's own */
static int state_dir_open(void)
{
	static bool said;
	char why[400];
	int fd = bench_workdir_open(STATE_DIR, BENCH_WD_CREATE, NULL, 0, why, sizeof(why));

	if (fd < 0 && !said && geteuid() == 0) {	/* others cannot use it anyway */
		said = true;
		cli_warn("not using '%s': %s", STATE_DIR, why);
	}
	return fd;
}

/*
 * The file stays open and flock()ed for the whole run: "dead" is exactly
 * "its lock can be taken", whatever the pid now belongs to. It is made
 * under a name no run looks at (.KIND-PID.new, O_EXCL), locked, and only
 * then renamed into place: no other run ever sees it unlocked.
 */
int bench_state_open(struct bench_state *st, const char *kind)
{
	char name[96], tmp[100];
	int dfd, fd, rc = 0;

	st->fd = -1;
	st->path[0] = 0;
	dfd = state_dir_open();
	if (dfd < 0)
		return dfd;
	/* a file with our pid is a dead predecessor's: recover it first */
	bench_state_recover(kind, NULL);
	snprintf(name, sizeof(name), "%s-%d.state", kind, getpid());
	snprintf(tmp, sizeof(tmp), ".%s-%d.new", kind, getpid());
	unlinkat(dfd, tmp, 0);		/* only a killed run with our pid made it */
	fd = bench_file_create(dfd, tmp, O_WRONLY | O_APPEND, 0600);
	if (fd < 0)
		rc = fd;
	else if (flock(fd, LOCK_EX | LOCK_NB) < 0 || renameat(dfd, tmp, dfd, name) < 0)
		rc = -errno;
	if (rc < 0) {
		if (fd >= 0) {
			unlinkat(dfd, tmp, 0);
			close(fd);
		}
		close(dfd);
		return rc;
	}
	close(dfd);
	snprintf(st->path, sizeof(st->path), STATE_DIR "/%s", name);
	st->fd = fd;
	attached = st;
	return 0;
}

int bench_state_put(struct bench_state *st, const char *key, const char *value)
{
	char line[700];
	int n;

	if (!st || !st->path[0])
		return 0;
	n = snprintf(line, sizeof(line), "%s %s\n", key, value);
	if (write(st->fd, line, (size_t)n) != n)
		return -EIO;
	fdatasync(st->fd);
	return 0;
}

void bench_state_child(struct bench_state *st)
{
	if (st->path[0])
		close(st->fd);	/* a forked child must not hold the run's lock */
	st->path[0] = 0;
	st->fd = -1;
	attached = NULL;
}

int bench_state_reset(struct bench_state *st)
{
	if (!st->path[0])
		return 0;
	return ftruncate(st->fd, 0) < 0 ? -errno : 0;
}

void bench_state_close(struct bench_state *st)
{
	if (!st->path[0])
		return;		/* never opened (a zeroed struct: fd 0 is not ours) */
	unlink(st->path);
	st->path[0] = 0;
	close(st->fd);		/* the lock goes with it */
	st->fd = -1;
	if (attached == st)
		attached = NULL;
}

/*
 * ---- is a recorded line ours? ----
 * A state file is root's, in a root-only directory; still, what its lines
 * name is undone only when it looks like what a run makes: the knobs the
 * benches set, cgroups and directories by their names, devices that carry
 * our swap label or back onto ours. Anything else is left alone.
 */

/* 1..max characters of [A-Za-z0-9_.-], not "." or ".." */
static bool plain_word(const char *s, size_t max)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");

	return n > 0 && n <= max && !s[n] && strcmp(s, ".") && strcmp(s, "..");
}

static bool all_digits(const char *s, size_t max)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && n <= max && !s[n];
}

/* An absolute path without ".", ".." or empty components */
static bool plain_path(const char *p)
{
	char buf[PATH_MAX];

	if (p[0] != '/' || strlen(p) >= sizeof(buf))
		return false;
	strcpy(buf, p + 1);
	for (char *save = NULL, *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save))
		if (!strcmp(c, ".") || !strcmp(c, ".."))
			return false;
	return !strstr(p, "//") && p[strlen(p) - 1] != '/';
}

/* "PREFIX" + digits: the digits, or -1 */
static long dev_number(const char *path, const char *prefix)
{
	size_t l = strlen(prefix);

	return !strncmp(path, prefix, l) && all_digits(path + l, 6) ? atol(path + l) : -1;
}

#define SWAP_LABEL "pc-swapin"		/* mkswap -L, by bench swapin */

/* A block device whose swap signature carries our label? */
static bool our_swap_label(const char *dev)
{
	long pg = sysconf(_SC_PAGESIZE);
	char label[17] = "", magic[10];
	struct stat st;
	bool ours = false;
	int fd = open(dev, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode) && pg > 1100 &&
	    pread(fd, magic, sizeof(magic), pg - 10) == (ssize_t)sizeof(magic) &&
	    !memcmp(magic, "SWAPSPACE2", 10) && pread(fd, label, 16, 1052) == 16)
		ours = !strcmp(label, SWAP_LABEL);
	close(fd);
	return ours;
}

/* Our swap image: DIR/pagecache-swapin-*\/swap.img */
static bool swap_image_path(const char *p)
{
	const char *base = strrchr(p, '/'), *dir;
	char name[256];

	if (!plain_path(p) || !base || strcmp(base, "/swap.img") || base == p)
		return false;
	for (dir = base - 1; dir > p && *dir != '/'; dir--)
		;
	if ((size_t)(base - dir) > sizeof(name))
		return false;
	snprintf(name, sizeof(name), "%.*s", (int)(base - dir - 1), dir + 1);
	return !strncmp(name, SWAP_DIR_PREFIX, strlen(SWAP_DIR_PREFIX)) && plain_word(name, 255);
}

/* The slow device's mount point: DIR/pagecache-swapin-*\/mnt, in a directory of ours */
static bool our_dir(const char *p);
static bool slow_mnt_path(const char *p)
{
	char dir[PATH_MAX];
	size_t l = strlen(p);

	if (!plain_path(p) || l < 5 || l >= sizeof(dir) || strcmp(p + l - 4, "/mnt"))
		return false;
	snprintf(dir, sizeof(dir), "%.*s", (int)(l - 4), p);
	return our_dir(dir);
}

/* The slow device's file: DIR/pagecache-swapin-*\/mnt/swap.img */
static bool slow_image_path(const char *p)
{
	char mnt[PATH_MAX];
	size_t l = strlen(p);

	if (l < 14 || l >= sizeof(mnt) || strcmp(p + l - 9, "/swap.img"))
		return false;
	snprintf(mnt, sizeof(mnt), "%.*s", (int)(l - 9), p);
	return slow_mnt_path(mnt);
}

/* A loop device backed by our image (a file's or the slow device's) or by a zram device (zram-loop)? */
static int loop_backing_ours(long n)
{
	char p[96], back[PATH_MAX];
	size_t l;

	snprintf(p, sizeof(p), "/sys/block/loop%ld/loop/backing_file", n);
	if (pc_read_text(p, back, sizeof(back)) < 0)
		return -ENOENT;		/* not bound: nothing to undo */
	l = strlen(back);
	if (l > 10 && !strcmp(back + l - 10, " (deleted)"))
		back[l - 10] = 0;
	return dev_number(back, "/dev/zram") >= 0 || swap_image_path(back) || slow_image_path(back)
	       ? 1 : 0;
}

/* A readtwice directory: /var/tmp/pagecache-readtwice-PID[.XXXXXX][/mnt] */
static bool readtwice_path(const char *p, bool mnt_too)
{
	static const char pre[] = READTWICE_TOP_PREFIX;
	const char *s = p + sizeof(pre) - 1;
	size_t n;

	if (strncmp(p, pre, sizeof(pre) - 1))
		return false;
	n = strspn(s, "0123456789");
	if (!n)
		return false;
	s += n;
	if (*s == '.')
		s += 1 + strspn(s + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
	return !*s || (mnt_too && !strcmp(s, "/mnt"));
}

/* A directory we made (0700, ours): readtwice's, or swapin's for its image */
static bool our_dir(const char *p)
{
	const char *base = strrchr(p, '/');
	struct stat st;

	if (!plain_path(p) || !base)
		return false;
	if (!readtwice_path(p, false) &&
	    (strncmp(base + 1, SWAP_DIR_PREFIX, strlen(SWAP_DIR_PREFIX)) || !plain_word(base + 1, 200)))
		return false;
	return lstat(p, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       !(st.st_mode & 077);
}

static bool cgroup_ours(const char *dir)
{
	static const char *const names[] = { "pc-readtwice-", "pc-swapin-", "pagecache-run-" };
	const char *base = strrchr(dir, '/');
	struct statfs sf;
	struct stat st;
	bool named = false;

	if (!plain_path(dir) || strncmp(dir, "/sys/fs/cgroup/", 15) || !base || !plain_word(base + 1, 200))
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		named |= !strncmp(base + 1, names[i], strlen(names[i]));
	return named && lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && statfs(dir, &sf) == 0 &&
	       (sf.f_type == CGROUP2_SUPER_MAGIC || sf.f_type == CGROUP_SUPER_MAGIC);
}

static bool knob_ours(const char *path, const char *value)
{
	static const char *const knobs[] = { "/proc/sys/vm/page-cluster",
					     "/sys/kernel/mm/swap/vma_ra_enabled",
					     "/sys/module/zswap/parameters/enabled" };
	unsigned n;
	int end = 0;

	if (!plain_word(value, 16))
		return false;
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (!strcmp(path, knobs[i]))
			return true;
	return sscanf(path, "/sys/block/loop%u/queue/rotational%n", &n, &end) == 1 && end > 0 &&
	       !path[end];
}

/* A zram device with nothing of anyone's on it: empty, or our swap */
static bool zram_ours(const char *id)
{
	char p[96], v[32];

	if (!all_digits(id, 6))
		return false;
	snprintf(p, sizeof(p), "/sys/block/zram%s/disksize", id);
	if (pc_read_text(p, v, sizeof(v)) < 0)
		return true;		/* gone: nothing to undo */
	snprintf(p, sizeof(p), "/dev/zram%s", id);
	return !strcmp(v, "0") || our_swap_label(p);
}

/* Undo one recorded change; 0 when done (or nothing left to do), -EPERM: not ours. */
static int undo_line(const char *key, char *val)
{
	if (!strcmp(key, "knob")) {
		char *sp = strchr(val, ' ');

		if (!sp)
			return -EINVAL;
		*sp = 0;
		if (!knob_ours(val, sp + 1)) {
			*sp = ' ';
			return -EPERM;
		}
		return pc_write_text(val, sp + 1);
	}
	if (!strcmp(key, "cgroup")) {
		if (!cgroup_ours(val)) {
			struct stat st;

			return lstat(val, &st) < 0 && errno == ENOENT ? 0 : -EPERM;
		}
		/*
		 * The workload may outlive us: what is left in it is killed, a
		 * lowered v1 limit lifted, its page cache dropped (a killed
		 * `run --no-cache` leaves nothing cached), then rmdir.
		 */
		return pc_cgroup_remove(val);
	}
	if (!strcmp(key, "swap")) {
		if ((dev_number(val, "/dev/zram") < 0 && dev_number(val, "/dev/loop") < 0) ||
		    !our_swap_label(val))
			return access(val, F_OK) < 0 && errno == ENOENT ? 0 : -EPERM;
		return swapoff(val) == 0 || errno == EINVAL || errno == ENOENT ? 0 : -errno;
	}
	if (!strcmp(key, "loop")) {
		long n = dev_number(val, "/dev/loop");
		int fd, ours = n < 0 ? 0 : loop_backing_ours(n);

		if (ours == -ENOENT)
			return 0;
		if (ours <= 0)
			return -EPERM;
		fd = open(val, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return errno == ENOENT ? 0 : -errno;
		ioctl(fd, LOOP_CLR_FD, 0);
		close(fd);
		return 0;
	}
	if (!strcmp(key, "zram") || !strcmp(key, "zram-borrowed")) {
		char p[96], *alg = strchr(val, ' ');	/* borrowed: "ID ALGORITHM" */
		int rc;

		if (alg)
			*alg++ = 0;
		if (!zram_ours(val) || (alg && *alg && !plain_word(alg, 31))) {
			if (alg)
				alg[-1] = ' ';
			return -EPERM;
		}
		snprintf(p, sizeof(p), "/sys/block/zram%s/reset", val);
		for (int i = 0; i < 50 && (rc = pc_write_text(p, "1")) == -EBUSY; i++)
			usleep(20000);
		if (!strcmp(key, "zram")) {
			rc = pc_write_text("/sys/class/zram-control/hot_remove", val);
		} else if (rc == 0 && alg && *alg) {
			snprintf(p, sizeof(p), "/sys/block/zram%s/comp_algorithm", val);
			pc_write_text(p, alg);	/* its compressor as found */
		}
		return rc == -ENOENT ? 0 : rc;
	}
	if (!strcmp(key, "file")) {
		char dir[PATH_MAX];
		int dfd, rc;

		if (!swap_image_path(val))
			return -EPERM;
		snprintf(dir, sizeof(dir), "%s", val);
		*strrchr(dir, '/') = 0;
		if (!our_dir(dir))
			return access(dir, F_OK) < 0 && errno == ENOENT ? 0 : -EPERM;
		dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0)
			return errno == ENOENT ? 0 : -errno;
		rc = bench_file_ours(dfd, "swap.img");
		if (rc == 0)
			rc = unlinkat(dfd, "swap.img", 0) == 0 ? 0 : -errno;
		close(dfd);
		return rc == -ENOENT ? 0 : rc;
	}
	if (!strcmp(key, "mount")) {	/* a loop mount's device goes with it (autoclear) */
		if (!plain_path(val) || !readtwice_path(val, true))
			return -EPERM;
		return umount2(val, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 || errno == EINVAL ||
		       errno == ENOENT ? 0 : -errno;
	}
	if (!strcmp(key, "fuse")) {
		/*
		 * The slow device (bench swapin): detached, its daemon's session
		 * ends once the loop device has let go (undone before this), and
		 * the daemon with it; then the empty mount point goes.
		 */
		if (!slow_mnt_path(val))
			return -EPERM;
		if (umount2(val, MNT_DETACH | UMOUNT_NOFOLLOW) < 0 && errno != EINVAL && errno != ENOENT)
			return -errno;
		return rmdir(val) == 0 || errno == ENOENT ? 0 : -errno;
	}
	if (!strcmp(key, "dir")) {
		if (!our_dir(val))
			return access(val, F_OK) < 0 && errno == ENOENT ? 0 : -EPERM;
		return rmdir(val) == 0 || errno == ENOENT ? 0 : -errno;
	}
	return -EPERM;
}

/* "KIND-PID.state": the pid, or -1 */
static long state_name_pid(const char *name, const char *kind)
{
	size_t klen = strlen(kind);
	const char *p = name + klen + 1;
	size_t n;

	if (strncmp(name, kind, klen) || name[klen] != '-')
		return -1;
	n = strspn(p, "0123456789");
	return n && n < 10 && !strcmp(p + n, ".state") ? atol(p) : -1;
}

int bench_state_recover(const char *kind, long *ret_live)
{
	int dfd = state_dir_open(), recovered = 0;
	struct dirent *e;
	DIR *d;

	if (dfd < 0)
		return 0;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((e = readdir(d))) {
		char path[300], *text, **lines = NULL;
		int n = 0, failed = 0, fd;
		long pid = state_name_pid(e->d_name, kind);
		struct stat st;
		ssize_t got;

		if (pid < 0)
			continue;
		snprintf(path, sizeof(path), STATE_DIR "/%s", e->d_name);
		if (attached && !strcmp(path, attached->path))
			continue;	/* our own, held now */
		fd = openat(dfd, e->d_name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && errno != ENOENT)
			cli_warn("ignoring state file '%s': %s", path,
				errno == ELOOP ? "a symbolic link" : strerror(errno));
		if (fd < 0)
			continue;
		/* root's own regular file, that nobody else could have written */
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
		    (st.st_mode & 022) || st.st_nlink != 1) {
			cli_warn("ignoring state file '%s': not a regular file of "
				"uid %u that only it can write", path, (unsigned)geteuid());
			close(fd);
			continue;
		}
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {	/* its run holds it: alive */
			if (ret_live)
				*ret_live = pid;
			close(fd);
			continue;
		}
		text = malloc(1 << 20);
		got = text ? read(fd, text, (1 << 20) - 1) : -1;
		if (got < 0) {
			free(text);
			close(fd);
			continue;
		}
		text[got] = 0;
		for (char *save = NULL, *l = strtok_r(text, "\n", &save); l;
		     l = strtok_r(NULL, "\n", &save)) {
			char **nl = realloc(lines, (size_t)(n + 1) * sizeof(*lines));

			if (!nl)
				break;
			lines = nl;
			lines[n++] = l;
		}
		for (int i = n - 1; i >= 0; i--) {	/* newest first */
			char *sp = strchr(lines[i], ' ');
			int rc;

			if (!sp)
				continue;
			*sp = 0;
			rc = undo_line(lines[i], sp + 1);
			if (rc == -EPERM)	/* not ours: left alone, and not retried */
				cli_warn("ignoring '%s %s' in '%s': not something a "
					"run of pagecache makes", lines[i], sp + 1, path);
			else if (rc < 0)
				failed++;
		}
		if (!failed)
			unlinkat(dfd, e->d_name, 0);
		close(fd);
		free(lines);
		free(text);
		recovered++;
		cli_warn("undid what a killed run (pid %ld) left behind%s", pid,
			failed ? " (some of it failed: see " STATE_DIR ")" : "");
	}
	closedir(d);
	return recovered;
}

int bench_rotational(const char *path)
{
	struct stat st;
	char p[128], v[16];
	dev_t d;

	if (stat(path, &st) < 0)
		return -1;
	d = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;	/* a device, or a file's disk */
	snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/queue/rotational", major(d), minor(d));
	if (pc_read_text(p, v, sizeof(v)) < 0) {	/* a partition: its disk's queue */
		snprintf(p, sizeof(p), "/sys/dev/block/%u:%u/../queue/rotational", major(d), minor(d));
		if (pc_read_text(p, v, sizeof(v)) < 0)
			return -1;
	}
	return v[0] == '1';
}
