/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * common.c: what the experiment runners share: running a helper command,
 * dropping the page cache between conditions, and a result row's metrics
 * as `bench compare` reads them. Work directories and the state files that
 * let the next run undo a kill -9 are src/state.c's (run and tune need
 * them too).
 */
#define _GNU_SOURCE
#include "bench.h"
#include "cli.h"
#include "json.h"
#include "pagecache.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

void bench_loadavg(char *buf, size_t len)
{
	FILE *f = fopen("/proc/loadavg", "re");
	double a, b, c;

	buf[0] = 0;
	if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
		snprintf(buf, len, "%.2f %.2f %.2f", a, b, c);
	if (f)
		fclose(f);
}

int bench_wait(pid_t pid, int *ret_status)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (ret_status)
		*ret_status = st;
	return 0;
}

int bench_run_cmd(char *const argv[], bool quiet)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		bench_exec_prep();
		if (quiet) {
			int dn = open("/dev/null", O_WRONLY);

			dup2(dn, STDOUT_FILENO);
			dup2(dn, STDERR_FILENO);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (pid < 0)
		return -errno;
	if (bench_wait(pid, &st) < 0)
		return -ECHILD;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -EIO;
}

/* one pass of "3" into drop_caches: page cache, then dentries and inodes */
static int drop_pass(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, "3\n", 2) != 2) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

int bench_drop_caches(void)
{
	sync();	/* dirty pages cannot be dropped */
	return drop_pass();
}

int bench_drop_metadata(void)
{
	int rc;

	sync();
	/*
	 * The page cache goes before the slab in each pass: the directory and
	 * inode-table blocks that only the freed dentries and inodes kept
	 * alive stay until a second pass (kernel-facts: 1,648 sectors read
	 * by a walk after one pass, 5,536 after two).
	 */
	rc = drop_pass();
	return rc < 0 ? rc : drop_pass();
}

void bench_metric(struct orec *metrics, const char *name, const double *v, int n,
		  bool higher_better, const char *unit)
{
	struct pc_summary s;
	struct orec m = { 0 };

	pc_summarize(v, (size_t)n, &s);
	/* by name, as the results written before (json.c's canonical text) have them */
	orec_str(&m, "better", higher_better ? "higher" : "lower", 0);
	orec_f64(&m, "max", s.max);
	orec_f64(&m, "mean", s.mean);
	orec_f64(&m, "min", s.min);
	orec_f64(&m, "stddev", s.stddev);
	orec_f64(&m, "stderr", s.stderr_);
	orec_str(&m, "unit", unit, 0);
	orec_f64s(&m, "values", v, n > 0 ? (size_t)n : 0, 0);
	orec_object(metrics, name, &m);
}

static int cmp_field_key(const void *a, const void *b)
{
	return strcmp(((const struct ofield *)a)->key, ((const struct ofield *)b)->key);
}

void bench_metrics_done(struct orec *r, struct orec *metrics)
{
	if (metrics->n > 1)
		qsort(metrics->f, (size_t)metrics->n, sizeof(*metrics->f), cmp_field_key);
	orec_object(r, "metrics", metrics);
}
