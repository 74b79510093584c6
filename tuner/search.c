/* SPDX-License-Identifier: MIT */
/* search: enumeration and pruning by the rules (level C, the ranking and
 * the floors of the step are level_c.c). */
#include "rank.h"
#include "search.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rules/engine.h"
#include "../perfmodel/hostmem.h"
#include "../job/local.h"
#include "../job/release.h"
#include "../perfmodel/perf.h"
#include "facts.h"
#include "search_int.h"
#include "settings.h"

/* ---------------------------------------------------------------- search */

struct split_cache {
	signed char *ok; /* [pp][vpp]: -1 unknown, 0 no, 1 yes */
	int maxpp, maxv;
};

/* Micro-batch sizes and expert-TP sizes searched unless pinned. */
#define MT_MBS_MAX 32
#define MT_ETP_MAX 16

/* Divisors of n up to `upto`, ascending (at most `max`). */
static int divisors_upto(long n, long upto, int *out, int max)
{
	long big[64];
	int cnt = 0, nb = 0;
	long i;

	for (i = 1; i * i <= n; i++) {
		if (n % i)
			continue;
		if (i <= upto && cnt < max)
			out[cnt++] = (int)i;
		if (n / i != i && n / i <= upto && nb < 64)
			big[nb++] = n / i;
	}
	while (nb > 0 && cnt < max)
		out[cnt++] = (int)big[--nb];
	return cnt;
}

static int divisors(long n, int *out, int max)
{
	return divisors_upto(n, n, out, max);
}

static int split_ok(struct split_cache *sc, struct srch *s, const struct mt_costs *a, int pp,
		    int vpp, int dp, int mb, struct mt_config *cfg, struct mt_plan *plan)
{
	signed char *slot = NULL;

	if (pp <= sc->maxpp && vpp <= sc->maxv) {
		slot = &sc->ok[(size_t)pp * (size_t)(sc->maxv + 1) + (size_t)vpp];
		if (*slot == 0)
			return 0;
	}
	if (mt_plan_compute(&s->x, a, pp, vpp, dp, mb, cfg, plan)) {
		if (slot)
			*slot = 0;
		return 0;
	}
	if (slot)
		*slot = 1;
	return 1;
}

/* Level B loop: PP and VPP for one layer shape (DP and micro-batches follow). */
static void search_pipeline(struct srch *s, struct split_cache *sc, const struct mt_costs *a,
			    struct mt_plan *plan, struct mt_config *cfg)
{
	const struct mt_model *m = s->m;
	const struct mt_job *j = s->j;
	const struct mt_pins *p = &j->pins;
	struct mt_search_result *res = s->res;
	int pps[64], npp, ip, vpp;

