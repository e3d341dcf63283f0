/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.c: the filemap tracepoints through perf_event_open, without BPF.
 *
 * What it promises: every event of the kinds asked for, from the processes
 * asked for, handed over in order per CPU with its fields read at the
 * offsets the kernel's own format file gives (libtraceevent parses it:
 * the man page calls the raw layout no ABI); events the rings had no room
 * for are counted (PERF_RECORD_LOST), never silently missing; and nothing
 * of the system changed once pc_trace_close returns, or the process dies.
 *
 * Shape: one perf event per (kind, CPU[, thread]), every event of a CPU
 * writing into that CPU's one ring (PERF_EVENT_IOC_SET_OUTPUT), one epoll
 * fd over the rings for the caller's poll. A sample's raw data begins with
 * common_type, the event's id: that says which kind it is.
 *
 * tracefs: the ids and formats are read once, at open. If tracefs is
 * mounted we read it there; if not, a child unshares its mount namespace,
 * mounts tracefs privately, writes the formats down a pipe and exits: the
 * mount dies with its namespace, so no mount is ever left behind, even
 * after a kill -9, and no other process sees one come and go.
 *
 * pid mode: the kernel's pid filter is per thread, so every thread of the
 * process gets its events, with inherit (which needs per-CPU events for a
 * ring to be mapped: we always open per CPU) so that threads started later
 * are followed; without `children`, samples of other processes (inherit
 * follows fork too) are dropped here by their tgid.
 *
 * Kernels before 6.12 have no use events (get_pages, map_pages, fault):
 * a caller that can do without them marks them optional and learns from
 * pc_trace_kinds what it got: add and delete (4.x) say what was brought in
 * and dropped, not what was used from the cache. The tests pretend to be
 * such a kernel with PAGECACHE_FAULT=filemap_get_pages:ENOENT.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <event-parse.h>

#define TR_NKINDS 6
#define TR_DEFAULT_PAGES 128u		/* 512 KiB a CPU */
#define TR_MAX_FORMAT 16384

static const struct tr_event_name {
	unsigned kind;
	const char *sys, *name;
} tr_names[TR_NKINDS] = {
	{ PC_TR_ADD, "filemap", "mm_filemap_add_to_page_cache" },
	{ PC_TR_DELETE, "filemap", "mm_filemap_delete_from_page_cache" },
	{ PC_TR_GET_PAGES, "filemap", "mm_filemap_get_pages" },
	{ PC_TR_MAP_PAGES, "filemap", "mm_filemap_map_pages" },
	{ PC_TR_FAULT, "filemap", "mm_filemap_fault" },
	{ PC_TR_DIRTY, "writeback", "writeback_dirty_folio" },
};

struct tr_event {
	unsigned kind;
	const char *tp;			/* the tracepoint's name */
	int id;				/* the tracepoint's id (common_type) */
	struct tep_format_field *ino, *dev, *index, *last, *order, *name;
};

struct tr_ring {
	int cpu;
	int fd;				/* the event whose ring it is */
	struct perf_event_mmap_page *meta;
	size_t map_len;
	unsigned char *data;
	uint64_t size;			/* data_size, a power of two */
};

struct pc_trace {
	struct tep_handle *tep;
	struct tr_event ev[TR_NKINDS];
	int nev;
	unsigned kinds;			/* the PC_TR_ kinds open */
	struct tr_ring *rings;
	int nrings;
	int *fds;			/* every event fd, the rings' included */
	size_t nfds, capfds;
	int epfd;
	uint64_t lost;
	pid_t pid;			/* pid mode without children: keep only this tgid */
	int *acc_fds;			/* count_accessed: the kprobe counters */
	int nacc;
	int acc_err;			/* 0, or why there are none (-errno) */
	const char *acc_func;		/* the function probed */
	unsigned char *tmp;		/* a record that wraps around the ring's end */
	size_t tmplen;
};

uint64_t pc_trace_dev(uint32_t kdev)
{
	return makedev(kdev >> 20, kdev & 0xfffff);
}

/* ---- tracefs: the events' formats ----------------------------------------- */

