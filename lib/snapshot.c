/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * snapshot.c: capture, the engine of `pagecache snapshot` (pagecache.h,
 * pc_snapshot_*): which pages of each file are cached, with what tells
 * later whether it is the same file and whether it changed, into a
 * snapshot file (profile.c writes it atomically, mode 0600). It promises
 * what the command always did: paths relative to a root and without links
 * (restore follows none), a file outside the root left out, active pages
 * only where the kernel shows page frames (never made up: unknown is said
 * in the file), untrusted roots dropped, and an old snapshot kept against
 * an empty or much smaller new one when a guard is asked for. Nothing is
 * printed: per-file outcomes go to the caller's event callback, totals to
 * the result.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

struct pc_snapshot {
	struct pc_snapshot_opts o;	/* the caller's, past its size zeroed */
	char *root;			/* absolute, normalised */
	char *root_name;		/* opts' root_name: META's root; NULL: root */
	size_t rootlen;
	bool lexical;			/* a root through /proc: paths as given */
	bool active;			/* record active pages (the probe may still fail) */
	bool active_denied;		/* wanted, but no CAP_SYS_ADMIN: not tried */
	struct pc_kpage kpage;		/* with active: the probe, opened once */
	pthread_mutex_t lock;		/* files, owners */
	pthread_mutex_t evlock;		/* one event at a time */
	struct pc_profile_file *files;
	size_t n, cap;
	struct pc_profile_file *dirs;	/* PC_SNAPSHOT_METADATA: the directories walked */
	size_t ndirs, dircap;
	uint64_t dir_failures;		/* directories whose identity could not be had */
	uint64_t empty, active_pages, active_failed, active_tried, failures;
	int active_err;			/* the first probe's errno */
	bool owners_many;		/* more than PC_SNAPSHOT_MAX_OWNERS kinds */
	struct pc_snapshot_owner owners[PC_SNAPSHOT_MAX_OWNERS];
	size_t nowners;
};

/*
 * A struct that starts with its size, from a caller built against this
 * header or another: what it has copied, the rest zero; bytes it has that
 * this library does not know must be zero (-E2BIG), or a rule it asks
 * for would be dropped unsaid.
 */
static int take_sized(void *dst, size_t dstlen, const void *src, uint32_t srclen)
{
	const unsigned char *p = src;

	if (srclen < sizeof(uint32_t))
		return -EINVAL;
	for (size_t i = dstlen; i < srclen; i++)
		if (p[i])
			return -E2BIG;
	memset(dst, 0, dstlen);
	memcpy(dst, src, srclen < dstlen ? srclen : dstlen);
	return 0;
}

static void emit(struct pc_snapshot *s, struct pc_snapshot_event *ev)
{
	if (!s->o.event)
		return;
	pthread_mutex_lock(&s->evlock);
	s->o.event(ev, s->o.arg);
	pthread_mutex_unlock(&s->evlock);
}

/* a path left out, counted; reason NULL: strerror(err) */
static void fail(struct pc_snapshot *s, const char *path, enum pc_snapshot_failure why, int err,
		 const char *what, const char *reason, const char *link)
{
	struct pc_snapshot_event ev = {
		.kind = PC_SNAPSHOT_FAILED, .path = path, .failure = why, .err = err, .what = what,
		.reason = reason ? reason : strerror(err), .link = link,
	};

	__atomic_add_fetch(&s->failures, 1, __ATOMIC_RELAXED);
	emit(s, &ev);
}

/*
 * The path with no symbolic link in it (malloc'd), as restore will look
 * for it: restore follows no link beneath its root, so a file reached
 * through one (a soname link named on the command line, a data directory
 * that is a link, -L) is recorded where it really is. The directory's
 * realpath is kept per walker thread: files come a directory at a time.
 * Paths through /proc (a process's root, a container's files) are kept as
 * they are: their links mean paths in another mount namespace.
 */
static char *canonical(const char *path)
{
	static __thread char last_dir[PATH_MAX], last_real[PATH_MAX];
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX], *out = NULL;
	struct stat st;

	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
		return realpath(path, NULL);
	snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	if (!last_dir[0] || strcmp(dir, last_dir)) {
		if (!realpath(dir, last_real)) {
			last_dir[0] = 0;
			return NULL;
		}
		snprintf(last_dir, sizeof(last_dir), "%s", dir);
	}
	if (asprintf(&out, "%s/%s", strcmp(last_real, "/") ? last_real : "",
		     slash ? slash + 1 : path) < 0)
		return NULL;
	return out;
}

