/* SPDX-License-Identifier: MIT */
/* costs_int: what the files of level A (perfmodel/costs.c, costs_comm.c,
 * costs_mem.c) share: the worked-out shape of one layer (struct work),
 * the collective-time helper and the per-layer steps mt_costs_compute()
 * calls in the other two; private to those three files. */
#ifndef MT_COSTS_INT_H
#define MT_COSTS_INT_H

#include "eager.h"
#include "perf.h"

/* Collective time helpers with the group's NVLink-domain membership. */
static inline double costs_coll(const struct mt_ctx *x, int op, int n, int stride, double bytes)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return mt_coll_time(x->cluster, op, n, mt_group_per_domain(x->cluster, n, stride), bytes);
}

/* What every layer kind of one shape shares, worked out once. */
struct work {
	const struct mt_ctx *x;
	const struct mt_shape *sh;
	int dt, impl;
	double s, h, a, t, spd;
	double fp8_cast;            /* bytes per element to cast a GEMM input to FP8 */
	int q_extra;                /* kernels per quantised GEMM input beside the cast (4.9) */
	double gin;                 /* bytes of a saved GEMM input */
	double T, Tm, q_el, kv_el, dqk, dv, gm, V, hd;
	int inner_a2a;
	int ub_ag, ub_rs;           /* GEMM splits under the TP overlap (5.1): the ring
				     * exchange's TP chunks, the pipelined RS's 4; 1 without */
	double attn_lin_f, attn_lin_b, attn_lin_flops, mlp_f, mlp_b, mlp_flops;
	double core_flops, attn_f, attn_b, e_sp, e_tp;
	double shared_f, shared_b;  /* the shared experts' GEMMs (MoE layer) */
	double lam;                 /* the busiest EP rank's routed tokens over the mean */
	double exp_f, exp_b;        /* the routed experts' GEMMs and element-wise work on the
				     * busiest rank, forward and backward (MoE layer) */
	/* what selective recomputation re-runs (5.12), per layer and micro-batch */
	double up_f, up_flops;      /* MLA's q and kv up projections, forward */
	double shared_flops;        /* the shared experts' GEMM FLOPs, forward */
	double e_mlp, e_moe;        /* element-wise bytes per token, forward: the dense MLP's
				     * activation; the MoE block (shared experts included) */
	double tp_pair_f;           /* exposed forward TP traffic of one GEMM pair */
	double ep_f;                /* exposed forward EP traffic (MoE layer) */
	/* Megatron-LM's own layers (--transformer-impl local, 4.11): the layer as
	 * eager kernels, a dense layer's and a MoE layer's attention block */
	int eager;
	double lin_f[4], lin_b[4];  /* QKV, projection, FC1, FC2 GEMMs */
	struct mt_eager_out eg[MT_L_N];
};

/* costs_comm.c: the TP (5.1) and CP (5.2) communication of layer kind k, the
 * first returning the slowdown of the GEMMs that hide it; then the EP
 * communication (5.3), the kernels issued, the layer's forward and backward
 * time and its host timeline regions (5.8). */
double mt_layer_tp_comm(struct work *w, int k, struct mt_costs *o);
void mt_layer_cp_comm(const struct work *w, int k, struct mt_costs *o);
void mt_layer_time(struct work *w, int k, double slow, struct mt_costs *o);

/* costs_mem.c: the activations (4.4), what selective recomputation frees and
 * re-runs (5.12) and the parameters of layer kind k on this GPU. */
void mt_layer_memory(const struct work *w, int k, struct mt_costs *o);

#endif
