/* SPDX-License-Identifier: MIT */
/* model_read: the two config readers of perfmodel/model.c's
 * mt_model_from_json(): a Hugging Face config.json (the families it reads,
 * by model_type, with what their config classes assume; the architectures
 * it refuses; RoPE, router, sliding window) and a megatune.model/1 file
 * (Megatron-LM argument names).  Each fills the record; model.c then
 * validates and counts it (mt_model_finish). */
#include "model_int.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/near.h"
#include "../lib/sbuf.h"

#define INT_MAXV 0x7fffffff
/* Largest width, head count or vocabulary accepted: far above any real model,
 * small enough that products of two stay exact in 64-bit arithmetic. */
#define MT_MAX_DIM (1 << 24)

/* ---------------------------------------------------------------- readers */

/* First of several alternative keys that is present. */
static const char *model_pick(const cJSON *o, const char *const *keys)
{
	for (; *keys; keys++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, *keys);
		if (v && !cJSON_IsNull(v))
			return *keys;
	}
	return NULL;
}

#define KEYS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static int get_int_any(const struct mt_jpos *at, const cJSON *o, const char *const *keys,
		       int required, int lo, int *out, struct mt_error *err)
{
	const char *k = model_pick(o, keys);

	if (!k) {
		if (!required)
			return 0;
		return mt_error_set(err, MT_EINVAL, "%s: missing field '%s': expected an integer",
				    at->file, keys[0]);
	}
	return mt_jint32(at, o, k, 1, lo, MT_MAX_DIM, out, err);
}

static int get_num_any(const struct mt_jpos *at, const cJSON *o, const char *const *keys,
		       double lo, double hi, double *out, struct mt_error *err)
{
	const char *k = model_pick(o, keys);

	return k ? mt_jnum(at, o, k, 1, lo, hi, out, err) : 0;
}

static int str_in(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return 1;
	return 0;
}

/* The model families of Hugging Face config.json files, by model_type: what
 * their configuration classes assume when a field is absent.  A family not
 * listed is refused (hf_check_arch()): its layers may not be a decoder
 * megatune models.  Adding a family is one line. */
struct hf_family {
	const char *type;
	unsigned gated : 1;        /* SwiGLU-style gated MLP */
	unsigned tied : 1;         /* tie_word_embeddings when absent */
	unsigned linear_bias : 1;  /* biases on every linear layer (GPT-2) */
	unsigned qkv_bias : 1;     /* attention_bias when absent */
	unsigned qk_norm : 1;      /* RMSNorm on queries and keys */
	unsigned moe_dense_first : 1; /* MoE layers: first_k_dense_replace, moe_layer_freq */
	unsigned all_moe : 1;      /* every MLP is a MoE layer (no dense ffn) */
};

static const struct hf_family hf_families[] = {
	/* type            gated tied bias qkvb qkn  dense1 allmoe */
	{ "llama",          1,   0,   0,   0,   0,   0,     0 },
	{ "mistral",        1,   0,   0,   0,   0,   0,     0 },
	{ "mixtral",        1,   0,   0,   0,   0,   0,     1 },
	{ "qwen2",          1,   0,   0,   1,   0,   0,     0 },
	{ "qwen2_moe",      1,   0,   0,   1,   0,   0,     0 },
	{ "qwen3",          1,   0,   0,   0,   1,   0,     0 },
	{ "qwen3_moe",      1,   0,   0,   0,   1,   0,     0 },
	{ "deepseek_v2",    1,   0,   0,   0,   0,   1,     0 },
	{ "deepseek_v3",    1,   0,   0,   0,   0,   1,     0 },
	{ "gpt2",           0,   1,   1,   0,   0,   0,     0 },
	{ "gpt_neox",       0,   1,   0,   0,   0,   0,     0 },
	{ "gptj",           0,   1,   0,   0,   0,   0,     0 },
	{ "opt",            0,   1,   0,   0,   0,   0,     0 },
	{ "bloom",          0,   1,   0,   0,   0,   0,     0 },
	{ "gpt_bigcode",    0,   1,   0,   0,   0,   0,     0 },
	{ "falcon",         0,   1,   0,   0,   0,   0,     0 },
	{ "starcoder2",     0,   1,   0,   0,   0,   0,     0 },
	{ "phi",            0,   1,   0,   0,   0,   0,     0 },
	{ NULL,             0,   0,   0,   0,   0,   0,     0 },
};

static const struct hf_family *hf_family_of(const char *type)
{
	const struct hf_family *f = hf_families;

	while (f->type && strcmp(f->type, type))
		f++;
	return f;
}

/* Architectures the cost model does not describe, by model_type: refused by
 * name rather than read as a decoder-only transformer (docs/MODEL.md 1.1). */
static const char *const hf_encdec_types[] = {
	"t5", "mt5", "umt5", "longt5", "switch_transformers", "bart", "mbart", "pegasus",
	"pegasus_x", "marian", "led", "plbart", "prophetnet", "bigbird_pegasus", "whisper", NULL,
};
static const char *const hf_ssm_types[] = {
	"mamba", "mamba2", "falcon_mamba", "jamba", "zamba", "zamba2", "bamba", "nemotron_h",
	"falcon_h1", "granitemoehybrid", "recurrent_gemma", "rwkv", "qwen3_next", NULL,
};

