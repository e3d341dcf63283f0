/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * residency.c: how much of a file range is in the page cache.
 *
 * Counts come from cachestat(2) (Linux 6.5+): one call per range, cost
 * proportional to the pages present, no mapping. Page-by-page maps come
 * from mincore(2) on a read-only shared mapping, one bounded window at a
 * time, skipping windows that cachestat says are empty, so a 1 TiB sparse
 * file costs kilobytes, not the 256 MiB a whole-file vector would.
 *
 * The promise: never a number the kernel made up. Since 5.2, mincore
 * answers "all resident" for a file the caller neither owns nor may write,
 * and cachestat fails with EPERM there (6.14+ and stable backports). Both
 * cases come back as source NONE with err = EPERM. Without cachestat
 * (before 6.5) counts come from mincore, but only where the caller owns
 * or may write the file: elsewhere the answer is unknown, never the
 * kernel's fake "all resident". Only where cachestat says 0 is fstatfs
 * asked whether the file is on overlayfs (overlay.c): files with pages
 * pay nothing for it.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SCAN_WINDOW_PAGES 32768u	/* 128 MiB of 4 KiB pages per mapping */

bool pc_fd_residency_allowed(int fd, const struct stat *st)
{
	char path[64];
	int fl = fcntl(fd, F_GETFL);

	/* The kernel's can_do_mincore()/can_do_cachestat(), from outside. */
	if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
		return true;
	if (st->st_uid == geteuid() || pc_have_cap(CAP_FOWNER))
		return true;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return faccessat(AT_FDCWD, path, W_OK, AT_EACCESS) == 0;
}

/* Page-aligned [first, last) for bytes [off, off+len) of a size-byte file. */
static bool page_span(uint64_t size, uint64_t off, uint64_t len,
		      uint64_t *first, uint64_t *end)
{
	uint64_t ps = pc_page_size(), stop;

	if (off >= size)
		return false;
	stop = (len == 0 || len > size - off) ? size : off + len;
	*first = off / ps;
	*end = (stop + ps - 1) / ps;
	return *end > *first;
}

struct count_arg {
	uint64_t resident;
};

static int count_run(uint64_t first, uint64_t n, bool resident, void *arg)
{
	(void)first;
	if (resident)
		((struct count_arg *)arg)->resident += n;
	return 0;
}

static int scan(int fd, uint64_t size, uint64_t off, uint64_t len, bool precheck,
		pc_run_cb cb, void *arg, pc_window_cb win, void *warg);
static int gate(int fd);

int pc_fd_residency(int fd, uint64_t size, uint64_t off, uint64_t len,
		    struct pc_residency *ret)
{
	struct pc_residency r = { 0 };
	uint64_t first, end, ps = pc_page_size();
	int rc;

	if (!page_span(size, off, len, &first, &end)) {
		r.source = PC_SRC_CACHESTAT;
		*ret = r;
		return 0;
	}
	r.pages = end - first;
	if (pc_have_cachestat()) {
		struct pc_cachestat cs;

		rc = pc_sys_cachestat(fd, first * ps, r.pages * ps, &cs);
		if (rc == 0 && cs.cache == 0 && pc_fd_is_stacked(fd)) {
			/* overlayfs: the pages are the real file's */
			int rfd = pc_fd_real(fd);

			r.stacked = true;
			if (rfd < 0) {
				r.err = -rfd;
				goto by_mapping;
			}
			rc = pc_sys_cachestat(rfd, first * ps, r.pages * ps, &cs);
			close(rfd);
		}
		if (rc == 0) {
			r.source = PC_SRC_CACHESTAT;
			r.cached = cs.cache;
			r.dirty = cs.dirty;
			r.writeback = cs.writeback;
			r.evicted = cs.evicted;
			r.recently_evicted = cs.recently_evicted;
			*ret = r;
			return 0;
		}
		if (rc == -EPERM || rc == -EOPNOTSUPP) {
			r.source = PC_SRC_NONE;
			r.err = -rc;
			r.stacked = pc_fd_is_stacked(fd);	/* evict syncs by it */
			*ret = r;
			return 0;
		}
		if (rc != -ENOSYS)
			return rc;
	}
	/*
	 * No cachestat, or a stacked file whose real file is out of reach:
	 * mincore (a mapping reaches the real file), but only where it tells
	 * the truth.
	 */
by_mapping:
	{
		struct count_arg ca = { 0 };

		if (!r.stacked)		/* no cachestat: say so all the same */
			r.stacked = pc_fd_is_stacked(fd);
		rc = gate(fd);
		if (rc < 0 && rc != -EPERM)
			return rc;
		if (rc == -EPERM) {
			r.source = PC_SRC_NONE;
			if (!r.err)
				r.err = EPERM;
			*ret = r;
			return 0;
		}
		rc = scan(fd, size, off, len, false, count_run, &ca, NULL, NULL);
		if (rc < 0)
			return rc;
		r.source = PC_SRC_MINCORE;
		r.cached = ca.resident;
		*ret = r;
	}
	return 0;
}

struct run_state {
	uint64_t start, n;
	bool resident;
	pc_run_cb cb;
	void *arg;
};

