/* SPDX-License-Identifier: MIT */
/* Outputs: megatune.advice/1 JSON parses and carries every documented field,
 * strings from inputs are escaped, and the Megatron-LM / Megatron-Bridge /
 * environment renderings say what the configuration is. */
#include <stdio.h>

#include "testutil.h"

#include "../../lib/jsonr.h"
#include "../../reports/advice.h"
#include "../../rules/engine.h"
#include "../../job/flags.h"
#include "../../job/flagtable.h"
#include "../../job/launch.h"

static struct mt_cluster *h100;
static struct mt_model model;
static struct mt_job job;
static struct mt_search_result *res;
static struct mt_ruleset *rs;
static struct mt_rules_run *run;
static struct mt_explain ex[3];
static struct mt_advice_rules ar;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	if (mt_cluster_load("dgx-h100", &h100, &err) || mt_model_load("mixtral-8x7b", &model, &err))
		return -1;
	mt_job_init(&job);
	job.gpus = 64;
	job.seq = 8192;
	job.gbs = 256;
	job.top_k = 3;
	job.pins.fsdp = MT_FSDP_OFF; /* the distributed optimizer's flags and CP's variables */
	res = calloc(1, sizeof(*res));
	rs = mt_ruleset_new();
	if (!res || !rs || mt_ruleset_add_bundled(rs) || mt_ruleset_finish(rs) ||
	    mt_rules_start(rs, &model, h100, &job, &run, &err) ||
	    mt_search(&model, h100, &job, run, res, &err) || res->ntop != 3)
		return -1;
	for (int i = 0; i < res->ntop; i++)
		if (mt_rules_explain(run, &res->top[i], i + 1, (int)res->feasible, res->top[0].time.step,
				     &ex[i]))
			return -1;
	ar.set = rs;
	ar.run = run;
	ar.ex = ex;
	ar.nex = res->ntop;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++)
		mt_explain_free(&ex[i]);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(res);
	mt_cluster_free(h100);
	return 0;
}

static cJSON *advice_doc(const struct mt_model *m)
{
	struct sbuf sb = SBUF_INIT;
	struct mt_error err = MT_ERROR_INIT;
	cJSON *root = NULL;

	mt_advice_json(&sb, m, h100, &job, res, &ar);
	assert_false(sb.failed);
	if (mt_json_parse("advice", sb.buf, sb.len, &root, &err))
		fail_msg("advice JSON does not parse: %s", err.msg);
	sbuf_release(&sb);
	return root;
}

static const cJSON *get(const cJSON *o, const char *path)
{
	char buf[128], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", path);
	for (tok = strtok_r(buf, ".", &save); tok && o; tok = strtok_r(NULL, ".", &save))
		o = cJSON_GetObjectItemCaseSensitive(o, tok);
	if (!o)
		fail_msg("missing %s", path);
	return o;
}

/* The allocator's figures of a memory object nest and make its total. */
static void assert_allocator(const cJSON *mem)
{
	double al = get(mem, "allocated_bytes")->valuedouble;
	double mx = get(mem, "max_allocated_bytes")->valuedouble;
	double rv = get(mem, "reserved_bytes")->valuedouble;
	double out = get(mem, "outside_allocator_bytes")->valuedouble;

	assert_true(al > 0 && al <= mx && mx <= rv && out > 0);
	assert_close(rv + out, get(mem, "total_bytes")->valuedouble, 1e-9);
}

/* memory.stages: one entry per pipeline stage, in order, the peak flagged
 * once: the stage memory names, with the largest total, which is memory's. */
static void assert_stages(const cJSON *cand)
{
	const cJSON *mem = get(cand, "memory"), *st = get(mem, "stages"), *s;
	double max = 0;
	int n = 0, peaks = 0;

	assert_int_equal(cJSON_GetArraySize(st), get(cand, "config.pp")->valueint);
	assert_allocator(mem);
	cJSON_ArrayForEach(s, st) {
		double t = get(s, "total_bytes")->valuedouble;

		assert_int_equal(get(s, "stage")->valueint, n);
		assert_allocator(s);
		get(s, "activations_bytes");
		get(s, "logits_bytes");
		max = t > max ? t : max;
		if (cJSON_IsTrue(get(s, "peak"))) {
			peaks++;
			assert_int_equal(n, get(mem, "stage")->valueint);
			assert_close(t, get(mem, "total_bytes")->valuedouble, 1e-12);
			assert_close(get(s, "max_allocated_bytes")->valuedouble,
				     get(mem, "max_allocated_bytes")->valuedouble, 1e-12);
		}
		n++;
	}
	assert_int_equal(peaks, 1);
	assert_close(max, get(mem, "total_bytes")->valuedouble, 1e-12);
}

