/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-common.c: what stat, warm and evict do alike around their walk
 * (cmd-common.h): one copy of the setup after the options, of the walk
 * with its per-file table, and of the summary's failures line, so that a
 * fix to one is a fix to all three; and the pidfile that lock -P and the
 * vmtouch personality's -P write.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/*
 * Written beside FILE under a name of our own making (mkostemp: O_CREAT |
 * O_EXCL, so a link planted there makes it fail, never followed), then
 * renamed into place: rename replaces a symlink at FILE, it never writes
 * through one.
 */
int cli_pidfile_write(struct cli_pidfile *pf)
{
	char tmp[4096], buf[32];
	struct stat st;
	int fd, n, err;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", pf->path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", getpid());
	errno = 0;	/* a short write sets none */
	if (fchmod(fd, 0644) < 0 || fstat(fd, &st) < 0 || write(fd, buf, (size_t)n) != n ||
	    fsync(fd) < 0) {
		err = errno ? errno : EIO;
		close(fd);
		unlink(tmp);
		return -err;
	}
	if (close(fd) < 0 || rename(tmp, pf->path) < 0) {
		err = errno;
		unlink(tmp);
		return -err;
	}
	pf->dev = st.st_dev;
	pf->ino = st.st_ino;
	return 0;
}

/* Remove the pidfile if the file there is still the one we wrote, with our pid. */
void cli_pidfile_remove(const struct cli_pidfile *pf)
{
	char buf[32], want[32];
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(pf->path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == pf->dev &&
	    st.st_ino == pf->ino ? read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	if (n < 0)
		return;
	buf[n] = 0;
	snprintf(want, sizeof(want), "%d\n", getpid());
	if (!strcmp(buf, want))
		unlink(pf->path);
}
