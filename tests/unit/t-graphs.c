/* SPDX-License-Identifier: MIT */
/* CUDA graph scopes and the dispatcher's token buffers in the memory model
 * (docs/MODEL.md 4.8, 5.10), against the tensors Megatron-Core and
 * Transformer Engine keep: a graphed attention adds its mask per layer and
 * micro-batch in flight, the router's graph its outputs; per-layer graphs of
 * the router and the preprocessing run beside the 1F1B EP overlap, those of
 * the attention do not; the dropless dispatcher's buffers follow the busiest
 * rank's load and the top-k, DeepEP's and HybridEP's own buffers their
 * sources' sizes. */
#include <math.h>

#include "testutil.h"

#include "../../tuner/gains.h"
#include "../../tuner/search.h"
#include "../../perfmodel/dispatch.h"
#include "../../perfmodel/graphs.h"
#include "../../perfmodel/perf.h"

static struct mt_cluster *h100, *b200;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	if (mt_cluster_load("dgx-h100", &h100, &err) || mt_cluster_load("dgx-b200", &b200, &err))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mt_cluster_free(h100);
	mt_cluster_free(b200);
	return 0;
}

static void job_for(struct mt_job *j, int gpus, int seq, int gbs)
{
	mt_job_init(j);
	j->gpus = gpus;
	j->seq = seq;
	j->gbs = gbs;
}

static void config_for(struct mt_config *c, const struct mt_job *j, int tp, int pp, int ep)
{
	memset(c, 0, sizeof(*c));
	mt_config_settings(j, c);
	c->tp = tp;
	c->pp = pp;
	c->vpp = c->cp = c->etp = c->mbs = 1;
	c->ep = ep;
	c->sp = tp > 1;
	c->grad_fp32 = c->dist_opt = 1;
	c->dispatcher = MT_DISPATCH_ALLTOALL;
	c->dp = j->gpus / (tp * pp);
	c->num_mb = (int)(j->gbs / c->dp);
}

/* The memory of stage st of cfg under j; *layers: the stage's layers when
 * not NULL */
static struct mt_mem stage_mem_n(const struct mt_model *m, const struct mt_cluster *cl,
				 const struct mt_job *j, struct mt_config *cfg, int st, int *layers)
{
	struct mt_ctx x;
	struct mt_shape sh;
	struct mt_costs *a = malloc(sizeof(*a));
	struct mt_plan *plan = malloc(sizeof(*plan));
	struct mt_mem mem[MT_MAX_PP];

	assert_non_null(a);
	assert_non_null(plan);
	mt_ctx_init(&x, m, cl, j);
	mt_config_moe_settings(m, cl, cfg);
	mt_shape_of(cfg, &sh);
	mt_costs_compute(&x, &sh, a);
	assert_int_equal(mt_plan_compute(&x, a, cfg->pp, cfg->vpp, cfg->dp, cfg->num_mb, cfg, plan), 0);
	mt_memory_stages(&x, a, plan, cfg, mem);
	if (layers)
		*layers = plan->nl[st][0] + plan->nl[st][1];
	free(a);
	free(plan);
	return mem[st];
}

static struct mt_mem stage_mem(const struct mt_model *m, const struct mt_cluster *cl,
			       const struct mt_job *j, struct mt_config *cfg, int st)
{
	return stage_mem_n(m, cl, j, cfg, st, NULL);
}

/* A graphed attention takes its mask [b, 1, s/cp, s] of booleans as a static
 * input, built for each layer (transformer_layer.py @ d98e8a6 1221-1232):
 * graphing the MLP alone drops mbs * s * s bytes per layer and micro-batch
 * in flight, and each layer keeps its inputs (hidden states, BF16) and
 * outputs per micro-batch in flight, so the first of two stages, with two
 * micro-batches in flight, holds one more set per layer than the last. */