/* A mounted tracefs in our namespace, from mountinfo: 0 and its path, or -ENOENT. */
static int tracefs_mounted(char *ret, size_t len)
{
	int err = 0;
	FILE *f = pc_sys_fopen_read("/proc/self/mountinfo", &err);
	char *line = NULL;
	size_t cap = 0;
	int rc = -ENOENT;

	if (!f)
		return err;
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], *dash = strstr(line, " - ");
		char fstype[64];

		if (!dash || sscanf(dash, " - %63s", fstype) != 1 || strcmp(fstype, "tracefs"))
			continue;
		if (sscanf(line, "%*d %*d %*u:%*u %*s %4095s", mnt) != 1)
			continue;
		/* octal escapes (\040) in mountinfo: a path with them is not one we try */
		if (strchr(mnt, '\\'))
			continue;
		if (snprintf(ret, len, "%s", mnt) < (int)len) {
			rc = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

/*
 * Read the formats of the wanted events into bufs[i] (NUL-terminated;
 * lens[i] = 0: the event is missing): from dir, or (dir NULL) through a
 * child that mounts tracefs privately. 0 or -errno.
 */
static int read_file_into(const char *path, char *buf, size_t cap, size_t *ret_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return -errno;
	while (n + 1 < cap) {
		ssize_t r = read(fd, buf + n, cap - 1 - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = -errno;

			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*ret_len = n;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p = (const char *)p + w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t r = read(fd, p, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		p = (char *)p + r;
		n -= (size_t)r;
	}
	return 0;
}

/*
 * The child: only system calls, on memory prepared before fork (the parent
 * may have threads: no malloc, no stdio). Writes an int (0, or -errno: the
 * mount failed), then per event an int (0, or -errno) and, on 0, a size_t
 * and the text.
 */
#define TR_NDIRS 3
static const char *const tr_dirs[TR_NDIRS] = { "/sys/kernel/tracing", "/tmp", "/" };

static void __attribute__((noreturn)) format_child(int wfd, const unsigned *want,
						   char (*paths)[TR_NKINDS][128], char *buf)
{
	int status = 0, d = 0;

	if (unshare(CLONE_NEWNS) < 0)
		status = -errno;
	else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		status = -errno;
	if (!status) {
		for (d = 0; d < TR_NDIRS; d++) {
			status = mount("tracefs", tr_dirs[d], "tracefs",
				       MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) ? -errno : 0;
			if (!status)
				break;
		}
	}
	if (write_all(wfd, &status, sizeof(status)) < 0 || status)
		_exit(status ? 1 : 2);
	for (int i = 0; i < TR_NKINDS; i++) {
		size_t n = 0;
		int rc;

		if (!want[i])
			continue;
		rc = read_file_into(paths[d][i], buf, TR_MAX_FORMAT, &n);
		if (write_all(wfd, &rc, sizeof(rc)) < 0 ||
		    (!rc && (write_all(wfd, &n, sizeof(n)) < 0 || write_all(wfd, buf, n) < 0)))
			_exit(2);
	}
	_exit(0);
}

static int read_formats(const char *dir, const unsigned *want, char **bufs, int *rcs,
			char *err, size_t errlen)
{
	int p[2], status, rc = 0, mrc = 0;
	pid_t child;
	char *scratch, (*paths)[TR_NKINDS][128];

	if (dir) {
		for (int i = 0; i < TR_NKINDS; i++) {
			char path[4352];
			size_t n;

			if (!want[i])
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/%s/format", dir, tr_names[i].sys,
				 tr_names[i].name);
			rcs[i] = read_file_into(path, bufs[i], TR_MAX_FORMAT, &n);
		}
		return 0;
	}
	scratch = malloc(TR_MAX_FORMAT);
	paths = malloc(sizeof(*paths) * TR_NDIRS);
	if (!scratch || !paths) {
		free(scratch);
		free(paths);
		return -ENOMEM;
	}
	for (int d = 0; d < TR_NDIRS; d++)
		for (int i = 0; i < TR_NKINDS; i++)
			snprintf(paths[d][i], sizeof(paths[d][i]), "%s/events/%s/%s/format",
				 strcmp(tr_dirs[d], "/") ? tr_dirs[d] : "", tr_names[i].sys,
				 tr_names[i].name);
	if (pipe2(p, O_CLOEXEC) < 0) {
		rc = -errno;
		free(scratch);
		free(paths);
		return rc;
	}
	child = fork();
	if (child < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		free(scratch);
		free(paths);
		return rc;
	}
	if (child == 0) {
		close(p[0]);
		format_child(p[1], want, paths, scratch);
	}
	close(p[1]);
	free(scratch);
	free(paths);
	if (read_all(p[0], &mrc, sizeof(mrc)) < 0) {
		rc = -EIO;
	} else if (mrc) {
		rc = mrc;
		snprintf(err, errlen, "tracefs is not mounted, and mounting it failed: %s%s",
			 strerror(-mrc), mrc == -EPERM ? " (it needs CAP_SYS_ADMIN)" : "");
	} else {
		for (int i = 0; i < TR_NKINDS && !rc; i++) {
			size_t n;

			if (!want[i])
				continue;
			if (read_all(p[0], &rcs[i], sizeof(rcs[i])) < 0) {
				rc = -EIO;
				break;
			}
			if (rcs[i])
				continue;
			if (read_all(p[0], &n, sizeof(n)) < 0 || n >= TR_MAX_FORMAT ||
			    read_all(p[0], bufs[i], n) < 0) {
				rc = -EIO;
				break;
			}
			bufs[i][n] = 0;
		}
	}
	close(p[0]);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == -EIO)
		snprintf(err, errlen, "could not read the events' formats from tracefs");
	return rc;
}

static int setup_events(struct pc_trace *t, unsigned kinds, unsigned optional, char *err,
			size_t errlen)
{
	unsigned want[TR_NKINDS] = { 0 };
	char *bufs[TR_NKINDS] = { NULL };
	int rcs[TR_NKINDS] = { 0 };
	char dir[4096];
	int rc = 0, pretend;

	for (int i = 0; i < TR_NKINDS; i++) {
		if (!(kinds & tr_names[i].kind))
			continue;
		want[i] = 1;
		bufs[i] = malloc(TR_MAX_FORMAT);
		if (!bufs[i]) {
			rc = -ENOMEM;
			goto out;
		}
	}
	rc = read_formats(tracefs_mounted(dir, sizeof(dir)) == 0 ? dir : NULL, want, bufs, rcs,
			  err, errlen);
	if (rc)
		goto out;
	/* the tests' kernel before 6.12 (PAGECACHE_FAULT=filemap_get_pages:ENOENT) */
	pretend = pc_sys_injected(PC_SYS_TRACE_USE);
	for (int i = 0; i < TR_NKINDS && pretend > 0; i++)
		if (want[i] && (tr_names[i].kind & PC_TR_USE))
			rcs[i] = -pretend;
	for (int i = 0; i < TR_NKINDS; i++)
		if (want[i] && rcs[i] == -ENOENT && (optional & tr_names[i].kind))
			want[i] = 0;	/* not on this kernel, and not needed */
	tep_set_loglevel(TEP_LOG_NONE);
	t->tep = tep_alloc();
	if (!t->tep) {
		rc = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < TR_NKINDS; i++) {
		struct tr_event *e = &t->ev[t->nev];
		struct tep_event *te = NULL;

		if (!want[i])
			continue;
		if (rcs[i]) {
			rc = rcs[i] == -ENOENT ? -ENOENT : rcs[i];
			if (rcs[i] == -ENOENT)
				snprintf(err, errlen, "the event %s:%s is missing on this kernel%s",
					 tr_names[i].sys, tr_names[i].name,
					 tr_names[i].kind & PC_TR_USE
						 ? " (the filemap use events came in Linux 6.12)"
						 : "");
			else
				snprintf(err, errlen, "cannot read the format of %s:%s: %s",
					 tr_names[i].sys, tr_names[i].name, strerror(-rcs[i]));
			goto out;
		}
		if (tep_parse_event(t->tep, bufs[i], strlen(bufs[i]), tr_names[i].sys) != 0 ||
		    !(te = tep_find_event_by_name(t->tep, tr_names[i].sys, tr_names[i].name))) {
			rc = -EPROTO;
			snprintf(err, errlen, "cannot parse the format of %s:%s", tr_names[i].sys,
				 tr_names[i].name);
			goto out;
		}
		e->kind = tr_names[i].kind;
		e->tp = tr_names[i].name;
		e->id = te->id;
		e->ino = tep_find_field(te, "i_ino");
		if (!e->ino)
			e->ino = tep_find_field(te, "ino");
		e->dev = tep_find_field(te, "s_dev");
		e->index = tep_find_field(te, "index");
		e->last = tep_find_field(te, "last_index");
		e->order = tep_find_field(te, "order");
		e->name = tep_find_field(te, "name");
		if (!e->ino || !e->index || (!e->dev && e->kind != PC_TR_DIRTY) ||
		    (!e->last && (e->kind & (PC_TR_GET_PAGES | PC_TR_MAP_PAGES)))) {
			rc = -EPROTO;
			snprintf(err, errlen, "the event %s:%s lacks a field this library reads "
				 "(ino, dev, index or last_index)", tr_names[i].sys, tr_names[i].name);
			goto out;
		}
		t->kinds |= e->kind;
		t->nev++;
	}
	if (!rc && !t->nev) {
		rc = -ENOENT;
		snprintf(err, errlen, "none of the events asked for is on this kernel");
	}
out:
	for (int i = 0; i < TR_NKINDS; i++)
		free(bufs[i]);
	return rc;
}

/* ---- perf events ---------------------------------------------------------- */

/* The online CPUs (/sys/devices/system/cpu/online: "0-3,5"), or -errno. */
static int online_cpus(int **ret)
{
	char text[1024], *p = text;
	int *cpus = NULL, n = 0, rc;

	rc = pc_read_text("/sys/devices/system/cpu/online", text, sizeof(text));
	if (rc < 0) {
		long k = sysconf(_SC_NPROCESSORS_ONLN);

		snprintf(text, sizeof(text), "0-%ld", k > 0 ? k - 1 : 0);
	}
	while (*p && *p != '\n') {
		char *end;
		long a = strtol(p, &end, 10), b = a;
		int *grown;

		if (end == p)
			break;
		p = end;
		if (*p == '-')
			b = strtol(p + 1, &p, 10);
		if (a < 0 || b < a || b > 65535) {
			free(cpus);
			return -EINVAL;
		}
		grown = realloc(cpus, (size_t)(n + (b - a) + 1) * sizeof(*cpus));
		if (!grown) {
			free(cpus);
			return -ENOMEM;
		}
		cpus = grown;
		for (long c = a; c <= b; c++)
			cpus[n++] = (int)c;
		if (*p == ',')
			p++;
	}
	if (!n) {
		free(cpus);
		return -EINVAL;
	}
	*ret = cpus;
	return n;
}

/* The threads of pid (/proc/PID/task), or -errno (-ESRCH: it is gone). */
static int threads_of(pid_t pid, pid_t **ret)
{
	char path[64];
	DIR *d;
	struct dirent *de;
	pid_t *tids = NULL;
	int n = 0, cap = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		long tid = strtol(de->d_name, NULL, 10);

		if (tid <= 0)
			continue;
		if (n == cap) {
			pid_t *g = realloc(tids, (size_t)(cap = cap ? cap * 2 : 16) * sizeof(*tids));

			if (!g) {
				free(tids);
				closedir(d);
				return -ENOMEM;
			}
			tids = g;
		}
		tids[n++] = (pid_t)tid;
	}
	closedir(d);
	if (!n) {
		free(tids);
		return -ESRCH;
	}
	*ret = tids;
	return n;
}

