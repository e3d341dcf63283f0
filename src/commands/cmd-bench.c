/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-bench.c: `pagecache bench` runs pagecache-bench, the experiments'
 * own program (bench/), as git runs its helpers: the experiments carry
 * SQLite, which the everyday pagecache does not. The helper gets argv as
 * this command got it, and PAGECACHE_EXE, the pagecache that ran it (warmup
 * runs its snapshot and restore). It is looked for, in order:
 *   1. beside this program (a build tree: build/pagecache-bench);
 *   2. in LIBEXECDIR/pagecache/ under the tree this program was installed
 *      in: when it is R + BINDIR/pagecache, R + LIBEXECDIR/pagecache/ (R
 *      is empty once installed; a DESTDIR staging tree or a moved one
 *      works as well);
 *   3. in LIBEXECDIR/pagecache/ itself.
 * Never through PATH: `sudo pagecache bench` runs what was installed with
 * pagecache, not what a PATH offers.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "paths.h"		/* made by make: bindir and libexecdir */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELPER "pagecache-bench"

/* The first candidate that exists in ret (PATH_MAX); 0, or -ENOENT with the places looked in in tried. */
static int find_helper(const char *self, char *ret, char *tried, size_t tlen)
{
	const char *slash = strrchr(self, '/');
	size_t dlen = slash ? (size_t)(slash - self) : 0, blen = strlen(PC_BINDIR);
	char cand[3][PATH_MAX];
	int n = 0;

	if (slash) {
		snprintf(cand[n++], PATH_MAX, "%.*s/" HELPER, (int)dlen, self);
		if (dlen >= blen && !strncmp(self + dlen - blen, PC_BINDIR, blen))
			snprintf(cand[n++], PATH_MAX, "%.*s" PC_LIBEXECDIR "/pagecache/" HELPER,
				 (int)(dlen - blen), self);
	}
	snprintf(cand[n++], PATH_MAX, PC_LIBEXECDIR "/pagecache/" HELPER);
	tried[0] = 0;
	for (int i = 0; i < n; i++) {
		size_t used = strlen(tried);

		if (access(cand[i], X_OK) == 0) {
			strcpy(ret, cand[i]);
			return 0;
		}
		snprintf(tried + used, tlen - used, "%s'%s'", i ? ", " : "", cand[i]);
	}
	return -ENOENT;
}

int cmd_bench(int argc, char **argv)
{
	char self[PATH_MAX], helper[PATH_MAX], tried[3 * PATH_MAX + 16];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int err;

	self[n > 0 ? n : 0] = 0;
	if (find_helper(self, helper, tried, sizeof(tried)) == 0) {
		if (n > 0)
			setenv("PAGECACHE_EXE", self, 1);
		argv[0] = HELPER;
		execv(helper, argv);
		err = errno;
	} else {
		err = ENOENT;
		snprintf(helper, sizeof(helper), HELPER);
	}
	cli_begin(argc, argv);		/* JSON on stdout even now, under --json */
	if (err == ENOENT)
		cli_warn("cannot run the experiments: " HELPER " is not installed (looked for %s)",
			 tried);
	else
		cli_warn("cannot run '%s': %s", helper, strerror(err));
	if (out_format() == OUT_JSON) {
		struct orec r = { 0 };

		orec_str(&r, "path", helper, 0);
		orec_str(&r, "error", "cannot run", 0);
		orec_str(&r, "reason", strerror(err), 0);
		out_list_add("errors", &r);
		out_flush();
	}
	return EXIT_PARTIAL;
}