static void advice_has_the_documented_fields(void **state)
{
	static const char *const fields[] = {
		"config.tp", "config.pp", "config.vpp", "config.cp", "config.ep", "config.etp",
		"config.dp", "config.mbs", "config.num_microbatches", "config.recompute",
		"config.sequence_parallel", "config.distributed_optimizer", "config.cp_comm_type",
		"config.bucket_size_bytes", "config.offload_layers", "memory.total_bytes",
		"memory.weights_bytes", "memory.grads_bytes", "memory.optimizer_bytes",
		"memory.activations_bytes", "memory.nccl_bytes", "memory.cuda_graphs_bytes",
		"memory.workspace_bytes", "time.step_s", "time.compute_s", "time.tp_exposed_s",
		"time.tp_hidden_s", "time.ep_exposed_s", "time.dp_exposed_s", "time.bubble_s",
		"time.optimizer_s", "time.recompute_s", "throughput.tokens_per_s_per_gpu",
		"throughput.model_tflops_per_gpu", "throughput.hw_tflops_per_gpu", "throughput.mfu",
		"rules", "megatron_args", "bridge_overrides", "bridge_notes", "env",
	};
	cJSON *root = advice_doc(&model);
	const cJSON *cands = get(root, "candidates"), *c;
	size_t i;
	int n = 0;

	(void)state;
	assert_string_equal(get(root, "schema")->valuestring, "megatune.advice/1");
	assert_int_equal(get(root, "job.gpus")->valueint, 64);
	assert_int_equal(get(root, "job.gbs")->valueint, 256);
	assert_string_equal(get(root, "job.model")->valuestring, "mixtral-8x7b");
	assert_true(get(root, "search.evaluated")->valuedouble == (double)res->evaluated);
	assert_true(cJSON_IsNumber(get(root, "pruned.memory")));
	cJSON_ArrayForEach(c, cands) {
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			get(c, fields[i]);
		assert_int_equal(get(c, "rank")->valueint, ++n);
		assert_true(cJSON_IsArray(get(c, "megatron_args")));
		assert_true(cJSON_IsObject(get(c, "env")));
		/* every fired rule says what it is, what it did, why and where from */
		assert_true(cJSON_GetArraySize(get(c, "rules")) > 5);
		{
			const cJSON *r;
			cJSON_ArrayForEach(r, get(c, "rules")) {
				assert_true(cJSON_IsString(get(r, "id")));
				assert_true(cJSON_IsString(get(r, "kind")));
				assert_true(cJSON_IsString(get(r, "status")));
				assert_true(strlen(get(r, "message")->valuestring) > 10);
				assert_true(cJSON_IsObject(get(r, "evidence")));
				assert_true(cJSON_GetArraySize(get(r, "cite")) >= 1);
				assert_non_null(strstr(get(r, "source")->valuestring, ".rules:"));
			}
		}
		/* the environment comes from cited rules */
		assert_string_equal(get(get(c, "env"), "CUDA_DEVICE_MAX_CONNECTIONS")->valuestring, "1");
		assert_stages(c);
	}
	assert_true(get(root, "rules.enabled")->type == cJSON_True);
	assert_true(cJSON_IsNumber(get(root, "pruned.tp-nvlink")));
	assert_int_equal(n, res->ntop);
	/* the numbers are the search's */
	c = cJSON_GetArrayItem(cands, 0);
	assert_close(get(c, "time.step_s")->valuedouble, res->top[0].time.step, 1e-5);
	assert_int_equal(get(c, "config.ep")->valueint, res->top[0].cfg.ep);
	cJSON_Delete(root);
}

static void strings_from_inputs_are_escaped(void **state)
{
	struct mt_model m = model;
	cJSON *root;

	(void)state;
	snprintf(m.name, sizeof(m.name), "<script>\"evil\"\\\n\t\x01</script>");
	root = advice_doc(&m);
	assert_string_equal(get(root, "job.model")->valuestring, m.name);
	cJSON_Delete(root);
}