static int keep_fd(struct pc_trace *t, int fd)
{
	if (t->nfds == t->capfds) {
		size_t cap = t->capfds ? t->capfds * 2 : 32;
		int *g = realloc(t->fds, cap * sizeof(*g));

		if (!g)
			return -ENOMEM;
		t->fds = g;
		t->capfds = cap;
	}
	t->fds[t->nfds++] = fd;
	return 0;
}

static void perm_error(char *err, size_t errlen, int rc)
{
	char p[32] = "?";

	pc_read_text("/proc/sys/kernel/perf_event_paranoid", p, sizeof(p));
	p[strcspn(p, "\n")] = 0;
	snprintf(err, errlen, "perf_event_open on the filemap tracepoints: %s: it needs "
		 "CAP_PERFMON (or CAP_SYS_ADMIN)%s while kernel.perf_event_paranoid is %s (> -1)",
		 strerror(-rc), pc_have_cap(CAP_PERFMON) ? ", which this process has," : "", p);
}

/* Map the ring of events[0] of a CPU. */
static int map_ring(struct tr_ring *r, unsigned pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	void *m;

	r->map_len = (size_t)(pages + 1) * (size_t)psz;
	m = mmap(NULL, r->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED)
		return -errno;
	r->meta = m;
	r->data = (unsigned char *)m + (r->meta->data_offset ? r->meta->data_offset : (uint64_t)psz);
	r->size = r->meta->data_size ? r->meta->data_size : (uint64_t)pages * (uint64_t)psz;
	return 0;
}

