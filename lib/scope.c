/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * scope.c: a cgroup of our own, asked of systemd. Where systemd manages
 * the cgroup tree (cgroup v2), the cgroup a process starts in is its
 * unit's: a login's session-N.scope, a service's, shared with the shell or
 * the script that started us. v2 lets no cgroup with processes of its own
 * hand the memory controller to children, and systemd owns every cgroup it
 * did not delegate, so memory cgroups of our own need a unit of our own:
 * a transient scope with Delegate=yes, made by StartTransientUnit over
 * D-Bus (systemd.io/CGROUP_DELEGATION: "ask systemd", never mkdir under
 * its slices). This file only asks and waits; cgroup.c nests in the scope
 * it returns. The scope goes when its last process has gone
 * (CollectMode=inactive-or-failed): nothing to stop, nothing left behind,
 * a kill -9 included.
 * Promises: the scope is put in the slice of the caller's own unit, with
 * the tightest memory.max and memory.high found between the caller's
 * cgroup and that slice copied onto it, so moving out of the caller's
 * unit does not move out of a memory limit that held the caller.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>
#include <pthread.h>
#include <systemd/sd-bus.h>

/*
 * libsystemd is opened when a scope is first asked for (dlopen), not
 * linked: as systemd itself opens its optional libraries. So
 * libpagecache.a links into a static program (pkg-config --static: Debian
 * ships no libsystemd.a), and a system without libsystemd.so.0 gets
 * today's behaviour and the reason. Only its headers are needed to build.
 */
#define SD_FUNCS(X) \
	X(sd_bus_call) X(sd_bus_error_free) X(sd_bus_error_has_name) \
	X(sd_bus_flush_close_unref) X(sd_bus_is_bus_client) X(sd_bus_match_signal) \
	X(sd_bus_message_append) X(sd_bus_message_close_container) \
	X(sd_bus_message_new_method_call) X(sd_bus_message_open_container) \
	X(sd_bus_message_read) X(sd_bus_message_unref) X(sd_bus_new) \
	X(sd_bus_open_system) X(sd_bus_open_user) X(sd_bus_process) \
	X(sd_bus_set_address) X(sd_bus_slot_unref) X(sd_bus_start) X(sd_bus_unref) \
	X(sd_bus_wait)
#define SD_PTR(f) static __typeof__(f) *p_##f;
SD_FUNCS(SD_PTR)
#define sd_bus_call (*p_sd_bus_call)
#define sd_bus_error_free (*p_sd_bus_error_free)
#define sd_bus_error_has_name (*p_sd_bus_error_has_name)
#define sd_bus_flush_close_unref (*p_sd_bus_flush_close_unref)
#define sd_bus_is_bus_client (*p_sd_bus_is_bus_client)
#define sd_bus_match_signal (*p_sd_bus_match_signal)
#define sd_bus_message_append (*p_sd_bus_message_append)
#define sd_bus_message_close_container (*p_sd_bus_message_close_container)
#define sd_bus_message_new_method_call (*p_sd_bus_message_new_method_call)
#define sd_bus_message_open_container (*p_sd_bus_message_open_container)
#define sd_bus_message_read (*p_sd_bus_message_read)
#define sd_bus_message_unref (*p_sd_bus_message_unref)
#define sd_bus_new (*p_sd_bus_new)
#define sd_bus_open_system (*p_sd_bus_open_system)
#define sd_bus_open_user (*p_sd_bus_open_user)
#define sd_bus_process (*p_sd_bus_process)
#define sd_bus_set_address (*p_sd_bus_set_address)
#define sd_bus_slot_unref (*p_sd_bus_slot_unref)
#define sd_bus_start (*p_sd_bus_start)
#define sd_bus_unref (*p_sd_bus_unref)
#define sd_bus_wait (*p_sd_bus_wait)

static char sd_why[160];
static int sd_err;

