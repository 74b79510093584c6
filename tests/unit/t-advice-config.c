/* SPDX-License-Identifier: MIT */
/* advice_config: every candidate of an advice file, read back from its
 * `config` object (mt_advice_config, mt_advice_layout) and re-evaluated with
 * mt_evaluate under mt_advice_eval_job, gives the step time and memory the
 * advice predicted, for dense, MoE (flex, EP overlap), pipeline-layout
 * (balanced and pinned), Megatron-FSDP, CUDA-graph and local-layer jobs; the job settings
 * read back (mt_advice_job); and bad config objects name the field. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../tuner/advice.h"
#include "../../tuner/search.h"
#include "../../lib/jsonr.h"
#include "../../rules/engine.h"
#include "../../perfmodel/eager.h"
#include "../../perfmodel/hostmem.h"
#include "../../perfmodel/layout.h"

static struct mt_cluster *h100;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	return mt_cluster_load("dgx-h100", &h100, &err);
}

static int teardown(void **state)
{
	(void)state;
	mt_cluster_free(h100);
	return 0;
}

static void job_init(struct mt_job *j, int gpus, int seq, int gbs)
{
	mt_job_init(j);
	j->gpus = gpus;
	j->seq = seq;
	j->gbs = gbs;
	j->top_k = 3;
}

/* Search with the bundled rules, as `megatune advise` does, and write the
 * advice document. */
static cJSON *advise(const struct mt_model *m, const struct mt_job *j, struct mt_search_result *res)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_rules_run *run = NULL;
	struct sbuf sb = SBUF_INIT;
	cJSON *doc = NULL;

	assert_non_null(rs);
	if (mt_ruleset_add_bundled(rs) || mt_ruleset_finish(rs) ||
	    mt_rules_start(rs, m, h100, j, &run, &err) || mt_search(m, h100, j, run, res, &err))
		fail_msg("%s: %s", m->name, err.msg);
	assert_true(res->ntop >= 1);
	mt_advice_json(&sb, m, h100, j, res, NULL);
	assert_false(sb.failed);
	if (mt_json_parse("advice", sb.buf, sb.len, &doc, &err))
		fail_msg("advice JSON does not parse: %s", err.msg);
	sbuf_release(&sb);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	return doc;
}

/* Read every candidate back and re-evaluate it; returns how many had a
 * layout split. */
static int round_trip(const char *model, const struct mt_job *j0)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_search_result *res = calloc(1, sizeof(*res));
	struct mt_model m;
	struct mt_job j = *j0, back;
	const cJSON *cands, *cand;
	cJSON *doc;
	int i = 0, layouts = 0;

	assert_non_null(res);
	assert_int_equal(mt_model_load(model, &m, &err), 0);
	doc = advise(&m, &j, res);
	/* the job as the file says it, over a default one */
	mt_job_init(&back);
	back.gpus = j.gpus;
	back.seq = j.seq;
	back.gbs = j.gbs;
	if (mt_advice_job(doc, "advice", &back, &err))
		fail_msg("%s: %s", model, err.msg);
	assert_int_equal(back.precision, j.precision);
	assert_int_equal(back.moe_dispatcher, j.moe_dispatcher);
	assert_int_equal(back.attn_impl, j.attn_impl);
	assert_int_equal(back.transformer_impl, j.transformer_impl);
	assert_int_equal(back.fusions_off, j.fusions_off);
	assert_int_equal(back.grad_accum_fusion, j.grad_accum_fusion);
	assert_int_equal(back.offload_modules, j.offload_modules);
	assert_int_equal(back.param_gather_q, j.param_gather_q);
	assert_close(back.opt_offload + 1, j.opt_offload + 1, 1e-9);
	assert_close(back.mem_headroom, j.mem_headroom, 1e-9);
	cands = cJSON_GetObjectItemCaseSensitive(doc, "candidates");
	assert_int_equal(cJSON_GetArraySize(cands), res->ntop);
	cJSON_ArrayForEach(cand, cands) {
		const cJSON *o = cJSON_GetObjectItemCaseSensitive(cand, "config");
		const struct mt_eval *want = &res->top[i];
		struct mt_config cfg;
		struct mt_layout lay;
		struct mt_job ej;
		struct mt_eval e;
		char where[48];

		snprintf(where, sizeof(where), "candidates[%d].config", i);
		if (mt_advice_config(o, &back, "advice", where, &cfg, &err) ||
		    mt_advice_layout(o, "advice", where, &lay, &err))
			fail_msg("%s: %s", model, err.msg);
		assert_int_equal(cfg.split, want->cfg.split);
		assert_int_equal(cfg.fsdp, want->cfg.fsdp);
		assert_int_equal(cfg.cuda_graph, want->cfg.cuda_graph);
		assert_int_equal(cfg.ep_overlap, want->cfg.ep_overlap);
		assert_int_equal(cfg.shared_overlap, want->cfg.shared_overlap);
		/* blocking sends matter with interleaving only */
		assert_int_equal(mt_p2p_blocks(&cfg), mt_p2p_blocks(&want->cfg));
		if (m.experts && cfg.ep > 1)
			assert_int_equal(cfg.dispatcher, want->cfg.dispatcher);
		assert_int_equal(lay.n > 0, cfg.split == MT_SPLIT_LAYOUT);
		if (lay.n > 0) {
			struct mt_layout plan;

			assert_int_equal(mt_layout_of(&m, &j, cfg.pp, cfg.vpp, &plan), 0);
			assert_int_equal(lay.n, plan.n);
			assert_memory_equal(lay.t, plan.t, sizeof(lay.t[0]) * (size_t)lay.n);
			layouts++;
		}
		mt_advice_eval_job(&back, &cfg, &lay, &ej);
		assert_true(ej.pins.layout == (lay.n > 0 ? &lay : NULL));
		if (mt_evaluate(&m, h100, &ej, NULL, &cfg, &e, &err))
			fail_msg("%s %s: %s", model, where, err.msg);
		assert_close(e.time.step, mt_jget_num(cand, "time.step_s", NAN), 1e-5);
		assert_close(e.time.step, want->time.step, 1e-9);
		assert_close(e.mem.total, want->mem.total, 1e-9);
		assert_int_equal(e.feasible, want->feasible);
		assert_int_equal(e.cfg.dispatcher, want->cfg.dispatcher);
		assert_int_equal(e.cfg.ep_overlap, want->cfg.ep_overlap);
		assert_int_equal(e.cfg.cuda_graph, want->cfg.cuda_graph);
		assert_int_equal(e.cfg.split, want->cfg.split);
		i++;
	}
	cJSON_Delete(doc);
	free(res);
	return layouts;
}

