/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-snapshot.c: `pagecache snapshot`: its options, and what it says.
 * The capture is lib/snapshot.c's (pc_snapshot_*): which pages of each
 * file are cached, what tells later whether a file is the same one and
 * whether it changed, active pages as root, written atomically. This
 * file walks the targets (targets.c: paths, lists, --pid, --cgroup) into
 * the engine, turns its events into the messages and the "errors" list,
 * and its result into the total record.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "commands/metadata.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct snap_cli {
	struct targets t;
	struct cli_opts co;
	const char *out;		/* -o */
	const char *rootarg;		/* --root, "/" */
	const char *container;		/* --container: its root; PATHs inside it */
	char **cargv;			/* --container: the argv made, freed at the end */
	int cfirst, cmade;		/* its paths made: cargv[cfirst .. cfirst + cmade) */
	double guard;			/* --guard; -1: none */
	unsigned flags;			/* PC_SNAPSHOT_ */
	uint64_t engine_failures;	/* FAILED events (also in cli_failures) */
	struct meta_set ms;		/* --metadata's rows */
};

enum {
	OPT_ROOT = CLI_OPT_OWN, OPT_NO_ACTIVE, OPT_GUARD, OPT_METADATA, OPT_SAFE_LINKS,
	OPT_OWNERS, OPT_CONTAINER,
};
static const struct cli_opt snapshot_opts[] = {
	{ .name = "output", .letter = 'o', .id = 'o', .arg = "FILE", .comp = CC_FILE,
	  CLI_STRING(struct snap_cli, out),
	  .help = "the snapshot to write (required)" },
	{ .name = "root", .id = OPT_ROOT, .arg = "DIR", .comp = CC_DIR,
	  CLI_STRING(struct snap_cli, rootarg),
	  .help = "store paths relative to DIR (default /)" },
	{ .name = "container", .id = OPT_CONTAINER, .arg = "ID|PID",
	  CLI_STRING(struct snap_cli, container),
	  .help = "PATHs inside a running container (default /)" },
	{ .name = "no-active", .id = OPT_NO_ACTIVE, .help = "do not record active pages" },
	{ .name = "guard", .id = OPT_GUARD, .arg = "RATIO",
	  .help = "keep FILE when the new one is empty or too small" },
	{ .name = "metadata", .id = OPT_METADATA,
	  .help = "record metadata: directories; as root, devices' cache" },
	{ .name = "safe-links", .id = OPT_SAFE_LINKS,
	  .help = "follow only root's safe symbolic links in a PATH" },
	{ .name = "owners", .id = OPT_OWNERS,
	  .help = "say in the total who owns the files read" },
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
	"With --metadata, the directories the walk enters are recorded too, and as\n"
	"root the cached pages of the block devices under the files (the\n"
	"filesystems' inode tables, directories, extent blocks), so that restore\n"
	"brings back what lookups need: through the device, or where it cannot be\n"
	"opened (a VM's root disk, a container, not root) by reading the recorded\n"
	"directories and statx() of their entries. A device that cannot be opened\n"
	"is named and left out.\n"
	"With --container (its ID or a prefix, its cgroup, or a process in it), the\n"
	"PATHs are the container's (default: its whole root), seen as its processes\n"
	"see them, through its overlay and volumes, and recorded as the container\n"
	"names them: restore --container warms another container of the image.\n"
	"\n",
	.footer =
	"\n"
	"Examples:\n"
	"  pagecache snapshot -o /var/tmp/db.snap /var/lib/mysql\n"
	"  pagecache snapshot -o app.snap --root /srv/app /srv/app\n"
	"  pagecache snapshot -o /var/lib/pagecache/db.snap --guard 0.5 --cgroup db.service\n"
	"  pagecache snapshot -o db.snap --container 3f2a9c1b7e44 /var/lib/db /usr\n"
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

/* The engine's events as the command says them; one call at a time. */
static void on_event(const struct pc_snapshot_event *ev, void *arg)
{
	struct snap_cli *c = arg;
	char why[PATH_MAX + 160];

	if (ev->kind == PC_SNAPSHOT_DEVICE) {
		meta_snapshot_device(&c->ms, ev->device);
		return;
	}
	if (ev->kind != PC_SNAPSHOT_FAILED)
		return;
	c->engine_failures++;
	if (ev->failure == PC_SNAPSHOT_FAIL_OUTSIDE_ROOT) {
		cli_fail_msg(ev->path, ev->what, "not under --root");
	} else if (ev->failure == PC_SNAPSHOT_FAIL_UNTRUSTED) {
		snprintf(why, sizeof(why), "%s (--safe-links)", ev->reason);
		cli_fail_msg(ev->path, ev->what, why);
	} else {
		cli_fail_msg(ev->path, ev->what, ev->reason);
	}
}

static int walk_file(struct pc_walk_entry *e, void *arg)
{
	return pc_snapshot_add(arg, e->fd, e->path, &e->st);
}

/* --metadata: each directory the walk entered, for its record (the engine's) */
static void walk_dir(const char *path, void *arg)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && fstat(fd, &st) == 0)
		pc_snapshot_add(arg, fd, path, &st);
	if (fd >= 0)
		close(fd);
}

