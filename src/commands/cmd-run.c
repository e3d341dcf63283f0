/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-run.c: `pagecache run --no-cache -- CMD`: run a command so that it
 * leaves the page cache as it found it. nocache does this with
 * LD_PRELOAD, which static binaries, mmap readers, io_uring and raw
 * syscalls bypass; a memory cgroup sees them all. CMD runs in a fresh
 * memory cgroup beneath ours, never beside it, so every limit we are under
 * binds CMD too (on v2 we may first move into a leaf of our own cgroup, so
 * that it can hand the memory controller on); a page is charged to the cgroup of the
 * process that first read it, so what CMD brings in is charged there, and
 * pages that were cached before stay charged where they were. When CMD
 * exits, the cgroup's cache is written back and dropped (v1 force_empty,
 * v2 memory.reclaim) and the cgroup removed, on every path. With
 * --cache-limit, its cache is also held under a size while it runs, by
 * reclaiming the excess: never by a limit that could OOM-kill a command
 * whose anonymous memory needs more. The cgroup is noted in a state file
 * (/run/pagecache/run-PID.state, state.c's), so that after a kill -9
 * the next run kills what is left in it and removes it. CMD starts with
 * every signal at its default and none blocked, whatever we inherited.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "state.h"

#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct run_cli {
	uint64_t limit;			/* --cache-limit; 0: none */
	bool no_cache;			/* --no-cache (or --cache-limit) */
	bool verbose;
	char **cmd;			/* CMD and its arguments */
};

enum { OPT_NO_CACHE = CLI_OPT_OWN, OPT_CACHE_LIMIT };
static const struct cli_opt run_opts[] = {
	{ .name = "no-cache", .id = OPT_NO_CACHE, CLI_SET(struct run_cli, no_cache),
	  .help = "drop what CMD cached when it exits" },
	{ .name = "cache-limit", .id = OPT_CACHE_LIMIT, .arg = "SIZE", .comp = CC_SIZE,
	  CLI_SIZE(struct run_cli, limit), .lo = 1, .bad = "invalid size '%s' (e.g. 256M)",
	  .help = "also keep CMD's page cache under SIZE as it runs" },
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_SET(struct run_cli, verbose),
	  .help = "say on stderr how much CMD left cached and dropped" },
	{ 0 }
};

const struct cli_spec run_spec = {
	.name = "run",
	.usage =
	"Usage: pagecache run --no-cache [OPTIONS] -- CMD [ARG...]\n"
	"       pagecache run --cache-limit SIZE [OPTIONS] -- CMD [ARG...]\n"
	"\n"
	"Run CMD so that it leaves the page cache as it found it: it runs in a fresh\n"
	"memory cgroup beneath ours (inside all our limits), and what it brought\n"
	"into the cache is dropped when it exits (pages that were cached before it\n"
	"started stay). Unlike nocache's LD_PRELOAD, this covers static binaries,\n"
	"mmap readers and io_uring.\n"
	"Needs a memory cgroup it may write: root's, or, for a user, one their\n"
	"systemd manager delegates (it runs while they are logged in, or always\n"
	"after `loginctl enable-linger`); without one it exits 1, CMD not run.\n"
	"The exit status is CMD's (128+N if signal N killed\n"
	"it); signals sent to pagecache are passed on to CMD, which starts with\n"
	"every signal at its default and none blocked. After a kill -9, the next\n"
	"run ends and removes what the killed one left (/run/pagecache).\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache run --no-cache -- tar czf /backup/db.tgz /var/lib/db\n"
	"  pagecache run --cache-limit 256M -- rsync -a /src/ /dst/\n",
	.groups = { &(struct cli_group){ "Options", run_opts } },
	.operands = CC_COMMAND,
	.stop_at_operand = true,
};

static volatile pid_t child;

static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

static uint64_t cache_bytes(const char *dir, int version)
{
	struct pc_cgroup_stat s;

	return pc_cgroup_read(dir, version, &s) == 0 ? s.file : 0;
}

/* Hold the cgroup's page cache under `limit` by reclaiming the excess. */
static void trim(const char *dir, int version, uint64_t limit, const char *orig)
{
	struct pc_cgroup_stat s;
	char val[32];

	if (pc_cgroup_read(dir, version, &s) < 0 || s.file <= limit)
		return;
	if (version == 2) {
		snprintf(val, sizeof(val), "%llu\n", (unsigned long long)(s.file - limit));
		pc_cgroup_write(dir, "memory.reclaim", val);
	} else {
		/* v1 has no memory.reclaim: lower the limit to make the kernel
		 * reclaim (EBUSY, never OOM, if it cannot), then lift it again at
		 * once. Only CMD's own cgroup: a kill between the two leaves it
		 * for the next run, which removes that cgroup. */
		snprintf(val, sizeof(val), "%llu\n", (unsigned long long)(s.usage - (s.file - limit)));
		pc_cgroup_write(dir, "memory.limit_in_bytes", val);
		pc_cgroup_write(dir, "memory.limit_in_bytes", orig);
	}
}

