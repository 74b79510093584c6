/* SPDX-License-Identifier: MIT */
/* level_c: the search's innermost level and what it feeds (tuner/search.c
 * enumerates the rest): for one plan, level C (FSDP, the distributed
 * optimizer, recompute and its modules, activation offload, the EP overlap:
 * the fewest layers that fit timed, the rest dominated); each candidate
 * finished (the rules' memory and time stages, full-iteration graphs) and
 * kept in the ranking or as the closest miss; the headroom pick; and the
 * floors of the step that skip a plan or a layer shape that cannot rank. */
#include "search_int.h"

#include <math.h>
#include <string.h>

#include "../job/knobs.h"
#include "../job/release.h"
#include "../perfmodel/band.h"
#include "../perfmodel/fsdp.h"
#include "../perfmodel/graphs.h"
#include "../perfmodel/optim.h"
#include "rank.h"
#include "settings.h"

/* A candidate on the memory limit, or resting on activation offload that
 * pins most of the node's host memory (7.1) */
static int fragile(const struct srch *s, const struct mt_eval *e)
{
	return e->mem.total > MT_ROOMY_USE * s->cap ||
	       (e->cfg.offload_layers > 0 && s->host_cap > 0 &&
		e->mem.host_per_node > MT_ROOMY_HOST_USE * s->host_cap);
}

/* How much slower than the first candidate the headroom pick may be: the
 * first one's band above its step, or --prefer-headroom where wider; 0 off */
static double roomy_tol(const struct srch *s)
{
	const struct mt_eval *t = &s->res->top[0];

	if (s->j->roomy_tol <= 0 || !s->res->ntop)
		return 0;
	return fmax(s->j->roomy_tol, t->band.hi / t->time.step - 1);
}

/* The ranking keeps the best candidate of each layout: a candidate of a
 * layout already ranked replaces its best or folds under it as a variant;
 * a new layout enters as before, pushing out the last one */
static void search_keep(struct srch *s, struct mt_eval *e)
{
	struct mt_search_result *r = s->res;
	int i;

	r->feasible++;
	if (!fragile(s, e) && (!s->has_roomy || e->time.step < s->roomy.time.step)) {
		s->roomy = *e;
		s->has_roomy = 1;
	}
	/* the key is at least the step: most candidates stop here, unbanded */
	if (r->ntop == s->k && e->time.step >= mt_rank_key(&r->top[r->ntop - 1]))
		return;
	for (i = 0; !s->j->no_fold && i < r->ntop; i++)
		if (mt_same_layout(&r->top[i].cfg, &e->cfg))
			break;
	if (s->j->no_fold)
		i = r->ntop;
	mt_band(s->m, s->c, s->j, &e->cfg, &e->time, &e->band);
	if (i < r->ntop) {
		if (mt_rank_key(e) >= mt_rank_key(&r->top[i])) {
			mt_rank_fold(r, i, e);
			return;
		}
		/* the layout's new best; the old one folds under it */
		mt_rank_fold(r, i, &r->top[i]);
		r->top[i] = *e;
		mt_rank_bubble(r, i);
		return;
	}
	if (r->ntop == s->k && mt_rank_key(e) >= mt_rank_key(&r->top[r->ntop - 1]))
		return;
	i = r->ntop < s->k ? r->ntop++ : r->ntop - 1;
	r->top[i] = *e;
	r->nvar[i] = 0;
	r->folded[i] = 0;
	mt_rank_bubble(r, i);
}

static void closest(struct srch *s, const struct mt_eval *e)
{
	s->res->closest = *e;
	s->res->has_closest = 1;
}

/* Headroom before speed (config.h MT_ROOMY_USE, docs/MODEL.md 7.1): when
 * the first candidate is on the memory limit or rests on offload, and the
 * fastest one that is neither is within roomy_tol() of it, that one is
 * ranked first and the others follow. */
