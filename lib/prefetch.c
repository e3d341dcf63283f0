/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * prefetch.c: the warming engine.
 *
 * readahead(2), fadvise(WILLNEED) and their io_uring forms read at most
 * max(read_ahead_kb, max_sectors_kb) per call and drop the rest without a
 * word; under memory pressure they stop early, also without a word. So a
 * warmer that trusts them lies. This one issues reads in chunks no larger
 * than the device's per-call cap, keeps a bounded window of bytes and
 * files in flight, and then verifies each file with mincore (uptodate
 * pages only, unlike cachestat, which counts reads still in flight). It
 * waits for a missing page with a one-byte pread (which blocks on the
 * page's I/O or reads it synchronously), re-issues what fell short, and
 * only calls a file done when every page is resident. It never touches a
 * mapping, so a file that shrinks under it ends the file, not the process.
 *
 * (Proving small files by reading them whole was tried: one system call
 * instead of three, but the copy made a warm of 100,000 small files 2x
 * slower on the machine it was measured on. mincore it is.)
 *
 * Engines: plain readahead() calls from the walker's threads (the thread
 * pool; the default), or io_uring FADVISE SQEs through liburing, submitted
 * in batches. The kernel runs every FADVISE in an io-wq worker thread, so
 * on the 2-core machine this was measured on, io_uring was slower for both
 * small trees and big files (bench/foundation.sh); it stays selectable.
 *
 * A pc_warmer belongs to one thread: the walker's threads are the pool,
 * each with its own warmer (a ring, a window of files), so the hot path
 * takes no lock but the budget's. Budget and progress are shared.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define DEFAULT_WINDOW (64ull << 20)	/* bytes in flight per warmer */
#define MAX_FILES_IN_FLIGHT 128
#define RING_ENTRIES 256
#define MAX_STALLS 4			/* a page lost this often: memory pressure */
#define SMALL_PAGES 32			/* proven by one pread: 128 KiB */
#define SUBMIT_BATCH 32			/* SQEs per io_uring_enter */
#define CAP_CACHE 8

struct job {
	struct job *next;
	int fd;
	char *path;
	uint64_t size;			/* bytes, as seen at add (or after a shrink) */
	uint64_t *runs;			/* pairs (first page, count), ascending */
	size_t nruns;
	size_t run;			/* the run being verified */
	size_t ia_run;			/* issue-ahead cursor from add time: */
	uint64_t ia_pos;		/*   run and page reached */
	uint64_t first, end;		/* the current run: pages [first, end) */
	uint64_t issued;		/* pages up to here have had reads issued */
	uint64_t verified;		/* pages up to here are known resident */
	uint64_t pages, resident;	/* totals over all runs */
	uint64_t inflight;		/* this job's share of w->inflight */
	uint64_t read;			/* pages that were not cached at add */
	uint64_t cut;			/* pages of the runs the budget left out */
	uint64_t cut_cached;		/* pages past the cut cached all the same */
	uint64_t cap;			/* pages per readahead call */
	bool allowed;			/* mincore tells the truth for it */
	bool by_read;			/* proven by reading it */
	int err;
};

struct pc_warmer {
	struct pc_warm_opts o;
	struct io_uring ring;
	bool uring;
	unsigned sqes_pending;		/* prepared, not yet submitted */
	unsigned cqes_pending;		/* submitted, not yet reaped */
	struct job *head, *tail;	/* in flight, oldest first */
	unsigned njobs;
	uint64_t inflight;		/* pages issued but not verified */
	struct job *done_head, *done_tail;
	struct job *last_popped;
	char *buf;			/* SMALL_PAGES pages for proving reads */
	struct { dev_t dev; uint64_t cap; } caps[CAP_CACHE];
	unsigned ncaps;
};

static uint64_t read_kb(const char *fmt, unsigned maj, unsigned min)
{
	char path[256];
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), fmt, maj, min);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &v) != 1)
		v = 0;
	fclose(f);
	return v << 10;
}

