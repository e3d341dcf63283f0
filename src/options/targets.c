/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * targets.c: the options every file-taking command shares, and the walk
 * that turns them into files: paths on the command line, lists read with
 * -b (newline or NUL separated, the last record kept whole even without a
 * trailing separator; read while they are walked, so a list of a million
 * names holds a few hundred at once), patterns, a byte range, a size cap; the files of
 * --pid's and --cgroup's processes, which lib/target.c finds and pins (an
 * O_PATH fd each, walked as /proc/self/fd/FD, so exactly that file is
 * reopened). Walk events become counters for the summary, and errors
 * become named failures. Also the options the commands share beyond files
 * (output format, memory budget) and the progress line.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "internal.h"	/* lib/target.c: the files of processes */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

void targets_init(struct targets *t)
{
	memset(t, 0, sizeof(*t));
}

static int push_str(const char ***arr, size_t *n, const char *s)
{
	const char **na = realloc(*arr, (*n + 2) * sizeof(*na));

	if (!na)
		return -ENOMEM;
	na[(*n)++] = s;
	na[*n] = NULL;
	*arr = na;
	return 0;
}

static int parse_range(struct targets *t, const char *arg)
{
	const char *dash = strchr(arg, '-');
	uint64_t a = 0, b = 0;
	char lo[64];

	if (!dash && *arg) {	/* a plain B: 0-B, as vmtouch's -p reads it */
		if (pc_parse_size(arg, &b) < 0 || b == 0)
			return -EINVAL;
		t->off = 0;
		t->len = b;
		return 0;
	}
	if (!dash || (size_t)(dash - arg) >= sizeof(lo))
		return -EINVAL;
	memcpy(lo, arg, (size_t)(dash - arg));
	lo[dash - arg] = 0;
	if (*lo && pc_parse_size(lo, &a) < 0)
		return -EINVAL;
	if (dash[1] && pc_parse_size(dash + 1, &b) < 0)
		return -EINVAL;
	if (dash[1] && b <= a)
		return -EINVAL;
	t->off = a;
	t->len = dash[1] ? b - a : 0;
	return 0;
}

int targets_opt(struct targets *t, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case OPT_RANGE:
		if (parse_range(t, arg) < 0) {
			cli_usage_error("invalid range '%s' (want A-B, -B, A- or B, e.g. 4k-1M)%s", arg,
					!strcmp(cli_cmd, "lock") ? "; a pidfile is -P FILE" : "");
			return -1;
		}
		return 1;
	case OPT_INCLUDE:
		push_str(&t->include, &t->ninc, arg);
		return 1;
	case OPT_EXCLUDE:
		push_str(&t->exclude, &t->nexc, arg);
		return 1;
	case OPT_MAX_SIZE:
		if (pc_parse_size(arg, &v) < 0 || v == 0) {
			cli_usage_error("invalid size '%s' (e.g. 512M, 1.5G)", arg);
			return -1;
		}
		t->walk.max_size = v;
		return 1;
	case OPT_ONE_FS:
		t->walk.one_fs = true;
		return 1;
	case OPT_FOLLOW:
		t->walk.follow = true;
		return 1;
	case OPT_ALL_LINKS:
		t->walk.all_links = true;
		return 1;
	case OPT_BATCH:
	case OPT_FILES_FROM:
	case OPT_FILES0_FROM: {	/* GNU's: the list ends names with NUL */
		struct path_list *nl = realloc(t->lists, (t->nlists + 1) * sizeof(*nl));

		if (!nl)
			return -1;
		t->lists = nl;
		nl[t->nlists++] = (struct path_list){ .name = arg, .nul = c == OPT_FILES0_FROM };
		return 1;
	}
	case OPT_NULL:
		t->nul = true;
		return 1;
	case OPT_PID: {
		char *end;
		long pid = strtol(arg, &end, 10);
		int *np;

		if (*end || pid < 1 || pid > 4194304) {
			cli_usage_error("invalid PID '%s'", arg);
			return -1;
		}
		np = realloc(t->pids, (t->npids + 1) * sizeof(*np));
		if (!np)
			return -1;
		t->pids = np;
		t->pids[t->npids++] = (int)pid;
		return 1;
	}
	case OPT_CHILDREN:
		t->children = true;
		return 1;
	case OPT_CGROUP:
		t->cgroup = arg;
		return 1;
	case OPT_THREADS: {
		char *end;
		long n = strtol(arg, &end, 10);

		if (*end || n < 1 || n > 256) {
			cli_usage_error("invalid thread count '%s' (1-256)", arg);
			return -1;
		}
		t->walk.threads = (unsigned)n;
		return 1;
	}
	}
	return 0;
}