/*
 * PC_SNAPSHOT_OWNERS: who owns each file read, as its fd's fstat says,
 * with the group and other write bits kept only where the kernel's write
 * check would rest on them alone: none is kept for a file with a POSIX
 * ACL, on a read-only mount, or immutable (there the kernel says no, or
 * says it by rules these bits do not show). pagecache's daemon shows a
 * non-root peer a service only if the peer may see every file so recorded.
 */
static void owners_add(struct pc_snapshot *s, int fd, const struct stat *st)
{
	struct pc_snapshot_owner o = { st->st_uid, st->st_gid, st->st_mode & (S_IWGRP | S_IWOTH) };

	if (o.w) {
		struct statvfs sv;
		int flags = 0;

		/* an ACL, or no telling: the owner alone */
		if ((fgetxattr(fd, "system.posix_acl_access", NULL, 0) >= 0 ||
		     (errno != ENODATA && errno != ENOTSUP)) ||
		    fstatvfs(fd, &sv) < 0 || (sv.f_flag & ST_RDONLY) ||
		    (ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && (flags & FS_IMMUTABLE_FL)))
			o.w = 0;
	}
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->nowners; i++)
		if (s->owners[i].uid == o.uid && s->owners[i].gid == o.gid && s->owners[i].w == o.w)
			goto out;
	if (s->nowners < PC_SNAPSHOT_MAX_OWNERS)
		s->owners[s->nowners++] = o;
	else
		s->owners_many = true;
out:
	pthread_mutex_unlock(&s->lock);
}

int pc_snapshot_begin(const struct pc_snapshot_opts *o, struct pc_snapshot **ret)
{
	struct pc_snapshot *s;
	const char *rootarg;
	struct stat st;
	int rc;

	if (!o)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	rc = take_sized(&s->o, sizeof(s->o), o, o->size);
	if (rc == 0 && (s->o.flags & PC_SNAPSHOT_GUARD) && !(s->o.guard >= 0 && s->o.guard <= 1))
		rc = -EINVAL;
	if (rc < 0) {
		free(s);
		return rc;
	}
	/*
	 * The files' paths are recorded without links (restore follows none),
	 * and so is the root; but a root through /proc (/proc/PID/root: a
	 * container's files as it sees them) is kept as given, since its
	 * links mean paths in the container, not here.
	 */
	rootarg = s->o.root ? s->o.root : "/";
	s->root = pc_abspath(rootarg);
	s->lexical = s->root && !strncmp(s->root, "/proc/", 6);
	if (s->root && !s->lexical) {
		free(s->root);
		s->root = realpath(rootarg, NULL);
	}
	if (!s->root || stat(s->root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(s->root);
		free(s);
		return -ENOTDIR;
	}
	s->rootlen = strlen(s->root);
	s->o.root = NULL;	/* the caller's: not kept */
	if (s->o.root_name && !(s->root_name = strdup(s->o.root_name))) {
		free(s->root);
		free(s);
		return -ENOMEM;
	}
	s->o.root_name = NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->evlock, NULL);
	/* the kernel shows page frame numbers only with it: do not touch pages for nothing */
	s->active = !(s->o.flags & PC_SNAPSHOT_NO_ACTIVE);
	if (s->active && !pc_have_cap(CAP_SYS_ADMIN)) {
		s->active = false;
		s->active_denied = true;
	}
	/*
	 * Its checks and opens once, not a file at a time (they cost as much
	 * as the probe of a small file); what fails there fails each file's
	 * probe, counted as before.
	 */
	s->kpage.pmfd = s->kpage.kfd = s->kpage.cfd = -1;
	if (s->active)
		pc_kpage_open(&s->kpage, true, false);
	*ret = s;
	return 0;
}

/*
 * Each root reached once, the way systemd reads PIDFile=, and the walk
 * handed that fd (root_fds), so a link swapped in after the check leads
 * nowhere.
 */
