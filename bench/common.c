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

int bench_drop_caches(void)
{
	int fd;

	sync();	/* dirty pages cannot be dropped */
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "3\n", 2) != 2) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

/* JSON has no NaN or infinity: those are null */
static void json_num(FILE *f, double d)
{
	if (isfinite(d))
		fprintf(f, "%.10g", d);
	else
		fputs("null", f);
}

void bench_orec_json(struct orec *r, const char *key, const char *text)
{
	struct pc_json *v = NULL;
	char *canon = NULL;

	if (text && pc_json_parse(text, strlen(text), NULL, &v, NULL) == 0 &&
	    pc_json_canonical(v, NULL, &canon) == 0)
		orec_json(r, key, canon);
	else
		orec_null(r, key);
	free(canon);
	pc_json_free(v);
}

void bench_metric_json(FILE *f, bool first, const char *name, const double *v, int n,
		       bool higher_better, const char *unit)
{
	struct pc_summary s;

	pc_summarize(v, (size_t)n, &s);
	fputs(first ? "" : ", ", f);
	out_json_str(f, name);
	fputs(": {\"mean\": ", f);
	json_num(f, s.mean);
	fputs(", \"stderr\": ", f);
	json_num(f, s.stderr_);
	fputs(", \"stddev\": ", f);
	json_num(f, s.stddev);
	fputs(", \"min\": ", f);
	json_num(f, s.min);
	fputs(", \"max\": ", f);
	json_num(f, s.max);
	fprintf(f, ", \"better\": \"%s\", \"unit\": ", higher_better ? "higher" : "lower");
	out_json_str(f, unit);
	fputs(", \"values\": [", f);
	for (int i = 0; i < n; i++) {
		fputs(i ? ", " : "", f);
		json_num(f, v[i]);
	}
	fputs("]}", f);
}