/*
 * A path list is read as it is walked (targets_walk's feed), a name at a
 * time into t->name, so that a list of a million names costs no more
 * memory than a tree of a million files. A name is never cut short: one
 * longer than PATH_MAX cannot be opened, and one holding a NUL in a
 * newline-separated list would be read as the name up to the NUL,
 * another file; either, or bytes no list of names holds, among a list's
 * first names is a list read as one that is none (a binary file given to
 * -b): the list is refused there, with one message, not a failure for
 * each of its lines. Further on, the list has shown itself a list: a bad
 * line there is skipped with one failure and the rest still read (one
 * corrupt line of a million never loses the names after it).
 */
#define LIST_JUDGED 8	/* names a list is judged by */

/* Valid UTF-8 (no overlong forms, no surrogates, at most U+10FFFF). */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], need, min, cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return false;
		if (n - i <= need)
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

/*
 * Not a name of a newline-separated list: control bytes (a tab and a
 * carriage return aside) in bytes that are not UTF-8 either. A name in
 * Latin-1, or in UTF-8 with a control character, is still a name.
 */
static bool looks_binary(const char *s, size_t n)
{
	bool ctl = false;

	for (size_t i = 0; i < n && !ctl; i++) {
		unsigned char c = (unsigned char)s[i];

		ctl = (c < 0x20 && c != '\t' && c != '\r') || c == 0x7f;
	}
	return ctl && !utf8_valid((const unsigned char *)s, n);
}

static void list_close(struct path_list *l)
{
	if (l->f && l->f != stdin)
		fclose(l->f);
	if (l->in && l->in != l->f && l->in != stdin)
		fclose(l->in);
	l->f = l->in = NULL;
}

/* refused at line (quiet: said by the walk's own read) */
static void list_refuse(const struct path_list *l, unsigned long line, const char *why, bool quiet)
{
	char msg[256];

	if (quiet)
		return;
	snprintf(msg, sizeof(msg), "%s (name %lu): not a list of names (a binary file?); "
		 "read no further", why, line);
	cli_fail_msg(l->name, "cannot read path list", msg);
}

/*
 * The list's next name into t->name: 1; 0 at its end, or where it fails
 * or is refused (said unless quiet). copy: every byte read is written to
 * it too (targets_each_name's copy of a pipe).
 */
static int list_next(struct targets *t, struct path_list *l, bool quiet, FILE *copy)
{
	int sep = l->nul || t->nul ? '\0' : '\n';
	FILE *f = l->f;

	if (!t->name && !(t->name = malloc(PATH_MAX))) {
		if (!quiet)
			cli_fail(l->name, ENOMEM, "cannot read path list");
		return 0;
	}
	for (;;) {
		size_t n = 0;
		bool nul = false;
		int c;

		errno = 0;
		bool longer = false;

		while ((c = getc_unlocked(f)) != EOF && c != sep) {
			if (copy)
				putc_unlocked(c, copy);
			if (n + 1 >= PATH_MAX) {
				if (l->line < LIST_JUDGED) {
					list_refuse(l, l->line + 1, "a name longer than PATH_MAX", quiet);
					return 0;
				}
				longer = true;	/* read to its end, and skipped */
				continue;
			}
			nul |= c == 0;
			t->name[n++] = (char)c;
		}
		if (copy && c != EOF)
			putc_unlocked(c, copy);
		t->name[n] = 0;
		if (c == EOF && ferror(f)) {
			int err = errno ? errno : EIO;

			if (copy)
				l->err = err;	/* the copy ends here: the walk says why */
			else if (!quiet)
				cli_fail(l->name, l->err ? l->err : err, "cannot read path list");
			return 0;
		}
		if (c == EOF && !n) {
			if (l->err && !quiet)	/* the pipe's, where the copy ended */
				cli_fail(l->name, l->err, "cannot read path list");
			return 0;
		}
		l->line++;
		if (longer) {
			if (!quiet)
				cli_fail_msg(t->name, "skipping a listed name that starts",
					     "it is longer than PATH_MAX");
			continue;
		}
		if (!n)
			continue;
		if (nul && looks_binary(t->name, n) && l->line <= LIST_JUDGED) {
			list_refuse(l, l->line, "a NUL byte in a name", quiet);
			return 0;
		}
		if (nul) {	/* text, or a list's later line: its start is a name */
			if (!quiet)
				cli_fail_msg(t->name, "skipping a listed name that starts",
					     "it holds a NUL byte (lists of NUL-ended names take -0 "
					     "or --files0-from)");
			continue;
		}
		if (sep && l->line <= LIST_JUDGED && looks_binary(t->name, n)) {
			list_refuse(l, l->line, "control bytes in a name that is not UTF-8", quiet);
			return 0;
		}
		return 1;
	}
}

