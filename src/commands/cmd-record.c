/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-record.c: `pagecache record`: what a workload really used of each
 * file, and when it first used it, as a snapshot restore can replay in that
 * order (its used ranges carry times: flag 16, since format version 3;
 * docs/snapshot-format.md).
 *
 * The kernel's filemap tracepoints (lib/trace.c) say which pages were
 * used: read() and splice asked for them (get_pages), a fault touched one
 * (fault); which were mapped around a fault (map_pages: a *requested*
 * window, kept only where its pages were really there: added during the
 * recording or resident at its end; cached runs of the snapshot, not used
 * ones, since the event does not say which page of it was touched); and
 * which were brought in (add_to_page_cache),
 * which is also how filesystem metadata shows up: pages of the block
 * device's own cache (dev 0:N of the bdev pseudo-filesystem, the inode
 * number the disk's dev_t), written as PC_IDENT_BDEV records. Pages only
 * readahead brought in and nobody used are not kept.
 *
 * The engine is lib/record.c; here: the options, the command and the
 * tracing around it, the end phase's signals, the snapshot and the report.
 * Events name (dev, ino). Files become paths by the traced processes' own
 * open handles (/proc/PID/fd, /proc/PID/map_files) while they run, else by
 * handle (pc_inode_open) right after their first use, else by a walk of
 * --root; nothing is held open meanwhile (that would keep filesystems
 * busy). The path is the file's at the end (a rename is followed; a file
 * seen while used and gone at the end is dropped and counted as deleted),
 * with no symbolic link in it, relative to --root. The
 * snapshot is written atomically, also after SIGINT or SIGTERM; tracing
 * leaves nothing behind (lib/trace.c).
 */
#define _GNU_SOURCE
#include "cli.h"
#include "state.h"
#include "record.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REC_RING_PAGES 1024u	/* 4 MiB a CPU: a burst of ~45,000 events */
#define REC_TICK_MS 100		/* drain at least this often */

#define REC_COLD_PATHS 64	/* --cold-path given, at most */

struct record_cli {
	struct cli_opts co;
	struct pc_trace_opts to;	/* its pid, cgroup_fd and children set as it starts */
	const char *out;		/* -o */
	const char *rootarg;		/* --root, "/" */
	const char *cgroup;		/* --cgroup */
	pid_t pid;			/* --pid; 0: none */
	double duration;		/* --duration; 0: none */
	bool cold_asked;		/* --cold */
	const char *cold_paths[REC_COLD_PATHS];	/* into argv: nothing to free on any return */
	size_t ncold;
	char **cmd;			/* -- CMD [ARG...], into argv; NULL: none */
};

enum { OPT_COLD = CLI_OPT_OWN, OPT_COLD_PATH, OPT_ROOT };

static const struct cli_opt record_opts[] = {
	{ .name = "output", .letter = 'o', .id = 'o', .arg = "FILE", .comp = CC_FILE,
	  CLI_STRING(struct record_cli, out), .help = "the snapshot to write (required)" },
	{ .name = "pid", .id = OPT_PID, .arg = "PID", .comp = CC_PID,
	  .help = "record what process PID uses (all its threads)" },
	{ .name = "children", .id = OPT_CHILDREN, CLI_SET(struct record_cli, to.children),
	  .help = "with --pid, also the processes it starts from now on" },
	{ .name = "cgroup", .id = OPT_CGROUP, .arg = "CG", .comp = CC_CGROUP,
	  CLI_STRING(struct record_cli, cgroup),
	  .help = "record what the processes of cgroup CG and below use" },
	{ .name = "duration", .letter = 'd', .id = 'd', .arg = "SECONDS",
	  CLI_SECONDS(struct record_cli, duration), .lo = 0, .hi = 1e9, .range = CLI_ABOVE_LO | CLI_BELOW_HI,
	  .bad = "--duration '%s': seconds, more than 0 (1.5 is a second and a half)",
	  .help = "stop after SECONDS" },
	{ .name = "root", .id = OPT_ROOT, .arg = "DIR", .comp = CC_DIR,
	  CLI_STRING(struct record_cli, rootarg),
	  .help = "store paths relative to DIR (default /)" },
	{ .name = "cold", .id = OPT_COLD, CLI_SET(struct record_cli, cold_asked),
	  .help = "first evict the files of the snapshot at -o" },
	{ .name = "cold-path", .id = OPT_COLD_PATH, .arg = "PATH", .comp = CC_FILE,
	  .help = "with --cold, evict this file or tree too" },
	{ 0 }
};

