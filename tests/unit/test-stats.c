/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Summaries, Student's t, Welch's test, the mmtests rule and pdiff (stats.c). */
#include "stats.h"
#include "tap.h"

#include <math.h>

/* P(T <= t) for df degrees of freedom, from mpmath (40 digits) */
static const struct { double t, df, p; } t_table[] = {
	{ -40, 0.5, 0.050704899964747178 }, { -6, 0.5, 0.13065468873499942 },
	{ -2.5, 0.5, 0.20048526452664659 }, { -1, 0.5, 0.30112161084132208 },
	{ -0.1, 0.5, 0.4731658105643032 }, { 0.3, 0.5, 0.57757042393475459 },
	{ 1.5, 0.5, 0.74604910467594578 }, { 4, 0.5, 0.84038995850566423 },
	{ 12, 0.5, 0.90746973946539894 }, { -40, 1, 0.0079560899120258133 },
	{ -6, 1, 0.05256845671125343 }, { -2.5, 1, 0.1211189415908434 },
	{ -1, 1, 0.25 }, { -0.1, 1, 0.46827448256944643 },
	{ 0.3, 1, 0.59277357907774234 }, { 1.5, 1, 0.81283295818900118 },
	{ 4, 1, 0.92202086962263067 }, { 12, 1, 0.97353532394041012 },
	{ -40, 2, 0.00031220733609237032 }, { -6, 2, 0.013335736607712386 },
	{ -2.5, 2, 0.064805860110755405 }, { -1, 2, 0.21132486540518712 },
	{ -0.1, 2, 0.46473271920707009 }, { 0.3, 2, 0.6037571695799112 },
	{ 1.5, 2, 0.86380343755449946 }, { 4, 2, 0.97140452079103168 },
	{ 12, 2, 0.99656353316142077 }, { -40, 3, 1.7190340394579264e-5 },
	{ -6, 3, 0.0046363574461423337 }, { -2.5, 3, 0.043853323504032774 },
	{ -1, 3, 0.19550110947788532 }, { -0.1, 3, 0.46332617440040291 },
	{ 0.3, 3, 0.60811835398004048 }, { 1.5, 3, 0.88470806737758847 },
	{ 4, 3, 0.98599577199492692 }, { 12, 3, 0.99937749209960533 },
	{ -40, 7.3, 4.0185675839568595e-10 }, { -6, 7.3, 0.00023087223893739317 },
	{ -2.5, 7.3, 0.019825117332800235 }, { -1, 7.3, 0.17464922822655725 },
	{ -0.1, 7.3, 0.46151774856991481 }, { 0.3, 7.3, 0.61372973191014499 },
	{ 1.5, 7.3, 0.91221845359845694 }, { 4, 7.3, 0.99761881641783645 },
	{ 12, 7.3, 0.99999772210738521 }, { -40, 10, 1.1404288715428773e-12 },
	{ -6, 10, 6.6054430177392802e-5 }, { -2.5, 10, 0.015723422118304402 },
	{ -1, 10, 0.17044656615102994 }, { -0.1, 10, 0.46116035928220416 },
	{ 0.3, 10, 0.6148396962171007 }, { 1.5, 10, 0.91774633677727991 },
	{ 4, 10, 0.99874083368763165 }, { 12, 10, 0.99999985392955876 },
	{ -40, 30, 6.8630225972032014e-28 }, { -6, 30, 6.9713843836023714e-7 },
	{ -2.5, 30, 0.0090578245340333471 }, { -1, 30, 0.16265430771301495 },
	{ -0.1, 30, 0.46050480589513558 }, { 0.3, 30, 0.6168769473578236 },
	{ 1.5, 30, 0.927967035435677 }, { 4, 30, 0.99980907718195812 },
	{ 12, 30, 0.99999999999972099 }, { -40, 250, 6.0089391632941462e-111 },
	{ -6, 250, 3.4438248536765341e-9 }, { -2.5, 250, 0.0065304414125330631 },
	{ -1, 250, 0.15913871111672731 }, { -0.1, 250, 0.46021223464790841 },
	{ 0.3, 250, 0.6177867754919752 }, { 1.5, 250, 0.93256190464632858 },
	{ 4, 250, 0.99995826489927065 }, { 12, 250, 1.0 },
	{ -6, 1e5, 9.8996472780088128e-10 }, { -2.5, 1e5, 0.0062104595962795227 },
	{ -1, 1e5, 0.15865646378205501 }, { -0.1, 1e5, 0.46017226295336311 },
	{ 0.3, 1e5, 0.61791111040483118 }, { 1.5, 1e5, 0.9331912202385847 },
	{ 4, 1e5, 0.9999683060012214 }, { 12, 1e5, 1.0 },
	{ -6, 5e6, 9.8665508932285576e-10 }, { -2.5, 5e6, 0.0062096812108062125 },
	{ -1, 5e6, 0.15865527812852829 }, { -0.1, 5e6, 0.46017216472758133 },
	{ 0.3, 5e6, 0.61791141595326202 }, { 1.5, 5e6, 0.93319276716122925 },
	{ 4, 5e6, 0.99996832830314179 }, { 12, 5e6, 1.0 },
	{ -6, 1e9, 9.8658798224924594e-10 }, { -2.5, 1e9, 0.006209665405201247 },
	{ -1, 1e9, 0.15865525405244241 }, { -0.1, 1e9, 0.46017216273299407 },
	{ 0.3, 1e9, 0.61791142215777418 }, { 1.5, 1e9, 0.93319279857329236 },
	{ 4, 1e9, 0.99996832875589177 }, { 12, 1e9, 1.0 },
};

