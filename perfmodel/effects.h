/* SPDX-License-Identifier: MIT */
/* effects: what published A/B runs say of the gain of a setting
 * (docs/MODEL.md 8.2).
 *
 * Each row is a pair of tests/fixtures/published/effects.json: two runs of
 * one model on one system a setting apart, with the published ratio of their
 * throughput and the one megatune predicts with both sides pinned (the test
 * t-effects holds the two together).  A row backs the gain of its setting in
 * a similar regime: the same GPU generation, dispatcher family and EP span
 * where those matter.  Its uncertainty is how far megatune's ratio was from
 * the published one, at least the controls' noise floor: the ranking spends a
 * gain at that uncertainty where a row backs it, at its band's otherwise
 * (perfmodel/band.c), and the advice states each setting's gain with the row
 * (tuner/gains.c).  Read-only data; nothing allocates.
 */
#ifndef MT_EFFECTS_H
#define MT_EFFECTS_H

#include "cluster.h"
#include "config.h"

/* The settings a row can back */
enum mt_effect_setting {
	MT_EF_EP_OVERLAP,     /* the 1F1B EP overlap, off -> on */
	MT_EF_DISPATCHER,     /* the all-to-all dispatcher -> flex */
	MT_EF_FLEX_BACKEND,   /* flex: DeepEP -> HybridEP */
	MT_EF_CUDA_GRAPHS,    /* per-layer CUDA graphs, off -> on */
	MT_EF_RECOMPUTE,      /* selective recomputation of a module, on -> off */
	MT_EF_FP8_RECIPE,     /* FP8 tensorwise -> a block-scaled recipe */
	MT_EF_MOE_BALANCE,    /* forced balance -> dropless routing */
	MT_EF_HOST,           /* the host CPU: x86 -> Grace */
	MT_EF_N
};

struct mt_effect {
	const char *id;       /* the pair's id in effects.json */
	int setting;          /* enum mt_effect_setting */
	int gen;              /* 9 Hopper, 10 Blackwell (compute capability's major) */
	int dispatcher;       /* enum mt_dispatcher of the pair, -1 any */
	int backend;          /* the flex backend (enum mt_flex_backend), -1 any */
	int across;           /* EP across NVLink domains: 1, inside: 0, -1 any */
	double published;     /* the published ratio b/a of throughput */
	double predicted;     /* megatune's, both sides pinned */
	const char *what;     /* "1F1B EP overlap off -> on, Qwen3-235B-A22B, 256 H100" */
};

/* Every row, and their number. */
const struct mt_effect *mt_effect_rows(int *n);

/* The row backing `setting` for cfg on cluster c (the regime closest to
 * it: generation first, then dispatcher, backend and EP span), or NULL when
 * no published pair is in that regime. */
const struct mt_effect *mt_effect_find(int setting, const struct mt_cluster *c,
					   const struct mt_config *cfg);

/* A row's uncertainty: |predicted / published - 1|, at least
 * MT_EFFECT_NOISE_FLOOR. */
double mt_effect_u(const struct mt_effect *e);

#endif
