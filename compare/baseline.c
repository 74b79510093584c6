/* SPDX-License-Identifier: MIT */
/* baseline: the rolling baseline of a history, step changes, trends. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/stats.h"
#include "compare.h"
#include "trend.h"

struct judged {
	double base, noise_pct, change_pct;
	const char *method, *verdict;
	int nbase;
};

/* The baseline of values v[0..n) (oldest first, finite) for the current
 * metric c; `last` is the newest run's metric (for its noise when n < 3). */
static void baseline_judge(const double *v, int n, const struct mt_cm_metric *last,
		  const struct mt_cm_metric *c, double tol, double z, double alpha,
		  struct judged *j)
{
	double *d = malloc((size_t)(n ? n : 1) * sizeof(double));

	memset(j, 0, sizeof(*j));
	j->nbase = n;
	j->base = NAN;
	j->noise_pct = 0;
	j->method = "tolerance";
	if (d && n > 0) {
		memcpy(d, v, (size_t)n * sizeof(double));
		j->base = mt_median(d, (size_t)n);
		if (n >= 3 && j->base != 0) {
			/* one new run against the median of n: its spread and the median's */
			j->noise_pct = 100 * z * mt_robust_cv(v, (size_t)n) *
				       sqrt(1 + 3.14159265358979 / (2 * n));
			j->method = "history";
		} else if (last && isfinite(last->cv) && isfinite(c->cv) && last->n >= 2 &&
			   c->n >= 2) {
			j->noise_pct = 100 * z * 1.2533 *
				       sqrt(last->cv * last->cv / last->n + c->cv * c->cv / c->n);
			j->method = "cv band";
		}
	}
	free(d);
	j->change_pct = j->base != 0 && isfinite(j->base) && isfinite(c->value)
				? (c->value - j->base) / fabs(j->base) * 100 : NAN;
	j->verdict = mt_cmp_verdict(j->change_pct, c->higher_better, tol, j->noise_pct, NAN, alpha);
}

/* The values of metric `id` in runs[from..to), finite ones, into v. */
static int values(const struct mt_cmp_hist_in *h, const char *id, int from, int to, double *v,
		  const struct mt_cm_metric **last)
{
	int r, n = 0;

	*last = NULL;
	for (r = from; r < to; r++) {
		int k = mt_cm_find(&h->runs[r], id);

		if (k >= 0 && isfinite(h->runs[r].m[k].value)) {
			v[n++] = h->runs[r].m[k].value;
			*last = &h->runs[r].m[k];
		}
	}
	return n;
}

/* The run where a change began: walking back from the newest run, those
 * beyond the band on the same side as the current value. */
static char *step_note(const struct mt_cmp_hist_in *h, const char *id, const struct judged *j,
		       double tol)
{
	double lim = mt_cmp_limit_pct(tol, j->noise_pct) / 100 * fabs(j->base);
	double side = j->change_pct > 0 ? 1 : -1;
	int r, first = -1, k;
	char *s = malloc(384);

	if (!s)
		return NULL;
	for (r = h->n - 1; r >= 0; r--) {
		k = mt_cm_find(&h->runs[r], id);
		if (k < 0 || !((h->runs[r].m[k].value - j->base) * side > lim))
			break;
		first = r;
	}
	if (first < 0)
		snprintf(s, 384, "this run alone is beyond the band");
	else
		snprintf(s, 384, "a step: since run %lld%s%s%s (%d runs)", h->ids ? h->ids[first] : 0LL,
			 h->labels && h->labels[first][0] ? " (" : "",
			 h->labels ? h->labels[first] : "",
			 h->labels && h->labels[first][0] ? ")" : "", h->n - first + 1);
	return s;
}

int mt_compare_history(const struct mt_cmp_hist_in *h, const struct mt_cm_set *cur,
		       const struct mt_cmp_opts *o, struct mt_comparison *out, char ***notes,
		       struct mt_error *err)
{
	double z = mt_cmp_z(o->confidence_pct), alpha = 1 - o->confidence_pct / 100;
	double *v = malloc((size_t)(h->n ? h->n : 1) * sizeof(double));
	const struct mt_cm_set *newest = h->n ? &h->runs[h->n - 1] : NULL;
	int i;

