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
	"  readtwice  vm-scalability's lru-file-readtwice in N memory cgroups: LRU and\n"
	"             lruvec lock scaling, per reader, per cgroup and in aggregate\n"
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
	"Options of readtwice:\n"
	"      --cgroups N        memory cgroups, one sparse file each (default 2)\n"
	"      --readers-per-cgroup K   reader processes per cgroup (default 2)\n"
	"      --layout L         per-cgroup (default) or shared (all in one memcg)\n"
	"      --size SIZE        bytes per sparse file (default 64G: holes, no I/O)\n"
	"      --duration S       seconds (default 10; --quick: 2)\n"
	"\n"
	"Both need root: they drop the page cache, make cgroups and mounts (all\n"
	"removed again, on SIGINT too).\n"
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
		{ "cgroups", required_argument, NULL, 'C' },
		{ "readers-per-cgroup", required_argument, NULL, 'K' },
		{ "layout", required_argument, NULL, 'L' },
		{ "size", required_argument, NULL, 'Z' },
		{ "duration", required_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		FORMAT_LONGOPTS,
		{ 0 }
	};
	struct warmup_opts wo = { .dir = "/var/tmp/pagecache-bench", .rows = 15647665, .trials = 5 };
	struct cli_opts co = { OUT_HUMAN };
	struct readtwice_opts ro = { .cgroups = 2, .readers = 2, .size = 64ull << 30, .duration = 10 };
	bool rows_set = false, trials_set = false, readtwice, dur_set = false;
	char *end;
	int opt, rc;

	cli_begin(argc, argv);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage_text, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "warmup") && strcmp(argv[1], "readtwice"))
		return cli_usage_error("unknown experiment '%s' (see --help)", argv[1]);
	readtwice = !strcmp(argv[1], "readtwice");
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'C':
			ro.cgroups = (int)strtol(optarg, &end, 10);
			if (*end || ro.cgroups < 1 || ro.cgroups > 256)
				return cli_usage_error("invalid cgroup count '%s' (1-256)", optarg);
			break;
		case 'K':
			ro.readers = (int)strtol(optarg, &end, 10);
			if (*end || ro.readers < 1 || ro.readers > 64)
				return cli_usage_error("invalid readers per cgroup '%s' (1-64)", optarg);
			break;
		case 'L':
			if (!strcmp(optarg, "shared"))
				ro.shared = true;
			else if (strcmp(optarg, "per-cgroup"))
				return cli_usage_error("unknown layout '%s' (per-cgroup or shared)", optarg);
			break;
		case 'Z':
			if (pc_parse_size(optarg, &ro.size) < 0 || ro.size < (1u << 20))
				return cli_usage_error("invalid size '%s' (at least 1M)", optarg);
			break;
		case 'U':
			ro.duration = strtod(optarg, &end);
			if (*end || ro.duration <= 0 || ro.duration > 3600)
				return cli_usage_error("invalid duration '%s' (seconds, up to 3600)", optarg);
			dur_set = true;
			break;
		case 'Q':
			if (!dur_set)
				ro.duration = 2;
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
	if (readtwice) {
		out_list_declare("cgroups");
		out_list_declare("readers");
		out_list_declare("errors");
		rc = bench_readtwice(&ro);
		if (out_flush() < 0)
			return EXIT_PARTIAL;
		return rc;
	}
	out_list_declare("conditions");
	out_list_declare("errors");
	wo.progress = co.fmt == OUT_HUMAN && cli_stderr_tty();
	rc = bench_warmup(&wo);
	if (out_flush() < 0)
		return EXIT_PARTIAL;
	return rc;
}
