/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cgroup.c: memory cgroups, v1 and v2 behind one interface: find them, read
 * them, move a process into one (the page cache it reads is charged there:
 * a page stays charged to the memcg of the process that first read it, for
 * its whole life), and make ones of our own. Those are always made beneath
 * the caller's own cgroup, never beside it or higher up: a child there
 * stays inside every limit the caller is under (memory.max, pids.max,
 * cpu.max). On v2 that may need the caller to move into a leaf first, since
 * a cgroup with processes of its own cannot hand controllers on.
 * Its reads and writes of cgroupfs and /proc go through the seam (sys.c):
 * a failed read is an error returned, never a zero or "no limit" reported.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

/* Is `word` one of the space-separated words of `list`? */
static bool has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += wl)
		if ((p == list || p[-1] == ' ' || p[-1] == '\n') &&
		    (p[wl] == 0 || p[wl] == ' ' || p[wl] == '\n'))
			return true;
	return false;
}

/* ---- naming a cgroup: the forms users have at hand ---- */

/*
 * The search for a name is bounded: systemd and Kubernetes nest a container
 * 4 to 6 deep (kubepods.slice/kubepods-burstable.slice/...-pod<uid>.slice/
 * cri-containerd-<id>.scope), rootless podman 6; a node has thousands of
 * cgroups, not hundreds of thousands.
 */
#define CG_DEPTH	16		/* levels below the root searched */
#define CG_MAX		100000		/* cgroups looked at, at most */
#define CG_LISTED	8		/* candidates named in an ambiguity */
#define CG_ID_MIN	12		/* hex digits of a container ID prefix */
#define CG_ID_LEN	64		/* a full container ID */
#define CG_REL_MAX	4096		/* a longer path below the root is left out */

/* Runtimes' cgroup names for container ID: PREFIX ID SUFFIX. */
static const struct {
	const char *prefix, *suffix;
} cg_id_forms[] = {
	{ "libpod-", ".scope" },	 /* podman, systemd driver */
	{ "docker-", ".scope" },	 /* docker, systemd driver */
	{ "cri-containerd-", ".scope" }, /* containerd (Kubernetes), systemd driver */
	{ "crio-", ".scope" },		 /* CRI-O, systemd driver */
	{ "libpod-", "" },		 /* podman, cgroupfs driver: /libpod_parent/libpod-ID */
	{ "", "" },			 /* cgroupfs drivers: /docker/ID, /kubepods/.../ID */
};

struct cg_search {
	const struct pc_cgroup_fs *fs;
	const char *name;		/* a unit name: matched whole */
	bool id;			/* name may be a container ID prefix */
	char *exact[CG_LISTED], *byid[CG_LISTED];
	size_t nexact, nbyid;		/* matches (only CG_LISTED kept) */
	size_t seen;			/* cgroups looked at */
	size_t others;			/* another user's: not looked beneath */
	size_t nomem;			/* of the name, without the memory controller */
	bool stopped;			/* CG_MAX reached */
};

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* Is directory entry `name` a runtime's cgroup for an ID beginning with `id`? */
static bool id_match(const char *name, const char *id)
{
	size_t nl = strlen(name), il = strlen(id);

	for (size_t i = 0; i < sizeof(cg_id_forms) / sizeof(cg_id_forms[0]); i++) {
		size_t pl = strlen(cg_id_forms[i].prefix), sl = strlen(cg_id_forms[i].suffix);

		if (nl == pl + CG_ID_LEN + sl && !strncmp(name, cg_id_forms[i].prefix, pl) &&
		    !strcmp(name + pl + CG_ID_LEN, cg_id_forms[i].suffix) &&
		    is_hex(name + pl, CG_ID_LEN) && !strncmp(name + pl, id, il))
			return true;
	}
	return false;
}

/* Does directory fd `dfd` hold a memory cgroup (not its root)? */
static bool fd_is_memcg(int dfd, int version)
{
	struct stat st;

	return fstatat(dfd, version == 1 ? "memory.limit_in_bytes" : "memory.max", &st, 0) == 0;
}

static void keep(char **list, size_t *n, const char *path)
{
	if (*n < CG_LISTED)
		list[*n] = strdup(path);
	(*n)++;
}

/*
 * e, then every cgroup below it, each directory opened from its parent's
 * fd with O_NOFOLLOW. Takes e->fd (the listing of the directory closes it).
 */
