/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * prefetch.c and budget.c: a warm that returns means every page is
 * resident (mincore), whatever the kernel's readahead dropped; errors and
 * shrinking files are reported per file; the budget stops it. None of it
 * needs cachestat (warming verifies with mincore); only the permission
 * gate's cachestat EPERM does. PAGECACHE_FAULT is honoured, so make check
 * runs this as on a kernel without cachestat too.
 */
#include "pagecache.h"
#include "internal.h"	/* pc_budget_take_some */
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <sys/mman.h>

static uint64_t resident(const char *path)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	uint64_t ps = pc_page_size(), n = 0, pages;
	unsigned char *vec;
	void *m;

	fstat(fd, &st);
	if (!st.st_size) {
		close(fd);
		return 0;
	}
	pages = ((uint64_t)st.st_size + ps - 1) / ps;
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	vec = malloc(pages);
	mincore(m, (size_t)st.st_size, vec);
	for (uint64_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(m, (size_t)st.st_size);
	free(vec);
	close(fd);
	return n;
}

/* Back to the faults the environment asks for (make check's second pass). */
static void faults_reset(void)
{
	pc_sys_inject_reset();
	pc_sys_inject_env(getenv("PAGECACHE_FAULT"));
}

struct outcome {
	int add_rc, drain_rc, err, new_rc, add2_rc;
	uint64_t pages, res, read, cut;
	bool by_read, denied;
};

static struct outcome warm(const char *path, enum pc_engine eng, uint64_t max, uint64_t chunk,
			   uint64_t shrink_to)
{
	struct pc_budget b;
	struct pc_warm_opts o = { .budget = &b, .engine = eng, .chunk = chunk };
	struct pc_warmer *w;
	struct pc_warm_result r;
	struct outcome out = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY);

	fstat(fd, &st);
	pc_budget_init(&b, max, 0);
	/* the warmer takes fd */
	if ((out.new_rc = pc_warmer_new(&o, &w)) < 0) {
		out.add_rc = -999;
		return out;
	}
	out.add_rc = pc_warmer_add(w, fd, path, &st, 0, 0);
	/* with a maximum, a second file after it: refused where the budget stopped */
	if (max)
		out.add2_rc = pc_warmer_add(w, open(path, O_RDONLY), path, &st, 0, 0);
	if (shrink_to != UINT64_MAX)
		truncate(path, (off_t)shrink_to);
	out.drain_rc = pc_warmer_drain(w);
	if (pc_warmer_next_result(w, &r)) {
		out.err = r.err;
		out.pages = r.pages;
		out.res = r.resident;
		out.read = r.read;
		out.cut = r.cut;
		out.by_read = r.by_read;
		out.denied = r.denied;
	}
	pc_warmer_free(w);
	pc_budget_release(&b);
	return out;
}

/* Warm [off, off + len) with no budget: a file partly cached. */
static struct outcome warm_range(const char *path, uint64_t off, uint64_t len)
{
	struct pc_budget b;
	struct pc_warm_opts o = { .budget = &b };
	struct pc_warmer *w;
	struct outcome out = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY);

	fstat(fd, &st);
	pc_budget_init(&b, 0, 0);
	pc_warmer_new(&o, &w);
	out.add_rc = pc_warmer_add(w, fd, path, &st, off, len);
	out.drain_rc = pc_warmer_drain(w);
	pc_warmer_free(w);
	pc_budget_release(&b);
	return out;
}

