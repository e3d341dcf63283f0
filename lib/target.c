/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * target.c: processes and memory cgroups -> the files they use, for any
 * client (pagecache's --pid and --cgroup): what a process maps
 * (/proc/PID/maps, map_files) and what it holds open to read or write
 * (/proc/PID/fd), with its children's; every process's of a cgroup and of
 * the cgroups below it.
 *
 * /proc/PID/maps is hostile input: a name is up to PATH_MAX bytes and
 * chosen by the process, so each line is read whole and taken only as a
 * well-formed record (pc_map_parse). /proc/PID is opened once: should the
 * process exit and its PID be reused, what follows fails instead of
 * reading another process. Nothing a process names is opened for reading
 * here: each file is pinned with O_PATH (which opens no device, FIFO or
 * socket), kept only if regular and not of procfs, sysfs or their kin,
 * and handed to the caller, who reads it through that pin with its own
 * permissions. A file is pinned only where the kernel lets us have the
 * process's own file (map_files, pidfd_getfd: CAP_SYS_ADMIN, ptrace
 * rights), or by a name that leads to that very (dev, ino), or, for an
 * fd, where fdinfo says the process opened it to read or write: an O_PATH
 * fd of /etc/shadow held by a process does not make it that process's
 * file to read.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TARGET_DEPTH 64		/* --children: generations followed down */

struct pc_target_id {
	dev_t dev;
	ino_t ino;
};

/* Was (dev, ino) taken by the caller already? Few: a linear look is fine. */
static bool taken(const struct pc_target *t, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < t->ntaken; i++)
		if (t->taken[i].dev == dev && t->taken[i].ino == ino)
			return true;
	return false;
}

static void fail(struct pc_target *t, enum pc_target_fail_kind kind, pid_t pid,
		 const char *subject, int err)
{
	struct pc_target_fail f = { kind, pid, subject, err };

	if (t->fail)
		t->fail(&f, t->arg);
}

static bool same_file(const char *p, dev_t dev, ino_t ino)
{
	struct stat st;

	return stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* A symlink's target, whatever its length; NULL if unreadable. */
static char *readlink_alloc(int dirfd, const char *name)
{
	for (size_t cap = 256; cap <= 65536; cap *= 2) {
		char *b = malloc(cap);
		ssize_t n;

		if (!b)
			return NULL;
		n = readlinkat(dirfd, name, b, cap);
		if (n >= 0 && (size_t)n < cap) {
			b[n] = 0;
			return b;
		}
		free(b);
		if (n < 0)
			return NULL;
	}
	return NULL;
}

/* "x (deleted)": how the kernel names a file that is gone */
static bool deleted(const char *name)
{
	size_t n = strlen(name);

	return n >= 10 && !strcmp(name + n - 10, " (deleted)");
}

/*
 * Which name to show for the pinned file st: the process's name for it if
 * that reaches the very file (dev, ino) from here; else through the
 * process's root (a container, a chroot); else the magic link (`link`:
 * /proc/PID/map_files/A-B or /proc/PID/fd/N). Files of special
 * filesystems and deleted files are left out: NULL.
 */
static char *show_name(pid_t pid, const char *name, const struct stat *st, const char *link)
{
	char *p = NULL;

	if (name[0] != '/' || !strncmp(name, "/dev/", 5) || !strncmp(name, "/proc/", 6) ||
	    !strncmp(name, "/sys/", 5) || !strncmp(name, "/memfd:", 7))
		return NULL;
	if (same_file(name, st->st_dev, st->st_ino))
		return strdup(name);
	if (asprintf(&p, "/proc/%d/root%s", (int)pid, name) < 0)
		return NULL;
	if (same_file(p, st->st_dev, st->st_ino))
		return p;
	free(p);
	return deleted(name) ? NULL : strdup(link);
}

/*
 * Offer pinned file fd (O_PATH) of process pid to the caller if it is a
 * regular file not taken already; name: the process's name for it (as is,
 * deleted or not, with t->every). Takes fd: the caller's if it says so,
 * else closed.
 */
static void offer(struct pc_target *t, pid_t pid, int fd, const char *name, const char *link)
{
	struct pc_target_file f = { pid, fd, NULL, NULL };
	struct stat st;
	char *show;

	/* files of procfs, sysfs and kin are interfaces, not page cache */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || taken(t, st.st_dev, st.st_ino) ||
	    pc_fd_kernel_fs(fd) ||
	    !(show = t->every ? strdup(name) : show_name(pid, name, &st, link))) {
		close(fd);
		return;
	}
	if (t->ntaken == t->cap) {	/* room first: a file taken is never offered again */
		size_t nc = t->cap ? t->cap * 2 : 64;
		struct pc_target_id *n = realloc(t->taken, nc * sizeof(*n));

		if (!n) {
			free(show);
			close(fd);
			return;
		}
		t->taken = n;
		t->cap = nc;
	}
	f.st = &st;
	f.name = show;
	if (t->file(&f, t->arg) > 0)
		t->taken[t->ntaken++] = (struct pc_target_id){ st.st_dev, st.st_ino };
	else
		close(fd);
	free(show);
}