/* What run was told. */
/* CMD's memory cgroup, and what is noted to undo it after a kill -9. */
struct run_cg {
	struct pc_cgroup_nest nest;
	struct bench_state state;
	char dir[800];			/* the cgroup's directory */
	char orig[32];			/* v1's memory.limit_in_bytes, that trim puts back */
};

/* -1: go on; else the exit status. */
static int parse(struct run_cli *cl, int argc, char **argv)
{
	struct cli_parser p;
	int opt;

	/* options stop at CMD, which has options of its own (spec: stop_at_operand) */
	cli_parser_bind(&p, &run_spec, cl, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0)
		;	/* all of run's options are bound */
	if (opt == CLI_STOP)
		return p.exit;
	if (!cl->no_cache && !cl->limit)	/* --cache-limit implies --no-cache */
		return cli_usage_error("say --no-cache or --cache-limit SIZE");
	if (optind >= argc)
		return cli_usage_error("no command given (pagecache run --no-cache -- CMD)");
	cl->cmd = argv + optind;
	return -1;
}

/*
 * After a refusal: that CMD did not run, and, for a user, what would let it.
 * A memory cgroup is what keeps every reader's pages out (mmap and static
 * binaries too), and a user may only make one inside a cgroup that is
 * theirs: never run CMD without it (nocache's way is not ours to fall to).
 */
static void refused_hint(const struct pc_cgroup_nest *n)
{
	if (geteuid() == 0) {
		cli_warn("'run --no-cache' did not run CMD");
		return;
	}
	if (n->version == 2 && n->why[0]) {
		const struct passwd *pw = getpwuid(geteuid());
		char user[64];

		snprintf(user, sizeof(user), "%s", pw ? pw->pw_name : "USER");
		cli_warn("'run --no-cache' did not run CMD. A user needs a memory cgroup of "
			 "their own: here, their systemd manager's (user@%u.service), which a "
			 "login session starts (ssh, su -l, machinectl shell) and `loginctl "
			 "enable-linger %s` keeps running; or run it as root",
			 (unsigned)geteuid(), user);
	} else
		cli_warn("'run --no-cache' did not run CMD. A user needs a memory cgroup of "
			 "their own: cgroup v2 with systemd, whose user manager delegates "
			 "one to each login (not here: %s), or one root made theirs (chown) "
			 "to start from; or run it as root",
			 n->version == 1 ? "cgroup v1" : "no systemd to ask");
}

/*
 * CMD's cgroup, made beneath ours, after what runs killed with kill -9
 * left is emptied and removed. -1: go on; else the exit status.
 */
static int make_cgroup(struct run_cg *g, const struct run_cli *cl)
{
	char name[64];
	int rc;

	rc = bench_state_open(&g->state, "run");
	if (rc < 0 && geteuid() == 0)
		cli_warn("cannot keep a state file in /run/pagecache: %s (after a kill -9, "
			 "CMD's cgroup would stay)", strerror(-rc));
	rc = pc_cgroup_nest_init(&g->nest);
	if (rc < 0) {
		char why[800];

		cli_warn("cannot run: %s", cli_nest_why(rc, &g->nest, why, sizeof(why)));
		refused_hint(&g->nest);
		bench_state_close(&g->state);
		return EXIT_PARTIAL;
	}
	if (g->nest.leaf[0])
		bench_state_put(&g->state, "cgroup", g->nest.leaf);
	snprintf(name, sizeof(name), "pagecache-run-%d", getpid());
	snprintf(g->dir, sizeof(g->dir), "%s/%s", g->nest.parent, name);
	bench_state_put(&g->state, "cgroup", g->dir);	/* before it exists: no window */
	rc = pc_cgroup_create(g->nest.parent, name, g->dir, sizeof(g->dir));
	if (rc == -EEXIST && rmdir(g->dir) == 0)	/* an empty one, left with our pid: stale */
		rc = pc_cgroup_create(g->nest.parent, name, g->dir, sizeof(g->dir));
	if (rc < 0) {
		cli_warn("cannot create memory cgroup '%s/%s': %s%s", g->nest.parent, name,
			 strerror(-rc), rc == -EACCES || rc == -EPERM
			 ? " (needs write permission on the parent cgroup: to be its owner (a "
			   "delegated cgroup) or CAP_DAC_OVERRIDE)" : "");
		refused_hint(&g->nest);
		pc_cgroup_nest_release(&g->nest);
		bench_state_close(&g->state);
		return EXIT_PARTIAL;
	}
	if (cl->limit && g->nest.version == 1) {	/* what trim lifts the limit back to */
		char path[900];

		snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", g->dir);
		if (pc_read_text(path, g->orig, sizeof(g->orig)) < 0)
			snprintf(g->orig, sizeof(g->orig), "-1");
	}
	return -1;
}

