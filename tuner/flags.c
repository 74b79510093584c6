/* SPDX-License-Identifier: MIT */
/* flags: Megatron-LM arguments, Megatron-Bridge overrides, environment. */
#include "flags.h"

#include <stdio.h>
#include <string.h>

#include "cluster.h"

static int add(struct mt_kv *o, int n, const char *k, const char *fmt, long long v)
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

int mt_megatron_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		     struct mt_kv *o)
{
	int n = 0;

	n = add(o, n, "tensor-model-parallel-size", "%lld", c->tp);
	n = add(o, n, "pipeline-model-parallel-size", "%lld", c->pp);
	if (c->vpp > 1)
		n = add(o, n, "num-virtual-stages-per-pipeline-rank", "%lld", c->vpp);
	if (c->split == MT_SPLIT_ACCOUNT) {
		n = add(o, n, "account-for-embedding-in-pipeline-split", NULL, 0);
		n = add(o, n, "account-for-loss-in-pipeline-split", NULL, 0);
	} else if (c->split == MT_SPLIT_ACCOUNT_LOSS) {
		n = add(o, n, "account-for-loss-in-pipeline-split", NULL, 0);
	} else if (c->split == MT_SPLIT_FIRST_LAST) {
		n = add(o, n, "decoder-first-pipeline-num-layers", "%lld", c->first_layers);
		n = add(o, n, "decoder-last-pipeline-num-layers", "%lld", c->last_layers);
	}
	n = add(o, n, "context-parallel-size", "%lld", c->cp);
	if (c->cp > 1) {
		n = adds(o, n, "cp-comm-type", mt_cp_comm_name(c->cp_comm));
		if (c->cp_comm == MT_CP_A2A_P2P && c->cp_a2a > 0) {
			char v[64];
			snprintf(v, sizeof(v), "%d %d", c->cp_a2a, c->cp / c->cp_a2a);
			n = adds(o, n, "hierarchical-context-parallel-sizes", v);
		}
	}
	if (m->experts) {
		n = add(o, n, "expert-model-parallel-size", "%lld", c->ep);
		n = add(o, n, "expert-tensor-parallel-size", "%lld", c->etp);
		if (j->moe_dispatcher == MT_DISPATCH_FLEX) {
			n = adds(o, n, "moe-token-dispatcher-type", "flex");
			n = adds(o, n, "moe-flex-dispatcher-backend", "deepep");
		} else {
			n = adds(o, n, "moe-token-dispatcher-type", "alltoall");
		}
	}
	if (c->sp)
		n = add(o, n, "sequence-parallel", NULL, 0);
	n = add(o, n, "micro-batch-size", "%lld", c->mbs);
	n = add(o, n, "global-batch-size", "%lld", j->gbs);
	n = add(o, n, "seq-length", "%lld", j->seq);
	n = add(o, n, "bf16", NULL, 0);
	if (j->precision == MT_PREC_FP8) {
		n = adds(o, n, "fp8-format", "hybrid");
		n = adds(o, n, "fp8-recipe", mt_fp8_recipe_name(j->fp8_recipe));
	}
	if (c->dist_opt) {
		n = add(o, n, "use-distributed-optimizer", NULL, 0);
		if (c->overlap_param)
			n = add(o, n, "overlap-param-gather", NULL, 0);
	}
	if (c->overlap_grad)
		n = add(o, n, "overlap-grad-reduce", NULL, 0);
	if (c->bucket_params > 0)
		n = add(o, n, "ddp-bucket-size", "%lld", c->bucket_params);
	if (!c->grad_fp32)
		n = add(o, n, "grad-reduce-in-bf16", NULL, 0);
	if (c->tp_overlap && c->sp)
		n = add(o, n, "tp-comm-overlap", NULL, 0);
	if (c->recompute == MT_RC_SELECTIVE) {
		n = adds(o, n, "recompute-granularity", "selective");
	} else if (c->recompute == MT_RC_FULL) {
		n = adds(o, n, "recompute-granularity", "full");
		n = adds(o, n, "recompute-method", "block");
		n = add(o, n, "recompute-num-layers", "%lld", c->recompute_layers);
	}
	/* No --cpu-offloading: TransformerConfig's cpu_offloading and
	 * cpu_offloading_activations/_weights are excluded from the command
	 * line; validate_args sets cpu_offloading from the number of layers
	 * (Megatron-LM megatron/training/arguments.py @ d98e8a64dd, lines
	 * 1950-1951 and 2320-2322; activations are offloaded by default,
	 * megatron/core/model_parallel_config.py line 471). */
	if (c->offload_layers > 0)
		n = add(o, n, "cpu-offloading-num-layers", "%lld", c->offload_layers);
	if (c->fused_ce)
		n = add(o, n, "cross-entropy-loss-fusion", NULL, 0);
	n = adds(o, n, "attention-backend", j->attn_impl == MT_ATTN_FLASH ? "fused" : "unfused");
	return n;
}

