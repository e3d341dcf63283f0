/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-daemon.c: `pagecache daemon`: pagecache as a service, as
 * PostgreSQL's autoprewarm and InnoDB's buffer pool dump are for their
 * own caches. For each [service] of pagecache.conf(5): restore its
 * snapshot when the daemon starts, snapshot it every `interval` seconds
 * and when the daemon stops, keep its lock set locked (re-locked when a
 * file is replaced), and say how it stands on a Unix socket (`pagecache
 * status`) and in a node-exporter textfile.
 *
 * One process, one thread, one poll loop (signalfd, the socket, the
 * current job's pipe, the lock sets' pipes, timeouts). The work itself
 * is done by children, one snapshot or restore at a time: a job is a fork
 * of the daemon (named pc-snapshot or pc-restore) that calls the
 * library's engine (lib/snapshot.c, lib/restore.c) and writes a fixed,
 * versioned struct daemon_job_result (daemon.h) to its pipe; a lock set
 * is a fork too (pc-lock), one a service, that keeps its set as `lock
 * --watch` does (cmd-lock.c's lock_watch_run, on lib/lockset.c) and
 * writes a struct daemon_lock_report each time the set changes. Nothing
 * is exec'd, no text is parsed back. So a job's memory goes back to the
 * system when it ends (the daemon stays small while idle), a crash or a
 * leak in one job does not take the daemon down, and a restore charged to
 * a service's memory cgroup moves only that child there. Children get
 * PR_SET_PDEATHSIG: a daemon killed with -9 leaves no job or lock behind.
 *
 * A status peer (SO_PEERCRED, SO_PEERGROUPS) sees a service only if it
 * owns or may write every file the service's last snapshot read, judged
 * on the owners that snapshot recorded (snapshot --owners), never on a
 * path looked at when it asks (visible()).
 *
 * sd_notify(3)'s datagram protocol is written here (a sendmsg to
 * $NOTIFY_SOCKET): libsystemd has no static library, and the protocol is
 * one datagram of text.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "daemon/daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { OPT_CHECK = CLI_OPT_OWN, OPT_SOCKET };
/* What the daemon's bound options set. */
struct daemon_cli {
	const char *config;		/* --config */
	bool check;			/* --check */
};

static const struct cli_opt daemon_opts[] = {
	{ .name = "config", .letter = 'c', .id = 'c', .arg = "FILE", .comp = CC_FILE,
	  CLI_STRING(struct daemon_cli, config), .help = "the configuration (" DAEMON_CONFIG ")" },
	{ .name = "check", .id = OPT_CHECK, CLI_SET(struct daemon_cli, check),
	  .help = "check the configuration, say what it would do" },
	{ .name = "socket", .id = OPT_SOCKET, .arg = "PATH", .comp = CC_FILE,
	  .help = "the status socket (overrides the file's socket =)" },
	{ 0 }
};

const struct cli_spec daemon_spec = {
	.name = "daemon",
	.usage =
	"Usage: pagecache daemon [--config FILE] [--check] [--socket PATH]\n"
	"\n"
	"Run pagecache as a service for the services of FILE (pagecache.conf(5)):\n"
	"restore each one's snapshot when the daemon starts (restore = yes), take a\n"
	"new one every `interval` seconds and when the daemon stops (SIGTERM), keep\n"
	"its lock set locked (re-locked when a file is replaced), and answer\n"
	"`pagecache status` on a Unix socket. SIGHUP reads FILE again (a bad file\n"
	"is refused and the running configuration kept). A snapshot that is empty,\n"
	"or under `guard` (0.5) of the last one while the service is down, does not\n"
	"replace the last good one. Logs go to stderr (the journal under systemd);\n"
	"under systemd it is Type=notify: READY=1 once the start-up restores are\n"
	"done, STATUS= with progress. It runs in the foreground.\n"
	"\n",
	.footer =
	"\n"
	"A configuration:\n"
	"  [daemon]\n"
	"  metrics = /var/lib/prometheus/node-exporter/pagecache.prom\n"
	"  [service db]\n"
	"  paths    = /var/lib/mysql\n"
	"  interval = 300\n"
	"  cgroup   = system.slice/mariadb.service\n"
	"  max-mem  = 4G\n"
	"Examples:\n"
	"  pagecache daemon --check --config /etc/pagecache/pagecache.conf\n"
	"  systemctl enable --now pagecache.service\n"
	"  pagecache status\n"
	"Exit status: 0 stopped by SIGTERM or SIGINT after the final snapshots;\n"
	"1 a failure to start (said); 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", daemon_opts } },
	.operands = CC_NONE,
};

enum job_kind { JOB_NONE, JOB_SNAPSHOT, JOB_RESTORE, JOB_LOCK };

/*
 * After SIGTERM, the final snapshots end within stop-timeout (90 s;
 * pagecache.service gives 2 minutes before SIGKILL, which would lose them
 * all): a job still running then is stopped, and the snapshots not taken
 * are said. Each final snapshot gets its share of what is left (divided
 * by the snapshots left, less the grace a stopped one may take, at least
 * STOP_MIN_SHARE), so one hung on a user's FUSE mount cannot spend the
 * whole budget; a service whose last snapshot ran out of time goes last.
 */
#define KILL_GRACE 5		/* SIGTERM, then SIGKILL this much later */
#define GONE_GRACE 2		/* still there this long after SIGKILL: let go */
#define STOP_MIN_SHARE 2

/* what the daemon knows of a service, kept across reloads by name */
struct svc {
	struct dsvc *c;			/* in D.conf */
	bool refused;			/* its snapshot's directory is not safe: nothing done */
	double due;			/* monotonic time of the next snapshot; 0: none */
	time_t due_wall;
	bool restore_pending;		/* its start-up restore has not ended yet */
	bool restore_snap, restore_rec;	/* what its restore job reads: the snapshot, the recording */
	bool cg_waiting;		/* its restore waits for its cgroup to appear */
	double cg_until;		/* monotonic: until then; 0: not waited yet */
	/* the last snapshot */
	time_t snap_time;
	const char *snap_result;	/* "written", "kept", "failed" (static) */
	uint64_t snap_files, snap_pages, snap_bytes, snapshots, snap_failures;
	double snap_secs;
	/*
	 * Who owns the files the last written snapshot read (its --owners,
	 * from the fstat of each fd it read): a non-root peer is judged on
	 * these, so the figures it sees are of files it may see.
	 */
	struct downer owners[DAEMON_MAX_OWNERS];
	size_t nowners;
	bool owners_known;		/* false: none written yet, or too many kinds */
	/* the start-up restore */
	time_t rest_time;
	/*
	 * "done" (read pages), "budget", "cached" (all it wanted was), "empty"
	 * (the snapshot wanted nothing), "nothing-read" (its files are gone or
	 * changed), "failed", "timeout", "no-snapshot", "no-cgroup" (the
	 * service's cgroup did not appear within cgroup-wait): a restore that
	 * read nothing is never "done"
	 */
	const char *rest_result;
	double rest_secs;
	uint64_t rest_pages, rest_read;
	/* the lock set */
	pid_t lock_pid;
	double lock_retry;		/* monotonic time to try again; 0: no */
	int lock_fd;			/* its child's reports; -1: none */
	union {
		char lock_raw[sizeof(struct daemon_lock_report)];	/* one being read */
		struct daemon_lock_report lock_in;
	};
	size_t lock_len;
	struct daemon_lock_report lock;	/* the last whole one; state 0: none yet */
	const char *state;		/* "idle", "snapshot", "restore", "queued", "waiting" */
};

struct job {
	enum job_kind kind;
	char name[72];
	pid_t pid;
	int fd;				/* its result (struct daemon_job_result) */
	union {
		char raw[sizeof(struct daemon_job_result) + 1];	/* one byte more: too long */
		struct daemon_job_result res;
	};
	size_t len;
	pid_t snap_pid;			/* a snapshot's: the process of pid-file, or 0 */
	double snap_guard;		/* and its guard */
	double t0;
	time_t wall0;
	double deadline;		/* SIGTERM it then (the service's timeout) */
	double stop_due;		/* and at stop, then (its share); 0: none */
	double killed;			/* when it was sent SIGTERM; 0: not */
	bool sigkilled;			/* and SIGKILL, KILL_GRACE later */
};

static struct {
	struct dconf conf;
	struct svc *svc;
	size_t nsvc;
	int sfd;			/* signalfd */
	int lfd;			/* the listening socket */
	int ifd;			/* inotify: cgroups waited for; -1 none */
	double cg_next_check;		/* and looked at again then (bare names, missed events) */
	char sock_path[108];
	struct job job;
	/* the queue: service names and kinds, in order */
	struct { char name[72]; enum job_kind kind; } q[2 * DAEMON_MAX_SERVICES];
	size_t nq;
	bool ready, stopping, hurry;
	double stop_by;			/* SIGTERM: final snapshots end by then */
	double last_extend;
	bool journal;			/* stderr is the journal: <N> prefixes */
	pid_t self;
	bool quiet_pidfile;		/* the pid-file warning said once */
	bool quiet_fuse;		/* and the one of a pid-file on FUSE */
	bool quiet_link;		/* and the one of a user's link on its way */
} D = { .sfd = -1, .lfd = -1, .ifd = -1, .job = { .fd = -1 } };

/* ---- logging and sd_notify ------------------------------------------------ */