size_t pc_snapshot_trust_roots(struct pc_snapshot *s, const char *const *paths, size_t n,
			       int *ret_fds)
{
	size_t kept = 0;

	for (size_t i = 0; i < n; i++) {
		struct pc_trusted tr;
		int fd = strncmp(paths[i], "/proc/", 6) && paths[i][0] == '/'
				 ? pc_path_trusted(paths[i], PC_TRUSTED_FOLLOW_LAST, &tr) : -ENOENT;

		if (fd == -EPERM) {
			char why[PATH_MAX + 128];

			snprintf(why, sizeof(why), "the link %s is not root's, or is in a directory "
				 "others may change", tr.link);
			fail(s, paths[i], PC_SNAPSHOT_FAIL_UNTRUSTED, EPERM, "not following", why,
			     tr.link);
		} else if (fd == -ELOOP) {
			fail(s, paths[i], PC_SNAPSHOT_FAIL_LOOP, ELOOP, "not following", NULL, NULL);
		} else if (fd < 0 && fd != -ENOENT && fd != -ENOTDIR) {
			/*
			 * Not checked (out of descriptors, of memory, a name too
			 * long): walked by name, a link in it would be followed
			 * unchecked. Only a path that is not there is left to
			 * the walk to say so.
			 */
			fail(s, paths[i], PC_SNAPSHOT_FAIL_RESOLVE, -fd, "cannot check the links of",
			     NULL, NULL);
			fd = -EPERM;
		}
		if (fd == -EPERM || fd == -ELOOP) {
			ret_fds[i] = PC_SNAPSHOT_ROOT_DROPPED;
			continue;
		}
		ret_fds[i] = fd < 0 ? -1 : fd;
		kept++;
	}
	return kept;
}

static void add_dir(struct pc_snapshot *s, int fd, const char *path, const struct stat *st);

/* what fd's cached pages and identity are, into f; 0, or the failure said */
static int record(struct pc_snapshot *s, int fd, const char *path, const struct stat *st,
		  struct pc_profile_file *f)
{
	uint64_t size = (uint64_t)st->st_size;
	char *abs = pc_abspath(path);
	int rc, arc = 0;