static int close_to(double got, double want, double tol)
{
	return fabs(got - want) <= tol;
}

/* within 1e-12, and within 1e-8 relative in the lower tail where p is tiny */
static int t_ok(double got, double want)
{
	if (!close_to(got, want, 1e-12))
		return 0;
	return want >= 0.5 || fabs(got - want) <= 1e-8 * want;
}

static void test_summary(void)
{
	static const double two[] = { 2, 4 }, one[] = { 7 }, zero[] = { 3, 0, 6 };
	static const double neg[] = { -1, 1 }, five[] = { 1.20, 1.22, 1.25, 1.23, 1.24 };
	struct pc_summary s;

	pc_summarize(NULL, 0, &s);
	ok(s.n == 0 && s.mean == 0 && s.hmean == 0 && s.stddev == 0 && s.stderr_ == 0 &&
	   s.min == 0 && s.max == 0 && s.cov == 0, "n=0: all zero");

	pc_summarize(one, 1, &s);
	ok(s.n == 1 && s.mean == 7 && s.hmean == 7 && s.stddev == 0 && s.stderr_ == 0 &&
	   s.min == 7 && s.max == 7 && s.cov == 0, "n=1: mean, no spread");

	pc_summarize(two, 2, &s);
	ok(s.mean == 3 && close_to(s.stddev, sqrt(2), 1e-15) && close_to(s.stderr_, 1, 1e-15),
	   "n=2: mean 3, sample stddev sqrt(2), stderr 1 (got %.17g %.17g)", s.stddev, s.stderr_);
	ok(close_to(s.hmean, 8.0 / 3, 1e-15), "n=2: hmean 8/3 (got %.17g)", s.hmean);
	ok(s.min == 2 && s.max == 4, "n=2: min and max");
	ok(close_to(s.cov, 100 * sqrt(2) / 3, 1e-12), "n=2: cov in percent (got %g)", s.cov);

	pc_summarize(zero, 3, &s);
	ok(s.hmean == 0 && s.mean == 3, "a zero value: hmean 0, mean still 3");
	pc_summarize(neg, 2, &s);
	ok(s.hmean == 0 && s.mean == 0 && s.cov == 0, "mean 0: hmean 0, cov 0");

	pc_summarize(five, 5, &s);
	ok(close_to(s.mean, 1.228, 1e-15) && close_to(s.stddev, 0.0192353840616713, 1e-14) &&
	   close_to(s.stderr_, 0.0192353840616713 / sqrt(5), 1e-14),
	   "five runs: mean 1.228, stddev 0.019235384 (got %.17g)", s.stddev);
}

