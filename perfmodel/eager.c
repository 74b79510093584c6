/* SPDX-License-Identifier: MIT */
/* eager: Megatron-LM's own layers as PyTorch eager kernels (docs/MODEL.md
 * 4.11).  The ops are those of Megatron-LM d98e8a6 with
 * --transformer-impl local (gpt_layer_specs.py get_gpt_layer_local_spec):
 * transformer_layer.py, attention.py (SelfAttention), dot_product_attention.py,
 * fusions/fused_softmax.py (forward_torch_softmax), rope_utils.py
 * (_apply_rotary_pos_emb_bshd), mlp.py (glu), fusions/fused_bias_dropout.py,
 * tensor_parallel/layers.py, with PyTorch's own kernels (torch.nn.RMSNorm,
 * repeat_interleave as expand and clone, autograd's backward of each op).
 * Arithmetic only. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "constants.h"
#include "eager.h"

static const char *const impl_names[MT_TI_N] = { "transformer_engine", "local" };
static const char *const fusion_names[MT_FU_N] = { "masked_softmax", "bias_activation",
						   "bias_dropout", "rope" };

/* The index of s among the n names, or -1. */
static int eager_find(const char *const *names, int n, const char *s)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

const char *mt_transformer_impl_name(int impl)
{
	return impl >= 0 && impl < MT_TI_N ? impl_names[impl] : "?";
}

int mt_transformer_impl_parse(const char *s)
{
	return eager_find(impl_names, MT_TI_N, s);
}

const char *mt_fusion_name(int f)
{
	return f >= 0 && f < MT_FU_N ? fusion_names[f] : "?";
}

int mt_fusion_parse(const char *s)
{
	return eager_find(fusion_names, MT_FU_N, s);
}

int mt_fusions_parse(const char *s, unsigned *bits)
{
	const char *p = s;
	unsigned b = 0;

	if (!strcmp(s, "all")) {
		*bits = (1u << MT_FU_N) - 1;
		return 0;
	}
	while (*p) {
		size_t l = strcspn(p, ",");
		char name[32];
		int f;

		snprintf(name, sizeof(name), "%.*s", (int)(l < sizeof(name) ? l : sizeof(name) - 1), p);
		if (!l || l >= sizeof(name) || (f = mt_fusion_parse(name)) < 0)
			return -1;
		b |= 1u << f;
		p += l;
		if (*p == ',' && !*++p)
			return -1;
	}
	if (!b)
		return -1;
	*bits = b;
	return 0;
}

/* How a kernel reaches HBM, and the share of the achieved bandwidth each
 * way reaches (constants.h, measured on one H100). */
enum kind {
	K_VEC,     /* contiguous operands: the vectorised element-wise kernels */
	K_BCAST,   /* an operand broadcast (the mask over heads, cos and sin over tokens) */
	K_STRIDED, /* a copy from a permuted or sliced view */
	K_CAT,     /* torch.cat of views */
	K_RED,     /* a sum over the tokens (a weight's gradient, a repeat's backward) */
	K_NORM,    /* a norm's forward */
	K_SMF,     /* softmax forward */
	K_SMB,     /* softmax backward */
	K_TINY,    /* a few thousand elements: the launch alone */
	K_N
};

static const double share[K_N] = {
	MT_EAGER_BW_VEC,	 MT_EAGER_BW_BCAST, MT_EAGER_BW_STRIDED,
	MT_EAGER_BW_CAT,	 MT_EAGER_BW_REDUCE, MT_EAGER_BW_NORM,
	MT_EAGER_BW_SOFTMAX_FWD, MT_EAGER_BW_SOFTMAX_BWD, 1,
};

enum { FWD, BWD };
enum { ELEM, ATTN, NONE }; /* where a kernel's GPU time is counted (NONE: by the caller) */

struct acc {
	const struct mt_eager_in *in;
	struct mt_eager_out *o;
};

/* One kernel of t seconds on the GPU: its host issue cost, and the GPU's
 * wait for the host where the kernel is shorter than that cost. */
