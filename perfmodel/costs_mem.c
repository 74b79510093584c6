/* SPDX-License-Identifier: MIT */
/* costs_mem: level A, the memory of one layer on one GPU for one
 * micro-batch: its activations (4.4), what selective recomputation frees
 * and re-runs (5.12), what fine-grained offload moves (4.10) and its
 * parameters. */
#include "constants.h"
#include "costs_int.h"
#include "hostmem.h"
#include "precision.h"

/* ---- selective recomputation (4.4, 5.12): per module, the activation
 * bytes it frees and the forward work the backward re-runs, for layer kind
 * k; act_core and act_mlp are mt_layer_memory's terms per token */
static void layer_recompute(const struct work *w, int k, double act_core, double act_mlp,
			    struct mt_costs *o)
{
	const struct mt_model *m = w->x->model;
	const double h = w->h, a = w->a, t = w->t, spd = w->spd, gin = w->gin, T = w->T;
	const double bw = w->x->hbm * MT_ELEM_EFFICIENCY;
	double *fr = o->rc_act[k], *tm = o->rc_mod[k], *fl = o->rc_mod_flops[k];
	int i, norms = (m->mla ? 1 : 0) + (k == MT_L_MOE ? 1 : 0);

	for (i = 0; i < MT_RCM_N; i++)
		fr[i] = tm[i] = fl[i] = 0;
	/* core_attn (attention.py:393): the softmax and its dropout (unfused)
	 * or the log-sum-exp (flash); the attention forward again */
	fr[MT_RCM_CORE_ATTN] = T * act_core;
	tm[MT_RCM_CORE_ATTN] = w->attn_f;
	fl[MT_RCM_CORE_ATTN] = w->core_flops;
	/* layernorm (transformer_layer.py:475-527): a norm not fused into the
	 * next linear (MLA's input norm, a MoE layer's pre-MLP norm) discards
	 * its output, the linear's saved input; the norm again (read, write) */
	fr[MT_RCM_LAYERNORM] = T * norms * gin * h / spd;
	tm[MT_RCM_LAYERNORM] = T * norms * 4 * h / spd / bw;
	/* mla_up_proj (multi_latent_attention.py:171, 455): Q, K and V; the
	 * up projections and RoPE again */
	if (m->mla) {
		fr[MT_RCM_MLA_UP_PROJ] = T * (2 * a * w->dqk + 2 * a * w->dqk + 2 * a * w->dv) / t;
		tm[MT_RCM_MLA_UP_PROJ] = w->up_f + T * 4 * a * m->qk_rope_dim / t / bw;
		fl[MT_RCM_MLA_UP_PROJ] = w->up_flops;
	}
	if (k == MT_L_DENSE) {
		/* mlp (transformer_layer.py:537, 992): FC1's input, the activation's
		 * input and FC2's input; the MLP forward, its norm and TP pair again */
		fr[MT_RCM_MLP] = T * (gin * h / spd + act_mlp);
		tm[MT_RCM_MLP] = w->mlp_f + T * (w->e_mlp + 4 * h / spd) / bw + w->tp_pair_f;
		fl[MT_RCM_MLP] = w->mlp_flops;
		return;
	}
	/* moe_act (experts.py:269, 1019): each routed copy's FC2 input; the
	 * activation again on the busiest rank */
	fr[MT_RCM_MOE_ACT] = T * m->topk * gin * m->moe_ffn / spd;
	tm[MT_RCM_MOE_ACT] = T * w->lam * m->topk * (m->gated ? 6.0 : 4.0) *
			     m->moe_ffn / spd / bw;
	/* shared_experts (moe_layer.py:252, 517): their activation and FC2
	 * inputs; their forward and TP pair again */
	if (m->shared_ffn) {
		fr[MT_RCM_SHARED_EXPERTS] = T * (2 * w->gm * m->shared_ffn + gin * m->shared_ffn) / t;
		tm[MT_RCM_SHARED_EXPERTS] = w->shared_f + T * ((m->gated ? 6.0 : 4.0) + w->fp8_cast) *
						      m->shared_ffn / t / bw + w->tp_pair_f;
		fl[MT_RCM_SHARED_EXPERTS] = w->shared_flops;
	}
	/* moe (moe_layer.py:247, 701): everything the MoE block keeps, its input
	 * kept in BF16 by the checkpoint instead of the router's and experts'
	 * inputs; the whole block forward again: router, dispatch, experts,
	 * combine, shared experts */
	fr[MT_RCM_MOE] = T * (act_mlp + (gin - 2) * h / spd);
	tm[MT_RCM_MOE] = o->gemm_f[k] - w->attn_lin_f + T * w->e_moe / bw + w->ep_f +
			 (m->shared_ffn ? w->tp_pair_f : 0);
	fl[MT_RCM_MOE] = o->flops_gemm_f[k] - w->attn_lin_flops;
}

