/* SPDX-License-Identifier: MIT */
/* costs: level A of the model, the cost of one layer on one GPU for one
 * micro-batch (docs/MODEL.md sections 4 and 5). */
#include <math.h>
#include <string.h>

#include "constants.h"
#include "perf.h"


void mt_ctx_init(struct mt_ctx *x, const struct mt_model *m, const struct mt_cluster *c,
		 const struct mt_job *j)
{
	memset(x, 0, sizeof(*x));
	x->model = m;
	x->cluster = c;
	x->job = j;
	x->gemm_dtype = j->precision == MT_PREC_FP8 ? MT_DT_FP8 : MT_DT_BF16;
	x->hbm = c->hbm_gbps * 1e9;
	x->peak = c->peak_tflops[x->gemm_dtype];
	if (x->peak <= 0)
		x->peak = c->peak_tflops[MT_DT_BF16];
	x->host_op_s = (c->launch_overhead_us > 0 ? c->launch_overhead_us : MT_HOST_OP_US_DEFAULT) * 1e-6;
}

/* The three GEMMs of a linear layer (forward, data gradient, weight gradient)
 * for an (M x K) input and a (K x N) weight. */
struct lin {
	double f, b, flops;
};

static struct lin linear(const struct mt_ctx *x, int dt, double M, double N, double K)
{
	struct lin l;
	const struct mt_cluster *c = x->cluster;

