/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * readtwice.c: `pagecache bench readtwice`, vm-scalability's
 * lru-file-readtwice and Alex Shi's per-memcg variant (the lruvec lock
 * series, 2019-2020), without docker or dd.
 *
 * On a filesystem it makes for itself (an ext4 image on a tmpfs, loop
 * mounted), each memory cgroup gets one sparse file; K reader processes
 * per cgroup read it twice over, 4 KiB at a time from offset 0 (holes
 * cost no I/O: pure page-cache and LRU work; the second reader's accesses
 * activate pages). Readers start together and stop at a deadline. With
 * --layout shared, every reader sits in one memory cgroup. Reported per
 * reader, per cgroup and in aggregate (MB/s = 1e6 bytes/s, from bytes and
 * seconds), with the mean per reader (the metric Alex Shi quoted) and its
 * spread. With --limit, each memory cgroup is limited (shared: to N times
 * the limit, so both layouts hold the same memory), and reclaim happens
 * inside them, each on its own LRU lists and lock; each cgroup's OOM kills
 * are read after every run, and a run with one fails, saying so. Readers
 * are all ready (in their cgroup, their file open) before any starts.
 * Mounts, loop devices, files and cgroups are removed on every path,
 * SIGINT included.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CG 256
#define MAX_READERS 1024

static volatile sig_atomic_t interrupted;

static void on_int(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct rt {
	struct bench_state state;	/* for the next run, should we be killed */
	char top[256], img[320], mnt[320];
	int varfd;			/* /var/tmp, checked; -1 */
	int topfd;			/* top before the tmpfs covers it; -1 */
	struct pc_cgroup_nest nest;	/* where the cgroups go (v2: memory handed on) */
	bool nested;			/* nest made: released at the end */
	int version;			/* the memory cgroups': 1 or 2 */
	char cgdir[MAX_CG][800];
	int ncg;
	uint64_t limit_set[MAX_CG];	/* each memcg's limit as read back; UINT64_MAX: none */
	bool tmpfs_mounted, img_mounted;
	pid_t pids[MAX_READERS];
	int npids;
};

/* What one run measured, and what the limits did to it. */
struct run_data {
	uint64_t bytes[MAX_READERS];
	double mbps[MAX_READERS];
	double t0[MAX_READERS];		/* each reader's start, CLOCK_MONOTONIC */
	uint64_t limit_hits[MAX_CG];	/* per memcg: charges that hit its limit */
	uint64_t oom_kills[MAX_CG];	/* per memcg: readers the OOM killer took */
	uint64_t oom_elsewhere;		/* OOM kills on the host outside our memcgs */
	double start_spread;		/* seconds between the first start and the last */
};

/* Undo everything set up, in reverse; safe to call at any point. */
static void teardown(struct rt *r)
{
	for (int i = 0; i < r->npids; i++)
		if (r->pids[i] > 0)
			kill(r->pids[i], SIGKILL);
	for (int i = 0; i < r->npids; i++)
		if (r->pids[i] > 0)
			waitpid(r->pids[i], NULL, 0);
	r->npids = 0;
	/* the loop device goes with it */
	if (r->img_mounted && umount2(r->mnt, UMOUNT_NOFOLLOW) == 0)
		r->img_mounted = false;
	if (r->tmpfs_mounted && umount2(r->top, UMOUNT_NOFOLLOW) == 0)
		r->tmpfs_mounted = false;
	for (int i = 0; i < r->ncg; i++)
		if (r->cgdir[i][0] && rmdir(r->cgdir[i]) == 0)
			r->cgdir[i][0] = 0;
	if (r->nested) {
		bool left = false;

		for (int i = 0; i < r->ncg; i++)
			left |= r->cgdir[i][0] != 0;
		/* v2: back out of our leaf, memory off again, once the children are gone */
		if (!left && pc_cgroup_nest_release(&r->nest) == 0)
			r->nested = false;
	}
	if (r->topfd >= 0)
		close(r->topfd);
	r->topfd = -1;
	if (r->top[0] && !r->tmpfs_mounted && r->varfd >= 0)
		unlinkat(r->varfd, r->top + sizeof("/var/tmp"), AT_REMOVEDIR);
	if (r->varfd >= 0)
		close(r->varfd);
	r->varfd = -1;
}

/*
 * A reader: join, open, say it is ready, wait for the start, read to the
 * deadline. Joining a cgroup is slow (v1 takes a lock that waits for RCU),
 * so the start waits for every reader's "ready": without that, 160
 * readers would read one after another, not together.
 */
static void reader(int idx, const char *cg, const char *file, int readyfd, int startfd, int outfd,
		   double secs)
{
	static char buf[4096];
	uint64_t bytes = 0;
	double t0, t1;
	char go;
	int fd;

	/* should the host run out of memory while we run, a reader goes first */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1000", 4) != 4) {
			/* best effort: the memcg's OOM killer picks among readers anyway */
		}
		close(fd);
	}
	if (pc_cgroup_enter(cg, getpid()) < 0)
		_exit(2);
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		_exit(3);
	if (write(readyfd, "r", 1) != 1)
		_exit(4);
	close(readyfd);		/* the parent's EOF: every reader ready or gone */
	/* the start is the parent closing its end: EOF wakes every reader at once */
	if (read(startfd, &go, 1) != 0)
		_exit(5);
	t0 = pc_now();
	for (uint64_t n = 0;; n++) {
		ssize_t got = read(fd, buf, sizeof(buf));

		if (got <= 0) {
			lseek(fd, 0, SEEK_SET);	/* EOF: go round again */
			continue;
		}
		bytes += (uint64_t)got;
		if ((n & 255) == 0 && pc_now() - t0 >= secs)
			break;
	}
	t1 = pc_now();
	dprintf(outfd, "%d %llu %.6f %.6f\n", idx, (unsigned long long)bytes, t1 - t0, t0);
	_exit(0);
}

