/* SPDX-License-Identifier: MIT */
/* The Megatron-Bridge and verl job readers (job/yamlflat.h, job/bridge.h,
 * job/verl.h, job/formats.h): YAML flattened with interpolations and
 * aliases, Bridge keys as Megatron-LM arguments (renames, recipes, enums,
 * the summary's repr values), verl's keys, defaults and batch, and which
 * reader a text is for. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../job/bridge.h"
#include "../../job/formats.h"
#include "../../job/script.h"
#include "../../job/verl.h"
#include "../../job/yamlflat.h"

static const char *arg(const struct mt_jobsrc *s, const char *flag)
{
	int i = mt_jobsrc_find(s, flag);

	return i < 0 ? NULL : s->arg[i].val;
}

static struct mt_jobsrc *read_text(const char *file, const char *text, int want_rc,
				   struct mt_error *err)
{
	struct mt_jobsrc *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(mt_job_read(file, text, strlen(text), s, err), want_rc);
	return s;
}

static void test_yaml_flatten(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_yflat f;
	const char *text =
		"a:\n"
		"  b: 3\n"
		"  c: &x [p, q]\n"
		"  d: *x\n"
		"  e: null\n"
		"  f: 'null'\n"
		"  g: ${oc.select:a.b,7}\n"
		"  h: ${oc.select:a.zz,7}\n"
		"  i: ${a.g}\n"
		"  j:\n"
		"  - {k: 1}\n";
	const struct mt_yitem *it;

	(void)state;
	assert_int_equal(mt_yaml_flatten("t.yaml", text, strlen(text), &f, &err), MT_OK);
	assert_true(f.root_mapping);
	assert_true(f.nested);
	it = mt_yflat_get(&f, "a.b");
	assert_non_null(it);
	assert_string_equal(it->val, "3");
	assert_int_equal(it->line, 2);
	it = mt_yflat_get(&f, "a.c");
	assert_true(it->list);
	assert_string_equal(it->val, "p q");
	assert_string_equal(mt_yflat_get(&f, "a.d")->val, "p q"); /* an alias */
	assert_true(mt_yflat_get(&f, "a.e")->null);
	assert_false(mt_yflat_get(&f, "a.f")->null); /* quoted: the word */
	assert_string_equal(mt_yflat_get(&f, "a.g")->val, "3");
	assert_string_equal(mt_yflat_get(&f, "a.h")->val, "7");
	assert_string_equal(mt_yflat_get(&f, "a.i")->val, "3"); /* through another */
	assert_null(mt_yflat_get(&f, "a.j"));                 /* a sequence of mappings */
	assert_true(mt_yflat_has_section(&f, "a"));
	assert_false(mt_yflat_has_section(&f, "a.b"));
	mt_yflat_free(&f);
	assert_int_equal(mt_yaml_flatten("t.yaml", "a: [1,\n", 6, &f, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "t.yaml:"));
	assert_non_null(strstr(err.msg, "YAML:"));
}

