/* SPDX-License-Identifier: MIT */
/* recompute: the modules of Megatron-Core's selective recomputation
 * (--recompute-granularity selective --recompute-modules ...;
 * transformer_config.py recompute_modules), their names, the checks
 * Megatron-LM applies to them, and the sets the search tries
 * (docs/MODEL.md 4.4 and 5.12).
 *
 * A set of modules is a bitmask of enum mt_rc_module; MT_RCM_DEFAULT
 * (core_attn alone) is what Megatron-LM runs with --recompute-granularity
 * selective and no --recompute-modules, megatune's "selective" before the
 * modules could be named.
 */
#ifndef MT_RECOMPUTE_H
#define MT_RECOMPUTE_H

#include <stddef.h>

#include "../lib/err.h"

struct mt_model;
struct mt_job;
struct mt_config;

/* In Megatron-LM's order of recompute_modules' documentation.  moe_act,
 * layernorm and mla_up_proj discard their output (CheckpointWithoutOutput);
 * core_attn, mlp, moe and shared_experts checkpoint normally. */
enum mt_rc_module {
	MT_RCM_CORE_ATTN,      /* core attention */
	MT_RCM_MOE_ACT,        /* the routed experts' activation function */
	MT_RCM_LAYERNORM,      /* input_layernorm and pre_mlp_layernorm where not fused */
	MT_RCM_MLA_UP_PROJ,    /* MLA's q/kv up projections and RoPE */
	MT_RCM_MLP,            /* the dense MLP (dense layers only) */
	MT_RCM_MOE,            /* the whole MoE layer */
	MT_RCM_SHARED_EXPERTS, /* the shared experts of a MoE layer */
	MT_RCM_N
};

#define MT_RCM_DEFAULT (1u << MT_RCM_CORE_ATTN)
#define MT_RCM_ALL ((1u << MT_RCM_N) - 1)
/* the most sets the search tries for selective recomputation */
#define MT_RC_SETS_MAX 4

/* "core_attn", ...; "?" out of range */
const char *mt_rc_module_name(int mod);
/* A list "a,b" (commas or spaces) into bits: 0, or -1 with the first unknown
 * name in bad (cap bytes).  An empty list is refused. */
int mt_rc_modules_parse(const char *s, unsigned *bits, char *bad, size_t cap);
/* The set as names joined by sep, into buf ("" for none). */
const char *mt_rc_modules_format(unsigned bits, char sep, char *buf, size_t cap);

/* Megatron-LM's checks of the modules with this model and job : NULL when it accepts them, else the reason with its source.
 * ep: the expert-parallel size (0 when not known); ep_overlap: the 1F1B EP
 * overlap is on; shared_overlap: the shared-expert overlap is. */
const char *mt_rc_modules_reason(const struct mt_model *m, const struct mt_job *j, unsigned bits,
				 int ep, int ep_overlap, int shared_overlap);

/* The sets the search tries for selective recomputation of this model, in
 * order (each later one frees more memory where the modules apply): the
 * count, at most MT_RC_SETS_MAX. */
int mt_rc_module_sets(const struct mt_model *m, const struct mt_job *j, unsigned *sets);

/* Full recomputation of a model chunk of `chunk` layers as
 * Megatron-Core runs it (TransformerBlock._checkpointed_forward; docs/MODEL.md
 * 4.4), for cfg->recompute_layers N and cfg->recompute_method:
 *   mt_rc_full_share   the share of the chunk's layers whose forward runs
 *                      again in backward: block min(N, chunk) / chunk,
 *                      uniform 1 (every layer, in groups of N);
 *   mt_rc_ckpt_share   the share whose activations are reduced to a kept
 *                      input: block the same, uniform ceil(chunk / N) /
 *                      chunk (one input per group);
 *   mt_rc_group_layers the layers rematerialised together in backward:
 *                      block 1, uniform min(N, chunk).
 * All three are 0 without full recomputation. */
/* Full recomputation in words, for a configuration's method and layers:
 * "N layers per model chunk" (block) or "every layer, in groups of N"
 * (uniform); into buf. */
const char *mt_rc_full_words(int method, int layers, char *buf, size_t cap);

double mt_rc_full_share(const struct mt_config *cfg, double chunk);
double mt_rc_ckpt_share(const struct mt_config *cfg, double chunk);
double mt_rc_group_layers(const struct mt_config *cfg, double chunk);

#endif
