/* SPDX-License-Identifier: MIT */
/* curves: the curves of a cluster profile, built once as cluster.c reads it
 * (per dtype the GEMM rate by size, a dtype not measured derived from one
 * that is by the ratio of peaks; per collective the bus bandwidth by message
 * size in log space, with its latency fit), and the lookups the time model
 * makes in them (docs/MODEL.md section 3). */
#include "cluster_int.h"

#include <math.h>
#include <stdlib.h>

/* ---------------------------------------------------------------- prepare */

int mt_cluster_prepare_gemm(struct mt_cluster *c, const char *file, struct mt_error *err)
{
	int dt, i, j, n, src;

	for (dt = 0; dt < MT_DT_N; dt++) {
		struct mt_gemm_curve *g = &c->gcurve[dt];

		g->derived_from = -1;
		n = 0;
		for (i = 0; i < c->ngemm; i++)
			n += c->gemm[i].dtype == dt;
		if (!n)
			continue;
		g->lc = calloc((size_t)n, sizeof(double));
		g->lr = calloc((size_t)n, sizeof(double));
		if (!g->lc || !g->lr)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		/* The sweep: square shapes when there are any, else every point by
		 * its cube-root size; sorted by size, points of one size averaged
		 * (in log space) into one */
		{
			struct { double lc, lr; } *pt = calloc((size_t)n, sizeof(*pt));
			int squares = 0, np = 0, w, cnt;

			if (!pt)
				return mt_error_set(err, MT_ENOMEM, "out of memory");
			for (i = 0; i < c->ngemm; i++) {
				const struct mt_gemm_pt *p = &c->gemm[i];
				squares += p->dtype == dt && p->m == p->n && p->n == p->k;
			}
			for (i = 0; i < c->ngemm; i++) {
				const struct mt_gemm_pt *p = &c->gemm[i];

				if (p->dtype != dt || (squares && !(p->m == p->n && p->n == p->k)))
					continue;
				pt[np].lc = log(cbrt(p->m * p->n * p->k));
				pt[np].lr = log(p->tflops);
				for (j = np++; j > 0 && pt[j - 1].lc > pt[j].lc; j--) {
					double tc = pt[j].lc, tr = pt[j].lr;
					pt[j] = pt[j - 1];
					pt[j - 1].lc = tc;
					pt[j - 1].lr = tr;
				}
			}
			for (i = 0, w = 0; i < np; i = j, w++) {
				double sum = 0;
				for (j = i, cnt = 0; j < np && pt[j].lc == pt[i].lc; j++, cnt++)
					sum += pt[j].lr;
				g->lc[w] = pt[i].lc;
				g->lr[w] = sum / cnt;
			}
			g->n = w;
			free(pt);
		}
	}
	/* A dtype the GPU has but the profile did not measure is derived from a
	 * measured one by the ratio of dense peaks (docs/MODEL.md 3.1). */
	/* A CPU-backend profile measures fp32 only (docs/FORMATS.md section 2) */
	if (!c->gcurve[MT_DT_BF16].n && !c->gcurve[MT_DT_FP16].n && !c->gcurve[MT_DT_FP8].n &&
	    !(c->gcurve[MT_DT_FP32].n && c->peak_tflops[MT_DT_FP32] > 0))
		return mt_error_set(err, MT_EINVAL,
				    "%s: field 'gemm': expected at least one bf16, fp16 or fp8 "
				    "measurement (fp32 alone only with gpu.peak_tflops.fp32)", file);
	for (dt = 0; dt < MT_DT_N; dt++) {
		static const int order[] = { MT_DT_BF16, MT_DT_FP16, MT_DT_FP8, MT_DT_TF32, MT_DT_FP32 };
		/* FP4 from the FP8 curve first: the nearest tensor-core path */
		static const int order4[] = { MT_DT_FP8, MT_DT_BF16, MT_DT_FP16, MT_DT_TF32, MT_DT_FP32 };
		struct mt_gemm_curve *g = &c->gcurve[dt];

		if (g->n || c->peak_tflops[dt] <= 0)
			continue;
		for (i = 0; i < 5; i++) {
			src = dt == MT_DT_FP4 ? order4[i] : order[i];
			if (c->gcurve[src].derived_from < 0 && c->gcurve[src].n &&
			    c->peak_tflops[src] > 0)
				break;
		}
		if (i == 5)
			continue;
		g->lc = calloc((size_t)c->gcurve[src].n, sizeof(double));
		g->lr = calloc((size_t)c->gcurve[src].n, sizeof(double));
		if (!g->lc || !g->lr)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		g->n = c->gcurve[src].n;
		g->derived_from = src;
		for (j = 0; j < g->n; j++) {
			g->lc[j] = c->gcurve[src].lc[j];
			g->lr[j] = c->gcurve[src].lr[j] +
				   log(c->peak_tflops[dt] / c->peak_tflops[src]);
		}
	}
	/* the rate of the sweep's largest size, whose kernels run longest, is
	 * what back-to-back GEMMs sustain under the power limit: a higher rate
	 * at a smaller size is a burst a training step does not keep (3.1) */
	for (dt = 0; dt < MT_DT_N; dt++)
		if (c->gcurve[dt].n)
			c->gcurve[dt].sustained = exp(c->gcurve[dt].lr[c->gcurve[dt].n - 1]);
	return MT_OK;
}