/* Bridge's named precision recipes (Megatron-Bridge
 * src/megatron/bridge/training/mixed_precision.py @ 067f987df0): the FP8 ones
 * set fp8_param_gather = True themselves (lines 231 and 302), and no
 * mixed_precision.* override may follow the name: after mixed_precision=<name>
 * the node is a string. */
static const char *precision_recipe(const struct mt_job *j)
{
	if (j->precision != MT_PREC_FP8)
		return "bf16_mixed";
	return j->fp8_recipe == MT_FP8_TENSORWISE ? "bf16_with_fp8_current_scaling_mixed"
						  : "bf16_with_fp8_delayed_scaling_mixed";
}

/* A note: a comment line of the output, not an item (flags.h). */
static int note(struct mt_kv *o, int n, const char *about, const char *text)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "#%s", about);
	snprintf(o[n].val, sizeof(o[n].val), "%s", text);
	return n + 1;
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
		 precision_recipe(j));
	return note(o, n, "mixed_precision.grad_reduce_in_fp32", t);
}

/* An enum through Bridge's overrides: a dict with _target_ is instantiated
 * (src/megatron/bridge/training/utils/omegaconf_utils.py @ 067f987df0, lines
 * 478-484); with _call_ false the target is returned as is (Megatron-LM
 * megatron/training/config/instantiate_utils.py @ d98e8a64dd, lines 290-305),
 * and megatron.core. is an allowed prefix (line 44).  A plain string such as
 * "fused" stays a string, which no AttnBackend comparison matches. */
#define ATTN_TARGET(b) "{_target_:megatron.core.transformer.enums.AttnBackend." b ",_call_:false}"

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