static int has(const struct mt_kv *kv, int n, const char *key, const char *val)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key) && (!val || !strcmp(kv[i].val, val)))
			return 1;
	return 0;
}

static void flags_say_what_the_config_is(void **state)
{
	struct mt_config c;
	struct mt_kv kv[MT_FLAGS_MAX];
	int n;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tp = 4;
	c.pp = 8;
	c.vpp = 5;
	c.cp = 2;
	c.cp_comm = MT_CP_A2A_P2P;
	c.cp_a2a = 2;
	c.ep = 8;
	c.etp = 1;
	c.mbs = 1;
	c.sp = 1;
	c.dist_opt = 1;
	c.overlap_grad = c.overlap_param = c.tp_overlap = c.fused_ce = c.grad_fp32 = 1;
	c.recompute = MT_RC_FULL;
	c.recompute_layers = 2;
	c.split = MT_SPLIT_FIRST_LAST;
	c.first_layers = 5;
	c.last_layers = 5;
	c.bucket_params = 40000000;
	n = mt_megatron_args(&model, &job, &c, kv);
	assert_true(has(kv, n, "tensor-model-parallel-size", "4"));
	assert_true(has(kv, n, "pipeline-model-parallel-size", "8"));
	assert_true(has(kv, n, "num-virtual-stages-per-pipeline-rank", "5"));
	assert_true(has(kv, n, "decoder-first-pipeline-num-layers", "5"));
	assert_true(has(kv, n, "cp-comm-type", "a2a+p2p"));
	assert_true(has(kv, n, "hierarchical-context-parallel-sizes", "2 1"));
	assert_true(has(kv, n, "expert-model-parallel-size", "8"));
	assert_true(has(kv, n, "sequence-parallel", ""));
	assert_true(has(kv, n, "use-distributed-optimizer", ""));
	assert_true(has(kv, n, "recompute-granularity", "full"));
	assert_true(has(kv, n, "recompute-method", "block"));
	assert_true(has(kv, n, "recompute-num-layers", "2"));
	assert_true(has(kv, n, "global-batch-size", "256"));
	assert_true(has(kv, n, "ddp-bucket-size", "40000000"));
	/* activation offload: Megatron-LM has no --cpu-offloading flag */
	c.offload_layers = 6;
	n = mt_megatron_args(&model, &job, &c, kv);
	c.offload_layers = 0;
	assert_false(has(kv, n, "cpu-offloading", NULL));
	assert_true(has(kv, n, "cpu-offloading-num-layers", "6"));
	n = mt_bridge_overrides(&model, &job, &c, kv);
	assert_true(has(kv, n, "model.tensor_model_parallel_size", "4"));
	assert_true(has(kv, n, "model.virtual_pipeline_model_parallel_size", "5"));
	assert_true(has(kv, n, "model.num_layers_in_first_pipeline_stage", "5"));
	assert_true(has(kv, n, "ddp.use_distributed_optimizer", "true"));
	assert_true(has(kv, n, "mixed_precision", "bf16_mixed"));
	/* what the model assumed for MoE and attention, said to Bridge as well */
	assert_true(has(kv, n, "model.moe_token_dispatcher_type", "alltoall"));
	assert_true(has(kv, n, "model.attention_backend",
			"{_target_:megatron.core.transformer.enums.AttnBackend.fused,_call_:false}"));
	/* grouped GEMM comes from a rule, merged into the candidate's lists */
	assert_false(has(kv, n, "model.moe_grouped_gemm", NULL));
	n = mt_candidate_bridge(&model, &job, &res->top[0].cfg, &ex[0], kv);
	assert_int_equal(has(kv, n, "model.moe_grouped_gemm", "true"),
			 model.experts / res->top[0].cfg.ep > 1);
	n = mt_candidate_args(&model, &job, &res->top[0].cfg, &ex[0], kv);
	assert_int_equal(has(kv, n, "moe-grouped-gemm", ""), model.experts / res->top[0].cfg.ep > 1);
	assert_true(has(kv, n, "manual-gc-interval", "100"));
	n = mt_candidate_env(&ex[0], kv);
	assert_true(has(kv, n, "CUDA_DEVICE_MAX_CONNECTIONS", "1"));
	assert_true(has(kv, n, "TORCH_NCCL_AVOID_RECORD_STREAMS", "1"));
	/* the flex dispatcher is a job setting */
	job.moe_dispatcher = MT_DISPATCH_FLEX;
	n = mt_megatron_args(&model, &job, &c, kv);
	job.moe_dispatcher = MT_DISPATCH_ALLTOALL;
	assert_true(has(kv, n, "moe-token-dispatcher-type", "flex"));
	assert_true(has(kv, n, "moe-flex-dispatcher-backend", "deepep"));
	/* no overlap of TP traffic without sequence parallelism */
	c.sp = 0;
	n = mt_megatron_args(&model, &job, &c, kv);
	assert_false(has(kv, n, "tp-comm-overlap", NULL));
	assert_false(has(kv, n, "sequence-parallel", NULL));
}

