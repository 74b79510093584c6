/* SPDX-License-Identifier: MIT */
/* fit: read measured runs, fit the correction factors
 * (validate/fit.h, docs/MODEL.md section 10). */
#include "fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../tuner/advice.h"
#include "../tuner/search.h"
#include "../perfmodel/layout.h"
#include "logparse.h"
#include "validation.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define PULL 1e-10     /* pull of every factor towards 1 */
#define EXERCISED 0.01 /* a factor must move some run's step by this share */

/* ------------------------------------------------------------ reading */

/* The advice file a validation names (read through its owner): its job's
 * model file and the settings its candidates were evaluated with.  An advice
 * file that cannot be found or read leaves them to the defaults; one whose
 * job holds a setting that cannot be read is an error, and so is memory
 * running out (MT_ENOMEM). */
static int advice_job(const char *vpath, const char *adv, char *model, size_t cap,
		      struct mt_job *job, struct mt_error *err)
{
	char alt[600];
	const char *slash = strrchr(vpath, '/');
	struct mt_advice_doc ad;
	cJSON *doc = NULL;
	int rc;

	if (!adv || !*adv)
		return MT_OK;
	if ((rc = mt_json_load(adv, &doc, NULL)) && rc != MT_ENOMEM && adv[0] != '/' && slash) {
		snprintf(alt, sizeof(alt), "%.*s/%s", (int)(slash - vpath), vpath, adv);
		doc = NULL;
		if ((rc = mt_json_load(alt, &doc, NULL)))
			doc = NULL;
	}
	if (rc == MT_ENOMEM)
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", adv);
	if (!doc)
		return MT_OK;
	if ((rc = mt_advice_read(doc, adv, "--from-validation", &ad, NULL))) {
		cJSON_Delete(doc);
		return rc == MT_ENOMEM ? mt_error_set(err, MT_ENOMEM, "%s: out of memory", adv)
				       : MT_OK;
	}
	mt_advice_model(&ad, model, cap);
	rc = mt_advice_job(doc, adv, job, err);
	mt_advice_doc_free(&ad);
	cJSON_Delete(doc);
	return rc;
}

static int push_run(struct mt_vset *s, struct mt_vrun **out)
{
	struct mt_vrun *v = realloc(s->runs, (size_t)(s->nruns + 1) * sizeof(*v));

	if (!v)
		return MT_ENOMEM;
	s->runs = v;
	*out = &v[s->nruns];
	memset(*out, 0, sizeof(**out));
	return MT_OK;
}

/* A run's pipeline layout, allocated (NULL when its split is not a layout). */
static int read_layout(const cJSON *config, const char *path, const char *where,
		       struct mt_layout **out, struct mt_error *err)
{
	struct mt_layout *l = malloc(sizeof(*l));
	int rc;

	*out = NULL;
	if (!l)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if ((rc = mt_advice_layout(config, path, where, l, err)) || l->n == 0) {
		free(l);
		return rc;
	}
	*out = l;
	return MT_OK;
}

/* The memory reports of candidate c, run `run` of the set, whose stage is
 * one of its pp: the points of the memory fit */
static int read_points(struct mt_vset *s, const struct mt_vcand *c, int run, int pp)
{
	struct mt_vmempt *p;
	int i;

	for (i = 0; i < c->nmemr; i++) {
		const struct mt_vmemrank *m = &c->memr[i];

		if (m->stage < 0 || m->stage >= pp || !(m->max_allocated > 0)) {
			s->pts_left_out++;
			continue;
		}
		if (!(p = realloc(s->pts, (size_t)(s->npts + 1) * sizeof(*p))))
			return MT_ENOMEM;
		s->pts = p;
		s->pts[s->npts++] = (struct mt_vmempt){ run, m->rank, m->stage, m->max_allocated,
							m->max_reserved > 0 ? m->max_reserved : NAN };
	}
	return MT_OK;
}

/* The runs of v that count into s; with `need`, none is an error naming the
 * statuses. */
