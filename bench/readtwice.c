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
 * spread. Mounts, loop devices, files and cgroups are removed on every
 * path, SIGINT included.
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
	char cgdir[MAX_CG][800];
	int ncg;
	bool tmpfs_mounted, img_mounted;
	pid_t pids[MAX_READERS];
	int npids;
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
	if (r->topfd >= 0)
		close(r->topfd);
	r->topfd = -1;
	if (r->top[0] && !r->tmpfs_mounted && r->varfd >= 0)
		unlinkat(r->varfd, r->top + sizeof("/var/tmp"), AT_REMOVEDIR);
	if (r->varfd >= 0)
		close(r->varfd);
	r->varfd = -1;
}

/* A reader: join, open, wait for the start, read to the deadline. */
static void reader(int idx, const char *cg, const char *file, int startfd, int outfd, double secs)
{
	static char buf[4096];
	uint64_t bytes = 0;
	double t0, t1;
	char go;
	int fd;

	if (pc_cgroup_enter(cg, getpid()) < 0)
		_exit(2);
	fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || read(startfd, &go, 1) != 1)
		_exit(3);
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
	dprintf(outfd, "%d %llu %.6f\n", idx, (unsigned long long)bytes, t1 - t0);
	_exit(0);
}

/* One run's figures, for the statistics over runs. */
struct run_figures {
	double agg, mean, median, sd;
};