/* ---- activations (4.4) and parameters of layer kind k on this GPU */
void mt_layer_memory(const struct work *w, int k, struct mt_costs *o)
{
	const struct mt_model *m = w->x->model;
	const double h = w->h, a = w->a, t = w->t, s = w->s, spd = w->spd, gin = w->gin;
	const double gm = w->gm, dqk = w->dqk, dv = w->dv, T = w->T;
	const int ep = w->sh->ep, etp = w->sh->etp;
	double act_sp, act_tp, act_core, act_mlp;

	/* bytes per token, Korthikanti et al. terms; with FP8, Transformer
	 * Engine keeps the GEMM inputs in FP8 */
	act_sp = (4 * h + 2 * gin * h + (m->dropout > 0 ? 2 * h : 0)) / spd;
	if (m->mla) {
		double ql = m->q_lora_rank, kvl = m->kv_lora_rank;
		act_sp += 2 * gin * (ql + kvl + m->qk_rope_dim); /* down-proj outputs, replicated */
		/* the latents' norms fused into the up-projections
		 * (TELayerNormColumnParallelLinear): each keeps its normalised
		 * output for the weight gradient as well */
		act_sp += gin * (ql + kvl);
		act_tp = (2 * a * dqk + 2 * a * dqk + 2 * a * dv + gin * a * dv) / t;
	} else {
		act_tp = (2 * w->q_el + 4 * w->kv_el + gin * w->q_el) / t;
	}
	act_core = w->impl == MT_ATTN_UNFUSED
			   ? a * s * (2 + (m->attn_dropout > 0 ? 3 : 0)) / t
			   : 4 * a / t; /* flash: the log-sum-exp per head */
	if (w->eager) { /* what the eager kernels keep (4.11) */
		act_sp = w->eg[k].act_sp / spd;
		act_tp = w->eg[k].act_tp;
		act_core = w->eg[k].act_core;
	}
	if (k == MT_L_DENSE) {
		act_mlp = w->eager ? w->eg[k].act_mlp : (2 * gm * m->ffn + gin * m->ffn) / t;
	} else {
		/* router scores, then per routed copy: probabilities and
		 * indices, the expert input, the activation input and the FC2
		 * input.  Stored activations add up over many layers and
		 * micro-batches, so the mean load applies, not the imbalance */
		double kk = m->topk, fe = m->moe_ffn;
		act_mlp = (8 * m->experts + kk * 12 + kk * etp * gin * h + kk * (2 * gm * fe + gin * fe)) /
			  spd;
		/* an activation no kernel fuses with the routing probabilities
		 * (not gated: GeLU, ReLU): the product with the probabilities
		 * keeps its BF16 output as well (Megatron-LM d98e8a6
		 * moe/experts.py:1007-1009, mlp.py:271-273; 4.4) */
		if (gm < 2)
			act_mlp += kk * 2 * fe / spd;
		if (m->shared_ffn)
			act_mlp += (2 * gm * m->shared_ffn + gin * m->shared_ffn) / t;
	}
	o->act[k][MT_RC_NONE] = T * (act_sp + act_tp + act_core + act_mlp);
	o->act[k][MT_RC_SELECTIVE] = T * (act_sp + act_tp + act_mlp);
	layer_recompute(w, k, act_core, act_mlp, o);
	o->act[k][MT_RC_FULL] = T * 2 * h / spd;
	o->act_layer_peak[k] = o->act[k][MT_RC_NONE];
	/* fine-grained offload (4.10): the input of each module named */
	{
		unsigned om = w->x->job->offload_modules;
		double f = 0;

		if (om & (1u << MT_OM_ATTN_NORM))
			f += 2 * h / spd;
		if (om & (1u << MT_OM_QKV_LINEAR))
			f += gin * h / spd;
		/* core_attn: Q, K and V, and what the attention saves inside
		 * the offload's saved-tensor hooks (fine_grained_activation_
		 * offload.py @ d98e8a6 line 506): the unfused probabilities or
		 * flash's log-sum-exp */
		if (om & (1u << MT_OM_CORE_ATTN))
			f += (m->mla ? 2 * a * dqk + 2 * a * dqk + 2 * a * dv : 2 * w->q_el + 4 * w->kv_el) / t +
			     act_core;
		if (om & (1u << MT_OM_ATTN_PROJ))
			f += gin * a * dv / t;
		if (om & (1u << MT_OM_MLP_NORM))
			f += 2 * h / spd;
		if (k == MT_L_MOE && (om & (1u << MT_OM_EXPERT_FC1)))
			f += m->topk * etp * gin * h / spd;
		if (k == MT_L_MOE && (om & (1u << MT_OM_MOE_ACT)))
			f += m->topk * 2 * gm * m->moe_ffn / spd;
		o->act_fine[k] = T * f;
	}

	/* ---- parameters on this GPU */
	o->par_tp[k] = (double)mt_model_attn_tp_params(m) / t;
	o->par_rep[k] = (double)(mt_model_attn_params(m) - mt_model_attn_tp_params(m)) +
			(double)mt_model_norm_params(m);
	if (k == MT_L_DENSE) {
		o->par_tp[k] += (double)mt_model_dense_mlp_params(m) / t;
		o->par_fp8[k] = o->par_tp[k];
	} else {
		o->par_tp[k] += (double)mt_model_shared_params(m) / t;
		o->par_rep[k] += (double)mt_model_router_params(m);
		o->par_exp[k] = (double)m->experts * mt_model_expert_params(m) / ((double)ep * etp);
		o->par_fp8[k] = o->par_tp[k] + o->par_exp[k];
	}
	if (!mt_prec_quantised(w->x->job))
		o->par_fp8[k] = 0;
}