static int unsupported(struct mt_error *err, const char *file, const char *field,
		       const char *what)
{
	return mt_error_set(err, MT_EINVAL, "%s: field '%s': %s; megatune models decoder-only "
			    "transformers with full (or wide enough sliding-window) attention, see "
			    "docs/MODEL.md section 1.1", file, field, what);
}

/* Refuse what would be misread: encoder-decoder and state-space models,
 * logit soft-capping, per-layer attention kinds other than full and sliding
 * window, and any model_type outside hf_families. */
static int hf_check_arch(const cJSON *o, const char *file, const char *type,
			 const char *field, struct mt_error *err)
{
	static const char *const caps[] = { "attn_logit_softcapping", "final_logit_softcapping",
					    NULL };
	const cJSON *v, *e;
	size_t i;

	v = cJSON_GetObjectItemCaseSensitive(o, "is_encoder_decoder");
	if (cJSON_IsTrue(v))
		return unsupported(err, file, "is_encoder_decoder",
				   "true: an encoder-decoder model (T5, BART) is not modelled");
	if (str_in(type, hf_encdec_types) || str_in(type, hf_ssm_types)) {
		char what[160];

		snprintf(what, sizeof(what), "\"%s\" is %s", type, str_in(type, hf_ssm_types) ?
			 "a state-space (Mamba) or recurrent architecture, not modelled" :
			 "an encoder-decoder architecture (T5, BART), not modelled");
		return unsupported(err, file, field, what);
	}
	cJSON_ArrayForEach(v, o) {
		if (cJSON_IsNull(v) || (strncmp(v->string, "ssm_", 4) &&
					strncmp(v->string, "mamba_", 6) &&
					strcmp(v->string, "hybrid_override_pattern")))
			continue;
		return unsupported(err, file, v->string,
				   "state-space (Mamba) layers are not modelled");
	}
	for (i = 0; caps[i]; i++) {
		v = cJSON_GetObjectItemCaseSensitive(o, caps[i]);
		if (v && !cJSON_IsNull(v) && !(cJSON_IsNumber(v) && v->valuedouble == 0))
			return unsupported(err, file, caps[i],
					   "logit soft-capping is not in Megatron-Core's "
					   "TransformerConfig, so no printed configuration trains "
					   "this model");
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "layer_types");
	if (!cJSON_IsArray(v))
		v = NULL;
	i = 0;
	cJSON_ArrayForEach(e, v) {
		if (!cJSON_IsString(e) || (strcmp(e->valuestring, "full_attention") &&
					   strcmp(e->valuestring, "sliding_attention"))) {
			char f[48];

			snprintf(f, sizeof(f), "layer_types[%zu]", i);
			return unsupported(err, file, f, "only full_attention and "
					   "sliding_attention layers are modelled");
		}
		i++;
	}
	if (!hf_family_of(type)->type) {
		struct sbuf names = SBUF_INIT;
		const struct hf_family *f;
		int rc;

		for (f = hf_families; f->type; f++)
			sbuf_addf(&names, "%s%s", f == hf_families ? "" : ", ", f->type);
		rc = mt_error_set(err, MT_EINVAL,
				  "%s: field '%s': \"%s\" is not a family megatune reads "
				  "(%s); its layers may differ from a Llama-style decoder, so it "
				  "is refused rather than guessed (write a megatune model JSON, "
				  "docs/FORMATS.md)", file, field, type, names.buf);
		sbuf_release(&names);
		return rc;
	}
	return MT_OK;
}

/* Sliding-window attention as Hugging Face configs state it: `sliding_window`
 * applies unless `use_sliding_window` is false (Qwen2/3) or `layer_types`
 * names no sliding_attention layer. */
static int hf_window(const cJSON *o, const char *file, struct mt_model *m, struct mt_error *err)
{
	struct mt_jpos at = { file, "" };
	const cJSON *lt, *e;
	int rc, use = 1, any = 0;

	if ((rc = get_int_any(&at, o, KEYS("sliding_window"), 0, 0, &m->window, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "use_sliding_window", 0, &use, err)) < 0)
		return rc;
	lt = cJSON_GetObjectItemCaseSensitive(o, "layer_types");
	if (cJSON_IsArray(lt)) {
		cJSON_ArrayForEach(e, lt)
			any |= cJSON_IsString(e) && !strcmp(e->valuestring, "sliding_attention");
		use = use && any;
	}
	if (!use)
		m->window = 0;
	return MT_OK;
}

/* The longest sequence the config states.  Hugging Face configs with RoPE
 * scaling give the extended length in max_position_embeddings when
 * rope_scaling has original_max_position_embeddings (Llama 3.1's "llama3",
 * DeepSeek-V3's "yarn") or the config has it at the top level (Phi-3's
 * "longrope"); without it, "linear" and "yarn" scale max_position_embeddings
 * itself by `factor` (transformers, modeling_rope_utils.py:
 * _compute_linear_scaling_rope_parameters, _compute_yarn_parameters). */
static int hf_rope_limit(const cJSON *o, const char *file, struct mt_model *m,
			 struct mt_error *err)
{
	const char *key = model_pick(o, KEYS("rope_scaling", "rope_parameters"));
	const cJSON *rs = key ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	struct mt_jpos at = { file, key };
	const char *tk;
	char type[32] = "";
	double factor = 1, lim;
	int rc;

