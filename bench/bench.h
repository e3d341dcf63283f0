/* bench.h: the experiment runners behind `pagecache bench`. */
#ifndef PC_BENCH_H
#define PC_BENCH_H

#include <stdbool.h>
#include <stdint.h>

struct warmup_opts {
	const char *dir;		/* where the database is made and kept */
	uint64_t rows;
	int trials;
	bool progress;
};

/* Run argv (stdout and stderr to /dev/null if quiet); 0 if it exited 0. */
int bench_run_cmd(char *const argv[], bool quiet);
/* sync, then drop the page cache (root); 0 or -errno. */
int bench_drop_caches(void);

int bench_warmup(const struct warmup_opts *o);

struct readtwice_opts {
	int cgroups;			/* memory cgroups, one sparse file each */
	int readers;			/* reader processes per cgroup */
	bool shared;			/* all readers in one memory cgroup */
	uint64_t size;			/* bytes per sparse file */
	double duration;		/* seconds */
};
int bench_readtwice(const struct readtwice_opts *o);
int bench_warmup_worker(const char *db);

#endif
