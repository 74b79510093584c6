/* SPDX-License-Identifier: MIT */
/* search_int: the state of one search, which its enumeration (tuner/search.c)
 * and its innermost level (tuner/level_c.c: level C, the ranking, the floors
 * of the step) share, with the rules' hooks both call; private to those two
 * files. */
#ifndef MT_SEARCH_INT_H
#define MT_SEARCH_INT_H

#include "../perfmodel/perf.h"
#include "../rules/engine.h"
#include "facts.h"
#include "search.h"

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

/* ---- rule hooks: all no-ops without rules */

/* 1 when a constraint prunes the partial candidate here (counted by rule). */
static inline int ruled_out(struct srch *s, int stage)
{
	return s->r && mt_rules_check(s->r, stage) >= 0;
}

/* The facts of `stage` for cfg, then ruled_out(). */
static inline int search_at(struct srch *s, int stage, const struct mt_config *cfg)
{
	if (!s->r)
		return 0;
	mt_cfg_facts_stage(&s->cf, stage, cfg);
	return mt_rules_check(s->r, stage) >= 0;
}

/* Level C for the plan b of the layer shape a: every recompute mode, with
 * and without the distributed optimizer and FSDP, each candidate finished
 * and kept or counted (level_c.c). */
void mt_level_c(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		struct mt_config *cfg);

/* 1 when no candidate of the plan b (mt_plan_beyond_reach) or of any plan of
 * the layer shape a (mt_shape_beyond_reach) can enter the ranking, by a
 * floor of its step; 0 when the search may not skip (--exhaustive, rules
 * watching every candidate, a ranking not yet full). */
int mt_plan_beyond_reach(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
			 const struct mt_config *cfg);
int mt_shape_beyond_reach(struct srch *s, const struct mt_costs *a);

/* Headroom before speed: the fastest candidate that is not on the memory
 * limit ranked first when it is close enough (docs/MODEL.md 7.1). */
void mt_prefer_roomy(struct srch *s);

#endif
