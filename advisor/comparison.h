/* SPDX-License-Identifier: MIT */
/* comparison: the owner of `megatune.comparison/1` (docs/FORMATS.md section
 * 5): the verdict of current results against a baseline, metric by metric.
 *
 * mt_comparison_read() turns a parsed document into the typed struct the
 * report draws; the `megatune compare` command will write it through the
 * same struct.  The reader is lenient where the page can say "n/a" (a
 * missing number is NAN, a missing string NULL) and strict where it cannot
 * go on (not an object, another schema, `metrics` not an array of objects).
 *
 * Ownership: strings in the struct point into the cJSON document, which must
 * outlive it; metrics[] is owned by the struct (mt_comparison_free).
 */
#ifndef MT_COMPARISON_H
#define MT_COMPARISON_H

#include <cjson/cJSON.h>

#include "../lib/err.h"

struct mt_cmp_metric {
	const char *name, *unit;  /* NULL when missing */
	double baseline, current; /* NAN when missing */
	double change_pct;        /* (current - baseline) / baseline, percent */
	double noise_pct;         /* the band within which a change is noise */
	const char *verdict;      /* improved, unchanged, regressed, inconclusive */
};

struct mt_comparison {
	const char *source;  /* what was compared, NULL when missing */
	const char *verdict; /* overall: pass, regressed (NULL when missing) */
	struct mt_cmp_metric *metrics;
	int nmetrics;
};

/* Read `doc` (from `file`, given as option `opt` for messages) into `out`.
 * MT_OK, or MT_EINVAL with the file and field in err (out then empty). */
int mt_comparison_read(const cJSON *doc, const char *file, const char *opt,
		       struct mt_comparison *out, struct mt_error *err);

void mt_comparison_free(struct mt_comparison *c);

#endif