static void test_t_cdf(void)
{
	size_t bad = 0, n = sizeof(t_table) / sizeof(t_table[0]);
	double prev = 0;
	int mono = 1;

	ok(close_to(pc_t_cdf(2.0, 10), 0.96330598261462982, 1e-12),
	   "t_cdf(2, 10) = 0.963306 (got %.17g)", pc_t_cdf(2.0, 10));
	ok(pc_t_cdf(0, 10) == 0.5 && pc_t_cdf(0, 1) == 0.5 && pc_t_cdf(0, 1e9) == 0.5,
	   "t_cdf(0, df) = 0.5");
	ok(close_to(pc_t_cdf(-1.812461, 10), 0.05, 1e-7),
	   "t_cdf(-1.812461, 10) = 0.05 (got %.17g)", pc_t_cdf(-1.812461, 10));
	ok(close_to(pc_t_cdf(12.7062047, 1), 0.975, 1e-9), "t_cdf(12.7062, 1) = 0.975");
	ok(close_to(pc_t_cdf(1, 1), 0.75, 1e-15), "Cauchy: t_cdf(1, 1) = 0.75");
	ok(close_to(pc_t_cdf(1.959964, 1e6), 0.97499986225594815, 1e-12),
	   "df 1e6 at 1.959964: 0.9749998623 (got %.17g)", pc_t_cdf(1.959964, 1e6));
	ok(close_to(pc_t_cdf(1.959964, 1e12), 0.975, 1e-9), "large df approaches the normal: 0.975");
	ok(close_to(pc_t_cdf(1.959964, INFINITY), 0.975, 1e-9), "df infinite: the normal");
	for (size_t i = 0; i < n; i++) {
		double got = pc_t_cdf(t_table[i].t, t_table[i].df);

		if (!t_ok(got, t_table[i].p)) {
			bad++;
			printf("# t_cdf(%g, %g) = %.17g, want %.17g\n", t_table[i].t, t_table[i].df,
			       got, t_table[i].p);
		}
	}
	ok(bad == 0, "%zu reference values (df 0.5 to 1e9, t -40 to 12) within 1e-12", n);
	bad = 0;
	for (size_t i = 0; i < n; i++) {
		double s = pc_t_cdf(t_table[i].t, t_table[i].df) +
			   pc_t_cdf(-t_table[i].t, t_table[i].df);

		bad += !close_to(s, 1, 1e-14);
	}
	ok(bad == 0, "symmetric: F(t) + F(-t) = 1");
	for (double t = -8; t <= 8; t += 0.01) {
		double p = pc_t_cdf(t, 4.5);

		if (p < prev)
			mono = 0;
		prev = p;
	}
	ok(mono, "increasing in t");
	ok(pc_t_cdf(INFINITY, 3) == 1 && pc_t_cdf(-INFINITY, 3) == 0, "t infinite: 0 and 1");
	ok(isnan(pc_t_cdf(1, 0)) && isnan(pc_t_cdf(1, -2)) && isnan(pc_t_cdf(NAN, 3)) &&
	   isnan(pc_t_cdf(1, NAN)), "df <= 0 or NaN: NaN");
}

static void test_welch(void)
{
	/* R's datasets: two samples of unequal size and variance */
	static const double a[] = { 19.8, 20.4, 19.6, 17.8, 18.5, 18.9, 18.3, 18.9, 19.5, 22.0 };
	static const double b[] = { 28.2, 26.6, 20.1, 23.3, 25.2, 22.1, 17.7, 27.6, 20.6, 13.7,
				    23.2, 17.5, 20.6, 18.0, 23.9, 21.6, 24.3, 20.4, 23.9, 13.3 };
	static const double ra[] = { 1.20, 1.22, 1.25, 1.23, 1.24 };
	static const double rb[] = { 1.08, 1.10, 1.11, 1.09, 1.12 };
	static const double c3[] = { 1, 2, 3 }, flat[] = { 1, 1, 1 }, flat2[] = { 5, 5 };
	struct pc_summary sa, sb, s1;
	struct pc_welch w;

	pc_summarize(a, 10, &sa);
	pc_summarize(b, 20, &sb);
	pc_welch_test(&sa, &sb, &w);
	/* mpmath, 30 digits: t 2.22551203996985, df 24.5246349442573, p 0.0354845308300102 */
	ok(w.valid, "Welch: valid");
	ok(close_to(w.t, 2.22551203996985, 1e-10),
	   "Welch: t = (mean_b - mean_a) / se = 2.2255 (got %.15g)", w.t);
	ok(close_to(w.df, 24.5246349442573, 1e-9), "Welch: df 24.5246 (got %.15g)", w.df);
	ok(close_to(w.p, 0.0354845308300102, 1e-11), "Welch: two-sided p 0.035485 (got %.15g)", w.p);
	pc_welch_test(&sb, &sa, &w);
	ok(close_to(w.t, -2.22551203996985, 1e-10) && close_to(w.p, 0.0354845308300102, 1e-11),
	   "Welch: swapping the sides flips t, keeps p");

	pc_summarize(ra, 5, &sa);
	pc_summarize(rb, 5, &sb);
	pc_welch_test(&sa, &sb, &w);
	ok(w.valid && close_to(w.t, -11.4947393297136, 1e-9) &&
	   close_to(w.df, 7.7111334002006, 1e-9) && close_to(w.p, 3.99754556343751e-6, 1e-14),
	   "Welch: 1.228 vs 1.100 over 5 runs: t -11.49, p 4.0e-6 (got %g %g %g)", w.t, w.df, w.p);

	/* one side without spread: df is the other side's n - 1 */
	pc_summarize(c3, 3, &sa);
	pc_summarize(flat, 3, &sb);
	pc_welch_test(&sa, &sb, &w);
	ok(w.valid && close_to(w.t, -1.73205080756888, 1e-12) && close_to(w.df, 2, 1e-12) &&
	   close_to(w.p, 0.225403330758517, 1e-12), "Welch: one variance 0 is fine (p %.15g)", w.p);

	pc_summarize(flat, 3, &sa);
	pc_summarize(flat2, 2, &sb);
	pc_welch_test(&sa, &sb, &w);
	ok(!w.valid && w.p == 1, "Welch: both variances 0: invalid, p 1");
	pc_summarize(c3, 3, &sa);
	pc_summarize(c3, 1, &s1);
	pc_welch_test(&sa, &s1, &w);
	ok(!w.valid, "Welch: n = 1 on a side: invalid");
	pc_welch_test(&s1, &sa, &w);
	ok(!w.valid, "Welch: n = 1 on the other side: invalid");
	pc_summarize(NULL, 0, &s1);
	pc_welch_test(&s1, &s1, &w);
	ok(!w.valid, "Welch: n = 0: invalid");
}

