/* SPDX-License-Identifier: MIT */
/* The proxy's plan (probes/proxy_plan.c): the GEMM shapes of one layer's TP
 * shard with their backward pair, the collectives of TP with and without SP,
 * CP and DP with their sizes, the group layout and its scaling to a smaller
 * launch, bad configurations; the Megatron-LM lines, character for character. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include "testutil.h"

#include "../../probes/proxy.h"
#include "../../perfmodel/cluster.h"
#include "../../perfmodel/config.h"
#include "../../perfmodel/model.h"

static struct mt_model tiny;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	if (mt_model_load("tests/fixtures/models/tiny-llama.json", &tiny, &err))
		fail_msg("%s", err.msg);
	return 0;
}

static void job_cfg(struct mt_job *j, struct mt_config *c, int tp, int pp, int cp, int dp)
{
	mt_job_init(j);
	j->gpus = tp * pp * cp * dp;
	j->seq = 128;
	j->gbs = 16;
	memset(c, 0, sizeof(*c));
	mt_config_settings(j, c);
	c->tp = tp, c->pp = pp, c->cp = cp, c->dp = dp, c->vpp = 1, c->ep = c->etp = 1;
	c->mbs = 2, c->num_mb = (int)(j->gbs / (dp * 2)), c->sp = tp > 1, c->dist_opt = 1;
}

static const struct mt_proxy_item *find(const struct mt_proxy_plan *p, const char *label)
{
	int i;

	for (i = 0; i < p->nitems; i++)
		if (!strcmp(p->items[i].c.label, label))
			return &p->items[i];
	fail_msg("no item '%s'", label);
	return NULL;
}

static int count(const struct mt_proxy_plan *p, int probe, int part)
{
	int i, n = 0;

	for (i = 0; i < p->nitems; i++)
		n += p->items[i].probe == probe && p->items[i].part == part;
	return n;
}

static void plan_shapes_tp2(void **state)
{
	struct mt_job j;
	struct mt_config c;
	struct mt_proxy_plan p;
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_proxy_item *it;

	(void)state;
	job_cfg(&j, &c, 2, 1, 1, 2);
	assert_int_equal(mt_proxy_plan(&tiny, &j, &c, 4, MT_BACKEND_CPU, &p, &err), MT_OK);
	/* T = 2 x 128 tokens; QKV n = (8/2 + 2 x 4/2) x 32 = 256; MLP up 2 x 1024/2 */
	it = find(&p, "qkv fwd 256x256x256");
	assert_int_equal(it->c.dtype, MT_DT_FP32);
	assert_int_equal(it->bwd, 0);
	assert_int_equal(find(&p, "qkv wgrad 256x256x256")->bwd, 1);
	find(&p, "attn out fwd 256x256x128");
	find(&p, "attn out dgrad 256x128x256");
	find(&p, "attn out wgrad 128x256x256");
	find(&p, "mlp up fwd 256x1024x256");
	find(&p, "mlp down fwd 256x256x512");
	assert_int_equal(count(&p, MT_PX_GEMM, MT_PX_DENSE), 6);
	assert_int_equal(count(&p, MT_PX_GEMM, MT_PX_MOE), 0);
	/* attention: 4 heads, 2 KV heads per rank, causal, forward and backward */
	it = find(&p, "attention fwd b2 h4/2 d32 s128 causal");
	assert_int_equal(it->attn_fwd, 1);
	find(&p, "attention bwd b2 h4/2 d32 s128 causal");
	/* SP: all-gather and reduce-scatter of T x h x 2 bytes = 131072 */
	it = find(&p, "tp all_gather 131072B");
	assert_int_equal(it->c.group, MT_PG_TP);
	assert_true(it->weight == 1);
	/* DP: the stage's weights (4 layers x 491520 + the output layer 2048 x 256)
	 * as FP32 gradients (the default) over DP x CP = 2 ranks */
	it = find(&p, "dp reduce_scatter 9961472B");
	assert_int_equal(it->part, MT_PX_DP_RS);
	assert_int_equal(p.gsize[MT_PG_TP], 2);
	assert_int_equal(p.gsize[MT_PG_DP], 2);
	assert_int_equal(p.gstride[MT_PG_DP], 2);
	assert_string_equal(p.scaled, "");
	assert_true(p.layers_dense == 4 && p.layers_moe == 0);
	mt_proxy_plan_free(&p);
}