	memset(out, 0, sizeof(*out));
	*notes = NULL;
	out->kind = cur->kind;
	out->allow_missing = o->allow_missing;
	out->tolerance_pct = o->tolerance_pct;
	out->confidence_pct = o->confidence_pct;
	if (!v || (cur->n && !(out->metrics = calloc((size_t)cur->n, sizeof(*out->metrics)))) ||
	    (cur->n && !(out->only_current = calloc((size_t)cur->n, sizeof(char *)))) ||
	    (newest && newest->n &&
	     !(out->only_baseline = calloc((size_t)newest->n, sizeof(char *)))) ||
	    (cur->n && !(*notes = calloc((size_t)cur->n, sizeof(char *))))) {
		free(v);
		mt_compare_free(out);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (i = 0; i < cur->n; i++) {
		const struct mt_cm_metric *c = &cur->m[i], *last;
		struct mt_cmp_metric *m;
		struct judged j;
		int nv = values(h, c->id, 0, h->n, v, &last), which;
		double tol = mt_cmp_tolerance(o, c, &which);

		if (!nv) {
			out->only_current[out->nonly_current++] = c->name;
			continue;
		}
		baseline_judge(v, nv, last, c, tol, z, alpha, &j);
		m = &out->metrics[out->nmetrics];
		m->id = c->id;
		m->name = c->name;
		m->unit = c->unit;
		m->better = c->higher_better ? "higher" : "lower";
		m->baseline = j.base;
		m->current = c->value;
		m->change_pct = j.change_pct;
		m->noise_pct = j.noise_pct;
		m->tolerance_pct = tol;
		m->method = j.method;
		m->p_value = NAN;
		m->n_baseline = nv;
		m->n_current = c->nsamples ? c->nsamples : c->n;
		m->verdict = j.verdict;
		if (strcmp(j.verdict, "unchanged") && strcmp(j.verdict, "inconclusive"))
			m->note = (*notes)[out->nmetrics] = step_note(h, c->id, &j, tol);
		out->nmetrics++;
	}
	free(v);
	/* what the newest run measured and this one lacks: a run cut short */
	for (i = 0; newest && i < newest->n; i++)
		if (mt_cm_find(cur, newest->m[i].id) < 0)
			out->only_baseline[out->nonly_baseline++] = newest->m[i].name;
	mt_compare_finish(out);
	return MT_OK;
}

/* ---------------------------------------------------------------- trends */

void mt_trends_free(struct mt_trend *t, int n)
{
	int i;

	for (i = 0; t && i < n; i++)
		free(t[i].pt);
	free(t);
}

static int trend_one(const struct mt_cmp_hist_in *h, const struct mt_cm_metric *ref, int window,
		     const struct mt_cmp_opts *o, double *v, struct mt_trend *t)
{
	double z = mt_cmp_z(o->confidence_pct), alpha = 1 - o->confidence_pct / 100;
	int r, which;
	double tol = mt_cmp_tolerance(o, ref, &which);

	t->id = ref->id;
	t->name = ref->name;
	t->unit = ref->unit;
	t->higher_better = ref->higher_better;
	if (!(t->pt = calloc((size_t)h->n, sizeof(*t->pt))))
		return MT_ENOMEM;
	t->n = h->n;
	for (r = 0; r < h->n; r++) {
		struct mt_trend_point *p = &t->pt[r];
		int k = mt_cm_find(&h->runs[r], ref->id);
		int from = r - window > 0 ? r - window : 0, nv;
		const struct mt_cm_metric *last;

		p->run = h->ids ? h->ids[r] : r + 1;
		p->label = h->labels ? h->labels[r] : "";
		p->value = k >= 0 ? h->runs[r].m[k].value : NAN;
		p->base = p->lo = p->hi = NAN;
		p->verdict = NULL;
		nv = values(h, ref->id, from, r, v, &last);
		if (nv && k >= 0) {
			struct judged j;
			double band;

			baseline_judge(v, nv, last, &h->runs[r].m[k], tol, z, alpha, &j);
			band = mt_cmp_limit_pct(tol, j.noise_pct) / 100 * fabs(j.base);
			p->base = j.base;
			p->lo = j.base - band;
			p->hi = j.base + band;
			p->verdict = j.verdict;
			t->regressed += !strcmp(j.verdict, "regressed");
		}
	}
	return MT_OK;
}

static int by_regressed(const void *a, const void *b)
{
	const struct mt_trend *x = a, *y = b;

	if ((x->regressed > 0) != (y->regressed > 0))
		return x->regressed > 0 ? -1 : 1;
	return strcmp(x->id, y->id);
}

int mt_trends_build(const struct mt_cmp_hist_in *h, int window, const struct mt_cmp_opts *o,
		    int max, struct mt_trend **out, int *n, struct mt_error *err)
{
	const struct mt_cm_set *newest = h->n ? &h->runs[h->n - 1] : NULL;
	double *v;
	int i, cnt = newest ? newest->n : 0;

	*out = NULL;
	*n = 0;
	if (!cnt)
		return MT_OK;
	if (!(v = malloc((size_t)h->n * sizeof(double))) ||
	    !(*out = calloc((size_t)cnt, sizeof(**out)))) {
		free(v);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (i = 0; i < cnt; i++) {
		if (trend_one(h, &newest->m[i], window, o, v, &(*out)[i])) {
			free(v);
			mt_trends_free(*out, i + 1);
			*out = NULL;
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
	}
	free(v);
	qsort(*out, (size_t)cnt, sizeof(**out), by_regressed);
	if (max > 0 && cnt > max) {
		for (i = max; i < cnt; i++)
			free((*out)[i].pt);
		cnt = max;
	}
	*n = cnt;
	return MT_OK;
}