	m->max_seq = m->max_pos;
	if (!m->max_pos || !cJSON_IsObject(rs))
		return MT_OK;
	tk = model_pick(rs, KEYS("rope_type", "type"));
	if ((tk && (rc = mt_jstr(&at, rs, tk, 0, type, sizeof(type), err)) < 0) ||
	    (rc = mt_jnum(&at, rs, "factor", 0, 1e-6, 1e6, &factor, err)) < 0)
		return rc;
	if (model_pick(rs, KEYS("original_max_position_embeddings")) ||
	    model_pick(o, KEYS("original_max_position_embeddings")))
		return MT_OK;
	if (!strcmp(type, "dynamic") && factor > 1 && m->nnotes < MT_MODEL_NOTES)
		snprintf(m->notes[m->nnotes++], sizeof(m->notes[0]),
			 "%s: field '%s.rope_type': \"dynamic\" NTK scaling applies at inference "
			 "only; the training limit is max_position_embeddings %d", file, key,
			 m->max_pos);
	if ((strcmp(type, "linear") && strcmp(type, "yarn")) || factor <= 1)
		return MT_OK;
	lim = floor(factor * m->max_pos);
	m->max_seq = lim > (double)INT_MAXV ? INT_MAXV : (int)lim;
	return MT_OK;
}

/* What the run must be told to train this model: the RoPE base and scaling,
 * the norms' epsilon, the router's auxiliary loss (transformers' config
 * fields: rope_theta, rope_scaling, rms_norm_eps / layer_norm_eps[ilon],
 * router_aux_loss_coef / aux_loss_alpha and seq_aux). */
static int hf_numerics(const cJSON *o, const char *file, struct mt_model *m,
		       struct mt_error *err)
{
	const char *key = model_pick(o, KEYS("rope_scaling", "rope_parameters")), *tk;
	const cJSON *rs = key ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
	struct mt_jpos at = { file, "" }, rat = { file, key };
	char type[32] = "";
	double orig = 0;
	int rc;

	m->aux_coef = -1;
	if ((rc = get_num_any(&at, o, KEYS("rope_theta"), 1, 1e12, &m->rope_base, err)) < 0 ||
	    (rc = get_num_any(&at, o, KEYS("rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps"),
			      1e-12, 1, &m->norm_eps, err)) < 0 ||
	    (rc = get_num_any(&at, o, KEYS("router_aux_loss_coef", "aux_loss_alpha"), 0, 100,
			      &m->aux_coef, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "seq_aux", 0, &m->seq_aux, err)) < 0)
		return rc;
	/* rope_parameters (transformers 5) holds rope_theta too */
	if (cJSON_IsObject(rs) && !m->rope_base &&
	    (rc = get_num_any(&rat, rs, KEYS("rope_theta"), 1, 1e12, &m->rope_base, err)) < 0)
		return rc;
	if (!cJSON_IsObject(rs) || !(tk = model_pick(rs, KEYS("rope_type", "type"))))
		return MT_OK;
	if ((rc = mt_jstr(&rat, rs, tk, 0, type, sizeof(type), err)) < 0 ||
	    (rc = get_num_any(&rat, rs, KEYS("factor"), 1e-6, 1e6, &m->rope_factor, err)) < 0 ||
	    (rc = get_num_any(&rat, rs, KEYS("original_max_position_embeddings"), 1, 1 << 30, &orig,
			      err)) < 0 ||
	    (rc = get_num_any(&rat, rs, KEYS("mscale"), 0, 1e3, &m->yarn_mscale, err)) < 0 ||
	    (rc = get_num_any(&rat, rs, KEYS("mscale_all_dim"), 0, 1e3, &m->yarn_mscale_all_dim,
			      err)) < 0 ||
	    (rc = get_num_any(&rat, rs, KEYS("beta_fast"), 1e-6, 1e6, &m->yarn_beta_fast, err)) < 0 ||
	    (rc = get_num_any(&rat, rs, KEYS("beta_slow"), 1e-6, 1e6, &m->yarn_beta_slow, err)) < 0)
		return rc;
	m->rope_orig_max = (int)orig;
	m->rope_scaling = !strcmp(type, "llama3") ? MT_ROPE_LLAMA3 : !strcmp(type, "yarn") ?
			  MT_ROPE_YARN : !strcmp(type, "linear") ? MT_ROPE_LINEAR :
			  !strcmp(type, "default") ? MT_ROPE_NONE : MT_ROPE_OTHER;
	snprintf(m->rope_type, sizeof(m->rope_type), "%s", type);
	return MT_OK;
}

/* A config without model_type names its class in `architectures`
 * (transformers' modeling class, e.g. "Qwen3NextForCausalLM"): its family is
 * the class name before "For" or "LMHead", lower-cased with an underscore
 * before each inner capital that follows a lower-case letter or digit
 * ("Qwen3Next" -> "qwen3_next", "DeepseekV3" -> "deepseek_v3", "Qwen2Moe" ->
 * "qwen2_moe"), with the few that transformers spells otherwise listed.  No
 * architectures field leaves arch empty. */
