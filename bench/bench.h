/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench.h: the experiment runners behind `pagecache bench`. */
#ifndef PC_BENCH_H
#define PC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "state.h"
#include "stats.h"

struct warmup_opts {
	const char *dir;		/* where the database is made and kept */
	uint64_t rows;
	int trials;
	uint64_t aux_files;		/* small files each start walks, stats and reads (0: none) */
	bool progress;
};

/* Run argv (stdout and stderr to /dev/null if quiet); 0 if it exited 0. */
int bench_run_cmd(char *const argv[], bool quiet);
/* waitpid, again after EINTR; 0 and *ret_status (may be NULL), or -errno. */
/* /proc/loadavg's three averages ("0.52 0.61 0.70"), "" if unreadable:
   the machine may be shared, and a result says so */
void bench_loadavg(char *buf, size_t len);
int bench_wait(pid_t pid, int *ret_status);

/* sync, then drop the page cache, dentries and inodes once (root); 0 or -errno. */
int bench_drop_caches(void);
/*
 * sync, then drop twice: what a reboot leaves, no directory or inode-table
 * block cached either (one pass keeps those the slab held); 0 or -errno.
 */
int bench_drop_metadata(void);

/*
 * One metric of a "results" row, as `bench compare` and `bench report`
 * read it, into metrics: "NAME": {"better", "max", "mean", "min",
 * "stddev", "stderr", "unit", "values": [...]}; a number that is not
 * finite is null. Then bench_metrics_done puts metrics in r as "metrics",
 * its members sorted by name (compare lists them in that order, as the
 * results of before have them).
 */
struct orec;
void bench_metric(struct orec *metrics, const char *name, const double *v, int n,
		  bool higher_better, const char *unit);
void bench_metrics_done(struct orec *r, struct orec *metrics);

int bench_warmup(const struct warmup_opts *o);

struct readtwice_opts {
	int cgroups;			/* memory cgroups, one sparse file each */
	int readers;			/* reader processes per cgroup */
	bool shared;			/* all readers in one memory cgroup */
	uint64_t size;			/* bytes per sparse file */
	double duration;		/* seconds */
	int runs;			/* repetitions */
	uint64_t limit;			/* bytes per cgroup (shared: x cgroups); 0: none */
};
int bench_readtwice(const struct readtwice_opts *o);
int bench_warmup_worker(const char *db, uint64_t aux_files);

enum swapin_workload { WL_SEQ, WL_RANDOM, WL_MT_RANDOM, WL_MIXED, WL_COUNT };
enum swapin_device { SWDEV_ZRAM_LOOP, SWDEV_ZRAM, SWDEV_FILE, SWDEV_SLOW };
struct swapin_opts {
	int pcs[8];			/* page-cluster values, in column order */
	int npc;
	int vmas[2];			/* vma_ra_enabled values (1 on, 0 off) */
	int nvma;
	unsigned workloads;		/* bit (1 << enum swapin_workload) */
	int runs;
	bool with_auto;			/* add the tuner as a column */
	double auto_interval;		/* its sampling interval, seconds */
	uint64_t wss;			/* working set, bytes */
	uint64_t limit;			/* memory cgroup limit, bytes */
	int passes;			/* touches = passes x pages */
	int threads;			/* mt-random */
	enum swapin_device device;
	const char *dir;		/* SWDEV_FILE, SWDEV_SLOW: where the image or mount goes */
	uint64_t latency_ns;		/* SWDEV_SLOW: each read's delay */
	uint64_t bandwidth;		/* SWDEV_SLOW: bytes a second; 0: unlimited */
	bool progress;
};
int bench_swapin(const struct swapin_opts *o);

/*
 * The slow device's daemon (slowdev.c), in a child the bench forked: a
 * FUSE file system at mnt with one file, swap.img, of size bytes in locked
 * memory, each read answered latency_ns after it came, plus its bytes over
 * bandwidth (bytes a second, one transfer at a time; 0: none). "r" on readyfd once
 * mounted, or "E" and why. Returns never: it exits when unmounted. Its
 * counters, in memory shared with the bench:
 */
