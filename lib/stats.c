/* SPDX-License-Identifier: MIT */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int stats_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The k-th smallest (0-based) of v[0..n), reordering v so that v[0..k) hold
 * values <= v[k] and v(k..n) values >= v[k]. */
static double select_k(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double tmp = v[i];

				v[i] = v[j];
				v[j] = tmp;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	return v[k];
}

double mt_median(double *x, size_t n)
{
	double a, b;

	if (!n)
		return NAN;
	a = select_k(x, n, n / 2);
	if (n % 2)
		return a;
	b = select_k(x, n / 2, n / 2 - 1); /* the lower half holds the smaller ones */
	return (a + b) / 2;
}

double mt_robust_cv(const double *x, size_t n)
{
	double *d, med, mad;
	size_t i;

	if (!n || !(d = malloc(n * sizeof(double))))
		return NAN;
	memcpy(d, x, n * sizeof(double));
	med = mt_median(d, n);
	for (i = 0; i < n; i++)
		d[i] = fabs(x[i] - med);
	mad = mt_median(d, n);
	free(d);
	return med != 0 ? 1.4826 * mad / fabs(med) : NAN;
}

double mt_round_sig(double v, int digits)
{
	double m;

	if (v == 0 || !isfinite(v))
		return v;
	m = pow(10, digits - 1 - (int)floor(log10(fabs(v))));
	return round(v * m) / m;
}

double mt_quantile_sorted(const double *x, int n, double q)
{
	double pos, frac;
	int lo;

	if (n <= 0)
		return NAN;
	if (q <= 0)
		return x[0];
	if (q >= 1)
		return x[n - 1];
	pos = q * (n - 1);
	lo = (int)pos;
	frac = pos - lo;
	if (lo + 1 >= n)
		return x[n - 1];
	return x[lo] + frac * (x[lo + 1] - x[lo]);
}

static double cv_of(const double *x, int n)
{
	double mean = 0, ss = 0;
	int i;

	if (n < 2)
		return 0;
	for (i = 0; i < n; i++)
		mean += x[i];
	mean /= n;
	for (i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	return mean != 0 ? sqrt(ss / (n - 1)) / fabs(mean) : 0;
}

void mt_stats_compute(double *x, int n, struct mt_stats *out)
{
	qsort(x, (size_t)n, sizeof(*x), stats_cmp_double);
	out->n = n;
	out->min = x[0];
	out->max = x[n - 1];
	out->median = mt_quantile_sorted(x, n, 0.5);
	out->p95 = mt_quantile_sorted(x, n, 0.95);
	out->cv = cv_of(x, n);
}

void mt_stats_scale(const struct mt_stats *in, double f, struct mt_stats *out)
{
	*out = *in;
	out->median *= f;
	out->min *= f;
	out->max *= f;
	out->p95 *= f;
}

void mt_stats_invert(const double *sorted, int n, double f, struct mt_stats *out)
{
	double mean = 0, ss = 0;
	int i;

	out->n = n;
	out->min = f / sorted[n - 1];
	out->max = f / sorted[0];
	out->median = f / mt_quantile_sorted(sorted, n, 0.5);
	/* the rate a sample reaches 95% of the time: the 5th percentile's rate
	 * is the 95th percentile of slowness */
	out->p95 = f / mt_quantile_sorted(sorted, n, 0.95);
	for (i = 0; i < n; i++)
		mean += f / sorted[i];
	mean /= n;
	for (i = 0; i < n; i++)
		ss += (f / sorted[i] - mean) * (f / sorted[i] - mean);
	out->cv = n > 1 && mean != 0 ? sqrt(ss / (n - 1)) / mean : 0;
}