/*
 * Pin the file of one mapping. Through map_files (the mapping itself, no
 * name parsed; following those links needs CAP_SYS_ADMIN); else by the
 * name, as the process sees it or through its root, kept only if it is
 * the very file the record names (dev, ino).
 */
static void add_mapping(struct pc_target *t, pid_t pid, int procfd, const struct pc_map *m)
{
	char rel[64], link[96], *name, *alt = NULL;
	int fd;

	snprintf(rel, sizeof(rel), "map_files/%llx-%llx", (unsigned long long)m->start,
		 (unsigned long long)m->end);
	snprintf(link, sizeof(link), "/proc/%d/%s", (int)pid, rel);
	/* the link's text has no \012 for a newline, unlike maps */
	name = readlink_alloc(procfd, rel);
	if (!name && !(name = strdup(m->name)))
		return;
	fd = openat(procfd, rel, O_PATH | O_CLOEXEC);
	if (fd < 0 && (errno == EPERM || errno == EACCES) && name[0] == '/') {
		struct stat st;

		fd = open(name, O_PATH | O_CLOEXEC);
		if (fd < 0 && asprintf(&alt, "/proc/%d/root%s", (int)pid, name) >= 0)
			fd = open(alt, O_PATH | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_dev != m->dev ||
				(uint64_t)st.st_ino != m->ino)) {
			close(fd);	/* not the file the process maps */
			fd = -1;
		}
	}
	if (fd >= 0)
		offer(t, pid, fd, name, link);
	else if (errno == EMFILE || errno == ENFILE)
		fail(t, PC_TARGET_KEEP, pid, name, errno);
	free(alt);
	free(name);
}

/*
 * Was the process's fd N opened to read or write (not O_PATH)? fdinfo
 * says: 1 yes, 0 no (or gone), -errno when it could not be asked. With
 * ret_ino, also the inode it names now.
 */