const struct cli_spec record_spec = {
	.name = "record",
	.usage =
	"Usage: pagecache record -o FILE [OPTIONS] -- CMD [ARG...]\n"
	"       pagecache record -o FILE [OPTIONS] --pid PID [--children]\n"
	"       pagecache record -o FILE [OPTIONS] --cgroup CG\n"
	"       pagecache record -o FILE [OPTIONS]              (the whole system)\n"
	"\n"
	"Record which pages of which files a workload really uses, and when each was\n"
	"first used, as a snapshot: restore brings those pages back (with --order\n"
	"access, what was needed first comes first). Only pages used count: read,\n"
	"faulted, or mapped by fault-around where they were in the cache; what\n"
	"readahead brought in and nobody used is left out. Filesystem metadata the\n"
	"workload read (inode tables, directories) is kept as the block device's own\n"
	"pages. It ends when CMD exits, when PID exits, after --duration, or at\n"
	"SIGINT/SIGTERM, and always writes what it has (atomically, mode 0600).\n"
	"It reads the kernel's filemap tracepoints through perf_event_open: it needs\n"
	"root (CAP_PERFMON, CAP_SYS_ADMIN for tracefs if it is not mounted,\n"
	"CAP_DAC_READ_SEARCH to find files by inode) and leaves no tracing state\n"
	"behind. Events the kernel could not hand over in time (a full ring) are\n"
	"counted and warned about, never silently missing.\n"
	"Before Linux 6.12 the kernel has no use events: record sees misses only,\n"
	"the pages brought into the cache (readahead and new pages written included),\n"
	"not the uses of pages already there (hits). From a cold cache those are the\n"
	"pages the start used, as ureadahead and iorap record it: --cold evicts the\n"
	"workload's files first.\n"
	"It says so (source \"misses\", hits_seen false, and in the snapshot).\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache record -o app.snap -- /usr/bin/app --serve\n"
	"  pagecache record -o db.snap --cgroup mariadb.service --duration 60\n"
	"  pagecache record -o boot.snap --duration 30 --json\n"
	"Then: pagecache restore --order access app.snap; pagecache show app.snap.\n"
	"Files are kept by the path they have at the end (renames are followed);\n"
	"files deleted meanwhile, and inodes that cannot be found again, are counted.\n"
	"A file read through an overlay (a container's) is kept by the path through\n"
	"the overlay where one of our mounts shows it; a container's mount outside\n"
	"our mount namespace: under its layer's real path, where its pages are.\n"
	"Exit status: 0 written; 1 not written, or some files failed (named); 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", record_opts }, &cli_format_group },
	.operands = CC_COMMAND,
	.stop_at_operand = true,
};

static const struct ometric metrics[] = {
	{ "total", "written", "written", 0, "1 if the last run wrote the recording, else 0." },
	{ "total", "files", "files", 0, "Files in the recording." },
	{ "total", "pages_used", "used_bytes", OM_PAGES, "Bytes of pages the workload used." },
	{ "total", "pages_added", "added_bytes", OM_PAGES,
	  "Bytes brought into the cache while it recorded (by the traced processes)." },
	{ "total", "metadata_pages", "metadata_bytes", OM_PAGES,
	  "Bytes of block devices' own pages (filesystem metadata) recorded." },
	{ "total", "unresolved", "unresolved_files", 0, "Files used that could not be found again." },
	{ "total", "deleted", "deleted_files", 0, "Files used and deleted before the end." },
	{ "total", "lost_events", "lost_events", 0, "Events lost to a full ring (0: none)." },
	{ "total", "duration", "duration_seconds", 0, "How long it recorded." },
	{ "total", "hits_seen", "hits_seen", 0,
	  "1 if the kernel showed uses of cached pages (Linux 6.12 use events), 0: misses only." },
};


/*
 * The end phase (paths found, the walk, the snapshot written) may be long
 * or stall (a --root on a hung network or FUSE file system): a first
 * SIGINT or SIGTERM there cuts it short (what is resolved is written), and
 * puts both back to their default, so a second ends record at once. The
 * handler has no SA_RESTART: a slow system call it lands in returns EINTR.
 */
static volatile sig_atomic_t end_signals;

static void on_end_signal(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigaction(SIGINT, &dfl, NULL);
	sigaction(SIGTERM, &dfl, NULL);
	if (end_signals)	/* a second, come with the first: it ends us once we return */
		raise(sig);
	end_signals = 1;
}

static void end_phase_begin(void)
{
	struct sigaction sa = { .sa_handler = on_end_signal };
	sigset_t ends;

	sigemptyset(&ends);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigprocmask(SIG_UNBLOCK, &ends, NULL);	/* one already pending comes now */
}

/* While the snapshot is written: held back; true if one came, and it is a second. */
static bool end_signals_hold(bool hold)
{
	sigset_t ends, pend;

	sigemptyset(&ends);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGTERM);
	if (hold) {
		sigprocmask(SIG_BLOCK, &ends, NULL);
		return false;
	}
	sigpending(&pend);
	return end_signals && (sigismember(&pend, SIGINT) || sigismember(&pend, SIGTERM));
}

/* Is pid gone (or a zombie: it ended, and nobody reaped it yet)? */
static bool pid_gone(pid_t pid)
{
	char path[64], buf[512], *p;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pc_read_text(path, buf, sizeof(buf)) < 0)
		return true;
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/*
 * CMD's exec, through the pipe it closes (exec) or writes its errno to:
 * 0 when it ran, else the errno. *fd is closed.
 */
static int exec_result(int *fd)
{
	int e = 0;

	if (read(*fd, &e, sizeof(e)) != (ssize_t)sizeof(e) || e < 0)
		e = 0;
	close(*fd);
	*fd = -1;
	return e;
}

/* The terminal's foreground back to record's group, if CMD's had it. */
static void tty_back(bool *tty)
{
	sigset_t ttou, old;

	if (!*tty)
		return;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);	/* from the background, or it would stop us */
	sigprocmask(SIG_BLOCK, &ttou, &old);
	tcsetpgrp(STDIN_FILENO, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
	*tty = false;
}

/*
 * CMD's process group ends with record: SIGTERM, and SIGKILL to what is
 * left once CMD has exited or 5 s have passed; then CMD is reaped (a
 * zombie until now, so the group's id could not be anyone else's).
 */
