/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmd-cgroups.c: `pagecache cgroups`: the page cache per memory cgroup,
 * one row each, sorted by cache: what each container keeps in memory,
 * how much of it is active, dirty or mapped, how often it refaults, its
 * limit, usage and memory pressure. cgroup v1 and v2 through lib/cgroup.c.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct row {
	char *path;
	struct pc_cgroup_stat s;
};

struct rows {
	struct row *v;
	size_t n, cap;
};

static const struct ocol cgroups_cols[] = {
	{ "file", "CACHE", false },	   { "active_file", "ACTIVE", false },
	{ "inactive_file", "INACTIVE", false }, { "dirty", "DIRTY", false },
	{ "mapped", "MAPPED", false },	   { "shmem", "SHMEM", false },
	{ "refaults", "REFAULTS", false }, { "limit", "LIMIT", false },
	{ "usage", "USAGE", false },	   { "psi_some_avg10", "PSI", false },
	{ "path", "CGROUP", true },
};

struct cgroups_cli {
	const char *root;		/* --root; "": the whole hierarchy */
};

enum { OPT_ROOT = CLI_OPT_OWN };
static const struct cli_opt cgroups_opts[] = {
	CLI_OPT_COLUMNS,
	{ .name = "root", .id = OPT_ROOT, .arg = "CG", .comp = CC_CGROUP,
	  CLI_STRING(struct cgroups_cli, root),
	  .help = "only CG (any form --cgroup takes) and those below" },
	{ 0 }
};

const struct cli_spec cgroups_spec = {
	.name = "cgroups",
	.usage =
	"Usage: pagecache cgroups [OPTIONS]\n"
	"\n"
	"One row per memory cgroup, sorted by page cache: the cache (hierarchical:\n"
	"a parent counts its children), active and inactive file pages, dirty,\n"
	"writeback, shmem and mapped, workingset refaults and activations, limit,\n"
	"usage and memory pressure (PSI avg10, where the kernel gives it).\n"
	"Works on cgroup v1 and v2.\n"
	"\n",
	.footer =
	"\n"
	"JSON: {\"cgroups\": [{\"path\", \"file\", \"active_file\", ...}]}; sizes in bytes,\n"
	"path as under the memory hierarchy's root.\n"
	"Example:\n"
	"  pagecache cgroups --json | jq '.cgroups[0]'\n",
	.groups = { &(struct cli_group){ "Options", cgroups_opts }, &cli_format_group },
	.operands = CC_NONE,
	.cols = cgroups_cols,
	.ncols = sizeof(cgroups_cols) / sizeof(cgroups_cols[0]),
};

/*
 * Prometheus text: docs/metrics.md. A series per cgroup, always: cgroups
 * are few next to files, and they are what this command lists.
 */
static const struct ometric metrics[] = {
	{ "cgroups", "path", "cgroup", OM_LABEL, "" },
	{ "cgroups", "file", "file_bytes", 0,
	  "Page cache charged to the cgroup and those below it (memory.stat file)." },
	{ "cgroups", "active_file", "active_file_bytes", 0, "Of that, on the active LRU list." },
	{ "cgroups", "inactive_file", "inactive_file_bytes", 0, "Of that, on the inactive LRU list." },
	{ "cgroups", "dirty", "dirty_bytes", 0, "Page cache of the cgroup that is dirty." },
	{ "cgroups", "writeback", "writeback_bytes", 0, "Page cache of the cgroup under writeback." },
	{ "cgroups", "shmem", "shmem_bytes", 0, "Shared memory and tmpfs pages of the cgroup." },
	{ "cgroups", "mapped", "mapped_bytes", 0, "Page cache of the cgroup mapped by processes." },
	{ "cgroups", "anon", "anon_bytes", 0, "Anonymous memory of the cgroup." },
	{ "cgroups", "refaults", "refaults_total", OM_COUNTER,
	  "File pages read back soon after their eviction (memory.stat workingset_refault_file)." },
	{ "cgroups", "activations", "activations_total", OM_COUNTER,
	  "Refaulted file pages activated at once (workingset_activate_file); absent on cgroup v1." },
	{ "cgroups", "limit", "limit_bytes", 0, "The cgroup's memory limit; absent when there is none." },
	{ "cgroups", "usage", "usage_bytes", 0, "Memory the cgroup uses (memory.current)." },
	{ "cgroups", "psi_some_avg10", "memory_pressure_some_avg10_ratio", OM_PERCENT,
	  "Share of the last 10 s in which some task waited for memory (PSI some avg10)." },
};

struct walk {
	const char *mount;
	int version;
	struct rows *r;
};