/* One run's figures, for the statistics over runs. */
struct run_figures {
	double agg, mean, median, sd;
	double spread;			/* seconds from the first reader's start to the last's */
	uint64_t limit_hits, oom_kills, oom_elsewhere;
};

static int nmemcg(const struct readtwice_opts *o)
{
	return o->shared ? 1 : o->cgroups;
}

/* The host's OOM kills so far (/proc/vmstat oom_kill); -1 if unknown. */
static int64_t host_oom_kills(void)
{
	static const char *const names[] = { "oom_kill" };
	uint64_t v;

	if (pc_vmstat_read(names, &v, 1) < 0 || v == PC_VMSTAT_MISSING)
		return -1;
	return (int64_t)v;
}

/*
 * After a run: what each memcg's limit did (limit hits, OOM kills), from
 * its counters before and after. An OOM kill in a memcg takes one of its
 * own processes, here a reader: the run is then short of it and fails,
 * saying so. OOM kills elsewhere on the host while it ran are counted and
 * warned about: not ours (page cache is reclaimable), but worth knowing.
 */
static int check_limits(struct rt *r, const struct readtwice_opts *o, const struct pc_cgroup_events *ev0,
			const bool *have0, int64_t host0, struct run_data *d)
{
	uint64_t ours = 0;
	int64_t host1 = host_oom_kills();
	int rc = 0;

	for (int c = 0; c < nmemcg(o); c++) {
		struct pc_cgroup_events e;

		d->limit_hits[c] = d->oom_kills[c] = 0;
		if (!have0[c] || pc_cgroup_events_read(r->cgdir[c], r->version, &e) < 0)
			continue;
		d->limit_hits[c] = e.limit_hits - ev0[c].limit_hits;
		d->oom_kills[c] = e.oom_kills - ev0[c].oom_kills;
		ours += d->oom_kills[c];
		if (d->oom_kills[c]) {
			char why[300], b[32];

			snprintf(why, sizeof(why), "%llu of its %d, under its limit of %s: too small for "
				 "them (give --limit more)", (unsigned long long)d->oom_kills[c],
				 o->shared ? o->cgroups * o->readers : o->readers,
				 pc_human_size(r->limit_set[c], b, sizeof(b)));
			cli_fail_msg(r->cgdir[c], "the OOM killer killed readers in", why);
			rc = -ENOMEM;
		}
	}
	d->oom_elsewhere = 0;
	if (host0 >= 0 && host1 >= 0 && (uint64_t)(host1 - host0) > ours) {
		d->oom_elsewhere = (uint64_t)(host1 - host0) - ours;
		cli_warn("the OOM killer killed %llu processes outside this run's cgroups while it ran "
			 "(/proc/vmstat oom_kill)", (unsigned long long)d->oom_elsewhere);
	}
	return rc;
}

