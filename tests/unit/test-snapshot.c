/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * snapshot.c: a small tree snapshotted through the API and read back with
 * pc_profile_open: cached files recorded relative to the root with their
 * pages, uncached ones left out; the guard keeps the old file against an
 * empty one; a file outside the root is a failure and a snapshot of none
 * is not written; a full disk keeps the old file; the file is 0600; the
 * size members refuse what they cannot take.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "sys.h"		/* pc_sys_inject (lib/sys.h) */
#include "tap.h"

#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <limits.h>
#include <stddef.h>

struct seen {
	unsigned recorded, uncached, failed, devices;
	enum pc_snapshot_failure failure;
	char what[64];
};

static void on_event(const struct pc_snapshot_event *ev, void *arg)
{
	struct seen *s = arg;

	switch (ev->kind) {
	case PC_SNAPSHOT_RECORDED:
		s->recorded++;
		break;
	case PC_SNAPSHOT_UNCACHED:
		s->uncached++;
		break;
	case PC_SNAPSHOT_FAILED:
		s->failed++;
		s->failure = ev->failure;
		snprintf(s->what, sizeof(s->what), "%s", ev->what);
		break;
	case PC_SNAPSHOT_DEVICE:
		s->devices++;
		break;
	}
}

/*
 * pages 0..keep-1 of path cached, the rest not: read with readahead off
 * (a DONTNEED of the tail would not split the large folio the write made)
 */
static void cache_head(const char *path, uint64_t keep)
{
	int fd = open(path, O_RDONLY);
	char *buf = malloc(keep * pc_page_size());

	drop_file(path);
	if (fd >= 0 && buf) {
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
		if (pread(fd, buf, keep * pc_page_size(), 0) < 0)
			perror(path);
	}
	if (fd >= 0)
		close(fd);
	free(buf);
}

static bool same_file(const char *path, const struct stat *before)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_ino == before->st_ino &&
	       st.st_mtim.tv_sec == before->st_mtim.tv_sec &&
	       st.st_mtim.tv_nsec == before->st_mtim.tv_nsec;
}

