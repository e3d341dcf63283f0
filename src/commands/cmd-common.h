/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-common.h: the steps that the file-walking commands (stat, warm,
 * evict) take alike: after their options, the output and the paths; the
 * walk with its per-file table; the failures line of their summary.
 * Written once here, so that the commands say the same things the same way.
 */
#ifndef PC_CMD_COMMON_H
#define PC_CMD_COMMON_H

#include "cli.h"

/*
 * After a file-walking command's getopt loop (opt: cli_getopt's last
 * answer): --help's or a refused option's exit status (p->exit), or the
 * output set up and the paths taken (cli_start; on a usage error there, t
 * is released). -1: go on; else the exit status.
 */
int cli_files_begin(const struct cli_parser *p, int opt, const struct cli_opts *co,
		    struct targets *t, int argc, char **argv);

/*
 * The walk: when files are listed, the table's columns first (rows are
 * written as they come, so before the walk), then t's walk with file()
 * for each; a failed walk is said. Returns when the walk began (pc_now()).
 */
double cli_files_walk(struct targets *t, bool list, const struct ocol *cols, size_t ncols,
		      int (*file)(struct pc_walk_entry *, void *), void *arg);

/* The summary's line for people about failures, when there were any. */
void cli_human_failures(void);

#endif