static void sd_load_once(void)
{
	void *h = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
	const char *e;

	if (!h) {
		e = dlerror();
		snprintf(sd_why, sizeof(sd_why), "libsystemd.so.0 could not be loaded (%s)",
			 e ? e : "dlopen failed");
		sd_err = -ENOPKG;
		return;
	}
#define SD_SYM(f) \
	if (!(*(void **)&p_##f = dlsym(h, #f))) { \
		snprintf(sd_why, sizeof(sd_why), "libsystemd.so.0 has no %s", #f); \
		sd_err = -ENOPKG; \
		dlclose(h); \
		return; \
	}
	SD_FUNCS(SD_SYM)
#undef SD_SYM
}

/* 0 once libsystemd's functions are there, else -ENOPKG and why */
static int sd_load(char *why, size_t whylen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, sd_load_once);
	if (sd_err && why && whylen)
		snprintf(why, whylen, "%s", sd_why);
	return sd_err;
}

#define WHY(...) (why && whylen ? (void)snprintf(why, whylen, __VA_ARGS__) : (void)0)

/* systemd's answer to a job: at most this long (TCG guests are slow) */
#define SCOPE_WAIT_US	(30ull * 1000 * 1000)
#define JOBS_SEEN	8

bool pc_scope_systemd(void)
{
	/* the fault seam: "systemd:ENOENT" says it is not there */
	if (pc_sys_injected(PC_SYS_SYSTEMD))
		return false;
	/* sd_booted(3)'s own test, without loading libsystemd for it */
	struct stat st;

	return lstat("/run/systemd/system/", &st) == 0 && S_ISDIR(st.st_mode);
}

bool pc_scope_delegated(const char *dir)
{
	char val[8] = "";
	char path[700];
	struct stat st;

	/* systemd 251+ marks what it delegates; user.* where non-root may read it */
	if (getxattr(dir, "trusted.delegate", val, sizeof(val) - 1) > 0 && val[0] == '1')
		return true;
	if (getxattr(dir, "user.delegate", val, sizeof(val) - 1) > 0 && val[0] == '1')
		return true;
	/* a delegation to a user: the cgroup, and its cgroup.procs, are the user's */
	if (geteuid() == 0)
		return false;
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	return stat(dir, &st) == 0 && st.st_uid == geteuid() && stat(path, &st) == 0 &&
	       st.st_uid == geteuid();
}

int pc_scope_slice(const char *self, bool user, char *ret, size_t len)
{
	const char *p = self, *slice = NULL, *slice_end = NULL;

	if (user) {
		/* the user manager's slices start below its own user@UID.service */
		const char *u = strstr(self, "/user@");

		if (!u)
			return -ENOENT;
		p = strchr(u + 1, '/');
		if (!p)
			return -ENOENT;
	}
	/* the last of the leading components that are all slices */
	while (*p == '/') {
		const char *c = p + 1, *e = strchrnul(c, '/');

		if (e - c <= 6 || strncmp(e - 6, ".slice", 6))
			break;
		slice = c;
		slice_end = e;
		p = e;
	}
	if (!slice)
		return -ENOENT;
	if ((size_t)(slice_end - slice) >= len)
		return -ENAMETOOLONG;
	memcpy(ret, slice, (size_t)(slice_end - slice));
	ret[slice_end - slice] = 0;
	return 0;
}

/* memory.max or memory.high of one cgroup: bytes, UINT64_MAX for none */
static uint64_t limit_of(const char *dir, const char *file)
{
	char path[700], val[64];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (pc_read_text(path, val, sizeof(val)) < 0 || val[0] < '0' || val[0] > '9')
		return UINT64_MAX;
	return strtoull(val, NULL, 10);
}

void pc_scope_limits(const char *root, const char *self, uint64_t *ret_max, uint64_t *ret_high)
{
	char dir[700];
	size_t rl;

	*ret_max = *ret_high = UINT64_MAX;
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, self) >= sizeof(dir))
		return;
	rl = strlen(root);
	/* from the caller's cgroup up to, not including, the first slice */
	while (strlen(dir) > rl) {
		char *last = strrchr(dir, '/');
		uint64_t m = limit_of(dir, "memory.max"), h = limit_of(dir, "memory.high");

		if (!last || (strlen(last) > 6 && !strcmp(last + strlen(last) - 6, ".slice")))
			break;
		*ret_max = m < *ret_max ? m : *ret_max;
		*ret_high = h < *ret_high ? h : *ret_high;
		*last = 0;
	}
}

