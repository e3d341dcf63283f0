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

/*
 * A pidfile (lock -P, vmtouch -P), so that exit removes it only while it is
 * still ours: another process may have written its own there since.
 */
struct cli_pidfile {
	const char *path;
	dev_t dev;
	ino_t ino;
};

/*
 * Our pid at pf->path, written beside it under a name of our own making
 * (O_EXCL) and renamed into place: a symlink, FIFO or other file planted
 * there is replaced, never written through. 0 or -errno.
 */
int cli_pidfile_write(struct cli_pidfile *pf);

/* Remove the pidfile if the file there is still the one we wrote, with our pid. */
void cli_pidfile_remove(const struct cli_pidfile *pf);

#endif
