/* SPDX-License-Identifier: MIT */
/* costs_comm: level A, the communication of one layer (TP 5.1, CP 5.2, EP
 * 5.3) and what it leaves exposed, then the kernels the layer issues, its
 * forward and backward time and its host timeline regions (5.8); the
 * GEMM, attention and element-wise costs it starts from are costs.c's. */
#include <math.h>

#include "constants.h"
#include "costs_int.h"
#include "precision.h"

static double exposed_overlap(double comm, double gemm, int overlap)
{
	double hidden;

	if (!overlap || comm <= 0)
		return comm;
	hidden = comm * (1 - MT_TP_OVERLAP_KAPPA);
	if (hidden > gemm)
		hidden = gemm;
	return comm - hidden;
}

/* ---- TP communication (5.1) of layer kind k; returns the slowdown of the
 * GEMMs that hide it. */
double mt_layer_tp_comm(struct work *w, int k, struct mt_costs *o)
{
	const struct mt_ctx *x = w->x;
	const struct mt_shape *sh = w->sh;
	const int tp = sh->tp, sp = sh->sp;
	double tp_pair_f = 0, tp_pair_b = 0, comm_f = 0, comm_b = 0, exp_f, exp_b;
	double S, ag, ag8, rs, ar;

	if (tp > 1) {
		int pairs = (k == MT_L_DENSE || x->model->shared_ffn) ? 2 : 1;

		S = w->T * w->h * 2;
		if (sp) {
			ag = costs_coll(x, MT_COLL_ALL_GATHER, tp, 1, S);
			ag8 = mt_prec_quantised(x->job) ? costs_coll(x, MT_COLL_ALL_GATHER, tp, 1, S * w->gin / 2)
							 : ag;
			rs = costs_coll(x, MT_COLL_REDUCE_SCATTER, tp, 1, S);
			comm_f = pairs * (ag8 + rs);
			comm_b = pairs * (ag + rs + ag8);
		} else {
			ar = costs_coll(x, MT_COLL_ALL_REDUCE, tp, 1, S);
			comm_f = pairs * ar;
			comm_b = pairs * ar;
		}
		/* the GEMMs each TP collective is paired with */
		tp_pair_f = w->attn_lin_f + (k == MT_L_DENSE ? w->mlp_f : w->shared_f);
		tp_pair_b = w->attn_lin_b + (k == MT_L_DENSE ? w->mlp_b : w->shared_b);
	}
	exp_f = exposed_overlap(comm_f, tp_pair_f, sh->tp_overlap && sp);
	exp_b = exposed_overlap(comm_b, tp_pair_b, sh->tp_overlap && sp);
	w->tp_pair_f = tp > 1 ? exp_f / ((k == MT_L_DENSE || x->model->shared_ffn) ? 2 : 1) : 0;
	o->tp_comm[k] = comm_f + comm_b;
	o->tp_exposed[k] = exp_f + exp_b;
	return MT_COMM_SM_SLOWDOWN * ((comm_f - exp_f) + (comm_b - exp_b));
}

/* ---- CP communication (5.2) of layer kind k. */
void mt_layer_cp_comm(const struct work *w, int k, struct mt_costs *o)
{
	const struct mt_ctx *x = w->x;
	const int tp = w->sh->tp, cp = w->sh->cp, cp_comm = w->sh->cp_comm;
	const double T = w->T, t = w->t;
	double comm_f = 0, comm_b = 0, exp_f = 0, exp_b = 0;

	if (cp > 1) {
		double kvb = T * 2 * w->kv_el / t * 2; /* K and V of this rank's chunk */
		double qkvb = T * (w->q_el + 2 * w->kv_el) / t * 2, outb = T * w->a * w->dv / t * 2;
		int inner = cp_comm == MT_CP_P2P ? 1 : cp, outer = 1;

		if (cp_comm == MT_CP_A2A_P2P) {
			inner = w->inner_a2a;
			outer = cp / inner;
		}
		if (cp_comm == MT_CP_P2P || (cp_comm == MT_CP_A2A_P2P && outer > 1)) {
			/* a ring over the CP ranks (or, after the inner a2a, over
			 * the outer groups): each step passes one chunk's K and V
			 * forward, K, V and their gradients backward, while the
			 * attention of the chunk in hand runs */
			int n = cp_comm == MT_CP_P2P ? cp : outer;
			int stride = cp_comm == MT_CP_P2P ? tp : tp * inner;
			double step_f = costs_coll(x, MT_COLL_SEND_RECV, n, stride, kvb);
			double step_b = costs_coll(x, MT_COLL_SEND_RECV, n, stride, 2 * kvb);

			comm_f += (n - 1) * step_f;
			comm_b += (n - 1) * step_b;
			exp_f += (n - 1) * fmax(0, step_f - w->attn_f / n);
			exp_b += (n - 1) * fmax(0, step_b - w->attn_b / n);
		}
		if (cp_comm == MT_CP_A2A || (cp_comm == MT_CP_A2A_P2P && inner > 1)) {
			int n = inner;
			double c1 = costs_coll(x, MT_COLL_ALL_TO_ALL, n, tp, qkvb) +
				    costs_coll(x, MT_COLL_ALL_TO_ALL, n, tp, outb);

			comm_f += c1;
			comm_b += c1;
			exp_f += c1;
			exp_b += c1;
		}
		if (cp_comm == MT_CP_ALL_GATHER) {
			double g = costs_coll(x, MT_COLL_ALL_GATHER, cp, tp, kvb * cp);
			double r = costs_coll(x, MT_COLL_REDUCE_SCATTER, cp, tp, kvb * cp);

			comm_f += g;
			comm_b += g + r;
			exp_f += g;
			exp_b += g + r;
		}
	}
	o->cp_comm[k] = comm_f + comm_b;
	o->cp_exposed[k] = exp_f + exp_b;
}

