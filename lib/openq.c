/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * openq.c: open the files of a directory many at a time, and close them
 * the same way, through io_uring; one by one where no ring can be had.
 *
 * A tree walk's cost is system calls: an open and a close per file, on
 * top of what is asked of each file. Here the opens of up to `depth`
 * names go to the kernel in one io_uring_enter, together with the closes
 * queued since the last one (IORING_OP_OPENAT2, IORING_OP_CLOSE). With the
 * dentries cached, the kernel runs both inline in that call, so N files
 * cost one system call for their opens and closes instead of 2N. The
 * opens say RESOLVE_CACHED: one the dcache cannot answer in an RCU walk
 * (metadata not cached, or RCU walks failing while other work changes
 * mounts) comes back EAGAIN and is made here with openat(2), as without a
 * ring, instead of in an io-wq worker (a thread switch a file); when most
 * of a call's opens came back so, the next few calls make their opens
 * here at once (their closes still go by the ring). What the caller then
 * asks of each fd (fstat, cachestat) stays a system call: IORING_OP_STATX
 * always runs in an io-wq worker (measured slower on 2 cores:
 * bench/results/walk.md), and cachestat has no opcode. Nor do direct
 * (fixed) descriptors help (fstat and cachestat take only real fds), or
 * linked SQEs (the fstat needs the fd the open returns).
 *
 * The promise: the results are those of openat(2) called one name at a
 * time, whatever the engine. Each open passes the "open" fault point, and
 * O_NOATIME is dropped where the kernel refuses it (EPERM), as
 * pc_sys_openat does. No ring (io_uring_setup refused by
 * kernel.io_uring_disabled, seccomp or ENOSYS, no memory for it, the
 * opcodes missing, the "uring" fault point) means the same calls one by
 * one; a ring that fails later (the "uring_enter" fault point, or an
 * error of io_uring_enter that is not a retry) hands what it had not
 * taken to those calls and is not used again. Every close queued is done
 * before pc_openq_free returns, so the caller's fds are not outlived.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CLOSE_TAG UINT64_MAX
#define PENDING INT_MIN
#define MAX_RETRIES 64			/* EAGAIN/EBUSY from io_uring_enter in a row */
#define BY_HAND 8			/* calls of opens made here after a miss */

struct sqe_of {				/* what each prepared SQE is */
	bool close;
	int arg;			/* close: the fd; open: the name's index */
};

struct pc_openq {
	struct io_uring ring;
	bool made;			/* a ring was made (and is to be freed) */
	bool ring_ok;			/* ... and still works */
	unsigned depth;
	int *closes;			/* fds to close with the next call */
	unsigned nclose;
	unsigned inflight;		/* close CQEs not reaped yet */
	struct sqe_of *order;		/* the SQEs of the call being made */
	unsigned norder;
	struct open_how how;		/* the opens' (read when submitted) */
	bool cached;			/* how has RESOLVE_CACHED (5.12+) */
	unsigned uncached;		/* opens of this call that came back EAGAIN */
	unsigned by_hand;		/* calls left whose opens are made here */
};

static atomic_ulong ring_opens;	/* for the tests: opens the rings took */

unsigned long pc_openq_ring_opens(void)
{
	return atomic_load(&ring_opens);
}

static unsigned pow2_at_least(unsigned n)
{
	unsigned p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

static bool make_ring(struct pc_openq *q)
{
	struct io_uring_params p = { 0 };
	struct io_uring_probe *probe;
	unsigned entries = pow2_at_least(2 * q->depth);
	bool ok;

	if (pc_sys_uring_check() < 0)
		return false;
	/* One thread submits and reaps: the cheapest completion path (6.1+). */
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	p.flags |= IORING_SETUP_CQSIZE;
	p.cq_entries = 2 * entries;
	if (io_uring_queue_init_params(entries, &q->ring, &p) < 0) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = 2 * entries;
		if (io_uring_queue_init_params(entries, &q->ring, &p) < 0)
			return false;	/* ENOSYS, EPERM (disabled, seccomp), ENOMEM */
	}
	probe = io_uring_get_probe_ring(&q->ring);
	ok = probe && io_uring_opcode_supported(probe, IORING_OP_OPENAT2) &&
	     io_uring_opcode_supported(probe, IORING_OP_CLOSE);
	if (probe)
		io_uring_free_probe(probe);
	if (!ok) {
		io_uring_queue_exit(&q->ring);
		return false;
	}
	io_uring_register_ring_fd(&q->ring);	/* no fd lookup per call (5.18+); optional */
	{
		/*
		 * An open whose lookup is not cached goes to an io-wq worker:
		 * a few per thread, as warm has (prefetch.c); optional.
		 */
		unsigned workers[2] = { 4, 4 };

		io_uring_register_iowq_max_workers(&q->ring, workers);
	}
	q->made = true;
	return true;
}