struct jobs {
	char path[JOBS_SEEN][128];	/* jobs systemd said were removed */
	char result[JOBS_SEEN][32];	/* and how each ended ("done") */
	unsigned n;
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
	struct jobs *j = userdata;
	const char *path, *unit, *result;
	uint32_t id;
	unsigned i = j->n++ % JOBS_SEEN;

	(void)err;
	if (sd_bus_message_read(m, "uoss", &id, &path, &unit, &result) < 0)
		return 0;
	snprintf(j->path[i], sizeof(j->path[i]), "%s", path);
	snprintf(j->result[i], sizeof(j->result[i]), "%s", result);
	return 0;
}

static const char *job_result(const struct jobs *j, const char *path)
{
	for (unsigned i = 0; i < JOBS_SEEN && i < j->n; i++)
		if (!strcmp(j->path[i], path))
			return j->result[i];
	return NULL;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

int pc_scope_start_on(struct sd_bus *bus, const struct pc_scope_req *req, char *why,
		      size_t whylen)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL, *reply = NULL;
	sd_bus_slot *slot = NULL;
	struct jobs jobs = { .n = 0 };
	const char *job, *result = NULL;
	char jobpath[128];
	uint64_t deadline;
	int rc;

	rc = sd_load(why, whylen);
	if (rc < 0)
		return rc;
	/*
	 * The match first: the job may end before its reply is read. A peer
	 * connection (no bus daemon) has no sender names to match.
	 */
	rc = sd_bus_match_signal(bus, &slot,
				 sd_bus_is_bus_client(bus) ? "org.freedesktop.systemd1" : NULL,
				 "/org/freedesktop/systemd1",
				 "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed,
				 &jobs);
	if (rc < 0) {
		WHY("cannot watch systemd's jobs: %s", strerror(-rc));
		goto out;
	}
	rc = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1",
					    "/org/freedesktop/systemd1",
					    "org.freedesktop.systemd1.Manager", "StartTransientUnit");
	if (rc < 0)
		goto bad;
	rc = sd_bus_message_append(m, "ss", req->unit, "fail");
	if (rc < 0)
		goto bad;
	rc = sd_bus_message_open_container(m, 'a', "(sv)");
	if (rc < 0)
		goto bad;
	rc = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)", "Description", "s", req->description,
				   "PIDs", "au", 1, (uint32_t)req->pid, "Delegate", "b", 1,
				   "CollectMode", "s", "inactive-or-failed");
	if (rc >= 0 && req->slice[0])
		rc = sd_bus_message_append(m, "(sv)", "Slice", "s", req->slice);
	if (rc >= 0 && req->memory_max != UINT64_MAX)
		rc = sd_bus_message_append(m, "(sv)", "MemoryMax", "t", req->memory_max);
	if (rc >= 0 && req->memory_high != UINT64_MAX)
		rc = sd_bus_message_append(m, "(sv)", "MemoryHigh", "t", req->memory_high);
	if (rc < 0)
		goto bad;
	rc = sd_bus_message_close_container(m);
	if (rc >= 0)
		rc = sd_bus_message_append(m, "a(sa(sv))", 0);	/* no auxiliary units */
	if (rc < 0)
		goto bad;
	rc = sd_bus_call(bus, m, SCOPE_WAIT_US, &err, &reply);
	if (rc < 0) {
		/* a scope of that name still holds what a run before left running */
		if (sd_bus_error_has_name(&err, "org.freedesktop.systemd1.UnitExists"))
			rc = -EEXIST;
		WHY("systemd did not make scope '%s': %s", req->unit,
		    err.message ? err.message : strerror(-rc));
		goto out;
	}
	rc = sd_bus_message_read(reply, "o", &job);
	if (rc < 0)
		goto bad;
	snprintf(jobpath, sizeof(jobpath), "%s", job);
	/* PIDs moved us when the unit started, and that is the job's end */
	deadline = now_us() + SCOPE_WAIT_US;
	while (!(result = job_result(&jobs, jobpath))) {
		uint64_t t = now_us();

		rc = sd_bus_process(bus, NULL);
		if (rc < 0)
			goto bad;
		if (rc > 0)
			continue;
		if (t >= deadline) {
			rc = -ETIMEDOUT;
			WHY("systemd did not finish starting scope '%s' in %llu s", req->unit,
			    (unsigned long long)(SCOPE_WAIT_US / 1000000));
			goto out;
		}
		rc = sd_bus_wait(bus, deadline - t);
		if (rc < 0 && rc != -EINTR)
			goto bad;
	}
	if (strcmp(result, "done")) {
		rc = -EIO;
		WHY("systemd's job for scope '%s' ended '%s', not 'done'", req->unit, result);
		goto out;
	}
	rc = 0;
	goto out;
