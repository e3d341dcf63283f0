/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * floor-stat: the least work a tree "stat" can do with cachestat(2).
 *
 * Per directory: openat(O_DIRECTORY) + one getdents64 (64 KiB buffer; a
 * second call only when the first came back nearly full) + close.
 * Per regular file: openat + cachestat(fd, whole file) + close.
 * Nothing else: no stat/statx, no mincore, no allocation per file.
 *
 * The top-level directories of ROOT are split across NTHREADS threads
 * (round robin); each thread walks its share depth first.  Directory
 * types come from d_type (ext4 fills it in).
 *
 * Usage: floor-stat ROOT [NTHREADS [fstat]]   (NTHREADS default 2)
 * With "fstat", each file is also fstat'ed (its size added up): the floor
 * of a tool that must report sizes, as pagecache stat does.
 * Prints: files=N dirs=N cached_pages=N
 * Build:  cc -O2 -pthread -o floor-stat floor-stat.c
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef __NR_cachestat
#define __NR_cachestat 451
#endif

struct cs_range { uint64_t off, len; };
struct cs { uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted,
	    nr_recently_evicted; };

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define BUFSZ (64 * 1024)

struct counts { uint64_t files, dirs, cached, errors; };
static int with_fstat;

static int dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

static void do_file(int dfd, const char *name, struct counts *c)
{
	struct cs_range r = { 0, 0 };	/* len 0: to end of file */
	struct cs s;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) { c->errors++; return; }
	if (with_fstat) {
		struct stat st;

		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
			c->errors++;
	}
	if (syscall(__NR_cachestat, fd, &r, &s, 0) == 0)
		c->cached += s.nr_cache;
	else
		c->errors++;
	close(fd);
	c->files++;
}

static void walk(int dfd, struct counts *c);

static void do_dir(int dfd, const char *name, struct counts *c)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) { c->errors++; return; }
	c->dirs++;
	walk(fd, c);
	close(fd);
}

static void walk(int dfd, struct counts *c)
{
	char *buf = malloc(BUFSZ);	/* one per level; depth is small */
	if (!buf) { c->errors++; return; }
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, buf, BUFSZ);
		if (n <= 0) { if (n < 0) c->errors++; break; }
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			off += d->d_reclen;
			if (dot(d->d_name)) continue;
			if (d->d_type == DT_DIR) do_dir(dfd, d->d_name, c);
			else if (d->d_type == DT_REG) do_file(dfd, d->d_name, c);
		}
		if (n < BUFSZ - 4096) break;	/* not full: that was all */
	}
	free(buf);
}

struct job { int rootfd; char **names; size_t n, first, step; struct counts c; };

static void *thread_main(void *arg)
{
	struct job *j = arg;
	for (size_t i = j->first; i < j->n; i += j->step)
		do_dir(j->rootfd, j->names[i], &j->c);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) { fprintf(stderr, "usage: %s ROOT [NTHREADS]\n", argv[0]); return 2; }
	int nt = argc > 2 ? atoi(argv[2]) : 2;
	with_fstat = argc > 3 && !strcmp(argv[3], "fstat");
	if (nt < 1) nt = 1;
	int rootfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0) { perror(argv[1]); return 1; }

	struct counts main_c = { 0, 1, 0, 0 };
	char **names = NULL;
	size_t n = 0, cap = 0;
	char *buf = malloc(BUFSZ);
	for (;;) {	/* root: files here, collect subdirectories */
		long r = syscall(SYS_getdents64, rootfd, buf, BUFSZ);
		if (r <= 0) break;
		for (long off = 0; off < r;) {
			struct linux_dirent64 *d = (void *)(buf + off);
			off += d->d_reclen;
			if (dot(d->d_name)) continue;
			if (d->d_type == DT_REG) { do_file(rootfd, d->d_name, &main_c); continue; }
			if (d->d_type != DT_DIR) continue;
			if (n == cap) names = realloc(names, (cap = cap ? cap * 2 : 256) * sizeof *names);
			names[n++] = strdup(d->d_name);
		}
		if (r < BUFSZ - 4096) break;
	}

	pthread_t tid[64];
	struct job jobs[64];
	if (nt > 64) nt = 64;
	for (int i = 0; i < nt; i++) {
		jobs[i] = (struct job){ rootfd, names, n, (size_t)i, (size_t)nt, { 0 } };
		if (i) pthread_create(&tid[i], NULL, thread_main, &jobs[i]);
	}
	thread_main(&jobs[0]);	/* the main thread is worker 0 */
	for (int i = 1; i < nt; i++) pthread_join(tid[i], NULL);

	for (int i = 0; i < nt; i++) {
		main_c.files += jobs[i].c.files;
		main_c.dirs += jobs[i].c.dirs;
		main_c.cached += jobs[i].c.cached;
		main_c.errors += jobs[i].c.errors;
	}
	printf("files=%llu dirs=%llu cached_pages=%llu errors=%llu\n",
	       (unsigned long long)main_c.files, (unsigned long long)main_c.dirs,
	       (unsigned long long)main_c.cached, (unsigned long long)main_c.errors);
	return main_c.errors ? 1 : 0;
}
