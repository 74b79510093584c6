/* SPDX-License-Identifier: MIT */
/* host: the host timeline (docs/MODEL.md 5.8).  Arithmetic only. */
#include <math.h>

#include "host.h"

const char *mt_hsync_name(int s)
{
	switch (s) {
	case MT_HS_BEFORE_A2A:
		return "before the EP all-to-all (the split sizes)";
	case MT_HS_DISPATCH:
		return "after the dispatch (the received token counts)";
	default:
		return "none";
	}
}

/* The last region before the host waits. */
static int sync_region(int s)
{
	return s == MT_HS_BEFORE_A2A ? MT_HR_PRE : MT_HR_DISPATCH;
}

/* Two-machine flow shop: the host issues blocks in order, the GPU runs each
 * after the host issued it and after the block before it ran. */
static double flow_shop(const double *c, const double *g, int n)
{
	double before = 0, after = 0, best = 0;
	int k;

	for (k = 0; k < n; k++)
		after += g[k];
	for (k = 0; k < n; k++) {
		double t;

		after -= g[k];
		t = before + fmax(c[k], g[k]) + after;
		if (t > best)
			best = t;
		before += c[k];
	}
	return best;
}

/* CPU of each forward region and of the backward, with graphs replacing
 * the graphable regions' ops by graph_calls replays each way. */
static void regions_cpu(const struct mt_host_layer *h, int graphs, double graph_s,
			double cf[MT_HR_N], double *cb)
{
	int r, first = -1;

	*cb = 0;
	for (r = 0; r < MT_HR_N; r++) {
		int g = graphs && (h->graphable >> r & 1u);

		cf[r] = g ? 0 : h->cf[r];
		*cb += g ? 0 : h->cb[r];
		if (g && first < 0)
			first = r;
	}
	if (first >= 0) {
		cf[first] += h->graph_calls * graph_s;
		*cb += h->graph_calls * graph_s;
	}
}

double mt_host_layer_cpu(const struct mt_host_layer *h, int graphs, double graph_s)
{
	double cf[MT_HR_N], cb, s = 0;
	int r;

	regions_cpu(h, graphs, graph_s, cf, &cb);
	for (r = 0; r < MT_HR_N; r++)
		s += cf[r];
	return s + cb;
}

double mt_host_fwd_cpu(const struct mt_host_layer *h)
{
	double s = 0;
	int r;

	for (r = 0; r < MT_HR_N; r++)
		s += h->cf[r];
	return s;
}

void mt_host_timeline(const struct mt_host_layer hl[2], const double nl[2], int graphs,
		      const struct mt_host_costs *hc, double gpu_total, double cpu_extra,
		      struct mt_host_tl *o)
{
	double cf[2][MT_HR_N], cb[2], fwd_c[2] = { 0, 0 }, fwd_g[2] = { 0, 0 };
	int k, r;

	*o = (struct mt_host_tl){ 0 };
	for (k = 0; k < 2; k++) {
		regions_cpu(&hl[k], graphs, hc->graph, cf[k], &cb[k]);
		for (r = 0; r < MT_HR_N; r++) {
			fwd_c[k] += cf[k][r];
			fwd_g[k] += hl[k].gf[r];
		}
	}
	o->cpu = cpu_extra;
	for (k = 0; k < 2; k++)
		o->cpu += nl[k] * (fwd_c[k] + cb[k]);
	o->gpu = gpu_total;
	o->sync = nl[1] > 0 ? hl[1].sync : MT_HS_NONE;
	if (o->sync == MT_HS_NONE) {
		o->t = fmax(o->cpu, o->gpu);
		o->cyc_cpu = o->cpu;
		o->cyc_gpu = o->gpu;
		o->cyc_t = o->t;
		return;
	}
	{
		const struct mt_host_layer *m = &hl[1];
		int s = sync_region(o->sync), n = 0;
		double c[2 * MT_HR_N + 2], g[2 * MT_HR_N + 2];
		double rest_g = gpu_total - nl[0] * fwd_g[0] - nl[1] * fwd_g[1];

		/* between two waits: the rest of one MoE layer, then the next
		 * layer up to its wait */
		for (r = s + 1; r < MT_HR_N; r++, n++)
			c[n] = cf[1][r], g[n] = m->gf[r];
		for (r = 0; r <= s; r++, n++)
			c[n] = cf[1][r], g[n] = m->gf[r];
		for (r = 0; r < n; r++) {
			o->seg_cpu += c[r];
			o->seg_gpu += g[r];
		}
		o->seg_t = flow_shop(c, g, n);
		/* across the backward: the last MoE layer after its wait, the
		 * backward and what lies outside the layers, the dense layers'
		 * forward, the first MoE layer up to its wait */
		n = 0;
		for (r = s + 1; r < MT_HR_N; r++, n++)
			c[n] = cf[1][r], g[n] = m->gf[r];
		c[n] = nl[0] * cb[0] + nl[1] * cb[1] + cpu_extra;
		g[n++] = fmax(0, rest_g);
		c[n] = nl[0] * fwd_c[0];
		g[n++] = nl[0] * fwd_g[0];
		for (r = 0; r <= s; r++, n++)
			c[n] = cf[1][r], g[n] = m->gf[r];
		for (r = 0; r < n; r++) {
			o->cyc_cpu += c[r];
			o->cyc_gpu += g[r];
		}
		o->cyc_t = flow_shop(c, g, n);
		o->syncs = (int)nl[1];
		o->t = (nl[1] - 1) * o->seg_t + o->cyc_t + nl[1] * hc->sync;
		if (o->t < o->gpu) /* the GPU's own time bounds it (rounding) */
			o->t = o->gpu;
		o->wait = o->t - fmax(o->cpu, o->gpu);
	}
}
