/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opts.c: the option tables' one reader. From a command's cli_spec it
 * builds getopt_long's tables and parses, prints the --help option list,
 * writes the bash and zsh completions and lists the options for the man
 * page check (tests/cli/t-options.sh), so the parser, the help, the
 * completions and the manual say the same. Letters follow the tools users
 * already know: vmtouch 1.3.1's for vmtouch's jobs, util-linux 2.38
 * fincore's for output (-J, -o, -n, -r, --bytes), GNU's for path lists
 * (--files-from, --files0-from); a letter that would mean two things is
 * refused with a message that says what to type, never read another way.
 * Two entries of one command with the same id or letter stop the program
 * at once (tests/unit/test-opts.c checks every table), and -o's column
 * names are checked against the command's columns (cli_spec.cols) as they
 * are parsed, so a typo fails before anything is done. vmtouch's own
 * command line (`pagecache -t ...`) is turned into the command it means.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- the shared groups ---- */

/*
 * The rows of "Choosing files". -b is vmtouch's batch list where the
 * command does vmtouch's jobs (warm, evict, lock); in stat, whose letters
 * are fincore's, -b is --bytes and the list is --batch or --files-from.
 */
#define TARGETS_ROWS(BATCH_LETTER, FILES_FROM_HELP) \
	{ .name = "range", .letter = 'p', .id = OPT_RANGE, .arg = "RANGE", .bind = CB_TARGETS, \
	  .help = "only bytes A to B of each file (4k-1M, -64M, 1G-)" }, \
	{ .name = "include", .letter = 'I', .id = OPT_INCLUDE, .arg = "PAT", .bind = CB_TARGETS, \
	  .help = "only files whose name matches PAT (repeatable)" }, \
	{ .name = "exclude", .letter = 'X', .alias = 'i', .id = OPT_EXCLUDE, .arg = "PAT", \
	  .bind = CB_TARGETS, .help = "skip files and directories matching PAT (repeatable)" }, \
	{ .name = "max-size", .letter = 'm', .id = OPT_MAX_SIZE, .arg = "SIZE", .comp = CC_SIZE, \
	  .bind = CB_TARGETS, .help = "skip files larger than SIZE" }, \
	{ .name = "one-file-system", .letter = 'x', .alias = 'F', .id = OPT_ONE_FS, \
	  .bind = CB_TARGETS, .help = "stay on the filesystem of each PATH" }, \
	{ .name = "follow", .letter = 'f', .id = OPT_FOLLOW, .bind = CB_TARGETS, \
	  .help = "follow symlinks inside trees (loops are detected)" }, \
	{ .name = "all-links", .letter = 'H', .id = OPT_ALL_LINKS, .bind = CB_TARGETS, \
	  .help = "count every hardlink (default: each inode once)" }, \
	{ .name = "batch", .letter = BATCH_LETTER, .id = OPT_BATCH, .arg = "FILE", .comp = CC_FILE, \
	  .bind = CB_TARGETS, .help = "read more paths from FILE, one a line ('-': stdin)" }, \
	{ .name = "files-from", .id = OPT_FILES_FROM, .arg = "FILE", .comp = CC_FILE, \
	  .bind = CB_TARGETS, .help = FILES_FROM_HELP }, \
	{ .name = "files0-from", .id = OPT_FILES0_FROM, .arg = "FILE", .comp = CC_FILE, \
	  .bind = CB_TARGETS, .help = "read more paths from FILE, each ended by NUL" }, \
	{ .name = "null", .letter = '0', .id = OPT_NULL, .bind = CB_TARGETS, \
	  .help = "the lists' paths end with NUL (find -print0)" }, \
	{ .name = "threads", .letter = 'j', .id = OPT_THREADS, .arg = "N", .bind = CB_TARGETS, \
	  .help = "walk with N threads (default: 2 per CPU, 2 to 16)" }, \
	{ .name = "pid", .id = OPT_PID, .arg = "PID", .comp = CC_PID, .bind = CB_TARGETS, \
	  .help = "the files process PID maps or holds open (repeatable)" }, \
	{ .name = "children", .id = OPT_CHILDREN, .bind = CB_TARGETS, \
	  .help = "with --pid, its descendants' files too" }, \
	{ .name = "cgroup", .id = OPT_CGROUP, .arg = "CG", .comp = CC_CGROUP, .bind = CB_TARGETS, \
	  .help = "the files of every process in memory cgroup CG" }, \
	{ .letter = 'L', \
	  .help = "-L is not an option here: to follow symlinks type -f (--follow); vmtouch's -L " \
	          "(lock with mlockall) is 'pagecache lock'", .flags = CLI_REFUSE }

static const struct cli_opt targets_opts[] = {
	TARGETS_ROWS('b', "the same as -b FILE"),
	{ 0 }
};
const struct cli_group cli_targets_group = { "Choosing files", targets_opts };

static const struct cli_opt targets_stat_opts[] = {
	TARGETS_ROWS(0, "the same as --batch FILE"),
	{ 0 }
};
const struct cli_group cli_targets_stat_group = { "Choosing files", targets_stat_opts };

