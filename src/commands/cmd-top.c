/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-top.c: `pagecache top`: the page cache live, per process, file or
 * cgroup, from the filemap tracepoints (lib/trace.c: perf_event_open, no
 * BPF, no kprobe from 6.12 on), so it keeps working across kernels where
 * bcc's and libbpf-tools' cachetop broke.
 *
 * What a row counts, per interval, in pages:
 *   accesses  pages used: mm_filemap_get_pages (read, splice),
 *             mm_filemap_map_pages (fault-around) and mm_filemap_fault;
 *   misses    pages brought in: mm_filemap_add_to_page_cache (readahead
 *             included: a page read ahead and not used yet is a miss now);
 *   hit_ratio (accesses - misses) / accesses, clamped to [0, 1]; null when
 *             nothing was accessed. Readahead can add more pages than were
 *             used, so misses may exceed accesses: that is a ratio of 0,
 *             never negative or above 100% (cachetop's known bug class);
 *   evicted   mm_filemap_delete_from_page_cache (reclaim, truncate,
 *             invalidate), charged to whoever ran when it happened
 *             (often kswapd): meaningful per file and per cgroup;
 *   dirtied   writeback:writeback_dirty_folio.
 * Before Linux 6.12 there are no use events: top runs on add and delete
 * alone (misses and evictions), says so ("source": "misses"), and shows
 * accesses and the hit ratio as unknown (null, "-"), never as 0, but for
 * the total's, counted by a kprobe on folio_mark_accessed where the kernel
 * has kprobes ("misses+kprobe"); where writeback_dirty_folio is missing
 * (before 5.17), dirtied likewise.
 * get_pages reports the whole rest of a read() in each of its batches
 * ([0,255], [31,255], [62,255] ... for one 1 MiB read: 4.6 times the
 * pages, measured on 6.18): consecutive events of one thread on one file
 * that end alike are counted as the batch they stand for.
 *
 * The terminal screen is written with VT100 escapes (alternate screen,
 * termios without ICANON/ECHO, ISIG kept so ^C is SIGINT), not ncurses:
 * one screen of text needs none of curses' optimisation, a static
 * build stays free of libtinfo, and every name still goes through
 * out_escape. Every way out (q, --count, SIGINT, SIGTERM, SIGHUP, a fatal
 * signal) puts the terminal back. The table is ours, the same for the
 * terminal and plain text (a table per interval); --json goes through
 * output.c: one object a line per interval.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys.h"		/* pc_sys_open_by_handle (lib/sys.h) */
#include "idmap.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/capability.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#ifndef CAP_PERFMON
#define CAP_PERFMON 38		/* Linux 5.8; older headers lack it */
#endif

enum { BY_PROCESS, BY_FILE, BY_CGROUP };
static const char *const by_names[] = { "process", "file", "cgroup" };
enum { S_ACCESSES, S_MISSES, S_HIT, S_EVICTED, S_DIRTIED, S_KEY };
static const char *const sort_names[] = { "accesses", "misses", "hit_ratio", "evicted",
					  "dirtied", "key" };

enum {
	OPT_BY = 512, OPT_INTERVAL = 'd', OPT_COUNT = 513, OPT_SORT = 514, OPT_ROWS = 515,
	OPT_TOP_PID = 516, OPT_TOP_CHILDREN = 517, OPT_TOP_CGROUP = 518,
};

/* ---- names: a cache of strings by key, bounded (cleared when full) ---- */

#define NAMES_MAX 65536

struct names {
	struct pc_idmap m;
	char **s;
	size_t n;
};

static const char *names_get(const struct names *c, uint64_t a, uint64_t b)
{
	uint32_t i = pc_idmap_get(&c->m, a, b);

	return i ? c->s[i - 1] : NULL;
}

static void names_clear(struct names *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->s[i]);
	c->n = 0;
	pc_idmap_clear(&c->m);
}

/* Keeps s (malloc'd); returns it, or NULL (out of memory: s freed). */
static const char *names_put(struct names *c, uint64_t a, uint64_t b, char *s)
{
	uint32_t i;

	if (!s)
		return NULL;
	i = pc_idmap_get(&c->m, a, b);
	if (i) {
		free(c->s[i - 1]);
		c->s[i - 1] = s;
		return s;
	}
	if (c->n >= NAMES_MAX)
		names_clear(c);
	if (!c->s && !(c->s = calloc(NAMES_MAX, sizeof(*c->s)))) {
		free(s);
		return NULL;
	}
	if (pc_idmap_put(&c->m, a, b, (uint32_t)c->n + 1) < 0) {
		free(s);
		return NULL;
	}
	c->s[c->n++] = s;
	return s;
}

static void names_free(struct names *c)
{
	names_clear(c);
	free(c->s);
	pc_idmap_free(&c->m);
}

