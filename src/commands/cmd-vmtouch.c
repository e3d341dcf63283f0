/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-vmtouch.c: the vmtouch personality (pagecache invoked as vmtouch, or
 * `pagecache vmtouch ARGS`). Not written yet.
 */
#define _GNU_SOURCE
#include "commands/cmd-common.h"

int cmd_vmtouch(int argc, char **argv)
{
	(void)argc;
	fprintf(stderr, "%s: this personality is not built yet\n", argv[0]);
	return EXIT_USAGE;
}
