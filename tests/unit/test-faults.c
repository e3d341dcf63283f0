/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Faults injected through lib/sys.c into the modules that had none: each
 * function must return the error it met, cleanly: no crash, nothing
 * claimed that did not happen (evict fails and the pages are still there;
 * a cgroup read fails rather than report "no limit"; a process list is an
 * error, not a short list that looks complete), and what it set up undone
 * (lock leaves no mapping behind; the snapshot writer leaves the old
 * snapshot as it was and no temporary file, whether write, fsync or
 * rename failed). Also: the new fault points' names.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "tap.h"

#include <sys/mman.h>

static uint64_t cached(const char *path)
{
	struct pc_residency r;
	struct stat st;
	int fd = open(path, O_RDONLY);
	uint64_t n = UINT64_MAX;

	if (fd >= 0 && fstat(fd, &st) == 0 && pc_fd_residency(fd, (uint64_t)st.st_size, 0, 0, &r) == 0 &&
	    r.source != PC_SRC_NONE)
		n = r.cached;
	if (fd >= 0)
		close(fd);
	return n;
}

/* Mappings of (dev, ino) in this process, from /proc/self/maps. */
static int my_mappings(const struct stat *st)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char *line = NULL;
	size_t cap = 0;
	int n = 0;

	while (f && getline(&line, &cap, f) > 0) {
		struct pc_map m;

		n += pc_map_parse(line, &m) == 0 && m.dev == st->st_dev && m.ino == st->st_ino;
	}
	free(line);
	if (f)
		fclose(f);
	return n;
}

static void fault_names(void)
{
	static const char *const good[] = { "read:EIO", "write:ENOSPC", "fsync:EIO",
					    "rename:ENOSPC", "sync_file_range:EIO:1:2",
					    "inotify_add_watch:ENOSPC" };

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(pc_sys_inject_env(good[i]) == 0, "PAGECACHE_FAULT=%s parses", good[i]);
	ok(pc_sys_inject_env("fsync:short") == -EINVAL, "short is still only for readahead");
	pc_sys_inject_reset();
}

static void evict(uint64_t ps)
{
	uint64_t pages = 64;
	char *p = make_file("evict", (size_t)(pages * ps));
	struct pc_evict_result r = { .synced = true };
	int fd = open(p, O_RDWR), rc;
	char buf[4096];

	cache_file(p);
	if (cached(p) != pages) {
		skip("the scratch file is not wholly resident, or residency is unknown here",
		     "evict faults");
		close(fd);
		return;
	}
	/* a dirty page, so evict writes back first */
	memset(buf, 'd', sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(buf))
		perror("pwrite");
	if (pc_have_cachestat()) {
		/* through an overlay whose real file is out of reach: fdatasync */
		pc_sys_inject(PC_SYS_SYNC_RANGE, EIO, 0, 0);
		pc_sys_inject(PC_SYS_FSYNC, EIO, 0, 0);
		rc = pc_fd_evict(fd, pages * ps, 0, 0, &r);
		pc_sys_inject_reset();
		ok(rc == -EIO, "evict: sync_file_range EIO is returned (%d)", rc);
		is_u64(cached(p), pages, "evict: ... and every page is still there");
		ok(r.synced, "evict: ... and the result is not written");
	} else {
		skip("no cachestat: evict syncs with fdatasync-free paths only there", "evict: sync_file_range EIO");
		skip("no cachestat", "evict: ... and every page is still there");
		skip("no cachestat", "evict: ... and the result is not written");
	}
	fdatasync(fd);
	pc_sys_inject(PC_SYS_FADVISE, EIO, 0, 0);
	rc = pc_fd_evict(fd, pages * ps, 0, 0, &r);
	pc_sys_inject_reset();
	ok(rc == -EIO, "evict: fadvise EIO is returned (%d)", rc);
	is_u64(cached(p), pages, "evict: ... and every page is still there");
	rc = pc_fd_evict(fd, pages * ps, 0, 0, &r);
	ok(rc == 0 && cached(p) == 0, "evict: without the fault, the pages go (%d, %llu left)", rc,
	   (unsigned long long)cached(p));
	close(fd);
}