static int fd_opened_for_io(int procfd, const char *n, unsigned long long *ret_ino)
{
	char rel[300], buf[512], *fl, *ino;
	ssize_t got;
	int fd;

	snprintf(rel, sizeof(rel), "fdinfo/%s", n);
	fd = openat(procfd, rel, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? -errno : 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = 0;
	fl = strstr(buf, "flags:");
	ino = strstr(buf, "\nino:");
	if (ret_ino)
		*ret_ino = ino ? strtoull(ino + 5, NULL, 10) : 0;
	return fl && !(strtoul(fl + 6, NULL, 8) & O_PATH);
}

/*
 * Pin the file the process holds as fd N, only if it opened it to read
 * or write: an O_PATH fd needs only search permission on the way, and
 * holding one of /etc/shadow does not make it the process's file to warm,
 * evict or lock. pidfd_getfd (5.6; needs ptrace rights over the process)
 * takes its very file description, whose flags then say, with no window.
 * Where that is refused: fdinfo says a read or write open, the magic link
 * is pinned (O_PATH), and fdinfo must say so again, of the pinned inode,
 * so a dup2 of an O_PATH fd onto N in between is caught. Returns the pin,
 * -1 to skip, or -errno (EMFILE, ENFILE: to be said).
 */
static int pin_fd(int pidfd, int procfd, int fddir, const char *n)
{
	unsigned long long ino = 0;
	struct stat st;
	int fd = -1, rc;

	if (pidfd >= 0)
		fd = (int)syscall(__NR_pidfd_getfd, pidfd, atoi(n), 0);
	if (fd >= 0) {
		int fl = fcntl(fd, F_GETFL);

		if (fl < 0 || (fl & O_PATH)) {
			close(fd);
			return -1;
		}
		return fd;
	}
	if (errno == EMFILE || errno == ENFILE)
		return -errno;
	rc = fd_opened_for_io(procfd, n, NULL);
	if (rc <= 0)
		return rc < 0 ? rc : -1;
	fd = openat(fddir, n, O_PATH | O_CLOEXEC);	/* the magic link: that very file */
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? -errno : -1;
	if (fd_opened_for_io(procfd, n, &ino) <= 0 || fstat(fd, &st) < 0 ||
	    (unsigned long long)st.st_ino != ino) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The files of the process's maps; maps: open on /proc/PID/maps (closed here). */
static void add_maps(struct pc_target *t, pid_t pid, int procfd, FILE *maps)
{
	char *line = NULL;
	size_t cap = 0;

	while (getline(&line, &cap, maps) > 0) {
		struct pc_map m;

		if (pc_map_parse(line, &m) < 0 || !m.ino || !*m.name)
			continue;	/* anonymous, or not a record */
		if (taken(t, m.dev, (ino_t)m.ino))
			continue;	/* another mapping of a file taken */
		add_mapping(t, pid, procfd, &m);
	}
	free(line);
	fclose(maps);
}

/* The files the process holds open to read or write (see pin_fd). */
static void add_fds(struct pc_target *t, pid_t pid, int procfd)
{
	int fd = openat(procfd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC), pidfd;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d && fd >= 0)
		close(fd);
	if (!d)
		return;
	/* a pidfd of that same process: still alive through procfd after it */
	pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (pidfd >= 0 && faccessat(procfd, "fd", F_OK, 0) < 0) {
		close(pidfd);
		pidfd = -1;
	}
	while ((de = readdir(d))) {
		char link[300], *name;
		int pin;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(link, sizeof(link), "/proc/%d/fd/%s", (int)pid, de->d_name);
		pin = pin_fd(pidfd, procfd, dirfd(d), de->d_name);
		if (pin == -1)
			continue;
		if (pin < 0) {
			if (pin == -EMFILE || pin == -ENFILE)
				fail(t, PC_TARGET_KEEP, pid, link, -pin);
			continue;
		}
		name = readlink_alloc(dirfd(d), de->d_name);
		if (name)
			offer(t, pid, pin, name, link);
		else
			close(pin);
		free(name);
	}
	closedir(d);
	if (pidfd >= 0)
		close(pidfd);
}

static int add_pid(struct pc_target *t, pid_t pid, bool children, int depth);

/* The children of every thread of the process, and theirs. */
static void add_children(struct pc_target *t, int procfd, int depth)
{
	int fd = openat(procfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d && fd >= 0)
		close(fd);
	while (d && (de = readdir(d))) {
		char cpath[300];
		FILE *cf;
		int child, cfd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "%s/children", de->d_name);
		cfd = openat(dirfd(d), cpath, O_RDONLY | O_CLOEXEC);
		cf = cfd >= 0 ? fdopen(cfd, "r") : NULL;
		if (!cf && cfd >= 0)
			close(cfd);
		while (cf && fscanf(cf, "%d", &child) == 1)
			add_pid(t, child, true, depth + 1);
		if (cf)
			fclose(cf);
	}
	if (d)
		closedir(d);
}

static int add_pid(struct pc_target *t, pid_t pid, bool children, int depth)
{
	char path[64];
	int procfd, fd;
	FILE *f = NULL;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = procfd >= 0 ? openat(procfd, "maps", O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 || !(f = fdopen(fd, "r"))) {
		int err = errno;

		fail(t, PC_TARGET_PROCESS, pid, NULL, err);
		if (fd >= 0)
			close(fd);
		if (procfd >= 0)
			close(procfd);
		return -err;
	}
	add_maps(t, pid, procfd, f);
	add_fds(t, pid, procfd);
	if (children && depth <= TARGET_DEPTH)
		add_children(t, procfd, depth);
	close(procfd);
	return 0;
}

int pc_target_pid(struct pc_target *t, pid_t pid)
{
	return add_pid(t, pid, t->children, 0);
}

/* The processes of one memory cgroup the walk comes to (their children are theirs). */
static int add_cgroup_procs(const struct pc_cgroup_entry *e, void *arg)
{
	struct pc_target *t = arg;
	FILE *f;
	int fd, pid;

	if (e->depth && e->name[0] == '.')
		return PC_CGROUP_WALK_SKIP;
	fd = openat(e->fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		int err = errno;

		if (fd >= 0)
			close(fd);
		return e->depth ? PC_CGROUP_WALK_SKIP : -err;	/* below: gone meanwhile */
	}
	while (fscanf(f, "%d", &pid) == 1)
		add_pid(t, pid, false, 0);
	fclose(f);
	return 0;
}

int pc_target_cgroup(struct pc_target *t, const char *dir)
{
	return pc_cgroup_walk(dir, add_cgroup_procs, t);
}

void pc_target_release(struct pc_target *t)
{
	free(t->taken);
	t->taken = NULL;
	t->ntaken = t->cap = 0;
}