#define FMT_COMMON(BYTES_LETTER)                                                       \
	{ .name = "json", .letter = 'J', .id = OPT_JSON, .arg = "STYLE", .comp = CC_WORDS, \
	  .words = "pretty short", .bind = CB_FORMAT,                                 \
	  .help = "JSON on stdout, errors too; STYLE: pretty or short",              \
	  .flags = CLI_OPTARG },                                                      \
	{ .name = "prom", .id = OPT_PROM, .bind = CB_FORMAT,                          \
	  .help = "Prometheus text (node_exporter textfile)" },                       \
	{ .name = "prom-per-file", .id = OPT_PROM_PER_FILE, .bind = CB_FORMAT,        \
	  .help = "--prom, with a series per file (labelled by path)" },              \
	{ .name = "prom-file", .id = OPT_PROM_FILE, .arg = "FILE", .comp = CC_FILE,   \
	  .bind = CB_FORMAT, .help = "--prom, written to FILE atomically (temp + rename)" }, \
	{ .name = "prom-label", .id = OPT_PROM_LABEL, .arg = "NAME=VALUE", .bind = CB_FORMAT, \
	  .help = "--prom, with label NAME=VALUE on every series" },                  \
	{ .name = "kv", .id = OPT_KV, .bind = CB_FORMAT, .help = "key=value lines" }, \
	{ .name = "bytes", .letter = BYTES_LETTER, .id = OPT_BYTES, .bind = CB_FORMAT, \
	  .help = "exact bytes instead of 1.5G" }
#define HELP_NOHEADINGS "no header line in the table"
#define HELP_RAW "the table unaligned, spaces in values as \\x20"
#define ROW_NOHEADINGS .name = "noheadings", .id = OPT_NOHEADINGS, .bind = CB_FORMAT, \
	.help = HELP_NOHEADINGS
#define ROW_RAW .name = "raw", .id = OPT_RAW, .bind = CB_FORMAT, .help = HELP_RAW

static const struct cli_opt format_opts[] = {
	FMT_COMMON(0),
	{ ROW_NOHEADINGS, .letter = 'n' },
	{ ROW_RAW, .letter = 'r' },
	{ 0 }
};
const struct cli_group cli_format_group = { "Output", format_opts };

/* stat's: fincore's letters, -b --bytes among them (its targets group has no -b) */
static const struct cli_opt format_stat_opts[] = {
	FMT_COMMON('b'),
	{ ROW_NOHEADINGS, .letter = 'n' },
	{ ROW_RAW, .letter = 'r' },
	{ 0 }
};
const struct cli_group cli_format_stat_group = { "Output", format_stat_opts };

static const struct cli_opt format_act_opts[] = {
	FMT_COMMON(0),
	{ ROW_NOHEADINGS, .letter = 'n' },
	{ ROW_RAW },
	{ .letter = 'r', .arg = "RANGE",
	  .help = "-r is not an option here: a byte range is -p A-B (--range), as vmtouch's; raw "
	          "output is --raw", .flags = CLI_REFUSE },
	{ 0 }
};
const struct cli_group cli_format_act_group = { "Output", format_act_opts };

static const struct cli_opt format_restore_opts[] = {
	FMT_COMMON(0),
	{ ROW_NOHEADINGS },
	{ ROW_RAW, .letter = 'r' },
	{ .letter = 'n',
	  .help = "-n is not an option here: a dry run is --dry-run; no headings is --noheadings",
	  .flags = CLI_REFUSE },
	{ 0 }
};
const struct cli_group cli_format_restore_group = { "Output", format_restore_opts };

static const struct cli_opt budget_opts[] = {
	{ .name = "max-mem", .id = OPT_MAX_MEM, .bind = CB_BUDGET, .arg = "SIZE", .comp = CC_SIZE,
	  .help = "add (or lock) at most SIZE of page cache" },
	{ .name = "reserve", .id = OPT_RESERVE, .bind = CB_BUDGET, .arg = "SIZE", .comp = CC_SIZE,
	  .help = "keep SIZE of MemAvailable free (default 5% of RAM)" },
	{ 0 }
};
const struct cli_group cli_budget_group = { "Memory budget", budget_opts };

/*
 * vmtouch 1.3.1's letters ("tevqlLdfFh0i:I:p:b:m:P:w"), where a command
 * has none of them: what to type instead. Checked after the command's own.
 */
static const struct { char letter; const char *say; } vmtouch_hints[] = {
	{ 't', "-t (vmtouch's touch) is 'pagecache warm' (or 'pagecache -t')" },
	{ 'e', "-e (vmtouch's evict) is 'pagecache evict' (or 'pagecache -e')" },
	{ 'l', "-l (vmtouch's lock) is 'pagecache lock' (or 'pagecache -l')" },
	{ 'd', "-d (daemon) goes with lock: 'pagecache lock -d'" },
	{ 'P', "-P FILE (a pidfile) goes with lock: 'pagecache lock -d -P FILE'" },
	{ 'w', "-w goes with 'pagecache lock -d', which always waits until all is locked" },
	{ 'q', "-q: this command has no quiet mode (send its output to /dev/null)" },
};

/* ---- the parser ---- */