/* Each list opened now, as they were all read at the start: a missing one is said first. */
static void lists_open(struct targets *t)
{
	for (size_t i = 0; i < t->nlists; i++) {
		struct path_list *l = &t->lists[i];

		l->f = strcmp(l->name, "-") ? fopen(l->name, "re") : stdin;
		if (!l->f)
			cli_fail(l->name, errno, "cannot open path list");
		l->in = l->f;
	}
}

/*
 * The walk's roots, from its feed: argv's paths, each list's names, the
 * processes' files; each as t->root says. 1, 0 at the end.
 */
static int feed_next(void *arg, const char **path, int *fd)
{
	struct targets *t = arg;

	for (;;) {
		const char *p;

		if (t->fed < t->nargv) {
			p = t->paths[t->fed++];
		} else if (t->list_at < t->nlists) {
			struct path_list *l = &t->lists[t->list_at];

			if (!l->f || !list_next(t, l, false, NULL)) {
				list_close(l);
				t->list_at++;
				continue;
			}
			p = t->name;
		} else if (t->fed < t->npaths) {
			p = t->paths[t->fed++];
		} else {
			return 0;
		}
		*fd = -1;
		if (t->root && t->root(p, fd, t->root_arg) < 0)
			continue;
		*path = p;
		return 1;
	}
}

/*
 * An unnamed temporary file for a pipe's list: in $TMPDIR, else /var/tmp,
 * on disk where /tmp may be tmpfs (memory, the very thing saved); where
 * that directory takes no O_TMPFILE, tmpfile()'s (/tmp).
 */