static void end_group(pid_t pgid, bool group, bool exited)
{
	siginfo_t ci;

	kill(group ? -pgid : pgid, SIGTERM);
	for (int i = 0; i < 100 && !exited; i++) {
		memset(&ci, 0, sizeof(ci));
		if (waitid(P_PID, (id_t)pgid, &ci, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    ci.si_pid == pgid)
			exited = true;
		else
			usleep(50000);
	}
	kill(group ? -pgid : pgid, SIGKILL);
	waitpid(pgid, NULL, 0);
}

/*
 * CMD must not outlive record, even by kill -9: PR_SET_PDEATHSIG does it
 * until CMD changes its credentials (setpriv, a set-user-ID program: the
 * kernel clears the death signal then). So a warden, a child of record
 * that does nothing else, holds a pidfd of CMD and the read end of a
 * pipe only record writes to: at its end of file (record gone, however),
 * if CMD has not exited, it kills CMD's group (SIGKILL), or CMD alone where
 * CMD shares record's group. The pidfd says CMD is still there, so the
 * group's id is still CMD's. record closes the pipe at its exit, after
 * CMD was reaped, and reaps the warden. Returns its pid, or -1.
 */
static pid_t start_warden(pid_t child, bool group, int *ret_fd)
{
	int p[2], pidfd, devnull;
	pid_t w;
	char b;

	pidfd = (int)syscall(__NR_pidfd_open, child, 0);
	if (pidfd < 0 || pipe2(p, O_CLOEXEC) < 0) {
		if (pidfd >= 0)
			close(pidfd);
		return -1;
	}
	w = fork();
	if (w == 0) {
		struct pollfd pf = { pidfd, POLLIN, 0 };

		/* SIGINT and SIGTERM stay blocked (record's mask): only the pipe ends it */
		prctl(PR_SET_NAME, "pagecache-wrdn");
		devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int fd = 0; fd < 3 && devnull >= 0; fd++)
			dup2(devnull, fd);	/* not a holder of record's stdout */
		for (int fd = 3; fd < 1024; fd++)
			if (fd != p[0] && fd != pidfd)
				close(fd);
		while (read(p[0], &b, 1) < 0 && errno == EINTR)
			;
		if (poll(&pf, 1, 0) == 0) {	/* CMD not exited: record died first */
			if (group)
				kill(-child, SIGKILL);
			syscall(__NR_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
		}
		_exit(0);
	}
	close(p[0]);
	close(pidfd);
	if (w < 0) {
		close(p[1]);
		return -1;
	}
	*ret_fd = p[1];
	return w;
}

/*
 * Is record alone in its process group? A shell puts a pipeline's members
 * in one group: handing the terminal to CMD's group would put the others
 * in the background (a reader of /dev/tty stopped by SIGTTIN).
 */
static bool alone_in_group(void)
{
	pid_t self = getpid(), pgrp = getpgrp();
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool alone = d != NULL;

	while (alone && (de = readdir(d))) {
		char path[64], buf[512], *p;
		long pid = strtol(de->d_name, &p, 10);
		int g;

		if (*p || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if (pc_read_text(path, buf, sizeof(buf)) < 0)
			continue;
		p = strrchr(buf, ')');	/* then: state, ppid, pgrp */
		if (p && sscanf(p + 1, " %*c %*d %d", &g) == 1 && g == pgrp)
			alone = false;
	}
	if (d)
		closedir(d);
	return alone;
}

/*
 * CMD, holding the terminal, was stopped (^Z): the terminal comes back to
 * record's group and record stops too, so the shell sees its job stopped
 * (record waited on, CMD stopped: the shell hung). Continued (fg, or bg),
 * it gives the terminal back if it is in the foreground again, and
 * continues CMD's group.
 */
static void stop_with(pid_t child, bool *tty)
{
	tty_back(tty);
	raise(SIGSTOP);
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
		*tty = tcsetpgrp(STDIN_FILENO, child) == 0;
	kill(-child, SIGCONT);
}

/* ---- --cold: the workload's files evicted first ---- */

struct cold {
	uint64_t files, pages, stayed;	/* evicted; their pages; pages that stayed */
	bool previous;			/* -o held a snapshot */
};

static void cold_one(struct cold *c, int fd, const struct stat *st, const char *path)
{
	struct pc_evict_result er;
	int rc = pc_fd_evict(fd, (uint64_t)st->st_size, 0, 0, &er);

	if (rc < 0) {
		cli_fail(path, -rc, "cannot evict (--cold)");
		return;
	}
	__atomic_add_fetch(&c->files, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&c->pages, er.after.pages, __ATOMIC_RELAXED);
	if (er.after.source != PC_SRC_NONE)
		__atomic_add_fetch(&c->stayed, er.after.cached, __ATOMIC_RELAXED);
}

static int cold_walked(struct pc_walk_entry *e, void *arg)
{
	cold_one(arg, e->fd, &e->st, e->path);
	return 0;
}

static void cold_walk_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	(void)arg;
	if (ev == PC_WALK_ERROR)	/* as evict says it: a device is skipped, not "Invalid argument" */
		targets_walk_error(path, err);
}

/*
 * The snapshot at -o, if it may choose what root evicts: opened in the
 * directory probed (out_dfd), never through a link, a FIFO or a device
 * put there since the probe, and only if root or the caller owns it (one
 * another user left there names whatever they like: /etc, others' files).
 * NULL, having said why where there is one but it is not used.
 */
static struct pc_profile_reader *cold_snapshot(int out_dfd, const char *out, struct cold *c)
{
	const char *slash = strrchr(out, '/');
	struct pc_profile_reader *rd = NULL;
	char err[512], proc[64];
	struct stat st;
	int fd, rc;

	fd = openat(out_dfd, slash ? slash + 1 : out, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT)
			cli_warn("--cold: cannot open '%s': %s: nothing evicted from it", out,
				 strerror(errno));
		return NULL;
	}
	c->previous = true;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_warn("--cold: '%s' is not a regular file: nothing evicted from it", out);
	} else if (st.st_uid != 0 && st.st_uid != geteuid()) {
		cli_warn("--cold: '%s' is another user's (uid %u), not root's or yours: nothing "
			 "evicted from it", out, (unsigned)st.st_uid);
	} else {
		/* that inode, whatever the name leads to now */
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if ((rc = pc_profile_open(proc, &rd, err, sizeof(err))) < 0) {
			cli_warn("--cold: cannot read '%s': %s: nothing evicted from it", out, err);
			rd = NULL;
		}
	}
	close(fd);
	return rd;
}

