/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench-opts.h: the options of `pagecache bench` (pagecache-bench). Their
 * table is in src/, as data, so that pagecache's completions and man page
 * check read it as pagecache-bench's parser does.
 */
#ifndef PC_BENCH_OPTS_H
#define PC_BENCH_OPTS_H

#include "options/opts.h"

/* ids past any letter: a command's own (CLI_OPT_OWN up), below the shared groups' */
enum {
	O_QUICK = 600, O_ROWS, O_TRIALS, O_DIR, O_WORKER, O_CGROUPS, O_READERS, O_LAYOUT,
	O_SIZE, O_DURATION, O_RUNS, O_PC, O_VMA, O_WORKLOAD, O_AUTO, O_AUTO_INTERVAL, O_WSS,
	O_LIMIT, O_PASSES, O_THREADS, O_SWAPDEV, O_OUTPUT, O_AUX_FILES, O_END
};

extern const struct cli_spec bench_spec;

#endif
