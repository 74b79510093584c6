/* SPDX-License-Identifier: MIT */
/* costs: level A of the model, the cost of one layer on one GPU for one
 * micro-batch (docs/MODEL.md sections 4 and 5): the shape worked out, the
 * GEMM, attention and element-wise costs of each layer kind, the embedding
 * and output layer, and mt_costs_compute() gathering them with the
 * communication and time (costs_comm.c) and the memory (costs_mem.c). */
#include <math.h>
#include <string.h>

#include "constants.h"
#include "costs_int.h"
#include "eager.h"
#include "perf.h"
#include "precision.h"


void mt_ctx_init(struct mt_ctx *x, const struct mt_model *m, const struct mt_cluster *c,
		 const struct mt_job *j)
{
	static unsigned gen;

	memset(x, 0, sizeof(*x));
	x->gen = ++gen ? gen : ++gen;
	x->model = m;
	x->cluster = c;
	x->job = j;
	x->recipe = mt_recipe_of(j);
	x->gemm_dtype = mt_recipe(x->recipe)->gemm_dtype;
	x->gemm_slow = 1 / mt_recipe_gemm_rate(x->recipe, c->compute_capability);
	x->hbm = c->hbm_gbps * 1e9;
	x->peak = mt_cluster_mfu_peak(c, x->gemm_dtype, NULL);
	x->hc.eager = (c->eager_op_us > 0 ? c->eager_op_us : MT_HOST_EAGER_US) * 1e-6;
	x->hc.te = (c->te_module_us > 0 ? c->te_module_us : MT_HOST_TE_US) * 1e-6;
	x->hc.te_fp8 = x->hc.te * (mt_prec_quantised(j) ? MT_HOST_TE_FP8 : 1);
	x->hc.graph = (c->graph_launch_us > 0 ? c->graph_launch_us : MT_GRAPH_CALL_US) * 1e-6;
	x->hc.sync = (c->sync_us > 0 ? c->sync_us : MT_HOST_SYNC_US) * 1e-6;
}

/* The three GEMMs of a linear layer (forward, data gradient, weight gradient)
 * for an (M x K) input and a (K x N) weight. */
struct lin {
	double f, b, flops;
};

/* linear()'s answers by (context, dtype, M, N, K): the search meets the same
 * GEMM shapes in many layer shapes (an EP or a dispatcher leaves the
 * attention's alone), and each answer costs three curve look-ups.  A
 * direct-mapped table, filled without allocating, as in pipeline.c. */
#define LIN_MEMO 4096
struct lin_memo {
	unsigned gen; /* the context's (0: empty) */
	int dt, fs, bs;
	double M, N, K;
	struct lin l;
};
static struct lin_memo lmemo[LIN_MEMO];

/* A linear layer whose forward runs as fs GEMMs of M/fs rows and whose data
 * gradient runs as bs of them: Transformer Engine's userbuffer overlap splits
 * the GEMM it pairs with a TP collective (5.1); 1 and 1 is the plain layer. */
static struct lin linear_split(const struct mt_ctx *x, int dt, double M, double N, double K,
			       int fs, int bs)
{
	const struct mt_cluster *c = x->cluster;
	unsigned long long h = (unsigned long long)M * 0x9E3779B97F4A7C15ull ^
			       (unsigned long long)N * 0xC2B2AE3D27D4EB4Full ^
			       (unsigned long long)K * 0x165667B19E3779F9ull ^ (unsigned long long)dt ^
			       (unsigned long long)(fs * 257 + bs) << 40;
	struct lin_memo *e = &lmemo[(h ^ (h >> 31)) % LIN_MEMO];
	struct lin l;

	if (e->gen == x->gen && e->dt == dt && e->fs == fs && e->bs == bs && e->M == M &&
	    e->N == N && e->K == K)
		return e->l;
	l.f = fs * mt_gemm_time(c, dt, M / fs, N, K);
	l.b = bs * mt_gemm_time(c, dt, M / bs, K, N) + mt_gemm_time(c, dt, K, N, M);
	if (dt == x->gemm_dtype) { /* the recipe's scaling (4.9) */
		l.f *= x->gemm_slow;
		l.b *= x->gemm_slow;
	}
	l.flops = 2 * M * N * K;
	*e = (struct lin_memo){ x->gen, dt, fs, bs, M, N, K, l };
	return l;
}