void mt_prefer_roomy(struct srch *s)
{
	struct mt_search_result *r = s->res;
	struct mt_eval *t = r->top;
	int i, n = r->ntop;

	if (!n || !s->has_roomy || !fragile(s, &t[0]) ||
	    s->roomy.time.step > t[0].time.step * (1 + roomy_tol(s)))
		return;
	mt_band(s->m, s->c, s->j, &s->roomy.cfg, &s->roomy.time, &s->roomy.band);
	/* drop its own entry, if the list has it, then shift the list down one */
	for (i = 0; i < n; i++)
		if (t[i].time.step == s->roomy.time.step && t[i].mem.total == s->roomy.mem.total &&
		    !memcmp(&t[i].cfg, &s->roomy.cfg, sizeof(t[i].cfg)))
			break;
	if (i == n && n < s->k)
		n++;
	for (i = i < n ? i : n - 1; i > 0; i--)
		mt_rank_move(r, i, i - 1);
	t[0] = s->roomy;
	r->nvar[0] = 0;
	r->folded[0] = 0;
	r->ntop = n;
	r->roomy_pick = 1;
	/* it is no longer a variant of the layout it was folded under */
	for (i = 1; i < n; i++) {
		int v, w = 0;

		for (v = 0; v < r->nvar[i]; v++)
			if (memcmp(&r->var[i][v].cfg, &s->roomy.cfg, sizeof(s->roomy.cfg)))
				r->var[i][w++] = r->var[i][v];
		if (w < r->nvar[i])
			r->folded[i]--;
		r->nvar[i] = w;
	}
}

/* Memory of cfg; counts one evaluation. */
static double mem_of(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		     const struct mt_config *cfg, struct mt_mem *mem)
{
	s->res->evaluated++;
	mt_memory(&s->x, a, b, cfg, mem);
	return mem->total;
}

/* Full-iteration CUDA graphs (docs/MODEL.md 5.10) for the timed candidate e:
 * pinned on, e has them or is not a candidate (returns 0); unpinned, e takes
 * them where they can run and its host is exposed (they replace per-layer
 * graphs, so memory only falls). */
static int full_graph(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		      struct mt_eval *e)
{
	int pin = s->j->pins.full_graph;

	if (pin == 0 || (pin != 1 && s->j->pins.cuda_graph == 1)) /* per-layer graphs pinned */
		return 1;
	if (mt_full_graph_reason(&s->x, a, &e->cfg))
		return pin != 1;
	if (pin != 1 && !mt_full_graph_helps(&e->time))
		return 1;
	e->cfg.full_graph = 1;
	e->cfg.cuda_graph = 0;
	mt_memory(&s->x, a, b, &e->cfg, &e->mem);
	mt_timing(&s->x, a, b, &e->cfg, &e->time, &e->tput);
	return 1;
}

static void search_finish(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		   const struct mt_config *cfg, const struct mt_mem *mem)
{
	struct mt_eval e;

	memset(&e.band, 0, sizeof(e.band));
	if (s->r) {
		if (search_at(s, MT_ST_LAYERS, cfg))
			return;
		s->cf.mem = mem;
		if (s->want_mem && search_at(s, MT_ST_MEMORY, cfg))
			return;
	}
	e.cfg = *cfg;
	e.mem = *mem;
	e.feasible = mem->total <= s->cap;
	/* what the node's host memory cannot hold is out, whatever the GPU */
	if (e.feasible && s->host_cap > 0 && mem->host_per_node > s->host_cap) {
		s->res->pruned[MT_PRUNE_HOST_MEMORY]++;
		return;
	}
	if (!e.feasible) {
		s->res->pruned[MT_PRUNE_MEMORY]++;
		if (s->r)
			mt_rules_observe(s->r, &e, 0);
		/* time it only if it is the closest miss so far */
		if (!s->res->has_closest || mem->total < s->res->closest.mem.total) {
			mt_timing(&s->x, a, b, cfg, &e.time, &e.tput);
			closest(s, &e);
		}
		return;
	}
	mt_timing(&s->x, a, b, cfg, &e.time, &e.tput);
	if (!full_graph(s, a, b, &e))
		return;
	s->res->timed++;
	if (s->r) {
		/* full-iteration graphs changed the graphs and the memory: the
		 * rules see the candidate as it now is */
		if (e.cfg.full_graph) {
			s->cf.mem = &e.mem;
			if (search_at(s, MT_ST_LAYERS, &e.cfg) || (s->want_mem && search_at(s, MT_ST_MEMORY, &e.cfg)))
				return;
		}
		if (s->want_time) {
			if (!s->want_mem)
				mt_cfg_facts_stage(&s->cf, MT_ST_MEMORY, &e.cfg);
			s->cf.time = &e.time;
			s->cf.tput = &e.tput;
			if (search_at(s, MT_ST_TIME, &e.cfg))
				return;
		}
		mt_rules_observe(s->r, &e, 1);
	}
	search_keep(s, &e);
}

