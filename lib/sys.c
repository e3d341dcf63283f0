/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sys.c: thin wrappers over the system calls the rest of the library uses.
 *
 * This is the one seam between libpagecache and the kernel. Every wrapper
 * returns 0 (or a count) or -errno, retries EINTR, and can be told to fail
 * on purpose (pc_sys_inject) so the tests exercise EPERM, EIO, ENOMEM and
 * the kernel's silent short readahead without a broken kernel at hand.
 * Its declarations are lib/sys.h, not pagecache.h: libpagecache.so keeps
 * the seam hidden (built once more with PC_SYS_NOFAULT for a pagecache
 * linked against it: see below).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <linux/openat2.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

#ifndef PC_SYS_NOFAULT
struct inject {
	atomic_int err;			/* 0: off; -1: short (readahead) */
	atomic_uint after;		/* calls to let through first */
	atomic_uint times;		/* failures left; 0 = forever */
	atomic_uint seen;
};

static struct inject injects[PC_SYS_NCALLS];
static atomic_int inject_any;

void pc_sys_inject(enum pc_sys_call call, int err, unsigned after, unsigned times)
{
	if (call >= PC_SYS_NCALLS)
		return;
	atomic_store(&injects[call].after, after);
	atomic_store(&injects[call].times, times);
	atomic_store(&injects[call].seen, 0);
	atomic_store(&injects[call].err, err);
	atomic_store(&inject_any, 1);
}

void pc_sys_inject_reset(void)
{
	for (int i = 0; i < PC_SYS_NCALLS; i++)
		atomic_store(&injects[i].err, 0);
	atomic_store(&inject_any, 0);
}

/* 0: let the call through; else the injected error (-1 means "short"). */
int pc_sys_injected(enum pc_sys_call call)
{
	struct inject *in = &injects[call];
	int err;

	if (!atomic_load_explicit(&inject_any, memory_order_relaxed))
		return 0;
	err = atomic_load(&in->err);
	if (!err)
		return 0;
	if (atomic_fetch_add(&in->seen, 1) < atomic_load(&in->after))
		return 0;
	if (atomic_load(&in->times)) {
		unsigned t = atomic_fetch_sub(&in->times, 1);
		if (t == 1)
			atomic_store(&in->err, 0);
		if (t == 0)
			return 0;
	}
	return err;
}

static const struct {
	const char *name;
	enum pc_sys_call call;
} call_names[] = {
	{ "cachestat", PC_SYS_CACHESTAT }, { "mincore", PC_SYS_MINCORE },
	{ "readahead", PC_SYS_READAHEAD }, { "fadvise", PC_SYS_FADVISE },
	{ "pread", PC_SYS_PREAD },	   { "mmap", PC_SYS_MMAP },
	{ "mlock", PC_SYS_MLOCK },	   { "open", PC_SYS_OPEN },
	{ "uring", PC_SYS_URING },	   { "openat2", PC_SYS_OPENAT2 },
	{ "read", PC_SYS_READ },	   { "write", PC_SYS_WRITE },
	{ "fsync", PC_SYS_FSYNC },	   { "rename", PC_SYS_RENAME },
	{ "sync_file_range", PC_SYS_SYNC_RANGE },
	{ "inotify_add_watch", PC_SYS_INOTIFY_WATCH },
	{ "open_by_handle_at", PC_SYS_OPEN_HANDLE },
	{ "fstat", PC_SYS_FSTAT },	   { "uring_enter", PC_SYS_URING_ENTER },
	{ "uring_cached", PC_SYS_URING_CACHED },
	{ "filemap_get_pages", PC_SYS_TRACE_USE },
	{ "perf_format_lost", PC_SYS_PERF_LOST },
	{ "statx_mnt_id_unique", PC_SYS_STATX_MNT_UNIQUE },
	{ "systemd", PC_SYS_SYSTEMD },
	{ "bdev_open", PC_SYS_BDEV_OPEN },
};

static const struct {
	const char *name;
	int err;
} err_names[] = {
	{ "EPERM", EPERM },   { "EIO", EIO },	    { "ENOMEM", ENOMEM },
	{ "EINTR", EINTR },   { "ENOSYS", ENOSYS }, { "EACCES", EACCES },
	{ "EAGAIN", EAGAIN }, { "EINVAL", EINVAL }, { "short", -1 },
	{ "EXDEV", EXDEV },   { "ELOOP", ELOOP },   { "ENOSPC", ENOSPC },
	{ "ESTALE", ESTALE },  { "ENOENT", ENOENT },
};