static FILE *spool_file(void)
{
	const char *dir = secure_getenv("TMPDIR");
	int fd = open(dir && *dir ? dir : "/var/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	FILE *f;

	if (fd < 0)
		return tmpfile();
	if (!(f = fdopen(fd, "w+")))
		close(fd);
	return f;
}

int targets_each_name(struct targets *t, int (*fn)(const char *path, void *arg), void *arg)
{
	int rc = 0;

	for (size_t i = 0; i < t->nargv && !rc; i++)
		rc = fn(t->paths[i], arg);
	for (size_t i = 0; i < t->nlists && !rc; i++) {
		struct path_list *l = &t->lists[i];
		struct stat st;
		FILE *copy = NULL;
		off_t at = 0;

		if (!l->f)
			continue;
		/* a file is read again from here; a pipe is kept as it is read */
		if (fstat(fileno(l->f), &st) < 0 || !S_ISREG(st.st_mode) ||
		    (at = ftello(l->f)) < 0) {
			copy = spool_file();
			if (!copy) {
				cli_fail(l->name, errno, "cannot keep a copy of path list");
				list_close(l);
				continue;
			}
		}
		while (!rc && list_next(t, l, true, copy))
			rc = fn(t->name, arg);
		if (copy) {	/* the rest as it is, for the walk to read */
			char buf[65536];
			size_t n;

			while (!l->err && (n = fread(buf, 1, sizeof(buf), l->f)) > 0)
				fwrite(buf, 1, n, copy);
			if (!l->err && ferror(l->f))
				l->err = errno ? errno : EIO;
			/* a write that failed on the way (a full disk) is a copy with a hole */
			errno = 0;
			if (fflush(copy) != 0 || ferror(copy) || fseeko(copy, 0, SEEK_SET) < 0) {
				cli_fail(l->name, errno ? errno : EIO, "cannot keep a copy of path list");
				fclose(copy);
				list_close(l);
				continue;
			}
			l->f = copy;	/* l->in, the pipe, is closed with it */
		} else if (fseeko(l->f, at, SEEK_SET) < 0) {
			cli_fail(l->name, errno, "cannot read path list");
			list_close(l);
		}
		if (l->f)
			clearerr(l->f);
		l->line = 0;
	}
	return rc;
}

int targets_read_lists(struct targets *t)
{
	const char **procs = NULL;
	size_t nprocs = 0, n = t->npaths;

	/* argv's, the lists', then the processes' files: as the walk takes them */
	for (size_t i = t->nargv; i < n; i++)
		if (push_str(&procs, &nprocs, t->paths[i]) < 0)
			return -ENOMEM;
	t->npaths = t->nargv;
	for (size_t i = 0; i < t->nlists; i++) {
		struct path_list *l = &t->lists[i];

		while (l->f && list_next(t, l, false, NULL)) {
			char *p = strdup(t->name);

			if (!p || push_str(&t->paths, &t->npaths, p) < 0) {
				free(p);
				cli_fail(l->name, ENOMEM, "cannot read path list");
				break;
			}
		}
		list_close(l);
	}
	t->list_at = t->nlists;
	for (size_t i = 0; i < nprocs; i++)
		push_str(&t->paths, &t->npaths, procs[i]);
	free(procs);
	t->nargv = t->npaths - nprocs;
	return 0;
}

static bool has_path(struct targets *t, const char *p)
{
	for (size_t i = 0; i < t->npaths; i++)
		if (!strcmp(t->paths[i], p))
			return true;
	return false;
}

/*
 * A file of a process (--pid, --cgroup), pinned: fd is an O_PATH fd on the
 * file itself (lib/target.c), kept open for the walk, which is handed
 * "/proc/self/fd/FD" and so reopens exactly that file; name is what
 * people see.
 */
struct proc_file {
	int fd;			/* O_PATH, on a regular file */
	char link[32];		/* "/proc/self/fd/FD": the walk's root */
	char *name;		/* shown and recorded instead of link */
};

/* The name the walk's path stands for, if it is a pinned process file. */
static const char *proc_name(const struct targets *t, const char *path)
{
	static const char pfx[] = "/proc/self/fd/";
	char *end;
	long fd;

	if (!t->nprocs || strncmp(path, pfx, sizeof(pfx) - 1))
		return NULL;
	fd = strtol(path + sizeof(pfx) - 1, &end, 10);
	if (*end || end == path + sizeof(pfx) - 1)
		return NULL;
	for (size_t i = 0; i < t->nprocs; i++)	/* few: a linear look is fine */
		if (t->procs[i].fd == fd && !strcmp(t->procs[i].link, path))
			return t->procs[i].name;
	return NULL;
}

/* Take a process's file into the walk's roots, unless it is named there already. */
static int take_proc_file(const struct pc_target_file *f, void *arg)
{
	struct targets *t = arg;
	struct proc_file *np, *pf;
	char *name;

	if (has_path(t, f->name) ||	/* named on the command line too */
	    !(np = realloc(t->procs, (t->nprocs + 1) * sizeof(*np))))
		return 0;
	t->procs = np;
	if (!(name = strdup(f->name)))
		return 0;
	pf = &t->procs[t->nprocs];
	pf->fd = f->fd;
	pf->name = name;
	snprintf(pf->link, sizeof(pf->link), "/proc/self/fd/%d", f->fd);
	if (push_str(&t->paths, &t->npaths, strdup(pf->link)) < 0) {
		free(name);
		return 0;
	}
	t->nprocs++;
	return 1;
}

static void proc_fail(const struct pc_target_fail *f, void *arg)
{
	char who[32];

	(void)arg;
	if (f->kind == PC_TARGET_KEEP) {
		cli_fail(f->subject, f->err, "cannot keep");
		return;
	}
	snprintf(who, sizeof(who), "pid %d", (int)f->pid);
	cli_fail(who, f->err, "cannot read the files of");
}

/* The files of --pid's processes and --cgroup's, pinned (lib/target.c). */
static void add_procs(struct targets *t)
{
	struct pc_target pt = { .file = take_proc_file, .fail = proc_fail, .arg = t };
	struct rlimit rl;

	/* a pinned fd per file of theirs: allow as many as we may */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	pt.children = t->children;
	for (size_t i = 0; i < t->npids; i++)
		pc_target_pid(&pt, t->pids[i]);	/* a failure is said, and makes the exit 1 */
	pt.children = false;
	if (t->cgroup) {
		char dir[4096], why[1024];
		int rc = pc_cgroup_resolve(t->cgroup, dir, sizeof(dir), why, sizeof(why));

		if (rc == -ENOENT && t->cgroup_gone_empty)
			/* systemd removes a stopped unit's cgroup: a service that is down */
			cli_warn("nothing of '%s' to record: %s (the service is down?)", t->cgroup,
				 why);
		else if (rc < 0)
			cli_fail_msg(t->cgroup, "cannot read memory cgroup", why);
		else if ((rc = pc_target_cgroup(&pt, dir)) < 0)
			cli_fail(t->cgroup, -rc, "cannot read memory cgroup");
	}
	pc_target_release(&pt);
}

int targets_finish(struct targets *t, int argc, char **argv)
{
	if (t->nul && !t->nlists) {
		cli_usage_error("-0 needs a list of paths: --batch FILE (-b in warm, evict, lock)");
		return -1;
	}
	for (int i = 0; i < argc; i++)
		push_str(&t->paths, &t->npaths, strdup(argv[i]));
	t->nargv = t->npaths;
	lists_open(t);	/* a failure is named and makes the exit 1 */
	if (t->children && !t->npids)
		return cli_usage_error("--children needs --pid"), -1;
	if (t->npids || t->cgroup)
		add_procs(t);
	if (!t->npaths && !t->nlists && !t->npids && !t->cgroup) {
		cli_usage_error("no PATH given");
		return -1;
	}
	t->walk.include = t->include;
	t->walk.exclude = t->exclude;
	return 0;
}

void targets_walk_error(const char *path, int err)
{
	if (err == EINVAL)
		cli_fail_msg(path, "skipping", "not a regular file or directory");
	else if (err == EREMOTEIO)
		cli_fail_msg(path, "skipping", "on a filesystem of kernel interfaces "
			     "(procfs, sysfs, ...), not data in the page cache");
	else if (err == ELOOP)
		cli_fail_msg(path, "cannot follow", "symbolic link loop");
	else if (err == ENOMEDIUM)	/* a shared directory's file, no procfs */
		cli_fail_msg(path, "cannot reopen safely", "/proc is not mounted");
	else
		cli_fail(path, err, "cannot open");
}

static void on_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct targets *t = arg;
	const char *name = proc_name(t, path);

	if (name)
		path = name;

	switch (ev) {
	case PC_WALK_ERROR:
		targets_walk_error(path, err);
		break;
	case PC_WALK_VANISHED:
		t->vanished++;
		cli_warn("'%s' vanished during the walk", path);
		break;
	case PC_WALK_SKIP_SPECIAL:
		t->special++;
		break;
	case PC_WALK_SKIP_SYMLINK:
		t->symlinks++;
		break;
	case PC_WALK_SKIP_LOOP:
		t->loops++;
		cli_warn("skipping '%s': directory already visited above it (a symlink loop or a bind mount)", path);
		break;
	case PC_WALK_SKIP_MOUNT:
		t->mounts++;
		break;
	case PC_WALK_SKIP_SIZE:
		t->toobig++;
		break;
	case PC_WALK_SKIP_PATTERN:
		t->excluded++;
		break;
	case PC_WALK_DUP:
		t->dups++;
		break;
	case PC_WALK_DIR:
		t->dirs++;
		if (t->dir)
			t->dir(path, t->dir_arg);
		break;
	default:
		break;
	}
}