uint64_t pc_fd_readahead_cap(int fd, const struct stat *st)
{
	dev_t dev = S_ISBLK(st->st_mode) ? st->st_rdev : st->st_dev;
	unsigned maj = major(dev), min = minor(dev);
	uint64_t ra, io;

	(void)fd;
	/* Whole disks and non-block filesystems have a bdi of their own. */
	ra = read_kb("/sys/class/bdi/%u:%u/read_ahead_kb", maj, min);
	io = read_kb("/sys/dev/block/%u:%u/queue/max_sectors_kb", maj, min);
	if (!ra)	/* a partition: the disk's queue is one level up */
		ra = read_kb("/sys/dev/block/%u:%u/../queue/read_ahead_kb", maj, min);
	if (!io)
		io = read_kb("/sys/dev/block/%u:%u/../queue/max_sectors_kb", maj, min);
	if (io > ra)
		ra = io;
	if (ra < (128u << 10))
		ra = 128u << 10;	/* the kernel's default read_ahead_kb */
	return ra;
}

static uint64_t cap_pages(struct pc_warmer *w, int fd, const struct stat *st)
{
	uint64_t cap;

	if (w->o.chunk)
		return w->o.chunk / pc_page_size() ? w->o.chunk / pc_page_size() : 1;
	for (unsigned i = 0; i < w->ncaps; i++)
		if (w->caps[i].dev == st->st_dev)
			return w->caps[i].cap;
	cap = pc_fd_readahead_cap(fd, st) / pc_page_size();
	if (w->ncaps < CAP_CACHE) {
		w->caps[w->ncaps].dev = st->st_dev;
		w->caps[w->ncaps++].cap = cap;
	}
	return cap;
}

int pc_warmer_new(const struct pc_warm_opts *o, struct pc_warmer **ret)
{
	struct pc_warmer *w = calloc(1, sizeof(*w));

	if (!w)
		return -ENOMEM;
	w->o = *o;
	if (!w->o.window)
		w->o.window = DEFAULT_WINDOW;
	w->buf = malloc(SMALL_PAGES * pc_page_size());
	if (!w->buf) {
		free(w);
		return -ENOMEM;
	}
	if (o->engine == PC_ENGINE_URING) {
		int rc = pc_sys_uring_check();

		if (rc == 0)
			rc = io_uring_queue_init(RING_ENTRIES, &w->ring, 0);
		if (rc == 0) {
			unsigned workers[2] = { 4, 4 };

			/* Bound the io-wq threads that run the FADVISE work. */
			io_uring_register_iowq_max_workers(&w->ring, workers);
			w->uring = true;
		} else if (o->engine == PC_ENGINE_URING) {
			free(w->buf);
			free(w);
			return rc;
		}
	}
	*ret = w;
	return 0;
}

const char *pc_warmer_engine(const struct pc_warmer *w)
{
	return w->uring ? "io_uring" : "readahead";
}

static void reap(struct pc_warmer *w, bool wait)
{
	struct io_uring_cqe *cqe;

	while (w->cqes_pending) {
		int rc = wait ? io_uring_wait_cqe(&w->ring, &cqe)
			      : io_uring_peek_cqe(&w->ring, &cqe);

		if (rc < 0)
			break;
		/* Errors show up again in verification; nothing to keep. */
		io_uring_cqe_seen(&w->ring, cqe);
		w->cqes_pending--;
	}
}

static void submit(struct pc_warmer *w)
{
	if (w->uring && w->sqes_pending) {
		int n = io_uring_submit(&w->ring);

		if (n > 0) {
			w->cqes_pending += (unsigned)n;
			w->sqes_pending -= (unsigned)n < w->sqes_pending ? (unsigned)n : w->sqes_pending;
		}
		reap(w, false);
	}
}

/* Issue one read of at most cap pages; errors surface in verification. */
static void issue(struct pc_warmer *w, struct job *j, uint64_t page, uint64_t n)
{
	uint64_t ps = pc_page_size();

	if (w->uring) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

		if (!sqe) {
			submit(w);
			if (w->cqes_pending >= RING_ENTRIES)
				reap(w, true);
			sqe = io_uring_get_sqe(&w->ring);
		}
		if (sqe) {
			io_uring_prep_fadvise(sqe, j->fd, page * ps, (off_t)(n * ps),
					      POSIX_FADV_WILLNEED);
			w->sqes_pending++;
			return;
		}
	}
	pc_sys_readahead(j->fd, page * ps, n * ps);
}