bad:
	WHY("cannot ask systemd for scope '%s': %s", req->unit, strerror(-rc));
out:
	sd_bus_error_free(&err);
	sd_bus_message_unref(reply);
	sd_bus_message_unref(m);
	sd_bus_slot_unref(slot);
	return rc;
}

/* a connection to a manager's own socket at addr: 0, or -errno and *bus NULL */
static int private_bus(sd_bus **bus, const char *addr)
{
	int rc = sd_bus_new(bus);

	if (rc >= 0)
		rc = sd_bus_set_address(*bus, addr);
	if (rc >= 0)
		rc = sd_bus_start(*bus);
	if (rc < 0)
		*bus = sd_bus_unref(*bus);
	return rc;
}

int pc_scope_start(const struct pc_scope_req *req, char *why, size_t whylen)
{
	sd_bus *bus = NULL;
	int rc;

	rc = sd_load(why, whylen);
	if (rc < 0)
		return rc;
	/* root asks the system's manager; a user, the user's own (user@UID.service) */
	rc = req->user ? sd_bus_open_user(&bus) : sd_bus_open_system(&bus);
	if (rc < 0) {
		const char *rt = secure_getenv("XDG_RUNTIME_DIR");
		char addr[300];
		int rc2;

		/*
		 * No D-Bus daemon (yet), or no user bus (Debian without
		 * dbus-user-session): the manager's own socket, as systemctl
		 * does: root's, or the user's in its runtime directory.
		 */
		if (!req->user)
			snprintf(addr, sizeof(addr), "unix:path=/run/systemd/private");
		else if (rt && rt[0] == '/')
			snprintf(addr, sizeof(addr), "unix:path=%s/systemd/private", rt);
		else
			snprintf(addr, sizeof(addr), "unix:path=/run/user/%u/systemd/private",
				 (unsigned)geteuid());
		rc2 = private_bus(&bus, addr);
		/*
		 * An XDG_RUNTIME_DIR that is another user's (su without -l
		 * keeps the caller's): ours is where logind makes it.
		 */
		if (rc2 < 0 && req->user && rt && rt[0] == '/') {
			char own[300];

			snprintf(own, sizeof(own), "unix:path=/run/user/%u/systemd/private",
				 (unsigned)geteuid());
			if (strcmp(own, addr)) {
				snprintf(addr, sizeof(addr), "%s", own);
				rc2 = private_bus(&bus, addr);
			}
		}
		if (rc2 >= 0) {
			rc = 0;
		} else if (req->user) {
			/*
			 * The socket's error says more than the bus's (ENOMEDIUM
			 * for no XDG_RUNTIME_DIR, as under sudo or setpriv): a
			 * socket that is not there is a manager that is not
			 * running, which is what a user can do something about.
			 */
			if (rc2 == -ENOENT)
				WHY("cannot reach systemd's user bus: the user's manager "
				    "(user@%u.service) is not running (no %s)",
				    (unsigned)geteuid(), addr + 10);
			else
				WHY("cannot reach systemd's user bus: %s (%s)", strerror(-rc2),
				    addr + 10);
			return rc2;
		}
	}
	if (rc < 0) {
		WHY("cannot reach systemd's %s bus: %s", req->user ? "user" : "system",
		    strerror(-rc));
		return rc;
	}
	rc = pc_scope_start_on(bus, req, why, whylen);
	sd_bus_flush_close_unref(bus);
	return rc;
}