int pc_sys_inject_env(const char *spec)
{
	char *copy, *item, *save = NULL;
	int rc = 0;

	if (!spec || !*spec)
		return 0;
	copy = strdup(spec);
	if (!copy)
		return -ENOMEM;
	for (item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
		char *f[4] = { 0 };
		int n = 0, call = -1, err = 0;
		char *s2 = NULL;

		for (char *t = strtok_r(item, ":", &s2); t && n < 4; t = strtok_r(NULL, ":", &s2))
			f[n++] = t;
		for (size_t i = 0; n >= 2 && i < sizeof(call_names) / sizeof(call_names[0]); i++)
			if (!strcmp(f[0], call_names[i].name))
				call = call_names[i].call;
		for (size_t i = 0; n >= 2 && i < sizeof(err_names) / sizeof(err_names[0]); i++)
			if (!strcmp(f[1], err_names[i].name))
				err = err_names[i].err;
		unsigned long num[2] = { 0, 0 };
		for (int k = 0; k < 2 && f[2 + k]; k++) {
			char *end;

			num[k] = strtoul(f[2 + k], &end, 10);
			if (*end || end == f[2 + k] || num[k] > 1000000000)
				err = 0;
		}
		if (call < 0 || !err || (err == -1 && call != PC_SYS_READAHEAD)) {
			rc = -EINVAL;
			break;
		}
		pc_sys_inject(call, err, (unsigned)num[0], (unsigned)num[1]);
	}
	free(copy);
	return rc;
}

/* the library's own (a program built with PC_SYS_NOFAULT takes it from libpagecache.so) */
uint64_t pc_page_size(void)
{
	static uint64_t ps;

	if (!ps)
		ps = (uint64_t)sysconf(_SC_PAGESIZE);
	return ps;
}
#else
/*
 * PC_SYS_NOFAULT: the copy of these wrappers that a pagecache linked
 * against libpagecache.so carries (Makefile, LINK=shared) for the calls of
 * its own that go through the seam. The library's calls go through its
 * own copy, hidden inside it, which nothing outside can tell to fail: so
 * no fault is injected anywhere, and a spec is refused, never half obeyed.
 */
int pc_sys_injected(enum pc_sys_call call)
{
	(void)call;
	return 0;
}

int pc_sys_inject_env(const char *spec)
{
	return spec && *spec ? -EOPNOTSUPP : 0;
}
#endif

struct kcachestat_range {
	uint64_t off, len;
};

int pc_sys_cachestat(int fd, uint64_t off, uint64_t len, struct pc_cachestat *ret_cs)
{
	struct kcachestat_range r = { off, len };
	struct pc_cachestat cs;
	int e = pc_sys_injected(PC_SYS_CACHESTAT);

	if (e > 0)
		return -e;
	if (syscall(__NR_cachestat, fd, &r, &cs, 0) < 0)
		return -errno;
	*ret_cs = cs;
	return 0;
}

#ifndef PC_SYS_NOFAULT		/* the library's own, as pc_page_size */
bool pc_have_cachestat(void)
{
	static atomic_int have = -1;
	int h = atomic_load(&have);

	if (h < 0) {
		struct kcachestat_range r = { 0, 0 };
		struct pc_cachestat cs;

		/* A bad fd tells ENOSYS (missing) from EBADF (present). */
		h = !(syscall(__NR_cachestat, -1, &r, &cs, 0) < 0 && errno == ENOSYS);
		atomic_store(&have, h);
	}
	/* Tests pretend to run on a kernel without it. */
	if (atomic_load(&inject_any) && atomic_load(&injects[PC_SYS_CACHESTAT].err) == ENOSYS)
		return false;
	return h;
}
#endif

int pc_sys_mincore(void *addr, size_t len, unsigned char *vec)
{
	int e = pc_sys_injected(PC_SYS_MINCORE);

	if (e > 0)
		return -e;
	return mincore(addr, len, vec) < 0 ? -errno : 0;
}

