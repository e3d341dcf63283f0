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
	struct meta_row *r;

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

static const char *why(int err)
{
	switch (err) {
	case ENODEV:
		return "no block device (tmpfs, overlayfs, btrfs, a network filesystem)";
	case ESTALE:
		return "its /dev node is not that device";
	case ENOMEDIUM:
		return "/proc is not mounted";
	}
	return strerror(err);
}

void meta_snapshot_device(struct meta_set *ms, const struct pc_snapshot_device *d)
{
	char num[32];

	if (d->err) {
		snprintf(num, sizeof(num), "%u:%u", major(d->dev), minor(d->dev));
		/* said once per device, with one of its files to know it by */
		cli_warn("metadata of '%s' not recorded: block device %s (%s): %s", d->file, num,
			 d->name, why(d->err));
		row(ms, d->name, d->dev, 0, 0, NULL, NULL, why(d->err));
		ms->unavailable++;
		return;
	}
	ms->devices++;
	ms->pages += d->pages;
	row(ms, d->name, d->dev, d->size, d->pages, NULL, NULL, "recorded");
}

bool meta_take(struct meta_set *ms, struct pc_profile_file *f, int snap_ps)
{
	uint64_t fsid = f->ident & PC_IDENT_FSID ? f->fsid : 0, ps = pc_page_size();
	char *path;

	if (f->ident & PC_IDENT_BDEV) {
		if (snap_ps != (int)ps) {
			/* the snapshot's pages: widened to ours, overlaps merged */
			size_t m = 0;

			for (size_t k = 0; k < f->nruns; k++) {
				uint64_t a = f->runs[2 * k] * (uint64_t)snap_ps / ps;
				uint64_t b = ((f->runs[2 * k] + f->runs[2 * k + 1]) * (uint64_t)snap_ps +
					      ps - 1) / ps;

				if (m && a <= f->runs[2 * m - 2] + f->runs[2 * m - 1]) {
					if (b > f->runs[2 * m - 2] + f->runs[2 * m - 1])
						f->runs[2 * m - 1] = b - f->runs[2 * m - 2];
					continue;
				}
				f->runs[2 * m] = a;
				f->runs[2 * m + 1] = b - a;
				m++;
			}
			f->nruns = m;
		}
		if (cli_grow(&ms->recs, &ms->cap, ms->n, sizeof(*ms->recs)) < 0) {
			pc_profile_file_release(f);	/* left out: said as unavailable */
			ms->unavailable++;
			return true;
		}
		ms->recs[ms->n++] = *f;
		return true;
	}
	/* the files come a directory at a time: the last filesystem first */
	for (size_t k = ms->nfs; k-- > 0;)
		if (ms->fs[k].dev == f->dev && ms->fs[k].fsid == fsid)
			return false;
	path = strdup(f->path);
	if (!path || cli_grow(&ms->fs, &ms->fscap, ms->nfs, sizeof(*ms->fs)) < 0) {
		free(path);
		return false;
	}
	ms->fs[ms->nfs++] = (struct meta_fs){ f->dev, fsid, path };
	return false;
}

/* The device under the filesystem a record was taken of, as it is mounted now; 0: none. */
static uint64_t find_dev(const struct meta_set *ms, const struct pc_profile_file *rec, int rootfd,
			 bool same_place)
{
	uint64_t dev, fsid;

	if (pc_fd_fs(rootfd, &dev, &fsid) == 0 && pc_bdev_matches(rec, dev, fsid, !same_place))
		return dev;
	/* a file the snapshot had on that filesystem, opened beneath the root as restore does */
	for (size_t k = 0; k < ms->nfs; k++) {
		struct stat st;
		bool ok;
		int fd;

		if (!pc_bdev_matches(rec, ms->fs[k].dev, ms->fs[k].fsid, false))
			continue;
		fd = pc_open_beneath(rootfd, ms->fs[k].path, O_NOATIME, &st);
		if (fd < 0)
			continue;
		ok = pc_fd_fs(fd, &dev, &fsid) == 0 && pc_bdev_matches(rec, dev, fsid, !same_place);
		close(fd);
		if (ok)
			return dev;
	}
	return 0;
}

