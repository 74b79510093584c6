/* SPDX-License-Identifier: MIT */
/* precision: the table of low-precision recipes (docs/MODEL.md 4.9): for each
 * of BF16, FP8 delayed, FP8 tensorwise (current scaling), FP8 blockwise
 * (128x128 weight, 1x128 activation blocks), MXFP8 (1x32 blocks) and NVFP4
 * (16-element blocks), the GEMM curve it runs on, the bytes a cast moves per
 * element, the quantised weight copies, the GPU it needs and how Megatron-LM
 * and Megatron-Bridge name it.  Read-only data and arithmetic: no allocation.
 */
#ifndef MT_PRECISION_H
#define MT_PRECISION_H

#include "cluster.h"
#include "config.h"

enum mt_recipe {
	MT_RECIPE_BF16,
	MT_RECIPE_FP8_DELAYED,
	MT_RECIPE_FP8_TENSORWISE,
	MT_RECIPE_FP8_BLOCKWISE,
	MT_RECIPE_MXFP8,
	MT_RECIPE_NVFP4,
	MT_RECIPE_N
};

struct mt_recipe_info {
	const char *name;         /* "fp8-blockwise" */
	const char *words;        /* "FP8 with 128x128 weight / 1x128 activation scales" */
	int gemm_dtype;           /* the profile curve its GEMMs run on (enum mt_dtype) */
	double q_bytes;           /* bytes of one quantised element */
	int act_block;            /* activation scale block (elements); 0 per tensor */
	int wt_block;             /* weight scale block (elements); 0 per tensor */
	double scale_bytes;       /* bytes of one scale factor */
	int amax_pass;            /* the cast reads its input once more for the amax */
	int layouts;              /* quantised copies a cast writes (row- and column-wise) */
	double min_cc;            /* compute capability it needs */
	double gemm_rate[2];      /* its GEMMs' rate over a per-tensor FP8 GEMM of the same
				   * dtype curve, on Hopper and on Blackwell (cc >= 10):
				   * block-scaled GEMMs are slower (docs/MODEL.md 4.9) */
	int gemm_extra[2];        /* kernels per quantised GEMM input beside the cast, Hopper
				   * and Blackwell: block-wise FP8 on Blackwell runs as MXFP8
				   * after a scale conversion */
	const char *needs;        /* what that is, in words */
	const char *megatron;     /* the value of --fp8-recipe / --fp4-recipe */
	const char *bridge;       /* Megatron-Bridge's mixed_precision recipe name */
};

/* The recipe of a job (its precision and FP8 recipe). */
int mt_recipe_of(const struct mt_job *j);
const struct mt_recipe_info *mt_recipe(int r);

/* 1 when the job's GEMMs take quantised inputs (FP8 or NVFP4). */
int mt_prec_quantised(const struct mt_job *j);

/* Bytes of HBM traffic to quantise one BF16 element for a GEMM on a GPU of
 * compute capability cc: read it (twice with an amax pass), write each layout
 * and its share of the scales; a per-tensor recipe below compute capability
 * 10 writes a transposed copy besides (Hopper's FP8 GEMMs take only the TN
 * layout).  0 for BF16. */
double mt_recipe_cast_bytes(int r, double cc);

/* The same for a GEMM input that a norm feeds (Transformer Engine's
 * LayerNormLinear): per-tensor current scaling takes the amax in the norm
 * kernel, so its cast reads the input once. */
double mt_recipe_norm_cast_bytes(int r, double cc);

/* The rate of the recipe's GEMMs over the profile's curve of its dtype on a
 * GPU of compute capability cc (1 for BF16 and per-tensor FP8). */
double mt_recipe_gemm_rate(int r, double cc);

/* Kernels per quantised GEMM input beside the cast on a GPU of compute
 * capability cc. */
int mt_recipe_gemm_extra(int r, double cc);

/* Bytes per element of a GEMM input saved for the backward (activations). */
double mt_recipe_saved_bytes(int r);