/* Drop the cache, start every reader at once, gather what each read. */
static int one_run(struct rt *r, const struct readtwice_opts *o, char file[][400], struct run_data *d)
{
	static struct pc_cgroup_events ev0[MAX_CG];
	static bool have0[MAX_CG];
	int nreaders = o->cgroups * o->readers, got = 0, ready = 0, rc = 0, lrc;
	int startp[2], outp[2], readyp[2];
	pid_t parent = getpid();
	int64_t host0;

	if (pipe(startp) < 0)
		return -errno;
	if (pipe(outp) < 0) {
		rc = -errno;
		close(startp[0]);
		close(startp[1]);
		return rc;
	}
	if (pipe(readyp) < 0) {
		rc = -errno;
		close(startp[0]);
		close(startp[1]);
		close(outp[0]);
		close(outp[1]);
		return rc;
	}
	memset(d->bytes, 0, sizeof(d->bytes[0]) * (size_t)nreaders);
	memset(d->mbps, 0, sizeof(d->mbps[0]) * (size_t)nreaders);
	memset(d->t0, 0, sizeof(d->t0[0]) * (size_t)nreaders);
	bench_drop_caches();	/* a start from a cold cache; best effort */
	for (int c = 0; c < nmemcg(o); c++)
		have0[c] = pc_cgroup_events_read(r->cgdir[c], r->version, &ev0[c]) == 0;
	host0 = host_oom_kills();
	for (int c = 0; c < o->cgroups; c++)
		for (int k = 0; k < o->readers; k++) {
			pid_t pid = rc < 0 ? -1 : fork();

			if (pid == 0) {
				prctl(PR_SET_PDEATHSIG, SIGKILL);	/* not past a killed bench */
				if (getppid() != parent)
					_exit(7);	/* it died before the prctl */
				bench_state_child(&r->state);
				close(startp[1]);
				close(outp[0]);
				close(readyp[0]);
				reader(c * o->readers + k, r->cgdir[o->shared ? 0 : c], file[c],
				       readyp[1], startp[0], outp[1], o->duration);
			}
			if (pid < 0) {
				if (rc == 0)
					rc = -errno;	/* the rest are not started */
				continue;
			}
			r->pids[r->npids++] = pid;
		}
	close(startp[0]);
	close(outp[1]);
	close(readyp[1]);
	/* every reader in its cgroup with its file open, or gone: EOF */
	while (rc == 0 && !interrupted && ready < nreaders) {
		char buf[256];
		ssize_t n = read(readyp[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		ready += (int)n;
	}
	close(readyp[0]);
	if (rc < 0) {
		cli_fail("bench readtwice", -rc, "cannot start every reader in");
		interrupted = 1;	/* so the started ones are stopped below */
	} else if (!interrupted && ready < nreaders) {
		rc = -EIO;
		cli_fail_msg("bench readtwice", "cannot start", "a reader died before the start");
		interrupted = 1;	/* so the others are stopped below */
	}
	if (interrupted)	/* stopped before they start */
		for (int i = 0; i < r->npids; i++)
			if (r->pids[i] > 0)
				kill(r->pids[i], SIGKILL);
	/*
	 * The start: a pipe wakes its readers one after another as each takes
	 * a byte (a chain that took 1.6 s for 160 readers on 2 CPUs), but all
	 * of them at once when its last writer goes.
	 */
	close(startp[1]);
	{
		FILE *f = fdopen(outp[0], "r");
		unsigned long long b;
		double s, t0;
		int idx;

		/* one line a reader, in finishing order, named by its index */
		while (f && !interrupted && got < nreaders &&
		       fscanf(f, "%d %llu %lf %lf", &idx, &b, &s, &t0) == 4) {
			if (idx < 0 || idx >= nreaders)
				continue;
			d->bytes[idx] = b;
			d->mbps[idx] = s > 0 ? (double)b / s / 1e6 : 0;
			d->t0[idx] = t0;
			got++;
		}
		if (f)
			fclose(f);
		else
			close(outp[0]);
	}
	if (interrupted)	/* do not wait out the readers' deadline */
		for (int i = 0; i < r->npids; i++)
			if (r->pids[i] > 0)
				kill(r->pids[i], SIGKILL);
	for (int i = 0; i < r->npids; i++) {
		int st;

		if (waitpid(r->pids[i], &st, 0) == r->pids[i])
			r->pids[i] = 0;
	}
	r->npids = 0;
	lrc = check_limits(r, o, ev0, have0, host0, d);
	if (rc < 0)
		return rc;
	if (interrupted && lrc == 0) {
		cli_warn("interrupted: cleaning up");
		return -EINTR;
	}
	if (lrc < 0)
		return lrc;
	if (got != nreaders) {
		cli_fail_msg("bench readtwice", "readers failed", "some readers did not report");
		return -EIO;
	}
	{
		double lo = d->t0[0], hi = d->t0[0];

		for (int i = 1; i < nreaders; i++) {
			lo = d->t0[i] < lo ? d->t0[i] : lo;
			hi = d->t0[i] > hi ? d->t0[i] : hi;
		}
		d->start_spread = hi - lo;
	}
	return 0;
}

/* A limit as JSON has it: bytes, or null for none. */
static void orec_limit(struct orec *rec, const char *key, uint64_t v)
{
	if (v == UINT64_MAX || v == 0)
		orec_nolimit(rec, key);
	else
		orec_u64(rec, key, v, OF_BYTES);
}

/* Rows for one run's readers and cgroups; its figures into *ret. */
static int run_report(const struct rt *r, const struct readtwice_opts *o, int run,
		      const struct run_data *d, struct run_figures *ret)
{
	int nreaders = o->cgroups * o->readers;
	double cg_mbps[MAX_CG] = { 0 };
	struct pc_summary sum;

	for (int i = 0; i < nreaders; i++) {
		struct orec rec = { 0 };

		cg_mbps[o->shared ? 0 : i / o->readers] += d->mbps[i];
		orec_u64(&rec, "run", (uint64_t)run + 1, 0);
		orec_u64(&rec, "reader", (uint64_t)i, 0);
		orec_u64(&rec, "file", (uint64_t)(i / o->readers), 0);
		orec_u64(&rec, "cgroup", o->shared ? 0 : (uint64_t)(i / o->readers), 0);
		orec_u64(&rec, "bytes", d->bytes[i], OF_BYTES);
		orec_f64(&rec, "mbps", d->mbps[i]);
		out_list_add("readers", &rec);
	}
	pc_summarize(d->mbps, (size_t)nreaders, &sum);
	ret->limit_hits = ret->oom_kills = 0;
	for (int c = 0; c < nmemcg(o); c++) {	/* shared: all in one */
		struct orec rec = { 0 };

		orec_u64(&rec, "run", (uint64_t)run + 1, 0);
		orec_u64(&rec, "cgroup", (uint64_t)c, 0);
		orec_f64(&rec, "mbps", cg_mbps[c]);
		orec_limit(&rec, "limit_bytes", r->limit_set[c]);
		orec_u64(&rec, "limit_hits", d->limit_hits[c], 0);
		orec_u64(&rec, "oom_kills", d->oom_kills[c], 0);
		out_list_add("cgroups", &rec);
		ret->limit_hits += d->limit_hits[c];
		ret->oom_kills += d->oom_kills[c];
	}
	ret->oom_elsewhere = d->oom_elsewhere;
	ret->spread = d->start_spread;
	ret->agg = sum.mean * (double)nreaders;
	ret->mean = sum.mean;
	ret->sd = sum.stddev;
	ret->median = sum.median;
	return 0;
}

/* The totals: over runs, mean and spread (one run: that run). */
static void summary(const struct rt *r, const struct readtwice_opts *o,
		    const struct run_figures *runs, const char *load0)
{
	double agg[64], mean[64], median[64], sd[64], spread = 0;
	uint64_t hits = 0, ooms = 0, elsewhere = 0;
	uint64_t memcg_limit = o->limit ? o->limit * (o->shared ? (uint64_t)o->cgroups : 1) : 0;
	struct pc_summary sa, sm, ss;
	char load1[64], lim[32], memlim[32];
	int n = o->runs;

	for (int i = 0; i < n; i++) {
		agg[i] = runs[i].agg;
		mean[i] = runs[i].mean;
		median[i] = runs[i].median;
		sd[i] = runs[i].sd;
		spread = runs[i].spread > spread ? runs[i].spread : spread;
		hits += runs[i].limit_hits;
		ooms += runs[i].oom_kills;
		elsewhere += runs[i].oom_elsewhere;
	}
	pc_summarize(agg, (size_t)n, &sa);
	pc_summarize(mean, (size_t)n, &sm);
	pc_summarize(sd, (size_t)n, &ss);
	bench_loadavg(load1, sizeof(load1));
	{
		struct orec rec = { 0 };

		orec_u64(&rec, "cgroups", (uint64_t)o->cgroups, 0);
		orec_u64(&rec, "readers_per_cgroup", (uint64_t)o->readers, 0);
		orec_str(&rec, "layout", o->shared ? "shared" : "per-cgroup", 0);
		orec_u64(&rec, "file_size", o->size, OF_BYTES);
		orec_f64(&rec, "duration_s", o->duration);
		orec_u64(&rec, "runs", (uint64_t)n, 0);
		orec_limit(&rec, "limit_bytes", o->limit);
		orec_limit(&rec, "memcg_limit_bytes", memcg_limit);
		orec_u64(&rec, "cgroup_version", (uint64_t)r->version, 0);
		orec_u64(&rec, "limit_hits", hits, 0);
		orec_u64(&rec, "oom_kills", ooms, 0);
		orec_u64(&rec, "oom_kills_elsewhere", elsewhere, 0);
		orec_f64(&rec, "start_spread_ms", spread * 1e3);
		orec_f64(&rec, "aggregate_mbps", sa.mean);
		orec_f64(&rec, "aggregate_stddev_percent", sa.cov);
		orec_f64(&rec, "mean_mbps_per_reader", sm.mean);
		orec_f64(&rec, "mean_mbps_per_reader_stddev", sm.stddev);
		orec_f64(&rec, "stddev_mbps", ss.mean);
		orec_f64(&rec, "cov_percent", sm.mean > 0 ? 100 * ss.mean / sm.mean : 0);
		orec_str(&rec, "load_average_start", load0, 0);
		orec_str(&rec, "load_average_end", load1, 0);
		out_object("total", &rec);
	}
	{
		struct orec rec = { 0 }, ms = { 0 };

		orec_u64(&rec, "cgroups", (uint64_t)o->cgroups, 0);
		orec_u64(&rec, "readers_per_cgroup", (uint64_t)o->readers, 0);
		orec_str(&rec, "layout", o->shared ? "shared" : "per-cgroup", 0);
		/* identity for compare: rows without a limit match those of before it */
		if (o->limit)
			orec_u64(&rec, "limit_bytes", o->limit, OF_BYTES);
		orec_u64(&rec, "runs", (uint64_t)n, 0);
		bench_metric(&ms, "aggregate_mbps", agg, n, true, "MB/s");
		bench_metric(&ms, "mean_mbps_per_reader", mean, n, true, "MB/s");
		bench_metric(&ms, "median_mbps_per_reader", median, n, true, "MB/s");
		bench_metric(&ms, "reader_stddev_mbps", sd, n, false, "MB/s");
		bench_metrics_done(&rec, &ms);
		out_list_add("results", &rec);
	}
	if (out_format() == OUT_HUMAN) {
		static const struct ocol cols[] = { { "cgroup", "CGROUP", false },
						    { "mbps", "MB/s", false },
						    { "limit_hits", "LIMIT-HITS", false } };

		if (n == 1)
			out_columns("cgroups", cols, o->limit ? 3 : 2);
		out_human_line("readtwice: %d cgroups (%s) x %d readers, %g s each, sparse files of %llu MiB%s",
			       o->cgroups, o->shared ? "all readers in one memcg" : "one memcg each",
			       o->readers, o->duration, (unsigned long long)(o->size >> 20),
			       n > 1 ? "" : ", 1 run");
		if (!o->limit)
			out_human_line("  no memory limit: any reclaim is the host's (cgroup v%d)", r->version);
		else if (o->shared)
			out_human_line("  limit %s per file: %s on the one memcg (%d x %s, cgroup v%d); "
				       "%llu charges hit it, %llu OOM kills",
				       pc_human_size(o->limit, lim, sizeof(lim)),
				       pc_human_size(memcg_limit, memlim, sizeof(memlim)), o->cgroups, lim,
				       r->version, (unsigned long long)hits, (unsigned long long)ooms);
		else
			out_human_line("  limit %s on each memcg (cgroup v%d); %llu charges hit it, "
				       "%llu OOM kills", pc_human_size(o->limit, lim, sizeof(lim)),
				       r->version, (unsigned long long)hits, (unsigned long long)ooms);
		if (n > 1) {
			out_human_line("  over %d runs: aggregate %.0f MB/s (stddev %.1f%%, min %.0f, max %.0f)",
				       n, sa.mean, sa.cov, sa.min, sa.max);
			out_human_line("  per reader mean %.0f +- %.0f MB/s (stderr %.0f); fairness: stddev "
				       "across readers %.0f MB/s", sm.mean, sm.stddev, sm.stderr_, ss.mean);
		} else {
			out_human_line("  aggregate %.0f MB/s; per reader mean %.0f MB/s, stddev %.0f (CoV %.1f%%)",
				       sa.mean, sm.mean, ss.mean, sm.mean > 0 ? 100 * ss.mean / sm.mean : 0);
		}
	}
}

int bench_readtwice(const struct readtwice_opts *o)
{
	static struct rt r;
	static char file[MAX_CG][400];
	static struct run_data data;
	char load0[64];
	int rc = 0, nreaders = o->cgroups * o->readers;
	struct sigaction sa = { .sa_handler = on_int }, old_int, old_term, old_hup, old_pipe;
	struct run_figures *runs;

	/*
	 * mount(2) is CAP_SYS_ADMIN's alone; the loop device, the cgroups and
	 * drop_caches are file permissions, and say so when they fail.
	 */
	if (!pc_have_cap(CAP_SYS_ADMIN)) {
		cli_fail_msg("bench readtwice", "cannot run",
			     "needs CAP_SYS_ADMIN (it mounts a tmpfs and a loop-mounted ext4 image)");
		return EXIT_PARTIAL;
	}
	if (o->cgroups < 1 || o->cgroups > MAX_CG || nreaders > MAX_READERS)
		return cli_usage_error("at most %d cgroups and %d readers", MAX_CG, MAX_READERS);
	runs = calloc((size_t)o->runs, sizeof(*runs));
	if (!runs)
		return EXIT_PARTIAL;
	memset(&r, 0, sizeof(r));
	r.state.fd = -1;
	r.varfd = r.topfd = -1;
	bench_loadavg(load0, sizeof(load0));
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGHUP, &sa, &old_hup);
	sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, &old_pipe);
	bench_state_recover("readtwice", NULL);	/* what a killed run left */
	if (bench_state_open(&r.state, "readtwice") < 0)
		cli_warn("cannot keep a state file in /run/pagecache: a kill -9 would leave "
			 "mounts and cgroups behind");
	/*
	 * The memory cgroups go beneath our own (never beside it: they stay
	 * inside every limit we are under). v2: memory handed on to children
	 * first, as `pagecache run` does, from a leaf we move into if need be.
	 */
	rc = pc_cgroup_nest_init(&r.nest);
	if (rc < 0) {
		char why[800];

		cli_fail_msg(r.nest.parent[0] ? r.nest.parent : "/sys/fs/cgroup",
			     "cannot make memory cgroups beneath",
			     cli_nest_why(rc, &r.nest, why, sizeof(why)));
		goto out;
	}
	r.nested = true;
	r.version = r.nest.version;
	if (r.nest.leaf[0])
		bench_state_put(&r.state, "cgroup", r.nest.leaf);

	/*
	 * A filesystem of our own: an ext4 image on a tmpfs, as vm-scalability,
	 * in a fresh directory in /var/tmp. The tmpfs is root's, mode 0700:
	 * what mkfs and mount are given by path is out of others' reach. Each
	 * mount is noted once it exists: the next run detaches only a mount.
	 */
	{
		char why[400], prefix[64], name[96], fsopts[64], fdpath[64];
		/* sparse_super2: two copies of the group descriptors, not one per 3^n, 5^n, 7^n */
		char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=1", "-O", "sparse_super2",
				 r.img, NULL };
		char *mnt[] = { "mount", "-o", "loop", r.img, r.mnt, NULL };
		uint64_t img = (uint64_t)o->cgroups * o->size + (1ull << 30);
		int tfd = -1, fd = -1;

		r.varfd = bench_workdir_open("/var/tmp", BENCH_WD_SHARED, NULL, 0, why, sizeof(why));
		if (r.varfd < 0) {
			rc = r.varfd;
			cli_fail_msg("/var/tmp", "cannot use the directory", why);
			goto out;
		}
		snprintf(prefix, sizeof(prefix), "%s%d.", READTWICE_TOP_PREFIX + sizeof("/var/tmp"),
			 getpid());
		r.topfd = bench_workdir_fresh(r.varfd, prefix, name, sizeof(name));
		if (r.topfd < 0) {
			rc = r.topfd;
			r.topfd = -1;
			cli_fail("/var/tmp", -rc, "cannot make a directory in");
			goto out;
		}
		snprintf(r.top, sizeof(r.top), "/var/tmp/%s", name);
		snprintf(r.img, sizeof(r.img), "%s/fs.img", r.top);
		snprintf(r.mnt, sizeof(r.mnt), "%s/mnt", r.top);
		bench_state_put(&r.state, "dir", r.top);
		/* on the directory we made, whatever its name now leads to */
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", r.topfd);
		/*
		 * What mkfs writes grows with the image: about 4 KiB per GiB with
		 * sparse_super2 (80 files of 64G: 22 MB), so the tmpfs is 64 MiB
		 * and 32 KiB per GiB more, a cap that only the metadata fills.
		 */
		snprintf(fsopts, sizeof(fsopts), "size=%llum,mode=0700",
			 (unsigned long long)(64 + (img >> 30) / 32));
		if (mount("pc-readtwice", fdpath, "tmpfs", MS_NOSUID | MS_NODEV, fsopts) < 0) {
			rc = -errno;
			cli_fail(r.top, -rc, "cannot mount a tmpfs on");
			goto out;
		}
		r.tmpfs_mounted = true;
		bench_state_put(&r.state, "mount", r.top);
		/* the tmpfs's root: /var/tmp is sticky, so the name is still ours */
		tfd = openat(r.varfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (tfd >= 0)
			fd = bench_file_create(tfd, "fs.img", O_WRONLY, 0600);
		if (tfd < 0 || fd < 0 || ftruncate(fd, (off_t)img) < 0 || mkdirat(tfd, "mnt", 0700) < 0) {
			rc = tfd < 0 ? -errno : fd < 0 ? fd : -errno;
			cli_fail(r.img, -rc, "cannot make the image");
			if (fd >= 0)
				close(fd);
			if (tfd >= 0)
				close(tfd);
			goto out;
		}
		close(fd);
		close(tfd);
		if (bench_run_cmd(mkfs, true) < 0) {
			rc = -EIO;
			cli_fail_msg(r.img, "cannot make a filesystem on", "mkfs.ext4 failed (e2fsprogs?)");
			goto out;
		}
		if (bench_run_cmd(mnt, true) < 0) {
			rc = -EIO;
			cli_fail_msg(r.img, "cannot loop-mount", "mount -o loop failed");
			goto out;
		}
		r.img_mounted = true;
		bench_state_put(&r.state, "mount", r.mnt);
	}
	for (int i = 0; i < o->cgroups && rc == 0; i++) {
		char name[64];
		int fd;

		snprintf(file[i], sizeof(file[i]), "%s/sparse-%d", r.mnt, i);
		fd = open(file[i], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd < 0 || ftruncate(fd, (off_t)o->size) < 0)
			rc = -errno;
		if (fd >= 0)
			close(fd);
		if (o->shared && i > 0)
			continue;
		snprintf(name, sizeof(name), "pc-readtwice-%d-%d", getpid(), i);
		if (rc == 0)
			rc = pc_cgroup_create(r.nest.parent, name, r.cgdir[i], sizeof(r.cgdir[i]));
		if (rc == 0)
			bench_state_put(&r.state, "cgroup", r.cgdir[i]);
		r.ncg = i + 1;
		r.limit_set[i] = UINT64_MAX;
		if (rc == 0 && o->limit) {
			/* shared: one memcg for N files' readers holds N limits */
			uint64_t lim = o->limit * (o->shared ? (uint64_t)o->cgroups : 1);

			rc = pc_cgroup_set_limit(r.cgdir[i], r.version, lim, &r.limit_set[i]);
			if (rc < 0) {
				cli_fail(r.cgdir[i], -rc, "cannot set the memory limit of");
				goto out;
			}
		}
	}
	if (rc < 0) {
		cli_fail(r.mnt, -rc, "cannot set up files and cgroups in");
		goto out;
	}
	for (int run = 0; run < o->runs && rc == 0; run++) {
		rc = one_run(&r, o, file, &data);
		if (rc == 0)
			rc = run_report(&r, o, run, &data, &runs[run]);
		if (rc == 0 && o->runs > 1 && out_format() == OUT_HUMAN && cli_stderr_tty())
			fprintf(stderr, "\rreadtwice: run %d/%d: %.0f MB/s  ", run + 1, o->runs,
				runs[run].agg);
	}
	if (o->runs > 1 && out_format() == OUT_HUMAN && cli_stderr_tty())
		fputs("\r\033[K", stderr);
	if (rc == 0)
		summary(&r, o, runs, load0);
out:
	teardown(&r);
	free(runs);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	{
		bool cg_left = false;

		for (int i = 0; i < r.ncg; i++)
			if (r.cgdir[i][0]) {
				cli_warn("could not remove cgroup '%s'", r.cgdir[i]);
				cg_left = true;
			}
		if (r.tmpfs_mounted || r.img_mounted)
			cli_warn("could not unmount '%s'", r.top);
		if (r.nested)
			cli_warn("could not move back out of '%s'", r.nest.leaf[0] ? r.nest.leaf
				 : r.nest.parent);
		if (cg_left || r.tmpfs_mounted || r.img_mounted || r.nested) {
			/* note only what is left, so the next run undoes no more than that */
			bench_state_reset(&r.state);
			if (r.top[0])
				bench_state_put(&r.state, "dir", r.top);
			if (r.tmpfs_mounted)
				bench_state_put(&r.state, "mount", r.top);
			if (r.img_mounted)
				bench_state_put(&r.state, "mount", r.mnt);
			if (r.nested && r.nest.leaf[0])
				bench_state_put(&r.state, "cgroup", r.nest.leaf);
			for (int i = 0; i < r.ncg; i++)
				if (r.cgdir[i][0])
					bench_state_put(&r.state, "cgroup", r.cgdir[i]);
			cli_warn("the next run retries (%s)", r.state.path);
		}
		else
			bench_state_close(&r.state);
	}
	return rc < 0 ? (rc == -EINTR ? 130 : EXIT_PARTIAL) : 0;
}
