/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The option tables (each command's struct cli_spec) and their one reader,
 * src/options/opts.c. Per command: no two options share a long name, a letter or
 * an id, every option has a help text and shows in --help, the man page
 * list and the bash completion, and cli_getopt takes each option, by its
 * long name and by each letter, with its argument; a refused letter is a
 * usage error that says what to type; bound options, the shared groups'
 * too, are stored by the parser into the structs the command gave it,
 * their bad values and conflicts still usage errors (exit 2), said as
 * before. The table checker is run once on a
 * table made broken on purpose, so that it is seen to find faults.
 */
#include "cli.h"
#include "options/bench-opts.h"
#include "tap.h"

#include <ctype.h>

static const struct { const char *name; const struct cli_spec *spec; } specs[] = {
	{ "stat", &stat_spec }, { "warm", &warm_spec }, { "evict", &evict_spec },
	{ "lock", &lock_spec }, { "snapshot", &snapshot_spec }, { "restore", &restore_spec },
	{ "show", &show_spec }, { "record", &record_spec }, { "diff", &diff_spec },
	{ "run", &run_spec }, { "top", &top_spec }, { "cgroups", &cgroups_spec },
	{ "tune", &tune_spec }, { "push", &push_spec }, { "pull", &pull_spec },
	{ "daemon", &daemon_spec }, { "status", &status_spec }, { "bench", &bench_spec },
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

#define each_opt(s, g, o)                                                                      \
	for (int g = 0; (s)->groups[g]; g++)                                                   \
		for (const struct cli_opt *o = (s)->groups[g]->opts; o->name || o->letter; o++)

static int refused(const struct cli_opt *o)
{
	return o->flags & CLI_REFUSE;
}

/* stdout or stderr of fn(arg), in a malloc'd string */
/*
 * What is wrong with a table, said in why (the first fault), and how many
 * faults: a long name, a letter or an id given twice; -h or -V taken; an
 * option without a name or help, or with more help than one line of
 * --help holds; an argument-less optional argument; a
 * word list or column table missing where completion needs it.
 */
static int table_faults(const struct cli_spec *s, char *why, size_t len)
{
	int n = 0;

#define FAULT(...) do { if (!n++) snprintf(why, len, __VA_ARGS__); } while (0)
	why[0] = 0;
	each_opt(s, g, o) {
		char letters[2] = { o->letter, o->alias };

		if (refused(o)) {
			if (!o->letter || !o->help || !*o->help)
				FAULT("a refused entry without a letter or a message");
		} else {
			if (!o->name || !*o->name)
				FAULT("an option without a long name");
			else if (!strcmp(o->name, "help") || !strcmp(o->name, "version"))
				FAULT("--%s is the parser's own", o->name);
			if (!o->help || !*o->help || o->help[strlen(o->help) - 1] == '\n' ||
			    strstr(o->help, "\n\n") || *o->help == '\n')
				FAULT("--%s: no help, or an empty help line", o->name ? o->name : "?");
			/* one --help line, column 25 to 79: the man page says the rest */
			else if (strchr(o->help, '\n') || strlen(o->help) > 79 - 25)
				FAULT("--%s: help longer than one --help line", o->name ? o->name : "?");
			if ((o->flags & CLI_OPTARG) && !o->arg)
				FAULT("--%s: an optional argument without a name", o->name);
			if (o->comp == CC_WORDS && !o->words)
				FAULT("--%s: a word list to complete, but no words", o->name);
			if (o->comp == CC_COLUMNS && !s->cols && !o->words)
				FAULT("--%s: columns to pick, but no column table", o->name);
			if (o->bind >= CB_STRING && (!o->arg || (o->flags & CLI_OPTARG)))
				FAULT("--%s: bound to a value, but takes none", o->name);
			if (o->bind > CB_STRING && (!o->bad || !strstr(o->bad, "%s")))
				FAULT("--%s: bound to a checked value, but no message for a bad one",
				      o->name);
			if ((o->bind == CB_SET || o->bind == CB_COUNT) && o->arg)
				FAULT("--%s: a flag bound, but it takes an argument", o->name);
			/* --strict was 'X', which reads as --exclude's -X */
			if (o->id < CLI_OPT_OWN && (!o->id || (o->id != o->letter && o->id != o->alias)))
				FAULT("--%s: id %d is neither its letter nor a named id", o->name, o->id);
		}
		for (int k = 0; k < 2; k++) {
			if (!letters[k])
				continue;
			if (!isalnum((unsigned char)letters[k]))
				FAULT("-%c is no letter or digit", letters[k]);
			if (letters[k] == 'h' || letters[k] == 'V')
				FAULT("-%c is the parser's own", letters[k]);
		}
		/* against every later entry of the command */
		int past = 0;

		each_opt(s, g2, p) {
			if (!past) {
				past = p == o;
				continue;
			}
			if (o->name && p->name && !refused(o) && !refused(p) &&
			    !strcmp(o->name, p->name))
				FAULT("--%s given twice", o->name);
			if (!refused(o) && !refused(p) && o->id == p->id)
				FAULT("--%s and --%s share id %d", o->name, p->name, o->id);
			for (int k = 0; k < 2; k++)
				if (letters[k] && (p->letter == letters[k] || p->alias == letters[k]))
					FAULT("-%c given twice", letters[k]);
		}
	}
#undef FAULT
	return n;
}

static void test_tables(void)
{
	char why[160];

	for (size_t i = 0; i < NSPECS; i++) {
		int n = table_faults(specs[i].spec, why, sizeof(why));
		int count = 0;

		each_opt(specs[i].spec, g, o)
			count++;
		ok(!n && !strcmp(specs[i].spec->name, specs[i].name) && count > 0,
		   "%s: %d entries; names, letters and ids once each, help for each%s%s",
		   specs[i].name, count, n ? ": " : "", why);
	}
}

/* The checker itself, on tables broken on purpose: it must see each fault. */
static void test_checker(void)
{
	static const struct cli_opt twice_name[] = {
		{ .name = "quick", .letter = 'q', .id = 600, .help = "fast" },
		{ .name = "quick", .id = 601, .help = "fast too" },
		{ 0 }
	};
	static const struct cli_opt twice_letter[] = {
		{ .name = "quick", .letter = 'q', .id = 600, .help = "fast" },
		{ .name = "quiet", .alias = 'q', .id = 601, .help = "silent" },
		{ 0 }
	};
	static const struct cli_opt twice_id[] = {
		{ .name = "quick", .id = 600, .help = "fast" },
		{ .name = "quiet", .id = 600, .help = "silent" },
		{ 0 }
	};
	static const struct cli_opt no_help[] = {
		{ .name = "quick", .id = 600, .help = "" },
		{ 0 }
	};
	static const struct cli_opt takes_h[] = {
		{ .name = "hardlinks", .letter = 'h', .id = 600, .help = "every link" },
		{ 0 }
	};
	static const struct cli_group g1 = { "Options", twice_name }, g2 = { "Options", twice_letter },
		g3 = { "Options", twice_id }, g4 = { "Options", no_help }, g5 = { "Options", takes_h };
	/* the same letter in the command's own group and a shared one */
	static const struct cli_opt own_j[] = {
		{ .name = "json-lines", .letter = 'J', .id = 600, .help = "JSON Lines" },
		{ 0 }
	};
	static const struct cli_group g6 = { "Options", own_j };
	static const struct cli_opt other_letter[] = {
		{ .name = "strict", .id = 'X', .help = "strictly" },
		{ 0 }
	};
	static const struct cli_group g7 = { "Options", other_letter };
	static const struct cli_spec bad[] = {
		{ .name = "x", .groups = { &g1 } }, { .name = "x", .groups = { &g2 } },
		{ .name = "x", .groups = { &g3 } }, { .name = "x", .groups = { &g4 } },
		{ .name = "x", .groups = { &g5 } }, { .name = "x", .groups = { &g6, &cli_format_group } },
		{ .name = "x", .groups = { &g7 } },
	};
	static const char *const what[] = { "a long name twice", "a letter twice (as an alias)",
		"an id twice", "an empty help", "-h taken", "a letter a shared group has",
		"an id that is a letter the option lacks" };
	char why[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int n = table_faults(&bad[i], why, sizeof(why));

		ok(n > 0, "the checker finds %s (%s)", what[i], n ? why : "not seen");
	}
}

/* ---- the parser ---- */

struct parse {
	const struct cli_spec *spec;
	int argc;
	char *argv[6];
	int ids[6];		/* what cli_getopt returned, up to CLI_END or CLI_STOP */
	const char *args[6];	/* p->arg with each */
	int n, exit;
};

static void parse_run(void *arg)
{
	struct parse *r = arg;
	struct cli_parser p;

	cli_parser_init(&p, r->spec, r->argc, r->argv);
	optind = 0;		/* a fresh getopt for each parse, whatever the last left */
	r->n = 0;
	do {
		r->ids[r->n] = cli_getopt(&p, r->argc, r->argv);
		r->args[r->n] = p.arg;
	} while (r->ids[r->n] >= 0 && ++r->n < 5);
	r->exit = p.exit;
	out_init(OUT_HUMAN, false, false);	/* --json sets JSON for the usage errors */
	out_json_short(false);
}

/* Parse "CMD W1 [W2]"; what it said on stderr in *err (NULL: dropped). */
static void parse(struct parse *r, const struct cli_spec *spec, const char *w1, const char *w2,
		  char **err)
{
	static char words[3][512];
	char *e;

	memset(r, 0, sizeof(*r));
	r->spec = spec;
	snprintf(words[0], sizeof(words[0]), "%s", spec->name);
	snprintf(words[1], sizeof(words[1]), "%s", w1);
	r->argv[0] = words[0];
	r->argv[1] = words[1];
	r->argc = 2;
	if (w2) {
		snprintf(words[2], sizeof(words[2]), "%s", w2);
		r->argv[r->argc++] = words[2];
	}
	e = tap_capture(2, parse_run, r);
	if (err)
		*err = e;
	else
		free(e);
}

/* An argument each option takes: a column it knows, a word it lists, else "x". */
static const char *an_arg(const struct cli_spec *s, const struct cli_opt *o, char *buf,
			  size_t len)
{
	if (o->comp == CC_COLUMNS && s->cols)
		snprintf(buf, len, "%s", s->cols[0].header);
	else if (o->words)
		snprintf(buf, len, "%.*s", (int)strcspn(o->words, " "), o->words);
	else
		snprintf(buf, len, "x");
	return buf;
}

static void test_parser(void)
{
	for (size_t i = 0; i < NSPECS; i++) {
		const struct cli_spec *s = specs[i].spec;
		int tried = 0, bad = 0, refusals = 0, refused_ok = 0;
		char arg[128], word[256], what[512] = "";

		each_opt(s, g, o) {
			struct parse r;
			char *err;

			if (refused(o)) {
				snprintf(word, sizeof(word), "-%c", o->letter);
				parse(&r, s, word, o->arg ? "x" : NULL, &err);
				refusals++;
				if (r.n == 0 && r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE &&
				    strstr(err, o->help) && strstr(err, "Try 'pagecache"))
					refused_ok++;
				else if (!what[0])
					snprintf(what, sizeof(what), "-%c not refused as its text says",
						 o->letter);
				free(err);
				continue;
			}
			/* --name [ARG] or --name=ARG, -l [ARG], -a [ARG]; --name alone if ARG is optional */
			for (int k = 0; k < 4; k++) {
				char c = k == 1 ? o->letter : k == 2 ? o->alias : 0;
				const char *w2 = NULL, *want = NULL;

				if ((k == 1 || k == 2) && !c)
					continue;
				if (k == 3 && !(o->flags & CLI_OPTARG))
					continue;
				an_arg(s, o, arg, sizeof(arg));
				if (!k && (o->flags & CLI_OPTARG))
					snprintf(word, sizeof(word), "--%s=%s", o->name, want = arg);
				else if (!k || k == 3)
					snprintf(word, sizeof(word), "--%s", o->name);
				else
					snprintf(word, sizeof(word), "-%c", c);
				if (o->arg && !(o->flags & CLI_OPTARG))
					w2 = want = arg;
				parse(&r, s, word, w2, &err);
				tried++;
				if (r.n != 1 || r.ids[0] != o->id || r.ids[1] != CLI_END ||
				    !(want ? r.args[0] && !strcmp(r.args[0], want) : !r.args[0])) {
					bad++;
					if (!what[0])
						snprintf(what, sizeof(what), "%s%s%s: got %d, %d (%s)",
							 word, w2 ? " " : "", w2 ? w2 : "", r.ids[0],
							 r.ids[1], err);
				}
				free(err);
			}
		}
		for (char *nl = strchr(what, '\n'); nl; nl = strchr(nl, '\n'))
			*nl = ' ';
		ok(!bad && refused_ok == refusals,
		   "%s: cli_getopt takes each option by name and letter (%d ways), with its "
		   "argument; %d refused letters said%s%s", s->name, tried, refusals,
		   what[0] ? ": " : "", what);
	}
}

/* Unknown options and missing values are usage errors (exit 2), said. */
static void test_parser_errors(void)
{
	struct parse r;
	char *err;

	parse(&r, &stat_spec, "--no-such-option", NULL, &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "--no-such-option"),
	   "an unknown long option: exit 2, named");
	free(err);
	parse(&r, &stat_spec, "-Y", NULL, &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "unknown option '-Y'"),
	   "an unknown letter: exit 2, named");
	free(err);
	parse(&r, &stat_spec, "--range", NULL, &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "needs a value"),
	   "an option without its value: exit 2, said");
	free(err);
	parse(&r, &stat_spec, "-t", NULL, &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "pagecache warm"),
	   "vmtouch's -t on stat: says to type 'pagecache warm'");
	free(err);
}

