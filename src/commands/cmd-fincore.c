/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-fincore.c: the fincore personality (pagecache invoked as fincore, or
 * `pagecache fincore ARGS`). It reads util-linux fincore 2.38's options,
 * goes through its files as it does (in argument order, a failing one
 * named and passed over, directories left out silently, exit 1 if any
 * failed) and prints its table, raw lines or JSON, with residency from
 * lib's engine (pc_fd_residency), never from a mapping of our own.
 *
 * Where fincore lies, this differs, and says so on stderr once: for a file
 * the caller may not write, mincore answers "every page resident" and
 * fincore prints that; here PAGES and RES read "unknown" (null in JSON).
 * A FIFO is opened without waiting for a writer (fincore hangs there).
 * docs/compat.md lists every difference; tests/cli/t-compat-fincore.sh
 * runs the real fincore beside this one.
 *
 * The output goes through libsmartcols, the library fincore itself prints
 * with, rather than an imitation: its column widths and width hints, the
 * terminal's width, the escaping of odd bytes in a name (which depends on
 * the locale), raw's \x20 and JSON's layout are then util-linux's own, byte
 * for byte, in every case and in the versions to come, which an imitation
 * would follow only as far as its tests reach. libsmartcols1 is on every
 * Debian system (util-linux is essential); the Makefile links it
 * dynamically even in the static build, as Debian ships no archive of it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libsmartcols.h>
#include <locale.h>
#include <signal.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/stat.h>

#include "commands/cmd-common.h"

enum fc_col { FC_PAGES, FC_SIZE, FC_FILE, FC_RES };

static const struct fc_colinfo {
	const char *name;
	double whint;			/* libsmartcols' width hint, as fincore's */
	int flags;
	const char *help;
} fc_cols[] = {
	[FC_PAGES] = { "PAGES", 1, SCOLS_FL_RIGHT, "file data resident in memory in pages" },
	[FC_SIZE] = { "SIZE", 5, SCOLS_FL_RIGHT, "size of the file" },
	[FC_FILE] = { "FILE", 4, 0, "file name" },
	[FC_RES] = { "RES", 5, SCOLS_FL_RIGHT, "file data resident in memory in bytes" },
};
#define FC_NCOLS (sizeof(fc_cols) / sizeof(fc_cols[0]))
#define FC_MAXCOLS (FC_NCOLS * 2)	/* fincore's limit on -o's list */

struct fc_ctl {
	const char *prog;		/* fincore's name as invoked, without a path */
	struct libscols_table *tb;
	int cols[FC_MAXCOLS];
	size_t ncols;
	bool bytes, json;
	bool said_unknown;		/* the kernel's refusal, said once */
	long pagesize;
};

/*
 * util-linux's size_to_human_string with a one-letter suffix: binary
 * units, one decimal rounded half up, a trailing zero dropped ("97.7K",
 * "1M", "0B"), the locale's decimal point.
 */
static void fc_human(uint64_t bytes, char *buf, size_t bufsz)
{
	static const char letters[] = "BKMGTPE";
	const char *dp = localeconv()->decimal_point;
	int exp = 0;
	uint64_t dec, frac;

	while (exp < 60 && bytes >= (1ULL << (exp + 10)))
		exp += 10;
	dec = bytes >> exp;
	frac = exp ? bytes & ((1ULL << exp) - 1) : 0;
	if (frac) {
		/* three digits, then rounded to one */
		if (frac >= UINT64_MAX / 1000)
			frac = ((frac / 1024) * 1000) >> (exp - 10);
		else
			frac = (frac * 1000) >> exp;
		frac = ((frac + 50) / 100) * 10;
		if (frac == 100) {
			dec++;
			frac = 0;
		}
	}
	if (!dp || !*dp)
		dp = ".";
	if (frac)
		snprintf(buf, bufsz, "%" PRIu64 "%s%" PRIu64 "%c", dec, dp, frac / 10,
			 letters[exp / 10]);
	else
		snprintf(buf, bufsz, "%" PRIu64 "%c", dec, letters[exp / 10]);
}

static void fc_usage(const struct fc_ctl *c)
{
	printf("\nUsage:\n %s [options] file...\n", c->prog);
	printf("\nOptions:\n"
	       " -J, --json            use JSON output format\n"
	       " -b, --bytes           print sizes in bytes rather than in human readable format\n"
	       " -n, --noheadings      don't print headings\n"
	       " -o, --output <list>   output columns\n"
	       " -r, --raw             use raw output format\n"
	       "\n"
	       " -h, --help            display this help\n"
	       " -V, --version         display version\n"
	       "\nAvailable output columns:\n");
	for (size_t i = 0; i < FC_NCOLS; i++)
		printf(" %11s  %s\n", fc_cols[i].name, fc_cols[i].help);
	/* not util-linux's page: ours says where this one differs */
	printf("\nFor more details see pagecache-fincore(1).\n");
}

