/* SPDX-License-Identifier: MIT */
/* flags: Megatron-LM arguments (the Megatron-Bridge overrides are job/overrides.c), the
 * lists of items and their rendering. */
#include "flags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/shell.h"
#include "flags_common.h"
#include "flagtable.h"
#include "knobs.h"
#include "local.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/graphs.h"
#include "../perfmodel/host.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/precision.h"
#include "../perfmodel/recompute.h"
#include "../perfmodel/layout.h"

/* The MoE layers as Megatron's --moe-layer-freq pattern: the shortest period
 * of is_moe, run-length coded, e.g. "([0]*3+[1]*58)" or "([1]*1+[0]*1)*24"
 * (arguments.py moe_freq_type evaluates it as a Python list expression).
 * Returns 0 when every layer is MoE (the default, 1), -1 when the pattern
 * does not fit in cap. */
static int moe_pattern(const struct mt_model *m, char *buf, size_t cap)
{
	struct sbuf sb = SBUF_INIT;
	int p, i, run, rc = -1;

	if (m->moe_layers == m->layers)
		return 0;
	for (p = 1; p < m->layers; p++) {
		if (m->layers % p)
			continue;
		for (i = p; i < m->layers && m->is_moe[i] == m->is_moe[i - p]; i++)
			;
		if (i == m->layers)
			break;
	}
	sbuf_adds(&sb, "(");
	for (i = 0; i < p; i += run) {
		for (run = 1; i + run < p && m->is_moe[i + run] == m->is_moe[i]; run++)
			;
		sbuf_addf(&sb, "%s[%d]*%d", i ? "+" : "", m->is_moe[i] ? 1 : 0, run);
	}
	sbuf_adds(&sb, ")");
	if (p < m->layers)
		sbuf_addf(&sb, "*%d", m->layers / p);
	if (!sb.failed && sb.len < cap) {
		snprintf(buf, cap, "%s", sb.buf);
		rc = 1;
	}
	sbuf_release(&sb);
	return rc;
}

/* Mixture of experts: the routed and shared experts, where they are, and the
 * aux-loss-free expert bias, which TransformerConfig accepts only with the
 * sigmoid or sqrtsoftplus score function (transformer_config.py @ d98e8a64dd,
 * lines 2617-2625).  --moe-grouped-gemm is the set rule moe-grouped-gemm's
 * (rules/defs/moe.rules): a kernel choice, not part of the model. */
static int moe_args(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n)
{
	char pat[sizeof(o->val)];

	n = flags_add(o, n, "num-experts", "%lld", m->experts);
	n = flags_add(o, n, "moe-router-topk", "%lld", m->topk);
	n = flags_add(o, n, "moe-ffn-hidden-size", "%lld", m->moe_ffn);
	if (m->shared_ffn > 0)
		n = flags_add(o, n, "moe-shared-expert-intermediate-size", "%lld", m->shared_ffn);
	if (moe_pattern(m, pat, sizeof(pat)) > 0)
		n = adds(o, n, "moe-layer-freq", pat);
	if (m->shared_gate)
		n = flags_add(o, n, "moe-shared-expert-gate", NULL, 0);
	/* how scores become weights (moe_utils.py topk_routing_with_score_function) */
	if (m->router_sigmoid)
		n = adds(o, n, "moe-router-score-function", "sigmoid");
	else if (m->router_pre_softmax)
		n = flags_add(o, n, "moe-router-pre-softmax", NULL, 0);
	if (m->router_bias)
		n = flags_add(o, n, "moe-router-enable-expert-bias", NULL, 0);
	if (m->router_scale > 0 && m->router_scale != 1)
		n = addg(o, n, "moe-router-topk-scaling-factor", m->router_scale);
	if (m->router_groups > 1) {
		n = flags_add(o, n, "moe-router-num-groups", "%lld", m->router_groups);
		n = flags_add(o, n, "moe-router-group-topk", "%lld", m->router_group_topk);
	}
	/* the load-balancing loss the model was trained with: Megatron-LM's
	 * moe_aux_loss_coeff defaults to 0.0 (transformer_config.py @ d98e8a64dd,
	 * line 875), which would train without one while megatune times the
	 * aux-loss balance; a config that states none gets 1e-2, the coefficient
	 * of Megatron-LM's Mixtral example, or with the aux-loss-free expert bias
	 * DeepSeek-V3's complementary sequence-wise loss at 1e-4 (DeepSeek-V3
	 * technical report, arXiv:2412.19437, section 2.1.2).  Forced balance
	 * needs none. */
	if (j->moe_balance != MT_BAL_FORCED) {
		int seq = m->seq_aux || (m->router_bias && m->aux_coef < 0);

		n = adds(o, n, "moe-router-load-balancing-type", seq ? "seq_aux_loss" : "aux_loss");
		n = addg(o, n, "moe-aux-loss-coeff", m->aux_coef >= 0 ? m->aux_coef :
			 m->router_bias ? 1e-4 : 1e-2);
	}
	return n;
}