void meta_restore(struct meta_set *ms, int rootfd, bool same_place, struct pc_budget *b, bool dry)
{
	if (!ms->n)
		return;
	if (ms->skip) {		/* --no-metadata: asked for, nothing to say */
		ms->unavailable = ms->n;
		return;
	}
	if (!b) {		/* the budget could not be read: neither can the files be */
		ms->unavailable = ms->n;
		return;
	}
	if (!pc_bdev_allowed()) {
		cli_warn("metadata of %zu block device%s not restored: %s", ms->n, ms->n == 1 ? "" : "s",
			 META_NEEDS_ROOT);
		for (size_t i = 0; i < ms->n; i++)
			row(ms, ms->recs[i].path, ms->recs[i].dev, ms->recs[i].size, 0, NULL, NULL,
			    "needs root");
		ms->unavailable = ms->n;
		return;
	}
	for (size_t i = 0; i < ms->n && !b->stopped; i++) {
		const struct pc_profile_file *rec = &ms->recs[i];
		struct pc_bdev_result res;
		uint64_t dev = find_dev(ms, rec, rootfd, same_place);
		bool again = false;
		int rc;

		/* one device, one read: a second record of it (a hostile snapshot) is left out */
		for (size_t k = 0; k < ms->nrows && dev; k++)
			again |= ms->rows[k].done && ms->rows[k].dev == dev;
		if (again) {
			row(ms, rec->path, dev, rec->size, 0, NULL, NULL, "another record of a device read");
			ms->unavailable++;
			continue;
		}
		rc = dev ? pc_bdev_restore(dev, rec, b, dry, &res) : -ENOENT;

		if (rc < 0) {
			char num[32], reason[256];

			snprintf(num, sizeof(num), "%u:%u", major(dev), minor(dev));
			if (!dev)
				snprintf(reason, sizeof(reason), "no file of its filesystem found beneath "
					 "the root%s", same_place ? "" : " (--root elsewhere: by "
					 "filesystem id only)");
			else
				snprintf(reason, sizeof(reason), "block device %s: %s", num, why(-rc));
			/* the recorded name is only shown: it was never opened */
			cli_warn("metadata of '%s' not restored: %s", rec->path, reason);
			row(ms, rec->path, rec->dev, rec->size, 0, NULL, NULL, reason);
			ms->unavailable++;
			continue;
		}
		if (res.err == ENOSPC) {
			char reason[128];

			/*
			 * Taken whole or not at all (a device's cache may hold a
			 * dd of it): nothing was read. The files are not to pay for
			 * it: the budget is judged afresh for them.
			 */
			snprintf(reason, sizeof(reason), "its %llu pages do not fit the memory budget (%s)",
				 (unsigned long long)(res.pages - res.cached), pc_budget_reason(b->stopped));
			cli_warn("metadata of '%s' not restored: %s", res.name, reason);
			row(ms, res.name, dev, res.size, res.pages, &res.cached, &res.read, reason);
			ms->rows[ms->nrows - 1].done = false;
			ms->unavailable++;
			pc_budget_put(b, 0);
			continue;
		}
		ms->devices++;
		ms->pages += res.pages;
		ms->cached += res.cached;
		ms->read += dry ? 0 : res.read;
		if (res.err)
			cli_warn("metadata of '%s' not all restored: %s", res.name, strerror(res.err));
		row(ms, res.name, dev, res.size, res.pages, &res.cached, dry ? NULL : &res.read,
		    dry ? "dry run" : res.err ? strerror(res.err) : "ok");
	}
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
		const struct meta_row *m = &ms->rows[i];
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
	for (size_t i = 0; i < ms->nfs; i++)
		free(ms->fs[i].path);
	free(ms->recs);
	free(ms->fs);
	free(ms->rows);
	memset(ms, 0, sizeof(*ms));
}
