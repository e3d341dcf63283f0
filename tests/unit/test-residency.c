/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * residency.c: counts agree with mincore, ranges follow cachestat's page
 * rules, and the kernel's refusals come back as "unknown", never numbers.
 * Without cachestat (a kernel before 6.5; make check's second pass,
 * PAGECACHE_FAULT=cachestat:ENOSYS) the same counts come from mincore; only
 * what cachestat alone does is skipped.
 */
#include "pagecache.h"
#include "sys.h"		/* the seam: pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <linux/capability.h>

#include <sys/mman.h>
#include <sys/wait.h>

static uint64_t mincore_count(int fd, uint64_t size)
{
	uint64_t ps = pc_page_size(), pages = (size + ps - 1) / ps, n = 0;
	void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	unsigned char *vec = malloc(pages);

	if (m == MAP_FAILED || !vec || mincore(m, size, vec) < 0)
		return UINT64_MAX;
	for (uint64_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	munmap(m, size);
	free(vec);
	return n;
}

struct runs {
	uint64_t res, all, nruns;
};

static int count(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct runs *r = arg;

	(void)first;
	r->all += n;
	r->nruns++;
	if (resident)
		r->res += n;
	return 0;
}

/* Run fn in a child; the child's exit status is the number of failures. */
static int in_child(int (*fn)(const char *), const char *arg)
{
	pid_t pid = fork();
	int st;

	if (pid == 0)
		_exit(fn(arg));
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 99;
}

/* Back to the faults the environment asks for (make check's second pass). */
static void faults_reset(void)
{
	pc_sys_inject_reset();
	pc_sys_inject_env(getenv("PAGECACHE_FAULT"));
}

static int child_no_cachestat(const char *path)
{
	struct pc_residency r;
	int fd = open(path, O_RDONLY), bad = 0;
	struct stat st;

	pc_sys_inject(PC_SYS_CACHESTAT, ENOSYS, 0, 0);
	fstat(fd, &st);
	bad += pc_have_cachestat();
	bad += pc_fd_residency(fd, (uint64_t)st.st_size, 0, 0, &r) != 0;
	bad += r.source != PC_SRC_MINCORE;
	bad += r.cached != mincore_count(fd, (uint64_t)st.st_size);
	return bad;
}

static int child_nobody(const char *path)
{
	struct pc_residency r;
	struct runs rn = { 0 };
	int fd = open(path, O_RDONLY), bad = 0;
	struct stat st;

	if (fd < 0 || setgid(65534) < 0 || setuid(65534) < 0)
		return 50;
	fstat(fd, &st);
	if (pc_fd_residency_allowed(fd, &st))
		bad |= 1;
	if (pc_fd_residency(fd, (uint64_t)st.st_size, 0, 0, &r) != 0)
		bad |= 2;
	if (r.source != PC_SRC_NONE || r.err != EPERM)
		bad |= 4;
	/* without cachestat, mincore would lie: the scan must refuse */
	pc_sys_inject(PC_SYS_CACHESTAT, ENOSYS, 0, 0);
	if (pc_fd_scan(fd, (uint64_t)st.st_size, 0, 0, count, &rn) != -EPERM)
		bad |= 8;
	if (pc_fd_residency(fd, (uint64_t)st.st_size, 0, 0, &r) != 0 || r.source != PC_SRC_NONE)
		bad |= 16;
	return bad;
}

int main(void)
{
	uint64_t ps = pc_page_size(), size = 256 * ps + 100;
	char *path = make_file("f", (size_t)size);
	struct pc_residency r;
	struct runs rn = { 0 };
	char buf[4096];
	int fd = open(path, O_RDONLY);
	bool have_cs;

	faults_reset();
	have_cs = pc_have_cachestat();
	drop_file(path);
	ok(pc_fd_residency(fd, size, 0, 0, &r) == 0, "residency of an evicted file");
	is_u64(r.pages, 257, "pages include the partial last page");
	is_u64(r.cached, 0, "nothing cached after DONTNEED");
	ok(r.source == want_source(&r, have_cs), "source is %s",
	   want_source(&r, have_cs) == PC_SRC_CACHESTAT ? "cachestat"
	   : have_cs ? "mincore (an overlay's real file out of reach)" : "mincore (no cachestat)");

	posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);	/* no readahead around reads */
	for (int p = 10; p < 20; p++)
		pread(fd, buf, 1, (off_t)(p * ps));
	pread(fd, buf, 1, (off_t)(256 * ps));
	pc_fd_residency(fd, size, 0, 0, &r);
	is_u64(r.cached, mincore_count(fd, size), "the count agrees with mincore");
	is_u64(r.cached, 11, "exactly the pages read");

	pc_fd_residency(fd, size, 10 * ps, 5 * ps, &r);
	ok(r.pages == 5 && r.cached == 5, "byte range [10p, 15p) is 5 pages, all cached");
	pc_fd_residency(fd, size, 10 * ps + 1, 1, &r);
	ok(r.pages == 1 && r.cached == 1, "a one-byte range is one page");
	pc_fd_residency(fd, size, 19 * ps, 2 * ps, &r);
	ok(r.pages == 2 && r.cached == 1, "range straddling the end of a cached run");
	pc_fd_residency(fd, size, size + 5, 0, &r);
	ok(r.pages == 0, "range beyond EOF is empty");

	ok(pc_fd_scan(fd, size, 0, 0, count, &rn) == 0, "scan");
	ok(rn.res == 11 && rn.all == 257, "scan covers every page once (%llu/%llu)",
	   (unsigned long long)rn.res, (unsigned long long)rn.all);
	ok(rn.nruns == 4, "runs are merged: 0-9 10-19 20-255 256, got %llu",
	   (unsigned long long)rn.nruns);

	if (have_cs) {
		pc_sys_inject(PC_SYS_CACHESTAT, EPERM, 0, 1);
		ok(pc_fd_residency(fd, size, 0, 0, &r) == 0 && r.source == PC_SRC_NONE &&
			   r.err == EPERM,
		   "cachestat EPERM means unknown, not a number");
		pc_sys_inject(PC_SYS_CACHESTAT, EIO, 0, 1);
		ok(pc_fd_residency(fd, size, 0, 0, &r) == -EIO, "other errors are errors");
		faults_reset();
	} else {
		skip("no cachestat", "cachestat EPERM means unknown, not a number");
		skip("no cachestat", "cachestat's other errors are errors");
	}
	pc_sys_inject(PC_SYS_MINCORE, ENOMEM, 0, 1);
	rn = (struct runs){ 0 };
	ok(pc_fd_scan(fd, size, 0, 0, count, &rn) == -ENOMEM, "scan passes mincore errors on");
	pc_sys_inject(PC_SYS_MMAP, ENOMEM, 0, 1);
	ok(pc_fd_scan(fd, size, 0, 0, count, &rn) == -ENOMEM, "scan passes mmap errors on");
	faults_reset();

	/*
	 * A 1 TiB sparse file: bounded memory, windows skipped by cachestat.
	 * Without it every window is mincore'd (11 s for 1 TiB here): 64 GiB.
	 */
	{
		uint64_t ssize = have_cs ? 1ull << 40 : 1ull << 36;
		char sp[512];
		int sfd;

		snprintf(sp, sizeof(sp), "%s/sparse", scratch_dir());
		sfd = open(sp, O_RDWR | O_CREAT, 0644);
		if (sfd >= 0 && ftruncate(sfd, (off_t)ssize) == 0) {
			rn = (struct runs){ 0 };
			ok(pc_fd_scan(sfd, ssize, 0, 0, count, &rn) == 0 && rn.all == ssize / ps &&
				   rn.res == 0 && rn.nruns == 1,
			   "%s sparse file scans as one empty run", have_cs ? "1 TiB" : "64 GiB");
		} else {
			skip("cannot make a 1 TiB sparse file here", "sparse scan");
		}
		if (sfd >= 0)
			close(sfd);
	}

	ok(in_child(child_no_cachestat, path) == 0, "without cachestat, mincore counts are used");
	if (pc_have_cap(CAP_SETUID) && pc_have_cap(CAP_SETGID)) {
		chmod(path, 0644);
		int bad = in_child(child_nobody, path);

		ok(bad == 0, "as nobody on a root-owned 0644 file: unknown (EPERM), scan refused "
			     "(failure bits %d)", bad);
	} else {
		skip("needs CAP_SETUID and CAP_SETGID: becoming nobody", "unprivileged honesty");
	}
	close(fd);
	rm_scratch();
	return done_testing();
}
