/* SPDX-License-Identifier: MIT */
/* fsdp: Megatron-FSDP's and PyTorch FSDP2's sharding and per-layer collectives
 * (docs/MODEL.md 5.11). */
#include "fsdp.h"

#include <math.h>

#include "constants.h"

int mt_fsdp_reason(const struct mt_cluster *c, const struct mt_config *cfg)
{
	(void)c;
	/* a DP x CP group to shard over; with TP or CP below compute capability
	 * 10 Megatron-LM only warns (arguments.py @ d98e8a6 1456-1465): FSDP
	 * wants CUDA_DEVICE_MAX_CONNECTIONS unset or above 1 (1166), and the TP
	 * and CP collectives then lose the issue order their overlap needs
	 * (timed in timing.c, docs/MODEL.md 5.11) */
	if ((long)cfg->dp * cfg->cp < 2)
		return MT_PRUNE_FSDP;
	return -1;
}

int mt_fsdp_impl_reason(const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_config *cfg)
{
	int r = mt_fsdp_reason(c, cfg);

	if (r >= 0 || cfg->fsdp != MT_FSDP_TORCH)
		return r;
	/* arguments.py @ d98e8a64dd lines 1034-1046 */
	if (cfg->pp > 1 || cfg->ep > 1 || m->tied)
		return MT_PRUNE_TORCH_FSDP;
	return -1;
}

static double fsdp_coll(const struct mt_ctx *x, int op, int n, int stride, double bytes)
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

		b->fsdp_ag[k] = fsdp_coll(x, MT_COLL_ALL_GATHER, n, a->tp, 2 * pd) +
				fsdp_coll(x, MT_COLL_ALL_GATHER, en, a->ep * a->etp, 2 * pe);
		b->fsdp_rs[k] = fsdp_coll(x, MT_COLL_REDUCE_SCATTER, n, a->tp, gb * pd) +
				fsdp_coll(x, MT_COLL_REDUCE_SCATTER, en, a->ep * a->etp, gb * pe);
		b->fsdp_par[k] = pd + pe;
	}
	/* the embedding, and the output layer (untied, or its copy with PP > 1) */
	io = a->par_emb;
	b->fsdp_io_ag = fsdp_coll(x, MT_COLL_ALL_GATHER, n, a->tp, 2 * io);
	b->fsdp_io_rs = fsdp_coll(x, MT_COLL_REDUCE_SCATTER, n, a->tp, gb * io);
	b->fsdp_io_par = io;
	b->fsdp_gb = gb;
	(void)m;
}

void mt_fsdp_stage_time(const struct mt_ctx *x, const struct mt_plan *b, int st, int impl,
			double fwd, double bwd, double *exposed, double *hidden)
{
	const struct mt_model *m = x->model;
	double ag = 0, rs = 0, first = 0, ends = 0, par = 0, ef, eb;
	int k;

	for (k = 0; k < MT_L_N; k++) {
		ag += b->nl[st][k] * b->fsdp_ag[k];
		rs += b->nl[st][k] * b->fsdp_rs[k];
		par += b->nl[st][k] * b->fsdp_par[k];
		if (b->nl[st][k] && b->fsdp_ag[k] > first)
			first = b->fsdp_ag[k];
	}
	/* the embedding on the first stage, the output layer on the last */
	ends = (st == 0) + (st == b->pp - 1 && (!m->tied || b->pp > 1));
	ag += ends * b->fsdp_io_ag;
	rs += ends * b->fsdp_io_rs;
	par += ends * b->fsdp_io_par;
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
	if (impl == MT_FSDP_TORCH) {
		/* FSDP2 (torch.distributed.fsdp, foreach_all_gather_copy_out and
		 * foreach_reduce): each gathered bf16 layer is read from the flat
		 * buffer and written to its parameters, forward and backward, and
		 * the gradients are copied into one flat buffer before the
		 * reduce-scatter: (2·2·2 + 2·g) bytes per parameter */
		double gb = b->fsdp_gb;

		*exposed += (8 + 2 * gb) * par / (x->hbm * MT_ELEM_EFFICIENCY);
	}
}

void mt_fsdp_buffers(const struct mt_costs *a, const struct mt_config *cfg, double *weights,
		     double *grads)
{
	double gb = cfg->grad_fp32 ? 4 : 2, big = 0;
	int k;

	for (k = 0; k < MT_L_N; k++) {
		double p = a->par_tp[k] + a->par_rep[k] + a->par_exp[k];
		if (p > big)
			big = p;
	}
	/* two layers of bf16 parameters in flight (prefetch), one layer of
	 * unsharded gradients; FSDP2 also holds the flat all-gather output of a
	 * layer beside its per-parameter copies, and the flat reduce-scatter
	 * input beside the gradients */
	*weights = (cfg->fsdp == MT_FSDP_TORCH ? 3 : 2) * 2 * big;
	*grads = (cfg->fsdp == MT_FSDP_TORCH ? 2 : 1) * gb * big;
}
