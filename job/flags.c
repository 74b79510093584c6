/* SPDX-License-Identifier: MIT */
/* flags: Megatron-LM arguments, Megatron-Bridge overrides, environment. */
#include "flags.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/shell.h"
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

/* A knob's Megatron-LM flag and Bridge path, as the knob table declares them */
#define KF(id) mt_knob_flag(MT_KNOB_##id, (char[96]){ 0 }, 96)
#define KB(id) (mt_knobs[MT_KNOB_##id].bridge)

static int flags_add(struct mt_kv *o, int n, const char *k, const char *fmt, long long v)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "%s", k);
	if (fmt)
		snprintf(o[n].val, sizeof(o[n].val), fmt, v);
	else
		o[n].val[0] = '\0';
	return n + 1;
}

static int adds(struct mt_kv *o, int n, const char *k, const char *v)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "%s", k);
	snprintf(o[n].val, sizeof(o[n].val), "%s", v);
	return n + 1;
}

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

/* The candidate's pipeline layout as Megatron's string (perfmodel/layout.h). */
static int layout_str(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		      char *buf, size_t cap)
{
	struct mt_layout l;

	if (mt_layout_of(m, j, c->pp, c->vpp, &l) || mt_layout_format(&l, buf, cap) < 0)
		return -1;
	return 0;
}

static int addg(struct mt_kv *o, int n, const char *k, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%g", v);
	return adds(o, n, k, buf);
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

/* The candidate's token dispatcher: the job's when pinned, else the one the
 * search chose. */
static int dispatcher_of(const struct mt_job *j, const struct mt_config *c)
{
	return j->moe_dispatcher != MT_DISPATCH_AUTO ? j->moe_dispatcher : c->dispatcher;
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

static int dispatch_overrides(const struct mt_job *j, const struct mt_config *c, struct mt_kv *o,
			      int n)
{
	int d = dispatcher_of(j, c);

	n = adds(o, n, KB(DISPATCHER), mt_dispatcher_name(d));
	if (d == MT_DISPATCH_FLEX)
		n = adds(o, n, "model.moe_flex_dispatcher_backend", mt_flex_backend_name(c->flex_backend));
	if (d == MT_DISPATCH_FLEX && c->rank_budget) {
		n = addg(o, n, KB(RANK_BUDGET), j->moe_rank_budget);
		n = adds(o, n, "model.use_transformer_engine_op_fuser", "true");
		n = adds(o, n, "model.moe_grouped_gemm", "true");
	}
	if (c->ep_overlap) {
		/* TransformerConfig's own fields hold where the recipe has no
		 * CommOverlapConfig; one that has sets them from its own
		 * (comm_overlap.* notes; tests/cli/check-bridge.sh) */
		n = adds(o, n, "model.overlap_moe_expert_parallel_comm", "true");
		n = adds(o, n, "model.delay_wgrad_compute", "true");
		n = adds(o, n, KB(EP_OVERLAP), "true");
		n = adds(o, n, "comm_overlap.delay_wgrad_compute", "true");
	} else if (c->shared_overlap) {
		n = adds(o, n, "model.moe_shared_expert_overlap", "true");
	}
	if (j->moe_balance == MT_BAL_FORCED)
		n = adds(o, n, "model.moe_router_force_load_balancing", "true");
	else if (j->moe_balance == MT_BAL_DROP) {
		n = addg(o, n, "model.moe_expert_capacity_factor", j->moe_capacity);
		n = adds(o, n, "model.moe_pad_expert_input_to_capacity", "true");
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
static int model_args(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n)
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

/* The modules Transformer Engine's per-layer graphs capture (the job's, or
 * megatune's default: perfmodel/graphs.h); Megatron-LM d98e8a6
 * transformer_config.py lines 2804-2852 check these combinations. */
static const char *graph_modules(const struct mt_model *m, const struct mt_job *j, char *buf,
				 size_t cap, char sep)
{
	const unsigned scope = mt_graph_scope_of(m, j);
	const char sepstr[2] = { sep, '\0' };
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < MT_GS_N && len < cap; i++)
		if (scope & (1u << i))
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? sepstr : "",
						mt_graph_scope_name(i));
	return buf;
}

/* The fine-grained offload modules, separated by sep. */
static const char *offload_list(unsigned bits, char *buf, size_t cap, char sep)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < MT_OM_N; i++)
		if (bits & (1u << i))
			len += (size_t)snprintf(buf + len, cap > len ? cap - len : 0, "%s%s",
						len ? (sep == ' ' ? " " : ",") : "",
						mt_offload_module_name(i));
	return buf;
}

