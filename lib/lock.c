/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * lock.c: keep a file range in memory with mlock.
 *
 * The lock lasts only as long as the mapping, so the caller must stay
 * alive (pagecache lock waits for a signal). The mapping is PROT_READ and
 * MAP_SHARED: a private writable map would turn pages into anonymous copies
 * on the first write fault. Nothing here touches the mapping, so a file
 * that shrinks while locked cannot SIGBUS us.
 */
#define _GNU_SOURCE
#include "pagecache.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int pc_fd_lock(int fd, uint64_t size, uint64_t off, uint64_t len, struct pc_lock *ret)
{
	uint64_t ps = pc_page_size(), start, stop;
	struct pc_lock l = { 0 };
	int rc, err = 0;

	if (off >= size) {
		*ret = l;
		return 0;
	}
	stop = (len == 0 || len > size - off) ? size : off + len;
	start = off / ps * ps;
	l.len = (size_t)(stop - start);
	l.addr = pc_sys_mmap(l.len, PROT_READ, MAP_SHARED, fd, start, &err);
	if (!l.addr)
		return err;
	rc = pc_sys_mlock(l.addr, l.len);
	if (rc < 0) {
		munmap(l.addr, l.len);
		return rc;
	}
	*ret = l;
	return 0;
}

void pc_unlock(struct pc_lock *l)
{
	if (l && l->addr) {
		syscall(SYS_munlock, l->addr, l->len);	/* see pc_sys_mlock */
		munmap(l->addr, l->len);
		l->addr = NULL;
		l->len = 0;
	}
}