/*
 * The files of the snapshot at `out` (the last recording of this workload:
 * what it will use again), beneath record's root, as restore opens them
 * (no link followed); then the trees of --cold-path. A snapshot taken
 * beneath another root is not used (restore refuses it without --root),
 * and it is read whole before anything is evicted: a corrupt one evicts
 * nothing. Metadata records (block devices) are left: evicting a disk's
 * whole cache is not this workload's.
 */
static void cold_evict(int out_dfd, const char *out, const char *root, const char *const *paths,
		       size_t npaths, struct cold *c)
{
	struct pc_profile_reader *rd = cold_snapshot(out_dfd, out, c);
	struct pc_profile_file pf;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rootfd = -1, rc = 0;

	if (rd && strcmp(pc_profile_get_meta(rd)->root, root) != 0) {
		cli_warn("--cold: '%s' was recorded beneath '%s', not beneath --root '%s': nothing "
			 "evicted from it", out, pc_profile_get_meta(rd)->root, root);
		pc_profile_close(rd);
		rd = NULL;
	}
	while (rd && (rc = pc_profile_next(rd, &pf)) == 1) {
		if (!(pf.ident & PC_IDENT_BDEV)) {
			if (n == cap) {
				char **v = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof(*v));

				if (!v) {
					rc = -ENOMEM;
					pc_profile_file_release(&pf);
					break;
				}
				names = v;
			}
			names[n++] = pf.path;
			pf.path = NULL;
		}
		pc_profile_file_release(&pf);
	}
	if (rd && rc < 0) {
		cli_warn("--cold: cannot read '%s': %s: nothing evicted from it", out,
			 rc == -ENOMEM ? strerror(ENOMEM) : pc_profile_error(rd));
		while (n)
			free(names[--n]);
	}
	if (n)
		rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int fd = rootfd >= 0 ? pc_open_beneath(rootfd, names[i], 0, &st) : -EBADF;

		if (fd >= 0) {
			if (S_ISREG(st.st_mode))
				cold_one(c, fd, &st, names[i]);
			close(fd);
		}
		free(names[i]);
	}
	free(names);
	if (rootfd >= 0)
		close(rootfd);
	if (rd)
		pc_profile_close(rd);
	if (npaths) {
		struct pc_walk_opts wo = { .file = cold_walked, .event = cold_walk_event, .arg = c };

		pc_walk(paths, npaths, &wo);
	}
}

