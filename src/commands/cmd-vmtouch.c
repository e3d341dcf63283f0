/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-vmtouch.c: the vmtouch personality (pagecache invoked as vmtouch, or
 * `pagecache vmtouch ARGS`): vmtouch 1.3.1's options, argument order, walk,
 * output and exit status, over the library's engines (residency, warming,
 * eviction, locking). It differs only where vmtouch lies or loses data, and
 * says so on stderr, once (docs/compat.md, "vmtouch"):
 *   - residency the kernel refuses (mincore fakes "all resident" for a file
 *     the caller may not write) is unknown: left out of Resident Pages, '?'
 *     in -v's bars, and counted in a note;
 *   - -e writes dirty pages back before dropping them (vmtouch's
 *     POSIX_FADV_DONTNEED leaves them cached), and says how many;
 *   - a -b list that is not text is refused (a binary file's "lines" can be
 *     "/"), and its last line keeps its last byte without a newline;
 *   - files of procfs, sysfs and kin are interfaces, not data: not touched;
 *   - names are printed with control bytes escaped.
 * The walk is vmtouch's own, serial and in readdir order (its -v lines come
 * in that order; -F is against the first path's filesystem; a directory
 * seen twice is skipped as a hardlink), not pc_walk's parallel one.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <math.h>
#include <linux/fs.h>
#include <search.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define VT_NAME "vmtouch"
#define VT_CHART_WIDTH 60
#define VT_MAX_DEPTH 1024
#define VT_MAX_PATTERNS 1024
#define VT_MAX_PATTERN_LEN 1024

struct vt_id {
	dev_t dev;
	ino_t ino;
};

static struct vt {
	bool touch, evict, quiet, lock, lockall, daemon, follow, one_fs, all_links, wait, nul;
	int verbose;
	uint64_t off, max_len;		/* -p: offset page-aligned; 0: to EOF */
	uint64_t max_size;		/* -m */
	const char *batch, *pidfile;
	char *ignore[VT_MAX_PATTERNS], *only[VT_MAX_PATTERNS];
	int nignore, nonly;

	uint64_t ps;
	uint64_t files, dirs, pages;	/* pages: every page of every range */
	uint64_t known, resident;	/* the pages whose residency is known */
	uint64_t unknown_files, unknown_pages;
	uint64_t synced_files, synced_pages;
	void *seen;			/* tsearch tree of struct vt_id */
	ino_t crawl[VT_MAX_DEPTH];
	int depth;
	dev_t first_dev;
	bool first_dev_set;

	struct cli_pidfile pf;		/* -P, once written */
	struct pc_budget budget;
	struct pc_budget lock_budget;	/* -l/-L: what may be pinned (MemAvailable - reserve) */
	bool lock_budget_set;
	struct pc_warmer *warmer;
	struct pc_lock *locks;
	size_t nlocks, caplocks;

	int exit_pipe[2];
	pid_t daemon_pid;
} vt;

static void vt_send_exit(char code)
{
	if (vt.daemon_pid == 0 && vt.wait && write(vt.exit_pipe[1], &code, 1) < 0)
		fprintf(stderr, VT_NAME ": FATAL: write: %s", strerror(errno));
}

/* "vmtouch: KIND: message", as vmtouch prints its fatal errors and warnings */
static void __attribute__((format(printf, 2, 0))) vt_say(const char *kind, const char *fmt,
							 va_list ap)
{
	fflush(stdout);
	fprintf(stderr, VT_NAME ": %s: ", kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 1, 2), noreturn)) vt_fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vt_say("FATAL", fmt, ap);
	va_end(ap);
	vt_send_exit(1);
	exit(1);
}

static void __attribute__((format(printf, 1, 2))) vt_warn(const char *fmt, ...)
{
	va_list ap;

	if (vt.quiet)
		return;
	va_start(ap, fmt);
	vt_say("WARNING", fmt, ap);
	va_end(ap);
}

/* A name for people: control bytes and bytes that are not UTF-8 escaped. */
static const char *shown(const char *path)
{
	static char *buf[2];
	static int i;
	char *s = out_escape(path);

	if (!s)
		return path;
	i ^= 1;
	free(buf[i]);
	buf[i] = s;
	return s;
}

