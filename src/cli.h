/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cli.h: what the subcommands share: the output record model, messages
 * and exit codes, and the options that pick files (paths, trees, stdin
 * lists, patterns, byte ranges).
 */
#ifndef PC_CLI_H
#define PC_CLI_H

#include "pagecache.h"
#include "options/opts.h"

#include <getopt.h>
#include <stdio.h>

#define EXIT_PARTIAL 1		/* done, with failures (each named) */
#define EXIT_USAGE 2

/* ---- output.c: one record model, several renderers ---- */
enum out_fmt { OUT_HUMAN, OUT_JSON, OUT_PROM, OUT_KV };

enum ofield_type { OF_U64, OF_F64, OF_STR, OF_NULL, OF_BOOL, OF_RANGES, OF_JSON, OF_LIST,
		   OF_NUMS };
#define OF_BYTES 1		/* a size: human form unless --bytes */
#define OF_HUMAN 2		/* human output only (bars) */
#define OF_LABEL 4		/* prom: a label, not a metric */
#define OF_PAGES 8		/* prom: a page count, suffix _pages */
#define OF_MAX 16		/* null means "no limit": human "max" */
#define OF_NONE 128		/* null means "of nothing" (a share of 0 pages): human "-" */
#define OF_OBJECT 32		/* OF_LIST of one item: a nested object (orec_object) */
#define OF_INTS 64		/* OF_NUMS of integers (orec_u64s), not doubles */

struct ofield {
	const char *key;
	enum ofield_type type;
	int flags;
	uint64_t u;
	double d;
	char *s;		/* owned */
	union {
		struct {
			uint64_t *ranges;	/* owned: pairs (first, count) */
			size_t nranges;
		};
		struct {
			struct oitem *items;	/* owned: OF_LIST's records */
			size_t nitems;
		};
		struct {
			union {
				uint64_t *us;	/* owned: OF_NUMS with OF_INTS */
				double *ds;	/* owned: OF_NUMS */
			};
			size_t nnums;
		};
	};
};

/* One record of a nested list (OF_LIST): its own fields, as many as it has. */
struct oitem {
	struct ofield *f;
	int n;
};

/*
 * A record: as many fields as were added, on the heap (a list keeps each
 * row at its own size, so a long list costs its fields, not a fixed 32).
 * Start one with { 0 }; out_list_add and out_object take its fields and
 * leave it empty for the next row; orec_release frees what it holds.
 */
struct orec {
	struct ofield *f;
	int n, cap;
	size_t order;		/* out_sort: rows sort by this first (targets_rank), then the key */
	bool lost;		/* a field did not fit in memory: the row is said lost */
};

void orec_u64(struct orec *r, const char *key, uint64_t v, int flags);
void orec_f64(struct orec *r, const char *key, double v);
void orec_str(struct orec *r, const char *key, const char *v, int flags);
void orec_null(struct orec *r, const char *key);
void orec_nolimit(struct orec *r, const char *key);	/* null, "max" for people */
void orec_none(struct orec *r, const char *key);	/* null, "-" for people */
/*
 * Pre-rendered JSON, in JSON output only: only what json.c's writer made
 * (pc_json_canonical: bench compare's row identities). Never text built
 * by hand: use orec_object, orec_list_add and orec_f64s.
 */
void orec_json(struct orec *r, const char *key, const char *json);
/*
 * s as a JSON string, by the one escaper (strict UTF-8, see output.c),
 * for text made for orec_json; no KEY_bytes beside it: names only.
 */
void out_json_str(FILE *o, const char *s);
/*
 * A nested list of records under key: JSON [{...}, ...], escaped like any
 * field; key=value KEY.count=N KEY.0.SUBKEY=value ...; not in the table or
 * Prometheus text (give people a text field too).
 * The first call makes the list (item may be NULL: an empty list); item's
 * fields move into it.
 */
void orec_list_add(struct orec *r, const char *key, struct orec *item);
/*
 * A nested object under key: JSON {...}; key=value KEY.SUBKEY=value; not in
 * the table or Prometheus text. item's fields move into it.
 */
