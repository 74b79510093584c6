/* SPDX-License-Identifier: MIT */
/* tune: validate, correct, re-rank, validate again (tune.h). */
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/jsonr.h"
#include "../perfmodel/cluster.h"
#include "fit.h"
#include "logparse.h"
#include "runner.h"

/* ------------------------------------------------ the most alike run */

static int same_num(const cJSON *a, const cJSON *b, const char *key)
{
	return mt_jget_num(a, key, -1) == mt_jget_num(b, key, -1);
}

static int same_str(const cJSON *a, const cJSON *b, const char *key)
{
	return !strcmp(mt_jget_strd(a, key, ""), mt_jget_strd(b, key, ""));
}

/* how alike two configurations are: the count of equal knobs */
static int alike(const cJSON *a, const cJSON *b)
{
	static const char *const nums[] = { "tp", "pp", "vpp", "cp", "ep", "etp", "mbs", NULL };
	int i, n = 0;

	for (i = 0; nums[i]; i++)
		n += same_num(a, b, nums[i]);
	n += same_str(a, b, "recompute");
	n += same_str(a, b, "cp_comm_type");
	n += (mt_jget_num(a, "offload_layers", 0) > 0) == (mt_jget_num(b, "offload_layers", 0) > 0);
	return n;
}

static int tune_counts(const struct mt_vcand *c)
{
	return c->status == MT_VS_OK && c->has_measured && c->meas.step_s > 0 &&
	       c->pred.step_s > 0 && isfinite(c->pred.step_s);
}

/* candidate j's prediction scaled by the measured/predicted ratio of the
 * most alike run (the mean of those tied); its measurement when it ran */
static double alike_ratio(const struct mt_validation *v, int j)
{
	const struct mt_vcand *c = &v->cand[j];
	double sum = 0;
	int i, best = -1, n = 0;

	if (tune_counts(c))
		return c->meas.step_s;
	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *m = &v->cand[i];
		int a;

		if (i == j || !tune_counts(m))
			continue;
		a = alike(c->config, m->config);
		if (a > best) {
			best = a;
			sum = 0;
			n = 0;
		}
		if (a == best) {
			sum += m->meas.step_s / m->pred.step_s;
			n++;
		}
	}
	return n ? c->pred.step_s * sum / n : c->pred.step_s;
}

/* ------------------------------------------------------ the correction */

struct corr {
	struct mt_cluster *base; /* the profile the advice names */
	const char *path;        /* the advice, for messages */
	double *step;            /* per candidate, the corrected prediction */
	int nfit;                /* runs it was fitted from; 0: none, step = prediction */
	char text[512];          /* what it is, in words */
};

/* The profile the predictions were made on: the advice's job.cluster_source
 * where that file can be read, else its job.cluster by name. */
static int load_base(const cJSON *advice, const char *file, struct mt_cluster **out,
		     struct mt_error *err)
{
	const char *src = mt_jget_strd(advice, "job.cluster_source", "");
	const char *name = mt_jget_strd(advice, "job.cluster", "");
	struct mt_error e2 = MT_ERROR_INIT;
	int rc;

	*out = NULL;
	if (*src && access(src, R_OK) == 0) {
		if ((rc = mt_cluster_load(src, out, &e2)) == MT_OK)
			return MT_OK;
		if (rc == MT_ENOMEM) /* else the profile by its name */
			return mt_error_set(err, MT_ENOMEM, "%s", e2.msg);
	}
	if (!*name)
		return mt_error_set(err, MT_EINVAL, "%s: field 'job.cluster': expected the name of "
				    "the profile the predictions were made on (tune corrects them on "
				    "it)", file);
	if ((rc = mt_cluster_load(name, out, &e2)) == MT_OK)
		return MT_OK;
	return mt_error_set(err, rc == MT_ENOMEM ? MT_ENOMEM : MT_EINVAL, "%s: field "
			    "'job.cluster': the profile '%s' cannot be loaded to correct the "
			    "predictions on it: %s", file, name, e2.msg);
}

