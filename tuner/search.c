/* SPDX-License-Identifier: MIT */
/* search: enumeration, pruning by the rules, evaluation and ranking. */
#include "rank.h"
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rules/engine.h"
#include "../perfmodel/band.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/optim.h"
#include "../job/local.h"
#include "../job/release.h"
#include "../perfmodel/fsdp.h"
#include "../perfmodel/graphs.h"
#include "../perfmodel/perf.h"
#include "facts.h"
#include "settings.h"

/* ---------------------------------------------------------------- search */

struct split_cache {
	signed char *ok; /* [pp][vpp]: -1 unknown, 0 no, 1 yes */
	int maxpp, maxv;
};

struct srch {
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_job *j;
	struct mt_ctx x;
	struct mt_search_result *res;
	struct mt_rules_run *r;  /* NULL: the model alone */
	struct mt_cfg_facts cf;  /* the candidate's facts, for r */
	double cap;
	double host_cap;         /* usable host memory per node, 0 unchecked */
	int k;
	int want_mem, want_time; /* constraints read memory or time facts */
	struct mt_eval roomy;    /* the fastest candidate within MT_ROOMY_USE of cap */
	int has_roomy;
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

/* ---- rule hooks: all no-ops without rules */

/* 1 when a constraint prunes the partial candidate here (counted by rule). */
static int ruled_out(struct srch *s, int stage)
{
	return s->r && mt_rules_check(s->r, stage) >= 0;
}

/* The facts of `stage` for cfg, then ruled_out(). */
static int search_at(struct srch *s, int stage, const struct mt_config *cfg)
{
	if (!s->r)
		return 0;
	mt_cfg_facts_stage(&s->cf, stage, cfg);
	return mt_rules_check(s->r, stage) >= 0;
}


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
static void prefer_roomy(struct srch *s)
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
/* The TIMED knobs (job/knobs.def): the search tries each value of those
 * not pinned */
#define G_PINS(id)
#define G_SETTINGS(id)
#define G_GENERIC(id)
#define G_TIMED(id) id,
static const int timed_knob[] = {
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	     change, help) G_##group(MT_KNOB_##id)
#include "../job/knobs.def"
#undef KNOB
	-1
};
#undef G_PINS
#undef G_SETTINGS
#undef G_GENERIC
#undef G_TIMED
#define NTIMED ((int)(sizeof(timed_knob) / sizeof(timed_knob[0])) - 1)

/* The TIMED knobs from the i-th on, each as pinned or at each of its
 * values, then the recompute mode rc */
static void timed_knobs(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
			struct mt_config *cfg, int rc, int i)
{
	int v[MT_KNOB_VALUES_MAX], n, x, k = timed_knob[i];

	if (i >= NTIMED) {
		recompute_modes(s, a, b, cfg, rc);
		return;
	}
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

static void level_c(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
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
			if (NTIMED)
				timed_knobs(s, a, b, cfg, rc, 0);
			else
				recompute_modes(s, a, b, cfg, rc);
	}
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
static int plan_beyond_reach(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
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
static int shape_beyond_reach(struct srch *s, const struct mt_costs *a)
{
	const struct mt_job *j = s->j;
	double per;

	if (!bounding(s))
		return 0;
	per = (double)j->gbs * a->tp * a->cp / ((double)j->gpus * a->mbs);
	return beyond_reach(s, mt_shape_floor(&s->x, a, per, j->pins.ep_overlap != 0));
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

	if (shape_beyond_reach(s, a)) {
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
			if (plan_beyond_reach(s, a, plan, cfg))
				res->pruned[MT_PRUNE_BOUND]++;
			else
				level_c(s, a, plan, cfg);
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
	prefer_roomy(&s);
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