/* ---- bound options: stored by cli_getopt ---- */

struct bound {
	bool quick;
	int verbose, level;
	const char *name;
	uint64_t size;
	double secs;
};

static const struct cli_opt bound_opts[] = {
	{ .name = "quick", .letter = 'q', .id = 'q', CLI_SET(struct bound, quick), .help = "fast" },
	{ .name = "verbose", .letter = 'v', .id = 'v', CLI_COUNT(struct bound, verbose),
	  .help = "more" },
	{ .name = "name", .id = 600, .arg = "N", CLI_STRING(struct bound, name), .help = "a name" },
	{ .name = "size", .id = 601, .arg = "SIZE", CLI_SIZE(struct bound, size), .lo = 1,
	  .bad = "invalid size '%s' (e.g. 4k)", .help = "a size" },
	{ .name = "secs", .id = 602, .arg = "S", CLI_SECONDS(struct bound, secs), .lo = 0, .hi = 10,
	  .range = CLI_ABOVE_LO, .bad = "--secs '%s': more than 0, at most 10", .help = "seconds" },
	{ .name = "level", .id = 603, .arg = "N", CLI_INT(struct bound, level), .lo = 0, .hi = 9,
	  .bad = "invalid level '%s' (0-9)", .help = "a level" },
	{ .name = "other", .id = 604, .help = "the command's switch takes it" },
	{ 0 }
};
static const struct cli_spec bound_spec = {
	.name = "bound", .usage = "", .footer = "",
	.groups = { &(struct cli_group){ "Options", bound_opts } },
};

