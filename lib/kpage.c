/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kpage.c: which cached pages of a file are on the active LRU list, read
 * from /proc/kpageflags the way tools/mm/page-types.c does: map the file,
 * touch only the pages mincore says are resident (MADV_RANDOM: no
 * readahead), read their PFNs from /proc/self/pagemap, then each PFN's
 * flags, and set MADV_SEQUENTIAL before unmapping so the touches are not
 * harvested as accesses. Touching is a plain read: MADV_POPULATE_READ
 * was tried and marks every page accessed (GUP's FOLL_TOUCH), which made
 * the probe activate what it measured. A touch of a page the file no
 * longer has raises SIGBUS; a thread-local jump turns that into -ESTALE.
 * Needs CAP_SYS_ADMIN in the initial user namespace: pagemap reads PFNs
 * as 0 without it (-EPERM then). Without it in our own effective set it
 * cannot be there either, so that is checked first and no page is
 * touched for nothing. /proc/kpageflags and /proc/kpagecgroup are root's,
 * mode 0400: reading them is a file permission (uid 0, or
 * CAP_DAC_READ_SEARCH), -EACCES. A page evicted between mincore and the
 * touch is read back in and charged to the caller; the kernel offers no
 * way around that race.
 *
 * "Active" is the classic LRU's: PG_active, set when a page on the inactive
 * list is accessed again. The multi-gen LRU (CONFIG_LRU_GEN, 6.1+; on where
 * /sys/kernel/mm/lru_gen/enabled has bit 0 set) keeps pages in generations
 * instead, and lru_gen_add_folio() clears PG_active as it puts a folio on
 * them, so kpageflags' ACTIVE bit says nothing of how hot a page is there;
 * nor do generations show in kpageflags. There pc_fd_active_runs refuses
 * (-EOPNOTSUPP) and active pages are unknown, never "none". On the classic
 * LRU, test-kpage sees 256 of 256 pages read twice ACTIVE and 0 of 256 read
 * once and probed (6.18); MGLRU was not checked on a kernel that has it
 * (the build machine's is built without CONFIG_LRU_GEN).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define KPF_ACTIVE 6
#define PM_PRESENT (1ull << 63)
#define PM_PFN_MASK ((1ull << 55) - 1)
#define BATCH 512			/* pages per pagemap read */
#define LRU_GEN_ENABLED "/sys/kernel/mm/lru_gen/enabled"

/*
 * volatile: stored before the touches and cleared after them, with no
 * call between, the first store is dead to the compiler (-O2 drops it),
 * and the handler would find no jump: SIGBUS would end the process.
 */
static __thread sigjmp_buf *volatile touch_jump;
static struct sigaction old_bus;
static pthread_once_t bus_once = PTHREAD_ONCE_INIT;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (touch_jump)
		siglongjmp(*touch_jump, 1);
	/* not ours: what was there before */
	if (old_bus.sa_flags & SA_SIGINFO)
		old_bus.sa_sigaction(sig, si, uc);
	else if (old_bus.sa_handler != SIG_IGN && old_bus.sa_handler != SIG_DFL)
		old_bus.sa_handler(sig);
	else {
		signal(SIGBUS, SIG_DFL);
		raise(SIGBUS);
	}
}

static void install_bus(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &old_bus);
}

/* Read one byte of each page given; -ESTALE if the file shrank under us. */
static int touch(const volatile uint8_t *map, uint64_t first, uint64_t n, uint64_t ps)
{
	sigjmp_buf jb;
	uint8_t sum = 0;

	/*
	 * No mask to save (a system call a file): the handler runs with
	 * SA_NODEFER and an empty sa_mask, so the jump out of it leaves the
	 * mask as it was.
	 */
	if (sigsetjmp(jb, 0)) {
		touch_jump = NULL;
		return -ESTALE;
	}
	touch_jump = &jb;
	for (uint64_t k = first; k < first + n; k++)
		sum += map[k * ps];
	touch_jump = NULL;
	(void)sum;
	return 0;
}

struct acc {
	uint64_t *runs;
	size_t n, cap;
};

static int acc_add(struct acc *a, uint64_t page)
{
	if (a->n && a->runs[2 * (a->n - 1)] + a->runs[2 * (a->n - 1) + 1] == page) {
		a->runs[2 * (a->n - 1) + 1]++;
		return 0;
	}
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 16;
		uint64_t *nr = realloc(a->runs, nc * 2 * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		a->runs = nr;
		a->cap = nc;
	}
	a->runs[2 * a->n] = page;
	a->runs[2 * a->n + 1] = 1;
	a->n++;
	return 0;
}

/*
 * The checks and opens of a probe, once: k->err is why no page can be
 * probed (-EOPNOTSUPP for active pages under the multi-gen LRU, -EPERM,
 * -EACCES, -ENOENT), in the order a single probe meets them, and every
 * probe through k returns it. The fds are shared by threads (pread).
 */
