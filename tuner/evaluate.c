/* SPDX-License-Identifier: MIT */
/* evaluate: one configuration, every knob pinned or set as the search would
 * set it (mt_evaluate, tuner/search.h). */
#include "rank.h"
#include "search.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../job/flagtable.h"
#include "../job/local.h"
#include "../job/release.h"
#include "../rules/engine.h"
#include "../perfmodel/band.h"
#include "../perfmodel/fsdp.h"
#include "../perfmodel/graphs.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/perf.h"
#include "facts.h"
#include "settings.h"

/* Knobs the user did not give take what the set rules choose, stage by stage,
 * as the search would: first the knobs of the layer's shape ... */
static void rules_before_costs(struct mt_cfg_facts *cf, const struct mt_job *j,
			       struct mt_config *cfg)
{
	struct mt_rules_run *r = cf->r;
	const struct mt_pins *p = &j->pins;
	double v;

	mt_cfg_facts_stage(cf, MT_ST_TP, cfg);
	mt_cfg_facts_stage(cf, MT_ST_CP, cfg);
	if (cfg->cp > 1 && mt_rules_choose(r, MT_F_CFG_CP_A2A, &v))
		cfg->cp_a2a = (int)v;
	mt_cfg_facts_stage(cf, MT_ST_CP_A2A, cfg);
	if (cfg->cp > 1 && p->cp_comm == MT_UNSET && mt_rules_choose(r, MT_F_CFG_CP_COMM, &v))
		cfg->cp_comm = (int)v;
	mt_cfg_facts_stage(cf, MT_ST_CP_COMM, cfg);
	if (cfg->tp > 1 && p->sp == MT_UNSET && mt_rules_choose(r, MT_F_CFG_SP, &v))
		cfg->sp = (int)v;
	mt_cfg_facts_stage(cf, MT_ST_SP, cfg);
	mt_cfg_facts_stage(cf, MT_ST_EP, cfg);
	if (cf->x->model->experts && p->etp == MT_UNSET && mt_rules_choose(r, MT_F_CFG_ETP, &v))
		cfg->etp = (int)v;
	mt_cfg_facts_stage(cf, MT_ST_ETP, cfg);
	mt_cfg_facts_stage(cf, MT_ST_MBS, cfg);
	mt_set_fusion(cf, p, cfg);
}

/* ... then, with the layer's costs known, the pipeline's DP settings ... */
static void rules_before_plan(struct mt_cfg_facts *cf, const struct mt_job *j,
			      const struct mt_costs *a, struct mt_config *cfg)
{
	cf->a = a;
	mt_cfg_facts_stage(cf, MT_ST_SHAPE, cfg);
	mt_cfg_facts_stage(cf, MT_ST_PP, cfg);
	mt_cfg_facts_stage(cf, MT_ST_VPP, cfg);
	mt_set_dp(cf, &j->pins, cfg);
	mt_set_bucket(cf, &j->pins, cfg);
}

/* ... and, with the plan, the optimizer. */
static void rules_after_plan(struct mt_cfg_facts *cf, const struct mt_job *j,
			     const struct mt_plan *plan, struct mt_config *cfg)
{
	cf->b = plan;
	mt_cfg_facts_stage(cf, MT_ST_PLAN, cfg);
	cfg->dist_opt = mt_set_knob(cf->r, MT_F_CFG_DIST_OPT, j->pins.dist_opt, cfg->dist_opt);
	if (cfg->fsdp) /* Megatron-FSDP turns the distributed optimizer on, FSDP2 refuses it */
		cfg->dist_opt = cfg->fsdp == MT_FSDP_MEGATRON;
	mt_cfg_facts_stage(cf, MT_ST_DIST_OPT, cfg);
	mt_cfg_facts_stage(cf, MT_ST_RECOMPUTE, cfg);
	if (cfg->offload_layers <= 0 && !j->offload_modules)
		cfg->cuda_graph = mt_set_graph(cf->r, cf->x->model, j, cfg);
}

