/*
 * targets.c: the options every file-taking command shares, and the walk
 * that turns them into files: paths on the command line, lists read with
 * -b (newline or NUL separated, the last record kept whole even without a
 * trailing separator), patterns, a byte range, a size cap. Walk events
 * become counters for the summary, and errors become named failures.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <dirent.h>
#include <sys/sysmacros.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
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
	case 'r':
		if (parse_range(t, arg) < 0) {
			cli_usage_error("invalid range '%s' (want A-B, -B or A-, e.g. 4k-1M)", arg);
			return -1;
		}
		return 1;
	case 'I':
		push_str(&t->include, &t->ninc, arg);
		return 1;
	case 'X':
		push_str(&t->exclude, &t->nexc, arg);
		return 1;
	case 'm':
		if (pc_parse_size(arg, &v) < 0 || v == 0) {
			cli_usage_error("invalid size '%s' (e.g. 512M, 1.5G)", arg);
			return -1;
		}
		t->walk.max_size = v;
		return 1;
	case 'x':
		t->walk.one_fs = true;
		return 1;
	case 'L':
		t->walk.follow = true;
		return 1;
	case 'H':
		t->walk.all_links = true;
		return 1;
	case 'b':
		t->batch = arg;
		return 1;
	case '0':
		t->nul = true;
		return 1;
	case 'p' + 256: {
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
	case 'c' + 256:
		t->children = true;
		return 1;
	case 'g' + 256:
		t->cgroup = arg;
		return 1;
	case 'j': {
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

static int read_batch(struct targets *t)
{
	FILE *f = strcmp(t->batch, "-") ? fopen(t->batch, "re") : stdin;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int sep = t->nul ? '\0' : '\n';

	if (!f) {
		cli_fail(t->batch, errno, "cannot open path list");
		return -1;
	}
	while ((n = getdelim(&line, &cap, sep, f)) > 0) {
		if (line[n - 1] == sep)	/* only a separator, never a path byte */
			line[--n] = 0;
		if (n == 0)
			continue;
		if (push_str(&t->paths, &t->npaths, strdup(line)) < 0)
			break;
	}
	free(line);
	if (f != stdin)
		fclose(f);
	return 0;
}

static bool has_path(struct targets *t, const char *p)
{
	for (size_t i = 0; i < t->npaths; i++)
		if (!strcmp(t->paths[i], p))
			return true;
	return false;
}

static bool same_file(const char *p, dev_t dev, ino_t ino)
{
	struct stat st;

	return stat(p, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/*
 * One file a process uses, by a path that reaches that very file (dev,
 * ino) from here: the path as the kernel prints it; else through the
 * process's root (a container, a chroot); else the magic link itself.
 */
static void add_proc_path(struct targets *t, int pid, const char *path, dev_t dev, ino_t ino,
			  const char *link)
{
	char *p = NULL;

	if (path[0] != '/' || strstr(path, " (deleted)") || !strncmp(path, "/dev/", 5) ||
	    !strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5) || !strncmp(path, "/memfd:", 7))
		return;
	if (same_file(path, dev, ino))
		p = strdup(path);
	else if (asprintf(&p, "/proc/%d/root%s", pid, path) >= 0 && !same_file(p, dev, ino)) {
		free(p);
		p = link ? strdup(link) : NULL;
	}
	if (!p || has_path(t, p)) {
		free(p);
		return;
	}
	push_str(&t->paths, &t->npaths, p);
}

/* The files process `pid` maps (maps) or holds open (fd), and its children's. */
static int add_pid(struct targets *t, int pid, bool children, int depth)
{
	char path[128], line[4200];
	struct stat a;
	FILE *f;
	DIR *d;
	struct dirent *de;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f) {
		char who[32];

		snprintf(who, sizeof(who), "pid %d", pid);
		cli_fail(who, errno, "cannot read the files of");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off, inode;
		unsigned maj, min;
		char perms[8], link[128];
		char *p = strchr(line, '/');

		line[strcspn(line, "\n")] = 0;
		if (!p || sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &start, &end, perms, &off, &maj,
				 &min, &inode) != 7 || !inode)
			continue;
		snprintf(link, sizeof(link), "/proc/%d/map_files/%llx-%llx", pid, start, end);
		add_proc_path(t, pid, p, makedev(maj, min), (ino_t)inode, link);
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char link[300], target[4096];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/%d/fd/%s", pid, de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = 0;
		if (stat(link, &a) == 0 && S_ISREG(a.st_mode))
			add_proc_path(t, pid, target, a.st_dev, a.st_ino, link);
	}
	if (d)
		closedir(d);
	if (!children || depth > 64)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d))) {
		char cpath[600];
		FILE *cf;
		int child;

		if (de->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%d/task/%s/children", pid, de->d_name);
		cf = fopen(cpath, "re");
		while (cf && fscanf(cf, "%d", &child) == 1)
			add_pid(t, child, true, depth + 1);
		if (cf)
			fclose(cf);
	}
	if (d)
		closedir(d);
	return 0;
}