struct bind_parse {
	char *argv[8];
	int argc, ids[8], n, exit;
	struct bound b;
};

static void bind_run(void *arg)
{
	struct bind_parse *r = arg;
	struct cli_parser p;

	cli_parser_bind(&p, &bound_spec, &r->b, r->argc, r->argv);
	optind = 0;
	r->n = 0;
	do
		r->ids[r->n] = cli_getopt(&p, r->argc, r->argv);
	while (r->ids[r->n] >= 0 && ++r->n < 7);
	r->exit = p.exit;
}

/* "bound" and the words of line, parsed into r->b; stderr in *err */
static void bind_parse(struct bind_parse *r, const char *line, char **err)
{
	static char buf[256];
	char *save = NULL;

	memset(r, 0, sizeof(*r));
	snprintf(buf, sizeof(buf), "bound %s", line);
	for (char *w = strtok_r(buf, " ", &save); w && r->argc < 7; w = strtok_r(NULL, " ", &save))
		r->argv[r->argc++] = w;
	*err = tap_capture(2, bind_run, r);
}

static void test_bind(void)
{
	struct bind_parse r;
	char *err, why[160];
	int faults = table_faults(&bound_spec, why, sizeof(why));

	ok(!faults, "a table of bound options is sound%s%s", faults ? ": " : "", why);
	bind_parse(&r, "-q --other", &err);
	ok(r.b.quick && r.n == 1 && r.ids[0] == 604 && r.ids[1] == CLI_END && !*err,
	   "a bool: -q sets it and is not returned; --other (unbound) is");
	free(err);
	bind_parse(&r, "--other", &err);
	ok(!r.b.quick && r.n == 1 && r.ids[0] == 604, "a bool not given stays false");
	free(err);
	bind_parse(&r, "-vv --verbose", &err);
	ok(r.b.verbose == 3 && r.n == 0 && r.ids[0] == CLI_END, "a counter: -vv --verbose is 3");
	free(err);
	bind_parse(&r, "--name a --name=b", &err);
	ok(r.b.name && !strcmp(r.b.name, "b") && r.ids[0] == CLI_END,
	   "a repeated string option: the last one counts");
	free(err);
	bind_parse(&r, "--size 4k --level 7 --secs 2.5", &err);
	ok(r.b.size == 4096 && r.b.level == 7 && r.b.secs == 2.5 && r.ids[0] == CLI_END,
	   "a size, an int and seconds: 4096, 7, 2.5");
	free(err);
	bind_parse(&r, "--size 1x", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && r.b.size == 0 &&
	   strstr(err, "invalid size '1x' (e.g. 4k)") && strstr(err, "Try 'pagecache"),
	   "a bad size: exit 2, its message with the value");
	free(err);
	bind_parse(&r, "-q --size 0 --other", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && r.b.quick && strstr(err, "'0'"),
	   "a size below the least: exit 2 at once, nothing after it read");
	free(err);
	bind_parse(&r, "--secs 0", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE &&
	   strstr(err, "--secs '0': more than 0, at most 10"), "seconds out of range: exit 2, said");
	free(err);
	bind_parse(&r, "--level 10", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "invalid level '10' (0-9)"),
	   "an int out of range: exit 2, said");
	free(err);
}