/* A cgroup row's key: its path's hash (64 bits: two paths never meet). */
static uint64_t fnv(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

/* ---- the counts ---- */

struct counts {
	uint64_t acc, miss, evict, dirty;
};

struct row {
	uint64_t a, b;		/* process: pid; file: dev, ino; cgroup: its path's hash */
	struct counts c;
	char *name;		/* the key as people read it (not escaped yet); owned */
	uint64_t pid;		/* file: the process of its first event (for its name) */
};

struct table {
	struct row *v;
	size_t n, cap;
	struct pc_idmap m;
	struct counts total;
	uint64_t events, lost;
	double seconds;		/* the interval's real length */
	struct timespec when;	/* its end (CLOCK_REALTIME) */
};

struct top {
	int by, sort;
	bool reverse;
	double interval;
	unsigned long count;
	size_t rows;
	pid_t pid;
	bool children;
	const char *cgroup;
	bool json, tty;
	unsigned ring_pages;		/* pages a CPU: PAGECACHE_TRACE_RING, else 256 */

	struct pc_trace *trace;
	unsigned kinds;			/* the events the kernel gave (pc_trace_kinds) */
	bool acc_kprobe;		/* before 6.12: total accesses from a kprobe counter */
	uint64_t acc_before;		/* its count at the interval's start */
	const char *acc_func;		/* the function it probes */
	bool sorted;			/* --sort given */
	struct table cur, shown;
	struct pc_idmap pending;	/* tid -> get_pages event not counted yet (+1) */
	struct pc_trace_event *pend;
	size_t npend, cappend;
	uint64_t lost_before, lost_total;

	struct names comm;		/* pid -> comm, kept past the process */
	struct pc_task_trace *tasks;	/* processes' names as they exec and fork (NULL: none) */
	struct names files;		/* (dev, ino) -> path or "MAJ:MIN:INO" */
	struct names cgid;		/* cgroup2 id -> path */
	struct names pidcg;		/* pid -> memory cgroup path (this interval) */
	struct pc_idmap inodev;		/* file mode: ino -> dev + 1 seen (DIRTY has no dev) */
	uint64_t *inodev_dev;
	size_t ninodev;
	uint64_t hdevs[16];		/* file mode: devices judged, */
	bool hidden[16];		/* mounted nowhere here (a container's layers) */
	size_t nhdevs;
	bool unnamed;			/* rows of such files not named yet */

	/* cgroups */
	int memory_version;		/* 1, 2; 0: no memory controller */
	char cg2_mount[512];		/* where cgroup2 is mounted, "" if nowhere */
	int cg2_fd;
	bool v1_filter;			/* --cgroup on v1: filtered here, by /proc */
	char filter_rel[4096];		/* its path under the memory root */
	bool screen;			/* the terminal is ours (alternate screen) */
	int cols, lines;
	struct out_doc *tdoc;		/* the rows' table (rows_table) */
	struct ocol name_cols[6];	/* its columns, by file or cgroup */
};

static const struct cli_opt top_opts[] = {
	{ .name = "by", .id = OPT_BY, .arg = "WHAT", .comp = CC_WORDS,
	  .words = "process file cgroup",
	  .help = "one row per process (the default), file or cgroup" },
	{ .name = "interval", .letter = 'd', .id = OPT_INTERVAL, .arg = "S",
	  .help = "seconds between screens or lines (default 1)" },
	{ .name = "count", .id = OPT_COUNT, .arg = "N",
	  .help = "exit after N intervals (default: until q or ^C)" },
	{ .name = "sort", .id = OPT_SORT, .arg = "KEY", .comp = CC_WORDS,
	  .words = "accesses misses hit_ratio evicted dirtied key",
	  .help = "order rows by KEY, largest first (default accesses)" },
	{ .name = "rows", .id = OPT_ROWS, .arg = "N",
	  .help = "at most N rows per interval (default: all)" },
	{ .name = "pid", .id = OPT_TOP_PID, .arg = "PID", .comp = CC_PID,
	  .help = "only what process PID does (filtered in the kernel)" },
	{ .name = "children", .id = OPT_TOP_CHILDREN, CLI_SET(struct top, children),
	  .help = "with --pid, the children it starts from now on too" },
	{ .name = "cgroup", .id = OPT_TOP_CGROUP, .arg = "CG", .comp = CC_CGROUP,
	  CLI_STRING(struct top, cgroup),
	  .help = "only tasks in cgroup CG and below" },
	{ .name = "json", .letter = 'J', .id = OPT_JSON, CLI_SET(struct top, json),
	  .help = "one JSON object per interval, a line each" },
	{ 0 }
};

const struct cli_spec top_spec = {
	.name = "top",
	.usage =
	"Usage: pagecache top [--by process|file|cgroup] [--interval S] [--count N]\n"
	"                     [--pid PID [--children] | --cgroup CG] [--sort KEY] [--json]\n"
	"\n"
	"The page cache live: per process, file or cgroup, how many pages were used\n"
	"(accesses), brought in (misses), evicted and dirtied in each interval, the\n"
	"hit ratio, and a system line like cachestat(8) with /proc/meminfo's Cached\n"
	"and Dirty. From the kernel's filemap tracepoints through perf_event_open:\n"
	"no BPF, and from 6.12 on no kprobe. Needs root or CAP_PERFMON. Before 6.12\n"
	"the kernel has no use events: misses and evictions only, accesses and hits\n"
	"unknown ('-', null), sorted by misses, saying so (\"source\": \"misses\"); the\n"
	"total's accesses are counted by a kprobe where there are kprobes\n"
	"(\"misses+kprobe\").\n"
	"\n"
	"accesses  pages read (read, splice), faulted, or mapped by fault-around\n"
	"misses    pages added to the cache, readahead included\n"
	"hit ratio (accesses - misses) / accesses, 0 to 100%: readahead can bring in\n"
	"          more pages than were used yet, which is no hits, never a negative\n"
	"          ratio; '-' (null) when nothing was accessed\n"
	"evicted   pages dropped (reclaim, truncate), charged to whoever ran then\n"
	"dirtied   pages dirtied\n"
	"Events lost to a full ring are counted and shown (LOST); a bigger ring:\n"
	"PAGECACHE_TRACE_RING=PAGES (a CPU; default 256).\n"
	"\n",
	.footer =
	"\n"
	"On a terminal the screen is redrawn in place; keys: a m h e d k sort by\n"
	"accesses, misses, hit ratio, evicted, dirtied, key; r reverses; b cycles\n"
	"process/file/cgroup; q quits. Otherwise a table per interval, or with\n"
	"--json one line per interval:\n"
	"  {\"time\", \"interval\", \"by\", \"rows\": [{\"key\", \"accesses\", \"misses\",\n"
	"   \"hit_ratio\", \"evicted\", \"dirtied\", ...}], \"total\": {..., \"lost\"}}\n"
	"Examples:\n"
	"  pagecache top                          who uses the cache, now\n"
	"  pagecache top --by file --sort misses  which files are read from disk\n"
	"  pagecache top --by cgroup --json --count 10 --interval 5 >cache.jsonl\n"
	"Exit status: 0 done (q, --count, ^C), 1 cannot trace, 2 usage error.\n",
	.groups = { &(struct cli_group){ "Options", top_opts } },
	.operands = CC_NONE,
};

static struct termios saved_tio;
static volatile sig_atomic_t tio_saved;

static const char restore_seq[] = "\033[?25h\033[?1049l";

/* Async-signal-safe: put the terminal back. */
static void term_restore(void)
{
	if (!tio_saved)
		return;
	tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tio);
	if (write(STDOUT_FILENO, restore_seq, sizeof(restore_seq) - 1) < 0) {
		/* nothing more to do */
	}
	tio_saved = 0;
}

static void fatal_signal(int sig)
{
	term_restore();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int term_setup(struct top *t)
{
	struct termios raw;
	struct winsize ws;

	if (tcgetattr(STDIN_FILENO, &saved_tio) < 0)
		return -errno;
	raw = saved_tio;
	raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);	/* ISIG stays: ^C is SIGINT */
	raw.c_cc[VMIN] = 0;
	raw.c_cc[VTIME] = 0;
	tio_saved = 1;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &raw) < 0) {
		tio_saved = 0;
		return -errno;
	}
	fputs("\033[?1049h\033[?25l", stdout);
	fflush(stdout);
	t->screen = true;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		t->cols = ws.ws_col;
		t->lines = ws.ws_row;
	} else {
		t->cols = 80;
		t->lines = 24;
	}
	return 0;
}

/* ---- keys: what a row is ---- */

static char *read_comm(uint64_t pid)
{
	char path[64], buf[64];

	snprintf(path, sizeof(path), "/proc/%llu/comm", (unsigned long long)pid);
	if (pc_read_text(path, buf, sizeof(buf)) < 0)
		return NULL;
	return strdup(buf);
}