/* Every process in memory cgroup `cg` and the cgroups below it. */
static int add_cgroup(struct targets *t, const char *dir)
{
	char path[4200];
	FILE *f;
	DIR *d;
	struct dirent *de;
	int pid;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%d", &pid) == 1)
		add_pid(t, pid, false, 0);
	fclose(f);
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		add_cgroup(t, path);
	}
	if (d)
		closedir(d);
	return 0;
}

int targets_finish(struct targets *t, int argc, char **argv)
{
	if (t->nul && !t->batch) {
		cli_usage_error("-0 needs -b FILE");
		return -1;
	}
	for (int i = 0; i < argc; i++)
		push_str(&t->paths, &t->npaths, strdup(argv[i]));
	if (t->batch)
		read_batch(t);	/* a failure is named and makes the exit 1 */
	if (t->children && !t->npids)
		return cli_usage_error("--children needs --pid"), -1;
	for (size_t i = 0; i < t->npids; i++)
		add_pid(t, t->pids[i], t->children, 0);
	if (t->cgroup) {
		char dir[700];
		int rc = pc_cgroup_dir(t->cgroup, dir, sizeof(dir));

		if (rc == 0)
			rc = add_cgroup(t, dir);
		if (rc < 0)
			cli_fail_msg(t->cgroup, "cannot read memory cgroup",
				     rc == -ENOENT ? "no such memory cgroup (v1 or v2)" : strerror(-rc));
	}
	if (!t->npaths && !t->batch && !t->npids && !t->cgroup) {
		cli_usage_error("no PATH given");
		return -1;
	}
	t->walk.include = t->include;
	t->walk.exclude = t->exclude;
	return 0;
}

static void on_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct targets *t = arg;

	switch (ev) {
	case PC_WALK_ERROR:
		if (err == EINVAL)
			cli_fail_msg(path, "skipping", "not a regular file or directory");
		else if (err == ELOOP)
			cli_fail_msg(path, "cannot follow", "symbolic link loop");
		else
			cli_fail(path, err, "cannot open");
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
		cli_warn("skipping '%s': directory already visited (named twice, a symlink loop or a bind mount)", path);
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
		break;
	default:
		break;
	}
}

int targets_walk(struct targets *t, int (*file)(struct pc_walk_entry *, void *), void *arg)
{
	t->walk.file = file;
	t->walk.arg = arg;
	t->walk.event = on_event;
	t->walk.event_arg = t;
	return pc_walk(t->paths, t->npaths, &t->walk);
}

void targets_release(struct targets *t)
{
	for (size_t i = 0; i < t->npaths; i++)
		free((char *)t->paths[i]);
	free(t->paths);
	free(t->include);
	free(t->exclude);
	free(t->pids);
}

void cli_begin(int argc, char **argv)
{
	optind = 1;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (is_json_flag(argv[i]))
			out_init(OUT_JSON, false, false);
}

int cli_common_opt(struct cli_opts *co, struct targets *t, int opt, const char *arg,
		   char **argv)
{
	int rc;

	switch (opt) {
	case 'J':
		co->fmt = OUT_JSON;
		return 1;
	case 'P':
		co->fmt = OUT_PROM;
		return 1;
	case 'K':
		co->fmt = OUT_KV;
		return 1;
	case 'B':
		co->bytes = true;
		return 1;
	}
	rc = targets_opt(t, opt, arg);
	if (rc == 0)
		cli_usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
	return rc > 0 ? 1 : -1;
}

int cli_start(const struct cli_opts *co, struct targets *t, int argc, char **argv)
{
	out_init(co->fmt, co->bytes, co->noheadings);
	out_list_declare("files");
	out_list_declare("errors");
	return targets_finish(t, argc - optind, argv + optind);
}

void cli_sum_totals(void *sum, const void *per_thread, unsigned n, size_t size)
{
	uint64_t *dst = sum;
	const uint64_t *src = per_thread;

	for (unsigned t = 0; t < n; t++)
		for (size_t i = 0; i < size / sizeof(uint64_t); i++)
			dst[i] += src[t * (size / sizeof(uint64_t)) + i];
}