/* The options into c; -1 to go on, else the exit status (usage said). */
static int parse(struct snap_cli *c, int argc, char **argv)
{
	struct cli_parser p;
	int opt;

	cli_parser_bind_to(&p, &snapshot_spec,
			   &(struct cli_bound){ .base = c, .co = &c->co, .t = &c->t }, argc, argv);
	while ((opt = cli_getopt(&p, argc, argv)) >= 0) {
		switch (opt) {
		case OPT_NO_ACTIVE:
			c->flags |= PC_SNAPSHOT_NO_ACTIVE;
			break;
		case OPT_METADATA:
			c->flags |= PC_SNAPSHOT_METADATA;
			break;
		case OPT_SAFE_LINKS:
			c->flags |= PC_SNAPSHOT_SAFE_LINKS;
			break;
		case OPT_OWNERS:
			c->flags |= PC_SNAPSHOT_OWNERS;
			break;
		case OPT_GUARD:
			if (cli_parse_decimal(p.arg, 0, 1, 0, &c->guard) < 0)
				return cli_usage_error("--guard '%s': a ratio from 0 to 1 (0.5: keep the "
						       "old snapshot unless the new one holds half its "
						       "pages)", p.arg);
			c->flags |= PC_SNAPSHOT_GUARD;
			break;
		}
	}
	if (opt == CLI_STOP)
		return p.exit;
	if (!c->out)
		return cli_usage_error("-o FILE is required");
	if (c->container && strcmp(c->rootarg, "/"))
		return cli_usage_error("--container is the root: not with --root");
	if (c->container && (c->t.npids || c->t.cgroup))
		return cli_usage_error("--container takes the container's paths, not --pid or "
				       "--cgroup");
	return -1;
}

/*
 * --container: the operands are paths as the container sees them (none:
 * its whole root), each made a path beneath its root here, which is the
 * snapshot's root: the paths recorded are the container's own. A new argv
 * for cli_start; NULL: said why.
 */
static char **container_args(struct snap_cli *c, int argc, char **argv, int *ret_argc)
{
	static char root[64], cgdir[4096];
	int first = optind, n = argc - first, k = 0;
	char **nv;

	if (cli_container(c->container, root, sizeof(root), cgdir, sizeof(cgdir)) < 0)
		return NULL;
	c->rootarg = root;
	nv = calloc((size_t)first + (n ? (size_t)n : 1) + 1, sizeof(*nv));
	if (!nv)
		return NULL;
	for (; k < first; k++)
		nv[k] = argv[k];
	c->cargv = nv;
	c->cfirst = first;
	for (int i = first; i < argc; i++) {
		const char *p = argv[i];

		while (*p == '/')
			p++;
		if (asprintf(&nv[k], "%s/%s", root, p) < 0)
			return NULL;
		k++;
		c->cmade++;
	}
	if (!n)
		nv[k++] = root;
	*ret_argc = k;
	return nv;
}

/*
 * --safe-links: each root as the engine trusts it, walked from the fd it
 * reached (the walk closes it); one it drops is said by it, and not walked.
 */
static int trusted_root(const char *path, int *fd, void *arg)
{
	pc_snapshot_trust_roots(arg, &path, 1, fd);
	return *fd == PC_SNAPSHOT_ROOT_DROPPED ? -1 : 0;
}