/* cgroup2 id -> its path ("/a/b"), by handle (kernfs: the id is the handle). */
static const char *cg2_path(struct top *t, uint64_t id)
{
	struct { struct file_handle fh; uint64_t id; } h;
	char link[64], buf[PATH_MAX];
	const char *have;
	ssize_t n;
	size_t ml;
	int fd;

	if (!id || t->cg2_fd < 0)
		return NULL;
	if ((have = names_get(&t->cgid, id, 0)))
		return *have ? have : NULL;
	h.fh.handle_bytes = sizeof(h.id);
	h.fh.handle_type = 0xfe;	/* FILEID_KERNFS */
	h.id = id;
	fd = pc_sys_open_by_handle(t->cg2_fd, &h.fh, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		/* gone (ids are never reused): not asked again, event after event */
		names_put(&t->cgid, id, 0, strdup(""));
		return NULL;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, sizeof(buf) - 1);
	close(fd);
	ml = strlen(t->cg2_mount);
	if (n < 0 || (size_t)n < ml || strncmp(buf, t->cg2_mount, ml))
		return NULL;
	buf[n] = 0;
	return names_put(&t->cgid, id, 0, strdup(buf[ml] ? buf + ml : "/"));
}

/* The memory cgroup path of pid (v1: "memory:/a"), cached for the interval. */
static const char *pid_memory_cgroup(struct top *t, uint64_t pid)
{
	const char *have = names_get(&t->pidcg, pid, 0);
	char p[PATH_MAX], *s = NULL;

	if (have)
		return *have ? have : NULL;
	if (t->memory_version && pid && pid <= INT_MAX && pc_cgroup_of((pid_t)pid, p, sizeof(p)) == 0) {
		if (t->memory_version == 2)
			s = strdup(p);
		else if (asprintf(&s, "memory:%s", p) < 0)
			s = NULL;
	}
	have = names_put(&t->pidcg, pid, 0, s ? s : strdup(""));
	return have && *have ? have : NULL;
}

/*
 * A cgroup row's name: the cgroup2 cgroup the event names, unless that is
 * the root and the memory controller is on v1 (a hybrid system: docker's
 * and our own cgroups are v1 memory cgroups there): then the process's
 * memory cgroup, as "memory:/path". Else "cgroup ID" (a cgroup gone).
 */
static const char *cgroup_key(struct top *t, const struct pc_trace_event *e, char *buf,
			      size_t len)
{
	const char *p = cg2_path(t, e->cgroup);

	if (p && (strcmp(p, "/") || t->memory_version != 1))
		return p;
	if (e->pid) {
		const char *m = pid_memory_cgroup(t, e->pid);

		if (m)
			return m;
	}
	if (p)
		return p;
	snprintf(buf, len, "cgroup %llu", (unsigned long long)e->cgroup);
	return buf;
}

/*
 * The names of processes too short-lived for /proc to be read in time
 * (cat, grep: gone within the 100 ms between drains): lib/trace.c's comm
 * and task records (pc_task_trace). An exec says the new name; a fork
 * gives the child its parent's. Best effort: without them, such a process
 * is "[exited]".
 */
static void comm_open(struct top *t)
{
	/* where it cannot be opened (not allowed), names come from /proc alone */
	pc_task_trace_open(t->pid, t->children, &t->tasks);
}

static void comm_close(struct top *t)
{
	pc_task_trace_close(t->tasks);
	t->tasks = NULL;
}

struct task_recs {
	struct pc_task_event *v;
	size_t n, cap;
};

static int task_keep(const struct pc_task_event *e, void *arg)
{
	struct task_recs *l = arg;

	if (e->tid != e->pid)
		return 0;	/* a thread's: the process keeps its name */
	if (l->n == l->cap) {
		size_t nc = l->cap ? l->cap * 2 : 256;
		struct pc_task_event *g = realloc(l->v, nc * sizeof(*g));

		if (!g)
			return 0;
		l->v = g;
		l->cap = nc;
	}
	l->v[l->n++] = *e;
	return 0;
}

/*
 * Records come per CPU: a fork on one CPU and the exec that follows on
 * another are read in either order, so every fork is applied before any
 * exec (a child's name is its parent's until it execs).
 */
static void comm_drain(struct top *t)
{
	struct task_recs l = { 0 };

	if (!t->tasks)
		return;
	pc_task_trace_drain(t->tasks, task_keep, &l);
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].kind == PC_TASK_FORK) {
			const char *pc = names_get(&t->comm, l.v[i].ppid, 0);

			names_put(&t->comm, l.v[i].pid, 0, pc ? strdup(pc) : read_comm(l.v[i].ppid));
		}
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].kind == PC_TASK_COMM)
			names_put(&t->comm, l.v[i].pid, 0, strdup(l.v[i].comm));
	free(l.v);
}

/* ---- counting ---- */

static bool dev_hidden(struct top *t, uint64_t dev);
static const char *file_name(struct top *t, uint64_t dev, uint64_t ino, uint64_t pid);

static struct row *row_of(struct top *t, const struct pc_trace_event *e)
{
	struct table *tb = &t->cur;
	uint64_t a = 0, b = 0;
	const char *cg = NULL;
	char buf[64];
	uint32_t i;
	struct row *r;

	switch (t->by) {
	case BY_PROCESS:
		a = e->pid;
		break;
	case BY_FILE:
		a = e->dev;
		b = e->ino;
		if (!a && e->kind == PC_TR_DIRTY) {	/* the event has no device: the one seen */
			uint32_t k = pc_idmap_get(&t->inodev, e->ino, 0);

			if (k)
				a = t->inodev_dev[k - 1];
		} else if (t->ninodev < NAMES_MAX) {
			uint32_t k = pc_idmap_get(&t->inodev, e->ino, 0);

			if (k)
				t->inodev_dev[k - 1] = a;
			else if (t->inodev_dev ||
				 (t->inodev_dev = calloc(NAMES_MAX, sizeof(*t->inodev_dev)))) {
				t->inodev_dev[t->ninodev] = a;
				if (pc_idmap_put(&t->inodev, e->ino, 0, (uint32_t)++t->ninodev) < 0)
					t->ninodev--;
			}
		}
		break;
	case BY_CGROUP:
		cg = cgroup_key(t, e, buf, sizeof(buf));
		a = fnv(cg);
		break;
	}
	i = pc_idmap_get(&tb->m, a, b);
	if (i) {
		r = &tb->v[i - 1];
		if (r->name == NULL && t->by == BY_FILE && e->pid && dev_hidden(t, a) &&
		    !names_get(&t->files, a, b)) {
			r->pid = e->pid;	/* a layer's file, not named yet: its latest reader */
			t->unnamed = true;
		}
		return r;
	}
	if (tb->n == tb->cap) {
		size_t nc = tb->cap ? tb->cap * 2 : 256;
		struct row *nv = realloc(tb->v, nc * sizeof(*nv));

		if (!nv)
			return NULL;
		tb->v = nv;
		tb->cap = nc;
	}
	if (pc_idmap_put(&tb->m, a, b, (uint32_t)tb->n + 1) < 0)
		return NULL;
	r = &tb->v[tb->n++];
	memset(r, 0, sizeof(*r));
	r->a = a;
	r->b = b;
	if (t->by == BY_PROCESS) {
		/* read now, while it lives; a process that is gone keeps its last name */
		const char *name = NULL;

		if (a)
			name = names_put(&t->comm, a, 0, read_comm(a));
		if (!name)
			name = names_get(&t->comm, a, 0);
		/* none yet: its exec record may still be in a ring (end_interval) */
		r->name = name || !a ? strdup(name ? name : "[kernel]") : NULL;
	} else if (t->by == BY_CGROUP) {
		r->name = strdup(cg);
	} else if (a && e->pid && dev_hidden(t, a) && !names_get(&t->files, a, b)) {
		/*
		 * A file of a layer out of reach: named now, by its reader's
		 * files, while it may still hold it open (its name is cached)
		 */
		r->pid = e->pid;
		(void)file_name(t, a, b, e->pid);
		t->unnamed = true;	/* tried again after each drain, until named */
	}
	return r;
}

