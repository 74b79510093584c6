/* SPDX-License-Identifier: MIT */
/* model: architectures, parameter and FLOP counts, loading (the config
 * readers are model_read.c). */
#include "model.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/bundled.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "model_int.h"

/* ---------------------------------------------------------------- counts */

static int q_dim(const struct mt_model *m) { return m->heads * m->head_dim; }
static int kv_dim(const struct mt_model *m) { return m->kv_heads * m->head_dim; }

int64_t mt_model_attn_tp_params(const struct mt_model *m)
{
	int64_t h = m->hidden, a = m->heads;

	if (m->mla) {
		int64_t qk = m->qk_nope_dim + m->qk_rope_dim;
		int64_t q_up = m->q_lora_rank ? (int64_t)m->q_lora_rank * a * qk : h * a * qk;

		return q_up + (int64_t)m->kv_lora_rank * a * (m->qk_nope_dim + m->v_head_dim) +
		       a * m->v_head_dim * h;
	}
	return h * (q_dim(m) + 2 * (int64_t)kv_dim(m)) + (int64_t)q_dim(m) * h +
	       ((m->qkv_bias || m->linear_bias) ? q_dim(m) + 2 * (int64_t)kv_dim(m) : 0);
}

int64_t mt_model_attn_params(const struct mt_model *m)
{
	int64_t h = m->hidden, n = mt_model_attn_tp_params(m);

	if (m->mla) {
		/* down projections are replicated across TP, with their norms */
		if (m->q_lora_rank)
			n += h * m->q_lora_rank + (int64_t)m->norm * m->q_lora_rank;
		n += h * ((int64_t)m->kv_lora_rank + m->qk_rope_dim) +
		     (int64_t)m->norm * m->kv_lora_rank;
	}
	if (m->linear_bias)
		n += h; /* output projection bias */
	return n;
}

int64_t mt_model_norm_params(const struct mt_model *m)
{
	return 2 * (int64_t)m->hidden * m->norm + (m->qk_norm ? 2 * (int64_t)m->head_dim : 0);
}

static int64_t mlp_params(const struct mt_model *m, int64_t f, int bias)
{
	int64_t h = m->hidden, n = (m->gated ? 3 : 2) * h * f;

	if (bias)
		n += (m->gated ? 2 * f : f) + h;
	return n;
}

int64_t mt_model_dense_mlp_params(const struct mt_model *m)
{
	return mlp_params(m, m->ffn, m->linear_bias);
}

int64_t mt_model_expert_params(const struct mt_model *m)
{
	return m->experts ? mlp_params(m, m->moe_ffn, 0) : 0;
}

int64_t mt_model_shared_params(const struct mt_model *m)
{
	return m->shared_ffn ? mlp_params(m, m->shared_ffn, 0) + (m->shared_gate ? m->hidden : 0) : 0;
}

int64_t mt_model_router_params(const struct mt_model *m)
{
	return m->experts ? (int64_t)m->hidden * m->experts + (m->router_bias ? m->experts : 0) : 0;
}

int mt_model_padded_vocab(const struct mt_model *m, int tp)
{
	int64_t mult = 128 * (int64_t)(tp > 0 ? tp : 1);

	return (int)(((int64_t)m->vocab + mult - 1) / mult * mult);
}

static int64_t layer_params(const struct mt_model *m, int moe, int active)
{
	int64_t n = mt_model_attn_params(m) + mt_model_norm_params(m);

	if (!moe)
		return n + mt_model_dense_mlp_params(m);
	return n + mt_model_shared_params(m) + mt_model_router_params(m) +
	       (int64_t)(active ? m->topk : m->experts) * mt_model_expert_params(m);
}

