/* SPDX-License-Identifier: MIT */
/* Megatron-FSDP and PyTorch FSDP2 (perfmodel/fsdp.h): where they run, the states
 * they shard, the collectives they add and where they hide, and the copies
 * FSDP2 adds (docs/MODEL.md 5.11). */
#include <stdio.h>

#include "testutil.h"

#include "../../tuner/search.h"
#include "../../perfmodel/cluster.h"
#include "../../perfmodel/fsdp.h"
#include "../../perfmodel/model.h"

static struct mt_model llama8;
static struct mt_cluster *h100, *gb200;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	if (mt_model_load("llama3-8b", &llama8, &err) || mt_cluster_load("dgx-h100", &h100, &err) ||
	    mt_cluster_load("gb200-nvl72", &gb200, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mt_cluster_free(h100);
	mt_cluster_free(gb200);
	return 0;
}

static void where_it_runs(void **state)
{
	struct mt_config c;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tp = c.cp = c.pp = 1;
	c.dp = 8;
	assert_int_equal(mt_fsdp_reason(h100, &c), -1);
	c.tp = 2; /* Megatron-LM warns, does not refuse (arguments.py:1456-1465) */
	assert_int_equal(mt_fsdp_reason(h100, &c), -1);
	assert_int_equal(mt_fsdp_reason(gb200, &c), -1);
	c.tp = 1;
	c.dp = 1;
	assert_int_equal(mt_fsdp_reason(h100, &c), MT_PRUNE_FSDP);
	c.cp = 2; /* DP x CP is the group */
	assert_int_equal(mt_fsdp_reason(gb200, &c), -1);
	assert_string_equal(mt_prune_id(MT_PRUNE_FSDP), "fsdp");
	assert_non_null(strstr(mt_prune_cite(MT_PRUNE_FSDP), "1166"));
}

/* PyTorch FSDP2 runs where Megatron-FSDP does, and only with PP 1, EP 1 and
 * untied embeddings (validate_args). */
static void where_fsdp2_runs(void **state)
{
	struct mt_model tied = llama8;
	struct mt_config c;

	(void)state;
	memset(&c, 0, sizeof(c));
	c.tp = c.cp = c.pp = c.ep = 1;
	c.dp = 8;
	c.fsdp = MT_FSDP_TORCH;
	assert_int_equal(mt_fsdp_impl_reason(&llama8, h100, &c), -1);
	c.pp = 2;
	assert_int_equal(mt_fsdp_impl_reason(&llama8, h100, &c), MT_PRUNE_TORCH_FSDP);
	c.fsdp = MT_FSDP_MEGATRON; /* Megatron-FSDP combines with PP */
	assert_int_equal(mt_fsdp_impl_reason(&llama8, h100, &c), -1);
	c.fsdp = MT_FSDP_TORCH;
	c.pp = 1;
	c.ep = 2;
	assert_int_equal(mt_fsdp_impl_reason(&llama8, h100, &c), MT_PRUNE_TORCH_FSDP);
	c.ep = 1;
	tied.tied = 1;
	assert_int_equal(mt_fsdp_impl_reason(&tied, h100, &c), MT_PRUNE_TORCH_FSDP);
	c.dp = 1; /* the checks both share come first */
	assert_int_equal(mt_fsdp_impl_reason(&llama8, h100, &c), MT_PRUNE_FSDP);
	c.dp = 8, c.tp = 2;
	assert_int_equal(mt_fsdp_impl_reason(&llama8, gb200, &c), -1);
	assert_string_equal(mt_prune_id(MT_PRUNE_TORCH_FSDP), "torch-fsdp2");
	assert_non_null(strstr(mt_prune_cite(MT_PRUNE_TORCH_FSDP), "arguments.py:1031-1049"));
}

static void eval(int fsdp, struct mt_eval *e)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config c;
	struct mt_job j;

	mt_job_init(&j);
	j.gpus = 8;
	j.seq = 8192;
	j.gbs = 128;
	memset(&c, 0, sizeof(c));
	c.tp = c.pp = c.vpp = c.cp = c.ep = c.etp = c.mbs = 1;
	c.recompute = MT_RC_FULL;
	c.recompute_layers = 32;
	c.dist_opt = 1;
	c.fsdp = fsdp;
	mt_config_settings(&j, &c);
	assert_int_equal(mt_evaluate(&llama8, h100, &j, NULL, &c, e, &err), 0);
}