static int walk_at(const struct pc_cgroup_entry *e, size_t rootlen, pc_cgroup_walk_cb cb,
		   void *arg)
{
	struct dirent *de;
	DIR *d;
	int rc = cb(e, arg);

	if (rc || !(d = fdopendir(e->fd))) {
		close(e->fd);
		return rc == PC_CGROUP_WALK_SKIP ? 0 : rc;
	}
	while (!rc && (de = readdir(d))) {
		const char *n = de->d_name;
		struct pc_cgroup_entry sub;
		struct stat st;
		char *path;
		int fd;

		if (!strcmp(n, ".") || !strcmp(n, ".."))
			continue;
		if (de->d_type != DT_DIR &&
		    (de->d_type != DT_UNKNOWN ||
		     fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
			continue;	/* a link is DT_LNK: never followed */
		fd = openat(dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;	/* removed meanwhile */
		if (asprintf(&path, "%s/%s", e->path, n) < 0) {
			close(fd);
			rc = -ENOMEM;
			break;
		}
		sub = (struct pc_cgroup_entry){ path, path + rootlen, path + strlen(e->path) + 1, fd,
						e->depth + 1 };
		rc = walk_at(&sub, rootlen, cb, arg);
		free(path);
	}
	closedir(d);
	return rc;
}

int pc_cgroup_walk(const char *dir, pc_cgroup_walk_cb cb, void *arg)
{
	const char *slash = strrchr(dir, '/');
	struct pc_cgroup_entry e = { dir, dir + strlen(dir), slash ? slash + 1 : dir, -1, 0 };

	e.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (e.fd < 0)
		return -errno;
	return walk_at(&e, strlen(dir), cb, arg);
}

/* One cgroup of the search below the root; bounded in depth and number. */
static int search_one(const struct pc_cgroup_entry *e, void *arg)
{
	struct cg_search *s = arg;
	struct stat st;

	if (!e->depth)
		return 0;	/* the root: only looked beneath */
	if (strlen(e->rel) >= CG_REL_MAX)
		return PC_CGROUP_WALK_SKIP;
	if (++s->seen > (s->fs->max_seen ? s->fs->max_seen : CG_MAX)) {
		s->stopped = true;
		return PC_CGROUP_WALK_STOP;
	}
	if (fd_is_memcg(e->fd, s->fs->version)) {
		if (!strcmp(e->name, s->name))
			keep(s->exact, &s->nexact, e->rel);
		else if (s->id && id_match(e->name, s->name))
			keep(s->byid, &s->nbyid, e->rel);
	} else if (!strcmp(e->name, s->name)) {
		s->nomem++;
	}
	/*
	 * A name is root's to give: beneath a cgroup another user owns
	 * (a delegated user@UID.service, a rootless container) that
	 * user may mkdir one of any name, and root's restore would
	 * join it, root's snapshot record its processes (or fail: two
	 * of the name). That cgroup itself, whose parent root's
	 * systemd made (a Delegate=yes service), is still a match.
	 */
	if (fstat(e->fd, &st) == 0 && st.st_uid != 0 && st.st_uid != geteuid()) {
		s->others++;
		return PC_CGROUP_WALK_SKIP;
	}
	return e->depth < CG_DEPTH ? 0 : PC_CGROUP_WALK_SKIP;
}

static void search_free(struct cg_search *s)
{
	for (size_t i = 0; i < CG_LISTED; i++) {
		free(s->exact[i]);
		free(s->byid[i]);
	}
}

/* "N cgroups: /a, /b, ... and K more" into why. */
static void say_matches(char *why, size_t whylen, const char *what, char *const *list, size_t n)
{
	size_t used;

	if (!why || !whylen)
		return;
	snprintf(why, whylen, "%s matches %zu cgroups (name one by its path):", what, n);
	for (size_t i = 0; i < n && i < CG_LISTED; i++) {
		used = strlen(why);
		snprintf(why + used, whylen - used, "%s '%s'", i ? "," : "", list[i] ? list[i] : "?");
	}
	if (n > CG_LISTED) {
		used = strlen(why);
		snprintf(why + used, whylen - used, " and %zu more", n - CG_LISTED);
	}
}

#define WHY(...) (why && whylen ? (void)snprintf(why, whylen, __VA_ARGS__) : (void)0)

/*
 * Is ROOT/rel a memory cgroup, inside ROOT once every link is resolved?
 * ret gets it, spelled from ROOT. 0, -ENOENT (not one), -EXDEV (elsewhere).
 */
static int check_dir(const struct pc_cgroup_fs *fs, const char *rel, char *ret, size_t len,
		     bool *ret_nomem)
{
	char dir[4200], probe[4300], real[PATH_MAX], realroot[PATH_MAX];
	size_t rl;

	*ret_nomem = false;
	while (*rel == '/')
		rel++;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s%s", fs->root, *rel ? "/" : "", rel) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	rl = strlen(dir);
	while (rl > strlen(fs->root) && dir[rl - 1] == '/')
		dir[--rl] = 0;
	/* not there is -ENOENT; not allowed to look (EACCES...) is not that */
	if (!realpath(dir, real) || !realpath(fs->root, realroot))
		return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
	rl = strlen(realroot);
	if (strncmp(real, realroot, rl) || (real[rl] && real[rl] != '/'))
		return -EXDEV;
	if (!real[rl]) {
		/* the root: v1's has memory.limit_in_bytes; v2's no memory.max */
		if (fs->version == 2) {
			char buf[512];

			snprintf(probe, sizeof(probe), "%s/cgroup.controllers", real);
			if (pc_read_text(probe, buf, sizeof(buf)) < 0 || !has_word(buf, "memory"))
				return -ENOENT;
			goto found;
		}
	}
	snprintf(probe, sizeof(probe), "%s/%s", real,
		 fs->version == 1 ? "memory.limit_in_bytes" : "memory.max");
	if (!file_exists(probe)) {
		*ret_nomem = true;	/* a directory, but no memory cgroup */
		return -ENOENT;
	}
found:
	if ((size_t)snprintf(ret, len, "%s%s", fs->root, real + rl) >= len)
		return -ENAMETOOLONG;
	return 0;
}

/*
 * Where a spec with a '/' names its cgroup, relative to fs->root: the
 * cgroupfs directory, another hierarchy's directory (cpu, systemd,
 * unified: the same path in memory's), or a path below the root. form
 * says which, for messages. NULL: the spec is below fs->base but in no
 * hierarchy there is (/sys/fs/cgroup/typo, which once named the root
 * memory cgroup, and so every process's files, to evict).
 */
static const char *spec_rel(const struct pc_cgroup_fs *fs, const char *spec, const char **form)
{
	size_t rootl = strlen(fs->root), basel = fs->base ? strlen(fs->base) : 0;
	const char *rel;

	if (!strncmp(spec, fs->root, rootl) && (!spec[rootl] || spec[rootl] == '/')) {
		*form = "the directory";
		return spec + rootl;
	}
	if (basel && !strncmp(spec, fs->base, basel) && spec[basel] == '/' &&
	    strcmp(fs->root, fs->base)) {
		char hier[PATH_MAX];
		struct stat st;

		*form = "the same cgroup in the memory hierarchy,";
		rel = strchr(spec + basel + 1, '/');
		snprintf(hier, sizeof(hier), "%.*s", (int)(rel ? rel - spec : (long)strlen(spec)), spec);
		if (stat(hier, &st) < 0 || !S_ISDIR(st.st_mode))
			return NULL;
		return rel ? rel : "";
	}
	*form = "the memory cgroup";
	return spec;
}

int pc_cgroup_watch_dir_in(const struct pc_cgroup_fs *fs, const char *spec, char *ret, size_t len)
{
	char dir[4200], real[PATH_MAX], realroot[PATH_MAX], *slash;
	const char *rel, *form;
	size_t rl, rootl = strlen(fs->root);

	if (!strchr(spec, '/') || strstr(spec, ".."))
		return -EINVAL;	/* a name is looked for anywhere: no one place to watch */
	rel = spec_rel(fs, spec, &form);
	if (!rel)
		return -ENOENT;
	while (*rel == '/')
		rel++;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s%s", fs->root, *rel ? "/" : "", rel) >=
	    sizeof(dir))
		return -ENAMETOOLONG;
	if (!realpath(fs->root, realroot))
		return -ENOENT;
	rl = strlen(realroot);
	/* up from the cgroup itself to the first directory there is */
	while (!realpath(dir, real)) {
		if (errno != ENOENT && errno != ENOTDIR)
			return -errno;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < rootl)
			return -ENOENT;
		*slash = 0;
	}
	if (strncmp(real, realroot, rl) || (real[rl] && real[rl] != '/'))
		return -EXDEV;
	if ((size_t)snprintf(ret, len, "%s%s", fs->root, real + rl) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int pc_cgroup_watch_dir(const char *spec, char *ret, size_t len)
{
	struct pc_cgroup_fs fs = { .base = "/sys/fs/cgroup" };
	char root[64];
	int rc = pc_cgroup_root(root, sizeof(root), &fs.version);

	if (rc < 0)
		return rc;
	fs.root = root;
	return pc_cgroup_watch_dir_in(&fs, spec, ret, len);
}

int pc_cgroup_resolve_in(const struct pc_cgroup_fs *fs, const char *spec, char *ret, size_t len,
			 char *why, size_t whylen)
{
	const char *rel, *form;
	struct cg_search *s;
	bool nomem, bare;
	int rc;

	if (!*spec) {
		WHY("an empty name");
		return -EINVAL;
	}
	if (strstr(spec, "..")) {
		WHY("'..' would leave the memory hierarchy ('%s')", fs->root);
		return -EINVAL;
	}
	bare = !strchr(spec, '/');
	rel = spec_rel(fs, spec, &form);
	if (!rel) {
		WHY("no such memory cgroup: '%s' is in no cgroup hierarchy of '%s'", spec, fs->base);
		return -ENOENT;
	}
	rc = check_dir(fs, rel, ret, len, &nomem);
	if (rc == 0)
		return 0;
	if (rc == -EXDEV) {
		WHY("'%s' resolves outside the memory hierarchy ('%s')", spec, fs->root);
		return -EXDEV;
	}
	if (rc != -ENOENT) {
		WHY("%s", strerror(-rc));
		return rc;
	}
	if (!bare) {
		while (*rel == '/')
			rel++;
		WHY("no such memory cgroup: tried %s '%s%s%s'%s", form, fs->root, *rel ? "/" : "",
		    rel, nomem ? ", a cgroup without the memory controller" : "");
		/* one there, of the wrong kind, is not one gone (a stopped unit's) */
		return nomem ? -EMEDIUMTYPE : -ENOENT;
	}

	/* a unit name or a container ID: looked for by name, anywhere below */
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->fs = fs;
	s->name = spec;
	s->id = strlen(spec) >= CG_ID_MIN && strlen(spec) <= CG_ID_LEN && is_hex(spec, strlen(spec));
	rc = pc_cgroup_walk(fs->root, search_one, s);
	if (rc < 0) {
		search_free(s);
		free(s);
		WHY("cannot open '%s': %s", fs->root, strerror(-rc));
		return rc;
	}
	if (s->stopped) {
		WHY("more than %u cgroups under '%s': the search for '%s' stopped; name it by "
		    "its path", fs->max_seen ? fs->max_seen : CG_MAX, fs->root, spec);
		rc = -E2BIG;
	} else if (s->nexact > 1) {
		say_matches(why, whylen, "the name", s->exact, s->nexact);
		rc = -ENOTUNIQ;
	} else if (s->nexact == 1 || s->nbyid == 1) {
		const char *p = s->nexact ? s->exact[0] : s->byid[0];

		rc = p ? check_dir(fs, p, ret, len, &nomem) : -ENOMEM;
		if (rc < 0)
			WHY("'%s' changed while it was looked at: %s", p ? p : spec, strerror(-rc));
	} else if (s->nbyid > 1) {
		say_matches(why, whylen, "the container ID prefix", s->byid, s->nbyid);
		rc = -ENOTUNIQ;
	} else {
		WHY("no such memory cgroup: tried %s '%s/%s'%s, and no cgroup of that name%s among "
		    "the %zu under '%s'%s", form, fs->root, spec,
		    nomem ? " (a cgroup without the memory controller)" : "",
		    s->id ? " or for a container whose ID begins so (libpod-, docker-, "
			    "cri-containerd-, crio-ID.scope; ID)" : "",
		    s->seen, fs->root,
		    s->others ? " (not beneath a cgroup another user owns: name one there by "
				"its path)" : "");
		if (s->nomem && why && whylen)
			snprintf(why + strlen(why), whylen - strlen(why), "; %zu cgroup%s of that "
				 "name without the memory controller", s->nomem, s->nomem > 1 ? "s" : "");
		rc = nomem || s->nomem ? -EMEDIUMTYPE : -ENOENT;
	}
	search_free(s);
	free(s);
	return rc;
}

int pc_cgroup_resolve(const char *spec, char *ret, size_t len, char *why, size_t whylen)
{
	struct pc_cgroup_fs fs = { .base = "/sys/fs/cgroup" };
	char root[64];
	int rc = pc_cgroup_root(root, sizeof(root), &fs.version);

	if (rc < 0) {
		WHY("no memory cgroup controller (v1 or v2) is mounted under '/sys/fs/cgroup'");
		return rc;
	}
	fs.root = root;
	return pc_cgroup_resolve_in(&fs, spec, ret, len, why, whylen);
}

int pc_cgroup_dir(const char *path, char *ret, size_t len)
{
	return pc_cgroup_resolve(path, ret, len, NULL, 0);
}

int pc_cgroup_join(const char *path)
{
	char dir[512], procs[600], pid[32];
	int fd, rc, n;

	rc = pc_cgroup_dir(path, dir, sizeof(dir));
	if (rc < 0)
		return rc;
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(pid, sizeof(pid), "%d\n", getpid());
	rc = (int)pc_sys_write(fd, pid, (size_t)n);
	rc = rc == n ? 0 : rc < 0 ? rc : -EIO;
	close(fd);
	return rc;
}

/* ---- the memory hierarchy: find, create, read ---- */

int pc_cgroup_root(char *ret, size_t len, int *ret_version)
{
	char buf[256] = "";
	FILE *f;

	if (file_exists("/sys/fs/cgroup/memory/memory.limit_in_bytes") ||
	    file_exists("/sys/fs/cgroup/memory/memory.usage_in_bytes")) {
		snprintf(ret, len, "/sys/fs/cgroup/memory");
		*ret_version = 1;
		return 0;
	}
	f = fopen("/sys/fs/cgroup/cgroup.controllers", "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
		if (strstr(buf, "memory")) {
			snprintf(ret, len, "/sys/fs/cgroup");
			*ret_version = 2;
			return 0;
		}
	}
	return -ENOENT;
}

/* Is "memory" one of a v1 line's controllers ("cpu,memory")? */
static bool has_memory(const char *list)
{
	for (size_t n; *list; list += n + !!list[n]) {
		n = strcspn(list, ",");
		if (n == 6 && !strncmp(list, "memory", 6))
			return true;
	}
	return false;
}

int pc_proc_cgroup(pid_t pid, char *v1, size_t v1len, char *v2, size_t v2len)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int rc = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = pc_sys_fopen_read(pid ? path : "/proc/self/cgroup", &rc);
	if (!f)
		return rc;
	*v1 = *v2 = 0;
	while (getline(&line, &cap, f) > 0) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		*b = 0;
		if (a == line + 1 && line[0] == '0' && b == a + 1) {
			if (!*v2)
				snprintf(v2, v2len, "%s", b + 1);
		} else if (!*v1 && has_memory(a + 1)) {
			snprintf(v1, v1len, "%s", b + 1);
		}
	}
	if (ferror(f))
		rc = errno ? -errno : -EIO;
	free(line);
	fclose(f);
	return rc;
}

int pc_cgroup_of(pid_t pid, char *ret, size_t len)
{
	char v1[PATH_MAX], v2[PATH_MAX], root[64];
	int version, rc = pc_proc_cgroup(pid, v1, sizeof(v1), v2, sizeof(v2));
	const char *p;

	if (rc < 0)
		return rc;
	if (pc_cgroup_root(root, sizeof(root), &version) < 0)
		return -ENOENT;
	p = version == 1 ? v1 : v2;
	if (!*p)
		return -ENOENT;
	snprintf(ret, len, "%s", p);
	return 0;
}

int pc_cgroup_self(char *ret, size_t len)
{
	return pc_cgroup_of(0, ret, len);
}

static uint64_t kv(const char *text, const char *key, bool *found)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p;) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			if (found)
				*found = true;
			return strtoull(p + kl + 1, NULL, 10);
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return 0;
}

