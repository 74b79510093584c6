/* SPDX-License-Identifier: MIT */
/* costs: level A of the model, the cost of one layer on one GPU for one
 * micro-batch (docs/MODEL.md sections 4 and 5). */
#include <math.h>
#include <string.h>

#include "constants.h"
#include "eager.h"
#include "perf.h"
#include "hostmem.h"
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

/* Collective time helpers with the group's NVLink-domain membership. */
static double costs_coll(const struct mt_ctx *x, int op, int n, int stride, double bytes)
{
	if (n <= 1 || bytes <= 0)
		return 0;
	return mt_coll_time(x->cluster, op, n, mt_group_per_domain(x->cluster, n, stride), bytes);
}

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

/* ---- TP communication (5.1) of layer kind k; returns the slowdown of the
 * GEMMs that hide it. */
static double layer_tp_comm(struct work *w, int k, struct mt_costs *o)
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
static void layer_cp_comm(const struct work *w, int k, struct mt_costs *o)
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
static void layer_time(struct work *w, int k, double slow, struct mt_costs *o)
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

/* ---- selective recomputation (4.4, 5.12): per module, the activation
 * bytes it frees and the forward work the backward re-runs, for layer kind
 * k; act_core and act_mlp are layer_memory's terms per token */
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
static void layer_memory(const struct work *w, int k, struct mt_costs *o)
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
		slow = layer_tp_comm(&w, k, o);
		layer_cp_comm(&w, k, o);
		slow += MT_COMM_SM_SLOWDOWN * (o->cp_comm[k] - o->cp_exposed[k]);
		layer_time(&w, k, slow, o);
		layer_memory(&w, k, o);
	}
	io_costs(&w, o);
	o->valid = 1;
}
