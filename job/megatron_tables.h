/* SPDX-License-Identifier: MIT */
/* megatron_tables: the flags both job/megatron.c (what a flag is to megatune, the
 * typos) and job/megatron_job.c (a whole job) read, private to those two files: the
 * model's flags as megatune.model/1 keys, and the flags that turn off a fusion.
 * Each file holds its own copy of the tables (static). */
#ifndef MT_JOB_MEGATRON_TABLES_H
#define MT_JOB_MEGATRON_TABLES_H

#include <stddef.h>

#include "../perfmodel/eager.h"

/* The model flags, as megatune.model/1 keys (Megatron-LM's argparse fields;
 * perfmodel/model.c reads them with Megatron-LM's defaults). */
static const struct {
	const char *key;
	char type; /* i integer, n number, b store_true, s string */
} model_keys[] = {
	{ "hidden_size", 'i' }, { "num_layers", 'i' }, { "num_attention_heads", 'i' },
	{ "kv_channels", 'i' }, { "ffn_hidden_size", 'i' },
	{ "max_position_embeddings", 'i' }, { "swiglu", 'b' }, { "normalization", 's' },
	{ "untie_embeddings_and_output_weights", 'b' }, { "add_qkv_bias", 'b' },
	{ "qk_layernorm", 'b' }, { "hidden_dropout", 'n' }, { "attention_dropout", 'n' },
	{ "multi_latent_attention", 'b' }, { "q_lora_rank", 'i' }, { "kv_lora_rank", 'i' },
	{ "qk_head_dim", 'i' }, { "qk_pos_emb_head_dim", 'i' }, { "v_head_dim", 'i' },
	{ "num_experts", 'i' }, { "moe_router_topk", 'i' }, { "moe_ffn_hidden_size", 'i' },
	{ "moe_shared_expert_intermediate_size", 'i' }, { "moe_router_enable_expert_bias", 'b' },
	{ "mtp_num_layers", 'i' }, { "rotary_base", 'n' }, { "norm_epsilon", 'n' },
	{ "moe_aux_loss_coeff", 'n' }, { "moe_router_score_function", 's' },
	{ "moe_router_pre_softmax", 'b' }, { "moe_router_topk_scaling_factor", 'n' },
	{ "moe_router_num_groups", 'i' }, { "moe_router_group_topk", 'i' },
	{ "moe_shared_expert_gate", 'b' },
};

/* Flags that turn off a fusion Megatron-LM makes by default.  With Megatron-LM's
 * own layers (--transformer-impl local) the model times the eager ops each
 * leaves (mt_job fusions_off, docs/MODEL.md 4.11); with Transformer Engine's
 * it times the fused kernels (the rules masked-softmax-fusion, bias-fusions
 * and rope-fusion), so such a job runs slower than timed
 * (--no-gradient-accumulation-fusion is timed: mt_job grad_accum_fusion). */
/* The fusion each flag turns off (perfmodel/eager.h). */
static const struct {
	const char *flag;
	int bit;
} fusion_bits[] = {
	{ "no-masked-softmax-fusion", MT_FU_MASKED_SOFTMAX },
	{ "no-bias-gelu-fusion", MT_FU_BIAS_ACT },
	{ "no-bias-swiglu-fusion", MT_FU_BIAS_ACT },
	{ "no-bias-dropout-fusion", MT_FU_BIAS_DROPOUT },
	{ "no-rope-fusion", MT_FU_ROPE },
	{ NULL, 0 },
};

#endif