/* A configuration Megatron-LM would refuse: the reason and the check. */
static int cannot_run(struct mt_error *err, int r)
{
	return mt_error_set(err, MT_EINVAL, "this configuration cannot run: %s (%s)",
			    mt_prune_text(r), mt_prune_cite(r));
}

static int evaluate_one(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
			struct mt_rules_run *rules, struct mt_config *cfg, struct mt_eval *out,
			struct mt_error *err)
{
	struct mt_ctx x;
	struct mt_shape sh;
	struct mt_cfg_facts cf;
	struct mt_costs *a;
	struct mt_plan *plan;
	long dp, mb, rest;
	int r, rc = MT_OK, fwhy;

	rc = mt_job_check(m, c, j, err);
	if (rc)
		return rc;
	if (cfg->tp < 1 || cfg->pp < 1 || cfg->cp < 1 || cfg->ep < 1 || cfg->etp < 1 ||
	    cfg->vpp < 1 || cfg->mbs < 1)
		return mt_error_set(err, MT_EINVAL, "every parallel size must be at least 1");
	rest = (long)cfg->tp * cfg->cp * cfg->pp;
	if (j->gpus % rest)
		return mt_error_set(err, MT_EINVAL,
				    "TP x CP x PP = %ld does not divide the %d GPUs (%s)", rest, j->gpus,
				    MT_WORLD_CITE);
	dp = j->gpus / rest;
	if (j->gbs % (dp * cfg->mbs))
		return mt_error_set(err, MT_EINVAL,
				    "DP x micro-batch = %ld x %d does not divide the global batch %lld (%s)",
				    dp, cfg->mbs, (long long)j->gbs, mt_prune_cite(MT_PRUNE_BATCH));
	mb = j->gbs / (dp * cfg->mbs);
	cfg->dp = (int)dp;
	cfg->num_mb = (int)mb;
	if (cfg->tp == 1)
		cfg->sp = 0;
	mt_ctx_init(&x, m, c, j);
	mt_cfg_facts_init(&cf, rules, &x);
	if (rules)
		rules_before_costs(&cf, j, cfg);
	if ((r = mt_tp_reason(m, cfg->tp)) >= 0 || (r = mt_cp_reason(m, j, cfg->tp, cfg->cp, cfg->cp_comm)) >= 0 ||
	    (r = mt_ep_reason(m, cfg->ep, cfg->etp)) >= 0)
		return cannot_run(err, r);
	if (cfg->cp_a2a <= 0)
		cfg->cp_a2a = mt_group_per_domain(c, cfg->cp, cfg->tp);
	if (cfg->cp > 1 && cfg->cp_comm == MT_CP_A2A_P2P && !mt_a2a_p2p_ok(m, cfg->tp, cfg->cp, cfg->cp_a2a))
		return mt_error_set(err, MT_EINVAL,
				    "--cp-comm a2a+p2p: the a2a group (%d GPUs) must be more than 1, "
				    "less than CP %d and divide it and the heads per TP rank (%s)",
				    cfg->cp_a2a, cfg->cp, mt_prune_cite(MT_PRUNE_CP_HEADS));
	if ((j->gpus / cfg->pp) % ((long)cfg->ep * cfg->etp))
		return cannot_run(err, MT_PRUNE_EP_GPUS);
	if (m->experts && cfg->tp > 1 && !cfg->sp)
		return cannot_run(err, MT_PRUNE_MOE_SP);
	if (cfg->vpp > 1 && (cfg->pp == 1 || mb % cfg->pp))
		return mt_error_set(err, MT_EINVAL,
				    "--vpp %d: interleaving needs --pp > 1 and the %ld micro-batches "
				    "divisible by PP %d (%s)", cfg->vpp, mb, cfg->pp,
				    mt_prune_cite(MT_PRUNE_VPP));
	if (cfg->vpp > 1 && cfg->pp <= 2 && cfg->p2p_blocking)
		return cannot_run(err, MT_PRUNE_P2P_PP);
	if (cfg->sp && (j->seq / cfg->cp) % cfg->tp)
		return cannot_run(err, MT_PRUNE_SP_SEQ);
	if (cfg->offload_layers > 0 &&
	    (cfg->pp > 1 || cfg->recompute != MT_RC_NONE || cfg->offload_layers >= m->layers))
		return mt_error_set(err, MT_EINVAL,
				    "--offload-layers %d: Megatron-Core offloads activations only "
				    "with PP 1, no recomputation and fewer than the %d layers (%s)",
				    cfg->offload_layers, m->layers, mt_prune_cite(MT_PRUNE_OFFLOAD));
	if (cfg->ep_overlap) {
		const char *why = mt_ep_overlap_reason(m, cfg->ep, cfg->dispatcher, cfg->pp, cfg->vpp,
						       cfg->recompute);
		if (why)
			return mt_error_set(err, MT_EINVAL,
					    "--ep-overlap on: Megatron-Core rejects this combination: %s",
					    why);
	}
	if (cfg->cp == 1)
		cfg->cp_a2a = 0;
	if (cfg->fsdp && (fwhy = mt_fsdp_impl_reason(m, c, cfg)) >= 0)
		return mt_error_set(err, MT_EUSAGE, "--fsdp %s: %s (%s)",
				    cfg->fsdp == MT_FSDP_TORCH ? "torch" : "on", mt_prune_text(fwhy),
				    mt_prune_cite(fwhy));
	if (cfg->fsdp)
		cfg->dist_opt = cfg->fsdp == MT_FSDP_MEGATRON;
	a = malloc(sizeof(*a));
	plan = malloc(sizeof(*plan));
	if (!a || !plan) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	mt_shape_of(cfg, &sh);
	mt_costs_compute(&x, &sh, a);
	if (rules)
		rules_before_plan(&cf, j, a, cfg);
	if (mt_plan_compute(&x, a, cfg->pp, cfg->vpp, (int)dp, (int)mb, cfg, plan)) {
		const struct mt_flag_row *lay =
			mt_flag_find(MT_FLAG_MEGATRON, "pipeline-model-parallel-layout");
		char why[160] = "";

		if ((j->release_off & MT_ROFF_SPLIT_LAYOUT) && lay)
			snprintf(why, sizeof(why),
				 " by the target release, which has no --%s (%s or newer)", lay->name,
				 lay->first);
		rc = mt_error_set(err, MT_EINVAL,
				  "the %d layers of model '%s' cannot be split over PP %d x VPP %d%s (%s)",
				  m->layers, m->name, cfg->pp, cfg->vpp, why,
				  mt_prune_cite(MT_PRUNE_PP_LAYERS));
		goto out;
	}
	if (rules)
		rules_after_plan(&cf, j, plan, cfg);
	cfg->edp = plan->edp;
	cfg->split = plan->split;
	cfg->first_layers = plan->first_layers;
	cfg->last_layers = plan->last_layers;
	cfg->bucket_params = plan->bucket_params;
	if (cfg->recompute == MT_RC_FULL &&
	    (cfg->recompute_layers <= 0 || cfg->recompute_layers > plan->chunk_layers_max))
		cfg->recompute_layers = plan->chunk_layers_max;
	mt_config_moe_settings(m, c, cfg);
	if (cfg->cuda_graph && j->pins.cuda_graph == MT_UNSET) { /* only where they fit */
		mt_memory(&x, a, plan, cfg, &out->mem);
		if (out->mem.total > c->memory_bytes * (1 - j->mem_headroom))
			cfg->cuda_graph = 0;
	}
	if (j->pins.full_graph == 1) { /* one graph of the step (docs/MODEL.md 5.10) */
		const char *why = mt_full_graph_reason(&x, a, cfg);

		if (why) {
			rc = mt_error_set(err, MT_EINVAL, "--full-iteration-graphs on: %s", why);
			goto out;
		}
		cfg->full_graph = 1;
		cfg->cuda_graph = 0;
	}
	out->cfg = *cfg;
	mt_memory(&x, a, plan, cfg, &out->mem);
	mt_timing(&x, a, plan, cfg, &out->time, &out->tput);
	mt_band(m, c, j, cfg, &out->time, &out->band);
	out->feasible = out->mem.total <= c->memory_bytes * (1 - j->mem_headroom) &&
			(mt_host_capacity(c) <= 0 || out->mem.host_per_node <= mt_host_capacity(c));
out:
	free(a);
	free(plan);
	return rc;
}

