/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The recording's engine (lib/record.c), fed made-up trace events of real
 * files: the pages used come out as runs, each range at the earliest time
 * it was used; pages only brought in are not used (unless misses only:
 * before 6.12, what is added is what was used); a map_pages window counts
 * where its pages were there, as mapped, not used; our own events are left
 * out; a file is kept by the path it has at the end, relative to the root
 * (a rename followed: seen through our own handles, found by handle or by
 * the walk of the root), deleted ones and those outside the root counted;
 * stop() cuts the end short and counts what it left.
 */
#define _GNU_SOURCE
#include "pagecache.h"
#include "record.h"
#include "tap.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGES 16
#define T0 1000000000ull	/* the recording's start, in ns */

static void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

static char top[] = "/tmp/pc-test-record.XXXXXX";
static char root[300];

static void new_file(const char *path, uint64_t pages, struct stat *st)
{
	size_t len = pages * pc_page_size();
	char *buf = malloc(len);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	memset(buf, 'r', len);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || fstat(fd, st) < 0)
		bail(path);
	close(fd);
	free(buf);
}

static void event(struct pc_rec *r, unsigned kind, uint32_t pid, const struct stat *st,
		  uint64_t first, uint64_t last, uint32_t ms)
{
	struct pc_trace_event e = {
		.kind = kind, .time_ns = T0 + (uint64_t)ms * 1000000, .pid = pid, .tid = pid,
		.dev = st->st_dev, .ino = st->st_ino, .first = first, .last = last,
	};

	pc_rec_event(&e, r);
}

static const struct pc_profile_file *find(const struct pc_rec_result *res, const char *path)
{
	for (size_t i = 0; i < res->npf; i++)
		if (!strcmp(res->pf[i].path, path))
			return &res->pf[i];
	return NULL;
}

static bool stop_now(void *arg)
{
	(void)arg;
	return true;
}

static int nerrors;

static void on_error(void *arg, const char *path, const char *what, int err)
{
	(void)arg;
	printf("# %s '%s': %s\n", what, path, strerror(err));
	nerrors++;
}

static struct pc_rec *new_rec(bool misses)
{
	struct pc_rec_opts o = { .size = sizeof(o), .self = 1, .misses = misses, .t0_ns = T0 };
	struct pc_rec *r = NULL;

	if (pc_rec_new(&o, &r) < 0)
		bail("pc_rec_new");
	return r;
}

static int resolve(struct pc_rec *r, bool stop, struct pc_rec_result *res)
{
	struct stat st;
	struct pc_rec_resolve_opts o = {
		.size = sizeof(o), .root = root, .stop = stop ? stop_now : NULL,
		.on_error = on_error,
	};

	stat(root, &st);
	o.root_dev = st.st_dev;
	return pc_rec_resolve(r, &o, res);
}