/* ---- the shared groups, bound through the parser (struct cli_bound) ---- */

static const struct cli_opt shared_own[] = {
	{ .name = "other", .id = 604, .help = "the command's switch takes it" },
	CLI_OPT_RATE,
	{ 0 }
};
static const struct cli_spec shared_spec = {
	.name = "shared", .usage = "", .footer = "",
	.groups = { &(struct cli_group){ "Options", shared_own }, &cli_budget_group,
		    &cli_format_group, &cli_targets_group },
};

struct shared_parse {
	char *argv[10];
	int argc, ids[8], n, exit;
	struct cli_opts co;
	struct targets t;
	struct cli_budget bo;
};

static void shared_run(void *arg)
{
	struct shared_parse *r = arg;
	struct cli_parser p;

	cli_parser_bind_to(&p, &shared_spec,
			   &(struct cli_bound){ .co = &r->co, .t = &r->t, .bo = &r->bo }, r->argc,
			   r->argv);
	optind = 0;
	r->n = 0;
	do
		r->ids[r->n] = cli_getopt(&p, r->argc, r->argv);
	while (r->ids[r->n] >= 0 && ++r->n < 7);
	r->exit = p.exit;
	/* what the format options leave behind them, undone for the next parse */
	out_init(OUT_HUMAN, false, false);
	out_json_short(false);
	out_prom_opts(false, NULL);
}