static void vt_usage(void)
{
	printf("\n"
	       "vmtouch v1.3.1 - the Virtual Memory Toucher by Doug Hoyte\n"
	       "Portable file system cache diagnostics and control\n\n"
	       "Usage: vmtouch [OPTIONS] ... FILES OR DIRECTORIES ...\n\nOptions:\n"
	       "  -t touch pages into memory\n"
	       "  -e evict pages from memory\n"
	       "  -l lock pages in physical memory with mlock(2)\n"
	       "  -L lock pages in physical memory with mlockall(2)\n"
	       "  -d daemon mode\n"
	       "  -m <size> max file size to touch\n"
	       "  -p <range> use the specified portion instead of the entire file\n"
	       "  -f follow symbolic links\n"
	       "  -F don't crawl different filesystems\n"
	       "  -h also count hardlinked copies\n"
	       "  -i <pattern> ignores files and directories that match this pattern\n"
	       "  -I <pattern> only process files that match this pattern\n"
	       "  -b <list file> get files or directories from the list file\n"
	       "  -0 in batch mode (-b) separate paths with NUL byte instead of newline\n"
	       "  -w wait until all pages are locked (only useful together with -d)\n"
	       "  -P <pidfile> write a pidfile (only useful together with -l or -L)\n"
	       "  -v verbose\n"
	       "  -q quiet\n");
	fflush(stdout);
	exit(1);
}

/* vmtouch's sizes for people: whole units, rounded down, no "B" */
static const char *vt_size(uint64_t n)
{
	static char buf[2][32];
	static int i;
	static const char unit[] = { 'K', 'M', 'G' };
	int u = -1;

	i ^= 1;
	while (n >= 1024 && u < 2) {
		n /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf[i], sizeof(buf[i]), "%llu", (unsigned long long)n);
	else
		snprintf(buf[i], sizeof(buf[i]), "%llu%c", (unsigned long long)n, unit[u]);
	return buf[i];
}

/* vmtouch's sizes: 4096, 4k, 100M, 1.5G (its parser, its messages) */
static uint64_t vt_parse_size(const char *arg)
{
	static const char *bad = "bad size. examples: 4096, 4k, 100M, 1.5G";
	size_t len = strlen(arg);
	char *s, *end;
	double mult = 1, val;

	if (len < 1)
		vt_fatal("%s", bad);
	s = strdup(arg);
	if (!s)
		vt_fatal("malloc: out of memory");
	if (isalpha((unsigned char)s[len - 1])) {
		switch (tolower((unsigned char)s[len - 1])) {
		case 'k': mult = 1024.0; break;
		case 'm': mult = 1024.0 * 1024; break;
		case 'g': mult = 1024.0 * 1024 * 1024; break;
		default: vt_fatal("unknown size multiplier: %c", tolower((unsigned char)s[len - 1]));
		}
		s[len - 1] = '\0';
	}
	val = strtod(s, &end);
	/* !(val >= 0): "nan" too, whose cast to an integer is undefined */
	if (!(val >= 0) || val == HUGE_VAL || *end != '\0')
		vt_fatal("%s", bad);
	free(s);
	val *= mult;
	if (val > (double)INT64_MAX)
		vt_fatal("%s", bad);
	return (uint64_t)val;
}

/* -p [LOW]-[HIGH] or HIGH */
static void vt_parse_range(const char *arg)
{
	const char *dash = strchr(arg, '-');
	uint64_t lo = 0, hi = 0;

	if (!dash) {
		hi = vt_parse_size(arg);
	} else {
		char *a = strndup(arg, (size_t)(dash - arg));

		if (!a)
			vt_fatal("malloc: out of memory");
		if (*a)
			lo = vt_parse_size(a);
		free(a);
		if (strchr(dash + 1, '-'))
			vt_fatal("malformed range: multiple hyphens");
		if (dash[1])
			hi = vt_parse_size(dash + 1);
	}
	vt.off = lo / vt.ps * vt.ps;
	if (hi) {
		if (hi <= vt.off)
			vt_fatal("range limits out of order");
		vt.max_len = hi - vt.off;
	}
}

