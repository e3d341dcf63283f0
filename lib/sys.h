/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * sys.h: the system call seam (lib/sys.c). Every system call the library
 * makes that a test must be able to fail goes through one of these
 * wrappers, which return 0 (or a count) or -errno, retry EINTR, and fail
 * on purpose when told to (pc_sys_inject, PAGECACHE_FAULT).
 *
 * Not part of the library's API (pagecache.h): libpagecache.so keeps all
 * of it hidden. The library's own files reach it through internal.h; the
 * tests, and the few calls of src/ whose failures the CLI tests inject
 * (--prom-file's write, fsync and rename; lock --watch's inotify), include
 * it themselves and link the static library. A pagecache linked against
 * libpagecache.so (LINK=shared) carries a copy of these wrappers of its own,
 * built without the faults (PC_SYS_NOFAULT): there, pc_sys_inject_env
 * refuses any spec with -EOPNOTSUPP, since the library's faults are out of
 * its reach.
 */
#ifndef PC_SYS_H
#define PC_SYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct stat;

struct pc_cachestat {
	uint64_t cache;			/* pages with a folio in the range */
	uint64_t dirty;			/* pages tagged dirty */
	uint64_t writeback;		/* pages under writeback */
	uint64_t evicted;		/* shadow entries left by reclaim */
	uint64_t recently_evicted;	/* shadows that would count as refaults */
};

enum pc_sys_call {
	PC_SYS_CACHESTAT,
	PC_SYS_MINCORE,
	PC_SYS_READAHEAD,
	PC_SYS_FADVISE,
	PC_SYS_PREAD,
	PC_SYS_MMAP,
	PC_SYS_MLOCK,
	PC_SYS_OPEN,
	PC_SYS_URING,
	PC_SYS_OPENAT2,
	PC_SYS_READ,
	PC_SYS_WRITE,
	PC_SYS_FSYNC,
	PC_SYS_RENAME,
	PC_SYS_SYNC_RANGE,
	PC_SYS_INOTIFY_WATCH,
	PC_SYS_OPEN_HANDLE,
	PC_SYS_FSTAT,
	PC_SYS_URING_ENTER,
	PC_SYS_URING_CACHED,
	PC_SYS_TRACE_USE,	/* "filemap_get_pages": the 6.12 use events (ENOENT: missing) */
	PC_SYS_PERF_LOST,	/* "perf_format_lost": PERF_FORMAT_LOST (6.0; EINVAL: before) */
	PC_SYS_STATX_MNT_UNIQUE,	/* ENOSYS: a kernel without STATX_MNT_ID_UNIQUE (6.8) */
	PC_SYS_SYSTEMD,			/* "systemd:ENOENT": as if systemd did not manage the host */
	PC_SYS_BDEV_OPEN,		/* "bdev_open:EPERM": a block device refused, as a VM's
					   root disk or a container's is (pc_bdev_open) */
	PC_SYS_NCALLS
};

/*
 * Make the n-th and later calls of `call` fail with -err (err > 0), `times`
 * times (0 = forever). err == -1 on PC_SYS_READAHEAD means "short": the call
 * succeeds but brings in at most one page, as the kernel's silent cap does.
 * pc_sys_inject_env() reads PAGECACHE_FAULT="call:ERR[:after[:times]],...",
 * e.g. "cachestat:EPERM" or "readahead:short:0:5", for the CLI tests.
 */
void pc_sys_inject(enum pc_sys_call call, int err, unsigned after, unsigned times);
void pc_sys_inject_reset(void);
int pc_sys_inject_env(const char *spec);
/*
 * The fault seam for calls made outside a wrapper (an open that goes
 * through io_uring): 0, or the error injected for this call (-1 means
 * "short"), counted as a call of `call` would be.
 */
int pc_sys_injected(enum pc_sys_call call);

int pc_sys_cachestat(int fd, uint64_t off, uint64_t len, struct pc_cachestat *ret_cs);
int pc_sys_mincore(void *addr, size_t len, unsigned char *vec);
int pc_sys_readahead(int fd, uint64_t off, uint64_t len);
int pc_sys_fadvise(int fd, uint64_t off, uint64_t len, int advice);
long pc_sys_pread(int fd, void *buf, size_t len, uint64_t off);
void *pc_sys_mmap(size_t len, int prot, int flags, int fd, uint64_t off, int *ret_err);
int pc_sys_mlock(const void *addr, size_t len);
int pc_sys_openat(int dirfd, const char *path, int flags);
/* pc_sys_openat past the fault point (it was asked already). */
int pc_sys_openat_raw(int dirfd, const char *path, int flags);
/* openat2(2) with flags and resolve; -ENOSYS where the kernel lacks it. */
int pc_sys_openat2(int dirfd, const char *path, uint64_t flags, uint64_t resolve);
/* 0 if io_uring may be tried (the "uring" fault point says no). */
int pc_sys_uring_check(void);
/* fstat(2) through the "fstat" fault point: 0 or -errno. */
int pc_sys_fstat(int fd, struct stat *ret_st);
/* read(2), write(2) (EINTR retried; a count, maybe short), fsync(2), renameat(2), sync_file_range(2). */
long pc_sys_read(int fd, void *buf, size_t len);
long pc_sys_write(int fd, const void *buf, size_t len);
int pc_sys_fsync(int fd);
int pc_sys_fdatasync(int fd);	/* through the "fsync" fault point */
int pc_sys_renameat(int olddirfd, const char *oldpath, int newdirfd, const char *newpath);
int pc_sys_sync_file_range(int fd, uint64_t off, uint64_t len, unsigned flags);
/* inotify_add_watch(2): the watch descriptor, or -errno ("inotify_add_watch:ENOSPC": the limit). */
int pc_sys_inotify_add_watch(int fd, const char *path, uint32_t mask);
/* open_by_handle_at(2); handle: a struct file_handle. The fd, or -errno. */
int pc_sys_open_by_handle(int mount_fd, void *handle, int flags);

/*
 * A file of /proc or cgroupfs opened for reading as a stdio stream whose
 * reads go through pc_sys_read (the "open", then "read" fault points). A
 * read that fails sets ferror() and errno, never a silent end of file.
 * NULL: *ret_err says why (-errno).
 */
FILE *pc_sys_fopen_read(const char *path, int *ret_err);

/*
 * A fresh file "NAME.tmp.XXXXXX" in dfd (".NAME.tmp.XXXXXX" when
 * hidden: a textfile collector reading *.prom skips it), mode 0600, opened
 * O_RDWR: a name nobody could have planted a link at (O_CREAT | O_EXCL |
 * O_NOFOLLOW), for a write that is renamed into place. glibc's mkostemp
 * takes no directory fd. The fd, the name (malloc'd) in *ret_name; -errno.
 */
int pc_sys_tmp_create(int dfd, const char *name, bool hidden, char **ret_name);

#endif
