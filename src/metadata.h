/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metadata.h: filesystem metadata in snapshots and restores: `snapshot
 * --metadata` records the cache of the block devices under the files
 * (PC_IDENT_BDEV records), `restore` reads such records back first. The
 * work is lib/bdev.c's (and lib/snapshot.c's, which chooses the devices a
 * snapshot records); this is what the two commands share: messages, and
 * the totals they print.
 */
#ifndef PC_METADATA_H
#define PC_METADATA_H

#include "cli.h"

/* a filesystem the snapshot's files were on, and one of its files (restore) */
struct meta_fs {
	uint64_t dev, fsid;		/* as recorded */
	char *path;			/* a file of it, relative to the root */
};

/* one device's line in the "metadata" list */
struct meta_row {
	char name[PC_BDEV_NAME_MAX];	/* as the kernel names it (restore: now) */
	uint64_t dev, size, pages, cached, read;
	bool has_cached, has_read;
	bool done;			/* recorded, or read back (or counted: --dry-run) */
	char status[256];		/* "recorded", "ok", or why not */
};

struct meta_set {
	struct pc_profile_file *recs;	/* restore: the BDEV records read */
	size_t n, cap;
	struct meta_fs *fs;		/* restore: the recorded filesystems */
	size_t nfs, fscap;
	bool skip;			/* restore --no-metadata */
	struct meta_row *rows;		/* per device, for JSON and key=value */
	size_t nrows, rowcap;
	uint64_t devices;		/* devices recorded or read */
	uint64_t pages, cached, read;	/* pages recorded / wanted, cached before, read */
	uint64_t unavailable;		/* records or devices left out (said on stderr) */
};

/* The words for a refusal of --metadata (and restore's note). */
#define META_NEEDS_ROOT "needs root (CAP_DAC_READ_SEARCH and CAP_FOWNER: block devices are root's)"

/*
 * snapshot --metadata: a device the engine (lib/snapshot.c) recorded, or
 * left out: said once, with one of its files to know it by (not a
 * failure); its row and the totals.
 */
void meta_snapshot_device(struct meta_set *ms, const struct pc_snapshot_device *d);

/*
 * restore, as the snapshot is read: a BDEV record is kept (returns true:
 * f is the set's now; its runs in snap_ps pages made ours); a file's
 * filesystem is noted (false).
 */
bool meta_take(struct meta_set *ms, struct pc_profile_file *f, int snap_ps);
/*
 * restore, before the files: each record's pages read back through the
 * device under the filesystem it was taken of (found from the root, or a
 * recorded file of that filesystem opened beneath it; by f_fsid, by
 * st_dev only at the snapshot's own place), within the budget (b NULL:
 * none could be had; nothing is read). dry: only counted.
 */
void meta_restore(struct meta_set *ms, int rootfd, bool same_place, struct pc_budget *b, bool dry);
/* The totals into rec ("metadata_*" and the "metadata" list). */
void meta_report(struct meta_set *ms, struct orec *rec, bool restore);
/* The people's line, or none when there were no records. */
void meta_human(const struct meta_set *ms, bool restore, bool dry);
void meta_release(struct meta_set *ms);

#endif