/* RoPE as the model has it: the base (Megatron-LM's --rotary-base is an int,
 * default 10000), Llama 3.x scaling (--use-rope-scaling, factor), and YaRN:
 * with multi-latent attention --rope-type yarn and MLATransformerConfig's
 * rotary_scaling_factor, mscale, mscale_all_dim (arguments.py @ d98e8a64dd
 * lines 2906 and 3558-3563; its beta_fast, beta_slow and original context
 * have no flag, mt_model_unexpressed() names a config that differs), and
 * without it --position-embedding-type yarn with the --yarn-* flags
 * (core_v0.18.0 and core_v0.19.0; training/argument_utils.py maps them). */

static int rope_args(const struct mt_model *m, struct mt_kv *o, int n)
{
	char text[sizeof(o->val)];

	if (m->learned_pos || m->no_pos)
		return n;
	if (m->rope_base > 0)
		n = flags_add(o, n, "rotary-base", "%lld", (long long)(m->rope_base + 0.5));
	if (m->rope_scaling == MT_ROPE_LLAMA3) {
		n = flags_add(o, n, "use-rope-scaling", NULL, 0);
		n = addg(o, n, "rope-scaling-factor", m->rope_factor > 0 ? m->rope_factor : 8);
	} else if (m->rope_scaling == MT_ROPE_YARN) {
		if (m->mla)
			n = adds(o, n, "rope-type", "yarn");
		n = addg(o, n, "rotary-scaling-factor", m->rope_factor > 0 ? m->rope_factor : 1);
		if (!m->mla) {
			n = flags_add(o, n, "yarn-original-max-position-embeddings", "%lld",
				m->rope_orig_max > 0 ? m->rope_orig_max : 4096);
			n = addg(o, n, "yarn-beta-fast", m->yarn_beta_fast > 0 ? m->yarn_beta_fast : 32);
			n = addg(o, n, "yarn-beta-slow", m->yarn_beta_slow > 0 ? m->yarn_beta_slow : 1);
		}
		n = addg(o, n, "mscale", m->yarn_mscale > 0 ? m->yarn_mscale : 1);
		n = addg(o, n, "mscale-all-dim", m->yarn_mscale_all_dim);
		if (m->mla && ((m->rope_orig_max > 0 && m->rope_orig_max != 4096) ||
			       (m->yarn_beta_fast > 0 && m->yarn_beta_fast != 32) ||
			       (m->yarn_beta_slow > 0 && m->yarn_beta_slow != 1))) {
			snprintf(text, sizeof(text), "YaRN: the config's original context %d, beta_fast "
				 "%g, beta_slow %g have no Megatron-LM flag with multi-latent "
				 "attention; MLATransformerConfig's defaults (4096, 32, 1) apply",
				 m->rope_orig_max, m->yarn_beta_fast, m->yarn_beta_slow);
			n = mt_kv_note(o, n, "rope", text);
		}
	} else if (m->rope_scaling == MT_ROPE_LINEAR && m->rope_factor == floor(m->rope_factor)) {
		/* linear position interpolation: an int in Megatron-LM (arguments.py line 2422) */
		n = flags_add(o, n, "rotary-seq-len-interpolation-factor", "%lld", (long long)m->rope_factor);
	} else if (m->rope_scaling == MT_ROPE_LINEAR || m->rope_scaling == MT_ROPE_OTHER) {
		snprintf(text, sizeof(text), "RoPE scaling \"%s\" (factor %g) has no Megatron-LM "
			 "flag: these flags train with unscaled RoPE", m->rope_type, m->rope_factor);
		n = mt_kv_note(o, n, "rope", text);
	}
	return n;
}