/* A process's pinned file reaches the command under its name. */
static int on_file(struct pc_walk_entry *e, void *arg)
{
	struct targets *t = arg;
	const char *name = proc_name(t, e->path);

	if (name)
		e->path = name;
	return t->file(e, t->file_arg);
}

int targets_walk(struct targets *t, int (*file)(struct pc_walk_entry *, void *), void *arg)
{
	t->file = file;
	t->file_arg = arg;
	t->walk.file = t->nprocs ? on_file : file;
	t->walk.arg = t->nprocs ? (void *)t : arg;
	t->walk.event = on_event;
	t->walk.event_arg = t;
	/* every root through the feed: the lists are read as they are walked */
	return pc_walk_fed(NULL, 0, &(struct pc_walk_feed){ feed_next, t }, &t->walk);
}

const struct pc_walk_opts *targets_walk_opts(struct targets *t)
{
	t->walk.file = NULL;
	t->walk.arg = NULL;
	t->walk.event = on_event;
	t->walk.event_arg = t;
	return &t->walk;
}

struct root_rank {
	const char *path;
	size_t len, idx;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct root_rank *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	return c ? c : x->idx < y->idx ? -1 : x->idx > y->idx;
}

int targets_rank_index(struct targets *t)
{
	free(t->ranks);
	t->nranks = 0;
	t->ranks = t->nargv ? malloc(t->nargv * sizeof(*t->ranks)) : NULL;
	if (!t->ranks)
		return t->nargv ? -ENOMEM : 0;
	for (size_t i = 0; i < t->nargv; i++)
		t->ranks[i] = (struct root_rank){ t->paths[i], strlen(t->paths[i]), i };
	qsort(t->ranks, t->nargv, sizeof(*t->ranks), cmp_rank);
	t->nranks = t->nargv;
	return 0;
}