static int cold_discard(const struct pc_trace_event *e, void *arg)
{
	(void)e;
	(void)arg;
	return 0;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the command ---- */

/* what the command was told */
/* what it holds while it runs, and what it found */
struct record_run {
	char *root;			/* --root, resolved */
	struct stat rootst;		/* --root's: the device it is on */
	struct pc_rec *rec;		/* the engine (lib/record.c); NULL: never began */
	struct pc_rec_stats st;		/* what it saw, once tracing is over */
	bool misses;			/* no use events (before 6.12): misses only */
	struct pc_rec_result o;		/* the files, resolved */
	struct cold cold;
	struct pc_trace *t;
	pid_t child;			/* CMD; -1: none */
	pid_t warden;			/* ends CMD if record dies (start_warden) */
	int warden_fd;
	int go[2], ex[2];		/* CMD's start, and its exec's errno (start_command) */
	int sfd;			/* SIGINT, SIGTERM, SIGCHLD */
	int out_dfd;			/* -o's directory, as probed */
	int cmd_status;			/* CMD's exit status; -1: not exited */
	int exec_err;			/* CMD could not be run: errno */
	bool stop_signal, written, cmd_done, tty;
	bool own_group;			/* CMD in a process group of its own */
	bool handover;			/* the terminal was given to CMD's group */
	sigset_t oldmask;
	uint64_t lost, t_end;
	double started;
	const char *ended;		/* what ended the recording; NULL: it never began */
};

/* -1 to go on, else the exit status */
static int parse(struct record_cli *c, int argc, char **argv)
{
	struct cli_parser p;
	int opt;

	cli_parser_bind_to(&p, &record_spec, &(struct cli_bound){ .base = c, .co = &c->co }, argc,
			   argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case OPT_COLD_PATH:
			if (c->ncold == REC_COLD_PATHS)
				return cli_usage_error("--cold-path: at most %d (name a directory above "
						       "them)", REC_COLD_PATHS);
			c->cold_paths[c->ncold++] = p.arg;
			break;
		case OPT_PID:
			if (cli_parse_pid("--pid", p.arg, &c->pid))
				return EXIT_USAGE;
			break;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	return -1;
}

static void start_output(const struct record_cli *c)
{
	out_init(c->co.fmt, c->co.bytes, c->co.noheadings);
	out_set_raw(c->co.raw);
	out_prom_metrics("record", metrics, sizeof(metrics) / sizeof(metrics[0]));
	out_list_declare("errors");
}

/* What it was told, checked (once the output is set up); -1 to go on, else the exit status. */
static int check(struct record_cli *c, struct record_run *s, int argc, char **argv)
{
	int rc;

	c->cmd = optind < argc ? argv + optind : NULL;
	if (!c->out)
		return cli_usage_error("-o FILE is required");
	if ((c->cmd != NULL) + (c->pid > 0) + (c->cgroup != NULL) > 1)
		return cli_usage_error("record one of: -- CMD, --pid PID, --cgroup CG (or, with "
				       "none, the whole system)");
	if (c->to.children && !c->pid)
		return cli_usage_error("--children goes with --pid");
	if (c->ncold && !c->cold_asked)
		return cli_usage_error("--cold-path goes with --cold");
	if ((rc = cli_trace_ring_env(&c->to.ring_pages)))
		return rc;
	s->root = realpath(c->rootarg, NULL);
	if (!s->root || stat(s->root, &s->rootst) < 0 || !S_ISDIR(s->rootst.st_mode)) {
		free(s->root);
		s->root = NULL;
		return cli_usage_error("--root '%s' is not a directory", c->rootarg);
	}
	return -1;
}

/*
 * SIGINT, SIGTERM end the recording (what was seen is written); SIGCHLD:
 * CMD ended. All three come through s->sfd from here on.
 */
static void hold_signals(struct record_run *s)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_BLOCK, &mask, &s->oldmask);
	s->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* What must be there before anything starts: PID, -o's directory, the cgroup. 0 or -errno. */
static int open_targets(struct record_cli *c, struct record_run *s)
{
	char why[4096];
	int rc;

	if (c->pid > 0 && pid_gone(c->pid)) {
		snprintf(why, sizeof(why), "%d", (int)c->pid);
		cli_fail_msg(why, "cannot record process", "no such process");
		return -ESRCH;
	}
	/* where the snapshot goes is tried now, not after CMD ran (its temporary file, made and removed) */
	rc = pc_profile_probe_target(c->out, &s->out_dfd);	/* its directory pinned till the end */
	if (rc < 0) {
		cli_fail_msg(c->out, "cannot write recording", cli_snapshot_target_why(c->out, -rc));
		return rc;
	}
	if (c->cgroup) {
		c->to.cgroup_fd = pc_trace_cgroup_open(c->cgroup, why, sizeof(why));
		if (c->to.cgroup_fd < 0) {
			cli_fail_msg(c->cgroup, "cannot record cgroup", why);
			return c->to.cgroup_fd;
		}
	}
	return 0;
}

/* In the child: CMD, once the recording has started (a byte on go[0]). Never returns. */
static void run_command(const struct record_cli *c, const struct record_run *s, pid_t parent)
{
	char b;
	int e;

	/* CMD dies with record, even by kill -9 (checked: record may be gone already) */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
		_exit(127);
	if (s->own_group)
		setpgid(0, 0);	/* a group of its own, which record ends with it */
	/* stdout is record's --json (or --prom, ...): CMD writes to stderr */
	if (c->co.fmt != OUT_HUMAN && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127);
	close(s->go[1]);
	close(s->ex[0]);
	bench_exec_prep();	/* every signal at its default, none blocked */
	if (read(s->go[0], &b, 1) != 1)
		_exit(127);	/* the recording did not start */
	execvp(c->cmd[0], c->cmd);
	e = errno;
	if (write(s->ex[1], &e, sizeof(e)) != (ssize_t)sizeof(e))
		_exit(125);
	_exit(e == ENOENT ? 127 : 126);
}

/* CMD forked, waiting to be let go; its warden started. 0 or -errno. */
static int start_command(struct record_cli *c, struct record_run *s)
{
	bool fg;
	pid_t self;

	/*
	 * CMD waits on a pipe until its events are open: nothing it does
	 * is missed. A second one, closed by a successful exec, brings
	 * back the errno of one that failed.
	 */
	if (pipe2(s->go, O_CLOEXEC) < 0 || pipe2(s->ex, O_CLOEXEC) < 0) {
		cli_warn("cannot make a pipe: %s", strerror(errno));
		return -errno;
	}
	/*
	 * On a terminal, in its foreground: CMD gets a group of its own
	 * and the terminal only where record is alone in its group; in a
	 * pipeline, CMD stays in the foreground group with the others.
	 */
	fg = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	s->own_group = !fg || alone_in_group();
	fflush(stdout);
	fflush(stderr);
	self = getpid();
	s->child = fork();
	if (s->child == 0)
		run_command(c, s, self);
	close(s->go[0]);
	s->go[0] = -1;
	close(s->ex[1]);
	s->ex[1] = -1;
	if (s->child < 0) {
		int rc = -errno;

		cli_warn("cannot fork: %s", strerror(-rc));
		return rc;
	}
	if (s->own_group)
		setpgid(s->child, s->child);	/* as the child does: whichever runs first */
	/* a terminal's foreground is CMD's (it may read it; ^C goes to it) */
	if (s->own_group && fg)
		s->tty = s->handover = tcsetpgrp(STDIN_FILENO, s->child) == 0;
	s->warden = start_warden(s->child, s->own_group, &s->warden_fd);
	if (s->warden < 0)
		cli_warn("cannot start the process that ends '%s' if record is killed: %s",
			 c->cmd[0], strerror(errno));
	c->to.pid = s->child;
	c->to.children = true;
	return 0;
}

/* The recording started: events open, --cold done, CMD let go. 0 or -errno. */
static int start_trace(struct record_cli *c, struct record_run *s)
{
	struct pc_rec_opts ro = { .size = sizeof(ro), .self = (uint32_t)getpid() };
	char err[1024];
	int rc;

	rc = pc_trace_open(&c->to, &s->t, err, sizeof(err));
	if (rc < 0) {
		cli_fail_msg(c->cmd ? c->cmd[0] : c->pid ? "pid" : c->cgroup ? c->cgroup : "system",
			     "cannot record", err);
		return rc;
	}
	s->misses = !(pc_trace_kinds(s->t) & PC_TR_GET_PAGES);
	/*
	 * --cold once the recording can start (evicted for nothing where it
	 * cannot: no permission, no events), before CMD does; what the rings
	 * took meanwhile (other processes, the eviction's own) is not the
	 * workload's.
	 */
	if (c->cold_asked) {
		cold_evict(s->out_dfd, c->out, s->root, c->cold_paths, c->ncold, &s->cold);
		if (!s->cold.previous && !c->ncold)
			cli_warn("--cold: no recording at '%s' yet and no --cold-path: nothing evicted "
				 "(evict the workload's files with --cold-path, or drop the caches)",
				 c->out);
		pc_trace_drain(s->t, cold_discard, NULL);
	}
	ro.t0_ns = mono_ns();
	ro.misses = s->misses;
	rc = pc_rec_new(&ro, &s->rec);
	if (rc < 0) {
		cli_fail_msg(c->out, "cannot record", strerror(-rc));
		return rc;
	}
	s->started = pc_now();
	s->t_end = c->duration > 0 ? ro.t0_ns + (uint64_t)(c->duration * 1e9) : 0;
	if (c->cmd) {
		if (write(s->go[1], "g", 1) != 1)
			cli_warn("cannot start '%s': %s", c->cmd[0], strerror(errno));
		close(s->go[1]);
		s->go[1] = -1;
	}
	return 0;
}

/* CMD stopped or exited since the last look? True when it exited. */
static bool watch_command(struct record_run *s)
{
	siginfo_t ci = { 0 };

	if (s->handover &&
	    waitid(P_PID, (id_t)s->child, &ci, WSTOPPED | WNOHANG) == 0 &&
	    ci.si_pid == s->child && ci.si_code == CLD_STOPPED)
		stop_with(s->child, &s->tty);
	memset(&ci, 0, sizeof(ci));
	/* left a zombie (WNOWAIT): its pid, its group's id, is not reused until the end */
	if (waitid(P_PID, (id_t)s->child, &ci, WEXITED | WNOHANG | WNOWAIT) == 0 &&
	    ci.si_pid == s->child) {
		s->cmd_status = ci.si_code == CLD_EXITED ? ci.si_status : 128 + ci.si_status;
		s->cmd_done = true;
		if (!s->ended)
			s->ended = "command";
		tty_back(&s->tty);
		return true;
	}
	return false;
}

/* The events drained as they come, till the recording ends; then tracing is closed. */
static void drain(const struct record_cli *c, struct record_run *s)
{
	for (;;) {
		struct pollfd pf[3] = { { pc_trace_fd(s->t), POLLIN, 0 }, { s->sfd, POLLIN, 0 },
					{ s->ex[0], POLLIN, 0 } };
		struct signalfd_siginfo si;
		bool ending = false;

		poll(pf, 3, REC_TICK_MS);
		if (pf[2].revents)
			s->exec_err = exec_result(&s->ex[0]);
		while (s->sfd >= 0 && read(s->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM) {
				s->stop_signal = true;
				ending = true;
				if (!s->ended)
					s->ended = "signal";
				if (s->child > 0 && !s->cmd_done)	/* CMD ends with us */
					kill(s->own_group ? -s->child : s->child, (int)si.ssi_signo);
			}
		}
		if (s->child > 0 && !s->cmd_done && watch_command(s))
			ending = true;
		if (c->pid > 0 && pid_gone(c->pid) && !s->ended)
			s->ended = "process";
		if (s->t_end && mono_ns() >= s->t_end && !s->ended)
			s->ended = "duration";
		ending = ending || s->ended;
		pc_trace_drain(s->t, pc_rec_event, s->rec);
		pc_rec_scan(s->rec);
		if (ending)
			break;
	}
	if (s->child > 0 && !s->cmd_done && !s->stop_signal)
		kill(s->own_group ? -s->child : s->child, SIGTERM);	/* --duration is over: CMD ends too */
	if (s->ex[0] >= 0 && s->cmd_status >= 0)	/* it ended before poll saw its pipe */
		s->exec_err = exec_result(&s->ex[0]);
	pc_rec_stats(s->rec, &s->st);
	s->lost = pc_trace_lost(s->t);
	pc_trace_close(s->t);
	s->t = NULL;
}
static bool end_stop(void *arg)
{
	(void)arg;
	return end_signals;
}

static void end_error(void *arg, const char *path, const char *what, int err)
{
	(void)arg;
	cli_fail(path, err, what);
}

/* The end phase: files made paths with their used pages and times, in s->o, by path. */
static void resolve(struct record_run *s)
{
	struct pc_rec_resolve_opts ro = {
		.size = sizeof(ro), .root = s->root, .root_dev = s->rootst.st_dev,
		.stop = end_stop, .on_error = end_error,
	};

	end_phase_begin();
	(void)pc_rec_resolve(s->rec, &ro, &s->o);	/* -EINVAL only: ro is right */
}

/* The snapshot written, atomically, signals held meanwhile; then what went wrong said. 0 or -errno. */
static int write_recording(const struct record_cli *c, struct record_run *s)
{
	struct pc_profile_meta meta = { 0 };
	struct pc_profile_writer *w = NULL;
	sigset_t ends;
	int rc;

	meta.created = (uint64_t)time(NULL);
	meta.page_size = (uint32_t)pc_page_size();
	snprintf(meta.root, sizeof(meta.root), "%s", s->root);
	gethostname(meta.host, sizeof(meta.host) - 1);
	meta.flags = PC_META_RECORDED;
	meta.source = s->misses ? PC_META_SRC_MISSES : PC_META_SRC_USE;
	meta.lost = s->lost;
	meta.duration_ms = (uint64_t)((pc_now() - s->started) * 1000);
	end_signals_hold(true);	/* a second signal from here abandons it before the rename */
	rc = pc_profile_createat(s->out_dfd, c->out, &meta, &w);
	for (size_t i = 0; i < s->o.npf && rc == 0; i++) {
		rc = pc_profile_add(w, &s->o.pf[i]);
		if (rc == -EEXIST) {	/* two inodes at one path: the first is kept */
			cli_warn("'%s' recorded twice (replaced during the recording?): kept the "
				 "first", s->o.pf[i].path);
			rc = 0;
		}
	}
	if (rc == 0 && end_signals_hold(false)) {
		pc_profile_abort(w);	/* -o as it was; unblocked, the signal ends us */
		rc = -EINTR;
	} else if (rc == 0) {
		rc = pc_profile_commit(w);
	} else {
		pc_profile_abort(w);
	}
	s->written = rc == 0;
	sigemptyset(&ends);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &ends, NULL);
	if (s->o.cut)
		cli_warn("a signal cut the end short: %llu files used were not looked for (they are "
			 "not in the snapshot)",
			 (unsigned long long)s->o.cut);
	if (rc < 0)
		cli_fail_msg(c->out, "cannot write recording", cli_snapshot_target_why(c->out, -rc));
	if (s->lost)
		cli_warn("%llu events were lost: the kernel's ring buffer was full, so the "
			 "recording misses pages (a bigger ring: PAGECACHE_TRACE_RING=PAGES, now %u "
			 "a CPU)", (unsigned long long)s->lost, c->to.ring_pages);
	if (s->st.nomem)
		cli_warn("out of memory while recording: some events were not kept");
	return rc;
}

