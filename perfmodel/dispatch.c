/* SPDX-License-Identifier: MIT */
/* dispatch: MoE token dispatch and combine timing (docs/MODEL.md 5.3).  The
 * profile's `moe_dispatch` section and its look-ups are dispatch_prof.c. */
#include "dispatch.h"

#include <math.h>
#include <string.h>

#include "constants.h"
#include "perf.h"

static const char *const disp_names[MT_DISPATCH_N] = { "alltoall", "flex", "allgather" };

const char *mt_dispatcher_name(int d)
{
	if (d == MT_DISPATCH_AUTO)
		return "auto";
	return d >= 0 && d < MT_DISPATCH_N ? disp_names[d] : "?";
}

int mt_dispatcher_parse(const char *s)
{
	int i;

	if (!strcmp(s, "auto"))
		return MT_DISPATCH_AUTO;
	for (i = 0; i < MT_DISPATCH_N; i++)
		if (!strcmp(s, disp_names[i]))
			return i;
	return -2;
}

/* Probability that none of k experts drawn without replacement from E lands
 * in a set of `in` of them. */
static double miss(int E, int k, double in)
{
	double q = 1;
	int i;

	for (i = 0; i < k && i < E; i++) {
		double f = (E - in - i) / (double)(E - i);
		if (f <= 0)
			return 0;
		q *= f;
	}
	return q;
}

double mt_route_ranks(int E, int k, int ep)
{
	if (ep <= 1 || E <= 0)
		return 1;
	return ep * (1 - miss(E, k, (double)E / ep));
}

double mt_route_remote_nodes(int E, int k, int nodes)
{
	if (nodes <= 1 || E <= 0)
		return 0;
	return (nodes - 1) * (1 - miss(E, k, (double)E / nodes));
}

double mt_normal_max(int n)
{
	/* E[max of n standard normals], n = 2^i (i = 0..12): the order
	 * statistics' tables (Harter 1961; Royston's algorithm AS 177) */
	static const double tab[] = { 0, 0.5642, 1.0294, 1.4236, 1.7660, 2.0697, 2.3423,
				      2.5899, 2.8168, 3.0265, 3.2216, 3.4042, 3.5758 };
	double l, f;
	int i;

	if (n <= 1)
		return 0;
	l = log2((double)n);
	i = (int)l;
	if (i >= (int)(sizeof(tab) / sizeof(tab[0])) - 1)
		return tab[sizeof(tab) / sizeof(tab[0]) - 1];
	f = l - i;
	return tab[i] + f * (tab[i + 1] - tab[i]);
}

/* The spread of one rank's routed load over its mean (docs/MODEL.md 4.1) */
static double load_spread(const struct mt_ctx *x, int ep, double tokens)
{
	const struct mt_job *j = x->job;
	const struct mt_model *m = x->model;
	double E = m->experts, k = m->topk, e = ep, c, chance, skew;

	/* the router's skew between experts: none when routing is forced
	 * (Megatron-LM's --moe-router-force-load-balancing draws the scores at
	 * random), MT_MOE_SKEW_AUX for an auxiliary loss trained from scratch,
	 * MT_MOE_SKEW_PRETRAINED for a released router */
	c = j->moe_balance == MT_BAL_FORCED ? 0
	    : j->moe_balance == MT_BAL_PRETRAINED ? MT_MOE_SKEW_PRETRAINED : MT_MOE_SKEW_AUX;
	/* chance: a rank holds g = E/e experts; each of the e*tokens tokens of
	 * the EP group picks k distinct of E, so the picks landing on a rank
	 * are hypergeometric: variance over mean^2 (e-1)(E-k)/(N k (E-1)) */
	chance = (e - 1) * (E - k) / (e * tokens * k * (E - 1));
	/* skew: a rank's load is the sum of its g experts' shares, each with
	 * coefficient of variation c, drawn without replacement from E */
	skew = c * c * (e / E) * (E - E / e) / (E - 1);
	return sqrt(chance + skew);
}

double mt_moe_imbalance(const struct mt_ctx *x, int ep, double tokens)
{
	const struct mt_job *j = x->job;
	const struct mt_model *m = x->model;
	double lam;

	if (ep <= 1 || m->experts <= 1 || m->topk <= 0 || tokens <= 0)
		return 1.0;
	lam = 1 + mt_normal_max(ep) * load_spread(x, ep, tokens);
	if (j->moe_balance == MT_BAL_DROP && j->moe_capacity > 0)
		return fmin(lam, fmax(1.0, j->moe_capacity));
	return lam;
}

double mt_moe_peak_load(const struct mt_ctx *x, int ep, double tokens, double draws)
{
	const struct mt_job *j = x->job;
	const struct mt_model *m = x->model;
	double n = (double)ep * fmax(1, draws), k = m->topk, g;

	/* padded to capacity (token_dispatcher.py @ d98e8a6 1114-1127) */
	if (j->moe_balance == MT_BAL_DROP && j->moe_capacity > 0)
		return j->moe_capacity;
	if (ep <= 1 || m->experts <= 1 || k <= 0 || tokens <= 0)
		return 1.0;
	/* a rank receives at most every token of the group on min(k, g) of
	 * its g experts */
	g = (double)m->experts / ep;
	return fmin(1 + mt_normal_max((int)fmin(n, MT_MOE_PEAK_DRAWS)) * load_spread(x, ep, tokens),
		    ep * fmin(k, g) / k);
}

