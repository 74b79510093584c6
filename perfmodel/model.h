/* SPDX-License-Identifier: MIT */
/* model: transformer architectures, read from a Hugging Face config.json, a
 * megatune model JSON, or a bundled name; parameter counts and FLOP counts.
 *
 * A `struct mt_model` is a plain record with no heap pointers: it can be
 * copied, compared and kept on the stack.  mt_model_load() fills it and calls
 * mt_model_finish(), which validates the dimensions and computes the derived
 * parameter counts.  Formulas are documented in docs/MODEL.md section 1.
 */
#ifndef MT_MODEL_H
#define MT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "../lib/err.h"

#define MT_MAX_LAYERS 1024
#define MT_MODEL_NOTES 4

enum mt_norm_kind {
	MT_NORM_RMS = 1,   /* weight only */
	MT_NORM_LAYER = 2, /* weight and bias */
};

/* RoPE scaling a Hugging Face config states (rope_scaling.rope_type) */
enum mt_rope_scaling { MT_ROPE_NONE, MT_ROPE_LLAMA3, MT_ROPE_YARN, MT_ROPE_LINEAR, MT_ROPE_OTHER };

struct mt_model {
	char name[128];
	char source[256];  /* "bundled" or the path it was read from */
	char format[16];   /* "hf" or "megatune" */
	char arch[48];     /* Hugging Face model_type, or "gpt" */

	int hidden;        /* h */
	int layers;        /* L, transformer layers (MTP excluded) */
	int heads;         /* a, query heads */
	int kv_heads;      /* g, key/value heads (== heads for MHA) */
	int head_dim;      /* d (Megatron kv_channels) */
	int ffn;           /* dense MLP intermediate size */
	int vocab;         /* unpadded vocabulary */
	int max_pos;
	char max_pos_key[32]; /* the field max_pos was read from ("" if none) */
	int max_seq;       /* longest training sequence the config states: max_pos, or
			    * more under RoPE scaling (docs/MODEL.md 1.1); 0: not checked */
	int window;        /* sliding-window attention span in tokens; 0: full attention */
	int gated;         /* gated MLP (SwiGLU): three matrices */
	int norm;          /* enum mt_norm_kind */
	int tied;          /* output layer shares the input embedding */
	int qkv_bias;      /* bias on the QKV projection */
	int linear_bias;   /* bias on every linear layer (GPT-2/3) */
	int qk_norm;       /* RMSNorm on q and k per head (Qwen3) */
	int learned_pos;   /* learned absolute position embedding */
	int no_pos;        /* no position embedding at all (else RoPE) */
	double dropout;    /* hidden dropout probability */
	double attn_dropout;
	/* what the training run must be told so that it trains this model
	 * (job/flags.c prints them); 0 or -1: the config does not say */
	double rope_base;  /* RoPE base (rope_theta); 0: not stated, Megatron's 10000 */
	int rope_scaling;  /* enum mt_rope_scaling */
	char rope_type[24]; /* rope_scaling.rope_type as the config spells it */
	double rope_factor;      /* llama3, yarn: the scaling factor */
	int rope_orig_max;       /* yarn: original_max_position_embeddings */
	double yarn_mscale, yarn_mscale_all_dim;
	double yarn_beta_fast, yarn_beta_slow; /* yarn: 0 when not stated (32 and 1) */
	double norm_eps;   /* epsilon of the norms (rms_norm_eps); 0: not stated */
	double aux_coef;   /* the router's load-balancing loss coefficient; -1: not stated */
	int seq_aux;       /* DeepSeek's sequence-wise auxiliary loss */

	/* multi-latent attention (DeepSeek-V2/V3) */
	int mla;
	int q_lora_rank;   /* 0: queries are projected directly */
	int kv_lora_rank;
	int qk_nope_dim;
	int qk_rope_dim;
	int v_head_dim;

	/* mixture of experts */
	int experts;       /* E routed experts, 0 for a dense model */
	int topk;
	int moe_ffn;       /* intermediate size of one routed expert */
	int shared_ffn;    /* total intermediate size of the shared experts, 0 if none */
	int router_bias;   /* per-expert score bias (DeepSeek-V3 aux-loss-free routing) */
	int router_sigmoid; /* sigmoid scores (DeepSeek-V3 scoring_func), else softmax */
	int router_pre_softmax; /* softmax over all experts, top-k weights not renormalised
				 * (norm_topk_prob false: DeepSeek-V2, Qwen1.5-MoE) */
	double router_scale; /* routed_scaling_factor; 0: not stated (1) */
	int router_groups, router_group_topk; /* group-limited routing (n_group, topk_group) */
	int shared_gate;   /* a sigmoid gate on the shared experts' output (Qwen2-MoE) */
	int moe_layers;    /* number of MoE layers (derived from is_moe) */
	unsigned char is_moe[MT_MAX_LAYERS];
	int mtp_layers;    /* multi-token-prediction depth */