/* Token dispatch and the EP overlaps (docs/MODEL.md 5.3): the dispatcher
 * (--moe-token-dispatcher-type, transformer_config.py @ d98e8a64dd), the
 * flex backend, and either the 1F1B EP overlap with its split weight
 * gradient (transformer_config.py lines 3002-3078) or, when there are shared
 * experts and no 1F1B overlap, --moe-shared-expert-overlap (the two are
 * exclusive: line 3039). */
static int dispatch_args(const struct mt_job *j, const struct mt_config *c, struct mt_kv *o, int n)
{
	int d = dispatcher_of(j, c);

	n = adds(o, n, KF(DISPATCHER), mt_dispatcher_name(d));
	if (d == MT_DISPATCH_FLEX)
		n = adds(o, n, "moe-flex-dispatcher-backend", mt_flex_backend_name(c->flex_backend));
	/* the rank budget: HybridEP's receive size fixed on the host, for the
	 * TE op fuser's experts (transformer_config.py@core_v0.18.0:1515; at
	 * d98e8a6 the fused experts also want --moe-use-grouped-tensor, which
	 * no release has yet) */
	if (d == MT_DISPATCH_FLEX && c->rank_budget) {
		n = addg(o, n, KF(RANK_BUDGET), j->moe_rank_budget);
		n = flags_add(o, n, "use-transformer-engine-op-fuser", NULL, 0);
		/* the fused experts are TE GroupedLinear ones (experts.py@core_v0.18.0:338) */
		n = flags_add(o, n, "moe-grouped-gemm", NULL, 0);
		n = mt_kv_note(o, n, "rank-budget", "the rank budget's fused experts need Transformer "
			       "Engine 2.14 or newer (experts.py@core_v0.18.0:326)");
	}
	if (c->ep_overlap) {
		n = flags_add(o, n, KF(EP_OVERLAP), NULL, 0);
		n = flags_add(o, n, "delay-wgrad-compute", NULL, 0);
	} else if (c->shared_overlap) {
		n = flags_add(o, n, "moe-shared-expert-overlap", NULL, 0);
	}
	/* the router's balance (docs/MODEL.md 5.3) */
	if (j->moe_balance == MT_BAL_FORCED)
		n = flags_add(o, n, "moe-router-force-load-balancing", NULL, 0);
	else if (j->moe_balance == MT_BAL_DROP) { /* padded: no host wait (5.8) */
		n = addg(o, n, "moe-expert-capacity-factor", j->moe_capacity);
		n = flags_add(o, n, "moe-pad-expert-input-to-capacity", NULL, 0);
	}
	return n;
}

/* The model's own flags (Megatron-LM megatron/training/arguments.py and the
 * TransformerConfig fields it turns into flags, @ d98e8a64dd): shape,
 * attention, position embedding, MLP, norms, biases, vocabulary (a
 * NullTokenizer of the model's size, as Megatron's mock-data benchmarks do),
 * experts, multi-latent attention and MTP.  validate_args asserts
 * max_position_embeddings >= seq_length (arguments.py line 1354): a longer
 * RoPE sequence is a context extension, so the larger of the two is given. */
