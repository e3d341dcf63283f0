/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * slowdev.c: the daemon behind `bench swapin --swap-device slow`: a FUSE
 * file system (libfuse3's low-level API) of one file, swap.img, whose reads
 * are answered LATENCY after they arrive, like a network disk's, and whose
 * writes are answered at once. A loop device (direct I/O) over that file is
 * the swap: the kernel's swap readahead then pays as on a slow device, since
 * one delayed read brings a whole cluster, and reads in flight together
 * overlap (each is queued with its deadline and answered by a timer thread,
 * so how many wait at once is not bounded by a number of threads).
 *
 * With a bandwidth too (slow:LAT,BW), a read of N bytes costs LAT + N/BW, as
 * on a disk, where readahead's misses cost time and not only memory: the
 * latencies of reads in flight still overlap, but their transfers take turns
 * on one channel, so the device never delivers more than BW however many
 * reads wait. Deadlines stay in arrival order (each transfer starts no
 * sooner than the one before it ended), so the queue is still a FIFO.
 *
 * What it promises, because swap writeout under the test cgroup's pressure
 * goes loop -> FUSE -> here: it runs outside that cgroup (forked by the
 * bench before the cgroup exists, the workload enters it alone), every page
 * it has is locked in memory (mlockall, and the file's data is its own
 * populated memory), so reclaim never waits on it; it is in a session of its
 * own, ignoring the terminal's signals (Ctrl-C, Ctrl-Z reach the bench, not
 * it), and holds nothing of the bench's (the standard streams are
 * /dev/null). It ends when its file system is unmounted, however that
 * comes: by the bench's teardown, or by the next run's recovery after a
 * kill -9 (it outlives a killed bench on purpose: swap still on the device
 * can then be swapped off safely).
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 312
#include "bench.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define INO_FILE 2

/* a read waiting for its deadline */
struct pending {
	fuse_req_t req;
	uint64_t off, size;
	struct timespec arrived, due;
	struct pending *next;
};

static struct {
	uint8_t *data;			/* the file, in locked memory */
	uint64_t size;
	uint64_t latency_ns;
	uint64_t bandwidth;		/* bytes a second; 0: transfers take no time */
	struct timespec chan_free;	/* when the last transfer queued ends */
	struct slowdev_stats *st;	/* shared with the bench */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct pending *head, *tail;	/* FIFO: one latency, so deadline order */
	bool stop;
} D = { .mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER };

static void ts_add_ns(struct timespec *t, uint64_t ns)
{
	t->tv_sec += (time_t)(ns / 1000000000u);
	t->tv_nsec += (long)(ns % 1000000000u);
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static uint64_t ts_ns(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

static void stat_add(uint64_t *c, uint64_t v)
{
	__atomic_add_fetch(c, v, __ATOMIC_RELAXED);
}

static void fill_attr(fuse_ino_t ino, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = geteuid();
	st->st_gid = getegid();
	if (ino == FUSE_ROOT_ID) {
		st->st_mode = S_IFDIR | 0700;
		st->st_nlink = 2;
	} else {
		st->st_mode = S_IFREG | 0600;
		st->st_nlink = 1;
		st->st_size = (off_t)D.size;
		st->st_blocks = (blkcnt_t)(D.size / 512);
	}
}

static void sd_init(void *ud, struct fuse_conn_info *conn)
{
	(void)ud;
	/* readahead's reads are background requests to FUSE: let many be in flight */
	conn->max_background = 256;
	conn->congestion_threshold = 192;
	if (conn->capable & FUSE_CAP_ASYNC_DIO)
		conn->want |= FUSE_CAP_ASYNC_DIO;
	conn->want &= ~(unsigned)(FUSE_CAP_SPLICE_READ | FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
}

static void sd_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e = { 0 };

	if (parent != FUSE_ROOT_ID || strcmp(name, SLOWDEV_FILE)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	e.ino = INO_FILE;
	e.attr_timeout = e.entry_timeout = 3600;
	fill_attr(INO_FILE, &e.attr);
	fuse_reply_entry(req, &e);
}

static void sd_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct stat st;

	(void)fi;
	if (ino != FUSE_ROOT_ID && ino != INO_FILE) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	fill_attr(ino, &st);
	fuse_reply_attr(req, &st, 3600);
}

static void sd_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (ino != INO_FILE) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	if (fi->flags & O_TRUNC) {
		fuse_reply_err(req, EPERM);
		return;
	}
	fi->direct_io = 1;	/* no page cache of FUSE's in between, whoever opens it */
	fi->keep_cache = 0;
	fuse_reply_open(req, fi);
}

static void sd_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct pending *p;
	uint64_t n;

	(void)fi;
	if (ino != INO_FILE || off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	n = (uint64_t)off >= D.size ? 0 : D.size - (uint64_t)off < size ? D.size - (uint64_t)off : size;
	stat_add(&D.st->reads, 1);
	stat_add(&D.st->read_bytes, n);
	if ((!D.latency_ns && !D.bandwidth) || !n || !(p = calloc(1, sizeof(*p)))) {
		fuse_reply_buf(req, (const char *)D.data + (n ? off : 0), n);
		return;
	}
	p->req = req;
	p->off = (uint64_t)off;
	p->size = n;
	clock_gettime(CLOCK_MONOTONIC, &p->arrived);
	p->due = p->arrived;
	ts_add_ns(&p->due, D.latency_ns);
	pthread_mutex_lock(&D.mu);
	if (D.bandwidth) {
		/* the transfer, after the latency, once the channel is free */
		if (ts_ns(&D.chan_free) > ts_ns(&p->due))
			p->due = D.chan_free;
		ts_add_ns(&p->due, (uint64_t)((double)n * 1e9 / (double)D.bandwidth + 0.5));
		D.chan_free = p->due;
	}
	if (D.tail)
		D.tail->next = p;
	else
		D.head = p;
	D.tail = p;
	{
		uint64_t in = __atomic_add_fetch(&D.st->inflight, 1, __ATOMIC_RELAXED);

		if (in > D.st->max_inflight)
			D.st->max_inflight = in;	/* updated under the queue's lock */
	}
	pthread_cond_signal(&D.cv);
	pthread_mutex_unlock(&D.mu);
}

/* The timer: each read answered at its deadline, in arrival order. */
static void *replier(void *arg)
{
	(void)arg;
	for (;;) {
		struct pending *p;
		struct timespec now;

		pthread_mutex_lock(&D.mu);
		while (!D.head && !D.stop)
			pthread_cond_wait(&D.cv, &D.mu);
		p = D.head;
		if (p) {
			D.head = p->next;
			if (!D.head)
				D.tail = NULL;
		}
		pthread_mutex_unlock(&D.mu);
		if (!p)
			return NULL;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &p->due, NULL) == EINTR)
			;
		clock_gettime(CLOCK_MONOTONIC, &now);
		/*
		 * Counted before the reply: once the kernel has the data the
		 * counts hold it, and answered == delayed whenever they are read.
		 */
		if (ts_ns(&now) - ts_ns(&p->arrived) >= D.latency_ns)
			stat_add(&D.st->delayed, 1);	/* answered no sooner than asked */
		stat_add(&D.st->delay_ns, ts_ns(&now) - ts_ns(&p->arrived));
		stat_add(&D.st->answered, 1);
		fuse_reply_buf(p->req, (const char *)D.data + p->off, p->size);
		__atomic_sub_fetch(&D.st->inflight, 1, __ATOMIC_RELAXED);
		free(p);
	}
}

static void sd_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)fi;
	if (ino != INO_FILE || off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if ((uint64_t)off > D.size || size > D.size - (uint64_t)off) {
		fuse_reply_err(req, ENOSPC);	/* the file's size is fixed */
		return;
	}
	memcpy(D.data + off, buf, size);
	stat_add(&D.st->writes, 1);
	stat_add(&D.st->write_bytes, size);
	fuse_reply_write(req, size);
}