static void lock(uint64_t ps)
{
	uint64_t pages = 16;
	char *p = make_file("lock", (size_t)(pages * ps));
	struct pc_lock l = { .addr = (void *)1, .len = 1 };
	struct stat st;
	int fd = open(p, O_RDONLY), rc;

	fstat(fd, &st);
	pc_sys_inject(PC_SYS_MMAP, ENOMEM, 0, 0);
	rc = pc_fd_lock(fd, pages * ps, 0, 0, &l);
	pc_sys_inject_reset();
	ok(rc == -ENOMEM && l.addr == (void *)1, "lock: mmap ENOMEM returned, ret untouched (%d)", rc);
	pc_sys_inject(PC_SYS_MLOCK, EPERM, 0, 0);
	rc = pc_fd_lock(fd, pages * ps, 0, 0, &l);
	pc_sys_inject_reset();
	ok(rc == -EPERM && l.addr == (void *)1, "lock: mlock EPERM returned, ret untouched (%d)", rc);
	is_u64(my_mappings(&st), 0, "lock: ... and no mapping of the file is left behind");
	pc_sys_inject(PC_SYS_MLOCK, ENOMEM, 0, 0);
	rc = pc_fd_lock(fd, pages * ps, 0, 0, &l);
	pc_sys_inject_reset();
	ok(rc == -ENOMEM && my_mappings(&st) == 0, "lock: mlock ENOMEM too (%d)", rc);
	close(fd);
}

struct warm_out {
	int new_rc, drain_rc, err;
	uint64_t pages, res;
	bool by_read;
	const char *engine;
};

static struct warm_out warm(const char *path, enum pc_engine eng)
{
	struct pc_budget b;
	struct pc_warm_opts o = { .budget = &b, .engine = eng };
	struct pc_warmer *w = NULL;
	struct pc_warm_result r;
	struct warm_out out = { 0 };
	struct stat st;
	int fd = open(path, O_RDONLY);

	fstat(fd, &st);
	pc_budget_init(&b, UINT64_MAX, 0);
	out.new_rc = pc_warmer_new(&o, &w);
	if (out.new_rc < 0) {
		close(fd);
		pc_budget_release(&b);
		return out;
	}
	out.engine = pc_warmer_engine(w);
	pc_warmer_add(w, fd, path, &st, 0, 0);
	out.drain_rc = pc_warmer_drain(w);
	if (pc_warmer_next_result(w, &r)) {
		out.err = r.err;
		out.pages = r.pages;
		out.res = r.resident;
		out.by_read = r.by_read;
	} else {
		out.err = -999;
	}
	pc_warmer_free(w);
	pc_budget_release(&b);
	return out;
}

