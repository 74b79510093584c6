/* SPDX-License-Identifier: MIT */
/* engine: the rule set applied to a job (search hooks, explanations, findings). */
#include "engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/sbuf.h"

/* ---------------------------------------------------------------- best() tables */

/* Least step time and least memory per (tp, pp, cp, ep, etp), and per value of
 * each knob that stands alone. */
#define TUPLE_SLOTS 8192
#define SMALL_MAX 1025

struct tuple {
	int key[5];
	int used;
	double step, mem;
};

struct pair {
	double step, mem;
};

struct best {
	struct tuple *t;        /* TUPLE_SLOTS */
	int *used;              /* the slots in use, in order of first use */
	int nused;
	int last;               /* slot of the last update */
	struct pair *vpp, *mbs; /* [SMALL_MAX] */
	struct pair rc[MT_RC_N], dist[2], sp[2], cc[MT_CP_N];
};

struct mt_rules_run {
	const struct mt_ruleset *rs;
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_job *j;
	struct mt_val facts[MT_F_N];
	struct mt_env env;
	unsigned pinned;
	int relaxed;
	int *cons[MT_ST_N];     /* constraint rule indices per stage */
	int ncons[MT_ST_N];
	int *setters[MT_F_N];   /* set rules per knob fact, in order */
	int nsetters[MT_F_N];
	int *pool;              /* storage of the lists above */
	long long *pruned;      /* per rule */
	long long *strict;      /* per rule, the search with every constraint (frozen) */
	int frozen;
	int relaxed_one;        /* the one constraint relaxed, or -1 */
	int observing;
	struct best best;
	double nccl_code;
};

static void pair_init(struct pair *p, int n)
{
	int i;

	for (i = 0; i < n; i++)
		p[i].step = p[i].mem = INFINITY;
}

static void pair_put(struct pair *p, const struct mt_eval *e, int timed)
{
	if (e->mem.total < p->mem)
		p->mem = e->mem.total;
	if (timed && e->time.step < p->step)
		p->step = e->time.step;
}

static unsigned tuple_hash(const int *k)
{
	unsigned h = 2166136261u;
	int i;

	for (i = 0; i < 5; i++)
		h = (h ^ (unsigned)k[i]) * 16777619u;
	return h;
}

void mt_rules_observe(struct mt_rules_run *r, const struct mt_eval *e, int timed)
{
	struct best *b = &r->best;
	const struct mt_config *c = &e->cfg;
	int key[5] = { c->tp, c->pp, c->cp, c->ep, c->etp };
	struct tuple *t = &b->t[b->last];
	unsigned h, i;

	if (!r->observing)
		return;
	if (!(t->used && !memcmp(t->key, key, sizeof(key)))) {
		h = tuple_hash(key) & (TUPLE_SLOTS - 1);
		for (i = 0; i < TUPLE_SLOTS; i++) {
			t = &b->t[(h + i) & (TUPLE_SLOTS - 1)];
			if (!t->used) {
				t->used = 1;
				memcpy(t->key, key, sizeof(key));
				t->step = t->mem = INFINITY;
				b->used[b->nused++] = (int)((h + i) & (TUPLE_SLOTS - 1));
				break;
			}
			if (!memcmp(t->key, key, sizeof(key)))
				break;
		}
		if (i == TUPLE_SLOTS)
			return; /* full: a space this large is not explained per tuple */
		b->last = (int)((h + i) & (TUPLE_SLOTS - 1));
	}
	if (e->mem.total < t->mem)
		t->mem = e->mem.total;
	if (timed && e->time.step < t->step)
		t->step = e->time.step;
	if (c->vpp >= 0 && c->vpp < SMALL_MAX)
		pair_put(&b->vpp[c->vpp], e, timed);
	if (c->mbs >= 0 && c->mbs < SMALL_MAX)
		pair_put(&b->mbs[c->mbs], e, timed);
	if (c->recompute >= 0 && c->recompute < MT_RC_N)
		pair_put(&b->rc[c->recompute], e, timed);
	pair_put(&b->dist[c->dist_opt ? 1 : 0], e, timed);
	pair_put(&b->sp[c->sp ? 1 : 0], e, timed);
	if (c->cp_comm >= 0 && c->cp_comm < MT_CP_N && c->cp > 1)
		pair_put(&b->cc[c->cp_comm], e, timed);
}

void mt_rules_observe_reset(struct mt_rules_run *r)
{
	struct best *b = &r->best;

	if (!r->observing)
		return;
	memset(b->t, 0, TUPLE_SLOTS * sizeof(*b->t));
	b->nused = 0;
	b->last = 0;
	pair_init(b->vpp, SMALL_MAX);
	pair_init(b->mbs, SMALL_MAX);
	pair_init(b->rc, MT_RC_N);
	pair_init(b->dist, 2);
	pair_init(b->sp, 2);
	pair_init(b->cc, MT_CP_N);
}