static void test_bridge_items(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s = calloc(1, sizeof(*s));

	(void)state;
	assert_non_null(s);
	snprintf(s->file, sizeof(s->file), "run_config.yaml");
	assert_int_equal(mt_bridge_item(s, "model.transformer.num_moe_experts", "64", 0, 1, 0, &err), MT_OK);
	assert_string_equal(arg(s, "num-experts"), "64");
	mt_bridge_item(s, "model.layernorm_epsilon", "1.0e-05", 0, 2, 0, &err);
	assert_string_equal(arg(s, "norm-epsilon"), "1.0e-05");
	mt_bridge_item(s, "model.gated_linear_unit", "true", 0, 3, 0, &err);
	assert_string_equal(arg(s, "swiglu"), "");
	mt_bridge_item(s, "model.share_embeddings_and_output_weights", "false", 0, 4, 0, &err);
	assert_non_null(arg(s, "untie-embeddings-and-output-weights"));
	mt_bridge_item(s, "model.add_bias_linear", "false", 0, 5, 0, &err);
	assert_non_null(arg(s, "disable-bias-linear"));
	mt_bridge_item(s, "model.num_query_groups", "8", 0, 6, 0, &err);
	assert_non_null(arg(s, "group-query-attention"));
	assert_string_equal(arg(s, "num-query-groups"), "8");
	mt_bridge_item(s, "model.recompute_modules", "[core_attn,mlp]", 0, 7, 0, &err);
	assert_string_equal(arg(s, "recompute-modules"), "core_attn mlp");
	mt_bridge_item(s, "model.attention_backend._args_", "2", 0, 8, 0, &err);
	assert_string_equal(arg(s, "attention-backend"), "fused");
	mt_bridge_item(s, "model.attention_backend", "<AttnBackend.unfused: 3>", 1, 9, 0, &err);
	assert_string_equal(arg(s, "attention-backend"), "unfused");
	mt_bridge_item(s, "model.moe_layer_freq", "0 1 1", 0, 10, 0, &err);
	assert_string_equal(arg(s, "moe-layer-freq"), "[0,1,1]");
	mt_bridge_item(s, "ddp.overlap_grad_reduce", "True", 1, 11, 0, &err);
	assert_non_null(arg(s, "overlap-grad-reduce"));
	mt_bridge_item(s, "ddp.grad_reduce_in_fp32", "false", 0, 12, 0, &err);
	assert_non_null(arg(s, "grad-reduce-in-bf16"));
	mt_bridge_item(s, "train.global_batch_size", "512", 0, 13, 0, &err);
	assert_string_equal(arg(s, "global-batch-size"), "512");
	mt_bridge_item(s, "checkpoint.save_interval", "100", 0, 14, 0, &err);
	assert_int_equal(s->nskipped, 1);
	mt_bridge_item(s, "env_vars.NCCL_NVLS_ENABLE", "0", 0, 15, 0, &err);
	assert_string_equal(mt_jobsrc_env(s, "NCCL_NVLS_ENABLE"), "0");
	/* a precision recipe: its flags, and the quantised all-gather it sets */
	assert_int_equal(mt_bridge_item(s, "mixed_precision", "bf16_with_mxfp8_mixed", 0, 16, 0, &err), MT_OK);
	assert_string_equal(arg(s, "fp8-format"), "hybrid");
	assert_string_equal(arg(s, "fp8-recipe"), "mxfp8");
	assert_non_null(arg(s, "fp8-param-gather"));
	mt_bridge_item(s, "mixed_precision.fp8_param_gather", "false", 0, 17, 0, &err);
	assert_null(arg(s, "fp8-param-gather"));
	assert_int_equal(mt_bridge_item(s, "mixed_precision", "bf16_with_fp6_mixed", 0, 18, 0, &err),
			 MT_EINVAL);
	assert_non_null(strstr(err.msg, "run_config.yaml:18: mixed_precision: expected a recipe"));
	free(s);
}

static void test_which_reader(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s;

	(void)state;
	s = read_text("o.txt", "model.tensor_model_parallel_size=2\nmixed_precision=bf16_mixed\n", MT_OK, &err);
	assert_int_equal(s->kind, MT_JS_BRIDGE_OVERRIDES);
	assert_int_equal(s->format, MT_JF_BRIDGE);
	assert_string_equal(arg(s, "tensor-model-parallel-size"), "2");
	assert_non_null(arg(s, "bf16"));
	assert_non_null(arg(s, "no-overlap-p2p-communication")); /* Megatron-Core's default */
	assert_int_equal(s->orig[mt_jobsrc_find(s, "tensor-model-parallel-size")], 1);
	free(s);
	/* a Megatron-LM script is not read as overrides */
	s = read_text("j.sh", "torchrun --nproc-per-node 8 pretrain_gpt.py --num-layers 2 \\\n"
		      "  --hidden-size 64\n", MT_OK, &err);
	assert_int_equal(s->kind, MT_JS_SCRIPT);
	assert_int_equal(s->format, MT_JF_MEGATRON);
	free(s);
	s = read_text("c.yaml", "dataset:\n  name: x\n", MT_EINVAL, &err);
	assert_non_null(strstr(err.msg, "c.yaml:1: YAML that is neither"));
	free(s);
}