static void sd_ok(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, 0);
}

static void sd_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	sd_ok(req, ino, fi);
}

static const struct fuse_lowlevel_ops ops = {
	.init = sd_init,
	.lookup = sd_lookup,
	.getattr = sd_getattr,
	.open = sd_open,
	.read = sd_read,
	.write = sd_write,
	.flush = sd_ok,
	.release = sd_ok,
	.fsync = sd_fsync,
};

/* What went wrong, to the bench: one line on the ready pipe, then exit. */
_Noreturn static void fail(int readyfd, const char *what, int err)
{
	char line[300];
	int n = snprintf(line, sizeof(line), "E%s: %s", what, strerror(err));

	if (write(readyfd, line, (size_t)n) < 0) {
		/* the bench is gone: nobody to tell */
	}
	_exit(1);
}

_Noreturn void slowdev_serve(const char *mnt, uint64_t size, uint64_t latency_ns, uint64_t bandwidth,
			     struct slowdev_stats *st, int readyfd)
{
	static const int quiet[] = { SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGHUP, SIGTERM,
				     SIGPIPE };
	char *argv[] = { "pc-slowdev", "-o", "fsname=pagecache-slow,subtype=pagecache-slow", NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse_loop_config *cfg;
	struct fuse_session *se;
	pthread_t th;
	int null, rc;

	prctl(PR_SET_NAME, "pc-slowdev");
	setsid();	/* not in the terminal's process group: no Ctrl-C, no Ctrl-Z */
	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++)
		signal(quiet[i], SIG_IGN);
	/* only the ready pipe kept (as 3), the standard streams /dev/null */
	if (readyfd != 3) {
		if (dup2(readyfd, 3) < 0)
			_exit(1);
		readyfd = 3;
	}
	close_range(4, ~0u, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0)
		fail(readyfd, "/dev/null", errno);
	for (int fd = 0; fd < 3; fd++)
		dup2(null, fd);
	if (null > 3)
		close(null);
	D.size = size;
	D.latency_ns = latency_ns;
	D.bandwidth = bandwidth;
	D.st = st;
	/* small thread stacks: all of them are locked too */
	setenv("FUSE_THREAD_STACK", "262144", 1);
	if (mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		fail(readyfd, "cannot lock its memory (mlockall)", errno);
	D.data = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		      -1, 0);
	if (D.data == MAP_FAILED)
		fail(readyfd, "cannot allocate the device's memory", errno);
	if (pthread_create(&th, NULL, replier, NULL))
		fail(readyfd, "cannot start its timer thread", EAGAIN);
	se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	if (!se)
		fail(readyfd, "cannot start a FUSE session (libfuse3)", EINVAL);
	if (fuse_session_mount(se, mnt) != 0)
		fail(readyfd, "cannot mount the FUSE file system", errno ? errno : EIO);
	if (write(readyfd, "r", 1) != 1)
		_exit(1);	/* the bench is gone before it began: unmounted below */
	close(readyfd);
	cfg = fuse_loop_cfg_create();
	if (cfg) {
		/* several readers of /dev/fuse: writes and reads are taken in at once */
		fuse_loop_cfg_set_clone_fd(cfg, 0);
		fuse_loop_cfg_set_max_threads(cfg, 8);
		fuse_loop_cfg_set_idle_threads(cfg, 4);
	}
	rc = cfg ? fuse_session_loop_mt(se, cfg) : fuse_session_loop(se);
	/* unmounted (or aborted): nothing can still ask; answer what waits, and go */
	pthread_mutex_lock(&D.mu);
	D.stop = true;
	pthread_cond_broadcast(&D.cv);
	pthread_mutex_unlock(&D.mu);
	pthread_join(th, NULL);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	if (cfg)
		fuse_loop_cfg_destroy(cfg);
	_exit(rc < 0 ? 1 : 0);
}
