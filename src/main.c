/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: global options and the command table, the index a newcomer
 * reads first. Exit codes: 0 all done, 1 done with failures (each named on
 * stderr and counted in the summary), 2 usage error.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{ "stat", cmd_stat, "how much of files and trees is cached (dirty, evicted, ...)" },
	{ "warm", cmd_warm, "read files into the cache, verified, within a memory budget" },
	{ "evict", cmd_evict, "write back and drop files from the cache; say what stayed" },
	{ "lock", cmd_lock, "keep files cached (mlock) until stopped" },
	{ "snapshot", cmd_snapshot, "record what of files and trees is cached, to restore later" },
	{ "restore", cmd_restore, "bring a snapshot's pages back, skipping files that changed" },
	{ "show", cmd_show, "print what a snapshot holds" },
	{ "diff", cmd_diff, "compare two snapshots: files and pages gained and lost" },
	{ "run", cmd_run, "run a command that leaves no trace in the page cache" },
	{ "cgroups", cmd_cgroups, "page cache per memory cgroup (v1 and v2)" },
	{ "tune", cmd_tune, "swap readahead: state, hit ratio, advice; --auto adjusts page-cluster" },
	{ "bench", cmd_bench, "experiments: warmup, readtwice, swapin; compare results" },
};

static void usage(FILE *o)
{
	fprintf(o, "Usage: pagecache COMMAND [OPTIONS] [PATH...]\n\n"
		   "See, warm, evict, lock, snapshot and restore the Linux page cache, per file,\n"
		   "tree, process and memory cgroup; contain commands; measure the kernel.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(o, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(o, "\nGlobal options:\n"
		   "  -h, --help     this text; 'pagecache COMMAND --help' for a command\n"
		   "  -V, --version  print the version\n\n"
		   "Exit status: 0 all done, 1 done with failures (each named on stderr),\n"
		   "2 usage error. Every command that prints data takes --json.\n"
		   "Examples:\n"
		   "  pagecache stat -v /var/lib/mysql      what is cached, file by file\n"
		   "  pagecache warm --max-mem 4G /srv/db   read it in, verified\n"
		   "  pagecache evict big.log               drop it, say what stayed\n"
		   "Manual: man pagecache, man pagecache-stat, ...\n");
}

static void raise_nofile(void)
{
	struct rlimit rl;

	/* Warming keeps files open while their reads are in flight. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int main(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : NULL;
	int rc;

	opterr = 0;			/* our own message names the option */
	signal(SIGPIPE, SIG_IGN);	/* EPIPE is normal: `pagecache stat | head` */
	raise_nofile();
	if (pc_sys_inject_env(getenv("PAGECACHE_FAULT")) < 0) {
		fprintf(stderr, "pagecache: bad PAGECACHE_FAULT '%s'\n", getenv("PAGECACHE_FAULT"));
		return EXIT_USAGE;
	}
	if (!verb) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !strcmp(verb, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "-V") || !strcmp(verb, "--version")) {
		printf("pagecache %s\n", PC_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(verb, commands[i].name))
			continue;
		cli_cmd = commands[i].name;
		rc = commands[i].fn(argc - 1, argv + 1);
		if (fclose(stdout) != 0 && errno != EPIPE) {
			fprintf(stderr, "pagecache: cannot write output: %s\n", strerror(errno));
			return EXIT_PARTIAL;
		}
		return rc;
	}
	fprintf(stderr, "pagecache: '%s' is not a command. See 'pagecache --help'.\n", verb);
	return EXIT_USAGE;
}
