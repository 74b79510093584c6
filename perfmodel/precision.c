/* SPDX-License-Identifier: MIT */
/* precision: the recipe table (docs/MODEL.md 4.9). */
#include "precision.h"

#include "constants.h"

#include <stddef.h>
#include <stdio.h>

/* Transformer Engine's recipes as Megatron-LM d98e8a6 selects them
 * (megatron/core/transformer/transformer_config.py lines 587-692:
 * fp8_recipe tensorwise | delayed | mxfp8 | blockwise, fp4_recipe nvfp4) and
 * the Megatron-Bridge 067f987 recipes that set them
 * (src/megatron/bridge/training/mixed_precision.py lines 185-418).  Block
 * sizes and scale formats: DeepSeek-V3 technical report section 3.3.2
 * (1x128 activation tiles, 128x128 weight blocks, FP32 scales); the OCP
 * Microscaling Formats MX v1.0 specification (32-element blocks, E8M0
 * scales); NVIDIA's NVFP4 (16-element blocks, E4M3 scales and one FP32
 * scale per tensor from its amax).  Block-scaled recipes quantise each GEMM
 * input row-wise and column-wise (the blocks run along the reduction
 * dimension, which the backward GEMMs transpose): two layouts. */
static const struct mt_recipe_info recipes[MT_RECIPE_N] = {
	{ "bf16", "BF16", MT_DT_BF16, 2, 0, 0, 0, 0, 0, 0, { 1, 1 }, { 0, 0 }, "", "",
	  "bf16_mixed" },
	{ "fp8-delayed", "FP8 with delayed (amax-history) per-tensor scaling", MT_DT_FP8, 1, 0, 0,
	  4, 0, 1, 8.9, { 1, 1 }, { 0, 0 },
	  "FP8 tensor cores (compute capability 8.9 or newer: Ada, Hopper, Blackwell)",
	  "delayed", "bf16_with_fp8_delayed_scaling_mixed" },
	{ "fp8-tensorwise", "FP8 with current per-tensor scaling", MT_DT_FP8, 1, 0, 0, 4, 1, 1, 8.9,
	  { 1, 1 }, { 0, 0 },
	  "FP8 tensor cores (compute capability 8.9 or newer: Ada, Hopper, Blackwell)",
	  "tensorwise", "bf16_with_fp8_current_scaling_mixed" },
	{ "fp8-blockwise", "FP8 with 128x128 weight and 1x128 activation scales", MT_DT_FP8, 1, 128,
	  128 * 128, 4, 0, 2, 9.0, { MT_GEMM_RATE_BLOCKWISE_HOPPER, MT_GEMM_RATE_MXFP8 }, { 0, 1 },
	  "Hopper or newer (compute capability 9.0): Transformer Engine's block-scaled FP8 GEMMs",
	  "blockwise", "bf16_with_fp8_subchannel_scaling_mixed" },
	{ "mxfp8", "MXFP8: FP8 with an E8M0 scale per 32 elements", MT_DT_FP8, 1, 32, 32, 1, 0, 2,
	  10.0, { MT_GEMM_RATE_MXFP8, MT_GEMM_RATE_MXFP8 }, { 0, 0 },
	  "Blackwell (compute capability 10.0): MX block scaling is done by its tensor cores",
	  "mxfp8", "bf16_with_mxfp8_mixed" },
	{ "nvfp4", "NVFP4: E2M1 with an E4M3 scale per 16 elements and a per-tensor FP32 scale",
	  MT_DT_FP4, 0.5, 16, 16, 1, 1, 2, 10.0, { 1, 1 }, { 0, 0 },
	  "Blackwell (compute capability 10.0): FP4 tensor cores", "nvfp4",
	  "bf16_with_nvfp4_mixed" },
};

int mt_recipe_of(const struct mt_job *j)
{
	if (j->precision == MT_PREC_NVFP4)
		return MT_RECIPE_NVFP4;
	if (j->precision != MT_PREC_FP8)
		return MT_RECIPE_BF16;
	switch (j->fp8_recipe) {
	case MT_FP8_TENSORWISE: return MT_RECIPE_FP8_TENSORWISE;
	case MT_FP8_BLOCKWISE: return MT_RECIPE_FP8_BLOCKWISE;
	case MT_FP8_MXFP8: return MT_RECIPE_MXFP8;
	default: return MT_RECIPE_FP8_DELAYED;
	}
}

