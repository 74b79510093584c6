/* SPDX-License-Identifier: MIT */
/* tune: the benchmark-driven search in a closed loop (`megatune tune`):
 * validate the best few candidates of an advice, correct the predictions of
 * the others from what was measured, re-rank, validate the best of those
 * not yet run, and stop when a round leaves the measured best unchanged,
 * the list is exhausted, the rounds or the budget end (docs/VALIDATE.md).
 * With `runs` the loop runs one candidate a round and exactly that many in
 * all (fewer when the list or the budget ends): the measured best of N runs.
 *
 * The correction is the one `megatune calibrate --from-validation` fits
 * (validate/fit.h, docs/MODEL.md section 10), fitted again before every
 * round from the runs so far that ended ok: its time factors on the profile
 * the advice names (its own corrections left out), and every candidate
 * re-predicted with them (mt_vset_predict).  Where the fit keeps no factor
 * (none is exercised, or with them the runs left out are predicted worse),
 * the predicted step is scaled instead by the measured/predicted ratio of
 * the run whose configuration is the most alike (most equal among TP, PP,
 * VPP, CP, EP, ETP, micro-batch, recompute, CP communication, offload on/off;
 * the mean ratio of those tied).  Before any run ends ok, the prediction
 * stands.
 *
 * Each run records (struct mt_vcand's tune_*) its place in the loop, the
 * runs its correction came from and the corrected prediction it ran with;
 * the document's `tune` (struct mt_vtune) the last correction, the measured
 * best's run, and the list ordered by the last corrected prediction.
 */
#ifndef MT_VALIDATE_TUNE_H
#define MT_VALIDATE_TUNE_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "validate.h"

struct mt_tune_opts {
	struct mt_validate_opts v;  /* how each candidate runs (progress: the rounds too) */
	int per_round;              /* candidates run per round (>= 1) */
	int max_rounds;             /* 0: no limit */
	int runs;                   /* > 0: one candidate a round, this many runs in all
				     * (resumed ones included), no early stop */
};

struct mt_tune_result {
	int rounds, runs;           /* of this call (resumed runs not counted) */
	int best;                   /* index of the measured best in v->cand, -1: none */
	int stable;                 /* stopped because a round left the best unchanged */
	const char *why;            /* why it stopped, one phrase */
};

/* Run the loop over v (mt_validate_init with the whole list); v keeps every
 * run and, in v->tune, the summary.  Candidates v already has run
 * (mt_validate_resume) are not run again and count from the start.  Returns
 * MT_OK (also when interrupted: *o->v.stop), the error of a run that could
 * not start, MT_ENOMEM when memory runs out, or MT_EINVAL when the advice's
 * profile, model or a candidate's configuration cannot be read back to
 * correct the predictions (checked before the first run). */
int mt_tune(struct mt_validation *v, const cJSON *advice, const struct mt_tune_opts *o,
	    struct mt_tune_result *r, struct mt_error *err);

/* The runs of a tune as text: per run its uncorrected and corrected
 * prediction, the measurement and both errors; the measured best and its
 * run; the last correction; whether it reorders the list.  MT_OK, or
 * MT_ENOMEM (sb holds part of it, or nothing). */
int mt_tune_text(struct sbuf *sb, const struct mt_validation *v);

#endif
