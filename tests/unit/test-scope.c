/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * scope.c: asking systemd for a delegated scope, tested on a host without
 * systemd: the request goes over a socketpair to a made-up manager in a
 * thread of this test (sd-bus on both ends, peer to peer), which answers
 * as systemd does (the job's object path, then JobRemoved), or the other
 * way round, or with an error. Also: which slice a cgroup's unit is in, and
 * the memory limits copied onto the scope, from a made-up cgroup tree.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "tap.h"

#include <pthread.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

/* ---- the made-up manager ---- */

static struct {
	int fd;				/* its end of the socketpair */
	const char *result;		/* the job's end: "done", "failed" */
	bool signal_first;		/* JobRemoved before the method's reply */
	bool refuse;			/* answer with an error */
	/* what it was asked */
	char unit[64], mode[16], slice[64], collect[32], desc[128];
	int delegate, npids, nprops;
	uint32_t pid;
	uint64_t memory_max, memory_high;
} M;

static int emit_removed(sd_bus *bus)
{
	return sd_bus_emit_signal(bus, "/org/freedesktop/systemd1",
				  "org.freedesktop.systemd1.Manager", "JobRemoved", "uoss", 42u,
				  "/org/freedesktop/systemd1/job/42", M.unit, M.result);
}

static int start_transient(sd_bus_message *m, void *userdata, sd_bus_error *err)
{
	sd_bus *bus = sd_bus_message_get_bus(m);
	const char *unit, *mode, *name, *s;
	int rc;

	(void)userdata;
	if (M.refuse)
		return sd_bus_error_set(err, "org.freedesktop.DBus.Error.AccessDenied",
					"Access denied");
	rc = sd_bus_message_read(m, "ss", &unit, &mode);
	if (rc < 0)
		return rc;
	snprintf(M.unit, sizeof(M.unit), "%s", unit);
	snprintf(M.mode, sizeof(M.mode), "%s", mode);
	M.memory_max = M.memory_high = UINT64_MAX;
	rc = sd_bus_message_enter_container(m, 'a', "(sv)");
	if (rc < 0)
		return rc;
	while ((rc = sd_bus_message_enter_container(m, 'r', "sv")) > 0) {
		rc = sd_bus_message_read(m, "s", &name);
		if (rc < 0)
			return rc;
		M.nprops++;
		if (!strcmp(name, "PIDs")) {
			rc = sd_bus_message_enter_container(m, 'v', "au");
			if (rc >= 0)
				rc = sd_bus_message_enter_container(m, 'a', "u");
			while (rc >= 0 && (rc = sd_bus_message_read(m, "u", &M.pid)) > 0)
				M.npids++;
			if (rc >= 0)
				rc = sd_bus_message_exit_container(m);
			if (rc >= 0)
				rc = sd_bus_message_exit_container(m);
		} else if (!strcmp(name, "Delegate")) {
			rc = sd_bus_message_read(m, "v", "b", &M.delegate);
		} else if (!strcmp(name, "MemoryMax")) {
			rc = sd_bus_message_read(m, "v", "t", &M.memory_max);
		} else if (!strcmp(name, "MemoryHigh")) {
			rc = sd_bus_message_read(m, "v", "t", &M.memory_high);
		} else if (!strcmp(name, "Slice") || !strcmp(name, "CollectMode") ||
			   !strcmp(name, "Description")) {
			rc = sd_bus_message_read(m, "v", "s", &s);
			if (rc >= 0)
				snprintf(!strcmp(name, "Slice") ? M.slice
					 : !strcmp(name, "CollectMode") ? M.collect : M.desc,
					 !strcmp(name, "Description") ? sizeof(M.desc) : sizeof(M.slice),
					 "%s", s);
		} else {
			rc = sd_bus_message_skip(m, "v");
		}
		if (rc < 0)
			return rc;
		rc = sd_bus_message_exit_container(m);
		if (rc < 0)
			return rc;
	}
	if (rc < 0)
		return rc;
	rc = sd_bus_message_exit_container(m);
	if (rc < 0)
		return rc;
	rc = sd_bus_message_skip(m, "a(sa(sv))");
	if (rc < 0)
		return rc;
	if (M.signal_first && (rc = emit_removed(bus)) < 0)
		return rc;
	rc = sd_bus_reply_method_return(m, "o", "/org/freedesktop/systemd1/job/42");
	if (rc < 0 || M.signal_first)
		return rc;
	return emit_removed(bus);
}

static const sd_bus_vtable manager_vtable[] = {
	SD_BUS_VTABLE_START(0),
	SD_BUS_METHOD("StartTransientUnit", "ssa(sv)a(sa(sv))", "o", start_transient, 0),
	SD_BUS_VTABLE_END
};

static void *manager(void *arg)
{
	sd_bus *bus = NULL;
	sd_id128_t id;

	(void)arg;
	if (sd_bus_new(&bus) < 0 || sd_bus_set_fd(bus, M.fd, M.fd) < 0 ||
	    sd_id128_randomize(&id) < 0 || sd_bus_set_server(bus, 1, id) < 0 ||
	    sd_bus_add_object_vtable(bus, NULL, "/org/freedesktop/systemd1",
				     "org.freedesktop.systemd1.Manager", manager_vtable, NULL) < 0 ||
	    sd_bus_start(bus) < 0)
		return NULL;
	for (;;) {
		int rc = sd_bus_process(bus, NULL);

		if (rc < 0)
			break;		/* the client went: done */
		if (rc == 0 && sd_bus_wait(bus, UINT64_MAX) < 0)
			break;
	}
	sd_bus_flush_close_unref(bus);
	return NULL;
}

/* One request to a fresh made-up manager: pc_scope_start_on's result. */
static int ask(const struct pc_scope_req *req, const char *result, bool signal_first, bool refuse,
	       char *why, size_t whylen)
{
	int sv[2], rc;
	pthread_t t;
	sd_bus *bus = NULL;

	memset(&M, 0, sizeof(M));
	M.result = result;
	M.signal_first = signal_first;
	M.refuse = refuse;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	M.fd = sv[1];
	pthread_create(&t, NULL, manager, NULL);
	rc = sd_bus_new(&bus);
	if (rc >= 0)
		rc = sd_bus_set_fd(bus, sv[0], sv[0]);
	if (rc >= 0)
		rc = sd_bus_start(bus);
	if (rc >= 0)
		rc = pc_scope_start_on(bus, req, why, whylen);
	sd_bus_flush_close_unref(bus);
	pthread_join(t, NULL);
	return rc;
}

/* ---- a made-up cgroup tree for the limits ---- */

static void put(const char *dir, const char *file, const char *val)
{
	char p[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "w");
	if (f) {
		fputs(val, f);
		fclose(f);
	}
}

int main(void)
{
	struct pc_scope_req req = { .unit = "pagecache-77.scope", .description = "test",
				    .pid = 77, .slice = "user-1000.slice",
				    .memory_max = 1 << 30, .memory_high = UINT64_MAX };
	char why[256] = "", buf[700], root[300], d[600];
	uint64_t max, high;
	int rc;

	/* the slice of the caller's unit */
	ok(pc_scope_slice("/user.slice/user-1000.slice/session-3.scope", false, buf,
			  sizeof(buf)) == 0 && !strcmp(buf, "user-1000.slice"),
	   "a login's session scope: its user's slice (%s)", buf);
	ok(pc_scope_slice("/system.slice/backup.service", false, buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "system.slice"), "a service: system.slice (%s)", buf);
	ok(pc_scope_slice("/system.slice/foo.service/sub.slice/x", false, buf, sizeof(buf)) == 0 &&
	   !strcmp(buf, "system.slice"), "a slice below a unit is no slice of the manager's (%s)",
	   buf);
	ok(pc_scope_slice("/init.scope", false, buf, sizeof(buf)) == -ENOENT, "no slice: none");
	ok(pc_scope_slice("/", false, buf, sizeof(buf)) == -ENOENT, "the root: none");
	ok(pc_scope_slice("/user.slice/user-1000.slice/user@1000.service/app.slice/a.scope", true,
			  buf, sizeof(buf)) == 0 && !strcmp(buf, "app.slice"),
	   "the user's manager: its own slice (%s)", buf);
	ok(pc_scope_slice("/user.slice/user-1000.slice/session-3.scope", true, buf, sizeof(buf)) ==
	   -ENOENT, "the user's manager: none outside user@UID.service");

	/* the limits of the caller's unit, up to its slice */
	snprintf(root, sizeof(root), "%s/cg", scratch_dir());
	snprintf(d, sizeof(d), "%s/system.slice/b.service/sub", root);
	mkdir(root, 0755);
	snprintf(buf, sizeof(buf), "%s/system.slice", root);
	mkdir(buf, 0755);
	put(buf, "memory.max", "1000\n");	/* the slice's: it stays in it anyway */
	snprintf(buf, sizeof(buf), "%s/system.slice/b.service", root);
	mkdir(buf, 0755);
	put(buf, "memory.max", "8388608\n");
	put(buf, "memory.high", "max\n");
	mkdir(d, 0755);
	put(d, "memory.max", "max\n");
	put(d, "memory.high", "4194304\n");
	pc_scope_limits(root, "/system.slice/b.service/sub", &max, &high);
	is_u64(max, 8388608, "memory.max: the unit's, the tightest below the slice");
	is_u64(high, 4194304, "memory.high: the sub-cgroup's");
	pc_scope_limits(root, "/system.slice", &max, &high);
	ok(max == UINT64_MAX && high == UINT64_MAX, "a slice's own limits are not copied");

	/* the request, and the wait for its job */
	rc = ask(&req, "done", false, false, why, sizeof(why));
	ok(rc == 0, "a scope started (rc %d: %s)", rc, why);
	ok(!strcmp(M.unit, "pagecache-77.scope") && !strcmp(M.mode, "fail"),
	   "asked by name, mode fail (%s %s)", M.unit, M.mode);
	ok(M.npids == 1 && M.pid == 77, "PIDs: the one pid (%d: %u)", M.npids, M.pid);
	ok(M.delegate == 1, "Delegate=yes");
	ok(!strcmp(M.collect, "inactive-or-failed"), "CollectMode=inactive-or-failed: no trace");
	ok(!strcmp(M.slice, "user-1000.slice"), "Slice: the caller's (%s)", M.slice);
	ok(M.memory_max == 1 << 30 && M.memory_high == UINT64_MAX,
	   "MemoryMax copied, no MemoryHigh where none");
	rc = ask(&req, "done", true, false, why, sizeof(why));
	ok(rc == 0, "JobRemoved before the reply: still seen (rc %d: %s)", rc, why);
	rc = ask(&req, "failed", false, false, why, sizeof(why));
	ok(rc == -EIO && strstr(why, "'failed'"), "a failed job: -EIO, said (%s)", why);
	rc = ask(&req, "done", false, true, why, sizeof(why));
	ok(rc < 0 && strstr(why, "Access denied"), "refused: systemd's message said (%s)", why);
	req.slice[0] = 0;
	req.memory_max = UINT64_MAX;
	rc = ask(&req, "done", false, false, why, sizeof(why));
	ok(rc == 0 && !M.slice[0] && M.memory_max == UINT64_MAX && M.nprops == 4,
	   "no slice, no limits: neither asked (%d properties)", M.nprops);

	/* the seam: as if systemd did not manage this host */
	pc_sys_inject(PC_SYS_SYSTEMD, ENOENT, 0, 0);
	ok(!pc_scope_systemd(), "the \"systemd\" fault point: no systemd");
	pc_sys_inject_reset();

	snprintf(buf, sizeof(buf), "rm -rf '%s'", scratch_dir());
	rc = system(buf);
	(void)rc;
	return done_testing();
}