void pc_kpage_open(struct pc_kpage *k, bool active, bool want_cgroup)
{
	k->pmfd = k->kfd = k->cfd = -1;
	/* on, or cannot tell: PG_active would read as "nothing is hot" */
	k->err = active && pc_lru_gen_enabled() != 0 ? -EOPNOTSUPP : 0;
	if (k->err == 0 && !pc_have_cap(CAP_SYS_ADMIN))
		k->err = -EPERM;
	if (k->err < 0)
		return;
	pthread_once(&bus_once, install_bus);
	k->pmfd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	k->kfd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (want_cgroup)
		k->cfd = open("/proc/kpagecgroup", O_RDONLY | O_CLOEXEC);
	if (k->pmfd < 0 || k->kfd < 0 || (want_cgroup && k->cfd < 0))
		k->err = -errno;
}

void pc_kpage_close(struct pc_kpage *k)
{
	if (k->pmfd >= 0)
		close(k->pmfd);
	if (k->kfd >= 0)
		close(k->kfd);
	if (k->cfd >= 0)
		close(k->cfd);
	k->pmfd = k->kfd = k->cfd = -1;
}

/*
 * Pages [first, first + n) (n <= BATCH, all resident by mincore) of a
 * mapping whose page 0 is the file's page base, made MADV_RANDOM: touched,
 * their PFNs read from pagemap, then the flags (and cgroups) of each run
 * of consecutive PFNs with one read, not one a page (a small file's folio
 * is one such run), handed to cb page by page, in page order.
 */
static int probe_run(const struct pc_kpage *k, const uint8_t *map, uint64_t base, uint64_t first,
		     uint64_t n, pc_page_cb cb, void *arg)
{
	uint64_t ps = pc_page_size(), pm[BATCH], fl[BATCH], cg[BATCH];
	const uint8_t *at = map + (first - base) * ps;
	int rc = touch(at, 0, n, ps);

	if (rc == 0 && pread(k->pmfd, pm, n * 8, (off_t)((uintptr_t)at / ps * 8)) != (ssize_t)(n * 8))
		rc = -EIO;
	for (uint64_t j = 0; j < n && rc == 0;) {
		uint64_t pfn = pm[j] & PM_PFN_MASK, m = 1;
		ssize_t got, gotc = 0;

		if (!(pm[j] & PM_PRESENT)) {
			j++;
			continue;
		}
		if (!pfn)
			return -EPERM;	/* PFNs hidden: not CAP_SYS_ADMIN in the initial namespace */
		while (j + m < n && (pm[j + m] & PM_PRESENT) && (pm[j + m] & PM_PFN_MASK) == pfn + m)
			m++;
		got = pread(k->kfd, fl, m * 8, (off_t)(pfn * 8));
		if (k->cfd >= 0)
			gotc = pread(k->cfd, cg, m * 8, (off_t)(pfn * 8));
		/* a page whose flags cannot be read is left out; its cgroup unread is none */
		for (uint64_t i = 0; i < m && rc == 0 && got >= (ssize_t)(8 * (i + 1)); i++)
			rc = cb(first + j + i, fl[i], gotc >= (ssize_t)(8 * (i + 1)) ? cg[i] : 0, arg);
		j += m;
	}
	return rc;
}

/* the runs given, each mapped BATCH pages at a time */
static int probe(const struct pc_kpage *k, int fd, uint64_t size, const uint64_t *runs,
		 size_t nruns, pc_page_cb cb, void *arg)
{
	uint64_t ps = pc_page_size();
	int rc = k->err;

	for (size_t i = 0; i < nruns && rc == 0; i++) {
		for (uint64_t p = runs[2 * i]; p < runs[2 * i] + runs[2 * i + 1] && rc == 0;) {
			uint64_t n = runs[2 * i] + runs[2 * i + 1] - p;
			uint8_t *map;
			int err = 0;

			if (n > BATCH)
				n = BATCH;
			if (p * ps >= size)
				break;
			map = pc_sys_mmap(n * ps, PROT_READ, MAP_SHARED, fd, p * ps, &err);
			if (!map) {
				rc = err;
				break;
			}
			madvise(map, n * ps, MADV_RANDOM);
			/* resident pages only (per the caller's runs): no I/O, no charge */
			rc = probe_run(k, map, p, p, n, cb, arg);
			madvise(map, n * ps, MADV_SEQUENTIAL);	/* leave reference bits alone */
			munmap(map, n * ps);
			p += n;
		}
	}
	return rc;
}

int pc_fd_probe_pages(int fd, uint64_t size, const uint64_t *runs, size_t nruns,
		      bool want_cgroup, pc_page_cb cb, void *arg)
{
	struct pc_kpage k;
	int rc;

	pc_kpage_open(&k, false, want_cgroup);
	rc = probe(&k, fd, size, runs, nruns, cb, arg);
	pc_kpage_close(&k);
	return rc;
}