/* every candidate predicted on the base with k (NULL: none) into out */
static int predict_all(const struct mt_validation *v, const struct mt_vset *s,
		       const struct corr *k, const struct mt_corr *f, double *out,
		       struct mt_error *err)
{
	char where[64];
	int i, rc;

	for (i = 0; i < v->ncand; i++) {
		snprintf(where, sizeof(where), "candidates[%d].config", i);
		if (!cJSON_IsObject(v->cand[i].config))
			return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected the candidate's "
					    "configuration object", s->path, where);
		if ((rc = mt_vset_predict(s, k->base, f, v->cand[i].config, where, &out[i], err)))
			return rc;
	}
	return MT_OK;
}

/* the correction in words (k->text); MT_ENOMEM when there is no room for them */
static int describe(struct corr *k, const struct mt_vfit *f, int n)
{
	struct sbuf sb;
	const char *why = "no factor is exercised by the runs";
	int i, rc;

	sbuf_init(&sb);
	if (f->nfit > 0) {
		sbuf_addf(&sb, "calibrate --from-validation's factors from %d run%s: ", n,
			  n == 1 ? "" : "s");
		mt_vfit_text(&sb, f);
		if (isfinite(f->loo_before) && isfinite(f->loo_after))
			sbuf_addf(&sb, " (leave-one-out step error %.1f%% -> %.1f%%)",
				  100 * f->loo_before, 100 * f->loo_after);
	} else {
		for (i = 0; i < f->ndrop; i++)
			if (!strncmp(f->drop_why[i], "fitted, but", 11))
				why = f->drop_why[i];
		sbuf_addf(&sb, "no factor kept (%s): the measured/predicted ratio of the most alike "
			  "run, from %d run%s", why, n, n == 1 ? "" : "s");
	}
	snprintf(k->text, sizeof(k->text), "%s", sb.buf ? sb.buf : "");
	rc = sb.failed ? MT_ENOMEM : MT_OK;
	sbuf_release(&sb);
	return rc;
}

/* Fit the correction from the runs of v that ended ok and re-predict every
 * candidate with it (k->step); with none, k->step is the prediction.  The
 * configurations are read back every time, so a first call before any run
 * checks that they can be. */
static int correct(const struct mt_validation *v, struct corr *k, struct mt_error *err)
{
	struct mt_vset set;
	struct mt_vfit fit;
	int i, n = 0, rc;

	memset(&set, 0, sizeof(set));
	memset(&fit, 0, sizeof(fit));
	for (i = 0; i < v->ncand; i++)
		n += tune_counts(&v->cand[i]);
	k->nfit = n;
	if ((rc = mt_vset_add(&set, v, k->path, err)))
		goto out;
	if (n == 0) {
		if ((rc = predict_all(v, &set, k, NULL, k->step, err)))
			goto out;
		for (i = 0; i < v->ncand; i++)
			k->step[i] = v->cand[i].pred.step_s;
		snprintf(k->text, sizeof(k->text), "none (no run has ended ok)");
		goto out;
	}
	if ((rc = mt_vfit_run(&set, k->base, &fit, err)))
		goto out;
	if ((rc = describe(k, &fit, n)))
		goto out_nomem;
	if (fit.nfit > 0)
		rc = predict_all(v, &set, k, &fit.corr, k->step, err);
	else
		for (i = 0; i < v->ncand; i++)
			k->step[i] = alike_ratio(v, i);
out:
	mt_vfit_free(&fit);
	mt_vset_free(&set);
	return rc;
out_nomem:
	rc = mt_error_set(err, MT_ENOMEM, "out of memory");
	goto out;
}

/* ------------------------------------------------------------ ordering */

struct ranked {
	int i;
	double key;
};

static int by_key(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->i - b->i;
}