static void test_verl(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s;
	const char *text =
		"N=4\n"
		"python3 -m verl.trainer.main_ppo \\\n"
		"  actor_rollout_ref.actor.megatron.tensor_model_parallel_size=2 \\\n"
		"  +actor_rollout_ref.actor.megatron.override_transformer_config.moe_token_dispatcher_type=flex \\\n"
		"  actor_rollout_ref.actor.ppo_mini_batch_size=16 \\\n"
		"  actor_rollout_ref.rollout.n=$N \\\n"
		"  actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\\n"
		"  data.max_prompt_length=512 data.max_response_length=1536 \\\n"
		"  trainer.n_gpus_per_node=8 trainer.nnodes=2 \\\n"
		"  actor_rollout_ref.model.path=Qwen/Qwen3-30B-A3B\n";

	(void)state;
	s = read_text("grpo.sh", text, MT_OK, &err);
	assert_int_equal(s->kind, MT_JS_VERL_OVERRIDES);
	assert_int_equal(s->format, MT_JF_VERL);
	assert_string_equal(arg(s, "tensor-model-parallel-size"), "2");
	assert_string_equal(arg(s, "moe-token-dispatcher-type"), "flex"); /* the override wins */
	assert_string_equal(arg(s, "moe-router-load-balancing-type"), "none"); /* verl's */
	assert_string_equal(arg(s, "global-batch-size"), "64");             /* 16 prompts x 4 */
	assert_string_equal(arg(s, "micro-batch-size"), "2");
	assert_string_equal(arg(s, "seq-length"), "2048");
	assert_non_null(arg(s, "sequence-parallel")); /* verl's default with TP > 1 */
	assert_non_null(arg(s, "use-distributed-optimizer"));
	assert_int_equal(s->nproc_per_node, 8);
	assert_int_equal(s->nnodes, 2);
	assert_string_equal(s->model_path, "Qwen/Qwen3-30B-A3B");
	assert_string_equal(s->entry, "verl.trainer.main_ppo");
	free(s);
	s = read_text("v.yaml", "actor_rollout_ref:\n  actor:\n    strategy: fsdp\n", MT_EINVAL, &err);
	assert_non_null(strstr(err.msg, "v.yaml:3: actor_rollout_ref.actor.strategy: a verl config "
			       "without the Megatron backend"));
	free(s);
}

static void test_loongforge(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s;

	(void)state;
	/* per rank, over 2 virtual stages: q, then q + 1 where it does not divide */
	s = read_text("lf.sh", "torchrun --nproc_per_node 8 loongforge/train.py --model-name qwen3-30b-a3b "
		      "--pipeline-model-parallel-size 2 --custom-pipeline-layers 3,5 "
		      "--num-virtual-stages-per-pipeline-rank 2 --mtp-num-layers 1\n", MT_OK, &err);
	assert_string_equal(arg(s, "pipeline-model-parallel-layout"), "Et|tt|tt|tttmL");
	assert_null(arg(s, "num-virtual-stages-per-pipeline-rank"));
	assert_null(arg(s, "custom-pipeline-layers"));
	assert_false(s->layout_mtp_last); /* the flags give the MTP depth */
	assert_string_equal(s->model_path, "qwen3-30b-a3b");
	free(s);
	/* per virtual stage, every rank's first stage first; MTP left to the model */
	s = read_text("lf.sh", "python loongforge/train.py --num-layers 6 --pipeline-model-parallel-size 2 "
		      "--custom-virtual-pipeline-layers 1,2,1,2 --num-virtual-stages-per-pipeline-rank 2\n",
		      MT_OK, &err);
	assert_string_equal(arg(s, "pipeline-model-parallel-layout"), "Et|tt|t|ttL");
	assert_true(s->layout_mtp_last);
	assert_string_equal(s->model_path, ""); /* its own shape flags */
	free(s);
	s = read_text("lf.sh", "python loongforge/train.py --custom-virtual-pipeline-layers 1,2,1 "
		      "--num-virtual-stages-per-pipeline-rank 2\n", MT_EINVAL, &err);
	assert_non_null(strstr(err.msg, "--custom-virtual-pipeline-layers: expected comma-separated layer counts"));
	free(s);
}