/* Where each field comes from: v1's hierarchical total_* key, v2's key. */
static const struct {
	const char *v1, *v2;
	size_t off;
} stat_keys[] = {
	{ "total_cache", "file", offsetof(struct pc_cgroup_stat, file) },
	{ "total_active_file", "active_file", offsetof(struct pc_cgroup_stat, active_file) },
	{ "total_inactive_file", "inactive_file", offsetof(struct pc_cgroup_stat, inactive_file) },
	{ "total_dirty", "file_dirty", offsetof(struct pc_cgroup_stat, dirty) },
	{ "total_writeback", "file_writeback", offsetof(struct pc_cgroup_stat, writeback) },
	{ "total_shmem", "shmem", offsetof(struct pc_cgroup_stat, shmem) },
	{ "total_mapped_file", "file_mapped", offsetof(struct pc_cgroup_stat, mapped) },
	{ "total_rss", "anon", offsetof(struct pc_cgroup_stat, anon) },
	{ "total_workingset_refault_file", "workingset_refault_file",
	  offsetof(struct pc_cgroup_stat, refault_file) },
	{ "total_workingset_activate_file", "workingset_activate_file",
	  offsetof(struct pc_cgroup_stat, activate_file) },
};

int pc_cgroup_parse_stat(int version, const char *stat, struct pc_cgroup_stat *ret)
{
	struct pc_cgroup_stat s = { .version = version };
	bool ok = false;

	if (version != 1 && version != 2)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(stat_keys) / sizeof(stat_keys[0]); i++) {
		bool found = false;
		uint64_t v = kv(stat, version == 1 ? stat_keys[i].v1 : stat_keys[i].v2, &found);

		*(uint64_t *)((char *)&s + stat_keys[i].off) = v;
		if (i == 0)
			ok = found;
		if (stat_keys[i].off == offsetof(struct pc_cgroup_stat, activate_file))
			s.has_activate = found;
	}
	if (version == 1 && !ok)	/* a root or old kernel without total_*: local */
		s.file = kv(stat, "cache", &ok);
	if (!ok)
		return -EBADMSG;
	*ret = s;
	return 0;
}