/* In the forked child: into the cgroup, then CMD. */
static void __attribute__((noreturn)) exec_cmd(struct run_cg *g, const struct run_cli *cl)
{
	int rc;

	bench_state_child(&g->state);
	bench_exec_prep();	/* every signal at its default, none blocked */
	rc = pc_cgroup_enter(g->dir, getpid());
	if (rc < 0) {
		fprintf(stderr, "pagecache: cannot enter '%s': %s\n", g->dir, strerror(-rc));
		_exit(126);
	}
	execvp(cl->cmd[0], cl->cmd);
	fprintf(stderr, "pagecache: cannot run '%s': %s\n", cl->cmd[0], strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* Wait for CMD (pid), trimming its cache meanwhile with --cache-limit: its wait status, or -1. */
static int wait_cmd(pid_t pid, const struct run_cg *g, const struct run_cli *cl)
{
	int st = 0;

	for (;;) {
		pid_t w = waitpid(pid, &st, cl->limit ? WNOHANG : 0);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			cli_warn("cannot wait for '%s': %s", cl->cmd[0], strerror(errno));
			st = -1;
			break;
		}
		if (cl->limit) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			trim(g->dir, g->nest.version, cl->limit, g->orig);
			nanosleep(&ts, NULL);
		}
	}
	return st;
}

/* CMD run in its cgroup, the signals we get passed on to it: what run exits with. */
static int run_cmd(struct run_cg *g, const struct run_cli *cl)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	struct sigaction sa = { .sa_handler = forward };
	sigset_t set;
	pid_t pid;
	int st;

	/*
	 * An ignored SIGCHLD would let the kernel reap CMD and lose its status;
	 * the signals we pass on must reach us even if our caller blocked them.
	 */
	signal(SIGCHLD, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&set, sigs[i]);
	}
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0)
		exec_cmd(g, cl);
	if (pid < 0) {
		cli_warn("cannot fork: %s", strerror(errno));
		return EXIT_PARTIAL;
	}
	child = pid;
	st = wait_cmd(pid, g, cl);
	child = 0;
	return st == -1 ? EXIT_PARTIAL : WIFEXITED(st) ? WEXITSTATUS(st)
	       : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : EXIT_PARTIAL;
}

/*
 * CMD is gone: what it left running goes back with us, then its cache is
 * dropped and its cgroup removed; with -v, how much that was.
 */
static void teardown(struct run_cg *g, const struct run_cli *cl)
{
	const char *dir = g->dir;
	uint64_t left, after;
	bool clean = true;
	int rc, moved;

	moved = pc_cgroup_move_procs(dir, g->nest.leaf[0] ? g->nest.leaf : g->nest.parent);
	if (moved > 0)
		cli_warn("%d processes outlived the command; moved back to '%s' (what they "
			 "cache from now on stays)", moved, g->nest.parent);
	else if (moved < 0)
		cli_warn("cannot move what '%s' left running out of '%s': %s", cl->cmd[0], dir,
			 strerror(-moved));
	sync();	/* dirty pages must be written before they can be dropped */
	left = cache_bytes(dir, g->nest.version);
	rc = pc_cgroup_drop_cache(dir, g->nest.version);
	after = cache_bytes(dir, g->nest.version);
	if (rc < 0)
		cli_warn("cannot drop the cache of '%s': %s", dir, strerror(-rc));
	for (int i = 0; i < 50; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (rmdir(dir) == 0 || errno == ENOENT)
			break;
		nanosleep(&ts, NULL);
		if (i == 49) {
			cli_warn("cannot remove '%s': %s", dir, strerror(errno));
			clean = false;
		}
	}
	rc = pc_cgroup_nest_release(&g->nest);
	if (rc < 0) {
		cli_warn("cannot move back to '%s' and undo its cgroup.subtree_control: %s",
			 g->nest.parent, strerror(-rc));
		clean = false;
	}
	/* what could not be undone stays noted, for the next run */
	if (clean)
		bench_state_close(&g->state);
	if (cl->verbose) {
		char a[32], b[32], c[32];

		fprintf(stderr, "pagecache run: '%s' left %s cached; %s dropped, %s could not be dropped\n",
			cl->cmd[0], pc_human_size(left, a, sizeof(a)),
			pc_human_size(left - (after < left ? after : left), b, sizeof(b)),
			pc_human_size(after, c, sizeof(c)));
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_cli cl = { 0 };
	struct run_cg g = { .orig = "-1" };
	int rc, status;

	rc = parse(&cl, argc, argv);
	if (rc >= 0)
		return rc;
	rc = make_cgroup(&g, &cl);
	if (rc >= 0)
		return rc;
	status = run_cmd(&g, &cl);
	teardown(&g, &cl);
	return status;
}