/* ---- the host timeline's regions of layer kind k (5.8): the CPU time of
 * the ops each region issues, forward and backward, the GPU time of its
 * kernels, where the forward waits for the GPU and what per-layer graphs
 * capture.  Called once fwd[k] is known. */
static void layer_host(const struct work *w, int k, struct mt_costs *o)
{
	const struct mt_ctx *x = w->x;
	const struct mt_model *m = x->model;
	const struct mt_host_costs *hc = &x->hc;
	struct mt_host_layer *h = &o->hl[k];
	const int tp = w->sh->tp, cp = w->sh->cp, ep = w->sh->ep, etp = w->sh->etp;
	const double bw = x->hbm * MT_ELEM_EFFICIENCY, E = hc->eager, Eb = E * MT_HOST_BWD_EAGER;
	const double Tl = hc->te_fp8, To = hc->te;
	/* the q and k norms, or MLA's norms of its latent q and kv */
	double lin = m->mla ? (m->q_lora_rank > 0 ? 5 : 4) : 2, other = 1 + (m->qk_norm || m->mla ? 2 : 0);
	double eager = MT_HOST_ATTN_EAGER + (tp > 1 ? 4 : 0) + (cp > 1 ? 4 * cp : 0), rest;
	int r;

	*h = (struct mt_host_layer){ 0 };
	h->cf[MT_HR_ATTN] = lin * Tl + other * To + eager * E;
	h->cb[MT_HR_ATTN] = lin * Tl + other * To + eager * Eb;
	if (k == MT_L_DENSE) {
		double e2 = MT_HOST_MLP_EAGER + (tp > 1 ? 4 : 0);

		h->cf[MT_HR_MLP] = 2 * Tl + e2 * E;
		h->cb[MT_HR_MLP] = 2 * Tl + e2 * Eb;
		h->gf[MT_HR_MLP] = w->mlp_f + w->T * w->e_mlp / bw;
		h->graphable = 1u << MT_HR_ATTN | 1u << MT_HR_MLP;
		if (x->job->graph_scope) /* the scopes the job names (5.10) */
			h->graphable = ((x->job->graph_scope >> MT_GS_ATTN & 1u) << MT_HR_ATTN) |
				       ((x->job->graph_scope >> MT_GS_MLP & 1u) << MT_HR_MLP);
		h->graph_calls = MT_GRAPH_CALLS_PER_LAYER / 2;
		h->sync = MT_HS_NONE;
	} else {
		const struct mt_dispatch_cost *d = &o->disp;
		double el = (double)m->experts / ep, gemm = MT_HOST_EXPERT_GEMM_OPS * E;
		double pad = mt_prec_quantised(x->job) ? MT_HOST_EXPERT_PAD_OPS : 0;
		/* no wait with padded token drop, nor on HybridEP with a rank
		 * budget: the received size is known on the host (5.8) */
		/* the all-to-all dispatcher copies the split sizes to the host;
		 * DeepEP's dispatch and HybridEP's without a budget wait for the
		 * received counts its notify kernel exchanges (fused_a2a.py @
		 * d98e8a6: the CPU waits for the GPU's signal), then launch the
		 * transfer itself: both wait before the tokens move; the
		 * allgather dispatcher after its gather */
		int sync = x->job->moe_balance == MT_BAL_DROP || w->sh->rank_budget ? MT_HS_NONE
			   : w->sh->dispatcher == MT_DISPATCH_ALLGATHER ? MT_HS_DISPATCH
									: MT_HS_BEFORE_DISPATCH;
		int comm = ep > 1 || etp > 1;

		h->cf[MT_HR_ROUTER] = To + MT_HOST_ROUTER_EAGER * E;
		h->cb[MT_HR_ROUTER] = To + MT_HOST_ROUTER_EAGER * Eb;
		eager = w->sh->dispatcher == MT_DISPATCH_ALLTOALL ? MT_HOST_PRE_A2A_EAGER
								  : MT_HOST_PRE_FLEX_EAGER;
		h->cf[MT_HR_PRE] = eager * E;
		h->cb[MT_HR_PRE] = 0; /* counts only: nothing to differentiate */
		h->cf[MT_HR_DISPATCH] = MT_HOST_DISPATCH_EAGER * E;
		h->cb[MT_HR_DISPATCH] = MT_HOST_DISPATCH_EAGER * Eb;
		h->cf[MT_HR_MLP] = 2 * Tl + MT_HOST_EXPERTS_EAGER * E + el * (2 * gemm + pad * E);
		h->cb[MT_HR_MLP] = 2 * Tl + MT_HOST_EXPERTS_EAGER * Eb + el * (4 * gemm + pad * Eb);
		if (m->shared_ffn) {
			h->cf[MT_HR_MLP] += 2 * Tl + MT_HOST_MLP_EAGER * E;
			h->cb[MT_HR_MLP] += 2 * Tl + MT_HOST_MLP_EAGER * Eb;
		}
		h->cf[MT_HR_COMBINE] = MT_HOST_COMBINE_EAGER * E;
		h->cb[MT_HR_COMBINE] = MT_HOST_COMBINE_EAGER * Eb;
		/* GPU: the collectives, the experts' GEMMs and element-wise work;
		 * the all-to-all dispatcher all-gathers the counts before its wait */
		h->gf[MT_HR_DISPATCH] = comm ? d->dispatch_s : 0;
		h->gf[MT_HR_COMBINE] = comm ? d->combine_s : 0;
		/* the counts each rank sends: an all-gather (all-to-all) or the
		 * notify kernel's exchange (flex), as small */
		if (comm && w->sh->dispatcher != MT_DISPATCH_ALLGATHER)
			h->gf[MT_HR_PRE] = costs_coll(x, MT_COLL_ALL_GATHER, ep, etp, 8.0 * m->experts);
		h->gf[MT_HR_MLP] = o->gemm_f[k] - w->attn_lin_f + w->T * w->e_moe / bw;
		h->sync = sync;
		/* Megatron-LM d98e8a6 transformer_config.py:2840: the whole MoE
		 * block is captured only with padded token drop; dropless MoE
		 * captures the router and the preprocessing (moe_router,
		 * moe_preprocess), dispatch and experts stay eager */
		h->graphable = sync == MT_HS_NONE
				       ? (1u << MT_HR_N) - 1
				       : 1u << MT_HR_ATTN | 1u << MT_HR_ROUTER | 1u << MT_HR_PRE;
		if (x->job->graph_scope) {
			unsigned gs = x->job->graph_scope;

			h->graphable = (gs >> MT_GS_MOE & 1u) && sync == MT_HS_NONE
					       ? (1u << MT_HR_N) - 1
					       : ((gs >> MT_GS_ROUTER & 1u) << MT_HR_ROUTER) |
							 ((gs >> MT_GS_PRE & 1u) << MT_HR_PRE);
			if (!(gs >> MT_GS_ATTN & 1u))
				h->graphable &= ~(1u << MT_HR_ATTN);
			else
				h->graphable |= 1u << MT_HR_ATTN;
		}
		h->graph_calls = MT_GRAPH_CALLS_PER_LAYER / 2;
	}
	/* attention: what the layer's forward leaves (its GEMMs and attention,
	 * norms, the exposed TP/CP traffic, kernel gaps) */
	rest = o->fwd[k];
	for (r = 1; r < MT_HR_N; r++)
		rest -= h->gf[r];
	h->gf[MT_HR_ATTN] = fmax(0, rest);
	mt_host_layer_finish(h, hc->graph);
	/* the same layer waiting for the counts, as it would without the
	 * rank budget: what the budget removes (8.1) */
	if (k == MT_L_MOE && w->sh->rank_budget && x->job->moe_balance != MT_BAL_DROP) {
		o->hl_wait = *h;
		o->hl_wait.sync = MT_HS_BEFORE_DISPATCH;
		o->hl_wait.graphable = 1u << MT_HR_ATTN | 1u << MT_HR_ROUTER | 1u << MT_HR_PRE;
		mt_host_layer_finish(&o->hl_wait, hc->graph);
	}
}

