/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * kpage.c, from the outside in: the active-page probe as snapshot uses it
 * (pc_fd_scan's resident runs into pc_fd_active_runs) on two files, one
 * read once and one read twice; and its refusals, in forked children that
 * give up capabilities with capset(2): without CAP_SYS_ADMIN it is -EPERM
 * before any page is touched (pages dropped behind the runs it is given
 * stay out of the cache), and without read permission on /proc/kpageflags
 * (uid 65534, CAP_SYS_ADMIN kept) it is -EACCES. test-kpage has the parser
 * of the multi-gen LRU's switch and the probe's raw flags.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "tap.h"

#include <linux/capability.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

struct runs {
	uint64_t r[2 * 64];
	size_t n;
};

static int run_cb(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct runs *rs = arg;

	if (!resident)
		return 0;
	if (rs->n == 64)
		return -E2BIG;
	rs->r[2 * rs->n] = first;
	rs->r[2 * rs->n + 1] = n;
	rs->n++;
	return 0;
}

static uint64_t sum(const uint64_t *runs, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += runs[2 * i + 1];
	return s;
}

/* Are all of a's pages inside b's runs? */
static bool inside(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	for (size_t i = 0; i < na; i++) {
		bool in = false;

		for (size_t k = 0; k < nb && !in; k++)
			in = a[2 * i] >= b[2 * k] && a[2 * i] + a[2 * i + 1] <= b[2 * k] + b[2 * k + 1];
		if (!in)
			return false;
	}
	return true;
}

/* Take `cap` out of this (single-threaded) process's effective and permitted sets. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	d[cap / 32].effective &= ~(1u << (cap % 32));
	d[cap / 32].permitted &= ~(1u << (cap % 32));
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

/* Become uid 65534 keeping CAP_SYS_ADMIN (and no other) in effect. */
static int become_nobody_with_sys_admin(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { 0 };

	if (prctl(PR_SET_KEEPCAPS, 1) < 0 || setresgid(65534, 65534, 65534) < 0 ||
	    setresuid(65534, 65534, 65534) < 0)
		return -errno;
	d[CAP_SYS_ADMIN / 32].effective = d[CAP_SYS_ADMIN / 32].permitted = 1u << (CAP_SYS_ADMIN % 32);
	return syscall(SYS_capset, &h, d) < 0 ? -errno : 0;
}

static uint64_t resident(int fd, uint64_t size)
{
	struct pc_residency r;

	return pc_fd_residency(fd, size, 0, 0, &r) == 0 && r.source != PC_SRC_NONE ? r.cached
										    : UINT64_MAX;
}

/*
 * In a child: drop privilege with how(), then probe fd's pages [0, pages)
 * as if all were resident. The child exits with 100 + -rc (or 99 if it
 * could not drop, 96 if the probe went ahead); 98 here if a page came back
 * in: the probe touched it (asked here: uid 65534 may not ask cachestat).
 */
static int probe_as(int (*how)(void), int fd, uint64_t pages)
{
	uint64_t all[2] = { 0, pages }, *act = NULL;
	size_t nact = 0;
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		int rc;

		if (how() < 0)
			_exit(99);
		rc = pc_fd_probe_pages(fd, pages * pc_page_size(), all, 1, false, NULL, NULL);
		if (rc == 0)
			_exit(96);
		if (pc_fd_active_runs(fd, pages * pc_page_size(), all, 1, &act, &nact) != rc &&
		    pc_lru_gen_enabled() == 0)
			_exit(97);
		_exit(100 + -rc);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	if (WEXITSTATUS(st) != 99 && resident(fd, pages * pc_page_size()) != 0)
		return 98;
	return WEXITSTATUS(st);
}

static int no_sys_admin(void)
{
	return drop_cap(CAP_SYS_ADMIN);
}

int main(void)
{
	uint64_t ps = pc_page_size(), pages = 256, size = pages * ps;
	char once_path[512], twice_path[512];
	int mglru = pc_lru_gen_enabled(), fo, ft, rc;

	snprintf(once_path, sizeof(once_path), "%s", make_file("once", (size_t)size));
	snprintf(twice_path, sizeof(twice_path), "%s", make_file("twice", (size_t)size));

	if (!pc_have_cap(CAP_SYS_ADMIN) || access("/proc/kpageflags", R_OK) != 0) {
		skip("needs CAP_SYS_ADMIN and read access to /proc/kpageflags",
		     "active runs: read once vs twice");
		skip("needs CAP_SYS_ADMIN to give up", "refused without CAP_SYS_ADMIN");
		skip("needs CAP_SYS_ADMIN to keep", "refused without read access to kpageflags");
		rm_scratch();
		return done_testing();
	}
	fo = open(once_path, O_RDONLY);
	ft = open(twice_path, O_RDONLY);
	drop_file(once_path);
	drop_file(twice_path);
	cache_file(once_path);
	cache_file(twice_path);
	cache_file(twice_path);
	{
		struct runs ro = { .n = 0 }, rt = { .n = 0 };
		uint64_t *ao = NULL, *at = NULL;
		size_t nao = 0, nat = 0;
		int rco, rct;

		rco = pc_fd_scan(fo, size, 0, 0, run_cb, &ro);
		rct = pc_fd_scan(ft, size, 0, 0, run_cb, &rt);
		ok(rco == 0 && rct == 0 && sum(ro.r, ro.n) == pages && sum(rt.r, rt.n) == pages,
		   "pc_fd_scan: both files wholly resident (%llu, %llu of %llu)",
		   (unsigned long long)sum(ro.r, ro.n), (unsigned long long)sum(rt.r, rt.n),
		   (unsigned long long)pages);
		rco = pc_fd_active_runs(fo, size, ro.r, ro.n, &ao, &nao);
		rct = pc_fd_active_runs(ft, size, rt.r, rt.n, &at, &nat);
		if (mglru != 0) {
			ok(rco == -EOPNOTSUPP && rct == -EOPNOTSUPP,
			   "the multi-gen LRU is on (or unreadable): both refused, -EOPNOTSUPP");
			skip("the multi-gen LRU is on here", "classic LRU: read once vs twice");
			skip("the multi-gen LRU is on here", "active runs inside the resident ones");
		} else {
			ok(rco == 0 && rct == 0, "classic LRU: both probed (%d, %d)", rco, rct);
			/* a few may wait in a CPU's activation batch, or be aged by reclaim */
			ok(sum(ao, nao) <= pages / 4 && sum(at, nat) >= pages / 2,
			   "read once: %llu active; read twice: %llu active (of %llu)",
			   (unsigned long long)sum(ao, nao), (unsigned long long)sum(at, nat),
			   (unsigned long long)pages);
			ok(inside(ao, nao, ro.r, ro.n) && inside(at, nat, rt.r, rt.n),
			   "active runs lie inside the resident runs given");
		}
		free(ao);
		free(at);
	}

	/* refusals: pages behind the runs dropped, so a touch would show */
	drop_file(once_path);
	rc = resident(fo, size);
	if (rc != 0) {
		skip("the file's pages could not be dropped first", "refused without CAP_SYS_ADMIN");
	} else {
		rc = probe_as(no_sys_admin, fo, pages);
		ok(rc == 100 + EPERM, "without CAP_SYS_ADMIN: -EPERM, and no page touched "
		   "(child said %d: 100+errno; 98 a page came in; 97 active_runs disagreed; 96 no refusal)", rc);
	}
	ok(strstr(pc_kpage_reason(EPERM, false), "CAP_SYS_ADMIN") != NULL,
	   "the reason for -EPERM names CAP_SYS_ADMIN");
	if (fchmod(fo, 0644) < 0 || chmod(scratch_dir(), 0755) < 0) {
		skip("cannot open the scratch file to uid 65534", "refused without kpageflags access");
	} else {
		rc = probe_as(become_nobody_with_sys_admin, fo, pages);
		if (rc == 99)
			skip("cannot become uid 65534 keeping CAP_SYS_ADMIN (setresuid, capset)",
			     "refused without kpageflags access");
		else
			ok(rc == 100 + EACCES,
			   "uid 65534 with CAP_SYS_ADMIN: -EACCES on kpageflags, no page touched (%d)", rc);
	}
	ok(strstr(pc_kpage_reason(EACCES, false), "/proc/kpageflags") != NULL,
	   "the reason for -EACCES names /proc/kpageflags");
	close(fo);
	close(ft);
	rm_scratch();
	return done_testing();
}
