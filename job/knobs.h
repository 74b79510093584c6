/* SPDX-License-Identifier: MIT */
/* knobs: the table of knobs (job/knobs.def), walked by everything that reads
 * or writes one: the options of advise and estimate, the pins, the advice
 * JSON both ways, the rule facts, estimate's defaults, the Megatron-LM
 * arguments and Bridge overrides a candidate prints and reads back.
 *
 * A knob's value is an int (MT_UNSET in a pin that is not set); its type
 * says how it is written: a number, on/off, or a name (recompute, CP
 * communication, FSDP implementation, gradient precision, dispatcher).
 */
#ifndef MT_JOB_KNOBS_H
#define MT_JOB_KNOBS_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"
#include "../perfmodel/config.h"

/* Search knobs, as bits: a constraint whose knobs are all pinned by the user
 * does not prune (the user asked for it); it is reported instead. */
enum {
	K_TP = 1u << 0, K_CP = 1u << 1, K_CP_COMM = 1u << 2, K_SP = 1u << 3, K_EP = 1u << 4,
	K_ETP = 1u << 5, K_MBS = 1u << 6, K_TP_OVERLAP = 1u << 7, K_FUSED_CE = 1u << 8,
	K_PP = 1u << 9, K_VPP = 1u << 10, K_OVERLAP_GRAD = 1u << 11, K_OVERLAP_PARAM = 1u << 12,
	K_GRAD_FP32 = 1u << 13, K_BUCKET = 1u << 14, K_DIST_OPT = 1u << 15,
	K_RECOMPUTE = 1u << 16, K_RC_LAYERS = 1u << 17, K_OFFLOAD = 1u << 18,
	K_DISPATCHER = 1u << 19, K_EP_OVERLAP = 1u << 20, K_CUDA_GRAPH = 1u << 21,
	K_FSDP = 1u << 22, K_RC_MODULES = 1u << 23, K_RANK_BUDGET = 1u << 24,
	K_FULL_GRAPH = 1u << 25, K_PREC_OPT = 1u << 26,
	K_ALL = (1u << 27) - 1
};

enum mt_knob_type {
	MT_KT_INT,        /* an integer from lo to hi */
	MT_KT_ONOFF,      /* on or off (1 or 0) */
	MT_KT_RECOMPUTE,  /* none, selective, full (enum mt_recompute) */
	MT_KT_CP_COMM,    /* p2p, all_gather, a2a, a2a+p2p (enum mt_cp_comm) */
	MT_KT_FSDP,       /* off, megatron, torch (enum mt_fsdp_impl); on = megatron */
	MT_KT_GRAD_DTYPE, /* fp32 (1) or bf16 (0) */
	MT_KT_LAYERS,     /* a number of layers, or all (MT_ALL_LAYERS) */
	MT_KT_DISPATCHER, /* alltoall, allgather, flex (enum mt_dispatcher); auto unpinned */
	MT_KT_RC_MODULES, /* a list of recompute modules: bits of enum mt_rc_module
			   * (perfmodel/recompute.h), written "core_attn,mlp" */
	MT_KT_RC_METHOD,  /* block, uniform (enum mt_rc_method) */
	MT_KT_OPT_DTYPE,  /* fp32, fp16, bf16, fp8 (enum mt_opt_dtype, perfmodel/optim.h),
			   * those from lo to hi */
};

/* Where a knob belongs: searched unless pinned, a setting on by default,
 * a generic setting megatune does not time, or a timed knob kept in a spare
 * slot that the search tries every value of (knobs.def). */
enum mt_knob_group { MT_KG_PINS, MT_KG_SETTINGS, MT_KG_GENERIC, MT_KG_TIMED };

/* A default that follows from other knobs (knobs.def) */
#define MT_KNOB_DERIVED (-2)

enum mt_knob_id {
#define KNOB(id, ...) MT_KNOB_##id,
#include "knobs.def"
#undef KNOB
	MT_KNOB_N
};

struct mt_knob {
	const char *cli;        /* the option, without "--" */
	const char *meta;       /* its value in the help */
	int type;               /* enum mt_knob_type */
	long long lo, hi;       /* MT_KT_INT, MT_KT_LAYERS: the range */
	int dflt;               /* estimate's value when unpinned; MT_UNSET or
				 * MT_KNOB_DERIVED (knobs.def) */
	size_t pin;             /* offsetof(struct mt_job, ...) of the int pin */
	long cfg;               /* offsetof(struct mt_config, ...), -1 for none */
	int cfg64;              /* the configuration's field is an int64_t */
	const char *fact;       /* the rule fact's name, NULL for none */
	unsigned kbit;          /* K_* of the knob, 0 for none */
	const char *json;       /* the advice JSON key */
	const char *megatron;   /* Megatron-LM's argparse field, "" for none */
	const char *bridge;     /* Megatron-Bridge's path, "" for none */
	const char *verl;       /* verl's key under ...megatron., "" for none */
	int group;              /* enum mt_knob_group */
	int try_order;          /* check tries it as a change (1, 2, ...), 0: not */
	const char *change;     /* the change's name, NULL for none */
	int change_moe;         /* the change is tried on MoE models only */
	int follow[4];          /* the knobs freed with it, -1 ends them */
	const char *notry;      /* why check does not change it alone, or NULL */
	const char *help;
};