static void dense(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 16, 8192, 128);
	round_trip("llama3-8b", &j);
}

/* The --fp8-param-gather pin travels with the advice, both ways. */
static void param_gather_pin(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 16, 8192, 128);
	j.precision = MT_PREC_FP8;
	j.param_gather_q = 0;
	round_trip("llama3-8b", &j);
	j.param_gather_q = 1;
	round_trip("llama3-8b", &j);
}

static void moe_flex_ep_overlap(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 32, 4096, 256);
	j.moe_dispatcher = MT_DISPATCH_FLEX;
	j.pins.ep_overlap = 1;
	round_trip("qwen3-30b-a3b", &j);
	job_init(&j, 256, 4096, 1024);
	j.moe_dispatcher = MT_DISPATCH_FLEX;
	j.pins.ep_overlap = 1;
	assert_true(round_trip("deepseek-v3", &j) > 0);
}

static void moe_auto_dispatcher(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 32, 4096, 256);
	round_trip("qwen3-30b-a3b", &j);
}

static void balanced_layout(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 256, 4096, 2048);
	j.pins.pp = 32;
	j.pins.vpp = 3;
	assert_int_equal(round_trip("qwen3-235b-a22b", &j), 3);
}

/* A pinned layout differs from the split the search would choose: the
 * evaluation sees it only through the eval job's pin. */
static void pinned_layout(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_layout pin, lay;
	struct mt_search_result *res = calloc(1, sizeof(*res));
	struct mt_model m;
	struct mt_job j, ej;
	struct mt_config cfg;
	struct mt_eval with, without;
	cJSON *doc;
	const cJSON *o;

	(void)state;
	assert_non_null(res);
	assert_int_equal(mt_layout_parse("Et*10|(t*12|)*6t*12L", &pin, &err), 0);
	job_init(&j, 256, 4096, 2048);
	j.pins.pp = 8;
	j.pins.layout = &pin;
	assert_int_equal(round_trip("qwen3-235b-a22b", &j), 3);

	assert_int_equal(mt_model_load("qwen3-235b-a22b", &m, &err), 0);
	doc = advise(&m, &j, res);
	o = mt_jget(doc, "candidates");
	o = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(o, 0), "config");
	assert_string_equal(mt_jget_str(o, "pipeline_layout"), "Et*10|(t*12|)*6t*12L");
	j.pins.layout = NULL; /* the reader keeps nothing of the caller's */
	if (mt_advice_config(o, &j, "advice", "c", &cfg, &err) ||
	    mt_advice_layout(o, "advice", "c", &lay, &err))
		fail_msg("%s", err.msg);
	mt_advice_eval_job(&j, &cfg, &lay, &ej);
	assert_int_equal(mt_evaluate(&m, h100, &ej, NULL, &cfg, &with, &err), 0);
	assert_close(with.time.step, res->top[0].time.step, 1e-9);
	mt_advice_eval_job(&j, &cfg, NULL, &ej);
	assert_null(ej.pins.layout);
	assert_int_equal(mt_evaluate(&m, h100, &ej, NULL, &cfg, &without, &err), 0);
	assert_int_not_equal(without.cfg.split, MT_SPLIT_LAYOUT);
	assert_true(fabs(without.time.step / with.time.step - 1) > 1e-4);
	cJSON_Delete(doc);
	free(res);
}