struct slowdev_stats {
	uint64_t reads, read_bytes;	/* read requests, and bytes read */
	uint64_t delayed;		/* reads answered no sooner than latency after they came */
	uint64_t answered;		/* reads queued for their deadline and answered */
	uint64_t delay_ns;		/* their time from arrival to answer, summed */
	uint64_t writes, write_bytes;
	uint64_t inflight, max_inflight;	/* reads waiting at once: now, and the most */
};
#define SLOWDEV_FILE "swap.img"
_Noreturn void slowdev_serve(const char *mnt, uint64_t size, uint64_t latency_ns,
			     uint64_t bandwidth, struct slowdev_stats *st, int readyfd);

/* `bench compare A.json B.json`: two result files of one bench, mmtests style. */
int bench_compare(const char *a, const char *b);

/*
 * compare.c's reading of results, for whatever else reads them (report.c).
 * PATH read as a bench result, {"bench": NAME, "results": [ROW...]}, up to
 * 64 MiB, no NUL in any string: 0 with *ret_doc (pc_json_free it) and
 * *ret_bench (in it), or -1 after saying why, naming the file (cli_fail).
 */
struct pc_json;
int bench_result_read(const char *path, struct pc_json **ret_doc, const char **ret_bench);
/* A row's label, "seq pc=3 vma=on": identity members in order; malloc'd, NULL: no memory. */
char *bench_row_label(const struct pc_json *row);

/* One metric of a results row, as compare reads it. */
struct bench_metric {
	struct pc_summary s;		/* mean is the arithmetic one; median NaN without values */
	bool values;			/* s came from per-run values */
	bool minmax;			/* s.min, s.max are known */
	int better;			/* 1 higher, 0 lower, -1 not said */
	const char *unit;		/* NULL if not said */
};
/* m (of row, for its "runs") read: NULL, or why it cannot be used. */
const char *bench_metric_read(const struct pc_json *m, const struct pc_json *row,
			      struct bench_metric *ret);

#define BENCH_CMP_ALPHA 0.05		/* Welch's t-test, two-sided */
#define BENCH_CMP_MIN_RUNS 5		/* mmtests: with fewer, the marks are noise */

/* One compared metric of a row both files have, as `bench compare --json` has it. */
struct bench_cmp {
	const char *row;		/* the row's label (bench_row_label) */
	const char *metric;
	const char *unit;		/* the base's; NULL: not said */
	bool higher;			/* higher is better */
	bool hmean;			/* the means are harmonic (rates with per-run values) */
	double base_mean, new_mean;
	double base_stddev, new_stddev;
	double pdiff;			/* percent change, positive is better */
	bool welch_valid;
	double welch_p;			/* NaN unless welch_valid */
	bool significant;		/* Welch's p < BENCH_CMP_ALPHA */
	bool mmtests_significant;	/* |d| > 1.96 (sd_base + sd_new) */
	size_t runs_base, runs_new;
};
/*
 * Two results compared, as `bench compare` does: a and b are paths; doc_a
 * and doc_b NULL (read here) or the caller's bench_result_read trees, kept
 * by the caller. 0 and *ret (bench_cmpset_free it); EXIT_USAGE (two
 * benches) or EXIT_PARTIAL (a file unread, no memory), said. Metrics that
 * cannot be read are left out, said (cli_fail) unless quiet, as are rows
 * given twice and a metric whose "better" the files disagree on.
 */
struct bench_cmpset;
int bench_cmpset_make(const char *a, struct pc_json *doc_a, const char *b, struct pc_json *doc_b,
		      bool quiet, struct bench_cmpset **ret);
size_t bench_cmpset_count(const struct bench_cmpset *c);
void bench_cmpset_get(const struct bench_cmpset *c, size_t i, struct bench_cmp *ret);
/* The fewest runs of a compared metric on side 0 (base) or 1; -1 if none. */
int bench_cmpset_min_runs(const struct bench_cmpset *c, int side);
/* Rows and metrics in one file only. */
size_t bench_cmpset_unmatched(const struct bench_cmpset *c);
void bench_cmpset_free(struct bench_cmpset *c);

/* `bench report -o HTML RESULT.json...`: the results drawn (report.c). */
int bench_report(const char *out, char *const *files, int nfiles);

#endif