/* the candidates i with use[i] (NULL: all) by key[i] (NAN last), ties in list
 * order, into out; returns how many, or MT_ENOMEM (out untouched) */
static int order_by(const struct mt_validation *v, const char *use, const double *key, int *out)
{
	struct ranked *r = calloc((size_t)v->ncand + 1, sizeof(*r));
	int i, n = 0;

	if (!r)
		return MT_ENOMEM;
	for (i = 0; i < v->ncand; i++) {
		if (use && !use[i])
			continue;
		r[n].i = i;
		r[n].key = isfinite(key[i]) ? key[i] : INFINITY;
		n++;
	}
	qsort(r, (size_t)n, sizeof(*r), by_key);
	for (i = 0; i < n; i++)
		out[i] = r[i].i;
	free(r);
	return n;
}

static int measured_best(const struct mt_validation *v)
{
	int i, b = -1;

	for (i = 0; i < v->ncand; i++)
		if (tune_counts(&v->cand[i]) && (b < 0 || v->cand[i].meas.step_s < v->cand[b].meas.step_s))
			b = i;
	return b;
}

/* the rank part of a candidate's name ("c3" of "c3-tp1-pp1-mbs8") */
static void rank_word(struct sbuf *sb, const char *name)
{
	const char *dash = strchr(name, '-');

	sbuf_addf(sb, " %.*s", dash ? (int)(dash - name) : (int)strlen(name), name);
}

/* ------------------------------------------------------------ progress */

static void run_line(FILE *f, const struct mt_vcand *c)
{
	if (!f || !c->has_measured || c->status != MT_VS_OK)
		return;
	if (c->tune_fitted_from > 0)
		fprintf(f, "  run %d: predicted %.4g s, corrected %.4g s (from %d run%s), measured "
			"%.4g s: error %+.1f%% uncorrected, %+.1f%% corrected\n", c->tune_run,
			c->pred.step_s, c->tune_corrected_s, c->tune_fitted_from,
			c->tune_fitted_from == 1 ? "" : "s", c->meas.step_s,
			100 * mt_vrel(c->meas.step_s, c->pred.step_s),
			100 * mt_vrel(c->meas.step_s, c->tune_corrected_s));
	else
		fprintf(f, "  run %d: predicted %.4g s, measured %.4g s: error %+.1f%% (no correction "
			"yet)\n", c->tune_run, c->pred.step_s, c->meas.step_s,
			100 * mt_vrel(c->meas.step_s, c->pred.step_s));
	fflush(f);
}

static void round_line(FILE *f, const struct mt_validation *v, int round, const int *ran, int n,
		       const double *corr, int best, int changed)
{
	int i;

	if (!f)
		return;
	fprintf(f, "round %d: ran", round);
	for (i = 0; i < n; i++)
		fprintf(f, "%s %s (expected %.4g s)", i ? "," : "", v->cand[ran[i]].name,
			corr[ran[i]]);
	fprintf(f, "\n");
	if (best >= 0)
		fprintf(f, "  measured best: %s, %.4g s per step (predicted %.4g s)%s\n",
			v->cand[best].name, v->cand[best].meas.step_s, v->cand[best].pred.step_s,
			changed ? "" : ", unchanged");
	else
		fprintf(f, "  no candidate has run to the end yet\n");
	fflush(f);
}

/* the correction just fitted, and the candidates not yet run by it;
 * MT_ENOMEM (nothing printed) when there is no room to order them */
