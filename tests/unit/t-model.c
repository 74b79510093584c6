/* SPDX-License-Identifier: MIT */
/* Models: config readers, parameter counts against published counts, FLOP
 * conventions against the published formulas and published figures. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../lib/jsonr.h"
#include "../../perfmodel/model.h"

static struct mt_model load(const char *spec)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	if (mt_model_load(spec, &m, &err))
		fail_msg("%s: %s", spec, err.msg);
	return m;
}

static int parse(const char *json, struct mt_model *m, struct mt_error *err)
{
	cJSON *root = NULL;
	int rc = mt_json_parse("test.json", json, strlen(json), &root, err);

	if (!rc)
		rc = mt_model_from_json(root, "test.json", m, err);
	cJSON_Delete(root);
	return rc;
}

/* Published total and active parameter counts (model cards and papers). */
static void bundled_counts_match_published(void **state)
{
	static const struct {
		const char *name;
		double total, active; /* billions; 0 = dense */
	} want[] = {
		{ "llama3-8b", 8.03, 0 },          /* Meta Llama 3 model card: 8B (8.03B) */
		{ "llama3-70b", 70.6, 0 },         /* 70.6B */
		{ "llama3.1-405b", 405.9, 0 },     /* 405B (405.85B) */
		{ "mixtral-8x7b", 46.7, 12.9 },    /* Mistral: 46.7B total, 12.9B active */
		{ "mixtral-8x22b", 141, 39 },      /* Mistral: 141B total, 39B active */
		{ "qwen3-30b-a3b", 30.5, 3.3 },    /* Qwen3 model card: 30.5B, 3.3B activated */
		{ "qwen3-235b-a22b", 235, 22 },    /* 235B, 22B activated */
		{ "deepseek-v3", 671, 37 },        /* DeepSeek-V3 report: 671B, 37B activated */
		{ "gpt3-175b", 175, 0 },           /* Brown et al. 2020 Table 2.1: 175.0B */
		{ "llama2-7b", 6.74, 0 },          /* Llama 2 paper: 7B (6.74B) */
		{ "llama2-70b", 69.0, 0 },         /* 70B (68.98B) */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct mt_model m = load(want[i].name);

		assert_close(m.params_total / 1e9, want[i].total, 0.01);
		if (want[i].active > 0)
			assert_close(m.params_active / 1e9, want[i].active, 0.03);
		else
			assert_true(m.params_active == m.params_total);
	}
}

/* Other Hugging Face families read from their published config.json. */
static void other_hf_families(void **state)
{
	struct mt_model mi = load("tests/fixtures/models/hf-mistral-7b.json");
	struct mt_model qw = load("tests/fixtures/models/hf-qwen2-7b.json");
	struct mt_model g2 = load("tests/fixtures/models/hf-gpt2.json");

	(void)state;
	assert_close(mi.params_total / 1e9, 7.24, 0.005);  /* Mistral 7B: 7.24B */
	assert_true(mi.gated && !mi.qkv_bias && mi.kv_heads == 8);
	assert_close(qw.params_total / 1e9, 7.62, 0.005);  /* Qwen2-7B: 7.6B (7.62) */
	assert_true(qw.qkv_bias);
	assert_close(g2.params_total / 1e6, 124.4, 0.005); /* GPT-2: 124M */
	assert_true(!g2.gated && g2.linear_bias && g2.tied && g2.learned_pos);
	assert_string_equal(g2.name, "hf-gpt2.json");
}

static void deepseek_v3_structure(void **state)
{
	struct mt_model m = load("deepseek-v3");
	int i;

	(void)state;
	assert_true(m.mla);
	assert_int_equal(m.layers, 61);
	assert_int_equal(m.moe_layers, 58);
	for (i = 0; i < 3; i++)
		assert_false(m.is_moe[i]); /* first_k_dense_replace = 3 */
	assert_true(m.is_moe[3] && m.is_moe[60]);
	assert_int_equal(m.experts, 256);
	assert_int_equal(m.topk, 8);
	assert_int_equal(m.shared_ffn, 2048); /* one shared expert of 2048 */
	assert_true(m.router_bias);
	assert_int_equal(m.head_dim, 192); /* qk_nope 128 + qk_rope 64 */
	assert_int_equal(m.mtp_layers, 1);
	/* the MTP module is one more MoE layer plus its projection: ~11.7B,
	 * reported apart from the 671B as the model card does */
	assert_close(m.params_mtp / 1e9, 11.6, 0.02);
}