/* A row for each cgroup the walk comes to (lib/cgroup.c: pc_cgroup_walk). */
static int add_row(const struct pc_cgroup_entry *e, void *arg)
{
	struct walk *w = arg;
	struct rows *r = w->r;
	const char *rel = e->path + strlen(w->mount);
	struct row row = { 0 };

	if (e->depth && e->name[0] == '.')
		return PC_CGROUP_WALK_SKIP;
	if (pc_cgroup_read(e->path, w->version, &row.s) == 0 && (row.path = strdup(*rel ? rel : "/"))) {
		if (pc_grow(&r->v, &r->cap, r->n, sizeof(*r->v)) < 0) {
			free(row.path);
			return PC_CGROUP_WALK_SKIP;
		}
		r->v[r->n++] = row;
	}
	return 0;
}

static int by_file(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->s.file != y->s.file)
		return x->s.file > y->s.file ? -1 : 1;
	return strcmp(x->path, y->path);
}

int cmd_cgroups(int argc, char **argv)
{
	struct cli_opts co = { OUT_HUMAN };
	struct rows r = { 0 };
	struct cgroups_cli cl = { "" };
	char mount[64], rel[4096];
	int version, rc;

	rc = cli_parse_format_only(&cgroups_spec, &cl, &co, argc, argv);
	if (rc >= 0)
		return rc;
	out_init(co.fmt, co.bytes, co.noheadings);
	out_set_raw(co.raw);
	out_prom_metrics("cgroups", metrics, sizeof(metrics) / sizeof(metrics[0]));
	out_list_declare("cgroups");
	out_list_declare("errors");
	if (optind < argc)
		return cli_usage_error("unexpected argument '%s'", argv[optind]);
	if (pc_cgroup_root(mount, sizeof(mount), &version) < 0) {
		cli_fail_msg("/sys/fs/cgroup", "cannot list cgroups",
			     "no memory cgroup controller (v1 or v2) is mounted");
		out_flush();
		return EXIT_PARTIAL;
	}
	if (strstr(cl.root, ".."))
		return cli_usage_error("--root '%s' must stay inside the hierarchy", cl.root);
	rc = 0;
	rel[0] = 0;
	if (*cl.root) {
		/* any form --cgroup takes: a path, the directory, a unit name, a container */
		char dir[4096], why[1024];

		rc = pc_cgroup_resolve(cl.root, dir, sizeof(dir), why, sizeof(why));
		if (rc < 0)
			cli_fail_msg(cl.root, "cannot read memory cgroup", why);
		else
			snprintf(rel, sizeof(rel), "%s", dir + strlen(mount));
	}
	if (rc == 0) {
		struct walk w = { mount, version, &r };
		char *dir;

		if (asprintf(&dir, "%s%s", mount, rel) >= 0) {
			pc_cgroup_walk(dir, add_row, &w);
			free(dir);
		}
	}
	if (r.n)	/* r.v is NULL when no cgroup was found */
		qsort(r.v, r.n, sizeof(*r.v), by_file);
	for (size_t i = 0; i < r.n; i++) {
		struct orec rec = { 0 };
		const struct pc_cgroup_stat *s = &r.v[i].s;

		orec_str(&rec, "path", r.v[i].path, OF_LABEL);
		orec_u64(&rec, "file", s->file, OF_BYTES);
		orec_u64(&rec, "active_file", s->active_file, OF_BYTES);
		orec_u64(&rec, "inactive_file", s->inactive_file, OF_BYTES);
		orec_u64(&rec, "dirty", s->dirty, OF_BYTES);
		orec_u64(&rec, "writeback", s->writeback, OF_BYTES);
		orec_u64(&rec, "shmem", s->shmem, OF_BYTES);
		orec_u64(&rec, "mapped", s->mapped, OF_BYTES);
		orec_u64(&rec, "anon", s->anon, OF_BYTES);
		orec_u64(&rec, "refaults", s->refault_file, 0);
		if (s->has_activate)
			orec_u64(&rec, "activations", s->activate_file, 0);
		else
			orec_null(&rec, "activations");	/* v1 does not count them */
		if (s->limit == UINT64_MAX)
			orec_nolimit(&rec, "limit");
		else
			orec_u64(&rec, "limit", s->limit, OF_BYTES);
		if (s->has_usage)
			orec_u64(&rec, "usage", s->usage, OF_BYTES);
		else
			orec_null(&rec, "usage");
		if (s->has_psi)
			orec_f64(&rec, "psi_some_avg10", s->psi_some10);
		else
			orec_null(&rec, "psi_some_avg10");
		out_list_add("cgroups", &rec);
		free(r.v[i].path);
	}
	free(r.v);
	{
		out_columns("cgroups", cgroups_cols, sizeof(cgroups_cols) / sizeof(cgroups_cols[0]));
	}
	if (co.fmt == OUT_HUMAN)
		out_human_line("\n%zu memory cgroup%s (cgroup v%d, %s)", r.n, r.n == 1 ? "" : "s",
			       version, mount);
	rc = out_flush();
	return rc < 0 || cli_failures() ? EXIT_PARTIAL : 0;
}