static void vt_pattern(char **list, int *n, const char *arg, char opt)
{
	if (strlen(arg) > VT_MAX_PATTERN_LEN)
		vt_fatal("too long pattern provided to -%c: %s", opt, arg);
	if (*n >= VT_MAX_PATTERNS)
		vt_fatal("too many patterns passed to -%c. Max is %d", opt, VT_MAX_PATTERNS);
	list[*n] = strdup(arg);
	if (!list[*n])
		vt_fatal("malloc: out of memory");
	(*n)++;
}

/* Does the last component of path (POSIX basename(3): "a/b//" is "b") match? */
static bool vt_match(char *const *list, int n, const char *path)
{
	size_t end = strlen(path), start;
	char base[PATH_MAX];

	if (!n)
		return false;
	while (end > 1 && path[end - 1] == '/')
		end--;
	start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (start == end && end > 0)	/* "/" or "//": "/" */
		start = end - 1;
	snprintf(base, sizeof(base), "%.*s", (int)(end - start), path + start);
	for (int i = 0; i < n; i++)
		if (fnmatch(list[i], base, 0) == 0)
			return true;
	return false;
}

/* -v's chart: a character per pages_per_char pages, O all, o some, ' ' none */
static void vt_chart(const uint8_t *map, uint64_t pages, bool unknown)
{
	uint64_t per = pages <= VT_CHART_WIDTH ? 1 : pages / VT_CHART_WIDTH + 1;
	uint64_t in = 0, j = 0, cur = 0;

	fputs("\r[", stdout);
	for (uint64_t i = 0; i < pages; i++) {
		if (!unknown && map[i]) {
			cur++;
			in++;
		}
		if (++j == per || i + 1 == pages) {
			fputc(unknown ? '?' : cur == j ? 'O' : cur == 0 ? ' ' : 'o', stdout);
			j = cur = 0;
		}
	}
	if (unknown)
		printf("] ?/%llu", (unsigned long long)pages);
	else
		printf("] %llu/%llu", (unsigned long long)in, (unsigned long long)pages);
	fflush(stdout);
}

struct vt_map {
	uint8_t *map;
	uint64_t first, pages;
};

static int vt_map_run(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct vt_map *m = arg;

	if (!resident)
		return 0;
	for (uint64_t p = first; p < first + n; p++)
		if (p >= m->first && p - m->first < m->pages)
			m->map[p - m->first] = 1;
	return 0;
}

/* The range's pages, one byte each (1: resident); false: unknown */
static bool vt_scan(int fd, const struct stat *st, uint64_t size, uint64_t len, uint8_t *map,
		    uint64_t pages)
{
	struct vt_map m = { map, vt.off / vt.ps, pages };

	memset(map, 0, pages);
	if (!pc_fd_residency_allowed(fd, st))
		return false;
	return pc_fd_scan(fd, size, vt.off, len, vt_map_run, &m) >= 0;
}

static void vt_keep_lock(const struct pc_lock *l)
{
	if (pc_grow(&vt.locks, &vt.caplocks, vt.nlocks, sizeof(*vt.locks)) < 0)
		vt_fatal("malloc: out of memory");
	vt.locks[vt.nlocks++] = *l;
}

/*
 * vmtouch_file: one regular file or block device, its range. Opened by
 * name in the directory the walk holds open, not by its path, never
 * through a symlink unless -f, and only if it is still the file the walk
 * saw (was): root walking a tree its owner is changing opens nothing else.
 */