void mt_cluster_prepare_coll(struct mt_cluster *c)
{
	int i, j;

	for (i = 0; i < c->ncoll; i++) {
		struct mt_coll_curve *cv = &c->coll[i];

		cv->peak_gbps = 0;
		for (j = 0; j < cv->npts; j++) {
			cv->lx[j] = log(cv->pts[j].bytes);
			cv->ly[j] = log(cv->pts[j].busbw_gbps);
			if (cv->pts[j].busbw_gbps > cv->peak_gbps)
				cv->peak_gbps = cv->pts[j].busbw_gbps;
		}
		cv->alpha_us = -1;
		if (cv->npts >= 2) {
			const struct mt_coll_pt *a = &cv->pts[0], *b = &cv->pts[1];
			double beta = (b->time_us - a->time_us) / (b->bytes - a->bytes);
			double alpha = a->time_us - beta * a->bytes;

			if (beta > 0 && alpha >= 0) {
				cv->alpha_us = alpha;
				cv->beta_us_per_byte = beta;
			}
		}
	}
}

/* ---------------------------------------------------------------- lookups */

/* Piecewise-linear interpolation in (x, y) with sorted x; outside the range,
 * extend with the slope of the end segment clamped to [lo_slope, hi_slope]
 * on the low side and flat on the high side. */
static double interp(const double *x, const double *y, int n, double q, double lo_slope_min,
		     double lo_slope_max)
{
	int lo = 0, hi = n - 1, mid;
	double t;

	if (n == 1)
		return y[0];
	if (q <= x[0]) {
		double s = (y[1] - y[0]) / (x[1] - x[0]);
		if (s < lo_slope_min)
			s = lo_slope_min;
		if (s > lo_slope_max)
			s = lo_slope_max;
		return y[0] + s * (q - x[0]);
	}
	if (q >= x[n - 1])
		return y[n - 1];
	while (hi - lo > 1) {
		mid = (lo + hi) / 2;
		if (x[mid] <= q)
			lo = mid;
		else
			hi = mid;
	}
	t = (q - x[lo]) / (x[hi] - x[lo]);
	return y[lo] + t * (y[hi] - y[lo]);
}

static int gemm_dtype(const struct mt_cluster *c, int dt)
{
	if (c->gcurve[dt].n)
		return dt;
	if (dt == MT_DT_BF16 && c->gcurve[MT_DT_FP16].n)
		return MT_DT_FP16;
	if (dt == MT_DT_FP16 && c->gcurve[MT_DT_BF16].n)
		return MT_DT_BF16;
	return c->gcurve[MT_DT_BF16].n ? MT_DT_BF16 : MT_DT_FP16;
}

double mt_gemm_tflops(const struct mt_cluster *c, int dtype, double m, double n, double k)
{
	int dt = gemm_dtype(c, dtype), i;
	const struct mt_gemm_curve *g = &c->gcurve[dt];
	double r;

	/* an exact measurement of this shape wins, up to the sustained rate */
	for (i = 0; i < c->ngemm; i++) {
		const struct mt_gemm_pt *p = &c->gemm[i];
		if (p->dtype == dt && fabs(p->m - m) <= 0.005 * m && fabs(p->n - n) <= 0.005 * n &&
		    fabs(p->k - k) <= 0.005 * k)
			return g->n && p->tflops > g->sustained ? g->sustained : p->tflops;
	}
	if (!g->n)
		return 0;
	/* below the sweep the rate falls at the measured slope, between linear
	 * (constant efficiency per size) and cubic (constant time) */
	r = exp(interp(g->lc, g->lr, g->n, log(cbrt(m * n * k)), 1.0, 3.0));
	return r > g->sustained ? g->sustained : r;
}