/* Human output: what it wrote, saw, left out. */
static void human(const struct record_cli *c, const struct record_run *s)
{
	const struct pc_rec_result *o = &s->o;
	char a[32];

	out_human_line("%s %s: %llu files, %llu pages used (%s) and %llu mapped around "
		       "them, %llu pages of metadata on %llu devices",
		       s->written ? "Wrote" : "Did not write", c->out, (unsigned long long)o->files,
		       (unsigned long long)o->pages,
		       fmt_size(o->pages * pc_page_size(), a, sizeof(a)),
		       (unsigned long long)o->mapped,
		       (unsigned long long)o->meta_pages, (unsigned long long)o->bdevs);
	out_human_line("%llu pages added to the cache while recording; %llu events in "
		       "%.1f s, %llu lost", (unsigned long long)s->st.added_pages,
		       (unsigned long long)s->st.events, pc_now() - s->started,
		       (unsigned long long)s->lost);
	if (o->unresolved || o->deleted || o->outside)
		out_human_line("Left out: %llu files not found again, %llu deleted, %llu "
			       "outside %s", (unsigned long long)o->unresolved,
			       (unsigned long long)o->deleted, (unsigned long long)o->outside,
			       s->root);
	if (c->cold_asked)
		out_human_line("Evicted first (--cold): %llu files, %llu of their pages stayed "
			       "cached", (unsigned long long)s->cold.files,
			       (unsigned long long)s->cold.stayed);
	if (s->misses)
		out_human_line("Misses only: this kernel has no filemap use events (Linux "
			       "6.12), so the pages brought in count as used (readahead "
			       "included) and uses of pages already cached (hits) are not "
			       "seen%s", c->cold_asked ? "" : "; --cold starts from a cold cache");
}

