/* SPDX-License-Identifier: MIT */
/* Search: pins, pruning, soundness of what it returns, and an evaluation that
 * allocates nothing (malloc is wrapped at link time, see the Makefile). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "testutil.h"

#include "../../rules/engine.h"
#include "../../perfmodel/perf.h"
#include "../../tuner/rank.h"
#include "../../tuner/search.h"

/* --- allocation counter: -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc */
void *__real_malloc(size_t n);
void *__real_calloc(size_t a, size_t b);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t a, size_t b);
void *__wrap_realloc(void *p, size_t n);
static long allocations;

void *__wrap_malloc(size_t n)
{
	allocations++;
	return __real_malloc(n);
}

void *__wrap_calloc(size_t a, size_t b)
{
	allocations++;
	return __real_calloc(a, b);
}

void *__wrap_realloc(void *p, size_t n)
{
	allocations++;
	return __real_realloc(p, n);
}

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

static struct mt_search_result *run(const char *model, struct mt_job *j, struct mt_model *m)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_search_result *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	assert_int_equal(mt_model_load(model, m, &err), 0);
	if (mt_search(m, h100, j, NULL, r, &err))
		fail_msg("%s", err.msg);
	return r;
}

static void job(struct mt_job *j, int gpus, int seq, int gbs)
{
	mt_job_init(j);
	j->gpus = gpus;
	j->seq = seq;
	j->gbs = gbs;
	j->top_k = 16;
}

/* Sizes multiply to the GPU count, memory fits, the ranking is ordered, and
 * the tensor-parallel group stays inside the NVLink domain. */
/* Llama 3 8B on 8 H100 at 8K, the model alone: the fastest candidate (the
 * precision-aware optimizer, which the search takes where nothing fits
 * without it) fills 72.7 of 75.7 GiB for 0.1% over the fastest one below 95%
 * (71.7 GiB); it is ranked second: the gap is within the first one's band,
 * whatever the tolerance, unless the tolerance is 0 (docs/MODEL.md 7.1) */
static void headroom_before_speed(void **state)
{
	static const double tols[] = { MT_ROOMY_TOL, 0.001, 0 };
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(tols) / sizeof(tols[0]); i++) {
		job(&j, 8, 8192, 64);
		j.roomy_tol = tols[i];
		r = run("llama3-8b", &j, &m);
		assert_true(r->ntop > 1);
		assert_int_equal(r->roomy_pick, tols[i] > 0);
		if (tols[i] > 0) {
			assert_true(r->top[0].mem.total <= MT_ROOMY_USE * r->capacity_bytes);
			assert_true(r->top[1].mem.total > MT_ROOMY_USE * r->capacity_bytes);
			assert_true(r->top[1].time.step < r->top[0].time.step);
			assert_true(r->top[0].time.step <= r->top[1].band.hi);
		} else {
			/* the same fastest candidate, first */
			assert_true(r->top[0].mem.total > MT_ROOMY_USE * r->capacity_bytes);
		}
		free(r);
	}
}

/* Llama 3 70B on 64 H100 at 8K: flat, the top 5 is one layout (TP4 PP2 CP2)
 * in five VPP values; folded, five distinct layouts, the same best first, and
 * each entry's variants are its own layout, in the ranking's order, the flat
 * list's runner-up among them (docs/MODEL.md 7.2) */
