/* SPDX-License-Identifier: MIT */
/* search: enumerate every valid parallel configuration of a job, evaluate each
 * with the memory and time model, and keep the best.
 *
 * Loops run outermost over the knobs that change a layer's shape (TP, SP, CP,
 * CP comm type, EP, ETP, micro-batch), then over the pipeline (PP, VPP, with
 * DP and the number of micro-batches following), then over recompute,
 * distributed optimizer and activation offload.  Pins narrow each loop to one
 * value; with every knob pinned exactly one configuration is evaluated.
 *
 * Work is shared across levels (perf.h), so an evaluation is arithmetic only
 * and allocates nothing; the search allocates its caches once, up front.
 *
 * With a rules run (rules/engine.h), set rules choose the knobs they cover
 * (pins still win), constraint rules prune as soon as their facts are known,
 * and every evaluated candidate is recorded for best() and least_mem().
 */
#ifndef MT_SEARCH_H
#define MT_SEARCH_H

#include "../lib/err.h"
#include "cluster.h"
#include "config.h"
#include "model.h"

#define MT_TOP_MAX 64

/* Why a partial configuration was rejected. */
enum mt_prune {
	MT_PRUNE_TP_HEADS,     /* TP does not divide the attention heads */
	MT_PRUNE_TP_GROUPS,    /* TP does not divide the key/value heads */
	MT_PRUNE_TP_FFN,       /* TP does not divide an MLP or expert width */
	MT_PRUNE_CP_SEQ,       /* the sequence does not split into 2 x CP chunks */
	MT_PRUNE_CP_HEADS,     /* a2a CP needs heads divisible by the a2a group */
	MT_PRUNE_CP_ATTN,      /* CP needs fused (flash) attention */
	MT_PRUNE_EP_EXPERTS,   /* EP does not divide the experts */
	MT_PRUNE_EP_GPUS,      /* EP x ETP does not divide the GPUs of a stage */
	MT_PRUNE_ETP_FFN,      /* ETP does not divide the expert width */
	MT_PRUNE_MOE_SP,       /* MoE with TP > 1 needs sequence parallelism */
	MT_PRUNE_SP_SEQ,       /* SP needs the sequence shard divisible by TP */
	MT_PRUNE_OFFLOAD,      /* activation offload needs PP 1, no recompute, fewer than L layers */
	MT_PRUNE_PP_LAYERS,    /* the layers cannot be split over PP x VPP */
	MT_PRUNE_VPP,          /* interleaving needs PP > 1 and micro-batches divisible by PP */
	MT_PRUNE_BATCH,        /* DP x micro-batch does not divide the global batch */
	MT_PRUNE_MEMORY,       /* does not fit in GPU memory */
	MT_PRUNE_DOMINATED,    /* more recompute or offload than needed to fit */
	MT_PRUNE_N
};

const char *mt_prune_id(int reason);
const char *mt_prune_text(int reason);

struct mt_search_result {
	struct mt_eval top[MT_TOP_MAX];
	int ntop;
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
};

struct mt_rules_run;

/* Search the space of `job`.  Returns MT_OK (even when nothing is feasible:
 * res->ntop is then 0), or an error for an impossible request (bad GPU
 * count, pins that cannot hold) with a message naming the cause. */
int mt_search(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
	      struct mt_rules_run *rules, struct mt_search_result *res, struct mt_error *err);

/* Check a request before searching: GPUs, batch, sequence, precision and
 * pins against the model and cluster.  Used by mt_search(). */
int mt_job_check(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		 struct mt_error *err);

/* Evaluate one configuration with every knob set (estimate).  Knobs the job
 * does not pin take the value a set rule gives (when `rules` is not NULL),
 * else the value in cfg.  Returns MT_EINVAL with the reason when it cannot
 * run. */
int mt_evaluate(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		struct mt_rules_run *rules, struct mt_config *cfg, struct mt_eval *out,
		struct mt_error *err);

/* Apply the job's settings pins (or defaults) to a configuration. */
void mt_config_settings(const struct mt_job *job, struct mt_config *cfg);

#endif