/* --json[=STYLE], or -J in a cluster: NULL if w is neither, else STYLE or "" */
static const char *takes_json(const struct cli_parser *p, const char *w)
{
	if (is_json_flag(w))
		return strchr(w, '=') ? strchr(w, '=') + 1 : "";
	if (w[0] != '-' || w[1] == '-' || !w[1])
		return NULL;
	/* a cluster: -vJ; a letter that takes an argument ends it */
	for (const char *c = w + 1; *c; c++) {
		if (*c == 'J')
			return "";
		for (int i = 0; i < p->nflat; i++)
			if ((p->flat[i]->letter == *c || p->flat[i]->alias == *c) && p->flat[i]->arg &&
			    !(p->flat[i]->flags & CLI_OPTARG))
				return NULL;
	}
	return NULL;
}

static void build(struct cli_parser *p)
{
	size_t s = 0, l = 0;

	p->built = true;
	p->nflat = 0;
	if (p->spec->stop_at_operand)
		p->shortopts[s++] = '+';
	p->shortopts[s++] = ':';
	for (int g = 0; p->spec->groups[g]; g++)
		for (const struct cli_opt *o = p->spec->groups[g]->opts; o->name || o->letter; o++) {
			if (p->nflat >= (int)(sizeof(p->flat) / sizeof(p->flat[0])) - 3)
				break;	/* a table too big is a programming error; t-options sees it */
			p->flat[p->nflat] = o;
			for (int k = 0; k < 2; k++) {
				char c = k ? o->alias : o->letter;

				if (!c || s + 3 >= sizeof(p->shortopts))
					continue;
				p->shortopts[s++] = c;
				/* an optional argument is the long name's (--json=short): -Jn is two letters */
				if (o->arg && !(o->flags & CLI_OPTARG))
					p->shortopts[s++] = ':';
			}
			if (o->name && !(o->flags & CLI_REFUSE))
				p->longopts[l++] = (struct option){
					o->name,
					!o->arg ? no_argument
						: o->flags & CLI_OPTARG ? optional_argument
									: required_argument,
					NULL, 1000 + p->nflat
				};
			p->nflat++;
		}
	/* two options with one id would read as one another (lock's -P and --prom once) */
	for (int i = 0; i < p->nflat; i++)
		for (int k = 0; k < i; k++)
			if (p->flat[i]->id == p->flat[k]->id &&
			    !((p->flat[i]->flags | p->flat[k]->flags) & CLI_REFUSE)) {
				fprintf(stderr, "pagecache: %s's option table gives --%s and --%s one id\n",
					p->spec->name, p->flat[k]->name, p->flat[i]->name);
				abort();
			}
	/* nor may two take one letter (-h and -V are the parser's own) */
	for (size_t i = 0; i < s; i++)
		if (p->shortopts[i] != ':' && p->shortopts[i] != '+' &&
		    (memchr(p->shortopts + i + 1, p->shortopts[i], s - i - 1) ||
		     strchr("hV", p->shortopts[i]))) {
			fprintf(stderr, "pagecache: %s's option table gives -%c twice\n",
				p->spec->name, p->shortopts[i]);
			abort();
		}
	memcpy(p->shortopts + s, "hV", 3);
	p->longopts[l++] = (struct option){ "help", no_argument, NULL, 'h' };
	p->longopts[l++] = (struct option){ "version", no_argument, NULL, 'V' };
	p->longopts[l] = (struct option){ 0 };
}

void cli_parser_init(struct cli_parser *p, const struct cli_spec *spec, int argc,
		     char **argv)
{
	memset(p, 0, sizeof(*p));
	p->spec = spec;
	build(p);
	optind = 1;
	opterr = 0;
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		const char *style = takes_json(p, argv[i]);

		if (style) {
			out_init(OUT_JSON, false, false);
			out_json_short(!strcmp(style, "short"));
		}
	}
}

static int stop(struct cli_parser *p, int rc)
{
	p->exit = rc;
	return CLI_STOP;
}

/* What the table itself can check at once: -o's column names. */
static int checked(struct cli_parser *p, int id)
{
	char bad[64], all[256] = "";
	size_t used = 0;

	if (id != OPT_COLUMNS || !p->spec->cols ||
	    out_select_columns(p->spec->cols, p->spec->ncols, p->arg, bad, sizeof(bad)) == 0)
		return id;
	for (size_t i = 0; i < p->spec->ncols && used < sizeof(all); i++)
		used += (size_t)snprintf(all + used, sizeof(all) - used, "%s%s", i ? "," : "",
					 p->spec->cols[i].header);
	return stop(p, cli_usage_error("unknown column '%s' (columns: %s)", bad, all));
}

void cli_parser_bind_to(struct cli_parser *p, const struct cli_spec *spec,
			const struct cli_bound *to, int argc, char **argv)
{
	cli_parser_init(p, spec, argc, argv);
	p->to = *to;
}

void cli_parser_bind(struct cli_parser *p, const struct cli_spec *spec, void *base, int argc,
		     char **argv)
{
	cli_parser_bind_to(p, spec, &(struct cli_bound){ .base = base }, argc, argv);
}

