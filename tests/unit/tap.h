/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap.h: the smallest TAP producer, for prove. One test program per
 * library module. A check that cannot run here says "skip" with the
 * reason; it never passes silently.
 */
#ifndef PC_TAP_H
#define PC_TAP_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int tap_n, tap_failed;

static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

/* A small file (a recorded fixture) as a string; NULL if unreadable. */
static inline char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Read a file whole (into the page cache), ignoring errors. */
static inline void cache_file(const char *path)
{
	char buf[65536];
	int fd = open(path, O_RDONLY);

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
}

static inline void skip(const char *why, const char *what)
{
	printf("ok %d - %s # skip %s\n", ++tap_n, what, why);
	fflush(stdout);
}

static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#define is_u64(a, b, name)                                                                     \
	ok((uint64_t)(a) == (uint64_t)(b), "%s (got %llu, want %llu)", name,                    \
	   (unsigned long long)(a), (unsigned long long)(b))

/*
 * Whether a kdamond runs a DAMON scheme that pages out (as on this
 * project's CI hosts: paddr, pageout of regions idle 60 s). It takes pages
 * nobody has touched, such as those a warm read ahead, at any moment, so
 * an independent mincore count taken after a warm may fall a few pages
 * short of what the warmer verified (seen: 4094 of 4096).
 */
static inline int damon_pageout(void)
{
	static int known = -1;
	char path[256], buf[32];
	int on = 0;

	if (known >= 0)
		return known;
	for (int k = 0; k < 8 && !on; k++) {
		FILE *f;

		snprintf(path, sizeof(path), "/sys/kernel/mm/damon/admin/kdamonds/%d/state", k);
		if (!(f = fopen(path, "r")))
			break;
		on = fgets(buf, sizeof(buf), f) && !strncmp(buf, "on", 2);
		fclose(f);
		if (!on)
			continue;
		on = 0;
		for (int c = 0; c < 4 && !on; c++)
			for (int s = 0; s < 8 && !on; s++) {
				snprintf(path, sizeof(path),
					 "/sys/kernel/mm/damon/admin/kdamonds/%d/contexts/%d/schemes/%d/action",
					 k, c, s);
				if (!(f = fopen(path, "r")))
					continue;
				on = fgets(buf, sizeof(buf), f) && !strncmp(buf, "pageout", 7);
				fclose(f);
			}
	}
	return known = on;
}

/* mincore's count after a warm: all WANT pages, or, where DAMON pages out
 * untouched pages (damon_pageout), all but a few (1/128 of them), said so */
#define is_resident(got, want, name)                                                           \
	do {                                                                                   \
		uint64_t got_ = (got), want_ = (want);                                         \
		uint64_t slack_ = damon_pageout() ? want_ / 128 + 1 : 0;                        \
		ok(got_ <= want_ && got_ + slack_ >= want_, "%s (got %llu, want %llu%s)", name, \
		   (unsigned long long)got_, (unsigned long long)want_,                         \
		   slack_ ? ", less a few DAMON may page out" : "");                            \
	} while (0)

/*
 * The source a residency answer should have: cachestat where the kernel
 * has it, but mincore through a mapping for a file of an overlay whose
 * real file is out of reach (a container root: its layers are named by
 * the host's paths). r->err says why; dirty and the rest are unknown.
 */
#define want_source(r, have_cs)                                                                \
	((have_cs) && !((r)->stacked && (r)->err) ? PC_SRC_CACHESTAT : PC_SRC_MINCORE)

/* A scratch directory on a real disk filesystem (tmpfs ignores fadvise). */
static inline const char *scratch_dir(void)
{
	static char dir[256];

	if (!dir[0]) {
		const char *base = getenv("PAGECACHE_TEST_DIR");

		snprintf(dir, sizeof(dir), "%s/pc-unit-XXXXXX", base ? base : "/var/tmp");
		if (!mkdtemp(dir)) {
			perror("mkdtemp");
			exit(1);
		}
	}
	return dir;
}

/* Write `bytes` of non-zero data to dir/name, fsync it, and return its path. */
static inline char *make_file(const char *name, size_t bytes)
{
	static char path[512];
	char buf[65536];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", scratch_dir(), name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(path);
		exit(1);
	}
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (char)(i * 7 + 1);
	for (size_t done = 0; done < bytes;) {
		size_t n = bytes - done < sizeof(buf) ? bytes - done : sizeof(buf);

		if (write(fd, buf, n) != (ssize_t)n) {
			perror("write");
			exit(1);
		}
		done += n;
	}
	fsync(fd);
	close(fd);
	return path;
}

static inline void drop_file(const char *path)
{
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		fdatasync(fd);
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		close(fd);
	}
}

static inline void rm_scratch(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", scratch_dir());
	if (system(cmd) != 0)
		fprintf(stderr, "# could not remove %s\n", scratch_dir());
}

/*
 * What fn(arg) writes on fd 1 or 2 (stdout or stderr, flushed around it),
 * as a malloc'd string: for the tests of src/'s modules, which write
 * there.
 */
static inline char *tap_capture(int fd, void (*fn)(void *), void *arg)
{
	FILE *t = tmpfile(), *f = fd == 1 ? stdout : stderr;
	int saved;
	off_t n;
	char *buf;

	if (!t) {
		perror("tmpfile");
		exit(1);
	}
	fflush(f);
	saved = dup(fd);
	dup2(fileno(t), fd);
	fn(arg);
	fflush(f);
	dup2(saved, fd);
	close(saved);
	n = lseek(fileno(t), 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	if (!buf || pread(fileno(t), buf, (size_t)n, 0) != n) {
		perror("tap_capture");
		exit(1);
	}
	fclose(t);
	return buf;
}

#endif