/* Fine-grained activation offload: the modules, and with LoongForge's EP A2A
 * overlap path the tensor tags it offloads by instead: the experts' input is
 * the dispatched tokens, the MLP norm's output what is dispatched
 * (docs/source/features/moe_all2all_overlap.md @ c627566184) */
/* 1 when the job's target release spells full-iteration graphs as an
 * implementation of their own (core_v0.18.0, Bridge v0.6.0), 0 when as the
 * local implementation's scope (core_v0.16.0 and core_v0.17.x). */
static int full_graph_impl(int kind, int setting)
{
	const struct mt_flag_row *r = mt_flag_find(kind, kind == MT_FLAG_MEGATRON
						   ? "cuda-graph-impl=full_iteration"
						   : "model.cuda_graph_impl=full_iteration");

	return r && mt_flag_accepts(r, mt_release_resolve(kind, setting));
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

/* ... and as OptimizerConfig's fields in a Bridge override, each dtype by
 * torch's name, which every release turns into the dtype
 * (training/utils/omegaconf_utils.py @ v0.2.0: getattr(torch, name); @
 * 067f987df0 lines 498-505: str_to_dtype, utils/activation_map.py lines
 * 95-115); fp8 is torch.uint8, which the newer releases' table lacks, so a
 * note says to set it in the recipe.  The main gradients are the DDP
 * buffer's (mixed_precision.grad_reduce_in_fp32): Megatron-Core reads
 * OptimizerConfig.main_grads_dtype in no other place. */
static int prec_opt_overrides(const struct mt_config *c, struct mt_kv *o, int n)
{
	static const int dt[] = { MT_KNOB_EXP_AVG, MT_KNOB_EXP_AVG_SQ, MT_KNOB_MAIN_PARAMS };
	static const char *const torch[] = { "torch.float32", "torch.float16", "torch.bfloat16",
					     "torch.uint8" };
	size_t i;

	n = adds(o, n, KB(PREC_OPT), c->prec_opt ? "true" : "false");
	if (!c->prec_opt)
		return n;
	for (i = 0; i < sizeof(dt) / sizeof(dt[0]); i++) {
		long long d = mt_knob_cfg(c, dt[i]);
		char t[200];

		if (d != MT_OD_FP8) {
			n = adds(o, n, mt_knobs[dt[i]].bridge, torch[d]);
			continue;
		}
		snprintf(t, sizeof(t), "FP8 (torch.uint8) is no dtype name Bridge's overrides "
			 "take; in the recipe: cfg.%s = torch.uint8", mt_knobs[dt[i]].bridge);
		n = mt_kv_note(o, n, mt_knobs[dt[i]].bridge, t);
	}
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
static int layer_flags(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n,
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

int mt_megatron_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		     struct mt_kv *o)
{
	int n = 0;

	n = model_args(m, j, o, n);
	n = flags_add(o, n, KF(TP), "%lld", c->tp);
	n = flags_add(o, n, KF(PP), "%lld", c->pp);
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
	if (j->opt_offload > 0) {
		/* arguments.py @ d98e8a64dd lines 1884-1887: the hybrid device
		 * optimizer needs the precision-aware optimizer */
		n = flags_add(o, n, "optimizer-cpu-offload", NULL, 0);
		char fr[32];

		snprintf(fr, sizeof(fr), "%g", j->opt_offload);
		n = adds(o, n, "optimizer-offload-fraction", fr);
	}
	n = prec_opt_flags(c, o, n);
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
	n = layer_flags(m, j, o, n, 0);
	if (!j->grad_accum_fusion && c->fsdp != MT_FSDP_TORCH) /* FSDP2 has it above */
		n = flags_add(o, n, "no-gradient-accumulation-fusion", NULL, 0);
	return mt_knobs_megatron_generic(c, o, n, MT_FLAGS_MAX);
}

/* Bridge's named precision recipes (Megatron-Bridge
 * src/megatron/bridge/training/mixed_precision.py @ 067f987df0): the FP8 ones
 * set fp8_param_gather = True themselves (lines 231 and 302), and no
 * mixed_precision.* override may follow the name: after mixed_precision=<name>
 * the node is a string. */
static const char *flags_precision_recipe(const struct mt_job *j)
{
	return mt_recipe(mt_recipe_of(j))->bridge;
}

int mt_kv_note(struct mt_kv *o, int n, const char *about, const char *text)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "#%.94s", about);
	snprintf(o[n].val, sizeof(o[n].val), "%s", text);
	return n + 1;
}