/* Bytes per weight element of the quantised weight copies kept beside the
 * BF16 weights (Transformer Engine's weight cache); with param_gather the
 * BF16 copy is gone and these are the weights. */
double mt_recipe_weight_bytes(int r);

/* The same on a GPU of compute capability cc, as the weight cache holds
 * them: per-tensor FP8 keeps a transposed copy for the data gradient where
 * FP8 GEMMs take only the TN layout (before compute capability 10;
 * docs/MODEL.md 4.9). */
double mt_recipe_weight_cache_bytes(int r, double cc);

/* 1 when the job keeps and all-gathers its weights quantised
 * (--fp8-param-gather / --fp4-param-gather): the pin, else on with the
 * distributed optimizer as the Bridge recipes set it (off with optimizer CPU
 * offload and an FP8 recipe other than delayed, which Megatron-LM rejects). */
int mt_param_gather_q(const struct mt_job *j, int dist_opt);

/* Bytes per parameter of the distributed optimizer's all-gather when
 * `qparams` of `params` are quantised linear-layer weights: 2 (BF16), or
 * with mt_param_gather_q() the quantised ones at their format's bytes and
 * scales; MXFP8 gathers them in BF16 through the gradient buffer
 * (mt_param_ag_recast). */
double mt_param_ag_bytes(const struct mt_job *j, double params, double qparams);

/* HBM bytes per quantised parameter that each rank moves after the
 * parameter all-gather to cast what it gathered into the recipe's storage:
 * with MXFP8 and mt_param_gather_q(), the distributed optimizer always
 * gathers in BF16 through the gradient buffer, and Megatron-LM runs it only
 * with --reuse-grad-buf-for-mxfp8-param-ag (which Bridge's MXFP8 recipe sets;
 * mt_mxfp8_gather_check): every gathered weight is read (2), written in both
 * layouts with their scales, and its BF16 copy zeroed (2); 0 otherwise
 * (docs/MODEL.md 4.9).  `dist_opt`: the distributed optimizer gathers the
 * weights; pass 0 under Megatron-FSDP, which has a gather of its own
 * (Megatron-LM d98e8a6 megatron/training/arguments.py:1137). */
double mt_param_ag_recast(const struct mt_job *j, int dist_opt);

/* Whether the distributed optimizer all-gathers the weights of `c` in their
 * quantised format: mt_param_gather_q(), the distributed optimizer without
 * Megatron-FSDP, and more than one rank to gather over (DP x CP), as the
 * fp8-param-gather rule prints --fp8-param-gather. */
int mt_param_gather_applies(const struct mt_job *j, const struct mt_config *c);

/* A Megatron-LM job's MXFP8 parameter gather as Megatron-LM runs it:
 * --reuse-grad-buf-for-mxfp8-param-ag needs --fp8-param-gather (Megatron-Core
 * d98e8a6 distributed_data_parallel_config.py:259-260 asserts it), and MXFP8
 * weights gathered by the distributed optimizer need the reuse (without it
 * the weights are remapped into the parameter buffer, which Transformer
 * Engine refuses for MXFP8: param_and_grad_buffer.py:1262-1290, TE d0067d0
 * transformer_engine/pytorch/tensor/utils.py:83-84).  Read from a job's
 * flags (mxfp8_ag_bf16 and the pins of the distributed optimizer and FSDP);
 * nothing to check while the reuse is unset.  MT_OK, or MT_EINVAL naming the
 * flag to add or drop. */
int mt_mxfp8_gather_check(const struct mt_job *j, struct mt_error *err);

/* Check that the cluster's GPU runs the job's recipe and that the profile
 * has the GEMM rate it needs.  MT_OK, or MT_EINVAL with a message naming
 * the option, the GPU and what the recipe needs. */
int mt_recipe_check(const struct mt_job *j, const struct mt_cluster *c, struct mt_error *err);

#endif
