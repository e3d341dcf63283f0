/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metadata.h: filesystem metadata in snapshots and restores: `snapshot
 * --metadata` records the cache of the block devices under the files
 * (PC_IDENT_BDEV records), `restore` reads such records back first. The
 * work is lib/bdev.c's and lib/restore.c's; this is what the two commands
 * share: snapshot's choice of devices, messages, and the totals they print
 * (restore's: its pc_restore_totals seen as a meta_set).
 */
#ifndef PC_METADATA_H
#define PC_METADATA_H

#include "cli.h"

struct meta_set {
	struct pc_profile_file *recs;	/* snapshot: the BDEV records made */
	size_t n, cap;
	struct pc_meta_row *rows;	/* per device, for JSON and key=value */
	size_t nrows, rowcap;
	uint64_t devices;		/* devices recorded or read */
	uint64_t pages, cached, read;	/* pages recorded / wanted, cached before, read */
	uint64_t unavailable;		/* records or devices left out (said on stderr) */
};

/* The words for a refusal of --metadata (and restore's note). */
#define META_NEEDS_ROOT PC_BDEV_NEEDS_ROOT

/*
 * snapshot --metadata: a record of each block device under the files
 * (distinct by st_dev), in ms->recs; a device that cannot be read is said
 * once, with one of its files (under root) to know it by, and left out
 * (not a failure).
 */
void meta_snapshot(struct meta_set *ms, const char *root, const struct pc_profile_file *files,
		   size_t n);

/* The totals into rec ("metadata_*" and the "metadata" list). */
void meta_report(struct meta_set *ms, struct orec *rec, bool restore);
/* The people's line, or none when there were no records. */
void meta_human(const struct meta_set *ms, bool restore, bool dry);
void meta_release(struct meta_set *ms);

#endif