/* "shared" and the words of line, parsed into r's structs; stderr in *err */
static void shared_parse(struct shared_parse *r, const char *line, char **err)
{
	static char buf[256];
	char *save = NULL;

	targets_release(&r->t);
	memset(r, 0, sizeof(*r));
	r->co.fmt = OUT_HUMAN;
	r->bo = (struct cli_budget)CLI_BUDGET_INIT;
	targets_init(&r->t);
	snprintf(buf, sizeof(buf), "shared %s", line);
	for (char *w = strtok_r(buf, " ", &save); w && r->argc < 9; w = strtok_r(NULL, " ", &save))
		r->argv[r->argc++] = w;
	*err = tap_capture(2, shared_run, r);
}

static void budget_bad_run(void *arg)
{
	cli_budget_value(arg, "max-mem", "0");
}

static void test_bind_shared(void)
{
	struct shared_parse r = { 0 };
	struct cli_budget b = CLI_BUDGET_INIT;
	char *err;

	targets_init(&r.t);
	shared_parse(&r, "--json=short -n --bytes --other", &err);
	ok(r.co.fmt == OUT_JSON && r.co.json_short && r.co.noheadings && r.co.bytes && r.n == 1 &&
	   r.ids[0] == 604 && r.ids[1] == CLI_END,
	   "shared format options are stored in the command's cli_opts, not returned");
	free(err);
	shared_parse(&r, "--prom-file x --kv", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE &&
	   strstr(err, "--kv and --prom-file, --prom-label or --prom-per-file: one format"),
	   "--prom-file with --kv: still refused, exit 2, the same words");
	free(err);
	shared_parse(&r, "--kv --prom-per-file", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE &&
	   strstr(err, "--prom-per-file and --json or --kv: one format"),
	   "--kv with --prom-per-file: refused the other way round too");
	free(err);
	shared_parse(&r, "--prom-file /dev/null", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "is not a regular file"),
	   "--prom-file on a device: refused before anything is done");
	free(err);
	shared_parse(&r, "-p 4k-12k -I *.db --pid 1 -x", &err);
	ok(r.ids[0] == CLI_END && r.t.off == 4096 && r.t.len == 8192 && r.t.ninc == 1 &&
	   r.t.npids == 1 && r.t.pids[0] == 1 && r.t.walk.one_fs,
	   "target options are stored in the command's targets");
	free(err);
	shared_parse(&r, "-p 9k-1k", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && strstr(err, "invalid range '9k-1k'"),
	   "a bad range: exit 2, said");
	free(err);
	shared_parse(&r, "--max-mem 1G --reserve 0 --rate 2", &err);
	ok(r.ids[0] == CLI_END && r.bo.max_mem == 1ull << 30 && r.bo.reserve == 0 &&
	   r.bo.rate == 2ull << 20, "budget options are stored: --rate 2 is 2 MiB/s");
	free(err);
	shared_parse(&r, "--rate 0", &err);
	ok(r.ids[0] == CLI_STOP && r.exit == EXIT_USAGE && r.bo.rate == 0 &&
	   strstr(err, "invalid rate '0' (a number of MiB/s from 1 byte/s up"),
	   "--rate 0 (no limit is no option): exit 2, said");
	free(err);
	targets_release(&r.t);
	ok(cli_budget_value(&b, "rate", "50M") == 0 && b.rate == 50ull << 20 &&
	   cli_budget_value(&b, "max-mem", "512M") == 0 && b.max_mem == 512ull << 20,
	   "cli_budget_value: one value by its option's name (the daemon's configuration)");
	err = tap_capture(2, budget_bad_run, &b);
	ok(strstr(err, "invalid size '0' (e.g. 512M, 1.5G)") != NULL && b.max_mem == 0,
	   "cli_budget_value: a bad value said as the option says it");
	free(err);
}