/*
 * Pages marked accessed, counted (no samples: a hot function) by a kprobe
 * through perf's kprobe PMU, where the kernel has one (CONFIG_KPROBES;
 * Debian's do): folio_mark_accessed (5.16), else mark_page_accessed, what
 * bcc's cachestat counts. It tells no file, only how many: totals. No
 * tracefs, nothing left behind (the probe goes with the fd). 0 or -errno.
 */
static int open_accessed(struct pc_trace *t, const struct pc_trace_opts *o, const int *cpus,
			 int ncpu, const pid_t *tids, int nthr)
{
	static const char *const funcs[] = { "folio_mark_accessed", "mark_page_accessed" };
	struct perf_event_attr a;
	char text[32];
	int type, rc, n;

	if (pc_read_text("/sys/bus/event_source/devices/kprobe/type", text, sizeof(text)) < 0)
		return -ENOENT;	/* no kprobe PMU (no CONFIG_KPROBES, or before 4.17) */
	type = atoi(text);
	n = o->pid > 0 ? nthr : ncpu;
	t->acc_fds = calloc((size_t)n, sizeof(*t->acc_fds));
	if (!t->acc_fds)
		return -ENOMEM;
	for (size_t f = 0; f < sizeof(funcs) / sizeof(funcs[0]); f++) {
		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = (uint32_t)type;
		a.config1 = (uint64_t)(uintptr_t)funcs[f];	/* kprobe_func */
		a.config2 = 0;					/* probe_offset */
		a.inherit = o->pid > 0;
		rc = 0;
		for (int i = 0; i < n && !rc; i++) {
			int fd;

			if (o->pid > 0)	/* a thread's count, its children's added as they end */
				fd = pc_sys_perf_event_open(&a, tids[i], -1, -1, PERF_FLAG_FD_CLOEXEC);
			else
				fd = pc_sys_perf_event_open(&a, o->cgroup_fd >= 0 ? o->cgroup_fd : -1,
							    cpus[i], -1, PERF_FLAG_FD_CLOEXEC |
							    (o->cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0));
			if (fd == -ESRCH || fd == -ENODEV)
				continue;	/* a thread gone, a CPU offline */
			if (fd < 0)
				rc = fd;
			else
				t->acc_fds[t->nacc++] = fd;
		}
		if (!rc && t->nacc) {
			t->acc_func = funcs[f];
			return 0;
		}
		while (t->nacc)
			close(t->acc_fds[--t->nacc]);
		if (rc != -ENOENT && rc != -EINVAL)
			break;	/* not "no such function": the next will not do better */
	}
	free(t->acc_fds);
	t->acc_fds = NULL;
	return rc ? rc : -ENODEV;
}

