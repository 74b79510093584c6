/* SPDX-License-Identifier: MIT */
/* The readers of a job's Megatron-LM arguments (job/script.h): the shell forms
 * of a launch script, a file of arguments, and a log's arguments block, each
 * argument with its line; and the model and knobs job/megatron.h takes from
 * them. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "../../job/megatron.h"
#include "../../job/script.h"

static struct mt_jobsrc *read_text(const char *text, int want_rc, struct mt_error *err)
{
	struct mt_jobsrc *s = calloc(1, sizeof(*s));

	assert_non_null(s);
	assert_int_equal(mt_jobsrc_read("job.sh", text, strlen(text), s, err), want_rc);
	return s;
}

static const char *arg(const struct mt_jobsrc *s, const char *flag, int *line)
{
	int i = mt_jobsrc_find(s, flag);

	if (i < 0)
		return NULL;
	if (line)
		*line = s->line[i];
	return s->arg[i].val;
}

static void test_script(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	const char *text =
		"#!/bin/bash\n"
		"# a comment with pretrain_gpt.py in it\n"
		"export CUDA_DEVICE_MAX_CONNECTIONS=1\n"
		"N=2; PER=8\n"
		"HOST=`hostname`\n"
		"LR=${LR:-3e-4}\n"
		"MODEL=(\n"
		"  --num-layers 32   # layers\n"
		"  --hidden-size \"4096\"\n"
		")\n"
		"NVTE_FLAG=1 torchrun --nproc-per-node=$PER --nnodes $N pretrain_gpt.py \\\n"
		"  ${MODEL[@]} --lr $LR \\\n"
		"  --recompute-modules core_attn mlp --seq-length=$((1024*4)) \\\n"
		"  --save $(pwd)/ckpt --data-path $1 '--x-y' --bf16\n"
		"python other.py --num-layers 99\n";
	struct mt_jobsrc *s = read_text(text, MT_OK, &err);
	int line = 0;

	(void)state;
	assert_int_equal(s->kind, MT_JS_SCRIPT);
	assert_string_equal(s->entry, "pretrain_gpt.py");
	assert_int_equal(s->entry_line, 11);
	assert_int_equal(s->nproc_per_node, 8);
	assert_int_equal(s->nnodes, 2);
	assert_string_equal(arg(s, "num-layers", &line), "32"); /* not the second command's 99 */
	assert_int_equal(line, 8);
	assert_string_equal(arg(s, "hidden-size", &line), "4096");
	assert_int_equal(line, 9);
	assert_string_equal(arg(s, "lr", NULL), "3e-4");
	assert_string_equal(arg(s, "recompute-modules", &line), "core_attn mlp");
	assert_int_equal(line, 13);
	assert_string_equal(arg(s, "seq-length", NULL), "4096");
	assert_string_equal(arg(s, "save", NULL), "/ckpt");
	assert_string_equal(arg(s, "data-path", NULL), "");
	assert_string_equal(arg(s, "x-y", NULL), "");
	assert_string_equal(arg(s, "bf16", NULL), "");
	assert_string_equal(mt_jobsrc_env(s, "CUDA_DEVICE_MAX_CONNECTIONS"), "1");
	assert_string_equal(mt_jobsrc_env(s, "NVTE_FLAG"), "1");
	assert_null(mt_jobsrc_env(s, "N")); /* not exported */
	/* the notes: the substitutions, $1, the second command */
	{
		int i, subst = 0, pos = 0, second = 0;

		for (i = 0; i < s->nnotes; i++) {
			subst += strstr(s->notes[i], "command substitution") != NULL;
			pos += strstr(s->notes[i], "$1") != NULL;
			second += strstr(s->notes[i], "second training command (other.py)") != NULL;
		}
		assert_int_equal(subst, 2);
		assert_int_equal(pos, 1);
		assert_int_equal(second, 1);
	}
	free(s);
}

static void test_bad(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s;

	(void)state;
	s = read_text("python pretrain_gpt.py \\\n --lr 'x\n", MT_EINVAL, &err);
	assert_string_equal(err.msg, "job.sh:2: a single quote is not closed");
	free(s);
	s = read_text("echo hello\nls\n", MT_EINVAL, &err);
	assert_non_null(strstr(err.msg, "job.sh: no Megatron-LM arguments"));
	free(s);
	s = read_text("[rank0]: iteration 10/ 100 | elapsed time per iteration (ms): 5.0\n", MT_EINVAL,
		      &err);
	assert_non_null(strstr(err.msg, "a training log without Megatron-LM's arguments block"));
	free(s);
}