static double best_fn(void *ctx, int what, const int *knob, const double *val, int n)
{
	struct mt_rules_run *r = ctx;
	struct best *b = &r->best;
	double v = INFINITY;
	const struct pair *p = NULL;
	int i, k, x;

	if (!r->observing || n < 1)
		return NAN;
	if (knob[0] > MT_BK_ETP) {
		if (!(val[0] >= 0 && val[0] < SMALL_MAX) || val[0] != floor(val[0]))
			return NAN;
		x = (int)val[0];
		switch (knob[0]) {
		case MT_BK_VPP: p = x < SMALL_MAX ? &b->vpp[x] : NULL; break;
		case MT_BK_MBS: p = x < SMALL_MAX ? &b->mbs[x] : NULL; break;
		case MT_BK_RECOMPUTE: p = x < MT_RC_N ? &b->rc[x] : NULL; break;
		case MT_BK_DIST_OPT: p = x < 2 ? &b->dist[x] : NULL; break;
		case MT_BK_SP: p = x < 2 ? &b->sp[x] : NULL; break;
		case MT_BK_CP_COMM: p = x < MT_CP_N ? &b->cc[x] : NULL; break;
		}
		if (!p)
			return NAN;
		v = what ? p->mem : p->step;
		return isinf(v) ? NAN : v;
	}
	for (i = 0; i < b->nused; i++) {
		const struct tuple *t = &b->t[b->used[i]];
		int match = 1;
		for (k = 0; k < n && match; k++)
			match = knob[k] <= MT_BK_ETP && t->key[knob[k]] == val[k];
		if (match) {
			double y = what ? t->mem : t->step;
			if (y < v)
				v = y;
		}
	}
	return isinf(v) ? NAN : v;
}

int mt_rules_observing(const struct mt_rules_run *r) { return r->observing; }

/* ---------------------------------------------------------------- set-up */

static double nz(double x)
{
	return x > 0 ? x : NAN;
}

static double version_of(const char *s)
{
	long part[3] = { 0, 0, 0 };
	int k = 0;
	char *end;

	if (!s || !*s)
		return NAN;
	while (*s && k < 3) {
		part[k++] = strtol(s, &end, 10);
		if (end == s)
			return NAN;
		s = *end == '.' ? end + 1 : end;
		if (*end && *end != '.')
			break;
	}
	return (double)(part[0] * 10000 + part[1] * 100 + part[2]);
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

static void cluster_facts(struct mt_val *f, const struct mt_cluster *c);

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
	F(JOB_MOE_DISPATCHER) = j->moe_dispatcher;
	F(JOB_MEM_HEADROOM) = j->mem_headroom;

	cluster_facts(r->facts, c);
	F(MEM_CAPACITY) = c->memory_bytes * (1 - j->mem_headroom);
}

#undef F
#undef S
#define F(id) f[MT_F_##id].n
#define S(id) f[MT_F_##id].s

static void cluster_facts(struct mt_val *f, const struct mt_cluster *c)
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
	r->env.best = best_fn;
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
	if (r->observing) {
		pair_init(r->best.vpp, SMALL_MAX);
		pair_init(r->best.mbs, SMALL_MAX);
		pair_init(r->best.rc, MT_RC_N);
		pair_init(r->best.dist, 2);
		pair_init(r->best.sp, 2);
		pair_init(r->best.cc, MT_CP_N);
	}
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
static int knob_value(int fact, struct mt_val v, double *out)
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

static int set_value(struct mt_rules_run *r, int k, int fact, double *v)
{
	const struct mt_rule *rl = &r->rs->rules[k];
	int s;

	for (s = 0; s < rl->nsets; s++)
		if (rl->sets[s].fact == fact)
			return knob_value(fact, mt_expr_eval(rl->sets[s].e, &r->env), v);
	return -1;
}

int mt_rules_choose(struct mt_rules_run *r, int fact, double *v)
{
	int i;

	for (i = 0; i < r->nsetters[fact]; i++) {
		int k = r->setters[fact][i];
		if (!mt_expr_true(r->rs->rules[k].when, &r->env))
			continue;
		if (set_value(r, k, fact, v) == 0)
			return 1;
	}
	return 0;
}

/* ---------------------------------------------------------------- explanations */

static const char *const status_names[] = { "applied", "note", "violated", "overridden" };