static int read_runs(struct mt_vset *s, const struct mt_validation *v, const char *path,
		     const struct mt_job *job, int proxy, int need, struct mt_error *err)
{
	struct sbuf why;
	int i, used = 0, rc = MT_OK;

	if (v->ncand == 0)
		return mt_error_set(err, MT_EINVAL, "%s: field 'candidates': expected a non-empty array",
				    path);
	sbuf_init(&why);
	for (i = 0; i < v->ncand; i++) {
		const struct mt_vcand *c = &v->cand[i];
		int ok = c->status == MT_VS_OK;
		double step = c->has_measured ? c->meas.step_s : NAN;
		double mem = c->has_measured ? c->meas.mem_max_reserved_gib : NAN;
		char where[64];
		struct mt_vrun *r;
		struct mt_layout *lay;

		if (!ok || !(step > 0)) {
			sbuf_addf(&why, "%s%s", why.len ? ", " : "", mt_vstatus_name(c->status));
			if (ok)
				sbuf_adds(&why, " without measured.step_s");
			s->left_out++;
			continue;
		}
		if ((rc = push_run(s, &r))) {
			rc = mt_error_set(err, MT_ENOMEM, "out of memory");
			break;
		}
		snprintf(where, sizeof(where), "candidates[%d].config", i);
		if ((rc = mt_advice_config(c->config, job, path, where, &r->cfg, err)) ||
		    (rc = read_layout(c->config, path, where, &lay, err)))
			break;
		/* the run's job pins its layout, dispatcher and overlaps, so that
		 * each prediction evaluates the configuration as it ran; the set
		 * owns the layout (mt_vset_free) */
		mt_advice_eval_job(job, &r->cfg, lay, &r->job);
		snprintf(r->file, sizeof(r->file), "%s", path);
		snprintf(r->name, sizeof(r->name), "%s", c->name ? c->name : where);
		r->model = s->nmodels - 1;
		r->measured_step_s = step;
		r->measured_mem_bytes = !proxy && mem > 0 ? mem * GIB : NAN;
		if (!proxy && (rc = read_points(s, c, s->nruns, r->cfg.pp))) {
			rc = mt_error_set(err, MT_ENOMEM, "out of memory");
			break;
		}
		s->nruns++;
		used++;
	}
	if (!rc && !used && need)
		rc = mt_error_set(err, MT_EINVAL, "%s: no measured run to fit (a candidate with status "
				  "\"ok\" and measured.step_s): %d candidate%s, %s", path, i,
				  i == 1 ? "" : "s", why.len ? why.buf : "none");
	sbuf_release(&why);
	return rc;
}

static int vset_add(struct mt_vset *s, const struct mt_validation *v, const char *path, int need,
		    struct mt_error *err)
{
	struct mt_job job;
	struct mt_model *mv;
	char model[512] = "";
	int rc, proxy;
	size_t l;