static void qwen3_moe_and_mixtral_structure(void **state)
{
	struct mt_model q = load("qwen3-30b-a3b"), x = load("mixtral-8x7b");

	(void)state;
	assert_int_equal(q.moe_layers, 48);
	assert_true(q.qk_norm);
	assert_int_equal(q.head_dim, 128);
	assert_int_equal(q.heads * q.head_dim, 4096); /* wider than hidden 2048 */
	assert_int_equal(x.moe_layers, 32);
	assert_int_equal(x.moe_ffn, 14336);
	assert_int_equal(x.shared_ffn, 0);
}

static void qwen3_mlp_only_layers_are_dense(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	(void)state;
	assert_int_equal(parse("{\"model_type\": \"qwen3_moe\", \"hidden_size\": 1024, "
			       "\"num_hidden_layers\": 4, \"num_attention_heads\": 16, "
			       "\"num_key_value_heads\": 4, \"head_dim\": 64, \"vocab_size\": 1000, "
			       "\"intermediate_size\": 3072, \"moe_intermediate_size\": 256, "
			       "\"num_experts\": 16, \"num_experts_per_tok\": 4, "
			       "\"decoder_sparse_step\": 2, \"mlp_only_layers\": [3]}", &m, &err), 0);
	/* sparse step 2: layers 1 and 3 are MoE, and 3 is listed dense */
	assert_false(m.is_moe[0]);
	assert_true(m.is_moe[1]);
	assert_false(m.is_moe[2]);
	assert_false(m.is_moe[3]);
	assert_int_equal(m.moe_layers, 1);
}

static void gpt2_style_config(void **state)
{
	struct mt_model m = load("gpt3-175b");

	(void)state;
	assert_int_equal(m.hidden, 12288);
	assert_int_equal(m.heads, 96);
	assert_int_equal(m.ffn, 4 * 12288);
	assert_false(m.gated);
	assert_int_equal(m.norm, MT_NORM_LAYER);
	assert_true(m.linear_bias && m.learned_pos && m.tied);
	assert_close(m.dropout, 0.1, 1e-9);
}

static void megatune_format_defaults(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	(void)state;
	assert_int_equal(parse("{\"schema\": \"megatune.model/1\", \"name\": \"tiny\", "
			       "\"hidden_size\": 1024, \"num_layers\": 4, \"num_attention_heads\": 8, "
			       "\"vocab_size\": 1000, \"position_embedding_type\": \"rope\"}", &m, &err), 0);
	/* Megatron-LM's argument defaults: ffn 4h, LayerNorm, bias, tied, dropout 0.1 */
	assert_int_equal(m.ffn, 4096);
	assert_int_equal(m.kv_heads, 8);
	assert_int_equal(m.head_dim, 128);
	assert_int_equal(m.norm, MT_NORM_LAYER);
	assert_true(m.linear_bias && m.tied && !m.gated);
	assert_string_equal(m.name, "tiny");
}

/* Defaults follow the upstream tools: Megatron-LM's SwiGLU width, and the
 * tie_word_embeddings default of transformers' config class per family. */
static void defaults_follow_upstream(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	(void)state;
	assert_int_equal(parse("{\"schema\": \"megatune.model/1\", \"hidden_size\": 4096, "
			       "\"num_layers\": 2, \"num_attention_heads\": 32, \"vocab_size\": 1000, "
			       "\"swiglu\": true, \"position_embedding_type\": \"none\"}", &m, &err), 0);
	assert_int_equal(m.ffn, 10880); /* int((4 * 4096 * 2 / 3) / 64) * 64 */
	assert_true(m.no_pos && !m.learned_pos);
	assert_int_equal(parse("{\"model_type\": \"llama\", \"hidden_size\": 1024, "
			       "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
			       "\"intermediate_size\": 4096, \"vocab_size\": 1000}", &m, &err), 0);
	assert_false(m.tied);
	assert_int_equal(parse("{\"model_type\": \"phi\", \"hidden_size\": 1024, "
			       "\"num_hidden_layers\": 2, \"num_attention_heads\": 8, "
			       "\"intermediate_size\": 4096, \"vocab_size\": 1000}", &m, &err), 0);
	assert_true(m.tied);
}

