/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * swapin.c: `pagecache bench swapin`, the swap-in readahead experiment of
 * the 2012 linux-mm threads (Konstantin Khlebnikov's page-cluster table,
 * Hugh Dickins' and Shaohua Li's sequential and random touchers) and of
 * Huang Ying's VMA readahead (2017), as one reproducible command.
 *
 * Swap goes where readahead really happens on 6.x kernels. zram is a
 * synchronous device, and do_swap_page() skips the swap cache and all
 * readahead for private pages there, so by default a private zram device
 * is put behind a loop device (direct I/O, 4 KiB blocks): not synchronous,
 * not rotational (a rotational swap would turn VMA readahead off for the
 * whole system). The workload runs in a memory cgroup smaller than its
 * working set, so the cgroup's reclaim swaps it; it is filled first, then
 * the timed phase touches (writes one word of) pages in its pattern.
 * Settings run interleaved in a shuffled order each round. Reported per
 * setting: real, user and sys time of the timed phase and the deltas of
 * pgmajfault, pgpgin, pgpgout (KiB), pswpin, pswpout, swap_ra and
 * swap_ra_hit, as mean and standard error over the runs.
 *
 * Every knob changed (vm.page-cluster, vma_ra_enabled, zswap, the loop
 * device's rotational flag) is put back and the swap, loop and zram
 * devices and the cgroup are removed on every path, SIGINT and SIGTERM
 * included.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "bench.h"
#include "stats.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/loop.h>
#include <sys/mount.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/swap.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *const wl_names[WL_COUNT] = { "seq", "random", "mt-random", "mixed" };

/* The metrics, in the seed's row order; the vmstat ones are deltas. */
enum { M_REAL, M_USER, M_SYS, M_MAJFLT, M_PGPGIN, M_PGPGOUT, M_PSWPIN, M_PSWPOUT, M_RA,
       M_RA_HIT, M_HIT_PCT, M_AUTO_PC, M_CONVERGE, M_DEVREADS, M_COUNT };
static const char *const m_names[M_COUNT] = {
	"real", "user", "sys", "pgmajfault", "pgpgin", "pgpgout", "pswpin", "pswpout",
	"swap_ra", "swap_ra_hit", "ra_hit_percent", "auto_page_cluster", "auto_converge_intervals",
	"device_reads",
};
static const char *const m_units[M_COUNT] = {
	"s", "s", "s", "faults", "KiB", "KiB", "pages", "pages", "pages", "faults", "%", "",
	"intervals", "reads",
};
/* the vmstat counters read; the first seven map to M_MAJFLT.. M_RA_HIT */
static const char *const vm_names[] = { "pgmajfault", "pgpgin", "pgpgout", "pswpin", "pswpout",
					"swap_ra", "swap_ra_hit", "zswpout", "thp_swpout" };
#define NVM (sizeof(vm_names) / sizeof(vm_names[0]))

#define PC_AUTO (-1)
#define OOM_RETRIES 3			/* a run the OOM killer stopped is made again */
#define MAX_CONFIGS (WL_COUNT * 9 * 2)
#define MAX_RUNS 64

struct config {
	int workload, pc, vma;		/* pc PC_AUTO: the tuner */
	double v[M_COUNT][MAX_RUNS];
	int n;
};

/* Everything set up, so a signal or an error can undo it. */
static struct {
	struct bench_knob page_cluster, vma_ra, zswap, rotational;
	int zram_id;			/* -1: none made */
	bool zram_reset0;		/* we used zram0 as found unused */
	char zram_alg[32];		/* and its compressor then */
	char zram_dev[64];
	int loop_fd;			/* -1: none */
	char loop_dev[64];
	char swap_dev[64];		/* swapped on, or "" */
	int dirfd;			/* SWDEV_FILE: --dir, checked; -1: none */
	char dirpath[PATH_MAX];		/* its path, without symbolic links */
	int imgdirfd;			/* our fresh directory in it, for the image; -1 */
	char imgdir[PATH_MAX + 100];	/* its path, or "" when removed */
	char image[PATH_MAX + 120];	/* imgdir/swap.img, or "" when removed */
	char cgdir[800];
	struct pc_cgroup_nest nest;	/* where cgdir goes (v2: memory handed on) */
	bool nested;			/* nest made, not yet released */
	char why[PATH_MAX + 400];	/* what failed in setting up swap, if said */
	/* SWDEV_SLOW: the FUSE daemon (slowdev.c), its mount point imgdir/mnt */
	pid_t fuse_pid;			/* 0: none running */
	bool mnt_made, fuse_mounted;
	char mnt[PATH_MAX + 110];
	struct slowdev_stats *dev;	/* its counters, shared; NULL: none */
	pid_t child;
	struct bench_state state;	/* for the next run, should we be killed */
} S = { .zram_id = -1, .loop_fd = -1, .dirfd = -1, .imgdirfd = -1, .state = { .fd = -1 } };

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

/*
 * The slow device, once the loop device lets go of its file: unmounted
 * (detached: the daemon's session ends when the last reference goes), the
 * daemon waited for (killed if it lingers: it can serve nothing now), the
 * mount point removed.
 */
static void slow_teardown(void)
{
	if ((!S.mnt_made && S.fuse_pid <= 0) || S.loop_fd >= 0 || S.swap_dev[0])
		return;		/* nothing of it, or still swapped to: left to the next run */
	/* EINVAL: not mounted (yet: a daemon interrupted while mounting is killed below) */
	if (S.mnt_made &&
	    (umount2(S.mnt, MNT_DETACH | UMOUNT_NOFOLLOW) == 0 || errno == EINVAL || errno == ENOENT))
		S.fuse_mounted = false;
	if (S.fuse_pid > 0 && !S.fuse_mounted) {
		pid_t got = 0;

		for (int i = 0; i < 500 && (got = waitpid(S.fuse_pid, NULL, WNOHANG)) == 0; i++)
			usleep(10000);
		if (got != S.fuse_pid) {
			kill(S.fuse_pid, SIGKILL);
			bench_wait(S.fuse_pid, NULL);
		}
		S.fuse_pid = 0;
	}
	if (S.mnt_made && !S.fuse_mounted && S.fuse_pid == 0) {
		int rc = unlinkat(S.imgdirfd, "mnt", AT_REMOVEDIR) == 0 ? 0 : -errno;

		/* EBUSY: the killed daemon had mounted after all */
		if (rc == -EBUSY && umount2(S.mnt, MNT_DETACH | UMOUNT_NOFOLLOW) == 0)
			rc = unlinkat(S.imgdirfd, "mnt", AT_REMOVEDIR) == 0 ? 0 : -errno;
		if (rc == 0 || rc == -ENOENT)
			S.mnt_made = false;
	}
}

static void teardown(void)
{
	if (S.child > 0) {
		kill(S.child, SIGKILL);
		bench_wait(S.child, NULL);
		S.child = 0;
	}
	bench_knob_restore(&S.page_cluster);
	bench_knob_restore(&S.vma_ra);
	if (S.swap_dev[0] && swapoff(S.swap_dev) == 0)
		S.swap_dev[0] = 0;
	bench_knob_restore(&S.zswap);
	bench_knob_restore(&S.rotational);
	if (S.loop_fd >= 0 && !S.swap_dev[0] && ioctl(S.loop_fd, LOOP_CLR_FD, 0) == 0) {
		close(S.loop_fd);
		S.loop_fd = -1;
	}
	if ((S.zram_id >= 0 || S.zram_reset0) && !S.swap_dev[0] && S.loop_fd < 0) {
		char p[96], id[16];
		int id_ = S.zram_id >= 0 ? S.zram_id : 0, rc;

		snprintf(p, sizeof(p), "/sys/block/zram%d/reset", id_);
		/* the loop device lets go of zram asynchronously: retry a moment */
		for (int i = 0; i < 50 && (rc = pc_write_text(p, "1")) == -EBUSY; i++)
			usleep(20000);
		if (S.zram_id >= 0) {
			snprintf(id, sizeof(id), "%d", S.zram_id);
			if (pc_write_text("/sys/class/zram-control/hot_remove", id) == 0)
				S.zram_id = -1;
		} else if (rc == 0) {
			/* a borrowed zram0: its compressor as found, too */
			if (S.zram_alg[0]) {
				snprintf(p, sizeof(p), "/sys/block/zram0/comp_algorithm");
				pc_write_text(p, S.zram_alg);
			}
			S.zram_reset0 = false;
		}
	}
	if (S.image[0] && S.loop_fd < 0 && unlinkat(S.imgdirfd, "swap.img", 0) == 0)
		S.image[0] = 0;
	slow_teardown();
	if (S.imgdir[0] && !S.image[0] && !S.mnt_made) {
		const char *name = strrchr(S.imgdir, '/') + 1;

		if (unlinkat(S.dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) {
			S.imgdir[0] = 0;
			close(S.imgdirfd);
			S.imgdirfd = -1;
		}
	}
	if (S.cgdir[0] && rmdir(S.cgdir) == 0)
		S.cgdir[0] = 0;
	/* v2: back out of our leaf, memory off again, once the child is gone */
	if (S.nested && !S.cgdir[0] && pc_cgroup_nest_release(&S.nest) == 0)
		S.nested = false;
}

/*
 * What teardown could not undo, noted again (alone) in the state file for
 * the next run; true if anything is left.
 */
static bool leftovers(void)
{
	struct bench_knob *knobs[] = { &S.page_cluster, &S.vma_ra, &S.zswap, &S.rotational };
	bool left = false;

	bench_state_reset(&S.state);
	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (knobs[i]->changed) {
			char line[400];

			snprintf(line, sizeof(line), "%s %s", knobs[i]->path, knobs[i]->orig);
			bench_state_put(&S.state, "knob", line);
			left = true;
		}
	if (S.zram_id >= 0 || S.zram_reset0) {
		char id[48];

		snprintf(id, sizeof(id), "%d", S.zram_id >= 0 ? S.zram_id : 0);
		if (S.zram_id < 0)	/* borrowed: "0 ALGORITHM" */
			snprintf(id, sizeof(id), "0 %s", S.zram_alg);
		bench_state_put(&S.state, S.zram_id >= 0 ? "zram" : "zram-borrowed", id);
		left = true;
	}
	if (S.imgdir[0]) {
		bench_state_put(&S.state, "dir", S.imgdir);
		left = true;
	}
	if (S.image[0]) {
		bench_state_put(&S.state, "file", S.image);
		left = true;
	}
	if (S.mnt_made) {	/* unmounted and removed, which ends the daemon */
		bench_state_put(&S.state, "fuse", S.mnt);
		left = true;
	}
	if (S.loop_fd >= 0) {
		bench_state_put(&S.state, "loop", S.loop_dev);
		left = true;
	}
	if (S.swap_dev[0]) {
		bench_state_put(&S.state, "swap", S.swap_dev);
		left = true;
	}
	if (S.cgdir[0]) {
		bench_state_put(&S.state, "cgroup", S.cgdir);
		left = true;
	}
	return left;
}

/* ---- the workloads (in the forked child) ---- */

static inline uint64_t xorshift64s(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1DULL;
}

struct toucher {
	volatile uint64_t *base;	/* word 0 of page 0 of the region */
	uint64_t pages, touches, seed;
	bool seq;
	volatile int *stop;		/* mixed: random runs until the seq part ends */
	double secs;
};

static void *touch_run(void *arg)
{
	struct toucher *t = arg;
	const uint64_t wpp = pc_page_size() / sizeof(uint64_t);	/* words a page */
	double t0 = pc_now();
	uint64_t s = t->seed | 1;

	for (uint64_t i = 0; i < t->touches; i++) {
		uint64_t p = t->seq ? i % t->pages : xorshift64s(&s) % t->pages;

		t->base[p * wpp + (i & (wpp - 1))] += 1;
		if (t->stop && (i & 1023) == 0 && *t->stop)
			break;
	}
	t->secs = pc_now() - t0;
	return NULL;
}

struct child_result {
	double real, user, sys;
	int err;
};

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void child_main(const struct swapin_opts *o, int workload, int readyfd, int gofd, int resfd)
{
	const uint64_t pages = o->wss / pc_page_size(), wpp = pc_page_size() / sizeof(uint64_t);
	struct child_result res = { 0 };
	struct rusage r0, r1;
	uint64_t *mem;
	char go;

	if (pc_cgroup_enter(S.cgdir, getpid()) < 0)
		_exit(2);
	mem = mmap(NULL, o->wss, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		_exit(3);
	madvise(mem, o->wss, MADV_NOHUGEPAGE);	/* 4 KiB pages swap one by one */
	/* unique, compressible-but-not-zero content: zero pages never reach swap */
	for (uint64_t p = 0; p < pages; p++)
		for (uint64_t i = 0; i < wpp; i++)
			mem[p * wpp + i] = ((p << 9) | i) ^ 0x5eed5eed5eedULL;
	if (write(readyfd, "r", 1) != 1 || read(gofd, &go, 1) != 1)
		_exit(4);
	getrusage(RUSAGE_SELF, &r0);
	{
		uint64_t touches = (uint64_t)o->passes * pages;
		double t0 = pc_now();

		if (workload == WL_SEQ || workload == WL_RANDOM) {
			struct toucher t = { mem, pages, touches, 42, workload == WL_SEQ, NULL, 0 };

			touch_run(&t);
		} else if (workload == WL_MT_RANDOM) {
			struct toucher t[16];
			pthread_t th[16];
			int n = o->threads;

			for (int i = 0; i < n; i++) {
				/* distinct streams: seed | 1 must differ per thread */
				t[i] = (struct toucher){ mem, pages, touches / (uint64_t)n,
							 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1),
							 false, NULL, 0 };
				if (pthread_create(&th[i], NULL, touch_run, &t[i]))
					_exit(5);
			}
			for (int i = 0; i < n; i++)
				pthread_join(th[i], NULL);
		} else {
			/* mixed (Huang): seq over 2/3 for the passes, random over 1/3 meanwhile */
			volatile int stop = 0;
			uint64_t seqp = pages * 2 / 3;
			struct toucher a = { mem, seqp, (uint64_t)o->passes * seqp, 7, true, NULL, 0 };
			struct toucher b = { (volatile uint64_t *)mem + seqp * wpp, pages - seqp,
					     UINT64_MAX, 99, false, &stop, 0 };
			pthread_t th;

			if (pthread_create(&th, NULL, touch_run, &b))
				_exit(5);
			touch_run(&a);
			stop = 1;
			pthread_join(th, NULL);
		}
		res.real = pc_now() - t0;
	}
	getrusage(RUSAGE_SELF, &r1);
	res.user = tv_s(r1.ru_utime) - tv_s(r0.ru_utime);
	res.sys = tv_s(r1.ru_stime) - tv_s(r0.ru_stime);
	if (write(resfd, &res, sizeof(res)) != sizeof(res))
		_exit(6);
	_exit(0);
}

/* ---- the tuner, as a column ---- */

/* Where every auto run starts: readahead off, so the tuner must show it pays. */
#define AUTO_START_PC 0

struct auto_run {
	pthread_t th;
	double interval;
	volatile int stop;
	double pc_time, time;		/* time-weighted page-cluster */
	int steps;
	uint64_t settled_at;		/* the interval of its last move that stayed */
};

static int set_page_cluster(int pc)
{
	char v[16];

	snprintf(v, sizeof(v), "%d", pc);
	return bench_knob_set(&S.page_cluster, v);
}

static void *auto_thread(void *arg)
{
	static const char *const names[] = { "swap_ra", "swap_ra_hit", "pswpin" };
	struct auto_run *a = arg;
	struct pc_swap_tuner t;
	uint64_t prev[3], cur[3];
	double last = pc_now();

	pc_swap_tuner_init(&t, AUTO_START_PC);	/* run_one has set it */
	if (pc_vmstat_read(names, prev, 3) < 3)
		return NULL;
	while (!a->stop) {
		struct timespec ts = { (time_t)a->interval,
				       (long)((a->interval - (double)(time_t)a->interval) * 1e9) };
		int before = t.pc, pc;
		double now;

		nanosleep(&ts, NULL);
		if (pc_vmstat_read(names, cur, 3) < 3)
			break;
		now = pc_now();
		a->pc_time += before * (now - last);
		a->time += now - last;
		last = now;
		pc = pc_swap_tuner_step(&t, cur[0] - prev[0], cur[1] - prev[1], cur[2] - prev[2]);
		memcpy(prev, cur, sizeof(prev));
		if (pc != before) {
			set_page_cluster(pc);
			a->steps++;
		}
		a->settled_at = t.settled_at;
	}
	return NULL;
}

/* ---- setup ---- */

/* A loop device over bfd (open O_RDWR | O_DIRECT), which stays the caller's to close. */
static int loop_attach(int bfd, bool set_rotational0)
{
	struct loop_config cfg = { 0 };
	char rot[96];
	int ctl, n, rc;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	n = ioctl(ctl, LOOP_CTL_GET_FREE);
	close(ctl);
	if (n < 0)
		return -errno;
	snprintf(S.loop_dev, sizeof(S.loop_dev), "/dev/loop%d", n);
	S.loop_fd = open(S.loop_dev, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (S.loop_fd < 0)
		return -errno;
	cfg.fd = (unsigned)bfd;
	cfg.block_size = 4096;
	cfg.info.lo_flags = LO_FLAGS_DIRECT_IO;
	rc = ioctl(S.loop_fd, LOOP_CONFIGURE, &cfg) < 0 ? -errno : 0;
	if (rc < 0) {
		close(S.loop_fd);
		S.loop_fd = -1;
		return rc;
	}
	bench_state_put(&S.state, "loop", S.loop_dev);
	snprintf(rot, sizeof(rot), "/sys/block/loop%d/queue/rotational", n);
	S.rotational.path = strdup(rot);
	if (set_rotational0)
		bench_knob_set(&S.rotational, "0");
	return 0;
}

static int zram_make(uint64_t disksize)
{
	char buf[128], p[128], alg[256];
	int rc;

	if (pc_read_text("/sys/class/zram-control/hot_add", buf, sizeof(buf)) == 0) {
		S.zram_id = atoi(buf);
		bench_state_put(&S.state, "zram", buf);
	} else if (pc_read_text("/sys/block/zram0/disksize", buf, sizeof(buf)) == 0 &&
		   !strcmp(buf, "0")) {
		char alg[256], *l, *r;

		S.zram_reset0 = true;	/* zram0 exists, unused: borrow it */
		if (pc_read_text("/sys/block/zram0/comp_algorithm", alg, sizeof(alg)) == 0 &&
		    (l = strchr(alg, '[')) && (r = strchr(l, ']')) && r - l - 1 < 32)
			snprintf(S.zram_alg, sizeof(S.zram_alg), "%.*s", (int)(r - l - 1), l + 1);
		snprintf(buf, sizeof(buf), "0 %s", S.zram_alg);
		bench_state_put(&S.state, "zram-borrowed", buf);
	} else {
		return -ENODEV;
	}
	snprintf(S.zram_dev, sizeof(S.zram_dev), "/dev/zram%d", S.zram_id >= 0 ? S.zram_id : 0);
	snprintf(p, sizeof(p), "/sys/block/zram%d/comp_algorithm", S.zram_id >= 0 ? S.zram_id : 0);
	if (pc_read_text(p, alg, sizeof(alg)) == 0 && strstr(alg, "lz4"))
		pc_write_text(p, "lz4");
	snprintf(p, sizeof(p), "/sys/block/zram%d/disksize", S.zram_id >= 0 ? S.zram_id : 0);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)disksize);
	rc = pc_write_text(p, buf);
	for (int i = 0; rc == 0 && i < 100 && access(S.zram_dev, F_OK) < 0; i++)
		usleep(10000);	/* devtmpfs makes the node */
	return rc;
}

/* Is any swap other than ours rotational (which turns VMA readahead off)? */
static bool other_rotational_swap(char *which, size_t len)
{
	FILE *f = fopen("/proc/swaps", "r");
	char line[512], name[400];
	bool rot = false;

	if (!f)
		return false;
	while (!rot && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%399s", name) != 1 || !strcmp(name, "Filename") ||
		    !strcmp(name, S.swap_dev))
			continue;
		if (bench_rotational(name) == 1) {
			rot = true;
			snprintf(which, len, "%s", name);
		}
	}
	fclose(f);
	return rot;
}

