/* SPDX-License-Identifier: MIT */
/* engine: a rules run: set-up, the job's static facts, search hooks. */
#include "engine.h"
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"
#include "../lib/ver.h"
#include "../job/release.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/precision.h"

/* ---------------------------------------------------------------- set-up */

static double nz(double x)
{
	return x > 0 ? x : NAN;
}

/* "2.21.5" -> 22105 (lib/ver.h), NAN when absent or not a version */
static double version_of(const char *s)
{
	long v = s ? mt_ver_code(s) : -1;

	return v < 0 ? NAN : (double)v;
}

/* Some GEMM point of this type comes from a measurement or a publication,
 * not derived from another type or a specification. */
static int gemm_measured(const struct mt_cluster *c, int dt)
{
	int i;

	if (c->gcurve[dt].derived_from >= 0)
		return 0;
	for (i = 0; i < c->ngemm; i++) {
		const struct mt_source *src;
		if (c->gemm[i].dtype != dt)
			continue;
		src = mt_cluster_source(c, c->gemm[i].src);
		if (src && strcmp(src->kind, "derived") && strcmp(src->kind, "spec"))
			return 1;
	}
	return 0;
}

#define F(id) r->facts[MT_F_##id].n
#define S(id) r->facts[MT_F_##id].s

static void static_facts(struct mt_rules_run *r)
{
	const struct mt_model *m = r->m;
	const struct mt_cluster *c = r->c;
	const struct mt_job *j = r->j;
	double layer_params;
	int i;

	for (i = 0; i < MT_F_N; i++) {
		r->facts[i].n = NAN;
		r->facts[i].s = NULL;
	}
	S(MODEL_NAME) = m->name;
	F(MODEL_LAYERS) = m->layers;
	F(MODEL_HIDDEN) = m->hidden;
	F(MODEL_HEADS) = m->heads;
	F(MODEL_KV_HEADS) = m->mla ? m->heads : m->kv_heads;
	F(MODEL_HEAD_DIM) = m->mla ? m->qk_nope_dim + m->qk_rope_dim : m->head_dim;
	F(MODEL_FFN) = m->ffn;
	F(MODEL_VOCAB) = m->vocab;
	F(MODEL_EXPERTS) = m->experts;
	F(MODEL_TOPK) = m->experts ? m->topk : 0;
	F(MODEL_MOE_FFN) = m->experts ? m->moe_ffn : 0;
	F(MODEL_SHARED_FFN) = m->shared_ffn;
	F(MODEL_MOE_LAYERS) = m->moe_layers;
	F(MODEL_MLA) = m->mla != 0;
	F(MODEL_MTP_LAYERS) = m->mtp_layers;
	F(MODEL_GQA) = !m->mla && m->kv_heads < m->heads;
	F(MODEL_ROPE) = !m->learned_pos && !m->no_pos;
	F(MODEL_GATED) = m->gated != 0;
	F(MODEL_LINEAR_BIAS) = m->linear_bias != 0;
	F(MODEL_DROPOUT) = m->dropout;
	F(MODEL_PARAMS) = (double)m->params_total;
	F(MODEL_ACTIVE_PARAMS) = (double)m->params_active;
	layer_params = (double)(m->params_total - m->params_embedding) / m->layers;
	F(MODEL_LAYER_PARAMS) = layer_params;
	F(MODEL_EMBEDDING_PARAMS) = (double)m->vocab * m->hidden;
	F(MODEL_EMBEDDING_RATIO) = layer_params > 0 ? (double)m->vocab * m->hidden / layer_params : NAN;

	F(JOB_GPUS) = j->gpus;
	F(JOB_NODES) = ceil((double)j->gpus / c->gpus_per_node);
	F(JOB_SEQ) = j->seq;
	F(JOB_GBS) = (double)j->gbs;
	F(JOB_TOKENS) = (double)j->gbs * j->seq;
	F(JOB_PRECISION) = j->precision;
	F(JOB_FP8_RECIPE) = j->fp8_recipe;
	F(JOB_ATTENTION) = j->attn_impl;
	F(JOB_GRAD_ACCUM_FUSION) = j->grad_accum_fusion;
	F(JOB_TRANSFORMER_IMPL) = j->transformer_impl;
	F(JOB_MASKED_SOFTMAX_FUSION) = !(j->fusions_off >> MT_FU_MASKED_SOFTMAX & 1);
	F(JOB_BIAS_ACT_FUSION) = !(j->fusions_off >> MT_FU_BIAS_ACT & 1);
	F(JOB_BIAS_DROPOUT_FUSION) = !(j->fusions_off >> MT_FU_BIAS_DROPOUT & 1);
	F(JOB_ROPE_FUSION) = !(j->fusions_off >> MT_FU_ROPE & 1);
	F(JOB_GRAD_BF16) = mt_release_grad_bf16(j);
	F(JOB_MOE_DISPATCHER) = j->moe_dispatcher == MT_DISPATCH_AUTO ? MT_DISPATCH_N : j->moe_dispatcher;
	F(JOB_MEM_HEADROOM) = j->mem_headroom;
	F(JOB_PARAM_GATHER) = mt_param_gather_q(j, 1);
	F(JOB_OPT_OFFLOAD) = j->opt_offload;
	F(JOB_FINE_OFFLOAD) = j->offload_modules != 0;
	F(CLUSTER_HOST_MEMORY) = nz(c->host_memory_bytes);

	mt_rules_cluster_facts(r->facts, c);
	F(MEM_CAPACITY) = c->memory_bytes * (1 - j->mem_headroom);
}