static void fsdp(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 16, 8192, 128);
	j.pins.fsdp = MT_FSDP_MEGATRON;
	round_trip("llama3-8b", &j);
	job_init(&j, 16, 8192, 128);
	j.pins.fsdp = MT_FSDP_TORCH; /* fsdp_impl: "torch" comes back as FSDP2 */
	round_trip("llama3-8b", &j);
}

static void cuda_graphs(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 64, 8192, 256);
	j.pins.cuda_graph = 1;
	round_trip("llama3-70b", &j);
	job_init(&j, 16, 8192, 128);
	j.pins.cuda_graph = 1;
	round_trip("llama3-8b", &j);
}

/* --overlap-p2p off: the interleaved candidates come back with blocking sends */
static void p2p_blocking(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 64, 8192, 128);
	j.pins.p2p_overlap = 0;
	j.pins.pp = 4;
	j.pins.vpp = 5;
	round_trip("llama3-70b", &j);
}

static void precision_and_offload(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 64, 8192, 256);
	j.precision = MT_PREC_FP8;
	j.fp8_recipe = MT_FP8_BLOCKWISE;
	j.opt_offload = 0.5;
	j.mem_headroom = 0.1;
	round_trip("llama3-70b", &j);
}

/* Megatron-LM's own layers with their fusions off: the job and every
 * candidate (TP up to 8, no TP overlap, no graphs) come back as timed */
static void local_layers(void **state)
{
	struct mt_job j;

	(void)state;
	job_init(&j, 64, 8192, 256);
	j.transformer_impl = MT_TI_LOCAL;
	j.attn_impl = MT_ATTN_UNFUSED;
	j.grad_accum_fusion = 0;
	j.fusions_off = (1u << MT_FU_ROPE) | (1u << MT_FU_BIAS_DROPOUT);
	round_trip("llama3-70b", &j);
}

/* --------------------------------------------------------------- bad input */

static void expect_bad(const char *json, const char *msg)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_job j;
	struct mt_config cfg;
	cJSON *o = cJSON_Parse(json);

	assert_non_null(o);
	job_init(&j, 16, 8192, 128);
	assert_int_equal(mt_advice_config(o, &j, "a.json", "candidates[0].config", &cfg, &err),
			 MT_EINVAL);
	if (!strstr(err.msg, msg))
		fail_msg("message '%s' lacks '%s'", err.msg, msg);
	assert_non_null(strstr(err.msg, "a.json: field 'candidates[0].config."));
	cJSON_Delete(o);
}

#define BASE "{\"tp\": 1, \"pp\": 2, \"vpp\": 2, \"cp\": 1, \"mbs\": 1, "

static void bad_config(void **state)
{
	(void)state;
	expect_bad(BASE "\"pipeline_split\": \"layout\"}", "pipeline_layout': expected the layout");
	expect_bad(BASE "\"pipeline_split\": \"layout\", \"pipeline_layout\": 3}",
		   "pipeline_layout': expected the layout");
	expect_bad(BASE "\"pipeline_split\": \"layout\", \"pipeline_layout\": \"Et|tX|t|tL\"}",
		   "pipeline_layout': --pp-layout");
	expect_bad(BASE "\"pipeline_split\": \"layout\", \"pipeline_layout\": \"Et|tL\"}",
		   "expected PP x VPP = 4 model chunks, got 2");
	expect_bad(BASE "\"pipeline_split\": \"even\", \"pipeline_layout\": \"Et|t|t|tL\"}",
		   "pipeline_layout': expected only with pipeline_split");
	expect_bad(BASE "\"pipeline_split\": \"zigzag\"}", "pipeline_split': expected even");
	expect_bad(BASE "\"moe_dispatcher\": \"auto\"}", "moe_dispatcher': expected alltoall");
	expect_bad(BASE "\"moe_dispatcher\": \"deepep\"}", "moe_dispatcher': expected alltoall");
	expect_bad(BASE "\"fsdp\": 1}", "fsdp': expected true or false");
	expect_bad(BASE "\"fsdp\": true, \"fsdp_impl\": \"zero3\"}", "fsdp_impl': expected megatron or torch");
	expect_bad(BASE "\"cuda_graphs\": \"on\"}", "cuda_graphs': expected true or false");
	expect_bad(BASE "\"ep_overlap\": null}", "ep_overlap': expected true or false");
	expect_bad(BASE "\"overlap_p2p_comm\": \"no\"}", "overlap_p2p_comm': expected true or false");
	expect_bad(BASE "\"moe_shared_expert_overlap\": 0}",
		   "moe_shared_expert_overlap': expected true or false");
	expect_bad(BASE "\"bucket_size_bytes\": -1}", "bucket_size_bytes': expected an integer");
}