/* Drop the cache, start every reader at once, gather what each read. */
static int one_run(struct rt *r, const struct readtwice_opts *o, char file[][400], uint64_t *bytes,
		   double *mbps)
{
	int nreaders = o->cgroups * o->readers, got = 0, rc = 0;
	int startp[2], outp[2];
	pid_t parent = getpid();

	if (pipe(startp) < 0)
		return -errno;
	if (pipe(outp) < 0) {
		close(startp[0]);
		close(startp[1]);
		return -errno;
	}
	memset(bytes, 0, sizeof(*bytes) * (size_t)nreaders);
	memset(mbps, 0, sizeof(*mbps) * (size_t)nreaders);
	bench_drop_caches();	/* a start from a cold cache; best effort */
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
				reader(c * o->readers + k, r->cgdir[o->shared ? 0 : c], file[c],
				       startp[0], outp[1], o->duration);
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
	if (rc < 0) {
		cli_fail("bench readtwice", -rc, "cannot start every reader in");
		interrupted = 1;	/* so the started ones are stopped below */
	} else {
		char go[MAX_READERS];

		memset(go, 'g', sizeof(go));
		if (write(startp[1], go, (size_t)nreaders) != nreaders) {
			rc = -EIO;
			cli_fail_msg("bench readtwice", "cannot start", "a reader died before the start");
			interrupted = 1;	/* so the others are stopped below */
		}
	}
	close(startp[1]);
	{
		FILE *f = fdopen(outp[0], "r");
		unsigned long long b;
		double s;
		int idx;

		/* one line a reader, in finishing order, named by its index */
		while (f && !interrupted && got < nreaders &&
		       fscanf(f, "%d %llu %lf", &idx, &b, &s) == 3) {
			if (idx < 0 || idx >= nreaders)
				continue;
			bytes[idx] = b;
			mbps[idx] = s > 0 ? (double)b / s / 1e6 : 0;
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
	if (rc < 0)
		return rc;
	if (interrupted) {
		cli_warn("interrupted: cleaning up");
		return -EINTR;
	}
	if (rc == 0 && got != nreaders) {
		cli_fail_msg("bench readtwice", "readers failed", "some readers did not report");
		rc = -EIO;
	}
	return rc;
}

/* Rows for one run's readers and cgroups; its figures into *ret. */
static int run_report(const struct readtwice_opts *o, int run, const uint64_t *bytes,
		      const double *mbps, struct run_figures *ret)
{
	int nreaders = o->cgroups * o->readers;
	double cg_mbps[MAX_CG] = { 0 };
	struct pc_summary sum;

	for (int i = 0; i < nreaders; i++) {
		struct orec rec = { 0 };

		cg_mbps[o->shared ? 0 : i / o->readers] += mbps[i];
		orec_u64(&rec, "run", (uint64_t)run + 1, 0);
		orec_u64(&rec, "reader", (uint64_t)i, 0);
		orec_u64(&rec, "file", (uint64_t)(i / o->readers), 0);
		orec_u64(&rec, "cgroup", o->shared ? 0 : (uint64_t)(i / o->readers), 0);
		orec_u64(&rec, "bytes", bytes[i], OF_BYTES);
		orec_f64(&rec, "mbps", mbps[i]);
		out_list_add("readers", &rec);
	}
	pc_summarize(mbps, (size_t)nreaders, &sum);
	for (int c = 0; c < (o->shared ? 1 : o->cgroups); c++) {	/* shared: all in one */
		struct orec rec = { 0 };

		orec_u64(&rec, "run", (uint64_t)run + 1, 0);
		orec_u64(&rec, "cgroup", (uint64_t)c, 0);
		orec_f64(&rec, "mbps", cg_mbps[c]);
		out_list_add("cgroups", &rec);
	}
	ret->agg = sum.mean * (double)nreaders;
	ret->mean = sum.mean;
	ret->sd = sum.stddev;
	ret->median = sum.median;
	return 0;
}

/* The totals: over runs, mean and spread (one run: that run). */
static void summary(const struct readtwice_opts *o, const struct run_figures *runs)
{
	double agg[64], mean[64], median[64], sd[64];
	struct pc_summary sa, sm, ss;
	int n = o->runs;

	for (int i = 0; i < n; i++) {
		agg[i] = runs[i].agg;
		mean[i] = runs[i].mean;
		median[i] = runs[i].median;
		sd[i] = runs[i].sd;
	}
	pc_summarize(agg, (size_t)n, &sa);
	pc_summarize(mean, (size_t)n, &sm);
	pc_summarize(sd, (size_t)n, &ss);
	{
		struct orec rec = { 0 };

		orec_u64(&rec, "cgroups", (uint64_t)o->cgroups, 0);
		orec_u64(&rec, "readers_per_cgroup", (uint64_t)o->readers, 0);
		orec_str(&rec, "layout", o->shared ? "shared" : "per-cgroup", 0);
		orec_u64(&rec, "file_size", o->size, OF_BYTES);
		orec_f64(&rec, "duration_s", o->duration);
		orec_u64(&rec, "runs", (uint64_t)n, 0);
		orec_f64(&rec, "aggregate_mbps", sa.mean);
		orec_f64(&rec, "aggregate_stddev_percent", sa.cov);
		orec_f64(&rec, "mean_mbps_per_reader", sm.mean);
		orec_f64(&rec, "mean_mbps_per_reader_stddev", sm.stddev);
		orec_f64(&rec, "stddev_mbps", ss.mean);
		orec_f64(&rec, "cov_percent", sm.mean > 0 ? 100 * ss.mean / sm.mean : 0);
		out_object("total", &rec);
	}
	{
		struct orec rec = { 0 };
		char *js = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&js, &len);

		orec_u64(&rec, "cgroups", (uint64_t)o->cgroups, 0);
		orec_u64(&rec, "readers_per_cgroup", (uint64_t)o->readers, 0);
		orec_str(&rec, "layout", o->shared ? "shared" : "per-cgroup", 0);
		orec_u64(&rec, "runs", (uint64_t)n, 0);
		if (f) {
			fputc('{', f);
			bench_metric_json(f, true, "aggregate_mbps", agg, n, true, "MB/s");
			bench_metric_json(f, false, "mean_mbps_per_reader", mean, n, true, "MB/s");
			bench_metric_json(f, false, "median_mbps_per_reader", median, n, true, "MB/s");
			bench_metric_json(f, false, "reader_stddev_mbps", sd, n, false, "MB/s");
			fputc('}', f);
			fclose(f);
		}
		bench_orec_json(&rec, "metrics", js ? js : "{}");
		free(js);
		out_list_add("results", &rec);
	}
	if (out_format() == OUT_HUMAN) {
		static const struct ocol cols[] = { { "cgroup", "CGROUP", false },
						    { "mbps", "MB/s", false } };

		if (n == 1)
			out_columns("cgroups", cols, 2);
		out_human_line("readtwice: %d cgroups (%s) x %d readers, %.0f s each, sparse files of %llu MiB%s",
			       o->cgroups, o->shared ? "all readers in one memcg" : "one memcg each",
			       o->readers, o->duration, (unsigned long long)(o->size >> 20),
			       n > 1 ? "" : ", 1 run");
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
	static double mbps[MAX_READERS];
	static uint64_t bytes[MAX_READERS];
	char parent[700];
	int version, rc = 0, nreaders = o->cgroups * o->readers;
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
	if (pc_cgroup_child_parent(parent, sizeof(parent), &version) < 0) {
		cli_fail_msg("/sys/fs/cgroup", "cannot run",
			     "no memory cgroup controller to make child cgroups with");
		free(runs);
		return EXIT_PARTIAL;
	}
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
	 * A filesystem of our own: an ext4 image on a tmpfs, as vm-scalability,
	 * in a fresh directory in /var/tmp. The tmpfs is root's, mode 0700:
	 * what mkfs and mount are given by path is out of others' reach. Each
	 * mount is noted once it exists: the next run detaches only a mount.
	 */
	{
		char why[400], prefix[64], name[96], fsopts[64], fdpath[64];
		char *mkfs[] = { "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=1", r.img, NULL };
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
		snprintf(fsopts, sizeof(fsopts), "size=64m,mode=0700");
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
			rc = pc_cgroup_create(parent, name, r.cgdir[i], sizeof(r.cgdir[i]));
		if (rc == 0)
			bench_state_put(&r.state, "cgroup", r.cgdir[i]);
		r.ncg = i + 1;
	}
	if (rc < 0) {
		cli_fail(r.mnt, -rc, "cannot set up files and cgroups in");
		goto out;
	}
	for (int run = 0; run < o->runs && rc == 0; run++) {
		rc = one_run(&r, o, file, bytes, mbps);
		if (rc == 0)
			rc = run_report(o, run, bytes, mbps, &runs[run]);
		if (rc == 0 && o->runs > 1 && out_format() == OUT_HUMAN && cli_stderr_tty())
			fprintf(stderr, "\rreadtwice: run %d/%d: %.0f MB/s  ", run + 1, o->runs,
				runs[run].agg);
	}
	if (o->runs > 1 && out_format() == OUT_HUMAN && cli_stderr_tty())
		fputs("\r\033[K", stderr);
	if (rc == 0)
		summary(o, runs);
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
		if (cg_left || r.tmpfs_mounted || r.img_mounted) {
			/* note only what is left, so the next run undoes no more than that */
			bench_state_reset(&r.state);
			if (r.top[0])
				bench_state_put(&r.state, "dir", r.top);
			if (r.tmpfs_mounted)
				bench_state_put(&r.state, "mount", r.top);
			if (r.img_mounted)
				bench_state_put(&r.state, "mount", r.mnt);
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