static const char *note_of(const struct mt_kv *kv, int n, const char *about)
{
	char key[sizeof(kv->key) + 1];
	int i;

	snprintf(key, sizeof(key), "#%s", about);
	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].val;
	return NULL;
}

/* What megatune prints is what Megatron-LM's parser and Bridge's overrides
 * accept: no --cpu-offloading, no mixed_precision.* after the recipe name, no
 * comm_overlap.* (None in some recipes), no ddp.grad_reduce_in_fp32 (undone by
 * Bridge), the attention backend as the enum; notes say what cannot be set. */
static void flags_run_as_printed(void **state)
{
	struct mt_config c;
	struct mt_kv kv[MT_FLAGS_MAX];
	struct mt_job fp8 = job;
	struct sbuf sb = SBUF_INIT;
	const char *t;
	int n, i;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tp = 4;
	c.pp = c.cp = c.ep = c.etp = c.mbs = 1;
	c.sp = c.tp_overlap = c.dist_opt = 1;
	c.offload_layers = 6;
	c.grad_fp32 = 0;
	n = mt_megatron_args(&model, &job, &c, kv);
	assert_false(has(kv, n, "cpu-offloading", NULL));
	assert_true(has(kv, n, "cpu-offloading-num-layers", "6"));
	assert_true(has(kv, n, "grad-reduce-in-bf16", ""));
	n = mt_bridge_overrides(&model, &job, &c, kv);
	assert_true(has(kv, n, "model.cpu_offloading_num_layers", "6"));
	for (i = 0; i < n; i++) {
		if (mt_kv_is_note(&kv[i]))
			continue;
		assert_null(strstr(kv[i].key, "comm_overlap."));
		assert_null(strstr(kv[i].key, "grad_reduce_in_fp32"));
	}
	t = note_of(kv, n, "comm_overlap.tp_comm_overlap");
	assert_non_null(t);
	assert_non_null(strstr(t, "CommOverlapConfig(tp_comm_overlap=True)"));
	t = note_of(kv, n, "mixed_precision.grad_reduce_in_fp32");
	assert_non_null(t);
	assert_non_null(strstr(t, "cfg.mixed_precision.grad_reduce_in_fp32 = False"));
	/* the notes come first as comment lines; the enum is quoted for the shell */
	mt_kv_render(&sb, kv, n, MT_KV_ASSIGN, " \\\n  ");
	assert_int_equal(strncmp(sb.buf, "# ", 2), 0);
	assert_non_null(strstr(sb.buf, "\n  'model.attention_backend={_target_:"));
	assert_null(strstr(sb.buf, "\\\n  #"));
	sbuf_release(&sb);
	/* nothing to note but the model's numerics: FP32 reduction is the
	 * recipes' own, no TP overlap */
	c.grad_fp32 = 1;
	c.tp_overlap = 0;
	n = mt_bridge_overrides(&model, &job, &c, kv);
	for (i = 0; i < n; i++)
		assert_false(mt_kv_is_note(&kv[i]) && strncmp(kv[i].key, "#model", 6));
	/* FP8: the recipe name carries fp8_param_gather; nothing under mixed_precision. */
	fp8.precision = MT_PREC_FP8;
	fp8.fp8_recipe = MT_FP8_TENSORWISE;
	n = mt_bridge_overrides(&model, &fp8, &c, kv);
	assert_true(has(kv, n, "mixed_precision", "bf16_with_fp8_current_scaling_mixed"));
	for (i = 0; i < n; i++)
		assert_null(strstr(kv[i].key, "mixed_precision."));
	/* a rule's comm_overlap.* effect, merged, becomes a note too */
	{
		struct mt_kv moe = { "comm_overlap.overlap_moe_expert_parallel_comm", "true" };
		n = mt_bridge_notes(kv, mt_kv_merge(kv, n, &moe, 1));
		assert_false(has(kv, n, moe.key, NULL));
		t = note_of(kv, n, moe.key);
		assert_non_null(t);
		assert_non_null(strstr(t, "(overlap_moe_expert_parallel_comm=True)"));
	}
}