int pc_lru_gen_parse(const char *text)
{
	unsigned long caps;
	char *end;

	if (!text)
		return -EINVAL;
	errno = 0;
	caps = strtoul(text, &end, 16);	/* "0x0007\n": LRU_GEN_CORE is bit 0 */
	if (errno || end == text || (*end && strcmp(end, "\n")))
		return -EINVAL;
	return caps & 1;
}

int pc_lru_gen_enabled(void)
{
	char buf[32];
	ssize_t n;
	int fd = open(LRU_GEN_ENABLED, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;	/* not built: classic LRU */
	n = read(fd, buf, sizeof(buf) - 1);
	rc = n < 0 ? -errno : 0;
	close(fd);
	if (rc < 0)
		return rc;
	buf[n] = 0;
	return pc_lru_gen_parse(buf);
}

static int active_cb(uint64_t page, uint64_t flags, uint64_t cg, void *arg)
{
	(void)cg;
	return flags & (1ull << KPF_ACTIVE) ? acc_add(arg, page) : 0;
}

int pc_fd_active_runs(int fd, uint64_t size, const uint64_t *runs, size_t nruns,
		      uint64_t **ret, size_t *ret_n)
{
	struct pc_kpage k;
	struct acc a = { 0 };
	int rc;

	pc_kpage_open(&k, true, false);
	rc = probe(&k, fd, size, runs, nruns, active_cb, &a);
	pc_kpage_close(&k);
	if (rc < 0) {
		free(a.runs);
		return rc;
	}
	*ret = a.runs;
	*ret_n = a.n;
	return 0;
}

struct win {
	const struct pc_kpage *k;
	struct acc a;
	int err;
};

/*
 * A window residency mapped for mincore: its resident pages probed
 * there, as probe() would in mappings of its own (MADV_RANDOM while
 * touched, MADV_SEQUENTIAL before the unmap), until one fails.
 */
static void active_window(const uint8_t *map, uint64_t first, uint64_t n,
			  const unsigned char *vec, void *arg)
{
	struct win *w = arg;
	uint64_t ps = pc_page_size(), i = 0;

	while (i < n && !(vec[i] & 1))
		i++;
	if (w->err || i == n)
		return;
	madvise((void *)map, n * ps, MADV_RANDOM);
	while (i < n && w->err == 0) {
		uint64_t j = i + 1;

		while (j < n && (vec[j] & 1) && j - i < BATCH)
			j++;
		w->err = probe_run(w->k, map, first, first + i, j - i, active_cb, &w->a);
		for (i = j; i < n && !(vec[i] & 1); i++)
			;
	}
	madvise((void *)map, n * ps, MADV_SEQUENTIAL);
}

int pc_kpage_resident_runs(const struct pc_kpage *k, int fd, uint64_t size, uint64_t off,
			   uint64_t len, uint64_t **runs, size_t *nruns, uint64_t **active,
			   size_t *nactive, int *active_err)
{
	struct win w = { .k = k, .err = k->err };
	int rc = pc_fd_resident_runs_win(fd, size, off, len, active_window, &w, runs, nruns);

	if (rc < 0 || w.err < 0) {
		free(w.a.runs);
		w.a = (struct acc){ 0 };
	}
	*active = w.a.runs;
	*nactive = w.a.n;
	*active_err = w.err;
	return rc;
}

const char *pc_kpage_reason(int err, bool want_cgroup)
{
	switch (err) {
	case EPERM:
		if (pc_have_cap(CAP_SYS_ADMIN))	/* ours, but not the initial namespace's */
			return want_cgroup ? "needs CAP_SYS_ADMIN in the initial user namespace "
					     "(kpagecgroup; a container's is not enough)"
					   : "needs CAP_SYS_ADMIN in the initial user namespace "
					     "(kpageflags; a container's is not enough)";
		return want_cgroup ? "needs CAP_SYS_ADMIN (kpagecgroup)"
				   : "needs CAP_SYS_ADMIN (kpageflags)";
	case EACCES:
		return want_cgroup ? "needs read permission on /proc/kpageflags and /proc/kpagecgroup "
				     "(root's, mode 0400: uid 0 or CAP_DAC_READ_SEARCH)"
				   : "needs read permission on /proc/kpageflags (root's, mode 0400: "
				     "uid 0 or CAP_DAC_READ_SEARCH)";
	case ENOENT:
		return want_cgroup ? "this kernel has no /proc/kpageflags or /proc/kpagecgroup "
				     "(CONFIG_PROC_PAGE_MONITOR, CONFIG_MEMCG)"
				   : "this kernel has no /proc/kpageflags (CONFIG_PROC_PAGE_MONITOR)";
	case ESTALE:
		return "the file shrank while its pages were read";
	case EOPNOTSUPP:
		return "the multi-gen LRU is on (" LRU_GEN_ENABLED "): pages are kept in "
		       "generations, not on an active list, and kpageflags' ACTIVE bit is "
		       "cleared on them, so active pages are unknown";
	default:
		return strerror(err);
	}
}