	if (mt_shape_beyond_reach(s, a)) {
		res->pruned[MT_PRUNE_BOUND]++;
		return;
	}
	npp = divisors(j->gpus / (a->tp * a->cp), pps, 64);
	for (ip = 0; ip < npp; ip++) {
		int pp = pps[ip];
		long dp = j->gpus / ((long)a->tp * a->cp * pp), mb;

		if (p->pp != MT_UNSET && p->pp != pp)
			continue;
		if (pp > m->layers) {
			res->pruned[MT_PRUNE_PP_LAYERS]++;
			continue;
		}
		if ((j->gpus / pp) % ((long)a->ep * a->etp)) {
			res->pruned[MT_PRUNE_EP_GPUS]++;
			continue;
		}
		if (j->gbs % (dp * a->mbs)) {
			res->pruned[MT_PRUNE_BATCH]++;
			continue;
		}
		mb = j->gbs / (dp * a->mbs);
		cfg->pp = pp;
		cfg->dp = (int)dp;
		cfg->num_mb = (int)mb;
		if (search_at(s, MT_ST_PP, cfg))
			continue;
		/* a pipeline layout gives every chunk at least one of the
		 * embedding, a layer or the loss (perfmodel/layout.h) */
		for (vpp = 1; pp * vpp <= m->layers + 2; vpp++) {
			if (p->vpp != MT_UNSET && p->vpp != vpp)
				continue;
			if (p->layout && p->layout->n != pp * vpp)
				continue;
			if (vpp > 1 && (pp == 1 || mb % pp)) {
				res->pruned[MT_PRUNE_VPP]++;
				continue;
			}
			if (vpp > 1 && pp <= 2 && cfg->p2p_blocking) {
				res->pruned[MT_PRUNE_P2P_PP]++;
				continue;
			}
			cfg->vpp = vpp;
			if (search_at(s, MT_ST_VPP, cfg))
				continue;
			mt_set_dp(&s->cf, p, cfg);
			if (ruled_out(s, MT_ST_OVERLAP))
				continue;
			mt_set_bucket(&s->cf, p, cfg);
			if (ruled_out(s, MT_ST_BUCKET)) {
				cfg->bucket_params = 0;
				continue;
			}
			if (!split_ok(sc, s, a, pp, vpp, (int)dp, (int)mb, cfg, plan)) {
				res->pruned[MT_PRUNE_PP_LAYERS]++;
				cfg->bucket_params = 0;
				continue;
			}
			cfg->edp = plan->edp;
			cfg->split = plan->split;
			cfg->first_layers = plan->first_layers;
			cfg->last_layers = plan->last_layers;
			cfg->bucket_params = plan->bucket_params;
			if (search_at(s, MT_ST_PLAN, cfg)) {
				cfg->bucket_params = 0;
				continue;
			}
			if (mt_plan_beyond_reach(s, a, plan, cfg))
				res->pruned[MT_PRUNE_BOUND]++;
			else
				mt_level_c(s, a, plan, cfg);
			cfg->bucket_params = 0;
		}
	}
}

/* The layer shape is complete: its costs, then the pipelines over it. */
static void search_mbs(struct srch *s, struct split_cache *sc, struct mt_costs *a,
		       struct mt_plan *plan, struct mt_config *cfg, int mbs)
{
	const struct mt_pins *p = &s->j->pins;
	struct mt_shape sh;

	cfg->mbs = mbs;
	if (search_at(s, MT_ST_MBS, cfg))
		return;
	mt_set_fusion(&s->cf, p, cfg);
	if (ruled_out(s, MT_ST_FUSION))
		return;
	mt_shape_of(cfg, &sh);
	mt_costs_compute(&s->x, &sh, a);
	if (search_at(s, MT_ST_SHAPE, cfg))
		return;
	search_pipeline(s, sc, a, plan, cfg);
}

/* The token dispatchers the job allows and the profile can time (one, the
 * alltoall, without expert parallelism), each with the micro-batch sizes. */
/* 1 when the candidate's dispatcher can take a rank budget: flex on HybridEP
 * (transformer_config.py @ d98e8a6 lines 1868-1883); the target release's
 * lack of it pins it off (job/release.c). */
static int budgeted(const struct srch *s, const struct mt_config *cfg)
{
	return cfg->dispatcher == MT_DISPATCH_FLEX && s->c->dispatch.flex_backend == MT_FLEX_HYBRIDEP &&
	       !mt_rank_budget_reason(s->m, s->j, cfg->etp);
}

static void search_dispatchers(struct srch *s, struct split_cache *sc, struct mt_costs *a,
			       struct mt_plan *plan, struct mt_config *cfg, const int *mbss,
			       int nmbs)
{
	int want = s->j->moe_dispatcher, d, imb, rb;
	int moe = s->m->experts && (cfg->ep > 1 || cfg->etp > 1);

	for (d = 0; d < MT_DISPATCH_N; d++) {
		if (!moe ? d != (want != MT_DISPATCH_AUTO ? want : MT_DISPATCH_ALLTOALL)
			 : (want != MT_DISPATCH_AUTO && d != want) || !mt_dispatch_available(s->c, d))
			continue;
		if (moe && d == MT_DISPATCH_FLEX && (s->j->release_off & MT_ROFF_FLEX)) {
			s->res->pruned[MT_PRUNE_RELEASE]++;
			continue;
		}
		cfg->dispatcher = d;
		/* flex on HybridEP: with and without the rank budget (5.8) */
		for (rb = budgeted(s, cfg); rb >= 0; rb--) {
			if (s->j->pins.rank_budget != MT_UNSET && s->j->pins.rank_budget != rb)
				continue;
			cfg->rank_budget = rb;
			if (search_at(s, MT_ST_ETP, cfg))
				continue;
			for (imb = 0; imb < nmbs; imb++)
				search_mbs(s, sc, a, plan, cfg, mbss[imb]);
		}
		cfg->rank_budget = 0;
	}
}

