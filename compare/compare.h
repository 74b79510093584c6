/* SPDX-License-Identifier: MIT */
/* compare: noise-aware verdicts of current figures against a baseline, and
 * their text, JUnit XML and Markdown renderings (the JSON document is
 * written by its owner, compare/comparison.h).
 *
 * Each metric matched by identity gets a verdict (docs/FORMATS.md section
 * 14): `unchanged` when the change is within the tolerance; otherwise
 * `regressed` or `improved` when the noise does not explain it (the change
 * exceeds the tolerance by more than the noise band, and the test, where
 * there is one, rejects), else `inconclusive`.  The noise comes from the
 * data:
 *  - rounds on both sides (calibrate --rounds, at least 3 each): the same
 *    test and band as for samples (below) with each round's median as one
 *    unit, so that the noise between runs, which the samples of one pass do
 *    not show, is in the band (6 rounds or more reach 99%: with 5 against 5
 *    the test cannot go below p = 0.012);
 *  - samples on both sides (n >= 3): the Mann-Whitney U test (normal
 *    approximation with tie and continuity corrections) must reject "same
 *    distribution" at the confidence (default 99%, two-sided), and the change
 *    must exceed the tolerance by more than the band of the medians (below);
 *  - a coefficient of variation over n repeats: a band of z x 1.2533 x
 *    sqrt(cv_b^2 / n_b + cv_c^2 / n_c) (the standard error of a median is
 *    1.2533 sigma / sqrt(n) for normal noise);
 *  - a spread the document gives (nccl-tests: out-of-place against
 *    in-place): z x sqrt(s_b^2 + s_c^2);
 *  - a history: the robust spread of the baseline runs (1.4826 MAD /
 *    median), z x s x sqrt(1 + pi / (2 N));
 *  - none: the tolerance alone.
 * z is the two-sided normal quantile of the confidence (2.576 at 99%).
 * Where both sides carry the CPU canary (`canary_us`), the band of a metric
 * that moved the way the canary did (worse when it got slower, better when
 * faster) grows by its relative change: the median of all canary times of
 * the metric's rank in each document (the case's own median when a side has
 * no such set).  CPU
 * GEMM and attention that moved the way a rank test on those timings says
 * the core did are `inconclusive`.
 *
 * Ownership: a struct mt_comparison filled here borrows its strings from the
 * two metric sets (and `notes`), which must outlive it; free it with
 * mt_compare_free().
 */
#ifndef MT_COMPARE_H
#define MT_COMPARE_H

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "comparison.h"
#include "metrics.h"

#define MT_CMP_DEFAULT_TOLERANCE 5.0  /* percent */
#define MT_CMP_DEFAULT_CONFIDENCE 99.0

/* Per-metric tolerances: lines "PATTERN PCT" (a shell glob on the metric id
 * or name, fnmatch(3)); '#' starts a comment.  The first matching line wins. */
struct mt_threshold {
	char *pattern;
	double pct;
	int line;
};

struct mt_thresholds {
	struct mt_threshold *t;
	int n;
	char *file;
};

int mt_thresholds_load(const char *path, struct mt_thresholds *out, struct mt_error *err);
void mt_thresholds_free(struct mt_thresholds *t);

struct mt_cmp_opts {
	double tolerance_pct;              /* default MT_CMP_DEFAULT_TOLERANCE */
	double confidence_pct;             /* default MT_CMP_DEFAULT_CONFIDENCE */
	const struct mt_thresholds *th;    /* may be NULL */
	int allow_missing;                 /* a metric of the baseline that the current
					    * lacks is listed, not a failure */
};

/* Two-sided p of the Mann-Whitney U test of a[0..na) against b[0..nb)
 * (normal approximation, tie and continuity corrections); NAN when either
 * side has fewer than 2 values.  Allocates a scratch copy (NAN on failure). */
double mt_mwu_p(const double *a, int na, const double *b, int nb);

/* The two-sided normal quantile for a confidence in percent (99 -> 2.576). */
double mt_cmp_z(double confidence_pct);

/* The verdict of a change: `change_pct` signed (current against baseline),
 * `noise_pct` the band (0 when none), `p` the test's p-value (NAN when no
 * test), `alpha` its level.  Unchanged within the tolerance; regressed or
 * improved when |change| - band > tolerance and p < alpha; else
 * inconclusive. */
const char *mt_cmp_verdict(double change_pct, int higher_better, double tol_pct, double noise_pct,
			   double p, double alpha);

/* The largest |change| in percent that the noise explains: the tolerance
 * plus the band (a non-finite band counts as none).  Beyond it, on the worse
 * side, a metric whose test rejects is regressed. */
double mt_cmp_limit_pct(double tol_pct, double noise_pct);

/* Compare two sets of the same kind into `out` (metrics ordered worst
 * regressions first).  Metrics of the baseline that the current lacks are
 * listed in only_baseline and fail the gate (verdict "fail") unless
 * o->allow_missing.  A threshold pattern that matches no metric of either
 * set is MT_EINVAL naming the thresholds file and its line. */
int mt_compare_sets(const struct mt_cm_set *base, const struct mt_cm_set *cur,
		    const struct mt_cmp_opts *o, struct mt_comparison *out, struct mt_error *err);

/* The tolerance for a metric: the first threshold matching its id or name
 * (*which = its index), else the option (*which = -1). */
double mt_cmp_tolerance(const struct mt_cmp_opts *o, const struct mt_cm_metric *m, int *which);

/* Order metrics worst first, count the verdicts into out->counts and set
 * out->verdict (mt_comparison_verdict()). */
void mt_compare_finish(struct mt_comparison *out);

void mt_compare_free(struct mt_comparison *c);

/* Runs of a history as plain sets (oldest first), their ids and labels. */
struct mt_cmp_hist_in {
	const struct mt_cm_set *runs;
	const long long *ids;
	const char *const *labels;
	int n;
};

/* Compare `cur` against a rolling baseline: per metric, the median of its
 * values in runs[] (the caller passes the last N comparable runs) with
 * their robust spread as the noise (method "history"; with fewer than 3
 * runs, the newest run's own noise as in a pair).  A metric beyond the band
 * gets a note naming the run where the change began when the newest runs
 * are beyond it too (a step change), else "this run alone".  Notes are
 * allocated into *notes (nmetrics entries, NULL where none; free each, then
 * the array).  Metrics no run has are listed in only_current; metrics of the
 * newest run that cur lacks in only_baseline (a failure as in
 * mt_compare_sets()). */
int mt_compare_history(const struct mt_cmp_hist_in *h, const struct mt_cm_set *cur,
		       const struct mt_cmp_opts *o, struct mt_comparison *out, char ***notes,
		       struct mt_error *err);

/* Renderings.  Text: the counts, then a table worst first (all metrics, or
 * only the changed ones unless `all`). */
void mt_compare_text(struct sbuf *sb, const struct mt_comparison *c, int all);
void mt_compare_junit(struct sbuf *sb, const struct mt_comparison *c);
void mt_compare_markdown(struct sbuf *sb, const struct mt_comparison *c);

/* JUnit XML for a comparison that could not be made (an unreadable or cut
 * document, two kinds, nothing in common): one test case whose failure is
 * `message`; `baseline` and `current` as given (either may be NULL). */
void mt_compare_junit_error(struct sbuf *sb, const char *baseline, const char *current,
			    const char *message);

#endif
