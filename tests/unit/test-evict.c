/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evict.c, lock.c, proc.c: dirty pages are written first and dropped;
 * mapped and locked pages stay and the mapper is found; lock keeps pages
 * resident, never a hole's, and reports the kernel's refusal. None of it needs cachestat
 * (what stayed is counted with mincore then); only the dirty count does.
 * PAGECACHE_FAULT is honoured, so make check runs this as on a kernel
 * without cachestat too.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/*
 * lseek as a broken FUSE server answers it: SEEK_DATA and SEEK_HOLE say 0
 * whatever is asked (while seek_broken). The library's calls land here (a
 * static link: this definition wins over libc's). After 10,000 of them it
 * says ENXIO, so that a library that loops on the answers ends and fails
 * instead of hanging the test.
 */
static int seek_broken;
static unsigned seek_calls;

off_t lseek(int fd, off_t off, int whence)
{
	if (seek_broken && (whence == SEEK_DATA || whence == SEEK_HOLE)) {
		if (++seek_calls > 10000) {
			errno = ENXIO;
			return -1;
		}
		return 0;
	}
	return (off_t)syscall(SYS_lseek, fd, off, whence);
}

/* The mappings (VMAs) /proc/self/maps shows within a lock's mapping. */
static unsigned vmas_of(const struct pc_lock *l)
{
	uintptr_t lo = (uintptr_t)l->addr, hi = lo + l->len, a, b;
	unsigned n = 0;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a >= lo && b <= hi)
			n++;
	if (f)
		fclose(f);
	return n;
}

/* Back to the faults the environment asks for (make check's second pass). */
static void faults_reset(void)
{
	pc_sys_inject_reset();
	pc_sys_inject_env(getenv("PAGECACHE_FAULT"));
}

