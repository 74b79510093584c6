/* SPDX-License-Identifier: MIT */
/* search: the advisor's orchestrator.  Enumerate every valid parallel
 * configuration of a job (validity: perfmodel/config.h), ask the rules about each
 * (rules/engine.h, with the facts of tuner/facts.h), evaluate it with the
 * memory and time model (perfmodel/perf.h), and rank the best.
 *
 * Loops run outermost over the knobs that change a layer's shape (TP, SP, CP,
 * CP comm type, EP, ETP, micro-batch), then over the pipeline (PP, VPP, with
 * DP and the number of micro-batches following), then over recompute,
 * distributed optimizer and activation offload.  Pins narrow each loop to one
 * value; with every knob pinned exactly one configuration is evaluated.
 *
 * Work is shared across levels (perfmodel/perf.h), so an evaluation is arithmetic only
 * and allocates nothing; the search allocates its caches once, up front.
 *
 * With a rules run (rules/engine.h), set rules choose the knobs they cover
 * (pins still win), constraint rules prune as soon as their facts are known,
 * and every evaluated candidate is recorded for best() and least_mem().
 */
#ifndef MT_SEARCH_H
#define MT_SEARCH_H

#include "../lib/err.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "gains.h"

#define MT_TOP_MAX 64
#define MT_SUGGEST_MAX 6

/* A change of the job that makes a configuration fit (tuner/suggest.h) */
struct mt_suggestion {
	char change[96];              /* the option as the user gives it: "--gpus 16" */
	struct mt_eval best;          /* the fastest configuration that fits with it */
};

/* A runner-up variant of a ranked layout: the same TP, PP, CP, EP, ETP,
 * dispatcher and FSDP, another VPP, micro-batch, recomputation, offload,
 * CP communication or overlap (docs/MODEL.md 7: a diverse ranking). */
#define MT_VARIANTS 3
struct mt_variant {
	struct mt_config cfg;
	double step, mem, tokens_per_s;
	double key;               /* the ranking's key (docs/MODEL.md 8.1) */
};

/* Why variant x, faster or lighter than top, its layout's pick, ranks
 * after it, into buf ("faster as predicted, but less surely: ..."); NULL
 * when it is neither.  usable: the memory a candidate may use (the search's
 * capacity), which says whether the pick is on the memory limit. */
const char *mt_variant_why(const struct mt_variant *x, const struct mt_eval *top, double usable,
			   char *buf, size_t cap);

struct mt_search_result {
	/* the best candidate of each of the ntop fastest parallel layouts,
	 * ranked; --top K counts layouts */
	struct mt_eval top[MT_TOP_MAX];
	int ntop;
	/* under each: its runner-up variants that would otherwise have ranked
	 * among the top K (in the ranking's order), and how many such there were */
	struct mt_variant var[MT_TOP_MAX][MT_VARIANTS];
	int nvar[MT_TOP_MAX];
	long long folded[MT_TOP_MAX];
	long long evaluated;          /* candidates whose memory was computed */
	long long timed;              /* feasible candidates whose step time was computed */
	long long pruned[MT_PRUNE_N];
	double seconds;
	double capacity_bytes;        /* usable GPU memory */
	long long feasible;           /* candidates that fit (and passed the rules) */
	/* when nothing fits: the candidate with the least memory */
	struct mt_eval closest;
	int has_closest;
	/* the constraint rules left nothing that fits: this is the search with
	 * one of them off (relaxed_rule, its index in the rule set) or all of
	 * them (MT_RELAX_ALL, rules/engine.h); each candidate lists the rules
	 * it breaks */
	int relaxed;
	int relaxed_rule;
	long long strict_evaluated;   /* evaluations of the other passes */
	/* nothing fits: the changes that would (filled by mt_suggest_fits) */
	struct mt_suggestion sugg[MT_SUGGEST_MAX];
	int nsugg;
	int roomy_pick;               /* top[0] is the headroom pick and top[1] the fastest,
				       * which uses more than MT_ROOMY_USE of the memory */
	/* the gains of the first candidate's settings over Megatron-LM's defaults
	 * for its layout (tuner/gains.h), filled by the caller (mt_gains) */
	struct mt_gain gains[MT_GAINS_MAX];
	int ngains;
	long min_gpus;                /* GPUs the model states alone need: 18 bytes per
				       * parameter (bf16 weights, fp32 gradients and Adam
				       * states), whole nodes beyond one */
};

struct mt_rules_run;

/* Search the space of `job`.  Returns MT_OK (even when nothing is feasible:
 * res->ntop is then 0), or an error for an impossible request (bad GPU
 * count, pins that cannot hold: mt_job_check()) with a message naming the
 * cause. */
/* 1 when a and b are the same parallel layout (the key of the ranking):
 * TP, PP, CP, EP, ETP, token dispatcher and FSDP. */
int mt_same_layout(const struct mt_config *a, const struct mt_config *b);

int mt_search(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
	      struct mt_rules_run *rules, struct mt_search_result *res, struct mt_error *err);

/* Evaluate one configuration with every knob set (estimate).  Knobs the job
 * does not pin take the value a set rule gives (when `rules` is not NULL),
 * else the value in cfg.  Returns MT_EINVAL with the reason when it cannot
 * run. */
int mt_evaluate(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		struct mt_rules_run *rules, struct mt_config *cfg, struct mt_eval *out,
		struct mt_error *err);

/* The memory of every pipeline stage of a configuration evaluated under job
 * (by mt_search or mt_evaluate: cfg as it returned it) into out[0 .. cfg->pp
 * - 1], the caller's (docs/MODEL.md 4.8); the heaviest is the evaluation's
 * mem.  Returns MT_OK, MT_ENOMEM, or MT_EINVAL when cfg cannot be planned. */
int mt_eval_stages(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		   const struct mt_config *cfg, struct mt_mem *out, struct mt_error *err);

/* Evaluate every rule on one ranked candidate (rank 1 = best; 0 for
 * estimate), its facts written by tuner/facts.c.  Fills *out (free with
 * mt_explain_free, rules/engine.h).  Defined in tuner/explain.c. */
struct mt_explain;
int mt_rules_explain(struct mt_rules_run *r, const struct mt_eval *e, int rank, int feasible,
		     double best_step, struct mt_explain *out);

#endif