static void kern(struct acc *a, int dir, int where, double t)
{
	const struct mt_eager_in *in = a->in;
	struct mt_eager_out *o = a->o;
	double c = dir == FWD ? in->host_f : in->host_b;
	double *n = dir == FWD ? &o->kern_f : &o->kern_b, *cpu = dir == FWD ? &o->cpu_f : &o->cpu_b;
	double *idle = dir == FWD ? &o->idle_f : &o->idle_b;

	*n += 1;
	*cpu += c;
	*idle += fmax(0, c - t - in->gap);
	if (where == ATTN)
		*(dir == FWD ? &o->attn_f : &o->attn_b) += t;
	else if (where == ELEM)
		*(dir == FWD ? &o->elem_f : &o->elem_b) += t;
}

/* A memory-bound kernel moving `bytes` (read and written) its way. */
static void eager_mem(struct acc *a, int dir, int where, int k, double bytes)
{
	kern(a, dir, where, k == K_TINY ? 0 : bytes / (a->in->hbm * share[k]));
}

/* A batched GEMM of the core attention (baddbmm, bmm): its FLOPs at the
 * dense peak or its traffic, whichever is longer (with a head dimension
 * of 64 or 128 the s x s operand it writes or reads bounds it). */
static void bgemm(struct acc *a, int dir, double flops, double bytes)
{
	kern(a, dir, ATTN, fmax(flops / a->in->peak, bytes / (a->in->hbm * MT_EAGER_BW_VEC)));
}

/* A weight's gradient added to its FP32 main gradient by a kernel of its own
 * (--no-gradient-accumulation-fusion): bf16 read, FP32 read and written.
 * The stage's time counts the traffic (docs/MODEL.md 4.3); the host issues
 * one kernel per weight. */
static void main_grad(struct acc *a, double params)
{
	if (!a->in->grad_accum_fusion)
		kern(a, BWD, NONE, params * 10 / (a->in->hbm * MT_EAGER_BW_VEC));
}

/* RoPE on q or k, X bytes per token (rope_utils.py _apply_rotary_pos_emb_bshd:
 * cos and sin of the frequencies and their casts, t * cos, rotate_half's
 * negation and cat, * sin, the sum, the cat with the empty t_pass); or one
 * kernel each way with the rope fusion. */
static void rope(struct acc *a, int dir, double X)
{
	const double T = a->in->T;
	int i;

	if (!(a->in->fusions_off >> MT_FU_ROPE & 1)) {
		eager_mem(a, dir, ELEM, K_VEC, T * 2 * X);
		return;
	}
	if (dir == FWD) {
		for (i = 0; i < 6; i++)
			eager_mem(a, FWD, ELEM, K_TINY, 0);
		eager_mem(a, FWD, ELEM, K_BCAST, T * 2 * X);   /* t * cos */
		eager_mem(a, FWD, ELEM, K_STRIDED, T * X);     /* -x2, from a half of t */
		eager_mem(a, FWD, ELEM, K_CAT, T * 2 * X);     /* cat(-x2, x1) */
		eager_mem(a, FWD, ELEM, K_BCAST, T * 2 * X);   /* * sin */
		eager_mem(a, FWD, ELEM, K_VEC, T * 3 * X);     /* the sum */
		eager_mem(a, FWD, ELEM, K_CAT, T * 2 * X);     /* cat(t, t_pass) */
		return;
	}
	eager_mem(a, BWD, ELEM, K_BCAST, T * 2 * X);   /* grad * sin */
	eager_mem(a, BWD, ELEM, K_STRIDED, T * X);     /* the negation's */
	eager_mem(a, BWD, ELEM, K_CAT, T * 2 * X);     /* chunk's: the halves joined */
	eager_mem(a, BWD, ELEM, K_BCAST, T * 2 * X);   /* grad * cos */
	eager_mem(a, BWD, ELEM, K_VEC, T * X);         /* t_pass's slice: zeros of t's size */
	eager_mem(a, BWD, ELEM, K_VEC, T * 3 * X);     /* t's three gradients added */
	eager_mem(a, BWD, ELEM, K_VEC, T * 3 * X);
}