/* Level A loop: the knobs that change a layer's shape, in the order the
 * rules' stages follow (facts.h): TP, CP, the a2a group, CP comm type, SP,
 * EP, ETP, micro-batch. */
static void search_shapes(struct srch *s, struct split_cache *sc, struct mt_costs *a,
			  struct mt_plan *plan, struct mt_config *cfg)
{
	const struct mt_model *m = s->m;
	const struct mt_cluster *c = s->c;
	const struct mt_job *j = s->j;
	const struct mt_pins *p = &j->pins;
	struct mt_search_result *res = s->res;
	int tps[64], cps[64], eps[64], etps[16], mbss[64];
	int ntp, ncp, nep, netp, nmbs, it, ic, ie, iet, sp, cc, r, v;
	int sp_set, sp_val = 0, cc_set, cc_val = 0, etp_set, etp_val = 1;

	/* a pinned knob is searched at its value only, even outside the
	 * default ranges */
	ntp = divisors(j->gpus, tps, 64);
	nmbs = p->mbs != MT_UNSET ? (mbss[0] = p->mbs, 1)
				  : divisors_upto(j->gbs, MT_MBS_MAX, mbss, 64);
	nep = p->ep != MT_UNSET ? (eps[0] = p->ep, 1)
		: m->experts ? divisors(m->experts, eps, 64) : (eps[0] = 1, 1);
	netp = p->etp != MT_UNSET ? (etps[0] = p->etp, 1)
	       : m->experts ? divisors(MT_ETP_MAX, etps, 16) : (etps[0] = 1, 1);
	for (it = 0; it < ntp; it++) {
		int tp = tps[it];

		if (p->tp != MT_UNSET && p->tp != tp)
			continue;
		r = tp > m->heads ? MT_PRUNE_TP_HEADS : mt_tp_reason(m, tp);
		if (r >= 0) {
			res->pruned[r]++;
			continue;
		}
		cfg->tp = tp;
		if (search_at(s, MT_ST_TP, cfg))
			continue;
		ncp = divisors(j->gpus / tp, cps, 64);
		for (ic = 0; ic < ncp; ic++) {
			int cp = cps[ic];

			if (p->cp != MT_UNSET && p->cp != cp)
				continue;
			cfg->cp = cp;
			if (search_at(s, MT_ST_CP, cfg))
				continue;
			/* the inner a2a group of a2a+p2p: a rule, else the NVLink domain */
			cfg->cp_a2a = cp > 1 && mt_set_fixed(s->r, MT_F_CFG_CP_A2A, MT_UNSET, &v)
					      ? v : mt_group_per_domain(c, cp, tp);
			if (search_at(s, MT_ST_CP_A2A, cfg))
				continue;
			cc_set = cp > 1 ? mt_set_fixed(s->r, MT_F_CFG_CP_COMM, p->cp_comm, &cc_val) : (cc_val = MT_CP_P2P, 1);
			for (cc = 0; cc < (cp > 1 ? MT_CP_N : 1); cc++) {
				if (cc_set && cp > 1 && cc != cc_val)
					continue;
				if ((cc != MT_CP_P2P && (j->release_off & MT_ROFF_CP_COMM)) ||
				    (cc == MT_CP_A2A_P2P && (j->release_off & MT_ROFF_CP_A2A_P2P))) {
					res->pruned[MT_PRUNE_RELEASE]++;
					continue;
				}
				if ((r = mt_cp_reason(m, j, tp, cp, cc)) >= 0 ||
				    (cc == MT_CP_A2A_P2P && !mt_a2a_p2p_ok(m, tp, cp, cfg->cp_a2a) &&
				     (r = MT_PRUNE_CP_HEADS) >= 0)) {
					res->pruned[r]++;
					continue;
				}
				cfg->cp_comm = cp > 1 ? cc : MT_CP_P2P;
				if (search_at(s, MT_ST_CP_COMM, cfg))
					continue;
				sp_set = tp > 1 ? mt_set_fixed(s->r, MT_F_CFG_SP, p->sp, &sp_val) : (sp_val = 0, 1);
				for (sp = (tp > 1); sp >= 0; sp--) {
					if (sp_set && sp != sp_val)
						continue;
					if (m->experts && tp > 1 && !sp) {
						res->pruned[MT_PRUNE_MOE_SP]++;
						continue;
					}
					if (sp && (j->seq / cp) % tp) {
						res->pruned[MT_PRUNE_SP_SEQ]++;
						continue;
					}
					cfg->sp = sp;
					if (search_at(s, MT_ST_SP, cfg))
						continue;
					for (ie = 0; ie < nep; ie++) {
						int ep = eps[ie];

						cfg->ep = ep;
						if (search_at(s, MT_ST_EP, cfg))
							continue;
						etp_set = m->experts ? mt_set_fixed(s->r, MT_F_CFG_ETP, p->etp, &etp_val)
								     : (etp_val = 1, 1);
						for (iet = 0; iet < (etp_set ? 1 : netp); iet++) {
							int etp = etp_set ? etp_val : etps[iet];

							if ((r = mt_ep_reason(m, ep, etp)) >= 0) {
								res->pruned[r]++;
								continue;
							}
							cfg->etp = etp;
							search_dispatchers(s, sc, a, plan, cfg, mbss, nmbs);
						}
					}
				}
			}
		}
	}
}