const struct mt_recipe_info *mt_recipe(int r)
{
	return &recipes[r >= 0 && r < MT_RECIPE_N ? r : 0];
}

int mt_prec_quantised(const struct mt_job *j)
{
	return j->precision == MT_PREC_FP8 || j->precision == MT_PREC_NVFP4;
}

/* scale bytes per element of one layout */
static double scale_share(const struct mt_recipe_info *ri, int block)
{
	return block > 0 ? ri->scale_bytes / block : 0;
}

double mt_recipe_cast_bytes(int r, double cc)
{
	const struct mt_recipe_info *ri = mt_recipe(r);
	/* Transformer Engine keeps one per-tensor FP8 copy for both GEMM layouts
	 * only where the tensor cores take a non-TN FP8 GEMM (compute
	 * capability 10 and up: nvte_is_non_tn_fp8_gemm_supported,
	 * transformer_engine.cpp); on Hopper the cast writes the transpose too */
	int layouts = ri->layouts == 1 && ri->act_block == 0 && ri->q_bytes == 1 && cc < 10
			      ? 2 : ri->layouts;

	if (r == MT_RECIPE_BF16)
		return 0;
	return 2.0 * (1 + ri->amax_pass) + layouts * (ri->q_bytes + scale_share(ri, ri->act_block));
}

double mt_recipe_norm_cast_bytes(int r, double cc)
{
	const struct mt_recipe_info *ri = mt_recipe(r);

	return mt_recipe_cast_bytes(r, cc) - (r == MT_RECIPE_FP8_TENSORWISE ? 2.0 * ri->amax_pass : 0);
}

double mt_recipe_gemm_rate(int r, double cc)
{
	return mt_recipe(r)->gemm_rate[cc >= 10];
}

int mt_recipe_gemm_extra(int r, double cc)
{
	return mt_recipe(r)->gemm_extra[cc >= 10];
}

double mt_recipe_saved_bytes(int r)
{
	const struct mt_recipe_info *ri = mt_recipe(r);

	return ri->q_bytes + scale_share(ri, ri->act_block);
}

double mt_recipe_weight_bytes(int r)
{
	const struct mt_recipe_info *ri = mt_recipe(r);

	if (r == MT_RECIPE_BF16)
		return 0;
	return ri->layouts * (ri->q_bytes + scale_share(ri, ri->wt_block));
}

/* Transformer Engine d0067d0 pytorch/module/linear.py:467-475 asks the
 * weight quantizer for column-wise usage whenever the input needs a
 * gradient, and a per-tensor FP8 tensor keeps that usage as a transposed
 * copy unless is_non_tn_fp8_gemm_supported() (pytorch/utils.py:658: compute
 * capability 10 and newer); the cached weight workspace keeps both across
 * the micro-batches.  Measured: Megatron-LM's CI MoE run on H100 with
 * --fp8-recipe tensorwise holds 657 MiB more between steps than its BF16
 * twin, 2 bytes a linear weight (docs/MODEL.md 4.9). */
double mt_recipe_weight_cache_bytes(int r, double cc)
{
	const struct mt_recipe_info *ri = mt_recipe(r);
	double b = mt_recipe_weight_bytes(r);

	if (ri->gemm_dtype == MT_DT_FP8 && ri->layouts == 1 && !ri->wt_block && cc < 10)
		b *= 2;
	return b;
}

int mt_param_gather_q(const struct mt_job *j, int dist_opt)
{
	if (!mt_prec_quantised(j) || !dist_opt)
		return 0;
	if (j->param_gather_q != MT_UNSET)
		return j->param_gather_q;
	/* optimizer CPU offload keeps FP8 parameter gathers to delayed scaling
	 * (Megatron-LM d98e8a6 megatron/training/arguments.py:1889) */
	return !(j->opt_offload > 0 && j->precision == MT_PREC_FP8 && j->fp8_recipe != MT_FP8_DELAYED);
}

double mt_param_ag_bytes(const struct mt_job *j, double params, double qparams)
{
	const struct mt_recipe_info *ri = mt_recipe(mt_recipe_of(j));

	if (!mt_param_gather_q(j, 1) || params <= 0)
		return 2;
	if (qparams > params)
		qparams = params;
	if (mt_param_ag_recast(j, 1) > 0) /* BF16 through the gradient buffer */
		return 2;
	return (2 * (params - qparams) + (ri->q_bytes + scale_share(ri, ri->wt_block)) * qparams) /
	       params;
}