int main(void)
{
	uint64_t ps = pc_page_size(), pages = 4096;	/* 16 MiB with 4 KiB pages */
	char *path = strdup(make_file("f", (size_t)(pages * ps)));
	struct outcome o;
	struct pc_memstat m;
	bool have_cs;

	faults_reset();
	have_cs = pc_have_cachestat();
	drop_file(path);
	o = warm(path, PC_ENGINE_THREADS, 0, 0, UINT64_MAX);
	ok(o.add_rc == 0 && o.drain_rc == 0 && o.err == 0, "readahead engine warms");
	ok(o.res == pages && !o.by_read, "every page verified resident by mincore (%llu)",
	   (unsigned long long)o.res);
	is_resident(resident(path), pages, "mincore agrees: all resident");
	is_u64(o.read, pages, "all pages were read (cold)");

	drop_file(path);
	o = warm(path, PC_ENGINE_URING, 0, 0, UINT64_MAX);
	if (o.add_rc == -999 && (o.new_rc == -ENOSYS || o.new_rc == -EPERM)) {
		skip(o.new_rc == -ENOSYS ? "no io_uring: io_uring_setup is ENOSYS here"
					 : "io_uring_setup refused (EPERM: io_uring_disabled, or a seccomp filter)",
		     "io_uring engine");
	} else if (o.add_rc == -999) {
		ok(0, "io_uring engine: pc_warmer_new: %s", strerror(-o.new_rc));
	} else {
		ok(o.err == 0 && o.res == pages, "io_uring engine warms all pages");
		is_resident(resident(path), pages, "mincore agrees after io_uring");
	}

	/* Small files too are checked with mincore. */
	{
		char *small = strdup(make_file("small", 64 << 10));

		drop_file(small);
		o = warm(small, PC_ENGINE_THREADS, 0, 0, UINT64_MAX);
		ok(o.err == 0 && !o.by_read && o.res == (64 << 10) / ps,
		   "a 64 KiB file is warmed and checked");
		is_resident(resident(small), (64 << 10) / ps, "mincore agrees for the small file");
		free(small);
	}

	/* Page runs (restore): exactly those pages, verified. */
	{
		uint64_t runs[] = { 0, 10, 100, 50, 4000, 96 };
		struct pc_budget b;
		struct pc_warm_opts wo = { .budget = &b };
		struct pc_warmer *w;
		struct pc_warm_result r = { 0 };
		struct stat st;
		int fd = open(path, O_RDONLY);

		drop_file(path);
		fstat(fd, &st);
		pc_budget_init(&b, 0, 0);
		pc_warmer_new(&wo, &w);
		ok(pc_warmer_add_runs(w, fd, path, &st, runs, 3) == 0, "add three runs");
		pc_warmer_drain(w);
		pc_warmer_next_result(w, &r);
		ok(r.err == 0 && r.pages == 156 && r.resident == 156 && r.read == 156,
		   "runs: 156 pages wanted, read and verified (%llu/%llu)",
		   (unsigned long long)r.resident, (unsigned long long)r.pages);
		ok(resident(path) >= 156 && resident(path) <= 156 + 64,
		   "and not much else (%llu resident)", (unsigned long long)resident(path));
		pc_warmer_free(w);
		pc_budget_release(&b);

		/* runs of a file that shrinks under the warm: ESTALE, no SIGBUS */
		{
			char *sh = strdup(make_file("shrinks", (size_t)(4096 * ps)));
			struct pc_warm_result r2 = { 0 };

			drop_file(sh);
			fd = open(sh, O_RDONLY);
			fstat(fd, &st);
			pc_budget_init(&b, 0, 0);
			pc_warmer_new(&wo, &w);
			pc_warmer_add_runs(w, fd, sh, &st, runs, 3);
			truncate(sh, (off_t)(1000 * ps));
			pc_warmer_drain(w);
			pc_warmer_next_result(w, &r2);
			ok(r2.err == ESTALE && r2.resident <= 60,
			   "runs past a shrink: ESTALE, only what is left counts (%d, %llu)", r2.err,
			   (unsigned long long)r2.resident);
			pc_warmer_free(w);
			pc_budget_release(&b);
			free(sh);
		}
	}

	/* The kernel's silent cap, at its worst: each readahead gets one page. */
	drop_file(path);
	pc_sys_inject(PC_SYS_READAHEAD, -1, 0, 0);
	o = warm(path, PC_ENGINE_THREADS, 0, 0, UINT64_MAX);
	faults_reset();
	ok(o.err == 0 && o.res == pages, "short readahead: verification fills the gaps");
	is_resident(resident(path), pages, "mincore agrees after short readahead");

	/* Small chunks: many requests, same result. */
	drop_file(path);
	o = warm(path, PC_ENGINE_AUTO, 0, 64 << 10, UINT64_MAX);
	is_resident(resident(path), pages, "64 KiB chunks warm everything");

	/* I/O errors are the file's failure, named, not a crash. */
	drop_file(path);
	pc_sys_inject(PC_SYS_READAHEAD, EIO, 0, 0);
	pc_sys_inject(PC_SYS_PREAD, EIO, 0, 0);
	o = warm(path, PC_ENGINE_THREADS, 0, 0, UINT64_MAX);
	faults_reset();
	ok(o.err == EIO && o.res < pages, "EIO is reported for the file (err %d)", o.err);

	/* Permission gate closed (cachestat EPERM): read it all instead. */
	if (have_cs) {
		drop_file(path);
		pc_sys_inject(PC_SYS_CACHESTAT, EPERM, 0, 0);
		o = warm(path, PC_ENGINE_THREADS, 0, 0, UINT64_MAX);
		faults_reset();
		ok(o.err == 0 && o.denied && o.by_read && o.res == pages,
		   "files mincore may not check are read in full");
		is_resident(resident(path), pages, "and are resident");
	} else {
		skip("no cachestat", "files mincore may not check (cachestat EPERM) are read in full");
		skip("no cachestat", "and are resident");
	}

	/* A short budget cuts the file where the grant ends, and says so. */
	drop_file(path);
	o = warm(path, PC_ENGINE_THREADS, 1 << 20, 0, UINT64_MAX);
	ok(o.add_rc == 0 && o.drain_rc == -ENOSPC && o.add2_rc == -ENOSPC,
	   "a 1 MiB budget takes part of a cold file of 4096 pages, then stops (%d %d %d)",
	   o.add_rc, o.drain_rc, o.add2_rc);
	ok(o.err == 0 && o.read == (1 << 20) / ps && o.res == o.read && o.cut == pages - o.read &&
		   o.pages == pages,
	   "the first 1 MiB is read and verified, the rest cut (read %llu, cut %llu)",
	   (unsigned long long)o.read, (unsigned long long)o.cut);
	ok(resident(path) >= (1 << 20) / ps && resident(path) < 512,
	   "and not much else was read (%llu pages)", (unsigned long long)resident(path));

	/* Partly cached: the cut falls at the 256th page it lacks, not the 256th page. */
	{
		uint64_t before;

		drop_file(path);
		o = warm_range(path, 0, 100 * ps);
		before = resident(path);
		o = warm(path, PC_ENGINE_THREADS, 1 << 20, 0, UINT64_MAX);
		ok(o.err == 0 && o.read == (1 << 20) / ps && o.res == before + o.read &&
			   o.cut == pages - o.res,
		   "partly cached: %llu cached pages and 256 read, the rest cut (%llu, %llu)",
		   (unsigned long long)before, (unsigned long long)o.res,
		   (unsigned long long)o.cut);
	}

	/*
	 * Cached pages past the cut are in memory all the same: counted
	 * resident, not cut (the cut is what the budget kept out).
	 */
	{
		uint64_t before, now;

		drop_file(path);
		o = warm_range(path, pages / 2 * ps, pages / 2 * ps);
		before = resident(path);
		o = warm(path, PC_ENGINE_THREADS, 1 << 20, 0, UINT64_MAX);
		now = resident(path);
		ok(o.err == 0 && o.read == (1 << 20) / ps && o.pages == pages &&
			   o.res == before + o.read && o.cut == pages - before - o.read,
		   "cached pages past the cut: resident %llu (cached %llu + read %llu), cut %llu",
		   (unsigned long long)o.res, (unsigned long long)before,
		   (unsigned long long)o.read, (unsigned long long)o.cut);
		ok(now >= o.res, "  and resident they are (%llu)", (unsigned long long)now);
	}

	/* Runs: whole runs while they fit, the one that crosses cut inside. */
	{
		uint64_t runs[] = { 0, 10, 100, 50, 4000, 96 };
		struct pc_budget b;
		struct pc_warm_opts wo = { .budget = &b };
		struct pc_warmer *w;
		struct pc_warm_result r = { 0 };
		struct stat st;
		int fd = open(path, O_RDONLY), rc, rc2;

		drop_file(path);
		fstat(fd, &st);
		pc_budget_init(&b, 100 * ps, 0);
		pc_warmer_new(&wo, &w);
		rc = pc_warmer_add_runs(w, fd, path, &st, runs, 3);
		rc2 = pc_warmer_add_runs(w, open(path, O_RDONLY), path, &st, runs, 3);
		pc_warmer_drain(w);
		pc_warmer_next_result(w, &r);
		ok(rc == 0 && rc2 == -ENOSPC && r.err == 0 && r.pages == 156 && r.read == 100 &&
			   r.resident == 100 && r.cut == 56,
		   "runs cut at 100 pages: %d %d, %llu read, %llu resident, %llu cut", rc, rc2,
		   (unsigned long long)r.read, (unsigned long long)r.resident,
		   (unsigned long long)r.cut);
		ok(resident(path) >= 100 && resident(path) <= 100 + 64,
		   "and the third run is read only to the cut (%llu resident)",
		   (unsigned long long)resident(path));
		pc_warmer_free(w);
		pc_budget_release(&b);
	}

	/* Where mincore may not be asked, every page counts as lacking: the same cut. */
	if (have_cs) {
		drop_file(path);
		pc_sys_inject(PC_SYS_CACHESTAT, EPERM, 0, 0);
		o = warm(path, PC_ENGINE_THREADS, 1 << 20, 0, UINT64_MAX);
		faults_reset();
		ok(o.add_rc == 0 && o.denied && o.read == (1 << 20) / ps &&
			   o.res == o.read && o.cut == pages - o.read,
		   "denied: cut after 1 MiB as well (%llu read, %llu cut)",
		   (unsigned long long)o.read, (unsigned long long)o.cut);
	} else {
		skip("no cachestat", "denied: cut after 1 MiB as well");
	}

	/* A budget with nothing left refuses the file. */
	{
		struct pc_budget b;

		pc_memstat_read(&m);
		pc_budget_init(&b, 0, m.mem_total * 2);
		drop_file(path);
		{
			struct pc_warm_opts wo = { .budget = &b };
			struct pc_warmer *w;
			struct stat st;
			int fd = open(path, O_RDONLY);

			fstat(fd, &st);
			pc_warmer_new(&wo, &w);
			ok(pc_warmer_add(w, fd, path, &st, 0, 0) == -ENOSPC,
			   "a budget with no room refuses the file");
			pc_warmer_free(w);
		}
		pc_budget_release(&b);
	}

	/* A file that shrinks under the warm: the file's failure, no SIGBUS. */
	drop_file(path);
	o = warm(path, PC_ENGINE_THREADS, 0, 64 << 10, pages * ps / 4);
	ok(o.err == ESTALE || o.err == 0, "shrinking file: reported, not fatal (err %d)", o.err);
	ok(o.res <= pages / 4, "only what is left of it counts (%llu pages)",
	   (unsigned long long)o.res);

	ok(pc_memstat_read(&m) == 0 && m.mem_total && m.mem_available, "meminfo read");
	{
		static const char *const keys[] = { "MemTotal", "NoSuchField", "Cached" };
		uint64_t v[3] = { 0, 7, 0 };

		ok(pc_meminfo_read(keys, v, 3) == 2 && v[0] == m.mem_total && v[1] == 7 && v[2],
		   "pc_meminfo_read: the fields found, in bytes; a missing one left as it was");
	}
	{
		struct pc_budget b;

		pc_budget_init(&b, 0, m.mem_total * 2);
		ok(!pc_budget_take(&b, 4096) && b.stopped == PC_BUDGET_MEMORY,
		   "a reserve above MemAvailable grants nothing");
		pc_budget_release(&b);
		pc_budget_init(&b, 10000, 0);
		ok(pc_budget_take(&b, 8192) && !pc_budget_take(&b, 8192) &&
			   b.stopped == PC_BUDGET_MAX,
		   "--max-mem is a hard cap");
		ok(!pc_budget_take(&b, 1), "and stays stopped");
		pc_budget_release(&b);
		pc_budget_init(&b, 10000, 0);
		ok(pc_budget_take_some(&b, 16384, 4096) == 8192 && b.stopped == PC_BUDGET_MAX,
		   "take_some grants what fits, in whole units, and stops");
		ok(pc_budget_take_some(&b, 4096, 4096) == 0, "and then grants nothing");
		pc_budget_release(&b);
		pc_budget_init(&b, 1 << 20, 0);
		ok(pc_budget_take_some(&b, 8192, 4096) == 8192 && !b.stopped &&
			   pc_budget_take_some(&b, 1000, 4096) == 1000 && !b.stopped,
		   "take_some grants all that fits, rounded only when short");
		pc_budget_release(&b);
		pc_budget_init(&b, 0, m.mem_total * 2);
		ok(pc_budget_take_some(&b, 8192, 4096) == 0 && b.stopped == PC_BUDGET_MEMORY,
		   "take_some: no headroom, nothing granted");
		pc_budget_release(&b);
	}
	free(path);
	rm_scratch();
	return done_testing();
}