static uint64_t pages(const struct pc_trace_event *e)
{
	return e->last >= e->first ? e->last - e->first + 1 : 1;
}

static void add_access(struct top *t, const struct pc_trace_event *e, uint64_t n)
{
	struct row *r = row_of(t, e);

	t->cur.total.acc += n;
	if (r)
		r->c.acc += n;
}

/* The pending get_pages events, counted whole (the interval ends). */
static void flush_pending(struct top *t)
{
	for (size_t i = 0; i < t->npend; i++)
		add_access(t, &t->pend[i], pages(&t->pend[i]));
	t->npend = 0;
	pc_idmap_clear(&t->pending);
}

/*
 * get_pages: [index, end of the read], once per batch. The next event of
 * the thread on the same file with the same end says where this batch
 * ended; anything else, and the interval's end, count it whole.
 */
static void get_pages(struct top *t, const struct pc_trace_event *e)
{
	uint32_t i = pc_idmap_get(&t->pending, e->tid, 0);

	if (i) {
		struct pc_trace_event *p = &t->pend[i - 1];

		if (p->dev == e->dev && p->ino == e->ino && p->last == e->last &&
		    e->first > p->first && e->first <= p->last + 1)
			add_access(t, p, e->first - p->first);
		else
			add_access(t, p, pages(p));
		*p = *e;
		return;
	}
	if (t->npend == t->cappend) {
		size_t nc = t->cappend ? t->cappend * 2 : 64;
		struct pc_trace_event *nv = realloc(t->pend, nc * sizeof(*nv));

		if (!nv) {
			add_access(t, e, pages(e));
			return;
		}
		t->pend = nv;
		t->cappend = nc;
	}
	if (pc_idmap_put(&t->pending, e->tid, 0, (uint32_t)t->npend + 1) < 0) {
		add_access(t, e, pages(e));
		return;
	}
	t->pend[t->npend++] = *e;
}

static bool under(const char *path, const char *top)
{
	size_t n = strlen(top);

	if (!strcmp(top, "/"))
		return true;
	return !strncmp(path, top, n) && (path[n] == 0 || path[n] == '/');
}

static int on_event(const struct pc_trace_event *e, void *arg)
{
	struct top *t = arg;
	struct row *r;
	uint64_t n = pages(e);

	if (t->v1_filter) {
		const char *m = e->pid ? pid_memory_cgroup(t, e->pid) : NULL;

		if (!m || !under(m + strlen("memory:"), t->filter_rel))
			return 0;
	}
	t->cur.events++;
	switch (e->kind) {
	case PC_TR_GET_PAGES:
		get_pages(t, e);
		return 0;
	case PC_TR_MAP_PAGES:
	case PC_TR_FAULT:
		add_access(t, e, n);
		return 0;
	case PC_TR_ADD:
		t->cur.total.miss += n;
		if ((r = row_of(t, e)))
			r->c.miss += n;
		return 0;
	case PC_TR_DELETE:
		t->cur.total.evict += n;
		if ((r = row_of(t, e)))
			r->c.evict += n;
		return 0;
	case PC_TR_DIRTY:
		t->cur.total.dirty += n;
		if ((r = row_of(t, e)))
			r->c.dirty += n;
		return 0;
	}
	return 0;
}

/* ---- names of files, late: only rows that are shown ---- */

/* Is dev mounted nowhere in our mount namespace (a container's layers)? */
static bool dev_hidden(struct top *t, uint64_t dev)
{
	bool hidden;

	for (size_t i = 0; i < t->nhdevs; i++)
		if (t->hdevs[i] == dev)
			return t->hidden[i];
	if (t->nhdevs == sizeof(t->hdevs) / sizeof(t->hdevs[0]))
		return false;	/* so many devices: not judged (nor read again) */
	hidden = major(dev) && pc_dev_mounted((dev_t)dev) == 0;	/* not the bdev pseudo-fs */
	t->hdevs[t->nhdevs] = dev;
	t->hidden[t->nhdevs++] = hidden;
	return hidden;
}

/*
 * A file's name: its path (through our overlay for a layer's file); where
 * its layer is out of reach (inside a container), the path of the overlay
 * file numbered ino among pid's files; else MAJ:MIN:INO, kept unless the
 * layer is out of reach (pid may hold the file later)
 */
static const char *file_name(struct top *t, uint64_t dev, uint64_t ino, uint64_t pid)
{
	static char later[64];
	const char *have = names_get(&t->files, dev, ino);
	char link[64], buf[PATH_MAX], *s = NULL;
	ssize_t n;
	int fd;

	if (have)
		return have;
	if (dev && (fd = pc_inode_open(dev, ino, O_PATH)) >= 0) {
		/* a layer's file: by its path through our overlay, where one shows it */
		if (pc_fd_unstack(fd, &s) < 0) {
			snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
			n = readlink(link, buf, sizeof(buf) - 1);
			if (n > 0) {
				buf[n] = 0;
				s = strdup(buf);
			}
		}
		close(fd);
	} else if (dev && pid && dev_hidden(t, dev)) {
		if (pc_pid_stacked_path((pid_t)pid, ino, &s) < 0) {
			snprintf(later, sizeof(later), "%u:%u:%llu", major(dev), minor(dev),
				 (unsigned long long)ino);
			return later;
		}
	} else if (dev && !major(dev)) {
		/*
		 * The bdev pseudo-filesystem (no mount; 0:3 here): a block
		 * device's own cache, filesystem metadata; ino is its kernel dev_t
		 */
		char path[96], ue[512];
		unsigned ma = (unsigned)(ino >> 20), mi = (unsigned)(ino & 0xfffff);
		const char *dn;

		snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/uevent", ma, mi);
		if (ino >> 32 == 0 && pc_read_text(path, ue, sizeof(ue)) >= 0 &&
		    (dn = strstr(ue, "DEVNAME="))) {
			dn += 8;
			if (asprintf(&s, "/dev/%.*s (metadata)", (int)strcspn(dn, "\n"), dn) < 0)
				s = NULL;
		}
	}
	if (!s && asprintf(&s, "%u:%u:%llu", major(dev), minor(dev), (unsigned long long)ino) < 0)
		s = NULL;
	have = names_put(&t->files, dev, ino, s);
	return have ? have : "?";
}

/* Rows of files in layers out of reach: their names, while their readers may hold them */
static void name_hidden(struct top *t)
{
	t->unnamed = false;
	for (size_t i = 0; i < t->cur.n; i++) {
		struct row *r = &t->cur.v[i];

		if (r->pid && kill((pid_t)r->pid, 0) < 0 && errno == ESRCH)
			r->pid = 0;	/* its reader is gone: tried again if another reads it */
		if (r->pid && !names_get(&t->files, r->a, r->b)) {
			(void)file_name(t, r->a, r->b, r->pid);
			t->unnamed |= !names_get(&t->files, r->a, r->b);
		}
	}
}

