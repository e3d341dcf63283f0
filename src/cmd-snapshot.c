/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-snapshot.c: `pagecache snapshot`: record, file by file, which pages
 * are cached, and what tells later whether a file is still the same one
 * (device, inode, generation, birth time, the filesystem's id) and whether
 * it was modified (size, mtime). As root,
 * also which pages were on the active LRU list, so restore can put hot
 * pages back as hot. The file is written atomically.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "daemon.h"
#include "metadata.h"

#include <errno.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

struct snap_ctx {
	struct targets t;
	const char *root;		/* absolute, normalised */
	bool lexical;			/* a root through /proc: paths as given */
	size_t rootlen;
	bool active;			/* record active pages (the probe may still fail) */
	bool active_denied;		/* wanted, but no CAP_SYS_ADMIN: not tried */
	pthread_mutex_t lock;
	struct pc_profile_file *files;
	size_t n, cap;
	uint64_t empty, active_pages, active_failed, active_tried;
	int active_err;			/* the first probe's errno */
	bool owners_on;			/* --owners: who owns what was read */
	bool owners_many;		/* more than DAEMON_MAX_OWNERS kinds: not said */
	struct downer owners[DAEMON_MAX_OWNERS];
	size_t nowners;
};

static const struct cli_opt snapshot_opts[] = {
	{ "output", 'o', 0, 'o', "FILE", CC_FILE, NULL, "the snapshot to write (required)", 0 },
	{ "root", 0, 0, 'R', "DIR", CC_DIR, NULL,
	  "store paths relative to DIR (default /), so the\nsnapshot can warm a copy mounted elsewhere", 0 },
	{ "no-active", 0, 0, 'N', NULL, CC_NONE, NULL, "do not record active pages", 0 },
	{ "guard", 0, 0, 'g', "RATIO", CC_NONE, NULL,
	  "keep an existing FILE when the new snapshot is\nempty or holds fewer than RATIO times its pages\n"
	  "(0 to 1; 0: only never replace with an empty one);\na --cgroup that is not there is empty", 0 },
	{ "metadata", 0, 0, 'E', NULL, CC_NONE, NULL,
	  "also record the cache of the block device under\neach filesystem of the files (metadata: inodes,\n"
	  "directories; and whatever was read through /dev/X);\nroot only", 0 },
	{ "safe-links", 0, 0, 'S', NULL, CC_NONE, NULL,
	  "follow a symbolic link in a PATH only if the link\nand every directory before it are root's and\n"
	  "writable by nobody else (systemd's PIDFile= rule);\nrefuse the PATH otherwise", 0 },
	{ "owners", 0, 0, 'W', NULL, CC_NONE, NULL,
	  "say in the total who owns the files read (uid:gid:\nwrite bits, from the fstat of the very fd read):\n"
	  "pagecache daemon judges its status peers on it", 0 },
	{ 0 }
};

const struct cli_spec snapshot_spec = {
	.name = "snapshot",
	.usage =
	"Usage: pagecache snapshot -o FILE [OPTIONS] PATH...\n"
	"\n"
	"Record which pages of these files and trees are in the page cache, with\n"
	"what tells later whether each file is still the same one (inode,\n"
	"generation, birth time, filesystem) and whether it was modified since\n"
	"(size, mtime).\n"
	"Files with nothing cached are left out. With CAP_SYS_ADMIN, the pages on\n"
	"the active LRU list are recorded too (/proc/kpageflags), so restore can make\n"
	"them hot again; without it a warning says they were not. The snapshot is\n"
	"written atomically: a failure, a full disk included, leaves the previous\n"
	"FILE intact.\n"
	"With --metadata (root), the cached pages of the block devices under the\n"
	"files are recorded too (the filesystems' inode tables, directories, extent\n"
	"blocks), so that restore brings back what lookups need; a device that\n"
	"cannot be opened is named and left out.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache snapshot -o /var/tmp/db.snap /var/lib/mysql\n"
	"  pagecache snapshot -o app.snap --root /srv/app /srv/app\n"
	"  pagecache snapshot -o /var/lib/pagecache/db.snap --guard 0.5 --cgroup db.service\n"
	"Then: pagecache restore /var/tmp/db.snap (see pagecache restore --help).\n"
	"Exit status: 0 written, or kept by --guard; 1 written but some files failed\n"
	"(named), or not written; 2 usage.\n",
	.groups = { &(struct cli_group){ "Options", snapshot_opts }, &cli_format_act_group,
		    &cli_targets_group },
	.operands = CC_FILE,
};

/* Prometheus text: docs/metrics.md; pages are exported in bytes */
static const struct ometric metrics[] = {
	{ "total", "written", "written", 0, "1 if the last run wrote the snapshot, else 0." },
	{ "total", "kept", "kept", 0,
	  "1 if --guard kept the previous snapshot; absent without --guard." },
	{ "total", "files", "files", 0, "Files recorded in the snapshot." },
	{ "total", "pages", "cached_bytes", OM_PAGES, "Bytes recorded as cached (whole pages)." },
	{ "total", "runs", "runs", 0, "Runs of cached pages recorded." },
	{ "total", "active_pages", "active_bytes", OM_PAGES,
	  "Bytes recorded as active (read twice); absent when not recorded." },
	{ "total", "metadata_pages", "metadata_bytes", OM_PAGES,
	  "Bytes of block devices' cache recorded (--metadata); absent without it." },
	{ "total", "metadata_skipped", "metadata_skipped_devices", 0,
	  "Block devices under the files left out (--metadata); absent without it." },
	{ "total", "uncached_files", "uncached_files", 0, "Files left out: nothing of them cached." },
	{ "total", "failures", "failures", 0, "Paths that failed (named on stderr)." },
	{ "total", "elapsed", "duration_seconds", 0, "How long the last run took." },
};

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
 * --owners: who owns each file read, as its fd's fstat says, with the
 * group and other write bits kept only where the kernel's write check
 * would rest on them alone: none is kept for a file with a POSIX ACL, on
 * a read-only mount, or immutable (there the kernel says no, or says it
 * by rules these bits do not show). The daemon shows a non-root peer a
 * service only if the peer may see every file so recorded.
 */
static void owners_add(struct snap_ctx *c, int fd, const struct stat *st)
{
	struct downer o = { st->st_uid, st->st_gid, st->st_mode & (S_IWGRP | S_IWOTH) };

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
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < c->nowners; i++)
		if (c->owners[i].uid == o.uid && c->owners[i].gid == o.gid && c->owners[i].w == o.w)
			goto out;
	if (c->nowners < DAEMON_MAX_OWNERS)
		c->owners[c->nowners++] = o;
	else
		c->owners_many = true;
out:
	pthread_mutex_unlock(&c->lock);
}