/* The next option's id, with its entry in *ret (NULL: CLI_END, CLI_STOP). */
static int next_opt(struct cli_parser *p, int argc, char **argv, const struct cli_opt **ret)
{
	int c;

	*ret = NULL;
	if (!p->built)
		cli_parser_init(p, p->spec, argc, argv);
	c = getopt_long(argc, argv, p->shortopts, p->longopts, NULL);
	p->arg = optarg;
	if (c == -1)
		return CLI_END;
	if (c == 'h') {
		cli_help(p->spec, stdout);
		return stop(p, 0);
	}
	if (c == 'V') {
		printf("pagecache %s\n", PC_VERSION);
		return stop(p, 0);
	}
	if (c >= 1000 && c < 1000 + p->nflat) {
		*ret = p->flat[c - 1000];
		return checked(p, (*ret)->id);
	}
	if (c == ':')
		return stop(p, cli_usage_error("option '%s' needs a value", argv[optind - 1]));
	for (int i = 0; c != '?' && i < p->nflat; i++) {
		const struct cli_opt *o = p->flat[i];

		if (o->letter != c && o->alias != c)
			continue;
		if (o->flags & CLI_REFUSE)
			return stop(p, cli_usage_error("%s", o->help));
		*ret = o;
		return checked(p, o->id);
	}
	if (c == '?' && optopt) {
		for (size_t i = 0; i < sizeof(vmtouch_hints) / sizeof(vmtouch_hints[0]); i++)
			if (vmtouch_hints[i].letter == optopt)
				return stop(p, cli_usage_error("%s", vmtouch_hints[i].say));
		return stop(p, cli_usage_error("unknown option '-%c'", optopt));
	}
	return stop(p, cli_usage_error("unknown option '%s'", argv[optind - 1]));
}

/* o->bad with its "%s" as arg: the usage error of a bound option's bad value */
static int bad_value(struct cli_parser *p, const struct cli_opt *o, const char *arg)
{
	const char *s = o->bad ? strstr(o->bad, "%s") : NULL;

	if (!s)
		return stop(p, cli_usage_error("--%s: invalid value '%s'", o->name, arg));
	return stop(p, cli_usage_error("%.*s%s%s", (int)(s - o->bad), o->bad, arg, s + 2));
}

/* A bound option's value into its field: 0, or CLI_STOP after a usage error. */
static int store(struct cli_parser *p, const struct cli_opt *o, const char *arg)
{
	char *field = (char *)p->to.base + o->off, *end;
	uint64_t size;
	double d;
	long n;

	switch (o->bind) {
	case CB_SET:
		*(bool *)field = true;
		return 0;
	case CB_COUNT:
		++*(int *)field;
		return 0;
	case CB_STRING:
		*(const char **)field = arg;
		return 0;
	case CB_SIZE:
		if (pc_parse_size(arg, &size) < 0 || (double)size < o->lo)
			return bad_value(p, o, arg);
		*(uint64_t *)field = size;
		return 0;
	case CB_SECONDS:
		if (cli_parse_decimal(arg, o->lo, o->hi, o->range, &d) < 0)
			return bad_value(p, o, arg);
		*(double *)field = d;
		return 0;
	case CB_INT:
		/* as tune's --min took it: an empty value is 0 (strtol's) */
		errno = 0;
		n = strtol(arg, &end, 10);
		if (errno || *end || n < o->lo || n > o->hi)
			return bad_value(p, o, arg);
		*(int *)field = (int)n;
		return 0;
	/* the shared rows' handlers, each its own message (exit 2) */
	case CB_FORMAT:
		return cli_format_set(p->to.co, o->id, arg) < 0 ? stop(p, EXIT_USAGE) : 0;
	case CB_TARGETS:
		return targets_opt(p->to.t, o->id, arg) < 0 ? stop(p, EXIT_USAGE) : 0;
	case CB_BUDGET:
		return cli_budget_value(p->to.bo, o->name, arg) < 0 ? stop(p, EXIT_USAGE) : 0;
	case CB_NONE:
		break;
	}
	return 0;
}

/* Is o stored by the parser? Not where the command gave nothing to store it in. */
static bool bound(const struct cli_parser *p, const struct cli_opt *o)
{
	switch (o->bind) {
	case CB_NONE:
		return false;
	case CB_FORMAT:
		return p->to.co;
	case CB_TARGETS:
		return p->to.t;
	case CB_BUDGET:
		return p->to.bo;
	default:
		return p->to.base;
	}
}

int cli_getopt(struct cli_parser *p, int argc, char **argv)
{
	const struct cli_opt *o;
	int id;

	/* bound options are stored here and the next one read; unbound ones returned */
	while ((id = next_opt(p, argc, argv, &o)) >= 0 && o && bound(p, o))
		if (store(p, o, p->arg) < 0)
			return CLI_STOP;
	return id;
}

int cli_getopt_all(struct cli_parser *p, int argc, char **argv)
{
	int id = cli_getopt(p, argc, argv);

	if (id < 0)
		return id;
	/* a row the command gave no struct for: refused, never dropped */
	return stop(p, cli_usage_error("unknown option '--%s'", cli_opt_name(p->spec, id)));
}

int cli_parse_format_only(const struct cli_spec *spec, void *base, struct cli_opts *co,
			  int argc, char **argv)
{
	struct cli_parser p;

	cli_parser_bind_to(&p, spec, &(struct cli_bound){ .base = base, .co = co }, argc, argv);
	if (cli_getopt_all(&p, argc, argv) == CLI_STOP)
		return p.exit;
	return -1;
}