int mt_model_finish(struct mt_model *m, const char *file, struct mt_error *err)
{
	int64_t total = 0, active = 0, emb;
	int i, last_moe;

	if (m->hidden <= 0 || m->layers <= 0 || m->heads <= 0)
		return mt_error_set(err, MT_EINVAL, "%s: hidden size, layers and heads must be positive",
				    file);
	if (m->layers > MT_MAX_LAYERS)
		return mt_error_set(err, MT_EINVAL, "%s: %d layers: at most %d are supported", file,
				    m->layers, MT_MAX_LAYERS);
	if (m->kv_heads <= 0)
		m->kv_heads = m->heads;
	if (m->kv_heads > m->heads || m->heads % m->kv_heads)
		return mt_error_set(err, MT_EINVAL,
				    "%s: %d key/value heads must divide the %d attention heads", file,
				    m->kv_heads, m->heads);
	if (m->head_dim <= 0) {
		if (m->hidden % m->heads)
			return mt_error_set(err, MT_EINVAL,
					    "%s: hidden size %d is not divisible by %d heads; "
					    "give the head dimension explicitly", file, m->hidden,
					    m->heads);
		m->head_dim = m->hidden / m->heads;
	}
	if (m->vocab <= 0)
		return mt_error_set(err, MT_EINVAL, "%s: the vocabulary size must be positive", file);
	if (m->mla) {
		if (m->kv_lora_rank <= 0 || m->qk_nope_dim <= 0 || m->qk_rope_dim <= 0 ||
		    m->v_head_dim <= 0)
			return mt_error_set(err, MT_EINVAL,
					    "%s: multi-latent attention needs positive kv_lora_rank, "
					    "qk_nope_head_dim, qk_rope_head_dim and v_head_dim", file);
		m->head_dim = m->qk_nope_dim + m->qk_rope_dim;
		m->kv_heads = m->heads;
	}
	{ /* bounds far above any real model keep every count exact in 64 bits */
		static const struct {
			const char *what;
			size_t off;
			int max;
		} lim[] = {
			{ "hidden size", offsetof(struct mt_model, hidden), 1 << 20 },
			{ "MLP width", offsetof(struct mt_model, ffn), 1 << 22 },
			{ "expert width", offsetof(struct mt_model, moe_ffn), 1 << 22 },
			{ "shared-expert width", offsetof(struct mt_model, shared_ffn), 1 << 22 },
			{ "attention heads", offsetof(struct mt_model, heads), 1 << 14 },
			{ "head dimension", offsetof(struct mt_model, head_dim), 1 << 14 },
			{ "qk_nope_head_dim", offsetof(struct mt_model, qk_nope_dim), 1 << 14 },
			{ "qk_rope_head_dim", offsetof(struct mt_model, qk_rope_dim), 1 << 14 },
			{ "v_head_dim", offsetof(struct mt_model, v_head_dim), 1 << 14 },
			{ "q_lora_rank", offsetof(struct mt_model, q_lora_rank), 1 << 20 },
			{ "kv_lora_rank", offsetof(struct mt_model, kv_lora_rank), 1 << 20 },
			{ "experts", offsetof(struct mt_model, experts), 1 << 14 },
			{ "vocabulary", offsetof(struct mt_model, vocab), 1 << 24 },
			{ "max_position_embeddings", offsetof(struct mt_model, max_pos), 1 << 24 },
			{ "MTP layers", offsetof(struct mt_model, mtp_layers), 64 },
		};
		size_t n;

		for (n = 0; n < sizeof(lim) / sizeof(lim[0]); n++) {
			int v = *(const int *)((const char *)m + lim[n].off);
			if (v > lim[n].max)
				return mt_error_set(err, MT_EINVAL, "%s: %s %d is more than megatune "
						    "handles (at most %d)", file, lim[n].what, v,
						    lim[n].max);
		}
	}
	m->moe_layers = 0;
	for (i = 0; i < m->layers; i++)
		m->moe_layers += m->is_moe[i] ? 1 : 0;
	if (m->experts) {
		if (m->topk <= 0 || m->topk > m->experts)
			return mt_error_set(err, MT_EINVAL,
					    "%s: experts per token (%d) must be between 1 and the "
					    "number of experts (%d)", file, m->topk, m->experts);
		if (m->moe_ffn <= 0)
			return mt_error_set(err, MT_EINVAL,
					    "%s: the expert intermediate size must be positive", file);
		if (!m->moe_layers)
			return mt_error_set(err, MT_EINVAL,
					    "%s: %d experts are declared but no layer is a MoE layer",
					    file, m->experts);
	} else {
		if (m->moe_layers)
			return mt_error_set(err, MT_EINVAL, "%s: MoE layers without experts", file);
		m->topk = 0;
	}
	if (m->moe_layers < m->layers && m->ffn <= 0)
		return mt_error_set(err, MT_EINVAL,
				    "%s: the MLP intermediate size must be positive", file);
	if (m->dropout < 0 || m->dropout >= 1 || m->attn_dropout < 0 || m->attn_dropout >= 1)
		return mt_error_set(err, MT_EINVAL, "%s: dropout must be in [0, 1)", file);
	if (m->mtp_layers > 0 && m->learned_pos)
		return mt_error_set(err, MT_EINVAL,
				    "%s: multi-token prediction with learned absolute position "
				    "embeddings (Megatron-LM d98e8a6 megatron/training/arguments.py:1945 "
				    "asserts MTP only with rope or no position embedding)", file);

	{ /* per layer the counts fit in 64 bits; check the sum before adding */
		double est = 0;
		for (i = 0; i < m->layers; i++)
			est += (double)layer_params(m, m->is_moe[i], 0);
		if (est > 1e15)
			return mt_error_set(err, MT_EINVAL, "%s: %.3g parameters is more than megatune "
					    "handles (at most 1e15)", file, est);
	}
	for (i = 0; i < m->layers; i++) {
		total += layer_params(m, m->is_moe[i], 0);
		active += layer_params(m, m->is_moe[i], 1);
	}
	emb = (int64_t)m->vocab * m->hidden * (m->tied ? 1 : 2) +
	      (m->learned_pos ? (int64_t)m->max_pos * m->hidden : 0);
	total += emb + (int64_t)m->hidden * m->norm;
	active += emb + (int64_t)m->hidden * m->norm;
	m->params_total = total;
	m->params_active = active;
	m->params_embedding = emb;
	last_moe = m->is_moe[m->layers - 1];
	m->params_mtp = (int64_t)m->mtp_layers *
			(layer_params(m, last_moe, 0) + 2 * (int64_t)m->hidden * m->hidden +
			 3 * (int64_t)m->hidden * m->norm);
	return MT_OK;
}

