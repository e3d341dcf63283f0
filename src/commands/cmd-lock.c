/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-lock.c: `pagecache lock`: keep files in the page cache with mlock
 * until SIGTERM, SIGINT or SIGHUP. A lock lasts only while its mapping
 * does, so this process stays; --daemon detaches it after the files are
 * locked (the parent exits with the locking's status, so `pagecache lock
 * --daemon ... && start-service` is safe). Never more than the memory
 * budget: mlocked pages cannot be reclaimed, so overshooting would push
 * the host toward OOM. Only a file's data is locked, never a hole
 * (lib/lock.c): a file's owner could otherwise make us pin its size.
 *
 * --watch keeps the lock set as files are replaced (lib/lockset.c holds
 * the set, its caps, the inotify watch and the rescans): a new inode at a
 * name (rename over, delete and create) or a new file in a tree is
 * locked, after the mapping of the old inode is released; a file whose
 * data changed is locked again, new mapping first. Here: the options,
 * the signals and the poll loop, and every line people and scripts read.
 * The set never grows past --max-mem, or without it past the bytes it
 * held when first locked: whoever may write one of its files must not
 * decide how much memory root pins; nor how many of our mappings its
 * locks take (half of vm.max_map_count for the whole set).
 * Where a directory cannot be watched (the inotify watch limit) the walk
 * is repeated every --watch-interval seconds instead (30 by default).
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"
#include "internal.h"	/* lib/lockset.c: the lock set */

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* -d: the status byte's flag: the daemon stays, holding the locks (detach) */
#define DAEMON_HELD 0x80

struct lock_ctx {
	struct targets t;
	struct pc_budget budget;
	struct pc_lockset *set;
	bool size_cap;		/* the budget's max is the set's first size, not --max-mem */
	bool list;		/* a row per file locked (-v) */
	bool quiet;		/* -q: no "Locked ..." line */
	bool stopped;		/* stopped early, or failed to set up */
	bool watch;		/* --watch */
	unsigned interval;	/* --watch-interval */
	bool interval_set;
	bool daemon;		/* -d */
	const char *pidfile;	/* -P */
	struct cli_budget bo;
	/* lock_watch_run's caller (the daemon's lock job), told how the set stands */
	void (*report)(const struct lock_report *r, void *arg);
	void *report_arg;
};

static const struct ocol lock_cols[] = {
	{ "locked", "LOCKED", false }, { "path", "FILE", true },
};

enum { OPT_WATCH = CLI_OPT_OWN, OPT_WATCH_INTERVAL };
static const struct cli_opt lock_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "daemon", .letter = 'd', .id = 'd', CLI_SET(struct lock_ctx, daemon),
	  .help = "detach once locked (a failing PATH: exit 1, rest held)" },
	{ .name = "pidfile", .letter = 'P', .id = 'P', .arg = "FILE", .comp = CC_FILE,
	  CLI_STRING(struct lock_ctx, pidfile),
	  .help = "write the locking process's PID to FILE" },
	{ .name = "wait", .letter = 'w', .id = 'w',
	  .help = "vmtouch's -w: wait until all is locked, as -d does" },
	{ .name = "watch", .id = OPT_WATCH, CLI_SET(struct lock_ctx, watch),
	  .help = "while locked, lock again what is replaced (inotify)" },
	{ .name = "watch-interval", .id = OPT_WATCH_INTERVAL, .arg = "SECS",
	  .help = "with --watch, also walk again every SECS seconds" },
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_SET(struct lock_ctx, list), .help = "list each file" },
	{ .name = "quiet", .letter = 'q', .id = 'q', CLI_SET(struct lock_ctx, quiet),
	  .help = "no \"Locked\" line (vmtouch's -q); failures on stderr" },
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
	"  pagecache lock --watch --max-mem 2G /usr/lib/x86_64-linux-gnu/libssl.so.3 /srv/index\n"
	"                    (kept locked across package upgrades and index rebuilds,\n"
	"                    the set free to grow to 2G)\n"
	"Exit status: 0 all locked (with -d: the daemon holds them; without: released\n"
	"cleanly at the signal), 1 some files failed or the budget stopped it (with\n"
	"--watch: also a re-lock that failed since), 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", lock_opts }, &cli_budget_group,
		    &cli_format_act_group, &cli_targets_group },
	.operands = CC_FILE,
	.cols = lock_cols,
	.ncols = sizeof(lock_cols) / sizeof(lock_cols[0]),
};

/* Prometheus text: docs/metrics.md */
static const struct ometric metrics[] = {
	{ "total", "files", "files", 0, "Files locked in the cache." },
	{ "total", "locked", "locked_bytes", 0, "Bytes locked in the cache (mlock)." },
	{ "total", "holes", "holes_bytes", 0,
	  "Bytes of holes in the files, left unlocked (only data is locked)." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "budget_stopped", "budget_stopped", 0,
	  "1 if the memory budget stopped the locking early, else 0." },
	{ "files", "path", "path", OM_LABEL | OM_PER_FILE, "" },
	{ "files", "locked", "file_locked_bytes", OM_PER_FILE, "Bytes of the file locked." },
};

/*
 * Why mlock said no. The kernel lets mlock past RLIMIT_MEMLOCK only with
 * CAP_IPC_LOCK (a limit of 0 without it is EPERM, past a limit ENOMEM),
 * whatever the uid. With the capability the limit is not what failed.
 */
static const char *lock_reason(int err, char *buf, size_t len)
{
	struct rlimit rl;

	switch (err) {
	case ENOMEM:
	case EPERM:
	case EAGAIN:
		if (!pc_have_cap(CAP_IPC_LOCK) && getrlimit(RLIMIT_MEMLOCK, &rl) == 0 &&
		    rl.rlim_cur != RLIM_INFINITY)
			snprintf(buf, len,
				 "locked memory not allowed: RLIMIT_MEMLOCK is %llu KiB "
				 "(needs CAP_IPC_LOCK, or a higher 'ulimit -l'; "
				 "or vm.max_map_count is reached)",
				 (unsigned long long)rl.rlim_cur >> 10);
		else
			snprintf(buf, len, "%s (memory limit or vm.max_map_count)", strerror(err));
		return buf;
	default:
		return strerror(err);
	}
}

/* Why a file's pieces were refused, for stderr. */
static const char *maps_why(const struct pc_lockset_event *e, char *buf, size_t len)
{
	snprintf(buf, len, "its data lies in %llu pieces, and their %llu mappings would pass "
		 "the lock set's budget of them (%llu of %llu taken: half of vm.max_map_count)",
		 (unsigned long long)(e->maps + 1) / 2, (unsigned long long)e->maps,
		 (unsigned long long)e->maps_taken, (unsigned long long)e->maps_max);
	return buf;
}

/* Why the budget refused: the short word of the event line, and the words of stderr. */
static const char *budget_word(const struct lock_ctx *c)
{
	switch (c->budget.stopped) {
	case PC_BUDGET_MAX:
		return c->size_cap ? "size" : "max-mem";
	case PC_BUDGET_CGROUP:
		return "cgroup";
	default:
		return "memory";
	}
}

static const char *budget_why(const struct lock_ctx *c, char *buf, size_t len)
{
	char a[32];

	if (c->budget.stopped != PC_BUDGET_MAX || !c->size_cap)
		return cli_budget_reason(c->budget.stopped);
	snprintf(buf, len, "the lock set would grow past the %s it held when first locked; "
		 "--max-mem (lock-max = for the daemon's) lets it grow",
		 pc_human_size(c->budget.max_bytes, a, sizeof(a)));
	return buf;
}

/* How the set stands, to lock_watch_run's caller; nothing for `lock` itself. */
static void report(const struct lock_ctx *c, enum lock_state state,
		   const struct pc_lockset_stats *st, int status)
{
	if (c->report)
		c->report(&(struct lock_report){
			.state = state, .files = st->files, .bytes = st->bytes, .holes = st->holes,
			.relocks = st->relocks, .released = st->released, .rescans = st->rescans,
			.refusals = st->refusals, .failures = cli_failures(),
			.budget_stopped = c->budget.stopped != 0, .status = status,
		}, c->report_arg);
}

/* A file the first walk could not lock (or a rescan, for want of memory): said. */
static void say_failed(const struct pc_lockset_event *e)
{
	char buf[512];

	switch (e->why) {
	case PC_LOCKSET_WHY_PIECES:
		cli_fail_msg(e->path, "cannot lock", maps_why(e, buf, sizeof(buf)));
		break;
	case PC_LOCKSET_WHY_MLOCK:
		cli_fail_msg(e->path, "cannot lock", lock_reason(e->err, buf, sizeof(buf)));
		break;
	default:	/* its data, memory */
		cli_fail(e->path, e->err, "cannot lock");
		break;
	}
}

/* ---- --watch: the lines ------------------------------------------------ */

/* Milliseconds since the epoch: when an event happened, for logs and scripts. */
static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * One line per change: {"watch": {...}} in JSON, `human` for people. A
 * refusal says what was wanted and why ("size": past the set's first size,
 * "max-mem", "memory", "cgroup": the budget; "pieces": its data in more
 * pieces than the set's budget of mappings has left; "mlock": the kernel
 * said no).
 */
static void watch_event_why(const char *ev, const char *path, uint64_t locked, uint64_t was,
			    const struct stat *st, const char *human, uint64_t wanted,
			    const char *reason)
{
	struct orec r = { 0 };

	orec_str(&r, "event", ev, 0);
	orec_str(&r, "path", path, 0);
	orec_u64(&r, "locked", locked, OF_BYTES);
	orec_u64(&r, "previous", was, OF_BYTES);
	if (st)
		orec_u64(&r, "inode", (uint64_t)st->st_ino, 0);
	else
		orec_null(&r, "inode");
	if (reason) {
		orec_u64(&r, "wanted", wanted, OF_BYTES);
		orec_str(&r, "reason", reason, 0);
	}
	orec_u64(&r, "time_ms", wall_ms(), 0);
	out_event("watch", &r, human);
}

/* A rescan could not lock a file: stderr says why, the line says the word. */
static void say_refused(const struct lock_ctx *c, const struct pc_lockset_event *e)
{
	const char *tail = e->kept ? "; the part locked before stays locked" :
			   e->replaced ? "; the replaced file's lock is released" : "";
	const char *what = e->kept ? "cannot extend the lock of" : "cannot lock", *word;
	char a[32], why[512], by[256];

	switch (e->why) {
	case PC_LOCKSET_WHY_PIECES:
		snprintf(why, sizeof(why), "%s%s", maps_why(e, by, sizeof(by)), tail);
		cli_fail_msg(e->path, what, why);
		word = "pieces";
		break;
	case PC_LOCKSET_WHY_BUDGET:
		snprintf(why, sizeof(why), "%s would pass the memory budget (%s)%s",
			 pc_human_size(e->wanted, a, sizeof(a)), budget_why(c, by, sizeof(by)), tail);
		cli_fail_msg(e->path, what, why);
		word = budget_word(c);
		break;
	default:	/* mlock: as the first lock says it */
		cli_fail_msg(e->path, "cannot lock", lock_reason(e->err, by, sizeof(by)));
		word = "mlock";
		break;
	}
	watch_event_why("refused", e->path, e->locked, e->previous, e->st, NULL, e->wanted, word);
}

/* A rescan changed a lock: new, replaced, resized or released. */
static void say_changed(const struct pc_lockset_event *e)
{
	char a[32], b[32], msg[512];
	const char *ev;

	fmt_size(e->locked, a, sizeof(a));
	fmt_size(e->previous, b, sizeof(b));
	switch (e->kind) {
	case PC_LOCKSET_RESIZED:
		snprintf(msg, sizeof(msg), "re-locked '%s': its data changed, %s locked (was %s)",
			 e->path, a, b);
		ev = "resized";
		break;
	case PC_LOCKSET_REPLACED:
		snprintf(msg, sizeof(msg), "re-locked '%s': a new file replaced it, %s locked "
			 "(the old one's %s released)", e->path, a, b);
		ev = "replaced";
		break;
	case PC_LOCKSET_NEW:
		snprintf(msg, sizeof(msg), "locked '%s': new, %s", e->path, a);
		ev = "new";
		break;
	default:
		snprintf(msg, sizeof(msg), "released '%s': gone from where it was "
			 "(deleted, moved away or no longer selected)", e->path);
		ev = "released";
		break;
	}
	watch_event_why(ev, e->path, e->locked, e->previous, e->st, msg, 0, NULL);
}

/* The watch's totals: after a rescan that changed the set, and at the end. */
static void say_totals(const char *event, const struct pc_lockset_stats *st, const char *msg)
{
	struct orec r = { 0 };

	orec_str(&r, "event", event, 0);
	orec_u64(&r, "files", st->files, 0);
	orec_u64(&r, "locked", st->bytes, OF_BYTES);
	orec_u64(&r, "relocks", st->relocks, 0);
	orec_u64(&r, "released", st->released, 0);
	orec_u64(&r, "rescans", st->rescans, 0);
	orec_u64(&r, "refusals", st->refusals, 0);
	orec_u64(&r, "refused", st->refused_bytes, OF_BYTES);
	orec_u64(&r, "failures", cli_failures(), 0);
	orec_u64(&r, "time_ms", wall_ms(), 0);
	out_event("watch", &r, msg);
}

/*
 * A directory could not be watched (dir NULL: no inotify at all), said
 * once, with the limit where that is why: everything is walked again on
 * a timer from now on.
 */
static void say_unwatched(const char *dir, int err, unsigned interval)
{
	if (!dir) {
		cli_warn("cannot watch: inotify: %s%s; walking everything again every %u s "
			 "instead (--watch-interval)", strerror(err),
			 err == EMFILE ? " (fs.inotify.max_user_instances is reached)" : "",
			 interval);
	} else if (err == ENOSPC) {
		unsigned long max = 0;
		FILE *f = fopen("/proc/sys/fs/inotify/max_user_watches", "re");

		if (f) {
			if (fscanf(f, "%lu", &max) != 1)
				max = 0;
			fclose(f);
		}
		cli_warn("cannot watch '%s': the inotify watch limit is reached "
			 "(fs.inotify.max_user_watches = %lu); walking everything again every %u s "
			 "instead (--watch-interval)", dir, max, interval);
	} else {
		cli_warn("cannot watch '%s': %s; walking everything again every %u s instead "
			 "(--watch-interval)", dir, strerror(err), interval);
	}
}

/* What the lock set says (lib/lockset.c), said here; from the walk's threads too. */
static void on_event(const struct pc_lockset_event *e, void *arg)
{
	struct lock_ctx *c = arg;
	struct orec rec = { 0 };
	char a[32], msg[256];

	switch (e->kind) {
	case PC_LOCKSET_LOCKED:
		if (c->list) {
			orec_str(&rec, "path", e->path, OF_LABEL);
			orec_u64(&rec, "locked", e->locked, OF_BYTES);
			out_list_add("files", &rec);
		}
		break;
	case PC_LOCKSET_PARTIAL:
		cli_warn("cannot lock all of '%s': its data lies in more than %d pieces; "
			 "the rest is not locked", e->path, PC_LOCK_MAX_RANGES);
		break;
	case PC_LOCKSET_FAILED:
		say_failed(e);
		break;
	case PC_LOCKSET_REFUSED:
		say_refused(c, e);
		break;
	case PC_LOCKSET_NEW:
	case PC_LOCKSET_REPLACED:
	case PC_LOCKSET_RESIZED:
	case PC_LOCKSET_RELEASED:
		say_changed(e);
		break;
	case PC_LOCKSET_RESCAN:
		snprintf(msg, sizeof(msg), "watching: %zu files locked, %s", e->stats->files,
			 fmt_size(e->stats->bytes, a, sizeof(a)));
		say_totals("rescan", e->stats, msg);
		break;
	case PC_LOCKSET_WALK_FAILED:
		cli_warn("walk failed: %s; the locks stay as they are until the next change",
			 strerror(e->err));
		break;
	case PC_LOCKSET_UNRESOLVED:
		cli_fail_msg(e->path, "cannot watch", strerror(e->err));
		break;
	case PC_LOCKSET_LINK:
		cli_fail_msg(e->path, "not following", "a symbolic link replaced it "
			     "(-f follows links); its lock is released");
		break;
	case PC_LOCKSET_UNOPENED:
		cli_fail(e->path, e->err, "cannot open");	/* as the walk says it */
		break;
	case PC_LOCKSET_UNWATCHED:
		say_unwatched(e->path, e->err, e->interval);
		break;
	}
}

/* The first walk's files, without --watch (with it, lib/lockset.c walks). */
static int lock_file(struct pc_walk_entry *e, void *arg)
{
	struct lock_ctx *c = arg;

	return pc_lockset_add(c->set, e->fd, &e->st, e->path);
}

/*
 * Wait for a signal, rescanning after each burst of changes (and on the
 * timer) as the lock set says. Returns the signal.
 */
static int watch_loop(struct lock_ctx *c, const sigset_t *set)
{
	int sfd = signalfd(-1, set, SFD_CLOEXEC), ifd = pc_lockset_fd(c->set), sig;

	if (sfd < 0) {
		cli_warn("cannot watch: signalfd: %s; the files stay locked as they are",
			 strerror(errno));
		fflush(stderr);
		while (sigwait(set, &sig) != 0)
			;
		return sig;
	}
	for (;;) {
		struct pollfd pf[2] = { { sfd, POLLIN, 0 }, { ifd, POLLIN, 0 } };

		if (poll(pf, ifd >= 0 ? 2 : 1, pc_lockset_timeout(c->set)) < 0 && errno != EINTR)
			break;
		if (pf[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				close(sfd);
				return (int)si.ssi_signo;
			}
		}
		if (pc_lockset_dispatch(c->set) > 0) {
			fflush(stderr);
			if (c->report) {
				struct pc_lockset_stats st;

				pc_lockset_stats(c->set, &st);
				report(c, LOCK_WATCHING, &st, 0);
			}
		}
	}
	cli_warn("cannot watch: poll: %s", strerror(errno));
	close(sfd);
	while (sigwait(set, &sig) != 0)
		;
	return sig;
}

/*
 * The command line into c (and co): true to go on, else false with the
 * exit status to return now (usage, --help, --version) in *ret_exit.
 */
static bool lock_args(struct lock_ctx *c, struct cli_opts *co, int argc, char **argv,
		      int *ret_exit)
{
	struct cli_parser p;
	int opt;

	cli_parser_bind_to(&p, &lock_spec,
			   &(struct cli_bound){ .base = c, .co = co, .t = &c->t, .bo = &c->bo },
			   argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case 'w':	/* -d waits until all is locked anyway */
			break;
		case OPT_WATCH_INTERVAL: {
			char *end;
			unsigned long v;

			errno = 0;
			v = strtoul(p.arg, &end, 10);
			if (!*p.arg || *end || *p.arg == '-' || errno || v > 86400) {
				cli_usage_error("invalid --watch-interval '%s' (seconds, 0 to 86400)",
						p.arg);
				return *ret_exit = EXIT_USAGE, false;
			}
			c->interval = (unsigned)v;
			c->interval_set = true;
			break;
		}
		}
	}
	if (opt == CLI_STOP)
		return *ret_exit = p.exit, false;
	if (cli_start(co, &c->t, argc, argv) < 0)
		return *ret_exit = EXIT_USAGE, false;
	if ((c->interval_set && !c->watch) || (c->watch && (c->t.npids || c->t.cgroup))) {
		if (!c->watch)
			cli_usage_error("--watch-interval needs --watch");
		else
			cli_usage_error("--watch keeps PATHs locked, not the files of --pid or --cgroup");
		targets_release(&c->t);	/* a sanitized build's leak check: exit 2, not 1 */
		return *ret_exit = EXIT_USAGE, false;
	}
	return true;
}

/*
 * -d: fork before locking (mlock is not inherited). The parent waits for
 * the child's status byte on the pipe and exits with it; the child goes
 * on, in a session of its own, with pipefd[1] to write it to. 0 in the
 * child, or -1 (said).
 */
static int daemonize(int pipefd[2])
{
	unsigned char status;
	pid_t pid;
	int st;

	if (pipe2(pipefd, O_CLOEXEC) < 0) {
		cli_warn("cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		cli_warn("cannot fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(pipefd[0]);
		setsid();
		return 0;
	}
	close(pipefd[1]);
	if (read(pipefd[0], &status, 1) == 1) {
		/* a daemon that holds nothing is gone before we say so */
		if (!(status & DAEMON_HELD))
			waitpid(pid, &st, 0);
		_exit(status & ~DAEMON_HELD);
	}
	waitpid(pid, &st, 0);
	fprintf(stderr, "pagecache: the lock daemon exited before it was ready (%s %d)\n",
		WIFSIGNALED(st) ? "signal" : "status",
		WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	_exit(EXIT_PARTIAL);
}

/*
 * --watch, before the walk: nothing replaced meanwhile is missed. The
 * named paths are resolved and watched; the walk is then the set's.
 */
static void watch_start(struct lock_ctx *c)
{
	struct rlimit rl;
	int rc;

	/* a rescan holds the new files open until it locks them */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* walked again and again: lock_main read the lists' names into c->t.paths */
	rc = pc_lockset_watch(c->set, c->t.paths, c->t.npaths, targets_walk_opts(&c->t),
			      c->interval);
	if (rc < 0) {
		cli_warn("cannot watch: %s", strerror(-rc));
		c->stopped = true;
		c->watch = false;
	}
}

/*
 * The document: the totals (and with -v the files, written as they came).
 * held: a process (this one) will hold the locks; if not, no pid is
 * named, for none will exist.
 */
static int say_locked(const struct lock_ctx *c, const struct cli_opts *co,
		      const struct pc_lockset_stats *st, bool held)
{
	struct orec rec = { 0 };
	char a[32];

	orec_u64(&rec, "files", st->files, 0);
	orec_u64(&rec, "locked", st->bytes, OF_BYTES);
	orec_u64(&rec, "holes", st->holes, OF_BYTES);
	orec_u64(&rec, "failures", cli_failures(), 0);
	if (held)
		orec_u64(&rec, "pid", (uint64_t)getpid(), 0);
	else
		orec_null(&rec, "pid");
	orec_bool(&rec, "budget_stopped", c->budget.stopped != 0);
	out_object("total", &rec);
	if (co->fmt == OUT_HUMAN && !c->quiet) {
		char hb[64] = "";

		if (st->holes)
			snprintf(hb, sizeof(hb), " (%s of holes left out)",
				 fmt_size(st->holes, a, sizeof(a)));
		if (held)
			out_human_line("Locked %zu files, %s%s, pid %d; SIGTERM or Ctrl-C "
				       "releases them", st->files, fmt_size(st->bytes, a, sizeof(a)),
				       hb, getpid());
		else
			out_human_line("Locked %zu files, %s%s; none held (%s)", st->files,
				       fmt_size(st->bytes, a, sizeof(a)), hb,
				       st->files ? "released: the run failed" : "nothing to hold");
	}
	return out_flush();	/* --prom-file: a file that could not be written fails the run */
}

/*
 * -d: the daemon's stdio goes to /dev/null, and its status to the parent,
 * with DAEMON_HELD if it stays to hold the locks (exit 1 then means some
 * PATH failed; without it, the parent waits until the daemon is gone).
 * False if the parent was not told: then the daemon must not stay.
 */
static bool detach(int fd, unsigned char status, bool held)
{
	unsigned char b = status | (held ? DAEMON_HELD : 0);
	bool told;

	int devnull = open("/dev/null", O_RDWR);

	if (devnull >= 0) {
		dup2(devnull, STDIN_FILENO);
		dup2(devnull, STDOUT_FILENO);
		dup2(devnull, STDERR_FILENO);
		if (devnull > 2)
			close(devnull);
	}
	told = write(fd, &b, 1) == 1;
	close(fd);
	return told;
}

/*
 * Lock the set (with --watch, keep it locked) until a signal: the locks
 * are released at the end. Returns the exit status.
 */
static int lock_run(struct lock_ctx *c, const struct cli_opts *co, const sigset_t *set)
{
	struct cli_pidfile pf = { c->pidfile, 0, 0 };
	struct pc_lockset_stats st;
	int rc, sig, pipefd[2] = { -1, -1 };
	unsigned failed0;
	unsigned char status;
	bool held;
	char a[32], msg[256];

	if (c->daemon && daemonize(pipefd) < 0)
		return EXIT_PARTIAL;
	if (c->watch)
		watch_start(c);
	if (c->list) {	/* before the walk: rows are written as they come */
		out_sort("files", "path");
		out_columns("files", lock_cols, sizeof(lock_cols) / sizeof(lock_cols[0]));
	}
	/* with --watch, as every rescan will: from the directories held */
	rc = c->watch ? pc_lockset_walk(c->set) : targets_walk(&c->t, lock_file, c);
	if (rc < 0)
		cli_warn("walk failed: %s", strerror(-rc));
	pc_lockset_stats(c->set, &st);
	c->stopped |= st.stopped;
	if (c->stopped) {
		cli_warn("stopped early: %s; %zu files locked (%s)",
			 cli_budget_reason(c->budget.stopped), st.files,
			 pc_human_size(st.bytes, a, sizeof(a)));
	}
	/*
	 * From now on the set grows only as far as a cap allows: --max-mem
	 * (the budget's max already), else the bytes it holds now. A file's
	 * owner may not make root pin more by growing it.
	 */
	if (c->watch && !c->bo.max_mem) {
		c->budget.max_bytes = st.bytes;
		c->size_cap = true;
	}
	if (pf.path && st.files && (rc = cli_pidfile_write(&pf)) < 0) {
		cli_warn("cannot write pidfile '%s': %s", pf.path, strerror(-rc));
		pf.path = NULL;
		c->stopped = true;
	}
	/*
	 * Who holds the locks from here. A PATH that failed is named on
	 * stderr and the rest is held, daemon or not (exit 1), as vmtouch
	 * locks what exists; but a daemon whose run failed (the budget, the
	 * pidfile, the output, the parent not told) holds nothing, so that
	 * no "pid N" is ever printed or written for a process that is gone.
	 */
	held = st.files > 0 && !(c->daemon && c->stopped);
	rc = say_locked(c, co, &st, held);
	fflush(stderr);
	status = cli_failures() || c->stopped || rc < 0 ? EXIT_PARTIAL : 0;
	report(c, LOCK_LOCKED, &st, 0);
	if (c->daemon && rc < 0)
		held = false;
	if (!held)
		status = EXIT_PARTIAL;
	if (c->daemon && !detach(pipefd[1], status, held))
		held = false;	/* the parent exits 1: "exited before it was ready" */
	if (!held && pf.path) {
		cli_pidfile_remove(&pf);
		pf.path = NULL;
	}
	failed0 = cli_failures();
	if (held) {
		if (c->watch) {
			sig = watch_loop(c, set);
		} else {
			do
				rc = sigwait(set, &sig);
			while (rc != 0);
		}
	}
	pc_lockset_stats(c->set, &st);
	pc_lockset_free(c->set);	/* every lock released */
	c->set = NULL;
	if (c->watch && held) {	/* what a supervisor logs */
		snprintf(msg, sizeof(msg), "Released %zu files, %s; %llu re-locked and %llu released "
			 "while watching (%llu rescans)", st.files, fmt_size(st.bytes, a, sizeof(a)),
			 (unsigned long long)st.relocks, (unsigned long long)st.released,
			 (unsigned long long)st.rescans);
		say_totals("stopped", &st, msg);
		if (cli_failures() != failed0)
			status = EXIT_PARTIAL;	/* a re-lock failed: said when it did */
	}
	if (pf.path)
		cli_pidfile_remove(&pf);
	status = held ? status : EXIT_PARTIAL;
	report(c, LOCK_RELEASED, &st, status);
	return status;
}

/*
 * From the options taken to every lock released: the budget, the set,
 * the signals, then lock_run. Returns the exit status.
 */
static int lock_main(struct lock_ctx *c, const struct cli_opts *co)
{
	struct pc_lockset_opts lo = { .budget = &c->budget, .event = on_event, .arg = c };
	sigset_t set;
	int rc;

	rc = pc_budget_init(&c->budget, c->bo.max_mem, c->bo.reserve);
	if (rc < 0) {
		cli_fail("/proc/meminfo", -rc, "cannot read memory state from");
		out_flush();
		targets_release(&c->t);
		return EXIT_PARTIAL;
	}
	lo.off = c->t.off;
	lo.len = c->t.len;
	if (pc_lockset_new(&lo, &c->set) < 0) {
		cli_warn("cannot lock: %s", strerror(ENOMEM));
		pc_budget_release(&c->budget);
		targets_release(&c->t);
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
	/*
	 * The lists read whole first, while a signal still ends us: a list
	 * read as it is walked would be read with the signals blocked, and a
	 * pipe's writer that never closes (-b -) would hold a lock nobody can
	 * stop but by SIGKILL. What lock holds is the files' pages, which
	 * dwarf their names.
	 */
	if (targets_read_lists(&c->t) < 0) {
		cli_warn("cannot lock: %s", strerror(ENOMEM));
		pc_lockset_free(c->set);
		pc_budget_release(&c->budget);
		targets_release(&c->t);
		return EXIT_PARTIAL;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	rc = lock_run(c, co, &set);
	pc_lockset_free(c->set);
	pc_budget_release(&c->budget);
	targets_release(&c->t);
	return rc;
}

int cmd_lock(int argc, char **argv)
{
	struct lock_ctx c = { .bo = CLI_BUDGET_INIT };
	struct cli_opts co = { OUT_HUMAN };
	int rc;

	targets_init(&c.t);
	if (!lock_args(&c, &co, argc, argv, &rc))
		return rc;
	out_prom_metrics("lock", metrics, sizeof(metrics) / sizeof(metrics[0]));
	c.list = c.list || co.prom_per_file;
	return lock_main(&c, &co);
}

/*
 * `lock --watch --max-mem MAX -- PATH...` without a command line: the
 * same set, options and messages, for the daemon's lock jobs.
 */
int lock_watch_run(const struct lock_watch *w)
{
	struct lock_ctx c = { .bo = CLI_BUDGET_INIT, .watch = true, .report = w->report,
			      .report_arg = w->arg };
	struct cli_opts co = { OUT_HUMAN };

	targets_init(&c.t);
	if (w->max_mem && cli_budget_value(&c.bo, "max-mem", w->max_mem) < 0) {
		targets_release(&c.t);
		return EXIT_USAGE;
	}
	/* as cli_start sets the output up for a command line */
	out_init(co.fmt, co.bytes, co.noheadings);
	out_list_declare("files");
	out_list_declare("errors");
	if (targets_finish(&c.t, (int)w->npaths, w->paths) < 0) {
		targets_release(&c.t);
		return EXIT_USAGE;
	}
	return lock_main(&c, &co);
}