	if (abs && !s->lexical && strncmp(abs, "/proc/", 6)) {
		free(abs);
		abs = canonical(path);
	}
	if (!abs) {
		fail(s, path, PC_SNAPSHOT_FAIL_RESOLVE, errno, "cannot resolve", NULL, NULL);
		return -1;
	}
	if (strncmp(abs, s->root, s->rootlen) ||
	    (s->rootlen > 1 && abs[s->rootlen] != '/') || !abs[s->rootlen]) {
		fail(s, path, PC_SNAPSHOT_FAIL_OUTSIDE_ROOT, 0, "cannot snapshot", "not under the root",
		     NULL);
		free(abs);
		return -1;
	}
	f->path = strdup(abs + s->rootlen + (s->rootlen > 1));
	free(abs);
	f->size = size;
	f->mtime_s = st->st_mtim.tv_sec;
	f->mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	pc_profile_identify(fd, f);
	/* a container's file from an image layer: the layer's digest, where it can be had */
	if (pc_fd_layer_digest(fd, f->layer) == PC_LAYER_KNOWN)
		f->ident |= PC_IDENT_LAYER;
	if (s->active)	/* the active pages probed in residency's own mapping */
		rc = pc_kpage_resident_runs(&s->kpage, fd, size, s->o.off, s->o.len, &f->runs,
					    &f->nruns, &f->active, &f->nactive, &arc);
	else
		rc = pc_fd_resident_runs(fd, size, s->o.off, s->o.len, &f->runs, &f->nruns);
	if (rc < 0 || !f->path) {
		fail(s, path, PC_SNAPSHOT_FAIL_PAGES, rc < 0 ? -rc : ENOMEM, "cannot map pages of",
		     NULL, NULL);
		return -1;
	}
	if (s->active && f->nruns) {
		int none = 0;

		__atomic_add_fetch(&s->active_tried, 1, __ATOMIC_RELAXED);
		if (arc < 0) {
			__atomic_add_fetch(&s->active_failed, 1, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(&s->active_err, &none, -arc, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		}
		for (size_t i = 0; i < f->nactive; i++)
			__atomic_add_fetch(&s->active_pages, f->active[2 * i + 1], __ATOMIC_RELAXED);
	}
	return 0;
}

int pc_snapshot_add(struct pc_snapshot *s, int fd, const char *path, const struct stat *st)
{
	struct pc_profile_file f = { 0 };
	struct pc_residency r;
	uint64_t pages = 0;
	int rc;

	if (S_ISDIR(st->st_mode)) {	/* a directory: its record, with --metadata */
		if (s->o.flags & PC_SNAPSHOT_METADATA)
			add_dir(s, fd, path, st);
		return 0;
	}
	if (s->o.flags & PC_SNAPSHOT_OWNERS)
		owners_add(s, fd, st);
	if (s->o.progress)
		__atomic_add_fetch(&s->o.progress->files, 1, __ATOMIC_RELAXED);
	rc = pc_fd_residency(fd, (uint64_t)st->st_size, s->o.off, s->o.len, &r);
	if (rc < 0) {
		fail(s, path, PC_SNAPSHOT_FAIL_RESIDENCY, -rc, "cannot read residency of", NULL, NULL);
		return 0;
	}
	if (r.source == PC_SRC_NONE) {
		fail(s, path, PC_SNAPSHOT_FAIL_DENIED, r.err, "cannot snapshot",
		     "the kernel refuses residency to callers who neither own nor may write it",
		     NULL);
		return 0;
	}
	if (r.cached == 0) {
		struct pc_snapshot_event ev = { .kind = PC_SNAPSHOT_UNCACHED, .path = path };

		__atomic_add_fetch(&s->empty, 1, __ATOMIC_RELAXED);
		emit(s, &ev);
		return 0;
	}
	if (record(s, fd, path, st, &f) < 0) {
		pc_profile_file_release(&f);
		return 0;
	}
	pthread_mutex_lock(&s->lock);
	if (pc_grow(&s->files, &s->cap, s->n, sizeof(*s->files)) < 0) {
		pthread_mutex_unlock(&s->lock);
		pc_profile_file_release(&f);
		fail(s, path, PC_SNAPSHOT_FAIL_NOMEM, ENOMEM, "cannot snapshot", NULL, NULL);
		return 0;
	}
	s->files[s->n++] = f;
	pthread_mutex_unlock(&s->lock);
	for (size_t k = 0; k < f.nruns; k++)
		pages += f.runs[2 * k + 1];
	if (s->o.progress)
		__atomic_add_fetch(&s->o.progress->bytes, pages * pc_page_size(), __ATOMIC_RELAXED);
	if (s->o.event) {
		struct pc_snapshot_event ev = { .kind = PC_SNAPSHOT_RECORDED, .path = path, .file = &f };

		emit(s, &ev);	/* f's runs are the array's now: kept until s is freed */
	}
	return 0;
}

/*
 * PC_SNAPSHOT_METADATA: a directory the walk entered, as a record of its
 * own (PC_IDENT_DIR): its path relative to the root (without links, as a
 * file's), its identity, nothing cached. restore reads it back through
 * the filesystem where the device cannot be read, so a tree whose files
 * have nothing cached still gets its metadata back. The root itself has
 * no path to record: every lookup beneath it reads it anyway.
 */
static void add_dir(struct pc_snapshot *s, int fd, const char *path, const struct stat *st)
{
	struct pc_profile_file f = { 0 };
	char *abs = s->lexical || !strncmp(path, "/proc/", 6) ? pc_abspath(path)
							       : realpath(path, NULL);

	if (!abs)
		goto fail;
	if (strncmp(abs, s->root, s->rootlen) || (s->rootlen > 1 && abs[s->rootlen] != '/') ||
	    !abs[s->rootlen] || !abs[s->rootlen + (s->rootlen > 1)]) {
		free(abs);	/* the root, or outside it: nothing to record */
		return;
	}
	f.path = strdup(abs + s->rootlen + (s->rootlen > 1));
	free(abs);
	f.mtime_s = st->st_mtim.tv_sec;
	f.mtime_ns = (uint32_t)st->st_mtim.tv_nsec;
	f.dev = st->st_dev;
	f.ino = st->st_ino;
	pc_profile_identify(fd, &f);
	f.ident |= PC_IDENT_DIR;
	pthread_mutex_lock(&s->lock);
	if (!f.path || pc_grow(&s->dirs, &s->dircap, s->ndirs, sizeof(*s->dirs)) < 0) {
		pthread_mutex_unlock(&s->lock);
		pc_profile_file_release(&f);
		goto fail;
	}
	s->dirs[s->ndirs++] = f;
	pthread_mutex_unlock(&s->lock);
	return;
fail:
	/* one directory's metadata less: not a failure of the snapshot */
	__atomic_add_fetch(&s->dir_failures, 1, __ATOMIC_RELAXED);
}

static void add_dir_path(struct pc_snapshot *s, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		add_dir(s, fd, path, &st);
	else
		__atomic_add_fetch(&s->dir_failures, 1, __ATOMIC_RELAXED);
	if (fd >= 0)
		close(fd);
}

void pc_snapshot_count_failures(struct pc_snapshot *s, uint64_t n)
{
	__atomic_add_fetch(&s->failures, n, __ATOMIC_RELAXED);
}

/* the old snapshot's pages, as the new one counts them (files only); -errno: none to keep */
static int64_t old_pages(const char *path)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	struct stat st;
	int64_t pages = 0;
	int rc, fd;

	/*
	 * What is at the output path is read before it is replaced, as the
	 * caller (root, perhaps, in a shared directory) may not own it: a
	 * link is not followed and a FIFO not waited on; only a regular file
	 * counts as an old snapshot (write_out refuses the rest).
	 */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	rc = pc_profile_open_fd(fd, &r, NULL, 0);
	if (rc < 0)
		return rc;
	while ((rc = pc_profile_next(r, &f)) > 0) {
		for (size_t k = 0; k < f.nruns && !(f.ident & PC_IDENT_BDEV); k++)
			pages += (int64_t)f.runs[2 * k + 1];
		pc_profile_file_release(&f);
	}
	pc_profile_close(r);
	return rc < 0 ? rc : pages;
}

/*
 * PC_SNAPSHOT_METADATA: a record of each block device under the files
 * (distinct by st_dev), into *recs; one that cannot be had is said once,
 * with one of its files to know it by, and left out (no failure). Without
 * pc_bdev_allowed every device is left out so (EPERM), untried.
 */
static void metadata(struct pc_snapshot *s, struct pc_profile_file **recs, size_t *nrecs,
		     struct pc_snapshot_result *res)
{
	uint64_t *devs = NULL;
	size_t ndevs = 0, cap = 0, rcap = 0;
	bool allowed = pc_bdev_allowed();