static void dlog(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dlog(int prio, const char *fmt, ...)
{
	char msg[1024], *esc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	esc = out_escape(msg);	/* names in it cannot forge a line */
	if (D.journal) {
		fprintf(stderr, "<%d>%s\n", prio, esc ? esc : msg);
	} else {
		char ts[32];
		time_t now = time(NULL);
		struct tm tm;

		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
		fprintf(stderr, "%s pagecache daemon: %s%s\n", ts,
			prio <= 3 ? "error: " : prio == 4 ? "warning: " : "", esc ? esc : msg);
	}
	free(esc);
}
#define LOG_ERR 3
#define LOG_WARN 4
#define LOG_INFO 6

/* stderr is the journal's stream when JOURNAL_STREAM names its dev:ino */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(2, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* sd_notify: one datagram to $NOTIFY_SOCKET (a path, or @abstract); no-op without it */
static void notify(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void notify(const char *fmt, ...)
{
	const char *e = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[512];
	size_t len;
	va_list ap;
	int fd;

	if (!e || (e[0] != '/' && e[0] != '@') || (len = strlen(e)) >= sizeof(sa.sun_path) || len < 2)
		return;
	memcpy(sa.sun_path, e, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, msg, strlen(msg), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len)) < 0)
		dlog(LOG_WARN, "sd_notify: %s", strerror(errno));
	close(fd);
}

/* ---- services ------------------------------------------------------------- */

static struct svc *svc_find(const char *name)
{
	for (size_t i = 0; i < D.nsvc; i++)
		if (D.svc[i].c && !strcmp(D.svc[i].c->name, name))	/* NULL: carried by adopt() */
			return &D.svc[i];
	return NULL;
}

/*
 * Is the service running? 1 yes, 0 no, -1 unknown (paths only). Its
 * pid-file is read as hostile: no link followed, no FIFO opened, a
 * number and nothing else.
 */
static int svc_up(const struct dsvc *c, pid_t *ret_pid)
{
	*ret_pid = 0;
	if (c->pid_file) {
		char buf[32] = "", *end, proc[64];
		struct stat st, pst;
		long pid;
		ssize_t n = -1;
		struct pc_trusted tr;
		/*
		 * O_PATH first: a FIFO is never opened (its writer would learn
		 * when). Nothing looked up on FUSE (its server could hang the
		 * loop), and a link on the way followed only where only root
		 * could have made it: the rule below trusts a root's pid-file,
		 * which a user's link could otherwise lead to.
		 */
		int pfd = pc_path_trusted(c->pid_file, PC_TRUSTED_NO_FUSE, &tr), fd = -1;

		if (pfd == -EREMOTE && !D.quiet_fuse) {
			dlog(LOG_WARN, "[service %s]: %s is on a FUSE mount: not read (counted as "
				       "down; its server could hang the daemon)", c->name, c->pid_file);
			D.quiet_fuse = true;
		} else if (pfd == -EPERM && !D.quiet_link) {
			dlog(LOG_WARN, "[service %s]: not reading %s: the link %s is not root's, or is "
				       "in a directory others may change (counted as down)", c->name,
			     c->pid_file, tr.link);
			D.quiet_link = true;
		}
		if (pfd < 0)
			return 0;
		if (fstat(pfd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < 4096) {
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
			fd = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		}
		close(pfd);
		if (fd >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
		}
		if (n <= 0)
			return 0;
		buf[n] = 0;
		pid = strtol(buf, &end, 10);
		while (*end == '\n' || *end == ' ')
			end++;
		if (end == buf || *end || pid <= 1 || pid > 0x3fffffff)
			return 0;
		/*
		 * systemd's rule for PIDFile=: a pid-file that is not root's names
		 * only its owner's processes (a service user cannot point root's
		 * snapshot at another user's process and its files).
		 */
		snprintf(proc, sizeof(proc), "/proc/%ld", pid);
		if (stat(proc, &pst) < 0)
			return 0;
		if (st.st_uid != 0 && st.st_uid != geteuid() && pst.st_uid != st.st_uid) {
			if (!D.quiet_pidfile)
				dlog(LOG_WARN, "[service %s]: %s (uid %u) names pid %ld of uid %u: "
					       "not its owner's process, ignored", c->name, c->pid_file,
				     (unsigned)st.st_uid, pid, (unsigned)pst.st_uid);
			D.quiet_pidfile = true;
			return 0;
		}
		*ret_pid = (pid_t)pid;
		return 1;
	}
	if (c->cgroup) {
		char dir[PATH_MAX], root[64];
		int version;

		if (pc_cgroup_root(root, sizeof(root), &version) < 0 ||
		    pc_cgroup_dir(c->cgroup, dir, sizeof(dir)) < 0)
			return 0;	/* systemd removes a stopped unit's cgroup */
		return pc_cgroup_populated(dir, version) == 1;
	}
	return -1;
}

/*
 * Root writes the snapshot of others' files, and the metrics: FILE's
 * directory must be one nobody else can change (a planted link or a
 * swapped directory would steer root's writes and its restores) and no
 * FUSE mount (its server could stop answering and hang the loop, SIGTERM
 * included): root's, writable by nobody else even if sticky (a user could
 * plant FILE there first), and every directory above it root's and
 * writable by nobody else unless sticky (/var/tmp), a link on the way
 * only root's (pc_path_trusted). Looked at without asking a FUSE server
 * anything. The default snapshot directory is made 0700. false: said.
 */
static bool dir_safe(const char *file, const char *who, const char *what)
{
	char dir[PATH_MAX];
	char *slash;
	struct stat st;
	struct pc_trusted tr;
	const char *why = NULL;
	int fd;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash)
		return false;
	*slash = 0;
	if (!*dir)
		snprintf(dir, sizeof(dir), "/");
	if (!strcmp(dir, DAEMON_STATE_DIR) && mkdir(dir, 0700) < 0 && errno != EEXIST) {
		dlog(LOG_ERR, "%s: cannot make %s: %s", who, dir, strerror(errno));
		return false;
	}
	fd = pc_path_trusted(dir, PC_TRUSTED_NO_FUSE | PC_TRUSTED_FOLLOW_LAST, &tr);
	if (fd == -EREMOTE)
		why = "on a FUSE mount";
	else if (fd == -EPERM)
		why = "reached through a link others may change";
	else if (fd < 0)
		why = strerror(-fd);
	else if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode))
		why = "not a directory";
	else if (!tr.dirs_trusted || (st.st_mode & 022))
		why = "writable by others, or not root's (it or a directory above it)";
	if (fd >= 0)
		close(fd);
	if (why)
		dlog(LOG_ERR, "%s: not using %s for its %s: %s is %s", who, file, what, dir, why);
	return !why;
}

static bool snapshot_dir_safe(const struct dsvc *c)
{
	char who[96];

	snprintf(who, sizeof(who), "[service %s]", c->name);
	return dir_safe(c->snapshot, who, "snapshot") &&
	       (!c->recording || dir_safe(c->recording, who, "recording"));
}

/*
 * The metrics are written from the loop, every job: their directory is
 * held to the snapshots' rule (a user's directory, or a FUSE mount a
 * user made there, would hang the daemon at its first write, SIGTERM
 * included). Judged at start and at each SIGHUP; only root can change
 * what passed.
 */
static bool metrics_safe(const struct dconf *c)
{
	return !c->metrics || dir_safe(c->metrics, "[daemon]", "metrics");
}

/* ---- jobs ----------------------------------------------------------------- */

/* a start-up restore queued or running: not ready yet */
static bool startup_pending(void)
{
	if (D.job.kind == JOB_RESTORE)
		return true;
	for (size_t i = 0; i < D.nsvc; i++)
		if (D.svc[i].restore_pending)
			return true;
	return false;
}

static void queue(const char *name, enum job_kind kind)
{
	for (size_t i = 0; i < D.nq; i++)
		if (D.q[i].kind == kind && !strcmp(D.q[i].name, name))
			return;
	if (D.nq >= sizeof(D.q) / sizeof(D.q[0]))
		return;
	snprintf(D.q[D.nq].name, sizeof(D.q[D.nq].name), "%s", name);
	D.q[D.nq++].kind = kind;
	if (svc_find(name) && !(D.job.pid && !strcmp(D.job.name, name)))
		svc_find(name)->state = "queued";
}

/*
 * A child, before it does a job or keeps a lock set: its signals back to
 * the defaults, tied to the daemon (PR_SET_PDEATHSIG: a daemon killed
 * with -9 leaves no job or lock behind), stdin and stdout /dev/null, none
 * of the daemon's fds or systemd's variables. Exits if the daemon died
 * before the prctl.
 */
static void child_setup(void)
{
	sigset_t none;
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* ignored ones too (a daemon started in the background ignores SIGINT, SIGQUIT) */
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != D.self)	/* the daemon died before the prctl */
		_exit(127);
	if (null >= 0)
		dup2(null, 0);
	dup2(null, 1);
	if (null > 2)
		close(null);
	/* the daemon's own (a fork inherits them all): no socket or other child's pipe kept open */
	for (int *fd = (int[]){ D.lfd, D.sfd, D.ifd, D.job.fd }, k = 0; k < 4; k++)
		if (fd[k] >= 0)
			close(fd[k]);
	for (size_t i = 0; i < D.nsvc; i++)
		if (D.svc[i].lock_fd >= 0)
			close(D.svc[i].lock_fd);
	unsetenv("NOTIFY_SOCKET");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_PID");
	unsetenv("WATCHDOG_USEC");
}

/* fork; the child does job(s, pipe's write end) and exits; *ret_fd reads its result */
static pid_t fork_job(struct svc *s, void (*job)(struct svc *s, int fd), int *ret_fd)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		child_setup();
		job(s, p[1]);	/* it exits */
		_exit(2);
	}
	close(p[1]);
	*ret_fd = p[0];
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	return pid;
}

/* ---- the snapshot job: lib/snapshot.c in a child ---------------------------- */

static void job_exit(int fd, struct daemon_job_result *res, int status) __attribute__((noreturn));

struct sjob {
	const char *name;
	uint64_t failures;		/* FAILED events */
};