/* The first place on the command line of the root path[0..len), or SIZE_MAX. */
static size_t rank_of(const struct targets *t, const char *path, size_t len)
{
	size_t lo = 0, hi = t->nranks;

	/* the first entry not below path[0..len): equal ones are by place */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct root_rank *r = &t->ranks[mid];
		int c = strncmp(r->path, path, len);

		if (c < 0 || (c == 0 && r->len < len))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < t->nranks && t->ranks[lo].len == len && !strncmp(t->ranks[lo].path, path, len))
		return t->ranks[lo].idx;
	return SIZE_MAX;
}

size_t targets_rank(const struct targets *t, const char *path)
{
	size_t best = SIZE_MAX, n = strlen(path);

	/*
	 * The walk names a file under root R as R/name (R/name when R ends
	 * with '/'): R is path itself, or ends before a '/' or just after it.
	 */
	for (size_t l = 1; l <= n; l++) {
		size_t r;

		if (l < n && path[l] != '/')
			continue;
		r = rank_of(t, path, l);
		best = r < best ? r : best;
		if (l < n) {
			r = rank_of(t, path, l + 1);
			best = r < best ? r : best;
		}
	}
	return best == SIZE_MAX ? t->nargv : best;
}

void targets_release(struct targets *t)
{
	free(t->ranks);
	t->ranks = NULL;
	t->nranks = 0;
	for (size_t i = 0; i < t->npaths; i++)
		free((char *)t->paths[i]);
	free(t->paths);
	free(t->include);
	free(t->exclude);
	free(t->pids);
	for (size_t i = 0; i < t->nlists; i++)
		list_close(&t->lists[i]);
	free(t->lists);
	free(t->name);
	t->name = NULL;
	t->nargv = t->fed = t->list_at = 0;
	for (size_t i = 0; i < t->nprocs; i++) {
		close(t->procs[i].fd);
		free(t->procs[i].name);
	}
	free(t->procs);
	/* released twice is released once */
	t->paths = NULL;
	t->npaths = t->cap = t->nprocs = t->nlists = t->npids = 0;
	t->include = t->exclude = NULL;
	t->ninc = t->nexc = 0;
	t->pids = NULL;
	t->lists = NULL;
	t->procs = NULL;
}

void cli_begin(int argc, char **argv)
{
	optind = 1;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (is_json_flag(argv[i])) {
			const char *eq = strchr(argv[i], '=');

			out_init(OUT_JSON, false, false);
			out_json_short(eq && !strcmp(eq + 1, "short"));
		}
}

