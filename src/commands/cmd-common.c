/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-common.c: what stat, warm and evict do alike around their walk
 * (cmd-common.h): one copy of the setup after the options, of the walk
 * with its per-file table, and of the summary's failures line, so that a
 * fix to one is a fix to all three.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

#include <string.h>

int cli_files_begin(const struct cli_parser *p, int opt, const struct cli_opts *co,
		    struct targets *t, int argc, char **argv)
{
	if (opt == CLI_STOP)
		return p->exit;
	if (cli_start(co, t, argc, argv) < 0)
		return EXIT_USAGE;
	return -1;
}

double cli_files_walk(struct targets *t, bool list, const struct ocol *cols, size_t ncols,
		      int (*file)(struct pc_walk_entry *, void *), void *arg)
{
	double t0;
	int rc;

	if (list) {
		targets_rank_index(t);	/* none: by path alone, as before */
		out_sort("files", "path");
		out_columns("files", cols, ncols);
	}
	t0 = pc_now();
	rc = targets_walk(t, file, arg);
	if (rc < 0)
		cli_warn("walk failed: %s", strerror(-rc));
	return t0;
}

void cli_human_failures(void)
{
	if (cli_failures())
		out_human_line("        Failures: %u (named above)", cli_failures());
}