static void graphed_attention_keeps_its_mask(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_config c;
	struct mt_mem both, mlp, st0, st1;
	const double s = 4096, T = s, h = 4096, A = T * h * 2; /* MBS 1, TP 1, CP 1 */
	int n0, n1;

	(void)state;
	assert_int_equal(mt_model_load("llama3-8b", &m, &err), 0);
	job_for(&j, 8, 4096, 64);
	config_for(&c, &j, 1, 1, 1);
	c.cuda_graph = 1;
	j.graph_scope = 1u << MT_GS_ATTN | 1u << MT_GS_MLP;
	both = stage_mem(&m, h100, &j, &c, 0);
	j.graph_scope = 1u << MT_GS_MLP;
	mlp = stage_mem(&m, h100, &j, &c, 0);
	assert_true(both.cuda_graphs > mlp.cuda_graphs);
	assert_close(both.cuda_graphs - mlp.cuda_graphs, m.layers * T * s, 1e-9);
	/* and nothing without graphs */
	c.cuda_graph = 0;
	assert_true(stage_mem(&m, h100, &j, &c, 0).cuda_graphs == 0);
	/* PP 2, 1F1B: stage 0 two micro-batches in flight, stage 1 one: per
	 * layer and micro-batch an input (hidden states and mask) and an output
	 * (the layer's hidden states), beside what the graphs share */
	j.graph_scope = 0;
	config_for(&c, &j, 1, 2, 1);
	c.cuda_graph = 1;
	st0 = stage_mem_n(&m, h100, &j, &c, 0, &n0);
	st1 = stage_mem_n(&m, h100, &j, &c, 1, &n1);
	assert_close(st0.cuda_graphs - st1.cuda_graphs, (2.0 * n0 - n1) * (A + T * s + A), 1e-9);
}

/* The router's graph returns what the dispatcher's preprocessing made
 * (moe_utils.py @ d98e8a6 1564-1597) and the residual (transformer_layer.py
 * 951): with the all-to-all dispatcher the k permuted copies of every token
 * and their FP32 probabilities (token_dispatcher.py:665-680); graphing the
 * attention alone returns the attention's hidden states.  Per MoE layer and
 * micro-batch in flight, and once more for the gradient buffers the graphs
 * share (graph.py @ TE v2.10 512-525), the router's scope keeps
 * k * A + 4 k Tm bytes more.  Without the attention in the graph, the mask
 * goes. */
static void router_scope_keeps_the_routed_copies(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_config c;
	struct mt_mem full, attn, router;
	const double s = 4096, Tm = s; /* MBS 1, TP 1 */
	double A, k;

	(void)state;
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	assert_int_equal(m.moe_layers, m.layers);
	assert_int_equal(m.shared_ffn, 0);
	A = Tm * m.hidden * 2;
	k = m.topk;
	job_for(&j, 8, 4096, 64);
	config_for(&c, &j, 1, 1, 8);
	c.cuda_graph = 1;
	j.graph_scope = 1u << MT_GS_ATTN | 1u << MT_GS_ROUTER | 1u << MT_GS_PRE;
	full = stage_mem(&m, b200, &j, &c, 0);
	j.graph_scope = 1u << MT_GS_ATTN;
	attn = stage_mem(&m, b200, &j, &c, 0);
	j.graph_scope = 1u << MT_GS_ROUTER | 1u << MT_GS_PRE;
	router = stage_mem(&m, b200, &j, &c, 0);
	assert_close(full.cuda_graphs - attn.cuda_graphs, (m.layers + 1) * (k * A + 4 * k * Tm), 1e-9);
	assert_close(full.cuda_graphs - router.cuda_graphs, m.layers * Tm * s, 1e-9);
	/* a pool of the graphs, reserved but not allocated: reserved less max
	 * allocated grows by what the pool holds more */
	assert_true(full.reserved - full.max_allocated > attn.reserved - attn.max_allocated);
}

static void eval_qwen(const struct mt_job *j, int graphs, struct mt_eval *e, struct mt_error *err,
		      int *rc)
{
	struct mt_model m;
	struct mt_config c;

	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, err), 0);
	config_for(&c, j, 1, 1, 8);
	c.cuda_graph = graphs;
	*rc = mt_evaluate(&m, b200, j, NULL, &c, e, err);
}

/* Megatron-LM runs per-layer graphs of the router and the preprocessing
 * beside the 1F1B EP overlap (transformer_config.py @ d98e8a6 3063-3071
 * refuses only mlp and moe; arguments.py:1910-1918 wants Transformer Engine
 * 2.12 where a graph holds delayed weight gradients: graphed attention, or
 * a router graph with the shared experts in it): megatune takes and times
 * it, the host issuing less than without the graphs. */
static void router_graphs_run_beside_the_ep_overlap(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_job j;
	struct mt_eval on, off;
	int rc;

	(void)state;
	job_for(&j, 8, 4096, 64);
	j.pins.ep_overlap = 1;
	j.pins.cuda_graph = 1;
	j.graph_scope = 1u << MT_GS_ROUTER | 1u << MT_GS_PRE;
	eval_qwen(&j, 1, &on, &err, &rc);
	if (rc)
		fail_msg("%s", err.msg);
	assert_true(on.cfg.cuda_graph && on.cfg.ep_overlap);
	assert_true(on.mem.cuda_graphs > 0);
	j.pins.cuda_graph = 0;
	j.graph_scope = 0;
	eval_qwen(&j, 0, &off, &err, &rc);
	if (rc)
		fail_msg("%s", err.msg);
	assert_true(!off.cfg.cuda_graph && off.cfg.ep_overlap);
	assert_true(on.time.host_cpu < off.time.host_cpu);
	assert_true(on.time.step <= off.time.step);
}