/* ddp.bucket_size, and where a recipe's CommOverlapConfig would undo it a
 * note: with DP > 1 its optimizer overlap settings put 128 MiB in the DDP
 * config unless comm_overlap.bucket_size is given (Megatron-Bridge 067f987
 * src/megatron/bridge/training/comm_overlap.py lines 569-585), and that
 * override is rejected where the recipe has no CommOverlapConfig. */
static int bucket_override(struct mt_kv *o, int n, const struct mt_config *c)
{
	char text[192];

	n = flags_add(o, n, KB(BUCKET), "%lld", c->bucket_params);
	if (c->dp < 2)
		return n;
	snprintf(text, sizeof(text), "ddp.bucket_size: a recipe with a CommOverlapConfig sets "
		 "128 MiB when DP > 1; there add comm_overlap.bucket_size=%lld",
		 (long long)c->bucket_params);
	return mt_kv_note(o, n, "ddp.bucket_size", text);
}

/* MixedPrecisionConfig.setup() copies every field it shares with the DDP
 * config, grad_reduce_in_fp32 included (mixed_precision.py lines 113-161,
 * called from config.py line 2016), so ddp.grad_reduce_in_fp32 is undone;
 * and mixed_precision.* cannot follow mixed_precision=<name>, which makes the
 * node a string. */
static int grad_reduce_note(struct mt_kv *o, int n, const struct mt_job *j)
{
	char t[sizeof(o->val)];

	snprintf(t, sizeof(t),
		 "gradients reduced in BF16: Bridge copies the precision recipe's "
		 "grad_reduce_in_fp32 onto ddp, so no override sets it; in the recipe: "
		 "cfg.mixed_precision = %s(); cfg.mixed_precision.grad_reduce_in_fp32 = False",
		 flags_precision_recipe(j));
	return mt_kv_note(o, n, "mixed_precision.grad_reduce_in_fp32", t);
}

/* The quantised weight all-gather where the precision recipe sets it
 * otherwise: Bridge's FP8 recipes keep the weights in FP8 for the all-gather
 * but the blockwise one, bf16_with_nvfp4_mixed in NVFP4
 * (training/mixed_precision.py @ 067f987df0, lines 231-416); like the
 * gradient precision, no override can follow mixed_precision=<name>. */
static int param_gather_note(struct mt_kv *o, int n, const struct mt_job *j,
			     const struct mt_config *c)
{
	int r = mt_recipe_of(j), want, recipe;
	const char *field = r == MT_RECIPE_NVFP4 ? "fp4_param_gather" : "fp8_param_gather";
	char t[sizeof(o->val)], about[48];

	if (!mt_prec_quantised(j) || c->dp < 2)
		return n;
	want = mt_param_gather_q(j, c->dist_opt) && c->dist_opt;
	recipe = r != MT_RECIPE_FP8_BLOCKWISE;
	if (want == recipe)
		return n;
	snprintf(t, sizeof(t), "weights all-gathered %s: the recipe %s sets %s = %s; in the recipe: "
		 "cfg.mixed_precision.%s = %s", want ? "quantised" : "in BF16", flags_precision_recipe(j),
		 field, recipe ? "True" : "False", field, want ? "True" : "False");
	snprintf(about, sizeof(about), "mixed_precision.%s", field);
	return mt_kv_note(o, n, about, t);
}

