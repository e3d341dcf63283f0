/*
 * cmd-bench.c: `pagecache bench`: reproducible experiments on the
 * kernel's memory manager. Each experiment lives in bench/; this file is
 * its command line.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
	"Usage: pagecache bench EXPERIMENT [OPTIONS]\n"
	"\n"
	"Experiments:\n"
	"  warmup     a database after a restart: cold, restored by pagecache, warmed\n"
	"             by vmtouch, and warm; SQLite query latency per condition\n"
	"\n"
	"Options of warmup:\n"
	"      --quick            a 1.5 million-row database (about 170 MB), 3 trials\n"
	"      --rows N           rows in the database (default 15,647,665: about 1.8 GB)\n"
	"      --trials N         trials (default 5; conditions shuffled in each)\n"
	"      --dir DIR          where the database is made once and kept\n"
	"                         (default /var/tmp/pagecache-bench)\n"
	"  -h, --help             this text\n"
	FORMAT_HELP
	"\n"
	"It needs root: it drops the page cache between conditions.\n"
	"Example:\n"
	"  pagecache bench warmup --quick\n";

int cmd_bench(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quick", no_argument, NULL, 'Q' },
		{ "rows", required_argument, NULL, 'N' },
		{ "trials", required_argument, NULL, 't' },
		{ "dir", required_argument, NULL, 'D' },
		{ "worker", required_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		FORMAT_LONGOPTS,
		{ 0 }
	};
	struct warmup_opts wo = { .dir = "/var/tmp/pagecache-bench", .rows = 15647665, .trials = 5 };
	struct cli_opts co = { OUT_HUMAN };
	bool rows_set = false, trials_set = false;
	char *end;
	int opt, rc;

	cli_begin(argc, argv);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "warmup"))
		return cli_usage_error("unknown experiment '%s' (see --help)", argv[1]);
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'Q':
			if (!rows_set)
				wo.rows = 1500000;
			if (!trials_set)
				wo.trials = 3;
			break;
		case 'N':
			wo.rows = strtoull(optarg, &end, 10);
			if (*end || wo.rows < 10000)
				return cli_usage_error("invalid row count '%s' (at least 10000)", optarg);
			rows_set = true;
			break;
		case 't':
			wo.trials = (int)strtol(optarg, &end, 10);
			if (*end || wo.trials < 1 || wo.trials > 64)
				return cli_usage_error("invalid trials '%s' (1-64)", optarg);
			trials_set = true;
			break;
		case 'D':
			wo.dir = optarg;
			break;
		case 'W':
			return bench_warmup_worker(optarg);
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			if (cli_format_opt(&co, opt, argv) < 0)
				return EXIT_USAGE;
			break;
		}
	}
	out_init(co.fmt, co.bytes, false);
	out_list_declare("conditions");
	out_list_declare("errors");
	wo.progress = co.fmt == OUT_HUMAN && cli_stderr_tty();
	rc = bench_warmup(&wo);
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return rc;
}