const char *cli_opt_name(const struct cli_spec *s, int id)
{
	for (int g = 0; s->groups[g]; g++)
		for (const struct cli_opt *x = s->groups[g]->opts; x->name || x->letter; x++)
			if (x->id == id && x->name && !(x->flags & CLI_REFUSE))
				return x->name;
	return "?";
}

/* "  -x, -F, --one-file-system" and the like; returns its length. */
static int opt_left(const struct cli_opt *o, char *buf, size_t len)
{
	int n = 0;

	if (o->letter)
		n += snprintf(buf + n, len - (size_t)n, "-%c, ", o->letter);
	if (o->alias)
		n += snprintf(buf + n, len - (size_t)n, "-%c, ", o->alias);
	if (!o->letter && !o->alias)
		n += snprintf(buf + n, len - (size_t)n, "    ");
	n += snprintf(buf + n, len - (size_t)n, "--%s", o->name);
	if (o->arg)
		n += snprintf(buf + n, len - (size_t)n, o->flags & CLI_OPTARG ? "[=%s]" : " %s",
			      o->arg);
	return n;
}

static void help_line(FILE *o, const char *left, const char *help)
{
	const char *h = help;
	int w = fprintf(o, "  %s", left);

	for (bool first = true; *h || first; first = false) {
		const char *nl = strchr(h, '\n');
		int n = nl ? (int)(nl - h) : (int)strlen(h);

		if (first && w <= 24)
			fprintf(o, "%*s%.*s\n", 25 - w, "", n, h);
		else {
			if (first)
				fputc('\n', o);
			fprintf(o, "%25s%.*s\n", "", n, h);
		}
		h += n + (nl ? 1 : 0);
		if (!nl)
			break;
	}
}

void cli_help(const struct cli_spec *s, FILE *o)
{
	char left[96];

	fputs(s->usage, o);
	for (int g = 0; s->groups[g]; g++) {
		fprintf(o, "%s:\n", s->groups[g]->title);
		for (const struct cli_opt *x = s->groups[g]->opts; x->name || x->letter; x++) {
			if (x->flags & CLI_REFUSE)
				continue;
			opt_left(x, left, sizeof(left));
			help_line(o, left, x->help);
			if (x->comp == CC_COLUMNS && s->cols) {
				fprintf(o, "%25s", "");
				for (size_t i = 0; i < s->ncols; i++)
					fprintf(o, "%s%s", i ? "," : "", s->cols[i].header);
				fputc('\n', o);
			}
		}
		if (g == 0) {
			help_line(o, "-h, --help", "this text");
			help_line(o, "-V, --version", "the version");
		}
	}
	if (!s->groups[0]) {
		fputs("Options:\n", o);
		help_line(o, "-h, --help", "this text");
		help_line(o, "-V, --version", "the version");
	}
	fputs(s->footer, o);
}

int cli_list_options(const struct cli_spec *s, FILE *o)
{
	for (int g = 0; s->groups[g]; g++)
		for (const struct cli_opt *x = s->groups[g]->opts; x->name || x->letter; x++) {
			if (x->flags & CLI_REFUSE)
				continue;
			if (x->letter)
				fprintf(o, "-%c ", x->letter);
			if (x->alias)
				fprintf(o, "-%c ", x->alias);
			fprintf(o, "--%s%s%s\n", x->name, x->arg ? " " : "", x->arg ? x->arg : "");
		}
	fputs("-h --help\n-V --version\n", o);
	return 0;
}

/* ---- vmtouch's command line ---- */

char **cli_vmtouch_kept;	/* what cli_vmtouch_argv made: reachable to exit, no leak */