int mt_flags_model(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n)
{
	int maxpos = m->max_pos > j->seq ? m->max_pos : (int)j->seq;

	n = flags_add(o, n, "num-layers", "%lld", m->layers);
	n = flags_add(o, n, "hidden-size", "%lld", m->hidden);
	/* every MLP a MoE layer (Mixtral): no dense width; the expert width
	 * stands in, as Megatron-LM's examples/mixtral/train_mixtral_8x7b_distributed.sh
	 * gives it (d98e8a6, line 34) */
	n = flags_add(o, n, "ffn-hidden-size", "%lld", m->ffn > 0 ? m->ffn : m->moe_ffn);
	n = flags_add(o, n, "num-attention-heads", "%lld", m->heads);
	if (m->mla) {
		n = flags_add(o, n, "multi-latent-attention", NULL, 0);
		if (m->q_lora_rank > 0)
			n = flags_add(o, n, "q-lora-rank", "%lld", m->q_lora_rank);
		n = flags_add(o, n, "kv-lora-rank", "%lld", m->kv_lora_rank);
		n = flags_add(o, n, "qk-head-dim", "%lld", m->qk_nope_dim);
		n = flags_add(o, n, "qk-pos-emb-head-dim", "%lld", m->qk_rope_dim);
		n = flags_add(o, n, "v-head-dim", "%lld", m->v_head_dim);
	} else {
		if (m->kv_heads != m->heads) {
			n = flags_add(o, n, "group-query-attention", NULL, 0);
			n = flags_add(o, n, "num-query-groups", "%lld", m->kv_heads);
		}
		/* without --kv-channels, validate_args asserts that the heads
		 * divide the hidden size (arguments.py @ d98e8a64dd, line 1332) */
		if (m->head_dim * m->heads != m->hidden)
			n = flags_add(o, n, "kv-channels", "%lld", m->head_dim);
	}
	n = flags_add(o, n, "seq-length", "%lld", j->seq);
	n = flags_add(o, n, "max-position-embeddings", "%lld", maxpos);
	n = adds(o, n, "position-embedding-type",
		 m->learned_pos ? "learned_absolute" : m->no_pos ? "none" :
		 m->rope_scaling == MT_ROPE_YARN && !m->mla ? "yarn" : "rope");
	n = rope_args(m, o, n);
	n = adds(o, n, "normalization", m->norm == MT_NORM_RMS ? "RMSNorm" : "LayerNorm");
	if (m->norm_eps > 0)
		n = addg(o, n, "norm-epsilon", m->norm_eps);
	if (m->gated)
		n = flags_add(o, n, "swiglu", NULL, 0);
	if (!m->tied)
		n = flags_add(o, n, "untie-embeddings-and-output-weights", NULL, 0);
	if (!m->linear_bias) {
		n = flags_add(o, n, "disable-bias-linear", NULL, 0);
		if (m->qkv_bias)
			n = flags_add(o, n, "add-qkv-bias", NULL, 0);
	}
	/* with multi-latent attention the flag norms the compressed query and
	 * key-value latents (DeepSeek's q_a_layernorm, kv_a_layernorm) */
	if (m->qk_norm || m->mla)
		n = flags_add(o, n, "qk-layernorm", NULL, 0);
	n = addg(o, n, "hidden-dropout", m->dropout);
	n = addg(o, n, "attention-dropout", m->attn_dropout);
	n = adds(o, n, "tokenizer-type", "NullTokenizer");
	n = flags_add(o, n, "vocab-size", "%lld", m->vocab);
	if (m->experts)
		n = moe_args(m, j, o, n);
	if (m->mtp_layers > 0)
		n = flags_add(o, n, "mtp-num-layers", "%lld", m->mtp_layers);
	return n;
}

/* Full-iteration CUDA graphs (docs/MODEL.md 5.10): Megatron-LM wraps the
 * step's forward and backward in one graph (training.py FullCudaGraphWrapper)
 * and asks for the NaN check of the loss off (arguments.py@core_v0.18.0:1186
 * asserts it). */
static int full_graph_args(const struct mt_job *j, struct mt_kv *o, int n)
{
	if (full_graph_impl(MT_FLAG_MEGATRON, j->megatron_version)) {
		n = adds(o, n, KF(FULL_GRAPH), "full_iteration");
	} else {
		n = adds(o, n, KF(FULL_GRAPH), "local");
		n = adds(o, n, "cuda-graph-scope", "full_iteration");
	}
	return flags_add(o, n, "no-check-for-nan-in-loss-and-grad", NULL, 0);
}

/* Fine-grained activation offload: the modules, and with LoongForge's EP A2A
 * overlap path the tensor tags it offloads by instead: the experts' input is
 * the dispatched tokens, the MLP norm's output what is dispatched
 * (docs/source/features/moe_all2all_overlap.md @ c627566184) */
static int offload_flags(struct mt_kv *o, int n, const struct mt_job *j, const struct mt_config *c)
{
	const unsigned fc1 = 1u << MT_OM_EXPERT_FC1, norm = 1u << MT_OM_MLP_NORM;
	char v[160];

	if (!j->offload_modules)
		return n;
	n = flags_add(o, n, "fine-grained-activation-offloading", NULL, 0);
	n = adds(o, n, "offload-modules", offload_list(j->offload_modules, v, sizeof(v), ' '));
	if (mt_job_loongforge(j) && c->ep_overlap && (j->offload_modules & (fc1 | norm)))
		n = adds(o, n, "offload-tensors",
			 (j->offload_modules & fc1) && (j->offload_modules & norm)
			 ? "dispatched_input pre_mlp_layernorm_output"
			 : j->offload_modules & fc1 ? "dispatched_input" : "pre_mlp_layernorm_output");
	return n;
}

