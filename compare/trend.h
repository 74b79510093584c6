/* SPDX-License-Identifier: MIT */
/* trend: each metric of a history over its runs, with the rolling baseline
 * band `megatune compare --history` judges against, for the report's trend
 * charts.  Plain data: built from metric sets (compare/metrics.h) the
 * command reads from the history, so the report needs no database.
 *
 * Ownership: strings are borrowed from the sets given to mt_trends_build(),
 * which must outlive the trends; free with mt_trends_free().
 */
#ifndef MT_COMPARE_TREND_H
#define MT_COMPARE_TREND_H

#include "../lib/err.h"
#include "compare.h"

struct mt_trend_point {
	long long run;       /* the run's id */
	const char *label;   /* its label ("" when none) */
	double value;        /* NAN when the run lacks the metric */
	double base, lo, hi; /* the rolling baseline before this run and the limits of "unchanged or
				* inconclusive" around it: tolerance plus band (NAN: too few runs) */
	const char *verdict; /* this run against that baseline */
};

struct mt_trend {
	const char *id, *name, *unit;
	int higher_better;
	struct mt_trend_point *pt;
	int n;
	int regressed;       /* points judged regressed */
};

/* One trend per metric of the newest run (at most `max` of them, those with
 * regressed points first), window `window` runs, confidence and tolerance
 * from o. */
int mt_trends_build(const struct mt_cmp_hist_in *h, int window, const struct mt_cmp_opts *o,
		    int max, struct mt_trend **out, int *n, struct mt_error *err);
void mt_trends_free(struct mt_trend *t, int n);

#endif