int pc_trace_accessed(const struct pc_trace *t, uint64_t *ret_count, const char **ret_func)
{
	uint64_t sum = 0;

	if (t->acc_err)
		return t->acc_err;
	for (int i = 0; i < t->nacc; i++) {
		uint64_t v;

		if (read(t->acc_fds[i], &v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v;
	}
	*ret_count = sum;
	if (ret_func)
		*ret_func = t->acc_func;
	return 0;
}

int pc_trace_open(const struct pc_trace_opts *o, struct pc_trace **ret, char *err, size_t errlen)
{
	struct pc_trace *t;
	struct perf_event_attr a;
	int *cpus = NULL, ncpu, nthr = 1, rc;
	pid_t *tids = NULL;
	unsigned pages = o->ring_pages ? o->ring_pages : TR_DEFAULT_PAGES;
	char dummy[8];

	if (!err) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	snprintf(err, errlen, "?");
	if (!(o->kinds & PC_TR_ALL) || (o->kinds & ~PC_TR_ALL) || (pages & (pages - 1)) ||
	    pages > (1u << 20) || o->pid < 0 || (o->pid > 0 && o->cgroup_fd >= 0)) {
		snprintf(err, errlen, "bad trace options (kinds, ring pages a power of two, "
			 "a pid or a cgroup)");
		return -EINVAL;
	}
	if (!pc_have_cap(CAP_PERFMON) && !pc_have_cap(CAP_SYS_ADMIN)) {
		char p[32] = "";

		pc_read_text("/proc/sys/kernel/perf_event_paranoid", p, sizeof(p));
		if (atoi(p) > -1) {
			perm_error(err, errlen, -EACCES);
			return -EACCES;
		}
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->epfd = -1;
	t->pid = o->pid > 0 && !o->children ? o->pid : 0;
	rc = setup_events(t, o->kinds, o->optional & o->kinds, err, errlen);
	if (rc)
		goto fail;
	ncpu = rc = online_cpus(&cpus);
	if (rc < 0) {
		snprintf(err, errlen, "cannot read the online CPUs: %s", strerror(-rc));
		goto fail;
	}
	if (o->pid > 0) {
		nthr = rc = threads_of(o->pid, &tids);
		if (rc < 0) {
			snprintf(err, errlen, "process %d: %s", (int)o->pid, strerror(-rc));
			goto fail;
		}
	}
	t->rings = calloc((size_t)ncpu, sizeof(*t->rings));
	t->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!t->rings || t->epfd < 0) {
		rc = t->rings ? -errno : -ENOMEM;
		goto fail;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			PERF_SAMPLE_CGROUP;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.read_format = PERF_FORMAT_LOST;
	a.watermark = 1;
	a.inherit = o->pid > 0;
	for (int c = 0; c < ncpu; c++) {
		struct tr_ring *r = &t->rings[t->nrings];
		long psz = sysconf(_SC_PAGESIZE);

		r->cpu = cpus[c];
		r->fd = -1;
		a.wakeup_watermark = (uint32_t)((uint64_t)pages * (uint64_t)psz / 4);
		for (int th = 0; th < nthr; th++) {
			for (int e = 0; e < t->nev; e++) {
				pid_t who = o->cgroup_fd >= 0 ? o->cgroup_fd : o->pid > 0 ? tids[th] : -1;
				unsigned long fl = PERF_FLAG_FD_CLOEXEC |
						   (o->cgroup_fd >= 0 ? PERF_FLAG_PID_CGROUP : 0);
				int fd;

				a.config = (uint64_t)t->ev[e].id;
				fd = pc_sys_perf_event_open(&a, who, r->cpu, -1, fl);
				if (fd == -EINVAL && a.read_format) {
					/* before 6.0 no PERF_FORMAT_LOST: the rings' count only */
					a.read_format = 0;
					fd = pc_sys_perf_event_open(&a, who, r->cpu, -1, fl);
				}
				if (fd == -ESRCH && o->pid > 0 && th > 0)
					continue;	/* a thread that ended meanwhile */
				if (fd == -ENODEV && th == 0 && e == 0)
					goto next_cpu;	/* went offline */
				if (fd < 0) {
					rc = fd;
					if (rc == -EACCES || rc == -EPERM)
						perm_error(err, errlen, rc);
					else if (rc == -ESRCH)
						snprintf(err, errlen, "process %d: %s", (int)o->pid,
							 strerror(ESRCH));
					else
						snprintf(err, errlen, "perf_event_open of %s on CPU %d: %s",
							 t->ev[e].tp, r->cpu, strerror(-rc));
					goto fail;
				}
				rc = keep_fd(t, fd);
				if (rc) {
					close(fd);
					goto fail;
				}
				if (r->fd < 0) {
					struct epoll_event ee = { .events = EPOLLIN, .data.u32 = 0 };

					r->fd = fd;
					rc = map_ring(r, pages);
					if (rc) {
						snprintf(err, errlen, "cannot map a %u-page perf ring: %s%s",
							 pages, strerror(-rc),
							 rc == -EPERM ? " (kernel.perf_event_mlock_kb)" : "");
						goto fail;
					}
					t->nrings++;
					if (epoll_ctl(t->epfd, EPOLL_CTL_ADD, fd, &ee) < 0) {
						rc = -errno;
						goto fail;
					}
				} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, r->fd) < 0) {
					rc = -errno;
					snprintf(err, errlen, "cannot share a CPU's perf ring: %s",
						 strerror(-rc));
					goto fail;
				}
			}
		}
next_cpu:;
	}
	if (!t->nrings) {
		rc = -ENODEV;
		snprintf(err, errlen, "no CPU to trace on");
		goto fail;
	}
	/* the hits' fallback, only where get_pages was wanted and is missing (a hot probe) */
	if (o->count_accessed && (o->kinds & PC_TR_GET_PAGES) && !(t->kinds & PC_TR_GET_PAGES))
		/*
		 * pid mode without children: the counter, inherited to follow
		 * the threads started later, follows the processes forked too,
		 * and a count tells no process (the samples' tgid is checked
		 * above): it would count the children's hits as this one's.
		 */
		t->acc_err = o->pid > 0 && !o->children ? -EOPNOTSUPP
							: open_accessed(t, o, cpus, ncpu, tids, nthr);
	else
		t->acc_err = -ENOENT;
	free(cpus);
	free(tids);
	*ret = t;
	snprintf(err, errlen, "%s", "");
	return 0;
fail:
	if (rc == -ENOMEM)
		snprintf(err, errlen, "%s", strerror(ENOMEM));
	free(cpus);
	free(tids);
	pc_trace_close(t);
	return rc;
}

int pc_trace_fd(const struct pc_trace *t)
{
	return t->epfd;
}

unsigned pc_trace_kinds(const struct pc_trace *t)
{
	return t->kinds;
}

/*
 * Two counts of the same losses: the rings' PERF_RECORD_LOST (written only
 * once the ring has room again, so late: after the last drain, never) and
 * each event's own count, read() with PERF_FORMAT_LOST (Linux 6.0; exact
 * at once, but an inherited event's children keep their own, which read()
 * does not sum). The larger is the better account.
 */
uint64_t pc_trace_lost(const struct pc_trace *t)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < t->nfds; i++) {
		uint64_t v[2];

		if (read(t->fds[i], v, sizeof(v)) == (ssize_t)sizeof(v))
			sum += v[1];
	}
	return sum > t->lost ? sum : t->lost;
}

