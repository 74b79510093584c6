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

#include "../job/knobs.h"
#include "../perfmodel/config.h"

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

/* The knobs' bits (K_*) and mt_pinned_knobs(): job/knobs.h. */

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
