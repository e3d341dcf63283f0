/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.h: the statistics the experiments report and compare: summaries
 * over repeated runs (mean, standard deviation, standard error, harmonic
 * mean), Welch's unequal-variance t-test and the mmtests confidence rule.
 * Internal to pagecache: not in pagecache.h, and no part of libpagecache
 * (make builds it into build/libpcinternal.a); used by bench/ and tested
 * in tests/unit/test-stats.c.
 */
#ifndef PC_STATS_H
#define PC_STATS_H

#include <stdbool.h>
#include <stddef.h>

struct pc_summary {
	size_t n;
	double mean;		/* arithmetic */
	double hmean;		/* harmonic; 0 when a value is <= 0 */
	double stddev;		/* sample (n - 1); 0 when n < 2 */
	double stderr_;		/* stddev / sqrt(n) */
	double min, max;
	double median;		/* the mean of the middle two for even n */
	double cov;		/* stddev / mean, in percent; 0 when mean is 0 */
};

/* Summarise v[0..n); n may be 0 (all zero). */
void pc_summarize(const double *v, size_t n, struct pc_summary *ret);

/* The median of v[0..n) (v is not reordered); 0 when n is 0. */
double pc_median(const double *v, size_t n);

/* Student's t distribution: P(T <= t) with df degrees of freedom; NaN if df <= 0 or NaN. */
double pc_t_cdf(double t, double df);

struct pc_welch {
	double t;		/* (mean_b - mean_a) / sqrt(se_a^2 + se_b^2) */
	double df;		/* Welch-Satterthwaite */
	double p;		/* two-sided */
	bool valid;		/* false when n < 2 on a side, or both variances are 0;
				   then t = df = 0 and p = 1 */
};
/* Welch's t-test from summaries (two-sided). */
void pc_welch_test(const struct pc_summary *a, const struct pc_summary *b, struct pc_welch *ret);

/*
 * The mmtests rule (compare-mmtests.pl): a difference is marked when
 * |mean_b - mean_a| > z * (stddev_a + stddev_b) with z = qnorm(0.975) =
 * 1.959964 (what mmtests gets from R), i.e. the normal 95% intervals of the
 * two do not touch.
 */
bool pc_mmtests_significant(const struct pc_summary *a, const struct pc_summary *b);

/*
 * Percent change with the mmtests sign: positive is better.
 * higher_better: new/base*100 - 100; else 100 - new/base*100. 0 if base is 0.
 */
double pc_pdiff(double base, double now, bool higher_better);

#endif
