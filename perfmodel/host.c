/* SPDX-License-Identifier: MIT */
/* host: the host timeline (docs/MODEL.md 5.8).  Arithmetic only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "host.h"

static const char *const scope_names[MT_GS_N] = { "attn", "mlp", "moe_router", "moe_preprocess",
						   "moe" };

const char *mt_graph_scope_name(int i)
{
	return i >= 0 && i < MT_GS_N ? scope_names[i] : "?";
}

int mt_graph_scope_find(const char *s, size_t n)
{
	int i;

	for (i = 0; i < MT_GS_N; i++)
		if (n && strlen(scope_names[i]) == n && !strncmp(s, scope_names[i], n))
			return i;
	return -1;
}

int mt_graph_scope_parse(const char *s, unsigned *bits, char *bad, size_t cap)
{
	*bits = 0;
	while (*s) {
		size_t n = strcspn(s, ", ");
		int i = mt_graph_scope_find(s, n);

		if (i < 0) {
			snprintf(bad, cap, "%.*s", (int)(n < 60 ? n : 60), s);
			return -1;
		}
		*bits |= 1u << i;
		s += n;
		s += strspn(s, ", ");
	}
	if (!*bits) {
		snprintf(bad, cap, "(empty)");
		return -1;
	}
	return 0;
}

const char *mt_hsync_name(int s)
{
	switch (s) {
	case MT_HS_BEFORE_DISPATCH:
		return "before the tokens are dispatched (the counts each rank sends and receives)";
	case MT_HS_DISPATCH:
		return "after the all-gather of the tokens (the counts of each expert)";
	default:
		return "none";
	}
}

/* The last region before the host waits. */
static int sync_region(int s)
{
	return s == MT_HS_BEFORE_DISPATCH ? MT_HR_PRE : MT_HR_DISPATCH;
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

void mt_host_layer_finish(struct mt_host_layer *h, double graph_s)
{
	int g, r, first = -1, n, s = sync_region(h->sync);
	double c[MT_HR_N], gg[MT_HR_N];

	h->fwd_g = 0;
	for (r = 0; r < MT_HR_N; r++) {
		h->fwd_g += h->gf[r];
		if (first < 0 && (h->graphable >> r & 1u))
			first = r;
	}
	for (g = 0; g < 2; g++) {
		h->bc[g] = h->fwd_c[g] = 0;
		for (r = 0; r < MT_HR_N; r++) {
			int cap = g && (h->graphable >> r & 1u);

			h->fc[g][r] = cap ? 0 : h->cf[r];
			h->bc[g] += cap ? 0 : h->cb[r];
		}
		if (g && first >= 0) { /* the replays, each way */
			h->fc[g][first] += h->graph_calls * graph_s;
			h->bc[g] += h->graph_calls * graph_s;
		}
		for (r = 0; r < MT_HR_N; r++)
			h->fwd_c[g] += h->fc[g][r];
		/* between two waits: the rest of one layer after its wait, then
		 * the next layer up to its wait */
		h->seg_t[g] = h->seg_c[g] = h->seg_g = 0;
		if (h->sync == MT_HS_NONE)
			continue;
		for (n = 0, r = s + 1; r < MT_HR_N; r++, n++)
			c[n] = h->fc[g][r], gg[n] = h->gf[r];
		for (r = 0; r <= s; r++, n++)
			c[n] = h->fc[g][r], gg[n] = h->gf[r];
		h->seg_t[g] = flow_shop(c, gg, n);
		h->seg_c[g] = h->fwd_c[g];
		h->seg_g = h->fwd_g;
	}
}

void mt_host_timeline(const struct mt_host_layer hl[2], const double nl[2], int graphs,
		      double sync_s, double gpu_total, double cpu_extra, struct mt_host_tl *o)
{
	const int g = graphs != 0;
	int k, r;

	*o = (struct mt_host_tl){ 0 };
	o->cpu = cpu_extra;
	for (k = 0; k < 2; k++)
		o->cpu += nl[k] * (hl[k].fwd_c[g] + hl[k].bc[g]);
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
		double c[MT_HR_N + 2], gg[MT_HR_N + 2];
		double rest_g = gpu_total - nl[0] * hl[0].fwd_g - nl[1] * m->fwd_g;

		o->seg_cpu = m->seg_c[g];
		o->seg_gpu = m->seg_g;
		o->seg_t = m->seg_t[g];
		/* across the backward: the last MoE layer after its wait, the
		 * backward and what lies outside the layers, the dense layers'
		 * forward, the first MoE layer up to its wait */
		for (r = s + 1; r < MT_HR_N; r++, n++)
			c[n] = m->fc[g][r], gg[n] = m->gf[r];
		c[n] = nl[0] * hl[0].bc[g] + nl[1] * m->bc[g] + cpu_extra;
		gg[n++] = fmax(0, rest_g);
		c[n] = nl[0] * hl[0].fwd_c[g];
		gg[n++] = nl[0] * hl[0].fwd_g;
		for (r = 0; r <= s; r++, n++)
			c[n] = m->fc[g][r], gg[n] = m->gf[r];
		for (r = 0; r < n; r++) {
			o->cyc_cpu += c[r];
			o->cyc_gpu += gg[r];
		}
		o->cyc_t = flow_shop(c, gg, n);
		o->syncs = (int)nl[1];
		o->t = (nl[1] - 1) * o->seg_t + o->cyc_t + nl[1] * sync_s;
		if (o->t < o->gpu) /* the GPU's own time bounds it (rounding) */
			o->t = o->gpu;
		o->wait = o->t - fmax(o->cpu, o->gpu);
	}
}