static struct lin linear(const struct mt_ctx *x, int dt, double M, double N, double K)
{
	return linear_split(x, dt, M, N, K, 1, 1);
}

double mt_attn_rate(const struct mt_ctx *x, int impl, int hd, int seq, int bwd)
{
	const struct mt_cluster *c = x->cluster;
	double r = mt_attn_tflops(c, impl, hd, seq, bwd);
	int causal_measured = mt_attn_causal(c, impl, hd);

	if (r <= 0)
		r = mt_attn_tflops(c, impl == MT_ATTN_FLASH ? MT_ATTN_UNFUSED : MT_ATTN_FLASH, hd, seq,
				   bwd);
	if (r <= 0) /* no attention measurement: half the GEMM rate of its shape */
		r = 0.5 * mt_gemm_tflops(c, MT_DT_BF16, seq, seq, hd);
	/* training is causal; a fused kernel measured without the mask runs the
	 * masked problem less efficiently (unfused attention computes it all) */
	if (impl == MT_ATTN_FLASH && !causal_measured)
		r *= MT_CAUSAL_ATTN_EFFICIENCY;
	return r;
}

/* ---- attention projections (4.1) */
static void attn_projections(struct work *w)
{
	const struct mt_ctx *x = w->x;
	const struct mt_model *m = x->model;
	const int dt = w->dt;
	const double T = w->T, h = w->h, a = w->a, t = w->t, dqk = w->dqk, dv = w->dv;

	if (m->mla) {
		double ql = m->q_lora_rank, kvl = m->kv_lora_rank, dr = m->qk_rope_dim;
		struct lin parts[5];
		int np = 0, i;

		if (ql > 0) {
			parts[np++] = linear(x, dt, T, ql, h);          /* q down, replicated */
			parts[np++] = linear(x, dt, T, a * dqk / t, ql); /* q up */
			w->up_f += parts[np - 1].f;
			w->up_flops += parts[np - 1].flops;
		} else {
			parts[np++] = linear(x, dt, T, a * dqk / t, h);
		}
		parts[np++] = linear(x, dt, T, kvl + dr, h);            /* kv down, replicated */
		parts[np++] = linear(x, dt, T, a * (m->qk_nope_dim + dv) / t, kvl); /* kv up */
		w->up_f += parts[np - 1].f;
		w->up_flops += parts[np - 1].flops;
		parts[np++] = linear(x, dt, T, h, a * dv / t);          /* output projection */
		for (i = 0; i < np; i++) {
			w->attn_lin_f += parts[i].f;
			w->attn_lin_b += parts[i].b;
			w->attn_lin_flops += parts[i].flops;
		}
	} else {
		struct lin qkv = linear_split(x, dt, T, (w->q_el + 2 * w->kv_el) / t, h, w->ub_ag, 1);
		struct lin proj = linear_split(x, dt, T, h, w->q_el / t, w->ub_rs, w->ub_ag);

		w->attn_lin_f = qkv.f + proj.f;
		w->attn_lin_b = qkv.b + proj.b;
		w->lin_f[0] = qkv.f;
		w->lin_b[0] = qkv.b;
		w->lin_f[1] = proj.f;
		w->lin_b[1] = proj.b;
		w->attn_lin_flops = qkv.flops + proj.flops;
	}
}

/* Megatron-LM's own layers as eager kernels (4.11): a dense layer, and a MoE
 * layer's attention block (its experts keep 4.1 and 4.3); the core
 * attention's time is theirs. */