/* Every flag printed is one whose releases job/flagtable.def knows (so that
 * --megatron-version can spell it): the one list of Megatron-LM's flags. */
static void assert_known_flags(const struct mt_kv *kv, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!mt_kv_is_note(&kv[i]) && !mt_flag_find(MT_FLAG_MEGATRON, kv[i].key))
			fail_msg("--%s is not a Megatron-LM flag of job/flagtable.def", kv[i].key);
}

static int model_flags(const char *name, const struct mt_job *j, struct mt_kv *kv)
{
	struct mt_error err = MT_ERROR_INIT;
	static struct mt_model m;
	struct mt_config c;
	int n;

	if (mt_model_load(name, &m, &err))
		fail_msg("%s: %s", name, err.msg);
	memset(&c, 0, sizeof(c));
	c.tp = c.pp = c.cp = c.ep = c.etp = c.mbs = 1;
	n = mt_megatron_args(&m, j, &c, kv);
	assert_known_flags(kv, n);
	/* the model's own flags come first */
	assert_string_equal(kv[0].key, "num-layers");
	return n;
}

/* The model flags: shape, attention, positions, MLP, norms, biases and
 * vocabulary for a dense, a GQA, an MoE and an MLA model, first-k-dense
 * included; every name is one Megatron-LM knows. */
static void megatron_args_carry_the_model(void **state)
{
	struct mt_kv kv[MT_FLAGS_MAX];
	struct mt_job j = job;
	int n, i, once;

	(void)state;
	/* dense, MHA, learned positions, LayerNorm, biases, tied embeddings */
	j.seq = 2048;
	n = model_flags("gpt3-175b", &j, kv);
	assert_true(has(kv, n, "num-layers", "96"));
	assert_true(has(kv, n, "hidden-size", "12288"));
	assert_true(has(kv, n, "ffn-hidden-size", "49152"));
	assert_true(has(kv, n, "num-attention-heads", "96"));
	assert_true(has(kv, n, "position-embedding-type", "learned_absolute"));
	assert_true(has(kv, n, "max-position-embeddings", "2048"));
	assert_true(has(kv, n, "normalization", "LayerNorm"));
	assert_true(has(kv, n, "vocab-size", "50257"));
	assert_true(has(kv, n, "tokenizer-type", "NullTokenizer"));
	assert_true(has(kv, n, "hidden-dropout", "0.1"));
	assert_false(has(kv, n, "group-query-attention", NULL));
	assert_false(has(kv, n, "kv-channels", NULL));
	assert_false(has(kv, n, "swiglu", NULL));
	assert_false(has(kv, n, "disable-bias-linear", NULL));
	assert_false(has(kv, n, "untie-embeddings-and-output-weights", NULL));
	assert_false(has(kv, n, "num-experts", NULL));
	/* GQA, RoPE, SwiGLU; a sequence past the model's is a context extension */
	j.seq = 16384;
	n = model_flags("llama3-70b", &j, kv);
	assert_true(has(kv, n, "group-query-attention", ""));
	assert_true(has(kv, n, "num-query-groups", "8"));
	assert_true(has(kv, n, "seq-length", "16384"));
	assert_true(has(kv, n, "max-position-embeddings", "16384"));
	assert_true(has(kv, n, "position-embedding-type", "rope"));
	assert_true(has(kv, n, "normalization", "RMSNorm"));
	assert_true(has(kv, n, "swiglu", ""));
	assert_true(has(kv, n, "disable-bias-linear", ""));
	assert_true(has(kv, n, "untie-embeddings-and-output-weights", ""));
	assert_true(has(kv, n, "vocab-size", "128256"));
	assert_false(has(kv, n, "kv-channels", NULL));
	for (i = 0, once = 0; i < n; i++)
		once += !strcmp(kv[i].key, "seq-length");
	assert_int_equal(once, 1);
	/* MoE on every layer, head dim apart from hidden / heads, QK norm */
	j.seq = 4096;
	n = model_flags("qwen3-30b-a3b", &j, kv);
	assert_true(has(kv, n, "kv-channels", "128"));
	assert_true(has(kv, n, "qk-layernorm", ""));
	assert_true(has(kv, n, "num-experts", "128"));
	assert_true(has(kv, n, "moe-router-topk", "8"));
	assert_true(has(kv, n, "moe-ffn-hidden-size", "768"));
	assert_true(has(kv, n, "max-position-embeddings", "40960"));
	assert_false(has(kv, n, "moe-layer-freq", NULL));
	assert_false(has(kv, n, "moe-shared-expert-intermediate-size", NULL));
	/* MLA, first-k-dense MoE, shared expert, expert bias, MTP */
	n = model_flags("deepseek-v3", &j, kv);
	assert_true(has(kv, n, "multi-latent-attention", ""));
	assert_true(has(kv, n, "q-lora-rank", "1536"));
	assert_true(has(kv, n, "kv-lora-rank", "512"));
	assert_true(has(kv, n, "qk-head-dim", "128"));
	assert_true(has(kv, n, "qk-pos-emb-head-dim", "64"));
	assert_true(has(kv, n, "v-head-dim", "128"));
	assert_true(has(kv, n, "moe-layer-freq", "([0]*3+[1]*58)"));
	assert_true(has(kv, n, "moe-shared-expert-intermediate-size", "2048"));
	assert_true(has(kv, n, "moe-router-enable-expert-bias", ""));
	assert_true(has(kv, n, "moe-router-score-function", "sigmoid"));
	assert_true(has(kv, n, "mtp-num-layers", "1"));
	assert_false(has(kv, n, "group-query-attention", NULL));
	assert_false(has(kv, n, "kv-channels", NULL));
}