/* The precision-aware optimizer (perfmodel/optim.h): --use-precision-aware-
 * optimizer (arguments.py @ d98e8a64dd lines 3666-3685; the optimizer CPU
 * offload needs it, lines 1884-1887), and the dtypes that are not
 * Megatron-LM's default fp32; BF16 main gradients are the DDP buffer's
 * (--grad-reduce-in-bf16, printed with the DP settings), said again as the
 * optimizer's (--main-grads-dtype, lines 1213-1216). */
static int prec_opt_flags(const struct mt_config *c, struct mt_kv *o, int n)
{
	static const int dt[] = { MT_KNOB_EXP_AVG, MT_KNOB_EXP_AVG_SQ, MT_KNOB_MAIN_PARAMS };
	char buf[MT_KNOB_FMT_MAX];
	size_t i;

	if (!c->prec_opt)
		return n;
	n = flags_add(o, n, KF(PREC_OPT), NULL, 0);
	for (i = 0; i < sizeof(dt) / sizeof(dt[0]); i++)
		if (mt_knob_cfg(c, dt[i]) != MT_OD_FP32)
			n = adds(o, n, mt_knob_flag(dt[i], (char[96]){ 0 }, 96),
				 mt_knob_format(dt[i], mt_knob_cfg(c, dt[i]), buf, sizeof(buf)));
	if (!c->grad_fp32)
		n = adds(o, n, "main-grads-dtype", "bf16");
	return n;
}

/* An enum through Bridge's overrides: a dict with _target_ is instantiated
 * (src/megatron/bridge/training/utils/omegaconf_utils.py @ 067f987df0, lines
 * 478-484); with _call_ false the target is returned as is (Megatron-LM
 * megatron/training/config/instantiate_utils.py @ d98e8a64dd, lines 290-305),
 * and megatron.core. is an allowed prefix (line 44).  A plain string such as
 * "fused" stays a string, which no AttnBackend comparison matches. */
#define ATTN_TARGET(b) "{_target_:megatron.core.transformer.enums.AttnBackend." b ",_call_:false}"
/* A function the same way: Bridge allows targets under megatron.
 * (utils/instantiate_utils.py @ 067f987df0 lines 42-49) */
#define LOCAL_SPEC_TARGET "{_target_:megatron.bridge.models.gpt_provider.local_layer_spec,_call_:false}"

/* The layers: Megatron-LM's own (docs/MODEL.md 4.11) attend with their
 * DotProductAttention whatever --attention-backend says, which chooses among
 * Transformer Engine's kernels (models/backends.py @ d98e8a64dd lines
 * 129-131); Bridge's GPTModelProvider builds its layers from
 * transformer_layer_spec, Transformer Engine's unless that names the local
 * spec (src/megatron/bridge/models/gpt_provider.py @ 067f987df0 lines 83-125,
 * from v0.2.0), and Megatron-Core reads transformer_impl itself (e.g.
 * torch_fully_sharded_data_parallel.py:115 @ d98e8a64dd).  Then the fusions
 * the job turns off, each where it exists in the job (job/local.h):
 * Megatron-LM's flags (arguments.py @ d98e8a64dd lines 2887-2905; SwiGLU's or
 * GeLU's bias fusion as the model's MLP has it), or with bridge the
 * TransformerConfig fields they set (transformer_config.py lines 496-513),
 * false. */
int mt_flags_layers(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n,
		    int bridge)
{
	static const char *const flag[MT_FU_N] = { "no-masked-softmax-fusion", NULL,
						   "no-bias-dropout-fusion", "no-rope-fusion" };
	static const char *const field[MT_FU_N] = {
		"model.masked_softmax_fusion", "model.bias_activation_fusion",
		"model.bias_dropout_fusion", "model.apply_rope_fusion",
	};
	const int local = j->transformer_impl == MT_TI_LOCAL, flash = j->attn_impl == MT_ATTN_FLASH;
	int f;

	if (bridge && local) {
		n = adds(o, n, "model.transformer_impl", "local");
		n = adds(o, n, "model.transformer_layer_spec", LOCAL_SPEC_TARGET);
	} else if (bridge) {
		n = adds(o, n, "model.attention_backend",
			 flash ? ATTN_TARGET("fused") : ATTN_TARGET("unfused"));
	} else {
		n = adds(o, n, local ? "transformer-impl" : "attention-backend",
			 local ? "local" : flash ? "fused" : "unfused");
	}
	for (f = 0; f < MT_FU_N; f++) {
		if (!(j->fusions_off >> f & 1) || !mt_fusion_applies(m, j->attn_impl, f))
			continue;
		if (bridge)
			n = adds(o, n, field[f], "false");
		else
			n = flags_add(o, n, f == MT_FU_BIAS_ACT ? (m->gated ? "no-bias-swiglu-fusion" :
							   "no-bias-gelu-fusion") : flag[f], NULL, 0);
	}
	return n;
}

