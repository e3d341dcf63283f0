/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * warm-restart.c: what libpagecache is for, in a page of C. Before a
 * service stops, snapshot which pages of its tree are cached; after it
 * (or the machine) restarts, read them back into the page cache, charged
 * to the service's memory cgroup and within a memory budget, so it starts
 * warm.
 *
 *   warm-restart snapshot TREE FILE
 *   warm-restart restore FILE [CGROUP [MAX-BYTES]]     (CGROUP "": none)
 *
 * Build: cc -o warm-restart warm-restart.c $(pkg-config --cflags --libs pagecache)
 * (tests/cli/t-install.sh builds and runs it against the installed library.)
 */
#include <inttypes.h>
#include <pagecache.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int snapshot(const char *tree, const char *file)
{
	struct pc_snapshot_opts o = { .size = sizeof(o), .paths = &tree, .npaths = 1 };
	struct pc_snapshot_result res = { .size = sizeof(res) };
	int rc = pc_snapshot_write(&o, file, &res);

	if (rc < 0) {
		fprintf(stderr, "snapshot of %s: %s\n", tree, strerror(-rc));
		return 1;
	}
	printf("snapshot: %" PRIu64 " files, %" PRIu64 " pages\n", res.files, res.pages);
	return 0;
}

static void skipped(void *arg, const char *path, enum pc_restore_skip kind, const char *why)
{
	(void)arg;
	(void)kind;
	fprintf(stderr, "skipped %s: %s\n", path, why);
}

static int restore(const char *file, const char *cgroup, const char *max)
{
	struct pc_restore_opts o = PC_RESTORE_OPTS_INIT;
	const struct pc_restore_result *t;
	struct pc_restore *r;
	char dir[4096], why[256];
	int rc;

	/* the pages are charged to the reader's memory cgroup: join the service's */
	if (cgroup && (pc_cgroup_resolve(cgroup, dir, sizeof(dir), why, sizeof(why)) < 0 ||
		       pc_cgroup_enter(dir, getpid()) < 0)) {
		fprintf(stderr, "memory cgroup %s: cannot join\n", cgroup);
		return 1;
	}
	if (max)
		o.max_mem = strtoull(max, NULL, 10);	/* and never more than this */
	o.on_skip = skipped;
	if ((rc = pc_restore_open(file, &o, &r)) < 0) {
		fprintf(stderr, "%s: %s\n", file, strerror(-rc));
		return 1;
	}
	rc = pc_restore_run(r);
	t = pc_restore_totals(r);
	printf("restore: %" PRIu64 " pages wanted, %" PRIu64 " cached before, %" PRIu64
	       " read%s\n", t->pages, t->cached_before, t->read,
	       t->budget_stopped ? " (stopped at the budget)" : "");
	pc_restore_free(r);
	return rc == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	int st;
	pid_t pid;

	if (argc == 4 && !strcmp(argv[1], "snapshot"))
		return snapshot(argv[2], argv[3]);
	if (argc < 3 || argc > 5 || strcmp(argv[1], "restore")) {
		fprintf(stderr, "usage: warm-restart snapshot TREE FILE\n"
				"       warm-restart restore FILE [CGROUP [MAX-BYTES]]\n");
		return 2;
	}
	if (argc == 3 || !*argv[3])
		return restore(argv[2], NULL, argc == 5 ? argv[4] : NULL);
	/* a child joins the cgroup and reads, so this process stays where it is */
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(restore(argv[2], argv[3], argc == 5 ? argv[4] : NULL));
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}