int mt_model_check_seq(const struct mt_model *m, int seq, char *note, size_t cap,
		       struct mt_error *err)
{
	if (note && cap)
		note[0] = '\0';
	if (m->window > 0 && m->window < seq)
		return mt_error_set(err, MT_EINVAL,
				    "--seq %d: model '%s', read from %s, has field "
				    "'sliding_window' %d: attention over a window shorter than the "
				    "sequence is not modelled (megatune counts full causal "
				    "attention, and Megatron-LM needs --window-size for it); use "
				    "--seq %d or less", seq, m->name, m->source, m->window,
				    m->window);
	if (m->max_seq <= 0 || seq <= m->max_seq)
		return MT_OK;
	/* Megatron-LM asserts max_position_embeddings >= seq_length whatever the
	 * position embedding (megatron/training/arguments.py:1354 at
	 * NVIDIA/Megatron-LM d98e8a6); learned positions are a table of that many
	 * rows (megatron/core/models/common/embeddings/language_model_embedding.py:71) */
	if (m->learned_pos)
		return mt_error_set(err, MT_EINVAL,
				    "--seq %d: model '%s', read from %s, has field '%s' %d: its "
				    "learned position embeddings cover %d tokens, and Megatron-LM "
				    "asserts max_position_embeddings >= seq_length", seq, m->name,
				    m->source, m->max_pos_key, m->max_pos, m->max_pos);
	/* RoPE (or no position embedding): no parameter depends on the length, so
	 * a longer sequence is a context extension, which runs once Megatron-LM is
	 * given --max-position-embeddings of at least the sequence */
	if (note && cap)
		snprintf(note, cap, "--seq %d is longer than the %d tokens model '%s' states "
			 "(field '%s' of %s): with %s no parameter depends on it, so this "
			 "trains a context extension; Megatron-LM asserts "
			 "max_position_embeddings >= seq_length, so run it with "
			 "--max-position-embeddings %d", seq, m->max_seq, m->name, m->max_pos_key,
			 m->source, m->no_pos ? "no position embedding" : "RoPE", seq);
	return MT_OK;
}

/* ---------------------------------------------------------------- FLOPs */