static void sjob_event(const struct pc_snapshot_event *ev, void *arg)
{
	struct sjob *j = arg;

	/* said and counted as the command does (snapshot_capture counts on cli_failures) */
	if (ev->kind == PC_SNAPSHOT_FAILED) {
		j->failures++;
		cli_fail_msg(ev->path, ev->what, ev->reason);
	} else if (ev->kind == PC_SNAPSHOT_DEVICE && ev->device->err) {
		dlog(LOG_WARN, "[service %s]: metadata of '%s' not recorded: %s", j->name,
		     ev->device->file, pc_bdev_strerror(ev->device->err));
	}
}

/*
 * The child of a snapshot job: the service's files (its paths, beneath
 * its root; or the files its process and children, or its cgroup's
 * processes, use), who owns them (status's peers are judged on them), no
 * user's link to elsewhere followed, the last snapshot kept against an
 * empty or (while the service is down) much smaller one. Exit 0: written
 * or kept, 1: written, some files failed, 2: not written.
 */
static void snapshot_job(struct svc *s, int fd)
{
	const struct dsvc *c = s->c;
	struct daemon_job_result res = { .kind = JOB_SNAPSHOT };
	struct pc_snapshot_result r = { .size = sizeof(r) };
	struct sjob j = { .name = c->name };
	unsigned flags = PC_SNAPSHOT_OWNERS | PC_SNAPSHOT_SAFE_LINKS | PC_SNAPSHOT_GUARD |
			 (c->active ? 0 : PC_SNAPSHOT_NO_ACTIVE);
	struct pc_snapshot *snap;
	struct targets t;
	char num[32];
	int rc;

	prctl(PR_SET_NAME, "pc-snapshot");	/* what ps and pgrep call it: no exec names it */
	targets_init(&t);
	/* a service that is down has no cgroup: an empty snapshot, which the guard keeps out */
	t.cgroup_gone_empty = true;
	if (!c->npaths && D.job.snap_pid) {
		snprintf(num, sizeof(num), "%d", (int)D.job.snap_pid);
		targets_opt(&t, OPT_PID, num);
		targets_opt(&t, OPT_CHILDREN, NULL);
	} else if (!c->npaths) {
		targets_opt(&t, OPT_CGROUP, c->cgroup);
	}
	if (targets_finish(&t, (int)c->npaths, c->paths) < 0)
		job_exit(fd, &res, 2);
	rc = pc_profile_check_target(c->snapshot);	/* before the walk, not after it */
	if (rc < 0) {
		dlog(LOG_ERR, "[service %s]: cannot write snapshot '%s': %s", c->name, c->snapshot,
		     cli_snapshot_target_why(c->snapshot, -rc));
		job_exit(fd, &res, 2);
	}
	rc = pc_snapshot_begin(&(struct pc_snapshot_opts){
		.size = sizeof(struct pc_snapshot_opts), .flags = flags, .root = c->root ? c->root : "/",
		.guard = D.job.snap_guard, .event = sjob_event, .arg = &j,
	}, &snap);
	if (rc < 0) {
		dlog(LOG_ERR, "[service %s]: cannot snapshot beneath '%s': %s", c->name,
		     c->root ? c->root : "/", strerror(-rc));
		job_exit(fd, &res, 2);
	}
	snapshot_capture(&t, flags, snap, c->snapshot, &j.failures, &r);
	if (r.kept)
		res.flags |= DJR_KEPT;
	else if (r.err < 0 && r.err != -ENODATA)
		dlog(LOG_ERR, "[service %s]: cannot write snapshot '%s': %s", c->name, c->snapshot,
		     cli_snapshot_target_why(c->snapshot, -r.err));
	if (r.written)
		res.flags |= DJR_WRITTEN;
	if (!r.owners_many) {
		res.flags |= DJR_OWNERS;
		res.nowners = r.nowners < DAEMON_MAX_OWNERS ? (uint32_t)r.nowners : DAEMON_MAX_OWNERS;
		for (uint32_t k = 0; k < res.nowners; k++)
			res.owners[k] = (struct downer){ r.owners[k].uid, r.owners[k].gid,
							 r.owners[k].w & (S_IWGRP | S_IWOTH) };
	}
	res.files = r.files;
	res.pages = r.pages;
	res.bytes = r.bytes;
	res.previous_pages = r.previous_pages > 0 ? (uint64_t)r.previous_pages : 0;
	targets_release(&t);
	job_exit(fd, &res, r.written ? (cli_failures() || j.failures ? 1 : 0) : r.kept ? 0 : 2);
}

/* ---- the restore job: lib/restore.c in a child ------------------------------ */

/* skipped files named in the log, then only counted (a tree that is gone) */
#define SKIP_LOG 20

struct rjob {
	const char *name;
	unsigned nskipped;
};

static void rjob_skip(void *arg, const char *path, enum pc_restore_skip kind, const char *why)
{
	struct rjob *j = arg;

	(void)kind;
	if (j->nskipped++ < SKIP_LOG)
		dlog(LOG_WARN, "[service %s]: skipping '%s': %s", j->name, path, why);
}

static void rjob_error(void *arg, const char *path, const char *what, int err, const char *why)
{
	struct rjob *j = arg;

	dlog(LOG_ERR, "[service %s]: %s '%s': %s", j->name, what, path, why ? why : strerror(err));
}

static void rjob_warn(void *arg, const char *msg)
{
	struct rjob *j = arg;

	dlog(LOG_WARN, "[service %s]: %s", j->name, msg);
}

/* write the result whole (a pipe takes it in one write: it is under PIPE_BUF) and exit */
static void job_exit(int fd, struct daemon_job_result *res, int status)
{
	_Static_assert(sizeof(*res) <= PIPE_BUF, "a job's result fits one pipe write");
	res->magic = DAEMON_JOB_MAGIC;
	res->version = DAEMON_JOB_VERSION;
	res->size = sizeof(*res);
	if (write(fd, res, sizeof(*res)) != (ssize_t)sizeof(*res))
		status = 2;
	_exit(status);
}

/*
 * The child of a restore job: join the service's memory cgroup (the
 * pages are charged to the process that reads), restore within its
 * budget, and say how it went. Exit 0: all restored, 1: partly, 2: not.
 */
static void restore_job(struct svc *s, int fd)
{
	const struct dsvc *c = s->c;
	struct daemon_job_result res = { .kind = JOB_RESTORE };
	struct pc_restore_opts o = PC_RESTORE_OPTS_INIT;
	struct rjob j = { .name = c->name };
	struct cli_budget bo = CLI_BUDGET_INIT;
	const struct pc_restore_result *t;
	struct pc_restore *r;
	const char *in[2];
	size_t nin = 0;
	int rc;

	prctl(PR_SET_NAME, "pc-restore");	/* what ps and pgrep call it: no exec names it */
	if (c->cgroup) {
		char dir[4096], why[1024];

		rc = pc_cgroup_resolve(c->cgroup, dir, sizeof(dir), why, sizeof(why));
		if (rc >= 0 && (rc = pc_cgroup_enter(dir, getpid())) < 0)
			snprintf(why, sizeof(why), "%s", strerror(-rc));
		if (rc < 0) {
			dlog(LOG_ERR, "[service %s]: cannot join memory cgroup '%s': %s", c->name,
			     c->cgroup, why);
			job_exit(fd, &res, 2);
		}
	}
	/* the configuration's budget, checked when it was read */
	if ((c->max_mem && cli_budget_value(&bo, "max-mem", c->max_mem) < 0) ||
	    (c->rate && cli_budget_value(&bo, "rate", c->rate) < 0))
		job_exit(fd, &res, 2);
	/*
	 * root = DIR: reached as the snapshot job reaches its paths, a link
	 * followed only where nobody but root could have made it (a user who
	 * owns a directory on the way must not point root's restore at root's
	 * own private files); the engine then works beneath that very fd
	 */
	if (c->root) {
		struct pc_trusted tr;

		o.root_fd = pc_path_trusted(c->root, PC_TRUSTED_FOLLOW_LAST | PC_TRUSTED_NO_FUSE, &tr);
		if (o.root_fd == -EPERM)
			dlog(LOG_ERR, "[service %s]: not restoring beneath '%s': the link %s is not "
				      "root's, or is in a directory others may change", c->name, c->root,
			     tr.link);
		else if (o.root_fd < 0)
			dlog(LOG_ERR, "[service %s]: not restoring beneath '%s': %s", c->name, c->root,
			     strerror(-o.root_fd));
		if (o.root_fd < 0)
			job_exit(fd, &res, 2);
	}
	o.root = c->root;
	o.max_mem = bo.max_mem;
	o.reserve = bo.reserve;
	o.rate = bo.rate;
	o.on_skip = rjob_skip;
	o.on_error = rjob_error;
	o.on_warn = rjob_warn;
	o.arg = &j;
	/* with a recording of the service's start: both, merged (what the start reads elsewhere) */
	if (s->restore_snap)
		in[nin++] = c->snapshot;
	if (s->restore_rec)
		in[nin++] = c->recording;
	if (!nin || pc_restore_open_many(in, nin, &o, &r) < 0)
		job_exit(fd, &res, 2);
	rc = pc_restore_run(r);
	t = pc_restore_totals(r);
	if (j.nskipped > SKIP_LOG)
		dlog(LOG_WARN, "[service %s]: and %u more files skipped", c->name,
		     j.nskipped - SKIP_LOG);
	res.want = t->pages;
	res.cached = t->cached_before;
	res.read = t->read;
	res.failures = t->failures;
	res.flags = t->budget_stopped ? DJR_BUDGET : 0;
	pc_restore_free(r);
	job_exit(fd, &res, rc < 0 ? 2 : rc);
}