static void vt_file(int dfd, const char *name, const char *path, const struct stat *was)
{
	int flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (vt.follow ? 0 : O_NOFOLLOW);
	uint64_t size, len, pages;
	uint8_t *map = NULL;
	bool unknown = false;
	struct stat st;
	int fd, rc;

	fd = openat(dfd, name, flags | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = openat(dfd, name, flags);
	if (fd < 0) {
		vt_warn("unable to open %s (%s), skipping", shown(path), strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0) {
		vt_warn("unable to fstat %s (%s), skipping", shown(path), strerror(errno));
		goto out;
	}
	if (st.st_dev != was->st_dev || st.st_ino != was->st_ino) {
		vt_warn("%s changed while walked, skipping", shown(path));
		goto out;
	}
	/* swapped between lstat and open: never read a FIFO or a device */
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		vt_warn("skipping non-regular file: %s", shown(path));
		goto out;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size)) {
			vt_warn("unable to ioctl %s (%s), skipping", shown(path), strerror(errno));
			goto out;
		}
	} else {
		size = (uint64_t)st.st_size;
	}
	if (size == 0)
		goto out;
	if (size > vt.max_size) {
		vt_warn("file %s too large, skipping", shown(path));
		goto out;
	}
	if (vt.max_len > 0 && vt.off + vt.max_len < size) {
		len = vt.max_len;
	} else if (vt.off >= size) {
		vt_warn("file %s smaller than offset, skipping", shown(path));
		goto out;
	} else {
		len = size - vt.off;
	}
	/* a read there can act (sysfs resource files): an interface, not data */
	if (S_ISREG(st.st_mode) && pc_fd_kernel_fs(fd)) {
		vt_warn("not touching %s: a file of a kernel interface filesystem, not page cache",
			shown(path));
		goto out;
	}
	pages = (len + vt.ps - 1) / vt.ps;
	vt.pages += pages;

	if (vt.lock || vt.lockall) {
		/*
		 * Pinned pages cannot be reclaimed: past MemAvailable less the
		 * reserve, vmtouch's mlock wakes the OOM killer against others.
		 * Refused instead, before anything of this file is read or locked.
		 */
		if (!vt.lock_budget_set) {
			rc = pc_budget_init(&vt.lock_budget, UINT64_MAX, UINT64_MAX);
			if (rc < 0)
				vt_fatal("memory budget: %s", strerror(-rc));
			vt.lock_budget_set = true;
		}
		if (!pc_budget_take(&vt.lock_budget, len))
			vt_fatal("mlock: %s (not locked: %s; pagecache's vmtouch never pins "
				 "memory the system needs)", shown(path),
				 pc_budget_reason(vt.lock_budget.stopped));
	}

	if (vt.evict) {
		struct pc_evict_result er;

		if (vt.verbose)
			printf("Evicting %s\n", shown(path));
		rc = pc_fd_evict(fd, size, vt.off, len, &er);
		if (rc < 0) {
			vt_warn("unable to posix_fadvise file %s (%s)", shown(path), strerror(-rc));
		} else if (er.before.dirty + er.before.writeback) {
			vt.synced_files++;
			vt.synced_pages += er.before.dirty + er.before.writeback;
		}
		goto out;
	}

	if (vt.verbose) {
		map = malloc(pages);
		if (!map)
			vt_fatal("Failed to allocate memory for mincore array (%s)", strerror(errno));
		unknown = !vt_scan(fd, &st, size, len, map, pages);
		if (unknown) {
			vt.unknown_files++;
			vt.unknown_pages += pages;
		} else {
			for (uint64_t i = 0; i < pages; i++)
				vt.resident += map[i];
			vt.known += pages;
		}
		printf("%s\n", shown(path));
		vt_chart(map, pages, unknown);
	} else if (!vt.touch) {
		struct pc_residency r;

		rc = pc_fd_residency(fd, size, vt.off, len, &r);
		if (rc < 0 || r.source == PC_SRC_NONE) {
			vt.unknown_files++;
			vt.unknown_pages += pages;
		} else {
			vt.resident += r.cached;
			vt.known += pages;
		}
	}

	if (vt.touch) {
		struct pc_warm_result wr = { 0 };
		int wfd = dup(fd);

		if (wfd < 0)
			vt_fatal("dup: %s", strerror(errno));
		rc = pc_warmer_add(vt.warmer, wfd, path, &st, vt.off, len);
		if (rc >= 0)
			rc = pc_warmer_drain(vt.warmer);
		while (pc_warmer_next_result(vt.warmer, &wr))
			if (wr.err && rc >= 0)
				rc = -wr.err;
		if (rc < 0)
			vt_warn("unable to touch %s (%s)", shown(path), strerror(-rc));
		if (vt.verbose) {
			/* what is there now; where that is refused, what was read */
			unknown = !vt_scan(fd, &st, size, len, map, pages);
			if (unknown && rc >= 0) {
				memset(map, 1, pages);
				unknown = false;
			}
		}
	}
	if (vt.verbose) {	/* drawn again, as vmtouch does, touched or not */
		vt_chart(map, pages, unknown);
		putchar('\n');
	}

	if (vt.lock || vt.lockall) {
		struct pc_lock l;

		rc = pc_fd_lock(fd, size, vt.off, len, &l);
		if (rc < 0) {
			if (vt.lockall)
				vt_fatal("unable to mlockall (%s)", strerror(-rc));
			vt_fatal("mlock: %s (%s)", shown(path), strerror(-rc));
		}
		vt_keep_lock(&l);
	}