static void test_args_file(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_jobsrc *s = read_text("--num-layers 2\n--hidden-size 64 --bf16\n--lr=1e-3\n", MT_OK,
					&err);

	(void)state;
	assert_int_equal(s->kind, MT_JS_ARGS);
	assert_int_equal(s->n, 4);
	assert_string_equal(arg(s, "hidden-size", NULL), "64");
	assert_string_equal(arg(s, "lr", NULL), "1e-3");
	free(s);
}

/* The block as _print_args prints it (megatron/training/arguments.py), behind
 * a launcher prefix */
static void test_block(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	const char *text =
		"[default0]:using world size: 16\n"
		"[default0]:------------------------ arguments ------------------------\n"
		"[default0]:  _is_flag ........................................ True\n"
		"[default0]:  add_bias_linear ................................. False\n"
		"[default0]:  attention_backend ............................... AttnBackend.fused\n"
		"[default0]:  fp8 ............................................. hybrid\n"
		"[default0]:  moe_layer_freq .................................. [0, 1, 1, 1]\n"
		"[default0]:  overlap_p2p_comm ................................ False\n"
		"[default0]:  recompute_modules ............................... ['core_attn', 'mlp']\n"
		"[default0]:  swiglu .......................................... True\n"
		"[default0]:  untie_embeddings_and_output_weights ............. False\n"
		"[default0]:  vocab_size ...................................... None\n"
		"[default0]:  world_size ...................................... 16\n"
		"[default0]:-------------------- end of arguments ---------------------\n";
	struct mt_jobsrc *s = read_text(text, MT_OK, &err);

	(void)state;
	assert_int_equal(s->kind, MT_JS_ARGBLOCK);
	assert_int_equal(s->world_size, 16);
	assert_string_equal(arg(s, "disable-bias-linear", NULL), "");
	assert_string_equal(arg(s, "attention-backend", NULL), "fused");
	assert_string_equal(arg(s, "fp8-format", NULL), "hybrid");
	assert_string_equal(arg(s, "moe-layer-freq", NULL), "[0, 1, 1, 1]");
	assert_string_equal(arg(s, "no-overlap-p2p-communication", NULL), "");
	assert_string_equal(arg(s, "recompute-modules", NULL), "core_attn mlp");
	assert_string_equal(arg(s, "swiglu", NULL), "");
	assert_null(arg(s, "untie-embeddings-and-output-weights", NULL)); /* False */
	assert_null(arg(s, "vocab-size", NULL));                           /* None */
	assert_null(arg(s, "-is-flag", NULL));                             /* private */
	assert_int_equal(s->n, 7);
	free(s);
}

/* The model and knobs from the flags: Megatron-LM's defaults where absent */
static void test_job(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_megatron_job *j = calloc(1, sizeof(*j));
	struct mt_jobsrc *s = read_text(
		"torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 4 --hidden-size 1024 "
		"--num-attention-heads 16 --seq-length 2048 --micro-batch-size 2 "
		"--tokenizer-type GPT2BPETokenizer --num-experts 8 --moe-layer-freq '([0]*1+[1]*1)*2' "
		"--tensor-model-parallel-size 2 --sequence-parallel --foo-bar 3\n", MT_OK, &err);

	(void)state;
	assert_non_null(j);
	assert_int_equal(mt_megatron_job(s, 0, NULL, j, &err), MT_OK);
	assert_int_equal(j->model.vocab, 50257);
	assert_int_equal(j->model.ffn, 4096);           /* 4h */
	assert_int_equal(j->model.learned_pos, 1);      /* Megatron-LM's default */
	assert_int_equal(j->model.moe_layers, 2);
	assert_int_equal(j->model.is_moe[0], 0);
	assert_int_equal(j->model.is_moe[3], 1);
	assert_int_equal(j->job.gpus, 8);
	assert_int_equal(j->job.gbs, 8);                /* MBS 2 x DP 4 */
	assert_int_equal(j->cfg.etp, 2);                /* ETP = TP */
	assert_int_equal(j->cfg.dist_opt, 0);
	assert_int_equal(j->job.pins.tp, 2);
	assert_int_equal(j->nunknown, 1);
	assert_string_equal(s->arg[j->unknown[0]].key, "foo-bar");
	/* a pattern that is not the layers' count: the flag, its line, what it takes */
	free(s);
	s = read_text("--num-layers 4 --hidden-size 64 --num-attention-heads 4 --seq-length 8 "
		      "--vocab-size 100 --num-experts 4 --moe-layer-freq [1]*3\n", MT_OK, &err);
	assert_int_equal(mt_megatron_job(s, 8, NULL, j, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "job.sh:1: --moe-layer-freq: expected an integer or a list "
				       "expression of 4 zeros and ones"));
	free(s);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_args_file),
		cmocka_unit_test(test_block),
		cmocka_unit_test(test_job),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