int mt_bridge_overrides(const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *c, struct mt_kv *o)
{
	int n = 0;

	n = add(o, n, "model.tensor_model_parallel_size", "%lld", c->tp);
	n = add(o, n, "model.pipeline_model_parallel_size", "%lld", c->pp);
	if (c->vpp > 1)
		n = add(o, n, "model.virtual_pipeline_model_parallel_size", "%lld", c->vpp);
	else
		n = adds(o, n, "model.virtual_pipeline_model_parallel_size", "null");
	if (c->split == MT_SPLIT_ACCOUNT) {
		n = adds(o, n, "model.account_for_embedding_in_pipeline_split", "true");
		n = adds(o, n, "model.account_for_loss_in_pipeline_split", "true");
	} else if (c->split == MT_SPLIT_ACCOUNT_LOSS) {
		n = adds(o, n, "model.account_for_loss_in_pipeline_split", "true");
	} else if (c->split == MT_SPLIT_FIRST_LAST) {
		n = add(o, n, "model.num_layers_in_first_pipeline_stage", "%lld", c->first_layers);
		n = add(o, n, "model.num_layers_in_last_pipeline_stage", "%lld", c->last_layers);
	}
	n = add(o, n, "model.context_parallel_size", "%lld", c->cp);
	if (c->cp > 1) {
		n = adds(o, n, "model.cp_comm_type", mt_cp_comm_name(c->cp_comm));
		if (c->cp_comm == MT_CP_A2A_P2P && c->cp_a2a > 0) {
			char v[64];
			snprintf(v, sizeof(v), "[%d,%d]", c->cp_a2a, c->cp / c->cp_a2a);
			n = adds(o, n, "model.hierarchical_context_parallel_sizes", v);
		}
	}
	if (m->experts) {
		n = add(o, n, "model.expert_model_parallel_size", "%lld", c->ep);
		n = add(o, n, "model.expert_tensor_parallel_size", "%lld", c->etp);
	}
	if (m->experts) {
		n = adds(o, n, "model.moe_token_dispatcher_type",
			 j->moe_dispatcher == MT_DISPATCH_FLEX ? "flex" : "alltoall");
		if (j->moe_dispatcher == MT_DISPATCH_FLEX)
			n = adds(o, n, "model.moe_flex_dispatcher_backend", "deepep");
	}
	n = adds(o, n, "model.sequence_parallel", c->sp ? "true" : "false");
	n = add(o, n, "train.micro_batch_size", "%lld", c->mbs);
	n = add(o, n, "train.global_batch_size", "%lld", j->gbs);
	n = add(o, n, "model.seq_length", "%lld", j->seq);
	n = add(o, n, "dataset.seq_length", "%lld", j->seq);
	n = adds(o, n, "mixed_precision", precision_recipe(j));
	n = adds(o, n, "ddp.use_distributed_optimizer", c->dist_opt ? "true" : "false");
	n = adds(o, n, "optimizer.use_distributed_optimizer", c->dist_opt ? "true" : "false");
	n = adds(o, n, "ddp.overlap_grad_reduce", c->overlap_grad ? "true" : "false");
	n = adds(o, n, "ddp.overlap_param_gather", c->dist_opt && c->overlap_param ? "true" : "false");
	if (c->bucket_params > 0)
		n = add(o, n, "ddp.bucket_size", "%lld", c->bucket_params);
	if (!c->grad_fp32)
		n = grad_reduce_note(o, n, j);
	if (c->tp_overlap && c->sp)
		n = adds(o, n, "comm_overlap.tp_comm_overlap", "true");
	if (c->recompute == MT_RC_SELECTIVE) {
		n = adds(o, n, "model.recompute_granularity", "selective");
	} else if (c->recompute == MT_RC_FULL) {
		n = adds(o, n, "model.recompute_granularity", "full");
		n = adds(o, n, "model.recompute_method", "block");
		n = add(o, n, "model.recompute_num_layers", "%lld", c->recompute_layers);
	}
	if (c->offload_layers > 0) {
		n = adds(o, n, "model.cpu_offloading", "true");
		n = add(o, n, "model.cpu_offloading_num_layers", "%lld", c->offload_layers);
	}
	n = adds(o, n, "model.cross_entropy_loss_fusion", c->fused_ce ? "true" : "false");
	n = adds(o, n, "model.attention_backend",
		 j->attn_impl == MT_ATTN_FLASH ? ATTN_TARGET("fused") : ATTN_TARGET("unfused"));
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

/* A word the shell would expand or split (a brace list, a comma inside one,
 * a space) goes in single quotes; none of the values has a quote itself. */
void mt_shell_word(struct sbuf *sb, const char *s)
{
	if (s[strcspn(s, " {},$*?[]'\"\\;&|<>()`!~")])
		sbuf_addf(sb, "'%s'", s);
	else
		sbuf_adds(sb, s);
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
			if (kv[i].val[0])
				sbuf_addf(sb, " %s", kv[i].val);
		} else {
			snprintf(buf, sizeof(buf), "%s=%s", kv[i].key, kv[i].val[0] ? kv[i].val : "true");
			mt_shell_word(sb, buf);
		}
	}
}
