/* SPDX-License-Identifier: MIT */
/* The host timeline (perfmodel/host.c, docs/MODEL.md 5.8): the flow shop between
 * synchronisation points, the waits of each dispatcher, what CUDA graphs and
 * padded token drop change, and the host-bound published rows' regime. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include "../../perfmodel/perf.h"

#define MS 1e-3
/* doubles equal within eps (cmocka compares floats) */
#define assert_near(a, b, eps) assert_true(fabs((double)(a) - (double)(b)) <= (eps))

/* A MoE layer with a CPU-heavy expert region after its wait and GPU-heavy
 * attention before it. */
static void moe_layer(struct mt_host_layer *h, int sync)
{
	*h = (struct mt_host_layer){ 0 };
	h->cf[MT_HR_ATTN] = 0.2 * MS, h->gf[MT_HR_ATTN] = 1.0 * MS;
	h->cf[MT_HR_ROUTER] = 0.2 * MS;
	h->cf[MT_HR_PRE] = 0.1 * MS;
	h->cf[MT_HR_DISPATCH] = 0.05 * MS, h->gf[MT_HR_DISPATCH] = 0.1 * MS;
	h->cf[MT_HR_MLP] = 1.0 * MS, h->gf[MT_HR_MLP] = 0.2 * MS;
	h->cf[MT_HR_COMBINE] = 0.05 * MS, h->gf[MT_HR_COMBINE] = 0.1 * MS;
	h->cb[MT_HR_ATTN] = 0.2 * MS;
	h->cb[MT_HR_MLP] = 1.0 * MS;
	h->graphable = 1u << MT_HR_ATTN | 1u << MT_HR_ROUTER | 1u << MT_HR_PRE;
	h->graph_calls = 2;
	h->sync = sync;
	mt_host_layer_finish(h, 20e-6); /* a graphed callable: 20 µs */
}

static void no_wait_is_the_longer_of_cpu_and_gpu(void **state)
{
	struct mt_host_layer hl[2];
	struct mt_host_tl tl;
	double nl[2] = { 0, 4 };

	(void)state;
	moe_layer(&hl[0], MT_HS_NONE);
	moe_layer(&hl[1], MT_HS_NONE);
	/* GPU-bound: the host runs ahead */
	mt_host_timeline(hl, nl, 0, 20e-6, 20 * MS, 0, &tl);
	assert_int_equal(tl.syncs, 0);
	assert_near(tl.cpu, 4 * (1.6 + 1.2) * MS, 1e-12);
	assert_near(tl.t, 20 * MS, 1e-12);
	/* host-bound: the CPU sets the pace */
	mt_host_timeline(hl, nl, 0, 20e-6, 5 * MS, 0, &tl);
	assert_near(tl.t, tl.cpu, 1e-12);
}

static void a_wait_splits_the_overlap(void **state)
{
	struct mt_host_layer hl[2];
	struct mt_host_tl a, b;
	double nl[2] = { 0, 4 }, gpu;

	(void)state;
	moe_layer(&hl[0], MT_HS_NONE);
	moe_layer(&hl[1], MT_HS_NONE);
	/* the GPU's time: 4 layers' forward (1.4 ms) and a backward of 8 ms */
	gpu = 4 * 1.4 * MS + 8 * MS;
	mt_host_timeline(hl, nl, 0, 0, gpu, 0, &a);
	assert_near(a.t, gpu, 1e-12); /* no wait: 11.2 ms of CPU hides */
	moe_layer(&hl[1], MT_HS_BEFORE_DISPATCH);
	mt_host_timeline(hl, nl, 0, 0, gpu, 0, &b);
	assert_int_equal(b.syncs, 4);
	assert_int_equal(b.sync, MT_HS_BEFORE_DISPATCH);
	/* between two waits: dispatch, experts (CPU-heavy), combine, then the
	 * next attention (GPU-heavy): the flow shop exceeds both sums */
	assert_near(b.seg_cpu, 1.6 * MS, 1e-12);
	assert_near(b.seg_gpu, 1.4 * MS, 1e-12);
	assert_true(b.seg_t > fmax(b.seg_cpu, b.seg_gpu) + 0.1 * MS);
	/* the host issues the dispatch and the experts (0.05 + 1.0 ms) while
	 * the GPU waits, then the GPU runs the combine and the next attention
	 * (0.1 + 1.0 ms) while the host issues ahead */
	assert_near(b.seg_t, (0.05 + 1.0 + 0.1 + 1.0) * MS, 1e-12);
	assert_true(b.t > a.t);
	assert_near(b.t, 3 * b.seg_t + b.cyc_t, 1e-12);
	/* each wait costs its synchronisation too */
	mt_host_timeline(hl, nl, 0, 30e-6, gpu, 0, &a);
	assert_near(a.t - b.t, 4 * 30e-6, 1e-12);
}