void pc_trace_close(struct pc_trace *t)
{
	if (!t)
		return;
	/* disable first, so nothing is written while the rings go */
	for (size_t i = 0; i < t->nfds; i++)
		ioctl(t->fds[i], PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < t->nrings; i++)
		if (t->rings[i].meta)
			munmap(t->rings[i].meta, t->rings[i].map_len);
	for (size_t i = 0; i < t->nfds; i++)
		close(t->fds[i]);
	for (int i = 0; i < t->nacc; i++)
		close(t->acc_fds[i]);
	free(t->acc_fds);
	if (t->epfd >= 0)
		close(t->epfd);
	if (t->tep)
		tep_free(t->tep);
	free(t->rings);
	free(t->fds);
	free(t->tmp);
	free(t);
}

/* ---- reading the rings ------------------------------------------------------ */

static int read_field(const struct tep_format_field *f, const unsigned char *raw, uint32_t rawlen,
		      uint64_t *ret)
{
	unsigned long long v;

	if (!f || (uint64_t)f->offset + (uint64_t)f->size > rawlen)
		return -1;
	if (tep_read_number_field((struct tep_format_field *)f, raw, &v) != 0)
		return -1;
	*ret = v;
	return 0;
}

/* A sample's body -> e; 1: keep it, 0: not ours or malformed. */
static int parse_sample(struct pc_trace *t, const unsigned char *p, size_t len,
			struct pc_trace_event *e)
{
	const unsigned char *end = p + len;
	uint32_t rawlen;
	const unsigned char *raw;
	const struct tr_event *ev = NULL;
	uint64_t v;
	uint16_t type;

	/* TID, TIME, CPU, RAW, CGROUP: the order perf_event_open(2) gives */
	if (len < 8 + 8 + 8 + 4)
		return 0;
	memset(e, 0, sizeof(*e));
	memcpy(&e->pid, p, 4);
	memcpy(&e->tid, p + 4, 4);
	memcpy(&e->time_ns, p + 8, 8);
	memcpy(&e->cpu, p + 16, 4);
	memcpy(&rawlen, p + 24, 4);
	raw = p + 28;
	if (rawlen > (size_t)(end - raw) || rawlen < 2)
		return 0;
	if ((size_t)(end - (raw + rawlen)) >= 8)
		memcpy(&e->cgroup, raw + rawlen, 8);
	if (t->pid && e->pid != (uint32_t)t->pid)
		return 0;
	memcpy(&type, raw, 2);
	for (int i = 0; i < t->nev; i++)
		if (t->ev[i].id == type)
			ev = &t->ev[i];
	if (!ev)
		return 0;
	e->kind = ev->kind;
	if (read_field(ev->ino, raw, rawlen, &e->ino) || read_field(ev->index, raw, rawlen, &e->first))
		return 0;
	e->last = e->first;
	if (ev->dev) {
		if (read_field(ev->dev, raw, rawlen, &v))
			return 0;
		e->dev = pc_trace_dev((uint32_t)v);
	} else if (ev->name && (uint64_t)ev->name->offset + (uint64_t)ev->name->size <= rawlen) {
		/* writeback's bdi name: "MAJ:MIN" for most block devices */
		char name[64];
		unsigned ma, mi;
		size_t n = (size_t)ev->name->size < sizeof(name) - 1 ? (size_t)ev->name->size
									    : sizeof(name) - 1;

		memcpy(name, raw + ev->name->offset, n);
		name[n] = 0;
		if (sscanf(name, "%u:%u", &ma, &mi) == 2)
			e->dev = makedev(ma, mi);
	}
	if (ev->last) {
		if (read_field(ev->last, raw, rawlen, &e->last))
			return 0;
		if (e->last < e->first)	/* defensive: an empty or reversed range */
			e->last = e->first;
	} else if (ev->order && !read_field(ev->order, raw, rawlen, &v) && v < 32) {
		e->last = e->first + (1ull << v) - 1;
	}
	return 1;
}

/*
 * The one reader of a perf ring: each whole record now in r handed to fn
 * (h, then the record's bytes, its header included, in one piece: one
 * that wraps around the ring's end is copied into *tmp), and the tail
 * moved past it. fn's nonzero return stops there and is returned; 0 once
 * the ring is empty; -ENOMEM (the record stays in the ring).
 */
