/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-hook.c: `pagecache hook`, an OCI runtime hook (oci-hooks(5): podman
 * and CRI-O read its definition from hooks.d) that makes a container start
 * warm: at createRuntime it restores the container's snapshot into the
 * container's root and memory cgroup, within a time limit; at poststop it
 * takes the snapshot back for the next start.
 *
 * The runtime gives the container's state (JSON: id, pid, bundle, status,
 * annotations) on stdin. At createRuntime the container's cgroup and mounts
 * exist but its process has not pivoted into its root, so the root is the
 * bundle's config.json root.path (in the runtime's mount namespace: this
 * one), not /proc/PID/root; its memory cgroup is /proc/PID/cgroup's. At
 * poststop there is no process and no cgroup, and root.path is still
 * mounted (podman 4.3, checked): the snapshot walks it, paths recorded
 * relative to it, so as the container names its files.
 *
 * Annotations are chosen by whoever starts the container (in Kubernetes,
 * any pod author), and the hook runs as root: a snapshot is named, never
 * given as a path: a NAME of letters, digits, '.', '_' and '-' beneath
 * --dir (root's, 0700), or an OCI reference that `pull` fetches and checks
 * into that directory. Nothing else is read or written on the host.
 *
 * The work is done by pagecache itself in a child (restore, pull,
 * snapshot: one copy of each), with JSON on a pipe for the log line and
 * its messages into the log, killed at the deadline: a start is never
 * held up past --max-time (and a second). Whatever fails, the container
 * starts (exit 0) and the log says why, unless io.pagecache.required is
 * "true" and its snapshot could not be restored.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "json.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ANN_SNAPSHOT "io.pagecache.snapshot"
#define ANN_SAVE "io.pagecache.save"
#define ANN_MAX_TIME "io.pagecache.max-time"
#define ANN_REQUIRED "io.pagecache.required"
#define DEFAULT_DIR "/var/lib/pagecache/containers"
#define STATE_MAX (1u << 20)		/* the state on stdin */
#define CONFIG_MAX (16u << 20)		/* config.json */
#define NAME_MAX_LEN 128
#define MAX_TIME_CAP 60.0		/* what an annotation may ask for, at most */
#define SNAPSHOT_TIME 60.0		/* poststop's walk, at most */
#define OUT_MAX (1u << 20)		/* a child's JSON */
#define PULL_MAX_SIZE "64M"		/* a pulled snapshot, at most (a pod author names it) */

enum { OPT_DIR = CLI_OPT_OWN, OPT_LOG, OPT_MAX_TIME, OPT_GUARD };

struct hook_cli {
	struct cli_opts co;
	const char *dir, *log;
	double max_time, guard;
	bool quiet;
};

static const struct cli_opt hook_opts[] = {
	{ .name = "dir", .id = OPT_DIR, .arg = "DIR", .comp = CC_DIR,
	  CLI_STRING(struct hook_cli, dir),
	  .help = "where named snapshots are kept (root's, 0700)" },
	{ .name = "log", .id = OPT_LOG, .arg = "FILE", .comp = CC_FILE,
	  CLI_STRING(struct hook_cli, log),
	  .help = "append a line per run, and messages, to FILE" },
	{ .name = "max-time", .id = OPT_MAX_TIME, .arg = "S",
	  CLI_SECONDS(struct hook_cli, max_time), .lo = 0, .hi = MAX_TIME_CAP,
	  .range = CLI_ABOVE_LO,
	  .bad = "--max-time '%s': seconds, above 0 and at most 60",
	  .help = "hold a start up at most S seconds (default 3)" },
	{ .name = "guard", .id = OPT_GUARD, .arg = "RATIO",
	  CLI_SECONDS(struct hook_cli, guard), .lo = 0, .hi = 1,
	  .bad = "--guard '%s': a ratio from 0 to 1",
	  .help = "keep the old snapshot over a smaller new one (0.5)" },
	{ .name = "quiet", .letter = 'q', .id = 'q', CLI_SET(struct hook_cli, quiet),
	  .help = "nothing on stderr (the log still has it)" },
	{ 0 }
};

static const struct cli_opt hook_fmt_opts[] = {
	{ .name = "json", .letter = 'J', .id = OPT_JSON, .arg = "STYLE", .comp = CC_WORDS,
	  .words = "pretty short", .bind = CB_FORMAT,
	  .help = "the run's record as JSON on stdout", .flags = CLI_OPTARG },
	{ 0 }
};

const struct cli_spec hook_spec = {
	.name = "hook",
	.usage =
	"Usage: pagecache hook [OPTIONS] [STAGE] <STATE\n"
	"\n"
	"An OCI runtime hook (oci-hooks(5): podman, CRI-O) that makes a container\n"
	"start warm. The runtime gives the container's state on stdin. STAGE is\n"
	"createRuntime (restore) or poststop (snapshot); without it the state's\n"
	"status says which. Installed as hooks.d/pagecache.json, it runs for the\n"
	"containers annotated " ANN_SNAPSHOT " only.\n"
	"\n"
	"At createRuntime the snapshot is restored beneath the container's root\n"
	"(config.json's root.path), charged to its memory cgroup and within its\n"
	"limit, for at most --max-time; at poststop the container's root is\n"
	"snapshotted back, with paths as the container names them, kept over by\n"
	"the old one if the new holds less than --guard of it.\n"
	"\n"
	"Annotations (set by whoever starts the container):\n"
	"  " ANN_SNAPSHOT "=NAME|REF  the snapshot: NAME, a file in --dir\n"
	"      (letters, digits, . _ -), or an OCI reference, pulled and checked\n"
	"      as `pagecache pull` does, within the time limit\n"
	"  " ANN_SAVE "=NAME          where poststop writes (default: NAME)\n"
	"  " ANN_MAX_TIME "=S         a shorter time limit than --max-time\n"
	"  " ANN_REQUIRED "=true      fail the start if the snapshot is\n"
	"      there but cannot be restored (default: the container starts anyway)\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  podman run --annotation " ANN_SNAPSHOT "=db ... (hooks.d does the rest)\n"
	"  pagecache hook --dir /var/tmp/snaps --log hook.log createRuntime <state.json\n"
	"Exit status: 0 (the container starts), whatever failed (the log says it);\n"
	"1 the snapshot could not be restored and " ANN_REQUIRED " is true;\n"
	"2 usage (the hook's own options).\n",
	.groups = { &(struct cli_group){ "Options", hook_opts },
		    &(struct cli_group){ "Output", hook_fmt_opts } },
	.operands = CC_WORDS,
	.operand_words = "createRuntime poststop",
};

/* ---- the log: one line a run, on stderr and in --log ---- */

static int log_fd = -1;
static bool log_quiet;
static const char *log_stage;		/* named in each line, once known */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char line[4096], ts[40];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;
	int n;

	gmtime_r(&now, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s pagecache hook: %s%s", ts,
		     log_stage ? log_stage : "", log_stage ? " " : "");
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* one line a run, whatever an annotation holds: no control byte gets through */
	for (char *p = line; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	n = (int)strlen(line);
	if (n == (int)sizeof(line) - 1)
		n--;			/* a line cut short still ends */
	line[n++] = '\n';
	if (log_fd >= 0 && write(log_fd, line, (size_t)n) < 0) {
		/* a full disk loses a log line, never the container's start */
	}
	if (!log_quiet && write(STDERR_FILENO, line + strlen(ts) + 1,
				(size_t)n - strlen(ts) - 1) < 0) {
	}
}

/* --log FILE: appended to, created 0600, never through a link, a regular file only */
static int open_log(const char *path)
{
	struct stat st;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY |
				    O_NONBLOCK, 0600);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* ---- the state and the bundle ---- */

struct ctr {
	char id[80];			/* the first 12 characters are shown */
	const char *idshow;
	pid_t pid;			/* 0 where there is none (poststop) */
	const char *status;
	char *root;			/* absolute */
	const struct pc_json *ann;	/* annotations: the state's, else config.json's */
	struct pc_json *state, *config;
};

static const char *ann_get(const struct ctr *c, const char *key)
{
	return pc_json_string(pc_json_get(c->ann, key), NULL);
}

/* The state on stdin, and the bundle's config.json; false: said why. */
static bool read_container(struct ctr *c)
{
	struct pc_json_error je = { 0 };
	const char *id, *bundle, *rootp;
	char path[PATH_MAX];
	double pid;
	int rc;

	rc = pc_json_parse_fd(STDIN_FILENO, &(struct pc_json_opts){ .max_bytes = STATE_MAX },
			      &c->state, &je);
	if (rc == -EINVAL) {
		say("the container's state on stdin is not JSON: %s", je.msg);
		return false;
	}
	if (rc < 0) {
		say("cannot read the container's state on stdin: %s", strerror(-rc));
		return false;
	}
	id = pc_json_string(pc_json_get(c->state, "id"), NULL);
	bundle = pc_json_string(pc_json_get(c->state, "bundle"), NULL);
	c->status = pc_json_string(pc_json_get(c->state, "status"), NULL);
	pid = pc_json_number(pc_json_get(c->state, "pid"), 0);
	if (!id || !*id || strlen(id) >= sizeof(c->id) || !bundle || bundle[0] != '/') {
		say("the state on stdin is not an OCI container's (no id, or no absolute bundle)");
		return false;
	}
	snprintf(c->id, sizeof(c->id), "%s", id);
	for (char *p = c->id; *p; p++)	/* the log's, and a file name's: plain, no '/' */
		if (!isalnum((unsigned char)*p) && !strchr("_.-", *p))
			*p = '_';
	c->idshow = c->id;
	if (strlen(c->id) > 12)
		c->id[12] = 0;
	c->pid = pid >= 1 && pid <= INT32_MAX ? (pid_t)pid : 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/config.json", bundle) >= sizeof(path)) {
		say("%s: the bundle's path is too long", c->idshow);
		return false;
	}
	rc = pc_json_parse_file(path, &(struct pc_json_opts){ .max_bytes = CONFIG_MAX },
				&c->config, &je);
	if (rc < 0) {
		say("%s: cannot read '%s': %s", c->idshow, path,
		    rc == -EINVAL ? je.msg : strerror(-rc));
		return false;
	}
	rootp = pc_json_string(pc_json_get(pc_json_get(c->config, "root"), "path"), NULL);
	if (!rootp || !*rootp) {
		say("%s: '%s' names no root.path", c->idshow, path);
		return false;
	}
	if (rootp[0] == '/')
		c->root = strdup(rootp);
	else if (asprintf(&c->root, "%s/%s", bundle, rootp) < 0)
		c->root = NULL;
	c->ann = pc_json_get(c->state, "annotations");
	if (pc_json_type(c->ann) != PC_JSON_OBJECT)
		c->ann = pc_json_get(c->config, "annotations");
	return c->root != NULL;
}