static int run_push(struct run_state *s, uint64_t page, uint64_t n, bool resident)
{
	int rc = 0;

	if (s->n && s->resident == resident && s->start + s->n == page) {
		s->n += n;
		return 0;
	}
	if (s->n)
		rc = s->cb(s->start, s->n, s->resident, s->arg);
	s->start = page;
	s->n = n;
	s->resident = resident;
	return rc;
}

/* 0 if mincore tells this caller the truth about fd, else -EPERM. */
static int gate(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return pc_fd_residency_allowed(fd, &st) ? 0 : -EPERM;
}

static int scan(int fd, uint64_t size, uint64_t off, uint64_t len, bool precheck,
		pc_run_cb cb, void *arg, pc_window_cb win, void *warg)
{
	struct run_state s = { .cb = cb, .arg = arg };
	uint64_t first, end, ps = pc_page_size();
	unsigned char *vec;
	bool cs_ok = pc_have_cachestat(), stack_checked = false;
	int rc = 0, cfd = fd;	/* cachestat's fd: a stacked file's real one */

	if (!page_span(size, off, len, &first, &end))
		return 0;
	if (!cs_ok && precheck) {
		/* Without cachestat's EPERM, ask the gate ourselves. */
		rc = gate(fd);
		if (rc < 0)
			return rc;
	}
	vec = malloc(SCAN_WINDOW_PAGES);
	if (!vec)
		return -ENOMEM;
	for (uint64_t p = first; p < end && rc == 0;) {
		uint64_t n = end - p < SCAN_WINDOW_PAGES ? end - p : SCAN_WINDOW_PAGES;
		void *map;
		int err = 0;

		if (cs_ok && precheck) {
			struct pc_cachestat cs;

			rc = pc_sys_cachestat(cfd, p * ps, n * ps, &cs);
			if (rc == 0 && cs.cache == 0 && !stack_checked) {
				stack_checked = true;
				if (pc_fd_is_stacked(fd)) {
					/* overlayfs: ask the real file, or map every window */
					cfd = pc_fd_real(fd);
					if (cfd < 0) {
						rc = gate(fd);
						cs_ok = false;
						if (rc < 0)
							break;
						continue;
					}
					rc = pc_sys_cachestat(cfd, p * ps, n * ps, &cs);
				}
			}
			if (rc == -ENOSYS) {
				cs_ok = false;
				rc = 0;
			} else if (rc < 0) {
				break;
			} else if (cs.cache == 0) {
				/* Nothing present, so nothing uptodate: skip the map. */
				rc = run_push(&s, p, n, false);
				p += n;
				continue;
			}
		}
		map = pc_sys_mmap(n * ps, PROT_READ, MAP_SHARED, fd, p * ps, &err);
		if (!map) {
			rc = err;
			break;
		}
		rc = pc_sys_mincore(map, n * ps, vec);
		if (rc == 0 && win)	/* the mapping while it is there: no second one */
			win(map, p, n, vec, warg);
		munmap(map, n * ps);
		if (rc < 0)
			break;
		for (uint64_t i = 0; i < n && rc == 0;) {
			uint64_t j = i + 1;
			bool res = vec[i] & 1;

			while (j < n && (bool)(vec[j] & 1) == res)
				j++;
			rc = run_push(&s, p + i, j - i, res);
			i = j;
		}
		p += n;
	}
	if (rc == 0 && s.n)
		rc = cb(s.start, s.n, s.resident, arg);
	free(vec);
	if (cfd >= 0 && cfd != fd)
		close(cfd);
	return rc;
}

int pc_fd_scan(int fd, uint64_t size, uint64_t off, uint64_t len, pc_run_cb cb, void *arg)
{
	return scan(fd, size, off, len, true, cb, arg, NULL, NULL);
}

int pc_fd_scan_mapped(int fd, uint64_t size, uint64_t off, uint64_t len, pc_run_cb cb,
		      void *arg)
{
	return scan(fd, size, off, len, false, cb, arg, NULL, NULL);
}

int pc_runs_add(struct pc_runs *a, uint64_t first, uint64_t n)
{
	if (a->n && a->v[2 * a->n - 2] + a->v[2 * a->n - 1] == first) {
		a->v[2 * a->n - 1] += n;
		return 0;
	}
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 16;
		uint64_t *nv = realloc(a->v, nc * 2 * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = nc;
	}
	a->v[2 * a->n] = first;
	a->v[2 * a->n + 1] = n;
	a->n++;
	return 0;
}

static int runs_collect(uint64_t first, uint64_t n, bool resident, void *arg)
{
	return resident ? pc_runs_add(arg, first, n) : 0;
}

int pc_fd_resident_runs(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t **ret,
			size_t *ret_n)
{
	return pc_fd_resident_runs_win(fd, size, off, len, NULL, NULL, ret, ret_n);
}

int pc_fd_resident_runs_win(int fd, uint64_t size, uint64_t off, uint64_t len, pc_window_cb win,
			    void *warg, uint64_t **ret, size_t *ret_n)
{
	struct pc_runs a = { 0 };
	int rc = scan(fd, size, off, len, true, runs_collect, &a, win, warg);

	if (rc < 0) {
		free(a.v);
		return rc;
	}
	*ret = a.v;
	*ret_n = a.n;
	return 0;
}