/* Flags kept to validate_args (arguments.py @ d98e8a64dd): the parameter
 * gather overlaps only with the reduction overlap (line 1028), and
 * --kv-channels is given whenever the heads do not divide the hidden size
 * (line 1332). */
static void flags_keep_to_validate_args(void **state)
{
	struct mt_config c;
	struct mt_kv kv[MT_FLAGS_MAX];
	struct mt_model m = model;
	int n;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tp = c.pp = c.cp = c.ep = c.etp = c.mbs = 1;
	c.dist_opt = c.overlap_param = 1;
	n = mt_megatron_args(&model, &job, &c, kv);
	assert_false(has(kv, n, "overlap-param-gather", NULL));
	n = mt_bridge_overrides(&model, &job, &c, kv);
	assert_true(has(kv, n, "ddp.overlap_param_gather", "false"));
	c.overlap_grad = 1;
	n = mt_megatron_args(&model, &job, &c, kv);
	assert_true(has(kv, n, "overlap-param-gather", ""));
	n = mt_bridge_overrides(&model, &job, &c, kv);
	assert_true(has(kv, n, "ddp.overlap_param_gather", "true"));
	m.hidden = 4100; /* 32 heads of 128: hidden / heads rounds down to the head dim */
	m.head_dim = m.hidden / m.heads;
	n = mt_megatron_args(&m, &job, &c, kv);
	assert_true(has(kv, n, "kv-channels", "128"));
}

/* A periodic pattern is written once with its repeat count; the rendering
 * quotes what the shell would read, keeps list values as words. */
static void moe_layer_freq_is_a_python_list(void **state)
{
	struct mt_model m = model;
	struct mt_config c;
	struct mt_kv kv[MT_FLAGS_MAX];
	struct sbuf sb = SBUF_INIT;
	int n, i;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tp = c.pp = c.ep = c.etp = c.mbs = 1;
	c.cp = 4;
	c.cp_comm = MT_CP_A2A_P2P;
	c.cp_a2a = 2;
	for (i = 0; i < m.layers; i++)
		m.is_moe[i] = i % 2;
	m.moe_layers = m.layers / 2;
	n = mt_megatron_args(&m, &job, &c, kv);
	assert_true(has(kv, n, "moe-layer-freq", "([0]*1+[1]*1)*16"));
	mt_kv_render(&sb, kv, n, MT_KV_ARGS, " ");
	assert_non_null(strstr(sb.buf, " --moe-layer-freq '([0]*1+[1]*1)*16' "));
	assert_non_null(strstr(sb.buf, " --hierarchical-context-parallel-sizes 2 2 "));
	sbuf_release(&sb);
	/* the flags of the searched candidates, rules' included, are all known */
	for (i = 0; i < res->ntop; i++) {
		n = mt_candidate_args(&model, &job, &res->top[i].cfg, &ex[i], kv);
		assert_known_flags(kv, n);
	}
}

