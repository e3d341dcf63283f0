/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stats.c: summaries of repeated runs and the tests that compare two of
 * them (stats.h). Student's t distribution is computed from the
 * regularized incomplete beta function by its continued fraction (modified
 * Lentz), with an asymptotic expansion for very large degrees of freedom
 * where the continued fraction is slow and lgamma's cancellation costs
 * digits. Accurate to about 1e-12 absolute, plenty for p-values.
 */
#include "stats.h"

#include <float.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

/* qnorm(0.975), as R computes it for mmtests' confidence intervals */
#define Z_975 1.959963984540054

void pc_summarize(const double *v, size_t n, struct pc_summary *ret)
{
	double sum = 0, inv = 0, ss = 0;
	bool positive = true;

	*ret = (struct pc_summary){ .n = n };
	if (!n)
		return;
	ret->min = ret->max = v[0];
	for (size_t i = 0; i < n; i++) {
		sum += v[i];
		if (v[i] > 0)
			inv += 1 / v[i];
		else
			positive = false;
		if (v[i] < ret->min)
			ret->min = v[i];
		if (v[i] > ret->max)
			ret->max = v[i];
	}
	ret->mean = sum / (double)n;
	ret->hmean = positive ? (double)n / inv : 0;
	/* two passes: the sum of squared deviations does not cancel */
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - ret->mean) * (v[i] - ret->mean);
	if (n > 1) {
		ret->stddev = sqrt(ss / (double)(n - 1));
		ret->stderr_ = ret->stddev / sqrt((double)n);
	}
	ret->cov = ret->mean != 0 ? 100 * ret->stddev / ret->mean : 0;
	ret->median = pc_median(v, n);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double pc_median(const double *v, size_t n)
{
	double small[64], *s = n <= 64 ? small : malloc(n * sizeof(*s)), m;

	if (!n || !s)
		return 0;
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	if (s != small)
		free(s);
	return m;
}

/*
 * The continued fraction of I_x(a, b) (Numerical Recipes' betacf, by the
 * modified Lentz method). Converges quickly for x < (a + 1) / (a + b + 2);
 * in the worst case in O(sqrt(max(a, b))) steps, hence the limit.
 */
/* One step of the modified Lentz method: the factor it multiplies h by. */
static double lentz_step(double aa, double *c, double *d)
{
	const double tiny = 1e-300;

	*d = 1 + aa * *d;
	if (fabs(*d) < tiny)
		*d = tiny;
	*c = 1 + aa / *c;
	if (fabs(*c) < tiny)
		*c = tiny;
	*d = 1 / *d;
	return *d * *c;
}

static double beta_cf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double c = 1, d = 1 - (a + b) * x / (a + 1), h;
	int maxit = 1000 + (int)(10 * sqrt(a > b ? a : b));

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= maxit; m++) {
		double m2 = 2.0 * m, del;

		/* the even step, then the odd one */
		h *= lentz_step(m * (b - m) * x / ((a + m2 - 1) * (a + m2)), &c, &d);
		del = lentz_step(-(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1)), &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* lgamma(x) minus its Stirling approximation, for x >= 10 (error < 1e-15) */
static double stirling_corr(double x)
{
	double r = 1 / x, r2 = r * r;

	return r * (1.0 / 12 + r2 * (-1.0 / 360 + r2 * (1.0 / 1260 + r2 * (-1.0 / 1680 +
		    r2 * (1.0 / 1188 + r2 * (-691.0 / 360360))))));
}

/*
 * log B(a, b). lgamma(a) + lgamma(b) - lgamma(a + b) cancels badly when an
 * argument is large (df / 2 for big df); Stirling's series with the large
 * parts subtracted by hand does not.
 */
static double log_beta(double a, double b)
{
	double p = a < b ? a : b, q = a < b ? b : a;

	if (p >= 10)
		return -0.5 * log(q) + 0.5 * log(2 * M_PI) + stirling_corr(p) + stirling_corr(q) -
		       stirling_corr(p + q) + (p - 0.5) * log(p / (p + q)) +
		       q * log1p(-p / (p + q));
	if (q >= 10)
		return lgamma(p) + stirling_corr(q) - stirling_corr(p + q) + p - p * log(p + q) +
		       (q - 0.5) * log1p(-p / (p + q));
	return lgamma(p) + lgamma(q) - lgamma(p + q);
}

/*
 * The regularized incomplete beta function I_x(a, b), given both x and
 * y = 1 - x: the caller often knows y exactly where 1 - x would cancel.
 */
static double beta_inc(double a, double b, double x, double y)
{
	double lx, ly, front;

	if (x <= 0)
		return 0;
	if (y <= 0)
		return 1;
	lx = y < 0.5 ? log1p(-y) : log(x);
	ly = x < 0.5 ? log1p(-x) : log(y);
	front = exp(a * lx + b * ly - log_beta(a, b));
	if (x < (a + 1) / (a + b + 2))
		return front * beta_cf(a, b, x) / a;
	return 1 - front * beta_cf(b, a, y) / b;
}

/*
 * For very large df: the Cornish-Fisher style expansion of the t CDF
 * around the normal (Abramowitz & Stegun 26.7.5), two terms. The next term
 * is below 1e-14 from df = 1e6 on.
 */
static double t_cdf_large(double t, double df)
{
	double phi = exp(-t * t / 2) / sqrt(2 * M_PI);
	double t2 = t * t, t3 = t2 * t, t5 = t3 * t2, t7 = t5 * t2;
	double g1 = (t3 + t) / 4;
	double g2 = (5 * t7 + 16 * t5 + 3 * t3 - 3 * t) / 96;

	return 0.5 * erfc(-t / M_SQRT2) - phi * (g1 / df + g2 / (df * df));
}

double pc_t_cdf(double t, double df)
{
	double tail, x, y;

	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	if (t == 0)
		return 0.5;
	if (df >= 1e6)
		return t_cdf_large(t, df);
	/* P(T <= -|t|) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2) */
	x = df / (df + t * t);
	y = t * t / (df + t * t);
	tail = 0.5 * beta_inc(df / 2, 0.5, x, y);
	return t > 0 ? 1 - tail : tail;
}

void pc_welch_test(const struct pc_summary *a, const struct pc_summary *b, struct pc_welch *ret)
{
	double va, vb, se2;

	*ret = (struct pc_welch){ .p = 1 };
	if (a->n < 2 || b->n < 2)
		return;
	va = a->stddev * a->stddev / (double)a->n;
	vb = b->stddev * b->stddev / (double)b->n;
	se2 = va + vb;
	if (!(se2 > 0) || !isfinite(se2))
		return;
	ret->t = (b->mean - a->mean) / sqrt(se2);
	ret->df = se2 * se2 / (va * va / (double)(a->n - 1) + vb * vb / (double)(b->n - 1));
	ret->p = 2 * pc_t_cdf(-fabs(ret->t), ret->df);
	if (ret->p > 1)
		ret->p = 1;
	ret->valid = isfinite(ret->t) && isfinite(ret->p);
}

bool pc_mmtests_significant(const struct pc_summary *a, const struct pc_summary *b)
{
	return fabs(b->mean - a->mean) > Z_975 * (a->stddev + b->stddev);
}

double pc_pdiff(double base, double now, bool higher_better)
{
	if (base == 0)
		return 0;
	return higher_better ? now / base * 100 - 100 : 100 - now / base * 100;
}