const char *cli_vmtouch_argv(int argc, char **argv, int *ret_argc, char ***ret_argv)
{
	static const char vm_args[] = "iIpmP";	/* vmtouch's letters with an argument (and b) */
	const char *verb = NULL;
	char vl = 0, **nv;
	int n = 2;
	bool dashdash = false;

	nv = calloc((size_t)argc * 3 + 3, sizeof(*nv));	/* -vbLIST: three words */
	if (!nv)
		return NULL;
	for (int i = 1; i < argc; i++) {
		char *w = argv[i], *out;
		size_t k = 1;

		if (dashdash || w[0] != '-' || !w[1] || w[1] == '-') {
			dashdash = dashdash || !strcmp(w, "--");
			nv[n++] = w;
			continue;
		}
		out = malloc(strlen(w) + 1);	/* a short cluster, rewritten: kept to exit */
		if (!out)
			goto fail;
		out[0] = '-';
		for (const char *c = w + 1; *c; c++) {
			const char *v = *c == 't' ? "warm" : *c == 'e' ? "evict" :
					*c == 'l' || *c == 'L' ? "lock" : NULL;

			if (v) {
				if (verb && strcmp(verb, v)) {
					fprintf(stderr, "pagecache: -%c and -%c together: run 'pagecache "
						"%s' and 'pagecache %s' one after the other\n"
						"Try 'pagecache --help'.\n", vl, *c, verb, v);
					free(out);
					goto fail;
				}
				verb = v;
				vl = *c;
				continue;
			}
			if (*c == 'b') {
				/*
				 * vmtouch's -b LIST is the list in every command
				 * (stat's -b is fincore's --bytes): --files-from
				 */
				if (k > 1) {
					out[k] = 0;
					nv[n++] = out;
				} else {
					free(out);
				}
				out = NULL;
				nv[n] = strdup("--files-from");
				if (!nv[n++])
					goto fail;
				if (c[1])
					nv[n++] = (char *)c + 1;
				else if (i + 1 < argc)
					nv[n++] = argv[++i];
				break;
			}
			out[k++] = *c == 'h' ? 'H' : *c;	/* vmtouch's -h: every hardlink */
			if (strchr(vm_args, *c)) {
				strcpy(out + k, c + 1);	/* the argument, attached */
				k += strlen(c + 1);
				if (!c[1] && i + 1 < argc) {
					out[k] = 0;
					nv[n++] = out;
					out = NULL;
					nv[n++] = argv[++i];
				}
				break;
			}
		}
		if (out) {
			out[k] = 0;
			if (k > 1)
				nv[n++] = out;
			else
				free(out);
		}
	}
	if (!verb) {	/* vmtouch always ends with its summary, on a pipe too */
		memmove(nv + 3, nv + 2, (size_t)(n - 2) * sizeof(*nv));
		nv[2] = strdup("--summary");	/* freed as the rewritten words are */
		n++;
		if (!nv[2])
			goto fail;
	}
	cli_vmtouch_kept = nv;	/* lives to exit, as argv does */
	nv[0] = argv[0];
	nv[1] = (char *)(verb ? verb : "stat");
	nv[n] = NULL;
	*ret_argc = n;
	*ret_argv = nv;
	return nv[1];
fail:
	free(nv);
	return NULL;
}

/* ---- completions ---- */

/*
 * A help text for zsh's menu, inside a single-quoted word: the lines
 * joined, quotes as '\'', brackets as parentheses (they end a
 * description), no backslashes.
 */
static void menu_text(FILE *o, const char *h)
{
	for (; *h; h++) {
		if (*h == '\'')
			fputs("'\\''", o);
		else if (*h == '[' || *h == ']')
			fputc(*h == '[' ? '(' : ')', o);
		else if (*h == '\n')
			fputc(' ', o);
		else if (*h != '\\')
			fputc(*h, o);
	}
}

/* A CC_COLUMNS option's choices: the spec's column headers, space-separated
 * (x->words where the command keeps its own table: stat). */
static const char *col_words(const struct cli_spec *s, const struct cli_opt *x)
{
	if (!s->cols)
		return x->words;
	static char buf[512];
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; s->cols && i < s->ncols && used < sizeof(buf); i++)
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s", i ? " " : "",
					 s->cols[i].header);
	return buf;
}

/*
 * What bash runs for c. No word list goes through `compgen -W`, which
 * expands $(...) and ${...} in its words: a cgroup or file name would run
 * as code. Names are filtered by prefix in bash itself (_pagecache_pick,
 * NUL-separated) and COMPREPLY is filled by mapfile, never by an unquoted
 * $(...), so a name is neither split at spaces nor glob-expanded.
 */
static const char *bash_comp(enum cli_comp c, const char *words)
{
	static char buf[512];

	switch (c) {
	case CC_FILE:
		return "_pagecache_files -f";
	case CC_DIR:
		return "_pagecache_files -d";
	case CC_PID:
		return "_pagecache_pick < <(_pagecache_pids)";
	case CC_CGROUP:
		return "_pagecache_pick < <(_pagecache_cgroups)";
	case CC_WORDS:
		snprintf(buf, sizeof(buf), "_pagecache_words '%s'", words);
		return buf;
	case CC_COLUMNS:
		snprintf(buf, sizeof(buf), "_pagecache_list '%s'", words);
		return buf;
	case CC_COMMAND:
		return "mapfile -t COMPREPLY < <(compgen -c -- \"$cur\")";
	case CC_SIZE:
		return "_pagecache_words '4k 64M 1G'";
	default:
		return "COMPREPLY=()";
	}
}

static void bash_cmd(FILE *o, const struct cli_spec *s)
{
	fprintf(o, "\t%s)\n\t\tcase $prev in\n", s->name);
	for (int g = 0; s->groups[g]; g++)
		for (const struct cli_opt *x = s->groups[g]->opts; x->name || x->letter; x++) {
			if ((x->flags & CLI_REFUSE) || !x->arg)
				continue;
			if (x->flags & CLI_OPTARG) {
				/* --json=STYLE: only after '=' (--json alone takes none) */
				if (x->comp == CC_WORDS)
					fprintf(o, "\t\t--%s) if [[ $eq ]]; then %s; return; fi ;;\n",
						x->name, bash_comp(x->comp, x->words));
				continue;
			}
			fprintf(o, "\t\t");
			if (x->letter)
				fprintf(o, "-%c|", x->letter);
			if (x->alias)
				fprintf(o, "-%c|", x->alias);
			fprintf(o, "--%s) %s; return ;;\n", x->name,
				bash_comp(x->comp, x->comp == CC_COLUMNS ? col_words(s, x) : x->words));
		}
	fprintf(o, "\t\tesac\n\t\tif [[ $cur == -* ]]; then\n\t\t\t_pagecache_words '");
	for (int g = 0; s->groups[g]; g++)
		for (const struct cli_opt *x = s->groups[g]->opts; x->name || x->letter; x++) {
			if (x->flags & CLI_REFUSE)
				continue;
			if (x->letter)
				fprintf(o, "-%c ", x->letter);
			fprintf(o, "--%s ", x->name);
		}
	fprintf(o, "-h --help -V --version'\n\t\t\treturn\n\t\tfi\n");
	if (s->stop_at_operand)
		fprintf(o, "\t\tif [[ $seen_dd ]]; then %s; return; fi\n",
			bash_comp(CC_COMMAND, NULL));
	fprintf(o, "\t\t%s ;;\n", bash_comp(s->stop_at_operand ? CC_NONE : s->operands,
					      s->operand_words));
}