static void plan_no_sp_cp_pp(void **state)
{
	struct mt_job j;
	struct mt_config c;
	struct mt_proxy_plan p;
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_proxy_item *it;

	(void)state;
	job_cfg(&j, &c, 2, 2, 2, 1);
	c.sp = 0;
	assert_int_equal(mt_proxy_plan(&tiny, &j, &c, 8, MT_BACKEND_CUDA, &p, &err), MT_OK);
	/* T = 2 x 64: all-reduce without SP; CP p2p K and V: 2 x 128 x 2 x 32 x 2 */
	it = find(&p, "tp all_reduce 65536B");
	assert_int_equal(it->c.dtype, 0);
	it = find(&p, "cp sendrecv 32768B");
	assert_int_equal(it->c.group, MT_PG_CP);
	find(&p, "attention fwd b2 h4/2 d32 s64 causal");
	it = find(&p, "attention fwd b2 h4/2 d32 s64");
	assert_true(it->weight == 0.5); /* (CP - 1) / 2 non-causal blocks */
	it = find(&p, "pp sendrecv 65536B");
	assert_int_equal(it->part, MT_PX_P2P);
	assert_int_equal(find(&p, "qkv fwd 128x256x256")->c.dtype, MT_DT_BF16);
	assert_int_equal(p.gstride[MT_PG_CP], 2);
	assert_int_equal(p.gstride[MT_PG_PP], 4);
	assert_true(p.layers_dense == 2);
	mt_proxy_plan_free(&p);
}

static void plan_scales_down(void **state)
{
	struct mt_job j;
	struct mt_config c;
	struct mt_proxy_plan p;
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	job_cfg(&j, &c, 2, 4, 1, 2); /* 16 GPUs on 4 ranks */
	assert_int_equal(mt_proxy_plan(&tiny, &j, &c, 4, MT_BACKEND_CPU, &p, &err), MT_OK);
	assert_int_equal(p.run_tp, 2);
	assert_int_equal(p.run_pp, 2);
	assert_int_equal(p.run_dp, 1);
	assert_int_equal(p.used, 4);
	assert_non_null(strstr(p.scaled, "PP 4 -> 2 stages"));
	assert_non_null(strstr(p.scaled, "DP 2 -> 1 replicas"));
	/* the per-GPU shapes stay those of TP 2 */
	find(&p, "qkv fwd 256x256x256");
	assert_true(p.layers_dense == 1);
	mt_proxy_plan_free(&p);
}

static void plan_refuses(void **state)
{
	struct mt_job j;
	struct mt_config c;
	struct mt_proxy_plan p;
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	job_cfg(&j, &c, 3, 1, 1, 1);
	assert_int_equal(mt_proxy_plan(&tiny, &j, &c, 3, MT_BACKEND_CPU, &p, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "attention heads (8) is not divisible by TP 3"));
	job_cfg(&j, &c, 1, 1, 1, 1);
	c.mbs = 0;
	assert_int_equal(mt_proxy_plan(&tiny, &j, &c, 1, MT_BACKEND_CPU, &p, &err), MT_EINVAL);
	job_cfg(&j, &c, 1, 1, 3, 1);
	assert_int_equal(mt_proxy_plan(&tiny, &j, &c, 3, MT_BACKEND_CPU, &p, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "2 x CP 3"));
}

static void megatron_lines(void **state)
{
	char buf[1024];
	struct tm tm;
	time_t t;

	(void)state;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = 124, tm.tm_mon = 3, tm.tm_mday = 6, tm.tm_hour = 2, tm.tm_min = 56;
	tm.tm_sec = 58, tm.tm_isdst = -1;
	t = mktime(&tm);
	/* the layout of Megatron-LM's training_log() (with --log-throughput) */
	mt_proxy_iter_line(buf, sizeof(buf), (long long)t, 15, 100, 128, 5.9264, 220.44);
	assert_string_equal(buf, " [2024-04-06 02:56:58] iteration       15/     100 | consumed "
			    "samples:         1920 | elapsed time per iteration (ms): 5926.4 | "
			    "throughput per GPU (TFLOP/s/GPU): 220.4 | learning rate: 0.000000E+00 | "
			    "global batch size:   128 | lm loss: 0.000000E+00 | loss scale: 1.0 | "
			    "number of skipped iterations:   0 | number of nan iterations:   0 |");
	mt_proxy_mem_line(buf, sizeof(buf), 0, 20, 6245.033203125, 6245.0361328125, 6554, 6554);
	assert_string_equal(buf, "[Rank 0] (after 20 iterations) memory (MB) | allocated: 6245.03 "
			    "| max allocated: 6245.04 | reserved: 6554.00 | max reserved: 6554.00");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plan_shapes_tp2),
		cmocka_unit_test(plan_no_sp_cp_pp),
		cmocka_unit_test(plan_scales_down),
		cmocka_unit_test(plan_refuses),
		cmocka_unit_test(megatron_lines),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
