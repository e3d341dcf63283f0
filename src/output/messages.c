/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * messages.c: how every program of pagecache speaks on stderr (problem
 * first, subject quoted, escaped) and counts per-file failures for the exit
 * status and the JSON "errors" list. Shared by pagecache and
 * pagecache-bench, which set cli_cmd to the command they run.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "sys.h"		/* the seam: PAGECACHE_FAULT (lib/sys.h) */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *cli_cmd = "pagecache";
static unsigned failures;
static pthread_mutex_t msg_lock = PTHREAD_MUTEX_INITIALIZER;

void cli_warn(const char *fmt, ...)
{
	va_list ap;

	char *msg, *esc = NULL;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	if (msg)
		esc = out_escape(msg);	/* a name may hold ESC or a newline */
	pthread_mutex_lock(&msg_lock);
	fprintf(stderr, "pagecache: %s\n", esc ? esc : "(out of memory)");
	pthread_mutex_unlock(&msg_lock);
	free(esc);
	free(msg);
}

void cli_fail_msg(const char *path, const char *what, const char *reason)
{
	struct orec r = { 0 };

	cli_warn("%s '%s': %s", what, path, reason);
	orec_str(&r, "path", path, 0);
	orec_str(&r, "error", what, 0);
	orec_str(&r, "reason", reason, 0);
	out_list_add("errors", &r);
	__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
}

void cli_fail(const char *path, int err, const char *what)
{
	cli_fail_msg(path, what, strerror(err));
}

const char *cli_nest_why(int rc, const struct pc_cgroup_nest *n, char *buf, size_t len)
{
	const char *self = n->parent[0] ? n->parent : "/sys/fs/cgroup";
	char scope[sizeof(n->why) + 40] = "";

	/* what systemd said, where it was asked and gave no scope */
	if (n->why[0])
		snprintf(scope, sizeof(scope), "; no scope of our own: %s", n->why);
	switch (rc) {
	case -ENOENT:
		snprintf(buf, len, "no memory cgroup controller (v1 or v2) is mounted");
		break;
	case -EOPNOTSUPP:
		snprintf(buf, len, "our cgroup '%s' is not given the memory controller (it is not "
			 "in its cgroup.controllers); a cgroup beside it or above would escape its "
			 "limits%s", self, scope);
		break;
	case -EBUSY:
		snprintf(buf, len, "other processes share our cgroup '%s', so it cannot hand the "
			 "memory controller on (cgroup v2: a cgroup with processes of its own has no "
			 "controllers for children)%s; run it where systemd's bus answers, or from "
			 "a delegated cgroup of its own", self, scope);
		break;
	default:
		snprintf(buf, len, "cannot make room for a memory cgroup beneath '%s': %s%s%s",
			 self, strerror(-rc), rc == -EACCES || rc == -EPERM
			 ? " (needs write permission on that cgroup: to be its owner (a delegated "
			   "cgroup) or CAP_DAC_OVERRIDE)" : "", scope);
	}
	return buf;
}

unsigned cli_failures(void)
{
	return __atomic_load_n(&failures, __ATOMIC_RELAXED);
}

int cli_usage_error(const char *fmt, ...)
{
	va_list ap;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	{
		char *esc = out_escape(msg);

		fprintf(stderr, "pagecache %s: %s\nTry 'pagecache %s --help'.\n", cli_cmd,
			esc ? esc : msg, cli_cmd);
		free(esc);
	}
	if (out_format() == OUT_JSON) {
		struct orec r = { 0 };

		orec_str(&r, "error", msg, 0);
		orec_u64(&r, "exit", EXIT_USAGE, 0);
		out_object("usage", &r);
		out_flush();
	}
	return EXIT_USAGE;
}

bool cli_stderr_tty(void)
{
	return isatty(STDERR_FILENO);
}

int cli_fault_env(void)
{
	/*
	 * Not where the kernel marked this run secure (AT_SECURE: file
	 * capabilities, setuid): a fault is the tests' to inject, never the
	 * caller's, into a program that holds more privilege than it does.
	 */
	const char *spec = secure_getenv("PAGECACHE_FAULT");
	int rc = pc_sys_inject_env(spec);

	if (rc == -ENOMEM) {	/* not the spec's fault: say what it is */
		fprintf(stderr, "pagecache: out of memory\n");
		return EXIT_PARTIAL;
	}
	if (rc == -EOPNOTSUPP) {	/* lib/sys.c, PC_SYS_NOFAULT */
		fprintf(stderr, "pagecache: PAGECACHE_FAULT is for a pagecache that carries the "
			"library (make LINK=static); this one uses libpagecache.so\n");
		return EXIT_USAGE;
	}
	if (rc < 0) {
		fprintf(stderr, "pagecache: bad PAGECACHE_FAULT '%s'\n", spec);
		return EXIT_USAGE;
	}
	return 0;
}

const char *cli_budget_reason(int stopped)
{
	if (stopped == PC_BUDGET_MAX)
		return "the --max-mem limit was reached";
	return pc_budget_reason(stopped);
}

int cli_trace_ring_env(unsigned *ret_pages)
{
	/*
	 * The perf ring's pages a CPU (up to 4 GiB each), which a copy given
	 * CAP_PERFMON or CAP_IPC_LOCK would lock for its caller: not read
	 * where the run is secure, as PAGECACHE_FAULT.
	 */
	const char *env = secure_getenv("PAGECACHE_TRACE_RING");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return 0;
	v = strtoul(env, &end, 10);
	if (*end || !v || (v & (v - 1)) || v > (1ul << 20))
		return cli_usage_error("PAGECACHE_TRACE_RING='%s': pages a CPU, a power of two "
				       "(1 to 1048576)", env);
	*ret_pages = (unsigned)v;
	return 0;
}

const char *cli_snapshot_target_why(const char *path, int err)
{
	static char why[PATH_MAX + 128];
	char to[PATH_MAX];
	ssize_t k;

	switch (err) {
	case ELOOP:
		k = readlink(path, to, sizeof(to) - 1);
		to[k > 0 ? k : 0] = 0;
		snprintf(why, sizeof(why), "it is a symbolic link%s%s%s (neither written through "
			 "nor replaced: name the file itself)", k > 0 ? " to '" : "", to,
			 k > 0 ? "'" : "");
		return why;
	case EEXIST:
		return "it is there and is not a regular file (a device, FIFO or socket is "
		       "never replaced)";
	case ENOSPC:
		return "No space left on device; the previous snapshot, if any, is intact";
	default:
		return strerror(err);
	}
}