static int hf_arch_from_class(const cJSON *o, const char *file, char *arch, size_t cap,
			      struct mt_error *err)
{
	static const char *const odd[][2] = {
		{ "GPT2", "gpt2" }, { "GPTJ", "gptj" }, { "GPTNeoX", "gpt_neox" },
		{ "GPTBigCode", "gpt_bigcode" }, { "OPT", "opt" }, { NULL, NULL },
	};
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, "architectures"), *e;
	char stem[48];
	size_t i, n, len = 0;
	const char *s, *end;

	if (!a || cJSON_IsNull(a))
		return MT_OK;
	e = cJSON_IsArray(a) ? cJSON_GetArrayItem(a, 0) : NULL;
	if (!cJSON_IsString(e) || !e->valuestring[0])
		return mt_error_set(err, MT_EINVAL, "%s: field 'architectures': expected an array of "
				    "class names such as [\"LlamaForCausalLM\"]", file);
	s = e->valuestring;
	end = strstr(s, "For");
	if (!end)
		end = strstr(s, "LMHead");
	n = end ? (size_t)(end - s) : strlen(s);
	if (n == 0 || n >= sizeof(stem))
		return mt_error_set(err, MT_EINVAL, "%s: field 'architectures': \"%s\" is not a "
				    "transformers model class name", file, s);
	memcpy(stem, s, n);
	stem[n] = '\0';
	for (i = 0; odd[i][0]; i++)
		if (!strcmp(stem, odd[i][0])) {
			snprintf(arch, cap, "%s", odd[i][1]);
			return MT_OK;
		}
	for (i = 0; i < n && len + 2 < cap; i++) {
		unsigned char c = (unsigned char)stem[i];

		if (i > 0 && isupper(c) && (islower((unsigned char)stem[i - 1]) ||
					    isdigit((unsigned char)stem[i - 1])))
			arch[len++] = '_';
		arch[len++] = (char)tolower(c);
	}
	arch[len] = '\0';
	return MT_OK;
}

/* How the router turns scores into weights, as transformers' MoE classes
 * do it: the score function (DeepSeek's scoring_func: "softmax" or
 * "sigmoid"), whether the top-k weights are renormalised (norm_topk_prob;
 * its class default: false for Qwen2-MoE, Qwen3-MoE and DeepSeek-V2, true for
 * DeepSeek-V3; Mixtral always renormalises), the scaling of the routed
 * output (routed_scaling_factor), group-limited routing (n_group,
 * topk_group) and Qwen2-MoE's sigmoid gate on the shared experts
 * (Qwen2MoeSparseMoeBlock.shared_expert_gate).  Megatron-LM's router
 * (megatron/core/transformer/moe/moe_utils.py topk_routing_with_score_function
 * @ d98e8a64dd) renormalises softmax weights unless --moe-router-pre-softmax
 * and always renormalises sigmoid ones. */
static int hf_router(const cJSON *o, const char *file, const struct hf_family *fam,
		     struct mt_model *m, struct mt_error *err)
{
	struct mt_jpos at = { file, "" };
	char score[16] = "softmax", method[32] = "";
	int rc, norm = !strcmp(m->arch, "deepseek_v3") || fam->all_moe;

	if ((rc = mt_jstr(&at, o, "scoring_func", 0, score, sizeof(score), err)) < 0 ||
	    (rc = mt_jbool(&at, o, "norm_topk_prob", 0, &norm, err)) < 0 ||
	    (rc = get_num_any(&at, o, KEYS("routed_scaling_factor"), 1e-6, 1e6, &m->router_scale,
			      err)) < 0 ||
	    (rc = mt_jstr(&at, o, "topk_method", 0, method, sizeof(method), err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("n_group"), 0, 1, &m->router_groups, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("topk_group"), 0, 1, &m->router_group_topk, err)) < 0)
		return rc;
	if (strcmp(score, "softmax") && strcmp(score, "sigmoid"))
		return mt_error_set(err, MT_EINVAL, "%s: field 'scoring_func': expected \"softmax\" "
				    "or \"sigmoid\", got \"%s\"", file, score);
	if (fam->all_moe && !norm)
		return mt_error_set(err, MT_EINVAL, "%s: field 'norm_topk_prob': %s renormalises "
				    "its top-k weights always; false is not that model", file,
				    m->arch);
	m->router_sigmoid = !strcmp(score, "sigmoid") || m->router_bias;
	m->router_pre_softmax = !m->router_sigmoid && !norm;
	/* DeepSeek's topk_method: "greedy" ignores the groups; "group_limited_greedy"
	 * (V2) and "noaux_tc" (V3) pick the top groups first */
	if (!strcmp(method, "greedy") || m->router_groups <= 1 || m->router_group_topk <= 0 ||
	    m->router_group_topk >= m->router_groups)
		m->router_groups = m->router_group_topk = 0;
	else if (m->experts % m->router_groups)
		return mt_error_set(err, MT_EINVAL, "%s: field 'n_group': %d groups do not divide "
				    "the %d routed experts", file, m->router_groups, m->experts);
	m->shared_gate = !strcmp(m->arch, "qwen2_moe") && m->shared_ffn > 0;
	return MT_OK;
}

/* The top-level fields mt_model_read_hf and its helpers read (a config holds
 * many more: ids, dtypes, the tokenizer's; those are not typos) */
