/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * budget.c: how much page cache one job may add without hurting the host.
 *
 * MemAvailable counts clean page cache as available, so warming barely
 * moves it: a guard that only watched it would never fire. The promise is
 * therefore about what we add: a job adds at most MemAvailable minus a
 * reserve, as seen when it started (and at most the caller's memory
 * cgroup headroom, limit minus usage, where a limit is set), and stops at
 * once if MemAvailable later falls below the reserve because something
 * else grew. The machine's state is re-read every 64 MiB granted. A file
 * that cannot be read is an error (through the seam, sys.c), never taken
 * for "no limit" or "nothing available"; only an absent one means none.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RECHECK_BYTES (64ull << 20)

static int read_u64_file(const char *path, uint64_t *ret)
{
	char buf[64];
	int err = 0;
	FILE *f = pc_sys_fopen_read(path, &err);
	unsigned long long v;

	if (!f)
		return err;
	if (!fgets(buf, sizeof(buf), f)) {
		err = ferror(f) && errno ? -errno : -EIO;
		fclose(f);
		return err;
	}
	fclose(f);
	if (!strncmp(buf, "max", 3)) {
		*ret = UINT64_MAX;
		return 0;
	}
	if (sscanf(buf, "%llu", &v) != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* The caller's memory cgroup: v1 "N:memory:/p" or v2 "0::/p". 0 or -errno. */
static int read_cgroup(struct pc_memstat *m)
{
	char line[512], v1[256], v2[256], dir[600];
	int rc = pc_proc_cgroup(0, v1, sizeof(v1), v2, sizeof(v2));
	uint64_t lim, use;
	FILE *f;

	if (rc < 0)
		return rc == -ENOENT ? 0 : rc;
	if (*v1) {
		snprintf(m->cg_path, sizeof(m->cg_path), "%s", v1);
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory%s/memory.stat", v1);
		f = pc_sys_fopen_read(dir, &rc);
		lim = UINT64_MAX;
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long long v;

			if (sscanf(line, "hierarchical_memory_limit %llu", &v) == 1)
				lim = v;
		}
		if (f) {
			rc = ferror(f) ? -errno : 0;
			fclose(f);
		}
		if (rc < 0 && rc != -ENOENT)
			return rc;
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", v1);
		if (lim < (1ull << 60)) {
			rc = read_u64_file(dir, &use);
			if (rc < 0)
				return rc;
			m->cg_limit = lim;
			m->cg_usage = use;
		}
		return 0;
	}
	if (*v2) {
		/* The tightest headroom of this cgroup and its ancestors. */
		char p[256];
		uint64_t best = UINT64_MAX;

		snprintf(m->cg_path, sizeof(m->cg_path), "%s", v2);
		snprintf(p, sizeof(p), "%s", v2);
		for (;;) {
			snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s/memory.max", p);
			if (read_u64_file(dir, &lim) == 0 && lim != UINT64_MAX) {
				snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s/memory.current", p);
				if (read_u64_file(dir, &use) == 0) {
					uint64_t room = use < lim ? lim - use : 0;

					if (room < best) {
						best = room;
						m->cg_limit = lim;
						m->cg_usage = use;
					}
				}
			}
			char *slash = strrchr(p, '/');
			if (!slash || slash == p)
				break;
			*slash = 0;
		}
	}
	return 0;
}

int pc_meminfo_read(const char *const *keys, uint64_t *ret, size_t n)
{
	int rc = 0, found = 0;
	FILE *f = pc_sys_fopen_read("/proc/meminfo", &rc);
	char line[256];

	if (!f)
		return rc;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		char key[64];

		if (sscanf(line, "%63[^:]: %llu", key, &kb) != 2)
			continue;
		for (size_t i = 0; i < n; i++)
			if (!strcmp(key, keys[i])) {
				ret[i] = (uint64_t)kb << 10;
				found++;
			}
	}
	rc = ferror(f) ? -errno : found;
	fclose(f);
	return rc;
}

int pc_memstat_read(struct pc_memstat *ret)
{
	static const char *const keys[] = { "MemTotal", "MemAvailable" };
	uint64_t v[2] = { 0, 0 };
	struct pc_memstat m = { 0 };
	int rc = pc_meminfo_read(keys, v, 2);

	if (rc < 0)
		return rc;
	m.mem_total = v[0];
	m.mem_available = v[1];
	if (!m.mem_total)
		return -EIO;
	rc = read_cgroup(&m);
	if (rc < 0)
		return rc;
	*ret = m;
	return 0;
}

uint64_t pc_default_reserve(const struct pc_memstat *m)
{
	uint64_t r = m->mem_total / 20;		/* 5% of RAM, at least 256 MiB */

	return r < (256ull << 20) ? 256ull << 20 : r;
}