static void run_search(struct srch *s, struct split_cache *sc, struct mt_costs *a,
		       struct mt_plan *plan)
{
	struct mt_config cfg;

	memset(sc->ok, -1, (size_t)(sc->maxpp + 1) * (size_t)(sc->maxv + 1));
	memset(&cfg, 0, sizeof(cfg));
	mt_config_settings(s->j, &cfg);
	/* a constraint on the model, job or cluster alone rules out everything */
	if (ruled_out(s, MT_ST_STATIC))
		return;
	search_shapes(s, sc, a, plan, &cfg);
}

/* The constraint rules left nothing that fits.  Search again with each
 * constraint that pruned something turned off in turn, and keep the best
 * result; when none suffices alone, without any constraint.  Set rules stay.
 * The candidates then list the constraints they break. */
static void relax(struct srch *s, struct split_cache *sc, struct mt_costs *a, struct mt_plan *plan)
{
	const struct mt_ruleset *rs = mt_rules_set(s->r);
	struct mt_search_result *res = s->res, *best = NULL, *trial = NULL, *strict = NULL;
	long long evaluated = res->evaluated;
	int i, which = MT_RELAX_NONE, pruned = 0, want_mem = s->want_mem, want_time = s->want_time;

	mt_rules_freeze(s->r);
	for (i = 0; i < rs->n; i++)
		pruned |= rs->rules[i].kind == MT_RK_CONSTRAINT && mt_rules_pruned(s->r, i) > 0;
	if (!pruned)
		return; /* memory alone rules everything out: nothing to relax */
	trial = malloc(sizeof(*trial));
	best = malloc(sizeof(*best));
	strict = malloc(sizeof(*strict));
	if (!trial || !best || !strict)
		goto out; /* keep the strict result */
	*strict = *res;
	best->ntop = 0;
	for (i = 0; i < rs->n; i++) {
		if (rs->rules[i].kind != MT_RK_CONSTRAINT || !mt_rules_pruned(s->r, i))
			continue;
		memset(trial, 0, sizeof(*trial));
		trial->capacity_bytes = s->cap;
		s->res = trial;
		mt_rules_relax(s->r, i);
		run_search(s, sc, a, plan);
		evaluated += trial->evaluated;
		if (trial->ntop && (!best->ntop || mt_rank_key(&trial->top[0]) < mt_rank_key(&best->top[0]))) {
			*best = *trial;
			which = i;
		}
	}
	if (which == MT_RELAX_NONE)
		which = MT_RELAX_ALL;
	/* once more, the chosen way, so that best() and least_mem() describe
	 * the candidates of this search only */
	s->res = res;
	memset(res, 0, sizeof(*res));
	res->capacity_bytes = s->cap;
	mt_rules_relax(s->r, which);
	mt_rules_observe_reset(s->r);
	if (which == MT_RELAX_ALL)
		s->want_mem = s->want_time = 0;
	run_search(s, sc, a, plan);
	s->want_mem = want_mem;
	s->want_time = want_time;
	if (!res->ntop) {
		/* nothing fits even so: the strict search's answer stands */
		*res = *strict;
		mt_rules_relax(s->r, MT_RELAX_NONE);
		goto out;
	}
	res->relaxed = 1;
	res->relaxed_rule = which;
	res->strict_evaluated = evaluated;
out:
	s->res = res;
	free(trial);
	free(best);
	free(strict);
}