void orec_object(struct orec *r, const char *key, struct orec *item);
void orec_bool(struct orec *r, const char *key, bool v);
/*
 * An array of numbers (a run's samples), copied: JSON [1, 2.5, null] (a
 * double that is not finite is null, as any); key=value KEY=1,2.5 (empty:
 * KEY=""); the table the same, as ranges are (",..." where too long); not
 * in Prometheus text, where a metric is one number. flags: OF_BYTES for
 * orec_u64s, each a size for people; OF_HUMAN.
 */
void orec_u64s(struct orec *r, const char *key, const uint64_t *v, size_t n, int flags);
void orec_f64s(struct orec *r, const char *key, const double *v, size_t n, int flags);
void orec_ranges(struct orec *r, const char *key, uint64_t *pairs, size_t n);
const struct ofield *orec_get(const struct orec *r, const char *key);
void orec_release(struct orec *r);

/* Human table columns: key in the record, header, right-aligned? */
struct ocol {
	const char *key;
	const char *header;
	bool left;
};

/*
 * A document: its lists, objects and tags, and each renderer's settings.
 * The out_* calls below fill the current one; a command writes one, the
 * default, and needs none of these. out_doc_use(NULL) goes back to the
 * default; it returns the document that was current. out_doc_free is
 * NULL-safe and never frees the default.
 */
struct out_doc;
struct out_doc *out_doc_new(void);
struct out_doc *out_doc_use(struct out_doc *d);
void out_doc_free(struct out_doc *d);

void out_init(enum out_fmt fmt, bool bytes, bool noheadings);
/* Where the current document is written (NULL: stdout); kept across out_init. */
void out_set_file(FILE *o);
/* The table's header even over no rows (a screen that refreshes); kept. */
void out_keep_header(bool on);
/* util-linux's raw table: one space between columns, none padded; ' ' as \x20 */
void out_set_raw(bool raw);
enum out_fmt out_format(void);
bool out_bytes(void);
/* Records are copied (ownership of strings moves to the document). */
void out_list_add(const char *list, struct orec *r);
/* Make a list exist (and keep its place) even if it stays empty. */
void out_list_declare(const char *list);
void out_object(const char *name, struct orec *r);
/* A top-level string member, first in JSON ("bench": "swapin"); static strings only. */
void out_tag(const char *key, const char *value);
/* Sort list records by a string key before rendering. */
void out_sort(const char *list, const char *key);
void out_columns(const char *list, const struct ocol *cols, size_t n);
/*
 * The columns' widths fixed (top's, which stay put as counts change):
 * w[i] for out_columns' column i (0: as wide as its widest cell), a wider
 * cell widening its own row only. w is static: kept, not copied.
 */
void out_column_widths(const char *list, const unsigned *w);

/*
 * Prometheus text: what a record's fields are as metrics, as out_columns
 * says what they are as columns. Each command gives its table once, before
 * it adds records; only the fields named there are exported, each as
 * pagecache_<prefix>_<name> with HELP and TYPE (docs/metrics.md lists them
 * all: they are an API). The prefix is the command's (stat, warm,
 * bench_warmup), so the outputs of any set of commands can share one
 * node_exporter textfile directory. A null field stays absent. Every
 * output also has pagecache_<prefix>_last_run_timestamp_seconds.
 */
#define OM_COUNTER 1		/* a counter (NAME ends in _total); else a gauge */
#define OM_LABEL 2		/* not a metric: labels the list's series as NAME */
#define OM_PAGES 4		/* a page count, exported in bytes */
#define OM_PER_FILE 8		/* one series per file: only with --prom-per-file */
#define OM_MILLI 16		/* in thousandths (ms): exported in base units (s) */
#define OM_PERCENT 32		/* a percentage: exported as a ratio (0-1) */
#define OM_MEGA 64		/* in millions (MB/s = 1e6 bytes/s): exported in units */
#define OM_MEBI 128		/* in MiB: exported in bytes */

struct ometric {
	const char *from;	/* the object ("total") or list ("files", "cgroups") */
	const char *key;	/* the field */
	const char *name;	/* after pagecache_<prefix>_; with its unit suffix */
	int flags;		/* OM_* */
	const char *help;	/* HELP text: one line, no backslash */
};