/* the total's owners: "uid:gid:bits,...", "none" (no file read) or "many" */
static char *owners_text(const struct snap_ctx *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);

	if (!o)
		return NULL;
	if (c->owners_many)
		fputs("many", o);
	else if (!c->nowners)
		fputs("none", o);
	for (size_t i = 0; i < c->nowners && !c->owners_many; i++)
		fprintf(o, "%s%u:%u:%o", i ? "," : "", (unsigned)c->owners[i].uid,
			(unsigned)c->owners[i].gid, c->owners[i].w);
	if (fclose(o) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * --safe-links: each PATH reached once, the way systemd reads PIDFile=
 * (pc_path_trusted: a symbolic link on the way, or the path itself, is
 * followed only where it is root's and every directory before it is
 * root's and writable by nobody else unless sticky), and the walk handed
 * that fd (root_fds), so a link swapped in after the check leads nowhere.
 * Root's snapshot of a path a user owns then records what the path names,
 * not what the user pointed it at (a link to /root/secret/f.bin). A PATH
 * through a link others may change is dropped, said and counted; one
 * that cannot be reached is left to the walk to say (fd -1). *ret_fds:
 * one per PATH kept, for pc_walk_opts.root_fds; NULL on no memory (then
 * the paths are walked by name, after the check).
 */
static int *drop_untrusted(struct targets *t)
{
	int *fds = calloc(t->npaths ? t->npaths : 1, sizeof(*fds));
	size_t k = 0;

	for (size_t i = 0; i < t->npaths; i++) {
		struct pc_trusted tr;
		int fd = strncmp(t->paths[i], "/proc/", 6) && t->paths[i][0] == '/'
				 ? pc_path_trusted(t->paths[i], PC_TRUSTED_FOLLOW_LAST, &tr) : -ENOENT;

		if (fd == -EPERM) {
			char why[PATH_MAX + 128];

			snprintf(why, sizeof(why), "the link %s is not root's, or is in a directory "
				 "others may change (--safe-links)", tr.link);
			cli_fail_msg(t->paths[i], "not following", why);
		} else if (fd == -ELOOP) {
			cli_fail(t->paths[i], ELOOP, "not following");
		}
		if (fd == -EPERM || fd == -ELOOP) {
			free((char *)t->paths[i]);
			continue;
		}
		if (fds)
			fds[k] = fd < 0 ? -1 : fd;
		else if (fd >= 0)
			close(fd);
		t->paths[k++] = t->paths[i];
	}
	t->npaths = k;
	return fds;
}

static int snap_file(struct pc_walk_entry *e, void *arg)
{
	struct snap_ctx *c = arg;
	struct pc_profile_file f = { 0 };
	struct pc_residency r;
	uint64_t size = (uint64_t)e->st.st_size;
	char *abs;
	int rc;

	if (c->owners_on)
		owners_add(c, e->fd, &e->st);
	rc = pc_fd_residency(e->fd, size, c->t.off, c->t.len, &r);
	if (rc < 0) {
		cli_fail(e->path, -rc, "cannot read residency of");
		return 0;
	}
	if (r.source == PC_SRC_NONE) {
		cli_fail_msg(e->path, "cannot snapshot",
			     "the kernel refuses residency to callers who neither own nor may write it");
		return 0;
	}
	if (r.cached == 0) {
		__atomic_add_fetch(&c->empty, 1, __ATOMIC_RELAXED);
		return 0;
	}
	abs = cli_abspath(e->path);
	if (abs && !c->lexical && strncmp(abs, "/proc/", 6)) {
		free(abs);
		abs = canonical(e->path);
	}
	if (!abs) {
		cli_fail(e->path, errno, "cannot resolve");
		return 0;
	}
	if (strncmp(abs, c->root, c->rootlen) ||
	    (c->rootlen > 1 && abs[c->rootlen] != '/') || !abs[c->rootlen]) {
		cli_fail_msg(e->path, "cannot snapshot", "not under --root");
		free(abs);
		return 0;
	}
	f.path = strdup(abs + c->rootlen + (c->rootlen > 1));
	free(abs);
	f.size = size;
	f.mtime_s = e->st.st_mtim.tv_sec;
	f.mtime_ns = (uint32_t)e->st.st_mtim.tv_nsec;
	f.dev = e->st.st_dev;
	f.ino = e->st.st_ino;
	pc_profile_identify(e->fd, &f);
	rc = pc_fd_resident_runs(e->fd, size, c->t.off, c->t.len, &f.runs, &f.nruns);
	if (rc < 0 || !f.path) {
		cli_fail(e->path, rc < 0 ? -rc : ENOMEM, "cannot map pages of");
		pc_profile_file_release(&f);
		return 0;
	}
	if (c->active && f.nruns) {
		int none = 0;

		__atomic_add_fetch(&c->active_tried, 1, __ATOMIC_RELAXED);
		rc = pc_fd_active_runs(e->fd, size, f.runs, f.nruns, &f.active, &f.nactive);
		if (rc < 0) {
			__atomic_add_fetch(&c->active_failed, 1, __ATOMIC_RELAXED);
			__atomic_compare_exchange_n(&c->active_err, &none, -rc, false,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
		}
		for (size_t i = 0; i < f.nactive; i++)
			__atomic_add_fetch(&c->active_pages, f.active[2 * i + 1], __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&c->lock);
	if (cli_grow(&c->files, &c->cap, c->n, sizeof(*c->files)) < 0) {
		pthread_mutex_unlock(&c->lock);
		pc_profile_file_release(&f);
		cli_fail(e->path, ENOMEM, "cannot snapshot");
		return 0;
	}
	c->files[c->n++] = f;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * --guard: the pages the existing snapshot at path holds, or -errno when
 * there is none to keep (missing, unreadable or bad: then it is replaced).
 */
static int64_t snapshot_pages(const char *path)
{
	struct pc_profile_reader *r;
	struct pc_profile_file f;
	int64_t pages = 0;
	int rc = pc_profile_open(path, &r, NULL, 0);

	if (rc < 0)
		return rc;
	while ((rc = pc_profile_next(r, &f)) > 0) {
		for (size_t k = 0; k < f.nruns && !(f.ident & PC_IDENT_BDEV); k++)
			pages += (int64_t)f.runs[2 * k + 1];	/* the files', as the new one counts */
		pc_profile_file_release(&f);
	}
	pc_profile_close(r);
	return rc < 0 ? rc : pages;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct pc_profile_file *)a)->path,
		      ((const struct pc_profile_file *)b)->path);
}

int cmd_snapshot(int argc, char **argv)
{
	struct cli_parser p;
	struct snap_ctx c = { .lock = PTHREAD_MUTEX_INITIALIZER, .active = true };
	struct cli_opts co = { OUT_HUMAN };
	struct pc_profile_meta meta = { 0 };
	struct pc_profile_writer *w = NULL;
	const char *out = NULL, *rootarg = "/";
	uint64_t pages = 0, runs = 0;
	double guard = -1;
	int64_t old_pages = -1;
	bool no_active, kept = false, metadata = false, safe_links = false;
	int *root_fds = NULL;
	struct meta_set ms = { 0 };
	struct orec rec = { 0 };
	struct stat st;
	char *root;
	double t0;
	int opt, rc;

	targets_init(&c.t);
	cli_parser_init(&p, &snapshot_spec, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case 'o':
			out = p.arg;
			break;
		case 'R':
			rootarg = p.arg;
			break;
		case 'N':
			c.active = false;
			break;
		case 'E':
			metadata = true;
			break;
		case 'S':
			safe_links = true;
			break;
		case 'W':
			c.owners_on = true;
			break;
		case 'g':
			if (cli_parse_decimal(p.arg, 0, 1, 0, &guard) < 0)
				return cli_usage_error("--guard '%s': a ratio from 0 to 1 (0.5: keep the "
						       "old snapshot unless the new one holds half its "
						       "pages)", p.arg);
			break;
		default:
			if (cli_common_opt(&co, &c.t, opt, p.arg, argv) < 0)
				return EXIT_USAGE;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (!out)
		return cli_usage_error("-o FILE is required");
	/*
	 * --guard is for snapshots on a schedule: a service that is down has
	 * no cgroup (systemd removes it), which is an empty snapshot, kept out
	 * by the guard, not a failure (the timer's unit would fail each tick)
	 */
	c.t.cgroup_gone_empty = guard >= 0;
	if (cli_start(&co, &c.t, argc, argv) < 0)
		return EXIT_USAGE;
	out_prom_metrics("snapshot", metrics, sizeof(metrics) / sizeof(metrics[0]));
	if (metadata && !pc_bdev_allowed()) {
		targets_release(&c.t);
		return cli_usage_error("--metadata %s", META_NEEDS_ROOT);
	}
	rc = pc_profile_check_target(out);	/* before the walk, not after it */
	if (rc < 0) {
		cli_fail_msg(out, "cannot write snapshot", cli_snapshot_target_why(out, -rc));
		out_flush();
		targets_release(&c.t);
		return EXIT_PARTIAL;
	}
	/*
	 * The files' paths are recorded without links (restore follows none),
	 * and so is the root; but a root through /proc (/proc/PID/root: a
	 * container's files as it sees them) is kept as given, since its
	 * links mean paths in the container, not here.
	 */
	root = cli_abspath(rootarg);
	c.lexical = root && !strncmp(root, "/proc/", 6);
	if (root && !c.lexical) {
		free(root);
		root = realpath(rootarg, NULL);
	}
	if (!root || stat(root, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(root);
		return cli_usage_error("--root '%s' is not a directory", rootarg);
	}
	c.root = root;
	c.rootlen = strlen(root);
	/* the kernel shows page frame numbers only with it: do not touch pages for nothing */
	if (c.active && !pc_have_cap(CAP_SYS_ADMIN)) {
		c.active = false;
		c.active_denied = true;
	}
	if (safe_links)
		root_fds = drop_untrusted(&c.t);
	c.t.walk.root_fds = root_fds;
	t0 = pc_now();
	rc = targets_walk(&c.t, snap_file, &c);
	c.t.walk.root_fds = NULL;
	for (size_t i = 0; root_fds && i < c.t.npaths; i++)
		if (root_fds[i] >= 0)
			close(root_fds[i]);
	free(root_fds);
	if (rc < 0)
		cli_warn("walk failed: %s", strerror(-rc));
	if (c.n)	/* qsort(NULL, 0) is undefined: UBSan stops there */
		qsort(c.files, c.n, sizeof(*c.files), by_path);
	if (metadata)
		meta_snapshot(&ms, root, c.files, c.n);

	/* none recorded is unknown, not 0: the file says so too (show) */
	no_active = c.active_denied || (c.active_tried && c.active_failed == c.active_tried);
	meta.active = no_active ? PC_META_ACTIVE_UNKNOWN : 0;
	meta.created = (uint64_t)time(NULL);
	meta.page_size = (uint32_t)pc_page_size();
	snprintf(meta.root, sizeof(meta.root), "%s", root);
	gethostname(meta.host, sizeof(meta.host) - 1);
	for (size_t i = 0; i < c.n; i++)
		for (size_t k = 0; k < c.files[i].nruns; k++)
			pages += c.files[i].runs[2 * k + 1];
	if (guard >= 0)
		old_pages = snapshot_pages(out);
	if (old_pages > 0 && (pages == 0 || (double)pages < guard * (double)old_pages)) {
		cli_warn("kept '%s' (%lld pages): the new snapshot holds %llu pages, fewer than "
			 "--guard %g of it", out, (long long)old_pages, (unsigned long long)pages,
			 guard);
		kept = true;
		rc = -ENODATA;
	} else if (c.n == 0 && cli_failures()) {
		/* every file failed: keep whatever snapshot was there */
		cli_warn("not writing '%s': no file could be recorded", out);
		rc = -ENODATA;
	} else {
		rc = pc_profile_create(out, &meta, &w);
	}
	for (size_t i = 0; i < c.n; i++) {
		if (rc == 0)
			rc = pc_profile_add(w, &c.files[i]);
		runs += c.files[i].nruns;
	}
	for (size_t i = 0; i < ms.n && rc == 0; i++)
		rc = pc_profile_add(w, &ms.recs[i]);
	if (rc == 0)
		rc = pc_profile_commit(w);
	else
		pc_profile_abort(w);
	if (rc < 0 && rc != -ENODATA)
		cli_fail_msg(out, "cannot write snapshot", cli_snapshot_target_why(out, -rc));
	if (c.active_denied)
		cli_warn("active pages not recorded: %s", pc_kpage_reason(EPERM, false));
	else if (c.active && c.active_failed)
		cli_warn("active pages not recorded for %llu files: %s",
			 (unsigned long long)c.active_failed, pc_kpage_reason(c.active_err, false));

	orec_str(&rec, "snapshot", out, 0);
	orec_bool(&rec, "written", rc == 0);
	if (guard >= 0) {
		orec_bool(&rec, "kept", kept);
		if (old_pages >= 0)
			orec_u64(&rec, "previous_pages", (uint64_t)old_pages, OF_PAGES);
		else
			orec_null(&rec, "previous_pages");
	}
	orec_u64(&rec, "files", c.n, 0);
	orec_u64(&rec, "pages", pages, OF_PAGES);
	orec_u64(&rec, "bytes", pages * pc_page_size(), OF_BYTES);
	orec_u64(&rec, "runs", runs, 0);
	if (no_active)
		orec_null(&rec, "active_pages");
	else
		orec_u64(&rec, "active_pages", c.active_pages, OF_PAGES);
	orec_u64(&rec, "uncached_files", c.empty, 0);
	if (metadata)
		meta_report(&ms, &rec, false);
	orec_str(&rec, "root", root, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_f64(&rec, "elapsed", pc_now() - t0);
	if (c.owners_on) {
		char *ow = owners_text(&c);

		if (ow)
			orec_str(&rec, "owners", ow, 0);
		else
			orec_null(&rec, "owners");
		free(ow);
	}
	out_object("total", &rec);
	if (co.fmt == OUT_HUMAN) {
		char a[32], act[48] = "active pages not recorded";

		if (!no_active)
			snprintf(act, sizeof(act), "%llu active pages",
				 (unsigned long long)c.active_pages);
		if (kept)
			out_human_line("Kept %s (%lld pages); the new snapshot was not written:",
				       out, (long long)old_pages);
		out_human_line("%s %s: %zu files, %llu pages (%s) in %llu runs, %s",
			       rc == 0 ? "Wrote" : kept ? "  new" : "Did not write", kept ? "snapshot" : out, c.n,
			       (unsigned long long)pages,
			       fmt_size(pages * pc_page_size(), a, sizeof(a)),
			       (unsigned long long)runs, act);
		if (c.empty)
			out_human_line("Left out %llu files with nothing cached",
				       (unsigned long long)c.empty);
		meta_human(&ms, false, false);
	}
	for (size_t i = 0; i < c.n; i++)
		pc_profile_file_release(&c.files[i]);
	free(c.files);
	meta_release(&ms);
	free(root);
	if (out_flush() < 0)
		rc = -EIO;
	targets_release(&c.t);
	if (kept && !cli_failures())
		return 0;
	return rc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}
