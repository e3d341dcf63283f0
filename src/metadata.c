/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * metadata.c: filesystem metadata for snapshot and restore (metadata.h):
 * snapshot's records, and the lines both commands print (restore's
 * reading back is lib/restore.c's).
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
#include "metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static void row(struct meta_set *ms, const char *name, uint64_t dev, uint64_t size,
		uint64_t pages, const uint64_t *cached, const uint64_t *read, const char *status)
{
	struct pc_meta_row *r;

	if (cli_grow(&ms->rows, &ms->rowcap, ms->nrows, sizeof(*ms->rows)) < 0)
		return;
	r = &ms->rows[ms->nrows++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->status, sizeof(r->status), "%s", status);
	r->dev = dev;
	r->size = size;
	r->pages = pages;
	r->has_cached = cached;
	r->cached = cached ? *cached : 0;
	r->has_read = read;
	r->read = read ? *read : 0;
	r->done = cached || !strcmp(status, "recorded");
}

void meta_snapshot(struct meta_set *ms, const char *root, const struct pc_profile_file *files,
		   size_t n)
{
	uint64_t *devs = NULL;
	size_t ndevs = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct pc_profile_file *f = &files[i];
		struct pc_profile_file rec;
		char name[PC_BDEV_NAME_MAX], num[32];
		uint64_t pages;
		size_t k;
		int rc;

		for (k = 0; k < ndevs && devs[k] != f->dev; k++)
			;
		if (k < ndevs)
			continue;
		if (cli_grow(&devs, &cap, ndevs, sizeof(*devs)) < 0)
			break;
		devs[ndevs++] = f->dev;
		rc = pc_bdev_snapshot(f->dev, f->ident & PC_IDENT_FSID ? f->fsid : 0, &rec);
		if (rc == 0 && cli_grow(&ms->recs, &ms->cap, ms->n, sizeof(*ms->recs)) < 0) {
			pc_profile_file_release(&rec);
			rc = -ENOMEM;
		}
		snprintf(num, sizeof(num), "%u:%u", major(f->dev), minor(f->dev));
		if (rc < 0) {
			if (pc_bdev_name(f->dev, name, sizeof(name)) < 0)
				snprintf(name, sizeof(name), "%s", num);
			/* said once per device, with one of its files to know it by */
			cli_warn("metadata of '%s%s%s' not recorded: block device %s (%s): %s", root,
				 strcmp(root, "/") ? "/" : "", f->path, num, name, pc_bdev_strerror(-rc));
			row(ms, name, f->dev, 0, 0, NULL, NULL, pc_bdev_strerror(-rc));
			ms->unavailable++;
			continue;
		}
		ms->recs[ms->n++] = rec;
		ms->devices++;
		pages = 0;
		for (size_t r = 0; r < rec.nruns; r++)
			pages += rec.runs[2 * r + 1];
		ms->pages += pages;
		row(ms, rec.path, rec.dev, rec.size, pages, NULL, NULL, "recorded");
	}
	free(devs);
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
	for (size_t i = 0; i < ms->n; i++)
		pc_profile_file_release(&ms->recs[i]);
	free(ms->recs);
	free(ms->rows);
	memset(ms, 0, sizeof(*ms));
}
