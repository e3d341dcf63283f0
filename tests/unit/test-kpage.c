/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kpage.c: the page probe reads kpageflags for the pages it is given, and
 * "active" means the classic LRU's active list: a page read twice is on
 * it, a page read once is not. Where the multi-gen LRU is on, PG_active is
 * not kept, so pc_fd_active_runs refuses (-EOPNOTSUPP) and says why, rather
 * than report "no active pages". The switch's text is parsed strictly.
 */
#include "pagecache.h"
#include "tap.h"

#include <linux/capability.h>

#define KPF_LRU 5
#define KPF_ACTIVE 6

struct tally {
	uint64_t seen, lru, active;
};

static int tally_cb(uint64_t page, uint64_t flags, uint64_t cg, void *arg)
{
	struct tally *t = arg;

	(void)page;
	(void)cg;
	t->seen++;
	t->lru += flags >> KPF_LRU & 1;
	t->active += flags >> KPF_ACTIVE & 1;
	return 0;
}

static uint64_t run_pages(const uint64_t *runs, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += runs[2 * i + 1];
	return sum;
}

int main(void)
{
	uint64_t ps = pc_page_size(), pages = 256, batch;
	char *path = make_file("f", (size_t)(pages * ps));
	uint64_t all[2] = { 0, pages }, *act = NULL;
	size_t nact = 0;
	struct tally once = { 0 }, twice = { 0 };
	int mglru = pc_lru_gen_enabled(), fd, rc;

	ok(pc_lru_gen_parse("0x0007\n") == 1, "lru_gen 0x0007: on");
	ok(pc_lru_gen_parse("0x0001") == 1, "lru_gen 0x0001: on (the core bit)");
	ok(pc_lru_gen_parse("0x0000\n") == 0, "lru_gen 0x0000: off");
	ok(pc_lru_gen_parse("0x0006\n") == 0, "lru_gen 0x0006: off (no core bit)");
	ok(pc_lru_gen_parse("") == -EINVAL && pc_lru_gen_parse("y\n") == -EINVAL &&
		   pc_lru_gen_parse("0x7 junk") == -EINVAL && pc_lru_gen_parse(NULL) == -EINVAL,
	   "anything else is -EINVAL");
	ok(mglru == 0 || mglru == 1, "this kernel's multi-gen LRU: %s",
	   mglru == 1 ? "on" : mglru == 0 ? "off or not built" : "unreadable");
	ok(strstr(pc_kpage_reason(EOPNOTSUPP, false), "lru_gen/enabled") &&
		   strstr(pc_kpage_reason(EOPNOTSUPP, false), "unknown"),
	   "the refusal names the multi-gen LRU and says unknown");

	if (!pc_have_cap(CAP_SYS_ADMIN) || access("/proc/kpageflags", R_OK) != 0) {
		skip("needs CAP_SYS_ADMIN and read access to /proc/kpageflags", "page probe");
		rm_scratch();
		return done_testing();
	}
	fd = open(path, O_RDONLY);
	drop_file(path);
	cache_file(path);
	rc = pc_fd_probe_pages(fd, pages * ps, all, 1, false, tally_cb, &once);
	/*
	 * A page just read waits in its CPU's lru_add batch, on no LRU, until
	 * the batch fills or is drained: up to 15 a CPU on 6.1 (PAGEVEC_SIZE,
	 * seen in a Debian 12 guest); 31 a CPU allows for later trees' larger
	 * folio batches. 6.18 here shows none waiting.
	 */
	batch = 31 * (uint64_t)sysconf(_SC_NPROCESSORS_CONF);
	ok(rc == 0 && once.seen == pages && once.lru <= pages && once.lru + batch >= pages,
	   "read once: every page probed, on an LRU or in a CPU's batch "
	   "(%llu seen, %llu on an LRU, at most %llu batched)",
	   (unsigned long long)once.seen, (unsigned long long)once.lru,
	   (unsigned long long)batch);
	cache_file(path);
	rc = pc_fd_probe_pages(fd, pages * ps, all, 1, false, tally_cb, &twice);
	rc = rc ? rc : pc_fd_active_runs(fd, pages * ps, all, 1, &act, &nact);
	if (mglru == 0) {
		/* a few may wait in a CPU's activation batch, or be aged by reclaim */
		ok(once.active <= pages / 4, "classic LRU: read once, not active (%llu of %llu)",
		   (unsigned long long)once.active, (unsigned long long)pages);
		ok(twice.active >= pages / 2, "read twice, active (%llu of %llu)",
		   (unsigned long long)twice.active, (unsigned long long)pages);
		ok(rc == 0 && run_pages(act, nact) >= pages / 2,
		   "pc_fd_active_runs reports them (%llu)",
		   (unsigned long long)run_pages(act, nact));
		skip("the multi-gen LRU is off or not built here", "MGLRU: active pages refused");
	} else {
		skip("the multi-gen LRU is on here", "classic LRU: read once, not active");
		skip("the multi-gen LRU is on here", "classic LRU: read twice, active");
		skip("the multi-gen LRU is on here", "classic LRU: pc_fd_active_runs reports them");
		ok(rc == -EOPNOTSUPP, "MGLRU: active pages refused, not reported as none "
		   "(ACTIVE seen on %llu of %llu pages read twice)",
		   (unsigned long long)twice.active, (unsigned long long)pages);
	}
	free(act);
	close(fd);

	/*
	 * A page the file no longer has (truncated between mincore and the
	 * touch; here a run past EOF, as the race leaves it): the touch's
	 * SIGBUS is caught, -ESTALE, not the end of the process. The jump's
	 * pointer was once stored by nothing at -O2 (a dead store to the
	 * compiler), and the first truncated file killed a snapshot.
	 */
	{
		char *small = make_file("g", (size_t)ps);
		uint64_t past[2] = { 0, 2 };
		struct tally t = { 0 };

		fd = open(small, O_RDONLY);
		cache_file(small);
		rc = pc_fd_probe_pages(fd, 2 * ps, past, 1, false, tally_cb, &t);
		ok(rc == -ESTALE, "a page past EOF probed: -ESTALE, no SIGBUS (%d)", rc);
		close(fd);
	}
	rm_scratch();
	return done_testing();
}