	/* the files' devices, then those of directories with no file cached */
	for (size_t i = 0; i < s->n + s->ndirs; i++) {
		const struct pc_profile_file *f = i < s->n ? &s->files[i] : &s->dirs[i - s->n];
		struct pc_snapshot_device d = { .dev = f->dev };
		struct pc_snapshot_event ev = { .kind = PC_SNAPSHOT_DEVICE, .device = &d };
		struct pc_profile_file rec;
		char *file = NULL;
		size_t k;
		int rc;

		for (k = 0; k < ndevs && devs[k] != f->dev; k++)
			;
		if (k < ndevs)
			continue;
		if (pc_grow(&devs, &cap, ndevs, sizeof(*devs)) < 0)
			break;
		devs[ndevs++] = f->dev;
		/* not root: the directories are recorded, a device is not tried */
		rc = !allowed ? -EPERM : pc_bdev_snapshot(f->dev, f->ident & PC_IDENT_FSID ? f->fsid : 0,
							 &rec);
		if (rc == 0 && pc_grow(recs, &rcap, *nrecs, sizeof(**recs)) < 0) {
			pc_profile_file_release(&rec);
			rc = -ENOMEM;
		}
		if (asprintf(&file, "%s%s%s", s->root, strcmp(s->root, "/") ? "/" : "", f->path) < 0)
			file = NULL;
		d.file = file ? file : f->path;
		ev.path = d.file;
		if (rc < 0) {
			if (pc_bdev_name(f->dev, d.name, sizeof(d.name)) < 0)
				snprintf(d.name, sizeof(d.name), "%u:%u", major(f->dev), minor(f->dev));
			d.err = -rc;
			res->metadata_skipped++;
		} else {
			(*recs)[(*nrecs)++] = rec;
			snprintf(d.name, sizeof(d.name), "%s", rec.path);
			d.dev = rec.dev;
			d.size = rec.size;
			for (size_t r = 0; r < rec.nruns; r++)
				d.pages += rec.runs[2 * r + 1];
			res->metadata_devices++;
			res->metadata_pages += d.pages;
		}
		emit(s, &ev);
		free(file);
	}
	free(devs);
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct pc_profile_file *)a)->path,
		      ((const struct pc_profile_file *)b)->path);
}

/* The directories as the files: sorted, each once (`snapshot --metadata D D/e`). */
static void dedupe_dirs(struct pc_snapshot *s)
{
	size_t k = 0;

	if (s->ndirs)
		qsort(s->dirs, s->ndirs, sizeof(*s->dirs), by_path);
	for (size_t i = 0; i < s->ndirs; i++) {
		if (k && !strcmp(s->dirs[k - 1].path, s->dirs[i].path)) {
			pc_profile_file_release(&s->dirs[i]);
			continue;
		}
		s->dirs[k++] = s->dirs[i];
	}
	s->ndirs = k;
}