/* ---- the interval's end: sort, render ---- */

static double ratio(const struct counts *c)
{
	if (!c->acc)
		return NAN;
	if (c->miss >= c->acc)
		return 0;
	return (double)(c->acc - c->miss) / (double)c->acc;
}

static const struct top *sort_top;

static int cmp_rows(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	const struct top *t = sort_top;
	int s = 0;

	switch (t->sort) {
	case S_ACCESSES:
		s = a->c.acc < b->c.acc ? 1 : a->c.acc > b->c.acc ? -1 : 0;
		break;
	case S_MISSES:
		s = a->c.miss < b->c.miss ? 1 : a->c.miss > b->c.miss ? -1 : 0;
		break;
	case S_HIT: {
		double ra = ratio(&a->c), rb = ratio(&b->c);

		if (isnan(ra) || isnan(rb))	/* no accesses: last */
			s = isnan(ra) - isnan(rb);
		else
			s = ra < rb ? 1 : ra > rb ? -1 : 0;
		break;
	}
	case S_EVICTED:
		s = a->c.evict < b->c.evict ? 1 : a->c.evict > b->c.evict ? -1 : 0;
		break;
	case S_DIRTIED:
		s = a->c.dirty < b->c.dirty ? 1 : a->c.dirty > b->c.dirty ? -1 : 0;
		break;
	case S_KEY:
		s = strcmp(a->name ? a->name : "", b->name ? b->name : "");
		break;
	}
	if (!s)		/* stable across screens: then by key */
		s = a->a != b->a ? (a->a < b->a ? -1 : 1) : a->b != b->b ? (a->b < b->b ? -1 : 1) : 0;
	return t->reverse ? -s : s;
}

static void sort_rows(struct top *t, struct table *tb)
{
	sort_top = t;
	if (tb->n)	/* qsort(NULL, 0) is undefined: UBSan stops there */
		qsort(tb->v, tb->n, sizeof(*tb->v), cmp_rows);
}

static const char *row_name(const struct row *r)
{
	return r->name ? r->name : "?";
}

struct meminfo {
	bool ok;
	uint64_t cached, dirty, buffers, writeback;	/* bytes */
};

static struct meminfo read_meminfo(void)
{
	static const char *const keys[] = { "Cached", "Dirty", "Buffers", "Writeback" };
	uint64_t v[4] = { 0 };
	struct meminfo m = { 0 };

	m.ok = pc_meminfo_read(keys, v, 4) == 4;
	m.cached = v[0];
	m.dirty = v[1];
	m.buffers = v[2];
	m.writeback = v[3];
	return m;
}

/* Accesses (and so hits) are known: the kernel has the use events (6.12). */
static bool uses_seen(const struct top *t)
{
	return t->kinds & PC_TR_GET_PAGES;
}

static const char *source_name(const struct top *t)
{
	return uses_seen(t) ? "use" : t->acc_kprobe ? "misses+kprobe" : "misses";
}

static void counts_rec(const struct top *t, struct orec *r, const struct counts *c, bool total)
{
	bool known = uses_seen(t) || (total && t->acc_kprobe);
	double h = known ? ratio(c) : NAN;

	if (known)
		orec_u64(r, "accesses", c->acc, 0);
	else
		orec_null(r, "accesses");
	orec_u64(r, "misses", c->miss, 0);
	if (isnan(h))
		orec_null(r, "hit_ratio");
	else
		orec_f64(r, "hit_ratio", h);
	orec_u64(r, "evicted", c->evict, 0);
	if (t->kinds & PC_TR_DIRTY)
		orec_u64(r, "dirtied", c->dirty, 0);
	else
		orec_null(r, "dirtied");
}

static int render_json(struct top *t, struct table *tb, const struct meminfo *mi)
{
	struct orec rec = { 0 }, tot = { 0 };
	size_t shown = t->rows && t->rows < tb->n ? t->rows : tb->n;
	char buf[64];

	{	/* RFC 3339, UTC, to the millisecond */
		struct tm tm;
		char when[48];
		size_t k;

		gmtime_r(&tb->when.tv_sec, &tm);
		k = strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		snprintf(when + k, sizeof(when) - k, ".%03ldZ", tb->when.tv_nsec / 1000000);
		orec_str(&rec, "time", when, 0);
	}
	orec_f64(&rec, "interval", round(tb->seconds * 1000) / 1000);
	orec_str(&rec, "by", by_names[t->by], 0);
	/* what the kernel gives: every use (6.12), or misses and evictions only */
	orec_str(&rec, "source", source_name(t), 0);
	orec_list_add(&rec, "rows", NULL);
	for (size_t i = 0; i < shown; i++) {
		struct row *r = &tb->v[i];
		struct orec item = { 0 };

		if (t->by == BY_PROCESS) {
			char *key = NULL;

			if (asprintf(&key, "%s[%llu]", row_name(r), (unsigned long long)r->a) < 0)
				key = NULL;
			orec_str(&item, "key", key ? key : "?", 0);
			free(key);
			orec_u64(&item, "pid", r->a, 0);
			orec_str(&item, "comm", row_name(r), 0);
		} else if (t->by == BY_FILE) {
			orec_str(&item, "key", row_name(r), 0);
			snprintf(buf, sizeof(buf), "%u:%u", major(r->a), minor(r->a));
			orec_str(&item, "dev", buf, 0);
			orec_u64(&item, "ino", r->b, 0);
		} else {
			orec_str(&item, "key", row_name(r), 0);
		}
		counts_rec(t, &item, &r->c, false);
		orec_list_add(&rec, "rows", &item);
	}
	counts_rec(t, &tot, &tb->total, true);
	orec_u64(&tot, "rows", tb->n, 0);
	orec_u64(&tot, "events", tb->events, 0);
	orec_u64(&tot, "lost", tb->lost, 0);
	orec_u64(&tot, "lost_total", t->lost_total, 0);
	if (mi->ok) {
		orec_u64(&tot, "cached_bytes", mi->cached, 0);
		orec_u64(&tot, "dirty_bytes", mi->dirty, 0);
		orec_u64(&tot, "writeback_bytes", mi->writeback, 0);
		orec_u64(&tot, "buffers_bytes", mi->buffers, 0);
	}
	orec_object(&rec, "total", &tot);
	return out_line(&rec);
}

static void fmt_ratio(const struct counts *c, char *buf, size_t len)
{
	double h = ratio(c);

	if (isnan(h))
		snprintf(buf, len, "-");
	else	/* never rounds a partial ratio up to 100% */
		snprintf(buf, len, "%.1f%%", floor(h * 1000) / 10);
}

/* A count, or '-' where the kernel has no event for it. */
static void fmt_count(bool known, uint64_t n, char *buf, size_t len)
{
	if (known)
		snprintf(buf, len, "%llu", (unsigned long long)n);
	else
		snprintf(buf, len, "-");
}