/* The 1F1B EP overlap `on` with the recompute mode rc: allowed by the pin
 * and by Megatron-LM's checks (offload excluded: it is a PP 1 memory saver
 * searched without the overlap). */
static int ep_overlap_ok(struct srch *s, const struct mt_config *cfg, int on, int rc)
{
	int pin = s->j->pins.ep_overlap;

	if (pin != MT_UNSET && pin != on)
		return 0;
	if (!on)
		return 1;
	/* pinned graphs: only of the scopes that run beside it (docs/MODEL.md 5.10) */
	if (s->j->pins.cuda_graph == 1 && mt_graph_overlap_reason(s->m, s->j))
		return 0;
	return !mt_ep_overlap_reason(s->m, cfg->ep, cfg->dispatcher, cfg->pp, cfg->vpp, rc);
}

/* The fewest of *field from lo to hi whose memory fits, hi fitting
 * (bisection: memory falls as *field grows). */
static int fewest_fit(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		      struct mt_config *cfg, int *field, int lo, int hi, struct mt_mem *mem)
{
	while (lo < hi) {
		int n = (lo + hi) / 2;

		*field = n;
		if (mem_of(s, a, b, cfg, mem) <= s->cap)
			hi = n;
		else
			lo = n + 1;
	}
	return lo;
}

/* One recompute mode of level C (rc: the mode, and the EP overlap as rc /
 * MT_RC_N) with the selective modules mods: the fewest layers that fit for
 * full recompute and offload.  Returns 1 when the candidate it finished does
 * not fit in memory, else 0. */
static int rc_mode_once(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
			struct mt_config *cfg, int rc, unsigned mods)
{
	const struct mt_pins *p = &s->j->pins;
	const int L = s->m->layers;
	const int chunk = b->chunk_layers_max;
	struct mt_mem mem;

	/* pinned graphs rule out full recompute and offload (5.10); FSDP
	 * with activation offload only when pinned (5.11) */
	int can_offload = cfg->pp == 1 && rc % MT_RC_N == MT_RC_NONE && L > 1 &&
			  p->cuda_graph != 1 && !s->j->offload_modules &&
			  (!cfg->fsdp || p->fsdp > 0);