/* at stop: when a final snapshot started now must end (its share of what is left) */
static double stop_share(size_t left)
{
	double now = pc_now(), share = (D.stop_by - now) / (double)(left ? left : 1) -
					 KILL_GRACE - GONE_GRACE;

	return now + (share > STOP_MIN_SHARE ? share : STOP_MIN_SHARE);
}

/*
 * The start-up restore of a service whose memory cgroup is not there yet
 * (ordered After=pagecache.service, it starts once we are ready): it
 * waits for the cgroup, up to cgroup-wait, without holding READY=1 (the
 * service waits for that) or the other services' jobs, and reads into
 * the cgroup once it appears, so the pages are charged where the service
 * will want them. The cgroup's parent directory is watched with inotify
 * (the nearest one there is: the slice may come later too); a bare name,
 * which may appear anywhere, is looked for every CG_RECHECK seconds, as
 * everything waited for is (an event missed is not a restore lost).
 */
#define CG_RECHECK 5

static void cg_watch_all(void);

/* true: its restore is not started now (waiting, or given up: said) */
static bool cg_missing(struct svc *s)
{
	char dir[PATH_MAX], why[512];
	double now = pc_now();
	int rc = pc_cgroup_resolve(s->c->cgroup, dir, sizeof(dir), why, sizeof(why));

	if (rc != -ENOENT)
		return false;	/* there, or another problem: the restore says it */
	if (!s->cg_until)
		s->cg_until = now + s->c->cgroup_wait;
	if (now < s->cg_until && !D.stopping) {
		if (!s->cg_waiting)
			dlog(LOG_INFO, "[service %s]: its memory cgroup '%s' is not there yet: its "
				       "restore waits up to %.0f s for it, then reads into it", s->c->name,
			     s->c->cgroup, s->cg_until - now);
		s->cg_waiting = true;
		s->state = "waiting";
		D.cg_next_check = now + CG_RECHECK;
		cg_watch_all();
		return true;
	}
	s->cg_waiting = false;
	s->rest_time = time(NULL);
	s->rest_result = "no-cgroup";
	s->rest_pages = s->rest_read = 0;
	dlog(LOG_WARN, "[service %s]: not restored: its memory cgroup is not there%s (%s)",
	     s->c->name, s->c->cgroup_wait ? " after cgroup-wait" : " (cgroup-wait = 0)", why);
	return true;
}

/* a watch on the nearest directory of each cgroup waited for; none waited: none */
static void cg_watch_all(void)
{
	bool any = false;

	for (size_t i = 0; i < D.nsvc; i++) {
		char dir[PATH_MAX];

		if (!D.svc[i].cg_waiting)
			continue;
		any = true;
		if (D.ifd < 0)
			D.ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (D.ifd >= 0 && pc_cgroup_watch_dir(D.svc[i].c->cgroup, dir, sizeof(dir)) == 0)
			inotify_add_watch(D.ifd, dir, IN_CREATE | IN_MOVED_TO | IN_ONLYDIR);
	}
	if (!any && D.ifd >= 0) {
		close(D.ifd);
		D.ifd = -1;
	}
}

static void queue(const char *name, enum job_kind kind);
static void set_status(void);

/* an event, or CG_RECHECK passed: a cgroup that appeared gets its restore */
static void cg_check(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	double now = pc_now();

	while (D.ifd >= 0 && read(D.ifd, buf, sizeof(buf)) > 0)
		;
	cg_watch_all();	/* first: what appears from now on is an event */
	for (size_t i = 0; i < D.nsvc; i++) {
		struct svc *s = &D.svc[i];
		char dir[PATH_MAX];

		if (!s->cg_waiting)
			continue;
		if (pc_cgroup_dir(s->c->cgroup, dir, sizeof(dir)) == 0) {
			s->cg_waiting = false;
			dlog(LOG_INFO, "[service %s]: its memory cgroup is there (%s): restoring into it",
			     s->c->name, dir);
			queue(s->c->name, JOB_RESTORE);
		} else if (now >= s->cg_until) {
			cg_missing(s);	/* said, and given up */
			s->state = "idle";
		}
	}
	cg_watch_all();
	D.cg_next_check = now + CG_RECHECK;
	set_status();
}

/*
 * A file a restore job is to read: 1 a regular file root wrote and
 * nobody else may write (root reads only what root wrote; its directory
 * is checked too), 0 not there (*ret_err: why), -1 not to be read (said).
 */
static int restore_input(const struct dsvc *c, const char *path, int *ret_err)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (ret_err)
			*ret_err = errno;
		return 0;
	}
	if (!S_ISREG(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
	    (st.st_mode & 022)) {
		dlog(LOG_ERR, "[service %s]: not restoring %s: %s", c->name, path,
		     !S_ISREG(st.st_mode) ? "not a regular file" : "not root's, or writable by others");
		return -1;
	}
	return 1;
}

static void start_job(struct svc *s, enum job_kind kind)
{
	struct dsvc *c = s->c;
	pid_t pid = 0;
	int up = 0;

	if (kind == JOB_SNAPSHOT) {
		up = svc_up(c, &pid);
		if (!c->npaths && up != 1) {
			/* nothing to record: the last snapshot stays */
			s->snap_time = time(NULL);
			s->snap_result = "kept";
			dlog(LOG_INFO, "[service %s]: not running (%s %s): kept %s", c->name,
			     c->pid_file ? "pid-file" : "no process in cgroup",
			     c->pid_file ? c->pid_file : c->cgroup, c->snapshot);
			return;
		}
	} else {
		int snap, rec = 0, err;

		s->restore_pending = false;
		snap = restore_input(c, c->snapshot, &err);
		if (snap == 0 && c->recording && (rec = restore_input(c, c->recording, NULL)) > 0)
			dlog(LOG_INFO, "[service %s]: no snapshot yet (%s: %s): restoring its recording "
				       "alone", c->name, c->snapshot, strerror(err));
		if (snap == 0 && rec == 0) {
			s->rest_time = time(NULL);
			s->rest_result = "no-snapshot";
			dlog(LOG_INFO, "[service %s]: nothing to restore: %s: %s", c->name, c->snapshot,
			     strerror(err));
			return;
		}
		if (snap > 0 && c->recording && (rec = restore_input(c, c->recording, &err)) == 0)
			dlog(LOG_INFO, "[service %s]: no recording (%s: %s): restoring the snapshot "
				       "alone", c->name, c->recording, strerror(err));
		if (snap < 0 || rec < 0) {
			s->rest_time = time(NULL);
			s->rest_result = "failed";
			return;
		}
		s->restore_snap = snap > 0;
		s->restore_rec = rec > 0;
		if (c->cgroup && cg_missing(s))
			return;
	}
	D.job = (struct job){ .kind = kind, .fd = -1, .t0 = pc_now(), .wall0 = time(NULL) };
	D.job.deadline = c->timeout ? D.job.t0 + c->timeout : 0;
	if (D.stopping)
		D.job.stop_due = stop_share(D.nq + 1);
	snprintf(D.job.name, sizeof(D.job.name), "%s", c->name);
	/* empty never replaces; much smaller only while it is up */
	D.job.snap_guard = up == 1 ? 0.0 : c->guard;
	D.job.snap_pid = !c->npaths && c->pid_file ? pid : 0;
	D.job.pid = fork_job(s, kind == JOB_RESTORE ? restore_job : snapshot_job, &D.job.fd);
	if (D.job.pid < 0) {
		dlog(LOG_ERR, "[service %s]: cannot start %s: %s", c->name,
		     kind == JOB_RESTORE ? "restore" : "snapshot", strerror(errno));
		D.job.pid = 0;
		D.job.kind = JOB_NONE;
		return;
	}
	s->state = kind == JOB_SNAPSHOT ? "snapshot" : "restore";
	dlog(LOG_INFO, "[service %s]: %s started (pid %d)", c->name,
	     kind == JOB_SNAPSHOT ? "snapshot" : "restore", (int)D.job.pid);
}

static void write_metrics(void);

/* The child's result, if it wrote one whole, of this version and kind; else NULL. */
static const struct daemon_job_result *job_result(enum job_kind kind)
{
	const struct daemon_job_result *r = &D.job.res;

	if (D.job.len != sizeof(*r) || r->magic != DAEMON_JOB_MAGIC ||
	    r->version != DAEMON_JOB_VERSION || r->size != sizeof(*r) || r->kind != (uint32_t)kind)
		return NULL;
	return r;
}