/* ---- names, and the directory they are kept in ---- */

/* A snapshot's NAME: letters, digits, '.', '_', '-'; not beginning with '.' or '-'. */
static bool good_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > NAME_MAX_LEN || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

/* An OCI reference: what pull takes (it checks the rest); not a path on this host. */
static bool is_reference(const char *s)
{
	return s[0] != '/' && s[0] != '.' && strchr(s, '/') && !strstr(s, "..") &&
	       strlen(s) < 1024 && !strpbrk(s, " \t\n\r\\");
}

/*
 * --dir: made (0700) if missing; it must be a directory of ours, that no
 * one else may write to, reached without a link. false: said why.
 */
static bool check_dir(const char *dir, const char *idshow)
{
	struct stat st;
	int fd;

	if (mkdir(dir, 0700) < 0 && errno == ENOENT) {
		/* a fresh host: /var/lib/pagecache too (the daemon's, 0755) */
		char parent[PATH_MAX];
		char *slash;

		snprintf(parent, sizeof(parent), "%s", dir);
		slash = strrchr(parent, '/');
		if (slash && slash != parent) {
			*slash = 0;
			if (mkdir(parent, 0755) == 0 || errno == EEXIST)
				mkdir(dir, 0700);
		}
	}
	if (access(dir, F_OK) < 0) {
		say("%s: cannot make '%s': %s", idshow, dir, strerror(errno));
		return false;
	}
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		say("%s: cannot open '%s': %s", idshow, dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		say("%s: '%s' is not ours alone (owner %u, mode %o): not used", idshow, dir,
		    (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return false;
	}
	return true;
}

/* DIR/NAME: 1 a regular file, 0 none, -1 something else there (said). */
static int snapshot_there(const char *path, const char *idshow)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : (say("%s: '%s': %s", idshow, path, strerror(errno)), -1);
	if (!S_ISREG(st.st_mode)) {
		say("%s: '%s' is not a regular file (a link?): not used", idshow, path);
		return -1;
	}
	return 1;
}

/* ---- a child: pagecache itself, its JSON on a pipe, killed at the deadline ---- */

struct child {
	int status;			/* the exit status; -1: killed at the deadline */
	struct pc_json *total;		/* its JSON's "total" record's root; may be NULL */
};

static double now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run_child(char *const *argv, double deadline, struct child *ret)
{
	int out[2];
	pid_t pid;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int st = 0;
	bool killed = false;

	ret->status = 1;
	ret->total = NULL;
	if (pipe2(out, O_CLOEXEC) < 0) {
		say("cannot make a pipe: %s", strerror(errno));
		return;
	}
	pid = fork();
	if (pid < 0) {
		say("cannot fork: %s", strerror(errno));
		close(out[0]);
		close(out[1]);
		return;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* the runtime's timeout kills us: it too */
		setpgid(0, 0);
		dup2(out[1], STDOUT_FILENO);
		if (log_fd >= 0)
			dup2(log_fd, STDERR_FILENO);
		else if (log_quiet)
			dup2(open("/dev/null", O_WRONLY | O_CLOEXEC), STDERR_FILENO);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	close(out[1]);
	for (;;) {
		struct pollfd p = { out[0], POLLIN, 0 };
		double left = deadline - now_mono();
		ssize_t n;

		if (left <= 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			killed = true;
			break;
		}
		if (poll(&p, 1, (int)(left * 1000) + 1) < 0 && errno != EINTR)
			break;
		if (!p.revents)
			continue;
		if (len == cap) {
			char *nb = cap < OUT_MAX ? realloc(buf, cap ? cap * 2 : 8192) : NULL;

			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 8192;
		}
		n = read(out[0], buf + len, cap - len);
		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		if (n > 0)
			len += (size_t)n;
	}
	close(out[0]);
	if (killed) {
		/*
		 * A child stuck in the kernel (a hung FUSE or NFS mount under the
		 * root) dies only when its request ends: wait a second at most,
		 * then leave it to init; the start goes on.
		 */
		for (int i = 0; i < 100 && waitpid(pid, &st, WNOHANG) == 0; i++)
			usleep(10000);
	} else {
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (killed) {
		ret->status = -1;
	} else {
		ret->status = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
		/* --json=short: one record a line; the total is the one of that name */
		for (char *line = buf, *end; line && line < buf + len; line = end ? end + 1 : NULL) {
			struct pc_json *j = NULL;

			end = memchr(line, '\n', (size_t)(buf + len - line));
			if (pc_json_parse(line, end ? (size_t)(end - line) : (size_t)(buf + len - line),
					  NULL, &j, NULL) == 0 &&
			    pc_json_get(j, "total")) {
				pc_json_free(ret->total);
				ret->total = j;
			} else {
				pc_json_free(j);
			}
		}
	}
	free(buf);
}

/*
 * After a child killed at the deadline: the temporary file its atomic
 * write left beside path (lib/sys.c's DIR/.NAME.tmp.XXXXXX), in our own
 * directory, removed.
 */
static void remove_tmp(const char *dir, const char *path)
{
	const char *base = strrchr(path, '/');
	char prefix[NAME_MAX_LEN + 32];
	struct dirent *e;
	DIR *d;

	base = base ? base + 1 : path;
	snprintf(prefix, sizeof(prefix), ".%s.tmp.", base);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, strlen(prefix)))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

static uint64_t total_u64(const struct child *ch, const char *key)
{
	double v = pc_json_number(pc_json_get(pc_json_get(ch->total, "total"), key), 0);

	return v > 0 ? (uint64_t)v : 0;
}

/* ---- the stages ---- */

struct run {
	struct hook_cli *h;
	struct ctr *c;
	const char *name;		/* the annotation's value */
	const char *result;		/* for the record: restored, none, failed, written, kept, ... */
	uint64_t files, pages, read;
	double t0;
	bool required, failed;
};

static void exe_args(char **a, size_t *n, const char *x)
{
	a[(*n)++] = (char *)x;
}

static void restore_stage(struct run *r)
{
	char path[PATH_MAX], cg[PATH_MAX], tmo[32], mt[32], *argv[24];
	const char *v = ann_get(r->c, ANN_MAX_TIME), *why = NULL;
	double max_time = r->h->max_time, deadline;
	bool ref = false, pulled = false;
	struct child ch = { 0 };
	size_t n = 0;
	int there;

	/* the annotation may lower the admin's --max-time, never raise it */
	if (v && (cli_parse_decimal(v, 0, r->h->max_time, CLI_ABOVE_LO, &max_time) < 0)) {
		say("%s: %s='%.40s' is not seconds above 0 and at most --max-time %g: %g s",
		    r->c->idshow, ANN_MAX_TIME, v, r->h->max_time, r->h->max_time);
		max_time = r->h->max_time;
	}
	deadline = r->t0 + max_time;
	if (good_name(r->name)) {
		snprintf(path, sizeof(path), "%s/%s", r->h->dir, r->name);
	} else if (is_reference(r->name)) {
		ref = true;
		snprintf(path, sizeof(path), "%s/.pull-%s", r->h->dir, r->c->id);
	} else {
		say("%s: %s='%.200s' is neither a NAME (letters, digits, . _ -) nor an OCI "
		    "reference: not used", r->c->idshow, ANN_SNAPSHOT, r->name);
		r->result = "refused";
		r->failed = true;
		return;
	}
	if (!check_dir(r->h->dir, r->c->idshow)) {
		r->result = "failed";
		r->failed = true;
		return;
	}
	if (ref) {
		char *pa[12];
		size_t k = 0;

		unlink(path);	/* one left by a killed hook: ours, in our directory */
		snprintf(tmo, sizeof(tmo), "%.3f", max_time);
		exe_args(pa, &k, "pagecache");
		exe_args(pa, &k, "pull");
		exe_args(pa, &k, "--json=short");
		exe_args(pa, &k, "--timeout");
		exe_args(pa, &k, tmo);
		exe_args(pa, &k, "-o");
		exe_args(pa, &k, path);
		exe_args(pa, &k, "--max-size");
		exe_args(pa, &k, PULL_MAX_SIZE);
		exe_args(pa, &k, "--");
		exe_args(pa, &k, r->name);
		pa[k] = NULL;
		run_child(pa, deadline + 1, &ch);
		pc_json_free(ch.total);
		if (ch.status != 0) {
			say("%s: cannot pull '%s'%s", r->c->idshow, r->name,
			    ch.status < 0 ? ": stopped at the time limit" : " (the log has why)");
			unlink(path);
			remove_tmp(r->h->dir, path);
			r->result = "failed";
			r->failed = true;
			return;
		}
		pulled = true;
	}
	there = snapshot_there(path, r->c->idshow);
	if (there <= 0) {
		if (there == 0)
			say("%s: no snapshot '%s' yet: the container starts cold (poststop "
			    "takes one)", r->c->idshow, r->name);
		r->result = there == 0 ? "none" : "failed";
		r->failed = there < 0;
		return;
	}
	/* the pages go to the container's cgroup, whose limit bounds them */
	if (!r->c->pid || pc_cgroup_of(r->c->pid, cg, sizeof(cg)) < 0) {
		why = r->c->pid ? "its process is gone" : "the state has no pid";
		cg[0] = 0;
	}
	snprintf(mt, sizeof(mt), "%.3f", deadline - now_mono() > 0.001 ? deadline - now_mono() :
					   0.001);
	exe_args(argv, &n, "pagecache");
	exe_args(argv, &n, "restore");
	exe_args(argv, &n, "--json=short");
	exe_args(argv, &n, "-q");
	exe_args(argv, &n, "--root");
	exe_args(argv, &n, r->c->root);
	if (cg[0]) {
		exe_args(argv, &n, "--cgroup");
		exe_args(argv, &n, cg);
	}
	exe_args(argv, &n, "--max-time");
	exe_args(argv, &n, mt);
	exe_args(argv, &n, path);
	argv[n] = NULL;
	run_child(argv, deadline + 1, &ch);
	if (pulled)
		unlink(path);
	r->files = total_u64(&ch, "files");
	r->pages = total_u64(&ch, "resident");
	r->read = total_u64(&ch, "read");
	if (ch.status < 0) {
		say("%s: restore of '%s' stopped at the time limit (%g s)", r->c->idshow, r->name,
		    max_time);
		r->result = "stopped";
	} else if (!ch.total ||
		   !pc_json_get(pc_json_at(pc_json_get(pc_json_get(ch.total, "total"), "snapshots"), 0),
				"root")) {
		/* the snapshot was not read (corrupt, unreadable): only then is it a failure */
		say("%s: restore of '%s' failed (exit %d; the log has why)", r->c->idshow, r->name,
		    ch.status);
		r->result = "failed";
		r->failed = true;
	} else {
		bool timed = pc_json_bool(pc_json_get(pc_json_get(ch.total, "total"), "time_stopped"),
					  false);

		say("%s: restored '%s' beneath %s: %llu files, %llu pages resident, %llu read, "
		    "%.0f ms%s%s%s%s", r->c->idshow, r->name, r->c->root,
		    (unsigned long long)r->files, (unsigned long long)r->pages,
		    (unsigned long long)r->read, (now_mono() - r->t0) * 1000,
		    timed ? "; stopped at the time limit" : "",
		    ch.status ? " (some files skipped or failed: the log has them)" : "",
		    why ? "; not charged to its cgroup: " : "", why ? why : "");
		r->result = timed ? "stopped" : ch.status ? "partly" : "restored";
	}
	pc_json_free(ch.total);
}

/* A directory with no entry: a root whose mount is gone. */
static bool root_empty(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	bool empty = true;

	if (!d)
		return false;
	while (empty && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			empty = false;
	closedir(d);
	return empty;
}

static void snapshot_stage(struct run *r)
{
	const char *save = ann_get(r->c, ANN_SAVE);
	char path[PATH_MAX], guard[32], *argv[20];
	struct child ch = { 0 };
	struct stat st;
	size_t n = 0;

	if (!save && !good_name(r->name) && is_reference(r->name)) {
		say("%s: %s is a reference and no %s names where to write: no snapshot taken",
		    r->c->idshow, ANN_SNAPSHOT, ANN_SAVE);
		r->result = "none";
		return;
	}
	if (!save)
		save = r->name;
	if (!good_name(save)) {
		say("%s: %s='%.200s' is not a NAME (letters, digits, . _ -): no snapshot taken",
		    r->c->idshow, save == r->name ? ANN_SNAPSHOT : ANN_SAVE, save);
		r->result = "refused";
		r->failed = true;
		return;
	}
	if (stat(r->c->root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		say("%s: its root '%s' is gone: no snapshot taken", r->c->idshow, r->c->root);
		r->result = "failed";
		r->failed = true;
		return;
	}
	if (root_empty(r->c->root)) {
		/* CRI-O unmounts the root at stop, and runs poststop only at removal */
		say("%s: its root '%s' is empty (unmounted before poststop?): no snapshot taken; "
		    "take one while it runs (snapshot --container)", r->c->idshow, r->c->root);
		r->result = "none";
		return;
	}
	if (!check_dir(r->h->dir, r->c->idshow)) {
		r->result = "failed";
		r->failed = true;
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", r->h->dir, save);
	if (snapshot_there(path, r->c->idshow) < 0) {
		r->result = "refused";
		r->failed = true;
		return;
	}
	snprintf(guard, sizeof(guard), "%g", r->h->guard);
	exe_args(argv, &n, "pagecache");
	exe_args(argv, &n, "snapshot");
	exe_args(argv, &n, "--json=short");
	exe_args(argv, &n, "--root");
	exe_args(argv, &n, r->c->root);
	exe_args(argv, &n, "--guard");
	exe_args(argv, &n, guard);
	exe_args(argv, &n, "-o");
	exe_args(argv, &n, path);
	exe_args(argv, &n, r->c->root);
	argv[n] = NULL;
	run_child(argv, r->t0 + SNAPSHOT_TIME, &ch);
	r->files = total_u64(&ch, "files");
	r->pages = total_u64(&ch, "pages");
	if (ch.status < 0)
		remove_tmp(r->h->dir, path);
	if (ch.status < 0 || !ch.total) {
		say("%s: snapshot '%s' %s", r->c->idshow, save,
		    ch.status < 0 ? "stopped at the time limit: the old one stays" :
				    "failed (the log has why): the old one stays");
		r->result = "failed";
		r->failed = true;
	} else if (pc_json_bool(pc_json_get(pc_json_get(ch.total, "total"), "kept"), false)) {
		say("%s: kept snapshot '%s': the new one holds %llu pages, under --guard %g of it",
		    r->c->idshow, save, (unsigned long long)r->pages, r->h->guard);
		r->result = "kept";
	} else {
		say("%s: wrote snapshot '%s' of %s: %llu files, %llu pages, %.0f ms", r->c->idshow,
		    save, r->c->root, (unsigned long long)r->files, (unsigned long long)r->pages,
		    (now_mono() - r->t0) * 1000);
		r->result = "written";
	}
	pc_json_free(ch.total);
}

static void record(const struct run *r, const char *stage)
{
	struct orec rec = { 0 };

	orec_str(&rec, "id", r->c->idshow, 0);
	orec_str(&rec, "stage", stage, 0);
	if (r->name)
		orec_str(&rec, "snapshot", r->name, 0);
	else
		orec_null(&rec, "snapshot");
	orec_str(&rec, "result", r->result, 0);
	orec_u64(&rec, "files", r->files, 0);
	orec_u64(&rec, "pages", r->pages, OF_PAGES);
	orec_u64(&rec, "read", r->read, OF_PAGES);
	orec_bool(&rec, "required", r->required);
	orec_f64(&rec, "elapsed", now_mono() - r->t0);
	out_object("total", &rec);
}

int cmd_hook(int argc, char **argv)
{
	struct hook_cli h = { .dir = DEFAULT_DIR, .max_time = 3, .guard = 0.5,
			      .co = { OUT_HUMAN } };
	struct ctr c = { .idshow = "?" };
	struct run r = { .h = &h, .c = &c, .result = "none", .t0 = now_mono() };
	const char *stage = NULL, *req;
	struct cli_parser p;
	int opt, rc = 0;

	cli_parser_bind_to(&p, &hook_spec, &(struct cli_bound){ .base = &h, .co = &h.co }, argc,
			   argv);
	opt = cli_getopt_all(&p, argc, argv);
	if (opt == CLI_STOP)
		return p.exit;
	if (argc - optind > 1)
		return cli_usage_error("one STAGE at most (createRuntime or poststop)");
	if (optind < argc) {
		stage = argv[optind];
		if (strcmp(stage, "createRuntime") && strcmp(stage, "createContainer") &&
		    strcmp(stage, "prestart") && strcmp(stage, "poststop"))
			return cli_usage_error("unknown STAGE '%s' (createRuntime or poststop)",
					       stage);
	}
	if (isatty(STDIN_FILENO))
		return cli_usage_error("the container's state comes on stdin, from the runtime "
				       "(see pagecache hook --help)");
	if (h.dir[0] != '/')
		return cli_usage_error("--dir '%s': an absolute path", h.dir);
	log_quiet = h.quiet;
	if (h.log) {
		log_fd = open_log(h.log);
		if (log_fd < 0)
			/* the admin's hooks.d file is wrong: said, and the container starts */
			fprintf(stderr, "pagecache hook: cannot open --log '%s': %s\n", h.log,
				strerror(-log_fd));
	}
	out_init(h.co.fmt, false, false);
	if (!read_container(&c)) {
		r.result = "failed";
		goto out;
	}
	if (!stage)
		stage = c.status && !strcmp(c.status, "stopped") ? "poststop" :
			c.status && (!strcmp(c.status, "creating") || !strcmp(c.status, "created")) ?
			"createRuntime" : NULL;
	if (!stage) {
		say("%s: status '%s' is no stage of ours (creating or stopped): nothing done",
		    c.idshow, c.status ? c.status : "(none)");
		goto out;
	}
	log_stage = stage;
	r.name = ann_get(&c, ANN_SNAPSHOT);
	if (!r.name || !*r.name) {
		say("%s: no %s annotation: nothing done", c.idshow, ANN_SNAPSHOT);
		r.name = NULL;
		goto out;
	}
	req = ann_get(&c, ANN_REQUIRED);
	r.required = req && !strcmp(req, "true");
	if (req && !r.required && strcmp(req, "false"))
		say("%s: %s='%.40s' is neither true nor false: taken as false", c.idshow,
		    ANN_REQUIRED, req);
	if (!strcmp(stage, "poststop"))
		snapshot_stage(&r);
	else
		restore_stage(&r);
	if (r.failed && r.required && strcmp(stage, "poststop")) {
		say("%s: %s is true: the start fails", c.idshow, ANN_REQUIRED);
		rc = EXIT_PARTIAL;
	}
out:
	if (h.co.fmt != OUT_HUMAN)
		record(&r, stage ? stage : "none");
	out_flush();
	free(c.root);
	pc_json_free(c.state);
	pc_json_free(c.config);
	if (log_fd >= 0)
		close(log_fd);
	return rc;
}