/* The virtual stages and how the layers are split among the pipeline stages. */
static int split_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		      struct mt_kv *o, int n)
{
	/* a layout gives VPP itself: validate_args allows no more than one of
	 * it and the virtual-stage flags (arguments.py @ d98e8a64dd, lines
	 * 929-949) */
	if (c->vpp > 1 && c->split != MT_SPLIT_LAYOUT)
		n = flags_add(o, n, KF(VPP), "%lld", c->vpp);
	if (c->split == MT_SPLIT_LAYOUT) {
		char lay[sizeof(o->val)];

		if (layout_str(m, j, c, lay, sizeof(lay)) == 0)
			n = adds(o, n, "pipeline-model-parallel-layout", lay);
	} else if (c->split == MT_SPLIT_ACCOUNT) {
		n = flags_add(o, n, "account-for-embedding-in-pipeline-split", NULL, 0);
		n = flags_add(o, n, "account-for-loss-in-pipeline-split", NULL, 0);
	} else if (c->split == MT_SPLIT_ACCOUNT_LOSS) {
		n = flags_add(o, n, "account-for-loss-in-pipeline-split", NULL, 0);
	} else if (c->split == MT_SPLIT_FIRST_LAST) {
		n = flags_add(o, n, "decoder-first-pipeline-num-layers", "%lld", c->first_layers);
		n = flags_add(o, n, "decoder-last-pipeline-num-layers", "%lld", c->last_layers);
	}
	return n;
}

/* The low-precision format and recipe (FP8, NVFP4) and their weight gathers. */
static int precision_args(const struct mt_job *j, const struct mt_config *c, struct mt_kv *o, int n)
{
	if (j->precision == MT_PREC_FP8) {
		n = adds(o, n, "fp8-format", "hybrid");
		n = adds(o, n, "fp8-recipe", mt_fp8_recipe_name(j->fp8_recipe));
		/* MXFP8 weights gathered in BF16 through the gradient buffer, as
		 * Bridge's MXFP8 recipe runs them and the model times them
		 * (perfmodel/precision.h mt_param_ag_recast) */
		if (mt_param_ag_recast(j, 1) > 0 && mt_param_gather_applies(j, c))
			n = flags_add(o, n, "reuse-grad-buf-for-mxfp8-param-ag", NULL, 0);
	} else if (j->precision == MT_PREC_NVFP4) {
		/* transformer_config.py @ d98e8a64dd lines 673-692: fp4 (e2m1, the
		 * flag --fp4-format), fp4_recipe, fp4_param (--fp4-param-gather) */
		n = adds(o, n, "fp4-format", "e2m1");
		n = adds(o, n, "fp4-recipe", "nvfp4");
		if (mt_param_gather_q(j, c->dist_opt) && c->dp > 1)
			n = flags_add(o, n, "fp4-param-gather", NULL, 0);
	}
	return n;
}

/* Megatron-FSDP or PyTorch FSDP2, with the checkpoint format each requires. */
static int fsdp_args(const struct mt_config *c, struct mt_kv *o, int n)
{
	if (c->fsdp == MT_FSDP_MEGATRON) {
		/* Megatron-FSDP: validate_args requires the fsdp_dtensor checkpoint
		 * format and keeps the distributed optimizer (v1) on
		 * (arguments.py @ d98e8a64dd, lines 1118-1168) */
		n = flags_add(o, n, KF(FSDP), NULL, 0);
		n = adds(o, n, "data-parallel-sharding-strategy", "optim_grads_params");
		n = adds(o, n, "ckpt-format", "fsdp_dtensor");
	} else if (c->fsdp == MT_FSDP_TORCH) {
		/* PyTorch FSDP2: no distributed optimizer, no gradient
		 * accumulation fusion, a torch_dist checkpoint (arguments.py @
		 * d98e8a64dd, lines 1031-1049; untied embeddings are the model's) */
		n = flags_add(o, n, "use-torch-fsdp2", NULL, 0);
		n = flags_add(o, n, "no-gradient-accumulation-fusion", NULL, 0);
		n = adds(o, n, "ckpt-format", "torch_dist");
	}
	return n;
}

