/* SPDX-License-Identifier: MIT */
/* tune: validate, correct, re-rank, validate again (tune.h). */
#include "tune.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "logparse.h"
#include "runner.h"

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

static int counts(const struct mt_vcand *c)
{
	return c->status == MT_VS_OK && c->has_measured && c->pred.step_s > 0 &&
	       isfinite(c->pred.step_s);
}

double mt_tune_corrected(const struct mt_validation *v, int j)
{
	const struct mt_vcand *c = &v->cand[j];
	double sum = 0;
	int i, best = -1, n = 0;

	if (counts(c))
		return c->meas.step_s;
	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *m = &v->cand[i];
		int a;

		if (i == j || !counts(m))
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

static int measured_best(const struct mt_validation *v)
{
	int i, b = -1;

	for (i = 0; i < v->ncand; i++)
		if (counts(&v->cand[i]) && (b < 0 || v->cand[i].meas.step_s < v->cand[b].meas.step_s))
			b = i;
	return b;
}

struct ranked {
	int i;
	double corr;
};

static int by_corr(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;

	if (a->corr != b->corr)
		return a->corr < b->corr ? -1 : 1;
	return a->i - b->i;
}

/* the next candidates to run: those not tried, by corrected step; returns
 * how many are left (out: the first k of them) */
static int pick(const struct mt_validation *v, const char *tried, int k, int *out, double *corr)
{
	struct ranked *r = calloc((size_t)v->ncand + 1, sizeof(*r));
	int i, n = 0;

	if (!r)
		abort();
	for (i = 0; i < v->ncand; i++) {
		if (tried[i])
			continue;
		corr[i] = mt_tune_corrected(v, i);
		r[n].i = i;
		r[n].corr = corr[i];
		n++;
	}
	qsort(r, (size_t)n, sizeof(*r), by_corr);
	for (i = 0; i < n && i < k; i++)
		out[i] = r[i].i;
	free(r);
	return n;
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

int mt_tune(struct mt_validation *v, const cJSON *advice, const struct mt_tune_opts *o,
	    struct mt_tune_result *r, struct mt_error *err)
{
	char *tried = calloc((size_t)v->ncand + 1, 1);
	int *next = calloc((size_t)o->per_round + 1, sizeof(int));
	double *corr = calloc((size_t)v->ncand + 1, sizeof(double));
	int i, n, rc = MT_OK, best = -1;

	if (!tried || !next || !corr)
		abort();
	memset(r, 0, sizeof(*r));
	r->best = -1;
	for (i = 0; i < v->ncand; i++) /* what an earlier tune ran (resume) */
		tried[i] = v->cand[i].status != MT_VS_NOT_RUN;
	best = measured_best(v);
	r->why = "every candidate of the list was run";
	for (;;) {
		if (o->max_rounds > 0 && r->rounds >= o->max_rounds) {
			r->why = "the last round (--max-rounds) was run";
			break;
		}
		n = pick(v, tried, o->per_round, next, corr);
		if (n == 0)
			break;
		if (n > o->per_round)
			n = o->per_round;
		r->rounds++;
		for (i = 0; i < n; i++) {
			if ((o->v.stop && *o->v.stop) ||
			    (o->v.deadline > 0 && mt_now() > o->v.deadline))
				break;
			tried[next[i]] = 1;
			if ((rc = mt_validate_one(v, advice, next[i], &o->v, err)) != MT_OK)
				goto out;
			r->runs++;
		}
		r->best = measured_best(v);
		round_line(o->v.progress, v, r->rounds, next, i, corr, r->best, r->best != best);
		if (o->v.stop && *o->v.stop) {
			r->why = "interrupted";
			break;
		}
		if (o->v.deadline > 0 && mt_now() > o->v.deadline) {
			r->why = "the --budget ended";
			break;
		}
		if (r->rounds > 1 && r->best >= 0 && r->best == best) {
			r->stable = 1;
			r->why = "a round left the measured best unchanged";
			break;
		}
		best = r->best;
	}
	for (i = 0; i < v->ncand; i++)
		if (!tried[i] && v->cand[i].status == MT_VS_NOT_RUN) {
			free(v->cand[i].reason);
			v->cand[i].reason = strdup("not run: tune stopped first");
		}
	if (o->v.out)
		rc = mt_validation_write(o->v.out, v, err);
out:
	free(tried);
	free(next);
	free(corr);
	return rc;
}