static void graphs_replace_the_captured_regions(void **state)
{
	struct mt_host_layer h;
	double eager, graphed;

	(void)state;
	moe_layer(&h, MT_HS_BEFORE_DISPATCH);
	eager = mt_host_layer_cpu(&h, 0);
	graphed = mt_host_layer_cpu(&h, 1);
	assert_near(eager, 2.8 * MS, 1e-12);
	/* attention, router and preprocessing (0.5 ms forward, 0.2 backward)
	 * become 2 replays each way */
	assert_near(graphed, eager - 0.7 * MS + 4 * 20e-6, 1e-12);
}

/* What costs.c builds for Qwen3-30B-A3B: the all-to-all dispatcher waits
 * before its all-to-all, HybridEP after the dispatch, padded token drop not
 * at all; a dense model never. */
static void dispatchers_place_their_waits(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_cluster *c = NULL;
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs a;
	struct mt_shape sh = { .tp = 1, .cp = 1, .mbs = 1, .ep = 8, .etp = 1, .sp = 0,
			       .fused_ce = 1, .dispatcher = MT_DISPATCH_ALLTOALL };
	double experts16, experts8;

	(void)state;
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	assert_int_equal(mt_cluster_load("dgx-b200", &c, &err), 0);
	mt_job_init(&j);
	j.gpus = 8, j.seq = 4096, j.gbs = 512;
	j.precision = MT_PREC_FP8;
	j.fp8_recipe = mt_fp8_recipe_parse("mxfp8");
	mt_ctx_init(&x, &m, c, &j);
	/* x86 defaults: 13.5 µs an eager op, 36 µs a TE module, twice that
	 * for quantised linears */
	assert_near(x.hc.eager, 13.5e-6, 1e-12);
	assert_near(x.hc.te_fp8, 72e-6, 1e-12);
	mt_costs_compute(&x, &sh, &a);
	assert_int_equal(a.hl[MT_L_MOE].sync, MT_HS_BEFORE_DISPATCH);
	assert_true(a.hl[MT_L_MOE].gf[MT_HR_DISPATCH] > 0);
	assert_true(a.hl[MT_L_MOE].gf[MT_HR_PRE] > 0); /* the counts' all-gather */
	experts16 = a.hl[MT_L_MOE].cf[MT_HR_MLP];
	/* 16 local experts: 2 TE linears, 4 eager ops, 16 x (2 GEMMs x 5 + 2) */
	assert_near(experts16, 2 * 72e-6 + (4 + 16 * 12) * 13.5e-6, 1e-9);
	sh.ep = 16, j.gpus = 16;
	mt_costs_compute(&x, &sh, &a);
	experts8 = a.hl[MT_L_MOE].cf[MT_HR_MLP];
	assert_near(experts16 - experts8, 8 * 12 * 13.5e-6, 1e-9);
	/* DeepEP and HybridEP wait for the counts their notify kernel exchanges,
	 * before the tokens move, as the all-to-all dispatcher does; the
	 * allgather dispatcher after its gather */
	sh.dispatcher = MT_DISPATCH_FLEX;
	mt_costs_compute(&x, &sh, &a);
	assert_int_equal(a.hl[MT_L_MOE].sync, MT_HS_BEFORE_DISPATCH);
	assert_true(a.hl[MT_L_MOE].gf[MT_HR_PRE] > 0); /* the notify's exchange */
	sh.dispatcher = MT_DISPATCH_ALLGATHER;
	mt_costs_compute(&x, &sh, &a);
	assert_int_equal(a.hl[MT_L_MOE].sync, MT_HS_DISPATCH);
	sh.dispatcher = MT_DISPATCH_FLEX;
	j.moe_balance = MT_BAL_DROP, j.moe_capacity = 1;
	mt_costs_compute(&x, &sh, &a);
	assert_int_equal(a.hl[MT_L_MOE].sync, MT_HS_NONE);
	assert_int_equal(a.hl[MT_L_MOE].graphable, (1u << MT_HR_N) - 1);
	mt_cluster_free(c);

}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(no_wait_is_the_longer_of_cpu_and_gpu),
		cmocka_unit_test(a_wait_splits_the_overlap),
		cmocka_unit_test(graphs_replace_the_captured_regions),
		cmocka_unit_test(dispatchers_place_their_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