int mt_bridge_notes(struct mt_kv *o, int n)
{
	static const char pre[] = "comm_overlap.";
	int i;

	for (i = 0; i < n; i++) {
		char key[sizeof(o[i].key)], val[sizeof(o[i].val)];
		const char *py;

		if (strncmp(o[i].key, pre, sizeof(pre) - 1))
			continue;
		snprintf(key, sizeof(key), "%s", o[i].key);
		snprintf(val, sizeof(val), "%s", o[i].val);
		py = !strcmp(val, "true") ? "True" : !strcmp(val, "false") ? "False" : val;
		snprintf(o[i].key, sizeof(o[i].key), "#%.94s", key);
		snprintf(o[i].val, sizeof(o[i].val),
			 "%.48s=%.8s: rejected where the recipe has no CommOverlapConfig "
			 "(comm_overlap=None, e.g. llama3_8b_*); set cfg.comm_overlap = "
			 "CommOverlapConfig(%.36s=%.8s) in the recipe",
			 key, val, key + sizeof(pre) - 1, py);
	}
	return n;
}

/* The model's numerics as TransformerConfig fields, for Bridge: its recipes
 * build the model from their own provider (or AutoBridge from the Hugging
 * Face config), not from overrides, so the fields megatune timed and Megatron
 * Core's defaults get wrong are named in notes, each settable as
 * model.FIELD=VALUE.  The Megatron-LM flags of model_args() that carry them,
 * with the field where the name differs. */
static int model_notes(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n)
{
	static const char *const fields[][2] = {
		{ "rotary-base", NULL }, { "use-rope-scaling", NULL }, { "rope-scaling-factor", NULL },
		{ "rotary-scaling-factor", NULL }, { "mscale", NULL }, { "mscale-all-dim", NULL },
		{ "norm-epsilon", "layernorm_epsilon" }, { "qk-layernorm", NULL },
		{ "moe-shared-expert-gate", NULL }, { "moe-router-score-function", NULL },
		{ "moe-router-pre-softmax", NULL }, { "moe-router-enable-expert-bias", NULL },
		{ "moe-router-topk-scaling-factor", NULL }, { "moe-router-num-groups", NULL },
		{ "moe-router-group-topk", NULL }, { "moe-router-load-balancing-type", NULL },
		{ "moe-aux-loss-coeff", NULL },
	};
	struct mt_kv *kv = calloc(MT_FLAGS_MAX, sizeof(*kv));
	char text[512], item[160], about[16];
	size_t len = 0, f;
	int i, k, part = 0;

	if (!kv)
		return n;
	k = model_args(m, j, kv, 0);
	text[0] = '\0';
	for (f = 0; f <= sizeof(fields) / sizeof(fields[0]); f++) {
		item[0] = '\0';
		for (i = 0; f < sizeof(fields) / sizeof(fields[0]) && i < k; i++) {
			const char *name = fields[f][1];
			char field[96];
			size_t c;

			if (strcmp(kv[i].key, fields[f][0]))
				continue;
			if (!name) {
				for (c = 0; kv[i].key[c] && c + 1 < sizeof(field); c++)
					field[c] = kv[i].key[c] == '-' ? '_' : kv[i].key[c];
				field[c] = '\0';
				name = field;
			}
			snprintf(item, sizeof(item), "model.%s=%s", name,
				 kv[i].val[0] ? kv[i].val : "true");
		}
		/* a full note, or the last: out */
		if ((item[0] && len + strlen(item) + 2 > 240) ||
		    (f == sizeof(fields) / sizeof(fields[0]) && len)) {
			snprintf(about, sizeof(about), "model%d", ++part);
			n = mt_kv_note(o, n, about, text);
			len = 0;
			text[0] = '\0';
		}
		if (!item[0])
			continue;
		if (!len && !part)
			snprintf(text, sizeof(text), "%s as megatune timed it (the recipe's provider "
				 "or AutoBridge must build it so): %s", m->name, item);
		else if (!len)
			snprintf(text, sizeof(text), "%s, continued: %s", m->name, item);
		else
			snprintf(text + len, sizeof(text) - len, " %s", item);
		len = strlen(text);
	}
	free(kv);
	return n;
}