out:
	free(map);
	close(fd);
}

static int vt_id_cmp(const void *a, const void *b)
{
	const struct vt_id *x = a, *y = b;

	if (x->ino != y->ino)
		return x->ino < y->ino ? -1 : 1;
	return (x->dev > y->dev) - (x->dev < y->dev);
}

/* A file with other links seen already? Remembered if not. */
static bool vt_seen(const struct stat *st)
{
	struct vt_id key = { st->st_dev, st->st_ino }, *n;

	if (tfind(&key, &vt.seen, vt_id_cmp))
		return true;
	n = malloc(sizeof(*n));
	if (!n)
		vt_fatal("malloc: out of memory");
	*n = key;
	if (!tsearch(n, &vt.seen, vt_id_cmp))
		vt_fatal("tsearch: out of memory");
	return false;
}

/*
 * vmtouch_crawl: name in directory dfd, path the name shown (and matched);
 * path may be changed (a trailing '/' cut). Each directory is held open
 * while its entries are walked, and entered by name beneath it, so a
 * directory swapped for a symlink mid-walk leads nowhere else.
 */
static void vt_crawl(int dfd, const char *name, char *path)
{
	size_t plen = strlen(path);
	struct stat st;
	int rc;

	if (plen > 1 && path[plen - 1] == '/')
		path[plen - 1] = '\0';
	if (vt_match(vt.ignore, vt.nignore, path))
		return;
	rc = fstatat(dfd, name, &st, vt.follow ? 0 : AT_SYMLINK_NOFOLLOW);
	if (rc) {
		vt_warn("unable to stat %s (%s)", shown(path), strerror(errno));
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		vt_warn("not following symbolic link %s", shown(path));
		return;
	}
	if (vt.one_fs) {
		if (!vt.first_dev_set) {
			vt.first_dev = st.st_dev;
			vt.first_dev_set = true;
		} else if (st.st_dev != vt.first_dev) {
			vt_warn("not recursing into separate filesystem %s", shown(path));
			return;
		}
	}
	/* a directory has links too: one reached twice (-f) is skipped here */
	if (!vt.all_links && st.st_nlink > 1 && vt_seen(&st))
		return;

	if (S_ISDIR(st.st_mode)) {
		struct dirent *de;
		struct stat now;
		DIR *d;
		int fd;

		for (int i = 0; i < vt.depth; i++)
			if (vt.crawl[i] == st.st_ino) {
				vt_warn("symbolic link loop detected: %s", shown(path));
				return;
			}
		if (vt.depth == VT_MAX_DEPTH)
			vt_fatal("maximum directory crawl depth reached: %s", shown(path));
		vt.dirs++;
		vt.crawl[vt.depth] = st.st_ino;
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC |
					       (vt.follow ? 0 : O_NOFOLLOW));
		if (fd >= 0 && (fstat(fd, &now) < 0 || now.st_dev != st.st_dev ||
				now.st_ino != st.st_ino)) {
			close(fd);
			fd = -1;
			errno = ESTALE;		/* changed between the stat and the open */
		}
		d = fd >= 0 ? fdopendir(fd) : NULL;
		if (!d) {
			vt_warn("unable to opendir %s (%s), skipping", shown(path), strerror(errno));
			if (fd >= 0)
				close(fd);
			return;
		}
		while ((de = readdir(d))) {
			char np[PATH_MAX];

			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			if ((size_t)snprintf(np, sizeof(np), "%s/%s", path, de->d_name) >= sizeof(np)) {
				vt_warn("path too long %s", shown(path));
				break;
			}
			vt.depth++;
			vt_crawl(dirfd(d), de->d_name, np);
			vt.depth--;
		}
		closedir(d);
	} else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		if (vt.nonly && !vt_match(vt.only, vt.nonly, path))
			return;
		vt.files++;
		vt_file(dfd, name, path, &st);
	} else {
		vt_warn("skipping non-regular file: %s", shown(path));
	}
}

