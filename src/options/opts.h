/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * opts.h: each command's options as one declarative table, from which
 * getopt's tables, the --help option list, the bash and zsh completions
 * and the check of the man pages' OPTIONS sections all come (opts.c), so
 * none of them can drift from what the parser takes.
 */
#ifndef PC_OPTS_H
#define PC_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an option's argument, or a command's operands, complete to. */
enum cli_comp {
	CC_NONE,		/* free text: a number, a range, a pattern */
	CC_FILE,
	CC_DIR,
	CC_PID,
	CC_CGROUP,		/* a memory cgroup's path */
	CC_SIZE,		/* 4k, 512M, 1.5G */
	CC_WORDS,		/* one of .words */
	CC_COMMAND,		/* a program and its arguments (run) */
	CC_COLUMNS,		/* the spec's table columns, comma-separated */
};

struct ocol;

#define CLI_REFUSE 1		/* a letter others use: a usage error, .help says what to type */
#define CLI_OPTARG 2		/* the argument is optional (--opt=ARG only) */

/*
 * What cli_getopt does itself with a bound option (as git's
 * parse-options does): it stores into the field at .off of the
 * command's options struct (cli_parser.to.base) and goes on to the next
 * option, never returning its id; a bad value is a usage error (exit 2)
 * with .bad as the message, its "%s" the argument. Options that need
 * code stay CB_NONE and come back to the command's switch.
 */
enum cli_bind {
	CB_NONE,
	/*
	 * The shared groups' rows, whose tables no command owns (so no
	 * offset into one command's struct): like git's OPTION_CALLBACK, the
	 * row names what it fills, the parser holds the command's one
	 * (struct cli_bound) and a handler does what the option needs, its
	 * own messages included.
	 */
	CB_FORMAT,		/* struct cli_opts: cli_format_set (one format; --prom-file) */
	CB_TARGETS,		/* struct targets: targets_opt (the range, lists, --pid) */
	CB_BUDGET,		/* struct cli_budget: cli_budget_value (--rate's MiB/s) */
	/* stored at .off; from CB_STRING on they take a value (test-opts checks the rows) */
	CB_SET,			/* bool: true */
	CB_COUNT,		/* int: one more each time (-vv) */
	CB_STRING,		/* const char *: the argument (the last one given) */
	CB_SIZE,		/* uint64_t: pc_parse_size's 4k, 1.5G; at least .lo */
	CB_SECONDS,		/* double: cli_parse_decimal(.lo, .hi, .range) */
	CB_INT,			/* int: a whole number from .lo to .hi */
};

struct cli_opt {
	const char *name;	/* long name, without "--"; NULL for a refused letter */
	char letter;		/* short letter, 0: long only */
	char alias;		/* a second letter (vmtouch's), 0: none */
	int id;			/* what cli_getopt returns for it */
	const char *arg;	/* the argument's name ("SIZE"); NULL: takes none */
	enum cli_comp comp;
	const char *words;	/* CC_WORDS: the choices, space-separated */
	const char *help;	/* one --help line, 54 columns at most (the man page
				   says the rest); CLI_REFUSE: the whole message */
	int flags;
	enum cli_bind bind;	/* CB_NONE: the command's switch handles it */
	size_t off;		/* the field's offset in cli_parser.to.base (CLI_FIELD) */
	double lo, hi;		/* CB_SIZE, CB_SECONDS, CB_INT: the values taken */
	unsigned range;		/* CB_SECONDS: CLI_ABOVE_LO, CLI_BELOW_HI */
	const char *bad;	/* the usage error of a bad value; "%s": the argument */
};

/*
 * .bind and .off in one, checked: the field must have the kind's type, or
 * the build fails (an array of size -1). For a row of an option table:
 *   { .name = "verbose", .letter = 'v', .id = 'v', CLI_SET(struct x_cli, verbose), ... }
 */