static void prefetch(uint64_t ps)
{
	uint64_t pages = 1024;
	char *p = make_file("warm", (size_t)(pages * ps));
	struct warm_out o;

	pc_sys_inject(PC_SYS_URING, ENOSYS, 0, 0);
	o = warm(p, PC_ENGINE_URING);
	pc_sys_inject_reset();
	ok(o.new_rc == -ENOSYS, "warm: io_uring asked for and refused: -ENOSYS (%d)", o.new_rc);

	drop_file(p);
	pc_sys_inject(PC_SYS_URING, ENOSYS, 0, 0);
	o = warm(p, PC_ENGINE_AUTO);
	pc_sys_inject_reset();
	ok(o.new_rc == 0 && o.err == 0 && o.res == pages && cached(p) == pages,
	   "warm: io_uring refused under auto: warmed all the same (%s, err %d, %llu of %llu)",
	   o.engine ? o.engine : "-", o.err, (unsigned long long)o.res, (unsigned long long)pages);

	/* what cannot be verified is never claimed: the error, or proof by reading */
	drop_file(p);
	pc_sys_inject(PC_SYS_MINCORE, EIO, 0, 0);
	o = warm(p, PC_ENGINE_THREADS);
	pc_sys_inject_reset();
	ok(o.err == EIO || (o.by_read && o.res == pages && cached(p) == pages),
	   "warm: mincore EIO: the file's error, or proven by reading (err %d, by_read %d, %llu)",
	   o.err, o.by_read, (unsigned long long)o.res);
	ok(o.res <= cached(p), "warm: ... and no more claimed resident than is (%llu, %llu)",
	   (unsigned long long)o.res, (unsigned long long)cached(p));

	drop_file(p);
	pc_sys_inject(PC_SYS_MMAP, ENOMEM, 0, 0);
	o = warm(p, PC_ENGINE_THREADS);
	pc_sys_inject_reset();
	ok(o.err == ENOMEM || (o.by_read && o.res == pages && cached(p) == pages),
	   "warm: mmap ENOMEM: the file's error, or proven by reading (err %d, by_read %d, %llu)",
	   o.err, o.by_read, (unsigned long long)o.res);
	ok(o.res <= cached(p), "warm: ... and no more claimed resident than is");

	/* read in full (cachestat says EPERM): a pread that fails is the file's failure */
	if (pc_have_cachestat()) {
		drop_file(p);
		pc_sys_inject(PC_SYS_CACHESTAT, EPERM, 0, 0);
		pc_sys_inject(PC_SYS_PREAD, EIO, 0, 0);
		o = warm(p, PC_ENGINE_THREADS);
		pc_sys_inject_reset();
		ok(o.err == EIO && o.res < pages,
		   "warm by reading: pread EIO is the file's error (err %d, %llu claimed)", o.err,
		   (unsigned long long)o.res);
	} else {
		skip("no cachestat (its EPERM is what sends a file to be read in full)",
		     "warm by reading: pread EIO");
	}
}

static void cgroup(void)
{
	char root[256], self[512], dir[800], path[900];
	const char *knob;
	struct pc_cgroup_stat s = { .file = 12345 }, want;
	int version, rc;

	pc_sys_inject(PC_SYS_READ, EIO, 0, 0);
	rc = pc_cgroup_self(self, sizeof(self));
	pc_sys_inject_reset();
	ok(rc == -EIO, "cgroup: /proc/self/cgroup read EIO is returned (%d)", rc);

	if (pc_cgroup_root(root, sizeof(root), &version) < 0 || pc_cgroup_self(self, sizeof(self)) < 0) {
		skip("no memory cgroup controller here", "cgroup read faults");
		return;
	}
	snprintf(dir, sizeof(dir), "%s%s", root, strcmp(self, "/") ? self : "");
	rc = pc_cgroup_read(dir, version, &want);
	ok(rc == 0, "cgroup: our own cgroup reads (%s: %d)", dir, rc);
	pc_sys_inject(PC_SYS_READ, EIO, 0, 0);
	rc = pc_cgroup_read(dir, version, &s);
	pc_sys_inject_reset();
	ok(rc == -EIO && s.file == 12345, "cgroup: memory.stat read EIO returned, ret untouched (%d)", rc);
	/* the second read is the limit's: EIO there is no "no limit" */
	s.file = 12345;
	pc_sys_inject(PC_SYS_READ, EIO, 1, 1);
	rc = pc_cgroup_read(dir, version, &s);
	pc_sys_inject_reset();
	ok(rc == -EIO && s.file == 12345, "cgroup: a limit read EIO is returned, not 'no limit' (%d)", rc);
	s.file = 12345;
	pc_sys_inject(PC_SYS_READ, ENOMEM, 2, 1);
	rc = pc_cgroup_read(dir, version, &s);
	pc_sys_inject_reset();
	ok(rc == -ENOMEM && s.file == 12345, "cgroup: a usage read ENOMEM is returned (%d)", rc);

	/* the write faults need files we may open for writing */
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (access(path, W_OK) == 0) {
		pc_sys_inject(PC_SYS_WRITE, ENOSPC, 0, 0);
		rc = pc_cgroup_enter(dir, getpid());
		pc_sys_inject_reset();
		ok(rc == -ENOSPC, "cgroup: cgroup.procs write ENOSPC is returned (%d)", rc);
	} else {
		skip("cannot write our cgroup's cgroup.procs (read-only cgroupfs, or not ours)",
		     "cgroup: cgroup.procs write ENOSPC");
	}
	knob = version == 1 ? "memory.soft_limit_in_bytes" : "memory.low";
	snprintf(path, sizeof(path), "%s/%s", dir, knob);
	if (access(path, W_OK) == 0) {
		pc_sys_inject(PC_SYS_WRITE, EPERM, 0, 0);
		rc = pc_cgroup_write(dir, knob, "0");
		pc_sys_inject_reset();
		ok(rc == -EPERM, "cgroup: a knob write EPERM is returned (%d)", rc);
	} else {
		skip("cannot write our cgroup's memory knob (read-only cgroupfs, or not ours)",
		     "cgroup: a knob write EPERM");
	}
}