/* Recomputation as Bridge overrides: the granularity with its method, layers
 * and modules, or all three null (a recipe's own would stay) */
static int recompute_overrides(const struct mt_config *c, struct mt_kv *o, int n)
{
	if (c->recompute == MT_RC_SELECTIVE) {
		n = adds(o, n, KB(RECOMPUTE), "selective");
		/* a recipe's full-recompute layer count: selective refuses one
		 * (transformer_config.py:1929 raises: selective recompute_num_layers
		 * must be None) */
		n = adds(o, n, "model.recompute_method", "null");
		n = adds(o, n, KB(RC_LAYERS), "null");
		if (c->recompute_modules > 0 && c->recompute_modules != MT_RCM_DEFAULT) {
			char v[MT_KNOB_FMT_MAX + 2], l[MT_KNOB_FMT_MAX];

			snprintf(v, sizeof(v), "[%s]",
				 mt_rc_modules_format((unsigned)c->recompute_modules, ',', l,
						      sizeof(l)));
			n = adds(o, n, KB(RC_MODULES), v);
		}
	} else if (c->recompute == MT_RC_FULL) {
		n = adds(o, n, KB(RECOMPUTE), "full");
		n = adds(o, n, KB(RC_METHOD), mt_rc_method_name(c->recompute_method));
		n = flags_add(o, n, KB(RC_LAYERS), "%lld", c->recompute_layers);
		/* Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py
		 * 2854-2858: with CUDA graphs, only full-iteration graphs allow it */
		n = mt_kv_note(o, n, "model.recompute_granularity",
			 "full recompute: a recipe that turns on CUDA graphs (model.cuda_graph_impl, "
			 "e.g. qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config) rejects it unless the "
			 "graph is full_iteration; there also set model.cuda_graph_impl=none");
	} else {
		/* no recompute: a recipe's own (qwen3_30b_a3b_pretrain_8gpu_h100_bf16_config
		 * recomputes full layers) would stay (tests/cli/check-bridge.sh) */
		n = adds(o, n, KB(RECOMPUTE), "null");
		n = adds(o, n, "model.recompute_method", "null");
		n = adds(o, n, KB(RC_LAYERS), "null");
	}
	return n;
}

/* CUDA graphs as Bridge overrides: full-iteration, Transformer Engine's
 * per-layer ones, or none (a recipe's own would stay otherwise) */
static int graph_overrides(const struct mt_model *m, const struct mt_job *j,
			   const struct mt_config *c, struct mt_kv *o, int n)
{
	if (c->full_graph) {
		/* Megatron-Bridge 067f987df0 utils/cuda_graph.py
		 * set_full_iteration_cuda_graph: the implementation of its own
		 * where the release has cuda_graph_modules, else the local one's
		 * scope; config.py:1364 asserts the NaN check off */
		if (full_graph_impl(MT_FLAG_BRIDGE, j->bridge_version)) {
			n = adds(o, n, KB(FULL_GRAPH), "full_iteration");
			n = adds(o, n, "model.cuda_graph_modules", "[]");
		} else {
			n = adds(o, n, KB(FULL_GRAPH), "local");
			n = adds(o, n, "model.cuda_graph_scope", "[full_iteration]");
		}
		n = adds(o, n, "rerun_state_machine.check_for_nan_in_loss", "false");
	} else if (c->cuda_graph) {
		char mods[64], v[72];

		n = adds(o, n, KB(CUDA_GRAPH), "transformer_engine");
		snprintf(v, sizeof(v), "[%s]",
			 graph_modules(m, j, mods, sizeof(mods), ','));
		/* a recipe's own scope would clash with the modules (Megatron-LM
		 * d98e8a6 transformer_config.py: cuda_graph_scope and
		 * cuda_graph_modules cannot be set together) */
		n = adds(o, n, "model.cuda_graph_scope", "null");
		n = adds(o, n, "model.cuda_graph_modules", v);
	} else {
		/* a recipe's own graphs (qwen3_30b_a3b_pretrain_16gpu_h100_bf16_config)
		 * would stay */
		n = adds(o, n, KB(CUDA_GRAPH), "none");
	}
	return n;
}