/* entries of dir whose name starts with prefix ("snap.tmp.": temp files left) */
static int count_prefix(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	while (d && (de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

int main(void)
{
	char tree[512], sub[600], out[512], a[600], b[600], c[600], d[600], real[PATH_MAX];
	const char *paths[1] = { tree };
	struct pc_snapshot_result res = { .size = sizeof(res) };
	struct pc_snapshot_opts o = { .size = sizeof(o) };
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	struct seen seen = { 0 };
	uint64_t ps = pc_page_size(), pages[4] = { 0 };
	const char *want[] = { "a", "b", "sub/d" };
	struct stat st;
	char err[256];
	int rc, n = 0;

	snprintf(tree, sizeof(tree), "%s/tree", scratch_dir());
	snprintf(sub, sizeof(sub), "%s/sub", tree);
	snprintf(out, sizeof(out), "%s/snap", scratch_dir());
	mkdir(tree, 0755);
	mkdir(sub, 0755);
	snprintf(a, sizeof(a), "%s", make_file("tree/a", 16 * ps));
	snprintf(b, sizeof(b), "%s", make_file("tree/b", 16 * ps));
	snprintf(c, sizeof(c), "%s", make_file("tree/c", 16 * ps));
	snprintf(d, sizeof(d), "%s", make_file("tree/sub/d", 3 * ps));
	drop_file(c);
	cache_file(a);
	cache_head(b, 4);
	cache_file(d);

	/* the whole tree, through the one call */
	o.root = tree;
	o.paths = paths;
	o.npaths = 1;
	o.event = on_event;
	o.arg = &seen;
	rc = pc_snapshot_write(&o, out, &res);
	ok(rc == 0, "pc_snapshot_write (%d)", rc);
	ok(res.written && !res.kept && res.err == 0, "written, not kept");
	is_u64(res.files, 3, "three files recorded");
	is_u64(res.uncached, 1, "the uncached one left out");
	is_u64(res.failures, 0, "no failure");
	is_u64(seen.recorded, 3, "a RECORDED event each");
	is_u64(seen.uncached, 1, "an UNCACHED event");
	ok(realpath(tree, real) && !strcmp(res.root, real), "the root as recorded: %s", res.root);
	is_u64(res.bytes, res.pages * ps, "bytes are pages");
	ok(res.previous_pages == -1, "no guard: no previous pages");
	ok(stat(out, &st) == 0 && (st.st_mode & 0777) == 0600, "the file is its writer's alone (0600)");
	ok(count_prefix(scratch_dir(), "snap.tmp.") == 0, "no temporary file left");

	/* read back */
	rc = pc_profile_open(out, &r, err, sizeof(err));
	ok(rc == 0, "pc_profile_open reads it (%s)", rc ? err : "ok");
	if (rc == 0) {
		ok(!strcmp(pc_profile_get_meta(r)->root, real), "the meta's root");
		while ((rc = pc_profile_next(r, &f)) > 0) {
			if (n < 3 && !strcmp(f.path, want[n])) {
				for (size_t k = 0; k < f.nruns; k++)
					pages[n] += f.runs[2 * k + 1];
				ok(f.ino != 0 && f.size > 0, "%s: its identity", f.path);
			} else {
				ok(0, "file %d is %s, not %s", n, f.path, n < 3 ? want[n] : "none");
			}
			n++;
			pc_profile_file_release(&f);
		}
		ok(rc == 0, "read to its verified end");
		pc_profile_close(r);
		is_u64(n, 3, "three files, in path order, relative to the root");
		is_resident(pages[0], 16, "a: all its pages");
		is_resident(pages[1], 4, "b: its first four pages");
		is_resident(pages[2], 3, "sub/d: all its pages");
		is_u64(pages[0] + pages[1] + pages[2], res.pages, "the result's pages are the file's");
	}

	/* the guard: an empty tree never replaces a snapshot that holds pages */
	{
		struct stat before;
		uint64_t had = res.pages;

		stat(out, &before);
		drop_file(a);
		drop_file(b);
		drop_file(d);
		o.flags = PC_SNAPSHOT_GUARD;
		o.guard = 0.5;
		memset(&res, 0xff, sizeof(res));
		res.size = sizeof(res);
		rc = pc_snapshot_write(&o, out, &res);
		ok(rc == 0 && res.kept && !res.written, "the guard keeps it (%d)", rc);
		ok(res.err == -ENODATA, "not written: ENODATA");
		is_u64(res.previous_pages, had, "the old one's pages said");
		ok(same_file(out, &before), "the old snapshot is where it was");
		o.guard = 7;
		ok(pc_snapshot_write(&o, out, &res) == -EINVAL, "a guard past 1 is EINVAL");
		o.flags = 0;
	}

	/* outside the root: a failure; a snapshot of nothing with failures is not written */
	{
		char other[600];
		const char *one[1] = { a };

		snprintf(other, sizeof(other), "%s/none.snap", scratch_dir());
		cache_file(a);
		o.root = sub;
		o.paths = one;
		memset(&seen, 0, sizeof(seen));
		rc = pc_snapshot_write(&o, other, &res);
		ok(rc == -ENODATA && !res.written && !res.kept, "no file and a failure: not written");
		ok(seen.failed == 1 && seen.failure == PC_SNAPSHOT_FAIL_OUTSIDE_ROOT,
		   "a FAILED event: outside the root (%s)", seen.what);
		is_u64(res.failures, 1, "counted");
		ok(access(other, F_OK) < 0, "no file made");
		o.root = tree;
		o.paths = paths;
	}

	/* the trio, for a walk of the caller's own; owners */
	{
		struct pc_snapshot *s;
		int fd = open(a, O_RDONLY);
		char trio[600];

		snprintf(trio, sizeof(trio), "%s/trio.snap", scratch_dir());
		o.flags = PC_SNAPSHOT_OWNERS;
		ok(pc_snapshot_begin(&o, &s) == 0, "pc_snapshot_begin");
		fstat(fd, &st);
		ok(pc_snapshot_add(s, fd, a, &st) == 0, "pc_snapshot_add");
		close(fd);
		pc_snapshot_count_failures(s, 2);
		rc = pc_snapshot_finish(s, trio, &res);
		ok(rc == 0 && res.written, "pc_snapshot_finish writes it (%d)", rc);
		is_u64(res.files, 1, "one file");
		is_u64(res.failures, 2, "the caller's failures counted");
		ok(res.nowners == 1 && !res.owners_many && res.owners[0].uid == st.st_uid &&
		   res.owners[0].gid == st.st_gid, "its owner said");
		ok(pc_snapshot_begin(&o, &s) == 0, "begin again");
		pc_snapshot_abort(s);
		ok(1, "abort frees it, writing nothing");
		pc_snapshot_abort(NULL);
		o.flags = 0;
	}

	/*
	 * The guard reads what is at the output before replacing it: put
	 * there during the walk (pc_snapshot_write checks before it), a FIFO
	 * must not hold the writer forever, nor a link be read through.
	 */
	{
		struct pc_snapshot *s;
		char fifo[600], link[600];

		snprintf(fifo, sizeof(fifo), "%s/fifo.snap", scratch_dir());
		snprintf(link, sizeof(link), "%s/glink.snap", scratch_dir());
		if (mkfifo(fifo, 0600) < 0 || symlink(out, link) < 0)
			perror("mkfifo/symlink");
		cache_file(a);
		o.flags = PC_SNAPSHOT_GUARD;
		o.guard = 0.5;
		alarm(20);	/* a hang fails the test, it does not stall the suite */
		ok(pc_snapshot_begin(&o, &s) == 0, "begin, the guard on");
		rc = pc_snapshot_finish(s, fifo, &res);
		ok(rc < 0 && !res.written && res.previous_pages == -1,
		   "a FIFO at the output: not waited on, not read, not replaced (%d)", rc);
		ok(pc_snapshot_begin(&o, &s) == 0, "begin again");
		rc = pc_snapshot_finish(s, link, &res);
		ok(rc < 0 && !res.written && res.previous_pages == -1,
		   "a link at the output: its target not read as the old snapshot (%d)", rc);
		alarm(0);
		unlink(fifo);
		unlink(link);
		o.flags = 0;
	}

	/* a full disk: the old file as it was, no temporary file left */
	{
		struct stat before;

		cache_file(a);
		stat(out, &before);
		pc_sys_inject(PC_SYS_WRITE, ENOSPC, 0, 0);
		rc = pc_snapshot_write(&o, out, &res);
		pc_sys_inject_reset();
		ok(rc == -ENOSPC && res.err == -ENOSPC && !res.written, "ENOSPC (%d)", rc);
		ok(same_file(out, &before), "the old snapshot intact");
		ok(count_prefix(scratch_dir(), "snap.tmp.") == 0, "no temporary file left");
	}

	/* the output and the root checked first */
	{
		char link[600], bad[600];

		snprintf(link, sizeof(link), "%s/link.snap", scratch_dir());
		if (symlink(out, link) < 0)
			perror("symlink");
		rc = pc_snapshot_write(&o, link, &res);
		ok(rc == -ELOOP && res.err == -ELOOP, "a link at the output is ELOOP (%d)", rc);
		snprintf(bad, sizeof(bad), "%s/x.snap", scratch_dir());
		o.root = a;
		ok(pc_snapshot_write(&o, bad, &res) == -ENOTDIR, "a root that is a file: ENOTDIR");
		o.root = tree;
	}

	/* the size members */
	{
		struct {
			struct pc_snapshot_opts o;
			uint64_t more;
		} big = { .o = o, .more = 1 };
		struct pc_snapshot *s;
		struct {
			struct pc_snapshot_result r;
			uint64_t canary;
		} small;

		o.size = 0;
		ok(pc_snapshot_begin(&o, &s) == -EINVAL, "opts without a size: EINVAL");
		o.size = sizeof(o);
		big.o.size = sizeof(big);
		ok(pc_snapshot_begin(&big.o, &s) == -E2BIG, "a field this library does not know: E2BIG");
		big.more = 0;
		ok(pc_snapshot_begin(&big.o, &s) == 0, "a larger struct, its extra bytes 0");
		memset(&small, 0x5a, sizeof(small));
		small.r.size = offsetof(struct pc_snapshot_result, files);
		rc = pc_snapshot_finish(s, out, &small.r);
		ok(rc == 0 && small.r.written, "a smaller result gets what it has room for");
		ok(small.r.files == 0x5a5a5a5a5a5a5a5aull && small.canary == 0x5a5a5a5a5a5a5a5aull,
		   "and nothing past its size");
	}

	/* metadata: the devices root's; without the right each is left out (EPERM) */
	o.flags = PC_SNAPSHOT_METADATA;
	if (!pc_bdev_allowed()) {
		memset(&seen, 0, sizeof(seen));
		cache_file(a);
		rc = pc_snapshot_write(&o, out, &res);
		ok(rc == 0 && res.written && res.metadata_devices == 0 && res.metadata_skipped >= 1,
		   "metadata without the right: written, every device left out (%d)", rc);
	} else {
		memset(&seen, 0, sizeof(seen));
		cache_file(a);
		rc = pc_snapshot_write(&o, out, &res);
		ok(rc == 0 && res.written, "with metadata (%d)", rc);
		ok(seen.devices >= 1 && seen.devices == res.metadata_devices + res.metadata_skipped,
		   "a DEVICE event per device, recorded (%llu) or left out (%llu)",
		   (unsigned long long)res.metadata_devices, (unsigned long long)res.metadata_skipped);
	}

	/*
	 * --safe-links: a root that cannot be checked (out of descriptors,
	 * as a fed walk holding its queued roots' fds can leave it) is
	 * dropped, not walked by name through a link a user swapped in.
	 */
	if (geteuid() == 0) {
		struct pc_snapshot *s;
		char dir[600], evil[700];
		int fds[512], nfd = 0, fd = 0;
		struct rlimit rl, low;

		o.flags = PC_SNAPSHOT_SAFE_LINKS;
		snprintf(dir, sizeof(dir), "%s/sticky", scratch_dir());
		snprintf(evil, sizeof(evil), "%s/evil", dir);
		mkdir(dir, 0755);
		chmod(dir, 01777);
		if (symlink(a, evil) < 0 || lchown(evil, 65534, 65534) < 0)
			perror("symlink/lchown");
		ok(pc_snapshot_begin(&o, &s) == 0, "begin, --safe-links");
		memset(&seen, 0, sizeof(seen));
		pc_snapshot_trust_roots(s, (const char *const[]){ evil }, 1, &fd);
		ok(fd == PC_SNAPSHOT_ROOT_DROPPED && seen.failed == 1,
		   "a user's link in a sticky directory: dropped (%d)", fd);
		getrlimit(RLIMIT_NOFILE, &rl);
		low = rl;
		low.rlim_cur = 256;
		setrlimit(RLIMIT_NOFILE, &low);
		while (nfd < 512 && (fds[nfd] = dup(0)) >= 0)
			nfd++;
		memset(&seen, 0, sizeof(seen));
		pc_snapshot_trust_roots(s, (const char *const[]){ evil }, 1, &fd);
		while (nfd > 0)
			close(fds[--nfd]);
		setrlimit(RLIMIT_NOFILE, &rl);
		ok(fd == PC_SNAPSHOT_ROOT_DROPPED && seen.failed == 1,
		   "out of descriptors: dropped too, not walked by name (%d)", fd);
		if (fd >= 0)
			close(fd);
		pc_snapshot_abort(s);
		o.flags = 0;
	} else {
		skip("not root: a link of another user's cannot be made", "safe links, no fds");
	}
	rm_scratch();
	return done_testing();
}