int pc_sys_readahead(int fd, uint64_t off, uint64_t len)
{
	int e = pc_sys_injected(PC_SYS_READAHEAD);

	if (e > 0)
		return -e;
	if (e < 0 && len > pc_page_size())
		len = pc_page_size();	/* the kernel's silent cap, worst case */
	return readahead(fd, (off64_t)off, len) < 0 ? -errno : 0;
}

int pc_sys_fadvise(int fd, uint64_t off, uint64_t len, int advice)
{
	int e = pc_sys_injected(PC_SYS_FADVISE);

	if (e > 0)
		return -e;
	return -posix_fadvise(fd, (off_t)off, (off_t)len, advice);
}

long pc_sys_pread(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	for (;;) {
		int e = pc_sys_injected(PC_SYS_PREAD);

		if (e == EINTR)
			continue;	/* as a real EINTR would be: retried */
		if (e > 0)
			return -e;
		n = pread(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : n;
	}
}

void *pc_sys_mmap(size_t len, int prot, int flags, int fd, uint64_t off, int *ret_err)
{
	int e = pc_sys_injected(PC_SYS_MMAP);
	void *p;

	if (e > 0) {
		*ret_err = -e;
		return NULL;
	}
	p = mmap(NULL, len, prot, flags, fd, (off_t)off);
	if (p == MAP_FAILED) {
		*ret_err = -errno;
		return NULL;
	}
	return p;
}

int pc_sys_mlock(const void *addr, size_t len)
{
	int e = pc_sys_injected(PC_SYS_MLOCK);

	if (e > 0)
		return -e;
	/* The syscall itself: sanitizer runtimes turn mlock() into a no-op. */
	return syscall(SYS_mlock, addr, len) < 0 ? -errno : 0;
}

int pc_sys_openat_raw(int dirfd, const char *path, int flags)
{
	int fd;

	do
		fd = openat(dirfd, path, flags | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0 && errno == EPERM && (flags & O_NOATIME)) {
		/* O_NOATIME needs ownership; fall back quietly. */
		do
			fd = openat(dirfd, path, (flags & ~O_NOATIME) | O_CLOEXEC);
		while (fd < 0 && errno == EINTR);
	}
	return fd < 0 ? -errno : fd;
}

int pc_sys_openat(int dirfd, const char *path, int flags)
{
	int e;

	while ((e = pc_sys_injected(PC_SYS_OPEN)) == EINTR)
		;	/* as a real EINTR would be: retried */
	if (e > 0)
		return -e;
	return pc_sys_openat_raw(dirfd, path, flags);
}

int pc_sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve)
{
	struct open_how how = { .flags = flags | O_CLOEXEC, .resolve = resolve };
	int e, tries = 0;
	long fd;

	while ((e = pc_sys_injected(PC_SYS_OPENAT2)) == EINTR)
		;
	if (e > 0)
		return -e;
	/* EAGAIN: a rename or mount raced a RESOLVE_BENEATH walk; bounded,
	   since whoever renames may be doing it on purpose */
	do
		fd = syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
	while (fd < 0 && (errno == EINTR || (errno == EAGAIN && ++tries < 64)));
	return fd < 0 ? -errno : (int)fd;
}

int pc_sys_uring_check(void)
{
	int e = pc_sys_injected(PC_SYS_URING);

	return e > 0 ? -e : 0;
}

int pc_sys_fstat(int fd, struct stat *ret_st)
{
	int e = pc_sys_injected(PC_SYS_FSTAT);

	if (e > 0)
		return -e;
	/* fstat(2) itself: glibc's fstat is fstatat(fd, "", AT_EMPTY_PATH) */
	return syscall(SYS_fstat, fd, ret_st) < 0 ? -errno : 0;
}