static void test_cut_block_and_typos(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s;

	(void)state;
	/* an arguments block whose last line has no value: cut, nothing read */
	s = read_text("run.log", "------------------------ arguments ------------------------\n"
		      "  num_layers ...................... 32\n"
		      "  sequence_parallel ...............", MT_EINVAL, &err);
	assert_non_null(strstr(err.msg, "run.log:3: the arguments block is cut: field "
			       "'sequence_parallel' has no value"));
	assert_int_equal(s->n, 0);
	free(s);
	s = read_text("run.log", "---- arguments ----\n  num_layers ...... 32\n", MT_EINVAL, &err);
	assert_non_null(strstr(err.msg, "run.log:2: the arguments block is cut: the log ends after "
			       "this line ('num_layers ...... 32')"));
	free(s);
	/* a whole block: a field printed empty sets nothing (never True) */
	s = read_text("run.log", "---- arguments ----\n  num_layers ...... 32\n"
		      "  sequence_parallel ......\n---- end of arguments ----\n", MT_OK, &err);
	assert_string_equal(arg(s, "num-layers"), "32");
	assert_null(arg(s, "sequence-parallel"));
	assert_int_equal(s->ntypo, 0);
	free(s);
	/* typos, named in the job's words with the key they resemble (the
	 * sections' keys as read, then the fields they set) */
	s = read_text("b.yaml", "model:\n  num_layers: 2\n  tensor_model_paralel_size: 4\n"
		      "train:\n  micro_batch_size: 1\nddp:\n  overlap_grad_reduc: true\n"
		      "  fp32: true\n", MT_OK, &err);
	assert_int_equal(s->ntypo, 2);
	assert_non_null(strstr(s->typo[1], "b.yaml:3: unknown key 'model.tensor_model_paralel_size': "
			       "did you mean 'model.tensor_model_parallel_size'?"));
	assert_non_null(strstr(s->typo[0], "b.yaml:7: unknown key 'ddp.overlap_grad_reduc': did "
			       "you mean 'ddp.overlap_grad_reduce'?"));
	free(s);
	s = read_text("j.sh", "torchrun pretrain_gpt.py --num-layers 2 \\\n"
		      "  --tensor-model-paralel-size 2 --decoder-seq-length 8\n", MT_OK, &err);
	assert_int_equal(s->ntypo, 1);
	assert_non_null(strstr(s->typo[0], "j.sh:2: unknown flag '--tensor-model-paralel-size': did "
			       "you mean '--tensor-model-parallel-size'?"));
	free(s);
	/* the same key correctly spelt beside it: not a typo */
	s = read_text("a.args", "--tensor-model-paralel-size 2 --tensor-model-parallel-size 2\n",
		      MT_OK, &err);
	assert_int_equal(s->ntypo, 0);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_yaml_flatten),
		cmocka_unit_test(test_bridge_items),
		cmocka_unit_test(test_which_reader),
		cmocka_unit_test(test_verl),
		cmocka_unit_test(test_loongforge),
		cmocka_unit_test(test_cut_block_and_typos),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