static int correction_line(FILE *f, const struct mt_validation *v, const struct corr *k,
			   const char *tried)
{
	int *ord, i, n = MT_ENOMEM;
	char *left;
	struct sbuf sb;

	if (!f || k->nfit == 0)
		return MT_OK;
	ord = calloc((size_t)v->ncand + 1, sizeof(int));
	left = calloc((size_t)v->ncand + 1, 1);
	if (ord && left) {
		for (i = 0; i < v->ncand; i++)
			left[i] = !tried[i];
		n = order_by(v, left, k->step, ord);
	}
	free(left);
	if (n < 0) {
		free(ord);
		return MT_ENOMEM;
	}
	sbuf_init(&sb);
	for (i = 0; i < n && i < 4; i++)
		sbuf_addf(&sb, "%s%s %.4g s (%.4g uncorrected)", i ? ", " : "", v->cand[ord[i]].name,
			  k->step[ord[i]], v->cand[ord[i]].pred.step_s);
	free(ord);
	if (sb.failed) {
		sbuf_release(&sb);
		return MT_ENOMEM;
	}
	fprintf(f, "  correction: %s\n", k->text);
	if (n)
		fprintf(f, "  not run yet, by the corrected step: %s%s\n", sb.buf,
			n > 4 ? ", ..." : "");
	fflush(f);
	sbuf_release(&sb);
	return MT_OK;
}

/* ------------------------------------------------------------ the loop */

/* the document's tune summary from the last correction; MT_ENOMEM (no
 * summary: v->tune.on 0) when there is no room for it */
static int summarize(struct mt_validation *v, const struct corr *k, const char *why, int best)
{
	struct mt_vtune *t = &v->tune;
	int *pred = calloc((size_t)v->ncand + 1, sizeof(int));
	double *key = calloc((size_t)v->ncand + 1, sizeof(double));
	int i, rc = MT_ENOMEM;

	free(t->order);
	free(t->corrected_s);
	t->on = 0;
	t->order = calloc((size_t)v->ncand + 1, sizeof(int));
	t->corrected_s = calloc((size_t)v->ncand + 1, sizeof(double));
	if (!pred || !key || !t->order || !t->corrected_s)
		goto out;
	t->on = 1;
	snprintf(t->stopped, sizeof(t->stopped), "%s", why);
	snprintf(t->correction, sizeof(t->correction), "%s", k->text);
	t->runs = 0;
	for (i = 0; i < v->ncand; i++) {
		t->runs += v->cand[i].status != MT_VS_NOT_RUN;
		t->corrected_s[i] = k->step[i];
		key[i] = v->cand[i].pred.step_s;
	}
	t->best_run = best >= 0 ? v->cand[best].tune_run : 0;
	if (order_by(v, NULL, key, pred) < 0 || order_by(v, NULL, k->step, t->order) < 0)
		goto out;
	t->ranking_changed = memcmp(pred, t->order, (size_t)v->ncand * sizeof(int)) != 0;
	rc = MT_OK;
out:
	if (rc != MT_OK) {
		free(t->order);
		free(t->corrected_s);
		t->order = NULL;
		t->corrected_s = NULL;
		t->on = 0;
	}
	free(pred);
	free(key);
	return rc;
}

/* run candidate j as run number `no` with the correction it was chosen by */
static int run_one(struct mt_validation *v, const cJSON *advice, int j, int no,
		   const struct corr *k, const struct mt_tune_opts *o, struct mt_error *err)
{
	struct mt_vcand *c = &v->cand[j];
	int rc;

	c->tune_run = no;
	c->tune_fitted_from = k->nfit;
	c->tune_corrected_s = k->nfit ? k->step[j] : NAN;
	if ((rc = mt_validate_one(v, advice, j, &o->v, err)) != MT_OK)
		return rc;
	if (c->status == MT_VS_NOT_RUN) { /* cut by the budget or an interruption */
		c->tune_run = c->tune_fitted_from = 0;
		c->tune_corrected_s = NAN;
		return MT_OK;
	}
	run_line(o->v.progress, c);
	return MT_OK;
}

static int stopping(const struct mt_tune_opts *o)
{
	return (o->v.stop && *o->v.stop) || (o->v.deadline > 0 && mt_now() > o->v.deadline);
}

/* the candidates not tried, by the corrected step, into out (ncand room);
 * returns how many, or MT_ENOMEM */