/* Wait for the budget's pace, then issue reads up to page `to`. */
static void issue_upto(struct pc_warmer *w, struct job *j, uint64_t to)
{
	uint64_t most = j->cap;

	if (to > j->end)
		to = j->end;
	/*
	 * Paced: an eighth of a second's reads at a time, not a whole chunk,
	 * so that the progress moves while a chunk waits its turn (a file of
	 * one chunk at --rate 1M sat at 0% to the end).
	 */
	if (j->read && w->o.budget->rate) {
		uint64_t piece = w->o.budget->rate / 8 / pc_page_size();

		most = piece < 1 ? 1 : piece < most ? piece : most;
	}
	while (j->issued < to) {
		uint64_t n = to - j->issued < most ? to - j->issued : most;

		if (j->read)	/* cached already: costs the disk nothing */
			pc_budget_pace(w->o.budget, n * pc_page_size());
		issue(w, j, j->issued, n);
		if (w->o.progress)	/* live, not only when a file ends */
			__atomic_add_fetch(&w->o.progress->bytes, n * pc_page_size(),
					   __ATOMIC_RELAXED);
		j->issued += n;
		w->inflight += n;
		j->inflight += n;
	}
}

/* n pages of j that were in flight are now known resident */
static void settle(struct pc_warmer *w, struct job *j, uint64_t n)
{
	if (n > j->inflight)
		n = j->inflight;
	j->inflight -= n;
	w->inflight -= n < w->inflight ? n : w->inflight;

}

static void job_free(struct job *j)
{
	if (!j)
		return;
	if (j->fd >= 0)
		close(j->fd);
	free(j->path);
	free(j->runs);
	free(j);
}

struct first_missing {
	uint64_t page, n;
	bool found;
};

static int find_missing(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct first_missing *m = arg;

	if (resident)
		return 0;
	m->page = first;
	m->n = n;
	m->found = true;
	return 1;
}

/*
 * Read the rest of the range: a buffered read leaves every page it returns
 * in the cache, so this proves residency honestly where mincore may not be
 * asked (or costs more than the read).
 */
static void finish_by_reading(struct pc_warmer *w, struct job *j)
{
	uint64_t ps = pc_page_size();

	j->by_read = true;
	while (j->verified < j->end) {
		uint64_t want = j->end - j->verified < SMALL_PAGES ? j->end - j->verified : SMALL_PAGES;
		long n = pc_sys_pread(j->fd, w->buf, want * ps, j->verified * ps);

		if (n < 0) {
			j->err = (int)-n;
			return;
		}
		if (n == 0) {	/* shrank under us */
			j->end = j->verified;
			j->err = ESTALE;
			return;
		}
		j->verified += ((uint64_t)n + ps - 1) / ps;
		if ((uint64_t)n < want * ps && j->verified < j->end) {
			struct stat st;

			/* a short read: EOF moved; the next read says 0 if so */
			if (fstat(j->fd, &st) == 0 && (uint64_t)st.st_size <= j->verified * ps) {
				j->end = j->verified;
				j->err = ESTALE;
				return;
			}
		}
	}
	if (j->verified > j->end)
		j->verified = j->end;
}

