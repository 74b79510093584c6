/* SPDX-License-Identifier: MIT */
/* band: how far a prediction may be off, from where its numbers come from
 * (docs/MODEL.md 8.1).
 *
 * A step time is a sum of terms, each from a curve the profile measured or
 * derived, a published table, or a model the profile cannot check (the host's
 * issue cost, the overlap credit).  Each term carries a relative uncertainty
 * by its origin (perfmodel/constants.h MT_U_*); they add in quadrature with the
 * model-wide error of the prediction's kind (the accuracy table's root mean
 * square, MT_BAND_BASE_*), except the host's, which moves one way and adds.
 * The candidate's own part (spec_lo, spec_hi: without the model-wide error,
 * which two candidates of one job share) is what a ranking may weigh.
 */
#ifndef MT_BAND_H
#define MT_BAND_H

#include "config.h"
#include "cluster.h"
#include "model.h"

/* The band of the step time t of cfg (model m on cluster c, job j). */
void mt_band(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	     const struct mt_config *cfg, const struct mt_time *t, struct mt_band *out);

/* The name of term bit i (0 <= i < MT_BT_N), for the outputs. */
const char *mt_band_term_name(int i);

#endif