/* ---- EP communication (5.3), then the kernels issued and the layer's
 * forward and backward time with the exposed communication. */
void mt_layer_time(struct work *w, int k, double slow, struct mt_costs *o)
{
	const struct mt_ctx *x = w->x;
	const struct mt_model *m = x->model;
	const int tp = w->sh->tp, cp = w->sh->cp, ep = w->sh->ep, etp = w->sh->etp;
	double comm_f = 0, comm_b = 0, hid = 0;

	if (k == MT_L_MOE && (ep > 1 || etp > 1)) {
		const struct mt_dispatch_cost *d = &o->disp;
		double comp_f, comp_b, ex;

		/* forward: dispatch and combine (the host's wait for the split
		 * sizes is the host timeline's, 5.8); backward: the combine's and
		 * dispatch's mirror images */
		comm_f = d->dispatch_s + d->combine_s;
		comm_b = d->dispatch_s + d->combine_s;
		/* --moe-shared-expert-overlap: the shared experts run on a side
		 * stream while the tokens travel (alltoall and flex) */
		if (m->shared_ffn && w->sh->dispatcher != MT_DISPATCH_ALLGATHER)
			hid = fmin(d->dispatch_s + d->combine_s, w->shared_f) +
			      fmin(d->dispatch_s + d->combine_s, w->shared_b);
		/* the 1F1B overlap (5.3): layer i of one micro-batch's forward
		 * runs beside layer L-1-i of another's backward, each cut into
		 * attention (with the router and shared experts), dispatch,
		 * experts and combine, chained by events: the backward's combine
		 * hides behind the forward's attention, the forward's dispatch
		 * behind the backward's experts, the backward's dispatch behind
		 * the forward's experts, the forward's combine behind the
		 * backward's attention; each piece only behind its partner */
		comp_f = o->gemm_f[k] + o->attn_f[k] + o->elem_f[k];
		comp_b = o->gemm_b[k] + o->attn_b[k] + o->elem_b[k];
		ex = fmax(0, d->dispatch_s - fmax(0, comp_f - w->exp_f)) +
		     fmax(0, d->dispatch_s - w->exp_b) + fmax(0, d->combine_s - w->exp_f) +
		     fmax(0, d->combine_s - fmax(0, comp_b - w->exp_b));
		/* of what the pieces could hide, the kernels running side by side
		 * hide MT_EP_OVERLAP_HIDDEN: a communication kernel issued beside
		 * a GEMM that holds every SM waits for its blocks to drain */
		ex = comm_f + comm_b - MT_EP_OVERLAP_HIDDEN * (comm_f + comm_b - ex);
		o->ep_1f1b_exposed = ex;
		o->ep_1f1b_save = (comm_f + comm_b - hid) + d->sm_share * hid - ex -
				  d->sm_share * (comm_f + comm_b - ex);
		o->ep_shared_hidden = hid;
		slow += d->sm_share * hid;
	}
	o->ep_comm[k] = comm_f + comm_b;
	o->ep_exposed[k] = comm_f + comm_b - hid;
	w->ep_f = fmax(0, comm_f - hid / 2);

	/* kernels issued per layer and micro-batch, forward + backward (5.8) */
	o->host_ops[k] = 40 + (tp > 1 ? 10 : 0) + (w->fp8_cast > 0 ? 12 * (1 + w->q_extra) : 0) +
			 (cp > 1 ? 4 * cp : 0);
	if (w->eager) { /* Megatron-LM's own layers: their eager kernels (4.11) */
		o->host_ops[k] = w->eg[k].kern_f + w->eg[k].kern_b;
		o->eager_idle_f[k] = w->eg[k].idle_f;
		o->eager_idle_b[k] = w->eg[k].idle_b;
		o->eager_cpu[k] = w->eg[k].cpu_f + w->eg[k].cpu_b;
	}
	if (k == MT_L_MOE) /* router, permutations, a2a, and per local expert 2 GEMMs
			    * forward and 4 backward, plus their FP8 casts */
		o->host_ops[k] += 30 + (6 + (w->fp8_cast > 0 ? 6 * (1 + w->q_extra) : 0)) *
					       m->experts / ep;
	/* the GPU idles between dependent kernels: one gap per kernel */
	slow += o->host_ops[k] * MT_KERNEL_GAP_US * 1e-6;
	o->fwd[k] = o->gemm_f[k] + o->attn_f[k] + o->elem_f[k] + slow / 3;
	o->bwd[k] = o->gemm_b[k] + o->attn_b[k] + o->elem_b[k] + 2 * slow / 3;
	o->fwd[k] += (o->tp_exposed[k] + o->cp_exposed[k] + o->ep_exposed[k]) * MT_COMM_FWD_SHARE;
	o->bwd[k] += (o->tp_exposed[k] + o->cp_exposed[k] + o->ep_exposed[k]) *
		     (1 - MT_COMM_FWD_SHARE);
	o->rc_full[k] = o->fwd[k];
	layer_host(w, k, o);
}