/* prefix and m are static: kept, not copied. */
void out_prom_metrics(const char *prefix, const struct ometric *m, size_t n);
/* Page counts (OM_PAGES) of another system's pages: a snapshot's; 0: ours. */
void out_prom_page_size(uint64_t page_size);
/*
 * --prom-per-file and --prom-file (NULL: stdout); set while parsing the
 * options (out_init keeps them). The file is written atomically: a temp
 * file beside it, fsync'ed and renamed over it; on failure the old file
 * stays and out_flush fails.
 */
void out_prom_opts(bool per_file, const char *file);
/*
 * PATH written whole or not at all: fill(o, arg) writes into a fresh temp
 * file beside PATH (.NAME.tmp.XXXXXX, O_EXCL | O_NOFOLLOW, then mode),
 * which is fsync'ed and renamed over PATH. A device, FIFO or directory at
 * PATH is refused, a link there replaced (never written through). 0, or
 * -errno (fill's own, or the write's) after saying what failed; PATH is
 * then as it was.
 */
int out_write_file(const char *path, mode_t mode, int (*fill)(FILE *o, void *arg), void *arg);
/*
 * --prom-label NAME=VALUE: a label on every series of the Prometheus text,
 * so that outputs of one command (stat of two trees) can share a textfile
 * directory. 0, or -1 with a usage error said (a bad or reserved name, a
 * name given twice).
 */
int out_prom_label(const char *name_eq_value);
bool out_prom_labelled(void);
/*
 * -o LIST: out_columns(list, from, ...) will show these of from's columns
 * (by header, any case; "+LIST" after the default ones). 0, or -1 with
 * the first unknown name in bad (NUL-terminated, at most badlen).
 */
int out_select_columns(const struct ocol *from, size_t n, const char *list, char *bad,
		       size_t badlen);
/*
 * Human lines printed after the tables, in order: "label: value". Like
 * every string people see, control characters, backslashes and bytes that
 * are not UTF-8 come out as C escapes (\n, \\, \x1b): a name can neither
 * forge a line nor move the cursor. Newlines that begin fmt are kept.
 */
void out_human_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * s for people, malloc'd (NULL: no memory): C escapes for control
 * characters (C0, DEL and C1: \n \t \r \x1b \xc2\x9b), backslashes (\\)
 * and bytes that are not UTF-8 (\xff); the rest as it is.
 */
char *out_escape(const char *s);
/* Render everything to stdout; returns 0 or -errno of the write. */
int out_flush(void);
/*
 * One whole record on one line, now, outside any document (top's JSON
 * Lines: an object per interval): JSON compact, key=value its line; other
 * formats nothing. Takes r's fields. 0, or -errno of the write (-EPIPE:
 * nobody reads any more).
 */
int out_line(struct orec *r);
/*
 * One record written at once, after the document (lock --watch's events):
 * JSON, pretty or short, one compact line {"NAME": {...}} (jq reads the
 * document and these lines as one stream); key=value its line; people
 * `human` (escaped); Prometheus nothing. Takes r's fields. 0, or -errno
 * of the write (EPIPE is 0: nobody reads).
 */
int out_event(const char *name, struct orec *r, const char *human);
char *fmt_size(uint64_t bytes, char *buf, size_t len);
/* "99.9%": never rounds a partial residency up to 100% */
char *fmt_percent(uint64_t part, uint64_t whole, char *buf, size_t len);
/* Is this argv word --json[=STYLE] (or a prefix getopt would take for it)? */
bool is_json_flag(const char *arg);
/*
 * JSON's layout: false (--json, --json=pretty) one indented document;
 * true (--json=short) one compact object a line. Kept across out_init.
 */
void out_json_short(bool on);

/* ---- messages.c: stderr and the failure count ---- */
/*
 * PAGECACHE_FAULT (lib/sys.c's fault injection, for the tests): 0, or the
 * exit status after saying what is wrong (2: a bad spec; 1: no memory).
 */