/* One line of text, cut to the screen's width on a terminal. */
static void put_line(struct top *t, const char *s)
{
	if (t->screen) {
		int w = 0;
		const unsigned char *p = (const unsigned char *)s;

		/* escaped text is UTF-8 without controls: count characters */
		for (; *p; p++) {
			if ((*p & 0xc0) != 0x80 && ++w > t->cols)
				break;
			fputc(*p, stdout);
		}
		fputs("\033[K\r\n", stdout);
		return;
	}
	fputs(s, stdout);
	fputc('\n', stdout);
}

/*
 * The rows, through output.c's table in a document of top's own, each of
 * its lines then cut to the screen (put_line). The columns have fixed
 * widths, so they keep still from one interval to the next; a count
 * wider than its column widens its own row only.
 */
static void rows_table(struct top *t, struct table *tb, size_t shown)
{
	static const struct ocol cols[] = {
		{ "acc", "ACCESSES", false }, { "miss", "MISSES", false }, { "hit", "HIT%", false },
		{ "evict", "EVICTED", false }, { "dirty", "DIRTIED", false },
		{ "pid", "PID", false }, { "name", "COMMAND", true },
	};
	static const struct ocol file_col = { "name", "FILE", true },
		cgroup_col = { "name", "CGROUP", true };
	static const unsigned widths[] = { 10, 10, 6, 10, 10, 7, 0 };
	struct ocol *mine = t->by == BY_PROCESS ? NULL : t->name_cols;
	struct out_doc *old;
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (!t->tdoc && !(t->tdoc = out_doc_new())) {
		put_line(t, "(out of memory: no rows)");
		return;
	}
	if (mine) {	/* no PID column: the name after DIRTIED */
		memcpy(mine, cols, 5 * sizeof(*cols));
		mine[5] = t->by == BY_FILE ? file_col : cgroup_col;
	}
	m = open_memstream(&buf, &len);
	if (!m) {
		put_line(t, "(out of memory: no rows)");
		return;
	}
	old = out_doc_use(t->tdoc);
	out_init(OUT_HUMAN, false, false);
	out_keep_header(true);
	out_set_file(m);
	out_columns("rows", mine ? mine : cols, mine ? 6 : 7);
	out_column_widths("rows", widths);
	for (size_t i = 0; i < shown; i++) {
		struct row *r = &tb->v[i];
		struct orec rec = { 0 };
		char hit[16];

		fmt_ratio(&r->c, hit, sizeof(hit));
		if (uses_seen(t))	/* '-': the kernel has no event for it */
			orec_u64(&rec, "acc", r->c.acc, 0);
		else
			orec_str(&rec, "acc", "-", 0);
		orec_u64(&rec, "miss", r->c.miss, 0);
		orec_str(&rec, "hit", uses_seen(t) ? hit : "-", 0);
		orec_u64(&rec, "evict", r->c.evict, 0);
		if (t->kinds & PC_TR_DIRTY)
			orec_u64(&rec, "dirty", r->c.dirty, 0);
		else
			orec_str(&rec, "dirty", "-", 0);
		orec_u64(&rec, "pid", r->a, 0);
		orec_str(&rec, "name", row_name(r), 0);
		out_list_add("rows", &rec);
	}
	out_flush();
	out_set_file(NULL);
	out_doc_use(old);
	if (fclose(m) == 0 && buf)
		for (char *line = buf, *nl; *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl)
				break;
			*nl = 0;
			put_line(t, line);
		}
	free(buf);
}

static void render_text(struct top *t, struct table *tb, const struct meminfo *mi)
{
	char line[8192], when[32], cached[32], dirty[32], buffers[32], hit[16];
	struct tm tm;
	size_t shown = t->rows && t->rows < tb->n ? t->rows : tb->n;
	size_t room = shown;

	localtime_r(&tb->when.tv_sec, &tm);
	strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (t->screen) {
		fputs("\033[H", stdout);
		room = t->lines > 6 ? (size_t)t->lines - 6 : 1;
		if (room < shown)
			shown = room;
	}
	snprintf(line, sizeof(line), "pagecache top - %s  by %s, every %.3g s (%.3f s), sort %s%s%s",
		 when, by_names[t->by], t->interval, tb->seconds, sort_names[t->sort],
		 t->reverse ? " reversed" : "", t->screen ? "   [a m h e d k r b q]" : "");
	put_line(t, line);
	fmt_ratio(&tb->total, hit, sizeof(hit));
	fmt_count(t->kinds & PC_TR_DIRTY, tb->total.dirty, dirty, sizeof(dirty));
	if (uses_seen(t))
		snprintf(line, sizeof(line),
			 "Total: %llu accesses, %llu misses, hit %s, %llu evicted, %s dirtied (pages)",
			 (unsigned long long)tb->total.acc, (unsigned long long)tb->total.miss, hit,
			 (unsigned long long)tb->total.evict, dirty);
	else if (t->acc_kprobe)	/* before 6.12, with kprobes: the total's hits */
		snprintf(line, sizeof(line),
			 "Total: %llu accesses (kprobe %s), %llu misses, hit %s, %llu evicted, %s "
			 "dirtied (pages); per row misses only: no use events before Linux 6.12",
			 (unsigned long long)tb->total.acc, t->acc_func,
			 (unsigned long long)tb->total.miss, hit, (unsigned long long)tb->total.evict,
			 dirty);
	else	/* before 6.12 */
		snprintf(line, sizeof(line),
			 "Total: %llu misses, %llu evicted, %s dirtied (pages); misses only: no "
			 "use events before Linux 6.12, accesses and hits unknown",
			 (unsigned long long)tb->total.miss, (unsigned long long)tb->total.evict,
			 dirty);
	put_line(t, line);
	if (mi->ok) {
		fmt_size(mi->cached, cached, sizeof(cached));
		fmt_size(mi->dirty, dirty, sizeof(dirty));
		fmt_size(mi->buffers, buffers, sizeof(buffers));
		snprintf(line, sizeof(line), "Memory: Cached %s, Dirty %s, Buffers %s; %llu events%s",
			 cached, dirty, buffers, (unsigned long long)tb->events,
			 tb->lost || t->lost_total ? "" : ", none lost");
	} else {
		snprintf(line, sizeof(line), "Memory: /proc/meminfo unreadable; %llu events",
			 (unsigned long long)tb->events);
	}
	put_line(t, line);
	if (tb->lost || t->lost_total)
		snprintf(line, sizeof(line), "%sLOST %llu events this interval (%llu in all): counts are low%s",
			 t->screen && tb->lost ? "\033[7m" : "", (unsigned long long)tb->lost,
			 (unsigned long long)t->lost_total, t->screen && tb->lost ? "\033[m" : "");
	else
		line[0] = 0;
	put_line(t, line);
	rows_table(t, tb, shown);
	if (t->screen) {
		for (size_t i = shown; i < room; i++)
			put_line(t, "");
		fputs("\033[J", stdout);
	} else {
		put_line(t, "");
	}
	fflush(stdout);
}