/* pc_cgroup_plan_v2 reads only files: a directory made to look like a v2 cgroup */
static void cgroup_plan(void)
{
	char d[600], f[700], buf[64];
	struct pc_cgroup_plan p = { .leaf = true, .enable = true };
	static const char *const files[][2] = {
		{ "cgroup.subtree_control", "" }, { "cgroup.controllers", "cpu memory\n" },
		{ "cgroup.type", "domain\n" }, { "cgroup.procs", "" },
	};
	int rc;

	snprintf(d, sizeof(d), "%s/v2cg", scratch_dir());
	mkdir(d, 0755);
	for (size_t i = 0; i < 4; i++) {
		snprintf(f, sizeof(f), "%s/%s", d, files[i][0]);
		if (i == 3)
			snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
		FILE *o = fopen(f, "w");
		fputs(i == 3 ? buf : files[i][1], o);
		fclose(o);
	}
	rc = pc_cgroup_plan_v2(d, "memory", getpid(), &p);
	ok(rc == 0 && p.leaf && p.enable, "cgroup plan: only we are in it: move to a leaf, enable (%d)", rc);
	p.leaf = p.enable = false;
	/* the third read is cgroup.procs: a failure there is not "nobody else" */
	pc_sys_inject(PC_SYS_READ, EIO, 2, 1);
	rc = pc_cgroup_plan_v2(d, "memory", getpid(), &p);
	pc_sys_inject_reset();
	ok(rc == -EIO && !p.leaf && !p.enable, "cgroup plan: cgroup.procs read EIO is returned (%d)", rc);
	pc_sys_inject(PC_SYS_READ, EIO, 0, 1);
	rc = pc_cgroup_plan_v2(d, "memory", getpid(), &p);
	pc_sys_inject_reset();
	ok(rc == -EIO, "cgroup plan: subtree_control read EIO is returned (%d)", rc);
}

static void proc(uint64_t ps)
{
	char *p = make_file("mapped", (size_t)(4 * ps));
	struct pc_mapper m[8];
	struct stat st;
	int fd = open(p, O_RDONLY), rc;
	void *map;

	fstat(fd, &st);
	map = mmap(NULL, 4 * ps, PROT_READ, MAP_SHARED, fd, 0);
	rc = pc_fd_mappers(fd, m, 8);	/* on an overlay, maps name a layer's file */
	ok(rc >= 1, "proc: our own mapping is found (%d)", rc);
	pc_sys_inject(PC_SYS_READ, EIO, 0, 0);
	rc = pc_file_mappers(st.st_dev, st.st_ino, m, 8);
	pc_sys_inject_reset();
	ok(rc == -EIO, "proc: a maps read EIO is returned, not a short list (%d)", rc);
	pc_sys_inject(PC_SYS_OPEN, ENOMEM, 0, 0);
	rc = pc_file_mappers(st.st_dev, st.st_ino, m, 8);
	pc_sys_inject_reset();
	ok(rc == -ENOMEM, "proc: a maps open ENOMEM is returned (%d)", rc);
	pc_sys_inject(PC_SYS_OPEN, EACCES, 0, 0);
	rc = pc_file_mappers(st.st_dev, st.st_ino, m, 8);
	pc_sys_inject_reset();
	ok(rc == 0, "proc: processes we may not read (EACCES) are skipped (%d)", rc);
	if (map != MAP_FAILED)
		munmap(map, 4 * ps);
	close(fd);
}