int mt_bridge_overrides(const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *c, struct mt_kv *o)
{
	int n = 0;

	n = model_notes(m, j, o, n);

	n = flags_add(o, n, KB(TP), "%lld", c->tp);
	n = flags_add(o, n, KB(PP), "%lld", c->pp);
	if (c->vpp > 1)
		n = flags_add(o, n, KB(VPP), "%lld", c->vpp);
	else
		n = adds(o, n, KB(VPP), "null");
	if (c->split == MT_SPLIT_ACCOUNT) {
		n = adds(o, n, "model.account_for_embedding_in_pipeline_split", "true");
		n = adds(o, n, "model.account_for_loss_in_pipeline_split", "true");
	} else if (c->split == MT_SPLIT_ACCOUNT_LOSS) {
		n = adds(o, n, "model.account_for_loss_in_pipeline_split", "true");
	} else if (c->split == MT_SPLIT_LAYOUT) {
		char lay[sizeof(o->val)], q[sizeof(o->val)];

		/* quoted: Hydra's override grammar reads '|', '(' and '*' */
		if (layout_str(m, j, c, lay, sizeof(lay) - 2) == 0) {
			snprintf(q, sizeof(q), "\"%.*s\"", (int)sizeof(q) - 3, lay);
			n = adds(o, n, "model.pipeline_model_parallel_layout", q);
		}
	} else if (c->split == MT_SPLIT_FIRST_LAST) {
		n = flags_add(o, n, "model.num_layers_in_first_pipeline_stage", "%lld", c->first_layers);
		n = flags_add(o, n, "model.num_layers_in_last_pipeline_stage", "%lld", c->last_layers);
	}
	n = flags_add(o, n, KB(CP), "%lld", c->cp);
	if (c->cp > 1) {
		n = adds(o, n, KB(CP_COMM), mt_cp_comm_name(c->cp_comm));
		if (c->cp_comm == MT_CP_A2A_P2P && c->cp_a2a > 0) {
			char v[64];
			snprintf(v, sizeof(v), "[%d,%d]", c->cp_a2a, c->cp / c->cp_a2a);
			n = adds(o, n, "model.hierarchical_context_parallel_sizes", v);
		}
	}
	if (m->experts) {
		n = flags_add(o, n, KB(EP), "%lld", c->ep);
		n = flags_add(o, n, KB(ETP), "%lld", c->etp);
	}
	if (m->experts)
		n = dispatch_overrides(j, c, o, n);
	n = adds(o, n, KB(SP), c->sp ? "true" : "false");
	n = flags_add(o, n, KB(MBS), "%lld", c->mbs);
	n = flags_add(o, n, "train.global_batch_size", "%lld", j->gbs);
	n = flags_add(o, n, "model.seq_length", "%lld", j->seq);
	n = flags_add(o, n, "dataset.seq_length", "%lld", j->seq);
	n = adds(o, n, "mixed_precision", flags_precision_recipe(j));
	n = adds(o, n, KB(DIST_OPT), c->dist_opt ? "true" : "false");
	n = adds(o, n, "optimizer.use_distributed_optimizer", c->dist_opt ? "true" : "false");
	if (j->opt_offload > 0) { /* OptimizerConfig fields (optimizer_config.py @ d98e8a64dd) */
		char fr[32];

		snprintf(fr, sizeof(fr), "%g", j->opt_offload);
		n = adds(o, n, "optimizer.optimizer_cpu_offload", "true");
		n = adds(o, n, "optimizer.optimizer_offload_fraction", fr);
	}
	n = prec_opt_overrides(c, o, n);
	if (c->fsdp == MT_FSDP_MEGATRON) {
		/* Bridge's ConfigContainer.validate() applies the rest of what
		 * Megatron-FSDP needs (src/megatron/bridge/training/config.py @
		 * 067f987df0, lines 1065-1125) */
		n = adds(o, n, KB(FSDP), "true");
		n = adds(o, n, "dist.use_megatron_fsdp", "true");
		n = adds(o, n, "ddp.data_parallel_sharding_strategy", "optim_grads_params");
		n = adds(o, n, "checkpoint.ckpt_format", "fsdp_dtensor");
	} else if (c->fsdp == MT_FSDP_TORCH) {
		/* DistributedInitConfig.use_torch_fsdp2 (training/config.py @
		 * 067f987df0; setup.py:595 wraps the model in Megatron-Core's
		 * TorchFullyShardedDataParallel) */
		n = adds(o, n, "dist.use_torch_fsdp2", "true");
		n = adds(o, n, "model.gradient_accumulation_fusion", "false");
		n = adds(o, n, "checkpoint.ckpt_format", "torch_dist");
	}
	n = adds(o, n, KB(OVERLAP_GRAD), c->overlap_grad ? "true" : "false");
	n = adds(o, n, KB(OVERLAP_PARAM),
		 c->dist_opt && c->overlap_param && c->overlap_grad ? "true" : "false");
	if (c->bucket_params > 0)
		n = bucket_override(o, n, c);
	if (!c->grad_fp32)
		n = grad_reduce_note(o, n, j);
	n = param_gather_note(o, n, j, c);
	if (c->tp_overlap && c->sp)
		n = adds(o, n, KB(TP_OVERLAP), "true");
	else if (c->sp && c->tp > 1 && j->precision == MT_PREC_NVFP4)
		/* recipes that turn the overlap on would keep it (docs/MODEL.md 5.1) */
		n = adds(o, n, KB(TP_OVERLAP), "false");
	/* Bridge turns the overlap on and batching off with VPP (comm_overlap.py
	 * @ 067f987df0:454-457); Megatron-LM's --no-overlap-p2p-communication
	 * batches the sends (argument_utils.py:307 @ d98e8a6): both, as it runs */
	if (mt_p2p_blocks(c)) {
		n = adds(o, n, KB(P2P_OVERLAP), "false");
		n = adds(o, n, "comm_overlap.batch_p2p_comm", "true");
	} else if (c->pp > 1 && c->vpp > 1) {
		/* the overlap as timed: Megatron-Core's default is off
		 * (core/model_parallel_config.py:385 @ d98e8a64dd), which a recipe
		 * without a CommOverlapConfig keeps; a recipe with one sets the same
		 * with VPP (comm_overlap.py @ 067f987df0:454-457) */
		n = adds(o, n, "model.overlap_p2p_comm", "true");
		n = adds(o, n, "model.batch_p2p_comm", "false");
	}
	n = recompute_overrides(c, o, n);
	if (c->offload_layers > 0) {
		n = adds(o, n, "model.cpu_offloading", "true");
		n = flags_add(o, n, KB(OFFLOAD), "%lld", c->offload_layers);
	}
	n = adds(o, n, KB(FUSED_CE), c->fused_ce ? "true" : "false");
	if (j->offload_modules) {
		char l[160], v[170];

		n = adds(o, n, "model.fine_grained_activation_offloading", "true");
		snprintf(v, sizeof(v), "[%s]", offload_list(j->offload_modules, l, sizeof(l), ','));
		n = adds(o, n, "model.offload_modules", v);
	}
	n = graph_overrides(m, j, c, o, n);
	n = layer_flags(m, j, o, n, 1);
	if (!j->grad_accum_fusion && c->fsdp != MT_FSDP_TORCH) /* FSDP2 has it above */
		n = adds(o, n, "model.gradient_accumulation_fusion", "false");
	n = mt_knobs_bridge_generic(c, o, n, MT_FLAGS_MAX);
	return mt_bridge_notes(o, n);
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