static int render(struct top *t)
{
	struct meminfo mi = read_meminfo();

	if (t->json)
		return render_json(t, &t->shown, &mi);
	render_text(t, &t->shown, &mi);
	if (ferror(stdout))
		return -(errno ? errno : EIO);
	return 0;
}

static void table_reset(struct table *tb)
{
	for (size_t i = 0; i < tb->n; i++)
		free(tb->v[i].name);
	tb->n = 0;
	pc_idmap_clear(&tb->m);
	memset(&tb->total, 0, sizeof(tb->total));
	tb->events = tb->lost = 0;
}

/* The interval is over: what was counted becomes what is shown. */
static void end_interval(struct top *t, double seconds)
{
	struct table tmp;
	uint64_t lost;

	flush_pending(t);
	comm_drain(t);	/* the exec records of processes whose events came first */
	for (size_t i = 0; t->by == BY_PROCESS && i < t->cur.n; i++) {
		struct row *r = &t->cur.v[i];
		const char *name;

		if (!r->name)
			r->name = strdup((name = names_get(&t->comm, r->a, 0)) ? name : "[exited]");
	}
	lost = pc_trace_lost(t->trace);
	t->cur.lost = lost - t->lost_before;
	t->lost_before = lost;
	t->lost_total = lost;
	if (t->acc_kprobe) {	/* before 6.12: the total's accesses, counted by a kprobe */
		uint64_t n;

		if (pc_trace_accessed(t->trace, &n, NULL) == 0) {
			t->cur.total.acc = n - t->acc_before;
			t->acc_before = n;
		}
	}
	t->cur.seconds = seconds;
	clock_gettime(CLOCK_REALTIME, &t->cur.when);
	tmp = t->shown;
	t->shown = t->cur;
	t->cur = tmp;
	table_reset(&t->cur);
	names_clear(&t->pidcg);	/* processes move between cgroups */
	if (t->by == BY_FILE)	/* the files' names, late: once per file, then cached */
		for (size_t i = 0; i < t->shown.n; i++) {
			struct row *r = &t->shown.v[i];

			if (!r->name)
				r->name = strdup(file_name(t, r->a, r->b, r->pid));
		}
	sort_rows(t, &t->shown);
}

/* ---- setup ---- */

static void find_cgroup2(struct top *t)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	t->cg2_fd = -1;
	t->cg2_mount[0] = 0;
	while (f && fgets(line, sizeof(line), f)) {
		char mnt[512], *dash = strstr(line, " - ");

		if (!dash || strncmp(dash, " - cgroup2 ", 11))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %511s", mnt) != 1 || strchr(mnt, '\\'))
			continue;
		t->cg2_fd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (t->cg2_fd >= 0) {
			snprintf(t->cg2_mount, sizeof(t->cg2_mount), "%s", mnt);
			break;
		}
	}
	if (f)
		fclose(f);
}

static int parse_u(const char *opt, const char *arg, unsigned long max, unsigned long *ret)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (!*arg || *end || errno || v > max || arg[0] == '-')
		return cli_usage_error("%s wants a whole number up to %lu, not '%s'", opt, max, arg);
	*ret = v;
	return 0;
}

static int top_fail(const char *subject, const char *what, const char *reason)
{
	cli_fail_msg(subject, what, reason);
	out_flush();
	return EXIT_PARTIAL;
}

static void top_release(struct top *t)
{
	comm_close(t);
	pc_trace_close(t->trace);
	t->trace = NULL;
	if (t->cg2_fd >= 0)
		close(t->cg2_fd);
	table_reset(&t->cur);
	table_reset(&t->shown);
	free(t->cur.v);
	free(t->shown.v);
	pc_idmap_free(&t->cur.m);
	pc_idmap_free(&t->shown.m);
	pc_idmap_free(&t->pending);
	free(t->pend);
	pc_idmap_free(&t->inodev);
	free(t->inodev_dev);
	names_free(&t->comm);
	names_free(&t->files);
	names_free(&t->cgid);
	names_free(&t->pidcg);
	out_doc_free(t->tdoc);
	t->tdoc = NULL;
}

static int open_trace(struct top *t)
{
	struct pc_trace_opts o = { 0 };
	char err[512] = "", why[8192] = "", dir[4096], mount[64];
	int rc, v, cgfd = -1;

	o.kinds = PC_TR_ADD | PC_TR_DELETE | PC_TR_USE | PC_TR_DIRTY;
	/* before 6.12: misses and evictions; before 5.17: no writeback_dirty_folio */
	o.optional = PC_TR_USE | PC_TR_DIRTY;
	o.count_accessed = true;	/* before 6.12: the total's accesses by a kprobe, if any */
	o.pid = t->pid;
	o.children = t->children;
	o.cgroup_fd = -1;
	o.ring_pages = t->ring_pages;
	if (t->cgroup) {
		/* in the kernel, where perf_event's hierarchy has the cgroup */
		cgfd = pc_trace_cgroup_open(t->cgroup, why, sizeof(why));
		if (cgfd >= 0) {
			o.cgroup_fd = cgfd;
		} else if (t->memory_version == 1 &&
			   pc_cgroup_resolve(t->cgroup, dir, sizeof(dir), NULL, 0) == 0 &&
			   pc_cgroup_root(mount, sizeof(mount), &v) == 0) {
			/*
			 * A v1 memory cgroup that perf_event's hierarchy lacks: every
			 * event is read, and kept when its process is in the memory
			 * cgroup or below it (/proc/PID/cgroup).
			 */
			snprintf(t->filter_rel, sizeof(t->filter_rel), "%s",
				 dir[strlen(mount)] ? dir + strlen(mount) : "/");
			t->v1_filter = true;
		} else {
			return top_fail(t->cgroup, "cannot find cgroup", why);
		}
	}
	comm_open(t);	/* first: names of what starts while the trace opens */
	rc = pc_trace_open(&o, &t->trace, err, sizeof(err));
	if (cgfd >= 0)
		close(cgfd);
	if (rc < 0) {
		char msg[1024];
		bool priv = rc == -EACCES || rc == -EPERM;

		snprintf(msg, sizeof(msg), "%s%s", err[0] ? err : strerror(-rc),
			 priv && !pc_have_cap(CAP_PERFMON) && !pc_have_cap(CAP_SYS_ADMIN)
				 ? " (top needs root, or CAP_PERFMON with tracefs mounted)"
				 : "");
		return top_fail("filemap tracepoints", "cannot trace", msg);
	}
	t->kinds = pc_trace_kinds(t->trace);
	t->acc_kprobe = pc_trace_accessed(t->trace, &t->acc_before, &t->acc_func) == 0;
	if (!uses_seen(t) && !t->sorted)
		t->sort = S_MISSES;	/* accesses are unknown */
	return 0;
}