	l.f = mt_gemm_time(c, dt, M, N, K);
	l.b = mt_gemm_time(c, dt, M, K, N) + mt_gemm_time(c, dt, K, N, M);
	l.flops = 2 * M * N * K;
	return l;
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
static double coll(const struct mt_ctx *x, int op, int n, int stride, double bytes)
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

void mt_costs_compute(const struct mt_ctx *x, int tp, int cp, int mbs, int ep, int etp, int sp,
		      int cp_comm, int cp_a2a, int tp_overlap, int fused_ce, struct mt_costs *o)
{
	const struct mt_model *m = x->model;
	const struct mt_job *j = x->job;
	const int dt = x->gemm_dtype, impl = j->attn_impl, L = MT_L_DENSE, M = MT_L_MOE;
	const double s = j->seq, h = m->hidden, a = m->heads, t = tp;
	const double spd = sp ? tp : 1;
	/* bytes moved per element to cast a GEMM input to FP8: read bf16, write
	 * fp8, and for current (tensorwise) scaling one more read for the amax */
	const double fp8_cast = j->precision != MT_PREC_FP8 ? 0.0
				: j->fp8_recipe == MT_FP8_TENSORWISE ? 5.0 : 3.0;
	double T, Tm, q_el, kv_el, dqk, dv, gm, V, hd;
	int inner_a2a;
	double attn_lin_f = 0, attn_lin_b = 0, attn_lin_flops = 0, mlp_f, mlp_b, mlp_flops;
	double core_flops, attn_f, attn_b, e_sp, e_tp, bytes, S, ag, ag8, rs, ar;
	double tp_pair_f, tp_pair_b, comm_f, comm_b, exp_f, exp_b, slow;
	double shared_f = 0, shared_b = 0;
	double act_sp, act_tp, act_core;
	const double gin = j->precision == MT_PREC_FP8 ? 1 : 2; /* bytes of a saved GEMM input */
	struct lin l;
	int k;

	memset(o, 0, sizeof(*o));
	o->tp = tp;
	o->cp = cp;
	o->mbs = mbs;
	o->ep = ep;
	o->etp = etp;
	o->sp = sp;
	o->cp_type = cp_comm;
	T = (double)mbs * s / cp;
	o->tokens = T;
	Tm = T / spd;                 /* tokens routed by this GPU in a MoE layer */
	gm = m->gated ? 2 : 1;        /* width of the up projection in units of ffn */
	V = mt_model_padded_vocab(m, tp);
	if (m->mla) {
		dqk = m->qk_nope_dim + m->qk_rope_dim;
		dv = m->v_head_dim;
		q_el = a * dqk;
		kv_el = a * (dqk + dv) / 2; /* K and V together are a*(dqk+dv) */
	} else {
		dqk = dv = m->head_dim;
		q_el = a * dqk;
		kv_el = (double)m->kv_heads * m->head_dim;
	}
	hd = dqk;
	inner_a2a = cp_a2a > 0 ? cp_a2a : mt_group_per_domain(x->cluster, cp, tp);

	/* ---- attention projections (4.1) */
	if (m->mla) {
		double ql = m->q_lora_rank, kvl = m->kv_lora_rank, dr = m->qk_rope_dim;
		struct lin parts[5];
		int np = 0, i;

		if (ql > 0) {
			parts[np++] = linear(x, dt, T, ql, h);          /* q down, replicated */
			parts[np++] = linear(x, dt, T, a * dqk / t, ql); /* q up */
		} else {
			parts[np++] = linear(x, dt, T, a * dqk / t, h);
		}
		parts[np++] = linear(x, dt, T, kvl + dr, h);            /* kv down, replicated */
		parts[np++] = linear(x, dt, T, a * (m->qk_nope_dim + dv) / t, kvl); /* kv up */
		parts[np++] = linear(x, dt, T, h, a * dv / t);          /* output projection */
		for (i = 0; i < np; i++) {
			attn_lin_f += parts[i].f;
			attn_lin_b += parts[i].b;
			attn_lin_flops += parts[i].flops;
		}
	} else {
		struct lin qkv = linear(x, dt, T, (q_el + 2 * kv_el) / t, h);
		struct lin proj = linear(x, dt, T, h, q_el / t);

		attn_lin_f = qkv.f + proj.f;
		attn_lin_b = qkv.b + proj.b;
		attn_lin_flops = qkv.flops + proj.flops;
	}

	/* ---- core attention (4.2): causal flash attention skips masked blocks */
	{
		/* the attention kernel sees the chunk a rank holds: the whole
		 * sequence after Ulysses' a2a, s/CP for a ring, s*inner/CP for both */
		double seq_eff = (cp_comm == MT_CP_A2A || cp == 1) ? s
			       : cp_comm == MT_CP_A2A_P2P ? s * inner_a2a / cp
							   : s / cp;
		double causal = impl == MT_ATTN_FLASH ? 0.5 : 1.0;

		core_flops = 2 * mbs * (s / cp) * s * (a / t) * (dqk + dv) * causal;
		attn_f = core_flops / (mt_attn_rate(x, impl, (int)hd, (int)seq_eff, 0) * 1e12);
		attn_b = 2 * core_flops / (mt_attn_rate(x, impl, (int)hd, (int)seq_eff, 1) * 1e12);
	}

	/* ---- dense MLP */
	{
		struct lin up = linear(x, dt, T, gm * m->ffn / t, h);
		struct lin down = linear(x, dt, T, h, m->ffn / t);

		mlp_f = up.f + down.f;
		mlp_b = up.b + down.b;
		mlp_flops = up.flops + down.flops;
	}

	/* ---- element-wise traffic, forward (4.3) */
	e_sp = (20 * h + (m->dropout > 0 ? 4 * h : 0)) / spd;
	e_tp = (m->learned_pos || m->no_pos ? 0
		: 4 * (m->mla ? a * m->qk_rope_dim : q_el + kv_el) / t); /* RoPE */
	e_sp += fp8_cast * 2 * h / spd;
	e_tp += fp8_cast * q_el / t;

	for (k = 0; k < MT_L_N; k++) {
		double e = e_sp + e_tp, act_mlp;

		if (k == M && !m->experts)
			break;
		o->gemm_f[k] = attn_lin_f;
		o->gemm_b[k] = attn_lin_b;
		o->flops_gemm_f[k] = attn_lin_flops;
		o->attn_f[k] = attn_f;
		o->attn_b[k] = attn_b;
		o->flops_attn_f[k] = core_flops;
		if (k == L) {
			o->gemm_f[k] += mlp_f;
			o->gemm_b[k] += mlp_b;
			o->flops_gemm_f[k] += mlp_flops;
			e += ((m->gated ? 6.0 : 4.0) * m->ffn + fp8_cast * m->ffn) / t;
		} else {
			/* MoE layer (4.1, 4.3): the busiest EP rank receives MT_MOE_IMBALANCE
			 * times the mean number of routed tokens; Transformer Engine's grouped
			 * linear runs one GEMM per local expert */
			double E = m->experts, kk = m->topk, fe = m->moe_ffn, el = E / ep;
			double lam = MT_MOE_IMBALANCE;
			double Me = lam * Tm * kk * etp * ep / E; /* tokens per local expert */
			struct lin up, down, router;

			up = linear(x, dt, Me, gm * fe / etp, h);
			down = linear(x, dt, Me, h, fe / etp);
			router = linear(x, MT_DT_TF32, Tm, E, h);
			o->gemm_f[k] += el * (up.f + down.f) + router.f;
			o->gemm_b[k] += el * (up.b + down.b) + router.b;
			o->flops_gemm_f[k] += (up.flops + down.flops) * el / lam + router.flops;
			if (m->shared_ffn) {
				struct lin su = linear(x, dt, T, gm * m->shared_ffn / t, h);
				struct lin sd = linear(x, dt, T, h, m->shared_ffn / t);

				shared_f = su.f + sd.f;
				shared_b = su.b + sd.b;
				o->gemm_f[k] += su.f + sd.f;
				o->gemm_b[k] += su.b + sd.b;
				o->flops_gemm_f[k] += su.flops + sd.flops;
				e += ((m->gated ? 6.0 : 4.0) * m->shared_ffn + fp8_cast * m->shared_ffn) / t;
			}
			/* router scores and top-k; then per routed copy of a token: permute,
			 * sort by local expert, unsort and unpermute (each reads and writes
			 * 2h bytes), the expert activation and the FP8 casts */
			e += (12 * E + lam * kk * (4 * 2 * 2 * h / MT_MOE_DISPATCH_EFFICIENCY +
						   (m->gated ? 6.0 : 4.0) * fe + fp8_cast * (etp * h + fe))) / spd;
		}
		bytes = e * T;
		o->elem_f[k] = bytes / (x->hbm * MT_ELEM_EFFICIENCY);
		o->elem_b[k] = MT_ELEM_BWD_FACTOR * o->elem_f[k];

		/* ---- TP communication (5.1) */
		tp_pair_f = tp_pair_b = comm_f = comm_b = 0;
		if (tp > 1) {
			int pairs = (k == L || m->shared_ffn) ? 2 : 1;

			S = T * h * 2;
			if (sp) {
				ag = coll(x, MT_COLL_ALL_GATHER, tp, 1, S);
				ag8 = j->precision == MT_PREC_FP8 ? coll(x, MT_COLL_ALL_GATHER, tp, 1, S / 2) : ag;
				rs = coll(x, MT_COLL_REDUCE_SCATTER, tp, 1, S);
				comm_f = pairs * (ag8 + rs);
				comm_b = pairs * (ag + rs + ag8);
			} else {
				ar = coll(x, MT_COLL_ALL_REDUCE, tp, 1, S);
				comm_f = pairs * ar;
				comm_b = pairs * ar;
			}
			/* the GEMMs each TP collective is paired with */
			tp_pair_f = attn_lin_f + (k == L ? mlp_f : shared_f);
			tp_pair_b = attn_lin_b + (k == L ? mlp_b : shared_b);
		}
		exp_f = exposed_overlap(comm_f, tp_pair_f, tp_overlap && sp);
		exp_b = exposed_overlap(comm_b, tp_pair_b, tp_overlap && sp);
		slow = MT_COMM_SM_SLOWDOWN * ((comm_f - exp_f) + (comm_b - exp_b));
		o->tp_comm[k] = comm_f + comm_b;
		o->tp_exposed[k] = exp_f + exp_b;

		/* ---- CP communication (5.2) */
		comm_f = comm_b = exp_f = exp_b = 0;
		if (cp > 1) {
			double kvb = T * 2 * kv_el / t * 2; /* K and V of this rank's chunk */
			double qkvb = T * (q_el + 2 * kv_el) / t * 2, outb = T * a * dv / t * 2;
			int inner = cp_comm == MT_CP_P2P ? 1 : cp, outer = 1;

			if (cp_comm == MT_CP_A2A_P2P) {
				inner = inner_a2a;
				outer = cp / inner;
			}
			if (cp_comm == MT_CP_P2P || (cp_comm == MT_CP_A2A_P2P && outer > 1)) {
				/* a ring over the CP ranks (or, after the inner a2a, over
				 * the outer groups): each step passes one chunk's K and V
				 * forward, K, V and their gradients backward, while the
				 * attention of the chunk in hand runs */
				int n = cp_comm == MT_CP_P2P ? cp : outer;
				int stride = cp_comm == MT_CP_P2P ? tp : tp * inner;
				double step_f = coll(x, MT_COLL_SEND_RECV, n, stride, kvb);
				double step_b = coll(x, MT_COLL_SEND_RECV, n, stride, 2 * kvb);

				comm_f += (n - 1) * step_f;
				comm_b += (n - 1) * step_b;
				exp_f += (n - 1) * fmax(0, step_f - attn_f / n);
				exp_b += (n - 1) * fmax(0, step_b - attn_b / n);
			}
			if (cp_comm == MT_CP_A2A || (cp_comm == MT_CP_A2A_P2P && inner > 1)) {
				int n = inner;
				double c1 = coll(x, MT_COLL_ALL_TO_ALL, n, tp, qkvb) +
					    coll(x, MT_COLL_ALL_TO_ALL, n, tp, outb);

				comm_f += c1;
				comm_b += c1;
				exp_f += c1;
				exp_b += c1;
			}
			if (cp_comm == MT_CP_ALL_GATHER) {
				double g = coll(x, MT_COLL_ALL_GATHER, cp, tp, kvb * cp);
				double r = coll(x, MT_COLL_REDUCE_SCATTER, cp, tp, kvb * cp);

				comm_f += g;
				comm_b += g + r;
				exp_f += g;
				exp_b += g + r;
			}
		}
		o->cp_comm[k] = comm_f + comm_b;
		o->cp_exposed[k] = exp_f + exp_b;
		slow += MT_COMM_SM_SLOWDOWN * (o->cp_comm[k] - o->cp_exposed[k]);

		/* ---- EP communication (5.3) */
		comm_f = 0;
		if (k == M && (ep > 1 || etp > 1)) {
			double Sep = MT_MOE_IMBALANCE * Tm * m->topk * h * 2;

			comm_f = 2 * coll(x, MT_COLL_ALL_TO_ALL, ep, etp, Sep) / MT_MOE_DISPATCH_EFFICIENCY;
			if (etp > 1)
				comm_f += coll(x, MT_COLL_ALL_GATHER, etp, 1, Sep * etp) +
					  coll(x, MT_COLL_REDUCE_SCATTER, etp, 1, Sep * etp);
		}
		o->ep_comm[k] = 2 * comm_f;
		o->ep_exposed[k] = 2 * comm_f;

		/* kernels issued per layer and micro-batch, forward + backward (5.8) */
		o->host_ops[k] = 40 + (tp > 1 ? 10 : 0) + (fp8_cast > 0 ? 12 : 0) + (cp > 1 ? 4 * cp : 0);
		if (k == M) /* router, permutations, a2a, and per local expert 2 GEMMs
			     * forward and 4 backward, plus their FP8 casts */
			o->host_ops[k] += 30 + (6 + (fp8_cast > 0 ? 6 : 0)) * m->experts / ep;
		/* the GPU idles between dependent kernels: one gap per kernel */
		slow += o->host_ops[k] * MT_KERNEL_GAP_US * 1e-6;
		o->fwd[k] = o->gemm_f[k] + o->attn_f[k] + o->elem_f[k] + slow / 3;
		o->bwd[k] = o->gemm_b[k] + o->attn_b[k] + o->elem_b[k] + 2 * slow / 3;
		o->fwd[k] += (o->tp_exposed[k] + o->cp_exposed[k] + o->ep_exposed[k]) * MT_COMM_FWD_SHARE;
		o->bwd[k] += (o->tp_exposed[k] + o->cp_exposed[k] + o->ep_exposed[k]) *
			     (1 - MT_COMM_FWD_SHARE);
		o->rc_selective[k] = o->attn_f[k];
		o->rc_full[k] = o->fwd[k];

		/* ---- activations (4.4): bytes per token, Korthikanti et al. terms;
		 * with FP8, Transformer Engine keeps the GEMM inputs in FP8 */
		act_sp = (4 * h + 2 * gin * h + (m->dropout > 0 ? 2 * h : 0)) / spd;
		if (m->mla) {
			double ql = m->q_lora_rank, kvl = m->kv_lora_rank;
			act_sp += 2 * gin * (ql + kvl + m->qk_rope_dim); /* down-proj outputs, replicated */
			act_tp = (2 * a * dqk + 2 * a * dqk + 2 * a * dv + gin * a * dv) / t;
		} else {
			act_tp = (2 * q_el + 4 * kv_el + gin * q_el) / t;
		}
		act_core = impl == MT_ATTN_UNFUSED
				   ? a * s * (2 + (m->attn_dropout > 0 ? 3 : 0)) / t
				   : 4 * a / t; /* flash: the log-sum-exp per head */
		if (k == L) {
			act_mlp = (2 * gm * m->ffn + gin * m->ffn) / t;
		} else {
			/* router scores, then per routed copy: probabilities and
			 * indices, the expert input, the activation input and the FC2
			 * input.  Stored activations add up over many layers and
			 * micro-batches, so the mean load applies, not the imbalance */
			double kk = m->topk, fe = m->moe_ffn;
			act_mlp = (8 * m->experts + kk * 12 + kk * etp * gin * h + kk * (2 * gm * fe + gin * fe)) /
				  spd;
			if (m->shared_ffn)
				act_mlp += (2 * gm * m->shared_ffn + gin * m->shared_ffn) / t;
		}
		o->act[k][MT_RC_NONE] = T * (act_sp + act_tp + act_core + act_mlp);
		o->act[k][MT_RC_SELECTIVE] = T * (act_sp + act_tp + act_mlp);
		o->act[k][MT_RC_FULL] = T * 2 * h / spd;
		o->act_layer_peak[k] = o->act[k][MT_RC_NONE];

		/* ---- parameters on this GPU */
		o->par_tp[k] = (double)mt_model_attn_tp_params(m) / t;
		o->par_rep[k] = (double)(mt_model_attn_params(m) - mt_model_attn_tp_params(m)) +
				(double)mt_model_norm_params(m);
		if (k == L) {
			o->par_tp[k] += (double)mt_model_dense_mlp_params(m) / t;
			o->par_fp8[k] = o->par_tp[k];
		} else {
			o->par_tp[k] += (double)mt_model_shared_params(m) / t;
			o->par_rep[k] += (double)mt_model_router_params(m);
			o->par_exp[k] = (double)m->experts * mt_model_expert_params(m) / ((double)ep * etp);
			o->par_fp8[k] = o->par_tp[k] + o->par_exp[k];
		}
		if (j->precision != MT_PREC_FP8)
			o->par_fp8[k] = 0;
	}

	/* ---- embedding and output layer (4.5) */
	o->par_emb = V * h / t + (m->learned_pos ? (double)m->max_pos * h : 0);
	o->emb_f = T * (2 * h / spd + 2 * h) / (x->hbm * MT_ELEM_EFFICIENCY);
	o->emb_b = 2 * o->emb_f;
	o->act_emb = T * (m->dropout > 0 ? h / spd : 0) + 8 * T;
	l = linear(x, MT_DT_BF16, T, V / t, h);
	{
		double ce_f = fused_ce ? 4 : 14, ce_b = fused_ce ? 2 : 10;
		double bw = x->hbm * MT_ELEM_EFFICIENCY, ln = 4 * h * T / spd / bw;

		o->out_f = l.f + ce_f * T * V / t / bw + ln;
		o->out_b = l.b + ce_b * T * V / t / bw + 2 * ln;
		o->flops_out_f = l.flops;
		if (tp > 1) {
			double S2 = T * h * 2;
			o->out_tp_comm = (sp ? coll(x, MT_COLL_ALL_GATHER, tp, 1, S2) * 2 +
						       coll(x, MT_COLL_REDUCE_SCATTER, tp, 1, S2)
					     : 2 * coll(x, MT_COLL_ALL_REDUCE, tp, 1, S2)) +
					 3 * coll(x, MT_COLL_ALL_REDUCE, tp, 1, T * 4);
			o->out_tp_exposed = o->out_tp_comm;
			o->out_f += MT_COMM_FWD_SHARE * o->out_tp_exposed;
			o->out_b += (1 - MT_COMM_FWD_SHARE) * o->out_tp_exposed;
		}
		o->act_out = T * 4 * h / spd + T * V / t * (fused_ce ? 2 : 6);
		o->logits_transient = T * V / t * (fused_ce ? 2 : 4);
	}
	o->host_ops_io = 40;

	/* ---- pipeline message, MoE buffers, transients */
	o->p2p_bytes = T * h * 2 / spd;
	if (m->experts) /* send and receive buffers and the permuted copy */
		o->moe_dispatch = 3 * MT_MOE_IMBALANCE * Tm * m->topk * etp * h * 2;
	o->transient = fmax(T * h * 2, T * gm * (m->experts ? fmax(m->ffn, m->shared_ffn) : m->ffn) / t * 2);
	if (tp_overlap && sp && tp > 1)
		o->transient += 3 * T * h * 2; /* userbuffers for overlapped GEMMs */
	o->valid = 1;
}