const char *mt_fire_status_name(int s)
{
	return s >= 0 && s <= MT_FIRE_OVERRIDDEN ? status_names[s] : "?";
}

void mt_explain_free(struct mt_explain *x)
{
	int i;

	for (i = 0; i < x->n; i++) {
		free(x->v[i].message);
		free(x->v[i].effect);
		free(x->v[i].ev);
	}
	free(x->v);
	memset(x, 0, sizeof(*x));
}

static int kv_put(struct mt_kv *kv, int *n, const char *key, const char *val)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(kv[i].key, key))
			return 0; /* the first rule to set a name wins */
	if (*n >= MT_RULE_KV_MAX)
		return 1; /* dropped, counted by the caller */
	snprintf(kv[*n].key, sizeof(kv[*n].key), "%s", key);
	snprintf(kv[*n].val, sizeof(kv[*n].val), "%s", val);
	(*n)++;
	return 0;
}

static struct mt_fired *add_fired(struct mt_explain *x, const struct mt_rule *rl, int status,
				  const struct mt_val *facts, const struct mt_env *env)
{
	struct mt_fired *f;
	struct sbuf sb = SBUF_INIT;
	int i;

	if (x->n == x->cap) {
		int cap = x->cap ? 2 * x->cap : 16;
		struct mt_fired *v = realloc(x->v, (size_t)cap * sizeof(*v));
		if (!v) {
			x->failed = 1;
			return NULL;
		}
		x->v = v;
		x->cap = cap;
	}
	f = &x->v[x->n];
	memset(f, 0, sizeof(*f));
	f->rule = rl;
	f->status = status;
	for (i = 0; i < rl->nsays; i++) {
		if (rl->says[i].cond && !mt_expr_true(rl->says[i].cond, env))
			continue;
		if (sb.len)
			sbuf_addc(&sb, ' ');
		mt_tmpl_render(rl->says[i].t, env, &sb);
	}
	if (sb.failed) {
		sbuf_release(&sb);
		x->failed = 1;
		return NULL;
	}
	f->message = sbuf_detach(&sb, NULL);
	f->ev = malloc((size_t)(rl->nevidence ? rl->nevidence : 1) * sizeof(*f->ev));
	if (!f->ev || !f->message) {
		free(f->ev);
		free(f->message);
		x->failed = 1;
		return NULL;
	}
	for (i = 0; i < rl->nevidence; i++) {
		f->ev[i].fact = rl->evidence[i];
		f->ev[i].n = facts[rl->evidence[i]].n;
		f->ev[i].s = facts[rl->evidence[i]].s;
	}
	f->nev = rl->nevidence;
	x->n++;
	return f;
}

static void set_effect(struct mt_fired *f, struct sbuf *eff, struct mt_explain *x)
{
	if (!f)
		return;
	if (eff->failed) {
		x->failed = 1;
		return;
	}
	if (eff->len)
		f->effect = sbuf_detach(eff, NULL);
}

/* The value a pin gives a settable knob, or 0 when it is not pinned. */
static int pin_of(const struct mt_job *j, int fact, double *v)
{
	const struct mt_pins *p = &j->pins;
	int pin = MT_UNSET;

	switch (fact) {
	case MT_F_CFG_CP_COMM: pin = p->cp_comm; break;
	case MT_F_CFG_SP: pin = p->sp; break;
	case MT_F_CFG_ETP: pin = p->etp; break;
	case MT_F_CFG_TP_OVERLAP: pin = p->tp_overlap; break;
	case MT_F_CFG_FUSED_CE: pin = p->fused_ce; break;
	case MT_F_CFG_OVERLAP_GRAD: pin = p->overlap_grad; break;
	case MT_F_CFG_OVERLAP_PARAM: pin = p->overlap_param; break;
	case MT_F_CFG_GRAD_FP32: pin = p->grad_fp32; break;
	case MT_F_CFG_BUCKET: pin = p->bucket; break;
	case MT_F_CFG_DIST_OPT: pin = p->dist_opt; break;
	default: break;
	}
	if (pin == MT_UNSET)
		return 0;
	*v = pin;
	return 1;
}

static void fmt_fact(struct sbuf *sb, int fact, double v)
{
	struct mt_val x = { v, NULL };
	mt_val_format(sb, x, fact == MT_F_CFG_BUCKET ? "params" : NULL, fact);
}

/* Evaluate every rule with the facts as they are; `search` is 1 for a
 * candidate of the search (set rules are checked against its knobs). */
