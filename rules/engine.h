/* SPDX-License-Identifier: MIT */
/* engine: rules applied to one job — during the search, to the ranked
 * candidates, and to the findings of a profile analysis.
 *
 * A run (mt_rules_start) holds the fact values of the candidate the search is
 * looking at.  The search (tuner/search.c) writes the facts of each stage
 * as it fixes its knobs (tuner/facts.c, into mt_rules_facts()), asks set
 * rules for a knob's value (mt_rules_choose), and asks whether a constraint
 * prunes the partial candidate (mt_rules_check).  None of these allocate.
 * mt_rules_explain_facts() evaluates every rule on the facts of one ranked
 * candidate and returns the rules that fired with their messages, evidence
 * and effects.  The engine knows the facts, not the model that derives them.
 *
 * engine.c sets a run up and answers the search; best.c keeps the tables of
 * best() and least_mem(); fire.c evaluates every rule on a set of facts;
 * facts_file.c reads megatune.facts/1.
 */
#ifndef MT_ENGINE_H
#define MT_ENGINE_H

#include "../lib/err.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "ruleset.h"

struct mt_rules_run;

/* Set up a run of `rs` (finished, without problems) for a job.  The model,
 * cluster and job must outlive the run. */
int mt_rules_start(const struct mt_ruleset *rs, const struct mt_model *m,
		   const struct mt_cluster *c, const struct mt_job *j, struct mt_rules_run **out,
		   struct mt_error *err);
void mt_rules_end(struct mt_rules_run *r);

/* ---- search hooks */

void mt_rules_fact(struct mt_rules_run *r, int fact, double v);
/* The run's fact values, [MT_F_N], for the advisor to write a stage's facts
 * into (tuner/facts.h). */
struct mt_val *mt_rules_facts(struct mt_rules_run *r);
/* What the run's rules are evaluated in: its facts, its cluster, best() and
 * least_mem() (borrowed, the run's own).  For checking an expression against
 * the candidate whose facts the run holds. */
const struct mt_env *mt_rules_env(const struct mt_rules_run *r);
/* The model, cluster and job the run was started for. */
void mt_rules_subject(const struct mt_rules_run *r, const struct mt_model **m,
		      const struct mt_cluster **c, const struct mt_job **j);
/* 1 when some constraint is evaluated at this stage. */
int mt_rules_wants(const struct mt_rules_run *r, int stage);
/* The first constraint of this stage that prunes the candidate (its index in
 * the rule set, counted), or -1. */
int mt_rules_check(struct mt_rules_run *r, int stage);
/* When a set rule fixes knob `fact` (a settable config fact) for the current
 * candidate: 1 and *v.  A pinned knob is never asked about. */
int mt_rules_choose(struct mt_rules_run *r, int fact, double *v);
/* When the constraints leave nothing that fits, the search runs again with
 * one of them off (its index), or all of them (MT_RELAX_ALL); MT_RELAX_NONE
 * turns them all back on.  mt_rules_freeze() first keeps the pruned counts of
 * the search with every constraint, which mt_rules_pruned() reports from then
 * on. */
enum { MT_RELAX_NONE = -1, MT_RELAX_ALL = -2 };
void mt_rules_relax(struct mt_rules_run *r, int rule);
int mt_rules_relaxed(const struct mt_rules_run *r);
void mt_rules_freeze(struct mt_rules_run *r);

/* Record an evaluated candidate for best() and least_mem(). */
void mt_rules_observe(struct mt_rules_run *r, const struct mt_eval *e, int timed);
/* Forget what was observed (a new pass of the search). */
void mt_rules_observe_reset(struct mt_rules_run *r);
/* 1 when some rule reads best() or least_mem() (observe is needed). */
int mt_rules_observing(const struct mt_rules_run *r);

/* Candidates pruned by rule i of the set during this run. */
long long mt_rules_pruned(const struct mt_rules_run *r, int i);
const struct mt_ruleset *mt_rules_set(const struct mt_rules_run *r);

/* ---- explanations */

enum mt_fire_status {
	MT_FIRE_APPLIED,    /* a set rule's knob or flags are in the candidate */
	MT_FIRE_NOTE,       /* an advise or diagnose message */
	MT_FIRE_VIOLATED,   /* a constraint the candidate breaks (pinned, or constraints relaxed) */
	MT_FIRE_OVERRIDDEN, /* a set rule a pin overrode */
};
const char *mt_fire_status_name(int s);

struct mt_evidence {
	int fact;
	double n;
	const char *s;     /* string facts: points into the model or cluster */
};

struct mt_fired {
	const struct mt_rule *rule;
	int status;
	char *message;
	char *effect;      /* "config.sp = on", "--manual-gc", "NCCL_NVLS_ENABLE=0"; or NULL */
	struct mt_evidence *ev;
	int nev;
};

#define MT_RULE_KV_MAX 64

struct mt_explain {
	struct mt_fired *v;
	int n, cap;
	struct mt_kv args[MT_RULE_KV_MAX], bridge[MT_RULE_KV_MAX], env[MT_RULE_KV_MAX];
	int nargs, nbridge, nenv;
	int dropped;       /* flags beyond MT_RULE_KV_MAX per list, left out */
	int failed;        /* out of memory while building it */
};

void mt_explain_free(struct mt_explain *x);

/* Evaluate every rule on the facts the run holds (a candidate whose facts
 * tuner/facts.c wrote: tuner/explain.c).  Fills *out (free with
 * mt_explain_free). */
int mt_rules_explain_facts(struct mt_rules_run *r, struct mt_explain *out);

/* ---- findings */

/* Evaluate rules on facts given by a file (megatune.facts/1): `given[f]` is
 * 1 for the facts present.  A rule is evaluated when every fact it reads is
 * given (the cluster's facts come from `c` where the file lacks them);
 * *skipped counts the others.  The cluster may be NULL (curve functions are
 * then n/a). */
int mt_rules_on_facts(const struct mt_ruleset *rs, const struct mt_val *facts,
		      const unsigned char *given, const struct mt_cluster *c,
		      struct mt_explain *out, int *skipped);

/* Read a megatune.facts/1 document. */
int mt_facts_read(const char *path, struct mt_val *facts, unsigned char *given, char **strings,
		  struct mt_error *err);

struct jw;
/* Write the object "facts" of a megatune.facts/1 (or analysis/1) document:
 * each fact marked in `given`, by its name, with 6 significant digits. */
void mt_facts_json(struct jw *w, const struct mt_val *facts, const unsigned char *given);

#endif