/*
 * -b: paths one a line (-0: NUL-separated); "-" is stdin. The list is read
 * whole first, and one that is not text (a NUL byte without -0) is refused
 * before any of it is acted on: a binary file's "lines" are junk, one of
 * them maybe "/". The last line needs no newline.
 */
static void vt_batch(const char *list)
{
	int delim = vt.nul ? '\0' : '\n';
	bool is_stdin = !strcmp(list, "-");
	char *buf = NULL, *p, *end, *nul;
	size_t len = 0, cap = 0, line = 0;	/* line: where the last line begins */
	FILE *f;

	f = is_stdin ? stdin : fopen(list, "re");
	if (!f) {
		vt_warn("unable to open %s (%s), skipping", shown(list), strerror(errno));
		return;
	}
	/*
	 * Refused as it is read, not once read whole: a big binary file (or
	 * /dev/zero) read whole first would take all memory before its first
	 * NUL byte was seen.
	 */
	for (;;) {
		size_t n;

		if (len + 1 >= cap && pc_grow(&buf, &cap, len + 65536, 1) < 0)
			vt_fatal("malloc: out of memory");
		n = fread(buf + len, 1, cap - len - 1, f);
		if (!vt.nul && (nul = memchr(buf + len, '\0', n)))
			vt_fatal("%s is not a list of paths: a NUL byte at offset %zu "
				 "(-0 reads NUL-separated lists)", shown(list), (size_t)(nul - buf));
		for (size_t i = len; i < len + n; i++)
			if (buf[i] == delim)
				line = i + 1;
		len += n;
		if (len - line > PATH_MAX)
			vt_fatal("%s is not a list of paths: a line longer than %d bytes at offset %zu",
				 shown(list), PATH_MAX, line);
		if (n == 0)
			break;
	}
	if (ferror(f))
		vt_warn("unable to read %s (%s)", shown(list), strerror(errno));
	if (!is_stdin)
		fclose(f);
	if (!buf)
		return;
	buf[len] = delim;
	for (p = buf, end = buf + len; p < end; p = nul + 1) {
		nul = memchr(p, delim, (size_t)(end - p) + 1);
		*nul = '\0';
		vt_crawl(AT_FDCWD, p, p);	/* an empty line too: vmtouch warns of it */
	}
	free(buf);
}

/*
 * -P: written as lock -P writes it, not through fopen(3) as vmtouch does: as
 * root in a directory others may write, a symlink planted at the name would
 * have root truncate the file it points to, and a FIFO would hang it with
 * the signals that end it blocked.
 */
static void vt_write_pidfile(void)
{
	int rc = cli_pidfile_write(&vt.pf);

	if (rc < 0)
		vt_warn("unable to open pidfile %s (%s), skipping", shown(vt.pidfile),
			strerror(-rc));
}

static volatile sig_atomic_t vt_stop;

static void vt_on_signal(int sig)
{
	(void)sig;
	vt_stop = 1;
}

static void vt_reopen_all(void)
{
	if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
		vt_fatal("freopen: %s", strerror(errno));
}