static void the_ranking_is_one_row_per_layout(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *flat, *r;
	int i, k, same = 0;

	(void)state;
	job(&j, 64, 8192, 128);
	j.top_k = 5;
	j.no_fold = 1;
	flat = run("llama3-70b", &j, &m);
	for (i = 1; i < flat->ntop; i++)
		same += mt_same_layout(&flat->top[0].cfg, &flat->top[i].cfg);
	assert_true(same >= 2); /* what folding is for */
	j.no_fold = 0;
	r = run("llama3-70b", &j, &m);
	assert_int_equal(r->ntop, 5);
	assert_true(!memcmp(&r->top[0].cfg, &flat->top[0].cfg, sizeof(r->top[0].cfg)));
	assert_true(r->folded[0] >= 3);
	for (i = 0; i < r->ntop; i++) {
		for (k = 0; k < i; k++)
			assert_false(mt_same_layout(&r->top[i].cfg, &r->top[k].cfg));
		if (i)
			assert_true(r->top[i - 1].time.step + r->top[i - 1].band.spec_hi <=
				    r->top[i].time.step + r->top[i].band.spec_hi);
		assert_true(r->nvar[i] <= MT_VARIANTS && r->nvar[i] <= r->folded[i]);
		for (k = 0; k < r->nvar[i]; k++) {
			assert_true(mt_same_layout(&r->var[i][k].cfg, &r->top[i].cfg));
			if (k)
				assert_true(r->var[i][k - 1].key <= r->var[i][k].key);
		}
	}
	/* the flat list's second row is folded under the first */
	for (k = 0; k < r->nvar[0]; k++)
		if (r->var[0][k].step == flat->top[1].time.step &&
		    r->var[0][k].cfg.vpp == flat->top[1].cfg.vpp &&
		    r->var[0][k].cfg.mbs == flat->top[1].cfg.mbs)
			break;
	assert_true(k < r->nvar[0] || !mt_same_layout(&flat->top[1].cfg, &flat->top[0].cfg));
	free(flat);
	free(r);
}

/* DP 1 (TP 8 on 8 GPUs): nothing to shard, so no candidate differs from
 * another only by the distributed optimizer or FSDP; DDP's row stands */
static void one_data_parallel_rank_is_one_optimizer_row(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r;
	int k;

	(void)state;
	job(&j, 8, 4096, 64);
	j.pins.tp = 8;
	r = run("llama3-8b", &j, &m);
	assert_true(r->ntop > 1);
	for (k = 0; k < r->ntop; k++) {
		assert_int_equal(r->top[k].cfg.dp, 1);
		assert_int_equal(r->top[k].cfg.dist_opt, 0);
		assert_int_equal(r->top[k].cfg.fsdp, MT_FSDP_OFF);
	}
	free(r);
	/* the optimizer offload is the distributed optimizer's: then its row */
	job(&j, 8, 4096, 64);
	j.pins.tp = 8;
	j.opt_offload = 1;
	r = run("llama3-8b", &j, &m);
	assert_true(r->ntop > 0);
	for (k = 0; k < r->ntop; k++)
		assert_int_equal(r->top[k].cfg.dist_opt, 1);
	free(r);
}