static int tune_pick(const struct mt_validation *v, const char *tried, const double *step, int *out)
{
	char *left = calloc((size_t)v->ncand + 1, 1);
	int i, n;

	if (!left)
		return MT_ENOMEM;
	for (i = 0; i < v->ncand; i++)
		left[i] = !tried[i];
	n = order_by(v, left, step, out);
	free(left);
	return n;
}

/* the rounds; r->why says why they ended */
static int rounds(struct mt_validation *v, const cJSON *advice, const struct mt_tune_opts *o,
		  struct corr *k, char *tried, int *next, struct mt_tune_result *r,
		  struct mt_error *err)
{
	int per = o->runs > 0 ? 1 : o->per_round;
	int i, n, rc, best = measured_best(v), no = 0, done = 0;

	for (i = 0; i < v->ncand; i++) {
		done += tried[i];
		if (v->cand[i].tune_run > no)
			no = v->cand[i].tune_run;
	}
	r->why = "every candidate of the list was run";
	for (;;) {
		if ((rc = correct(v, k, err)))
			return rc;
		if (r->rounds > 0 && correction_line(o->v.progress, v, k, tried) != MT_OK)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if (o->runs > 0 && done >= o->runs) {
			r->why = "the runs --runs asked for were made";
			break;
		}
		if (o->runs == 0 && o->max_rounds > 0 && r->rounds >= o->max_rounds) {
			r->why = "the last round (--max-rounds) was run";
			break;
		}
		if ((n = tune_pick(v, tried, k->step, next)) < 0)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		if (n == 0)
			break;
		if (n > per)
			n = per;
		r->rounds++;
		for (i = 0; i < n && !stopping(o); i++) {
			tried[next[i]] = 1;
			if ((rc = run_one(v, advice, next[i], no + 1, k, o, err)) != MT_OK)
				return rc;
			no += v->cand[next[i]].tune_run > 0;
			done++;
			r->runs++;
		}
		r->best = measured_best(v);
		round_line(o->v.progress, v, r->rounds, next, i, k->step, r->best, r->best != best);
		if (o->v.stop && *o->v.stop) {
			r->why = "interrupted";
			break;
		}
		if (o->v.deadline > 0 && mt_now() > o->v.deadline) {
			r->why = "the --budget ended";
			break;
		}
		if (o->runs == 0 && r->rounds > 1 && r->best >= 0 && r->best == best) {
			r->stable = 1;
			r->why = "a round left the measured best unchanged";
			break;
		}
		best = r->best;
	}
	return correct(v, k, err); /* from every run, for the summary */
}

int mt_tune(struct mt_validation *v, const cJSON *advice, const struct mt_tune_opts *o,
	    struct mt_tune_result *r, struct mt_error *err)
{
	char *tried = calloc((size_t)v->ncand + 1, 1);
	int *next = calloc((size_t)v->ncand + 1, sizeof(int));
	struct corr k;
	int i, rc;

	memset(&k, 0, sizeof(k));
	k.step = calloc((size_t)v->ncand + 1, sizeof(double));
	k.path = o->v.advice_path; /* where the configurations come from */
	memset(r, 0, sizeof(*r));
	r->best = -1;
	if (!tried || !next || !k.step) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < v->ncand; i++) /* what an earlier tune ran (resume) */
		tried[i] = v->cand[i].status != MT_VS_NOT_RUN;
	if ((rc = load_base(advice, o->v.advice_path, &k.base, err)) ||
	    (rc = rounds(v, advice, o, &k, tried, next, r, err)))
		goto out;
	r->best = measured_best(v);
	if (summarize(v, &k, r->why, r->best) != MT_OK) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < v->ncand; i++)
		if (!tried[i] && v->cand[i].status == MT_VS_NOT_RUN) {
			free(v->cand[i].reason);
			v->cand[i].reason = strdup("not run: tune stopped first");
			if (!v->cand[i].reason) {
				rc = mt_error_set(err, MT_ENOMEM, "out of memory");
				goto out;
			}
		}
	if (o->v.out)
		rc = mt_validation_write(o->v.out, v, err);
