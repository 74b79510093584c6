/* SPDX-License-Identifier: MIT */
/* compare: statistics and verdicts (the renderings are in render.c). */
#include "compare.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/stats.h"

/* ---------------------------------------------------------------- thresholds */

void mt_thresholds_free(struct mt_thresholds *t)
{
	int i;

	for (i = 0; i < t->n; i++)
		free(t->t[i].pattern);
	free(t->t);
	free(t->file);
	memset(t, 0, sizeof(*t));
}

/* "PATTERN PCT": the tolerance is the last word; the pattern is what comes
 * before it (names have spaces). */
static int th_line(struct mt_thresholds *out, const char *path, int line, char *s,
		   struct mt_error *err)
{
	char *pct, *end, *e;
	struct mt_threshold *nt;
	double v = NAN;
	size_t n;

	if ((end = strchr(s, '#')))
		*end = 0;
	e = s + strlen(s);
	while (e > s && strchr(" \t\r", e[-1]))
		*--e = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	if (!*s)
		return MT_OK;
	pct = strrchr(s, ' ');
	if (!pct || (strrchr(s, '\t') && strrchr(s, '\t') > pct))
		pct = strrchr(s, '\t');
	if (pct) {
		*pct++ = 0;
		if (pct[0] && pct[strlen(pct) - 1] == '%')
			pct[strlen(pct) - 1] = 0;
		v = strtod(pct, &end);
		if (end == pct || *end)
			v = NAN;
	}
	e = s + strlen(s);
	while (e > s && strchr(" \t", e[-1]))
		*--e = 0;
	if (!pct || !*s || !(v >= 0 && v < 1e6))
		return mt_error_set(err, MT_EINVAL, "%s:%d: expected 'PATTERN PCT' (a metric id "
				    "or name, or a glob of them, then a tolerance in percent)", path,
				    line);
	if (!(nt = realloc(out->t, (size_t)(out->n + 1) * sizeof(*nt))))
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
	out->t = nt;
	nt = &out->t[out->n];
	n = strlen(s) + 1;
	if (!(nt->pattern = malloc(n)))
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
	memcpy(nt->pattern, s, n);
	nt->pct = v;
	nt->line = line;
	out->n++;
	return MT_OK;
}

int mt_thresholds_load(const char *path, struct mt_thresholds *out, struct mt_error *err)
{
	char *text = NULL, *p, *nl;
	size_t len;
	int rc, line = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = mt_read_file(path, 1 << 20, &text, &len, err)))
		return rc;
	if (!(out->file = malloc(strlen(path) + 1))) {
		free(text);
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
	}
	memcpy(out->file, path, strlen(path) + 1);
	for (p = text; p && *p && !rc; p = nl) {
		if ((nl = strchr(p, '\n')))
			*nl++ = 0;
		rc = th_line(out, path, ++line, p, err);
	}
	free(text);
	if (rc)
		mt_thresholds_free(out);
	return rc;
}

double mt_cmp_tolerance(const struct mt_cmp_opts *o, const struct mt_cm_metric *m, int *which)
{
	int i;

	*which = -1;
	for (i = 0; o->th && i < o->th->n; i++)
		if (!fnmatch(o->th->t[i].pattern, m->id, 0) ||
		    !fnmatch(o->th->t[i].pattern, m->name, 0)) {
			*which = i;
			return o->th->t[i].pct;
		}
	return o->tolerance_pct;
}

/* ---------------------------------------------------------------- statistics */

static int compare_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The test of mt_mwu_p(); *below, when not NULL, gets U_a / (na nb): the
 * share of the (a, b) pairs with a above b, ties counting half. */
static double mwu(const double *a, int na, const double *b, int nb, double *below)
{
	struct pt {
		double v;
		int g;
	} *x;
	double r1 = 0, ties = 0, u, mu, var, z;
	int n = na + nb, i, j;

	if (na < 2 || nb < 2 || !(x = malloc((size_t)n * sizeof(*x))))
		return NAN;
	for (i = 0; i < na; i++)
		x[i] = (struct pt){ a[i], 0 };
	for (i = 0; i < nb; i++)
		x[na + i] = (struct pt){ b[i], 1 };
	qsort(x, (size_t)n, sizeof(*x), compare_cmp_double); /* v is the first member */
	for (i = 0; i < n; i = j) {
		double rank, t;

		for (j = i + 1; j < n && x[j].v == x[i].v; j++)
			;
		rank = (i + 1 + j) / 2.0; /* the mean of ranks i+1 .. j */
		t = j - i;
		ties += t * t * t - t;
		for (int k = i; k < j; k++)
			if (x[k].g == 0)
				r1 += rank;
	}
	free(x);
	u = r1 - na * (na + 1) / 2.0;
	if (below)
		*below = u / (na * (double)nb);
	mu = na * (double)nb / 2;
	var = na * (double)nb / 12.0 * ((n + 1) - ties / ((double)n * (n - 1)));
	if (!(var > 0))
		return 1;
	z = (fabs(u - mu) - 0.5) / sqrt(var);
	if (z < 0)
		z = 0;
	return erfc(z / sqrt(2));
}