/* estimate: the dispatcher (auto: each the profile can time) and the 1F1B EP
 * overlap (unpinned: on where Megatron-LM allows it, else off) that the
 * search would rank first (rank_key: docs/MODEL.md 8.1), the other knobs as
 * given. */
int mt_evaluate(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		struct mt_rules_run *rules, struct mt_config *cfg, struct mt_eval *out,
		struct mt_error *err)
{
	struct mt_config best_cfg = *cfg, try;
	struct mt_eval e;
	struct mt_job rj = *j;
	int d, o, rc, have = 0, moe = m->experts && (cfg->ep > 1 || cfg->etp > 1);

	if ((rc = mt_local_restrict(&rj, err)) || (rc = mt_release_restrict(&rj, c, err)))
		return rc;
	j = &rj;
	for (d = 0; d < MT_DISPATCH_N; d++) {
		if (j->moe_dispatcher != MT_DISPATCH_AUTO ? d != j->moe_dispatcher
		    : moe ? !mt_dispatch_available(c, d) ||
			    (d == MT_DISPATCH_FLEX && (j->release_off & MT_ROFF_FLEX))
			  : d != MT_DISPATCH_ALLTOALL)
			continue;
		for (o = 0; o <= 1; o++) {
			const char *why = o ? mt_ep_overlap_reason(m, cfg->ep, d, cfg->pp, cfg->vpp,
								   cfg->recompute) : NULL;

			if (j->pins.ep_overlap != MT_UNSET ? o != j->pins.ep_overlap : why != NULL)
				continue;
			/* graphs pinned: the overlap only where their scopes run
			 * beside it (both pinned: mt_job_check) */
			if (o && j->pins.cuda_graph == 1 && j->pins.ep_overlap == MT_UNSET &&
			    mt_graph_overlap_reason(m, j))
				continue;
			/* an overlap pinned on rules out the dispatchers it cannot
			 * run with, unless that is the one asked for (then: why) */
			if (why && j->moe_dispatcher == MT_DISPATCH_AUTO && d == MT_DISPATCH_ALLGATHER)
				continue;
			try = *cfg;
			try.dispatcher = d;
			try.ep_overlap = o;
			rc = evaluate_one(m, c, j, rules, &try, &e, err);
			if (rc)
				return rc;
			if (!have || (e.feasible && !out->feasible) ||
			    (e.feasible == out->feasible && mt_rank_key(&e) < mt_rank_key(out))) {
				*out = e;
				best_cfg = try;
				have = 1;
			}
		}
	}
	if (!have)
		return mt_error_set(err, MT_EINVAL, "no token dispatcher can run this configuration");
	*cfg = best_cfg;
	return MT_OK;
}