int mt_search(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	      struct mt_rules_run *rules, struct mt_search_result *res, struct mt_error *err)
{
	struct srch s;
	struct split_cache sc;
	struct mt_costs *a = NULL;
	struct mt_plan *plan = NULL;
	struct timespec t0, t1;
	struct mt_job rj = *j;
	int rc;

	memset(res, 0, sizeof(*res));
	/* what Megatron-LM's own layers and the target releases cannot run is not
	 * searched (job/local.h, job/release.h) */
	if ((rc = mt_local_restrict(&rj, err)) || (rc = mt_release_restrict(&rj, c, err)))
		return rc;
	j = &rj;
	rc = mt_job_check(m, c, j, err);
	if (rc)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&s, 0, sizeof(s));
	s.m = m;
	s.c = c;
	s.j = j;
	s.res = res;
	s.r = rules;
	s.k = j->top_k < 1 ? 1 : (j->top_k > MT_TOP_MAX ? MT_TOP_MAX : j->top_k);
	s.cap = c->memory_bytes * (1 - j->mem_headroom);
	s.host_cap = mt_host_capacity(c);
	res->capacity_bytes = s.cap;
	mt_ctx_init(&s.x, m, c, j);
	mt_cfg_facts_init(&s.cf, rules, &s.x);
	if (rules) {
		mt_rules_relax(rules, MT_RELAX_NONE);
		s.want_mem = mt_rules_wants(rules, MT_ST_MEMORY);
		s.want_time = mt_rules_wants(rules, MT_ST_TIME);
	}

	/* the only allocations of a search, whatever the size of the space */
	sc.maxpp = m->layers < MT_MAX_PP ? m->layers : MT_MAX_PP;
	sc.maxv = m->layers;
	sc.ok = malloc((size_t)(sc.maxpp + 1) * (size_t)(sc.maxv + 1));
	a = malloc(sizeof(*a));
	plan = malloc(sizeof(*plan));
	if (!sc.ok || !a || !plan) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	s.cf.a = a;
	s.cf.b = plan;
	run_search(&s, &sc, a, plan);
	if (rules && !res->ntop)
		relax(&s, &sc, a, plan);
	mt_prefer_roomy(&s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	res->min_gpus = (long)(18.0 * (double)m->params_total / s.cap) + 1;
	if (res->min_gpus > c->gpus_per_node)
		res->min_gpus = (res->min_gpus + c->gpus_per_node - 1) / c->gpus_per_node *
				c->gpus_per_node;
out:
	free(sc.ok);
	free(a);
	free(plan);
	return rc;
}
