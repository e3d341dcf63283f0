/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lock.c: keep a file range in memory with mlock.
 *
 * The lock lasts only as long as the mapping, so the caller must stay
 * alive (pagecache lock waits for a signal). The mapping is PROT_READ and
 * MAP_SHARED: a private writable map would turn pages into anonymous copies
 * on the first write fault. Nothing here touches the mapping, so a file
 * that shrinks while locked cannot SIGBUS us.
 *
 * Only the file's data is locked, never a hole: mlock populates every page
 * of the range it is given, and a hole's page is then allocated, zeroed and
 * pinned (on ext4 as page cache the disk never held; on tmpfs it becomes
 * part of the file for good). A file's owner could otherwise make whoever
 * locks it pin any amount of memory with one truncate. The data is what
 * SEEK_DATA and SEEK_HOLE find, widened to whole pages, in at most
 * PC_LOCK_MAX_RANGES pieces: each piece mlocked splits the mapping, and a
 * file in a million pieces must not use up vm.max_map_count. A lock says
 * how many mappings (VMAs) it split into, and pc_fd_data_maps how many it
 * would, so that a caller holding many locks can keep their sum within a
 * budget (pagecache lock: half of vm.max_map_count for the whole set).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

struct range {
	uint64_t start, stop;		/* page-aligned, stop clipped to the range's end */
};

/*
 * The data of [off, off+len) of fd as page-aligned ranges, in order,
 * merged where they touch: at most PC_LOCK_MAX_RANGES into r (may be NULL
 * to count only). *ret_bytes: their bytes. 1 if data lies past the last
 * range kept, 0, or -errno (-EIO where the filesystem's SEEK_DATA or
 * SEEK_HOLE answers go backwards: a FUSE server can say 0 forever, and
 * pos would never move).
 */
static int data_ranges(int fd, uint64_t size, uint64_t off, uint64_t len, struct range *r,
		       size_t *ret_n, uint64_t *ret_bytes)
{
	uint64_t ps = pc_page_size(), pos, stop, bytes = 0;
	struct range last = { 0 };
	size_t n = 0;
	bool cut = false;

	*ret_n = 0;
	*ret_bytes = 0;
	if (off >= size)
		return 0;
	stop = (len == 0 || len > size - off) ? size : off + len;
	pos = off / ps * ps;
	while (pos < stop) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA), h;
		uint64_t a, b;

		if (d < 0) {
			if (errno == ENXIO)
				break;	/* no data past pos (or the file shrank) */
			if (errno != EINVAL || pos != off / ps * ps)
				return -errno;
			/* no SEEK_DATA here (some FUSE, procfs): all of it is data */
			d = (off_t)pos;
			h = (off_t)stop;
		} else {
			if ((uint64_t)d < pos)
				return -EIO;	/* data before where it was asked: a broken filesystem */
			h = lseek(fd, d, SEEK_HOLE);
			if (h < 0) {
				if (errno != ENXIO)
					return -errno;
				break;	/* truncated under us: nothing there now */
			}
			if (h < d)
				return -EIO;	/* a hole before its data: the same */
		}
		a = (uint64_t)d / ps * ps;
		if (a >= stop)
			break;
		b = ((uint64_t)h + ps - 1) / ps * ps;
		if (b > stop)
			b = stop;
		if (b <= a)
			b = a + ps < stop ? a + ps : stop;
		if (n && a <= last.stop) {	/* touches the last one: one piece */
			bytes += b > last.stop ? b - last.stop : 0;
			last.stop = b > last.stop ? b : last.stop;
		} else {
			if (n == PC_LOCK_MAX_RANGES) {
				cut = true;	/* data past the cap: said with 1 */
				break;
			}
			last = (struct range){ a, b };
			bytes += b - a;
			n++;
		}
		if (n && r)
			r[n - 1] = last;
		pos = b;
	}
	*ret_n = n;
	*ret_bytes = bytes;
	return cut ? 1 : 0;
}

/* The mappings a lock of n pieces takes: each piece, and the gap after each but the last. */
static uint64_t pieces_maps(size_t n)
{
	return n ? 2 * (uint64_t)n - 1 : 0;
}

int pc_fd_data_maps(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t *ret_bytes,
		    uint64_t *ret_maps)
{
	uint64_t bytes;
	size_t n;
	int rc = data_ranges(fd, size, off, len, NULL, &n, &bytes);

	if (rc >= 0) {
		*ret_bytes = bytes;
		if (ret_maps)
			*ret_maps = pieces_maps(n);
	}
	return rc;
}

int pc_fd_data_bytes(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t *ret)
{
	return pc_fd_data_maps(fd, size, off, len, ret, NULL);
}

uint64_t pc_max_map_count(void)
{
	char buf[32];
	unsigned long long v = 0;

	if (pc_read_text("/proc/sys/vm/max_map_count", buf, sizeof(buf)) == 0)
		v = strtoull(buf, NULL, 10);
	return v ? (uint64_t)v : 65530;	/* DEFAULT_MAX_MAP_COUNT */
}

int pc_fd_lock_max(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t max,
		   struct pc_lock *ret, uint64_t *ret_locked)
{
	struct range *r = malloc(PC_LOCK_MAX_RANGES * sizeof(*r));
	struct pc_lock l = { 0 };
	uint64_t bytes, locked = 0, end = 0;	/* end: of the last piece locked, in the mapping */
	size_t n;
	int rc, err = 0;

	if (!r)
		return -ENOMEM;
	rc = data_ranges(fd, size, off, len, r, &n, &bytes);
	if (rc < 0 || n == 0) {
		free(r);
		if (rc >= 0) {
			*ret = l;	/* nothing but holes: nothing to lock */
			if (ret_locked)
				*ret_locked = 0;
			rc = 0;
		}
		return rc;
	}
	/* one mapping from the first piece to the last; only the pieces locked */
	l.len = (size_t)(r[n - 1].stop - r[0].start);
	l.addr = pc_sys_mmap(l.len, PROT_READ, MAP_SHARED, fd, r[0].start, &err);
	if (!l.addr) {
		free(r);
		return err;
	}
	for (size_t i = 0; i < n && (!max || locked < max); i++) {
		uint64_t want = r[i].stop - r[i].start;

		if (max && want > max - locked)
			want = (max - locked) / pc_page_size() * pc_page_size();
		if (!want)
			break;
		rc = pc_sys_mlock((char *)l.addr + (r[i].start - r[0].start), (size_t)want);
		if (rc < 0) {
			pc_unlock(&l);
			free(r);
			return rc;
		}
		/* a piece splits the mapping: itself, and the gap before it */
		l.maps += 1 + (i && r[i].start - r[0].start > end);
		end = r[i].start - r[0].start + want;
		locked += want;
	}
	if (!l.maps || end < l.len)
		l.maps++;	/* what is mapped past the last piece locked, or all of it */
	free(r);
	*ret = l;
	if (ret_locked)
		*ret_locked = locked;
	return 0;
}

int pc_fd_lock(int fd, uint64_t size, uint64_t off, uint64_t len, struct pc_lock *ret)
{
	return pc_fd_lock_max(fd, size, off, len, 0, ret, NULL);
}

void pc_unlock(struct pc_lock *l)
{
	if (l && l->addr) {
		syscall(SYS_munlock, l->addr, l->len);	/* see pc_sys_mlock */
		munmap(l->addr, l->len);
		l->addr = NULL;
		l->len = 0;
		l->maps = 0;
	}
}
