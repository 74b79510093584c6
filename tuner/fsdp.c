/* SPDX-License-Identifier: MIT */
/* fsdp: Megatron-FSDP's sharding and per-layer collectives (docs/MODEL.md 5.11). */
#include "fsdp.h"

#include <math.h>

int mt_fsdp_reason(const struct mt_cluster *c, const struct mt_config *cfg)
{
	if ((long)cfg->dp * cfg->cp < 2)
		return MT_PRUNE_FSDP;
	if ((cfg->tp > 1 || cfg->cp > 1) && c->compute_capability < 10)
		return MT_PRUNE_FSDP;
	return -1;
}

static double coll(const struct mt_ctx *x, int op, int n, int stride, double bytes)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return mt_coll_time(x->cluster, op, n, mt_group_per_domain(x->cluster, n, stride), bytes);
}

void mt_fsdp_plan(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_config *cfg,
		  struct mt_plan *b)
{
	const struct mt_model *m = x->model;
	int n = b->dp * a->cp, en = b->edp, k;
	double gb = cfg->grad_fp32 ? 4 : 2, io;

	for (k = 0; k < MT_L_N; k++) {
		double pd = a->par_tp[k] + a->par_rep[k], pe = a->par_exp[k];

		b->fsdp_ag[k] = coll(x, MT_COLL_ALL_GATHER, n, a->tp, 2 * pd) +
				coll(x, MT_COLL_ALL_GATHER, en, a->ep * a->etp, 2 * pe);
		b->fsdp_rs[k] = coll(x, MT_COLL_REDUCE_SCATTER, n, a->tp, gb * pd) +
				coll(x, MT_COLL_REDUCE_SCATTER, en, a->ep * a->etp, gb * pe);
	}
	/* the embedding, and the output layer (untied, or its copy with PP > 1) */
	io = a->par_emb;
	b->fsdp_io_ag = coll(x, MT_COLL_ALL_GATHER, n, a->tp, 2 * io);
	b->fsdp_io_rs = coll(x, MT_COLL_REDUCE_SCATTER, n, a->tp, gb * io);
	(void)m;
}

void mt_fsdp_stage_time(const struct mt_ctx *x, const struct mt_plan *b, int st, double fwd,
			double bwd, double *exposed, double *hidden)
{
	const struct mt_model *m = x->model;
	double ag = 0, rs = 0, first = 0, ends = 0, ef, eb;
	int k;

	for (k = 0; k < MT_L_N; k++) {
		ag += b->nl[st][k] * b->fsdp_ag[k];
		rs += b->nl[st][k] * b->fsdp_rs[k];
		if (b->nl[st][k] && b->fsdp_ag[k] > first)
			first = b->fsdp_ag[k];
	}
	/* the embedding on the first stage, the output layer on the last */
	ends = (st == 0) + (st == b->pp - 1 && (!m->tied || b->pp > 1));
	ag += ends * b->fsdp_io_ag;
	rs += ends * b->fsdp_io_rs;
	/* forward: each gather runs under the previous layer's forward, the
	 * first cannot hide; backward: the gathers again and the gradient
	 * reduce-scatters under the backward, the last reduce-scatter exposed */
	ef = fmax(first, ag - fwd);
	eb = fmax(first, ag + rs - bwd);
	if (ef > ag)
		ef = ag;
	if (eb > ag + rs)
		eb = ag + rs;
	*exposed = ef + eb;
	*hidden = 2 * ag + rs - *exposed;
}

double mt_fsdp_buffer_bytes(const struct mt_costs *a, const struct mt_config *cfg)
{
	double gb = cfg->grad_fp32 ? 4 : 2, big = 0;
	int k;

	for (k = 0; k < MT_L_N; k++) {
		double p = a->par_tp[k] + a->par_rep[k] + a->par_exp[k];
		if (p > big)
			big = p;
	}
	/* two layers of bf16 parameters in flight (prefetch), one layer of
	 * unsharded gradients */
	return 2 * 2 * big + gb * big;
}
