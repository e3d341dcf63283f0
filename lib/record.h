/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record.h: the recording's engine, trace events -> the pages each file
 * was used of, in order, by the paths the processes saw (lib/record.c).
 * Internal to pagecache (not in pagecache.h: the API is not settled): used
 * by src/commands/cmd-record.c, tested by tests/unit/test-record.c.
 *
 * A recording: pc_rec_new(); every event to pc_rec_event() (a
 * pc_trace_drain() callback), and pc_rec_scan() after each drain, while
 * the traced processes still hold their files; once tracing is over,
 * pc_rec_resolve() makes the files paths with their used pages and
 * times, sorted by path, as pc_profile_add() takes them. Nothing is held
 * open between calls. Never prints, never exits: failures go to
 * on_error, counts to the result.
 */
#ifndef PC_RECORD_H
#define PC_RECORD_H

#include "pagecache.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pc_rec;

struct pc_rec_opts {
	size_t size;			/* sizeof(struct pc_rec_opts) */
	uint32_t self;			/* events of this pid (our own reads) are left out */
	bool misses;			/* no use events (before 6.12): pages added are used */
	uint64_t t0_ns;			/* CLOCK_MONOTONIC at the start: times are ms since */
};

struct pc_rec_stats {
	uint64_t events;		/* events of the workload kept */
	uint64_t added_pages;		/* pages brought into the cache */
	bool nomem;			/* some events not kept: out of memory */
};

struct pc_rec_resolve_opts {
	size_t size;			/* sizeof(struct pc_rec_resolve_opts) */
	const char *root;		/* paths are kept relative to it (resolved) */
	dev_t root_dev;			/* its device: that disk's metadata is kept */
	/* optional: true cuts the end short (what is resolved is kept) */
	bool (*stop)(void *arg);
	/* optional: a file that could not be kept (err: errno) */
	void (*on_error)(void *arg, const char *path, const char *what, int err);
	void *arg;
};

struct pc_rec_result {
	uint64_t files, bdevs;		/* files kept; block devices' metadata kept */
	uint64_t pages, meta_pages;	/* pages used; of metadata */
	uint64_t mapped;		/* pages mapped around a fault only: cached, not used */
	uint64_t unresolved, deleted, outside, unused;
	uint64_t other_bdevs;		/* metadata of devices under no file kept: left out */
	uint64_t cut;			/* files not looked for: stop() cut the end short */
	struct pc_profile_file *pf;	/* by path */
	size_t npf, cap;
};

/* 0 or -errno (-EINVAL: an opts of another size) */
int pc_rec_new(const struct pc_rec_opts *o, struct pc_rec **ret);
/* One event (a pc_trace_drain callback: arg is the struct pc_rec); always 0. */
int pc_rec_event(const struct pc_trace_event *e, void *arg);
/* Where the files new since the last scan are: the processes' handles, else by handle. */
void pc_rec_scan(struct pc_rec *r);
void pc_rec_stats(const struct pc_rec *r, struct pc_rec_stats *ret);
/* The end: the files with their paths and pages into *ret. 0 or -EINVAL. */
int pc_rec_resolve(struct pc_rec *r, const struct pc_rec_resolve_opts *o,
		   struct pc_rec_result *ret);
void pc_rec_result_release(struct pc_rec_result *res);
void pc_rec_free(struct pc_rec *r);	/* NULL-safe */

#endif