/* Megatron-Core d98e8a6 megatron/core/distributed/param_and_grad_buffer.py:
 * a bucket of MXFP8 weights under the distributed optimizer shares one BF16
 * buffer for the parameter all-gather and the gradients (lines 1163-1179);
 * _post_param_sync (lines 301-335) casts what was gathered into the MXFP8
 * storage (copy_tensors_to_quantized_params) and zeroes the BF16 for the next
 * gradients; Bridge's bf16_with_mxfp8_mixed sets the reuse
 * (src/megatron/bridge/training/mixed_precision.py @ 067f987df0, line 265). */
double mt_param_ag_recast(const struct mt_job *j, int dist_opt)
{
	if (mt_recipe_of(j) != MT_RECIPE_MXFP8 || !mt_param_gather_q(j, dist_opt))
		return 0;
	return 2 + mt_recipe_weight_bytes(MT_RECIPE_MXFP8) + 2;
}

int mt_param_gather_applies(const struct mt_job *j, const struct mt_config *c)
{
	return c->dist_opt && !c->fsdp && c->dp * c->cp > 1 && mt_param_gather_q(j, 1);
}

int mt_mxfp8_gather_check(const struct mt_job *j, struct mt_error *err)
{
	if (j->mxfp8_ag_bf16 == 1 && j->param_gather_q != 1)
		return mt_error_set(err, MT_EINVAL,
				    "--reuse-grad-buf-for-mxfp8-param-ag without --fp8-param-gather: "
				    "Megatron-Core asserts \"Reuse grad buffer only when keeping params "
				    "in MXFP8\" (d98e8a6 megatron/core/distributed/"
				    "distributed_data_parallel_config.py:259-260); add "
				    "--fp8-param-gather or drop the flag");
	if (j->mxfp8_ag_bf16 == 0 && mt_recipe_of(j) == MT_RECIPE_MXFP8 && j->pins.dist_opt == 1 &&
	    (j->pins.fsdp == MT_UNSET || j->pins.fsdp == MT_FSDP_OFF) && j->param_gather_q == 1)
		return mt_error_set(err, MT_EINVAL,
				    "--fp8-recipe mxfp8 with --fp8-param-gather and the distributed "
				    "optimizer needs --reuse-grad-buf-for-mxfp8-param-ag: without it "
				    "Megatron-Core maps the MXFP8 weights into its parameter buffer, "
				    "which Transformer Engine refuses (\"replace_raw_data for MXFP8Tensor "
				    "is not supported yet\", d0067d0 transformer_engine/pytorch/tensor/"
				    "utils.py:83-84; Megatron-LM d98e8a6 arguments.py:1580-1582); add the "
				    "flag, as Bridge's MXFP8 recipe does");
	return MT_OK;
}

int mt_recipe_check(const struct mt_job *j, const struct mt_cluster *c, struct mt_error *err)
{
	int r = mt_recipe_of(j);
	const struct mt_recipe_info *ri = mt_recipe(r);
	const char *opt = j->precision == MT_PREC_NVFP4 ? "--precision nvfp4" : NULL;
	char ob[64];

	if (r == MT_RECIPE_BF16)
		return MT_OK;
	if (!opt) {
		snprintf(ob, sizeof(ob), "--fp8-recipe %s", ri->megatron);
		opt = ob;
	}
	if (c->compute_capability > 0 && c->compute_capability + 1e-9 < ri->min_cc)
		return mt_error_set(err, MT_EINVAL,
				    "%s: the %s GPUs of cluster '%s' (compute capability %.1f) cannot "
				    "run %s; it needs %s", opt, c->gpu_name, c->name,
				    c->compute_capability, ri->words, ri->needs);
	if (c->peak_tflops[ri->gemm_dtype] <= 0)
		return mt_error_set(err, MT_EINVAL,
				    "%s: the %s GPUs of cluster '%s' have no %s rate in their profile "
				    "(gpu.peak_tflops.%s); %s needs %s", opt, c->gpu_name, c->name,
				    mt_dtype_name(ri->gemm_dtype), mt_dtype_name(ri->gemm_dtype),
				    ri->words, ri->needs);
	return MT_OK;
}