	if (!ep_overlap_ok(s, cfg, rc / MT_RC_N, rc % MT_RC_N))
		return 0;
	cfg->ep_overlap = rc / MT_RC_N;
	mt_config_moe_settings(s->m, s->c, cfg);
	if (p->recompute != MT_UNSET && p->recompute != rc % MT_RC_N)
		return 0;
	cfg->recompute = rc % MT_RC_N;
	cfg->recompute_modules = (int)mods;
	mt_config_moe_settings(s->m, s->c, cfg); /* the shared-expert overlap follows */
	if (p->cuda_graph == 1 && rc % MT_RC_N == MT_RC_FULL)
		return 0;
	cfg->recompute_layers = 0;
	/* the method is the user's; block (the fewest layers that fit) unless pinned */
	cfg->recompute_method = rc % MT_RC_N == MT_RC_FULL && p->recompute_method != MT_UNSET
					? p->recompute_method : MT_RC_BLOCK;
	cfg->offload_layers = 0;
	cfg->cuda_graph = 0;
	if (search_at(s, MT_ST_RECOMPUTE, cfg))
		return 0;
	cfg->cuda_graph = s->j->offload_modules ? 0 : mt_set_graph(s->r, s->m, s->j, cfg);
	if (p->offload_layers != MT_UNSET && p->offload_layers > 0) {
		if (!can_offload || p->offload_layers >= L) {
			s->res->pruned[MT_PRUNE_OFFLOAD]++;
			return 0;
		}
		cfg->offload_layers = p->offload_layers;
		cfg->cuda_graph = 0;
	}
	/* graphs only where their buffers fit (docs/MODEL.md 5.10) */
	if (cfg->cuda_graph && p->cuda_graph == MT_UNSET &&
	    mem_of(s, a, b, cfg, &mem) > s->cap)
		cfg->cuda_graph = 0;
	if (rc % MT_RC_N == MT_RC_FULL) {
		int lo = 1, hi = chunk;

		if (p->recompute_layers != MT_UNSET) {
			cfg->recompute_layers = p->recompute_layers < chunk
							? p->recompute_layers : chunk;
		} else if (cfg->recompute_method == MT_RC_UNIFORM) {
			cfg->recompute_layers = 1; /* Megatron-LM's default group */
		} else {
			cfg->recompute_layers = hi;
			if (mem_of(s, a, b, cfg, &mem) <= s->cap) {
				lo = fewest_fit(s, a, b, cfg, &cfg->recompute_layers, lo, hi, &mem);
				s->res->pruned[MT_PRUNE_DOMINATED] += chunk - lo;
				s->res->pruned[MT_PRUNE_MEMORY] += lo - 1;
				cfg->recompute_layers = lo;
			}
		}
		mem_of(s, a, b, cfg, &mem);
		search_finish(s, a, b, cfg, &mem);
		return mem.total > s->cap;
	}
	if (mem_of(s, a, b, cfg, &mem) <= s->cap || !can_offload ||
	    p->offload_layers != MT_UNSET) {
		search_finish(s, a, b, cfg, &mem);
		if (can_offload && p->offload_layers == MT_UNSET)
			s->res->pruned[MT_PRUNE_DOMINATED] += L - 1;
		return mem.total > s->cap;
	}
	/* offload: the fewest layers that fit */
	{
		struct mt_mem m2;
		int lo = 1, hi = L - 1;

		cfg->cuda_graph = 0; /* Megatron: no graphs with CPU offloading */
		cfg->offload_layers = hi;
		if (mem_of(s, a, b, cfg, &m2) > s->cap) {
			cfg->offload_layers = 0;
			search_finish(s, a, b, cfg, &mem); /* records the miss */
			s->res->pruned[MT_PRUNE_MEMORY] += L - 1;
			return 1;
		}
		lo = fewest_fit(s, a, b, cfg, &cfg->offload_layers, lo, hi, &m2);
		s->res->pruned[MT_PRUNE_DOMINATED] += L - 1 - lo;
		s->res->pruned[MT_PRUNE_MEMORY] += lo;
		cfg->offload_layers = lo;
		mem_of(s, a, b, cfg, &m2);
		search_finish(s, a, b, cfg, &m2);
		return m2.total > s->cap;
	}
}

/* rc_mode_once() with the precision-aware optimizer as pinned (or implied
 * by a dtype or the optimizer offload), else off; unpinned, it is tried
 * (BF16 moments) only for a candidate that does not fit without it, as
 * recompute and offload take the fewest layers that fit (docs/MODEL.md 7). */
static void rc_mode(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		    struct mt_config *cfg, int rc, unsigned mods)
{
	const struct mt_job *j = s->j;
	int on = mt_prec_opt_default(j);

	mt_config_prec_opt(j, cfg, on);
	if (!rc_mode_once(s, a, b, cfg, rc, mods) || on || j->pins.prec_opt == 0 ||
	    !cfg->dist_opt || cfg->fsdp)
		return;
	if (j->release_off & MT_ROFF_PREC_OPT) {
		s->res->pruned[MT_PRUNE_RELEASE]++;
		return;
	}
	mt_config_prec_opt(j, cfg, 1);
	rc_mode_once(s, a, b, cfg, rc, mods);
	mt_config_prec_opt(j, cfg, 0);
}

/* The recompute modes of level C: for selective recomputation the pinned
 * modules (--recompute selective alone: core_attn, Megatron-LM's default),
 * else each set the search tries (perfmodel/recompute.h) that Megatron-LM and the
 * target release run; each set after the second adds modules to it, so once
 * one of those fits the rest are dominated. */
static void recompute_modes(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
			    struct mt_config *cfg, int rc)
{
	const struct mt_pins *p = &s->j->pins;
	unsigned sets[MT_RC_SETS_MAX];
	int n, i;
	struct mt_mem mem;

