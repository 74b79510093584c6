/* SPDX-License-Identifier: MIT */
/* facts: the one place a configuration becomes the facts the rules read
 * (rules/facts.def), stage by stage (enum mt_stage, rules/facts.h).
 *
 * The search writes each stage's facts as it fixes the stage's knobs, then
 * asks the rules whether they prune; estimate writes them after the set rules
 * chose the knobs it does not pin; an explanation writes every stage of a
 * ranked candidate.  All three call mt_cfg_facts_stage(), which only stores
 * numbers into the run's fact table: no allocation, no look-up beyond the
 * profile curves of the derived facts.
 *
 * A mt_cfg_facts belongs to its caller and lives as long as the rules run it
 * writes; with no run (NULL) every call is a no-op.  The model's results
 * that later stages read (costs from MT_ST_SHAPE, plan for MT_ST_PLAN,
 * memory and time) are set by the caller into a, b, mem, time and tput before
 * the stage is written.
 */
#ifndef MT_TUNER_FACTS_H
#define MT_TUNER_FACTS_H

#include "../rules/engine.h"
#include "../perfmodel/config.h"
#include "../perfmodel/perf.h"

struct mt_cfg_facts {
	struct mt_rules_run *r;        /* NULL: no rules */
	struct mt_val *f;              /* the run's facts, [MT_F_N] */
	const struct mt_ctx *x;        /* model, cluster, job */
	const struct mt_costs *a;      /* MT_ST_SHAPE and MT_ST_PLAN */
	const struct mt_plan *b;       /* MT_ST_PLAN (NULL: its facts are left as they are) */
	const struct mt_mem *mem;      /* MT_ST_MEMORY */
	const struct mt_time *time;    /* MT_ST_TIME */
	const struct mt_tput *tput;    /* MT_ST_TIME */
	signed char vsplit[MT_MAX_PP + 1]; /* per PP: -1 unknown, 1 some VPP > 1 splits */
};

void mt_cfg_facts_init(struct mt_cfg_facts *cf, struct mt_rules_run *r, const struct mt_ctx *x);

/* Write the facts stage `stage` adds for `cfg` (the knobs of the stage and
 * the facts derived from them). */
void mt_cfg_facts_stage(struct mt_cfg_facts *cf, int stage, const struct mt_config *cfg);

/* Every stage from MT_ST_TP to `last`, in order. */
void mt_cfg_facts_upto(struct mt_cfg_facts *cf, int last, const struct mt_config *cfg);

/* The facts of a ranked candidate (MT_ST_SEARCH): rank (1 = best; 0 none),
 * the number of feasible candidates (-1 unknown) and the best step time (0
 * unknown). */
void mt_cfg_facts_rank(struct mt_cfg_facts *cf, int rank, int feasible, double best_step);

#endif