static void eager_layers(struct work *w)
{
	const struct mt_ctx *x = w->x;
	const struct mt_model *m = x->model;
	const struct mt_job *j = x->job;
	struct mt_eager_in in;
	int k;

	memset(&in, 0, sizeof(in));
	in.T = w->T;
	in.Tsp = w->T / w->spd;
	in.mbs = w->sh->mbs;
	in.seq = w->s;
	in.ap = w->a / w->t;
	in.gp = fmax(1, m->kv_heads / w->t);
	in.d = m->head_dim;
	in.h = w->h;
	in.f = m->ffn / w->t;
	in.gated = m->gated;
	in.rope = !m->learned_pos && !m->no_pos;
	in.dropout = m->dropout;
	in.attn_dropout = m->attn_dropout;
	in.fusions_off = j->fusions_off;
	in.softmax_fp32 = j->softmax_fp32;
	in.grad_accum_fusion = j->grad_accum_fusion;
	in.hbm = x->hbm;
	in.peak = x->cluster->peak_tflops[MT_DT_BF16] * 1e12;
	in.gap = MT_KERNEL_GAP_US * 1e-6;
	in.host_f = MT_EAGER_HOST_FWD_US * 1e-6;
	in.host_b = MT_EAGER_HOST_BWD_US * 1e-6;
	for (k = 0; k < 4; k++) {
		in.lin_f[k] = w->lin_f[k];
		in.lin_b[k] = w->lin_b[k];
	}
	in.lin_par[0] = w->h * (w->q_el + 2 * w->kv_el) / w->t;
	in.lin_par[1] = w->h * w->q_el / w->t;
	in.lin_par[2] = w->h * w->gm * m->ffn / w->t;
	in.lin_par[3] = w->h * m->ffn / w->t;
	for (k = 0; k < MT_L_N; k++) {
		in.mlp = k == MT_L_DENSE;
		mt_eager_layer(&in, &w->eg[k]);
	}
	w->attn_f = w->eg[MT_L_DENSE].attn_f;
	w->attn_b = w->eg[MT_L_DENSE].attn_b;
}

/* The shape's dimensions, the attention, the dense MLP and the element-wise
 * traffic every layer kind shares. */
static void prepare(const struct mt_ctx *x, const struct mt_shape *sh, struct work *w)
{
	const struct mt_model *m = x->model;
	const struct mt_job *j = x->job;
	const int tp = sh->tp, cp = sh->cp, mbs = sh->mbs, cp_comm = sh->cp_comm;
	double s, h, a, t, spd, dqk, dv;

	w->x = x;
	w->sh = sh;
	w->dt = x->gemm_dtype;
	w->impl = j->attn_impl;
	/* Megatron-LM's own layers (4.11): GQA or MHA attention, no CP (its
	 * DotProductAttention has none) */
	w->eager = j->transformer_impl == MT_TI_LOCAL && !m->mla && cp == 1;
	s = w->s = j->seq;
	h = w->h = m->hidden;
	a = w->a = m->heads;
	t = w->t = tp;
	spd = w->spd = sh->sp ? tp : 1;
	/* bytes moved per element to cast a GEMM input to the recipe's format:
	 * read bf16 (twice with an amax pass), write each layout and its scales
	 * (4.9); the saved GEMM inputs stay quantised */
	w->fp8_cast = mt_recipe_cast_bytes(x->recipe, x->cluster->compute_capability);
	w->q_extra = mt_recipe_gemm_extra(x->recipe, x->cluster->compute_capability);
	w->gin = mt_prec_quantised(j) ? mt_recipe_saved_bytes(x->recipe) : 2;
	w->T = (double)mbs * s / cp;
	w->Tm = w->T / spd;           /* tokens routed by this GPU in a MoE layer */
	w->lam = m->experts ? mt_moe_imbalance(x, sh->ep, w->Tm) : 1;
	w->gm = m->gated ? 2 : 1;     /* width of the up projection in units of ffn */
	w->V = mt_model_padded_vocab(m, tp);
	if (m->mla) {
		dqk = m->qk_nope_dim + m->qk_rope_dim;
		dv = m->v_head_dim;
		w->q_el = a * dqk;
		w->kv_el = a * (dqk + dv) / 2; /* K and V together are a*(dqk+dv) */
	} else {
		dqk = dv = m->head_dim;
		w->q_el = a * dqk;
		w->kv_el = (double)m->kv_heads * m->head_dim;
	}
	w->dqk = dqk;
	w->dv = dv;
	w->hd = dqk;
	w->ub_ag = w->ub_rs = 1;
	if (sh->tp_overlap && sh->sp && tp > 1) {
		w->ub_ag = tp;
		w->ub_rs = MT_TP_OVERLAP_RS_SPLITS;
	}
	w->inner_a2a = sh->cp_a2a > 0 ? sh->cp_a2a : mt_group_per_domain(x->cluster, cp, tp);
	w->shared_f = w->shared_b = w->exp_f = w->exp_b = 0;
	w->attn_lin_f = w->attn_lin_b = w->attn_lin_flops = 0;
	w->up_f = w->up_flops = w->shared_flops = w->e_mlp = w->e_moe = 0;

	attn_projections(w);

	/* ---- core attention (4.2): causal flash attention skips masked blocks */
	{
		/* the attention kernel sees the chunk a rank holds: the whole
		 * sequence after Ulysses' a2a, s/CP for a ring, s*inner/CP for both */
		double seq_eff = (cp_comm == MT_CP_A2A || cp == 1) ? s
			       : cp_comm == MT_CP_A2A_P2P ? s * w->inner_a2a / cp
							   : s / cp;
		double causal = w->impl == MT_ATTN_FLASH ? 0.5 : 1.0;

		w->core_flops = 2 * mbs * (s / cp) * s * (a / t) * (dqk + dv) * causal;
		w->attn_f = w->core_flops /
			    (mt_attn_rate(x, w->impl, (int)w->hd, (int)seq_eff, 0) * 1e12);
		w->attn_b = 2 * w->core_flops /
			    (mt_attn_rate(x, w->impl, (int)w->hd, (int)seq_eff, 1) * 1e12);
		/* a fused kernel with attention dropout draws its mask inside (4.2) */
		if (w->impl == MT_ATTN_FLASH && m->attn_dropout > 0) {
			double d = x->cluster->compute_capability >= 10 ? MT_ATTN_DROPOUT_BLACKWELL
									 : MT_ATTN_DROPOUT_HOPPER;

			w->attn_f *= 1 + d;
			w->attn_b *= 1 + d;
		}
	}

	/* ---- dense MLP */
	{
		struct lin up = linear_split(x, w->dt, w->T, w->gm * m->ffn / t, h, w->ub_ag, 1);
		struct lin down = linear_split(x, w->dt, w->T, h, m->ffn / t, w->ub_rs, w->ub_ag);

		w->mlp_f = up.f + down.f;
		w->mlp_b = up.b + down.b;
		w->mlp_flops = up.flops + down.flops;
		w->lin_f[2] = up.f;
		w->lin_b[2] = up.b;
		w->lin_f[3] = down.f;
		w->lin_b[3] = down.b;
	}
	if (w->eager)
		eager_layers(w);

	/* ---- element-wise traffic, forward (4.3) */
	w->e_sp = (20 * h + (m->dropout > 0 ? 4 * h : 0)) / spd;
	w->e_tp = (m->learned_pos || m->no_pos ? 0
		   : 4 * (m->mla ? a * m->qk_rope_dim : w->q_el + w->kv_el) / t); /* RoPE */
	/* the QKV and FC1 inputs come from a norm (4.9) */
	w->e_sp += mt_recipe_norm_cast_bytes(x->recipe, x->cluster->compute_capability) * 2 * h / spd;
	w->e_tp += w->fp8_cast * w->q_el / t;
}