/* The activation recomputation: selective (its modules) or full (method, layers). */
static int recompute_args(const struct mt_config *c, struct mt_kv *o, int n)
{
	if (c->recompute == MT_RC_SELECTIVE) {
		n = adds(o, n, KF(RECOMPUTE), "selective");
		/* Megatron-LM's default set is core_attn alone: named otherwise */
		if (c->recompute_modules > 0 && c->recompute_modules != MT_RCM_DEFAULT) {
			char v[MT_KNOB_FMT_MAX];

			n = adds(o, n, KF(RC_MODULES),
				 mt_rc_modules_format((unsigned)c->recompute_modules, ' ', v,
						      sizeof(v)));
		}
	} else if (c->recompute == MT_RC_FULL) {
		n = adds(o, n, KF(RECOMPUTE), "full");
		n = adds(o, n, KF(RC_METHOD), mt_rc_method_name(c->recompute_method));
		n = flags_add(o, n, KF(RC_LAYERS), "%lld", c->recompute_layers);
	}
	return n;
}

int mt_megatron_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		     struct mt_kv *o)
{
	int n = 0;

	n = mt_flags_model(m, j, o, n);
	n = flags_add(o, n, KF(TP), "%lld", c->tp);
	n = flags_add(o, n, KF(PP), "%lld", c->pp);
	n = split_args(m, j, c, o, n);
	n = flags_add(o, n, KF(CP), "%lld", c->cp);
	if (c->cp > 1) {
		n = adds(o, n, KF(CP_COMM), mt_cp_comm_name(c->cp_comm));
		if (c->cp_comm == MT_CP_A2A_P2P && c->cp_a2a > 0) {
			char v[64];
			snprintf(v, sizeof(v), "%d %d", c->cp_a2a, c->cp / c->cp_a2a);
			n = adds(o, n, "hierarchical-context-parallel-sizes", v);
		}
	}
	if (m->experts) {
		n = flags_add(o, n, KF(EP), "%lld", c->ep);
		n = flags_add(o, n, KF(ETP), "%lld", c->etp);
		n = dispatch_args(j, c, o, n);
	}
	if (c->sp)
		n = flags_add(o, n, KF(SP), NULL, 0);
	n = flags_add(o, n, KF(MBS), "%lld", c->mbs);
	n = flags_add(o, n, "global-batch-size", "%lld", j->gbs);
	n = flags_add(o, n, "bf16", NULL, 0);
	n = precision_args(j, c, o, n);
	if (j->opt_offload > 0) {
		/* arguments.py @ d98e8a64dd lines 1884-1887: the hybrid device
		 * optimizer needs the precision-aware optimizer */
		n = flags_add(o, n, "optimizer-cpu-offload", NULL, 0);
		char fr[32];

		snprintf(fr, sizeof(fr), "%g", j->opt_offload);
		n = adds(o, n, "optimizer-offload-fraction", fr);
	}
	n = prec_opt_flags(c, o, n);
	n = fsdp_args(c, o, n);
	if (c->dist_opt) {
		n = flags_add(o, n, KF(DIST_OPT), NULL, 0);
		/* arguments.py @ d98e8a64dd, lines 1025-1028: only with the
		 * distributed optimizer and the reduction overlap */
		if (c->overlap_param && c->overlap_grad)
			n = flags_add(o, n, KF(OVERLAP_PARAM), NULL, 0);
	}
	if (c->overlap_grad)
		n = flags_add(o, n, KF(OVERLAP_GRAD), NULL, 0);
	if (c->bucket_params > 0)
		n = flags_add(o, n, KF(BUCKET), "%lld", c->bucket_params);
	if (!c->grad_fp32)
		n = flags_add(o, n, KF(GRAD_FP32), NULL, 0);
	if (c->tp_overlap && c->sp)
		n = flags_add(o, n, KF(TP_OVERLAP), NULL, 0);
	if (mt_p2p_blocks(c))
		n = flags_add(o, n, "no-overlap-p2p-communication", NULL, 0);
	n = recompute_args(c, o, n);
	/* No --cpu-offloading: TransformerConfig's cpu_offloading and
	 * cpu_offloading_activations/_weights are excluded from the command
	 * line; validate_args sets cpu_offloading from the number of layers
	 * (Megatron-LM megatron/training/arguments.py @ d98e8a64dd, lines
	 * 1950-1951 and 2320-2322; activations are offloaded by default,
	 * megatron/core/model_parallel_config.py line 471). */
	if (c->offload_layers > 0)
		n = flags_add(o, n, KF(OFFLOAD), "%lld", c->offload_layers);
	n = offload_flags(o, n, j, c);
	if (c->full_graph)
		n = full_graph_args(j, o, n);
	if (c->cuda_graph) {
		char mods[64];

		n = adds(o, n, KF(CUDA_GRAPH), "transformer_engine");
		n = adds(o, n, "cuda-graph-modules",
			 graph_modules(m, j, mods, sizeof(mods), ' '));
	}
	if (c->fused_ce) {
		n = flags_add(o, n, KF(FUSED_CE), NULL, 0);
		/* LoongForge's fused linear cross-entropy: the output layer's
		 * GEMM and the loss in vocabulary chunks, no full logits (its
		 * optimization_guide.md 3.4 @ c627566184); at least the memory
		 * the fused loss saves */
		if (mt_job_loongforge(j))
			n = adds(o, n, "cross-entropy-fusion-impl", "linear");
	}
	n = mt_flags_layers(m, j, o, n, 0);
	if (!j->grad_accum_fusion && c->fsdp != MT_FSDP_TORCH) /* FSDP2 has it above */
		n = flags_add(o, n, "no-gradient-accumulation-fusion", NULL, 0);
	return mt_knobs_megatron_generic(c, o, n, MT_FLAGS_MAX);
}