/* Residual add with the hidden dropout (fused_bias_dropout.py): the add
 * alone without dropout; with it one fused kernel, or dropout then the add. */
static void bda(struct acc *a, int dir)
{
	const struct mt_eager_in *in = a->in;
	const double Ts = in->Tsp, h = in->h;
	const int fused = !(in->fusions_off >> MT_FU_BIAS_DROPOUT & 1);

	if (dir == FWD) {
		if (in->dropout <= 0) {
			eager_mem(a, FWD, ELEM, K_VEC, Ts * 6 * h);
		} else if (fused) {
			eager_mem(a, FWD, ELEM, K_VEC, Ts * 7 * h); /* and the mask */
		} else {
			eager_mem(a, FWD, ELEM, K_VEC, Ts * 5 * h);
			eager_mem(a, FWD, ELEM, K_VEC, Ts * 6 * h);
		}
	} else if (in->dropout > 0) {
		eager_mem(a, BWD, ELEM, K_VEC, Ts * 5 * h); /* grad * mask */
	}
}

/* The mask, the softmax (and the casts around it in FP32) and the
 * attention dropout over the E scores: Megatron-LM's fused masked softmax,
 * or PyTorch's ops (fused_softmax.py forward_torch_softmax). */
static void softmax(struct acc *a, int dir, double E)
{
	const struct mt_eager_in *in = a->in;
	const double mask = in->mbs * in->seq * in->seq, w = in->softmax_fp32 ? 4 : 2;
	const int eager = in->fusions_off >> MT_FU_MASKED_SOFTMAX & 1;

	if (dir == FWD) {
		if (!eager) {
			eager_mem(a, FWD, ATTN, K_SMF, 4 * E);
		} else {
			if (in->softmax_fp32)
				eager_mem(a, FWD, ATTN, K_VEC, 6 * E);         /* .float() */
			eager_mem(a, FWD, ATTN, K_BCAST, 2 * w * E + mask);    /* masked_fill_ */
			eager_mem(a, FWD, ATTN, K_SMF, 2 * w * E);
			if (in->softmax_fp32)
				eager_mem(a, FWD, ATTN, K_VEC, 6 * E);         /* .bfloat16() */
		}
		if (in->attn_dropout > 0)
			eager_mem(a, FWD, ATTN, K_VEC, 5 * E);
		return;
	}
	if (in->attn_dropout > 0)
		eager_mem(a, BWD, ATTN, K_VEC, 5 * E);
	if (!eager) {
		eager_mem(a, BWD, ATTN, K_SMB, 6 * E);
		return;
	}
	if (in->softmax_fp32)
		eager_mem(a, BWD, ATTN, K_VEC, 6 * E);
	eager_mem(a, BWD, ATTN, K_SMB, 3 * w * E);
	eager_mem(a, BWD, ATTN, K_BCAST, 2 * w * E + mask);
	if (in->softmax_fp32)
		eager_mem(a, BWD, ATTN, K_VEC, 6 * E);
}

/* The core attention (dot_product_attention.py): the keys and values
 * repeated to every query head (GQA), the scores written by baddbmm, the
 * softmax, the probabilities read by bmm, the context made contiguous. */
