/* SPDX-License-Identifier: MIT */
/* local: what Megatron-LM's own layers can run (local.h). */
#include "local.h"

#include "../perfmodel/cluster.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/model.h"
#include "../perfmodel/optim.h"

#define WHO "Megatron-LM's own layers (--transformer-impl local) cannot run it: "
#define D98 "Megatron-LM d98e8a6 "

/* The reasons, each with the check or the code that decides it. */
#define WHY_QUANT "their linears are torch.matmul in the input's dtype (" D98 \
	"megatron/core/tensor_parallel/layers.py:459), which Transformer Engine's " \
	"fp8_autocast, the FP8 and FP4 context (megatron/core/fp8_utils.py:864), does not " \
	"quantise: they stay BF16 GEMMs"
#define WHY_TP_OVERLAP "the overlap runs in Transformer Engine's userbuffers (" D98 \
	"megatron/training/initialize.py:194-207 raises without transformer_engine: Tensor " \
	"Parallel Communication/GEMM Overlap optimization needs 'yaml' and 'transformer_engine' " \
	"packages), and the local linears take no buffer (tensor_parallel/layers.py:973-974)"
#define WHY_GRAPHS "the per-layer graphs megatune times are Transformer Engine's " \
	"(--cuda-graph-impl transformer_engine: " D98 "megatron/core/transformer/cuda_graphs.py:2189 " \
	"asserts: CUDA Graphs are not supported without TE; the GPU campaign's run c3 stopped " \
	"there)"
#define WHY_EP_OVERLAP "the overlap splits the weight gradient out (--delay-wgrad-compute), and " \
	D98 "megatron/training/arguments.py:1903-1905 asserts: Delaying wgrad compute is only " \
	"supported with transformer_engine implementation"
#define WHY_RANK_BUDGET "the budget's fused experts are Transformer Engine's op fuser " \
	"(--use-transformer-engine-op-fuser), and the local spec's experts are a SequentialMLP " \
	"of local linears (" D98 "megatron/core/models/backends.py:133-142)"
#define WHY_OFFLOAD D98 "megatron/training/arguments.py:1935-1937 asserts: Fine-grained " \
	"activation offloading is only supported with transformer_engine implementation"
#define WHY_PREC_OPT "without Transformer Engine and Apex, as megatune times these layers, " \
	"Megatron-LM steps with torch.optim.AdamW (" D98 "megatron/core/optimizer/__init__.py:" \
	"24-35, 558-559), and the precision-aware optimizer's exp_avg_dtype (line 567) is no " \
	"argument of it"
#define WHY_OPT_OFFLOAD "the offload needs the precision-aware optimizer (" D98 \
	"megatron/training/arguments.py:1884-1887), which torch.optim.AdamW, the optimizer " \
	"without Transformer Engine and Apex, cannot be (optimizer/__init__.py:558-567)"
#define WHY_CP D98 "megatron/core/transformer/dot_product_attention.py:57-59 asserts: " \
	"Context parallelism is only supported by TEDotProductAttention"

static int refuse(struct mt_error *err, const char *what, const char *why)
{
	return mt_error_set(err, MT_EUSAGE, "%s: " WHO "%s", what, why);
}

/* A knob pinned on is refused; unpinned, it is pinned off. */
static int local_pin_off(int *pin, const char *what, const char *why, struct mt_error *err)
{
	if (*pin == 1)
		return refuse(err, what, why);
	*pin = 0;
	return MT_OK;
}

