/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metadata.h: filesystem metadata in snapshots and restores: `snapshot
 * --metadata` records the cache of the block devices under the files
 * (PC_IDENT_BDEV records), `restore` reads such records back first. The
 * work is lib/bdev.c's, lib/snapshot.c's (which chooses the devices a
 * snapshot records) and lib/restore.c's (which reads them back); this is
 * what the two commands share: messages, and the totals they print
 * (restore's struct pc_restore_result seen as a meta_set).
 */
#ifndef PC_METADATA_H
#define PC_METADATA_H

#include "cli.h"

struct meta_set {
	struct pc_meta_row *rows;		/* per device, for JSON and key=value */
	size_t nrows, rowcap;
	uint64_t devices;		/* devices recorded or read */
	uint64_t pages, cached, read;	/* pages recorded / wanted, cached before, read */
	uint64_t unavailable;		/* records or devices left out (said on stderr) */
	/* directories: snapshot's recorded; restore's through the filesystem */
	uint64_t dirs;			/* recorded; restore: read (getdents, or named entries) */
	uint64_t dirs_failed;		/* snapshot: whose identity could not be had */
	bool devices_refused;		/* snapshot, not root: said once, not a device at a time */
	uint64_t dirs_wanted;		/* restore: to read (dry run: would) */
	uint64_t entries;		/* restore: entries statx()ed */
	uint64_t dirs_skipped;		/* restore: gone, not a directory, refused */
	uint64_t stat_failed;		/* restore: entries gone meanwhile, unreadable */
	uint64_t dirs_by_device;	/* restore: recorded, their device read instead */
};

/* The words for a refusal of --metadata (and restore's note). */
#define META_NEEDS_ROOT PC_BDEV_NEEDS_ROOT

/*
 * snapshot --metadata: a device the engine (lib/snapshot.c) recorded, or
 * left out: said once, with one of its files to know it by (not a
 * failure); its row and the totals.
 */
void meta_snapshot_device(struct meta_set *ms, const struct pc_snapshot_device *d);

/* The totals into rec ("metadata_*" and the "metadata" list). */
void meta_report(struct meta_set *ms, struct orec *rec, bool restore);
/* The people's line, or none when there were no records. */
void meta_human(const struct meta_set *ms, bool restore, bool dry);
void meta_release(struct meta_set *ms);

#endif