static void results_are_sound(void **state)
{
	static const struct {
		const char *model;
		int gpus, seq, gbs;
	} cases[] = {
		{ "llama3-70b", 64, 8192, 128 },
		{ "deepseek-v3", 1024, 4096, 8192 },
		{ "qwen3-235b-a22b", 256, 4096, 2048 },
		{ "mixtral-8x22b", 128, 4096, 1024 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mt_model m;
		struct mt_job j;
		struct mt_search_result *r;
		int k;

		job(&j, cases[i].gpus, cases[i].seq, cases[i].gbs);
		r = run(cases[i].model, &j, &m);
		assert_true(r->ntop > 0);
		for (k = 0; k < r->ntop; k++) {
			const struct mt_eval *e = &r->top[k];
			const struct mt_config *c = &e->cfg;

			assert_int_equal(c->tp * c->cp * c->pp * c->dp, j.gpus);
			assert_int_equal(c->etp * c->ep * c->edp * c->pp, j.gpus);
			assert_int_equal((long)c->dp * c->mbs * c->num_mb, j.gbs);
			assert_true(e->feasible);
			assert_true(e->mem.total <= r->capacity_bytes);
			assert_true(c->tp <= h100->nvlink_domain);
			/* EP crosses NVLink domains only where flex carries it or the
			 * 1F1B overlap hides it (rule moe-ep-nvlink) */
			assert_true(c->ep * c->etp <= 64 || c->dispatcher == MT_DISPATCH_FLEX ||
				    c->ep_overlap);
			/* in the order of the step at the upper end of each one's own
			 * terms (docs/MODEL.md 8.1), but for a first pick off the
			 * memory limit ranked above a faster one on it (7.1); every
			 * band holds its step */
			assert_true(e->band.lo < e->time.step && e->time.step < e->band.hi);
			assert_true(e->band.spec_hi >= 0 && e->band.spec_hi < e->band.hi - e->band.lo);
			if (k > 1 || (k == 1 && !r->roomy_pick))
				assert_true(e->time.step + e->band.spec_hi >=
					    r->top[k - 1].time.step + r->top[k - 1].band.spec_hi);
			if (k == 1 && r->roomy_pick) {
				/* the one it displaced was first by the ranking's key */
				assert_true(mt_rank_key(e) <= mt_rank_key(&r->top[0]));
				/* within roomy_tol: the wider of the tolerance and
				 * the faster one's band */
				assert_true(r->top[0].time.step <= e->time.step * (1 + MT_ROOMY_TOL) ||
					    r->top[0].time.step <= e->band.hi);
				assert_true(r->top[0].mem.total <= MT_ROOMY_USE * r->capacity_bytes);
				assert_true(e->mem.total > MT_ROOMY_USE * r->capacity_bytes);
			}
			assert_true(e->tput.mfu > 0.05 && e->tput.mfu < 0.7);
		}
		/* the best of a dense 70B at 8K sequence is tensor-parallel and fits
		 * without full recompute of every layer */
		if (!strcmp(cases[i].model, "llama3-70b"))
			assert_true(r->top[0].cfg.tp >= 4);
		/* the experts of a MoE are sharded: over EP, or by Megatron-FSDP */
		if (m.experts)
			assert_true(r->top[0].cfg.ep > 1 || r->top[0].cfg.fsdp);
		free(r);
	}
}

static void every_knob_pinned_is_one_evaluation(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r;

	(void)state;
	job(&j, 64, 8192, 128);
	j.pins.tp = 8;
	j.pins.pp = 4;
	j.pins.vpp = 5;
	j.pins.cp = 1;
	j.pins.ep = 1;
	j.pins.etp = 1;
	j.pins.mbs = 1;
	j.pins.recompute = MT_RC_SELECTIVE;
	j.pins.dist_opt = 1;
	j.pins.offload_layers = 0;
	j.pins.sp = 1;
	j.pins.fsdp = MT_FSDP_OFF;
	r = run("llama3-70b", &j, &m);
	assert_int_equal(r->evaluated, 1);
	assert_int_equal(r->ntop, 1);
	assert_int_equal(r->top[0].cfg.vpp, 5);
	assert_int_equal(r->top[0].cfg.recompute, MT_RC_SELECTIVE);
	free(r);
}

/* Qwen3-235B-A22B on 256 H100 as the ModelZoo ran it, every knob pinned */
static void zoo_job(struct mt_job *j, int ep_overlap)
{
	job(j, 256, 4096, 2048);
	j->top_k = 1;
	j->pins.tp = 2;
	j->pins.pp = 8;
	j->pins.vpp = 4;
	j->pins.cp = 1;
	j->pins.ep = 32;
	j->pins.etp = 1;
	j->pins.mbs = 1;
	j->pins.recompute = MT_RC_NONE;
	j->pins.dist_opt = 1;
	j->pins.offload_layers = 0;
	j->pins.sp = 1;
	j->pins.fsdp = MT_FSDP_OFF;
	j->pins.tp_overlap = 0;
	j->pins.cuda_graph = 0;
	j->pins.full_graph = 0;
	j->pins.rank_budget = 0;
	j->pins.ep_overlap = ep_overlap;
	j->moe_dispatcher = MT_DISPATCH_FLEX;
	j->moe_balance = MT_BAL_FORCED;
}

static const struct mt_gain *gain_named(const struct mt_gain *g, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(g[i].setting, name))
			return &g[i];
	fail_msg("no gain for %s", name);
	return NULL;
}

/* Each setting of a pick reverted alone (tuner/gains.h): the EP overlap's
 * gain is the step of the same job with it off, and it carries the ModelZoo
 * pair of its regime; the dispatcher has none on H100; a setting the pick
 * cannot run without has no gain and says why (docs/MODEL.md 8.2) */