static void zsh_arg(FILE *o, const struct cli_opt *x, const struct cli_spec *s)
{
	const char *act;
	char lbuf[8], abuf[8];

	switch (x->comp) {
	case CC_FILE: act = "_files"; break;
	case CC_DIR: act = "_files -/"; break;
	case CC_PID: act = "_pids"; break;
	case CC_CGROUP: act = "_pagecache_cgroups"; break;
	case CC_WORDS: act = NULL; break;
	case CC_COLUMNS: act = NULL; break;
	default: act = " "; break;
	}
	snprintf(lbuf, sizeof(lbuf), "-%c", x->letter);
	snprintf(abuf, sizeof(abuf), "-%c", x->alias);
	/* no exclusions: -I, -X and --pid repeat */
	fprintf(o, "\t\t");
	if (x->letter || x->alias) {
		fputc('{', o);
		if (x->letter)
			fprintf(o, "%s,", lbuf);
		if (x->alias)
			fprintf(o, "%s,", abuf);
		fprintf(o, "--%s}'", x->name);
	} else {
		fputc('\'', o);
		fprintf(o, "--%s%s", x->name, x->arg ? (x->flags & CLI_OPTARG ? "=-" : "=") : "");
	}
	fputc('[', o);
	menu_text(o, x->help);
	fputc(']', o);
	if (x->arg) {
		fprintf(o, ":%s:", x->arg);
		if (act)
			fputs(act, o);
		else
			fprintf(o, "(%s)", x->comp == CC_COLUMNS ? col_words(s, x) : x->words);
	}
	fprintf(o, "' \\\n");
}

static void zsh_cmd(FILE *o, const struct cli_spec *s)
{
	fprintf(o, "\t%s)\n\t\t_arguments -s -S \\\n", s->name);
	for (int g = 0; s->groups[g]; g++)
		for (const struct cli_opt *x = s->groups[g]->opts; x->name || x->letter; x++)
			if (!(x->flags & CLI_REFUSE))
				zsh_arg(o, x, s);
	fprintf(o, "\t\t'(- *)'{-h,--help}'[this text]' \\\n"
		   "\t\t'(- *)'{-V,--version}'[the version]' \\\n");
	switch (s->operands) {
	case CC_FILE:
		fprintf(o, "\t\t'*:file:_files'\n\t\t;;\n");
		break;
	case CC_WORDS:
		fprintf(o, "\t\t'1:what:(%s)'\n\t\t;;\n", s->operand_words);
		break;
	case CC_COMMAND:
		fprintf(o, "\t\t'(-)1:command:_command_names -e' '*::arguments:_normal'\n\t\t;;\n");
		break;
	default:
		fprintf(o, "\n\t\t;;\n");
	}
}