static void test_mmtests(void)
{
	struct pc_summary a = { .n = 5, .mean = 10, .stddev = 1 };
	struct pc_summary b = { .n = 5, .stddev = 1 };

	/* threshold: 1.96 * (1 + 1) = 3.92 */
	b.mean = 10 + 3.95;
	ok(pc_mmtests_significant(&a, &b), "mmtests: |d| 3.95 > 3.92: marked");
	b.mean = 10 - 3.95;
	ok(pc_mmtests_significant(&a, &b), "mmtests: either direction");
	b.mean = 10 + 3.88;
	ok(!pc_mmtests_significant(&a, &b), "mmtests: |d| 3.88 < 3.92: not marked");
	b.mean = 10;
	ok(!pc_mmtests_significant(&a, &b), "mmtests: no difference: not marked");
	a.stddev = b.stddev = 0;
	b.mean = 10.001;
	ok(pc_mmtests_significant(&a, &b), "mmtests: no spread, any difference is marked");
}

static void test_pdiff(void)
{
	ok(close_to(pc_pdiff(100, 110, true), 10, 1e-12), "pdiff: higher is better, up 10%%: +10");
	ok(close_to(pc_pdiff(100, 90, true), -10, 1e-12), "pdiff: higher is better, down: -10");
	ok(close_to(pc_pdiff(100, 90, false), 10, 1e-12), "pdiff: lower is better, down 10%%: +10");
	ok(close_to(pc_pdiff(100, 110, false), -10, 1e-12), "pdiff: lower is better, up: -10");
	ok(close_to(pc_pdiff(1.228, 1.1, false), 10.423452768729641, 1e-12),
	   "pdiff: 1.228 -> 1.1 is 10.42%% better");
	ok(pc_pdiff(0, 5, true) == 0 && pc_pdiff(0, 5, false) == 0, "pdiff: base 0 gives 0");
	ok(pc_pdiff(7, 7, true) == 0 && pc_pdiff(7, 7, false) == 0, "pdiff: no change is 0");
}

int main(void)
{
	test_summary();
	test_t_cdf();
	test_welch();
	test_mmtests();
	test_pdiff();
	{
		const double odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };
		struct pc_summary sm;

		ok(pc_median(odd, 3) == 3 && pc_median(even, 4) == 2.5 && pc_median(odd, 0) == 0,
		   "median: odd, even (mean of the middle two), empty");
		ok(odd[0] == 5 && odd[1] == 1, "median leaves its input in order");
		pc_summarize(even, 4, &sm);
		ok(sm.median == 2.5, "pc_summarize fills the median");
	}
	return done_testing();
}
