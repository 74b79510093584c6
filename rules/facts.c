/* SPDX-License-Identifier: MIT */
/* facts: the table of names (facts.def) and look-ups in it. */
#include "facts.h"

#include <string.h>

#include "../lib/near.h"
#include "../perfmodel/cluster.h"

static const char *const ENUM_PRECISION[] = { "bf16", "fp8", "nvfp4", NULL };
static const char *const ENUM_FP8_RECIPE[] = { "delayed", "tensorwise", "blockwise", "mxfp8", NULL };
static const char *const ENUM_ATTENTION[] = { "flash", "unfused", NULL };
static const char *const ENUM_TRANSFORMER_IMPL[] = { "transformer_engine", "local", NULL };
static const char *const ENUM_DISPATCHER[] = { "alltoall", "flex", "allgather", "auto", NULL };
static const char *const ENUM_CFG_DISPATCHER[] = { "alltoall", "flex", "allgather", NULL };
static const char *const ENUM_FLEX_BACKEND[] = { "deepep", "hybridep", NULL };
static const char *const ENUM_CP_COMM[] = { "p2p", "all_gather", "a2a", "a2a+p2p", NULL };
static const char *const ENUM_SPLIT[] = { "even", "account", "account_loss", "first_last", "layout",
					    NULL };
static const char *const ENUM_RECOMPUTE[] = { "none", "selective", "full", NULL };
static const char *const ENUM_RC_METHOD[] = { "block", "uniform", NULL };
static const char *const ENUM_OPT_DTYPE[] = { "fp32", "fp16", "bf16", "fp8", NULL };

/* no macro named NUM, BOOL or STR: the knob table's FACT() columns reach X
 * with their arguments expanded (rules/facts.def) */
#define ENUM(t) MT_FT_ENUM, t

#define TYPE_NUM MT_FT_NUM, NULL
#define TYPE_BOOL MT_FT_BOOL, NULL
#define TYPE_STR MT_FT_STR, NULL
#define TYPE_ENUM_PRECISION ENUM(ENUM_PRECISION)
#define TYPE_ENUM_FP8_RECIPE ENUM(ENUM_FP8_RECIPE)
#define TYPE_ENUM_ATTENTION ENUM(ENUM_ATTENTION)
#define TYPE_ENUM_TRANSFORMER_IMPL ENUM(ENUM_TRANSFORMER_IMPL)
#define TYPE_ENUM_DISPATCHER ENUM(ENUM_DISPATCHER)
#define TYPE_ENUM_CFG_DISPATCHER ENUM(ENUM_CFG_DISPATCHER)
#define TYPE_ENUM_FLEX_BACKEND ENUM(ENUM_FLEX_BACKEND)
#define TYPE_ENUM_CP_COMM ENUM(ENUM_CP_COMM)
#define TYPE_ENUM_SPLIT ENUM(ENUM_SPLIT)
#define TYPE_ENUM_RECOMPUTE ENUM(ENUM_RECOMPUTE)
#define TYPE_ENUM_RC_METHOD ENUM(ENUM_RC_METHOD)
#define TYPE_ENUM_OPT_DTYPE ENUM(ENUM_OPT_DTYPE)

const struct mt_fact_info mt_facts[MT_F_N] = {
#define X(id, name, type, stage, knobs, unit, desc) \
	{ name, TYPE_##type, MT_ST_##stage, (unsigned)(knobs), unit, desc },
#include "facts.def"
#undef X
};

static const char *const stage_names[MT_ST_N] = {
	"static", "tp", "cp", "cp_a2a", "cp_comm", "sp", "ep", "etp", "mbs", "fusion", "shape",
	"pp", "vpp", "overlap", "bucket", "plan", "dist_opt", "recompute", "layers", "memory",
	"time", "search", "finding",
};

const char *mt_stage_name(int s) { return s >= 0 && s < MT_ST_N ? stage_names[s] : "?"; }

int mt_fact_find(const char *name, size_t n)
{
	int i;

	for (i = 0; i < MT_F_N; i++)
		if (strlen(mt_facts[i].name) == n && !memcmp(mt_facts[i].name, name, n))
			return i;
	return -1;
}

int mt_fact_enum(int fact, const char *value)
{
	const char *const *e;
	int i;

	if (fact < 0 || fact >= MT_F_N || mt_facts[fact].type != MT_FT_ENUM)
		return -1;
	e = mt_facts[fact].enums;
	for (i = 0; e[i]; i++)
		if (!strcmp(e[i], value))
			return i;
	return -1;
}

const char *mt_fact_suggest(const char *name, size_t n)
{
	const char *dot = memchr(name, '.', n);
	const char *last = dot ? dot + 1 : name;
	size_t nl = n - (size_t)(last - name);
	struct mt_near nr;
	int i;

	/* a rule's author is shown more than a typo: up to 3 edits, a quarter of a long name */
	mt_near_init(&nr, name, n, n > 12 ? (int)n / 4 : 3);
	for (i = 0; i < MT_F_N; i++)
		mt_near_try(&nr, mt_facts[i].name);
	if (nr.match)
		return nr.match;
	/* the same last part under another prefix: cp_comm -> config.cp_comm */
	for (i = 0; i < MT_F_N; i++) {
		const char *fd = strchr(mt_facts[i].name, '.');
		if (fd && strlen(fd + 1) == nl && !strncmp(fd + 1, last, nl))
			return mt_facts[i].name;
	}
	return NULL;
}