#define CLI_FIELD(type, field, ctype)                                                 \
	(offsetof(type, field) +                                                      \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((type *)0)->field),  \
						       ctype) ? 1 : -1]))
#define CLI_SET(type, field) .bind = CB_SET, .off = CLI_FIELD(type, field, bool)
#define CLI_COUNT(type, field) .bind = CB_COUNT, .off = CLI_FIELD(type, field, int)
#define CLI_STRING(type, field) .bind = CB_STRING, .off = CLI_FIELD(type, field, const char *)
#define CLI_SIZE(type, field) .bind = CB_SIZE, .off = CLI_FIELD(type, field, uint64_t)
#define CLI_SECONDS(type, field) .bind = CB_SECONDS, .off = CLI_FIELD(type, field, double)
#define CLI_INT(type, field) .bind = CB_INT, .off = CLI_FIELD(type, field, int)

/* A titled list of options, ended by { 0 }; shared ones are shared objects. */
struct cli_group {
	const char *title;	/* "Options", "Output", "Choosing files" */
	const struct cli_opt *opts;
};

struct cli_spec {
	const char *name;	/* "stat" */
	const char *usage;	/* --help before the options: synopsis, description */
	const char *footer;	/* --help after them: examples, exit status */
	const struct cli_group *groups[6];	/* NULL-terminated; the first is the command's own */
	enum cli_comp operands;	/* what the words after the options are */
	const char *operand_words;	/* CC_WORDS: the choices (tune: swap) */
	bool stop_at_operand;	/* options end at the first operand (run's CMD) */
	const struct ocol *cols;	/* the table -o picks from (CLI_OPT_COLUMNS) */
	size_t ncols;
};

/* The shared groups (opts.c). */
extern const struct cli_group cli_targets_group;	/* file-taking commands */
extern const struct cli_group cli_format_group;		/* -J -n -r --prom --kv --bytes */
extern const struct cli_group cli_format_act_group;	/* the same, -r refused (was the range) */
extern const struct cli_group cli_format_restore_group;	/* the same, -n refused (was dry-run) */
extern const struct cli_group cli_budget_group;		/* --max-mem --reserve */
/* stat's, fincore's letters: -b is --bytes, the list only --batch, --files-from */
extern const struct cli_group cli_format_stat_group;
extern const struct cli_group cli_targets_stat_group;

/*
 * An option's id is its own letter (-v: 'v') or a named constant: a
 * command's own from 512 (OPT_STRICT), the shared groups' below from
 * 1024, so that no id is a letter the option does not have (--strict was
 * 'X', --exclude's letter) and a shared id never meets a command's own.
 */
#define CLI_OPT_OWN 512		/* the first id of a command's own named options */
enum {
	OPT_RANGE = 1024, OPT_INCLUDE, OPT_EXCLUDE, OPT_MAX_SIZE, OPT_ONE_FS, OPT_FOLLOW,
	OPT_ALL_LINKS, OPT_BATCH, OPT_NULL, OPT_THREADS, OPT_PID, OPT_CHILDREN, OPT_CGROUP,
	OPT_FILES_FROM, OPT_FILES0_FROM, OPT_JSON, OPT_PROM, OPT_KV, OPT_BYTES,
	OPT_NOHEADINGS, OPT_RAW, OPT_PROM_PER_FILE, OPT_PROM_FILE, OPT_PROM_LABEL,
	OPT_MAX_MEM, OPT_RESERVE, OPT_RATE, OPT_COLUMNS,
};

/* One entry, shared by the commands that take it (not a group of its own). */
#define CLI_OPT_RATE                                                                  \
	{ .name = "rate", .id = OPT_RATE, .arg = "RATE", .comp = CC_SIZE, .bind = CB_BUDGET, \
	  .help = "read at most RATE per second (100M; plain: MiB/s)" }