int pc_cgroup_read(const char *dir, int version, struct pc_cgroup_stat *ret)
{
	char path[700], buf[8192], val[64];
	struct pc_cgroup_stat s;
	int rc;

	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	rc = pc_cgroup_parse_stat(version, buf, &s);
	if (rc < 0)
		return rc;
	s.limit = UINT64_MAX;	/* the v2 root has no memory.max: no limit */
	snprintf(path, sizeof(path), "%s/%s", dir,
		 version == 1 ? "memory.limit_in_bytes" : "memory.max");
	/* only a file that is not there means none: a failed read is no "no limit" */
	rc = pc_read_text(path, val, sizeof(val));
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0)
		s.limit = strncmp(val, "max", 3) ? strtoull(val, NULL, 10) : UINT64_MAX;
	if (s.limit >= (1ull << 62))
		s.limit = UINT64_MAX;	/* v1 says "no limit" with a huge number */
	snprintf(path, sizeof(path), "%s/%s", dir,
		 version == 1 ? "memory.usage_in_bytes" : "memory.current");
	rc = pc_read_text(path, val, sizeof(val));
	if (rc < 0 && rc != -ENOENT)
		return rc;
	if (rc == 0) {
		s.usage = strtoull(val, NULL, 10);
		s.has_usage = true;
	}
	snprintf(path, sizeof(path), "%s/memory.pressure", dir);
	/* absent on v1, and EOPNOTSUPP where the kernel was booted with psi=0 */
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0 && rc != -ENOENT && rc != -EOPNOTSUPP)
		return rc;
	if (rc == 0 && sscanf(buf, "some avg10=%lf", &s.psi_some10) == 1) {
		char *full = strstr(buf, "full avg10=");

		s.has_psi = true;
		if (full)
			sscanf(full, "full avg10=%lf", &s.psi_full10);
	}
	*ret = s;
	return 0;
}