static void job_done(int status)
{
	struct svc *s = svc_find(D.job.name);
	double secs = pc_now() - D.job.t0;
	bool ok = WIFEXITED(status) && WEXITSTATUS(status) <= 1;

	if (!s) {	/* removed by a reload while it ran */
		D.job.kind = JOB_NONE;
		return;
	}
	s->state = "idle";
	if (D.job.killed) {	/* past its timeout, or the stop's */
		if (D.stopping && D.job.kind == JOB_SNAPSHOT)
			dlog(LOG_ERR, "[service %s]: its final snapshot was not taken (out of its "
				      "share of the stop's time): %s is the last one", s->c->name,
			     s->c->snapshot);
		if (D.job.kind == JOB_SNAPSHOT) {
			s->snapshots++;
			s->snap_failures++;
			s->snap_time = D.job.wall0;
			s->snap_secs = secs;
			s->snap_result = "timeout";
		} else {
			s->rest_time = D.job.wall0;
			s->rest_secs = secs;
			s->rest_result = "timeout";
		}
		D.job.kind = JOB_NONE;
		write_metrics();
		return;
	}
	if (D.job.kind == JOB_SNAPSHOT) {
		const struct daemon_job_result *res = job_result(JOB_SNAPSHOT);

		/* the next one an interval after this one ended, not after it began */
		if (s->c->interval && s->due > 0) {
			s->due = pc_now() + s->c->interval;
			s->due_wall = time(NULL) + s->c->interval;
		}

		s->snapshots++;
		s->snap_time = D.job.wall0;
		s->snap_secs = secs;
		if (ok && res && (res->flags & DJR_WRITTEN)) {
			s->snap_result = "written";
			s->snap_files = res->files;
			s->snap_pages = res->pages;
			s->snap_bytes = res->bytes;
			/* who owns what it read; unknown (root's alone to see) where too many */
			s->owners_known = res->flags & DJR_OWNERS;
			s->nowners = s->owners_known && res->nowners <= DAEMON_MAX_OWNERS ? res->nowners : 0;
			memcpy(s->owners, res->owners, s->nowners * sizeof(*s->owners));
			dlog(LOG_INFO, "[service %s]: snapshot written: %llu files, %llu pages in %.1f s%s",
			     s->c->name, (unsigned long long)s->snap_files,
			     (unsigned long long)s->snap_pages, secs,
			     WEXITSTATUS(status) ? " (some files failed: above)" : "");
		} else if (ok && res && (res->flags & DJR_KEPT)) {
			s->snap_result = "kept";
			dlog(LOG_INFO, "[service %s]: kept the last snapshot (%llu pages): the new one "
				       "was empty or much smaller while the service is down",
			     s->c->name, (unsigned long long)res->previous_pages);
		} else {
			s->snap_result = "failed";
			s->snap_failures++;
			dlog(LOG_ERR, "[service %s]: snapshot failed (%s %d)", s->c->name,
			     WIFEXITED(status) ? "exit" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		}
	} else {
		const struct daemon_job_result *res = job_result(JOB_RESTORE);

		s->rest_time = D.job.wall0;
		s->rest_secs = secs;
		s->rest_pages = 0;
		if (ok && res) {
			bool stopped = res->flags & DJR_BUDGET;

			s->rest_read = res->read;
			s->rest_pages = res->want;
			/* what it read says it: nothing read is never "done" */
			s->rest_result = stopped		? "budget"
					 : s->rest_read	? "done"
					 : res->failures	? "failed"
					 : !s->rest_pages	? "empty"
					 : res->cached >= s->rest_pages ? "cached"
									: "nothing-read";
			dlog(!s->rest_read && res->failures ? LOG_ERR : LOG_INFO,
			     "[service %s]: restore %s: %llu pages wanted, %llu already cached, "
			     "%llu read, in %.1f s%s", s->c->name, s->rest_result,
			     (unsigned long long)s->rest_pages, (unsigned long long)res->cached,
			     (unsigned long long)s->rest_read, secs,
			     stopped ? ", stopped at the memory budget" : "");
		} else {
			s->rest_result = "failed";
			dlog(LOG_ERR, "[service %s]: restore failed (%s %d)", s->c->name,
			     WIFEXITED(status) ? "exit" : "signal",
			     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		}
	}
	D.job.kind = JOB_NONE;
	write_metrics();
}

/* ---- lock sets: lib/lockset.c in a child, one a service ------------------- */

/* how the set stands, to the daemon: dropped where the pipe is full (the next one says it all) */
static void ljob_report(const struct lock_report *r, void *arg)
{
	const int *fd = arg;
	uint64_t ps = pc_page_size();
	struct daemon_lock_report rep = {
		.magic = DAEMON_JOB_MAGIC, .version = DAEMON_LOCK_VERSION, .size = sizeof(rep),
		.kind = JOB_LOCK, .flags = r->budget_stopped ? DJR_BUDGET : 0, .status = r->status,
		.files = r->files, .pages = (r->bytes + ps - 1) / ps, .holes = r->holes,
		.relocks = r->relocks, .released = r->released, .rescans = r->rescans,
		.refusals = r->refusals, .failures = r->failures,
	};

	_Static_assert(sizeof(rep) <= PIPE_BUF, "a lock's report fits one pipe write");
	rep.state = r->state == LOCK_LOCKED ? DLS_LOCKED : r->state == LOCK_WATCHING ? DLS_WATCHING
										       : DLS_RELEASED;
	/* EAGAIN (the daemon is behind) or EPIPE (it reads no more): dropped */
	if (write(*fd, &rep, sizeof(rep)) < 0)
		return;
}

/*
 * The child of a lock set: the service's lock = paths kept locked as
 * `lock --watch --max-mem LOCK-MAX` keeps them (cmd-lock.c, on
 * lib/lockset.c; its messages in the daemon's log), until the daemon
 * stops it (SIGTERM) or dies (PR_SET_PDEATHSIG); how the set stands goes
 * to the daemon through fd. Exit: lock's status (1: nothing held).
 */
static void lock_job(struct svc *s, int fd)
{
	int rc;

	prctl(PR_SET_NAME, "pc-lock");	/* what ps and pgrep call it: no exec names it */
	/* a daemon that reads slowly or no more is no reason to block or to let go */
	signal(SIGPIPE, SIG_IGN);
	fcntl(fd, F_SETFL, O_NONBLOCK);
	out_prom_opts(false, NULL);	/* the daemon's metrics file is not lock's output */
	rc = lock_watch_run(&(struct lock_watch){
		.paths = s->c->lock, .npaths = s->c->nlock, .max_mem = s->c->lock_max,
		.report = ljob_report, .arg = &fd,
	});
	fflush(stdout);
	_exit(rc);
}

static void lock_start(struct svc *s)
{
	if (!s->c->nlock || s->lock_pid || s->refused)
		return;
	s->lock = (struct daemon_lock_report){ 0 };
	s->lock_len = 0;
	s->lock_pid = fork_job(s, lock_job, &s->lock_fd);
	s->lock_retry = 0;
	if (s->lock_pid < 0) {
		dlog(LOG_ERR, "[service %s]: cannot start its lock: %s", s->c->name, strerror(errno));
		s->lock_pid = 0;
		s->lock_retry = pc_now() + 60;
	} else {
		dlog(LOG_INFO, "[service %s]: locking %zu paths (pid %d)", s->c->name, s->c->nlock,
		     (int)s->lock_pid);
	}
}

static void lock_stop(struct svc *s)
{
	if (s->lock_pid > 0)
		kill(s->lock_pid, SIGTERM);
}

/* its pipe no longer read: the child's reports go nowhere (it goes on) */
static void lock_close(struct svc *s)
{
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	s->lock_fd = -1;
	s->lock_len = 0;
}

/* A lock child's report, if it is one of this version and kind. */
static bool lock_report_ok(const struct daemon_lock_report *r)
{
	return r->magic == DAEMON_JOB_MAGIC && r->version == DAEMON_LOCK_VERSION &&
	       r->size == sizeof(*r) && r->kind == JOB_LOCK && r->state >= DLS_LOCKED &&
	       r->state <= DLS_RELEASED;
}

/*
 * What a lock child wrote: each whole report taken, the last one kept,
 * the first walk's figures logged. At the pipe's end, or at something
 * that is not a report, the pipe is closed (its exit says the rest).
 */
static void lock_read(struct svc *s)
{
	while (s->lock_fd >= 0) {
		ssize_t n = read(s->lock_fd, s->lock_raw + s->lock_len,
				 sizeof(s->lock_raw) - s->lock_len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			lock_close(s);
			return;
		}
		s->lock_len += (size_t)n;
		if (s->lock_len < sizeof(s->lock_raw))
			continue;
		s->lock_len = 0;
		if (!lock_report_ok(&s->lock_in)) {
			dlog(LOG_ERR, "[service %s]: its lock (pid %d) wrote what is not a report of "
				      "this version: not read any more", s->c->name, (int)s->lock_pid);
			lock_close(s);
			return;
		}
		if (s->lock_in.state == DLS_LOCKED && s->lock_in.files)
			dlog(LOG_INFO, "[service %s]: its lock holds %llu files, %llu pages%s%s",
			     s->c->name, (unsigned long long)s->lock_in.files,
			     (unsigned long long)s->lock_in.pages,
			     s->lock_in.failures ? "; some paths failed (above)" : "",
			     s->lock_in.flags & DJR_BUDGET ? "; the memory budget stopped it" : "");
		s->lock = s->lock_in;
	}
}

/* ---- the configuration ----------------------------------------------------- */

/* take a new configuration: state carries over by name */
static void adopt(struct dconf *nc, bool startup)
{
	struct svc *ns = calloc(nc->nsvc ? nc->nsvc : 1, sizeof(*ns));
	double now = pc_now();

	if (!ns) {
		dlog(LOG_ERR, "out of memory: keeping the running configuration");
		dconf_free(nc);
		return;
	}
	for (size_t i = 0; i < nc->nsvc; i++) {
		struct dsvc *c = &nc->svc[i];
		struct svc *old = svc_find(c->name);
		bool rewait = false;

		if (old) {
			ns[i] = *old;
			/*
			 * a restore waiting for its cgroup waits on only for the
			 * same cgroup; else (no cgroup = any more, another one, no
			 * restore) its wait ends here and it is queued again: the
			 * wait was for a name the running file no longer has
			 */
			if (old->cg_waiting && !(c->restore && c->cgroup && old->c->cgroup &&
						 !strcmp(c->cgroup, old->c->cgroup))) {
				ns[i].cg_waiting = false;
				ns[i].cg_until = 0;
				ns[i].state = "idle";
				rewait = c->restore;
			}
			if (old->lock_pid && !dsvc_same_lock(old->c, c))
				lock_stop(old);	/* reaped below; a new one starts */
			if (old->c->interval != c->interval)
				ns[i].due = 0;
			if (!dsvc_same_lock(old->c, c)) {
				ns[i].lock_pid = 0;
				lock_close(&ns[i]);	/* its last reports are of the old set */
			}
			old->c = NULL;	/* carried */
		} else {
			ns[i] = (struct svc){ .state = "idle", .lock_fd = -1 };
		}
		ns[i].c = c;
		ns[i].refused = !snapshot_dir_safe(c);
		if (ns[i].refused) {
			ns[i].restore_pending = false;
			ns[i].cg_waiting = false;
			ns[i].state = "idle";
		} else if (rewait) {
			queue(c->name, JOB_RESTORE);
			ns[i].state = "queued";	/* queue() marked the old one */
		}
		if (c->interval && !ns[i].due) {
			ns[i].due = now + c->interval;
			ns[i].due_wall = time(NULL) + c->interval;
		}
		if (!c->interval)
			ns[i].due = 0;
		if (startup && c->restore && !ns[i].refused)
			ns[i].restore_pending = true;
	}
	for (size_t i = 0; i < D.nsvc; i++)
		if (D.svc[i].c) {	/* gone from the file */
			lock_stop(&D.svc[i]);
			lock_close(&D.svc[i]);
			if (D.job.pid > 0 && !strcmp(D.job.name, D.svc[i].c->name))
				kill(D.job.pid, SIGTERM);	/* reaped; its result dropped */
			dlog(LOG_INFO, "[service %s]: removed", D.svc[i].c->name);
		}
	/* lock children of removed or changed sets are reaped by pid later */
	free(D.svc);
	dconf_free(&D.conf);
	D.conf = *nc;
	D.svc = ns;
	D.nsvc = nc->nsvc;
	/* the services now point into D.conf */
	for (size_t i = 0; i < D.nsvc; i++)
		D.svc[i].c = &D.conf.svc[i];
}

/* ---- the status socket ------------------------------------------------------ */

static int listen_on(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[sizeof(sa.sun_path)], *slash;
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		dlog(LOG_ERR, "socket path too long: %s", path);
		return -1;
	}
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = 0;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
			dlog(LOG_ERR, "cannot make %s: %s", dir, strerror(errno));
			return -1;
		}
		/* nobody else may swap the socket out from under its clients */
		if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) ||
		    (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022)) {
			dlog(LOG_ERR, "not listening in %s: not a directory of ours, or writable by others",
			     dir);
			return -1;
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	if (lstat(path, &st) == 0) {
		int probe;

		if (!S_ISSOCK(st.st_mode)) {
			dlog(LOG_ERR, "%s exists and is not a socket: not replacing it", path);
			close(fd);
			return -1;
		}
		probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			dlog(LOG_ERR, "another daemon answers on %s", path);
			close(probe);
			close(fd);
			return -1;
		}
		if (probe >= 0)
			close(probe);
		unlink(path);	/* a stale one, left by a daemon killed with -9 */
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0666) < 0 ||
	    listen(fd, 16) < 0) {
		dlog(LOG_ERR, "cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	snprintf(D.sock_path, sizeof(D.sock_path), "%s", path);
	return fd;
}

/*
 * Which services may this peer see? Root: all. Anyone else: those that
 * name paths (no pid-file or cgroup: their files are a process's) and
 * whose last written snapshot read only files the peer may see, judged
 * on what that snapshot recorded of each file it read (the fstat of the
 * very fd: a link swapped in for one snapshot is judged as what it led
 * to). The rule approximates mincore's and cachestat's (the owner, or
 * who may open the file for writing) and is never more permissive: the
 * owner; else, where the peer's gid or groups hold the file's group, the
 * group write bit; else the other write bit; those bits only where no ACL,
 * read-only mount or immutable flag has a say (snapshot --owners zeroes
 * them there). No path is looked at here, as the peer or as root: a
 * user's hung filesystem cannot stop the daemon through its status.
 */
static bool in_groups(gid_t g, gid_t gid, const gid_t *groups, int n)
{
	if (g == gid)
		return true;
	for (int i = 0; i < n; i++)
		if (groups[i] == g)
			return true;
	return false;
}

static bool visible(int cfd, bool *ret)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	gid_t groups[256];
	socklen_t glen = sizeof(groups);
	int ngroups;

	memset(ret, 0, D.nsvc * sizeof(*ret));
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len) < 0)
		return false;
	if (cr.uid == 0) {
		memset(ret, 1, D.nsvc * sizeof(*ret));
		return true;
	}
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) < 0)
		return false;	/* too many groups, or none known: nothing shown */
	ngroups = (int)(glen / sizeof(gid_t));
	for (size_t i = 0; i < D.nsvc; i++) {
		const struct svc *s = &D.svc[i];
		bool ok = s->c->npaths > 0 && s->owners_known && s->nowners > 0;

		for (size_t k = 0; ok && k < s->nowners; k++) {
			const struct downer *o = &s->owners[k];

			ok = o->uid == cr.uid ||
			     (o->w & (in_groups(o->gid, cr.gid, groups, ngroups) ? S_IWGRP : S_IWOTH));
		}
		ret[i] = ok;
	}
	return false;
}