static int fc_tryhelp(const struct fc_ctl *c)
{
	fprintf(stderr, "Try '%s --help' for more information.\n", c->prog);
	return EXIT_FAILURE;
}

/*
 * One name of -o's list, [name, name + len): its column, or -1 said as
 * fincore says it (the rest of the list from that name on, as it does).
 */
static int fc_col_id(const struct fc_ctl *c, const char *name, size_t len)
{
	for (size_t i = 0; i < FC_NCOLS; i++)
		if (strlen(fc_cols[i].name) == len && !strncasecmp(name, fc_cols[i].name, len))
			return (int)i;
	fprintf(stderr, "%s: unknown column: %s\n", c->prog, name);
	return -1;
}

/*
 * -o LIST: the columns, in place of the default or after it with "+LIST".
 * Comma-separated; an empty name, an unknown one or too many end it with
 * -1 (fincore then exits 1, saying only the unknown name). The last name
 * runs to the end of the string, its comma included, as in util-linux.
 */
static int fc_columns(struct fc_ctl *c, const char *list)
{
	const char *begin = NULL;

	if (!list || !*list)
		return -1;
	if (*list == '+')
		list++;
	else
		c->ncols = 0;
	if (!*list)
		return -1;
	for (const char *p = list; *p; p++) {
		const char *end = NULL;
		int id;

		if (c->ncols >= FC_MAXCOLS)
			return -1;
		if (!begin)
			begin = p;
		if (*p == ',')
			end = p;
		if (!p[1])
			end = p + 1;
		if (!end)
			continue;
		if (end <= begin)
			return -1;
		id = fc_col_id(c, begin, (size_t)(end - begin));
		if (id < 0)
			return -1;
		c->cols[c->ncols++] = id;
		begin = NULL;
		if (!*end)
			break;
	}
	return 0;
}

static int fc_table(struct fc_ctl *c, bool noheadings, bool raw)
{
	scols_init_debug(0);
	c->tb = scols_new_table();
	if (!c->tb)
		return -ENOMEM;
	scols_table_enable_noheadings(c->tb, noheadings);
	scols_table_enable_raw(c->tb, raw);
	scols_table_enable_json(c->tb, c->json);
	if (c->json)
		scols_table_set_name(c->tb, "fincore");
	for (size_t i = 0; i < c->ncols; i++) {
		const struct fc_colinfo *ci = &fc_cols[c->cols[i]];
		struct libscols_column *cl;

		cl = scols_table_new_column(c->tb, ci->name, ci->whint, ci->flags);
		if (!cl)
			return -ENOMEM;
		if (!c->json)
			continue;
		/*
		 * fincore's types: FILE a string, SIZE and RES strings unless
		 * -b, PAGES a number. RES is written raw here always, quoted
		 * by fc_row when it is a string, so that an unknown RES can be
		 * null as an unknown PAGES is, not a string "null".
		 */
		if (c->cols[i] == FC_FILE || (c->cols[i] == FC_SIZE && !c->bytes))
			scols_column_set_json_type(cl, SCOLS_JSON_STRING);
		else
			scols_column_set_json_type(cl, SCOLS_JSON_NUMBER);
	}
	return 0;
}

/* A row: cached < 0 is residency the kernel would not tell. */
static int fc_row(struct fc_ctl *c, const char *name, uint64_t size, int64_t cached)
{
	struct libscols_line *ln = scols_table_new_line(c->tb, NULL);
	const char *unknown = c->json ? "null" : "unknown";

	if (!ln)
		return -ENOMEM;
	for (size_t i = 0; i < c->ncols; i++) {
		char buf[64], hum[32];
		const char *data = buf;

		switch (c->cols[i]) {
		case FC_FILE:
			data = name;
			break;
		case FC_PAGES:
			if (cached < 0)
				data = unknown;
			else
				snprintf(buf, sizeof(buf), "%" PRId64, cached);
			break;
		case FC_RES:
			if (cached < 0) {
				data = unknown;
			} else if (c->bytes) {
				snprintf(buf, sizeof(buf), "%" PRIu64,
					 (uint64_t)cached * (uint64_t)c->pagesize);
			} else {
				fc_human((uint64_t)cached * (uint64_t)c->pagesize, hum, sizeof(hum));
				snprintf(buf, sizeof(buf), c->json ? "\"%s\"" : "%s", hum);
			}
			break;
		case FC_SIZE:
			if (c->bytes)
				snprintf(buf, sizeof(buf), "%" PRIu64, size);
			else
				fc_human(size, buf, sizeof(buf));
			break;
		}
		if (scols_line_set_data(ln, i, data))
			return -ENOMEM;
	}
	return 0;
}