/* Write a snapshot of one file (`pages` pages cached) at path: 0 or the first error. */
static int snap(const char *path, uint64_t pages)
{
	struct pc_profile_meta m = { .created = 1700000000, .page_size = (uint32_t)pc_page_size() };
	uint64_t runs[2] = { 0, pages };
	struct pc_profile_file f = { .path = (char *)"data/f", .size = pages * pc_page_size(),
				     .runs = runs, .nruns = 1 };
	struct pc_profile_writer *w;
	int rc;

	snprintf(m.root, sizeof(m.root), "/srv");
	snprintf(m.host, sizeof(m.host), "test");
	rc = pc_profile_create(path, &m, &w);
	if (rc < 0)
		return rc;
	rc = pc_profile_add(w, &f);
	if (rc < 0) {
		pc_profile_abort(w);
		return rc;
	}
	return pc_profile_commit(w);
}

/* The one file's page count in the snapshot at path, or -errno. */
static long snap_pages(const char *path)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	long pages = -ENODATA;
	int rc = pc_profile_open(path, &r, NULL, 0);

	if (rc < 0)
		return rc;
	while ((rc = pc_profile_next(r, &f)) > 0) {
		pages = (long)f.runs[1];
		pc_profile_file_release(&f);
	}
	pc_profile_close(r);
	return rc < 0 ? rc : pages;
}

static int entries(const char *dir)
{
	char cmd[700];
	FILE *p;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A '%s' | wc -l", dir);
	p = popen(cmd, "r");
	if (p && fscanf(p, "%d", &n) != 1)
		n = -1;
	if (p)
		pclose(p);
	return n;
}

static void profile(void)
{
	static const struct {
		enum pc_sys_call call;
		int err;
		unsigned after;
		const char *what;
	} faults[] = {
		{ PC_SYS_WRITE, ENOSPC, 0, "the header's write ENOSPC" },
		{ PC_SYS_WRITE, EIO, 1, "a section's write EIO" },
		{ PC_SYS_WRITE, ENOSPC, 2, "the end section's write ENOSPC" },
		{ PC_SYS_FSYNC, EIO, 0, "fsync EIO" },
		{ PC_SYS_RENAME, ENOSPC, 0, "rename ENOSPC" },
		{ PC_SYS_RENAME, EIO, 0, "rename EIO" },
	};
	char dir[600], path[700];
	int rc;

	snprintf(dir, sizeof(dir), "%s/snaps", scratch_dir());
	mkdir(dir, 0755);
	snprintf(path, sizeof(path), "%s/s.snap", dir);
	rc = snap(path, 7);
	ok(rc == 0 && snap_pages(path) == 7, "profile: the old snapshot is written (%d)", rc);
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++) {
		pc_sys_inject(faults[i].call, faults[i].err, faults[i].after, 0);
		rc = snap(path, 9);
		pc_sys_inject_reset();
		ok(rc == -faults[i].err && snap_pages(path) == 7 && entries(dir) == 1,
		   "profile: %s is returned (%d), the old snapshot intact (%ld pages), no temporary "
		   "file left (%d entries)", faults[i].what, rc, snap_pages(path), entries(dir));
	}
	rc = snap(path, 9);
	ok(rc == 0 && snap_pages(path) == 9, "profile: without a fault, the new one replaces it");
}