/* Bring the current run to its end: every page resident, or an error. */
static void complete_run(struct pc_warmer *w, struct job *j)
{
	uint64_t ps = pc_page_size(), window = w->o.window / ps, last_wait = UINT64_MAX;
	unsigned stalls = 0;

	if (!j->allowed) {
		issue_upto(w, j, j->end);
		submit(w);
		finish_by_reading(w, j);
		return;
	}
	while (j->verified < j->end && !j->err) {
		struct first_missing m = { 0 };
		int rc;

		issue_upto(w, j, j->verified + (window ? window : 1));
		submit(w);
		rc = pc_fd_scan_mapped(j->fd, j->size, j->verified * ps,
				       (j->issued - j->verified) * ps, find_missing, &m);
		if (rc < 0) {
			j->err = -rc;
			break;
		}
		if (!m.found) {
			uint64_t done = j->issued - j->verified;

			settle(w, j, done);
			j->verified = j->issued;
			continue;
		}
		settle(w, j, m.page - j->verified);
		j->verified = m.page;
		if (m.page == last_wait && ++stalls >= MAX_STALLS) {
			/* Read, then gone again: reclaim takes pages as fast as we add. */
			j->err = ENOMEM;
			break;
		}
		if (m.page != last_wait)
			stalls = 0;
		last_wait = m.page;
		/* Blocks on the page's read if it is in flight, else reads it. */
		long n = pc_sys_pread(j->fd, w->buf, 1, m.page * ps);
		if (n < 0) {
			j->err = (int)-n;
			break;
		}
		if (n == 0) {
			struct stat st;

			/* The file shrank: warm what is left of it. */
			if (fstat(j->fd, &st) < 0) {
				j->err = errno;
				break;
			}
			j->size = (uint64_t)st.st_size;
			if ((j->size + ps - 1) / ps < j->end)
				j->end = (j->size + ps - 1) / ps;
			if (j->issued > j->end)
				j->issued = j->end;
			j->err = j->verified >= j->end ? ESTALE : 0;
			if (j->err)
				break;
			continue;
		}
		/*
		 * Pages of this run that are not even in the cache (cachestat
		 * counts reads in flight) were dropped: ask for them again.
		 */
		if (m.n > 1) {
			struct pc_cachestat cs;

			if (pc_sys_cachestat(j->fd, (m.page + 1) * ps, (m.n - 1) * ps, &cs) < 0 ||
			    cs.cache < m.n - 1)
				for (uint64_t p = m.page + 1; p < m.page + m.n; p += j->cap)
					pc_sys_readahead(j->fd, p * ps,
							 (m.page + m.n - p < j->cap ? m.page + m.n - p
										   : j->cap) * ps);
		}
	}
	if (j->verified > j->end)
		j->verified = j->end;
}

struct misses {
	const uint64_t *runs;
	size_t nruns, idx;
	uint64_t *seg;			/* pairs: missing pages inside runs */
	size_t nseg, cap;
	uint64_t missing;
};

/* Keep the parts of a non-resident stretch that lie in the job's runs. */
static int collect_missing(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct misses *m = arg;

	if (resident)
		return 0;
	while (m->idx < m->nruns && m->runs[2 * m->idx] + m->runs[2 * m->idx + 1] <= first)
		m->idx++;
	for (size_t k = m->idx; k < m->nruns && m->runs[2 * k] < first + n; k++) {
		uint64_t s = m->runs[2 * k] > first ? m->runs[2 * k] : first;
		uint64_t e = m->runs[2 * k] + m->runs[2 * k + 1];

		if (e > first + n)
			e = first + n;
		if (e <= s)
			continue;
		if (m->nseg == m->cap) {
			size_t nc = m->cap ? m->cap * 2 : 64;
			uint64_t *ns = realloc(m->seg, nc * 2 * sizeof(*ns));

			if (!ns)
				return -ENOMEM;
			m->seg = ns;
			m->cap = nc;
		}
		m->seg[2 * m->nseg] = s;
		m->seg[2 * m->nseg + 1] = e - s;
		m->nseg++;
		m->missing += e - s;
	}
	return 0;
}

/*
 * A job of many runs (a restore): issue them all, then check the whole
 * span with one mincore scan a round instead of one a run, waiting on the
 * last missing page (reads finish roughly in order) between rounds.
 */