/* ---- cli_parse_format_only: tune's, status's and cgroups' whole parse ---- */

static const struct cli_opt fonly_opts[] = {
	{ .name = "quick", .letter = 'q', .id = 'q', CLI_SET(struct bound, quick), .help = "fast" },
	{ 0 }
};
static const struct cli_spec fonly_spec = {
	.name = "fonly", .usage = "", .footer = "",
	.groups = { &(struct cli_group){ "Options", fonly_opts }, &cli_format_group },
};

struct fonly_parse {
	char *argv[8];
	int argc, rc, optind;
	struct bound b;
	struct cli_opts co;
};

static void fonly_run(void *arg)
{
	struct fonly_parse *r = arg;
	char *none[] = { "fonly", NULL };

	/* getopt forgets the last parse (its place in a word of our reused buffer) */
	optind = 0;
	getopt(1, none, "");
	r->rc = cli_parse_format_only(&fonly_spec, &r->b, &r->co, r->argc, r->argv);
	r->optind = optind;
	out_init(OUT_HUMAN, false, false);
	out_prom_opts(false, NULL);
}

static void fonly_parse(struct fonly_parse *r, const char *line, char **err)
{
	static char buf[256];
	char *save = NULL;

	memset(r, 0, sizeof(*r));
	r->co.fmt = OUT_HUMAN;
	snprintf(buf, sizeof(buf), "fonly %s", line);
	for (char *w = strtok_r(buf, " ", &save); w && r->argc < 7; w = strtok_r(NULL, " ", &save))
		r->argv[r->argc++] = w;
	*err = tap_capture(2, fonly_run, r);
}