/* GEMMs and element-wise time of layer kind k. */
static void layer_compute(struct work *w, int k, struct mt_costs *o)
{
	const struct mt_ctx *x = w->x;
	const struct mt_model *m = x->model;
	const struct mt_shape *sh = w->sh;
	const int dt = w->dt;
	const double h = w->h, t = w->t, T = w->T, gm = w->gm, fp8_cast = w->fp8_cast;
	double e = w->e_sp + w->e_tp, bytes;

	o->gemm_f[k] = w->attn_lin_f;
	o->gemm_b[k] = w->attn_lin_b;
	o->flops_gemm_f[k] = w->attn_lin_flops;
	o->attn_f[k] = w->attn_f;
	o->attn_b[k] = w->attn_b;
	o->flops_attn_f[k] = w->core_flops;
	if (k == MT_L_DENSE) {
		o->gemm_f[k] += w->mlp_f;
		o->gemm_b[k] += w->mlp_b;
		o->flops_gemm_f[k] += w->mlp_flops;
		w->e_mlp = ((m->gated ? 6.0 : 4.0) * m->ffn + fp8_cast * m->ffn) / t;
		e += w->e_mlp;
	} else {
		double e0 = e;

		/* MoE layer (4.1, 4.3): the busiest EP rank receives lam times
		 * the mean number of routed tokens (5.3); Transformer Engine's
		 * grouped linear runs one GEMM per local expert */
		double E = m->experts, kk = m->topk, fe = m->moe_ffn, el = E / sh->ep;
		double lam = w->lam;
		double Me = lam * w->Tm * kk * sh->etp * sh->ep / E; /* tokens per local expert */
		struct lin up, down, router;

		up = linear(x, dt, Me, gm * fe / sh->etp, h);
		down = linear(x, dt, Me, h, fe / sh->etp);
		router = linear(x, MT_DT_TF32, w->Tm, E, h);
		o->gemm_f[k] += el * (up.f + down.f) + router.f;
		o->gemm_b[k] += el * (up.b + down.b) + router.b;
		w->exp_f = el * (up.f + down.f);
		w->exp_b = el * (up.b + down.b);
		o->flops_gemm_f[k] += (up.flops + down.flops) * el / lam + router.flops;
		if (m->shared_ffn) {
			struct lin su = linear(x, dt, T, gm * m->shared_ffn / t, h);
			struct lin sd = linear(x, dt, T, h, m->shared_ffn / t);

			w->shared_f = su.f + sd.f;
			w->shared_b = su.b + sd.b;
			w->shared_flops = su.flops + sd.flops;
			o->gemm_f[k] += su.f + sd.f;
			o->gemm_b[k] += su.b + sd.b;
			o->flops_gemm_f[k] += su.flops + sd.flops;
			e += ((m->gated ? 6.0 : 4.0) * m->shared_ffn + fp8_cast * m->shared_ffn) / t;
		}
		/* the dispatcher's permutations and the router (perfmodel/dispatch.c),
		 * then per routed copy the expert activation and the FP8 casts; with
		 * FP8 each local expert's tokens are padded to a multiple of 16 */
		mt_dispatch_cost(x, sh->dispatcher, sh->ep, sh->etp, w->Tm, lam, &o->disp);
		bytes = (o->disp.perm_bytes + lam * kk * ((m->gated ? 6.0 : 4.0) * fe +
							  fp8_cast * (sh->etp * h + fe))) / w->spd;
		if (fp8_cast > 0 && w->Tm > 0)
			bytes += el * 8 * 2 * h * 2 / T;
		e += bytes;
		bytes *= T / (x->hbm * MT_ELEM_EFFICIENCY);
		w->exp_f += bytes;
		w->exp_b += MT_ELEM_BWD_FACTOR * bytes;
		w->e_moe = e - e0;
	}
	bytes = e * T;
	o->elem_f[k] = bytes / (x->hbm * MT_ELEM_EFFICIENCY);
	o->elem_b[k] = MT_ELEM_BWD_FACTOR * o->elem_f[k];
	if (w->eager) { /* the eager kernels; a MoE layer's experts as above (4.11) */
		double moe = k == MT_L_MOE ? T * w->e_moe / (x->hbm * MT_ELEM_EFFICIENCY) : 0;

		o->elem_f[k] = w->eg[k].elem_f + moe;
		o->elem_b[k] = w->eg[k].elem_b + MT_ELEM_BWD_FACTOR * moe;
	}
}

