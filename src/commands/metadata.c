/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metadata.c: filesystem metadata for snapshot and restore (metadata.h).
 *
 * What is recorded is a block device's whole page cache: the filesystem's
 * metadata, and also whatever anyone read through /dev/X. A device is
 * found only from a filesystem's st_dev (lib/bdev.c checks it is that
 * block device); the name a snapshot holds is shown, never opened. A
 * device that cannot be had (the kernel refuses it, as this VM's root disk
 * does; no block device under tmpfs or overlayfs; not found) is said once
 * and left out: metadata is an addition to the files, never a reason for
 * their snapshot or restore to fail.
 */
#define _GNU_SOURCE
#include "commands/metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void row(struct meta_set *ms, const char *name, uint64_t dev, uint64_t size,
		uint64_t pages, const uint64_t *cached, const uint64_t *read, const char *status)
{
	pc_meta_row_add(&ms->rows, &ms->nrows, &ms->rowcap, name, dev, size, pages, cached, read,
			status);
}

void meta_snapshot_device(struct meta_set *ms, const struct pc_snapshot_device *d)
{
	char num[32];

	if (d->err) {
		snprintf(num, sizeof(num), "%u:%u", major(d->dev), minor(d->dev));
		/* said once per device, with one of its files to know it by */
		if (!ms->devices_refused)
			cli_warn("metadata of '%s' not recorded: block device %s (%s): %s", d->file,
				 num, d->name, pc_bdev_strerror(d->err));
		row(ms, d->name, d->dev, 0, 0, NULL, NULL, pc_bdev_strerror(d->err));
		ms->unavailable++;
		return;
	}
	ms->devices++;
	ms->pages += d->pages;
	row(ms, d->name, d->dev, d->size, d->pages, NULL, NULL, "recorded");
}

void meta_report(struct meta_set *ms, struct orec *rec, bool restore)
{
	orec_u64(rec, "metadata_devices", ms->devices, 0);
	orec_u64(rec, "metadata_pages", ms->pages, OF_PAGES);
	if (restore) {
		orec_u64(rec, "metadata_cached_before", ms->cached, OF_PAGES);
		orec_u64(rec, "metadata_read", ms->read, OF_PAGES);
	}
	orec_u64(rec, "metadata_skipped", ms->unavailable, 0);
	/* directories: recorded (snapshot), read through the filesystem (restore) */
	if (!restore) {
		orec_u64(rec, "metadata_dirs", ms->dirs, 0);
	} else {
		orec_u64(rec, "metadata_dirs_wanted", ms->dirs_wanted, 0);
		orec_u64(rec, "metadata_dirs_read", ms->dirs, 0);
		orec_u64(rec, "metadata_entries", ms->entries, 0);
		orec_u64(rec, "metadata_dirs_skipped", ms->dirs_skipped, 0);
		orec_u64(rec, "metadata_stat_failed", ms->stat_failed, 0);
		orec_u64(rec, "metadata_dirs_by_device", ms->dirs_by_device, 0);
	}
	if (!ms->nrows)
		orec_list_add(rec, "metadata", NULL);	/* [] */
	for (size_t i = 0; i < ms->nrows; i++) {
		const struct pc_meta_row *m = &ms->rows[i];
		struct orec r = { 0 };
		char num[32];

		snprintf(num, sizeof(num), "%u:%u", major(m->dev), minor(m->dev));
		orec_str(&r, "device", m->name, 0);
		orec_str(&r, "dev", num, 0);
		orec_u64(&r, "size", m->size, OF_BYTES);
		orec_u64(&r, "pages", m->pages, OF_PAGES);
		if (m->has_cached)
			orec_u64(&r, "cached", m->cached, OF_PAGES);
		if (m->has_read)
			orec_u64(&r, "read", m->read, OF_PAGES);
		orec_str(&r, "status", m->status, 0);
		orec_list_add(rec, "metadata", &r);
	}
}

void meta_human(const struct meta_set *ms, bool restore, bool dry)
{
	char a[32], names[256] = "";
	size_t len = 0;

	if (!restore && ms->dirs)
		out_human_line("Directories: %llu recorded (their metadata, for restore)%s",
			       (unsigned long long)ms->dirs, ms->dirs_failed ? ", some left out" : "");
	if (restore && ms->dirs_wanted) {
		if (dry)
			out_human_line("Directories: %llu to read through the filesystem",
				       (unsigned long long)ms->dirs_wanted);
		else
			out_human_line("Directories: %llu of %llu read through the filesystem, "
				       "%llu entries statted, %llu gone or not directories, %llu "
				       "failed", (unsigned long long)ms->dirs,
				       (unsigned long long)ms->dirs_wanted,
				       (unsigned long long)ms->entries,
				       (unsigned long long)ms->dirs_skipped,
				       (unsigned long long)ms->stat_failed);
	}
	if (!ms->nrows)
		return;
	for (size_t i = 0; i < ms->nrows && len < sizeof(names) - 1; i++)
		if (ms->rows[i].done)
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s", len ? ", " : "",
						ms->rows[i].name);
	if (!restore)
		out_human_line("Metadata: %llu pages (%s) of %llu block device%s%s%s%s, %llu left out",
			       (unsigned long long)ms->pages, fmt_size(ms->pages * pc_page_size(), a,
			       sizeof(a)), (unsigned long long)ms->devices, ms->devices == 1 ? "" : "s",
			       len ? " (" : "", names, len ? ")" : "",
			       (unsigned long long)ms->unavailable);
	else
		out_human_line("Metadata: %llu pages wanted of %llu block device%s%s%s%s, %llu already "
			       "cached, %llu %s (%s), %llu left out",
			       (unsigned long long)ms->pages, (unsigned long long)ms->devices,
			       ms->devices == 1 ? "" : "s", len ? " (" : "", names, len ? ")" : "",
			       (unsigned long long)ms->cached,
			       (unsigned long long)(dry ? ms->pages - ms->cached : ms->read),
			       dry ? "to read" : "read",
			       fmt_size((dry ? ms->pages - ms->cached : ms->read) * pc_page_size(), a,
					sizeof(a)), (unsigned long long)ms->unavailable);
}

void meta_release(struct meta_set *ms)
{
	free(ms->rows);
	memset(ms, 0, sizeof(*ms));
}
