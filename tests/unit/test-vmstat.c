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
	ok(feed(&tu, 8, 0, 0, 5000) == 0 && tu.idle_at_zero == 0 && tu.settled_at == 8,
	   "swapping with no readahead at all (window of 1): down to 0 in 8 intervals, "
	   "settled at the 8th");
	ok(pc_swap_tuner_step(&tu, 0, 0, 5000) == 1 && tu.probes == 1,
	   "at 0 it probes 1 after one interval of swapping");
	ok(pc_swap_tuner_step(&tu, 800, 790, 5000) == 2 && pc_swap_tuner_step(&tu, 800, 790, 5000) == 3,
	   "a probe that hits climbs one step an interval");
	ok(tu.settled_at == 11, "the climb's last move is where it settled (%llu)",
	   (unsigned long long)tu.settled_at);

	/* started at 0, as bench swapin's auto column is */
	pc_swap_tuner_init(&tu, 0);
	ok(pc_swap_tuner_step(&tu, 0, 0, 5000) == 1, "from 0, the probe comes at the first interval");
	pc = feed(&tu, 4, 900, 880, 5000);
	ok(pc == 5, "sequential-like hits: up to 5 in 4 more intervals (%d)", pc);
	ok(feed(&tu, 50, 900, 880, 5000) == 5 && tu.settled_at == 5 && tu.intervals == 55,
	   "and stays there: converged at interval 5 of 55 (%llu)", (unsigned long long)tu.settled_at);
	ok(pc_swap_tuner_step(&tu, 900, 500, 5000) == 5 && pc_swap_tuner_step(&tu, 900, 880, 5000) == 5,
	   "the quick climb is over: one interval in the dead band moves nothing, nor one hit");

	/* random-like: readahead at 1 misses; the probes back off */
	pc_swap_tuner_init(&tu, 0);
	{
		uint64_t at[16];
		int nat = 0, at0 = 0, gaps_ok = 1, prev = 0;

		for (int i = 0; i < 400; i++) {
			int before = tu.pc;

			pc = tu.pc == 0 ? pc_swap_tuner_step(&tu, 0, 0, 5000)
					: pc_swap_tuner_step(&tu, 1000, 80, 5000);
			if (before == 0 && pc == 1 && nat < 16)
				at[nat++] = tu.intervals;
			at0 += pc == 0;
		}
		/* a probe at 1 lasts 2 intervals (confirm), then waits 1, 2, 4 ... 32 at 0 */
		for (int k = 1; k < nat; k++) {
			uint64_t want = 2 + (uint64_t)(1 << (k < 6 ? k : 5));

			if (at[k] - at[k - 1] != want)
				gaps_ok = 0;
			prev = (int)(at[k] - at[k - 1]);
		}
		ok(nat >= 8 && at[0] == 1 && gaps_ok,
		   "random-like: probes at 1, then waits doubling to 32 intervals (%d probes, last "
		   "gap %d)", nat, prev);
		ok(at0 >= 360 && tu.settled_at == 0 && tu.fruitless >= tu.probes - 1,
		   "it stays at 0 (%d of 400 intervals) and counts as never moved: settled_at %llu, "
		   "%llu of %llu probes fruitless", at0, (unsigned long long)tu.settled_at,
		   (unsigned long long)tu.fruitless, (unsigned long long)tu.probes);
		ok(tu.probe_wait == 32, "the wait stops at probe_max (%d)", tu.probe_wait);
		/* the workload turns sequential: the next probe pays, and the wait is reset */
		while (tu.pc == 0)
			pc_swap_tuner_step(&tu, 0, 0, 5000);
		pc = feed(&tu, 5, 900, 880, 5000);
		ok(pc == 5 && tu.probe_wait == 1 && tu.settled_at > 400,
		   "a probe that pays resets the wait to 1 and the climb settles (pc %d, wait %d)", pc,
		   tu.probe_wait);
		pc = feed(&tu, 10, 1000, 50, 5000);
		ok(pc == 0 && pc_swap_tuner_step(&tu, 0, 0, 5000) == 1,
		   "misses take it down to 0 for real, and then it probes at once");
	}
	pc_swap_tuner_init(&tu, 0);
	ok(feed(&tu, 100, 0, 0, 10) == 0, "idle at 0 (no swap-in): no probing");
	/* a slow device at 0: 40 swap-ins an interval, fewer than 64, yet swapping */
	pc_swap_tuner_init(&tu, 0);
	ok(pc_swap_tuner_step(&tu, 0, 0, 40) == 0 && pc_swap_tuner_step(&tu, 0, 0, 40) == 1,
	   "thin intervals add up: two of 40 swap-ins make one to judge, and the probe comes");
	ok(pc_swap_tuner_step(&tu, 30, 28, 40) == 1 && pc_swap_tuner_step(&tu, 30, 28, 40) == 2,
	   "and the hits of the two count together");
	pc_swap_tuner_init(&tu, 0);
	ok(feed(&tu, 3, 0, 0, 15) == 0 && pc_swap_tuner_step(&tu, 0, 0, 15) == 0 &&
	   tu.acc_n == 0 && feed(&tu, 3, 0, 0, 15) == 0,
	   "but fewer than 64 over 4 intervals is idle, forgotten: no probe");
	pc_swap_tuner_init(&tu, 2);
	ok(pc_swap_tuner_step(&tu, 100, 500, 1000) == 2 && tu.last_ratio == 1.0,
	   "hits above readahead (late counting) are capped at 100%%");
	tu.max_pc = 2;
	ok(feed(&tu, 10, 100, 100, 1000) == 2, "max_pc is respected");
	return done_testing();
}
