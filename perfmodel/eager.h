/* SPDX-License-Identifier: MIT */
/* eager: Megatron-LM's own layers (--transformer-impl local) as the PyTorch
 * eager ops they run, one kernel at a time (docs/MODEL.md 4.11).
 *
 * Each op of a layer's forward and backward is a kernel with its HBM traffic
 * (bytes read and written) and its kind of access, which sets the share of
 * the profile's achieved bandwidth it reaches (measured per kind on one H100,
 * constants.h MT_EAGER_BW_*); the batched GEMMs of the core attention are
 * timed by the larger of their FLOPs at the dense peak and their traffic.
 * The host issues every kernel (MT_EAGER_HOST_FWD_US, _BWD_US each); a
 * kernel shorter on the GPU than its issue cost leaves the GPU idle for the
 * difference.  The fusions a job turns off (--no-*-fusion) pick the eager
 * ops instead of the fused kernel.
 *
 * Arithmetic only: the caller (costs.c) gives the shapes, the bandwidth and
 * the GEMM times of the layer's linears; nothing is looked up or allocated.
 */
#ifndef MT_EAGER_H
#define MT_EAGER_H

/* The transformer implementation of a job (mt_job.transformer_impl). */
enum mt_transformer_impl {
	MT_TI_TE,    /* Transformer Engine (Megatron-LM's default) */
	MT_TI_LOCAL, /* Megatron-LM's own layers (--transformer-impl local) */
	MT_TI_N
};

/* The fusions Megatron-LM makes by default that a job may turn off, as bits
 * of mt_job.fusions_off. */
enum mt_fusion {
	MT_FU_MASKED_SOFTMAX, /* --no-masked-softmax-fusion */
	MT_FU_BIAS_ACT,       /* --no-bias-swiglu-fusion, --no-bias-gelu-fusion */
	MT_FU_BIAS_DROPOUT,   /* --no-bias-dropout-fusion */
	MT_FU_ROPE,           /* --no-rope-fusion */
	MT_FU_N
};

/* "local", "transformer_engine"; the implementation named by s, or -1. */
const char *mt_transformer_impl_name(int impl);
int mt_transformer_impl_parse(const char *s);

/* "masked_softmax", "bias_activation", "bias_dropout", "rope"; the fusion
 * named by s, or -1. */
const char *mt_fusion_name(int f);
int mt_fusion_parse(const char *s);

/* A list of fusions "F,F..." (names as above), or "all", into *bits (bits of
 * enum mt_fusion, as mt_job.fusions_off holds them); -1, *bits untouched, for
 * an unknown or empty name, or no fusion at all. */
int mt_fusions_parse(const char *s, unsigned *bits);

/* One layer's shapes on one GPU for one micro-batch. */
struct mt_eager_in {
	double T;            /* tokens in the TP region (micro-batch x sequence) */
	double Tsp;          /* tokens in the sequence-parallel region (T, or T / TP) */
	double mbs, seq;     /* micro-batch and sequence */
	double ap, gp, d;    /* query heads and KV heads on this GPU, head dimension */
	double h, f;         /* hidden; FFN width on this GPU */
	int gated;           /* gated MLP (SwiGLU) */
	int rope;            /* rotary position embedding on q and k */
	int mlp;             /* the dense MLP's activation (0: a MoE layer: attention only) */
	double dropout, attn_dropout;
	unsigned fusions_off; /* bits of enum mt_fusion */
	int softmax_fp32;    /* --attention-softmax-in-fp32 */
	int grad_accum_fusion; /* 0: a main-gradient add per weight and micro-batch */
	double hbm;          /* achieved HBM bandwidth, B/s */
	double peak;         /* dense BF16 FLOP/s */
	double gap;          /* idle GPU time between two dependent kernels, s */
	double host_f, host_b; /* host time to issue one kernel, forward and backward, s */
	/* the linears: QKV, projection, FC1, FC2 (FC only with mlp): GEMM time
	 * forward, backward (data and weight gradient), and weight elements */
	double lin_f[4], lin_b[4], lin_par[4];
};

/* What the layer costs, per micro-batch. */
struct mt_eager_out {
	double attn_f, attn_b; /* the core attention: batched GEMMs, mask, softmax (s) */
	double elem_f, elem_b; /* every other element-wise kernel (s) */
	double kern_f, kern_b; /* kernels issued, the linears' GEMMs included */
	double cpu_f, cpu_b;   /* host time to issue them (s) */
	double idle_f, idle_b; /* GPU idle waiting for the host (s) */
	/* activation bytes per token kept for the backward: the sequence-parallel
	 * region (over Tsp), the TP region, the core attention, the MLP */
	double act_sp, act_tp, act_core, act_mlp;
	double buffer;         /* bytes of the persistent score buffer baddbmm reads */
};

void mt_eager_layer(const struct mt_eager_in *in, struct mt_eager_out *out);

#endif