static void complete_many(struct pc_warmer *w, struct job *j)
{
	uint64_t ps = pc_page_size(), prev = UINT64_MAX, eof = (j->size + ps - 1) / ps;
	struct misses m = { .runs = j->runs, .nruns = j->nruns };
	unsigned stalls = 0;

	for (j->run = 0; j->run < j->nruns; j->run++) {
		j->first = j->runs[2 * j->run];
		j->end = j->first + j->runs[2 * j->run + 1];
		j->issued = j->run < j->ia_run ? j->end
			    : j->run == j->ia_run && j->ia_pos > j->first ? j->ia_pos : j->first;
		issue_upto(w, j, j->end);
	}
	submit(w);
	for (;;) {
		uint64_t lo = j->runs[0], hi = j->runs[2 * j->nruns - 2] + j->runs[2 * j->nruns - 1];
		long got;
		int rc;

		m.nseg = m.idx = 0;
		m.missing = 0;
		if (hi > eof)
			hi = eof;
		rc = lo < hi ? pc_fd_scan_mapped(j->fd, j->size, lo * ps, (hi - lo) * ps,
						 collect_missing, &m) : 0;
		if (rc < 0) {
			j->err = -rc;
			break;
		}
		if (!m.missing)
			break;
		if (m.missing >= prev && ++stalls >= MAX_STALLS) {
			j->err = ENOMEM;	/* reclaim takes pages as fast as we add */
			break;
		}
		prev = m.missing;
		got = pc_sys_pread(j->fd, w->buf, 1, m.seg[2 * m.nseg - 2] * ps);
		if (got < 0) {
			j->err = (int)-got;
			break;
		}
		if (got == 0) {
			struct stat st;

			if (fstat(j->fd, &st) < 0) {
				j->err = errno;
				break;
			}
			j->size = (uint64_t)st.st_size;
			eof = (j->size + ps - 1) / ps;
			j->err = ESTALE;	/* pages the snapshot wanted are gone */
			continue;
		}
		for (size_t k = 0; k < m.nseg; k++) {
			struct pc_cachestat cs;
			uint64_t s = m.seg[2 * k], n = m.seg[2 * k + 1];

			/* re-ask only what left the cache (cachestat counts reads in flight) */
			if (pc_sys_cachestat(j->fd, s * ps, n * ps, &cs) < 0 || cs.cache < n)
				for (uint64_t p = s; p < s + n; p += j->cap)
					pc_sys_readahead(j->fd, p * ps,
							 (s + n - p < j->cap ? s + n - p : j->cap) * ps);
		}
	}
	/* what is resident: the runs' pages inside the file, less what is missing */
	for (size_t k = 0; k < j->nruns; k++) {
		uint64_t s = j->runs[2 * k], e = s + j->runs[2 * k + 1];

		if (e > eof)
			e = eof;
		if (e > s)
			j->resident += e - s;
	}
	j->resident -= m.missing < j->resident ? m.missing : j->resident;
	settle(w, j, j->inflight);
	free(m.seg);
}

/* Every run of the job, in order, each resident or an error. */
static void complete(struct pc_warmer *w, struct job *j)
{
	uint64_t ps = pc_page_size();

	if (j->nruns > 1 && j->allowed) {
		complete_many(w, j);
		return;
	}
	for (j->run = 0; j->run < j->nruns && !j->err; j->run++) {
		uint64_t first = j->runs[2 * j->run], end = first + j->runs[2 * j->run + 1];
		uint64_t eof = (j->size + ps - 1) / ps;

		if (end > eof)
			end = eof;	/* the file shrank since add */
		if (first >= end)
			continue;
		j->first = first;
		j->end = end;
		j->verified = first;
		j->issued = j->run < j->ia_run ? end : j->run == j->ia_run && j->ia_pos > first
								   ? (j->ia_pos < end ? j->ia_pos : end)
								   : first;
		complete_run(w, j);
		j->resident += j->verified - first;
	}
}

static void finish_oldest(struct pc_warmer *w)
{
	struct job *j = w->head;

	if (!j)
		return;
	complete(w, j);
	w->head = j->next;
	if (!w->head)
		w->tail = NULL;
	w->njobs--;
	/* pages issued ahead for runs that vanished (a shrink) or failed */
	w->inflight -= j->inflight < w->inflight ? j->inflight : w->inflight;
	j->inflight = 0;
	if (w->o.progress) {
		__atomic_add_fetch(&w->o.progress->files, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&w->o.progress->read, j->read * pc_page_size(),
				   __ATOMIC_RELAXED);
	}
	close(j->fd);
	j->fd = -1;
	j->next = NULL;
	if (w->done_tail)
		w->done_tail->next = j;
	else
		w->done_head = j;
	w->done_tail = j;
}

struct nth_missing {
	uint64_t need;			/* uncached pages still to pass */
	uint64_t stop;			/* the page after the need-th one */
	uint64_t cached_after;		/* cached pages past the stop */
	bool found;
};