double mt_mwu_p(const double *a, int na, const double *b, int nb)
{
	return mwu(a, na, b, nb, NULL);
}

double mt_cmp_z(double confidence_pct)
{
	/* the two-sided quantile by bisection on erfc: z with erfc(z/sqrt2) = 1 - c */
	double alpha = 1 - confidence_pct / 100, lo = 0, hi = 10;
	int i;

	if (!(alpha > 0 && alpha < 1))
		return 2.576;
	for (i = 0; i < 100; i++) {
		double mid = (lo + hi) / 2;

		if (erfc(mid / sqrt(2)) > alpha)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

double mt_cmp_limit_pct(double tol_pct, double noise_pct)
{
	return tol_pct + (isfinite(noise_pct) ? noise_pct : 0);
}

const char *mt_cmp_verdict(double change_pct, int higher_better, double tol_pct, double noise_pct,
			   double p, double alpha)
{
	double worse = higher_better ? -change_pct : change_pct;

	if (!isfinite(change_pct))
		return "inconclusive";
	if (fabs(change_pct) <= tol_pct)
		return "unchanged";
	/* beyond the tolerance by more than the noise: the band around the change
	 * stays clear of the tolerance, so the noise cannot have carried a change
	 * within the tolerance past it */
	if (fabs(change_pct) <= mt_cmp_limit_pct(tol_pct, noise_pct))
		return "inconclusive";
	if (isfinite(p) && p >= alpha)
		return "inconclusive";
	return worse > 0 ? "regressed" : "improved";
}

/* The canary times of the metric's rank in its set, NULL when none. */
static const struct mt_cm_canary *canary_of(const struct mt_cm_set *s, const struct mt_cm_metric *m)
{
	return m->canary_ix >= 0 && m->canary_ix < s->ncanaries ? &s->canaries[m->canary_ix] : NULL;
}

/* The band and the test of one pair of metrics (docs in compare.h); kb, kc
 * the canaries of their ranks, NULL when none. */
static void noise(const struct mt_cm_metric *b, const struct mt_cm_metric *c, double z,
		  const struct mt_cm_canary *kb, const struct mt_cm_canary *kc,
		  struct mt_cmp_metric *out)
{
	out->p_value = NAN;
	out->n_baseline = b->nsamples ? b->nsamples : b->n;
	out->n_current = c->nsamples ? c->nsamples : c->n;
	if (b->nrounds >= 3 && c->nrounds >= 3) {
		/* the rounds' medians as the units: their spread holds the
		 * run-to-run noise that the samples of one round do not */
		double cb = mt_robust_cv(b->rounds, (size_t)b->nrounds);
		double cc = mt_robust_cv(c->rounds, (size_t)c->nrounds);

		out->method = "rounds";
		out->n_baseline = b->nrounds;
		out->n_current = c->nrounds;
		out->p_value = mt_mwu_p(b->rounds, b->nrounds, c->rounds, c->nrounds);
		out->noise_pct = 100 * z * 1.2533 *
				 sqrt(cb * cb / b->nrounds + cc * cc / c->nrounds);
	} else if (b->nsamples >= 3 && c->nsamples >= 3) {
		double cb = mt_robust_cv(b->samples, (size_t)b->nsamples);
		double cc = mt_robust_cv(c->samples, (size_t)c->nsamples);

		out->method = "mann-whitney";
		out->p_value = mt_mwu_p(b->samples, b->nsamples, c->samples, c->nsamples);
		out->noise_pct = 100 * z * 1.2533 *
				 sqrt(cb * cb / b->nsamples + cc * cc / c->nsamples);
	} else if (isfinite(b->cv) && isfinite(c->cv) && b->n >= 2 && c->n >= 2) {
		out->method = "cv band";
		out->noise_pct = 100 * z * 1.2533 * sqrt(b->cv * b->cv / b->n + c->cv * c->cv / c->n);
	} else if (isfinite(b->spread) || isfinite(c->spread)) {
		double sb = isfinite(b->spread) ? b->spread : c->spread;
		double sc = isfinite(c->spread) ? c->spread : b->spread;

		out->method = "document spread";
		out->noise_pct = 100 * z * sqrt(sb * sb + sc * sc);
	} else {
		out->method = "tolerance";
		out->noise_pct = 0;
	}
	if (!isfinite(out->noise_pct))
		out->noise_pct = 0;
	if (b->canary > 0 && c->canary > 0) {
		/* the machine's own change between the runs, from the core's
		 * canary: a change up to it, the way the machine went, is not the
		 * metric's (a machine that ran faster explains no slowdown) */
		static const struct { const char *m, *with; } w[] = {
			{ "rounds", "rounds+canary" }, { "mann-whitney", "mann-whitney+canary" },
			{ "cv band", "cv band+canary" }, { "document spread", "document spread+canary" },
			{ "tolerance", "tolerance+canary" },
		};
		size_t k;
		/* the rank's whole run when both documents hold it: the median of
		 * a case's ~10 canaries moves by clock ticks on its own */
		double mach = kb && kc && kb->median > 0 && kc->median > 0
				      ? kc->median / kb->median - 1 : c->canary / b->canary - 1;
		int worse = b->higher_better ? c->value < b->value : c->value > b->value;

		if (mach != 0 && (mach > 0) == worse)
			out->noise_pct += 100 * fabs(mach);
		for (k = 0; k < sizeof(w) / sizeof(w[0]); k++)
			if (!strcmp(out->method, w[k].m))
				out->method = w[k].with;
	}
}

/* Did the core run at another speed in the current document than in the
 * baseline?  x and y: the canary times of the metric's rank in each (every
 * case, every round):
 * +1 slower, -1 faster, when the rank test rejects "same distribution" at
 * alpha; else 0.  The direction is the side of one half of the test's U, the
 * share of (baseline, current) pairs with the baseline above (the canary's
 * timings fall on a few clock ticks, so medians often tie where the
 * distributions do not). */
static int canary_moved(const struct mt_cm_canary *x, const struct mt_cm_canary *y, double alpha)
{
	double p, below = 0.5;

	p = mwu(x->v, x->n, y->v, y->n, &below); /* below: baseline above current */
	if (!(isfinite(p) && p < alpha))
		return 0;
	return below < 0.5 ? 1 : below > 0.5 ? -1 : 0;
}

/* A compute-bound metric that moved the way the core did: the machine, not
 * what the probe measures, may have made the change.  A core shared with
 * another tenant keeps at least half its arithmetic throughput, so the
 * core explains a time ratio up to 2 (docs/FORMATS.md section 14). */
static void canary_gate(const struct mt_cm_set *base, const struct mt_cm_set *cur,
			const struct mt_cm_metric *b, const struct mt_cm_metric *c, double alpha,
			signed char *memo, struct mt_cmp_metric *m)
{
	const struct mt_cm_canary *x = canary_of(base, b), *y = canary_of(cur, c);
	int moved, slower;
	double ratio;

	if (!x || !y || !b->compute_bound || !c->compute_bound || b->higher_better ||
	    (strcmp(m->verdict, "regressed") && strcmp(m->verdict, "improved")))
		return;
	if (!(b->value > 0 && c->value > 0))
		return;
	ratio = c->value / b->value;
	if (ratio > 2 || ratio < 0.5)
		return;
	if (memo) { /* one test per pair of ranks, not per metric */
		signed char *k = &memo[b->canary_ix * cur->ncanaries + c->canary_ix];

		if (*k == 2)
			*k = (signed char)canary_moved(x, y, alpha);
		moved = *k;
	} else {
		moved = canary_moved(x, y, alpha);
	}
	if (!moved)
		return;
	slower = !strcmp(m->verdict, "regressed");
	if ((slower && moved < 0) || (!slower && moved > 0))
		return;
	m->verdict = "inconclusive";
	m->note = slower ? "the core itself ran slower in this run (its canary, rank test)"
			 : "the core itself ran faster in this run (its canary, rank test)";
}

static int severity(const char *v)
{
	return !strcmp(v, "regressed") ? 0 : !strcmp(v, "inconclusive") ? 1 :
	       !strcmp(v, "improved") ? 2 : 3;
}

static double worse_of(const struct mt_cmp_metric *m)
{
	double w = m->better && !strcmp(m->better, "higher") ? -m->change_pct : m->change_pct;

	return isfinite(w) ? w : 0;
}

static int by_severity(const void *pa, const void *pb)
{
	const struct mt_cmp_metric *a = pa, *b = pb;
	int sa = severity(a->verdict), sb = severity(b->verdict);
	double wa, wb;

	if (sa != sb)
		return sa - sb;
	wa = sa == 0 ? worse_of(a) : fabs(isfinite(a->change_pct) ? a->change_pct : 0);
	wb = sa == 0 ? worse_of(b) : fabs(isfinite(b->change_pct) ? b->change_pct : 0);
	if (wa != wb)
		return wa > wb ? -1 : 1;
	return strcmp(a->id ? a->id : "", b->id ? b->id : "");
}

void mt_compare_finish(struct mt_comparison *out)
{
	int i;

	if (out->nmetrics > 1)
		qsort(out->metrics, (size_t)out->nmetrics, sizeof(*out->metrics), by_severity);
	memset(out->counts, 0, sizeof(out->counts));
	for (i = 0; i < out->nmetrics; i++) {
		int s = severity(out->metrics[i].verdict);

		out->counts[s == 0 ? 0 : s == 2 ? 1 : s == 3 ? 2 : 3]++;
	}
	out->verdict = mt_comparison_verdict(out);
}

void mt_compare_free(struct mt_comparison *c)
{
	free(c->metrics);
	free(c->only_baseline);
	free(c->only_current);
	memset(c, 0, sizeof(*c));
}

/* A threshold that names no metric of either side is a mistake (a typo
 * would silently leave the default). */
static int check_thresholds(const struct mt_cm_set *base, const struct mt_cm_set *cur,
			    const struct mt_cmp_opts *o, struct mt_error *err)
{
	const struct mt_cm_set *sets[2] = { base, cur };
	int t, s, i, which;

	for (t = 0; o->th && t < o->th->n; t++) {
		int found = 0;

		for (s = 0; s < 2 && !found; s++)
			for (i = 0; i < sets[s]->n && !found; i++) {
				struct mt_cmp_opts one = *o;
				struct mt_thresholds th1 = { &o->th->t[t], 1, NULL };

				one.th = &th1;
				mt_cmp_tolerance(&one, &sets[s]->m[i], &which);
				found = which == 0;
			}
		if (!found)
			return mt_error_set(err, MT_EINVAL, "%s:%d: '%s' matches no metric of the "
					    "compared %s documents (ids as `megatune compare --all "
					    "--json` lists them)", o->th->file ? o->th->file : "thresholds",
					    o->th->t[t].line, o->th->t[t].pattern, base->kind);
	}
	return MT_OK;
}

int mt_compare_sets(const struct mt_cm_set *base, const struct mt_cm_set *cur,
		    const struct mt_cmp_opts *o, struct mt_comparison *out, struct mt_error *err)
{
	double z = mt_cmp_z(o->confidence_pct), alpha = 1 - o->confidence_pct / 100;
	signed char *memo = NULL; /* canary_gate's verdicts per pair of ranks; 2 not yet */
	int i, rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_thresholds(base, cur, o, err)))
		return rc;
	if (base->ncanaries && cur->ncanaries &&
	    (memo = malloc((size_t)base->ncanaries * (size_t)cur->ncanaries)))
		memset(memo, 2, (size_t)base->ncanaries * (size_t)cur->ncanaries);
	out->kind = base->kind;
	out->allow_missing = o->allow_missing;
	out->tolerance_pct = o->tolerance_pct;
	out->confidence_pct = o->confidence_pct;
	if ((base->n && !(out->metrics = calloc((size_t)base->n, sizeof(*out->metrics)))) ||
	    (base->n && !(out->only_baseline = calloc((size_t)base->n, sizeof(char *)))) ||
	    (cur->n && !(out->only_current = calloc((size_t)cur->n, sizeof(char *))))) {
		mt_compare_free(out);
		free(memo);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (i = 0; i < base->n; i++) {
		const struct mt_cm_metric *b = &base->m[i], *c;
		struct mt_cmp_metric *m;
		int j = mt_cm_find(cur, b->id), which;

		if (j < 0) {
			out->only_baseline[out->nonly_baseline++] = b->name;
			continue;
		}
		c = &cur->m[j];
		m = &out->metrics[out->nmetrics++];
		m->id = b->id;
		m->name = b->name;
		m->unit = b->unit;
		m->better = b->higher_better ? "higher" : "lower";
		m->baseline = b->value;
		m->current = c->value;
		m->change_pct = b->value != 0 && isfinite(b->value) && isfinite(c->value)
					? (c->value - b->value) / fabs(b->value) * 100 : NAN;
		m->tolerance_pct = mt_cmp_tolerance(o, b, &which);
		noise(b, c, z, canary_of(base, b), canary_of(cur, c), m);
		m->verdict = mt_cmp_verdict(m->change_pct, b->higher_better, m->tolerance_pct,
					    m->noise_pct, m->p_value, alpha);
		canary_gate(base, cur, b, c, alpha, memo, m);
	}
	free(memo);
	for (i = 0; i < cur->n; i++)
		if (mt_cm_find(base, cur->m[i].id) < 0)
			out->only_current[out->nonly_current++] = cur->m[i].name;
	mt_compare_finish(out);
	return MT_OK;
}
