/* SPDX-License-Identifier: MIT */
/* rank: the entries of a search's ranking (tuner/search.h): the best
 * candidate of each parallel layout, its runner-up variants folded under it
 * (docs/MODEL.md 7).  Used by the search alone. */
#ifndef MT_RANK_H
#define MT_RANK_H

#include "search.h"

/* The ranking's key: the step time at the upper end of the candidate's own
 * terms (band.h: the model-wide error, which the candidates share, left
 * out), so that an advantage resting only on uncertain terms does not rank
 * first (docs/MODEL.md 8.1). */
static inline double mt_rank_key(const struct mt_eval *e)
{
	return e->time.step + e->band.spec_hi;
}

/* Candidate e (banded), a variant of the layout of entry i, folded under it:
 * kept when among its MT_VARIANTS first by the ranking's key, counted in any
 * case. */
void mt_rank_fold(struct mt_search_result *r, int i, const struct mt_eval *e);

/* Entry i (the layout with its variants) copied into place j. */
void mt_rank_move(struct mt_search_result *r, int j, int i);

/* Entry i moved up while the one above it ranks after it. */
void mt_rank_bubble(struct mt_search_result *r, int i);

#endif
