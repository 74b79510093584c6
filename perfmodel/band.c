/* SPDX-License-Identifier: MIT */
/* band: the range of a prediction (band.h, docs/MODEL.md 8.1). */
#include "band.h"

#include <math.h>
#include <string.h>

#include "constants.h"
#include "effects.h"
#include "precision.h"

static const char *const term_names[MT_BT_N] = {
	"GEMM curve derived", "communication curves derived", "token dispatch",
	"overlap credit", "host issue time", "host time removed by graphs or a rank budget",
};

const char *mt_band_term_name(int i)
{
	return i >= 0 && i < MT_BT_N ? term_names[i] : "";
}

/* Whether the GEMMs of dtype run on a curve the profile states as derived:
 * scaled from another dtype, or points whose source is of kind derived. */
static int gemm_derived(const struct mt_cluster *c, int dtype)
{
	int i, n = 0, der = 0;

	if (dtype < 0 || dtype >= MT_DT_N || c->gcurve[dtype].derived_from >= 0)
		return 1;
	for (i = 0; i < c->ngemm; i++) {
		const struct mt_gemm_pt *p = &c->gemm[i];

		if (p->dtype != dtype)
			continue;
		n++;
		if (p->src >= 0 && p->src < c->nsources &&
		    (!strcmp(c->sources[p->src].kind, "derived") ||
		     !strcmp(c->sources[p->src].kind, "spec")))
			der++;
	}
	return n == 0 || 2 * der > n;
}

/* Whether a collective of n ranks, k per NVLink domain, is timed on a curve
 * the profile derived rather than measured. */
static int comm_derived(const struct mt_cluster *c, int op, int n, int k)
{
	const char *p;

	if (n <= 1)
		return 0;
	/* "derived ...", or "estimated ..." where the profile has no curve */
	p = mt_coll_provenance(c, op, n, k);
	return p && (strstr(p, "derived") || strstr(p, "estimated"));
}

void mt_band(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	     const struct mt_config *cfg, const struct mt_time *t, struct mt_band *out)
{
	int gd = gemm_derived(c, mt_recipe(mt_recipe_of(j))->gemm_dtype);
	int tpd = comm_derived(c, MT_COLL_ALL_GATHER, cfg->tp, mt_group_per_domain(c, cfg->tp, 1));
	int dpn = cfg->dp * cfg->cp;
	int dpd = comm_derived(c, MT_COLL_REDUCE_SCATTER, dpn,
			       mt_group_per_domain(c, dpn, cfg->tp));
	double uc_tp = tpd ? MT_U_COMM_DERIVED : MT_U_COMM_MEASURED;
	double uc_dp = dpd ? MT_U_COMM_DERIVED : MT_U_COMM_MEASURED;
	double terms[10], quad = 0, hidden, host_hi, host_lo, base, step = t->step, s_hi, s_lo;
	double host_mb = t->host_exposed - MT_STEP_OVERHEAD_S, one = 0.01 * step, removed;
	const struct mt_effect *ev;
	size_t i;

	if (host_mb < 0)
		host_mb = 0;
	terms[0] = t->gemm * (gd ? MT_U_GEMM_DERIVED : MT_U_GEMM_MEASURED);
	terms[1] = t->attention * MT_U_ATTENTION;
	terms[2] = t->elementwise * MT_U_ELEMENTWISE;
	terms[3] = t->gpu_overhead * MT_U_GPU_OVERHEAD;
	terms[4] = (t->tp_exposed + t->cp_exposed) * uc_tp;
	terms[5] = (t->pp_exposed + t->dp_exposed) * uc_dp;
	terms[6] = t->ep_exposed * MT_U_DISPATCH;
	terms[7] = t->offload_exposed * MT_U_OFFLOAD;
	terms[8] = t->bubble * MT_U_BUBBLE;
	terms[9] = t->optimizer * MT_U_OPTIMIZER;
	for (i = 0; i < sizeof(terms) / sizeof(terms[0]); i++)
		quad += terms[i] * terms[i];
	quad = sqrt(quad);
	/* overlapped communication may surface: the upper side only; the 1F1B
	 * EP overlap's credit as far as a published pair of its regime was
	 * off, where one backs it (8.2) */
	ev = cfg->ep_overlap ? mt_effect_find(MT_EF_EP_OVERLAP, c, cfg) : NULL;
	hidden = MT_U_HIDDEN * (t->tp_hidden + t->cp_hidden + t->pp_hidden + t->dp_hidden) +
		 (ev ? mt_effect_u(ev) : MT_U_HIDDEN) * t->ep_hidden;
	/* host time CUDA graphs or a rank budget removed: spent at a published
	 * pair's uncertainty where one backs it, at the host's otherwise */
	ev = cfg->cuda_graph && !cfg->full_graph && !cfg->rank_budget
		     ? mt_effect_find(MT_EF_CUDA_GRAPHS, c, cfg) : NULL;
	removed = (ev ? mt_effect_u(ev) : MT_U_HOST) * t->host_removed;
	/* the host (5.8): its per-op costs are published figures of other
	 * hosts, off by MT_U_HOST either way; exposed host time moves with
	 * them, and a host near the GPU's time may become exposed */
	host_hi = fmax(MT_U_HOST * host_mb, fmax(0, (1 + MT_U_HOST) * t->host_cpu - t->host_gpu) -
						    fmax(0, t->host_cpu - t->host_gpu));
	host_lo = fmin(host_mb, MT_U_HOST * t->host_cpu);
	base = m->experts ? MT_BAND_BASE_MOE : MT_BAND_BASE_DENSE;

	s_hi = sqrt(quad * quad + hidden * hidden);
	s_lo = quad + host_lo;
	out->spec_hi = s_hi + host_hi + removed;
	out->spec_lo = s_lo;
	out->base = base;
	out->hi = step + sqrt(base * step * base * step + s_hi * s_hi) + host_hi + removed;
	out->lo = step - sqrt(base * step * base * step + quad * quad) - host_lo;
	if (out->lo < 0.5 * step)
		out->lo = 0.5 * step;
	out->terms = 0;
	if (gd && terms[0] > one)
		out->terms |= MT_BT_GEMM_DERIVED;
	if ((tpd && terms[4] > one) || (dpd && terms[5] > one))
		out->terms |= MT_BT_COMM_DERIVED;
	if (terms[6] > one)
		out->terms |= MT_BT_DISPATCH;
	if (hidden > one)
		out->terms |= MT_BT_OVERLAP;
	if (host_hi + host_lo > one)
		out->terms |= MT_BT_HOST;
	if (removed > one)
		out->terms |= MT_BT_HOST_REMOVED;
}