/* -d: the child locks and stays; the parent exits (-w: with the child's word) */
static void vt_daemon(void)
{
	vt.daemon_pid = fork();
	if (vt.daemon_pid < 0)
		vt_fatal("fork: %s", strerror(errno));
	if (vt.daemon_pid) {
		char code = 0;
		int status;

		if (!vt.wait)
			exit(0);
		for (;;) {
			struct timeval tv = { 1, 0 };
			fd_set rfds;

			FD_ZERO(&rfds);
			FD_SET(vt.exit_pipe[0], &rfds);
			if (select(vt.exit_pipe[0] + 1, &rfds, NULL, NULL, &tv) < 0 && errno != EINTR)
				vt_fatal("select: %s", strerror(errno));
			if (waitpid(vt.daemon_pid, &status, WNOHANG) > 0)
				vt_fatal("daemon shut down unexpectedly");
			if (FD_ISSET(vt.exit_pipe[0], &rfds))
				break;
		}
		if (read(vt.exit_pipe[0], &code, 1) < 0)
			vt_fatal("read: %s", strerror(errno));
		exit(code);
	}
	if (setsid() < 0)
		vt_fatal("setsid: %s", strerror(errno));
	if (!vt.wait)
		vt_reopen_all();
}

/* What vmtouch would have said otherwise, once, at the end */
static void vt_notes(void)
{
	if (vt.quiet)
		return;
	if (vt.unknown_files)
		fprintf(stderr,
			VT_NAME ": %llu file%s (%llu pages) of unknown residency: the kernel shows "
			"this user no true residency of files it may not write (vmtouch prints "
			"them all resident); left out of Resident Pages\n",
			(unsigned long long)vt.unknown_files, vt.unknown_files == 1 ? "" : "s",
			(unsigned long long)vt.unknown_pages);
	if (vt.synced_files)
		fprintf(stderr,
			VT_NAME ": wrote back %llu dirty page%s of %llu file%s before evicting "
			"(vmtouch leaves dirty pages cached)\n",
			(unsigned long long)vt.synced_pages, vt.synced_pages == 1 ? "" : "s",
			(unsigned long long)vt.synced_files, vt.synced_files == 1 ? "" : "s");
}

static void vt_options(int argc, char **argv)
{
	int ch;

	optind = 0;			/* GNU getopt afresh: permutes, as vmtouch's */
	opterr = 0;
	while ((ch = getopt(argc, argv, ":tevqlLdfFh0i:I:p:b:m:P:w")) != -1) {
		switch (ch) {
		case '?':
			fprintf(stderr, VT_NAME ": invalid option -- '%c'\n", optopt);
			vt_usage();
			break;
		case ':':
			fprintf(stderr, VT_NAME ": option requires an argument -- '%c'\n", optopt);
			vt_usage();
			break;
		case 't': vt.touch = true; break;
		case 'e': vt.evict = true; break;
		case 'q': vt.quiet = true; break;
		case 'v': vt.verbose++; break;
		case 'l': vt.lock = vt.touch = true; break;
		case 'L': vt.lockall = vt.touch = true; break;
		case 'd': vt.daemon = true; break;
		case 'f': vt.follow = true; break;
		case 'F': vt.one_fs = true; break;
		case 'h': vt.all_links = true; break;
		case 'p': vt_parse_range(optarg); break;
		case 'i': vt_pattern(vt.ignore, &vt.nignore, optarg, 'i'); break;
		case 'I': vt_pattern(vt.only, &vt.nonly, optarg, 'I'); break;
		case 'm': vt.max_size = vt_parse_size(optarg); break;
		case 'w': vt.wait = true; break;
		case 'b': vt.batch = optarg; break;
		case '0': vt.nul = true; break;
		case 'P': vt.pidfile = vt.pf.path = optarg; break;
		}
	}
	if (vt.touch && vt.evict)
		vt_fatal("invalid option combination: -t and -e");
	if (vt.evict && vt.lock)
		vt_fatal("invalid option combination: -e and -l");
	if (vt.lock && vt.lockall)
		vt_fatal("invalid option combination: -l and -L");
	if (vt.daemon) {
		if (!vt.lock && !vt.lockall)
			vt_fatal("daemon mode must be combined with -l or -L");
		if (!vt.wait) {
			vt.quiet = true;
			vt.verbose = 0;
		}
	}
	if (vt.wait && !vt.daemon)
		vt_fatal("wait mode must be combined with -d");
	if (vt.quiet && vt.verbose)
		vt_fatal("invalid option combination: -q and -v");
	if (vt.pidfile && !vt.lock && !vt.lockall)
		vt_fatal("pidfile can only be created when -l or -L is specified");
	if (optind >= argc && !vt.batch) {
		printf(VT_NAME ": no files or directories specified\n");
		vt_usage();
	}
}