static const char *const hf_keys[] = {
	"model_type", "architectures", "hidden_size", "n_embd", "d_model", "num_hidden_layers",
	"n_layer", "num_layers", "num_attention_heads", "n_head", "num_key_value_heads",
	"head_dim", "vocab_size", "max_position_embeddings", "n_positions", "n_ctx",
	"intermediate_size", "n_inner", "ffn_dim", "hidden_act", "activation_function",
	"rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps", "tie_word_embeddings",
	"attention_bias", "hidden_dropout", "resid_pdrop", "hidden_dropout_prob",
	"attention_dropout", "attn_pdrop", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim",
	"qk_rope_head_dim", "v_head_dim", "num_nextn_predict_layers", "num_local_experts",
	"num_experts", "n_routed_experts", "num_experts_per_tok", "moe_topk",
	"moe_intermediate_size", "shared_expert_intermediate_size", "n_shared_experts",
	"first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step", "mlp_only_layers",
	"topk_method", "scoring_func", "norm_topk_prob", "routed_scaling_factor", "n_group",
	"topk_group", "rope_theta", "rope_scaling", "rope_parameters",
	"original_max_position_embeddings", "router_aux_loss_coef", "aux_loss_alpha", "seq_aux",
	"sliding_window", "use_sliding_window", "layer_types", "is_encoder_decoder", NULL,
};

/* A field the reader does not read that resembles one it does, absent from
 * the config (num_key_value_head): a typo, kept for the command to warn of */
static void hf_typos(const cJSON *o, const char *file, struct mt_model *m)
{
	const cJSON *kv;
	const char *like;

	cJSON_ArrayForEach(kv, o) {
		if (str_in(kv->string, hf_keys) || !(like = mt_near_list(kv->string, hf_keys)) ||
		    cJSON_GetObjectItemCaseSensitive(o, like) || m->ntypo >= MT_MODEL_NOTES)
			continue;
		snprintf(m->typo[m->ntypo++], sizeof(m->typo[0]), "%.120s: unknown field '%.60s': "
			 "did you mean '%.40s'? (megatune does not read it: the model is read as if it "
			 "were not there)", file, kv->string, like);
	}
}

/* The experts of a MoE model: their count per token, widths, router and which layers. */
static int hf_experts(const cJSON *o, const struct mt_jpos *at, const struct hf_family *fam,
		      struct mt_model *m, struct mt_error *err)
{
	const char *file = at->file;
	const cJSON *v;
	int rc, i, first_dense = 0, freq = 1, sparse_step = 1, shared_experts = 0;

	if ((rc = get_int_any(at, o, KEYS("num_experts_per_tok", "moe_topk"), 1, 1, &m->topk,
			      err)) < 0)
		return rc;
	m->moe_ffn = m->ffn;
	if ((rc = get_int_any(at, o, KEYS("moe_intermediate_size"), 0, 1, &m->moe_ffn, err)) < 0 ||
	    (rc = get_int_any(at, o, KEYS("shared_expert_intermediate_size"), 0, 0, &m->shared_ffn,
			      err)) < 0 ||
	    (rc = get_int_any(at, o, KEYS("n_shared_experts"), 0, 0, &shared_experts, err)) < 0 ||
	    (rc = get_int_any(at, o, KEYS("first_k_dense_replace"), 0, 0, &first_dense, err)) < 0 ||
	    (rc = get_int_any(at, o, KEYS("moe_layer_freq"), 0, 1, &freq, err)) < 0 ||
	    (rc = get_int_any(at, o, KEYS("decoder_sparse_step"), 0, 1, &sparse_step, err)) < 0)
		return rc;
	if (shared_experts)
		m->shared_ffn = shared_experts * m->moe_ffn;
	m->router_bias = cJSON_IsString(cJSON_GetObjectItemCaseSensitive(o, "topk_method")) &&
			 !strcmp(cJSON_GetObjectItemCaseSensitive(o, "topk_method")->valuestring,
				 "noaux_tc");
	if ((rc = hf_router(o, file, fam, m, err)) < 0)
		return rc;
	for (i = 0; i < m->layers; i++) {
		if (fam->moe_dense_first || !strncmp(m->arch, "deepseek", 8))
			m->is_moe[i] = i >= first_dense && i % freq == 0;
		else
			m->is_moe[i] = (i + 1) % sparse_step == 0;
	}
	v = cJSON_GetObjectItemCaseSensitive(o, "mlp_only_layers");
	if (v && !cJSON_IsNull(v)) {
		const cJSON *e;
		if (!cJSON_IsArray(v))
			return mt_error_set(err, MT_EINVAL,
					    "%s: field 'mlp_only_layers': expected an array of "
					    "layer indices, got %s", file, mt_json_type(v));
		cJSON_ArrayForEach(e, v) {
			if (!cJSON_IsNumber(e) || e->valuedouble < 0 ||
			    e->valuedouble >= m->layers || e->valuedouble != floor(e->valuedouble))
				return mt_error_set(err, MT_EINVAL,
						    "%s: field 'mlp_only_layers': expected layer "
						    "indices in [0, %d)", file, m->layers);
			m->is_moe[(int)e->valuedouble] = 0;
		}
	}
	if (fam->all_moe)
		m->ffn = 0; /* every MLP is a MoE layer */
	return MT_OK;
}

