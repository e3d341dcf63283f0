/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vmstat.c: /proc/vmstat parsed from a recorded file and live, and the
 * swap readahead controller's decisions on synthetic counter deltas.
 */
#include "pagecache.h"
#include "tap.h"

/* Feed the same interval `times` times; the page-cluster at the end. */
static int feed(struct pc_swap_tuner *t, int times, uint64_t ra, uint64_t hit, uint64_t swpin)
{
	int pc = t->pc;

	for (int i = 0; i < times; i++)
		pc = pc_swap_tuner_step(t, ra, hit, swpin);
	return pc;
}

int main(void)
{
	static const char *const names[] = { "pswpin", "swap_ra", "swap_ra_hit", "pgmajfault",
					     "no_such_counter" };
	uint64_t v[5];
	char *t;
	struct pc_swap_tuner tu;
	int pc;

	t = slurp("tests/fixtures/vmstat/vmstat-6.18");
	ok(t && pc_vmstat_parse(t, names, v, 5) == 4, "recorded 6.18 vmstat: 4 of 5 counters found");
	ok(v[0] == 0 && v[1] == 0 && v[2] == 0 && v[3] > 0,
	   "values are read (pswpin 0, pgmajfault %llu)", (unsigned long long)v[3]);
	ok(v[4] == PC_VMSTAT_MISSING, "a counter the kernel lacks is MISSING, not 0");
	ok(pc_vmstat_parse("swap_ra 12\nswap_ra_hit 7\n", names, v, 5) == 2 && v[1] == 12 &&
	   v[2] == 7, "swap_ra is not confused with swap_ra_hit");
	ok(pc_vmstat_parse("swap_ra_hit 7\nswap_ra 12", names, v, 5) == 2 && v[1] == 12,
	   "order does not matter; no final newline is fine");
	ok(pc_vmstat_parse("pswpin x12\n", names, v, 5) == -EBADMSG, "a non-number is refused");
	ok(pc_vmstat_parse("pswpin 12x\n", names, v, 5) == -EBADMSG, "trailing junk is refused");
	ok(pc_vmstat_parse("", names, v, 5) == 0 && v[0] == PC_VMSTAT_MISSING, "empty text: none");
	ok(pc_vmstat_parse("pswpin 18446744073709551615\n", names, v, 1) == 1 &&
	   v[0] == UINT64_MAX, "64-bit counters");
	if (access("/proc/swaps", F_OK) == 0)
		ok(pc_vmstat_read(names, v, 4) == 4, "the live /proc/vmstat has them all");
	else
		skip("this kernel has no swap support (no /proc/swaps)", "live swap counters");

	/* the controller */
	pc_swap_tuner_init(&tu, 3);
	ok(pc_swap_tuner_step(&tu, 1000, 950, 1000) == 3, "one good interval: hold (hysteresis)");
	ok(pc_swap_tuner_step(&tu, 1000, 950, 1000) == 4, "two in a row: up to 4");
	ok(feed(&tu, 10, 1000, 990, 1000) == 5, "sequential hits climb to the ceiling, 5");
	ok(feed(&tu, 5, 1000, 600, 1000) == 5, "in the dead band (60%%) it holds");
	ok(pc_swap_tuner_step(&tu, 1000, 100, 1000) == 5 &&
	   pc_swap_tuner_step(&tu, 1000, 100, 1000) == 4, "two missing intervals: down one");
	ok(pc_swap_tuner_step(&tu, 1000, 100, 1000) == 4 &&
	   pc_swap_tuner_step(&tu, 1000, 990, 1000) == 4 &&
	   pc_swap_tuner_step(&tu, 1000, 100, 1000) == 4, "alternating: no flapping");
	ok(feed(&tu, 20, 10, 10, 5) == 4, "too few swap-ins: no decision");
	pc_swap_tuner_init(&tu, 4);
	ok(feed(&tu, 8, 0, 0, 5000) == 0 && tu.idle_at_zero == 0,
	   "swapping with no readahead at all (window of 1): down to 0 in 8 intervals");
	pc = feed(&tu, 7, 0, 0, 5000);
	ok(pc == 0, "at 0 it waits");
	ok(pc_swap_tuner_step(&tu, 0, 0, 5000) == 1, "then probes 1");
	ok(feed(&tu, 2, 800, 790, 5000) == 2, "and climbs again when the probe hits");
	pc_swap_tuner_init(&tu, 0);
	ok(feed(&tu, 100, 0, 0, 10) == 0, "idle at 0 (no swap-in): no probing");
	pc_swap_tuner_init(&tu, 2);
	ok(pc_swap_tuner_step(&tu, 100, 500, 1000) == 2 && tu.last_ratio == 1.0,
	   "hits above readahead (late counting) are capped at 100%%");
	tu.max_pc = 2;
	ok(feed(&tu, 10, 100, 100, 1000) == 2, "max_pc is respected");
	return done_testing();
}