/* ---- embedding and output layer (4.5); the pipeline message, MoE
 * buffers and transients */
static void io_costs(const struct work *w, struct mt_costs *o)
{
	const struct mt_ctx *x = w->x;
	const struct mt_model *m = x->model;
	const struct mt_shape *sh = w->sh;
	const int tp = sh->tp, sp = sh->sp, fused_ce = sh->fused_ce;
	const double h = w->h, t = w->t, T = w->T, V = w->V, spd = w->spd, gm = w->gm;
	struct lin l;

	o->par_emb = V * h / t + (m->learned_pos ? (double)m->max_pos * h : 0);
	o->emb_f = T * (2 * h / spd + 2 * h) / (x->hbm * MT_ELEM_EFFICIENCY);
	o->emb_b = 2 * o->emb_f;
	o->act_emb = T * (m->dropout > 0 ? h / spd : 0) + 8 * T;
	l = linear(x, MT_DT_BF16, T, V / t, h);
	{
		double ce_f = fused_ce ? 4 : 14, ce_b = fused_ce ? 2 : 10;
		double bw = x->hbm * MT_ELEM_EFFICIENCY, ln = 4 * h * T / spd / bw;

		/* without Transformer Engine the fused loss is Megatron-LM's native
		 * one (4.11) */
		if (w->eager && fused_ce) {
			ce_f = MT_CE_NATIVE_FWD_BYTES;
			ce_b = MT_CE_NATIVE_BWD_BYTES;
		}

		o->out_f = l.f + ce_f * T * V / t / bw + ln;
		o->out_b = l.b + ce_b * T * V / t / bw + 2 * ln;
		o->flops_out_f = l.flops;
		if (tp > 1) {
			double S2 = T * h * 2;
			o->out_tp_comm = (sp ? costs_coll(x, MT_COLL_ALL_GATHER, tp, 1, S2) * 2 +
						       costs_coll(x, MT_COLL_REDUCE_SCATTER, tp, 1, S2)
					     : 2 * costs_coll(x, MT_COLL_ALL_REDUCE, tp, 1, S2)) +
					 3 * costs_coll(x, MT_COLL_ALL_REDUCE, tp, 1, T * 4);
			o->out_tp_exposed = o->out_tp_comm;
			o->out_f += MT_COMM_FWD_SHARE * o->out_tp_exposed;
			o->out_b += (1 - MT_COMM_FWD_SHARE) * o->out_tp_exposed;
		}
		/* kept from the loss's forward to its backward (4.8): the
		 * output layer's inputs and the loss's FP32 softmax (its
		 * .float() copy of the logits, fused or not); beside it for a
		 * moment the BF16 logits (forward) or their BF16 gradient, and
		 * with the native fused loss a second FP32 copy */
		o->act_out = T * 4 * h / spd + T * V / t * 4;
		o->logits_transient = T * V / t *
				      (2 + (fused_ce && x->job->ce_native ? MT_CE_NATIVE_COPY_BYTES : 0));
	}
	o->eager = w->eager;
	o->eager_buffer = w->eager ? w->eg[MT_L_DENSE].buffer : 0;
	o->host_ops_io = 40;

	o->p2p_bytes = T * h * 2 / spd;
	/* the dispatcher's token buffers (4.8, perfmodel/dispbuf.c) */
	o->moe_tokens = w->Tm;
	mt_dispatch_buffers(x, sh->dispatcher, sh->ep, sh->etp, w->Tm, &o->dbuf);
	o->transient = fmax(T * h * 2, T * gm * (m->experts ? fmax(m->ffn, m->shared_ffn) : m->ffn) / t * 2);
	if (sh->tp_overlap && sp && tp > 1)
		o->transient += 3 * T * h * 2; /* userbuffers for overlapped GEMMs */
}