static void megatune_moe_layer_freq_list(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	(void)state;
	assert_int_equal(parse("{\"schema\": \"megatune.model/1\", \"hidden_size\": 1024, "
			       "\"num_layers\": 4, \"num_attention_heads\": 8, \"vocab_size\": 1000, "
			       "\"position_embedding_type\": \"rope\", \"num_experts\": 8, "
			       "\"moe_router_topk\": 2, \"moe_ffn_hidden_size\": 512, "
			       "\"moe_layer_freq\": [0, 1, 1, 1]}", &m, &err), 0);
	assert_int_equal(m.moe_layers, 3);
	assert_false(m.is_moe[0]);
	assert_int_not_equal(parse("{\"schema\": \"megatune.model/1\", \"hidden_size\": 1024, "
				   "\"num_layers\": 4, \"num_attention_heads\": 8, \"vocab_size\": 1000, "
				   "\"num_experts\": 8, \"max_position_embeddings\": 64, "
				   "\"moe_layer_freq\": [0, 1]}", &m, &err), 0);
	assert_non_null(strstr(err.msg, "moe_layer_freq"));
}

static void bad_configs_name_the_field(void **state)
{
	static const struct {
		const char *json, *msg;
	} cases[] = {
		{ "{\"hidden_size\": 4096}", "missing field 'num_hidden_layers'" },
		{ "{\"hidden_size\": 4096.5, \"num_hidden_layers\": 2, \"num_attention_heads\": 2, "
		  "\"vocab_size\": 10}", "field 'hidden_size': expected an integer" },
		{ "{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 3, "
		  "\"vocab_size\": 10, \"intermediate_size\": 128}", "not divisible by 3 heads" },
		{ "{\"hidden_size\": 64, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, "
		  "\"vocab_size\": 0}", "vocab_size" },
		{ "{\"hidden_size\": 64, \"num_hidden_layers\": 2000, \"num_attention_heads\": 4, "
		  "\"vocab_size\": 10}", "2000 layers" },
		{ "{\"schema\": \"megatune.model/2\"}", "version \"megatune.model/2\" is not supported" },
		{ "{\"schema\": \"megatune.model/1\", \"hidden_size\": 64, \"num_layers\": 2, "
		  "\"num_attention_heads\": 4, \"vocab_size\": 10, \"normalization\": \"BatchNorm\"}",
		  "expected \"LayerNorm\" or \"RMSNorm\"" },
		{ "{\"model_type\": \"qwen3_moe\", \"hidden_size\": 64, \"num_hidden_layers\": 2, "
		  "\"num_attention_heads\": 4, \"vocab_size\": 10, \"num_experts\": 4, "
		  "\"num_experts_per_tok\": 2, \"moe_intermediate_size\": 32, "
		  "\"mlp_only_layers\": [7]}", "mlp_only_layers" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_model m;

		assert_int_equal(parse(cases[i].json, &m, &err), MT_EINVAL);
		if (!strstr(err.msg, cases[i].msg))
			fail_msg("case %zu: '%s' does not say '%s'", i, err.msg, cases[i].msg);
		assert_non_null(strstr(err.msg, "test.json"));
	}
}

static void unknown_bundled_name_lists_the_names(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	(void)state;
	assert_int_equal(mt_model_load("gpt5", &m, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "deepseek-v3"));
}

#define BAD "tests/fixtures/bad/"
#define TINY "\"hidden_size\": 256, \"num_hidden_layers\": 2, \"num_attention_heads\": 4, " \
	     "\"vocab_size\": 1000, \"intermediate_size\": 512, \"max_position_embeddings\": 4096"

/* Architectures megatune does not model are refused, naming the field. */
static void unsupported_architectures_are_refused(void **state)
{
	static const struct {
		const char *json, *msg;
	} bad[] = {
		{ "{\"model_type\": \"gemma\", " TINY "}",
		  "field 'model_type': \"gemma\" is not a family" },
		{ "{\"model_type\": \"llama\", \"is_encoder_decoder\": true, " TINY "}",
		  "field 'is_encoder_decoder'" },
		{ "{\"model_type\": \"bart\", " TINY "}", "\"bart\" is an encoder-decoder" },
		{ "{\"model_type\": \"jamba\", " TINY "}", "\"jamba\" is a state-space" },
		{ "{\"model_type\": \"llama\", \"ssm_state_size\": 128, " TINY "}",
		  "field 'ssm_state_size'" },
		{ "{\"model_type\": \"llama\", \"mamba_d_state\": 16, " TINY "}",
		  "field 'mamba_d_state'" },
		{ "{\"model_type\": \"llama\", \"final_logit_softcapping\": 30.0, " TINY "}",
		  "field 'final_logit_softcapping': logit soft-capping" },
		{ "{\"model_type\": \"qwen3\", \"layer_types\": [\"full_attention\", "
		  "\"linear_attention\"], " TINY "}", "field 'layer_types[1]'" },
	};
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(parse(bad[i].json, &m, &err), MT_EINVAL);
		if (!strstr(err.msg, bad[i].msg))
			fail_msg("case %zu: %s", i, err.msg);
	}
	assert_int_equal(mt_model_load(BAD "config-gemma2.json", &m, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "attn_logit_softcapping"));
	assert_int_equal(mt_model_load(BAD "config-t5.json", &m, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "is_encoder_decoder"));
	assert_int_equal(mt_model_load(BAD "config-mamba.json", &m, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "\"mamba\""));
	/* null or zero soft-capping, and full attention per layer, are plain decoders */
	assert_int_equal(parse("{\"model_type\": \"qwen3\", \"attn_logit_softcapping\": null, "
			       "\"final_logit_softcapping\": 0, \"sliding_window\": 512, "
			       "\"layer_types\": [\"full_attention\", \"full_attention\"], "
			       TINY "}", &m, &err), 0);
	assert_int_equal(m.window, 0);
}

