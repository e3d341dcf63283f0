/*
 * cgroup.c: memory cgroups, v1 and v2 behind one interface: find them, read
 * them, move a process into one (the page cache it reads is charged there:
 * a page stays charged to the memcg of the process that first read it, for
 * its whole life), and make ones of our own. Those are always made beneath
 * the caller's own cgroup, never beside it or higher up: a child there
 * stays inside every limit the caller is under (memory.max, pids.max,
 * cpu.max). On v2 that may need the caller to move into a leaf first, since
 * a cgroup with processes of its own cannot hand controllers on.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The directory of memory cgroup `path` (as under the hierarchy's root). */
int pc_cgroup_dir(const char *path, char *ret, size_t len)
{
	static const char *const bases[] = {
		"/sys/fs/cgroup/memory",	/* v1 */
		"/sys/fs/cgroup",		/* v2, unified */
	};
	struct stat st;

	if (strstr(path, ".."))
		return -EINVAL;
	while (*path == '/')
		path++;
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		char probe[600];

		/* v1 has memory.limit_in_bytes, v2 memory.max */
		snprintf(probe, sizeof(probe), "%s/%s/%s", bases[i], path,
			 i == 0 ? "memory.limit_in_bytes" : "memory.max");
		if (stat(probe, &st) == 0) {
			snprintf(ret, len, "%s/%s", bases[i], path);
			return 0;
		}
	}
	return -ENOENT;
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
	rc = write(fd, pid, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return rc;
}

/* ---- the memory hierarchy: find, create, read ---- */

static bool file_exists(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0;
}

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

int pc_cgroup_self(char *ret, size_t len)
{
	FILE *f = fopen("/proc/self/cgroup", "re");
	char line[512];
	int rc = -ENOENT, version;
	char root[64];

	if (!f)
		return -errno;
	if (pc_cgroup_root(root, sizeof(root), &version) < 0) {
		fclose(f);
		return -ENOENT;
	}
	while (fgets(line, sizeof(line), f)) {
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

		if (!b)
			continue;
		b[strcspn(b, "\n")] = 0;
		if ((version == 1 && b - a - 1 == 6 && !strncmp(a + 1, "memory", 6)) ||
		    (version == 2 && b == a + 1 && line[0] == '0')) {
			snprintf(ret, len, "%s", b + 1);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
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
	if (pc_read_text(path, val, sizeof(val)) == 0)
		s.limit = strncmp(val, "max", 3) ? strtoull(val, NULL, 10) : UINT64_MAX;
	if (s.limit >= (1ull << 62))
		s.limit = UINT64_MAX;	/* v1 says "no limit" with a huge number */
	snprintf(path, sizeof(path), "%s/%s", dir,
		 version == 1 ? "memory.usage_in_bytes" : "memory.current");
	if (pc_read_text(path, val, sizeof(val)) == 0) {
		s.usage = strtoull(val, NULL, 10);
		s.has_usage = true;
	}
	snprintf(path, sizeof(path), "%s/memory.pressure", dir);
	if (pc_read_text(path, buf, sizeof(buf)) == 0 &&
	    sscanf(buf, "some avg10=%lf", &s.psi_some10) == 1) {
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
	rc = write(fd, buf, (size_t)n) == (ssize_t)n ? 0 : -errno;
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
	rc = write(fd, val, strlen(val)) < 0 ? -errno : 0;
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
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fscanf(f, "%ld", &pid) == 1) {
		if (pid != (long)self) {
			fclose(f);
			return -EBUSY;	/* another's: it would block +memory, and is not ours to move */
		}
		p.leaf = true;
	}
	fclose(f);
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

int pc_cgroup_nest_init(struct pc_cgroup_nest *n)
{
	char dir[sizeof(n->parent)];
	int rc, version;

	memset(n, 0, sizeof(*n));
	rc = self_dir(dir, sizeof(dir), &version);
	if (rc < 0)
		return rc;
	if (version == 2)
		return pc_cgroup_nest_at(n, dir, "memory");
	n->version = 1;
	snprintf(n->parent, sizeof(n->parent), "%s", dir);
	return 0;
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