	if (rc % MT_RC_N != MT_RC_SELECTIVE) {
		if (p->recompute_modules == MT_UNSET)
			rc_mode(s, a, b, cfg, rc, 0);
		return;
	}
	if (p->recompute_modules != MT_UNSET || p->recompute == MT_RC_SELECTIVE) {
		/* pinned, or --recompute selective alone: Megatron-LM's default */
		sets[0] = p->recompute_modules != MT_UNSET ? (unsigned)p->recompute_modules
							   : MT_RCM_DEFAULT;
		n = 1;
	} else if (s->j->release_off & MT_ROFF_RC_MODULES) {
		/* a release without --recompute-modules recomputes core_attn */
		sets[0] = MT_RCM_DEFAULT;
		n = 1;
	} else {
		n = mt_rc_module_sets(s->m, s->j, sets);
	}
	for (i = 0; i < n; i++) {
		unsigned mods = sets[i];

		if (i > 0) {
			/* moe_act needs grouped GEMM: several experts per GPU */
			if (s->m->experts && s->m->experts / cfg->ep <= 1)
				mods &= ~(1u << MT_RCM_MOE_ACT);
			if (!mods || mods == sets[i - 1] ||
			    mt_rc_modules_reason(s->m, s->j, mods, cfg->ep, rc / MT_RC_N, 0))
				continue;
		}
		rc_mode(s, a, b, cfg, rc, mods);
		/* a later set is dominated once this one fits (the sets after
		 * the first add modules) */
		if (i > 0 && cfg->recompute == MT_RC_SELECTIVE &&
		    mem_of(s, a, b, cfg, &mem) <= s->cap) {
			s->res->pruned[MT_PRUNE_DOMINATED] += n - 1 - i;
			return;
		}
	}
}

/* Level C: recompute, distributed optimizer, activation offload.  Memory falls
 * and time rises with more recomputed or offloaded layers, so for each mode
 * only the fewest layers that fit is timed; the rest are counted dominated. */
/* The TIMED knobs from the i-th on, each as pinned or at each of its
 * values, then the recompute mode rc */
static void timed_knobs(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
			struct mt_config *cfg, int rc, int i)
{
	int v[MT_KNOB_VALUES_MAX], n, x, k;

	if (i >= mt_knobs_ntimed) {
		recompute_modes(s, a, b, cfg, rc);
		return;
	}
	k = mt_knobs_timed[i];
	if (mt_knob_pin(s->j, k) != MT_UNSET) {
		mt_knob_set_cfg(cfg, k, mt_knob_pin(s->j, k));
		timed_knobs(s, a, b, cfg, rc, i + 1);
		return;
	}
	n = mt_knob_values(k, v, MT_KNOB_VALUES_MAX);
	for (x = 0; x < n; x++) {
		mt_knob_set_cfg(cfg, k, v[x]);
		timed_knobs(s, a, b, cfg, rc, i + 1);
	}
}