static int count_missing(uint64_t first, uint64_t n, bool resident, void *arg)
{
	struct nth_missing *m = arg;

	if (m->found) {
		if (resident)
			m->cached_after += n;
		return 0;
	}
	if (resident)
		return 0;
	if (n < m->need) {
		m->need -= n;
		return 0;
	}
	m->stop = first + m->need;
	m->need = 0;
	m->found = true;
	return 0;
}

/*
 * The budget granted `got` of the j->read pages the runs lack: keep the
 * runs up to the got-th uncached page and drop the rest. Runs that lack
 * nothing, or lack fewer pages than said (the cache grew since), are kept
 * whole: they cost no more than granted. Of what is dropped, the pages
 * cached all the same are counted apart (j->cut_cached: resident, not
 * cut; a file whose cold start is cut is not "2304 cached, 256 said"),
 * j->cut counts the others.
 */
static void cut_runs(struct job *j, uint64_t got)
{
	uint64_t ps = pc_page_size(), kept = 0;
	struct nth_missing m = { .need = got };
	size_t i, nkeep = j->nruns;

	for (i = 0; i < j->nruns; i++) {
		uint64_t a = j->runs[2 * i], n = j->runs[2 * i + 1];
		struct nth_missing was = m;
		int rc = -1;

		if (was.found && !j->allowed)
			break;		/* nothing known to be cached past the cut */
		if (j->allowed)
			rc = pc_fd_scan_mapped(j->fd, j->size, a * ps, n * ps, count_missing, &m);
		if (rc < 0) {	/* no mincore: every page counts as uncached */
			m = was;
			if (!m.found && n >= m.need) {
				m.found = true;
				m.stop = a + m.need;
				m.need = 0;
			} else if (!m.found) {
				m.need -= n;
			}
		}
		if (was.found)
			continue;
		if (m.found) {
			j->runs[2 * i + 1] = m.stop - a;
			kept += m.stop - a;
			nkeep = i + 1;
		} else {
			kept += n;
		}
	}
	j->nruns = nkeep;
	j->cut_cached = m.cached_after;
	j->cut = j->pages - kept - m.cached_after;
	j->pages = kept;
}

int pc_warmer_add_runs(struct pc_warmer *w, int fd, const char *path, const struct stat *st,
		       const uint64_t *runs, size_t nruns)
{
	return pc_warmer_add_runs_flags(w, fd, path, st, runs, nruns, 0);
}