int pc_cgroup_create(const char *parent_dir, const char *name, char *ret, size_t len)
{
	char probe[900];

	snprintf(ret, len, "%s/%s", parent_dir, name);
	if (mkdir(ret, 0755) < 0)
		return -errno;
	/* without the controller, nothing would be charged to it */
	snprintf(probe, sizeof(probe), "%s/memory.stat", ret);
	if (!file_exists(probe)) {
		rmdir(ret);
		return -EOPNOTSUPP;
	}
	return 0;
}

int pc_cgroup_enter(const char *dir, pid_t pid)
{
	char path[700], buf[32];
	int fd, n, rc;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	rc = (int)pc_sys_write(fd, buf, (size_t)n);
	rc = rc == n ? 0 : rc < 0 ? rc : -EIO;
	close(fd);
	return rc;
}

int pc_cgroup_drop_cache(const char *dir, int version)
{
	char path[700];
	const char *val = version == 1 ? "0\n" : "1T\n";
	int fd, rc;

	/* v1: force_empty (no tasks left); v2: reclaim as much as it can */
	snprintf(path, sizeof(path), "%s/%s", dir,
		 version == 1 ? "memory.force_empty" : "memory.reclaim");
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = (int)pc_sys_write(fd, val, strlen(val));
	rc = rc < 0 ? rc : 0;
	close(fd);
	/* v2's reclaim says EAGAIN when it could not reclaim all it was asked */
	return rc == -EAGAIN ? 0 : rc;
}

int pc_cgroup_write(const char *dir, const char *file, const char *value)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return pc_write_text(path, value);
}