int cmd_vmtouch(int argc, char **argv)
{
	struct pc_warm_opts wo = { 0 };
	struct timeval t0, t1;
	int rc;

	vt.ps = pc_page_size();
	vt.max_size = UINT64_MAX;
	if (pipe(vt.exit_pipe))
		vt_fatal("pipe: %s", strerror(errno));
	vt_options(argc, argv);

	/* before anything is locked: mlock is not inherited across fork */
	if (vt.daemon)
		vt_daemon();

	if (vt.touch) {
		/* vmtouch touches whatever memory says: no reserve, no maximum */
		rc = pc_budget_init(&vt.budget, UINT64_MAX, 0);
		if (rc < 0)
			vt_fatal("memory budget: %s", strerror(-rc));
		wo.budget = &vt.budget;
		wo.engine = PC_ENGINE_AUTO;
		rc = pc_warmer_new(&wo, &vt.warmer);
		if (rc < 0)
			vt_fatal("cannot start the warming engine: %s", strerror(-rc));
	}

	gettimeofday(&t0, NULL);
	if (vt.batch)
		vt_batch(vt.batch);
	for (int i = optind; i < argc; i++)
		vt_crawl(AT_FDCWD, argv[i], argv[i]);
	gettimeofday(&t1, NULL);
	if (vt.warmer)
		pc_warmer_free(vt.warmer);

	if (vt.lock || vt.lockall) {
		struct sigaction sa = { .sa_handler = vt_on_signal };
		sigset_t block, old;

		if (vt.lockall && mlockall(MCL_CURRENT))
			vt_fatal("unable to mlockall (%s)", strerror(errno));
		/* a signal before the wait must not be lost */
		sigemptyset(&block);
		sigaddset(&block, SIGINT);
		sigaddset(&block, SIGTERM);
		sigaddset(&block, SIGQUIT);
		sigprocmask(SIG_BLOCK, &block, &old);
		if (vt.pidfile) {
			if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0 ||
			    sigaction(SIGQUIT, &sa, NULL) < 0)
				vt_warn("unable to register signals for pidfile (%s), skipping",
					strerror(errno));
			vt_write_pidfile();
		}
		if (!vt.quiet)
			printf("LOCKED %llu pages (%s)\n", (unsigned long long)vt.pages,
			       vt_size(vt.pages * vt.ps));
		fflush(stdout);
		if (vt.wait)
			vt_reopen_all();
		vt_send_exit(0);
		if (!vt.pidfile)	/* no pidfile: the signal ends it as it would vmtouch */
			sigprocmask(SIG_SETMASK, &old, NULL);
		while (!vt_stop)
			sigsuspend(&old);
		if (vt.pidfile)
			cli_pidfile_remove(&vt.pf);
		for (size_t i = 0; i < vt.nlocks; i++)
			pc_unlock(&vt.locks[i]);
		exit(0);
	}

	if (!vt.quiet) {
		if (vt.verbose)
			printf("\n");
		printf("           Files: %llu\n", (unsigned long long)vt.files);
		printf("     Directories: %llu\n", (unsigned long long)vt.dirs);
		if (vt.touch) {
			printf("   Touched Pages: %llu (%s)\n", (unsigned long long)vt.pages,
			       vt_size(vt.pages * vt.ps));
		} else if (vt.evict) {
			printf("   Evicted Pages: %llu (%s)\n", (unsigned long long)vt.pages,
			       vt_size(vt.pages * vt.ps));
		} else {
			printf("  Resident Pages: %llu/%llu  %s/", (unsigned long long)vt.resident,
			       (unsigned long long)vt.known, vt_size(vt.resident * vt.ps));
			printf("%s  ", vt_size(vt.known * vt.ps));
			if (vt.known)
				printf("%.3g%%", 100.0 * (double)vt.resident / (double)vt.known);
			printf("\n");
		}
		printf("         Elapsed: %.5g seconds\n",
		       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_usec - t0.tv_usec) / 1e6);
		fflush(stdout);
	}
	vt_notes();
	return 0;
}