static int explain_all(const struct mt_ruleset *rs, struct mt_val *facts,
		       const struct mt_env *env, const struct mt_job *j, int search,
		       const unsigned char *given, struct mt_explain *x, int *skipped)
{
	unsigned char decided[MT_F_N];
	int i, s;

	memset(decided, 0, sizeof(decided));
	for (i = 0; i < rs->n && !x->failed; i++) {
		const struct mt_rule *rl = &rs->rules[i];
		struct sbuf eff = SBUF_INIT;
		struct mt_fired *f;
		int status = MT_FIRE_NOTE;

		if (rl->disabled)
			continue;
		if (given) {
			/* every fact it reads: condition, values, messages */
			int k, all = 1;
			for (k = 0; k < rl->nevidence && all; k++)
				all = given[rl->evidence[k]];
			if (!all) {
				(*skipped)++;
				continue;
			}
		}
		if (!mt_expr_true(rl->when, env))
			continue;
		switch (rl->kind) {
		case MT_RK_CONSTRAINT:
			status = MT_FIRE_VIOLATED;
			break;
		case MT_RK_SET:
			status = MT_FIRE_APPLIED;
			for (s = 0; s < rl->nsets; s++) {
				int fact = rl->sets[s].fact;
				double v, have = facts[fact].n, pin;
				if (decided[fact] || knob_value(fact, mt_expr_eval(rl->sets[s].e, env), &v))
					continue; /* an earlier rule chose this knob, or no value */
				decided[fact] = 1;
				if (eff.len)
					sbuf_adds(&eff, ", ");
				sbuf_addf(&eff, "%s = ", mt_facts[fact].name);
				fmt_fact(&eff, fact, v);
				if (v != have && (search || given[fact])) {
					/* a pin, or (facts of a run) what the run used */
					status = MT_FIRE_OVERRIDDEN;
					sbuf_adds(&eff, !search ? " (the run has " : pin_of(j, fact, &pin)
						  ? " (pinned to " : " (not applied: ");
					fmt_fact(&eff, fact, have);
					sbuf_adds(&eff, ")");
				}
			}
			if (rl->nsets && !eff.len) {
				/* earlier rules chose every knob it sets */
				sbuf_release(&eff);
				continue;
			}
			for (s = 0; s < rl->nouts; s++) {
				const struct mt_rule_out *o = &rl->outs[s];
				struct sbuf val = SBUF_INIT;
				int rc;
				if (o->val)
					mt_tmpl_render(o->val, env, &val);
				if (eff.len)
					sbuf_adds(&eff, ", ");
				if (o->kind == MT_OUT_ARG) {
					sbuf_addf(&eff, "--%s%s%s", o->key, val.len ? " " : "", val.buf);
					rc = kv_put(x->args, &x->nargs, o->key, val.buf);
				} else if (o->kind == MT_OUT_BRIDGE) {
					sbuf_addf(&eff, "%s=%s", o->key, val.buf);
					rc = kv_put(x->bridge, &x->nbridge, o->key, val.buf);
				} else {
					sbuf_addf(&eff, "%s=%s", o->key, val.buf);
					rc = kv_put(x->env, &x->nenv, o->key, val.buf);
				}
				if (rc > 0)
					x->dropped++;
				if (val.failed)
					x->failed = 1;
				sbuf_release(&val);
			}
			break;
		default:
			break;
		}
		f = add_fired(x, rl, status, facts, env);
		set_effect(f, &eff, x);
		sbuf_release(&eff);
	}
	return x->failed ? MT_ENOMEM : MT_OK;
}

int mt_rules_explain_facts(struct mt_rules_run *r, struct mt_explain *out)
{
	memset(out, 0, sizeof(*out));
	return explain_all(r->rs, r->facts, &r->env, r->j, 1, NULL, out, NULL);
}

int mt_rules_on_facts(const struct mt_ruleset *rs, const struct mt_val *facts,
		      const unsigned char *given, const struct mt_cluster *c,
		      struct mt_explain *out, int *skipped)
{
	struct mt_env env;
	struct mt_job j;
	struct mt_val *f = malloc(MT_F_N * sizeof(*f));
	unsigned char *g = malloc(MT_F_N);
	int i, rc;

	memset(out, 0, sizeof(*out));
	*skipped = 0;
	if (!f || !g) {
		free(f);
		free(g);
		return MT_ENOMEM;
	}
	/* a copy: set rules write what they set into it */
	memcpy(f, facts, MT_F_N * sizeof(*f));
	memcpy(g, given, MT_F_N);
	if (c) { /* the cluster's facts, where the file does not give them */
		struct mt_val cf[MT_F_N];
		for (i = 0; i < MT_F_N; i++) {
			cf[i].n = NAN;
			cf[i].s = NULL;
		}
		cluster_facts(cf, c);
		for (i = 0; i < MT_F_N; i++)
			if (!g[i] && !strncmp(mt_facts[i].name, "cluster.", 8)) {
				f[i] = cf[i];
				g[i] = 1;
			}
	}
	memset(&env, 0, sizeof(env));
	env.facts = f;
	env.cluster = c;
	mt_job_init(&j);
	rc = explain_all(rs, f, &env, &j, 0, g, out, skipped);
	/* evidence keeps values, not pointers into f (strings point into the
	 * file's or the cluster's, which outlive this) */
	free(f);
	free(g);
	return rc;
}

