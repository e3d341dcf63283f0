/*
 * cmd-run.c: `pagecache run --no-cache -- CMD`: run a command so that it
 * leaves the page cache as it found it. nocache does this with
 * LD_PRELOAD, which static binaries, mmap readers, io_uring and raw
 * syscalls bypass; a memory cgroup sees them all. CMD runs in a fresh
 * memory cgroup under ours; a page is charged to the cgroup of the
 * process that first read it, so what CMD brings in is charged there, and
 * pages that were cached before stay charged where they were. When CMD
 * exits, the cgroup's cache is written back and dropped (v1 force_empty,
 * v2 memory.reclaim) and the cgroup removed, on every path. With
 * --cache-limit, its cache is also held under a size while it runs, by
 * reclaiming the excess: never by a limit that could OOM-kill a command
 * whose anonymous memory needs more.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
	"Usage: pagecache run --no-cache [OPTIONS] -- CMD [ARG...]\n"
	"       pagecache run --cache-limit SIZE [OPTIONS] -- CMD [ARG...]\n"
	"\n"
	"Run CMD so that it leaves the page cache as it found it: it runs in a fresh\n"
	"memory cgroup, and what it brought into the cache is dropped when it exits\n"
	"(pages that were cached before it started stay). Unlike nocache's\n"
	"LD_PRELOAD, this covers static binaries, mmap readers and io_uring.\n"
	"Needs root (cgroups). The exit status is CMD's (128+N if signal N killed\n"
	"it); signals sent to pagecache are passed on to CMD.\n"
	"\n"
	"Options:\n"
	"      --no-cache         drop what CMD cached when it exits\n"
	"      --cache-limit SIZE also keep CMD's page cache under SIZE while it runs\n"
	"                         (the excess is reclaimed; CMD is never OOM-killed\n"
	"                         for it)\n"
	"  -v, --verbose          say on stderr how much CMD left cached and dropped\n"
	"  -h, --help             this text\n"
	"\n"
	"Examples:\n"
	"  pagecache run --no-cache -- tar czf /backup/db.tgz /var/lib/db\n"
	"  pagecache run --cache-limit 256M -- rsync -a /src/ /dst/\n";

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
static void trim(const char *dir, int version, uint64_t limit)
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
		 * reclaim (EBUSY, never OOM, if it cannot), then lift it again */
		snprintf(val, sizeof(val), "%llu\n", (unsigned long long)(s.usage - (s.file - limit)));
		pc_cgroup_write(dir, "memory.limit_in_bytes", val);
		pc_cgroup_write(dir, "memory.limit_in_bytes", "-1\n");
	}
}

int cmd_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "no-cache", no_argument, NULL, 'N' },
		{ "cache-limit", required_argument, NULL, 'L' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
	char parent[700], dir[800], name[64];
	bool no_cache = false, verbose = false;
	uint64_t limit = 0, left = 0, after = 0;
	int opt, version, rc, st = 0, status;
	struct sigaction sa = { .sa_handler = forward };
	pid_t pid;

	optind = 1;
	/* '+': options stop at CMD, which has options of its own */
	while ((opt = getopt_long(argc, argv, "+vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'N':
			no_cache = true;
			break;
		case 'L':
			if (pc_parse_size(optarg, &limit) < 0 || !limit)
				return cli_usage_error("invalid size '%s' (e.g. 256M)", optarg);
			no_cache = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_usage_error("unknown option or missing value: '%s'",
					       argv[optind - 1]);
		}
	}
	if (!no_cache)
		return cli_usage_error("say --no-cache or --cache-limit SIZE");
	if (optind >= argc)
		return cli_usage_error("no command given (pagecache run --no-cache -- CMD)");
	rc = pc_cgroup_child_parent(parent, sizeof(parent), &version);
	if (rc < 0) {
		cli_warn("cannot run: %s", rc == -EOPNOTSUPP
			 ? "no cgroup v2 ancestor delegates the memory controller to its children"
			 : "no memory cgroup controller (v1 or v2) is mounted");
		return EXIT_PARTIAL;
	}
	snprintf(name, sizeof(name), "pagecache-run-%d", getpid());
	rc = pc_cgroup_create(parent, name, dir, sizeof(dir));
	if (rc < 0) {
		cli_warn("cannot create memory cgroup '%s/%s': %s%s", parent, name, strerror(-rc),
			 rc == -EACCES || rc == -EPERM ? " (run as root)" : "");
		return EXIT_PARTIAL;
	}
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid == 0) {
		for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
			signal(sigs[i], SIG_DFL);
		rc = pc_cgroup_enter(dir, getpid());
		if (rc < 0) {
			fprintf(stderr, "pagecache: cannot enter '%s': %s\n", dir, strerror(-rc));
			_exit(126);
		}
		execvp(argv[optind], argv + optind);
		fprintf(stderr, "pagecache: cannot run '%s': %s\n", argv[optind], strerror(errno));
		_exit(errno == ENOENT ? 127 : 126);
	}
	if (pid < 0) {
		rc = -errno;
		rmdir(dir);
		cli_warn("cannot fork: %s", strerror(-rc));
		return EXIT_PARTIAL;
	}
	child = pid;
	for (;;) {
		pid_t w = waitpid(pid, &st, limit ? WNOHANG : 0);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			st = 0;
			break;
		}
		if (limit) {
			struct timespec ts = { 0, 50 * 1000 * 1000 };

			trim(dir, version, limit);
			nanosleep(&ts, NULL);
		}
	}
	child = 0;
	status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;

	/* CMD is gone: move any process it left behind out, then drop and remove */
	{
		char procs[900], line[32];
		FILE *f;
		int moved = 0;

		snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
		f = fopen(procs, "re");
		while (f && fgets(line, sizeof(line), f))
			if (pc_cgroup_enter(parent, atoi(line)) == 0)
				moved++;
		if (f)
			fclose(f);
		if (moved)
			cli_warn("%d processes outlived the command; moved back to '%s' (what they "
				 "cache from now on stays)", moved, parent);
	}
	sync();	/* dirty pages must be written before they can be dropped */
	left = cache_bytes(dir, version);
	rc = pc_cgroup_drop_cache(dir, version);
	after = cache_bytes(dir, version);
	if (rc < 0)
		cli_warn("cannot drop the cache of '%s': %s", dir, strerror(-rc));
	for (int i = 0; i < 50; i++) {
		struct timespec ts = { 0, 20 * 1000 * 1000 };

		if (rmdir(dir) == 0 || errno == ENOENT)
			break;
		nanosleep(&ts, NULL);
		if (i == 49)
			cli_warn("cannot remove '%s': %s", dir, strerror(errno));
	}
	if (verbose) {
		char a[32], b[32], c[32];

		fprintf(stderr, "pagecache run: '%s' left %s cached; %s dropped, %s could not be dropped\n",
			argv[optind], pc_human_size(left, a, sizeof(a)),
			pc_human_size(left - (after < left ? after : left), b, sizeof(b)),
			pc_human_size(after, c, sizeof(c)));
	}
	return status;
}
