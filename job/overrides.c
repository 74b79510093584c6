/* SPDX-License-Identifier: MIT */
/* overrides: a candidate configuration as Megatron-Bridge overrides (flags.h
 * mt_bridge_overrides), and the notes for what no override sets: the model's
 * numerics, the precision recipe's own settings, comm_overlap.* where a recipe has
 * no CommOverlapConfig.  The Megatron-LM arguments are job/flags.c. */
#include "flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flags_common.h"
#include "flagtable.h"
#include "knobs.h"
#include "../perfmodel/precision.h"
#include "../perfmodel/recompute.h"

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

/* The precision-aware optimizer (job/flags.c prec_opt_flags) as OptimizerConfig's
 * fields in a Bridge override, each dtype by
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

/* Bridge's named precision recipes (Megatron-Bridge
 * src/megatron/bridge/training/mixed_precision.py @ 067f987df0): the FP8 ones
 * set fp8_param_gather = True themselves (lines 231 and 302), and no
 * mixed_precision.* override may follow the name: after mixed_precision=<name>
 * the node is a string. */
static const char *flags_precision_recipe(const struct mt_job *j)
{
	return mt_recipe(mt_recipe_of(j))->bridge;
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
 * model.FIELD=VALUE.  The Megatron-LM flags of mt_flags_model() that carry them,
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
	k = mt_flags_model(m, j, kv, 0);
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
	n = mt_flags_layers(m, j, o, n, 1);
	if (!j->grad_accum_fusion && c->fsdp != MT_FSDP_TORCH) /* FSDP2 has it above */
		n = adds(o, n, "model.gradient_accumulation_fusion", "false");
	n = mt_knobs_bridge_generic(c, o, n, MT_FLAGS_MAX);
	return mt_bridge_notes(o, n);
}
