/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * main.c: global options and the command table, the index a newcomer
 * reads first. Exit codes: 0 all done, 1 done with failures (each named on
 * stderr and counted in the summary), 2 usage error.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "options/bench-opts.h"

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
	const struct cli_spec *spec;	/* its options (opts.h); NULL: its own parser */
} commands[] = {
	{ "stat", cmd_stat, "how much of files and trees is cached (dirty, evicted, ...)", &stat_spec },
	{ "warm", cmd_warm, "read files into the cache, verified, within a memory budget", &warm_spec },
	{ "evict", cmd_evict, "write back and drop files from the cache; say what stayed", &evict_spec },
	{ "lock", cmd_lock, "keep files cached (mlock) until stopped", &lock_spec },
	{ "snapshot", cmd_snapshot, "record what of files and trees is cached, to restore later", &snapshot_spec },
	{ "restore", cmd_restore, "bring a snapshot's pages back, skipping files that changed", &restore_spec },
	{ "show", cmd_show, "print what a snapshot holds", &show_spec },
	{ "record", cmd_record, "record which pages a command, process or cgroup uses, and when", &record_spec },
	{ "diff", cmd_diff, "compare two snapshots: files and pages gained and lost", &diff_spec },
	{ "run", cmd_run, "run a command that leaves no trace in the page cache", &run_spec },
	{ "top", cmd_top, "the page cache live: accesses, misses, hit ratio per process, file, cgroup", &top_spec },
	{ "cgroups", cmd_cgroups, "page cache per memory cgroup (v1 and v2)", &cgroups_spec },
	{ "tune", cmd_tune, "swap readahead: state, hit ratio, advice; --auto adjusts page-cluster", &tune_spec },
	{ "push", cmd_push, "put a snapshot into an OCI registry (through skopeo)", &push_spec },
	{ "pull", cmd_pull, "fetch a snapshot from an OCI registry, checked, atomically", &pull_spec },
	{ "hook", cmd_hook, "an OCI runtime hook: containers start warm (podman, CRI-O)", &hook_spec },
	{ "daemon", cmd_daemon, "run as a service: restore at start, snapshot on an interval, lock", &daemon_spec },
	{ "status", cmd_status, "ask the daemon how its services stand", &status_spec },
	{ "bench", cmd_bench, "experiments: warmup, readtwice, swapin; compare and draw results", &bench_spec },
};

/*
 * The tools pagecache stands in for: invoked by their name (a symlink to
 * pagecache, as update-alternatives makes) or as `pagecache NAME ARGS`,
 * pagecache reads their options and prints their output. Where the old
 * tool lies or loses data, the personality differs and says so on stderr
 * (docs/compat.md lists every difference).
 */
static const struct command personalities[] = {
	{ "vmtouch", cmd_vmtouch, "vmtouch 1.3.1: its options, its output; honest residency", NULL },
	{ "fincore", cmd_fincore, "util-linux fincore 2.38: its columns and JSON; honest residency", NULL },
};