out:
	free(tried);
	free(next);
	free(k.step);
	mt_cluster_free(k.base);
	return rc;
}

/* ------------------------------------------------------------ the text */

static void cell(struct sbuf *sb, const char *fmt, double x, int width)
{
	if (isfinite(x))
		sbuf_addf(sb, fmt, x);
	else
		sbuf_addf(sb, "%*s", width, "-");
}

int mt_tune_text(struct sbuf *sb, const struct mt_validation *v)
{
	const struct mt_vtune *t = &v->tune;
	int *ord = calloc((size_t)v->ncand + 1, sizeof(int));
	double *key = calloc((size_t)v->ncand + 1, sizeof(double));
	int i, n = 0, last = 0, rc = MT_ENOMEM;

	if (!ord || !key)
		goto out;
	for (i = 0; i < v->ncand; i++) {
		key[i] = v->cand[i].tune_run > 0 ? v->cand[i].tune_run : NAN;
		n += v->cand[i].tune_run > 0;
		if (v->cand[i].tune_run > last)
			last = v->cand[i].tune_run;
	}
	if (order_by(v, NULL, key, ord) < 0)
		goto out;
	sbuf_addf(sb, "runs in the order made, each after the first that ended ok predicted with "
		  "the correction fitted from the runs before it:\n");
	sbuf_addf(sb, "%4s  %-32s %11s %11s %10s %8s %9s  %s\n", "run", "candidate", "predicted s",
		  "corrected s", "measured s", "error", "corrected", "status");
	for (i = 0; i < n; i++) {
		const struct mt_vcand *c = &v->cand[ord[i]];
		double m = c->has_measured ? c->meas.step_s : NAN;

		sbuf_addf(sb, "%4d  %-32s ", c->tune_run, c->name);
		cell(sb, "%11.4g", c->pred.step_s, 11);
		sbuf_addc(sb, ' ');
		cell(sb, "%11.4g", c->tune_corrected_s, 11);
		sbuf_addc(sb, ' ');
		cell(sb, "%10.4g", m, 10);
		sbuf_addc(sb, ' ');
		cell(sb, "%+7.1f%%", 100 * mt_vrel(m, c->pred.step_s), 8);
		sbuf_addc(sb, ' ');
		cell(sb, "%+8.1f%%", 100 * mt_vrel(m, c->tune_corrected_s), 9);
		sbuf_addf(sb, "  %s\n", mt_vstatus_name(c->status));
	}
	for (i = 0; i < v->ncand && t->best_run > 0; i++)
		if (v->cand[i].tune_run == t->best_run)
			sbuf_addf(sb, "best of the runs: run %d of %d, %s, %.4g s per step\n",
				  t->best_run, last, v->cand[i].name, v->cand[i].meas.step_s);
	if (t->best_run <= 0)
		sbuf_addf(sb, "best of the runs: none ran to the end\n");
	sbuf_addf(sb, "correction after the last run: %s\n", t->correction);
	if (t->order) {
		for (i = 0; i < v->ncand; i++)
			key[i] = v->cand[i].pred.step_s;
		if (order_by(v, NULL, key, ord) < 0)
			goto out;
		sbuf_addf(sb, "ranking by the step, %s by the correction: uncorrected",
			  t->ranking_changed ? "changed" : "unchanged");
		for (i = 0; i < v->ncand; i++)
			rank_word(sb, v->cand[ord[i]].name);
		sbuf_adds(sb, "; corrected");
		for (i = 0; i < v->ncand; i++)
			rank_word(sb, v->cand[t->order[i]].name);
		sbuf_addc(sb, '\n');
	}
	rc = sb->failed ? MT_ENOMEM : MT_OK;
out:
	free(ord);
	free(key);
	return rc;
}