int pc_warmer_add_runs_flags(struct pc_warmer *w, int fd, const char *path, const struct stat *st,
			     const uint64_t *runs, size_t nruns, unsigned flags)
{
	uint64_t ps = pc_page_size(), size = (uint64_t)st->st_size, eof = (size + ps - 1) / ps;
	uint64_t left;
	struct job *j;
	int rc;

	if (w->o.budget->stopped) {
		close(fd);
		return -ENOSPC;
	}
	j = calloc(1, sizeof(*j));
	if (!j) {
		close(fd);
		return -ENOMEM;
	}
	j->fd = fd;	/* ours now; O_NONBLOCK does not affect regular-file reads */
	j->size = size;
	j->path = strdup(path);
	j->runs = malloc((nruns ? nruns : 1) * 2 * sizeof(*j->runs));
	if (!j->path || !j->runs) {
		job_free(j);
		return -ENOMEM;
	}
	/* keep the runs that lie in the file as it is now */
	for (size_t i = 0; i < nruns; i++) {
		uint64_t a = runs[2 * i], b = a + runs[2 * i + 1];

		if (b > eof)
			b = eof;
		if (a >= b)
			continue;
		j->runs[2 * j->nruns] = a;
		j->runs[2 * j->nruns + 1] = b - a;
		j->nruns++;
		j->pages += b - a;
	}
	if (j->pages) {
		struct pc_residency r;

		j->cap = cap_pages(w, j->fd, st);
		rc = pc_fd_residency(j->fd, size, 0, 0, &r);
		j->allowed = rc == 0 && r.source != PC_SRC_NONE;
		if (!j->allowed) {
			j->read = j->pages;
		} else if (j->nruns == 1 || r.cached == 0) {
			j->read = r.cached == 0 ? j->pages : 0;
			if (j->nruns == 1 && r.cached) {
				rc = pc_fd_residency(j->fd, size, j->runs[0] * ps, j->runs[1] * ps, &r);
				j->read = rc == 0 ? r.pages - r.cached : j->pages;
			}
		} else {
			/* what each run lacks: exact, one cachestat a run */
			for (size_t i = 0; i < j->nruns; i++) {
				rc = pc_fd_residency(j->fd, size, j->runs[2 * i] * ps,
						     j->runs[2 * i + 1] * ps, &r);
				j->read += rc == 0 ? r.pages - r.cached : j->runs[2 * i + 1];
			}
		}
		if (j->read && (flags & PC_WARM_WHOLE) &&
		    !pc_budget_take(w->o.budget, j->read * ps)) {
			job_free(j);
			return -ENOSPC;
		}
		if (j->read && !(flags & PC_WARM_WHOLE)) {
			/*
			 * What fits of it, not all or nothing: a database's
			 * few big files would otherwise get nothing inside a
			 * memory limit. The next add finds the budget stopped.
			 */
			uint64_t got = pc_budget_take_some(w->o.budget, j->read * ps, ps) / ps;

			if (!got) {
				job_free(j);
				return -ENOSPC;
			}
			if (got < j->read) {
				cut_runs(j, got);
				j->read = got;
			}
		}
		/* issue ahead, across runs, up to the window */
		left = w->o.window / ps ? w->o.window / ps : 1;
		for (j->ia_run = 0; j->ia_run < j->nruns && left; j->ia_run++) {
			j->first = j->runs[2 * j->ia_run];
			j->end = j->first + j->runs[2 * j->ia_run + 1];
			j->issued = j->first;
			issue_upto(w, j, j->end - j->first > left ? j->first + left : j->end);
			left -= j->issued - j->first;
			j->ia_pos = j->issued;
			if (j->issued < j->end)
				break;
		}
	}
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	w->njobs++;
	if (w->sqes_pending >= SUBMIT_BATCH)
		submit(w);
	while (w->head && (w->inflight * ps > w->o.window || w->njobs > MAX_FILES_IN_FLIGHT))
		finish_oldest(w);
	return 0;
}

int pc_warmer_add(struct pc_warmer *w, int fd, const char *path,
		  const struct stat *st, uint64_t off, uint64_t len)
{
	uint64_t ps = pc_page_size(), size = (uint64_t)st->st_size, run[2] = { 0, 0 };

	if (off < size) {
		uint64_t stop = (len == 0 || len > size - off) ? size : off + len;

		run[0] = off / ps;
		run[1] = (stop + ps - 1) / ps - run[0];
	}
	return pc_warmer_add_runs(w, fd, path, st, run, run[1] ? 1 : 0);
}

int pc_warmer_drain(struct pc_warmer *w)
{
	submit(w);
	while (w->head)
		finish_oldest(w);
	if (w->uring)
		reap(w, true);
	return w->o.budget->stopped ? -ENOSPC : 0;
}

int pc_warmer_next_result(struct pc_warmer *w, struct pc_warm_result *ret)
{
	struct job *j = w->done_head;

	job_free(w->last_popped);
	w->last_popped = NULL;
	if (!j)
		return 0;
	w->done_head = j->next;
	if (!w->done_head)
		w->done_tail = NULL;
	ret->path = j->path;
	ret->pages = j->pages + j->cut + j->cut_cached;
	ret->resident = j->resident + j->cut_cached;
	ret->read = j->read;
	ret->cut = j->cut;
	ret->err = j->err;
	ret->by_read = j->by_read;
	/* an empty file (or a range past its end) asks nothing of mincore: not denied */
	ret->denied = !j->allowed && ret->pages;
	w->last_popped = j;
	return 1;
}

void pc_warmer_free(struct pc_warmer *w)
{
	if (!w)
		return;
	pc_warmer_drain(w);
	while (w->done_head) {
		struct job *j = w->done_head;

		w->done_head = j->next;
		job_free(j);
	}
	job_free(w->last_popped);
	if (w->uring)
		io_uring_queue_exit(&w->ring);
	free(w->buf);
	free(w);
}