/*
 * One path, as fincore takes it: opened (symlinks followed), a directory
 * left out, an empty file (or a FIFO, a device: size 0) a row of zeros
 * without asking the kernel. Opened without waiting, so a FIFO with no
 * writer is a row of zeros where fincore blocks in open(2). 0: a row
 * or nothing to show; -1: failed, said.
 */
static int fc_file(struct fc_ctl *c, const char *name)
{
	struct pc_residency r = { 0 };
	struct stat st;
	int64_t cached = 0;
	int fd, rc;

	fd = open(name, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "%s: failed to open: %s: %s\n", c->prog, name, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0) {
		fprintf(stderr, "%s: failed to do fstat: %s: %s\n", c->prog, name, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return 0;
	}
	if (st.st_size > 0) {
		rc = pc_fd_residency(fd, (uint64_t)st.st_size, 0, 0, &r);
		if (rc < 0) {
			fprintf(stderr, "%s: failed to do mincore: %s: %s\n", c->prog, name,
				strerror(-rc));
			close(fd);
			return -1;
		}
		cached = (int64_t)r.cached;
		if (r.source == PC_SRC_NONE) {
			cached = -1;
			if (r.err != EPERM && r.err != EACCES) {
				fprintf(stderr, "%s: %s: residency unknown: %s\n", c->prog, name,
					strerror(r.err));
			} else if (!c->said_unknown) {
				fprintf(stderr, "%s: PAGES and RES are unknown for files you may "
					"not write: the kernel reports all their pages cached "
					"to you, and util-linux fincore prints that\n", c->prog);
				c->said_unknown = true;
			}
		}
	}
	close(fd);
	if (fc_row(c, name, (uint64_t)st.st_size, cached) < 0) {
		fprintf(stderr, "%s: failed to add output data: %s\n", c->prog, strerror(ENOMEM));
		return -1;
	}
	return 0;
}

int cmd_fincore(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "bytes", no_argument, NULL, 'b' },
		{ "noheadings", no_argument, NULL, 'n' },
		{ "output", required_argument, NULL, 'o' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{ "raw", no_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	struct fc_ctl c = {
		.cols = { FC_RES, FC_PAGES, FC_SIZE, FC_FILE },
		.ncols = 4,
		.pagesize = sysconf(_SC_PAGESIZE),
	};
	const char *outarg = NULL;
	bool noheadings = false, raw = false;
	int opt, rc = EXIT_SUCCESS;

	c.prog = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	/* numbers and names follow the locale, as fincore's do */
	setlocale(LC_ALL, "");
	/* a reader gone is fincore's death by SIGPIPE (141), as scripts see it */
	signal(SIGPIPE, SIG_DFL);
	/* getopt's own messages, with argv[0] as given, as fincore's are */
	opterr = 1;
	optind = 0;
	while ((opt = getopt_long(argc, argv, "bno:JrVh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			c.bytes = true;
			break;
		case 'n':
			noheadings = true;
			break;
		case 'o':
			outarg = optarg;
			break;
		case 'J':
			c.json = true;
			break;
		case 'r':
			raw = true;
			break;
		case 'V':
			/* not util-linux: its version would be a false claim */
			printf("%s from pagecache %s (util-linux fincore 2.38.1's options)\n",
			       c.prog, PC_VERSION);
			return EXIT_SUCCESS;
		case 'h':
			fc_usage(&c);
			return EXIT_SUCCESS;
		default:
			return fc_tryhelp(&c);
		}
	}
	if (optind == argc) {
		fprintf(stderr, "%s: no file specified\n", c.prog);
		return fc_tryhelp(&c);
	}
	if (outarg && fc_columns(&c, outarg) < 0)
		return EXIT_FAILURE;
	if (fc_table(&c, noheadings, raw) < 0) {
		fprintf(stderr, "%s: failed to allocate output table\n", c.prog);
		return EXIT_FAILURE;
	}
	for (; optind < argc; optind++)
		if (fc_file(&c, argv[optind]) < 0)
			rc = EXIT_FAILURE;
	scols_print_table(c.tb);
	scols_unref_table(c.tb);
	/* fincore's close_stdout: a failed write is its own failure */
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (errno == EPIPE)
			return rc;
		fprintf(stderr, "%s: write error: %s\n", c.prog, strerror(errno));
		return EXIT_FAILURE;
	}
	return rc;
}