/*
 * A file reached twice under one path (`snapshot DIR DIR/f`, a list that
 * names it twice) is one file: the format refuses a path twice, which
 * would otherwise fail the whole snapshot. Sorted, the copies are
 * adjacent; one is kept (either: the same file, recorded twice).
 */
static void dedupe(struct pc_snapshot *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++) {
		if (k && !strcmp(s->files[k - 1].path, s->files[i].path)) {
			/* its active pages were counted as it was recorded */
			for (size_t a = 0; a < s->files[i].nactive; a++)
				s->active_pages -= s->files[i].active[2 * a + 1];
			pc_profile_file_release(&s->files[i]);
			continue;
		}
		s->files[k++] = s->files[i];
	}
	s->n = k;
}

/* the file itself: the files in path order, then the devices; 0 or -errno */
static int write_out(struct pc_snapshot *s, const char *out, const struct pc_profile_file *recs,
		     size_t nrecs, bool active_unknown)
{
	struct pc_profile_meta meta = { 0 };
	struct pc_profile_writer *w;
	int rc;

	/* none recorded is unknown, not 0: the file says so too (show) */
	meta.active = active_unknown ? PC_META_ACTIVE_UNKNOWN : 0;
	meta.created = (uint64_t)time(NULL);
	meta.page_size = (uint32_t)pc_page_size();
	snprintf(meta.root, sizeof(meta.root), "%s", s->root_name ? s->root_name : s->root);
	gethostname(meta.host, sizeof(meta.host) - 1);
	rc = pc_profile_create(out, &meta, &w);
	if (rc < 0)
		return rc;
	/* files and directories in one path order: their paths share most (front coding) */
	for (size_t i = 0, k = 0; (i < s->n || k < s->ndirs) && rc == 0;) {
		if (k == s->ndirs || (i < s->n && strcmp(s->files[i].path, s->dirs[k].path) < 0))
			rc = pc_profile_add(w, &s->files[i++]);
		else
			rc = pc_profile_add(w, &s->dirs[k++]);
	}
	for (size_t i = 0; i < nrecs && rc == 0; i++)
		rc = pc_profile_add(w, &recs[i]);
	if (rc == 0)
		return pc_profile_commit(w);
	pc_profile_abort(w);
	return rc;
}

int pc_snapshot_finish(struct pc_snapshot *s, const char *out, struct pc_snapshot_result *ret)
{
	struct pc_snapshot_result res = { .size = sizeof(res), .previous_pages = -1 };
	struct pc_profile_file *recs = NULL;
	size_t nrecs = 0;
	int rc;

	if (s->n)	/* qsort(NULL, 0) is undefined: UBSan stops there */
		qsort(s->files, s->n, sizeof(*s->files), by_path);
	dedupe(s);
	dedupe_dirs(s);
	if (s->o.flags & PC_SNAPSHOT_METADATA)
		metadata(s, &recs, &nrecs, &res);
	res.metadata_dirs = s->ndirs;
	res.metadata_dirs_failed = s->dir_failures;
	res.active_unknown = s->active_denied ||
			     (s->active_tried && s->active_failed == s->active_tried);
	res.active_denied = s->active_denied;
	res.active_failed = s->active_failed;
	res.active_err = s->active_err;
	res.active_pages = s->active_pages;
	for (size_t i = 0; i < s->n; i++) {
		for (size_t k = 0; k < s->files[i].nruns; k++)
			res.pages += s->files[i].runs[2 * k + 1];
		res.runs += s->files[i].nruns;
	}
	res.files = s->n;
	res.bytes = res.pages * pc_page_size();
	res.uncached = s->empty;
	res.failures = s->failures;
	if (s->o.flags & PC_SNAPSHOT_GUARD) {
		int64_t old = old_pages(out);

		res.previous_pages = old < 0 ? -1 : old;
	}
	if (res.previous_pages > 0 &&
	    (res.pages == 0 || (double)res.pages < s->o.guard * (double)res.previous_pages))
		res.kept = true;
	if (res.kept || (s->n == 0 && s->failures))	/* every file failed: keep whatever was there */
		rc = -ENODATA;
	else
		rc = write_out(s, out, recs, nrecs, res.active_unknown);
	res.written = rc == 0;
	res.err = rc;
	res.owners_many = s->owners_many;
	res.nowners = s->nowners;
	memcpy(res.owners, s->owners, sizeof(res.owners));
	snprintf(res.root, sizeof(res.root), "%s", s->root);
	for (size_t i = 0; i < nrecs; i++)
		pc_profile_file_release(&recs[i]);
	free(recs);
	pc_snapshot_abort(s);
	if (ret && ret->size >= sizeof(uint32_t)) {
		uint32_t size = ret->size;

		memcpy(ret, &res, size < sizeof(res) ? size : sizeof(res));
		ret->size = size;
	}
	return res.kept ? 0 : rc;
}