/* ---------------------------------------------------------------- facts files */

int mt_facts_read(const char *path, struct mt_val *facts, unsigned char *given, char **strings,
		  struct mt_error *err)
{
	cJSON *root = NULL, *item;
	const cJSON *fo;
	struct mt_jpos at = { path, "" };
	char schema[64];
	struct sbuf pool = SBUF_INIT;
	size_t offs[MT_F_N];
	int i, rc;

	*strings = NULL;
	for (i = 0; i < MT_F_N; i++) {
		facts[i].n = NAN;
		facts[i].s = NULL;
		given[i] = 0;
	}
	if ((rc = mt_json_load(path, &root, err)))
		return rc;
	if (!cJSON_IsObject(root)) {
		rc = mt_error_set(err, MT_EINVAL, "%s: expected a JSON object at the top level, got %s",
				  path, mt_json_type(root));
		goto out;
	}
	if ((rc = mt_jstr(&at, root, "schema", 1, schema, sizeof(schema), err)) < 0)
		goto out;
	if (strcmp(schema, "megatune.facts/1")) {
		rc = mt_error_set(err, MT_EINVAL,
				  "%s: field 'schema': expected \"megatune.facts/1\", got \"%s\"", path,
				  schema);
		goto out;
	}
	if ((rc = mt_jobj(&at, root, "facts", 1, &fo, err)) < 0)
		goto out;
	if (!cJSON_IsObject(fo)) {
		rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts': expected an object, got %s",
				  path, mt_json_type(fo));
		goto out;
	}
	cJSON_ArrayForEach(item, fo) {
		int f = mt_fact_find(item->string, strlen(item->string));
		if (f < 0) {
			const char *sug = mt_fact_suggest(item->string, strlen(item->string));
			rc = mt_error_set(err, MT_EINVAL,
					  "%s: field 'facts.%s': unknown fact%s%s%s (megatune rules facts "
					  "lists them)", path, item->string, sug ? " (did you mean '" : "",
					  sug ? sug : "", sug ? "'?)" : "");
			goto out;
		}
		if (given[f]) {
			rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts.%s': given twice", path,
					  item->string);
			goto out;
		}
		if (cJSON_IsNumber(item) && mt_facts[f].type != MT_FT_STR) {
			facts[f].n = item->valuedouble;
		} else if (cJSON_IsBool(item) && mt_facts[f].type == MT_FT_BOOL) {
			facts[f].n = cJSON_IsTrue(item);
		} else if (cJSON_IsNull(item) && mt_facts[f].type != MT_FT_STR) {
			facts[f].n = NAN;
		} else if (cJSON_IsString(item) && mt_facts[f].type == MT_FT_ENUM) {
			int idx = mt_fact_enum(f, item->valuestring);
			if (idx < 0) {
				rc = mt_error_set(err, MT_EINVAL,
						  "%s: field 'facts.%s': \"%s\" is not one of its values",
						  path, item->string, item->valuestring);
				goto out;
			}
			facts[f].n = idx;
		} else if (cJSON_IsString(item) && mt_facts[f].type == MT_FT_STR) {
			offs[f] = pool.len;
			sbuf_adds(&pool, item->valuestring);
			sbuf_addc(&pool, '\0');
		} else {
			rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts.%s': expected %s, got %s", path,
					  item->string,
					  mt_facts[f].type == MT_FT_STR ? "a string"
					  : mt_facts[f].type == MT_FT_BOOL ? "a number or true/false"
					  : mt_facts[f].type == MT_FT_ENUM ? "one of its value names"
									   : "a number",
					  mt_json_type(item));
			goto out;
		}
		given[f] = 1;
	}
	if (pool.failed) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	if (pool.len) {
		*strings = sbuf_detach(&pool, NULL);
		for (i = 0; i < MT_F_N; i++)
			if (given[i] && mt_facts[i].type == MT_FT_STR)
				facts[i].s = *strings + offs[i];
	}
	rc = MT_OK;
out:
	sbuf_release(&pool);
	cJSON_Delete(root);
	return rc;
}