static void core(struct acc *a, int dir)
{
	const struct mt_eager_in *in = a->in;
	const double T = in->T, qel = in->ap * in->d, kvel = in->gp * in->d;
	const double E = in->mbs * in->ap * in->seq * in->seq, fl = 2 * E * in->d;
	const int gqa = in->ap > in->gp;

	if (dir == FWD) {
		if (gqa) {
			eager_mem(a, FWD, ELEM, K_STRIDED, T * (2 * kvel + 2 * qel));
			eager_mem(a, FWD, ELEM, K_STRIDED, T * (2 * kvel + 2 * qel));
		}
		bgemm(a, FWD, fl, 2 * E);
		softmax(a, FWD, E);
		bgemm(a, FWD, fl, 2 * E);
		eager_mem(a, FWD, ELEM, K_STRIDED, T * 4 * qel);
		return;
	}
	bgemm(a, BWD, fl, 2 * E); /* the probabilities' gradient */
	bgemm(a, BWD, fl, 2 * E); /* the values' */
	softmax(a, BWD, E);
	bgemm(a, BWD, fl, 2 * E); /* the queries' and keys' gradients, scaled */
	bgemm(a, BWD, fl, 2 * E);
	eager_mem(a, BWD, ELEM, K_VEC, T * 4 * qel);
	eager_mem(a, BWD, ELEM, K_VEC, T * 4 * qel);
	if (gqa) { /* expand's backward: a sum over the repeats */
		eager_mem(a, BWD, ELEM, K_RED, T * (2 * qel + 2 * kvel));
		eager_mem(a, BWD, ELEM, K_RED, T * (2 * qel + 2 * kvel));
	}
}

/* The MLP's activation (mlp.py): the fused bias-SwiGLU or -GeLU kernel, or
 * glu's chunk, silu, the add of glu_linear_offset and the product. */
static void act(struct acc *a, int dir)
{
	const struct mt_eager_in *in = a->in;
	const double T = in->T, f = in->f;
	const int eager = in->fusions_off >> MT_FU_BIAS_ACT & 1;

	if (!in->gated) {
		eager_mem(a, dir, ELEM, K_VEC, T * (dir == FWD ? 4 : 6) * f);
	} else if (!eager) {
		eager_mem(a, dir, ELEM, K_VEC, T * (dir == FWD ? 6 : 10) * f);
	} else if (dir == FWD) {
		eager_mem(a, FWD, ELEM, K_VEC, T * 4 * f); /* silu */
		eager_mem(a, FWD, ELEM, K_VEC, T * 4 * f); /* + glu_linear_offset */
		eager_mem(a, FWD, ELEM, K_VEC, T * 6 * f); /* the product */
	} else {
		eager_mem(a, BWD, ELEM, K_VEC, T * 6 * f); /* the product's two gradients */
		eager_mem(a, BWD, ELEM, K_VEC, T * 6 * f);
		eager_mem(a, BWD, ELEM, K_VEC, T * 6 * f); /* silu's */
		eager_mem(a, BWD, ELEM, K_CAT, T * 8 * f); /* chunk's: the halves joined */
	}
}

/* A norm's backward (torch.nn.RMSNorm): the input's gradient, the weight's
 * (a sum over the tokens) and its main-gradient add. */
static void norm_bwd(struct acc *a)
{
	const double Ts = a->in->Tsp, h = a->in->h;

	eager_mem(a, BWD, ELEM, K_VEC, Ts * 6 * h);
	eager_mem(a, BWD, ELEM, K_RED, Ts * 4 * h);
	main_grad(a, h);
}

/* The bytes each token keeps for the backward (docs/MODEL.md 4.11). */
static void activations(const struct mt_eager_in *in, struct mt_eager_out *o)
{
	const double qel = in->ap * in->d, kvel = in->gp * in->d, h = in->h, f = in->f;
	const double as = in->ap * in->seq;
	const int sm_eager = in->fusions_off >> MT_FU_MASKED_SOFTMAX & 1;

	/* the two norms' inputs and outputs (the QKV and FC1 inputs), the
	 * dropout masks */
	o->act_sp = 8 * h + (in->dropout > 0 ? 2 * h : 0);
	/* GQA: the rotated (or copied) query, the repeated keys and values, the
	 * projection's input; MHA: q and k are views of the QKV output, which the
	 * saved values keep whole, and RoPE's outputs beside it */
	if (in->ap > in->gp)
		o->act_tp = 8 * qel;
	else
		o->act_tp = 2 * (qel + 2 * kvel) + (in->rope ? 2 * qel + 2 * kvel : 0) + 2 * qel;
	/* the probabilities (softmax's output, bmm's input); in FP32 softmax
	 * keeps its FP32 output beside the bf16 copy; dropout its mask and
	 * output */
	o->act_core = as * (2 + (sm_eager && in->softmax_fp32 ? 4 : 0) +
			    (in->attn_dropout > 0 ? 3 : 0));
	/* FC1's output (silu keeps its view), silu's output, the offset sum,
	 * FC2's input; fused: FC1's output and FC2's input */
	if (!in->mlp)
		o->act_mlp = 0;
	else if (in->gated)
		o->act_mlp = (in->fusions_off >> MT_FU_BIAS_ACT & 1) ? 10 * f : 6 * f;
	else
		o->act_mlp = 4 * f;
	o->buffer = in->mbs * in->ap * in->seq * in->seq * 2;
}