static void gains_revert_each_setting_alone(void **state)
{
	struct mt_gain g[MT_GAINS_MAX];
	struct mt_search_result *on, *off;
	struct mt_config base;
	const struct mt_gain *x;
	struct mt_model m;
	struct mt_job j, joff;
	int n;

	(void)state;
	zoo_job(&j, 1);
	on = run("qwen3-235b-a22b", &j, &m);
	zoo_job(&joff, 0);
	off = run("qwen3-235b-a22b", &joff, &m);
	assert_int_equal(on->ntop, 1);
	assert_int_equal(off->ntop, 1);
	n = mt_gains(&m, h100, &j, &on->top[0], NULL, g, MT_GAINS_MAX);
	x = gain_named(g, n, "ep-overlap");
	assert_string_equal(x->from, "off");
	assert_string_equal(x->to, "on");
	assert_close(x->gain, off->top[0].time.step / on->top[0].time.step - 1, 1e-9);
	assert_true(x->gain > 0 && x->fits);
	assert_non_null(x->ev);
	assert_string_equal(x->ev->id, "zoo-qwen3-235b-ep-overlap");
	x = gain_named(g, n, "moe-dispatcher");
	assert_string_equal(x->from, "alltoall");
	assert_null(x->ev);
	assert_true(x->gain > 0);
	x = gain_named(g, n, "dist-opt");
	assert_true(x->mem_bytes > on->top[0].mem.total);
	/* against a job with full recomputation: the overlap cannot run with it */
	base = on->top[0].cfg;
	base.recompute = MT_RC_FULL;
	base.recompute_layers = 1;
	n = mt_gains(&m, h100, &j, &on->top[0], &base, g, MT_GAINS_MAX);
	assert_int_equal(n, 1);
	assert_string_equal(g[0].setting, "recompute");
	assert_true(isnan(g[0].gain));
	assert_non_null(strstr(g[0].with, "cannot run without it"));
	free(on);
	free(off);
}

static void pins_narrow_the_space(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *all, *some;
	int k;

	(void)state;
	job(&j, 64, 4096, 256);
	all = run("llama3-8b", &j, &m);
	j.pins.tp = 2;
	j.pins.recompute = MT_RC_NONE;
	some = run("llama3-8b", &j, &m);
	assert_true(some->evaluated < all->evaluated / 4);
	for (k = 0; k < some->ntop; k++) {
		assert_int_equal(some->top[k].cfg.tp, 2);
		assert_int_equal(some->top[k].cfg.recompute, MT_RC_NONE);
	}
	/* narrowing never finds something better */
	assert_true(some->top[0].time.step >= all->top[0].time.step);
	free(all);
	free(some);
}

/* llama3-8b on 64 GPUs: TP 16 and 32 do not divide its 8 KV heads, TP 64 is
 * more than its 32 heads. */
static void pruned_by_reason(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r;

	(void)state;
	job(&j, 64, 4096, 256);
	r = run("llama3-8b", &j, &m);
	assert_int_equal(r->pruned[MT_PRUNE_TP_GROUPS], 2);
	assert_int_equal(r->pruned[MT_PRUNE_TP_HEADS], 1);
	assert_true(r->pruned[MT_PRUNE_VPP] > 0);
	assert_int_equal(r->pruned[MT_PRUNE_EP_EXPERTS], 0);
	free(r);
}

static void nothing_feasible_keeps_the_closest(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r;

	(void)state;
	job(&j, 8, 8192, 64);
	r = run("llama3.1-405b", &j, &m);
	assert_int_equal(r->ntop, 0);
	assert_true(r->has_closest);
	assert_true(r->closest.mem.total > r->capacity_bytes);
	assert_true(r->pruned[MT_PRUNE_MEMORY] > 0);
	free(r);
}