/* used pages, times, unused, self, mapped: the file held open, so seen by our handles */
static void test_pages(void)
{
	struct pc_rec_opts bad = { .size = sizeof(bad) - 1 };
	struct pc_rec_result res;
	struct pc_rec_stats s;
	const struct pc_profile_file *pf;
	struct stat a, b;
	struct pc_rec *r = NULL;
	char pa[400], pb[400];
	uint32_t me = (uint32_t)getpid();
	int fa, fb;

	ok(pc_rec_new(&bad, &r) == -EINVAL && !r, "an opts of another size is refused");
	snprintf(pa, sizeof(pa), "%s/a", root);
	snprintf(pb, sizeof(pb), "%s/b", root);
	new_file(pa, PAGES, &a);
	new_file(pb, PAGES, &b);
	fa = open(pa, O_RDONLY | O_CLOEXEC);	/* ours to scan: /proc/self/fd */
	fb = open(pb, O_RDONLY | O_CLOEXEC);
	r = new_rec(false);
	event(r, PC_TR_GET_PAGES, me, &a, 0, 3, 20);
	event(r, PC_TR_GET_PAGES, me, &a, 2, 5, 10);	/* 2..3 earlier now */
	event(r, PC_TR_FAULT, me, &a, 9, 9, 30);
	event(r, PC_TR_MAP_PAGES, me, &a, 10, 12, 40);	/* resident: mapped, not used */
	event(r, PC_TR_GET_PAGES, 1, &a, 14, 15, 5);	/* ours (self): left out */
	event(r, PC_TR_ADD, me, &b, 0, 7, 1);		/* only brought in */
	event(r, PC_TR_GET_PAGES, me, &a, 100, 120, 50);	/* past the end */
	pc_rec_scan(r);
	close(fa);
	close(fb);
	pc_rec_stats(r, &s);
	ok(s.events == 6 && s.added_pages == 8 && !s.nomem, "events counted, ours left out "
	   "(%llu events, %llu added)", (unsigned long long)s.events,
	   (unsigned long long)s.added_pages);
	ok(resolve(r, false, &res) == 0, "resolved");
	pf = find(&res, "a");
	ok(pf && res.npf == 1 && res.files == 1, "the file used is kept by its path beneath the root");
	ok(res.unused == 1 && !find(&res, "b"), "a file only brought in is not used");
	ok(pf && pf->nruns == 2 && pf->runs[0] == 0 && pf->runs[1] == 6 && pf->runs[2] == 9 &&
	   pf->runs[3] == 4, "runs: the pages used and mapped, clipped to the file");
	ok(pf && pf->nused == 3 &&
	   pf->used[0] == 0 && pf->used[1] == 2 && pf->used[2] == 20 &&
	   pf->used[3] == 2 && pf->used[4] == 4 && pf->used[5] == 10 &&
	   pf->used[6] == 9 && pf->used[7] == 1 && pf->used[8] == 30,
	   "used: each range at the earliest time it was used");
	ok(res.pages == 7 && res.mapped == 3, "7 pages used, 3 mapped around (%llu, %llu)",
	   (unsigned long long)res.pages, (unsigned long long)res.mapped);
	ok(pf && pf->size == PAGES * pc_page_size() && pf->ino == a.st_ino,
	   "its size and identity");
	ok(nerrors == 0, "no failure said");
	pc_rec_result_release(&res);
	pc_rec_free(r);
	unlink(pa);
	unlink(pb);
}

/* misses only: pages added are the pages used */
static void test_misses(void)
{
	struct pc_rec_result res;
	const struct pc_profile_file *pf;
	struct stat a;
	struct pc_rec *r = new_rec(true);
	char pa[400];

	snprintf(pa, sizeof(pa), "%s/m", root);
	new_file(pa, PAGES, &a);
	event(r, PC_TR_ADD, (uint32_t)getpid(), &a, 4, 7, 3);
	pc_rec_scan(r);
	ok(resolve(r, false, &res) == 0 && (pf = find(&res, "m")) && pf->nruns == 1 &&
	   pf->runs[0] == 4 && pf->runs[1] == 4 && pf->nused == 1 && pf->used[2] == 3,
	   "misses only: the pages added are used");
	pc_rec_result_release(&res);
	pc_rec_free(r);
	unlink(pa);
}

/*
 * At the end: a rename followed (seen under one name, kept under the
 * other), a deletion counted, a file outside the root counted; a file
 * no handle placed while used is found by handle or by the walk.
 */