void mt_level_c(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		struct mt_config *cfg)
{
	const struct mt_pins *p = &s->j->pins;
	int d, rc, dset, dval = 0, keep = -1;

	dset = mt_set_fixed(s->r, MT_F_CFG_DIST_OPT, p->dist_opt, &dval);
	/* one data-parallel rank for every parameter: nothing to shard, so the
	 * distributed optimizer and FSDP are DDP by another name; one row, the
	 * one a pin, a set rule or the optimizer offload asks for, else DDP */
	if (cfg->dp == 1 && (!s->m->experts || cfg->edp <= 1))
		keep = p->fsdp > 0 ? (p->fsdp == MT_FSDP_TORCH ? 3 : 2) :
		       (dset && dval) || mt_prec_opt_default(s->j) ? 1 : 0;
	for (d = 3; d >= 0; d--) {
		/* d = 3: PyTorch FSDP2, without the distributed optimizer (it
		 * shards the states itself); d = 2: Megatron-FSDP, with the
		 * distributed optimizer it turns on; d = 1: the distributed
		 * optimizer; d = 0: none */
		int dist = d == 1 || d == 2, why;

		if (keep >= 0 && d != keep)
			continue;
		cfg->fsdp = d == 3 ? MT_FSDP_TORCH : d == 2 ? MT_FSDP_MEGATRON : MT_FSDP_OFF;
		/* the dist-opt rule prefers the distributed optimizer to DDP, not to
		 * FSDP2, which shards the states without it; a pin decides */
		if (dset && dval != dist && (cfg->fsdp != MT_FSDP_TORCH || p->dist_opt != MT_UNSET))
			continue;
		/* the offloaded optimizer and the precision-aware one are the
		 * distributed optimizer's (docs/MEGATRON_CHECKS.md) */
		if ((!dist || cfg->fsdp) && s->j->opt_offload <= 0 && mt_prec_opt_default(s->j))
			continue;
		if (!dist && s->j->opt_offload > 0)
			continue;
		if (p->fsdp != MT_UNSET && p->fsdp != cfg->fsdp)
			continue;
		/* what the target release lacks (job/release.h) */
		if ((d == 2 && (s->j->release_off & MT_ROFF_FSDP_MEGATRON)) ||
		    (d == 3 && (s->j->release_off & MT_ROFF_FSDP_TORCH))) {
			s->res->pruned[MT_PRUNE_RELEASE]++;
			continue;
		}
		/* FSDP shards the optimizer itself: no CPU offload of it */
		if (cfg->fsdp && ((why = mt_fsdp_impl_reason(s->m, s->c, cfg)) >= 0 ||
				  s->j->opt_offload > 0)) {
			s->res->pruned[why >= 0 ? why : MT_PRUNE_FSDP]++;
			continue;
		}
		cfg->dist_opt = dist;
		if (search_at(s, MT_ST_DIST_OPT, cfg))
			continue;
		for (rc = 0; rc < MT_RC_N * 2; rc++)
			if (mt_knobs_ntimed)
				timed_knobs(s, a, b, cfg, rc, 0);
			else
				recompute_modes(s, a, b, cfg, rc);
	}
}

/* 1 when the search may skip candidates by a floor of their step: the
 * ranking is full, and neither the rules watch every candidate (best(),
 * least_mem()) nor the user asked for --exhaustive. */
static int bounding(const struct srch *s)
{
	return s->res->ntop == s->k && !s->j->exhaustive && !(s->r && mt_rules_observing(s->r));
}

/* 1 when no candidate whose step is at least floor can enter the ranking:
 * the floor reaches its last key, and none could be the headroom pick
 * (7.1), which must be faster than the fastest roomy one so far and within
 * roomy_tol() of the first key. */
static int beyond_reach(const struct srch *s, double floor)
{
	const struct mt_search_result *r = s->res;

	if (floor < mt_rank_key(&r->top[r->ntop - 1]))
		return 0;
	return s->j->roomy_tol <= 0 || floor > mt_rank_key(&r->top[0]) * (1 + roomy_tol(s)) ||
	       (s->has_roomy && floor >= s->roomy.time.step);
}

/* The plan b's level-C block cannot enter the ranking (perfmodel/perf.h
 * mt_timing_floor, the EP overlap's saving where any recompute mode allows
 * it). */
int mt_plan_beyond_reach(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
			 const struct mt_config *cfg)
{
	int ep = 0, rc;

	if (!bounding(s))
		return 0;
	for (rc = 0; rc < MT_RC_N && !ep; rc++)
		ep = ep_overlap_ok(s, cfg, 1, rc);
	return beyond_reach(s, mt_timing_floor(&s->x, a, b, ep));
}

/* No plan of the layer shape a can enter the ranking: every split holds a
 * stage with at least the model's work over pp, for gbs / (dp x mbs)
 * micro-batches, and (gbs / (dp mbs)) / pp is the same for every PP
 * (perfmodel/perf.h mt_shape_floor). */
int mt_shape_beyond_reach(struct srch *s, const struct mt_costs *a)
{
	const struct mt_job *j = s->j;
	double per;

	if (!bounding(s))
		return 0;
	per = (double)j->gbs * a->tp * a->cp / ((double)j->gpus * a->mbs);
	return beyond_reach(s, mt_shape_floor(&s->x, a, per, j->pins.ep_overlap != 0));
}