int cli_fault_env(void);
/* PAGECACHE_TRACE_RING into *ret_pages where set (not in a secure run); 0, or exit 2 said */
int cli_trace_ring_env(unsigned *ret_pages);
extern const char *cli_cmd;
/* problem first, subject quoted: "cannot open 'x': No such file" */
void cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* a per-file failure: warns and records it for the JSON "errors" list */
void cli_fail(const char *path, int err, const char *what);
void cli_fail_msg(const char *path, const char *what, const char *reason);
unsigned cli_failures(void);
/*
 * Why pc_cgroup_nest_init failed (rc) for run, bench readtwice and bench
 * swapin alike, with what systemd said where it was asked for a scope.
 */
const char *cli_nest_why(int rc, const struct pc_cgroup_nest *n, char *buf, size_t len);
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* OPT's ARG as a process ID (1 to INT_MAX): 0, or cli_usage_error's EXIT_USAGE. */
int cli_parse_pid(const char *opt, const char *arg, pid_t *ret);
/*
 * A decimal option argument (or pagecache.conf value), seconds or a ratio
 * ("1.5", "2e-3"): the whole of arg, a number from lo to hi, either end
 * left out where flags say (CLI_ABOVE_LO: more than lo; CLI_BELOW_HI: less
 * than hi); never inf or nan. 0 with *ret set, or -EINVAL with nothing
 * said: each option names its own range.
 */
#define CLI_ABOVE_LO 1u
#define CLI_BELOW_HI 2u
int cli_parse_decimal(const char *arg, double lo, double hi, unsigned flags, double *ret);
bool cli_stderr_tty(void);

/* ---- targets.c: which files ---- */
struct proc_file;
struct targets {
	const char **paths;		/* argv's, then the processes' files */
	size_t npaths, cap;
	size_t nargv;			/* paths[nargv...]: the processes' files */
	uint64_t off, len;		/* byte range; len 0: to EOF */
	const char **include, **exclude;
	size_t ninc, nexc;
	struct pc_walk_opts walk;
	struct path_list {		/* -b, --files-from, --files0-from FILE ("-": stdin) */
		const char *name;
		bool nul;		/* --files0-from's: names end with NUL */
		FILE *f;		/* open from targets_finish until read; NULL: done */
		FILE *in;		/* f's own stream (a copy's: targets_each_name) */
		int err;		/* a read error the copy did not keep */
		unsigned long line;	/* names read (and empty lines) */
	} *lists;
	size_t nlists;			/* every one is read, in order, as it is walked */
	size_t list_at, fed;		/* the walk's feed: the list it reads, paths it gave */
	char *name;			/* the name read last (PATH_MAX) */
	/* optional: each root before it is walked: -1 drops it; *fd as root_fds */
	int (*root)(const char *path, int *fd, void *arg);
	void *root_arg;
	bool nul;			/* -0: -b's and --files-from's lists too */
	int *pids;			/* --pid, repeatable */
	size_t npids;
	const char *cgroup;		/* --cgroup: every process in it */
	bool cgroup_gone_empty;		/* one not there selects nothing (warned), no failure */
	bool children;			/* --children */
	struct proc_file *procs;	/* their files, pinned (targets.c) */
	size_t nprocs;
	int (*file)(struct pc_walk_entry *, void *);	/* the command's */
	void *file_arg;
	void (*dir)(const char *path, void *arg);	/* optional: each directory entered */
	void *dir_arg;
	struct root_rank *ranks;	/* targets_rank's index of argv's paths, sorted */
	size_t nranks;
	/* counters filled by the walk's events */
	uint64_t dirs, vanished, special, symlinks, loops, mounts, toobig, excluded, dups;
};

void targets_init(struct targets *t);
/*
 * A target option (cli_targets_group's id, its argument) into t, as the
 * parser's CB_TARGETS handler and the daemon's jobs give them: 1 handled,
 * 0 not a target option, -1 bad value (already reported).
 */
int targets_opt(struct targets *t, int c, const char *arg);
/*
 * Take argv's remaining paths, open the path lists (read while they are
 * walked: a list of any length holds a few hundred names at once); -1 on
 * error.
 */
