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

struct warmup_opts {
	const char *dir;		/* where the database is made and kept */
	uint64_t rows;
	int trials;
	bool progress;
};

/* Run argv (stdout and stderr to /dev/null if quiet); 0 if it exited 0. */
int bench_run_cmd(char *const argv[], bool quiet);
/* waitpid, again after EINTR; 0 and *ret_status (may be NULL), or -errno. */
int bench_wait(pid_t pid, int *ret_status);

/* sync, then drop the page cache (root); 0 or -errno. */
int bench_drop_caches(void);

/*
 * One metric of a "results" row, as `bench compare` reads it:
 * "NAME": {"mean", "stderr", "stddev", "min", "max", "better", "unit", "values"}.
 */
void bench_metric_json(FILE *f, bool first, const char *name, const double *v, int n,
		       bool higher_better, const char *unit);
/*
 * orec_json(r, key, text) for JSON text made here: read back strictly
 * (UTF-8, no NaN, whole) and written by json.c's writer, so only that
 * writer's text reaches the output; text that does not read back is null.
 */
struct orec;
void bench_orec_json(struct orec *r, const char *key, const char *text);

int bench_warmup(const struct warmup_opts *o);

struct readtwice_opts {
	int cgroups;			/* memory cgroups, one sparse file each */
	int readers;			/* reader processes per cgroup */
	bool shared;			/* all readers in one memory cgroup */
	uint64_t size;			/* bytes per sparse file */
	double duration;		/* seconds */
	int runs;			/* repetitions */
};
int bench_readtwice(const struct readtwice_opts *o);
int bench_warmup_worker(const char *db);

enum swapin_workload { WL_SEQ, WL_RANDOM, WL_MT_RANDOM, WL_MIXED, WL_COUNT };
enum swapin_device { SWDEV_ZRAM_LOOP, SWDEV_ZRAM, SWDEV_FILE };
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
	const char *dir;		/* SWDEV_FILE: where the swap image goes */
	bool progress;
};
int bench_swapin(const struct swapin_opts *o);

/* `bench compare A.json B.json`: two result files of one bench, mmtests style. */
int bench_compare(const char *a, const char *b);

#endif