/* Does the loop device really do direct I/O (the kernel may refuse it quietly)? */
static bool loop_dio_on(void)
{
	char p[96], v[8];

	snprintf(p, sizeof(p), "/sys/block/%.58s/loop/dio", S.loop_dev + 5);
	return pc_read_text(p, v, sizeof(v)) == 0 && v[0] == '1';
}

/*
 * The slow device: the daemon forked (before the cgroup exists, so outside
 * it), mounted at imgdir/mnt; its file opened for the loop device. An fd,
 * or -errno with why in S.why.
 */
static int slow_make(const struct swapin_opts *o, uint64_t size)
{
	int readyp[2], fd;
	char msg[300], path[PATH_MAX + 130];
	ssize_t got;

	if (mkdirat(S.imgdirfd, "mnt", 0700) < 0)
		return -errno;
	S.mnt_made = true;
	snprintf(S.mnt, sizeof(S.mnt), "%s/mnt", S.imgdir);
	bench_state_put(&S.state, "fuse", S.mnt);
	S.dev = mmap(NULL, sizeof(*S.dev), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (S.dev == MAP_FAILED) {
		S.dev = NULL;
		return -errno;
	}
	if (pipe2(readyp, O_CLOEXEC) < 0)
		return -errno;
	S.fuse_pid = fork();
	if (S.fuse_pid == 0) {
		bench_state_child(&S.state);
		close(readyp[0]);
		slowdev_serve(S.mnt, size, o->latency_ns, o->bandwidth, S.dev, readyp[1]);
	}
	close(readyp[1]);
	if (S.fuse_pid < 0) {
		S.fuse_pid = 0;
		close(readyp[0]);
		return -errno;
	}
	do {
		got = read(readyp[0], msg, sizeof(msg) - 1);
	} while (got < 0 && errno == EINTR && !interrupted);
	close(readyp[0]);
	if (got != 1 || msg[0] != 'r') {
		if (got > 1 && msg[0] == 'E') {
			msg[got] = 0;
			snprintf(S.why, sizeof(S.why), "its daemon %s", msg + 1);
		} else {
			snprintf(S.why, sizeof(S.why), "its daemon ended before it mounted");
		}
		return interrupted ? -EINTR : -EIO;
	}
	S.fuse_mounted = true;
	snprintf(path, sizeof(path), "%s/" SLOWDEV_FILE, S.mnt);
	fd = open(path, O_RDWR | O_DIRECT | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		snprintf(S.why, sizeof(S.why), "cannot open '%s': %s", path, strerror(errno));
		return -EIO;
	}
	return fd;
}

static int swap_make(const struct swapin_opts *o)
{
	uint64_t size = o->wss + o->wss / 2 + (64ull << 20);
	int rc;

	if (o->device == SWDEV_FILE || o->device == SWDEV_SLOW) {
		char prefix[64], name[96];
		int fd;

		/* a fresh directory of ours in --dir: nobody can plant a name in it */
		snprintf(prefix, sizeof(prefix), SWAP_DIR_PREFIX "%d.", getpid());
		S.imgdirfd = bench_workdir_fresh(S.dirfd, prefix, name, sizeof(name));
		if (S.imgdirfd < 0) {
			rc = S.imgdirfd;
			S.imgdirfd = -1;
			return rc;
		}
		snprintf(S.imgdir, sizeof(S.imgdir), "%s/%s", S.dirpath, name);
		bench_state_put(&S.state, "dir", S.imgdir);
		if (o->device == SWDEV_SLOW) {
			/* the image is the daemon's, in its mount at imgdir/mnt */
			fd = slow_make(o, size);
		} else {
			fd = bench_file_create(S.imgdirfd, "swap.img", O_RDWR, 0600);
			if (fd >= 0) {
				snprintf(S.image, sizeof(S.image), "%s/swap.img", S.imgdir);
				bench_state_put(&S.state, "file", S.image);
				if (fallocate(fd, 0, 0, (off_t)size) < 0 ||
				    fcntl(fd, F_SETFL, O_DIRECT) < 0) {
					rc = -errno;
					close(fd);
					fd = rc;
				}
			}
		}
		if (fd < 0)
			return fd;
		rc = loop_attach(fd, true);
		close(fd);
		if (rc == 0 && o->device == SWDEV_SLOW && !loop_dio_on()) {
			snprintf(S.why, sizeof(S.why), "the loop device does not do direct I/O over "
				 "the FUSE file (%.58s/loop/dio is 0)", S.loop_dev + 5);
			rc = -EOPNOTSUPP;
		}
		if (rc == 0)
			snprintf(S.swap_dev, sizeof(S.swap_dev), "%s", S.loop_dev);
	} else {
		rc = zram_make(size);
		if (rc == 0 && o->device == SWDEV_ZRAM_LOOP) {
			int fd = open(S.zram_dev, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_DIRECT);

			rc = fd < 0 ? -errno : loop_attach(fd, true);
			if (fd >= 0)
				close(fd);
		}
		if (rc == 0)
			snprintf(S.swap_dev, sizeof(S.swap_dev), "%s",
				 o->device == SWDEV_ZRAM ? S.zram_dev : S.loop_dev);
	}
	if (rc < 0) {
		S.swap_dev[0] = 0;
		return rc;
	}
	{
		/* the label tells the next run's recovery that this swap is ours */
		char *mk[] = { "mkswap", "-L", "pc-swapin", S.swap_dev, NULL };

		if (bench_run_cmd(mk, true) < 0) {
			S.swap_dev[0] = 0;
			return -EIO;
		}
	}
	if (swapon(S.swap_dev, SWAP_FLAG_PREFER | (32767 & SWAP_FLAG_PRIO_MASK)) < 0) {
		rc = -errno;
		S.swap_dev[0] = 0;
		return rc;
	}
	bench_state_put(&S.state, "swap", S.swap_dev);
	return 0;
}

/* An empty swap before each run, with the same slot layout (the recipe). */
static int swap_cycle(void)
{
	if (swapoff(S.swap_dev) < 0)
		return -errno;
	if (swapon(S.swap_dev, SWAP_FLAG_PREFER | (32767 & SWAP_FLAG_PRIO_MASK)) < 0) {
		int rc = -errno;

		S.swap_dev[0] = 0;
		return rc;
	}
	return 0;
}

/* ---- one run ---- */

static int wait_byte(int fd, void *buf, size_t len)
{
	ssize_t got;

	do {
		got = read(fd, buf, len);
	} while (got < 0 && errno == EINTR && !interrupted);
	if (interrupted)
		return -EINTR;
	return got == (ssize_t)len ? 0 : -EIO;
}

/* The seven counters the table needs, all there? */
static bool vm_complete(const uint64_t *v)
{
	for (int k = 0; k < 7; k++)
		if (v[k] == PC_VMSTAT_MISSING)
			return false;
	return true;
}

static int run_one(const struct swapin_opts *o, struct config *c, bool *warned)
{
	int readyp[2] = { -1, -1 }, gop[2] = { -1, -1 }, resp[2] = { -1, -1 }, st, rc = 0;
	uint64_t v0[NVM], v1[NVM], dev0 = 0, dev1 = 0;
	struct child_result res;
	struct auto_run a = { .interval = o->auto_interval };
	bool auto_on = false, killed = false;
	char r;

	if (bench_knob_set(&S.vma_ra, c->vma ? "true" : "false") < 0)
		return -EIO;
	/* the tuner starts every run from the same setting, whatever the last run left */
	if (set_page_cluster(c->pc == PC_AUTO ? AUTO_START_PC : c->pc) < 0)
		return -EIO;
	rc = swap_cycle();
	if (rc < 0)
		return rc;
	if (pipe2(readyp, O_CLOEXEC) < 0 || pipe2(gop, O_CLOEXEC) < 0 ||
	    pipe2(resp, O_CLOEXEC) < 0) {
		rc = -errno;
		goto out;
	}
	S.child = fork();
	if (S.child == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGHUP, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* never outlive a killed bench */
		bench_state_child(&S.state);
		if (getppid() == 1)
			_exit(7);
		close(readyp[0]);	/* the parent's ends: EOF when it dies */
		close(gop[1]);
		close(resp[0]);
		child_main(o, c->workload, readyp[1], gop[0], resp[1]);
	}
	if (S.child < 0) {
		rc = -errno;
		S.child = 0;
		goto out;
	}
	close(readyp[1]);
	close(gop[0]);
	close(resp[1]);
	readyp[1] = gop[0] = resp[1] = -1;
	rc = wait_byte(readyp[0], &r, 1);
	if (rc < 0)
		goto out;
	if (pc_vmstat_read(vm_names, v0, NVM) < 0 || !vm_complete(v0)) {
		rc = -ENOTSUP;
		goto out;
	}
	if (S.dev)
		dev0 = __atomic_load_n(&S.dev->reads, __ATOMIC_RELAXED);
	if (c->pc == PC_AUTO) {
		sigset_t all, old;

		/* signals go to the main thread, whose read() they must interrupt */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		auto_on = pthread_create(&a.th, NULL, auto_thread, &a) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (write(gop[1], "g", 1) != 1) {
		rc = -EIO;
		goto out;
	}
	rc = wait_byte(resp[0], &res, sizeof(res));
	if (auto_on) {	/* stopped before the last sample: the tuner reads vmstat too */
		a.stop = 1;
		pthread_join(a.th, NULL);
		auto_on = false;
	}
	if (rc == 0 && (pc_vmstat_read(vm_names, v1, NVM) < 0 || !vm_complete(v1)))
		rc = -ENOTSUP;
	if (S.dev)
		dev1 = __atomic_load_n(&S.dev->reads, __ATOMIC_RELAXED);
out:
	if (auto_on) {
		a.stop = 1;
		pthread_join(a.th, NULL);
	}
	for (int i = 0; i < 2; i++) {
		if (readyp[i] >= 0)
			close(readyp[i]);
		if (gop[i] >= 0)
			close(gop[i]);
		if (resp[i] >= 0)
			close(resp[i]);
	}
	if (S.child > 0) {
		pid_t got = 0;

		/* -EIO is an EOF: the child is gone or going; give it a moment */
		for (int i = 0; rc == -EIO && i < 100 && (got = waitpid(S.child, &st, WNOHANG)) == 0; i++)
			usleep(10000);
		if (rc < 0 && got != S.child) {
			kill(S.child, SIGKILL);
			killed = true;
		}
		if (got != S.child && bench_wait(S.child, &st) < 0) {
			st = 0;
			if (rc == 0)
				rc = -ECHILD;	/* its status is lost: not a result */
		}
		S.child = 0;
		/* a child that died on its own: the OOM killer, or a failure of its own */
		if (!killed && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
			rc = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL ? -ENOMEM : -EIO;
	}
	if (rc < 0)
		return rc;
	{
		int n = c->n++;
		double ra = (double)(v1[5] - v0[5]), hit = (double)(v1[6] - v0[6]);

		c->v[M_REAL][n] = res.real;
		c->v[M_USER][n] = res.user;
		c->v[M_SYS][n] = res.sys;
		for (int m = M_MAJFLT; m <= M_RA_HIT; m++)
			c->v[m][n] = (double)(v1[m - M_MAJFLT] - v0[m - M_MAJFLT]);
		c->v[M_HIT_PCT][n] = ra > 0 ? 100 * (hit < ra ? hit : ra) / ra : 0;
		c->v[M_AUTO_PC][n] = c->pc == PC_AUTO ? (a.time > 0 ? a.pc_time / a.time : AUTO_START_PC)
						       : (double)c->pc;
		c->v[M_CONVERGE][n] = (double)a.settled_at;
		c->v[M_DEVREADS][n] = (double)(dev1 - dev0);
		for (size_t k = 7; k < NVM; k++)
			if (v0[k] != PC_VMSTAT_MISSING && v1[k] != PC_VMSTAT_MISSING &&
			    v1[k] != v0[k] && !warned[k]) {
				warned[k] = true;
				cli_warn("%s moved during a run (%llu): it distorts swap I/O", vm_names[k],
					 (unsigned long long)(v1[k] - v0[k]));
			}
	}
	return 0;
}

/* ---- report ---- */

static void pc_label(int pc, char *buf, size_t len)
{
	if (pc == PC_AUTO)
		snprintf(buf, len, "auto");
	else
		snprintf(buf, len, "pc=%d", pc);
}

/* The tuner's metrics are the auto column's; the device's reads, the slow device's. */
static bool metric_on(const struct swapin_opts *o, const struct config *c, int m)
{
	if (m == M_AUTO_PC || m == M_CONVERGE)
		return c->pc == PC_AUTO;
	return m != M_DEVREADS || o->device == SWDEV_SLOW;
}

static void metrics_add(const struct swapin_opts *o, const struct config *c, struct orec *rec)
{
	struct orec ms = { 0 };

	for (int m = 0; m < M_COUNT; m++) {
		if (!metric_on(o, c, m))
			continue;
		bench_metric(&ms, m_names[m], c->v[m], c->n, m == M_HIT_PCT || m == M_RA_HIT,
			     m_units[m]);
	}
	bench_metrics_done(rec, &ms);
}

static double mean_of(const struct config *c, int m)
{
	struct pc_summary s;

	pc_summarize(c->v[m], (size_t)c->n, &s);
	return s.mean;
}

/*
 * The tuner's target: on every workload (and vma_ra setting) its real time
 * within 10% of the best fixed setting there, where each fixed setting
 * loses more than that somewhere. Worst losses against the best, in %.
 */
static void auto_check(const struct swapin_opts *o, struct config *cfg, int ncfg)
{
	double auto_worst = 0, fixed_worst[10] = { 0 };
	struct pc_welch welch = { 0 };
	char worst_at[64] = "", line[400];
	size_t at = 0;
	struct orec rec = { 0 };

	for (int w = 0; w < WL_COUNT; w++)
		for (int vi = 0; vi < o->nvma; vi++) {
			double best = 0, autom = -1;
			struct config *bc = NULL, *ac = NULL;

			for (int i = 0; i < ncfg; i++) {
				struct config *c = &cfg[i];
				double m;

				if (c->workload != w || c->vma != o->vmas[vi] || !c->n)
					continue;
				m = mean_of(c, M_REAL);
				if (c->pc == PC_AUTO) {
					autom = m;
					ac = c;
				} else if (best == 0 || m < best) {
					best = m;
					bc = c;
				}
			}
			if (best <= 0 || autom < 0)
				continue;
			if (100 * (autom / best - 1) > auto_worst || !worst_at[0]) {
				struct pc_summary sa, sb;

				/* is the worst loss more than noise? */
				pc_summarize(bc->v[M_REAL], (size_t)bc->n, &sb);
				pc_summarize(ac->v[M_REAL], (size_t)ac->n, &sa);
				pc_welch_test(&sb, &sa, &welch);
				auto_worst = 100 * (autom / best - 1);
				snprintf(worst_at, sizeof(worst_at), "%s, vma_ra %s", wl_names[w],
					 o->vmas[vi] ? "on" : "off");
			}
			for (int p = 0; p < o->npc; p++)
				for (int i = 0; i < ncfg; i++)
					if (cfg[i].workload == w && cfg[i].vma == o->vmas[vi] &&
					    cfg[i].pc == o->pcs[p] && cfg[i].n &&
					    100 * (mean_of(&cfg[i], M_REAL) / best - 1) > fixed_worst[p])
						fixed_worst[p] = 100 * (mean_of(&cfg[i], M_REAL) / best - 1);
		}
	if (!worst_at[0])
		return;
	orec_f64(&rec, "target_percent", 10);
	orec_f64(&rec, "auto_worst_percent", auto_worst);
	orec_str(&rec, "auto_worst_at", worst_at, 0);
	orec_bool(&rec, "auto_within_target", auto_worst <= 10);
	if (welch.valid)
		orec_f64(&rec, "auto_worst_welch_p", welch.p);
	else
		orec_null(&rec, "auto_worst_welch_p");
	{
		/* page_cluster is 0 to 9 (--page-cluster): the member names */
		static const char *const pc_key[] = { "0", "1", "2", "3", "4",
						      "5", "6", "7", "8", "9" };
		struct orec fw = { 0 };
		bool all_lose = true;

		for (int p = 0; p < o->npc; p++) {
			char four[32];

			/* four digits, as before: the noise is larger than that */
			snprintf(four, sizeof(four), "%.4g", fixed_worst[p]);
			orec_f64(&fw, pc_key[o->pcs[p]], strtod(four, NULL));	/* NaN: null */
			at += (size_t)snprintf(line + at, sizeof(line) - at, "%spc=%d %+.1f%%",
					       p ? ", " : "", o->pcs[p], fixed_worst[p]);
			if (fixed_worst[p] <= 10)
				all_lose = false;
		}
		orec_object(&rec, "fixed_worst_percent", &fw);
		orec_bool(&rec, "every_fixed_loses", all_lose);
	}
	out_object("auto_check", &rec);
	out_human_line("tuner: real time at most %+.1f%% from the best fixed setting (worst: %s; "
		       "target within 10%%)", auto_worst, worst_at);
	if (welch.valid)
		out_human_line("  that worst difference: Welch's t-test p = %.3f (%s at alpha 0.05)",
			       welch.p, welch.p < 0.05 ? "significant" : "not significant");
	out_human_line("fixed settings, worst against the best: %s", line);
}

static void report(const struct swapin_opts *o, struct config *cfg, int ncfg)
{
	for (int i = 0; i < ncfg; i++) {
		struct config *c = &cfg[i];
		struct orec rec = { 0 };

		orec_str(&rec, "workload", wl_names[c->workload], 0);
		if (c->pc == PC_AUTO)
			orec_str(&rec, "page_cluster", "auto", 0);
		else
			orec_u64(&rec, "page_cluster", (uint64_t)c->pc, 0);
		orec_str(&rec, "vma_ra", c->vma ? "on" : "off", 0);
		orec_u64(&rec, "runs", (uint64_t)c->n, 0);
		metrics_add(o, c, &rec);
		out_list_add("results", &rec);
	}
	if (out_format() != OUT_HUMAN)
		return;
	/* the seed's layout: one block per workload and vma_ra, metrics down, settings across */
	for (int w = 0; w < WL_COUNT; w++)
		for (int vi = 0; vi < o->nvma; vi++) {
			struct config *cols[10];
			int nc = 0;
			char line[512];
			size_t at;

			for (int i = 0; i < ncfg; i++)
				if (cfg[i].workload == w && cfg[i].vma == o->vmas[vi] && nc < 10)
					cols[nc++] = &cfg[i];
			if (!nc)
				continue;
			out_human_line("%s, vma_ra %s: mean [standard error, %% of the mean] over %d runs",
				       wl_names[w], o->vmas[vi] ? "on" : "off", cols[0]->n);
			at = (size_t)snprintf(line, sizeof(line), "%-12s", "");
			for (int k = 0; k < nc; k++) {
				char l[16];

				pc_label(cols[k]->pc, l, sizeof(l));
				at += (size_t)snprintf(line + at, sizeof(line) - at, " %18s", l);
			}
			out_human_line("%s", line);
			for (int m = 0; m < M_COUNT; m++) {
				bool any = false;

				if (m == M_DEVREADS && o->device != SWDEV_SLOW)
					continue;

				at = (size_t)snprintf(line, sizeof(line), "%-12s", m_names[m]);
				for (int k = 0; k < nc; k++) {
					struct pc_summary s;
					char cell[40];
					double rel;

					if (!metric_on(o, cols[k], m)) {
						at += (size_t)snprintf(line + at, sizeof(line) - at,
								       " %18s", "-");
						continue;
					}
					any = true;
					pc_summarize(cols[k]->v[m], (size_t)cols[k]->n, &s);
					rel = s.mean != 0 ? 100 * s.stderr_ / fabs(s.mean) : 0;
					if (m <= M_SYS)
						snprintf(cell, sizeof(cell), "%.3f [%4.1f%%]", s.mean, rel);
					else if (m == M_HIT_PCT || m == M_AUTO_PC || m == M_CONVERGE)
						snprintf(cell, sizeof(cell), "%.1f [%4.1f%%]", s.mean, rel);
					else
						snprintf(cell, sizeof(cell), "%.0f [%4.1f%%]", s.mean, rel);
					at += (size_t)snprintf(line + at, sizeof(line) - at, " %18s", cell);
				}
				if (any)
					out_human_line("%s", line);
			}
			out_human_line("%s", "");
		}
}

/* ---- the experiment ---- */

int bench_swapin(const struct swapin_opts *o)
{
	struct sigaction sa = { .sa_handler = on_signal }, old[3], old_pipe;
	static const int sigs[3] = { SIGINT, SIGTERM, SIGHUP };
	struct config *cfg;
	int ncfg = 0, rc = 0, total, done = 0, version, oom_retries = 0;
	char parent[700], other[400] = "";
	bool warned[NVM] = { false };
	uint64_t seed = 0x9e3779b97f4a7c15ULL;

	/* swapon(2) is CAP_SYS_ADMIN's alone; the knobs are checked below */
	if (!pc_have_cap(CAP_SYS_ADMIN)) {
		cli_fail_msg("bench swapin", "cannot run", "needs CAP_SYS_ADMIN (swapon)");
		return EXIT_PARTIAL;
	}
	if (pc_cgroup_root(parent, sizeof(parent), &version) < 0) {
		cli_fail_msg("/sys/fs/cgroup", "cannot run",
			     "no memory cgroup controller (v1 or v2) is mounted");
		return EXIT_PARTIAL;
	}
	/*
	 * Opened for writing, as the writes will be (access(2) would judge
	 * by the real uid): vm.page-cluster is a sysctl, writable only by
	 * uid 0 of the initial user namespace whatever the capabilities;
	 * vma_ra_enabled is root's 0644 sysfs file (uid 0 or CAP_DAC_OVERRIDE).
	 */
	{
		static const char *const knobs[] = { "/sys/kernel/mm/swap/vma_ra_enabled",
						     "/proc/sys/vm/page-cluster" };

		for (int i = 0; i < 2; i++) {
			int fd = open(knobs[i], O_WRONLY | O_CLOEXEC), err = errno;

			if (fd >= 0) {
				close(fd);
				continue;
			}
			cli_fail_msg(knobs[i], "cannot run",
				     err == ENOENT ? "this kernel has no swap readahead knobs "
						     "(needs 4.14 or later)"
				     : err != EACCES && err != EPERM ? strerror(err)
				     : i == 0 ? "needs write permission on it (root's, mode 0644: "
						"uid 0 or CAP_DAC_OVERRIDE)"
					      : "needs write permission on it: a sysctl file, writable "
						"only by uid 0 of the initial user namespace (no "
						"capability stands in for it)");
			return EXIT_PARTIAL;
		}
	}
	if (o->device == SWDEV_FILE || o->device == SWDEV_SLOW) {
		char why[400];

		/* before anything changes: only a fresh directory is made in it */
		S.dirfd = bench_workdir_open(o->dir, BENCH_WD_SHARED, S.dirpath, sizeof(S.dirpath),
					     why, sizeof(why));
		if (S.dirfd < 0) {
			cli_fail_msg(o->dir, "cannot use the directory", why);
			return EXIT_PARTIAL;
		}
	}
	cfg = calloc(MAX_CONFIGS, sizeof(*cfg));
	if (!cfg)
		return EXIT_PARTIAL;
	{
		long live = 0;

		/* ours first, locked, so two starting at once see each other */
		if (bench_state_open(&S.state, "swapin") < 0)
			cli_warn("cannot keep a state file in /run/pagecache: a kill -9 would "
				 "leave swap and sysctls behind");
		bench_state_recover("swapin", &live);	/* what a killed run left */
		bench_state_recover("tune", &live);
		if (live) {
			cli_fail_msg("bench swapin", "cannot run", "another swapin bench or tune swap "
				     "--auto is running (they share vm.page-cluster)");
			bench_state_close(&S.state);
			free(cfg);
			return EXIT_PARTIAL;
		}
	}
	for (int w = 0; w < WL_COUNT; w++) {
		if (!(o->workloads & (1u << w)))
			continue;
		for (int vi = 0; vi < o->nvma; vi++) {
			for (int p = 0; p < o->npc; p++)
				cfg[ncfg++] = (struct config){ .workload = w, .pc = o->pcs[p],
							       .vma = o->vmas[vi] };
			if (o->with_auto)
				cfg[ncfg++] = (struct config){ .workload = w, .pc = PC_AUTO,
							       .vma = o->vmas[vi] };
		}
	}
	total = ncfg * o->runs;

	S.page_cluster.path = "/proc/sys/vm/page-cluster";
	S.vma_ra.path = "/sys/kernel/mm/swap/vma_ra_enabled";
	S.zswap.path = "/sys/module/zswap/parameters/enabled";
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &sa, &old[i]);
	/* a dead child's pipe is an error to handle, not a death without cleanup */
	sigaction(SIGPIPE, &(struct sigaction){ .sa_handler = SIG_IGN }, &old_pipe);

	{
		char z[8];

		/* zswap would take the swap-outs before they reach the device */
		if (pc_read_text(S.zswap.path, z, sizeof(z)) == 0 && (z[0] == 'Y' || z[0] == '1'))
			bench_knob_set(&S.zswap, "N");
	}
	rc = swap_make(o);
	if (rc == -EINTR || interrupted) {
		rc = -EINTR;
		cli_warn("interrupted: restoring the system");
		goto out;
	}
	if (rc < 0 && S.why[0]) {
		cli_fail_msg(o->dir, "cannot set up the slow swap device in", S.why);
		goto out;
	}
	if (rc < 0) {
		cli_fail(o->device == SWDEV_FILE || o->device == SWDEV_SLOW ? o->dir : "zram", -rc,
			 rc == -ENODEV ? "no free zram device (modprobe zram?) for"
				       : "cannot set up swap on");
		goto out;
	}
	/*
	 * Beneath our own cgroup (never beside it: it stays inside every
	 * limit we are under), made room for as run and readtwice do: v2,
	 * memory handed on, in a scope systemd gives us where it manages the
	 * host.
	 */
	rc = pc_cgroup_nest_init(&S.nest);
	if (rc < 0 && interrupted)
		goto out;	/* a scope asked of systemd, the call cut short */
	if (rc < 0) {
		char why[800];

		cli_fail_msg(S.nest.parent[0] ? S.nest.parent : "/sys/fs/cgroup",
			     "cannot make a memory cgroup beneath",
			     cli_nest_why(rc, &S.nest, why, sizeof(why)));
		goto out;
	}
	S.nested = true;
	version = S.nest.version;
	snprintf(parent, sizeof(parent), "%s", S.nest.parent);
	if (S.nest.leaf[0])
		bench_state_put(&S.state, "cgroup", S.nest.leaf);
	{
		char name[64];

		snprintf(name, sizeof(name), "pc-swapin-%d", getpid());
		rc = pc_cgroup_create(parent, name, S.cgdir, sizeof(S.cgdir));
		if (rc == 0) {
			char lim[32];

			bench_state_put(&S.state, "cgroup", S.cgdir);
			snprintf(lim, sizeof(lim), "%llu", (unsigned long long)o->limit);
			rc = pc_cgroup_write(S.cgdir, version == 1 ? "memory.limit_in_bytes"
								    : "memory.max", lim);
			/* v1 has a per-cgroup swappiness; v2 uses vm.swappiness */
			if (rc == 0 && version == 1)
				pc_cgroup_write(S.cgdir, "memory.swappiness", "100");
		} else {
			S.cgdir[0] = 0;
		}
		if (rc < 0 && interrupted)
			goto out;
		if (rc < 0) {
			cli_fail(parent, -rc, "cannot make a memory cgroup under");
			goto out;
		}
	}
	if (other_rotational_swap(other, sizeof(other)))
		cli_warn("'%s' is rotational swap: the kernel turns VMA readahead off while it is "
			 "on, so vma_ra on runs cluster readahead", other);

	for (int r = 0; r < o->runs && rc == 0; r++) {
		int order[MAX_CONFIGS];

		for (int i = 0; i < ncfg; i++)
			order[i] = i;
		for (int i = ncfg - 1; i > 0; i--) {	/* interleaved, shuffled each round */
			int j = (int)(xorshift64s(&seed) % (uint64_t)(i + 1)), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (int i = 0; i < ncfg && rc == 0; i++) {
			struct config *c = &cfg[order[i]];

			if (o->progress) {
				char l[16];

				pc_label(c->pc, l, sizeof(l));
				fprintf(stderr, "\rswapin: run %d/%d, %d of %d: %s %s vma_ra %s    ",
					r + 1, o->runs, done + 1, total, wl_names[c->workload], l,
					c->vma ? "on" : "off");
			}
			rc = run_one(o, c, warned);
			/*
			 * The memory cgroup's OOM killer, which a slow device provokes
			 * (swap cache pages wait out the latency locked): the run is
			 * made again, up to OOM_RETRIES times in a row, and counted.
			 */
			for (int k = 0; rc == -ENOMEM && !interrupted && k < OOM_RETRIES; k++) {
				char l[16];

				pc_label(c->pc, l, sizeof(l));
				oom_retries++;
				cli_warn("the workload was killed (OOM?) in %s %s vma_ra %s: running it "
					 "again (%d of %d)", wl_names[c->workload], l, c->vma ? "on" : "off",
					 k + 1, OOM_RETRIES);
				rc = run_one(o, c, warned);
			}
			if (interrupted)
				rc = -EINTR;
			done++;
		}
	}
	if (o->progress)
		fputs("\r\033[K", stderr);
	if (rc == -EINTR) {
		cli_warn("interrupted: restoring the system");
		goto out;
	}
	if (rc < 0) {
		cli_fail("bench swapin", -rc, rc == -ENOMEM ? "a workload was killed (OOM?) in"
							    : "a run failed in");
		goto out;
	}
	{
		struct orec rec = { 0 };
		struct utsname u;
		static const char *const devs[] = { "zram behind a loop device", "zram (control: readahead bypassed)",
						    "loop device over a file",
						    "slow: a loop device over a FUSE file, reads delayed" };

		uname(&u);
		orec_str(&rec, "kernel", u.release, 0);
		orec_str(&rec, "swap", devs[o->device], 0);
		orec_u64(&rec, "working_set", o->wss, OF_BYTES);
		orec_u64(&rec, "cgroup_limit", o->limit, OF_BYTES);
		orec_u64(&rec, "cgroup_version", (uint64_t)version, 0);
		orec_u64(&rec, "passes", (uint64_t)o->passes, 0);
		orec_u64(&rec, "threads", (uint64_t)o->threads, 0);
		orec_u64(&rec, "runs", (uint64_t)o->runs, 0);
		orec_bool(&rec, "vma_ra_effective", !other[0]);
		orec_u64(&rec, "oom_retries", (uint64_t)oom_retries, 0);
		if (o->device == SWDEV_SLOW && S.dev) {
			struct slowdev_stats d;

			memcpy(&d, S.dev, sizeof(d));
			orec_f64(&rec, "device_latency_s", (double)o->latency_ns / 1e9);
			if (o->bandwidth)
				orec_u64(&rec, "device_bandwidth", o->bandwidth, OF_BYTES);
			orec_u64(&rec, "device_reads", d.reads, 0);
			orec_u64(&rec, "device_reads_answered", d.answered, 0);
			orec_u64(&rec, "device_reads_delayed", d.delayed, 0);
			orec_f64(&rec, "device_mean_read_s", d.answered ? (double)d.delay_ns / 1e9 /
						   (double)d.answered : 0);
			orec_u64(&rec, "device_read_bytes", d.read_bytes, OF_BYTES);
			orec_u64(&rec, "device_writes", d.writes, 0);
			orec_u64(&rec, "device_max_inflight", d.max_inflight, 0);
		}
		if (o->with_auto) {
			orec_f64(&rec, "auto_interval_s", o->auto_interval);
			orec_u64(&rec, "auto_start_page_cluster", AUTO_START_PC, 0);
		}
		out_object("setup", &rec);
	}
	report(o, cfg, ncfg);
	if (o->with_auto)
		auto_check(o, cfg, ncfg);
	if (out_format() == OUT_HUMAN) {
		char a[16], b[16];

		out_human_line("swap: %s; working set %s in a memory cgroup (v%d) of %s; %d passes",
			       o->device == SWDEV_ZRAM ? "zram (control)" :
			       o->device == SWDEV_FILE ? "loop over a file" :
			       o->device == SWDEV_SLOW ? "slow (loop over a FUSE file)" :
			       "zram behind a loop device",
			       pc_human_size(o->wss, a, sizeof(a)), version,
			       pc_human_size(o->limit, b, sizeof(b)), o->passes);
		if (o->device == SWDEV_SLOW && S.dev && o->bandwidth)
			out_human_line("slow device: each read delayed %.3g ms plus its bytes at %s/s; "
				       "%llu reads, %llu of them delayed, at most %llu at once",
				       (double)o->latency_ns / 1e6, pc_human_size(o->bandwidth, a, sizeof(a)),
				       (unsigned long long)S.dev->reads,
				       (unsigned long long)S.dev->delayed,
				       (unsigned long long)S.dev->max_inflight);
		else if (o->device == SWDEV_SLOW && S.dev)
			out_human_line("slow device: each read delayed %.3g ms; %llu reads, %llu of "
				       "them delayed, at most %llu at once", (double)o->latency_ns / 1e6,
				       (unsigned long long)S.dev->reads,
				       (unsigned long long)S.dev->delayed,
				       (unsigned long long)S.dev->max_inflight);
	}
out:
	/*
	 * A signal that cut a step short (a D-Bus call, a write) is the
	 * signal's exit, not the step's failure: under systemd the scope's
	 * set-up is slow enough for SIGINT to land in it (Debian 12 guest).
	 */
	if (rc < 0 && rc != -EINTR && interrupted) {
		rc = -EINTR;
		cli_warn("interrupted: restoring the system");
	}
	teardown();
	for (int i = 0; i < 3; i++)
		sigaction(sigs[i], &old[i], NULL);
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (leftovers())
		cli_warn("could not undo everything: check swapon --show, vm.page-cluster and "
			 "/sys/kernel/mm/swap/vma_ra_enabled (the next run retries, from %s)",
			 S.state.path[0] ? S.state.path : "nowhere: no state file");
	else
		bench_state_close(&S.state);
	free(cfg);
	if (S.dev && !S.fuse_pid) {
		munmap(S.dev, sizeof(*S.dev));
		S.dev = NULL;
	}
	free((char *)S.rotational.path);
	S.rotational.path = NULL;
	if (S.imgdirfd >= 0)
		close(S.imgdirfd);
	if (S.dirfd >= 0)
		close(S.dirfd);
	S.imgdirfd = S.dirfd = -1;
	return rc < 0 ? (rc == -EINTR ? 130 : EXIT_PARTIAL) : 0;
}