double mt_model_step_flops(const struct mt_model *m, double gbs, int seq, int pvocab,
			   enum mt_flops_conv conv)
{
	double tokens = gbs * seq, h = m->hidden, s = seq, gm = m->gated ? 3 : 2;
	double attn_lin, core, mlp_dense, mlp_moe, per_tok = 0, extra_fwd = 0;
	int nl = m->layers + m->mtp_layers;
	int n_moe = m->moe_layers;

	if (m->mtp_layers && m->is_moe[m->layers - 1])
		n_moe += m->mtp_layers;
	/* token-linear attention work per layer, forward, 2 FLOPs per MAC */
	if (m->mla) {
		double a = m->heads, qk = m->qk_nope_dim + m->qk_rope_dim;
		double q = m->q_lora_rank ? m->q_lora_rank * (h + a * qk) : h * a * qk;

		attn_lin = 2 * (q + m->kv_lora_rank * (h + a * (m->qk_nope_dim + m->v_head_dim)) +
				h * m->qk_rope_dim + a * m->v_head_dim * h);
		/* QK^T over qk dims and PV over v dims, forward, full (unmasked) */
		core = 2 * s * a * (qk + m->v_head_dim);
	} else {
		attn_lin = 2 * (h * (q_dim(m) + 2.0 * kv_dim(m)) + (double)q_dim(m) * h);
		core = 4 * s * q_dim(m);
	}
	mlp_dense = 2 * gm * h * m->ffn;
	mlp_moe = 2 * gm * h * ((double)m->moe_ffn * m->topk + m->shared_ffn);
	if (conv == MT_FLOPS_MEGATRON)
		core *= 0.5; /* causal mask: half the score matrix is computed */
	per_tok = 3 * ((attn_lin + core) * nl + mlp_dense * (nl - n_moe) + mlp_moe * n_moe);
	if (m->mtp_layers)
		per_tok += 3 * m->mtp_layers * 2 * (3 * h + 2 * h * h);
	per_tok += 3 * 2 * h * pvocab * (1 + m->mtp_layers);
	if (conv == MT_FLOPS_SC21)
		extra_fwd = (attn_lin + core) * nl + mlp_dense * (nl - n_moe) + mlp_moe * n_moe;
	return tokens * (per_tok + extra_fwd);
}

const char *mt_flops_conv_name(enum mt_flops_conv c)
{
	switch (c) {
	case MT_FLOPS_MEGATRON: return "megatron";
	case MT_FLOPS_FULL_ATTN: return "full-attention";
	case MT_FLOPS_SC21: return "sc21";
	}
	return "?";
}

int mt_flops_conv_parse(const char *s, enum mt_flops_conv *out)
{
	if (!strcmp(s, "megatron"))
		*out = MT_FLOPS_MEGATRON;
	else if (!strcmp(s, "full-attention"))
		*out = MT_FLOPS_FULL_ATTN;
	else if (!strcmp(s, "sc21"))
		*out = MT_FLOPS_SC21;
	else
		return -1;
	return 0;
}

int mt_model_from_json(const cJSON *root, const char *file, struct mt_model *m,
		       struct mt_error *err)
{
	const cJSON *schema;
	int rc;

	memset(m, 0, sizeof(*m));
	m->aux_coef = -1;
	if (!cJSON_IsObject(root))
		return mt_error_set(err, MT_EINVAL, "%s: expected a JSON object at the top level, got %s",
				    file, mt_json_type(root));
	snprintf(m->source, sizeof(m->source), "%s", file);
	schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
	if (schema) {
		if (!cJSON_IsString(schema) || strncmp(schema->valuestring, "megatune.model/", 15))
			return mt_error_set(err, MT_EINVAL,
					    "%s: field 'schema': expected \"megatune.model/1\"", file);
		if (strcmp(schema->valuestring, "megatune.model/1"))
			return mt_error_set(err, MT_EINVAL,
					    "%s: field 'schema': version \"%s\" is not supported "
					    "(this megatune reads megatune.model/1)", file,
					    schema->valuestring);
		snprintf(m->format, sizeof(m->format), "megatune");
		rc = mt_model_read_megatune(root, file, m, err);
	} else {
		snprintf(m->format, sizeof(m->format), "hf");
		rc = mt_model_read_hf(root, file, m, err);
	}
	if (rc && m->ntypo && err && strlen(err->msg) + 8 < sizeof(err->msg))
		/* what a typo left out may be the cause */
		snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
			 " (and %s)", m->typo[0]);
	if (rc)
		return rc;
	return mt_model_finish(m, file, err);
}