/* ... and refuses the rest, with Megatron-LM's check */
static void other_graphs_refused_beside_the_ep_overlap(void **state)
{
	static const struct {
		const char *model;
		unsigned scope;
		const char *cite;
	} cases[] = {
		/* megatune's default graphs the attention */
		{ "qwen3-30b-a3b", 0, "arguments.py:1910-1918" },
		{ "qwen3-30b-a3b", 1u << MT_GS_ATTN | 1u << MT_GS_ROUTER | 1u << MT_GS_PRE,
		  "arguments.py:1910-1918" },
		/* the router's graph holds the shared experts */
		{ "deepseek-v3", 1u << MT_GS_ROUTER | 1u << MT_GS_PRE, "shared experts" },
		/* a graphed dense MLP */
		{ "deepseek-v3", 1u << MT_GS_MLP | 1u << MT_GS_ROUTER | 1u << MT_GS_PRE,
		  "transformer_config.py:3063-3071" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_model m;
		struct mt_job j;

		assert_int_equal(mt_model_load(cases[i].model, &m, &err), 0);
		job_for(&j, 256, 4096, 1024);
		j.pins.ep_overlap = 1;
		j.pins.cuda_graph = 1;
		j.graph_scope = cases[i].scope;
		assert_non_null(mt_graph_overlap_reason(&m, &j));
		assert_int_equal(mt_job_check(&m, h100, &j, &err), MT_EINVAL);
		if (!strstr(err.msg, "--cuda-graphs on with --ep-overlap on") ||
		    !strstr(err.msg, cases[i].cite))
			fail_msg("case %zu: %s", i, err.msg);
	}
}

/* The search takes the pair where the scopes allow it, and the gains of the
 * pick revert each alone */
static void search_and_gains_take_the_pair(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *res = calloc(1, sizeof(*res));
	struct mt_gain g[16];
	int n, i, seen = 0;

	(void)state;
	assert_non_null(res);
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	job_for(&j, 8, 4096, 64);
	j.pins.tp = j.pins.pp = j.pins.cp = 1;
	j.pins.ep = 8;
	j.pins.ep_overlap = 1;
	j.pins.cuda_graph = 1;
	j.graph_scope = 1u << MT_GS_ROUTER | 1u << MT_GS_PRE;
	if (mt_search(&m, b200, &j, NULL, res, &err))
		fail_msg("%s", err.msg);
	assert_true(res->ntop > 0);
	assert_true(res->top[0].cfg.cuda_graph && res->top[0].cfg.ep_overlap);
	n = mt_gains(&m, b200, &j, &res->top[0], NULL, g, 16);
	for (i = 0; i < n; i++) {
		if (strcmp(g[i].setting, "cuda-graphs") && strcmp(g[i].setting, "ep-overlap"))
			continue;
		seen++;
		if (isnan(g[i].gain))
			fail_msg("%s: %s", g[i].setting, g[i].with);
	}
	assert_int_equal(seen, 2);
	free(res);
}

/* Dropless, the buffers see the busiest rank over the stage's dispatches:
 * the spread of the time model's busiest of ep ranks (lam = 1 + m_ep sigma,
 * docs/MODEL.md 4.1) over MT_MOE_PEAK_DRAWS draws, m_4096 = 3.5758; it grows
 * with the router's skew; padded token drop fills every expert to its
 * capacity; no rank receives more than every token's copies on its
 * experts. */
static void dropless_peak_follows_the_busiest_rank(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_ctx x;
	const double Tm = 4096, m8 = 1.4236, m4096 = 3.5758;
	double forced, aux, pre, lam;

	(void)state;
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	job_for(&j, 8, 4096, 64);
	mt_ctx_init(&x, &m, h100, &j);
	j.moe_balance = MT_BAL_FORCED;
	forced = mt_moe_peak_load(&x, 8, Tm, 1000);
	j.moe_balance = MT_BAL_AUX;
	aux = mt_moe_peak_load(&x, 8, Tm, 1000);
	lam = mt_moe_imbalance(&x, 8, Tm);
	assert_close(aux, 1 + (lam - 1) * m4096 / m8, 1e-3);
	j.moe_balance = MT_BAL_PRETRAINED;
	pre = mt_moe_peak_load(&x, 8, Tm, 1000);
	assert_true(1 < forced && forced < aux && aux < pre);
	/* one draw a rank: the time model's busiest rank */
	assert_close(mt_moe_peak_load(&x, 8, Tm, 1), mt_moe_imbalance(&x, 8, Tm), 1e-12);
	/* so few tokens that the spread is wide: at most 8 ranks x min(8, 16) / 8 */
	assert_close(mt_moe_peak_load(&x, 8, 0.01, 1e6), 8, 1e-12);
	j.moe_balance = MT_BAL_DROP;
	j.moe_capacity = 1.25;
	assert_close(mt_moe_peak_load(&x, 8, Tm, 1000), 1.25, 1e-12);
}

/* The all-to-all dispatcher's buffers of one MoE layer: what the rank
 * receives and its sort by local expert, 2 x load x Tm x k x h x 2 bytes
 * (token_dispatcher.py @ d98e8a6 705, 782), in the allocator; twice the
 * top-k, twice the bytes per unit of load. */
static void alltoall_buffers_follow_load_and_topk(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_config c;
	struct mt_ctx x;
	struct mt_mem mem;
	const double Tm = 4096;
	double load, k8, k4;
	int topk;

	(void)state;
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	job_for(&j, 8, 4096, 64);
	config_for(&c, &j, 1, 1, 8);
	mem = stage_mem(&m, h100, &j, &c, 0);
	mt_ctx_init(&x, &m, h100, &j);
	load = mt_moe_peak_load(&x, 8, Tm, (double)m.moe_layers * c.num_mb);
	assert_close(mem.moe_dispatch, 2 * load * Tm * m.topk * m.hidden * 2, 1e-9);
	/* outside the allocator: NCCL and the context alone */
	assert_close(mem.outside, mem.nccl + mem.cuda_context, 1e-9);
	topk = m.topk;
	k8 = mem.moe_dispatch / load;
	m.topk = topk / 2;
	mem = stage_mem(&m, h100, &j, &c, 0);
	mt_ctx_init(&x, &m, h100, &j);
	k4 = mem.moe_dispatch / mt_moe_peak_load(&x, 8, Tm, (double)m.moe_layers * c.num_mb);
	assert_close(k8 / k4, 2, 1e-9);
}

/* The flex backends' own buffers, outside the allocator, at their sources'
 * sizes for Qwen3-30B-A3B (h 2048, 128 experts) on 8 GPUs of one NVLink
 * domain, 4096 tokens a rank.  DeepEP v1.2.1 (csrc/config.hpp:44-95) with 20
 * SMs: 10 channels x 8 peers x ((2 + 3) ints + 256 slots x (the token,
 * 8 + 128 x 8 + 128 x 4 + 128 x 4 bytes)), no RDMA within 8 ranks.  HybridEP
 * (hybrid-ep @ 94a9f8f6b1 intranode.cu:126-261): 8 x 4096 tokens, each the
 * token, an FP32 probability per expert of the domain and an FP32 scale per
 * 128 elements, shared by dispatch and combine. */
static void flex_backends_preallocate_their_buffers(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_config c;
	struct mt_mem mem;
	const double h = 2048, Tm = 4096;
	int backend = h100->dispatch.flex_backend, sms = h100->dispatch.flex_sms;

	(void)state;
	assert_int_equal(mt_model_load("qwen3-30b-a3b", &m, &err), 0);
	job_for(&j, 8, 4096, 64);
	config_for(&c, &j, 1, 1, 8);
	c.dispatcher = MT_DISPATCH_FLEX;
	h100->dispatch.flex_backend = MT_FLEX_DEEPEP;
	h100->dispatch.flex_sms = 20;
	mem = stage_mem(&m, h100, &j, &c, 0);
	assert_close(mem.outside - mem.nccl - mem.cuda_context,
		     10.0 * 8 * 5 * 4 + 10.0 * 8 * 256 * (2 * h + 8 + 128 * 8 + 128 * 4 + 128 * 4),
		     1e-9);
	h100->dispatch.flex_backend = MT_FLEX_HYBRIDEP;
	mem = stage_mem(&m, h100, &j, &c, 0);
	assert_close(mem.outside - mem.nccl - mem.cuda_context,
		     Tm * 8 * (2 * h + 4 * 128 + 4 * h / 128), 1e-9);
	h100->dispatch.flex_backend = backend;
	h100->dispatch.flex_sms = sms;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(graphed_attention_keeps_its_mask),
		cmocka_unit_test(router_scope_keeps_the_routed_copies),
		cmocka_unit_test(router_graphs_run_beside_the_ep_overlap),
		cmocka_unit_test(other_graphs_refused_beside_the_ep_overlap),
		cmocka_unit_test(search_and_gains_take_the_pair),
		cmocka_unit_test(dropless_peak_follows_the_busiest_rank),
		cmocka_unit_test(alltoall_buffers_follow_load_and_topk),
		cmocka_unit_test(flex_backends_preallocate_their_buffers),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