static double dispatch_coll(const struct mt_ctx *x, int op, int n, int stride, double bytes)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return mt_coll_time(x->cluster, op, n, mt_group_per_domain(x->cluster, n, stride), bytes);
}

void mt_dispatch_cost(const struct mt_ctx *x, int d, int ep, int etp, double tokens, double lam,
		      struct mt_dispatch_cost *o)
{
	const struct mt_cluster *c = x->cluster;
	const struct mt_model *m = x->model;
	const double h = m->hidden, k = m->topk;

	memset(o, 0, sizeof(*o));
	o->src = -1;
	o->sm_share = MT_COMM_SM_SLOWDOWN;
	/* every dispatcher: permute the routed copies into expert order and back
	 * (read and write 2h bytes each), the router's scores (docs/MODEL.md 4.3) */
	o->perm_bytes = 12.0 * m->experts + lam * k * 2 * 4 * h;
	if (ep <= 1 && etp <= 1)
		return;
	if (d == MT_DISPATCH_FLEX && mt_dispatch_available(c, d)) {
		int per = mt_group_per_domain(c, ep, etp), basis, src, nodes;
		double lat, gd, gc, copies;

		/* BF16 tokens, as Megatron-LM sends them with DeepEP and HybridEP
		 * in FP8 training too (token_dispatcher.py:1151, 1320 and
		 * fused_a2a.py:327, 402 @ d98e8a6; docs/MODEL.md 5.3) */
		nodes = (ep + per - 1) / per;
		gd = mt_dispatch_gbps(c, MT_DOP_DISPATCH, 0, ep, per, &basis, &src, &lat);
		if (basis == MT_DBASIS_NODE)
			copies = mt_route_remote_nodes(m->experts, m->topk, nodes);
		else
			copies = mt_route_ranks(m->experts, m->topk, ep);
		o->bytes = tokens * copies * h * 2;
		o->dispatch_s = gd > 0 ? lam * o->bytes / (gd * 1e9) + lat * 1e-6 : 0;
		o->gbps = gd;
		o->src = src;
		gc = mt_dispatch_gbps(c, MT_DOP_COMBINE, 0, ep, per, &basis, &src, &lat);
		o->combine_s = gc > 0 ? lam * tokens * copies * h * 2 / (gc * 1e9) + lat * 1e-6 : 0;
		/* factors fitted from measured runs (calibrate --from-validation) */
		o->dispatch_s *= mt_corr_coll(&c->corr, MT_COLL_ALL_TO_ALL, ep, per);
		o->combine_s *= mt_corr_coll(&c->corr, MT_COLL_ALL_TO_ALL, ep, per);
		o->sm_share = c->sm_count > 0 ? (double)c->dispatch.flex_sms / c->sm_count
					      : MT_COMM_SM_SLOWDOWN;
		/* the received tokens go to the experts in one permutation, and back */
		o->perm_bytes = 12.0 * m->experts + lam * k * 2 * 2 * h;
	} else if (d == MT_DISPATCH_ALLGATHER) {
		/* every EP rank's tokens, gathered; each keeps those of its experts */
		double S = tokens * h * 2 * ep;

		o->bytes = S;
		o->dispatch_s = dispatch_coll(x, MT_COLL_ALL_GATHER, ep, etp, S);
		o->combine_s = dispatch_coll(x, MT_COLL_REDUCE_SCATTER, ep, etp, S);
		o->gbps = o->dispatch_s > 0 ? S / o->dispatch_s / 1e9 : 0;
		o->perm_bytes = 12.0 * m->experts + 2 * 4 * h * ep + lam * k * 2 * 2 * h;
	} else {
		/* alltoall: every routed copy of the busiest rank, both ways */
		double S = lam * tokens * k * h * 2;

		o->bytes = S / lam;
		o->dispatch_s = dispatch_coll(x, MT_COLL_ALL_TO_ALL, ep, etp, S);
		o->combine_s = o->dispatch_s;
		o->gbps = o->dispatch_s > 0 ? S / o->dispatch_s / 1e9 : 0;
		/* permuted by destination, then sorted by local expert, and back */
		o->perm_bytes = 12.0 * m->experts + lam * k * 4 * 4 * h;
	}
	if (etp > 1) { /* the expert-TP gather and scatter around the experts */
		double S = lam * tokens * k * h * 2 * etp;
		o->dispatch_s += dispatch_coll(x, MT_COLL_ALL_GATHER, etp, 1, S);
		o->combine_s += dispatch_coll(x, MT_COLL_REDUCE_SCATTER, etp, 1, S);
	}
}