long pc_sys_read(int fd, void *buf, size_t len)
{
	ssize_t n;

	for (;;) {
		int e = pc_sys_injected(PC_SYS_READ);

		if (e == EINTR)
			continue;	/* as a real EINTR would be: retried */
		if (e > 0)
			return -e;
		n = read(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : n;
	}
}

long pc_sys_write(int fd, const void *buf, size_t len)
{
	ssize_t n;

	for (;;) {
		int e = pc_sys_injected(PC_SYS_WRITE);

		if (e == EINTR)
			continue;
		if (e > 0)
			return -e;
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			continue;
		return n < 0 ? -errno : n;
	}
}

int pc_sys_fsync(int fd)
{
	int e = pc_sys_injected(PC_SYS_FSYNC);

	if (e > 0)
		return -e;
	return fsync(fd) < 0 ? -errno : 0;
}

int pc_sys_fdatasync(int fd)
{
	int e = pc_sys_injected(PC_SYS_FSYNC);	/* the "fsync" point too */

	if (e > 0)
		return -e;
	return fdatasync(fd) < 0 ? -errno : 0;
}

int pc_sys_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath)
{
	int e = pc_sys_injected(PC_SYS_RENAME);

	if (e > 0)
		return -e;
	return renameat(olddirfd, oldpath, newdirfd, newpath) < 0 ? -errno : 0;
}

int pc_sys_sync_file_range(int fd, uint64_t off, uint64_t len, unsigned flags)
{
	int e = pc_sys_injected(PC_SYS_SYNC_RANGE);

	if (e > 0)
		return -e;
	return sync_file_range(fd, (off64_t)off, (off64_t)len, flags) < 0 ? -errno : 0;
}

int pc_sys_inotify_add_watch(int fd, const char *path, uint32_t mask)
{
	int e = pc_sys_injected(PC_SYS_INOTIFY_WATCH), wd;

	if (e > 0)
		return -e;
	wd = inotify_add_watch(fd, path, mask);
	return wd < 0 ? -errno : wd;
}

int pc_sys_open_by_handle(int mount_fd, void *handle, int flags)
{
	int e = pc_sys_injected(PC_SYS_OPEN_HANDLE), fd;

	if (e > 0)
		return -e;
	fd = open_by_handle_at(mount_fd, handle, flags);
	return fd < 0 ? -errno : fd;
}

int pc_sys_perf_event_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
			   unsigned long flags)
{
	int fd;

	/* the tests' kernel before 6.0 (PAGECACHE_FAULT=perf_format_lost:EINVAL) */
	if (a->read_format & PERF_FORMAT_LOST) {
		int e = pc_sys_injected(PC_SYS_PERF_LOST);

		if (e > 0)
			return -e;
	}
	fd = (int)syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
	return fd < 0 ? -errno : fd;
}

/*
 * A stdio stream over an fd whose reads go through pc_sys_read, so the
 * line readers of /proc and cgroupfs files (getline, fgets, fscanf) meet
 * injected read faults too: a failed read is the stream's error (ferror,
 * errno), never a silent end of file.
 */
static ssize_t cookie_read(void *c, char *buf, size_t len)
{
	long n = pc_sys_read((int)(intptr_t)c, buf, len);

	if (n < 0) {
		errno = (int)-n;
		return -1;
	}
	return n;
}

static int cookie_close(void *c)
{
	return close((int)(intptr_t)c);
}

FILE *pc_sys_fopen_read(const char *path, int *ret_err)
{
	static const cookie_io_functions_t io = { .read = cookie_read, .close = cookie_close };
	int fd = pc_sys_openat(AT_FDCWD, path, O_RDONLY);
	FILE *f;

	if (fd < 0) {
		*ret_err = fd;
		return NULL;
	}
	f = fopencookie((void *)(intptr_t)fd, "r", io);
	if (!f) {
		*ret_err = -ENOMEM;
		close(fd);
	}
	return f;
}

int pc_sys_tmp_create(int dfd, const char *name, bool hidden, char **ret_name)
{
	static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	for (unsigned i = 0; i < 100; i++) {
		uint8_t r[6];
		char *t;
		int fd;

		if (getrandom(r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			/* no entropy yet (early boot): O_EXCL still keeps the name ours */
			uint64_t x = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid() << 16 ^
				     (uint64_t)pc_now() ^ i;

			memcpy(r, &x, sizeof(r));
		}
		/* NAME cut to 200 bytes: a name near NAME_MAX still gets a temp file */
		if (asprintf(&t, "%s%.200s.tmp.%c%c%c%c%c%c", hidden ? "." : "", name, set[r[0] % 62],
			     set[r[1] % 62], set[r[2] % 62], set[r[3] % 62], set[r[4] % 62],
			     set[r[5] % 62]) < 0)
			return -ENOMEM;
		fd = openat(dfd, t, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*ret_name = t;
			return fd;
		}
		free(t);
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}
