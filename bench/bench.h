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

int bench_warmup(const struct warmup_opts *o);
int bench_warmup_worker(const char *db);

#endif
