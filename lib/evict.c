/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * evict.c: drop a file range from the page cache, and say what stayed.
 *
 * POSIX_FADV_DONTNEED only starts writeback and then skips dirty, under-
 * writeback, mapped and mlocked pages, silently. So dirty pages are
 * written and waited for first (sync_file_range over the range), then the
 * range is dropped, then counted again, so the caller can report what
 * stayed instead of claiming success (through overlayfs: the real file's
 * range, or where that is out of reach fdatasync, the one sync that goes
 * through). Only whole pages can be dropped, so
 * `after` covers the whole pages inside the range.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

int pc_fd_evict(int fd, uint64_t size, uint64_t off, uint64_t len,
		struct pc_evict_result *ret)
{
	struct pc_evict_result r = { 0 };
	uint64_t n = (len == 0 || off >= size || len > size - off) ? 0 : len;
	uint64_t ps = pc_page_size(), end = n ? off + n : size;
	/* The kernel drops whole pages only: judge what stayed on those. */
	uint64_t in_off = (off + ps - 1) / ps * ps, in_end = end == size ? size : end / ps * ps;
	int rc;

	rc = pc_fd_residency(fd, size, off, len, &r.before);
	if (rc < 0)
		return rc;
	if (r.before.source != PC_SRC_CACHESTAT || r.before.dirty || r.before.writeback) {
		/*
		 * sync_file_range works on the file's own mapping: through an
		 * overlay that is the empty one, so it would write nothing.
		 * There the range is written through the real file, or where
		 * that is out of reach, the whole file by fdatasync, the one
		 * sync that goes through. (Residency says stacked on every
		 * path: cachestat, its refusal, or mincore.)
		 */
		int sfd = r.before.stacked ? pc_fd_real(fd) : fd;

		if (sfd < 0) {
			rc = pc_sys_fdatasync(fd);
			if (rc < 0 && rc != -EINVAL)
				return rc;
		} else {
			rc = pc_sys_sync_file_range(sfd, off, n,
						    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
							    SYNC_FILE_RANGE_WAIT_AFTER);
			if (sfd != fd)
				close(sfd);
			if (rc < 0 && rc != -ESPIPE && rc != -EINVAL)
				return rc;
		}
		r.synced = true;
	}
	rc = pc_sys_fadvise(fd, off, n, POSIX_FADV_DONTNEED);
	if (rc < 0)
		return rc;
	if (in_end > in_off) {
		rc = pc_fd_residency(fd, size, in_off, in_end - in_off, &r.after);
		if (rc < 0)
			return rc;
	} else {
		r.after.source = r.before.source;	/* no whole page in range */
	}
	*ret = r;
	return 0;
}
