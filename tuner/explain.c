/* SPDX-License-Identifier: MIT */
/* explain: the rules on one ranked candidate, its facts derived again from
 * the model (the search keeps the evaluation, not the layer's costs). */
#include "search.h"

#include <stdlib.h>
#include <string.h>

#include "../rules/engine.h"
#include "facts.h"

int mt_rules_explain(struct mt_rules_run *r, const struct mt_eval *e, int rank, int feasible,
		     double best_step, struct mt_explain *out)
{
	const struct mt_config *cfg = &e->cfg;
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_job *j;
	struct mt_ctx x;
	struct mt_shape sh;
	struct mt_cfg_facts cf;
	struct mt_costs *a = malloc(sizeof(*a));
	struct mt_plan *b = malloc(sizeof(*b));
	int st;

	memset(out, 0, sizeof(*out));
	if (!a || !b) {
		free(a);
		free(b);
		return MT_ENOMEM;
	}
	mt_rules_subject(r, &m, &c, &j);
	mt_ctx_init(&x, m, c, j);
	mt_cfg_facts_init(&cf, r, &x);
	mt_cfg_facts_upto(&cf, MT_ST_FUSION, cfg);
	mt_shape_of(cfg, &sh);
	mt_costs_compute(&x, &sh, a);
	cf.a = a;
	if (mt_plan_compute(&x, a, cfg->pp, cfg->vpp, cfg->dp, cfg->num_mb, cfg, b) == 0)
		cf.b = b;
	cf.mem = &e->mem;
	cf.time = &e->time;
	cf.tput = &e->tput;
	for (st = MT_ST_SHAPE; st <= MT_ST_TIME; st++)
		mt_cfg_facts_stage(&cf, st, cfg);
	mt_cfg_facts_rank(&cf, rank, feasible, best_step);
	free(a);
	free(b);
	return mt_rules_explain_facts(r, out);
}