/* Every read pc_memstat_read makes (meminfo, /proc/self/cgroup, the cgroup's files), failed in turn. */
static void budget(void)
{
	struct pc_memstat want, m;
	struct pc_budget b;
	int rc, failed = 0, wrong = 0, k;

	rc = pc_memstat_read(&want);
	ok(rc == 0 && want.mem_total && want.mem_available, "budget: memstat reads (%d)", rc);
	for (k = 0; k < 32; k++) {
		memset(&m, 0xa5, sizeof(m));
		pc_sys_inject(PC_SYS_READ, EIO, (unsigned)k, 1);
		rc = pc_memstat_read(&m);
		pc_sys_inject_reset();
		if (rc == -EIO)
			failed++, wrong += m.mem_total != 0xa5a5a5a5a5a5a5a5ull;	/* ret untouched */
		else if (rc != 0 || m.cg_limit != want.cg_limit || !m.mem_available ||
			 m.mem_total != want.mem_total || strcmp(m.cg_path, want.cg_path))
			wrong++;	/* a read that failed was taken for "none" */
		else
			break;	/* past the last read: the fault was never met */
	}
	ok(failed >= 2 && k < 32 && !wrong,
	   "budget: each of the %d reads that failed was returned as EIO, ret untouched (%d wrong)",
	   failed, wrong);
	pc_sys_inject(PC_SYS_READ, EIO, 0, 0);
	rc = pc_budget_init(&b, 0, 0);
	pc_sys_inject_reset();
	ok(rc == -EIO, "budget: init returns a meminfo read EIO (%d)", rc);
	pc_sys_inject(PC_SYS_OPEN, ENOMEM, 0, 1);
	rc = pc_memstat_read(&m);
	pc_sys_inject_reset();
	ok(rc == -ENOMEM, "budget: a meminfo open ENOMEM is returned (%d)", rc);

	/* put: bytes given back may be taken again, and a stopped budget reopens */
	rc = pc_budget_init(&b, 3 * 4096, 0);
	ok(rc == 0 && pc_budget_take(&b, 2 * 4096) && !pc_budget_take(&b, 2 * 4096) &&
	   b.stopped == PC_BUDGET_MAX && !pc_budget_take(&b, 4096),
	   "budget: past --max-mem stops, and stays stopped (%d)", rc);
	pc_budget_put(&b, 4096);
	ok(!b.stopped && b.taken == 4096 && pc_budget_take(&b, 2 * 4096) &&
	   !pc_budget_take(&b, 1), "budget: put gives back and reopens, never past the maximum");
	pc_budget_put(&b, UINT64_MAX);
	ok(b.taken == 0, "budget: put never goes below nothing");
	if (rc == 0)
		pc_budget_release(&b);
}

static void vmstat(void)
{
	static const char *const names[] = { "nr_file_pages", "pswpin" };
	uint64_t v[2];
	int rc;

	rc = pc_vmstat_read(names, v, 2);
	ok(rc == 2, "vmstat: reads (%d)", rc);
	pc_sys_inject(PC_SYS_READ, EIO, 0, 0);
	rc = pc_vmstat_read(names, v, 2);
	pc_sys_inject_reset();
	ok(rc == -EIO && v[0] == PC_VMSTAT_MISSING && v[1] == PC_VMSTAT_MISSING,
	   "vmstat: a read EIO is returned, no counter filled (%d)", rc);
	pc_sys_inject(PC_SYS_READ, EINTR, 0, 3);
	rc = pc_vmstat_read(names, v, 2);
	pc_sys_inject_reset();
	ok(rc == 2, "vmstat: EINTR is retried (%d)", rc);
}

int main(void)
{
	uint64_t ps = pc_page_size();

	pc_sys_inject_reset();
	fault_names();
	evict(ps);
	lock(ps);
	prefetch(ps);
	cgroup();
	cgroup_plan();
	proc(ps);
	vmstat();
	profile();
	budget();
	rm_scratch();
	return done_testing();
}