static void usage(FILE *o)
{
	fprintf(o, "Usage: pagecache COMMAND [OPTIONS] [PATH...]\n\n"
		   "See, warm, evict, lock, snapshot and restore the Linux page cache, per file,\n"
		   "tree, process and memory cgroup; contain commands; measure the kernel.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(o, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(o, "\nDrop-in personalities (also as a symlink named so):\n");
	for (size_t i = 0; i < sizeof(personalities) / sizeof(personalities[0]); i++)
		fprintf(o, "  %-8s %s\n", personalities[i].name, personalities[i].summary);
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

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* Hidden: the completion scripts, and a command's options for the man page check. */
static int hidden(int argc, char **argv)
{
	struct cli_cmdinfo info[sizeof(commands) / sizeof(commands[0])];
	const struct command *c;

	if (!strcmp(argv[1], "--list-options")) {
		c = argc == 3 ? find_command(argv[2]) : NULL;
		if (!c || !c->spec) {
			fprintf(stderr, "pagecache: --list-options COMMAND (one with a table)\n");
			return EXIT_USAGE;
		}
		return cli_list_options(c->spec, stdout);
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		info[i] = (struct cli_cmdinfo){ commands[i].name, commands[i].summary,
						commands[i].spec };
	if (argc != 3 || cli_completion(argv[2], info, sizeof(info) / sizeof(info[0]), stdout) < 0) {
		fprintf(stderr, "pagecache: --completion bash|zsh\n");
		return EXIT_USAGE;
	}
	return 0;
}

/*
 * The command to type for the file named word, if it can be pasted as it
 * is printed: single-quoted, so only a name without quotes or
 * backslashes, and nothing in it that the escaping (cli_warn) changed.
 */
static bool pastable(const char *word)
{
	char *esc = out_escape(word);
	bool ok = esc && !strcmp(esc, word) && !strpbrk(word, "'\\");

	free(esc);
	return ok;
}

/*
 * The word is not a command, nor a path (a path is vmtouch's line: see
 * main). Like every message, the word is escaped for the terminal
 * (cli_warn). Under --json the error is JSON.
 */
static int not_a_command(int argc, char **argv, const char *word)
{
	cli_begin(argc, argv);
	cli_warn("'%s' is not a command. See 'pagecache --help'.", word);
	if (out_format() == OUT_JSON) {
		struct orec r = { 0 };

		orec_str(&r, "error", "not a command", 0);
		orec_str(&r, "command", word, 0);
		orec_u64(&r, "exit", EXIT_USAGE, 0);
		out_object("usage", &r);
		out_flush();
	}
	return EXIT_USAGE;
}

/* The personality named by argv[0]'s last component or by word, or NULL. */
static const struct command *find_personality(const char *name)
{
	const char *base = strrchr(name, '/');

	base = base ? base + 1 : name;
	for (size_t i = 0; i < sizeof(personalities) / sizeof(personalities[0]); i++)
		if (!strcmp(base, personalities[i].name))
			return &personalities[i];
	return NULL;
}

static int run_command(const struct command *c, int argc, char **argv)
{
	int rc;

	cli_cmd = c->name;
	rc = c->fn(argc, argv);
	if (fclose(stdout) != 0 && errno != EPIPE) {
		fprintf(stderr, "pagecache: cannot write output: %s\n", strerror(errno));
		return EXIT_PARTIAL;
	}
	return rc;
}

int main(int argc, char **argv)
{
	const char *verb = argc > 1 ? argv[1] : NULL;
	const struct command *c;
	int rc;

	opterr = 0;			/* our own message names the option */
	signal(SIGPIPE, SIG_IGN);	/* EPIPE is normal: `pagecache stat | head` */
	raise_nofile();
	rc = cli_fault_env();
	if (rc)
		return rc;
	/* vmtouch or fincore: a symlink's name, or the first word */
	c = find_personality(argv[0]);
	if (c)
		return run_command(c, argc, argv);
	c = verb ? find_personality(verb) : NULL;
	if (c && !strchr(verb, '/'))
		return run_command(c, argc - 1, argv + 1);
	if (!verb) {
		usage(stderr);
		return EXIT_USAGE;
	}
	/* -h alone is help; with paths it is vmtouch's (every hardlink) */
	if ((!strcmp(verb, "-h") && argc == 2) || !strcmp(verb, "--help") ||
	    (!strcmp(verb, "help") && argc < 3)) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(verb, "help")) {	/* help CMD: CMD --help */
		static char *hargv[4] = { NULL, NULL, "--help", NULL };

		if (!find_command(argv[2]))
			return not_a_command(argc, argv, argv[2]);
		hargv[0] = argv[0];
		hargv[1] = argv[2];
		argc = 3;
		argv = hargv;
		verb = argv[1];
	} else if (!strcmp(verb, "--completion") || !strcmp(verb, "--list-options")) {
		return hidden(argc, argv);
	} else if ((verb[0] == '-' && strcmp(verb, "-V") && strcmp(verb, "--version")) ||
		   (verb[0] != '-' && !find_command(verb) && access(verb, F_OK) == 0)) {
		/*
		 * vmtouch's command line, as vmtouch reads it: a flag first, or
		 * a path first (`pagecache DIR`, `pagecache DIR -e`). A word
		 * that is a command is the command, even where a file has that
		 * name: `pagecache ./stat` is the file.
		 */
		char **nargv;

		verb = cli_vmtouch_argv(argc, argv, &argc, &nargv);
		if (!verb)
			return EXIT_USAGE;
		argv = nargv;
	}
	if (!strcmp(verb, "-V") || !strcmp(verb, "--version")) {
		printf("pagecache %s\n", PC_VERSION);
		return 0;
	}
	c = find_command(verb);
	if (!c)
		return not_a_command(argc, argv, verb);
	rc = run_command(c, argc - 1, argv + 1);
	/* `pagecache stat` alone, beside a file named stat: the command won; say how to get the file */
	if (rc == EXIT_USAGE && argc == 2 && access(verb, F_OK) == 0 && pastable(verb))
		fprintf(stderr, "pagecache: '%s' is a command; for the file of that name: "
			"pagecache './%s' (as vmtouch) or pagecache stat -- '%s'\n", verb, verb, verb);
	return rc;
}