/* The Hugging Face repositories of the bundled models (each file's
 * _megatune_source names the config.json it copies), for the names a job or a
 * user gives.  The Hub reads repository ids without regard to case. */
static const struct {
	const char *hf, *name;
} hf_ids[] = {
	{ "deepseek-ai/DeepSeek-V3", "deepseek-v3" },
	{ "meta-llama/Llama-2-7b-hf", "llama2-7b" },
	{ "meta-llama/Llama-2-70b-hf", "llama2-70b" },
	{ "meta-llama/Meta-Llama-3-8B", "llama3-8b" },
	{ "meta-llama/Meta-Llama-3-70B", "llama3-70b" },
	{ "meta-llama/Llama-3.1-405B", "llama3.1-405b" },
	{ "meta-llama/Meta-Llama-3.1-405B", "llama3.1-405b" }, /* the repository's first name */
	{ "mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b" },
	{ "mistralai/Mixtral-8x22B-v0.1", "mixtral-8x22b" },
	{ "Qwen/Qwen3-30B-A3B", "qwen3-30b-a3b" },
	{ "Qwen/Qwen3-235B-A22B", "qwen3-235b-a22b" },
};

static int same_nocase(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
			return 0;
	return *a == *b;
}

const char *mt_model_bundled_for(const char *id, char *buf, size_t cap)
{
	const char *base = strrchr(id, '/');
	size_t i;

	for (i = 0; i < sizeof(hf_ids) / sizeof(hf_ids[0]); i++)
		if (same_nocase(id, hf_ids[i].hf))
			return hf_ids[i].name;
	/* a repository named as megatune names the model (Qwen/Qwen3-30B-A3B) */
	snprintf(buf, cap, "%s", base ? base + 1 : id);
	for (i = 0; buf[i]; i++)
		buf[i] = (char)tolower((unsigned char)buf[i]);
	return buf[0] && mt_bundled_find("model", buf) ? buf : NULL;
}

static int load_bundled(const struct mt_bundled *b, const char *name, struct mt_model *m,
			struct mt_error *err)
{
	cJSON *root = NULL;
	char file[300];
	int rc;

	snprintf(file, sizeof(file), "%s", b->path);
	rc = mt_json_parse(file, b->data, b->len, &root, err);
	if (rc)
		return rc;
	rc = mt_model_from_json(root, file, m, err);
	cJSON_Delete(root);
	if (rc)
		return rc;
	snprintf(m->name, sizeof(m->name), "%s", name);
	snprintf(m->source, sizeof(m->source), "bundled (%s)", b->path);
	return MT_OK;
}

int mt_model_load(const char *spec, struct mt_model *m, struct mt_error *err)
{
	const struct mt_bundled *b;
	const char *name;
	cJSON *root = NULL;
	char buf[128];
	struct stat st;
	int rc;

	/* a Hugging Face id with no such file here: the model megatune bundles */
	if (mt_is_path(spec) && stat(spec, &st) != 0 &&
	    (name = mt_model_bundled_for(spec, buf, sizeof(buf))))
		return load_bundled(mt_bundled_find("model", name), name, m, err);
	if (mt_is_path(spec)) {
		rc = mt_json_load(spec, &root, err);
		if (rc)
			return rc;
		rc = mt_model_from_json(root, spec, m, err);
		cJSON_Delete(root);
		if (!rc && !m->name[0]) {
			const char *base = strrchr(spec, '/');
			snprintf(m->name, sizeof(m->name), "%s", base ? base + 1 : spec);
		}
		return rc;
	}
	b = mt_bundled_find("model", spec);
	if (!b && (name = mt_model_bundled_for(spec, buf, sizeof(buf))))
		return load_bundled(mt_bundled_find("model", name), name, m, err);
	if (!b) {
		struct sbuf names = SBUF_INIT;

		mt_bundled_list("model", &names);
		rc = mt_error_set(err, MT_EUSAGE,
				  "unknown model '%s': give a config.json path, a Hugging Face id "
				  "of a bundled model or one of: %s", spec, names.buf);
		sbuf_release(&names);
		return rc;
	}
	return load_bundled(b, spec, m, err);
}