int pc_openq_new(unsigned depth, struct pc_openq **ret)
{
	struct pc_openq *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->depth = depth ? depth : 1;
	q->closes = calloc(q->depth, sizeof(*q->closes));
	q->order = calloc(2 * q->depth, sizeof(*q->order));
	if (!q->closes || !q->order) {
		free(q->closes);
		free(q->order);
		free(q);
		return -ENOMEM;
	}
	q->ring_ok = depth > 0 && make_ring(q);
	q->cached = true;
	*ret = q;
	return 0;
}

const char *pc_openq_engine(const struct pc_openq *q)
{
	return q && q->ring_ok ? "io_uring" : "syscalls";
}

bool pc_openq_pending(const struct pc_openq *q)
{
	return q && q->nclose > 0;
}

/*
 * One open made here, as the ring's are: no mount crossed (a name with a
 * mount on it, a file bind-mounted over another, comes back -EXDEV for the
 * caller to judge before opening it: a device mounted there would have its
 * driver's open run otherwise), no magic link; openat(2) where the kernel
 * has no openat2 (before 5.6: mounts are crossed there, as before).
 */
static atomic_bool no_openat2;

static int open_here(int dirfd, const char *name, int flags)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
				.resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS };
	long fd;

	if (atomic_load_explicit(&no_openat2, memory_order_relaxed))
		return pc_sys_openat_raw(dirfd, name, flags);
	do
		fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	if (fd < 0 && errno == EPERM && (flags & O_NOATIME)) {	/* not ours */
		how.flags &= ~(uint64_t)O_NOATIME;
		do
			fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
		while (fd < 0 && errno == EINTR);
	}
	if (fd < 0 && errno == ENOSYS) {
		atomic_store_explicit(&no_openat2, true, memory_order_relaxed);
		return pc_sys_openat_raw(dirfd, name, flags);
	}
	return fd < 0 ? -errno : (int)fd;
}

/* open_here behind the "open" fault point, as pc_sys_openat is */
static int open_checked(int dirfd, const char *name, int flags)
{
	int e;

	while ((e = pc_sys_injected(PC_SYS_OPEN)) == EINTR)
		;	/* as a real EINTR would be: retried */
	return e > 0 ? -e : open_here(dirfd, name, flags);
}

int pc_openq_open_one(int dirfd, const char *name, int flags)
{
	return open_checked(dirfd, name, flags);
}

/*
 * What a CQE of an open says, as openat(2) would have: -EAGAIN is
 * RESOLVE_CACHED's "the lookup would block", -EINVAL a kernel that does
 * not know RESOLVE_CACHED (then dropped); both are opened here, in this
 * thread, as a walk without a ring would.
 */
static int open_result(struct pc_openq *q, int res, int dirfd, const char *name, int flags)
{
	if (q->cached && res != -EAGAIN && pc_sys_injected(PC_SYS_URING_CACHED) > 0) {
		/* the "uring_cached" fault point: as if the dcache had not answered */
		if (res >= 0)
			close(res);
		res = -EAGAIN;
	}
	if (q->cached && (res == -EAGAIN || res == -EINVAL)) {
		if (res == -EINVAL)
			q->cached = false;
		else
			q->uncached++;
		return open_here(dirfd, name, flags);
	}
	if (res == -EPERM && (flags & O_NOATIME))	/* not ours: no O_NOATIME */
		return open_here(dirfd, name, flags & ~O_NOATIME);
	return res;
}