static void test_paths(void)
{
	struct pc_rec_result res;
	struct stat a, d, o, w;
	struct pc_rec *r = new_rec(false);
	char pa[400], pa2[400], pd[400], po[400], pw[400];
	uint32_t me = (uint32_t)getpid();
	int fa, fd, fo;
	bool handles;

	snprintf(pa, sizeof(pa), "%s/old", root);
	snprintf(pa2, sizeof(pa2), "%s/sub/new", root);
	snprintf(pd, sizeof(pd), "%s/gone", root);
	snprintf(po, sizeof(po), "%s/outside", top);
	snprintf(pw, sizeof(pw), "%s/sub", root);
	if (mkdir(pw, 0755) < 0)
		bail("mkdir");
	snprintf(pw, sizeof(pw), "%s/sub/walked", root);
	new_file(pa, 2, &a);
	new_file(pd, 2, &d);
	new_file(po, 2, &o);
	/*
	 * A rename is followed by file handle: root's (CAP_DAC_READ_SEARCH),
	 * on a filesystem that gives handles (an overlay root, as in a
	 * container, gives none unless mounted nfs_export=on)
	 */
	fa = pc_inode_open(a.st_dev, a.st_ino, O_PATH);
	handles = fa >= 0;
	if (fa >= 0)
		close(fa);
	fa = open(pa, O_RDONLY | O_CLOEXEC);
	fd = open(pd, O_RDONLY | O_CLOEXEC);
	fo = open(po, O_RDONLY | O_CLOEXEC);
	event(r, PC_TR_GET_PAGES, me, &a, 0, 0, 1);
	event(r, PC_TR_GET_PAGES, me, &d, 0, 0, 1);
	event(r, PC_TR_GET_PAGES, me, &o, 0, 0, 1);
	pc_rec_scan(r);
	close(fa);
	close(fd);
	close(fo);
	/* made before the unlink: a new file may take the inode number freed */
	new_file(pw, 1, &w);
	if (rename(pa, pa2) < 0 || unlink(pd) < 0)
		bail("rename, unlink");
	/* used by a process gone before the scan: no handle of it to see */
	event(r, PC_TR_GET_PAGES, 1u << 30, &w, 0, 0, 2);
	pc_rec_scan(r);
	ok(resolve(r, false, &res) == 0, "resolved");
	if (handles)
		ok(find(&res, "sub/new") && !find(&res, "old"), "a rename is followed");
	else	/* found again by handle only */
		skip(geteuid() ? "not root (no CAP_DAC_READ_SEARCH)" : "no file handles on this filesystem",
		     "a rename is followed");
	/* a rename not followed counts the old name as deleted too */
	ok(res.deleted == 1u + !handles, "a file deleted is counted (%llu)", (unsigned long long)res.deleted);
	ok(res.outside == 1, "a file outside the root is counted (%llu)",
	   (unsigned long long)res.outside);
	ok(find(&res, "sub/walked") && res.unresolved == 0,
	   "a file no handle saw is found (by handle or by the walk)");
	ok(res.npf && !strcmp(res.pf[res.npf - 1].path, "sub/walked") &&
	   (res.npf == 1 || !strcmp(res.pf[0].path, "sub/new")), "by path");
	pc_rec_result_release(&res);
	pc_rec_free(r);
	unlink(pa2);
	unlink(po);
	unlink(pw);
	snprintf(pa2, sizeof(pa2), "%s/sub", root);
	rmdir(pa2);
}

/* stop(): nothing looked for, and counted */
static void test_stop(void)
{
	struct pc_rec_result res;
	struct stat a;
	struct pc_rec *r = new_rec(false);
	struct pc_rec_resolve_opts bad = { .size = 1, .root = root };
	char pa[400];

	snprintf(pa, sizeof(pa), "%s/s", root);
	new_file(pa, 1, &a);
	event(r, PC_TR_GET_PAGES, (uint32_t)getpid(), &a, 0, 0, 1);
	pc_rec_scan(r);
	ok(pc_rec_resolve(r, &bad, &res) == -EINVAL, "resolve opts of another size are refused");
	ok(resolve(r, true, &res) == 0 && res.npf == 0 && res.cut == 1,
	   "stop() cuts the end short: counted, not kept");
	pc_rec_result_release(&res);
	pc_rec_free(r);
	pc_rec_free(NULL);
	unlink(pa);
}

int main(void)
{
	if (!mkdtemp(top))
		bail("mkdtemp");
	snprintf(root, sizeof(root), "%s/root", top);
	if (mkdir(root, 0755) < 0)
		bail("mkdir");
	/* the root as record resolves it: no link in it */
	{
		char *real = realpath(root, NULL);

		snprintf(root, sizeof(root), "%s", real);
		free(real);
	}
	test_pages();
	test_misses();
	test_paths();
	test_stop();
	rmdir(root);
	rmdir(top);
	return done_testing();
}