static double dtype_bytes(int dt)
{
	switch (dt) {
	case MT_DT_FP8: return 1;
	case MT_DT_FP4: return 0.5 + 1.0 / 16; /* E2M1 and an E4M3 scale per 16 */
	case MT_DT_TF32:
	case MT_DT_FP32: return 4;
	default: return 2;
	}
}

double mt_gemm_time(const struct mt_cluster *c, int dtype, double m, double n, double k)
{
	double rate, t_compute, t_mem, in = dtype_bytes(dtype), outb;

	if (m <= 0 || n <= 0 || k <= 0)
		return 0;
	rate = mt_gemm_tflops(c, dtype, m, n, k);
	if (rate <= 0)
		return 0;
	outb = dtype == MT_DT_FP8 || dtype == MT_DT_FP4 ? 2 : in; /* FP8/FP4 GEMMs write BF16 */
	t_compute = 2 * m * n * k / (rate * 1e12);
	t_mem = ((m * k + k * n) * in + m * n * outb) / (c->hbm_gbps * 1e9);
	return (t_compute > t_mem ? t_compute : t_mem) * mt_corr_gemm(&c->corr, m, n, k);
}

int mt_attn_nearest_hd(const struct mt_cluster *c, int impl, int head_dim)
{
	double best_dd = 1e300;
	int i, hd = -1;

	for (i = 0; i < c->nattn; i++) {
		double dd = fabs(log((double)c->attn[i].head_dim / head_dim));
		if (c->attn[i].impl == impl && dd < best_dd) {
			best_dd = dd;
			hd = c->attn[i].head_dim;
		}
	}
	return hd;
}

double mt_attn_tflops(const struct mt_cluster *c, int impl, int head_dim, int seq, int bwd)
{
	double xs[64], ys[64];
	int i, n = 0, hd = mt_attn_nearest_hd(c, impl, head_dim);

	if (hd < 0)
		return 0;
	for (i = 0; i < c->nattn && n < 64; i++) {
		const struct mt_attn_pt *a = &c->attn[i];
		double lx;
		int j;

		if (a->impl != impl || a->head_dim != hd)
			continue;
		lx = log((double)a->seq);
		for (j = n; j > 0 && xs[j - 1] > lx; j--) {
			xs[j] = xs[j - 1];
			ys[j] = ys[j - 1];
		}
		xs[j] = lx;
		ys[j] = log(bwd ? a->bwd_tflops : a->fwd_tflops);
		n++;
	}
	if (n >= 2) { /* drop duplicate sequence lengths */
		int w = 1;
		for (i = 1; i < n; i++)
			if (xs[i] != xs[w - 1]) {
				xs[w] = xs[i];
				ys[w++] = ys[i];
			}
		n = w;
	}
	return exp(interp(xs, ys, n, log((double)seq), 0.0, 1.0));
}

int mt_attn_causal(const struct mt_cluster *c, int impl, int head_dim)
{
	int i, hd = mt_attn_nearest_hd(c, impl, head_dim);

	for (i = 0; i < c->nattn; i++)
		if (c->attn[i].impl == impl && c->attn[i].head_dim == hd)
			return c->attn[i].causal;
	return 0;
}

double mt_coll_curve_busbw(const struct mt_coll_curve *cv, double bytes)
{
	if (bytes < cv->pts[0].bytes) {
		double algbw_ratio, t;

		if (cv->alpha_us < 0)
			return cv->pts[0].busbw_gbps * bytes / cv->pts[0].bytes;
		t = cv->alpha_us + cv->beta_us_per_byte * bytes;
		algbw_ratio = (bytes / t) / (cv->pts[0].bytes / cv->pts[0].time_us);
		return cv->pts[0].busbw_gbps * algbw_ratio;
	}
	return exp(interp(cv->lx, cv->ly, cv->npts, log(bytes), 0, 0));
}

double mt_offload_gbps(const struct mt_cluster *c, int dir)
{
	double best = 0, lim;
	int i;

	for (i = 0; i < c->noffload; i++) {
		const struct mt_offload_pt *o = &c->offload[i];
		if (o->dir == dir && o->pinned && o->numa_local && !o->under_load && o->gbps > best)
			best = o->gbps;
	}
	/* no measurement: 85% of the PCIe line rate; a measurement faster than
	 * the host link the profile describes is capped there (mt_cluster_note) */
	if (best <= 0)
		return c->pcie_gbps > 0 ? 0.85 * c->pcie_gbps : 20;
	lim = dir == MT_OFF_BIDIR ? 2 * c->pcie_gbps : c->pcie_gbps; /* both directions */
	return lim > 0 && best > lim ? lim : best;
}