int cli_completion(const char *shell, const struct cli_cmdinfo *cmds, size_t n, FILE *o)
{
	if (!strcmp(shell, "bash")) {
		fprintf(o, "# bash completion for pagecache: made by 'pagecache --completion bash'\n"
			   "# from the option tables the parser reads (src/options/opts.c); do not edit.\n"
			   "# No name (file, cgroup) goes through compgen -W, which expands $(...) in\n"
			   "# its words; names are matched by prefix here and kept whole (mapfile).\n"
			   "_pagecache_words() {\t# COMPREPLY: the words of $1 (ours) that start with $cur\n"
			   "\tlocal -a ws; local w\n"
			   "\tread -ra ws <<<\"$1\"\n"
			   "\tCOMPREPLY=()\n"
			   "\tfor w in \"${ws[@]}\"; do [[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\"); done\n"
			   "}\n"
			   "_pagecache_list() {\t# the same for the last item of a comma list (-o RES,C), any case\n"
			   "\tlocal last=${cur##*[,+]} w; local pre=${cur%%\"$last\"}; local -a ws\n"
			   "\tread -ra ws <<<\"$1\"\n"
			   "\tCOMPREPLY=()\n"
			   "\tfor w in \"${ws[@]}\"; do [[ ${w,,} == \"${last,,}\"* ]] && COMPREPLY+=(\"$pre$w\"); done\n"
			   "}\n"
			   "_pagecache_pick() {\t# the same for NUL-separated names on stdin, never expanded\n"
			   "\tlocal w\n"
			   "\tCOMPREPLY=()\n"
			   "\twhile IFS= read -r -d '' w; do [[ $w == \"$cur\"* ]] && COMPREPLY+=(\"$w\"); done\n"
			   "}\n"
			   "_pagecache_files() {\t# $1: -f files, -d directories\n"
			   "\tcompopt -o filenames 2>/dev/null\n"
			   "\tmapfile -t COMPREPLY < <(compgen \"$1\" -- \"$cur\")\n"
			   "}\n"
			   "_pagecache_pids() { local p; for p in /proc/[0-9]*; do printf '%%s\\0' \"${p#/proc/}\"; done; }\n"
			   "_pagecache_cgroups() {\n"
			   "\tlocal root=/sys/fs/cgroup\n"
			   "\t[ -e $root/memory/memory.limit_in_bytes ] && root=$root/memory\n"
			   "\tfind \"$root\" -mindepth 1 -maxdepth 3 -type d -printf '/%%P\\0' 2>/dev/null\n"
			   "}\n"
			   "_pagecache() {\n"
			   "\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
			   "\tlocal cmd= seen_dd= eq= vt= i\n"
			   "\tif [[ $prev == = && $COMP_CWORD -ge 2 ]]; then prev=${COMP_WORDS[COMP_CWORD-2]}; eq=1; fi\n"
			   "\tif [[ $cur == = ]]; then cur=; eq=1; fi\n"
			   "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
			   "\t\tif [[ -z $cmd ]]; then\n"
			   "\t\t\tcase ${COMP_WORDS[i]} in -h|--help|-V|--version) ;; -*) vt=1 ;; *) cmd=${COMP_WORDS[i]} ;; esac\n"
			   "\t\telif [[ ${COMP_WORDS[i]} == -- ]]; then seen_dd=1\n"
			   "\t\tfi\n"
			   "\tdone\n"
			   "\t# vmtouch's line (pagecache -t FILE): files, not commands\n"
			   "\tif [[ -z $cmd && $vt && $cur != -* ]]; then _pagecache_files -f; return; fi\n"
			   "\tif [[ -z $cmd ]]; then\n"
			   "\t\t_pagecache_words '");
		for (size_t i = 0; i < n; i++)
			fprintf(o, "%s ", cmds[i].name);
		fprintf(o, "help -h --help -V --version'\n\t\treturn\n\tfi\n"
			   "\tcase $cmd in\n\thelp)\n\t\t_pagecache_words '");
		for (size_t i = 0; i < n; i++)
			fprintf(o, "%s%s", i ? " " : "", cmds[i].name);
		fprintf(o, "' ;;\n");
		for (size_t i = 0; i < n; i++)
			if (cmds[i].spec)
				bash_cmd(o, cmds[i].spec);
		fprintf(o, "\t*)\n\t\t_pagecache_files -f ;;\n"
			   "\tesac\n}\ncomplete -F _pagecache pagecache\n");
		return 0;
	}
	if (!strcmp(shell, "zsh")) {
		fprintf(o, "#compdef pagecache\n"
			   "# zsh completion for pagecache: made by 'pagecache --completion zsh'\n"
			   "# from the option tables the parser reads (src/options/opts.c); do not edit.\n"
			   "_pagecache_cgroups() {\n"
			   "\tlocal root=/sys/fs/cgroup\n"
			   "\t[[ -e $root/memory/memory.limit_in_bytes ]] && root=$root/memory\n"
			   "\tlocal -a cgs\n"
			   "\tcgs=(${${(f)\"$(find $root -mindepth 1 -maxdepth 3 -type d -printf '/%%P\\n' 2>/dev/null)\"}})\n"
			   "\tcompadd -a cgs\n"
			   "}\n"
			   "_pagecache() {\n"
			   "\tlocal -a cmds\n"
			   "\tcmds=(\n");
		for (size_t i = 0; i < n; i++) {
			fprintf(o, "\t\t'%s:", cmds[i].name);
			menu_text(o, cmds[i].summary);
			fprintf(o, "'\n");
		}
		fprintf(o, "\t\t'help:the help of a command'\n\t)\n"
			   "\tif (( CURRENT == 2 )); then\n"
			   "\t\t_describe -t commands command cmds\n"
			   "\t\treturn\n"
			   "\tfi\n"
			   "\tlocal cmd=$words[2]\n"
			   "\tshift words\n"
			   "\t(( CURRENT-- ))\n"
			   "\tcase $cmd in\n"
			   "\thelp)\n\t\t_describe -t commands command cmds ;;\n");
		for (size_t i = 0; i < n; i++)
			if (cmds[i].spec)
				zsh_cmd(o, cmds[i].spec);
		fprintf(o, "\t*)\n\t\t_files ;;\n\tesac\n}\n_pagecache \"$@\"\n");
		return 0;
	}
	return -1;
}

int cli_parse_pid(const char *opt, const char *arg, pid_t *ret)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX)
		return cli_usage_error("%s wants a process ID, not '%s'", opt, arg);
	*ret = (pid_t)v;
	return 0;
}

int cli_parse_decimal(const char *arg, double lo, double hi, unsigned flags, double *ret)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(flags & CLI_ABOVE_LO ? v > lo : v >= lo) ||
	    !(flags & CLI_BELOW_HI ? v < hi : v <= hi))
		return -EINVAL;
	*ret = v;
	return 0;
}
