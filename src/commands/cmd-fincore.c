/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-fincore.c: the fincore personality (pagecache invoked as fincore, or
 * `pagecache fincore ARGS`). Not written yet.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

int cmd_fincore(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "%s: this personality is not built yet\n", argv[0]);
	return EXIT_USAGE;
}