int mt_model_read_hf(const cJSON *o, const char *file, struct mt_model *m, struct mt_error *err)
{
	struct mt_jpos at = { file, "" };
	const struct hf_family *fam;
	const cJSON *v;
	char act[48] = "";
	int rc, gpt2_style, from_class;

	hf_typos(o, file, m);
	gpt2_style = model_pick(o, KEYS("n_embd")) != NULL;
	if ((rc = mt_jstr(&at, o, "model_type", 0, m->arch, sizeof(m->arch), err)) < 0)
		return rc;
	if (!model_pick(o, KEYS("hidden_size", "n_embd", "d_model")))
		return mt_error_set(err, MT_EINVAL,
				    "%s: not a model config: missing field 'hidden_size' (or 'n_embd'): "
				    "expected a Hugging Face config.json or a megatune model JSON",
				    file);
	from_class = !m->arch[0];
	if (from_class && (rc = hf_arch_from_class(o, file, m->arch, sizeof(m->arch), err)) < 0)
		return rc;
	from_class = from_class && m->arch[0];
	if (!m->arch[0])
		snprintf(m->arch, sizeof(m->arch), "%s", gpt2_style ? "gpt2" : "llama");
	if ((rc = hf_check_arch(o, file, m->arch, from_class ? "architectures" : "model_type",
				err)) < 0)
		return rc;
	fam = hf_family_of(m->arch);
	if ((rc = get_int_any(&at, o, KEYS("hidden_size", "n_embd", "d_model"), 1, 1, &m->hidden, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("num_hidden_layers", "n_layer", "num_layers"), 1, 1, &m->layers, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("num_attention_heads", "n_head"), 1, 1, &m->heads, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("num_key_value_heads"), 0, 1, &m->kv_heads, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("head_dim"), 0, 1, &m->head_dim, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("vocab_size"), 1, 1, &m->vocab, err)) < 0 ||
	    (rc = get_int_any(&at, o, KEYS("max_position_embeddings", "n_positions", "n_ctx"), 0, 1, &m->max_pos, err)) < 0)
		return rc;
	if (m->layers > MT_MAX_LAYERS)
		return mt_error_set(err, MT_EINVAL, "%s: %d layers: at most %d are supported", file,
				    m->layers, MT_MAX_LAYERS);
	if (m->max_pos)
		snprintf(m->max_pos_key, sizeof(m->max_pos_key), "%s",
			 model_pick(o, KEYS("max_position_embeddings", "n_positions", "n_ctx")));
	if ((rc = hf_rope_limit(o, file, m, err)) < 0 || (rc = hf_window(o, file, m, err)) < 0 ||
	    (rc = hf_numerics(o, file, m, err)) < 0)
		return rc;
	m->ffn = gpt2_style ? 4 * m->hidden : 0;
	if ((rc = get_int_any(&at, o, KEYS("intermediate_size", "n_inner", "ffn_dim"), 0, 1, &m->ffn, err)) < 0)
		return rc;
	if (model_pick(o, KEYS("hidden_act", "activation_function")))
		if ((rc = mt_jstr(&at, o, model_pick(o, KEYS("hidden_act", "activation_function")), 1, act,
				  sizeof(act), err)) < 0)
			return rc;
	m->gated = (!gpt2_style && fam->gated) || !strcmp(act, "swiglu");
	m->norm = model_pick(o, KEYS("rms_norm_eps")) ? MT_NORM_RMS : MT_NORM_LAYER;
	if (!model_pick(o, KEYS("rms_norm_eps", "layer_norm_epsilon", "layer_norm_eps")))
		m->norm = gpt2_style ? MT_NORM_LAYER : MT_NORM_RMS;
	/* the default of transformers' config class: true for PretrainedConfig
	 * and GPT-2, false for the Llama, Mistral, Mixtral, Qwen and DeepSeek classes */
	m->tied = gpt2_style || fam->tied;
	if ((rc = mt_jbool(&at, o, "tie_word_embeddings", 0, &m->tied, err)) < 0)
		return rc;
	m->linear_bias = gpt2_style || fam->linear_bias;
	m->learned_pos = m->linear_bias && m->max_pos > 0;
	m->qkv_bias = fam->qkv_bias;
	if ((rc = mt_jbool(&at, o, "attention_bias", 0, &m->qkv_bias, err)) < 0)
		return rc;
	m->qk_norm = fam->qk_norm;
	if ((rc = get_num_any(&at, o, KEYS("hidden_dropout", "resid_pdrop", "hidden_dropout_prob"), 0, 1,
			      &m->dropout, err)) < 0 ||
	    (rc = get_num_any(&at, o, KEYS("attention_dropout", "attn_pdrop"), 0, 1, &m->attn_dropout,
			      err)) < 0)
		return rc;

	/* multi-latent attention */
	if ((v = cJSON_GetObjectItemCaseSensitive(o, "kv_lora_rank")) && !cJSON_IsNull(v)) {
		m->mla = 1;
		if ((rc = mt_jint32(&at, o, "kv_lora_rank", 1, 1, MT_MAX_DIM, &m->kv_lora_rank, err)) < 0 ||
		    (rc = mt_jint32(&at, o, "q_lora_rank", 0, 1, MT_MAX_DIM, &m->q_lora_rank, err)) < 0 ||
		    (rc = mt_jint32(&at, o, "qk_nope_head_dim", 1, 1, MT_MAX_DIM, &m->qk_nope_dim, err)) < 0 ||
		    (rc = mt_jint32(&at, o, "qk_rope_head_dim", 1, 1, MT_MAX_DIM, &m->qk_rope_dim, err)) < 0 ||
		    (rc = mt_jint32(&at, o, "v_head_dim", 1, 1, MT_MAX_DIM, &m->v_head_dim, err)) < 0)
			return rc;
	}
	if ((rc = get_int_any(&at, o, KEYS("num_nextn_predict_layers"), 0, 0, &m->mtp_layers, err)) < 0)
		return rc;

	/* mixture of experts */
	if ((rc = get_int_any(&at, o, KEYS("num_local_experts", "num_experts", "n_routed_experts"), 0, 0,
			      &m->experts, err)) < 0)
		return rc;
	if (m->experts > 0 && (rc = hf_experts(o, &at, fam, m, err)) < 0)
		return rc;
	/* a gated (SwiGLU) family's config class has a fixed default width, not
	 * 4h (transformers LlamaConfig: intermediate_size=11008, Llama-2-7B's):
	 * a file without it is refused rather than read with a guess */
	if (m->ffn <= 0 && m->moe_layers < m->layers && !m->experts && fam->gated)
		return mt_error_set(err, MT_EINVAL, "%s: missing field 'intermediate_size': "
				    "expected the MLP width (the %s config class's default is one "
				    "model's width, not derived from hidden_size)", file, fam->type);
	if (m->ffn <= 0 && m->moe_layers < m->layers && !m->experts)
		m->ffn = 4 * m->hidden;
	return MT_OK;
}