int main(void)
{
	uint64_t ps = pc_page_size(), pages = 1024;
	char path[512];
	char *buf = malloc(ps);		/* one page */
	struct pc_evict_result r;
	struct pc_residency res;
	struct stat st;
	bool have_cs;
	int fd;

	faults_reset();
	have_cs = pc_have_cachestat();
	snprintf(path, sizeof(path), "%s/dirty", scratch_dir());
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	memset(buf, 'x', ps);
	for (uint64_t i = 0; i < pages; i++)
		write(fd, buf, ps);
	pc_fd_residency(fd, pages * ps, 0, 0, &res);
	if (want_source(&res, have_cs) == PC_SRC_CACHESTAT)
		ok(res.dirty > 0, "freshly written file has dirty pages (%llu)",
		   (unsigned long long)res.dirty);
	else
		skip(have_cs ? "an overlay's real file out of reach: dirty is unknown"
			     : "no cachestat", "freshly written file has dirty pages");
	ok(res.source == want_source(&res, have_cs),
	   "counted by %s", want_source(&res, have_cs) == PC_SRC_CACHESTAT ? "cachestat" : "mincore");
	ok(pc_fd_evict(fd, pages * ps, 0, 0, &r) == 0, "evict a dirty file");
	ok(r.synced, "dirty pages were written back first");
	is_u64(r.after.cached, 0, "nothing stays");

	/* Mapped pages stay; the mapper (us) is found. */
	pread(fd, buf, 1, 0);
	for (uint64_t i = 0; i < pages; i++)
		pread(fd, buf, 1, (off_t)(i * ps));
	{
		volatile char *m = mmap(NULL, 64 * ps, PROT_READ, MAP_SHARED, fd, 0);
		struct pc_mapper who[4];
		int n;
		char x = 0;

		for (int i = 0; i < 64; i++)
			x += m[i * ps];
		(void)x;
		pc_fd_evict(fd, pages * ps, 0, 0, &r);
		ok(r.after.cached >= 64 && r.after.cached < pages,
		   "mapped pages stay, the rest go (%llu stayed)",
		   (unsigned long long)r.after.cached);
		/* by the fd: on an overlay, maps name a layer's file */
		n = pc_fd_mappers(fd, who, 4);
		ok(n >= 1 && who[0].pid == getpid() && !who[0].locked,
		   "the mapping process is found (%d)", n);
		munmap((void *)m, 64 * ps);
	}

	/* Evict a byte range only. */
	for (uint64_t i = 0; i < pages; i++)
		pread(fd, buf, 1, (off_t)(i * ps));
	pc_fd_evict(fd, pages * ps, 0, 512 * ps, &r);
	pc_fd_residency(fd, pages * ps, 0, 0, &res);
	ok(r.after.cached == 0 && res.cached >= 512, "a range is evicted, the rest stays");

	/* Lock. */
	{
		struct pc_lock l;
		struct rlimit rl;
		int rc;

		getrlimit(RLIMIT_MEMLOCK, &rl);
		drop_file(path);
		rc = pc_fd_lock(fd, pages * ps, 0, 0, &l);
		if (rc == 0) {
			struct pc_mapper who[4];

			pc_fd_residency(fd, pages * ps, 0, 0, &res);
			is_u64(res.cached, pages, "lock brings every page in");
			pc_fd_evict(fd, pages * ps, 0, 0, &r);
			is_u64(r.after.cached, pages, "locked pages cannot be evicted");
			ok(pc_fd_mappers(fd, who, 4) >= 1 && who[0].locked,
			   "the locker is found and marked locked");
			pc_unlock(&l);
			pc_fd_evict(fd, pages * ps, 0, 0, &r);
			is_u64(r.after.cached, 0, "after unlock they go");
		} else if ((rc == -EPERM || rc == -ENOMEM) && !pc_have_cap(CAP_IPC_LOCK) &&
			   rl.rlim_cur != RLIM_INFINITY && pages * ps > rl.rlim_cur) {
			skip("needs CAP_IPC_LOCK: mlock past RLIMIT_MEMLOCK", "lock tests");
		} else {
			ok(0, "lock: %s (RLIMIT_MEMLOCK %llu, CAP_IPC_LOCK %d)", strerror(-rc),
			   (unsigned long long)rl.rlim_cur, pc_have_cap(CAP_IPC_LOCK));
		}
		pc_sys_inject(PC_SYS_MLOCK, EPERM, 0, 1);
		ok(pc_fd_lock(fd, pages * ps, 0, 0, &l) == -EPERM, "mlock refusal is returned");
		faults_reset();
	}

	/*
	 * Holes are never locked: mlock over a hole would allocate, zero and
	 * pin its pages. Two pages of data in a 4096-page file.
	 */
	{
		uint64_t size = 4096 * ps, data = 0, locked = 0;
		struct pc_lock l = { 0 };
		uint64_t maps = 0;
		char sp[512];
		int sfd, rc;

		snprintf(sp, sizeof(sp), "%s/sparse", scratch_dir());
		sfd = open(sp, O_RDWR | O_CREAT | O_TRUNC, 0644);
		pwrite(sfd, buf, ps, 0);
		pwrite(sfd, buf, ps, (off_t)(2048 * ps));
		ftruncate(sfd, (off_t)size);
		fsync(sfd);
		fstat(sfd, &st);
		if ((uint64_t)st.st_blocks * 512 >= size) {
			skip("this filesystem keeps no holes", "holes are not locked");
		} else {
			rc = pc_fd_data_bytes(sfd, size, 0, 0, &data);
			ok(rc == 0 && data == 2 * ps, "the data of a sparse file is its two pages "
			   "(%d, %llu bytes)", rc, (unsigned long long)data);
			rc = pc_fd_data_maps(sfd, size, 0, 0, &data, &maps);
			ok(rc == 0 && data == 2 * ps && maps == 3, "their lock takes 3 mappings: "
			   "two pieces and the gap (%d, %llu)", rc, (unsigned long long)maps);
			rc = pc_fd_lock_max(sfd, size, 0, 0, 0, &l, &locked);
			ok(rc == 0 && locked == 2 * ps, "only they are locked (%d, %llu bytes)", rc,
			   (unsigned long long)locked);
			ok(l.maps == 3 && vmas_of(&l) == 3, "the lock says its 3 mappings, as "
			   "/proc/self/maps shows them (%llu, %u)", (unsigned long long)l.maps,
			   vmas_of(&l));
			pc_fd_residency(sfd, size, 0, 0, &res);
			is_u64(res.cached, 2, "no page of a hole is brought in");
			pc_unlock(&l);
			ok(l.maps == 0, "an unlock takes its mappings back");
			rc = pc_fd_lock_max(sfd, size, 0, 0, ps, &l, &locked);
			ok(rc == 0 && locked == ps, "a lock stops at its max (%llu bytes)",
			   (unsigned long long)locked);
			ok(l.maps == 2 && vmas_of(&l) == 2, "then: the piece locked and the rest "
			   "(%llu, %u)", (unsigned long long)l.maps, vmas_of(&l));
			pc_unlock(&l);
			ok(pc_fd_data_bytes(sfd, size, ps, 16 * ps, &data) == 0 && data == 0,
			   "a range of holes has no data");
			rc = pc_fd_lock(sfd, size, ps, 16 * ps, &l);
			ok(rc == 0 && !l.addr, "and its lock holds nothing");
			/* data in more pieces than a mapping is split into: the first ones only */
			ftruncate(sfd, 0);
			for (uint64_t i = 0; i < PC_LOCK_MAX_RANGES + 50; i++)
				pwrite(sfd, buf, ps, (off_t)(2 * i * ps));
			fsync(sfd);
			size = 2 * (PC_LOCK_MAX_RANGES + 50) * ps;
			rc = pc_fd_data_maps(sfd, size, 0, 0, &data, &maps);
			ok(rc == 1 && data == PC_LOCK_MAX_RANGES * ps,
			   "data in %d pieces: the first %d counted, more said (%d, %llu bytes)",
			   PC_LOCK_MAX_RANGES + 50, PC_LOCK_MAX_RANGES, rc, (unsigned long long)data);
			is_u64(maps, 2 * PC_LOCK_MAX_RANGES - 1, "  their lock's mappings: 2 a piece, less 1");
		}
		/* a filesystem whose answers go backwards: refused, not looped on */
		seek_broken = 1;
		rc = pc_fd_data_bytes(sfd, 16 * ps, ps, 0, &data);
		ok(rc == -EIO && seek_calls < 10, "SEEK_DATA that goes backwards is EIO, not a loop "
		   "(%d after %u calls)", rc, seek_calls);
		seek_calls = 0;
		rc = pc_fd_lock(sfd, 16 * ps, 0, 0, &l);
		ok(rc == -EIO && seek_calls < 10, "and the lock is refused so (%d after %u calls)",
		   rc, seek_calls);
		seek_broken = 0;
		close(sfd);
		unlink(sp);
	}
	close(fd);
	free(buf);
	rm_scratch();
	return done_testing();
}
