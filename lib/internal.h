/*
 * internal.h: what the library's files share and the public header does
 * not promise.
 */
#ifndef PC_INTERNAL_H
#define PC_INTERNAL_H

#include "pagecache.h"

/*
 * pc_fd_scan without asking cachestat first, for ranges expected to be
 * cached. It does not check the permission gate: the caller must already
 * know that the kernel gives it true answers (pc_fd_residency said so).
 */
int pc_fd_scan_mapped(int fd, uint64_t size, uint64_t off, uint64_t len, pc_run_cb cb,
		      void *arg);

/*
 * pfd: an O_PATH fd whose fstat (*st) said regular file. Open that very
 * inode for reading through /proc/self/fd/PFD (O_RDONLY | O_NONBLOCK |
 * O_NOCTTY | extra_flags), whatever happened to its path since: no FIFO or
 * device is ever opened. -ESTALE if what opened is not that file; -ENOENT
 * where /proc is not mounted. pfd stays open.
 */
int pc_reopen_checked(int pfd, const struct stat *st, int extra_flags, struct stat *ret_st);

#endif