/* Take the CQEs that are there: opens into fds, closes counted off. */
static unsigned reap(struct pc_openq *q, const char *const *names, int dirfd, int flags, int *fds)
{
	struct io_uring_cqe *cqe;
	unsigned head, n = 0, opens = 0;

	io_uring_for_each_cqe(&q->ring, head, cqe) {
		n++;
		if (cqe->user_data == CLOSE_TAG) {
			q->inflight--;
			continue;	/* a close that failed has nothing to undo */
		}
		if (fds && cqe->user_data < q->depth) {
			int i = (int)cqe->user_data;

			fds[i] = open_result(q, cqe->res, dirfd, names[i], flags);
			opens++;
		}
	}
	io_uring_cq_advance(&q->ring, n);
	return opens;
}

/*
 * The ring failed: what it did not take is done here, one call at a time;
 * what it took is waited for (an open that went to io-wq still lands in
 * fds), else given up as EIO. The ring is not used again.
 */
static void ring_failed(struct pc_openq *q, const char *const *names, int dirfd, int flags,
			int *fds, unsigned *waiting)
{
	unsigned untaken = io_uring_sq_ready(&q->ring);

	q->ring_ok = false;
	for (unsigned k = q->norder - (untaken < q->norder ? untaken : q->norder); k < q->norder;
	     k++) {
		struct sqe_of *s = &q->order[k];

		if (s->close) {
			close(s->arg);
			q->inflight--;
		} else {
			fds[s->arg] = open_here(dirfd, names[s->arg], flags);
			(*waiting)--;
		}
	}
	q->norder = 0;
	while (*waiting > 0 || q->inflight > 0) {
		struct io_uring_cqe *cqe;
		int rc = io_uring_wait_cqe(&q->ring, &cqe);

		if (rc == -EINTR)
			continue;
		if (rc < 0)
			break;
		*waiting -= reap(q, names, dirfd, flags, fds);
	}
	for (unsigned i = 0; fds && *waiting > 0 && i < q->depth; i++)
		if (fds[i] == PENDING) {
			fds[i] = -EIO;
			(*waiting)--;
		}
	q->inflight = 0;
}

/* Put the queued closes in the ring, ahead of what comes next. */
static void queue_closes(struct pc_openq *q)
{
	for (unsigned k = 0; k < q->nclose; k++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&q->ring);

		if (!sqe) {	/* cannot be: the ring holds depth closes and opens */
			close(q->closes[k]);
			continue;
		}
		io_uring_prep_close(sqe, q->closes[k]);
		io_uring_sqe_set_data64(sqe, CLOSE_TAG);
		q->order[q->norder++] = (struct sqe_of){ .close = true, .arg = q->closes[k] };
		q->inflight++;
	}
	q->nclose = 0;
}

/*
 * Submit what is prepared and wait until `waiting` opens are back.
 * Returns false if the ring failed (ring_failed() has done the rest).
 */
static bool submit(struct pc_openq *q, const char *const *names, int dirfd, int flags, int *fds,
		   unsigned *waiting)
{
	int retries = 0;

	while (*waiting > 0 || io_uring_sq_ready(&q->ring) > 0) {
		int e = pc_sys_injected(PC_SYS_URING_ENTER);
		int rc = e > 0 ? -e : io_uring_submit_and_wait(&q->ring, *waiting);

		if (rc >= 0) {
			unsigned left = io_uring_sq_ready(&q->ring);

			if (left > q->norder)
				left = q->norder;	/* cannot be: the ring was empty */
			for (unsigned k = 0; k < q->norder - left; k++)
				if (!q->order[k].close)
					atomic_fetch_add_explicit(&ring_opens, 1, memory_order_relaxed);
			/* taken: drop them from the record of what is untaken */
			memmove(q->order, q->order + (q->norder - left), left * sizeof(*q->order));
			q->norder = left;
		}
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			ring_failed(q, names, dirfd, flags, fds, waiting);
			return false;
		}
		if (rc < 0 && rc != -EINTR && ++retries > MAX_RETRIES) {
			ring_failed(q, names, dirfd, flags, fds, waiting);
			return false;
		}
		*waiting -= reap(q, names, dirfd, flags, fds);
	}
	q->norder = 0;
	return true;
}