static void impossible_requests(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r = calloc(1, sizeof(*r));

	(void)state;
	assert_int_equal(mt_model_load("llama3-8b", &m, &err), 0);
	job(&j, 8, 4096, 64);
	j.pins.tp = 64;
	assert_int_equal(mt_search(&m, h100, &j, NULL, r, &err), MT_EINVAL);
	job(&j, 12, 4096, 64);
	assert_int_equal(mt_search(&m, h100, &j, NULL, r, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "whole nodes"));
	job(&j, 8, 4096, 0);
	assert_int_equal(mt_search(&m, h100, &j, NULL, r, &err), MT_EUSAGE);
	free(r);
}

/* Each structural reason names the Megatron-LM check it keeps to; MoE with
 * linear biases keeps ETP 1 (transformer_config.py:2613 at d98e8a6). */
static void megatron_checks_cited(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	int i;

	(void)state;
	for (i = 0; i < MT_PRUNE_N; i++) {
		const char *c = mt_prune_cite(i);

		if (i == MT_PRUNE_MEMORY || i == MT_PRUNE_DOMINATED || i == MT_PRUNE_HOST_MEMORY ||
		    i == MT_PRUNE_RELEASE || i == MT_PRUNE_BOUND) {
			assert_null(c);
			continue;
		}
		assert_non_null(c);
		assert_true(strstr(c, "d98e8a6 megatron/") != NULL);
	}
	assert_non_null(r);
	assert_int_equal(mt_model_load("mixtral-8x7b", &m, &err), 0);
	assert_int_equal(mt_ep_reason(&m, 1, 2), -1);
	m.linear_bias = 1;
	assert_int_equal(mt_ep_reason(&m, 1, 2), MT_PRUNE_ETP_BIAS);
	assert_int_equal(mt_ep_reason(&m, 8, 1), -1);
	job(&j, 64, 4096, 256);
	j.pins.etp = 2;
	assert_int_equal(mt_search(&m, h100, &j, NULL, r, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "transformer_config.py:2613"));
	job(&j, 64, 4096, 256);
	assert_int_equal(mt_search(&m, h100, &j, NULL, r, &err), 0);
	assert_true(r->pruned[MT_PRUNE_ETP_BIAS] > 0);
	for (i = 0; i < r->ntop; i++)
		assert_int_equal(r->top[i].cfg.etp, 1);
	free(r);
}

/* The search skips a layer shape or a pipeline plan only when a floor of its
 * step cannot enter the ranking (perfmodel/perf.h): the bounded search returns
 * what the exhaustive one does, layouts, variants, folded counts and the
 * headroom pick alike, while evaluating fewer candidates. */
static void the_floor_skips_only_what_cannot_rank(void **state)
{
	static const struct {
		const char *model;
		int gpus, seq, gbs, top, no_fold;
	} cases[] = {
		{ "llama3-8b", 8, 8192, 64, 16, 0 },      /* the headroom pick */
		{ "qwen3-30b-a3b", 16, 4096, 512, 5, 0 }, /* the EP overlap's saving */
		{ "qwen3-30b-a3b", 16, 4096, 512, 3, 1 },
		{ "mixtral-8x7b", 64, 4096, 256, 16, 0 },
	};
	size_t c;
	int i, v, skipped = 0;

	(void)state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct mt_model m;
		struct mt_job j;
		struct mt_search_result *b, *e;

		job(&j, cases[c].gpus, cases[c].seq, cases[c].gbs);
		j.top_k = cases[c].top;
		j.no_fold = cases[c].no_fold;
		b = run(cases[c].model, &j, &m);
		j.exhaustive = 1;
		e = run(cases[c].model, &j, &m);
		assert_int_equal(e->pruned[MT_PRUNE_BOUND], 0);
		assert_true(b->evaluated <= e->evaluated);
		skipped += b->pruned[MT_PRUNE_BOUND] > 0 && b->evaluated < e->evaluated;
		assert_int_equal(b->ntop, e->ntop);
		assert_int_equal(b->roomy_pick, e->roomy_pick);
		for (i = 0; i < b->ntop; i++) {
			assert_memory_equal(&b->top[i].cfg, &e->top[i].cfg, sizeof(b->top[i].cfg));
			assert_true(b->top[i].time.step == e->top[i].time.step);
			assert_true(b->top[i].mem.total == e->top[i].mem.total);
			assert_int_equal(b->nvar[i], e->nvar[i]);
			assert_int_equal(b->folded[i], e->folded[i]);
			for (v = 0; v < b->nvar[i]; v++)
				assert_memory_equal(&b->var[i][v].cfg, &e->var[i][v].cfg,
						    sizeof(b->var[i][v].cfg));
		}
		free(b);
		free(e);
	}
	assert_true(skipped >= 3);
}