/* did the start-up restore run (so its figures mean something)? */
static bool rest_ran(const struct svc *s)
{
	return strcmp(s->rest_result, "no-snapshot") && strcmp(s->rest_result, "no-cgroup");
}

static void put_u64(FILE *o, bool have, uint64_t v)
{
	if (have)
		fprintf(o, "\t%llu", (unsigned long long)v);
	else
		fputs("\t-", o);
}

static void put_f64(FILE *o, bool have, double v)
{
	if (have)
		fprintf(o, "\t%.3f", v);
	else
		fputs("\t-", o);
}

static void put_str(FILE *o, const char *s)
{
	fputc('\t', o);
	dwire_put(o, s);
}

static void serve(void)
{
	int cfd = accept4(D.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	bool *see, root;
	char *buf = NULL;
	size_t len = 0;
	FILE *o;

	if (cfd < 0)
		return;
	see = calloc(D.nsvc ? D.nsvc : 1, sizeof(*see));
	o = open_memstream(&buf, &len);
	if (!see || !o) {
		free(see);
		if (o)
			fclose(o);
		free(buf);
		close(cfd);
		return;
	}
	root = visible(cfd, see);
	fprintf(o, "pagecache-status 1\nfields");
	for (size_t i = 0; i < ndfields; i++)
		fprintf(o, "\t%s", dfields[i].name);
	fputc('\n', o);
	for (size_t i = 0; i < D.nsvc; i++) {
		struct svc *s = &D.svc[i];
		pid_t pid;
		int up;
		bool rest, figs;

		if (!see[i])
			continue;
		up = svc_up(s->c, &pid);
		dwire_put(o, s->c->name);
		put_str(o, s->refused ? "refused" : s->state);
		if (up < 0)
			fputs("\t-", o);
		else
			fprintf(o, "\t%s", up ? "yes" : "no");
		put_str(o, s->c->snapshot);
		put_u64(o, true, s->c->interval);
		put_u64(o, s->snap_result, (uint64_t)s->snap_time);
		put_str(o, s->snap_result);
		put_u64(o, s->snap_result && s->snap_files, s->snap_files);
		put_u64(o, s->snap_result && s->snap_files, s->snap_pages);
		put_u64(o, s->snap_result && s->snap_files, s->snap_bytes);
		put_f64(o, s->snap_result && s->snapshots, s->snap_secs);
		put_u64(o, s->due > 0 && !s->refused, (uint64_t)s->due_wall);
		put_u64(o, true, s->snapshots);
		put_u64(o, true, s->snap_failures);
		/*
		 * The start-up restore read the previous run's snapshot, whose
		 * owners were never judged (they are this run's): root's alone.
		 */
		rest = root && s->rest_result;
		figs = rest && rest_ran(s);
		put_u64(o, rest, (uint64_t)s->rest_time);
		put_str(o, rest ? s->rest_result : NULL);
		put_f64(o, figs, s->rest_secs);
		put_u64(o, figs, s->rest_pages);
		put_u64(o, figs, s->rest_read);
		put_u64(o, figs, s->rest_read * pc_page_size());
		if (s->c->nlock)
			fprintf(o, "\t%s", s->lock_pid > 0 ? "yes" : "no");
		else
			fputs("\t-", o);
		put_u64(o, s->lock_pid > 0, (uint64_t)s->lock_pid);
		fputc('\n', o);
	}
	fprintf(o, "end\n");
	fclose(o);
	/* never blocks: a client that does not read loses its answer */
	if (buf)	/* not logged: a peer that left is no news */
		(void)send(cfd, buf, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	free(buf);
	free(see);
	close(cfd);
}

/* ---- metrics ---------------------------------------------------------------- */


static void write_metrics(void)
{
	char root[PATH_MAX];
	int version = 0;
	bool have_root = false;

	if (!D.conf.metrics)
		return;
	out_init(OUT_PROM, false, false);
	out_prom_opts(true, D.conf.metrics);
	out_prom_metrics("service", dmetrics, ndmetrics);
	out_list_declare("services");
	/* the cgroup hierarchy once a write, not once a service */
	for (size_t i = 0; i < D.nsvc && !have_root; i++)
		have_root = D.svc[i].c->cgroup &&
			    pc_cgroup_root(root, sizeof(root), &version) == 0;
	for (size_t i = 0; i < D.nsvc; i++) {
		struct svc *s = &D.svc[i];
		struct orec r = { 0 };
		pid_t pid;
		int up = svc_up(s->c, &pid);

		orec_str(&r, "service", s->c->name, 0);
		if (up >= 0)
			orec_bool(&r, "up", up == 1);
		if (s->snap_result && s->snap_files) {
			orec_u64(&r, "snapshot_pages", s->snap_pages, OF_PAGES);
			orec_u64(&r, "snapshot_files", s->snap_files, 0);
		}
		if (s->snap_result)
			orec_u64(&r, "snapshot_time", (uint64_t)s->snap_time, 0);
		if (s->snapshots)
			orec_f64(&r, "snapshot_seconds", s->snap_secs);
		orec_u64(&r, "snapshots", s->snapshots, 0);
		orec_u64(&r, "snapshot_failures", s->snap_failures, 0);
		if (s->rest_result && rest_ran(s)) {
			orec_f64(&r, "restore_seconds", s->rest_secs);
			orec_u64(&r, "restore_read_pages", s->rest_read, OF_PAGES);
		}
		if (s->c->nlock)
			orec_bool(&r, "locked", s->lock_pid > 0);
		if (s->c->cgroup) {
			char dir[PATH_MAX];
			struct pc_cgroup_stat cs;

			if (have_root && pc_cgroup_dir(s->c->cgroup, dir, sizeof(dir)) == 0 &&
			    pc_cgroup_read(dir, version, &cs) == 0) {
				orec_u64(&r, "cgroup_file", cs.file, 0);
				orec_u64(&r, "cgroup_refaults", cs.refault_file, 0);
			}
		}
		out_list_add("services", &r);
	}
	if (out_flush() < 0)
		dlog(LOG_WARN, "metrics: cannot write %s (see above)", D.conf.metrics);
}

/* ---- the loop ------------------------------------------------------------- */

static void set_status(void)
{
	char st[256];
	size_t done = 0, restores = 0;

	for (size_t i = 0; i < D.nsvc; i++)
		if (D.svc[i].c->restore && !D.svc[i].refused) {
			restores++;
			done += D.svc[i].rest_result != NULL;
		}
	if (D.stopping)
		snprintf(st, sizeof(st), "Stopping: final snapshots%s%s",
			 D.job.kind ? ", now " : "", D.job.kind ? D.job.name : "");
	else if (D.job.kind == JOB_RESTORE)
		snprintf(st, sizeof(st), "Restoring %s (%zu of %zu), %.0f s", D.job.name, done + 1,
			 restores, pc_now() - D.job.t0);
	else if (D.job.kind == JOB_SNAPSHOT)
		snprintf(st, sizeof(st), "Snapshot of %s, %zu services", D.job.name, D.nsvc);
	else
		snprintf(st, sizeof(st), "Watching %zu services", D.nsvc);
	for (size_t i = 0, n = 0; i < D.nsvc; i++)
		if (D.svc[i].cg_waiting && strlen(st) + 80 < sizeof(st))
			snprintf(st + strlen(st), sizeof(st) - strlen(st), "%s%s", n++ ? ", " :
				 "; restores waiting for the cgroup of ", D.svc[i].c->name);
	notify("STATUS=%s", st);
}

static void reap(void)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (pid == D.job.pid) {
			/* the rest of its output, then its result */
			for (ssize_t n; D.job.fd >= 0 && D.job.len < sizeof(D.job.raw) &&
					(n = read(D.job.fd, D.job.raw + D.job.len,
						  sizeof(D.job.raw) - D.job.len)) > 0;)
				D.job.len += (size_t)n;
			if (D.job.fd >= 0)
				close(D.job.fd);
			D.job.fd = -1;
			D.job.pid = 0;
			job_done(status);
			set_status();
			continue;
		}
		for (size_t i = 0; i < D.nsvc; i++)
			if (D.svc[i].lock_pid == pid) {
				lock_read(&D.svc[i]);	/* its last reports */
				lock_close(&D.svc[i]);
				D.svc[i].lock_pid = 0;
				if (!D.stopping) {
					dlog(LOG_ERR, "[service %s]: its lock ended (%s %d); again in 60 s",
					     D.svc[i].c->name, WIFEXITED(status) ? "exit" : "signal",
					     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
					D.svc[i].lock_retry = pc_now() + 60;
				}
			}
	}
}

/*
 * A job still there GONE_GRACE after SIGKILL sleeps in the kernel (D
 * state: a hung filesystem, a FUSE server that stopped answering): the
 * daemon goes on without it, counted as past its time (a snapshot queued
 * or a stop is not held up by it); reap() takes it whenever it ends.
 */
static void job_abandon(void)
{
	dlog(LOG_ERR, "[service %s]: its %s (pid %d) is still there after SIGKILL (a hung "
		      "filesystem?): going on without it", D.job.name,
	     D.job.kind == JOB_SNAPSHOT ? "snapshot" : "restore", (int)D.job.pid);
	if (D.job.fd >= 0)
		close(D.job.fd);
	D.job.fd = -1;
	D.job.pid = 0;
	job_done(SIGKILL);	/* a wait status: killed by SIGKILL */
	set_status();
}

static void next_job(void)
{
	while (!D.job.kind && D.nq) {
		char name[72];
		enum job_kind kind = D.q[0].kind;
		struct svc *s;

		snprintf(name, sizeof(name), "%s", D.q[0].name);
		memmove(&D.q[0], &D.q[1], (D.nq - 1) * sizeof(D.q[0]));
		D.nq--;
		s = svc_find(name);
		if (!s || s->refused)
			continue;
		start_job(s, kind);
		if (!D.job.kind && !s->cg_waiting)	/* nothing to run after all */
			s->state = "idle";
		set_status();
	}
}

static void stop_all_locks(void)
{
	double end = pc_now() + 5;
	bool any;

	for (size_t i = 0; i < D.nsvc; i++)
		lock_stop(&D.svc[i]);
	do {
		any = false;
		reap();
		for (size_t i = 0; i < D.nsvc; i++)
			any |= D.svc[i].lock_pid > 0;
		if (any)
			usleep(20000);
	} while (any && pc_now() < end);
	for (size_t i = 0; i < D.nsvc; i++) {
		if (D.svc[i].lock_pid > 0)
			kill(D.svc[i].lock_pid, SIGKILL);
		lock_close(&D.svc[i]);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static void on_signal(void)
{
	struct signalfd_siginfo si;

	while (read(D.sfd, &si, sizeof(si)) == sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap();
			break;
		case SIGHUP: {
			struct dconf nc;

			if (D.stopping)
				break;
			notify("RELOADING=1");
			dlog(LOG_INFO, "SIGHUP: reading %s again", D.conf.path);
			if (dconf_load(D.conf.path, &nc) < 0) {
				dlog(LOG_ERR, "%s is not valid (above): keeping the running configuration",
				     D.conf.path);
			} else if (!metrics_safe(&nc)) {
				dlog(LOG_ERR, "%s: metrics = is refused (above): keeping the running "
					      "configuration", D.conf.path);
				dconf_free(&nc);
			} else {
				char *path = strdup(D.sock_path);

				if (strcmp(nc.socket, D.sock_path))
					dlog(LOG_WARN, "socket = %s takes effect at the next start", nc.socket);
				adopt(&nc, false);
				free(path);
				for (size_t i = 0; i < D.nsvc; i++)
					if (D.ready)
						lock_start(&D.svc[i]);
				write_metrics();
				dlog(LOG_INFO, "%zu services", D.nsvc);
			}
			if (D.ready)	/* else READY=1 comes when the start-up restores end */
				notify("READY=1");
			set_status();
			break;
		}
		case SIGTERM:
		case SIGINT:
			if (D.stopping) {
				dlog(LOG_WARN, "%s again: stopping now, without the rest of the final "
					       "snapshots", strsignal((int)si.ssi_signo));
				D.hurry = true;
				break;
			}
			D.stopping = true;
			notify("STOPPING=1");
			dlog(LOG_INFO, "%s: final snapshots, then stopping", strsignal((int)si.ssi_signo));
			D.nq = 0;
			D.stop_by = pc_now() + D.conf.stop_timeout;
			if (D.job.kind == JOB_RESTORE && D.job.pid > 0)
				kill(D.job.pid, SIGTERM);	/* a snapshot under way finishes */
			/* first the services whose last snapshot ended in time, then the others */
			for (size_t k = 0; k < 2 * D.nsvc; k++) {
				struct svc *s = &D.svc[k % D.nsvc];
				bool late = s->snap_result && !strcmp(s->snap_result, "timeout");
				bool restoring = D.job.kind == JOB_RESTORE &&
						 !strcmp(D.job.name, s->c->name);

				/*
				 * A service whose start-up restore did not end has
				 * a cold cache: its snapshot is what the next start
				 * needs, not what is cached now.
				 */
				if (late != (k >= D.nsvc))
					continue;
				if (s->restore_pending || restoring || s->cg_waiting) {
					dlog(LOG_INFO, "[service %s]: its restore did not end: keeping %s "
						       "as it is", s->c->name, s->c->snapshot);
					s->restore_pending = false;
					s->cg_waiting = false;
					s->state = "idle";
					continue;
				}
				if (!s->refused &&
				    !(D.job.kind == JOB_SNAPSHOT && !strcmp(D.job.name, s->c->name)))
					queue(s->c->name, JOB_SNAPSHOT);
			}
			/* a snapshot under way (hung, perhaps) gets its share too */
			if (D.job.kind == JOB_SNAPSHOT)
				D.job.stop_due = stop_share(D.nq + 1);
			set_status();
			break;
		}
	}
}

/*
 * Wait up to timeout ms for the signals, the socket, the job's pipe, the
 * lock sets' pipes and the cgroups waited for, and take what came. The
 * lock sets' reports first: a signal (SIGHUP's reload) may replace D.svc.
 * -1: poll failed (said).
 */
static int wait_events(int timeout)
{
	struct pollfd pf[4 + DAEMON_MAX_SERVICES] = {
		{ .fd = D.sfd, .events = POLLIN }, { .fd = D.lfd, .events = POLLIN },
		{ .fd = D.job.kind ? D.job.fd : -1, .events = POLLIN },
		{ .fd = D.ifd, .events = POLLIN },
	};
	struct svc *locks[DAEMON_MAX_SERVICES];
	nfds_t n = 4;

	for (size_t i = 0; i < D.nsvc && n < sizeof(pf) / sizeof(pf[0]); i++)
		if (D.svc[i].lock_fd >= 0) {
			locks[n - 4] = &D.svc[i];
			pf[n++] = (struct pollfd){ .fd = D.svc[i].lock_fd, .events = POLLIN };
		}
	if (poll(pf, n, timeout) < 0 && errno != EINTR) {
		dlog(LOG_ERR, "poll: %s", strerror(errno));
		return -1;
	}
	for (nfds_t k = 4; k < n; k++)
		if (pf[k].revents & (POLLIN | POLLHUP | POLLERR))
			lock_read(locks[k - 4]);
	if (pf[0].revents & POLLIN)
		on_signal();
	if (pf[1].revents & POLLIN)
		serve();
	if (pf[3].fd >= 0 && (pf[3].revents & POLLIN))
		cg_check();
	if (pf[2].fd >= 0 && (pf[2].revents & (POLLIN | POLLHUP))) {
		/* a byte more than a result: one that long is refused (job_result) */
		ssize_t r = D.job.len < sizeof(D.job.raw)
				    ? read(D.job.fd, D.job.raw + D.job.len, sizeof(D.job.raw) - D.job.len)
				    : 0;

		if (r > 0) {
			D.job.len += (size_t)r;
		} else if (r == 0) {
			/* the end, or too much: its exit (SIGCHLD) says the rest */
			close(D.job.fd);
			D.job.fd = -1;
		}
	}
	return 0;
}

static int run_loop(void)
{
	for (;;) {
		double now = pc_now(), wake = now + 3600;
		bool cg_wait = false;
		int timeout;

		if (D.hurry) {
			if (D.job.pid > 0) {
				kill(D.job.pid, SIGTERM);
				kill(D.job.pid, SIGCONT);
			}
			break;
		}
		if (!D.ready && !startup_pending() && !D.job.kind && !D.stopping) {
			for (size_t i = 0; i < D.nsvc; i++)
				lock_start(&D.svc[i]);
			D.ready = true;
			notify("READY=1");
			dlog(LOG_INFO, "ready: %zu services", D.nsvc);
			set_status();
			write_metrics();
		}
		if (D.stopping && !D.job.kind && !D.nq)
			break;
		if (D.stopping && now >= D.stop_by && !D.hurry) {
			char names[512] = "";

			for (size_t i = 0; i < D.nq; i++)
				snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
					 i ? ", " : ": ", D.q[i].name);
			dlog(LOG_ERR, "out of time (%u s) for the final snapshots: %zu not taken%s%s%s",
			     D.conf.stop_timeout, D.nq, names, D.job.kind ? "; stopping the one of " : "",
			     D.job.kind ? D.job.name : "");
			D.nq = 0;
			D.hurry = true;
			continue;
		}
		if (!D.stopping && D.ready) {
			for (size_t i = 0; i < D.nsvc; i++) {
				struct svc *s = &D.svc[i];

				if (s->due > 0 && s->due <= now && !s->refused) {
					queue(s->c->name, JOB_SNAPSHOT);
					s->due = now + s->c->interval;
					s->due_wall = time(NULL) + s->c->interval;
				}
				if (s->due > 0 && s->due < wake)
					wake = s->due;
				if (s->lock_retry > 0 && s->lock_retry <= now)
					lock_start(s);
				if (s->lock_retry > 0 && s->lock_retry < wake)
					wake = s->lock_retry;
			}
		}
		for (size_t i = 0; i < D.nsvc; i++)
			if (D.svc[i].cg_waiting) {
				cg_wait = true;
				if (D.svc[i].cg_until < wake)
					wake = D.svc[i].cg_until;
			}
		if (cg_wait && !D.stopping) {
			if (now >= D.cg_next_check || now >= wake)
				cg_check();
			if (D.cg_next_check < wake)
				wake = D.cg_next_check;
		}
		next_job();
		/* a job past its time (a hung filesystem): stopped, counted as failed */
		if (D.job.kind && D.job.pid > 0) {
			double due = D.job.deadline;

			if (D.stopping && D.job.stop_due && (!due || due > D.job.stop_due))
				due = D.job.stop_due;
			if (D.stopping && (!due || due > D.stop_by))
				due = D.stop_by;
			if (due && now >= due && !D.job.killed) {
				dlog(LOG_ERR, "[service %s]: its %s ran past %.0f s: stopping it", D.job.name,
				     D.job.kind == JOB_SNAPSHOT ? "snapshot" : "restore", due - D.job.t0);
				kill(D.job.pid, SIGTERM);
				kill(D.job.pid, SIGCONT);
				D.job.killed = now;
			} else if (D.job.sigkilled && now >= D.job.killed + KILL_GRACE + GONE_GRACE) {
				job_abandon();
				continue;
			} else if (D.job.killed && !D.job.sigkilled && now >= D.job.killed + KILL_GRACE) {
				kill(D.job.pid, SIGKILL);
				D.job.sigkilled = true;
			}
			if (due && !D.job.killed && due < wake)
				wake = due;
			if (D.job.killed) {
				double next = D.job.killed + KILL_GRACE + (D.job.sigkilled ? GONE_GRACE : 0);

				if (next < wake)
					wake = next;
			}
		}
		/* a long restore at start-up: tell systemd not to give up */
		if (!D.ready && D.job.kind == JOB_RESTORE) {
			if (now - D.last_extend >= 10) {
				notify("EXTEND_TIMEOUT_USEC=30000000");
				set_status();
				D.last_extend = now;
			}
			if (D.last_extend + 10 < wake)
				wake = D.last_extend + 10;
		}
		timeout = wake > now ? (int)((wake - now) * 1000) + 1 : 0;
		if ((!D.ready && !startup_pending() && !D.job.kind) || (!D.job.kind && D.nq) ||
		    (D.stopping && !D.job.kind))
			timeout = 0;	/* the top of the loop has work */
		if (wait_events(timeout) < 0)
			return 1;
	}
	return 0;
}

static void check_report(void)
{
	printf("%s: %zu services\n", D.conf.path, D.conf.nsvc);
	for (size_t i = 0; i < D.conf.nsvc; i++) {
		struct dsvc *c = &D.conf.svc[i];
		char *n = out_escape(c->name), *sn = out_escape(c->snapshot);

		printf("  [service %s] %s -> %s, every %us%s%s%s%s%s\n", n ? n : "?",
		       c->npaths ? "paths" : c->pid_file ? "pid-file" : "cgroup", sn ? sn : "?",
		       c->interval, c->interval ? "" : " (only at stop)",
		       c->restore ? ", restored at start" : "",
		       c->restore && c->recording ? " with its recording" : "",
		       c->cgroup ? ", cgroup" : "", c->nlock ? ", lock set" : "");
		free(n);
		free(sn);
	}
}

int cmd_daemon(int argc, char **argv)
{
	struct cli_parser p;
	struct daemon_cli cl = { .config = DAEMON_CONFIG };
	const char *sock = NULL;
	struct dconf conf;
	sigset_t mask;
	int opt, rc;

	cli_parser_bind(&p, &daemon_spec, &cl, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case OPT_SOCKET:
			if (p.arg[0] != '/')
				return cli_usage_error("--socket '%s': an absolute path", p.arg);
			sock = p.arg;
			break;
		default:
			return EXIT_USAGE;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (optind < argc)
		return cli_usage_error("no operands: the services are in the configuration file");
	if (dconf_load(cl.config, &conf) < 0)
		return EXIT_PARTIAL;
	if (!metrics_safe(&conf)) {
		dconf_free(&conf);
		return EXIT_PARTIAL;
	}
	if (sock) {
		free(conf.socket);
		conf.socket = strdup(sock);
	}
	if (cl.check) {
		D.conf = conf;
		check_report();
		dconf_free(&D.conf);
		return 0;
	}
	D.journal = stderr_is_journal();
	D.self = getpid();
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	D.sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (D.sfd < 0) {
		dlog(LOG_ERR, "signalfd: %s", strerror(errno));
		dconf_free(&conf);
		return EXIT_PARTIAL;
	}
	D.lfd = listen_on(conf.socket);
	if (D.lfd < 0) {
		dconf_free(&conf);
		return EXIT_PARTIAL;
	}
	dlog(LOG_INFO, "started: %s, %zu services, socket %s", cl.config, conf.nsvc, D.sock_path);
	adopt(&conf, true);
	for (size_t i = 0; i < D.nsvc; i++)
		if (D.svc[i].restore_pending)
			queue(D.svc[i].c->name, JOB_RESTORE);
	set_status();
	rc = run_loop();
	stop_all_locks();
	if (D.job.pid > 0) {
		/*
		 * Not waited for without end: a job in D state on a hung
		 * filesystem outlives SIGKILL (it is reaped by init, or by
		 * systemd's stop of the unit's cgroup).
		 */
		double end = pc_now() + KILL_GRACE;

		kill(D.job.pid, SIGKILL);
		while (waitpid(D.job.pid, NULL, WNOHANG) == 0 && pc_now() < end)
			usleep(20000);
		if (waitpid(D.job.pid, NULL, WNOHANG) == 0)
			dlog(LOG_WARN, "[service %s]: its %s (pid %d) does not end (a hung filesystem?): "
				       "leaving it", D.job.name,
			     D.job.kind == JOB_SNAPSHOT ? "snapshot" : "restore", (int)D.job.pid);
	}
	write_metrics();
	if (D.ifd >= 0)
		close(D.ifd);
	unlink(D.sock_path);
	dlog(LOG_INFO, "stopped");
	for (size_t i = 0; i < D.nsvc; i++)
		D.svc[i].c = NULL;
	free(D.svc);
	dconf_free(&D.conf);
	return rc;
}