/* The launch generator's contract: whole nodes or one partial node, notes as
 * comments ahead of the command, the benchmark's arguments after the given
 * ones, values quoted for the shell, errors without output. */
static void launch_script_runs_the_candidate(void **state)
{
	struct mt_kv args[MT_FLAGS_MAX], env[2] = {
		{ "CUDA_DEVICE_MAX_CONNECTIONS", "1" }, { "X", "a b" } };
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	struct mt_launch l;
	const char *p;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.kind = MT_LAUNCH_SLURM;
	l.gpus = 1024;
	l.gpus_per_node = 8;
	l.args = args;
	l.nargs = mt_candidate_args(&model, &job, &res->top[0].cfg, &ex[0], args);
	snprintf(args[l.nargs].key, sizeof(args[0].key), "#x");
	snprintf(args[l.nargs++].val, sizeof(args[0].val), "a note");
	snprintf(args[l.nargs].key, sizeof(args[0].key), "moe-layer-freq");
	snprintf(args[l.nargs++].val, sizeof(args[0].val), "([0]*1+[1]*31)");
	l.env = env;
	l.nenv = 2;
	l.title = "t\nx";
	assert_int_equal(mt_launch_script(&sb, &l, &err), 0);
	assert_false(sb.failed);
	assert_int_equal(strncmp(sb.buf, "#!/bin/bash\n#SBATCH", 19), 0);
	assert_non_null(strstr(sb.buf, "#SBATCH --nodes=128\n"));
	assert_non_null(strstr(sb.buf, "#SBATCH --gpus-per-node=8\n"));
	assert_non_null(strstr(sb.buf, "\n# t?x\n"));
	assert_non_null(strstr(sb.buf, "\n# a note\n"));
	assert_non_null(strstr(sb.buf, "\nexport CUDA_DEVICE_MAX_CONNECTIONS=1\nexport 'X=a b'\n"));
	assert_non_null(strstr(sb.buf, "\n  --nproc-per-node 8 \\\n"));
	p = strstr(sb.buf, "\"$MEGATRON_LM/pretrain_gpt.py\" \\\n  --num-layers 32 \\\n");
	assert_non_null(p);
	assert_non_null(strstr(p, " --moe-layer-freq '([0]*1+[1]*31)' \\\n  --mock-data \\\n"));
	assert_non_null(strstr(p, "\n  --train-iters 20 \\\n  --eval-iters 0 \\\n"));
	assert_null(strstr(p, "#"));
	assert_int_equal(sb.buf[sb.len - 1], '\n');
	sbuf_release(&sb);
	/* smaller than a node: one node of that many processes */
	l.kind = MT_LAUNCH_TORCHRUN;
	l.gpus = 4;
	l.train_iters = 7;
	assert_int_equal(mt_launch_script(&sb, &l, &err), 0);
	assert_null(strstr(sb.buf, "SBATCH"));
	assert_non_null(strstr(sb.buf, "\n  --nnodes 1 \\\n  --nproc-per-node 4 \\\n"));
	assert_non_null(strstr(sb.buf, "\n  --train-iters 7 \\\n"));
	sbuf_release(&sb);
	/* part of a node beyond the first: refused, nothing written */
	l.gpus = 12;
	assert_int_equal(mt_launch_script(&sb, &l, &err), MT_EINVAL);
	assert_int_equal(sb.len, 0);
	assert_non_null(strstr(err.msg, "whole nodes"));
	l.gpus = 8;
	l.kind = 0;
	assert_int_equal(mt_launch_script(&sb, &l, &err), MT_EINVAL);
	sbuf_release(&sb);
}

