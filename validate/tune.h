/* SPDX-License-Identifier: MIT */
/* tune: the benchmark-driven search in a closed loop (`megatune tune`):
 * validate the best few candidates of an advice, correct the predictions of
 * the others from what was measured, re-rank, validate the best of those
 * not yet run, and stop when a round leaves the measured best unchanged,
 * the list is exhausted, the rounds or the budget end (docs/VALIDATE.md).
 *
 * The correction is stated and simple: the predicted step of a candidate not
 * yet run is scaled by the measured/predicted ratio of the run candidate
 * whose configuration is the most alike (most equal among TP, PP, VPP, CP,
 * EP, ETP, micro-batch, recompute, CP communication, offload on/off; the
 * mean ratio of those tied).  Only candidates that ran to the end (status
 * ok) count; with none, the prediction stands.
 */
#ifndef MT_VALIDATE_TUNE_H
#define MT_VALIDATE_TUNE_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "validate.h"

struct mt_tune_opts {
	struct mt_validate_opts v;  /* how each candidate runs (progress: the rounds too) */
	int per_round;              /* candidates run per round (>= 1) */
	int max_rounds;             /* 0: no limit */
};

struct mt_tune_result {
	int rounds, runs;
	int best;                   /* index of the measured best in v->cand, -1: none */
	int stable;                 /* stopped because a round left the best unchanged */
	const char *why;            /* why it stopped, one phrase */
};

/* The corrected step of candidate j (its prediction when no run counts). */
double mt_tune_corrected(const struct mt_validation *v, int j);

/* Run the loop over v (mt_validate_init with the whole list); v keeps every
 * run.  Candidates v already has run (mt_validate_resume) are not run again
 * and count from the start.  Returns MT_OK (also when interrupted: *o->v.stop) or the error of a
 * run that could not start. */
int mt_tune(struct mt_validation *v, const cJSON *advice, const struct mt_tune_opts *o,
	    struct mt_tune_result *r, struct mt_error *err);

#endif