void pc_snapshot_abort(struct pc_snapshot *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		pc_profile_file_release(&s->files[i]);
	free(s->files);
	for (size_t i = 0; i < s->ndirs; i++)
		pc_profile_file_release(&s->dirs[i]);
	free(s->dirs);
	free(s->root);
	free(s->root_name);
	pc_kpage_close(&s->kpage);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->evlock);
	free(s);
}

struct walk_ctx {
	struct pc_snapshot *s;
	const struct pc_walk_opts *user;	/* the caller's, for its event callback */
};

static int walk_file(struct pc_walk_entry *e, void *arg)
{
	struct walk_ctx *w = arg;

	return pc_snapshot_add(w->s, e->fd, e->path, &e->st);
}

static void walk_event(enum pc_walk_event ev, const char *path, int err, void *arg)
{
	struct walk_ctx *w = arg;

	if (ev == PC_WALK_ERROR)
		fail(w->s, path, PC_SNAPSHOT_FAIL_OPEN, err, "cannot open", NULL, NULL);
	if (ev == PC_WALK_DIR && (w->s->o.flags & PC_SNAPSHOT_METADATA))
		add_dir_path(w->s, path);
	if (w->user && w->user->event)
		w->user->event(ev, path, err, w->user->event_arg);
}

/* the result of a step before finish: only err and what is known */
static int early(struct pc_snapshot_result *ret, int rc)
{
	if (ret && ret->size >= sizeof(uint32_t)) {
		struct pc_snapshot_result res = { .size = sizeof(res), .err = rc, .previous_pages = -1 };
		uint32_t size = ret->size;

		memcpy(ret, &res, size < sizeof(res) ? size : sizeof(res));
		ret->size = size;
	}
	return rc;
}

int pc_snapshot_write(const struct pc_snapshot_opts *o, const char *out,
		      struct pc_snapshot_result *ret)
{
	struct pc_walk_opts wo = { 0 };
	struct walk_ctx w = { 0 };
	const char **roots = NULL;
	int *fds = NULL;
	size_t n = 0;
	int rc = pc_profile_check_target(out);	/* before the walk, not after it */

	if (rc == 0)
		rc = pc_snapshot_begin(o, &w.s);
	if (rc < 0)
		return early(ret, rc);
	w.user = w.s->o.walk;
	if (w.user)
		wo = *w.user;
	roots = calloc(w.s->o.npaths + 1, sizeof(*roots));
	fds = calloc(w.s->o.npaths + 1, sizeof(*fds));
	if (!roots || !fds) {
		free(roots);
		free(fds);
		pc_snapshot_abort(w.s);
		return early(ret, -ENOMEM);
	}
	for (size_t i = 0; i < w.s->o.npaths; i++)
		fds[i] = -1;
	if (w.s->o.flags & PC_SNAPSHOT_SAFE_LINKS)
		pc_snapshot_trust_roots(w.s, w.s->o.paths, w.s->o.npaths, fds);
	for (size_t i = 0; i < w.s->o.npaths; i++)
		if (fds[i] != PC_SNAPSHOT_ROOT_DROPPED) {
			roots[n] = w.s->o.paths[i];
			fds[n++] = fds[i];
		}
	wo.file = walk_file;
	wo.arg = &w;
	wo.event = walk_event;
	wo.event_arg = &w;
	wo.root_fds = fds;
	rc = n ? pc_walk(roots, n, &wo) : 0;
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	free(roots);
	if (rc < 0) {	/* the walk itself failed: what it found is not the tree */
		pc_snapshot_abort(w.s);
		return early(ret, rc);
	}
	return pc_snapshot_finish(w.s, out, ret);
}