void mt_eager_layer(const struct mt_eager_in *in, struct mt_eager_out *o)
{
	struct acc a = { in, o };
	const double T = in->T, Ts = in->Tsp, h = in->h;
	const double qel = in->ap * in->d, kvel = in->gp * in->d;

	memset(o, 0, sizeof(*o));
	/* ---- forward (transformer_layer.py _forward_attention, _forward_mlp) */
	eager_mem(&a, FWD, ELEM, K_NORM, Ts * 4 * h);          /* input norm */
	kern(&a, FWD, NONE, in->lin_f[0]);                /* QKV */
	if (in->ap > in->gp)                              /* query.reshape of the */
		eager_mem(&a, FWD, ELEM, K_STRIDED, T * 4 * qel); /* grouped layout: a copy */
	if (in->rope) {
		rope(&a, FWD, 2 * qel);
		rope(&a, FWD, 2 * kvel);
	}
	core(&a, FWD);
	kern(&a, FWD, NONE, in->lin_f[1]);                /* projection */
	bda(&a, FWD);
	eager_mem(&a, FWD, ELEM, K_NORM, Ts * 4 * h);          /* pre-MLP norm */
	if (in->mlp) {
		kern(&a, FWD, NONE, in->lin_f[2]);
		act(&a, FWD);
		kern(&a, FWD, NONE, in->lin_f[3]);
	}
	bda(&a, FWD);
	/* ---- backward, in the order autograd runs it; each linear's data and
	 * weight gradients, then its main-gradient add */
	bda(&a, BWD);
	if (in->mlp) {
		kern(&a, BWD, NONE, in->lin_b[3] / 2);
		kern(&a, BWD, NONE, in->lin_b[3] / 2);
		main_grad(&a, in->lin_par[3]);
		act(&a, BWD);
		kern(&a, BWD, NONE, in->lin_b[2] / 2);
		kern(&a, BWD, NONE, in->lin_b[2] / 2);
		main_grad(&a, in->lin_par[2]);
	}
	norm_bwd(&a);
	eager_mem(&a, BWD, ELEM, K_VEC, Ts * 6 * h);           /* the residual's two gradients */
	bda(&a, BWD);
	kern(&a, BWD, NONE, in->lin_b[1] / 2);
	kern(&a, BWD, NONE, in->lin_b[1] / 2);
	main_grad(&a, in->lin_par[1]);
	core(&a, BWD);
	if (in->rope) {
		rope(&a, BWD, 2 * qel);
		rope(&a, BWD, 2 * kvel);
	}
	eager_mem(&a, BWD, ELEM, K_CAT, T * 4 * (qel + 2 * kvel)); /* split's: q, k, v joined */
	kern(&a, BWD, NONE, in->lin_b[0] / 2);
	kern(&a, BWD, NONE, in->lin_b[0] / 2);
	main_grad(&a, in->lin_par[0]);
	norm_bwd(&a);
	eager_mem(&a, BWD, ELEM, K_VEC, Ts * 6 * h);           /* the residual's two gradients */
	activations(in, o);
}