typedef int (*ring_fn)(const struct perf_event_header *h, const unsigned char *rec, void *arg);

static int ring_drain(struct tr_ring *r, unsigned char **tmp, size_t *tmplen, ring_fn fn,
		      void *arg)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	int stop = 0;

	while (tail < head && !stop) {
		struct perf_event_header h;
		uint64_t off = tail & (r->size - 1);
		const unsigned char *rec;

		if (head - tail < sizeof(h))
			break;
		if (off + sizeof(h) <= r->size) {
			memcpy(&h, r->data + off, sizeof(h));
		} else {
			size_t first = r->size - off;

			memcpy(&h, r->data + off, first);
			memcpy((char *)&h + first, r->data, sizeof(h) - first);
		}
		if (h.size < sizeof(h) || h.size > head - tail)
			break;	/* cannot be: the kernel writes whole records */
		if (off + h.size <= r->size) {
			rec = r->data + off;
		} else {
			size_t first = r->size - off;

			if (*tmplen < h.size) {
				unsigned char *g = realloc(*tmp, h.size);

				if (!g) {
					stop = -ENOMEM;
					break;
				}
				*tmp = g;
				*tmplen = h.size;
			}
			memcpy(*tmp, r->data + off, first);
			memcpy(*tmp + first, r->data, h.size - first);
			rec = *tmp;
		}
		stop = fn(&h, rec, arg);
		tail += h.size;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return stop;
}

struct drain_ctx {
	struct pc_trace *t;
	int (*fn)(const struct pc_trace_event *e, void *arg);
	void *arg;
	int handed;
};

static int trace_record(const struct perf_event_header *h, const unsigned char *rec, void *arg)
{
	struct drain_ctx *d = arg;
	struct pc_trace_event e;
	uint64_t n;

	if (h->type == PERF_RECORD_SAMPLE) {
		if (parse_sample(d->t, rec + sizeof(*h), h->size - sizeof(*h), &e)) {
			d->handed++;
			return d->fn(&e, d->arg);
		}
	} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
		memcpy(&n, rec + sizeof(*h) + 8, 8);
		d->t->lost += n;
	} else if (h->type == PERF_RECORD_LOST_SAMPLES && h->size >= sizeof(*h) + 8) {
		memcpy(&n, rec + sizeof(*h), 8);
		d->t->lost += n;
	}
	return 0;
}

int pc_trace_drain(struct pc_trace *t, int (*fn)(const struct pc_trace_event *e, void *arg), void *arg)
{
	struct drain_ctx d = { t, fn, arg, 0 };

	for (int i = 0; i < t->nrings; i++) {
		int stop = ring_drain(&t->rings[i], &t->tmp, &t->tmplen, trace_record, &d);

		if (stop)
			return stop;
	}
	return d.handed;
}

/* ---- the names processes take: comm and task records ------------------------ */

#define TASK_PAGES 16u			/* 64 KiB a CPU: names come seldom */

struct pc_task_trace {
	struct tr_ring *rings;		/* the CPUs whose event opened */
	int nrings;
	unsigned char *tmp;		/* a record that wraps around the ring's end */
	size_t tmplen;
};