	/* notes on what the reader accepted but the config does not state plainly,
	 * for the command to print as warnings; they never stop the reading */
	int nnotes;
	char notes[MT_MODEL_NOTES][256];
	/* fields not read that resemble one read and absent (a typo:
	 * "FILE: unknown field 'x': did you mean 'y'? ..."), for the command to
	 * warn of, and refuse under --strict */
	int ntypo;
	char typo[MT_MODEL_NOTES][384];

	/* derived by mt_model_finish() */
	int64_t params_total;     /* without MTP, as model cards count */
	int64_t params_active;    /* per token: top-k routed experts only */
	int64_t params_embedding; /* input embedding (+ output layer when untied) */
	int64_t params_mtp;       /* MTP modules (not in params_total) */
};

/* Load `spec`: a path to a JSON file (any argument containing '/' or ending in
 * ".json", or an existing file), otherwise a bundled model name; a Hugging
 * Face repository id that names no file here (meta-llama/Meta-Llama-3-8B)
 * loads the bundled model it stands for (mt_model_bundled_for), under the
 * bundled name. */
int mt_model_load(const char *spec, struct mt_model *m, struct mt_error *err);

/* The bundled model a Hugging Face repository id stands for: the repository
 * each bundled model copies its config.json from (compared without regard to
 * case), else the id's last part in lower case when a bundled model has that
 * name (Qwen/Qwen3-30B-A3B); NULL when none.  The name may be written into
 * buf[cap]. */
const char *mt_model_bundled_for(const char *id, char *buf, size_t cap);

/* Fill `m` from a parsed JSON document; `file` names it in messages.  Detects
 * the format: {"schema": "megatune.model/1", ...} or a Hugging Face config. */
int mt_model_from_json(const cJSON *root, const char *file, struct mt_model *m,
		       struct mt_error *err);

/* Check a training sequence of `seq` tokens against the model: an error
 * (MT_EINVAL) for what Megatron-LM would refuse or megatune cannot model (a
 * sequence past learned position embeddings, a sliding window shorter than
 * the sequence); a note in note[cap] (empty when none) for what runs but
 * departs from the model as published. */
int mt_model_check_seq(const struct mt_model *m, int seq, char *note, size_t cap,
		       struct mt_error *err);

/* Validate and compute the derived fields. */
int mt_model_finish(struct mt_model *m, const char *file, struct mt_error *err);

/* --- per-layer parameter counts (elements) --- */
int64_t mt_model_attn_params(const struct mt_model *m);      /* projections (+ biases) */
int64_t mt_model_attn_tp_params(const struct mt_model *m);   /* the part split by TP */
int64_t mt_model_norm_params(const struct mt_model *m);      /* per layer, replicated */
int64_t mt_model_dense_mlp_params(const struct mt_model *m);
int64_t mt_model_expert_params(const struct mt_model *m);    /* one routed expert */
int64_t mt_model_shared_params(const struct mt_model *m);    /* all shared experts */
int64_t mt_model_router_params(const struct mt_model *m);
/* Vocabulary padded as Megatron does: a multiple of 128 * tp. */
int mt_model_padded_vocab(const struct mt_model *m, int tp);

/* --- FLOPs --- */
enum mt_flops_conv {
	/* Megatron-LM today: model FLOPs, causal attention counted once (halved). */
	MT_FLOPS_MEGATRON = 0,
	/* Model FLOPs with the full s^2 attention (Megatron-Core <= r0.8, NeMo 24.x). */
	MT_FLOPS_FULL_ATTN = 1,
	/* Narayanan et al. SC21 eq. (3): full attention plus the recomputation
	 * forward pass (full activation recomputation). */
	MT_FLOPS_SC21 = 2,
};

/* Model FLOPs of one training step (forward and backward) over `gbs`
 * sequences of `seq` tokens, with the vocabulary padded to `pvocab`. */
double mt_model_step_flops(const struct mt_model *m, double gbs, int seq, int pvocab,
			   enum mt_flops_conv conv);

const char *mt_flops_conv_name(enum mt_flops_conv c);
int mt_flops_conv_parse(const char *s, enum mt_flops_conv *out);

#endif