int mt_eval_stages(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		   const struct mt_config *cfg, struct mt_mem *out, struct mt_error *err)
{
	struct mt_job rj = *j;
	struct mt_ctx x;
	struct mt_shape sh;
	struct mt_costs *a;
	struct mt_plan *plan;
	int rc;

	/* the job as the search and mt_evaluate saw it */
	if ((rc = mt_local_restrict(&rj, err)) || (rc = mt_release_restrict(&rj, c, err)))
		return rc;
	a = malloc(sizeof(*a));
	plan = malloc(sizeof(*plan));
	if (!a || !plan) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	mt_ctx_init(&x, m, c, &rj);
	mt_shape_of(cfg, &sh);
	mt_costs_compute(&x, &sh, a);
	if (!a->valid || cfg->pp < 1 ||
	    mt_plan_compute(&x, a, cfg->pp, cfg->vpp, cfg->dp, cfg->num_mb, cfg, plan)) {
		rc = mt_error_set(err, MT_EINVAL,
				  "the configuration's pipeline stages cannot be "
				  "evaluated (TP %d, PP %d, VPP %d)",
				  cfg->tp, cfg->pp, cfg->vpp);
		goto out;
	}
	mt_memory_stages(&x, a, plan, cfg, out);
out:
	free(a);
	free(plan);
	return rc;
}