/* The total, also after a failure (written false); human lines where it began. */
static void report(const struct record_cli *c, const struct record_run *s)
{
	const struct pc_rec_result *o = &s->o;
	struct orec rec = { 0 };

	orec_str(&rec, "output", c->out, 0);
	orec_bool(&rec, "written", s->written);
	orec_u64(&rec, "files", o->files, 0);
	orec_u64(&rec, "pages_used", o->pages, OF_PAGES);
	orec_u64(&rec, "bytes", o->pages * pc_page_size(), OF_BYTES);
	orec_u64(&rec, "pages_mapped_around", o->mapped, OF_PAGES);
	orec_u64(&rec, "pages_added", s->st.added_pages, OF_PAGES);
	orec_u64(&rec, "metadata_devices", o->bdevs, 0);
	orec_u64(&rec, "metadata_pages", o->meta_pages, OF_PAGES);
	orec_u64(&rec, "metadata_other_devices", o->other_bdevs, 0);
	orec_u64(&rec, "unresolved", o->unresolved, 0);
	orec_u64(&rec, "deleted", o->deleted, 0);
	orec_u64(&rec, "outside_root", o->outside, 0);
	orec_u64(&rec, "unused_files", o->unused, 0);
	orec_u64(&rec, "cut_short", o->cut, 0);
	orec_u64(&rec, "events", s->st.events, 0);
	orec_u64(&rec, "lost_events", s->lost, 0);
	if (s->ended) {	/* what the kernel let it see, once it began */
		orec_str(&rec, "source", s->misses ? "misses" : "use", 0);
		orec_bool(&rec, "hits_seen", !s->misses);
	} else {
		orec_null(&rec, "source");
		orec_null(&rec, "hits_seen");
	}
	if (c->cold_asked) {
		orec_u64(&rec, "cold_files", s->cold.files, 0);
		orec_u64(&rec, "cold_pages_stayed", s->cold.stayed, OF_PAGES);
	} else {
		orec_null(&rec, "cold_files");
		orec_null(&rec, "cold_pages_stayed");
	}
	orec_f64(&rec, "duration", pc_now() - s->started);
	if (s->ended)
		orec_str(&rec, "ended", s->ended, 0);
	else
		orec_null(&rec, "ended");	/* it never began */
	if (c->cmd && s->cmd_status >= 0)
		orec_u64(&rec, "command_status", (uint64_t)s->cmd_status, 0);
	else if (c->cmd)
		orec_null(&rec, "command_status");
	orec_str(&rec, "root", s->root, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	out_object("total", &rec);
	if (c->co.fmt == OUT_HUMAN && s->ended)	/* else the failure said it all */
		human(c, s);
}

/*
 * Everything ends: CMD (its group) and its warden, the descriptors, the
 * signal mask as it was. Returns the exit status, rc being the run's.
 */
static int finish(const struct record_cli *c, struct record_run *s, int rc)
{
	if (s->t)
		pc_trace_close(s->t);
	if (s->child > 0) {
		/* never started (tracing failed): it ends at once */
		if (s->go[1] >= 0) {
			close(s->go[1]);
			s->go[1] = -1;
		}
		tty_back(&s->tty);
		end_group(s->child, s->own_group, s->cmd_done);
	}
	if (s->warden > 0) {	/* CMD reaped: the warden sees it exited and leaves */
		close(s->warden_fd);
		waitpid(s->warden, NULL, 0);
	}
	if (s->go[0] >= 0)
		close(s->go[0]);
	if (s->go[1] >= 0)
		close(s->go[1]);
	for (int i = 0; i < 2; i++)
		if (s->ex[i] >= 0)
			close(s->ex[i]);
	if (c->to.cgroup_fd >= 0)
		close(c->to.cgroup_fd);
	if (s->out_dfd >= 0)
		close(s->out_dfd);
	if (s->sfd >= 0)
		close(s->sfd);
	sigprocmask(SIG_SETMASK, &s->oldmask, NULL);
	pc_rec_result_release(&s->o);
	pc_rec_free(s->rec);
	free(s->root);
	if (out_flush() < 0 && rc == 0)
		rc = -EIO;
	if (c->cmd && s->cmd_status > 0 && rc == 0 && !s->exec_err)
		cli_warn("'%s' exited with status %d", c->cmd[0], s->cmd_status);
	return rc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}

/* From the targets opened to the snapshot written. 0 or -errno; what failed is said. */
static int record(struct record_cli *c, struct record_run *s)
{
	int rc;

	/* failures from here on still report (--json's total, written false) */
	if ((rc = open_targets(c, s)) < 0)
		return rc;
	if (c->cmd && (rc = start_command(c, s)) < 0)
		return rc;
	if (!c->cmd && c->pid > 0)
		c->to.pid = c->pid;
	if ((rc = start_trace(c, s)) < 0)
		return rc;
	drain(c, s);
	if (s->exec_err) {
		/* nothing ran: no snapshot replaces the one -o may hold */
		cli_fail_msg(c->cmd[0], "cannot run", strerror(s->exec_err));
		return 0;
	}
	/* files: paths, used pages and their times */
	resolve(s);
	return write_recording(c, s);
}

int cmd_record(int argc, char **argv)
{
	/* before 6.12 without the use events: misses only */
	struct record_cli c = {
		.co = { OUT_HUMAN }, .rootarg = "/",
		.to = { .kinds = PC_TR_ADD | PC_TR_USE, .optional = PC_TR_USE, .cgroup_fd = -1,
			.ring_pages = REC_RING_PAGES },
	};
	struct record_run s = {
		.child = -1, .warden = -1, .warden_fd = -1, .go = { -1, -1 }, .ex = { -1, -1 },
		.sfd = -1, .out_dfd = -1, .cmd_status = -1, .own_group = true,
		.started = pc_now(),
	};
	int rc;

	rc = parse(&c, argc, argv);
	if (rc >= 0)
		return rc;
	start_output(&c);
	rc = check(&c, &s, argc, argv);
	if (rc >= 0)
		return rc;
	hold_signals(&s);
	rc = record(&c, &s);
	report(&c, &s);
	return finish(&c, &s, rc);
}