int mt_local_restrict(struct mt_job *j, struct mt_error *err)
{
	struct mt_pins *p = &j->pins;
	int rc;

	if (j->transformer_impl != MT_TI_LOCAL)
		return MT_OK;
	if (j->precision != MT_PREC_BF16)
		return refuse(err, j->precision == MT_PREC_FP8 ? "--precision fp8" : "--precision nvfp4",
			      WHY_QUANT);
	if (p->cp != MT_UNSET && p->cp > 1)
		return mt_error_set(err, MT_EUSAGE, "--cp %d: " WHO WHY_CP, p->cp);
	p->cp = 1;
	if (j->offload_modules)
		return refuse(err, "--offload-modules", WHY_OFFLOAD);
	if (j->opt_offload > 0)
		return refuse(err, "--optimizer-cpu-offload", WHY_OPT_OFFLOAD);
	if (j->graph_scope)
		return refuse(err, "--cuda-graph-scope", WHY_GRAPHS);
	if ((p->exp_avg != MT_UNSET && p->exp_avg != MT_OD_FP32) ||
	    (p->exp_avg_sq != MT_UNSET && p->exp_avg_sq != MT_OD_FP32) ||
	    (p->main_params != MT_UNSET && p->main_params != MT_OD_FP32))
		return refuse(err, "a dtype of the precision-aware optimizer (--exp-avg-dtype, "
			      "--exp-avg-sq-dtype, --main-params-dtype)", WHY_PREC_OPT);
	if ((rc = local_pin_off(&p->tp_overlap, "--tp-comm-overlap on", WHY_TP_OVERLAP, err)) ||
	    (rc = local_pin_off(&p->cuda_graph, "--cuda-graphs on", WHY_GRAPHS, err)) ||
	    (rc = local_pin_off(&p->ep_overlap, "--ep-overlap on", WHY_EP_OVERLAP, err)) ||
	    (rc = local_pin_off(&p->rank_budget, "--moe-rank-budget on", WHY_RANK_BUDGET, err)) ||
	    (rc = local_pin_off(&p->prec_opt, "--precision-aware-optimizer on", WHY_PREC_OPT, err)))
		return rc;
	j->attn_impl = MT_ATTN_UNFUSED;
	return MT_OK;
}

int mt_local_defaults(struct mt_job *j, struct mt_error *err)
{
	if (j->transformer_impl == MT_TI_LOCAL) {
		if (j->grad_accum_fusion == 1)
			return mt_error_set(err, MT_EUSAGE, "--grad-accum-fusion on with --transformer-impl "
					    "local: Megatron-LM's own layers fuse the accumulation with "
					    "Apex's fused_weight_gradient_mlp_cuda, and megatune times them "
					    "where Apex is not installed, where they raise without it "
					    "(Megatron-LM d98e8a6 megatron/core/tensor_parallel/layers.py:"
					    "1148-1157)");
		j->grad_accum_fusion = 0;
		if (j->attn_impl == MT_ATTN_FLASH)
			return mt_error_set(err, MT_EUSAGE, "--attention flash with --transformer-impl "
					    "local: Megatron-LM's own layers attend with "
					    "DotProductAttention, which materialises the scores (unfused; "
					    "Megatron-LM d98e8a6 megatron/core/models/backends.py:129-131, "
					    "and --attention-backend chooses among Transformer Engine's "
					    "kernels only)");
		j->attn_impl = MT_ATTN_UNFUSED;
		return MT_OK;
	}
	if (j->attn_impl < 0)
		j->attn_impl = MT_ATTN_FLASH;
	if (j->grad_accum_fusion < 0)
		j->grad_accum_fusion = 1;
	if (j->fusions_off)
		return mt_error_set(err, MT_EUSAGE, "--fusions-off needs --transformer-impl local: "
				    "megatune times the fusions turned off as the eager ops of "
				    "Megatron-LM's own layers (docs/MODEL.md 4.11); Transformer "
				    "Engine's layers are timed fused");
	return MT_OK;
}

int mt_fusion_applies(const struct mt_model *m, int attn_impl, int f)
{
	if (f == MT_FU_MASKED_SOFTMAX)
		return attn_impl == MT_ATTN_UNFUSED;
	if (f == MT_FU_ROPE)
		return !m->learned_pos && !m->no_pos;
	return f >= 0 && f < MT_FU_N;
}