#undef F
#undef S
#define F(id) f[MT_F_##id].n
#define S(id) f[MT_F_##id].s

void mt_rules_cluster_facts(struct mt_val *f, const struct mt_cluster *c)
{
	S(CLUSTER_NAME) = c->name;
	S(CLUSTER_GPU) = c->gpu_name;
	F(CLUSTER_CC) = nz(c->compute_capability);
	F(CLUSTER_MEMORY) = c->memory_bytes;
	F(CLUSTER_SMS) = nz(c->sm_count);
	F(CLUSTER_GPUS_PER_NODE) = c->gpus_per_node;
	F(CLUSTER_NVLINK_DOMAIN) = c->nvlink_domain;
	F(CLUSTER_NVLINK_GBPS) = c->nvlink_gbps;
	F(CLUSTER_NIC_GBPS) = c->nic_gbps;
	F(CLUSTER_NICS) = c->nics_per_node;
	F(CLUSTER_NUMA) = c->numa_nodes;
	F(CLUSTER_HBM_GBPS) = c->hbm_gbps;
	F(CLUSTER_PEAK_BF16) = c->peak_tflops[MT_DT_BF16];
	F(CLUSTER_PEAK_FP8) = c->peak_tflops[MT_DT_FP8];
	F(CLUSTER_LAUNCH_US) = nz(c->launch_overhead_us);
	F(CLUSTER_H2D_GBPS) = mt_offload_gbps(c, MT_OFF_H2D);
	F(CLUSTER_D2H_GBPS) = mt_offload_gbps(c, MT_OFF_D2H);
	F(CLUSTER_OPT_GPPS) = nz(c->optimizer_gparams_per_s);
	F(CLUSTER_NCCL) = version_of(c->nccl_version);
	F(CLUSTER_GEMM_MEASURED) = gemm_measured(c, MT_DT_BF16) && gemm_measured(c, MT_DT_FP8);
}

#undef F
#undef S
#define F(id) r->facts[MT_F_##id].n
#define S(id) r->facts[MT_F_##id].s