/* The sequence limit: max_position_embeddings, scaled by RoPE scaling only
 * where the config gives the pre-scaling length; sliding windows. */
static void sequence_limits(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	char note[512];

	(void)state;
	assert_int_equal(load("llama3.1-405b").max_seq, 131072); /* llama3: already extended */
	assert_int_equal(load("deepseek-v3").max_seq, 163840);   /* yarn with the original */
	assert_int_equal(load("llama3-8b").max_seq, 8192);
	assert_int_equal(load("tests/fixtures/models/hf-mistral-7b.json").window, 4096);
	assert_int_equal(load("tests/fixtures/models/hf-qwen2-7b.json").window, 0);
	assert_int_equal(load("mixtral-8x7b").window, 0);
	/* Qwen2.5's YaRN recipe: factor 4 over max_position_embeddings 32768 */
	assert_int_equal(parse("{\"model_type\": \"qwen2\", " TINY ", \"rope_scaling\": "
			       "{\"type\": \"yarn\", \"factor\": 4.0}}", &m, &err), 0);
	assert_int_equal(m.max_seq, 16384);
	assert_int_equal(parse("{\"model_type\": \"llama\", " TINY ", \"rope_scaling\": "
			       "{\"rope_type\": \"yarn\", \"factor\": 4.0, "
			       "\"original_max_position_embeddings\": 1024}}", &m, &err), 0);
	assert_int_equal(m.max_seq, 4096);
	assert_int_equal(m.nnotes, 0);
	assert_int_equal(parse("{\"model_type\": \"llama\", " TINY ", \"rope_scaling\": "
			       "{\"rope_type\": \"dynamic\", \"factor\": 2.0}}", &m, &err), 0);
	assert_int_equal(m.max_seq, 4096);
	assert_int_equal(m.nnotes, 1);
	assert_non_null(strstr(m.notes[0], "inference only"));
	/* a sliding window is refused where it is shorter than the sequence */
	assert_int_equal(parse("{\"model_type\": \"mistral\", \"sliding_window\": 1024, " TINY "}",
			       &m, &err), 0);
	assert_int_equal(mt_model_check_seq(&m, 1024, note, sizeof(note), &err), 0);
	assert_string_equal(note, "");
	assert_int_equal(mt_model_check_seq(&m, 2048, note, sizeof(note), &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'sliding_window' 1024"));
	/* learned positions: a longer sequence is refused */
	m = load("gpt3-175b");
	assert_int_equal(mt_model_check_seq(&m, 2048, note, sizeof(note), &err), 0);
	assert_int_equal(mt_model_check_seq(&m, 4096, note, sizeof(note), &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'n_positions' 2048"));
	m = load("tests/fixtures/models/sc21-gpt-1.7b.json");
	assert_int_equal(mt_model_check_seq(&m, 4096, note, sizeof(note), &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'max_position_embeddings' 2048"));
	/* RoPE: a longer sequence is a context extension, accepted with a note */
	m = load("llama3-8b");
	assert_int_equal(mt_model_check_seq(&m, 8192, note, sizeof(note), &err), 0);
	assert_string_equal(note, "");
	assert_int_equal(mt_model_check_seq(&m, 32768, note, sizeof(note), &err), 0);
	assert_non_null(strstr(note, "--seq 32768 is longer than the 8192 tokens model "
				     "'llama3-8b'"));
	assert_non_null(strstr(note, "--max-position-embeddings 32768"));
	m = load("llama3.1-405b");
	assert_int_equal(mt_model_check_seq(&m, 131072, note, sizeof(note), &err), 0);
	assert_string_equal(note, "");
}

/* SC21 eq. (3): F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)). */
static void sc21_formula(void **state)
{
	struct mt_model m = load("tests/fixtures/models/sc21-gpt-145.6b.json");
	double B = 2304, s = 2048, l = 80, h = 12288, V = 51200;
	double want = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));

	(void)state;
	/* our count adds biases and norms the paper's closed form leaves out */
	assert_close(mt_model_step_flops(&m, B, (int)s, (int)V, MT_FLOPS_SC21), want, 0.002);
}

/* The NeMo 24.07 Llama-2 7B row: 780 TFLOP/s at 16934 tokens/s per GPU is
 * 46.06 GFLOP per token with the full s^2 attention counted. */
static void nemo_llama2_flops_per_token(void **state)
{
	struct mt_model m = load("llama2-7b");
	double per_token = mt_model_step_flops(&m, 1, 4096, mt_model_padded_vocab(&m, 1),
					       MT_FLOPS_FULL_ATTN) / 4096;

	(void)state;
	assert_close(per_token, 780e12 / 16934, 0.002);
}

/* The Megatron-Bridge 25.11 rows count causal attention once:
 * Llama-3 70B 719 TFLOP/s at 1602 tokens/s, Qwen3-30B-A3B 121 at 5275. */
static void bridge_flops_per_token(void **state)
{
	struct mt_model l = load("llama3-70b"), q = load("qwen3-30b-a3b");

	(void)state;
	assert_close(mt_model_step_flops(&l, 1, 8192, mt_model_padded_vocab(&l, 4),
					 MT_FLOPS_MEGATRON) / 8192, 719e12 / 1602, 0.01);
	assert_close(mt_model_step_flops(&q, 1, 4096, mt_model_padded_vocab(&q, 1),
					 MT_FLOPS_MEGATRON) / 4096, 121e12 / 5275, 0.01);
}

static void conventions_differ_by_the_attention_half(void **state)
{
	struct mt_model m = load("llama3-8b");
	double full = mt_model_step_flops(&m, 8, 8192, 128256, MT_FLOPS_FULL_ATTN);
	double causal = mt_model_step_flops(&m, 8, 8192, 128256, MT_FLOPS_MEGATRON);
	double core = 8.0 * 8192 * 3 * 4 * 8192.0 * 4096 * 32; /* B 3 passes, 4 s h, layers */

	(void)state;
	assert_close(full - causal, core / 2, 1e-9);
}

static void padded_vocab(void **state)
{
	struct mt_model m = load("gpt3-175b");

	(void)state;
	assert_int_equal(mt_model_padded_vocab(&m, 1), 50304);
	assert_int_equal(mt_model_padded_vocab(&m, 4), 50688);
	assert_int_equal(mt_model_padded_vocab(&m, 8), 51200);
}

/* Megatron-LM's MTP takes rope or no position embedding only (arguments.py
 * @ d98e8a64dd, line 1945). */
static void mtp_needs_rope(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;

	(void)state;
	assert_int_equal(mt_model_load("gpt3-5b", &m, &err), 0);
	assert_true(m.learned_pos);
	m.mtp_layers = 1;
	assert_int_equal(mt_model_finish(&m, "gpt3-5b", &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "megatron/training/arguments.py:1945"));
	assert_int_equal(mt_model_load("deepseek-v3", &m, &err), 0);
	assert_int_equal(m.mtp_layers, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bundled_counts_match_published),
		cmocka_unit_test(other_hf_families),
		cmocka_unit_test(deepseek_v3_structure),
		cmocka_unit_test(mtp_needs_rope),
		cmocka_unit_test(qwen3_moe_and_mixtral_structure),
		cmocka_unit_test(qwen3_mlp_only_layers_are_dense),
		cmocka_unit_test(gpt2_style_config),
		cmocka_unit_test(megatune_format_defaults),
		cmocka_unit_test(defaults_follow_upstream),
		cmocka_unit_test(megatune_moe_layer_freq_list),
		cmocka_unit_test(bad_configs_name_the_field),
		cmocka_unit_test(unknown_bundled_name_lists_the_names),
		cmocka_unit_test(sc21_formula),
		cmocka_unit_test(nemo_llama2_flops_per_token),
		cmocka_unit_test(bridge_flops_per_token),
		cmocka_unit_test(conventions_differ_by_the_attention_half),
		cmocka_unit_test(padded_vocab),
		cmocka_unit_test(unsupported_architectures_are_refused),
		cmocka_unit_test(sequence_limits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