static const char *const megatune_keys[] = {
	"schema", "name", "source", "description", "hidden_size", "num_layers",
	"num_attention_heads", "num_query_groups", "kv_channels", "ffn_hidden_size", "vocab_size",
	"max_position_embeddings", "swiglu", "normalization", "position_embedding_type",
	"untie_embeddings_and_output_weights", "add_bias_linear", "add_qkv_bias", "qk_layernorm",
	"hidden_dropout", "attention_dropout", "multi_latent_attention", "q_lora_rank",
	"kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "num_experts",
	"moe_router_topk", "moe_ffn_hidden_size", "moe_shared_expert_intermediate_size",
	"moe_router_enable_expert_bias", "moe_layer_freq", "mtp_num_layers", "rotary_base",
	"norm_epsilon", "moe_aux_loss_coeff", "moe_router_score_function", "moe_router_pre_softmax",
	"moe_router_topk_scaling_factor", "moe_router_num_groups", "moe_router_group_topk",
	"moe_shared_expert_gate", NULL,
};

int mt_model_read_megatune(const cJSON *o, const char *file, struct mt_model *m,
			   struct mt_error *err)
{
	struct mt_jpos at = { file, "" };
	char normalization[32] = "LayerNorm", pos[32] = "learned_absolute", score[16] = "softmax";
	const cJSON *freq;
	int rc, i, untie = 0, bias = 1, expert_bias = 0;