char *cli_abspath(const char *path)
{
	char cwd[4096], *buf, *out;
	size_t o = 0;

	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return NULL;
	if (asprintf(&buf, "%s/%s", path[0] == '/' ? "" : cwd, path) < 0)
		return NULL;
	out = malloc(strlen(buf) + 2);
	if (!out) {
		free(buf);
		return NULL;
	}
	/* lexical: drop "." and empty parts, let ".." take one back */
	for (char *save = NULL, *part = strtok_r(buf, "/", &save); part;
	     part = strtok_r(NULL, "/", &save)) {
		if (!strcmp(part, "."))
			continue;
		if (!strcmp(part, "..")) {
			while (o > 0 && out[--o] != '/')
				;
			continue;
		}
		out[o++] = '/';
		memcpy(out + o, part, strlen(part));
		o += strlen(part);
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	free(buf);
	return out;
}

struct runs_acc {
	uint64_t *v;
	size_t n, cap;
};

static int runs_collect(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct runs_acc *a = arg;

	if (!resident)
		return 0;
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 16;
		uint64_t *nv = realloc(a->v, nc * 2 * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		a->v = nv;
		a->cap = nc;
	}
	a->v[2 * a->n] = first;
	a->v[2 * a->n + 1] = n;
	a->n++;
	return 0;
}

int cli_resident_runs(int fd, uint64_t size, uint64_t off, uint64_t len, uint64_t **ret,
		      size_t *ret_n)
{
	struct runs_acc a = { 0 };
	int rc = pc_fd_scan(fd, size, off, len, runs_collect, &a);

	if (rc < 0) {
		free(a.v);
		return rc;
	}
	*ret = a.v;
	*ret_n = a.n;
	return 0;
}

struct cli_progress {
	const struct pc_progress *p;
	const char *label;
	pthread_t tid;
	volatile int done;
};

static void *progress_main(void *arg)
{
	struct cli_progress *pr = arg;
	double t0 = pc_now();

	while (!pr->done) {
		char a[32], b[32];
		double el = pc_now() - t0;
		uint64_t rd = __atomic_load_n(&pr->p->bytes, __ATOMIC_RELAXED);

		usleep(200000);
		if (pr->done)
			break;
		fprintf(stderr, "\r\033[K%s: %llu files done, %s asked for, %s/s", pr->label,
			(unsigned long long)__atomic_load_n(&pr->p->files, __ATOMIC_RELAXED),
			pc_human_size(rd, a, sizeof(a)),
			pc_human_size(el > 0 ? (uint64_t)((double)rd / el) : 0, b, sizeof(b)));
	}
	fprintf(stderr, "\r\033[K");
	return NULL;
}

struct cli_progress *cli_progress_start(const struct pc_progress *p, const char *label)
{
	struct cli_progress *pr;

	if (!cli_stderr_tty())
		return NULL;	/* progress only on a terminal */
	pr = calloc(1, sizeof(*pr));
	if (!pr)
		return NULL;
	pr->p = p;
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

int cli_budget_opt(struct cli_budget *b, int opt, const char *arg)
{
	switch (opt) {
	case 'M':
		if (pc_parse_size(arg, &b->max_mem) < 0 || !b->max_mem) {
			cli_usage_error("invalid size '%s' (e.g. 512M, 1.5G)", arg);
			return -1;
		}
		return 1;
	case 'S':
		if (pc_parse_size(arg, &b->reserve) < 0) {
			cli_usage_error("invalid size '%s' (e.g. 512M, 1.5G)", arg);
			return -1;
		}
		return 1;
	case 'T': {
		char *end;
		double v = strtod(arg, &end);

		/* a plain number is MiB/s; with a suffix, bytes per second */
		if (end != arg && !*end && v > 0)
			b->rate = (uint64_t)(v * 1048576.0);
		else if (pc_parse_size(arg, &b->rate) < 0 || !b->rate) {
			cli_usage_error("invalid rate '%s' (e.g. 200 for MiB/s, 50M)", arg);
			return -1;
		}
		return 1;
	}
	}
	return 0;
}

int cli_format_opt(struct cli_opts *co, int opt, char **argv)
{
	struct targets none;

	if (!strchr("JPKB", opt) || !opt) {
		cli_usage_error("unknown option or missing value: '%s'", argv[optind - 1]);
		return -1;
	}
	targets_init(&none);
	return cli_common_opt(co, &none, opt, NULL, argv);
}

int cli_grow(void *arrp, size_t *cap, size_t n, size_t elem)
{
	void **arr = arrp;

	if (n < *cap)
		return 0;
	{
		size_t nc = *cap ? *cap * 2 : 64;
		void *na = realloc(*arr, nc * elem);

		if (!na)
			return -ENOMEM;
		*arr = na;
		*cap = nc;
	}
	return 0;
}