void mt_shape_of(const struct mt_config *cfg, struct mt_shape *sh)
{
	sh->tp = cfg->tp;
	sh->cp = cfg->cp;
	sh->mbs = cfg->mbs;
	sh->ep = cfg->ep;
	sh->etp = cfg->etp;
	sh->sp = cfg->sp;
	sh->cp_comm = cfg->cp_comm;
	sh->cp_a2a = cfg->cp_a2a;
	sh->tp_overlap = cfg->tp_overlap;
	sh->fused_ce = cfg->fused_ce;
	sh->dispatcher = cfg->dispatcher;
	sh->rank_budget = cfg->dispatcher == MT_DISPATCH_FLEX && cfg->rank_budget;
}

void mt_costs_compute(const struct mt_ctx *x, const struct mt_shape *sh, struct mt_costs *o)
{
	struct work w;
	double slow;
	int k;

	memset(o, 0, sizeof(*o));
	o->tp = sh->tp;
	o->cp = sh->cp;
	o->mbs = sh->mbs;
	o->ep = sh->ep;
	o->etp = sh->etp;
	o->sp = sh->sp;
	o->cp_type = sh->cp_comm;
	o->dispatcher = sh->dispatcher;
	o->rank_budget = sh->rank_budget;
	prepare(x, sh, &w);
	o->tokens = w.T;
	for (k = 0; k < MT_L_N; k++) {
		if (k == MT_L_MOE && !x->model->experts)
			break;
		layer_compute(&w, k, o);
		slow = mt_layer_tp_comm(&w, k, o);
		mt_layer_cp_comm(&w, k, o);
		slow += MT_COMM_SM_SLOWDOWN * (o->cp_comm[k] - o->cp_exposed[k]);
		mt_layer_time(&w, k, slow, o);
		mt_layer_memory(&w, k, o);
	}
	io_costs(&w, o);
	o->valid = 1;
}