static void test_format_only(void)
{
	struct fonly_parse r;
	char *err;

	fonly_parse(&r, "-q --kv -n rest", &err);
	ok(r.rc == -1 && r.b.quick && r.co.fmt == OUT_KV && r.co.noheadings && r.optind == 4 &&
	   !*err, "format only: its own option and the output ones stored, operands from optind");
	free(err);
	fonly_parse(&r, "--prom-file x --kv", &err);
	ok(r.rc == EXIT_USAGE && strstr(err, "--kv and --prom-file") != NULL,
	   "format only: a conflict is exit 2, said");
	free(err);
	fonly_parse(&r, "-p 1-2", &err);
	ok(r.rc == EXIT_USAGE && strstr(err, "unknown option '-p'") != NULL,
	   "format only: a target option is not one of them (exit 2)");
	free(err);
}

/* ---- help, the man page list, completion: each option in each ---- */

static const struct cli_spec *cur;

static void help_run(void *arg)
{
	(void)arg;
	cli_help(cur, stdout);
}

static void list_run(void *arg)
{
	(void)arg;
	cli_list_options(cur, stdout);
}

static void bash_run(void *arg)
{
	struct cli_cmdinfo info[NSPECS];

	(void)arg;
	for (size_t i = 0; i < NSPECS; i++)
		info[i] = (struct cli_cmdinfo){ specs[i].name, "summary", specs[i].spec };
	cli_completion("bash", info, NSPECS, stdout);
}