extern const struct mt_knob mt_knobs[MT_KNOB_N];
/* The TIMED knobs (knobs.def), whose values the search tries: their ids, and
 * how many (0 where the table has none). */
extern const int mt_knobs_timed[];
extern const int mt_knobs_ntimed;

/* 1 when knob k lives in a spare slot (extra[i]: GENERIC and TIMED rows),
 * which every writer and reader handles from its row alone, by its type. */
int mt_knob_in_slot(int k);
/* The values the search tries of TIMED knob k, into out (at most max, the
 * lowest first): every integer from lo to hi, or off and on.  Returns the
 * count. */
int mt_knob_values(int k, int *out, int max);
#define MT_KNOB_VALUES_MAX 16

/* The knobs check tries as changes (a TRY column, knobs.def), in their
 * order, into out (at most max).  Returns the count. */
int mt_knob_changes(int *out, int max);

/* The knob whose option is `cli`, or whose rule fact is `fact`; -1 for none. */
int mt_knob_by_cli(const char *cli);
int mt_knob_by_fact(const char *fact);

/* The pin of knob k in a job (MT_UNSET when not pinned), and setting it. */
int mt_knob_pin(const struct mt_job *j, int k);
void mt_knob_set_pin(struct mt_job *j, int k, int v);
/* The value of knob k in a configuration; MT_UNSET when it has none. */
long long mt_knob_cfg(const struct mt_config *c, int k);
void mt_knob_set_cfg(struct mt_config *c, int k, long long v);
/* 1 when configurations a and b set knob k (one with a configuration field)
 * to different values; the recomputed modules count only between two
 * selective candidates, the optimizer's dtypes between two with the
 * precision-aware optimizer. */
int mt_knob_differs(const struct mt_config *a, const struct mt_config *b, int k);
/* 1 when a's knob k is to be written to say how a differs from b: it
 * differs, or it completes a's recompute (its modules against a candidate
 * without selective recomputation, its uniform method against one without
 * full) or its precision-aware optimizer (a dtype other than the one
 * --precision-aware-optimizer on gives), which the granularity or the
 * switch alone would leave out. */
int mt_knob_shows(const struct mt_config *a, const struct mt_config *b, int k);

/* A value of knob k from text as the option takes it ("on", "selective",
 * "all", "12"): 0 with *out set, or -1.  `want` (cap bytes) gets what the
 * knob expects, for the message. */
int mt_knob_parse(int k, const char *s, int *out, char *want, size_t cap);
/* The value as the option writes it ("on", "selective", "12",
 * "moe_act,layernorm"; MT_KNOB_FMT_MAX bytes hold any), into buf. */
#define MT_KNOB_FMT_MAX 96
const char *mt_knob_format(int k, long long v, char *buf, size_t cap);

/* Knob k's Megatron-LM flag without "--": its argparse field with dashes
 * ("tensor-model-parallel-size"), into buf; "" when it has none. */
const char *mt_knob_flag(int k, char *buf, size_t cap);

/* The knobs in spare slots (GENERIC and TIMED, knobs.def) of a
 * configuration that are set, other than to the row's default (what
 * Megatron-LM runs without the flag): each as a
 * Megatron-LM argument (an integer: "--flag N"; on: "--flag") or a Bridge
 * override ("path=N", "path=true"), appended to the n items of o (capacity
 * cap, struct mt_kv).  Returns the count. */
int mt_knobs_megatron_generic(const struct mt_config *c, struct mt_kv *o, int n, int cap);
int mt_knobs_bridge_generic(const struct mt_config *c, struct mt_kv *o, int n, int cap);

/* The knobs pinned in a job, as K_* bits. */
unsigned mt_pinned_knobs(const struct mt_job *j);

/* The configuration estimate evaluates: every pinned knob as pinned, the
 * others as Megatron-LM runs them without the flag (TP = PP = CP = EP = ETP =
 * MBS = 1, no recompute, p2p CP, the distributed optimizer, no FSDP, no
 * offload, no CUDA graphs, SP with TP > 1, VPP from a pinned layout), the
 * settings from mt_config_settings(). */
void mt_knobs_estimate_config(const struct mt_job *job, struct mt_config *cfg);

#endif