int mt_rules_start(const struct mt_ruleset *rs, const struct mt_model *m,
		   const struct mt_cluster *c, const struct mt_job *j, struct mt_rules_run **out,
		   struct mt_error *err)
{
	struct mt_rules_run *r;
	int i, k, total = 0, pos[MT_ST_N + MT_F_N];

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	r->rs = rs;
	r->m = m;
	r->c = c;
	r->j = j;
	r->pinned = mt_pinned_knobs(j);
	r->env.facts = r->facts;
	r->env.cluster = c;
	r->env.best = mt_rules_best_fn;
	r->env.best_ctx = r;
	static_facts(r);
	/* index the rules: constraints by stage, set rules by knob */
	for (i = 0; i < rs->n; i++) {
		const struct mt_rule *rl = &rs->rules[i];
		if (rl->disabled)
			continue;
		if (rl->uses_best)   /* best() or least_mem(): the search must be watched */
			r->observing = 1;
		if (rl->kind == MT_RK_CONSTRAINT) {
			/* a constraint on pinned knobs only does not prune */
			if (rl->knobs && (rl->knobs & r->pinned) == rl->knobs)
				continue;
			r->ncons[rl->stage]++;
			total++;
		} else if (rl->kind == MT_RK_SET) {
			for (k = 0; k < rl->nsets; k++) {
				r->nsetters[rl->sets[k].fact]++;
				total++;
			}
		}
	}
	r->pool = malloc((size_t)(total + 1) * sizeof(int));
	r->pruned = calloc((size_t)rs->n + 1, sizeof(long long));
	r->strict = calloc((size_t)rs->n + 1, sizeof(long long));
	r->relaxed_one = -1;
	if (r->observing) {
		r->best.t = calloc(TUPLE_SLOTS, sizeof(*r->best.t));
		r->best.used = malloc(TUPLE_SLOTS * sizeof(*r->best.used));
		r->best.vpp = malloc(SMALL_MAX * sizeof(*r->best.vpp));
		r->best.mbs = malloc(SMALL_MAX * sizeof(*r->best.mbs));
	}
	if (!r->pool || !r->pruned || !r->strict ||
	    (r->observing && (!r->best.t || !r->best.used || !r->best.vpp || !r->best.mbs))) {
		mt_rules_end(r);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	if (r->observing)
		mt_rules_best_init(&r->best);
	k = 0;
	for (i = 0; i < MT_ST_N; i++) {
		r->cons[i] = r->pool + k;
		pos[i] = k;
		k += r->ncons[i];
	}
	for (i = 0; i < MT_F_N; i++) {
		r->setters[i] = r->pool + k;
		pos[MT_ST_N + i] = k;
		k += r->nsetters[i];
	}
	for (i = 0; i < rs->n; i++) {
		const struct mt_rule *rl = &rs->rules[i];
		int s;
		if (rl->disabled)
			continue;
		if (rl->kind == MT_RK_CONSTRAINT) {
			if (rl->knobs && (rl->knobs & r->pinned) == rl->knobs)
				continue;
			r->pool[pos[rl->stage]++] = i;
		} else if (rl->kind == MT_RK_SET) {
			for (s = 0; s < rl->nsets; s++)
				r->pool[pos[MT_ST_N + rl->sets[s].fact]++] = i;
		}
	}
	*out = r;
	return MT_OK;
}

void mt_rules_end(struct mt_rules_run *r)
{
	if (!r)
		return;
	free(r->pool);
	free(r->pruned);
	free(r->strict);
	free(r->best.t);
	free(r->best.used);
	free(r->best.vpp);
	free(r->best.mbs);
	free(r);
}

const struct mt_ruleset *mt_rules_set(const struct mt_rules_run *r) { return r->rs; }
long long mt_rules_pruned(const struct mt_rules_run *r, int i)
{
	return r->frozen ? r->strict[i] : r->pruned[i];
}

void mt_rules_freeze(struct mt_rules_run *r)
{
	if (!r->frozen)
		memcpy(r->strict, r->pruned, (size_t)r->rs->n * sizeof(long long));
	r->frozen = 1;
}

void mt_rules_relax(struct mt_rules_run *r, int rule)
{
	r->relaxed = rule == MT_RELAX_ALL;
	r->relaxed_one = rule >= 0 ? rule : -1;
}

int mt_rules_relaxed(const struct mt_rules_run *r)
{
	return r->relaxed ? MT_RELAX_ALL : r->relaxed_one >= 0 ? r->relaxed_one : MT_RELAX_NONE;
}

/* ---------------------------------------------------------------- search hooks */

void mt_rules_fact(struct mt_rules_run *r, int fact, double v)
{
	r->facts[fact].n = v;
}

struct mt_val *mt_rules_facts(struct mt_rules_run *r)
{
	return r->facts;
}

const struct mt_env *mt_rules_env(const struct mt_rules_run *r)
{
	return &r->env;
}

void mt_rules_subject(const struct mt_rules_run *r, const struct mt_model **m,
		      const struct mt_cluster **c, const struct mt_job **j)
{
	*m = r->m;
	*c = r->c;
	*j = r->j;
}

int mt_rules_wants(const struct mt_rules_run *r, int stage)
{
	return !r->relaxed && r->ncons[stage] > 0;
}

int mt_rules_check(struct mt_rules_run *r, int stage)
{
	int i, n = r->ncons[stage];

	if (r->relaxed)
		return -1;
	for (i = 0; i < n; i++) {
		int k = r->cons[stage][i];
		if (k == r->relaxed_one)
			continue;
		if (mt_expr_true(r->rs->rules[k].when, &r->env)) {
			r->pruned[k]++;
			return k;
		}
	}
	return -1;
}

/* A knob value from a SET expression, or -1 when it is not a valid one. */
int mt_rules_knob_value(int fact, struct mt_val v, double *out)
{
	double x = v.n;

	if (mt_facts[fact].type == MT_FT_ENUM) {
		int idx = v.s ? mt_fact_enum(fact, v.s)
			      : (isfinite(x) && x >= 0 && x < 64 && x == floor(x) ? (int)x : -1);
		const char *const *e = mt_facts[fact].enums;
		int n = 0;
		while (e[n])
			n++;
		if (idx < 0 || idx >= n)
			return -1;
		*out = idx;
		return 0;
	}
	if (v.s || isnan(x))
		return -1;
	if (mt_facts[fact].type == MT_FT_BOOL) {
		*out = x != 0;
		return 0;
	}
	x = round(x);
	if (x < 1 || x > 2e9)
		return -1;
	*out = x;
	return 0;
}

static int engine_set_value(struct mt_rules_run *r, int k, int fact, double *v)
{
	const struct mt_rule *rl = &r->rs->rules[k];
	int s;

	for (s = 0; s < rl->nsets; s++)
		if (rl->sets[s].fact == fact)
			return mt_rules_knob_value(fact, mt_expr_eval(rl->sets[s].e, &r->env), v);
	return -1;
}

int mt_rules_choose(struct mt_rules_run *r, int fact, double *v)
{
	int i;

	for (i = 0; i < r->nsetters[fact]; i++) {
		int k = r->setters[fact][i];
		if (!mt_expr_true(r->rs->rules[k].when, &r->env))
			continue;
		if (engine_set_value(r, k, fact, v) == 0)
			return 1;
	}
	return 0;
}