int pc_cgroup_set_limit(const char *dir, int version, uint64_t bytes, uint64_t *ret_set)
{
	const char *file = version == 1 ? "memory.limit_in_bytes" : "memory.max";
	char path[700], val[64];
	uint64_t got;
	int rc;

	if (version != 1 && version != 2)
		return -EINVAL;
	if (bytes == UINT64_MAX)
		snprintf(val, sizeof(val), version == 1 ? "-1" : "max");
	else
		snprintf(val, sizeof(val), "%llu", (unsigned long long)bytes);
	rc = pc_cgroup_write(dir, file, val);
	if (rc < 0)
		return rc;
	/* what the kernel keeps: v1 rounds down to a page, "max" and -1 read back as none */
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	rc = pc_read_text(path, val, sizeof(val));
	if (rc < 0)
		return rc;
	if (!strncmp(val, "max", 3) || !strcmp(val, "-1"))
		got = UINT64_MAX;
	else if (val[0] < '0' || val[0] > '9')
		return -EBADMSG;
	else
		got = strtoull(val, NULL, 10);
	if (got >= (1ull << 62))
		got = UINT64_MAX;	/* v1's "no limit" is a huge number */
	if (bytes != UINT64_MAX && (got == UINT64_MAX || got > bytes))
		return -EIO;		/* the write was not taken as asked */
	if (ret_set)
		*ret_set = got;
	return 0;
}

int pc_cgroup_events_read(const char *dir, int version, struct pc_cgroup_events *ret)
{
	struct pc_cgroup_events e = { 0 };
	char path[700], buf[1024];
	bool found = false;
	int rc;

	if (version != 1 && version != 2)
		return -EINVAL;
	if (version == 2) {
		snprintf(path, sizeof(path), "%s/memory.events", dir);
		rc = pc_read_text(path, buf, sizeof(buf));
		if (rc < 0)
			return rc;
		e.limit_hits = kv(buf, "max", &found);
		if (!found)
			return -EBADMSG;
		found = false;
		e.oom = kv(buf, "oom", NULL);
		e.oom_kills = kv(buf, "oom_kill", &found);
		e.has_oom_kills = found;
		*ret = e;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/memory.failcnt", dir);
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (buf[0] < '0' || buf[0] > '9')
		return -EBADMSG;
	e.limit_hits = strtoull(buf, NULL, 10);
	snprintf(path, sizeof(path), "%s/memory.oom_control", dir);
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	e.oom = kv(buf, "under_oom", NULL);	/* v1 has no count of OOMs: now or not */
	e.oom_kills = kv(buf, "oom_kill", &found);	/* since Linux 4.13 */
	e.has_oom_kills = found;
	*ret = e;
	return 0;
}

/*
 * v1 has no populated flag: a process in the cgroup or in one beneath it
 * (a service that makes its own children), 16 levels down and
 * PC_CGROUP_POPULATED_MAX cgroups at most (arg counts them down): who
 * may make cgroups beneath it (its user, Delegate=yes) may make 65,535,
 * and the daemon asks at each status, snapshot and metrics write.
 */
static int populated_v1(const struct pc_cgroup_entry *e, void *arg)
{
	char path[PATH_MAX], buf[16];
	int *left = arg, rc;

	if (e->depth && e->name[0] == '.')
		return PC_CGROUP_WALK_SKIP;
	if ((*left)-- <= 0)
		return -E2BIG;
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.procs", e->path) >= sizeof(path))
		rc = -ENAMETOOLONG;
	else
		rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)	/* one below gone meanwhile: empty */
		return e->depth ? PC_CGROUP_WALK_SKIP : rc;
	if (buf[0])
		return PC_CGROUP_WALK_STOP;
	return e->depth >= 16 ? PC_CGROUP_WALK_SKIP : 0;
}

int pc_cgroup_populated(const char *dir, int version)
{
	char path[PATH_MAX], buf[512];
	bool found = false;
	uint64_t v;
	int rc;

	if (version == 1) {
		int left = PC_CGROUP_POPULATED_MAX + 1;	/* dir and that many beneath */

		rc = pc_cgroup_walk(dir, populated_v1, &left);
		return rc == PC_CGROUP_WALK_STOP ? 1 : rc;
	}
	if (version != 2)
		return -EINVAL;
	if ((size_t)snprintf(path, sizeof(path), "%s/cgroup.events", dir) >= sizeof(path))
		return -ENAMETOOLONG;
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	v = kv(buf, "populated", &found);
	if (!found)
		return -EBADMSG;
	return v != 0;
}

/* The caller's own memory cgroup directory, C. Never a guess: no C, no answer. */
static int self_dir(char *ret, size_t len, int *ret_version)
{
	char root[64], self[512];
	int rc = pc_cgroup_root(root, sizeof(root), ret_version);

	if (rc < 0)
		return rc;
	rc = pc_cgroup_self(self, sizeof(self));
	if (rc < 0)
		return rc;
	if ((size_t)snprintf(ret, len, "%s%s", root, strcmp(self, "/") ? self : "") >= len)
		return -ENAMETOOLONG;
	return 0;
}