static void text_output_shows_the_ranking_and_flags(void **state)
{
	struct sbuf sb = SBUF_INIT;

	(void)state;
	mt_advice_text(&sb, &model, h100, &job, res, &ar);
	assert_non_null(strstr(sb.buf, "mixtral-8x7b (46.7 B parameters, 12.9 B active)"));
	assert_non_null(strstr(sb.buf, "tokens/s"));
	assert_non_null(strstr(sb.buf, "--tensor-model-parallel-size"));
	assert_non_null(strstr(sb.buf, "best: TP"));
	/* under the best candidate: why TP, PP, CP and EP are what they are */
	assert_non_null(strstr(sb.buf, "why-tp"));
	assert_non_null(strstr(sb.buf, "why-pp"));
	assert_non_null(strstr(sb.buf, "why-cp"));
	assert_non_null(strstr(sb.buf, "why-ep"));
	assert_non_null(strstr(sb.buf, "CUDA_DEVICE_MAX_CONNECTIONS=1"));
	sbuf_release(&sb);
	/* without rules it says so, and the rules' flags are gone */
	mt_advice_text(&sb, &model, h100, &job, res, NULL);
	assert_non_null(strstr(sb.buf, "rules: off"));
	assert_null(strstr(sb.buf, "why-tp"));
	assert_null(strstr(sb.buf, "CUDA_DEVICE_MAX_CONNECTIONS"));
	sbuf_release(&sb);
}

/* Llama-3 70B at PP 4 on 64 GPUs: the advice carries every stage, the first
 * with the most activations in flight, the last with the logits; the text
 * gives a line per stage, says which peaks and gives the allocator's figures. */
static void advice_of_every_stage(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	struct mt_model m;
	struct mt_job j;
	struct sbuf sb = SBUF_INIT;
	cJSON *root = NULL;
	const cJSON *st;
	char line[64];
	int i;

	(void)state;
	assert_non_null(r);
	mt_job_init(&j);
	j.gpus = 64;
	j.seq = 8192;
	j.gbs = 128;
	j.top_k = 1;
	j.pins.pp = 4;
	assert_int_equal(mt_model_load("llama3-70b", &m, &err), 0);
	assert_int_equal(mt_search(&m, h100, &j, NULL, r, &err), 0);
	assert_int_equal(r->ntop, 1);
	mt_advice_json(&sb, &m, h100, &j, r, NULL);
	assert_false(sb.failed);
	assert_int_equal(mt_json_parse("advice", sb.buf, sb.len, &root, &err), 0);
	sbuf_release(&sb);
	assert_stages(cJSON_GetArrayItem(get(root, "candidates"), 0));
	st = get(cJSON_GetArrayItem(get(root, "candidates"), 0), "memory.stages");
	assert_int_equal(cJSON_GetArraySize(st), 4);
	for (i = 1; i < 4; i++)
		assert_true(get(cJSON_GetArrayItem(st, i), "activations_bytes")->valuedouble <
			    get(cJSON_GetArrayItem(st, 0), "activations_bytes")->valuedouble);
	for (i = 0; i < 4; i++)
		assert_true((get(cJSON_GetArrayItem(st, i), "logits_bytes")->valuedouble > 0) ==
			    (i == 3));
	cJSON_Delete(root);

	mt_advice_text(&sb, &m, h100, &j, r, NULL);
	snprintf(line, sizeof(line), "stage %d peaks:", r->top[0].mem.stage);
	assert_non_null(strstr(sb.buf, line));
	for (i = 0; i < 4; i++) {
		snprintf(line, sizeof(line), "\n    stage %d ", i);
		assert_non_null(strstr(sb.buf, line));
	}
	snprintf(line, sizeof(line), "allocator, stage %d: allocated ", r->top[0].mem.stage);
	assert_non_null(strstr(sb.buf, line));
	assert_non_null(strstr(sb.buf, ", max allocated "));
	sbuf_release(&sb);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(advice_has_the_documented_fields),
		cmocka_unit_test(strings_from_inputs_are_escaped),
		cmocka_unit_test(flags_say_what_the_config_is),
		cmocka_unit_test(flags_run_as_printed),
		cmocka_unit_test(megatron_args_carry_the_model),
		cmocka_unit_test(flags_keep_to_validate_args),
		cmocka_unit_test(moe_layer_freq_is_a_python_list),
		cmocka_unit_test(launch_script_runs_the_candidate),
		cmocka_unit_test(text_output_shows_the_ranking_and_flags),
		cmocka_unit_test(advice_of_every_stage),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