/* One DeepSeek-V3 layer shape on 1024 H100 (TP1 EP64, MBS 1) and a plan of
 * it, for the tests of one candidate's memory and time. */
struct one {
	struct mt_model m;
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs a;
	struct mt_plan p;
	struct mt_config cfg;
	struct mt_mem mem;
	struct mt_time t;
	struct mt_tput tp;
};

static struct one *one_shape(void)
{
	struct mt_error err = MT_ERROR_INIT;
	struct one *o = calloc(1, sizeof(*o));

	assert_non_null(o);
	assert_int_equal(mt_model_load("deepseek-v3", &o->m, &err), 0);
	job(&o->j, 1024, 4096, 8192);
	mt_ctx_init(&o->x, &o->m, h100, &o->j);
	mt_costs_compute(&o->x, &(struct mt_shape){ .tp = 1, .cp = 1, .mbs = 1, .ep = 64, .etp = 1,
						    .cp_comm = MT_CP_P2P, .tp_overlap = 1,
						    .fused_ce = 1 }, &o->a);
	return o;
}

/* The plan of PP pp, VPP vpp; 0 when it splits. */
static int one_plan(struct one *o, int pp, int vpp)
{
	struct mt_config *c = &o->cfg;

	memset(c, 0, sizeof(*c));
	mt_config_settings(&o->j, c);
	c->tp = c->cp = c->etp = c->mbs = 1;
	c->ep = 64;
	c->pp = pp;
	c->vpp = vpp;
	c->dp = 1024 / pp;
	c->num_mb = 8192 / c->dp;
	if (vpp > 1 && pp == 1)
		return -1;
	if (mt_plan_compute(&o->x, &o->a, pp, vpp, c->dp, c->num_mb, c, &o->p))
		return -1;
	c->edp = o->p.edp;
	return 0;
}

/* The floors are floors: no level-C setting of a plan steps below its plan
 * floor, and the shape floor is below every plan's. */
static void the_step_floor_holds_for_every_setting(void **state)
{
	static const int pps[] = { 1, 2, 4, 8, 16 }, vpps[] = { 1, 2, 4 };
	struct one *o = one_shape();
	struct mt_config *c = &o->cfg;
	size_t ip, iv;
	int n = 0, rc, d, ov, g;

	(void)state;
	for (ip = 0; ip < sizeof(pps) / sizeof(pps[0]); ip++)
		for (iv = 0; iv < sizeof(vpps) / sizeof(vpps[0]); iv++) {
			double floor;

			if (one_plan(o, pps[ip], vpps[iv]))
				continue;
			floor = mt_timing_floor(&o->x, &o->a, &o->p, 1);
			assert_true(mt_shape_floor(&o->x, &o->a, (double)c->num_mb / c->pp, 1) <=
				    floor + 1e-12);
			for (rc = 0; rc < MT_RC_N * 3 * 2 * 2; rc++) {
				d = rc / MT_RC_N % 3;
				ov = rc / (MT_RC_N * 3) % 2;
				g = rc / (MT_RC_N * 6);
				c->recompute = rc % MT_RC_N;
				c->recompute_layers = 1;
				c->recompute_modules = 0;
				c->dist_opt = d >= 1;
				c->fsdp = d == 2 ? MT_FSDP_MEGATRON : MT_FSDP_OFF;
				c->ep_overlap = ov;
				c->cuda_graph = g;
				mt_memory(&o->x, &o->a, &o->p, c, &o->mem);
				mt_timing(&o->x, &o->a, &o->p, c, &o->t, &o->tp);
				assert_true(o->t.step >= floor);
				n++;
			}
		}
	assert_true(n >= 100);
	free(o);
}