int targets_finish(struct targets *t, int argc, char **argv);
/*
 * Each name the walk will start from (argv's, then the lists'), before
 * the walk: fn's non-zero stops. A list that cannot be read again (a
 * pipe) is copied to a temporary file as it is read, for the walk. Said
 * nothing of what is wrong in a list: the walk says it.
 */
int targets_each_name(struct targets *t, int (*fn)(const char *path, void *arg), void *arg);
/* Every list's names read into paths (a walk made elsewhere: lock --watch). */
int targets_read_lists(struct targets *t);
/* Walk with t's options; event counters are kept in t. */
int targets_walk(struct targets *t, int (*file)(struct pc_walk_entry *, void *), void *arg);
/* t's walk options and events (counters, messages), for a walk made elsewhere (lock --watch) */
const struct pc_walk_opts *targets_walk_opts(struct targets *t);
void targets_release(struct targets *t);
/*
 * Rows in the order the paths were named (fincore's): targets_rank_index
 * indexes argv's paths (0, or -ENOMEM: every rank is then the same) before
 * the walk; targets_rank gives a walked path the place of the first of
 * them it is, or is under, on the command line; a path from a list or a
 * process comes after them all (nargv). Safe from the walker's threads.
 */
int targets_rank_index(struct targets *t);
size_t targets_rank(const struct targets *t, const char *path);
/*
 * --container C (snapshot, restore): the container's root as its own
 * processes see it (/proc/PID/root of one in it: through its overlay and
 * its volumes) into root, its memory cgroup's directory into cgdir. 0, or
 * -1 with the failure said (cli_fail_msg: not found, not running).
 */
int cli_container(const char *spec, char *root, size_t rlen, char *cgdir, size_t clen);
/* A PC_WALK_ERROR said as the walking commands say it (a device: "not a regular file ...") */
void targets_walk_error(const char *path, int err);

/*
 * cmd-snapshot.c, for `snapshot` and the daemon's snapshot jobs: t's
 * targets (finished) walked into s, begun by the caller, and the snapshot
 * written to out (pc_snapshot_finish: r says how it went). With
 * PC_SNAPSHOT_SAFE_LINKS in flags, the roots are trusted first (one
 * through another user's link is dropped and said). engine_failures: the
 * FAILED events the caller's event callback counted; what cli_failures()
 * counts beyond them failed before the engine saw it and counts too.
 */
void snapshot_capture(struct targets *t, unsigned flags, struct pc_snapshot *s, const char *out,
		      const uint64_t *engine_failures, struct pc_snapshot_result *r);

/*
 * cmd-lock.c, for `lock` and the daemon's lock jobs (a fork, no command
 * line): lock_watch_run is `lock --watch [--max-mem MAX] -- PATH...`:
 * the paths locked (lib/lockset.c) and kept locked as files are replaced,
 * the set never past max_mem (NULL: past what it first held), until
 * SIGTERM, SIGINT or SIGHUP; said on stderr as lock says it, its lines
 * on stdout. report (may be NULL) hears how the set stands once the
 * first walk is done (LOCK_LOCKED; no file held: it ends now), after each
 * rescan (LOCK_WATCHING) and once every lock is released (LOCK_RELEASED,
 * with the exit status). Returns lock's exit status.
 */
enum lock_state { LOCK_LOCKED = 1, LOCK_WATCHING, LOCK_RELEASED };
struct lock_report {
	enum lock_state state;
	uint64_t files, bytes;			/* locked now (data, never a hole) */
	uint64_t holes;				/* bytes of holes left unlocked */
	uint64_t relocks, released, rescans, refusals;	/* while watching */
	unsigned failures;			/* paths that failed (said), as the exit counts them */
	bool budget_stopped;			/* the budget stopped the first walk */
	int status;				/* LOCK_RELEASED: the exit status */
};
struct lock_watch {
	char **paths;				/* absolute */
	size_t npaths;
	const char *max_mem;			/* --max-mem's SIZE (checked); NULL: none */
	void (*report)(const struct lock_report *r, void *arg);
	void *arg;
};
int lock_watch_run(const struct lock_watch *w);