static void large_bucket_and_good_layout(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_job j;
	struct mt_config cfg;
	struct mt_layout lay;
	cJSON *o = cJSON_Parse(BASE
			       "\"pipeline_split\": \"layout\", \"pipeline_layout\": "
			       "\"Et|(t|)*2tL\", \"bucket_size_params\": 4096000000, "
			       "\"bucket_size_bytes\": 16384000000, \"moe_dispatcher\": \"flex\", "
			       "\"cuda_graphs\": true, \"fsdp\": true, \"ep_overlap\": true}");

	(void)state;
	assert_non_null(o);
	job_init(&j, 16, 8192, 128);
	if (mt_advice_config(o, &j, "a.json", "c", &cfg, &err) ||
	    mt_advice_layout(o, "a.json", "c", &lay, &err))
		fail_msg("%s", err.msg);
	assert_true(cfg.bucket_params == 4096000000LL);
	assert_int_equal(cfg.split, MT_SPLIT_LAYOUT);
	assert_int_equal(cfg.dispatcher, MT_DISPATCH_FLEX);
	assert_true(cfg.cuda_graph && cfg.fsdp && cfg.ep_overlap);
	assert_int_equal(lay.n, 4);
	assert_int_equal(lay.t[0] + lay.t[1] + lay.t[2] + lay.t[3], 4);
	cJSON_Delete(o);
}

static void bad_job(void **state)
{
	static const char *const cases[][2] = {
		{ "{\"precision\": \"fp16\"}", "job.precision" },
		{ "{\"fp8_recipe\": \"hybrid\"}", "job.fp8_recipe" },
		{ "{\"attention\": \"sdpa\"}", "job.attention" },
		{ "{\"moe_dispatcher\": \"deepep\"}", "job.moe_dispatcher" },
		{ "{\"optimizer_cpu_offload\": 2}", "job.optimizer_cpu_offload" },
		{ "{\"mem_headroom\": -0.1}", "job.mem_headroom" },
		{ "{\"offload_modules\": \"core_attn\"}", "job.offload_modules" },
		{ "{\"offload_modules\": [\"everything\"]}", "job.offload_modules" },
		{ "3", "'job'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_job j;
		char buf[256];
		cJSON *doc;

		snprintf(buf, sizeof(buf), "{\"job\": %s}", cases[i][0]);
		doc = cJSON_Parse(buf);
		assert_non_null(doc);
		mt_job_init(&j);
		assert_int_equal(mt_advice_job(doc, "a.json", &j, &err), MT_EINVAL);
		if (!strstr(err.msg, cases[i][1]) || !strstr(err.msg, "a.json"))
			fail_msg("case %zu: message '%s' lacks '%s'", i, err.msg, cases[i][1]);
		cJSON_Delete(doc);
	}
}

static void job_modules(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_job j;
	cJSON *doc = cJSON_Parse("{\"job\": {\"offload_modules\": [\"core_attn\", \"mlp_norm\"], "
				 "\"moe_dispatcher\": \"auto\", \"precision\": \"fp8\", "
				 "\"fp8_recipe\": \"mxfp8\"}}");

	(void)state;
	assert_non_null(doc);
	mt_job_init(&j);
	j.moe_dispatcher = MT_DISPATCH_FLEX;
	assert_int_equal(mt_advice_job(doc, "a.json", &j, &err), MT_OK);
	assert_int_equal(j.offload_modules, (1u << MT_OM_CORE_ATTN) | (1u << MT_OM_MLP_NORM));
	assert_int_equal(j.moe_dispatcher, MT_DISPATCH_AUTO);
	assert_int_equal(j.precision, MT_PREC_FP8);
	assert_int_equal(j.fp8_recipe, MT_FP8_MXFP8);
	cJSON_Delete(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(dense),
		cmocka_unit_test(param_gather_pin),
		cmocka_unit_test(moe_flex_ep_overlap),
		cmocka_unit_test(moe_auto_dispatcher),
		cmocka_unit_test(balanced_layout),
		cmocka_unit_test(pinned_layout),
		cmocka_unit_test(fsdp),
		cmocka_unit_test(cuda_graphs),
		cmocka_unit_test(p2p_blocking),
		cmocka_unit_test(precision_and_offload),
		cmocka_unit_test(local_layers),
		cmocka_unit_test(bad_config),
		cmocka_unit_test(large_bucket_and_good_layout),
		cmocka_unit_test(bad_job),
		cmocka_unit_test(job_modules),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