/* Room left given the state now; sets *why when a limit binds. */
static uint64_t headroom(const struct pc_memstat *m, uint64_t reserve, int *why)
{
	uint64_t room = m->mem_available > reserve ? m->mem_available - reserve : 0;

	*why = PC_BUDGET_MEMORY;
	if (m->cg_limit) {
		uint64_t cres = reserve < m->cg_limit / 8 ? reserve : m->cg_limit / 8;
		uint64_t used = m->cg_usage + cres;
		uint64_t croom = used < m->cg_limit ? m->cg_limit - used : 0;

		if (croom < room) {
			room = croom;
			*why = PC_BUDGET_CGROUP;
		}
	}
	return room;
}

int pc_budget_init(struct pc_budget *b, uint64_t max_bytes, uint64_t reserve)
{
	struct pc_memstat m;
	pthread_mutex_t *lk;
	int why, rc = pc_memstat_read(&m);

	if (rc < 0)
		return rc;
	lk = malloc(sizeof(*lk));
	if (!lk)
		return -ENOMEM;
	pthread_mutex_init(lk, NULL);
	memset(b, 0, sizeof(*b));
	b->max_bytes = max_bytes ? max_bytes : UINT64_MAX;
	b->reserve = reserve == UINT64_MAX ? pc_default_reserve(&m) : reserve;
	b->headroom = headroom(&m, b->reserve, &why);
	b->lock = lk;
	return 0;
}

/*
 * Grant bytes, or with `unit` set as much of them as fits, in whole units
 * (a partial grant stops the budget: nothing more fits after it). The
 * 64 MiB recheck is the same for both: a grant that crosses it looks at
 * the machine first.
 */
static uint64_t grant(struct pc_budget *b, uint64_t bytes, uint64_t unit, bool *ok)
{
	pthread_mutex_t *lk = b->lock;
	uint64_t got = 0, fit = bytes;
	int short_why = PC_BUDGET_OK;

	pthread_mutex_lock(lk);
	*ok = false;
	if (b->stopped)
		goto out;
	if (b->taken + bytes > b->max_bytes) {
		if (!unit) {
			b->stopped = PC_BUDGET_MAX;
			goto out;
		}
		fit = b->max_bytes > b->taken ? b->max_bytes - b->taken : 0;
		short_why = PC_BUDGET_MAX;
	}
	if (b->since_check + fit >= RECHECK_BYTES) {
		struct pc_memstat m;
		int why;

		/* Something else may have grown: stop if the reserve is hit. */
		if (pc_memstat_read(&m) == 0 && headroom(&m, b->reserve, &why) == 0) {
			b->stopped = why;
			goto out;
		}
		b->since_check = 0;
	}
	if (b->taken + fit > b->headroom) {
		struct pc_memstat m;
		int why = PC_BUDGET_MEMORY;

		if (pc_memstat_read(&m) == 0)
			headroom(&m, b->reserve, &why);
		if (!unit) {
			b->stopped = why;
			goto out;
		}
		fit = b->headroom > b->taken ? b->headroom - b->taken : 0;
		short_why = why;
	}
	if (fit < bytes) {
		fit -= fit % unit;
		b->stopped = short_why;
	}
	b->taken += fit;
	b->since_check += fit;
	got = fit;
	*ok = fit == bytes;
out:
	pthread_mutex_unlock(lk);
	return got;
}

bool pc_budget_take(struct pc_budget *b, uint64_t bytes)
{
	bool ok;

	grant(b, bytes, 0, &ok);
	return ok;
}

uint64_t pc_budget_take_some(struct pc_budget *b, uint64_t bytes, uint64_t unit)
{
	bool ok;

	return grant(b, bytes, unit ? unit : 1, &ok);
}

void pc_budget_put(struct pc_budget *b, uint64_t bytes)
{
	pthread_mutex_t *lk = b->lock;

	pthread_mutex_lock(lk);
	b->taken = bytes < b->taken ? b->taken - bytes : 0;
	b->stopped = PC_BUDGET_OK;
	pthread_mutex_unlock(lk);
}

void pc_budget_pace(struct pc_budget *b, uint64_t bytes)
{
	pthread_mutex_t *lk = b->lock;
	double due, now;

	if (!b->rate)
		return;
	pthread_mutex_lock(lk);
	now = pc_now();
	if (!b->t0)
		b->t0 = now;
	b->paced += bytes;
	due = b->t0 + (double)b->paced / (double)b->rate;
	pthread_mutex_unlock(lk);
	if (due > now) {
		struct timespec ts;
		double d = due - now;

		ts.tv_sec = (time_t)d;
		ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
}

void pc_budget_release(struct pc_budget *b)
{
	if (b && b->lock) {
		pthread_mutex_destroy(b->lock);
		free(b->lock);
		b->lock = NULL;
	}
}

const char *pc_budget_reason(int stopped)
{
	switch (stopped) {
	case PC_BUDGET_MAX:
		return "the maximum was reached";
	case PC_BUDGET_MEMORY:
		return "MemAvailable would fall below the reserve";
	case PC_BUDGET_CGROUP:
		return "the memory cgroup's headroom is used up";
	default:
		return "within budget";
	}
}