static void test_shown(void)
{
	char *bash = tap_capture(1, bash_run, NULL);

	for (size_t i = 0; i < NSPECS; i++) {
		char *help, *list, name[96], missing[192] = "";

		cur = specs[i].spec;
		help = tap_capture(1, help_run, NULL);
		list = tap_capture(1, list_run, NULL);
		each_opt(cur, g, o) {
			if (refused(o))
				continue;
			snprintf(name, sizeof(name), "--%s", o->name);
			if (!missing[0] && (!strstr(help, name) || !strstr(list, name) ||
					    !strstr(bash, name)))
				snprintf(missing, sizeof(missing), ": %s missing from %s", name,
					 !strstr(help, name) ? "--help" : !strstr(list, name)
					 ? "--list-options" : "the bash completion");
			/* the first help line, as --help prints it */
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(o->help, "\n"), o->help);
			if (!missing[0] && !strstr(help, name))
				snprintf(missing, sizeof(missing), ": --%s's help missing", o->name);
		}
		ok(!missing[0], "%s: each option in --help with its help, --list-options and "
		   "the bash completion%s", cur->name, missing);
		free(help);
		free(list);
	}
	free(bash);
}

/* ---- vmtouch's command line ---- */

static void test_vmtouch(void)
{
	static const struct { const char *in, *want; } cases[] = {
		{ "-t f", "warm f" },
		{ "-e -p 1G- f", "evict -p 1G- f" },
		{ "-dl -P /run/x.pid f", "lock -d -P /run/x.pid f" },
		{ "-v f", "stat --summary -v f" },
		{ "-h f", "stat --summary -H f" },
		{ "-vb l f", "stat --summary -v --files-from l f" },
		{ "-tb l", "warm --files-from l" },
		{ "-m10M -t f", "warm -m10M f" },
		{ "-t -- -e", "warm -- -e" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[256], *argv[12], got[256] = "", **nv;
		int argc = 1, nc;
		const char *verb;

		snprintf(buf, sizeof(buf), "%s", cases[i].in);
		argv[0] = "pagecache";
		for (char *t = strtok(buf, " "); t && argc < 11; t = strtok(NULL, " "))
			argv[argc++] = t;
		argv[argc] = NULL;
		verb = cli_vmtouch_argv(argc, argv, &nc, &nv);
		for (int k = 1; verb && k < nc; k++)
			snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s", k > 1 ? " " : "",
				 nv[k]);
		ok(verb && !strcmp(got, cases[i].want), "vmtouch: pagecache %s is pagecache %s%s%s",
		   cases[i].in, cases[i].want, strcmp(got, cases[i].want) ? " (got " : "",
		   strcmp(got, cases[i].want) ? got : "");
		/* what it made, kept for a program's life, freed here: rewritten words, the array */
		for (int k = 2; verb && k < nc; k++) {
			int given = 0;

			for (int a = 1; a < argc; a++)
				given |= nv[k] == argv[a];
			if (!given)
				free(nv[k]);
		}
		if (verb)
			free(nv);
	}
}

/* stat's rows in the order named: each walked path's place among argv's (issue 27) */
static void test_rank(void)
{
	struct targets t;
	char *argv[] = { "c", "a", "d/", "./b", "a", "/x//" };
	int n = (int)(sizeof(argv) / sizeof(argv[0]));

	targets_init(&t);
	ok(targets_finish(&t, n, argv) == 0 && targets_rank_index(&t) == 0, "rank: an index of argv");
	ok(targets_rank(&t, "c") == 0 && targets_rank(&t, "a") == 1 && targets_rank(&t, "./b") == 3,
	   "rank: a file named is at its place (the first, when named twice)");
	ok(targets_rank(&t, "d/x") == 2 && targets_rank(&t, "d/s/y") == 2 &&
	   targets_rank(&t, "a/q") == 1 && targets_rank(&t, "/x//y") == 5,
	   "rank: a file under a named directory is at the directory's place");
	ok(targets_rank(&t, "e") == 6 && targets_rank(&t, "ab") == 6 && targets_rank(&t, "cd/x") == 6,
	   "rank: a path from elsewhere (a list) after them all; a prefix is no parent");
	targets_release(&t);
}

int main(void)
{
	cli_cmd = "test";
	test_tables();
	test_checker();
	test_parser();
	test_parser_errors();
	test_bind();
	test_bind_shared();
	test_format_only();
	test_shown();
	test_vmtouch();
	test_rank();
	return done_testing();
}