void pc_openq_openat(struct pc_openq *q, int dirfd, const char *const *names, unsigned n,
		     int flags, int *ret_fd)
{
	unsigned waiting = 0;

	if (!q || !q->ring_ok) {	/* no queue (no memory for one) or no ring */
		pc_openq_flush(q);
		for (unsigned i = 0; i < n; i++)
			ret_fd[i] = open_checked(dirfd, names[i], flags);
		return;
	}
	q->norder = 0;
	queue_closes(q);
	if (q->by_hand) {
		/*
		 * Most opens of a recent call could not be done from the
		 * dcache: make them here for a while, the closes still queued.
		 */
		q->by_hand--;
		submit(q, NULL, -1, 0, NULL, &waiting);
		for (unsigned i = 0; i < n; i++)
			ret_fd[i] = open_checked(dirfd, names[i], flags);
		return;
	}
	/*
	 * openat2 with RESOLVE_CACHED: an open that the dcache cannot answer
	 * in an RCU walk comes back (EAGAIN) to be made here, in this thread,
	 * not in an io-wq worker (a thread switch a file: on this 2-core
	 * machine every open of some runs went there, under the other work).
	 * Not RESOLVE_BENEATH: the names are single components from
	 * getdents64, opened O_NOFOLLOW beneath dirfd, which is what it would
	 * promise, and its last check (path_is_under) takes the global
	 * mount_lock for every open. RESOLVE_NO_XDEV: a mount on a name
	 * comes back (EXDEV), for the caller to look at before it is opened.
	 */
	q->how = (struct open_how){ .flags = (uint64_t)(flags | O_CLOEXEC),
				    .resolve = RESOLVE_NO_XDEV | RESOLVE_NO_MAGICLINKS |
					       (q->cached ? RESOLVE_CACHED : 0) };
	for (unsigned i = 0; i < n && i < q->depth; i++) {
		struct io_uring_sqe *sqe;
		int e;

		while ((e = pc_sys_injected(PC_SYS_OPEN)) == EINTR)
			;	/* as a real EINTR would be: retried */
		if (e > 0) {
			ret_fd[i] = -e;
			continue;
		}
		sqe = io_uring_get_sqe(&q->ring);
		if (!sqe) {	/* cannot be (see queue_closes) */
			ret_fd[i] = open_here(dirfd, names[i], flags);
			continue;
		}
		io_uring_prep_openat2(sqe, dirfd, names[i], &q->how);
		io_uring_sqe_set_data64(sqe, i);
		q->order[q->norder++] = (struct sqe_of){ .close = false, .arg = (int)i };
		ret_fd[i] = PENDING;
		waiting++;
	}
	for (unsigned i = q->depth; i < n; i++)	/* more than asked for: one by one */
		ret_fd[i] = open_checked(dirfd, names[i], flags);
	q->uncached = 0;
	submit(q, names, dirfd, flags, ret_fd, &waiting);
	/*
	 * RCU path walks failing (other work here changing mounts makes every
	 * one fail for a while): each open would cost the ring's try and a
	 * system call. The next BY_HAND calls make them here at once.
	 */
	if (n >= 4 && 2 * q->uncached >= n)
		q->by_hand = BY_HAND;
}

void pc_openq_flush(struct pc_openq *q)
{
	unsigned none = 0;

	if (!q || !q->nclose)
		return;
	if (!q->ring_ok) {
		for (unsigned k = 0; k < q->nclose; k++)
			close(q->closes[k]);
		q->nclose = 0;
		return;
	}
	q->norder = 0;
	queue_closes(q);
	submit(q, NULL, -1, 0, NULL, &none);
}

void pc_openq_close(struct pc_openq *q, int fd)
{
	if (fd < 0)
		return;
	if (!q || !q->ring_ok) {
		close(fd);
		return;
	}
	if (q->nclose == q->depth)
		pc_openq_flush(q);
	q->closes[q->nclose++] = fd;
}

void pc_openq_free(struct pc_openq *q)
{
	if (!q)
		return;
	pc_openq_flush(q);
	if (q->made) {
		/* a close that went to io-wq (a file with ->flush) is waited for */
		while (q->inflight > 0) {
			struct io_uring_cqe *cqe;
			int rc = io_uring_wait_cqe(&q->ring, &cqe);

			if (rc == -EINTR)
				continue;
			if (rc < 0)
				break;
			reap(q, NULL, -1, 0, NULL);
		}
	}
	if (q->made)
		io_uring_queue_exit(&q->ring);
	free(q->closes);
	free(q->order);
	free(q);
}