/* One candidate's memory and time: arithmetic only, no allocation. */
static void evaluation_does_not_allocate(void **state)
{
	struct one *o = one_shape();
	struct mt_config *c = &o->cfg;
	long before;
	int i;

	(void)state;
	assert_int_equal(one_plan(o, 16, 1), 0);
	before = allocations;
	for (i = 0; i < 1000; i++) {
		c->recompute = i % 3;
		c->recompute_layers = 1 + i % 4;
		c->dist_opt = i & 1;
		mt_memory(&o->x, &o->a, &o->p, c, &o->mem);
		mt_timing(&o->x, &o->a, &o->p, c, &o->t, &o->tp);
	}
	assert_int_equal(allocations - before, 0);
	assert_true(o->t.step > 0 && o->mem.total > 0);
	free(o);
}

/* The search itself allocates a fixed amount, however large the space. */
static void search_allocations_do_not_grow_with_the_space(void **state)
{
	struct mt_model m;
	struct mt_job j;
	struct mt_search_result *r;
	long small, large;

	(void)state;
	job(&j, 8, 4096, 64);
	allocations = 0;
	r = run("llama3-8b", &j, &m);
	small = allocations;
	free(r);
	job(&j, 512, 4096, 2048);
	allocations = 0;
	r = run("llama3-8b", &j, &m);
	large = allocations;
	assert_true(r->evaluated > 100 * 8);
	free(r);
	assert_true(large <= small + 8);
}

/* With the bundled rules the search still allocates a fixed amount: the rule
 * engine's tables are allocated when its run starts, and evaluating rules
 * allocates nothing. */
static void search_with_rules_allocates_a_fixed_amount(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_rules_run *rr;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	struct mt_model m;
	struct mt_job j;
	long n[2];
	long long evaluated[2];
	int k;

	(void)state;
	assert_non_null(rs);
	assert_int_equal(mt_ruleset_add_bundled(rs), 0);
	assert_int_equal(mt_ruleset_finish(rs), 0);
	for (k = 0; k < 2; k++) {
		assert_int_equal(mt_model_load(k ? "qwen3-235b-a22b" : "llama3-8b", &m, &err), 0);
		job(&j, k ? 256 : 8, k ? 4096 : 8192, k ? 2048 : 64);
		assert_int_equal(mt_rules_start(rs, &m, h100, &j, &rr, &err), 0);
		allocations = 0;
		assert_int_equal(mt_search(&m, h100, &j, rr, r, &err), 0);
		n[k] = allocations;
		evaluated[k] = r->evaluated;
		assert_false(r->relaxed);
		assert_true(r->ntop > 0);
		mt_rules_end(rr);
	}
	assert_true(evaluated[1] > 3 * evaluated[0]);
	assert_int_equal(n[0], n[1]);
	assert_true(n[1] <= 8);
	free(r);
	mt_ruleset_free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(results_are_sound),
		cmocka_unit_test(headroom_before_speed),
		cmocka_unit_test(the_ranking_is_one_row_per_layout),
		cmocka_unit_test(one_data_parallel_rank_is_one_optimizer_row),
		cmocka_unit_test(every_knob_pinned_is_one_evaluation),
		cmocka_unit_test(gains_revert_each_setting_alone),
		cmocka_unit_test(pins_narrow_the_space),
		cmocka_unit_test(pruned_by_reason),
		cmocka_unit_test(nothing_feasible_keeps_the_closest),
		cmocka_unit_test(impossible_requests),
		cmocka_unit_test(megatron_checks_cited),
		cmocka_unit_test(the_floor_skips_only_what_cannot_rank),
		cmocka_unit_test(the_step_floor_holds_for_every_setting),
		cmocka_unit_test(evaluation_does_not_allocate),
		cmocka_unit_test(search_allocations_do_not_grow_with_the_space),
		cmocka_unit_test(search_with_rules_allocates_a_fixed_amount),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