int pc_cgroup_plan_v2(const char *dir, const char *controller, pid_t self,
		      struct pc_cgroup_plan *ret)
{
	struct pc_cgroup_plan p = { 0 };
	char path[700], buf[1024];
	FILE *f;
	long pid;
	int rc;

	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (has_word(buf, controller)) {	/* its children get it already */
		*ret = p;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	rc = pc_read_text(path, buf, sizeof(buf));
	if (rc < 0)
		return rc;
	if (!has_word(buf, controller))
		return -EOPNOTSUPP;	/* not ours to hand on: the parent keeps it */
	p.enable = true;
	/* the root (no cgroup.type) may have processes and controllers both */
	snprintf(path, sizeof(path), "%s/cgroup.type", dir);
	if (!file_exists(path)) {
		*ret = p;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = pc_sys_fopen_read(path, &rc);
	if (!f)
		return rc;
	errno = 0;
	while (fscanf(f, "%ld", &pid) == 1) {
		if (pid != (long)self) {
			fclose(f);
			return -EBUSY;	/* another's: it would block +memory, and is not ours to move */
		}
		p.leaf = true;
	}
	/* a failed read is not "no other process" */
	rc = ferror(f) ? (errno ? -errno : -EIO) : 0;
	fclose(f);
	if (rc < 0)
		return rc;
	*ret = p;
	return 0;
}

int pc_cgroup_child_parent(char *ret, size_t len, int *ret_version)
{
	struct pc_cgroup_plan p;
	int rc = self_dir(ret, len, ret_version);

	if (rc < 0 || *ret_version == 1)
		return rc;
	/* v2: our own cgroup only, and only if it hands memory on as it is */
	rc = pc_cgroup_plan_v2(ret, "memory", getpid(), &p);
	if (rc < 0)
		return rc;
	return p.leaf || p.enable ? -EOPNOTSUPP : 0;
}

int pc_cgroup_move_procs(const char *from, const char *to)
{
	char path[700];
	int moved = 0, rc = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", from);
	/* a process that forks while we move it leaves a child behind: again */
	for (int round = 0; round < 10; round++) {
		FILE *f = fopen(path, "re");
		long pid;
		int n = 0;

		if (!f)
			return errno == ENOENT ? moved : -errno;
		while (fscanf(f, "%ld", &pid) == 1) {
			n++;
			rc = pc_cgroup_enter(to, (pid_t)pid);
			if (rc == 0)
				moved++;
			else if (rc == -ESRCH)
				rc = 0;
		}
		fclose(f);
		if (!n || rc < 0)
			break;
	}
	return rc < 0 ? rc : moved;
}

int pc_cgroup_nest_at(struct pc_cgroup_nest *n, const char *dir, const char *controller)
{
	struct pc_cgroup_plan p;
	char val[40];
	int rc;

	memset(n, 0, sizeof(*n));
	n->version = 2;
	if ((size_t)snprintf(n->parent, sizeof(n->parent), "%s", dir) >= sizeof(n->parent) ||
	    (size_t)snprintf(n->controller, sizeof(n->controller), "%s", controller) >=
		    sizeof(n->controller))
		return -ENAMETOOLONG;
	rc = pc_cgroup_plan_v2(n->parent, controller, getpid(), &p);
	if (rc < 0)
		return rc;
	if (p.leaf) {
		snprintf(n->leaf, sizeof(n->leaf), "%s/pagecache-run-%d-self", n->parent, getpid());
		if (mkdir(n->leaf, 0755) < 0) {
			rc = -errno;
			n->leaf[0] = 0;
			return rc;
		}
		rc = pc_cgroup_enter(n->leaf, getpid());
		if (rc < 0) {
			rmdir(n->leaf);
			n->leaf[0] = 0;
			return rc;
		}
	}
	if (p.enable) {
		/* EBUSY here: a process joined the cgroup since the plan was made */
		snprintf(val, sizeof(val), "+%s", controller);
		rc = pc_cgroup_write(n->parent, "cgroup.subtree_control", val);
		if (rc < 0) {
			pc_cgroup_nest_release(n);
			return rc;
		}
		n->enabled = true;
	}
	return 0;
}

/*
 * Ask systemd for a scope of our own (scope.c), in the slice of the unit we
 * are in, and check that we are in it: 0, or -errno with why said.
 */
static int scope_enter(char *unit, size_t unitlen, char *why, size_t whylen)
{
	struct pc_scope_req req = { .pid = getpid(), .user = geteuid() != 0 };
	char root[64], self[512], desc[96];
	size_t ul, sl;
	int rc, version;

	rc = pc_cgroup_root(root, sizeof(root), &version);
	if (rc == 0)
		rc = pc_cgroup_self(self, sizeof(self));
	if (rc < 0) {
		WHY("cannot read our own cgroup: %s", strerror(-rc));
		return rc;
	}
	snprintf(desc, sizeof(desc), "pagecache (pid %d): memory cgroups of its own", (int)req.pid);
	req.description = desc;
	if (pc_scope_slice(self, req.user, req.slice, sizeof(req.slice)) < 0)
		req.slice[0] = 0;
	pc_scope_limits(root, self, &req.memory_max, &req.memory_high);
	/* pagecache-PID.scope; a name taken (our pid's last owner left processes): -2, -3 */
	for (int i = 1; i <= 3; i++) {
		if (i == 1)
			snprintf(req.unit, sizeof(req.unit), "pagecache-%d.scope", (int)req.pid);
		else
			snprintf(req.unit, sizeof(req.unit), "pagecache-%d-%d.scope", (int)req.pid, i);
		rc = pc_scope_start(&req, why, whylen);
		if (rc != -EEXIST)
			break;
	}
	if (rc < 0)
		return rc;
	rc = pc_cgroup_self(self, sizeof(self));
	if (rc < 0) {
		WHY("cannot read our own cgroup: %s", strerror(-rc));
		return rc;
	}
	sl = strlen(self);
	ul = strlen(req.unit);
	if (sl <= ul || self[sl - ul - 1] != '/' || strcmp(self + sl - ul, req.unit)) {
		WHY("systemd made scope '%s', but we are in '%.150s'", req.unit, self);
		return -EIO;
	}
	snprintf(unit, unitlen, "%s", req.unit);
	return 0;
}

int pc_cgroup_nest_init(struct pc_cgroup_nest *n)
{
	char dir[sizeof(n->parent)], unit[sizeof(n->scope)] = "", why[sizeof(n->why)] = "";
	struct pc_cgroup_plan p;
	int rc, version;

	memset(n, 0, sizeof(*n));
	rc = self_dir(dir, sizeof(dir), &version);
	if (rc < 0)
		return rc;
	if (version == 1) {
		n->version = 1;
		snprintf(n->parent, sizeof(n->parent), "%s", dir);
		return 0;
	}
	/*
	 * Where systemd manages the tree, a cgroup it did not delegate is its
	 * own, and one it delegated to a command that runs us may hold that
	 * command too (systemd-run --scope -p Delegate=yes sh -c ...): its
	 * other processes are not ours to move, and while they are there it
	 * cannot hand memory on. Both times: a scope of our own. Only a
	 * delegated cgroup we are alone in is nested in as it is.
	 */
	if (pc_scope_systemd() &&
	    !(pc_scope_delegated(dir) && pc_cgroup_plan_v2(dir, "memory", getpid(), &p) == 0) &&
	    scope_enter(unit, sizeof(unit), why, sizeof(why)) == 0) {
		rc = self_dir(dir, sizeof(dir), &version);
		if (rc < 0)
			return rc;
	}
	/* no scope to be had (no bus): as it is, where the kernel allows */
	rc = pc_cgroup_nest_at(n, dir, "memory");
	snprintf(n->scope, sizeof(n->scope), "%s", unit);
	snprintf(n->why, sizeof(n->why), "%s", why);
	return rc;
}

int pc_cgroup_nest_release(struct pc_cgroup_nest *n)
{
	char val[40];
	int rc = 0;

	if (n->enabled) {
		/* first: the cgroup takes processes back only with no controller handed on */
		snprintf(val, sizeof(val), "-%s", n->controller);
		rc = pc_cgroup_write(n->parent, "cgroup.subtree_control", val);
		if (rc < 0)
			return rc;	/* we stay in the leaf: still beneath it */
		n->enabled = false;
	}
	if (n->leaf[0]) {
		rc = pc_cgroup_move_procs(n->leaf, n->parent);
		if (rc < 0)
			return rc;
		if (rmdir(n->leaf) < 0 && errno != ENOENT)
			return -errno;
		n->leaf[0] = 0;
	}
	return 0;
}

int pc_cgroup_remove(const char *dir)
{
	char path[700];
	int rc = 0, version;

	snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", dir);
	version = file_exists(path) ? 1 : 2;
	/* v1: a limit left lowered (a kill between trims) goes first */
	if (version == 1)
		pc_write_text(path, "-1");
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	for (int i = 0; i < 50; i++) {
		FILE *f = fopen(path, "re");
		long pid;
		int n = 0;

		if (!f)
			return errno == ENOENT ? 0 : -errno;
		while (fscanf(f, "%ld", &pid) == 1)
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				n++;
		fclose(f);
		if (!n)
			break;
		usleep(20000);
	}
	sync();
	pc_cgroup_drop_cache(dir, version);
	for (int i = 0; i < 50; i++) {
		if (rmdir(dir) == 0 || errno == ENOENT)
			return 0;
		rc = -errno;
		usleep(20000);
	}
	return rc;
}

/* ---- a container: a process in it, and its cgroup ---- */

/* The first process of the first cgroup, at or below, that has one, into *(pid_t *)arg. */
static int first_proc(const struct pc_cgroup_entry *e, void *arg)
{
	int fd, pid = 0;
	FILE *f;

	if (e->depth && e->name[0] == '.')
		return PC_CGROUP_WALK_SKIP;
	fd = openat(e->fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!f) {
		if (fd >= 0)
			close(fd);
		return PC_CGROUP_WALK_SKIP;	/* gone meanwhile, or not ours to read */
	}
	if (fscanf(f, "%d", &pid) != 1 || pid <= 0)
		pid = 0;
	fclose(f);
	if (!pid)
		return 0;
	*(pid_t *)arg = pid;
	return PC_CGROUP_WALK_STOP;
}

int pc_container_find(const char *spec, pid_t *ret_pid, char *cgdir, size_t len, char *why,
		      size_t whylen)
{
	pid_t first = 0;
	char rel[PATH_MAX];
	size_t n = strspn(spec, "0123456789");
	int rc;

	if (!*spec) {
		WHY("an empty name");
		return -EINVAL;
	}
	if (spec[n] == 0 && n <= 10) {
		/* a process ID: its memory cgroup is the container's */
		long pid = strtol(spec, NULL, 10);

		if (pid <= 0 || pid > INT32_MAX) {
			WHY("'%s' is not a process ID", spec);
			return -EINVAL;
		}
		rc = pc_cgroup_of((pid_t)pid, rel, sizeof(rel));
		if (rc < 0) {
			WHY("process %ld: %s", pid, rc == -ENOENT ? "no such process, or no memory "
				"cgroup" : strerror(-rc));
			return rc;
		}
		rc = pc_cgroup_resolve(rel, cgdir, len, why, whylen);
		if (rc < 0)
			return rc;
		*ret_pid = (pid_t)pid;
		return 0;
	}
	rc = pc_cgroup_resolve(spec, cgdir, len, why, whylen);
	if (rc < 0)
		return rc;
	rc = pc_cgroup_walk(cgdir, first_proc, &first);
	if (rc < 0) {
		WHY("cannot read '%s': %s", cgdir, strerror(-rc));
		return rc;
	}
	if (!first) {
		WHY("no process in '%s' (a container that is not running)", cgdir);
		return -ESRCH;
	}
	*ret_pid = first;
	return 0;
}
