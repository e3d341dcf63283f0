/* SPDX-License-Identifier: GPL-2.0-or-later */
/* bench.h: the experiment runners behind `pagecache bench`. */
#ifndef PC_BENCH_H
#define PC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct warmup_opts {
	const char *dir;		/* where the database is made and kept */
	uint64_t rows;
	int trials;
	bool progress;
};

/* Run argv (stdout and stderr to /dev/null if quiet); 0 if it exited 0. */
int bench_run_cmd(char *const argv[], bool quiet);
/* In a forked child before exec: SIGPIPE and SIGCHLD default, no signal blocked. */
void bench_exec_prep(void);
/* waitpid, again after EINTR; 0 and *ret_status (may be NULL), or -errno. */
int bench_wait(pid_t pid, int *ret_status);

/*
 * Work directories root keeps files in. bench_workdir_open: an O_DIRECTORY
 * fd of DIR (made 0700 if missing, with BENCH_WD_CREATE), which must be no
 * symbolic link, the caller's own and not writable by group or others
 * (BENCH_WD_SHARED: root's or the caller's, and sticky if others may write,
 * like /var/tmp: only fresh directories are made in it); every directory
 * above it must be root's or the caller's, and sticky if others may write.
 * Its path without symbolic links in ret_path (if given). -errno, and why
 * in why[], otherwise.
 */
#define BENCH_WD_CREATE 1u
#define BENCH_WD_SHARED 2u
int bench_workdir_open(const char *dir, unsigned flags, char *ret_path, size_t plen, char *why,
		       size_t wlen);
/* A fresh directory PREFIX + 6 random characters (0700) in parentfd: its fd, name in ret_name. */
int bench_workdir_fresh(int parentfd, const char *prefix, char *ret_name, size_t nlen);
/* openat(O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | flags): an fd or -errno. */
int bench_file_create(int dirfd, const char *name, int flags, mode_t mode);
/* 0 if name in dirfd is a regular file of ours that only we can write (no link), else -errno. */
int bench_file_ours(int dirfd, const char *name);
/* the names of what the benches make, which a state file's lines must match */
#define READTWICE_TOP_PREFIX "/var/tmp/pagecache-readtwice-"
#define SWAP_DIR_PREFIX "pagecache-swapin-"
/* sync, then drop the page cache (root); 0 or -errno. */
int bench_drop_caches(void);


/*
 * A kernel knob changed for an experiment: the first set remembers the
 * value found, restore puts it back (only if it was changed).
 */
struct bench_knob {
	const char *path;
	char orig[64];
	bool saved, changed;
};
/*
 * What an experiment changed, noted as it goes in /run/pagecache/KIND-PID.state,
 * so that the next run of that kind undoes what a killed one (SIGKILL)
 * left: knobs (noted by bench_knob_set once a state is open), "swap DEV",
 * "loop DEV", "zram ID", "zram-borrowed ID", "file PATH", "cgroup DIR",
 * "mount DIR" (detached), "dir DIR" (removed if empty).
 */
struct bench_state {
	char path[128];
	int fd;				/* open and flock()ed while the run lives */
};
int bench_state_open(struct bench_state *st, const char *kind);
int bench_state_put(struct bench_state *st, const char *key, const char *value);
void bench_state_close(struct bench_state *st);	/* a clean end: forget it */
/* In a forked child: let go of the file (its lock means "the run lives"). */
void bench_state_child(struct bench_state *st);
/* Empty it, to note again only what a failed teardown left. */
int bench_state_reset(struct bench_state *st);
/* Undo the state files of dead processes of this kind; how many. A live one's pid: *ret_live. */
int bench_state_recover(const char *kind, long *ret_live);

/*
 * One metric of a "results" row, as `bench compare` reads it:
 * "NAME": {"mean", "stderr", "stddev", "min", "max", "better", "unit", "values"}.
 */
void bench_metric_json(FILE *f, bool first, const char *name, const double *v, int n,
		       bool higher_better, const char *unit);

/* Is the device behind path (a block device, or a file's filesystem) rotational? 1, 0, -1 unknown. */
int bench_rotational(const char *path);

int bench_knob_set(struct bench_knob *k, const char *value);
int bench_knob_restore(struct bench_knob *k);

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