int mt_kv_note(struct mt_kv *o, int n, const char *about, const char *text)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "#%.94s", about);
	snprintf(o[n].val, sizeof(o[n].val), "%s", text);
	return n + 1;
}

int mt_kv_merge(struct mt_kv *o, int n, const struct mt_kv *add, int nadd)
{
	int i, k;

	for (i = 0; i < nadd; i++) {
		for (k = 0; k < n; k++)
			if (!strcmp(o[k].key, add[i].key))
				break;
		if (k == n) {
			if (n >= MT_FLAGS_MAX)
				continue;
			n++;
		}
		o[k] = add[i];
	}
	return n;
}

int mt_kv_is_note(const struct mt_kv *kv)
{
	return kv->key[0] == '#';
}

int mt_kv_value_is_list(const char *val)
{
	return strchr(val, ' ') && mt_shell_literal(val, 1);
}

void mt_kv_value_words(struct sbuf *sb, const char *val)
{
	struct sbuf w = SBUF_INIT;
	size_t n;

	if (!val[0])
		return;
	if (!mt_kv_value_is_list(val)) {
		sbuf_addc(sb, ' ');
		mt_shell_word(sb, val);
		return;
	}
	for (val += strspn(val, " "); *val; val += n, val += strspn(val, " ")) {
		n = strcspn(val, " ");
		sbuf_reset(&w);
		sbuf_add(&w, val, n);
		sbuf_addc(sb, ' ');
		mt_shell_word(sb, w.failed ? "" : w.buf);
	}
	sbuf_release(&w);
}

void mt_kv_render(struct sbuf *sb, const struct mt_kv *kv, int n, int style, const char *sep)
{
	char buf[sizeof(kv->key) + sizeof(kv->val) + 2];
	int i, first = 1;

	for (i = 0; i < n; i++)
		if (mt_kv_is_note(&kv[i]))
			sbuf_addf(sb, "# %s\n", kv[i].val);
	for (i = 0; i < n; i++) {
		if (mt_kv_is_note(&kv[i]))
			continue;
		if (!first)
			sbuf_adds(sb, sep);
		first = 0;
		if (style == MT_KV_ARGS) {
			sbuf_addf(sb, "--%s", kv[i].key);
			mt_kv_value_words(sb, kv[i].val);
		} else {
			snprintf(buf, sizeof(buf), "%s=%s", kv[i].key, kv[i].val[0] ? kv[i].val : "true");
			if (style == MT_KV_EXPORT)
				sbuf_adds(sb, "export ");
			mt_shell_word(sb, buf);
		}
	}
}