	mt_job_init(&job);
	job.gpus = v->gpus;
	job.seq = v->seq;
	job.gbs = v->gbs;
	if (job.gpus < 1 || job.seq < 1 || job.gbs < 1)
		return mt_error_set(err, MT_EINVAL, "%s: fields 'gpus', 'seq', 'gbs': expected "
				    "positive numbers", path);
	proxy = v->mode && !strcmp(v->mode, "proxy");
	if ((rc = advice_job(path, v->advice, model, sizeof(model), &job, err)))
		return rc;
	if (!model[0] && v->model && *v->model)
		snprintf(model, sizeof(model), "%s", v->model);
	if (!model[0])
		return mt_error_set(err, MT_EINVAL, "%s: field 'model': expected the model's name "
				    "or file", path);
	if (!(mv = realloc(s->models, (size_t)(s->nmodels + 1) * sizeof(*mv))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	s->models = mv;
	if ((rc = mt_model_load(model, &mv[s->nmodels], err))) {
		mt_error_prefix(err, "%s: field 'model' (or its advice's job.model_source): ", path);
		return rc;
	}
	s->nmodels++;
	s->job = job;
	snprintf(s->path, sizeof(s->path), "%s", path);
	if ((rc = read_runs(s, v, path, &job, proxy, need, err)))
		return rc;
	l = strlen(s->files);
	snprintf(s->files + l, sizeof(s->files) - l, "%s%s", l ? ", " : "", path);
	return MT_OK;
}

int mt_vset_read(struct mt_vset *s, const char *path, struct mt_error *err)
{
	struct mt_validation v;
	int rc;

	if ((rc = mt_validation_load(path, "--from-validation", &v, err)))
		return rc;
	rc = vset_add(s, &v, path, 1, err);
	mt_validation_free(&v);
	return rc;
}

int mt_vset_add(struct mt_vset *s, const struct mt_validation *v, const char *path,
		struct mt_error *err)
{
	return vset_add(s, v, path, 0, err);
}

void mt_vset_free(struct mt_vset *s)
{
	int i;

	for (i = 0; i < s->nruns; i++) /* read_runs allocated the runs' layouts */
		free((void *)s->runs[i].job.pins.layout);
	free(s->models);
	free(s->runs);
	free(s->pts);
	memset(s, 0, sizeof(*s));
}

/* ---------------------------------------------------------------- fit */

struct fitx {
	const struct mt_vset *s;
	const struct mt_cluster *base;
	struct mt_error *err;
	int failed;
	int rc;         /* the first failure's status (its message is in err) */
};

/* no room to fit: the first failure's message and status */
static void fit_nomem(struct fitx *X)
{
	if (!X->failed++)
		X->rc = mt_error_set(X->err, MT_ENOMEM, "out of memory");
}

/* The step and peak of cfg under job on base with factors f (NULL: none);
 * NAN with e2 set when it cannot be evaluated. */
static double eval_step(const struct mt_model *m, const struct mt_cluster *base,
			const struct mt_job *job, struct mt_config cfg, const double *f, double *mem,
			struct mt_error *e2)
{
	struct mt_cluster c = *base;
	struct mt_eval e;

	mt_corr_init(&c.corr);
	if (f) {
		c.corr.on = 1;
		memcpy(c.corr.f, f, sizeof(c.corr.f));
	}
	if (mt_evaluate(m, &c, job, NULL, &cfg, &e, e2))
		return NAN;
	if (mem)
		*mem = e.mem.total;
	return e.time.step;
}

/* Predicted step and peak of run i with factors f (NULL: none). */
static double predict(struct fitx *X, int i, const double *f, double *mem)
{
	const struct mt_vrun *r = &X->s->runs[i];
	struct mt_error e2 = MT_ERROR_INIT;
	double step = eval_step(&X->s->models[r->model], X->base, &r->job, r->cfg, f, mem, &e2);

	if (isnan(step) && !X->failed++)
		X->rc = mt_error_set(X->err, e2.code == MT_ENOMEM ? MT_ENOMEM : MT_EINVAL,
				     "%s: %s: the configuration cannot be evaluated: %s", r->file,
				     r->name, e2.msg);
	return step;
}

int mt_vset_predict(const struct mt_vset *s, const struct mt_cluster *base,
		    const struct mt_corr *k, const cJSON *config, const char *where, double *step,
		    struct mt_error *err)
{
	struct mt_error e2 = MT_ERROR_INIT;
	struct mt_layout *lay = NULL;
	struct mt_config cfg;
	struct mt_job job;
	int rc;

	*step = NAN;
	if (s->nmodels < 1)
		return mt_error_set(err, MT_EINVAL, "no validation read to predict from");
	if ((rc = mt_advice_config(config, &s->job, s->path, where, &cfg, err)) ||
	    (rc = read_layout(config, s->path, where, &lay, err)))
		return rc;
	mt_advice_eval_job(&s->job, &cfg, lay, &job);
	*step = eval_step(&s->models[s->nmodels - 1], base, &job, cfg, k && k->on ? k->f : NULL,
			  NULL, &e2);
	free(lay);
	if (isnan(*step))
		return mt_error_set(err, e2.code == MT_ENOMEM ? MT_ENOMEM : MT_EINVAL,
				    "%s: %s: the configuration cannot be evaluated: %s", s->path, where,
				    e2.msg);
	return MT_OK;
}

/* The parameters of a fit: factor fac[i] takes the value of parameter of[i];
 * with more factors than parameters (k), the first k - 1 have one each and
 * the others share the last (mt_vfit). */
struct params {
	int nf, k;
	int fac[MT_CORR_N], of[MT_CORR_N];
};

static void params_make(struct params *P, const int *fac, int nf, int kmax)
{
	int i;

	P->nf = nf;
	P->k = nf < kmax ? nf : kmax;
	for (i = 0; i < nf; i++) {
		P->fac[i] = fac[i];
		P->of[i] = i < P->k ? i : P->k - 1;
	}
}

static double get_param(const double *f, const struct params *P, int j)
{
	int i;

	for (i = 0; i < P->nf; i++)
		if (P->of[i] == j)
			return f[P->fac[i]];
	return 1;
}

static void set_param(double *f, const struct params *P, int j, double v)
{
	int i;

	for (i = 0; i < P->nf; i++)
		if (P->of[i] == j)
			f[P->fac[i]] = v;
}

static int param_size(const struct params *P, int j)
{
	int i, n = 0;

	for (i = 0; i < P->nf; i++)
		n += P->of[i] == j;
	return n;
}

/* Sum of squared relative errors over the runs of `mask`, with the pull. */
static double sse(struct fitx *X, const int *mask, const double *f, const struct params *P)
{
	double s = 0;
	int i;

	for (i = 0; i < X->s->nruns; i++)
		if (mask[i]) {
			double r = predict(X, i, f, NULL) / X->s->runs[i].measured_step_s - 1;

			s += r * r;
		}
	for (i = 0; i < P->nf; i++)
		s += PULL * (f[P->fac[i]] - 1) * (f[P->fac[i]] - 1);
	return s;
}

/* Solve the k x k system a x = b in place (Gaussian elimination, partial
 * pivoting); 0 when singular. */
static int solve(double a[MT_CORR_N][MT_CORR_N], double *b, int k)
{
	int i, j, c;

	for (c = 0; c < k; c++) {
		int p = c;

		for (i = c + 1; i < k; i++)
			if (fabs(a[i][c]) > fabs(a[p][c]))
				p = i;
		if (fabs(a[p][c]) < 1e-300)
			return 0;
		for (j = 0; j < k; j++) {
			double t = a[c][j];

			a[c][j] = a[p][j];
			a[p][j] = t;
		}
		{
			double t = b[c];

			b[c] = b[p];
			b[p] = t;
		}
		for (i = c + 1; i < k; i++) {
			double m = a[i][c] / a[c][c];

			for (j = c; j < k; j++)
				a[i][j] -= m * a[c][j];
			b[i] -= m * b[c];
		}
	}
	for (c = k - 1; c >= 0; c--) {
		for (j = c + 1; j < k; j++)
			b[c] -= a[c][j] * b[j];
		b[c] /= a[c][c];
	}
	return 1;
}

/* Gauss-Newton over the parameters P on the runs of `mask`; f in and out. */
static void gauss_newton(struct fitx *X, const int *mask, const struct params *P, double *f)
{
	int n = X->s->nruns, k = P->k, it, i, j, l;
	double *r = calloc((size_t)n, sizeof(double)), *J = calloc((size_t)n * MT_CORR_N, sizeof(double));
	double cur = sse(X, mask, f, P);

	if (!r || !J)
		fit_nomem(X);
	for (it = 0; r && J && it < 40 && !X->failed; it++) {
		double A[MT_CORR_N][MT_CORR_N] = { { 0 } }, g[MT_CORR_N] = { 0 }, trial[MT_CORR_N];
		double step = 1, moved = 0, next;

		for (i = 0; i < n; i++) {
			double m = X->s->runs[i].measured_step_s, p;

			if (!mask[i])
				continue;
			p = predict(X, i, f, NULL);
			r[i] = p / m - 1;
			for (j = 0; j < k; j++) {
				double save = get_param(f, P, j), h = 1e-4 * save;

				set_param(f, P, j, save + h);
				J[i * MT_CORR_N + j] = (predict(X, i, f, NULL) - p) / h / m;
				set_param(f, P, j, save);
			}
		}
		for (j = 0; j < k; j++) {
			for (l = 0; l < k; l++)
				for (i = 0; i < n; i++)
					if (mask[i])
						A[j][l] += J[i * MT_CORR_N + j] * J[i * MT_CORR_N + l];
			A[j][j] += PULL * param_size(P, j);
			g[j] = -PULL * param_size(P, j) * (get_param(f, P, j) - 1);
			for (i = 0; i < n; i++)
				if (mask[i])
					g[j] -= J[i * MT_CORR_N + j] * r[i];
		}
		if (!solve(A, g, k))
			break;
		/* halve the step until the error falls */
		for (l = 0; l < 12; l++, step /= 2) {
			memcpy(trial, f, sizeof(trial));
			for (j = 0; j < k; j++)
				set_param(trial, P, j, fmin(MT_CORR_MAX, fmax(MT_CORR_MIN,
					  get_param(f, P, j) + step * g[j])));
			next = sse(X, mask, trial, P);
			if (next <= cur)
				break;
		}
		if (l == 12)
			break;
		for (j = 0; j < k; j++)
			moved = fmax(moved, fabs(get_param(trial, P, j) - get_param(f, P, j)));
		memcpy(f, trial, sizeof(trial));
		cur = next;
		if (moved < 1e-9)
			break;
	}
	free(r);
	free(J);
}

static void ones(double *f)
{
	int j;

	for (j = 0; j < MT_CORR_N; j++)
		f[j] = 1;
}

/* Which factors to fit: the exercised ones, largest mean share of the step
 * first (parameters() says how many parameters they take). */
static void choose(struct fitx *X, struct mt_vfit *o)
{
	double share[MT_CORR_N] = { 0 }, top[MT_CORR_N] = { 0 }, f[MT_CORR_N];
	int n = X->s->nruns, i, j, ne = 0;

	for (j = 0; j < MT_CORR_N; j++) {
		ones(f);
		f[j] = 1.1;
		for (i = 0; i < n; i++) {
			double s = (predict(X, i, f, NULL) / o->pred_before[i] - 1) / 0.1;

			share[j] += s / n;
			top[j] = fmax(top[j], s);
		}
	}
	for (j = 0; j < MT_CORR_N; j++) {
		if (top[j] >= EXERCISED) {
			int p = ne++;

			while (p > 0 && share[o->fit[p - 1]] < share[j]) {
				o->fit[p] = o->fit[p - 1];
				p--;
			}
			o->fit[p] = j;
		} else {
			o->drop[o->ndrop] = j;
			snprintf(o->drop_why[o->ndrop++], sizeof(o->drop_why[0]),
				 "not exercised: moves no run's step by 1%%");
		}
	}
	o->nfit = ne;
}

/* The leave-one-out error with k parameters: each run predicted by the fit
 * over the others, mean |predicted / measured - 1|; NAN below two runs. */
static double loo(struct fitx *X, const struct mt_vfit *o, int k)
{
	int n = X->s->nruns, i, j, *mask = calloc((size_t)n, sizeof(int));
	double f[MT_CORR_N], ea = 0;
	struct params P;

	if (!mask || n < 2) {
		if (!mask && n >= 2)
			fit_nomem(X);
		free(mask);
		return NAN;
	}
	params_make(&P, o->fit, o->nfit, k);
	for (i = 0; i < n; i++) {
		for (j = 0; j < n; j++)
			mask[j] = j != i;
		ones(f);
		gauss_newton(X, mask, &P, f);
		ea += fabs(predict(X, i, f, NULL) / X->s->runs[i].measured_step_s - 1) / n;
	}
	free(mask);
	return ea;
}

/* How many parameters: 1, or with three runs and more the count up to
 * max(1, runs - 2) (what a fit over the runs but one allows) whose
 * leave-one-out error is the least, the fewest where equal; o->loo_* set. */
static int parameters(struct fitx *X, struct mt_vfit *o)
{
	int n = X->s->nruns, i, k, best = 1, kmax = n - 2 < o->nfit ? n - 2 : o->nfit;
	double e;

	o->loo_before = o->loo_after = NAN;
	if (n < 2)
		return 1;
	o->loo_before = 0;
	for (i = 0; i < n; i++)
		o->loo_before += fabs(o->pred_before[i] / X->s->runs[i].measured_step_s - 1) / n;
	o->loo_after = loo(X, o, 1);
	for (k = 2; k <= kmax; k++)
		if ((e = loo(X, o, k)) < o->loo_after) {
			o->loo_after = e;
			best = k;
		}
	return best;
}

/* The memory term from the worst rank's max reserved against the predicted
 * peak: records without the ranks' reports */
static void memory_fit_worst(const struct mt_vset *s, struct mt_vfit *o)
{
	double sum = 0, eb = 0, ea = 0;
	int i, n = 0, nl = 0;

	for (i = 0; i < s->nruns; i++)
		if (isfinite(s->runs[i].measured_mem_bytes)) {
			sum += s->runs[i].measured_mem_bytes - o->mem_before[i];
			n++;
		}
	o->mem_runs = n;
	o->corr.mem_bytes = n ? sum / n : 0;
	o->mem_loo_before = o->mem_loo_after = NAN;
	if (n < 2)
		return;
	for (i = 0; i < s->nruns; i++) {
		double m = s->runs[i].measured_mem_bytes, d;

		if (!isfinite(m))
			continue;
		d = (sum - (m - o->mem_before[i])) / (n - 1);
		eb += fabs(o->mem_before[i] / m - 1);
		ea += fabs((o->mem_before[i] + d) / m - 1);
		nl++;
	}
	o->mem_loo_before = eb / nl;
	o->mem_loo_after = ea / nl;
	if (!(o->mem_loo_after < o->mem_loo_before)) /* no better on runs left out */
		o->corr.mem_bytes = 0;
}

/* The step memory factor minimising sum ((a + k x) / m - 1)^2 over the points
 * other than `skip` (-1: none), a the predicted allocated, x the predicted
 * max allocated less it, m the measured max allocated; 1 when no point
 * predicts memory allocated inside a step. */
static double step_factor(const struct mt_vset *s, const struct mt_vfit *o, int skip)
{
	double num = 0, den = 0;
	int i;

	for (i = 0; i < s->npts; i++) {
		double m = s->pts[i].max_allocated, x = (o->pt_max_alloc[i] - o->pt_alloc[i]) / m;

		if (i == skip)
			continue;
		num += x * (1 - o->pt_alloc[i] / m);
		den += x * x;
	}
	return den > 0 ? fmin(MT_CORR_MAX, fmax(MT_CORR_MIN, num / den)) : 1;
}

/* Each point's stage predicted without correction (docs/MODEL.md 4.8) */
static int point_predictions(struct fitx *X, struct mt_vfit *o)
{
	const struct mt_vset *s = X->s;
	struct mt_cluster c = *X->base;
	struct mt_mem *st = NULL;
	int i, run = -1, pp = 0;

	mt_corr_init(&c.corr);
	for (i = 0; i < s->npts; i++) {
		const struct mt_vrun *r = &s->runs[s->pts[i].run];
		struct mt_error e2 = MT_ERROR_INIT;

		if (s->pts[i].run != run) {
			run = s->pts[i].run;
			o->mem_point_runs++;
			free(st);
			pp = r->cfg.pp > 0 ? r->cfg.pp : 1;
			if (!(st = calloc((size_t)pp, sizeof(*st))))
				return mt_error_set(X->err, MT_ENOMEM, "out of memory");
			if (mt_eval_stages(&s->models[r->model], &c, &r->job, &r->cfg, st, &e2)) {
				free(st);
				return mt_error_set(X->err, e2.code == MT_ENOMEM ? MT_ENOMEM : MT_EINVAL,
						    "%s: %s: the stages' memory cannot be evaluated: %s",
						    r->file, r->name, e2.msg);
			}
		}
		o->pt_alloc[i] = st[s->pts[i].stage].allocated;
		o->pt_max_alloc[i] = st[s->pts[i].stage].max_allocated;
		o->pt_reserved[i] = st[s->pts[i].stage].reserved;
	}
	free(st);
	return MT_OK;
}

/* Mean |relative error| of max allocated with the factor fitted on the
 * other points (after), and of the model (before) */
static void step_loo(const struct mt_vset *s, struct mt_vfit *o)
{
	double eb = 0, ea = 0;
	int i;

	o->max_alloc_loo_before = o->max_alloc_loo_after = NAN;
	if (s->npts < 2)
		return;
	for (i = 0; i < s->npts; i++) {
		double m = s->pts[i].max_allocated, a = o->pt_alloc[i];
		double k = step_factor(s, o, i);

		eb += fabs(o->pt_max_alloc[i] / m - 1) / s->npts;
		ea += fabs((a + k * (o->pt_max_alloc[i] - a)) / m - 1) / s->npts;
	}
	o->max_alloc_loo_before = eb;
	o->max_alloc_loo_after = ea;
}

/* The reserved memory's term with the step factor k: the mean of measured
 * max reserved less the predicted reserved, kept when it predicts the
 * points left out better */
static void reserved_term(const struct mt_vset *s, struct mt_vfit *o, double k)
{
	double sum = 0, eb = 0, ea = 0;
	int i, n = 0;

	for (i = 0; i < s->npts; i++) {
		double a = o->pt_alloc[i];

		o->pt_reserved_after[i] = a + k * (o->pt_reserved[i] - a);
		if (isfinite(s->pts[i].max_reserved)) {
			sum += s->pts[i].max_reserved - o->pt_reserved_after[i];
			n++;
		}
	}
	o->corr.mem_bytes = n ? sum / n : 0;
	o->mem_loo_before = o->mem_loo_after = NAN;
	for (i = 0; n >= 2 && i < s->npts; i++) {
		double m = s->pts[i].max_reserved, p = o->pt_reserved_after[i];

		if (!isfinite(m))
			continue;
		eb += fabs(p / m - 1) / n;
		ea += fabs((p + (sum - (m - p)) / (n - 1)) / m - 1) / n;
	}
	if (n >= 2) {
		o->mem_loo_before = eb;
		o->mem_loo_after = ea;
		if (!(ea < eb))
			o->corr.mem_bytes = 0;
	}
	for (i = 0; i < s->npts; i++)
		o->pt_reserved_after[i] += o->corr.mem_bytes;
}

/* The step memory factor and the reserved term from the ranks' reports */
static int memory_fit_ranks(struct fitx *X, struct mt_vfit *o)
{
	const struct mt_vset *s = X->s;
	double rb = 0, ra = 0, k;
	int i, n = s->npts, rc;

	o->pt_alloc = calloc((size_t)n, sizeof(double));
	o->pt_max_alloc = calloc((size_t)n, sizeof(double));
	o->pt_reserved = calloc((size_t)n, sizeof(double));
	o->pt_max_alloc_after = calloc((size_t)n, sizeof(double));
	o->pt_reserved_after = calloc((size_t)n, sizeof(double));
	if (!o->pt_alloc || !o->pt_max_alloc || !o->pt_reserved || !o->pt_max_alloc_after ||
	    !o->pt_reserved_after)
		return mt_error_set(X->err, MT_ENOMEM, "out of memory");
	if ((rc = point_predictions(X, o)))
		return rc;
	k = step_factor(s, o, -1);
	step_loo(s, o);
	if (isfinite(o->max_alloc_loo_after) && !(o->max_alloc_loo_after < o->max_alloc_loo_before)) {
		snprintf(o->mem_step_why, sizeof(o->mem_step_why), "fitted x%.3f, but the reports "
			 "left out were predicted worse (%.2f%% -> %.2f%%)", k,
			 100 * o->max_alloc_loo_before, 100 * o->max_alloc_loo_after);
		k = 1;
	}
	for (i = 0; i < n; i++) {
		double m = s->pts[i].max_allocated, a = o->pt_alloc[i];

		o->pt_max_alloc_after[i] = a + k * (o->pt_max_alloc[i] - a);
		rb += (o->pt_max_alloc[i] / m - 1) * (o->pt_max_alloc[i] / m - 1) / n;
		ra += (o->pt_max_alloc_after[i] / m - 1) * (o->pt_max_alloc_after[i] / m - 1) / n;
	}
	o->corr.mem_step = k;
	o->max_alloc_rms_before = sqrt(rb);
	o->max_alloc_rms_after = sqrt(ra);
	reserved_term(s, o, k);
	o->mem_runs = o->mem_point_runs;
	return MT_OK;
}

/* Keep the fitted factors only where they predict runs left out better than
 * the model without them: when the leave-one-out error does not fall, every
 * factor goes back to 1, named with the reason. */
static void keep_if_better(const struct mt_vset *s, struct mt_vfit *o)
{
	int i;

	if (!isfinite(o->loo_before) || !isfinite(o->loo_after) || o->loo_after < o->loo_before)
		return;
	for (i = 0; i < o->nfit && o->ndrop < MT_CORR_N; i++) {
		o->drop[o->ndrop] = o->fit[i];
		snprintf(o->drop_why[o->ndrop], sizeof(o->drop_why[0]),
			 "fitted, but runs left out were predicted worse (%.2f%% -> %.2f%%)",
			 100 * o->loo_before, 100 * o->loo_after);
		o->ndrop++;
		o->corr.f[o->fit[i]] = 1;
	}
	o->nfit = o->nparam = 0;
	for (i = 0; i < s->nruns; i++)
		o->pred_after[i] = o->pred_before[i];
	o->rms_after = o->rms_before;
	o->loo_after = o->loo_before;
}

int mt_vfit_run(const struct mt_vset *s, const struct mt_cluster *base, struct mt_vfit *o,
		struct mt_error *err)
{
	struct fitx X = { s, base, err, 0, MT_OK };
	struct params P;
	int n = s->nruns, i, *mask;
	double f[MT_CORR_N], rb = 0, ra = 0;

	memset(o, 0, sizeof(*o));
	mt_corr_init(&o->corr);
	if (n < 1)
		return mt_error_set(err, MT_EINVAL, "no measured run to fit");
	o->pred_before = calloc((size_t)n, sizeof(double));
	o->pred_after = calloc((size_t)n, sizeof(double));
	o->mem_before = calloc((size_t)n, sizeof(double));
	mask = calloc((size_t)n, sizeof(int));
	if (!o->pred_before || !o->pred_after || !o->mem_before || !mask) {
		free(mask);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (i = 0; i < n; i++) {
		o->pred_before[i] = predict(&X, i, NULL, &o->mem_before[i]);
		mask[i] = 1;
	}
	if (X.failed) {
		free(mask);
		return X.rc;
	}
	choose(&X, o);
	params_make(&P, o->fit, o->nfit, parameters(&X, o));
	o->nparam = P.k;
	for (i = 0; i < o->nfit; i++)
		o->param_of[i] = P.of[i];
	ones(f);
	gauss_newton(&X, mask, &P, f);
	memcpy(o->corr.f, f, sizeof(f));
	o->corr.on = 1;
	for (i = 0; i < n; i++) {
		double m = s->runs[i].measured_step_s;

		o->pred_after[i] = predict(&X, i, f, NULL);
		rb += (o->pred_before[i] / m - 1) * (o->pred_before[i] / m - 1) / n;
		ra += (o->pred_after[i] / m - 1) * (o->pred_after[i] / m - 1) / n;
	}
	o->rms_before = sqrt(rb);
	o->rms_after = sqrt(ra);
	keep_if_better(s, o);
	free(mask);
	if (X.failed)
		return X.rc;
	o->max_alloc_rms_before = o->max_alloc_rms_after = NAN;
	o->max_alloc_loo_before = o->max_alloc_loo_after = NAN;
	if (s->npts > 0)
		return memory_fit_ranks(&X, o);
	memory_fit_worst(s, o);
	return MT_OK;
}

void mt_vfit_text(struct sbuf *sb, const struct mt_vfit *f)
{
	int j, i, n;

	for (j = 0; j < f->nparam; j++) {
		for (i = n = 0; i < f->nfit; i++)
			if (f->param_of[i] == j)
				sbuf_addf(sb, "%s%s", n++ ? "=" : j ? ", " : "",
					  mt_corr_name(f->fit[i]));
		for (i = 0; i < f->nfit; i++)
			if (f->param_of[i] == j) {
				sbuf_addf(sb, " x%.3f", f->corr.f[f->fit[i]]);
				break;
			}
		if (n > 1)
			sbuf_addf(sb, " (one factor for the %d)", n);
	}
	if (!f->nparam)
		sbuf_adds(sb, "nothing");
}

void mt_vfit_free(struct mt_vfit *f)
{
	free(f->pred_before);
	free(f->pred_after);
	free(f->mem_before);
	free(f->pt_alloc);
	free(f->pt_max_alloc);
	free(f->pt_reserved);
	free(f->pt_max_alloc_after);
	free(f->pt_reserved_after);
	f->pred_before = f->pred_after = f->mem_before = NULL;
	f->pt_alloc = f->pt_max_alloc = f->pt_reserved = NULL;
	f->pt_max_alloc_after = f->pt_reserved_after = NULL;
}
