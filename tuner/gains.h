/* SPDX-License-Identifier: MIT */
/* gains: what each setting of a pick buys, and the published evidence for it
 * (docs/MODEL.md 8.2).
 *
 * For a configuration and a baseline (the plain configuration Megatron-LM
 * runs with the same layout and its defaults: the all-to-all dispatcher, no
 * overlaps, no CUDA graphs, no offload, no recomputation, no distributed
 * optimizer or FSDP; or a job's own settings), each setting that differs is
 * reverted alone, and the step is predicted again: its gain is the step
 * without it over the step with it, less one.  Where reverting one setting
 * alone cannot run (a rank budget without HybridEP, a full-iteration graph
 * with a wait), the settings it needs are reverted with it and named.  A
 * setting without which the job does not fit says so; one without which it
 * cannot run has no gain (NAN) and the reason in `with`.  The evidence is the
 * published A/B pair of perfmodel/effects.h in the pick's regime, or none.
 */
#ifndef MT_GAINS_H
#define MT_GAINS_H

#include "../lib/err.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/effects.h"
#include "../perfmodel/model.h"

#define MT_GAINS_MAX 12

struct mt_gain {
	char setting[32];             /* the option, without dashes: "ep-overlap" */
	char from[80], to[80];        /* the baseline's value and the pick's */
	char with[400];               /* settings reverted with it ("" alone), or why it
				       * cannot run without it */
	double gain;                  /* step without it / step with it - 1; NAN: it
				       * cannot run without it (why in with) */
	double mem_bytes;             /* per-GPU memory without it */
	int fits;                     /* without it the job still fits */
	const struct mt_effect *ev; /* the published pair in this regime, or NULL */
};

/* The gains of pick's settings over `base` (NULL: Megatron-LM's defaults for
 * the same layout), for job j on model m and cluster c: up to max entries
 * into out, in the order of the settings; returns how many.  Allocates
 * nothing the caller owns. */
int mt_gains(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	     const struct mt_eval *pick, const struct mt_config *base, struct mt_gain *out,
	     int max);

#endif
