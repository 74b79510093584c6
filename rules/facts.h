/* SPDX-License-Identifier: MIT */
/* facts: the names a rule may use, and how the search fills them.
 *
 * A fact is a number (booleans are 0/1, enumerations their index) or a
 * string, identified by a small integer (MT_F_*), so that a compiled rule
 * reads it with one array access.  Each fact has a stage, the point of the
 * search from which it is known (enum mt_stage): a rule is evaluated at the
 * latest stage among its facts.  A fact the cluster profile does not give
 * (the NCCL version, the offload bandwidth) is NaN, written "n/a"; every
 * comparison with NaN is false, and has(x) tests for it.
 *
 * The table is rules/facts.def; docs/RULES.md lists it.
 */
#ifndef MT_FACTS_H
#define MT_FACTS_H

#include <stddef.h>

#include "../tuner/config.h"

/* Points of the search, in the order it fixes the knobs. */
enum mt_stage {
	MT_ST_STATIC,    /* model, job, cluster */
	MT_ST_TP,
	MT_ST_CP,
	MT_ST_CP_A2A,
	MT_ST_CP_COMM,
	MT_ST_SP,
	MT_ST_EP,
	MT_ST_ETP,
	MT_ST_MBS,
	MT_ST_FUSION,    /* tp_overlap, fused_ce */
	MT_ST_SHAPE,     /* the layer's costs */
	MT_ST_PP,        /* pp, dp, micro-batches */
	MT_ST_VPP,
	MT_ST_OVERLAP,   /* DP overlap and gradient precision */
	MT_ST_BUCKET,
	MT_ST_PLAN,      /* layer split, DP communication */
	MT_ST_DIST_OPT,
	MT_ST_RECOMPUTE,
	MT_ST_LAYERS,    /* recompute and offload layer counts */
	MT_ST_MEMORY,
	MT_ST_TIME,
	MT_ST_SEARCH,    /* ranked candidates: advise rules only */
	MT_ST_FINDING,   /* profile findings: diagnose rules */
	MT_ST_N
};

const char *mt_stage_name(int stage);

/* Search knobs, as bits: a constraint whose knobs are all pinned by the user
 * does not prune (the user asked for it); it is reported instead. */
enum {
	K_TP = 1u << 0, K_CP = 1u << 1, K_CP_COMM = 1u << 2, K_SP = 1u << 3, K_EP = 1u << 4,
	K_ETP = 1u << 5, K_MBS = 1u << 6, K_TP_OVERLAP = 1u << 7, K_FUSED_CE = 1u << 8,
	K_PP = 1u << 9, K_VPP = 1u << 10, K_OVERLAP_GRAD = 1u << 11, K_OVERLAP_PARAM = 1u << 12,
	K_GRAD_FP32 = 1u << 13, K_BUCKET = 1u << 14, K_DIST_OPT = 1u << 15,
	K_RECOMPUTE = 1u << 16, K_RC_LAYERS = 1u << 17, K_OFFLOAD = 1u << 18,
	K_DISPATCHER = 1u << 19, K_EP_OVERLAP = 1u << 20, K_CUDA_GRAPH = 1u << 21,
	K_FSDP = 1u << 22,
	K_ALL = (1u << 23) - 1
};

/* Knobs of a job that the user pinned, as K_* bits. */
unsigned mt_pinned_knobs(const struct mt_job *j);

enum mt_fact_type { MT_FT_NUM, MT_FT_BOOL, MT_FT_STR, MT_FT_ENUM };

enum mt_fact_id {
#define X(id, name, type, stage, knobs, unit, desc) MT_F_##id,
#include "facts.def"
#undef X
	MT_F_N
};

struct mt_fact_info {
	const char *name;
	int type;                  /* enum mt_fact_type */
	const char *const *enums;  /* MT_FT_ENUM: value names, NULL-terminated */
	int stage;
	unsigned knobs;
	const char *unit;
	const char *desc;
};

extern const struct mt_fact_info mt_facts[MT_F_N];

/* The fact called `name` (length n), or -1. */
int mt_fact_find(const char *name, size_t n);
/* The index of `value` among an enumeration fact's names, or -1. */
int mt_fact_enum(int fact, const char *value);
/* The closest fact name to a misspelled one, or NULL (for messages). */
const char *mt_fact_suggest(const char *name, size_t n);

/* A value: a number, or a string when s != NULL. */
struct mt_val {
	double n;
	const char *s;
};

#endif