/* the total's owners: "uid:gid:bits,...", "none" (no file read) or "many" */
static char *owners_text(const struct pc_snapshot_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *o = open_memstream(&buf, &len);

	if (!o)
		return NULL;
	if (r->owners_many)
		fputs("many", o);
	else if (!r->nowners)
		fputs("none", o);
	for (size_t i = 0; i < r->nowners && !r->owners_many; i++)
		fprintf(o, "%s%u:%u:%o", i ? "," : "", (unsigned)r->owners[i].uid,
			(unsigned)r->owners[i].gid, r->owners[i].w);
	if (fclose(o) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* What the engine did not say itself: the snapshot kept, not written, active pages. */
static void messages(const struct snap_cli *c, const struct pc_snapshot_result *r)
{
	if (r->kept)
		cli_warn("kept '%s' (%lld pages): the new snapshot holds %llu pages, fewer than "
			 "--guard %g of it", c->out, (long long)r->previous_pages,
			 (unsigned long long)r->pages, c->guard);
	else if (r->err == -ENODATA)
		cli_warn("not writing '%s': no file could be recorded", c->out);
	else if (r->err < 0)
		cli_fail_msg(c->out, "cannot write snapshot", cli_snapshot_target_why(c->out, -r->err));
	if (r->active_denied)
		cli_warn("active pages not recorded: %s", pc_kpage_reason(EPERM, false));
	else if (r->active_failed)
		cli_warn("active pages not recorded for %llu files: %s",
			 (unsigned long long)r->active_failed, pc_kpage_reason(r->active_err, false));
}

/* The people's lines. */
static void human(const struct snap_cli *c, const struct pc_snapshot_result *r)
{
	char a[32], act[48] = "active pages not recorded";

	if (!r->active_unknown)
		snprintf(act, sizeof(act), "%llu active pages", (unsigned long long)r->active_pages);
	if (r->kept)
		out_human_line("Kept %s (%lld pages); the new snapshot was not written:", c->out,
			       (long long)r->previous_pages);
	out_human_line("%s %s: %llu files, %llu pages (%s) in %llu runs, %s",
		       r->written ? "Wrote" : r->kept ? "  new" : "Did not write",
		       r->kept ? "snapshot" : c->out, (unsigned long long)r->files,
		       (unsigned long long)r->pages, fmt_size(r->bytes, a, sizeof(a)),
		       (unsigned long long)r->runs, act);
	if (r->uncached)
		out_human_line("Left out %llu files with nothing cached",
			       (unsigned long long)r->uncached);
	meta_human(&c->ms, false, false);
}

/* The total record (JSON, key=value, Prometheus), and the people's lines. */
static void report(struct snap_cli *c, const struct pc_snapshot_result *r, double elapsed)
{
	struct orec rec = { 0 };

	orec_str(&rec, "snapshot", c->out, 0);
	orec_bool(&rec, "written", r->written);
	if (c->flags & PC_SNAPSHOT_GUARD) {
		orec_bool(&rec, "kept", r->kept);
		if (r->previous_pages >= 0)
			orec_u64(&rec, "previous_pages", (uint64_t)r->previous_pages, OF_PAGES);
		else
			orec_null(&rec, "previous_pages");
	}
	orec_u64(&rec, "files", r->files, 0);
	orec_u64(&rec, "pages", r->pages, OF_PAGES);
	orec_u64(&rec, "bytes", r->bytes, OF_BYTES);
	orec_u64(&rec, "runs", r->runs, 0);
	if (r->active_unknown)
		orec_null(&rec, "active_pages");
	else
		orec_u64(&rec, "active_pages", r->active_pages, OF_PAGES);
	orec_u64(&rec, "uncached_files", r->uncached, 0);
	if (c->flags & PC_SNAPSHOT_METADATA)
		meta_report(&c->ms, &rec, false);
	orec_str(&rec, "root", r->root, 0);
	orec_u64(&rec, "failures", cli_failures(), 0);
	orec_f64(&rec, "elapsed", elapsed);
	if (c->flags & PC_SNAPSHOT_OWNERS) {
		char *ow = owners_text(r);

		if (ow)
			orec_str(&rec, "owners", ow, 0);
		else
			orec_null(&rec, "owners");
		free(ow);
	}
	out_object("total", &rec);
	if (c->co.fmt == OUT_HUMAN)
		human(c, r);
}

void snapshot_capture(struct targets *t, unsigned flags, struct pc_snapshot *s, const char *out,
		      const uint64_t *engine_failures, struct pc_snapshot_result *r)
{
	int rc;

	if (flags & PC_SNAPSHOT_SAFE_LINKS) {
		t->root = trusted_root;
		t->root_arg = s;
	}
	if (flags & PC_SNAPSHOT_METADATA) {
		t->dir = walk_dir;
		t->dir_arg = s;
	}
	rc = targets_walk(t, walk_file, s);
	t->dir = NULL;
	t->root = NULL;
	if (rc < 0)
		cli_warn("walk failed: %s", strerror(-rc));
	/* what failed before the engine saw it (lists, processes, the walk) counts too */
	if (cli_failures() > *engine_failures)
		pc_snapshot_count_failures(s, cli_failures() - *engine_failures);
	pc_snapshot_finish(s, out, r);
}

static int snapshot_main(struct snap_cli *c, int argc, char **argv);

int cmd_snapshot(int argc, char **argv)
{
	struct snap_cli c = { .rootarg = "/", .guard = -1, .co = { OUT_HUMAN } };
	int rc = snapshot_main(&c, argc, argv);

	for (int i = 0; c.cargv && i < c.cmade; i++)
		free(c.cargv[c.cfirst + i]);
	free(c.cargv);
	return rc;
}

static int snapshot_main(struct snap_cli *c, int argc, char **argv)
{
	struct pc_snapshot_result r = { .size = sizeof(r) };
	struct pc_snapshot *s;
	char cname[300] = "", *cname_p = NULL;
	double t0;
	int rc;

	targets_init(&c->t);
	rc = parse(c, argc, argv);
	if (rc >= 0)
		return rc;
	/*
	 * --guard is for snapshots on a schedule: a service that is down has
	 * no cgroup (systemd removes it), which is an empty snapshot, kept out
	 * by the guard, not a failure (the timer's unit would fail each tick)
	 */
	c->t.cgroup_gone_empty = c->guard >= 0;
	if (c->container) {
		/* the root is /proc/PID/root for now: named so that no later PID is taken for it */
		snprintf(cname, sizeof(cname), "container:%s", c->container);
		cname_p = cname;
		argv = container_args(c, argc, argv, &argc);
		if (!argv) {
			out_init(c->co.fmt, c->co.bytes, c->co.noheadings);
			out_flush();
			targets_release(&c->t);
			return EXIT_PARTIAL;
		}
	}
	if (cli_start(&c->co, &c->t, argc, argv) < 0)
		return EXIT_USAGE;
	out_prom_metrics("snapshot", metrics, sizeof(metrics) / sizeof(metrics[0]));
	if ((c->flags & PC_SNAPSHOT_METADATA) && !pc_bdev_allowed()) {
		/*
		 * What a user can have: the directories (restore reads them back
		 * through the filesystem), not the devices' cache. Said once.
		 */
		c->ms.devices_refused = true;
		cli_warn("--metadata: the block devices' cache is not recorded: it %s; the "
			 "directories are, and restore reads them back through the filesystem",
			 META_NEEDS_ROOT);
	}
	rc = pc_profile_check_target(c->out);	/* before the walk, not after it */
	if (rc < 0) {
		cli_fail_msg(c->out, "cannot write snapshot", cli_snapshot_target_why(c->out, -rc));
		out_flush();
		targets_release(&c->t);
		return EXIT_PARTIAL;
	}
	rc = pc_snapshot_begin(&(struct pc_snapshot_opts){
		.size = sizeof(struct pc_snapshot_opts), .flags = c->flags, .root = c->rootarg,
		.off = c->t.off, .len = c->t.len, .guard = c->guard, .event = on_event, .arg = c,
		.root_name = cname_p,
	}, &s);
	if (rc < 0) {
		targets_release(&c->t);
		return cli_usage_error("--root '%s' is not a directory", c->rootarg);
	}
	t0 = pc_now();
	snapshot_capture(&c->t, c->flags, s, c->out, &c->engine_failures, &r);
	c->ms.dirs = r.metadata_dirs;
	c->ms.dirs_failed = r.metadata_dirs_failed;
	messages(c, &r);
	report(c, &r, pc_now() - t0);
	meta_release(&c->ms);
	rc = r.err;
	if (out_flush() < 0)
		rc = -EIO;
	targets_release(&c->t);
	if (r.kept && !cli_failures())
		return 0;
	return rc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}

