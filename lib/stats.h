/* SPDX-License-Identifier: MIT */
/* stats: repeat statistics of one measurement (n, median, min, max, p95, cv).
 *
 * The probes time a case several times; what is kept and written is this
 * summary, never the mean alone.  Percentiles use linear interpolation between
 * closest ranks (numpy's default, "type 7"); cv is the sample standard
 * deviation over the mean.
 */
#ifndef MT_STATS_H
#define MT_STATS_H

#include <stddef.h>

/* `n` == 0 when the source gave a single summary figure. */
struct mt_stats {
	int n;
	double median, min, max, p95, cv;
};

/* Summarise `n` samples (n >= 1).  Sorts `x` in place; allocates nothing. */
void mt_stats_compute(double *x, int n, struct mt_stats *out);

/* The median of x[0..n): the middle value, or the mean of the two middle
 * values when n is even ((a + b) / 2, as Python's statistics.median).
 * Reorders x (a selection, not a full sort: O(n)); allocates nothing.  NAN
 * when n == 0. */
double mt_median(double *x, size_t n);

/* The robust coefficient of variation of x[0..n): 1.4826 x MAD / |median|
 * (the standard deviation over the mean for normal noise, unmoved by a few
 * outliers).  x is not changed; one allocation of n doubles.  NAN when n == 0,
 * the median is 0, or memory runs out. */
double mt_robust_cv(const double *x, size_t n);

/* `v` rounded to `digits` significant decimal digits (0 and non-finite
 * values unchanged), so that a file reads like a measurement. */
double mt_round_sig(double v, int digits);

/* The q-quantile (0..1) of sorted samples, linear interpolation. */
double mt_quantile_sorted(const double *x, int n, double q);

/* The same statistics with every value scaled by `f` (> 0). */
void mt_stats_scale(const struct mt_stats *in, double f, struct mt_stats *out);

/* Statistics of the rates f / x over sorted times x (as mt_stats_compute()
 * leaves them): min and max swap, and p95 is the rate reached by 95% of the
 * samples (f over the 95th percentile of the times). */
void mt_stats_invert(const double *sorted, int n, double f, struct mt_stats *out);

#endif