static int handle_key(struct top *t, int c)
{
	switch (c) {
	case 'q':
	case 'Q':
		return 1;
	case 'a':
		t->sort = S_ACCESSES;
		break;
	case 'm':
		t->sort = S_MISSES;
		break;
	case 'h':
		t->sort = S_HIT;
		break;
	case 'e':
		t->sort = S_EVICTED;
		break;
	case 'd':
		t->sort = S_DIRTIED;
		break;
	case 'k':
		t->sort = S_KEY;
		break;
	case 'r':
		t->reverse = !t->reverse;
		break;
	case 'b':	/* the rows of the next interval are counted the new way */
		t->by = (t->by + 1) % 3;
		table_reset(&t->cur);
		table_reset(&t->shown);
		t->npend = 0;
		pc_idmap_clear(&t->pending);
		break;
	default:
		return 0;
	}
	sort_rows(t, &t->shown);
	return 0;
}

/* ---- the loop ---- */

static int run(struct top *t)
{
	sigset_t mask;
	int sfd, rc = 0;
	double start = pc_now(), next = start + t->interval;
	unsigned long done = 0;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGQUIT);
	sigaddset(&mask, SIGTSTP);
	sigaddset(&mask, SIGWINCH);
	sigaddset(&mask, SIGCONT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0)
		return top_fail("signalfd", "cannot watch signals", strerror(errno));
	if (t->tty) {
		static const int fatal[] = { SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL };

		for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], fatal_signal);
		if (term_setup(t) < 0)
			t->tty = false;
		else
			render(t);	/* the header at once, the rows after an interval */
	}
	for (;;) {
		struct pollfd pf[3] = {
			{ pc_trace_fd(t->trace), POLLIN, 0 },
			{ sfd, POLLIN, 0 },
			{ t->tty ? STDIN_FILENO : -1, POLLIN, 0 },
		};
		double now = pc_now();
		/* drained every 100 ms at least: a process's name is read while it lives */
		int wait = next > now ? (int)ceil((next - now) * 1000) : 0;

		if (wait > 100)
			wait = 100;

		if (poll(pf, 3, wait) < 0 && errno != EINTR) {
			rc = -errno;
			break;
		}
		comm_drain(t);
		pc_trace_drain(t->trace, on_event, t);
		if (t->unnamed)
			name_hidden(t);
		if (pf[1].revents) {
			struct signalfd_siginfo si;
			bool quit = false;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGWINCH && t->screen) {
					struct winsize ws;

					if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col) {
						t->cols = ws.ws_col;
						t->lines = ws.ws_row;
					}
					fputs("\033[2J", stdout);
					render(t);
				} else if (si.ssi_signo == SIGTSTP) {
					/* ^Z: the terminal back first, raw again when continued */
					if (t->screen) {
						term_restore();
						t->screen = false;
					}
					kill(getpid(), SIGSTOP);
				} else if (si.ssi_signo == SIGCONT) {
					if (t->tty && !t->screen && term_setup(t) == 0)
						render(t);
				} else {
					quit = true;
				}
			}
			if (quit)
				break;
		}
		if (pf[2].revents & POLLIN) {
			char keys[64];
			ssize_t n = read(STDIN_FILENO, keys, sizeof(keys));
			bool quit = false;

			for (ssize_t i = 0; i < n && !quit; i++)
				quit = handle_key(t, keys[i]);
			if (quit)
				break;
			if (n > 0 && t->screen)
				render(t);
			if (n == 0)	/* the terminal is gone */
				pf[2].fd = -1, t->tty = false;
		} else if (pf[2].revents & (POLLHUP | POLLERR)) {
			break;
		}
		now = pc_now();
		if (now >= next) {
			comm_drain(t);
			pc_trace_drain(t->trace, on_event, t);
			end_interval(t, now - (next - t->interval));
			rc = render(t);
			if (rc < 0)
				break;
			if (t->count && ++done >= t->count)
				break;
			next += t->interval;
			if (next < now)		/* fell behind (stopped): start afresh */
				next = now + t->interval;
		}
	}
	if (t->screen) {
		term_restore();
		t->screen = false;
	}
	close(sfd);
	if (rc == -EPIPE)
		rc = 0;
	if (t->lost_total && !t->json)
		cli_warn("%llu events lost (ring overflow): the counts were low",
			 (unsigned long long)t->lost_total);
	return rc;
}

int cmd_top(int argc, char **argv)
{
	struct cli_parser p;
	/* 1 MiB a CPU: a loaded 2-CPU machine lost events with 512 KiB */
	struct top t = { .by = BY_PROCESS, .sort = S_ACCESSES, .interval = 1, .ring_pages = 256 };
	char mount[64];
	unsigned long v;
	int opt, rc;

	t.cg2_fd = -1;
	cli_parser_bind(&p, &top_spec, &t, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case OPT_BY:
			for (v = 0; v < 3 && strcmp(p.arg, by_names[v]); v++)
				;
			if (v == 3)
				return cli_usage_error("--by takes process, file or cgroup, not '%s'", p.arg);
			t.by = (int)v;
			break;
		case OPT_INTERVAL:
			if (cli_parse_decimal(p.arg, 0.05, 86400, 0, &t.interval) < 0)
				return cli_usage_error("--interval wants seconds from 0.05 to 86400, not '%s'",
						       p.arg);
			break;
		case OPT_COUNT:
			if (parse_u("--count", p.arg, ULONG_MAX / 2, &t.count))
				return EXIT_USAGE;
			if (!t.count)
				return cli_usage_error("--count wants 1 or more, not '%s'", p.arg);
			break;
		case OPT_ROWS:
			if (parse_u("--rows", p.arg, 1000000000, &v))
				return EXIT_USAGE;
			t.rows = v;
			break;
		case OPT_SORT:
			for (v = 0; v < 6 && strcmp(p.arg, sort_names[v]); v++)
				;
			if (v == 6)
				return cli_usage_error("--sort takes accesses, misses, hit_ratio, evicted, "
						       "dirtied or key, not '%s'", p.arg);
			t.sort = (int)v;
			t.sorted = true;
			break;
		case OPT_TOP_PID:
			if (cli_parse_pid("--pid", p.arg, &t.pid))
				return EXIT_USAGE;
			break;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	out_init(t.json ? OUT_JSON : OUT_HUMAN, false, false);
	out_list_declare("errors");
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (t.children && !t.pid)
		return cli_usage_error("--children goes with --pid");
	if (t.pid && t.cgroup)
		return cli_usage_error("--pid and --cgroup: one of them");
	if (t.pid && kill(t.pid, 0) < 0 && errno == ESRCH) {
		char pid[32];

		snprintf(pid, sizeof(pid), "%d", (int)t.pid);
		return top_fail(pid, "no such process", strerror(ESRCH));
	}
	if ((rc = cli_trace_ring_env(&t.ring_pages)))
		return rc;
	if (pc_cgroup_root(mount, sizeof(mount), &t.memory_version) < 0)
		t.memory_version = 0;
	find_cgroup2(&t);
	t.tty = !t.json && isatty(STDOUT_FILENO) && isatty(STDIN_FILENO) && getenv("TERM") &&
		strcmp(getenv("TERM"), "dumb");
	rc = open_trace(&t);
	if (rc) {
		top_release(&t);
		return rc;
	}
	rc = run(&t);
	top_release(&t);
	if (rc < 0) {
		cli_warn("cannot write the output: %s", strerror(-rc));
		return EXIT_PARTIAL;
	}
	return 0;
}