/* --prom-per-file, --prom-file, --prom-label: Prometheus text, never with --json or --kv */
static int prom_opt(struct cli_opts *co, int opt, const char *arg)
{
	if (co->fmt == OUT_JSON || co->fmt == OUT_KV) {
		cli_usage_error("%s and --json or --kv: one format",
				opt == OPT_PROM_FILE ? "--prom-file" :
				opt == OPT_PROM_LABEL ? "--prom-label" : "--prom-per-file");
		return -1;
	}
	if (opt == OPT_PROM_LABEL) {
		if (out_prom_label(arg) < 0)
			return -1;
		co->fmt = OUT_PROM;
		return 0;
	}
	if (opt == OPT_PROM_FILE && !*arg) {
		cli_usage_error("--prom-file wants a file name");
		return -1;
	}
	if (opt == OPT_PROM_FILE) {	/* before the command does anything */
		struct stat st;

		if (lstat(arg, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
			cli_usage_error("--prom-file '%s' is not a regular file: it is never "
					"replaced (give the textfile directory's file)", arg);
			return -1;
		}
	}
	co->fmt = OUT_PROM;
	if (opt == OPT_PROM_FILE)
		co->prom_file = arg;
	else
		co->prom_per_file = true;
	/* out_init keeps these: commands that call it themselves get them too */
	out_prom_opts(co->prom_per_file, co->prom_file);
	return 0;
}

int cli_format_set(struct cli_opts *co, int opt, const char *arg)
{
	switch (opt) {
	case OPT_JSON:
	case OPT_KV:
		if (co->prom_per_file || co->prom_file || out_prom_labelled()) {
			cli_usage_error("%s and --prom-file, --prom-label or --prom-per-file: one format",
					opt == OPT_JSON ? "--json" : "--kv");
			return -1;
		}
		if (opt == OPT_KV) {
			co->fmt = OUT_KV;
			return 0;
		}
		co->fmt = OUT_JSON;
		if (arg && strcmp(arg, "short") && strcmp(arg, "pretty")) {
			cli_usage_error("--json takes 'pretty' or 'short', not '%s'", arg);
			return -1;
		}
		co->json_short = arg && !strcmp(arg, "short");
		out_json_short(co->json_short);
		return 0;
	case OPT_PROM:
		co->fmt = OUT_PROM;
		return 0;
	case OPT_PROM_PER_FILE:
	case OPT_PROM_FILE:
	case OPT_PROM_LABEL:
		return prom_opt(co, opt, arg);
	case OPT_BYTES:
		co->bytes = true;
		return 0;
	case OPT_NOHEADINGS:
		co->noheadings = true;
		return 0;
	case OPT_RAW:
		co->raw = true;
		return 0;
	case OPT_COLUMNS:	/* taken (and checked) by the parser: out_select_columns */
		return 0;
	}
	return 0;
}

int cli_start(const struct cli_opts *co, struct targets *t, int argc, char **argv)
{
	out_init(co->fmt, co->bytes, co->noheadings);
	out_set_raw(co->raw);
	out_list_declare("files");
	out_list_declare("errors");
	if (co->raw && optind < argc) {
		/* -r was the range (vmtouch's, and ours before): never read 0-4k as a file */
		struct targets scratch = { 0 };
		struct stat st;
		const char *w = argv[optind];

		if (parse_range(&scratch, w) == 0 && lstat(w, &st) < 0 && errno == ENOENT) {
			cli_usage_error("'%s' is a range, not a file: -r is --raw here; "
					"type -p %s or --range %s", w, w, w);
			targets_release(t);
			return -1;
		}
	}
	if (targets_finish(t, argc - optind, argv + optind) < 0) {
		targets_release(t);	/* nothing held at exit: LeakSanitizer */
		return -1;
	}
	return 0;
}

void *cli_alloc_totals(unsigned n, size_t size, size_t align)
{
	void *p = aligned_alloc(align, n * size);

	if (p)
		memset(p, 0, n * size);
	return p;
}

void cli_sum_totals(void *sum, const void *per_thread, unsigned n, size_t size)
{
	uint64_t *dst = sum;
	const uint64_t *src = per_thread;

	for (unsigned t = 0; t < n; t++)
		for (size_t i = 0; i < size / sizeof(uint64_t); i++)
			dst[i] += src[t * (size / sizeof(uint64_t)) + i];
}


struct cli_progress {
	const struct pc_progress *p;
	const uint64_t *total;		/* bytes to do, may grow (a walk); NULL: unknown */
	const char *label;
	pthread_t tid;
	volatile int done;
};

/* "1:05", "2:03:04": an ETA people read at a glance */
static char *fmt_eta(double s, char *buf, size_t len)
{
	unsigned long t = s < 0 ? 0 : s > 359999 ? 359999 : (unsigned long)(s + 0.5);

	if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
	return buf;
}

static void *progress_main(void *arg)
{
	struct cli_progress *pr = arg;
	double t0 = pc_now();

	while (!pr->done) {
		char a[32], b[32], c[32], e[32];
		double el, rate;
		uint64_t rd, total;

		usleep(200000);
		if (pr->done)
			break;
		el = pc_now() - t0;
		rd = __atomic_load_n(&pr->p->bytes, __ATOMIC_RELAXED);
		total = pr->total ? __atomic_load_n(pr->total, __ATOMIC_RELAXED) : 0;
		rate = el > 0 ? (double)rd / el : 0;
		if (total) {
			uint64_t left = total > rd ? total - rd : 0;
			unsigned pct = rd >= total ? 100 : (unsigned)(rd * 100 / total);

			fprintf(stderr, "\r\033[K%s: %3u%% %s of %s, %s/s, ETA %s, %llu files done",
				pr->label, pct, pc_human_size(rd, a, sizeof(a)),
				pc_human_size(total, b, sizeof(b)),
				pc_human_size((uint64_t)rate, c, sizeof(c)),
				rate > 0 ? fmt_eta((double)left / rate, e, sizeof(e)) : "?",
				(unsigned long long)__atomic_load_n(&pr->p->files, __ATOMIC_RELAXED));
		} else {
			fprintf(stderr, "\r\033[K%s: %llu files done, %s asked for, %s/s", pr->label,
				(unsigned long long)__atomic_load_n(&pr->p->files, __ATOMIC_RELAXED),
				pc_human_size(rd, a, sizeof(a)), pc_human_size((uint64_t)rate, b, sizeof(b)));
		}
	}
	fprintf(stderr, "\r\033[K");
	return NULL;
}

struct cli_progress *cli_progress_start(const struct pc_progress *p, const char *label,
					const uint64_t *total)
{
	struct cli_progress *pr;
	const char *term = getenv("TERM");

	/* on a terminal only, and not one that cannot move the cursor back */
	if (!cli_stderr_tty() || (term && !strcmp(term, "dumb")))
		return NULL;
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->p = p;
	pr->total = total;
	pr->label = label;
	if (pthread_create(&pr->tid, NULL, progress_main, pr) != 0) {
		free(pr);
		return NULL;
	}
	return pr;
}

void cli_progress_stop(struct cli_progress *pr)
{
	if (!pr)
		return;
	pr->done = 1;
	pthread_join(pr->tid, NULL);
	free(pr);
}

int cli_budget_value(struct cli_budget *b, const char *name, const char *arg)
{
	if (!strcmp(name, "max-mem")) {
		if (pc_parse_size(arg, &b->max_mem) < 0 || !b->max_mem) {
			cli_usage_error("invalid size '%s' (e.g. 512M, 1.5G)", arg);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "reserve")) {
		if (pc_parse_size(arg, &b->reserve) < 0) {
			cli_usage_error("invalid size '%s' (e.g. 512M, 1.5G)", arg);
			return -1;
		}
		return 0;
	}
	if (!strcmp(name, "rate")) {
		char *end;
		double v = strtod(arg, &end);

		/*
		 * A plain number is MiB/s; with a suffix, bytes per second. At
		 * least a byte a second and at most 2^50 MiB/s: a rate that rounds
		 * to 0 would mean "no limit", and inf or nan mean nothing.
		 */
		if (end != arg && !*end) {
			if (!(v * 1048576.0 >= 1.0 && v <= 1125899906842624.0)) {
				cli_usage_error("invalid rate '%s' (a number of MiB/s from 1 byte/s "
						"up, e.g. 200, or with a unit, e.g. 50M)", arg);
				return -1;
			}
			b->rate = (uint64_t)(v * 1048576.0);
		} else if (pc_parse_size(arg, &b->rate) < 0 || !b->rate) {
			cli_usage_error("invalid rate '%s' (e.g. 200 for MiB/s, 50M)", arg);
			return -1;
		}
		return 0;
	}
	return cli_usage_error("no memory budget option '%s'", name), -1;
}

int cli_container(const char *spec, char *root, size_t rlen, char *cgdir, size_t clen)
{
	char why[1024] = "";
	pid_t pid;
	int rc = pc_container_find(spec, &pid, cgdir, clen, why, sizeof(why));

	if (rc < 0) {
		cli_fail_msg(spec, "cannot find container", *why ? why : strerror(-rc));
		return -1;
	}
	snprintf(root, rlen, "/proc/%d/root", (int)pid);
	return 0;
}
