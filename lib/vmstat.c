/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vmstat.c: counters from /proc/vmstat ("name value" lines), and the swap
 * readahead controller behind `pagecache tune swap --auto`. The controller
 * is a pure function of the counters it is fed, so its decisions are
 * tested without a kernel; writing vm.page-cluster is the caller's job.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int pc_vmstat_parse(const char *text, const char *const *names, uint64_t *vals, size_t n)
{
	int found = 0;

	for (size_t i = 0; i < n; i++)
		vals[i] = PC_VMSTAT_MISSING;
	for (const char *p = text; p && *p;) {
		const char *sp = strchr(p, ' ');
		const char *nl = strchr(p, '\n');

		if (!nl)
			nl = p + strlen(p);
		if (sp && sp < nl) {
			size_t klen = (size_t)(sp - p);

			for (size_t i = 0; i < n; i++) {
				char *end;
				unsigned long long v;

				if (strlen(names[i]) != klen || memcmp(names[i], p, klen) ||
				    vals[i] != PC_VMSTAT_MISSING)
					continue;
				errno = 0;
				v = strtoull(sp + 1, &end, 10);
				if (errno || end == sp + 1 || (end != nl && *end != ' '))
					return -EBADMSG;
				vals[i] = v;
				found++;
				break;
			}
		}
		p = *nl ? nl + 1 : nl;
	}
	return found;
}

int pc_vmstat_read(const char *const *names, uint64_t *vals, size_t n)
{
	const size_t cap = 65536;	/* /proc/vmstat is about 5 KiB */
	char *buf;
	long got = 0;
	size_t len = 0;
	int rc, fd;

	for (size_t i = 0; i < n; i++)
		vals[i] = PC_VMSTAT_MISSING;
	fd = open("/proc/vmstat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = malloc(cap);	/* per call: safe from several threads */
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < cap - 1 && (got = pc_sys_read(fd, buf + len, cap - 1 - len)) > 0)
		len += (size_t)got;
	rc = got < 0 ? (int)got : 0;
	close(fd);
	if (rc == 0) {
		buf[len] = 0;
		rc = pc_vmstat_parse(buf, names, vals, n);
	}
	free(buf);
	return rc;
}

/* ---- the swap readahead controller ---- */

void pc_swap_tuner_init(struct pc_swap_tuner *t, int page_cluster)
{
	memset(t, 0, sizeof(*t));
	t->pc = page_cluster;
	t->min_pc = 0;
	t->max_pc = 5;		/* VMA readahead's window stops at 1 << 5 */
	t->up_ratio = 0.75;
	t->down_ratio = 0.40;
	t->min_swapins = 64;
	t->confirm = 2;
	t->probe_after = 1;
	t->probe_max = 32;
	t->last_ratio = -1;
}

int pc_swap_tuner_step(struct pc_swap_tuner *t, uint64_t d_ra, uint64_t d_hit, uint64_t d_swpin)
{
	int before = t->pc;
	double ratio;

	t->intervals++;
	t->last_ratio = -1;
	t->acc_ra += d_ra;
	t->acc_hit += d_hit;
	t->acc_swpin += d_swpin;
	t->acc_n++;
	if (t->acc_swpin < t->min_swapins) {
		/* too little swap-in to judge: keep the setting and the streaks */
		if (t->acc_n >= 4)
			t->acc_ra = t->acc_hit = t->acc_swpin = t->acc_n = 0;	/* idle */
		return t->pc;
	}
	/* judged on what the thin intervals before this one added up to */
	d_ra = t->acc_ra;
	d_hit = t->acc_hit;
	t->acc_ra = t->acc_hit = t->acc_swpin = t->acc_n = 0;
	if (t->probe_wait <= 0)		/* the first wait, as the caller may have set it */
		t->probe_wait = t->probe_after > 0 ? t->probe_after : 1;
	if (t->pc == 0) {
		/*
		 * Readahead off tells nothing about whether it would pay: soon
		 * after swapping starts at 0, try 1 and let the hits decide;
		 * each probe that finds none doubles the wait for the next.
		 */
		t->up = t->down = 0;
		t->probing = 0;
		if (++t->idle_at_zero >= t->probe_wait && t->max_pc > 0) {
			t->idle_at_zero = 0;
			t->pc = 1;
			t->probing = 1;
			t->probe_at = t->intervals;
			t->probes++;
		}
		return t->pc;
	}
	t->idle_at_zero = 0;
	/*
	 * No readahead at all while swapping in: the kernel's own window
	 * has shrunk to one page, so its hits say readahead is a miss.
	 */
	ratio = d_ra ? (double)(d_hit > d_ra ? d_ra : d_hit) / (double)d_ra : 0;
	t->last_ratio = ratio;
	if (ratio >= t->up_ratio) {
		t->down = 0;
		if (t->probing == 1) {
			/* the probe paid: the next one comes soon again, and the climb is quick */
			t->probing = 2;
			t->probe_wait = t->probe_after > 0 ? t->probe_after : 1;
			if (t->probe_at > t->settled_at)
				t->settled_at = t->probe_at;
		}
		if (++t->up >= (t->probing == 2 ? 1 : t->confirm) && t->pc < t->max_pc) {
			t->pc++;
			t->up = 0;
		}
	} else if (ratio < t->down_ratio) {
		t->up = 0;
		if (t->probing == 2)
			t->probing = 0;	/* the quick climb ends at the first miss */
		if (++t->down >= t->confirm && t->pc > t->min_pc) {
			t->pc--;
			t->down = 0;
			if (t->pc == 0 && t->probing == 1) {
				/* a fruitless probe: back to 0, as if it had stayed there */
				t->probing = 0;
				t->fruitless++;
				t->probe_wait = t->probe_wait > t->probe_max / 2 ? t->probe_max
										 : 2 * t->probe_wait;
				return t->pc;
			}
		}
	} else {
		t->up = t->down = 0;	/* the dead band: hysteresis */
		if (t->probing == 2)
			t->probing = 0;
	}
	if (t->pc != before)
		t->settled_at = t->intervals;
	return t->pc;
}