	{ /* a misspelt key would silently fall back to a default: refuse it */
		const cJSON *kv;
		cJSON_ArrayForEach(kv, o)
			if (!str_in(kv->string, megatune_keys)) {
				const char *like = mt_near_list(kv->string, megatune_keys);

				return mt_error_set(err, MT_EINVAL,
						    "%s: unknown field '%s'%s%s%s (megatune.model/1 fields "
						    "are Megatron-LM argument names, see docs/FORMATS.md)",
						    file, kv->string, like ? ": did you mean '" : "",
						    like ? like : "", like ? "'?" : "");
			}
	}
	snprintf(m->arch, sizeof(m->arch), "gpt");
	m->dropout = 0.1;
	m->attn_dropout = 0.1;
	m->topk = 2;
	if ((rc = mt_jstr(&at, o, "name", 0, m->name, sizeof(m->name), err)) < 0 ||
	    (rc = mt_jint32(&at, o, "hidden_size", 1, 1, MT_MAX_DIM, &m->hidden, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "num_layers", 1, 1, MT_MAX_LAYERS, &m->layers, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "num_attention_heads", 1, 1, MT_MAX_DIM, &m->heads, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "num_query_groups", 0, 1, MT_MAX_DIM, &m->kv_heads, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "kv_channels", 0, 1, MT_MAX_DIM, &m->head_dim, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "ffn_hidden_size", 0, 1, MT_MAX_DIM, &m->ffn, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "vocab_size", 1, 1, MT_MAX_DIM, &m->vocab, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "max_position_embeddings", 0, 1, MT_MAX_DIM, &m->max_pos, err)) < 0 ||
	    (rc = mt_jnum(&at, o, "rotary_base", 0, 1, 1e12, &m->rope_base, err)) < 0 ||
	    (rc = mt_jnum(&at, o, "norm_epsilon", 0, 1e-12, 1, &m->norm_eps, err)) < 0 ||
	    (rc = mt_jnum(&at, o, "moe_aux_loss_coeff", 0, 0, 100, &m->aux_coef, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "swiglu", 0, &m->gated, err)) < 0 ||
	    (rc = mt_jstr(&at, o, "normalization", 0, normalization, sizeof(normalization), err)) < 0 ||
	    (rc = mt_jstr(&at, o, "position_embedding_type", 0, pos, sizeof(pos), err)) < 0 ||
	    (rc = mt_jbool(&at, o, "untie_embeddings_and_output_weights", 0, &untie, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "add_bias_linear", 0, &bias, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "add_qkv_bias", 0, &m->qkv_bias, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "qk_layernorm", 0, &m->qk_norm, err)) < 0 ||
	    (rc = mt_jnum(&at, o, "hidden_dropout", 0, 0, 0.999, &m->dropout, err)) < 0 ||
	    (rc = mt_jnum(&at, o, "attention_dropout", 0, 0, 0.999, &m->attn_dropout, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "multi_latent_attention", 0, &m->mla, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "q_lora_rank", 0, 1, MT_MAX_DIM, &m->q_lora_rank, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "kv_lora_rank", m->mla, 1, MT_MAX_DIM, &m->kv_lora_rank, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "qk_head_dim", m->mla, 1, MT_MAX_DIM, &m->qk_nope_dim, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "qk_pos_emb_head_dim", m->mla, 1, MT_MAX_DIM, &m->qk_rope_dim, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "v_head_dim", m->mla, 1, MT_MAX_DIM, &m->v_head_dim, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "num_experts", 0, 0, MT_MAX_DIM, &m->experts, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "moe_router_topk", 0, 1, MT_MAX_DIM, &m->topk, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "moe_ffn_hidden_size", 0, 1, MT_MAX_DIM, &m->moe_ffn, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "moe_shared_expert_intermediate_size", 0, 0, MT_MAX_DIM, &m->shared_ffn, err)) < 0 ||
	    (rc = mt_jbool(&at, o, "moe_router_enable_expert_bias", 0, &expert_bias, err)) < 0 ||
	    (rc = mt_jstr(&at, o, "moe_router_score_function", 0, score, sizeof(score), err)) < 0 ||
	    (rc = mt_jbool(&at, o, "moe_router_pre_softmax", 0, &m->router_pre_softmax, err)) < 0 ||
	    (rc = mt_jnum(&at, o, "moe_router_topk_scaling_factor", 0, 1e-6, 1e6, &m->router_scale,
			  err)) < 0 ||
	    (rc = mt_jint32(&at, o, "moe_router_num_groups", 0, 1, MT_MAX_DIM, &m->router_groups,
			    err)) < 0 ||
	    (rc = mt_jint32(&at, o, "moe_router_group_topk", 0, 1, MT_MAX_DIM, &m->router_group_topk,
			    err)) < 0 ||
	    (rc = mt_jbool(&at, o, "moe_shared_expert_gate", 0, &m->shared_gate, err)) < 0 ||
	    (rc = mt_jint32(&at, o, "mtp_num_layers", 0, 0, 64, &m->mtp_layers, err)) < 0)
		return rc;
	if (!strcmp(normalization, "RMSNorm"))
		m->norm = MT_NORM_RMS;
	else if (!strcmp(normalization, "LayerNorm"))
		m->norm = MT_NORM_LAYER;
	else
		return mt_error_set(err, MT_EINVAL,
				    "%s: field 'normalization': expected \"LayerNorm\" or \"RMSNorm\", "
				    "got \"%s\"", file, normalization);
	if (strcmp(pos, "learned_absolute") && strcmp(pos, "rope") && strcmp(pos, "none"))
		return mt_error_set(err, MT_EINVAL,
				    "%s: field 'position_embedding_type': expected \"learned_absolute\", "
				    "\"rope\" or \"none\", got \"%s\"", file, pos);
	m->learned_pos = !strcmp(pos, "learned_absolute");
	if (m->learned_pos && m->max_pos <= 0)
		return mt_error_set(err, MT_EINVAL,
				    "%s: missing field 'max_position_embeddings': expected a positive "
				    "integer with learned absolute position embeddings", file);
	m->max_seq = m->max_pos;
	if (m->max_pos)
		snprintf(m->max_pos_key, sizeof(m->max_pos_key), "max_position_embeddings");
	m->tied = !untie;
	m->linear_bias = bias;
	m->router_bias = expert_bias;
	if (strcmp(score, "softmax") && strcmp(score, "sigmoid"))
		return mt_error_set(err, MT_EINVAL, "%s: field 'moe_router_score_function': expected "
				    "\"softmax\" or \"sigmoid\", got \"%s\"", file, score);
	m->router_sigmoid = !strcmp(score, "sigmoid") || expert_bias;
	m->no_pos = !strcmp(pos, "none");
	if (m->ffn <= 0) /* Megatron-LM's default: 4h, or 2/3 of it (multiple of 64) for SwiGLU */
		m->ffn = m->gated ? (int)(4.0 * m->hidden * 2 / 3 / 64) * 64 : 4 * m->hidden;
	if (m->experts) {
		if (m->moe_ffn <= 0)
			m->moe_ffn = m->ffn;
		freq = cJSON_GetObjectItemCaseSensitive(o, "moe_layer_freq");
		if (!freq || cJSON_IsNull(freq)) {
			for (i = 0; i < m->layers; i++)
				m->is_moe[i] = 1;
		} else if (cJSON_IsNumber(freq) && freq->valuedouble >= 1 &&
			   freq->valuedouble == floor(freq->valuedouble)) {
			for (i = 0; i < m->layers; i++)
				m->is_moe[i] = i % (int)freq->valuedouble == 0;
		} else if (cJSON_IsArray(freq) && cJSON_GetArraySize(freq) == m->layers) {
			const cJSON *e;
			i = 0;
			cJSON_ArrayForEach(e, freq) {
				if (!cJSON_IsNumber(e) || (e->valuedouble != 0 && e->valuedouble != 1))
					return mt_error_set(err, MT_EINVAL,
							    "%s: field 'moe_layer_freq[%d]': expected 0 "
							    "or 1", file, i);
				m->is_moe[i++] = e->valuedouble == 1;
			}
		} else {
			return mt_error_set(err, MT_EINVAL,
					    "%s: field 'moe_layer_freq': expected a positive integer or "
					    "an array of %d zeros and ones, got %s", file, m->layers,
					    mt_json_type(freq));
		}
	}
	return MT_OK;
}
