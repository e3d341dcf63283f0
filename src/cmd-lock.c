/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-lock.c: `pagecache lock`: keep files in the page cache with mlock
 * until SIGTERM, SIGINT or SIGHUP. A lock lasts only while its mapping
 * does, so this process stays; --daemon detaches it after the files are
 * locked (the parent exits with the locking's status, so `pagecache lock
 * --daemon ... && start-service` is safe). Never more than the memory
 * budget: mlocked pages cannot be reclaimed, so overshooting would push
 * the host toward OOM.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct lock_ctx {
	struct targets t;
	struct pc_budget budget;
	pthread_mutex_t lock;
	struct pc_lock *locks;
	size_t n, cap;
	uint64_t bytes;
	bool list, stopped;
};

static const struct ocol lock_cols[] = {
	{ "locked", "LOCKED", false }, { "path", "FILE", true },
};

static const struct cli_opt lock_opts[] = {
	CLI_OPT_COLUMNS,
	{ "daemon", 'd', 0, 'd', NULL, CC_NONE, NULL,
	  "detach once everything is locked; the parent exits\n0 when every file is locked and the daemon holds\n"
	  "them; on any failure the daemon releases all and\nexits, and the parent exits 1", 0 },
	/* id past the letters: 'P' is --prom's (OPT_PROM) */
	{ "pidfile", 'P', 0, 'P' + 512, "FILE", CC_FILE, NULL,
	  "write the locking process's PID to FILE (removed\nat exit if it still holds that PID)", 0 },
	{ "wait", 'w', 0, 'w', NULL, CC_NONE, NULL,
	  "vmtouch's -w: with -d, wait until every page is\nlocked (what -d always does)", 0 },
	{ "verbose", 'v', 0, 'v', NULL, CC_NONE, NULL, "list each file", 0 },
	{ 0 }
};

const struct cli_spec lock_spec = {
	.name = "lock",
	.usage =
	"Usage: pagecache lock [OPTIONS] PATH...\n"
	"\n"
	"Load files into the page cache and keep them there (mlock(2)) until\n"
	"SIGTERM, SIGINT or SIGHUP. Locking needs CAP_IPC_LOCK or a large enough\n"
	"'ulimit -l' (RLIMIT_MEMLOCK; uid 0 without the capability is limited too).\n"
	"It never locks more than MemAvailable minus a reserve\n"
	"(default 5% of RAM, at least 256M), nor past the memory cgroup's headroom.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache lock /srv/index/hot.idx             (Ctrl-C to release)\n"
	"  pagecache lock -d -P /run/hot.pid /srv/index && kill $(cat /run/hot.pid)\n"
	"  pagecache -dl -P /run/hot.pid /srv/index    the same, as vmtouch -dl\n"
	"Exit status: 0 all locked (with -d: the daemon holds them; without: released\n"
	"cleanly at the signal), 1 some files failed or the budget stopped it, 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", lock_opts }, &cli_budget_group,
		    &cli_format_act_group, &cli_targets_group },
	.operands = CC_FILE,
	.cols = lock_cols,
	.ncols = sizeof(lock_cols) / sizeof(lock_cols[0]),
};

/*
 * The kernel lets mlock past RLIMIT_MEMLOCK only with CAP_IPC_LOCK (a
 * limit of 0 without it is EPERM, past a limit ENOMEM), whatever the uid.
 * With the capability the limit is not what failed.
 */
/* Prometheus text: docs/metrics.md */
static const struct ometric metrics[] = {
	{ "total", "files", "files", 0, "Files locked in the cache." },
	{ "total", "locked", "locked_bytes", 0, "Bytes locked in the cache (mlock)." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "budget_stopped", "budget_stopped", 0,
	  "1 if the memory budget stopped the locking early, else 0." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "locked", "file_locked_bytes", OM_PER_FILE, "Bytes of the file locked." },
};

static const char *lock_reason(int err)
{
	static char buf[256];
	struct rlimit rl;

	switch (err) {
	case ENOMEM:
	case EPERM:
	case EAGAIN:
		if (!pc_have_cap(CAP_IPC_LOCK) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			snprintf(buf, sizeof(buf),
				 "locked memory not allowed: RLIMIT_MEMLOCK is %llu KiB "
				 "(needs CAP_IPC_LOCK, or a higher 'ulimit -l'; "
				 "or vm.max_map_count is reached)",
				 (unsigned long long)rl.rlim_cur >> 10);
		else
			snprintf(buf, sizeof(buf), "%s (memory limit or vm.max_map_count)",
				 strerror(err));
		return buf;
	default:
		return strerror(err);
	}
}

static int lock_file(struct pc_walk_entry *e, void *arg)
{
	struct lock_ctx *c = arg;
	uint64_t size = (uint64_t)e->st.st_size, want;
	struct pc_lock l;
	struct orec rec = { 0 };
	int rc;

	want = c->t.off >= size ? 0 : (c->t.len && c->t.len < size - c->t.off ? c->t.len
									     : size - c->t.off);
	if (!pc_budget_take(&c->budget, want)) {
		c->stopped = true;
		return 1;
	}
	rc = pc_fd_lock(e->fd, size, c->t.off, c->t.len, &l);
	if (rc < 0) {
		cli_fail_msg(e->path, "cannot lock", lock_reason(-rc));
		return 0;
	}
	pthread_mutex_lock(&c->lock);
	if (cli_grow(&c->locks, &c->cap, c->n, sizeof(*c->locks)) < 0) {
		pthread_mutex_unlock(&c->lock);
		pc_unlock(&l);
		cli_fail(e->path, ENOMEM, "cannot lock");
		return 0;
	}
	c->locks[c->n++] = l;
	c->bytes += l.len;
	pthread_mutex_unlock(&c->lock);
	if (c->list) {
		orec_str(&rec, "path", e->path, OF_LABEL);
		orec_u64(&rec, "locked", l.len, OF_BYTES);
		out_list_add("files", &rec);
	}
	return 0;
}

/*
 * What we wrote at --pidfile, so that exit removes it only while it is
 * still ours: another process may have written its own there since.
 */
struct pidfile {
	const char *path;
	dev_t dev;
	ino_t ino;
};

/*
 * Written beside FILE under a name of our own making (mkostemp: O_CREAT |
 * O_EXCL, so a link planted there makes it fail, never followed), then
 * renamed into place: rename replaces a symlink at FILE, it never writes
 * through one.
 */
static int write_pidfile(struct pidfile *pf)
{
	char tmp[4096], buf[32];
	struct stat st;
	int fd, n, err;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", pf->path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", getpid());
	errno = 0;	/* a short write sets none */
	if (fchmod(fd, 0644) < 0 || fstat(fd, &st) < 0 || write(fd, buf, (size_t)n) != n ||
	    fsync(fd) < 0) {
		err = errno ? errno : EIO;
		close(fd);
		unlink(tmp);
		return -err;
	}
	if (close(fd) < 0 || rename(tmp, pf->path) < 0) {
		err = errno;
		unlink(tmp);
		return -err;
	}
	pf->dev = st.st_dev;
	pf->ino = st.st_ino;
	return 0;
}

/* Remove the pidfile if the file there is still the one we wrote, with our pid. */
static void remove_pidfile(const struct pidfile *pf)
{
	char buf[32], want[32];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(pf->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == pf->dev &&
	    st.st_ino == pf->ino ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		return;
	buf[n] = 0;
	snprintf(want, sizeof(want), "%d\n", getpid());
	if (!strcmp(buf, want))
		unlink(pf->path);
}

int cmd_lock(int argc, char **argv)
{
	struct cli_parser p;
	struct lock_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct cli_opts co = { OUT_HUMAN };
	struct cli_budget bo = CLI_BUDGET_INIT;
	struct pidfile pf = { NULL };
	bool daemon = false;
	struct orec rec = { 0 };
	int opt, rc, pipefd[2] = { -1, -1 }, sig;
	sigset_t set;
	char a[32];
	unsigned char status;

	targets_init(&c.t);
	cli_parser_init(&p, &lock_spec, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case 'd':
			daemon = true;
			break;
		case 'P' + 512:
			pf.path = p.arg;
			break;
		case 'w':	/* -d waits until all is locked anyway */
			break;
		case 'M': case 'S': case 'T':
			if (cli_budget_opt(&bo, opt, p.arg) < 0)
				return EXIT_USAGE;
			break;
		case 'v':
			c.list = true;
			break;
		default:
			if (cli_common_opt(&co, &c.t, opt, p.arg, argv) < 0)
				return EXIT_USAGE;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (cli_start(&co, &c.t, argc, argv) < 0)
		return EXIT_USAGE;
	out_prom_metrics("lock", metrics, sizeof(metrics) / sizeof(metrics[0]));
	c.list = c.list || co.prom_per_file;
	if (pc_budget_init(&c.budget, bo.max_mem, bo.reserve) < 0) {
		cli_warn("cannot read memory state");
		return EXIT_PARTIAL;
	}

	/*
	 * Signals wait for sigwait below; the walker's threads inherit the
	 * mask. A shell starts background jobs with SIGINT ignored, and an
	 * ignored signal is discarded even while blocked: take it back.
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	if (daemon) {
		pid_t pid;

		if (pipe2(pipefd, O_CLOEXEC) < 0) {
			cli_warn("cannot create a pipe: %s", strerror(errno));
			return EXIT_PARTIAL;
		}
		fflush(stdout);
		pid = fork();	/* before locking: mlock is not inherited */
		if (pid < 0) {
			cli_warn("cannot fork: %s", strerror(errno));
			return EXIT_PARTIAL;
		}
		if (pid > 0) {
			int st;

			close(pipefd[1]);
			if (read(pipefd[0], &status, 1) == 1) {
				/* a daemon that failed is gone before we say so */
				if (status)
					waitpid(pid, &st, 0);
				_exit(status);
			}
			waitpid(pid, &st, 0);
			fprintf(stderr, "pagecache: the lock daemon exited before it was ready (%s %d)\n",
				WIFSIGNALED(st) ? "signal" : "status",
				WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
			_exit(EXIT_PARTIAL);
		}
		close(pipefd[0]);
		setsid();
	}

	if (c.list) {	/* before the walk: rows are written as they come */
		out_sort("files", "path");
		out_columns("files", lock_cols, sizeof(lock_cols) / sizeof(lock_cols[0]));
	}
	rc = targets_walk(&c.t, lock_file, &c);
	if (rc < 0)
		cli_warn("walk failed: %s", strerror(-rc));
	if (c.stopped)
		cli_warn("stopped early: %s; %zu files locked (%s)",
			 pc_budget_reason(c.budget.stopped), c.n, pc_human_size(c.bytes, a, sizeof(a)));
	if (pf.path && c.n && (rc = write_pidfile(&pf)) < 0) {
		cli_warn("cannot write pidfile '%s': %s", pf.path, strerror(-rc));
		pf.path = NULL;
		c.stopped = true;
	}

	orec_u64(&rec, "files", c.n, 0);
	orec_u64(&rec, "locked", c.bytes, OF_BYTES);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_u64(&rec, "pid", (uint64_t)getpid(), 0);
	orec_bool(&rec, "budget_stopped", c.budget.stopped != 0);
	out_object("total", &rec);
	if (co.fmt == OUT_HUMAN)
		out_human_line("Locked %zu files, %s, pid %d%s", c.n,
			       fmt_size(c.bytes, a, sizeof(a)), getpid(),
			       c.n ? "; SIGTERM or Ctrl-C releases them" : "");
	rc = out_flush();	/* --prom-file: a file that could not be written fails the run */
	fflush(stderr);
	status = cli_failures() || c.stopped || rc < 0 ? EXIT_PARTIAL : 0;

	if (daemon) {
		int devnull = open("/dev/null", O_RDWR);

		if (devnull >= 0) {
			dup2(devnull, STDIN_FILENO);
			dup2(devnull, STDOUT_FILENO);
			dup2(devnull, STDERR_FILENO);
			if (devnull > 2)
				close(devnull);
		}
		if (!c.n)
			status = EXIT_PARTIAL;
		if (write(pipefd[1], &status, 1) != 1)
			status = EXIT_PARTIAL;
		close(pipefd[1]);
	}
	/* A daemon that failed holds nothing: exit 1 must mean no daemon. */
	if (c.n && !(daemon && status)) {
		do
			rc = sigwait(&set, &sig);
		while (rc != 0);
	}
	for (size_t i = 0; i < c.n; i++)
		pc_unlock(&c.locks[i]);
	free(c.locks);
	if (pf.path)
		remove_pidfile(&pf);
	pc_budget_release(&c.budget);
	targets_release(&c.t);
	return c.n ? status : EXIT_PARTIAL;
}