int pc_task_trace_open(pid_t pid, bool children, struct pc_task_trace **ret)
{
	int n = (int)sysconf(_SC_NPROCESSORS_CONF), rc = -ENODEV;
	struct perf_event_attr a;
	struct pc_task_trace *t;

	if (pid < 0)
		return -EINVAL;
	if (n < 1)
		return -ENODEV;
	t = calloc(1, sizeof(*t));
	if (!t || !(t->rings = calloc((size_t)n, sizeof(*t->rings)))) {
		free(t);
		return -ENOMEM;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.inherit = pid && children;
	for (int c = 0; c < n; c++) {
		struct tr_ring *r = &t->rings[t->nrings];

		r->cpu = c;
		r->fd = pc_sys_perf_event_open(&a, pid ? pid : -1, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0) {
			rc = r->fd;	/* an offline CPU; or not allowed */
			continue;
		}
		rc = map_ring(r, TASK_PAGES);
		if (rc < 0) {
			close(r->fd);
			continue;
		}
		t->nrings++;
	}
	if (!t->nrings) {
		pc_task_trace_close(t);
		return rc;
	}
	*ret = t;
	return 0;
}

struct task_ctx {
	int (*fn)(const struct pc_task_event *e, void *arg);
	void *arg;
	int handed;
};

/* PERF_RECORD_COMM: pid, tid, comm; PERF_RECORD_FORK: pid, ppid, tid, ptid, time */
static int task_record(const struct perf_event_header *h, const unsigned char *rec, void *arg)
{
	struct task_ctx *d = arg;
	struct pc_task_event e = { 0 };
	size_t n = h->size - sizeof(*h);

	if ((h->type != PERF_RECORD_COMM && h->type != PERF_RECORD_FORK) || n < 16)
		return 0;
	rec += sizeof(*h);
	memcpy(&e.pid, rec, 4);
	if (h->type == PERF_RECORD_COMM) {
		e.kind = PC_TASK_COMM;
		memcpy(&e.tid, rec + 4, 4);
		snprintf(e.comm, sizeof(e.comm), "%.*s", (int)(n - 8), (const char *)rec + 8);
	} else {
		e.kind = PC_TASK_FORK;
		memcpy(&e.ppid, rec + 4, 4);
		memcpy(&e.tid, rec + 8, 4);
	}
	d->handed++;
	return d->fn(&e, d->arg);
}

int pc_task_trace_drain(struct pc_task_trace *t,
			int (*fn)(const struct pc_task_event *e, void *arg), void *arg)
{
	struct task_ctx d = { fn, arg, 0 };

	for (int i = 0; i < t->nrings; i++) {
		int stop = ring_drain(&t->rings[i], &t->tmp, &t->tmplen, task_record, &d);

		if (stop)
			return stop;
	}
	return d.handed;
}

void pc_task_trace_close(struct pc_task_trace *t)
{
	if (!t)
		return;
	for (int i = 0; i < t->nrings; i++) {
		munmap(t->rings[i].meta, t->rings[i].map_len);
		close(t->rings[i].fd);
	}
	free(t->rings);
	free(t->tmp);
	free(t);
}

/* ---- (dev, ino) -> a file: inode.c ------------------------------------------- */

int pc_inode_open(uint64_t dev, uint64_t ino, int flags)
{
	return pc_inode_open_mnts(NULL, dev, ino, flags, NULL);
}

/* ---- cgroups: the hierarchy perf_event is on ------------------------------------ */

/* Its root: a v1 hierarchy with the perf_event controller, else cgroup2's. */
static int perf_cgroup_root(char *ret, size_t len)
{
	int err = 0, rc = -ENOENT;
	FILE *f = pc_sys_fopen_read("/proc/self/mountinfo", &err);
	char *line = NULL;
	size_t cap = 0;
	bool v1 = false;

	if (!f)
		return err;
	while (getline(&line, &cap, f) > 0) {
		char mnt[4096], fstype[64], super[1024] = "", *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %63s %*s %1023s", fstype, super) < 1 ||
		    sscanf(line, "%*d %*d %*u:%*u %*s %4095s", mnt) != 1)
			continue;
		pc_mnt_unescape(mnt);
		if (!strcmp(fstype, "cgroup")) {
			char *tok, *save = NULL;

			for (tok = strtok_r(super, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				if (!strcmp(tok, "perf_event") && !v1) {
					v1 = true;
					snprintf(ret, len, "%s", mnt);
					rc = 0;
				}
		} else if (!strcmp(fstype, "cgroup2") && !v1 && rc) {
			snprintf(ret, len, "%s", mnt);
			rc = 0;
		}
	}
	free(line);
	fclose(f);
	return rc;
}

#define WHY(...) (why && whylen ? (void)snprintf(why, whylen, __VA_ARGS__) : (void)0)

/* root/rel as an open directory inside root (no '..', no link out). */
static int open_under(const char *root, const char *rel, char *why, size_t whylen)
{
	char path[4200], real[PATH_MAX], realroot[PATH_MAX];
	size_t rl;
	int fd;

	while (*rel == '/')
		rel++;
	snprintf(path, sizeof(path), "%s%s%s", root, *rel ? "/" : "", rel);
	if (!realpath(path, real) || !realpath(root, realroot))
		return -ENOENT;
	rl = strlen(realroot);
	if (strncmp(real, realroot, rl) || (real[rl] && real[rl] != '/')) {
		WHY("'%s' resolves outside the perf_event cgroup hierarchy ('%s')", path, root);
		return -EXDEV;
	}
	fd = open(real, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int pc_trace_cgroup_open(const char *spec, char *why, size_t whylen)
{
	char root[4096], mem[4096], memroot[256], tried[8192];
	int rc, version;
	size_t rl;

	if (!spec || !*spec || strstr(spec, "..")) {
		WHY("a cgroup without '..', please");
		return -EINVAL;
	}
	rc = perf_cgroup_root(root, sizeof(root));
	if (rc < 0) {
		WHY("no cgroup hierarchy with perf_event (v1) and no cgroup2 is mounted");
		return rc;
	}
	rl = strlen(root);
	/* the perf hierarchy's own directory, or a path in it */
	if (!strncmp(spec, root, rl) && (!spec[rl] || spec[rl] == '/'))
		return open_under(root, spec + rl, why, whylen);
	if (spec[0] == '/' && strncmp(spec, "/sys/", 5)) {
		rc = open_under(root, spec, why, whylen);
		if (rc >= 0 || rc == -EXDEV)
			return rc;
	}
	/* a memory cgroup (a unit name, a container ID...): the same path here */
	rc = pc_cgroup_resolve(spec, mem, sizeof(mem), tried, sizeof(tried));
	if (rc < 0) {
		/* a name only the perf hierarchy has (its top level) */
		if (!strchr(spec, '/')) {
			int fd = open_under(root, spec, NULL, 0);

			if (fd >= 0)
				return fd;
		}
		WHY("%s", tried);
		return rc;
	}
	if (pc_cgroup_root(memroot, sizeof(memroot), &version) < 0)
		return -ENOENT;
	rc = open_under(root, mem + strlen(memroot), why, whylen);
	if (rc == -ENOENT)
		WHY("'%s' is the memory cgroup '%s', but '%s%s' is no cgroup of the perf_event "
		    "hierarchy", spec, mem, root, mem + strlen(memroot));
	return rc;
}
