/* SPDX-License-Identifier: MIT */
/* comparison: the owner of `megatune.comparison/1` (docs/FORMATS.md section
 * 5): the verdict of current results against a baseline, metric by metric.
 *
 * mt_comparison_read() turns a parsed document into the typed struct the
 * report draws; mt_comparison_json() writes the struct `megatune compare`
 * fills (compare/compare.h).  The reader is lenient where the page can say "n/a" (a
 * missing number is NAN, a missing string NULL) and strict where it cannot
 * go on (not an object, another schema, `metrics` not an array of objects).
 *
 * Ownership: strings in the struct point into the cJSON document, which must
 * outlive it; metrics[] and the only_* arrays are owned by the struct
 * (mt_comparison_free).  A struct filled by the compare command borrows its
 * strings from the compared documents and owns its arrays likewise.
 */
#ifndef MT_COMPARISON_H
#define MT_COMPARISON_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"

struct mt_cmp_metric {
	const char *name, *unit;  /* NULL when missing */
	double baseline, current; /* NAN when missing */
	double change_pct;        /* (current - baseline) / baseline, percent */
	double noise_pct;         /* the band within which a change is noise */
	const char *verdict;      /* improved, unchanged, regressed, inconclusive */
	/* written by `megatune compare` (NULL, NAN or 0 when absent) */
	const char *id;           /* the identity both sides were matched by */
	const char *better;       /* "lower" or "higher" */
	const char *method;       /* where noise_pct comes from (docs/FORMATS.md) */
	double tolerance_pct;     /* the change that matters for this metric */
	double p_value;           /* Mann-Whitney, two-sided; NAN without samples */
	int n_baseline, n_current; /* samples or runs behind each side (0: one figure) */
	const char *note;         /* e.g. where a step change began */
};

struct mt_comparison {
	const char *source;  /* what was compared, NULL when missing */
	const char *verdict; /* overall: pass, regressed (NULL when missing) */
	struct mt_cmp_metric *metrics;
	int nmetrics;
	/* written by `megatune compare` (NULL / NAN when absent) */
	const char *kind, *baseline_file, *current_file;
	double tolerance_pct, confidence_pct;
	int counts[4];       /* regressed, improved, unchanged, inconclusive */
	const char **only_baseline, **only_current; /* names matched on one side */
	int nonly_baseline, nonly_current;
	int allow_missing;   /* only_baseline[] does not fail the gate (read: true
			      * when the document does not say) */
};

/* Read `doc` (from `file`, given as option `opt` for messages) into `out`.
 * MT_OK, or MT_EINVAL with the file and field in err (out then empty). */
int mt_comparison_read(const cJSON *doc, const char *file, const char *opt,
		       struct mt_comparison *out, struct mt_error *err);

void mt_comparison_free(struct mt_comparison *c);

/* The metrics of the baseline missing from the current that fail the gate:
 * nonly_baseline, or 0 with allow_missing. */
int mt_comparison_missing(const struct mt_comparison *c);

/* The overall verdict of a comparison `megatune compare` filled: "regressed"
 * when any metric regressed, else "fail" when mt_comparison_missing(), else
 * "pass". */
const char *mt_comparison_verdict(const struct mt_comparison *c);

/* Append the document (megatune.comparison/1, pretty-printed) for `c`, with
 * the overall verdict of mt_comparison_verdict(). */
void mt_comparison_json(struct sbuf *sb, const struct mt_comparison *c);

#endif