/* Against the distributed optimizer on the same 8 GPUs: the optimizer
 * states are sharded alike; weights and gradients drop to an eighth plus
 * the gathered layers; the step pays per-layer traffic instead of one
 * reduction at its end, most of it hidden. */
static void shards_and_hides(void **state)
{
	struct mt_eval d, f;
	double P, layer = (double)mt_model_attn_params(&llama8) + mt_model_dense_mlp_params(&llama8) +
			  mt_model_norm_params(&llama8);

	(void)state;
	eval(0, &d);
	eval(MT_FSDP_MEGATRON, &f);
	assert_true(f.cfg.fsdp && f.cfg.dist_opt);
	assert_close(f.mem.optimizer, d.mem.optimizer, 1e-9);
	P = d.mem.weights / 2; /* bf16 weights of the one stage */
	assert_close(f.mem.weights, 2 * P / 8 + 4 * layer, 0.02);
	assert_close(f.mem.grads, d.mem.grads / 8 + (d.mem.grads / P) * layer, 0.02);
	assert_true(f.mem.total < d.mem.total - 0.8 * (d.mem.weights + d.mem.grads));
	/* per micro-batch traffic, three times the parameters, mostly hidden */
	assert_true(f.time.dp_hidden > 5 * f.time.dp_exposed);
	assert_true(f.time.dp_hidden + f.time.dp_exposed > d.time.dp_hidden + d.time.dp_exposed);
	assert_close(f.time.step, d.time.step, 0.10);
	/* the exposed parts still add up to the step */
	assert_true(f.time.step >= f.time.compute + f.time.dp_exposed);
}

/* FSDP2 against Megatron-FSDP on the same configuration: the same
 * collectives, no distributed optimizer, one more layer of parameters and of
 * gradients in flat buffers, and the copies in and out of them exposed:
 * (2·2·2 + 2·g) bytes per parameter and micro-batch at the element-wise rate. */
static void fsdp2_copies(void **state)
{
	struct mt_eval m, t;
	double layer = (double)mt_model_attn_params(&llama8) + mt_model_dense_mlp_params(&llama8) +
		       mt_model_norm_params(&llama8);
	double P, gb, want;

	(void)state;
	eval(MT_FSDP_MEGATRON, &m);
	eval(MT_FSDP_TORCH, &t);
	assert_int_equal(t.cfg.fsdp, MT_FSDP_TORCH);
	assert_false(t.cfg.dist_opt);
	assert_close(t.mem.optimizer, m.mem.optimizer, 1e-9);
	gb = m.cfg.grad_fp32 ? 4 : 2;
	assert_close(t.mem.weights - m.mem.weights, 2 * layer, 0.02);
	assert_close(t.mem.grads - m.mem.grads, gb * layer, 0.02);
	P = (double)llama8.params_total;
	want = m.cfg.num_mb * (8 + 2 * gb) * P / (h100->hbm_gbps * 1e9 * 0.70);
	assert_close(t.time.dp_exposed - m.time.dp_exposed, want, 0.03);
	assert_close(t.time.dp_hidden, m.time.dp_hidden, 1e-6);
	assert_true(t.time.step > m.time.step);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(where_it_runs),
		cmocka_unit_test(where_fsdp2_runs),
		cmocka_unit_test(shards_and_hides),
		cmocka_unit_test(fsdp2_copies),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