/* -o LIST, util-linux's: which of spec->cols, in what order; checked as it is parsed */
#define CLI_OPT_COLUMNS                                                               \
	{ .name = "output", .letter = 'o', .id = OPT_COLUMNS, .arg = "LIST", .comp = CC_COLUMNS, \
	  .bind = CB_FORMAT, .help = "the table's columns, in this order (+LIST: add)" }

#define CLI_END -1		/* no more options: operands from optind */
#define CLI_STOP -2		/* handled (--help, --version) or refused: return p.exit */

struct cli_opts;
struct targets;
struct cli_budget;

/* What a command's bound options fill; NULL: those come back as ids. */
struct cli_bound {
	void *base;		/* the command's options struct (.off) */
	struct cli_opts *co;	/* CB_FORMAT's */
	struct targets *t;	/* CB_TARGETS' */
	struct cli_budget *bo;	/* CB_BUDGET's */
};

struct cli_parser {
	const struct cli_spec *spec;
	const char *arg;	/* the option's argument, as optarg */
	int exit;		/* after CLI_STOP: the command's exit status */
	struct cli_bound to;	/* where bound options are stored */
	/* internal: getopt's tables, built from spec on the first call */
	bool built;
	char shortopts[160];
	struct option longopts[72];
	const struct cli_opt *flat[72];
	int nflat;
};

/*
 * getopt_long driven by spec: returns the id of the next option (its
 * argument in p->arg), CLI_END, or CLI_STOP after printing --help or
 * --version (p->exit 0) or a usage error that says what to type
 * (p->exit 2). Also says before any parsing whether --json/-J is there,
 * so that even usage errors come out as JSON.
 */
void cli_parser_init(struct cli_parser *p, const struct cli_spec *spec, int argc,
		     char **argv);
/*
 * The same, with the struct that the spec's bound options store into;
 * without it (cli_parser_init) they come back as ids, like the others.
 */
void cli_parser_bind(struct cli_parser *p, const struct cli_spec *spec, void *base, int argc,
		     char **argv);
/* The same, with the shared groups' structs too (to is copied). */
void cli_parser_bind_to(struct cli_parser *p, const struct cli_spec *spec,
			const struct cli_bound *to, int argc, char **argv);
int cli_getopt(struct cli_parser *p, int argc, char **argv);
/*
 * For a command whose options are all bound: every one parsed and
 * stored; CLI_END, or CLI_STOP (an option that came back unbound, a row
 * whose struct the command did not give, is a usage error).
 */
int cli_getopt_all(struct cli_parser *p, int argc, char **argv);
/*
 * The whole command line of a command that takes its own bound options
 * (into base) and the output options (into co) only: tune, status,
 * cgroups. -1: go on, the operands from optind; else the exit status
 * (--help's 0, a usage error's 2, said).
 */
int cli_parse_format_only(const struct cli_spec *spec, void *base, struct cli_opts *co,
			  int argc, char **argv);
void cli_help(const struct cli_spec *s, FILE *o);
/* The long name of the option with this id ("?" if none). */
const char *cli_opt_name(const struct cli_spec *s, int id);

/*
 * vmtouch's command line (`pagecache -t -p 4k-1M -m 1G f`) read the
 * vmtouch way: -t warm, -e evict, -l and -L lock, none of them stat, and
 * -h (count hardlinks) as -H. Returns the command's name with its new
 * argv (argv[1] the command; malloc'd, kept to exit), or NULL after a
 * usage error.
 */
const char *cli_vmtouch_argv(int argc, char **argv, int *ret_argc, char ***ret_argv);

/* The hidden global commands: completion scripts and the option list. */
struct cli_cmdinfo {
	const char *name, *summary;
	const struct cli_spec *spec;	/* NULL: no options of its own known here */
};
int cli_completion(const char *shell, const struct cli_cmdinfo *cmds, size_t n, FILE *o);
/* one line per option: "-p --range RANGE", for tests (man pages) */
int cli_list_options(const struct cli_spec *s, FILE *o);

#endif