/* What every data-printing, file-taking command parses the same way. */
struct cli_opts {
	enum out_fmt fmt;
	bool bytes, noheadings;
	bool json_short;	/* --json=short: one record a line (JSON Lines) */
	bool raw;			/* -r: the table unaligned, as util-linux's */
	bool prom_per_file;		/* --prom-per-file */
	const char *prom_file;		/* --prom-file FILE */
};
/* Before getopt: so that even usage errors are JSON under --json. */
void cli_begin(int argc, char **argv);
/*
 * An output option (the format groups' id, its argument) into co: the
 * parser's CB_FORMAT handler. One format only (--json or --kv against the
 * --prom ones), --prom-file never a device or directory. 0, or -1 after
 * the usage error.
 */
int cli_format_set(struct cli_opts *co, int opt, const char *arg);
/* After getopt: set up the output and take the paths; -1: usage error (t released). */
int cli_start(const struct cli_opts *co, struct targets *t, int argc, char **argv);

/*
 * Add up per-walker-thread totals: structs made only of uint64_t counters,
 * `size` bytes each (padding included), into *sum.
 */
void cli_sum_totals(void *sum, const void *per_thread, unsigned n, size_t size);
/*
 * n zeroed per-thread totals of `size` bytes (a multiple of align), aligned
 * as their type says: a cache line each (calloc gives 16 bytes: UBSan's
 * misaligned access, seen with warm -j1). NULL without memory; free().
 */
void *cli_alloc_totals(unsigned n, size_t size, size_t align);

/* The memory budget's options, shared by warm, restore and lock. */
struct cli_budget {
	uint64_t max_mem;		/* 0: none */
	uint64_t reserve;		/* UINT64_MAX: the default */
	uint64_t rate;			/* bytes/s, 0: unlimited */
};
#define CLI_BUDGET_INIT { 0, UINT64_MAX, 0 }
/*
 * One budget value, by its option's name ("max-mem", "reserve", "rate":
 * a plain number is MiB/s), into b: the parser's CB_BUDGET handler, and
 * the daemon's and lock's for values from elsewhere. 0, or -1 after the
 * usage error (exit 2).
 */
int cli_budget_value(struct cli_budget *b, const char *name, const char *arg);
/*
 * Why a budget stopped (pc_budget's `stopped`), for messages and JSON:
 * pc_budget_reason's words, with the maximum named by its option
 * (--max-mem), which the library knows nothing of.
 */
const char *cli_budget_reason(int stopped);

/*
 * A progress line on stderr, on a terminal only (not with TERM=dumb):
 * with *total (bytes to do; it may grow as a walk finds files) a
 * percentage and an ETA, else what was done. NULL-safe stop.
 */
struct cli_progress;
struct cli_progress *cli_progress_start(const struct pc_progress *p, const char *label,
					const uint64_t *total);
void cli_progress_stop(struct cli_progress *pr);


void bar_render(const uint64_t *buckets_res, const uint64_t *buckets_all, int n, char *out);

/* Each command's option table (cmd-*.c). */
extern const struct cli_spec stat_spec, warm_spec, evict_spec, lock_spec, snapshot_spec,
	restore_spec, show_spec, diff_spec, run_spec, cgroups_spec, tune_spec, push_spec, pull_spec,
	daemon_spec, status_spec, record_spec, top_spec, hook_spec;

int cmd_stat(int argc, char **argv);
int cmd_warm(int argc, char **argv);
int cmd_evict(int argc, char **argv);
int cmd_lock(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_tune(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_cgroups(int argc, char **argv);
int cmd_push(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_daemon(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_hook(int argc, char **argv);
/* Personalities: argv[0] is the tool's name as invoked (cmd-vmtouch.c, cmd-fincore.c). */
int cmd_vmtouch(int argc, char **argv);
int cmd_fincore(int argc, char **argv);

/*
 * Why a snapshot cannot be written where -o points (pc_profile_check_target
 * and the writer's errors), for people; a link is named with its target.
 */
const char *cli_snapshot_target_why(const char *path, int err);

#endif
