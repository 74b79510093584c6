/* SPDX-License-Identifier: MIT */
/* validation: megatune.validation/1, written and read here only. */
#include "validation.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "logparse.h"

double mt_vrel(double measured, double predicted)
{
	if (!isfinite(measured) || !isfinite(predicted) || predicted == 0)
		return NAN;
	return (measured - predicted) / predicted;
}

double mt_kendall_tau(const double *a, const double *b, int n)
{
	long c = 0, d = 0;
	int i, k;

	if (n < 2)
		return NAN;
	for (i = 0; i < n; i++)
		for (k = i + 1; k < n; k++) {
			double x = (a[i] - a[k]) * (b[i] - b[k]);

			if (x > 0)
				c++;
			else if (x < 0)
				d++;
		}
	return (double)(c - d) / ((double)n * (n - 1) / 2.0);
}

static int by_measured(const void *x, const void *y)
{
	const struct mt_vcand *a = *(const struct mt_vcand *const *)x;
	const struct mt_vcand *b = *(const struct mt_vcand *const *)y;

	if (a->meas.step_s != b->meas.step_s)
		return a->meas.step_s < b->meas.step_s ? -1 : 1;
	return a->predicted_rank - b->predicted_rank;
}

int mt_validation_summarize(struct mt_validation *v)
{
	struct mt_vsummary *s = &v->sum;
	struct mt_vcand **ok;
	double *pa, *pb, ae = 0, ape = 0;
	int i, n = 0, ne = 0;

	free(s->measured_ranking);
	memset(s, 0, sizeof(*s));
	ok = calloc((size_t)v->ncand + 1, sizeof(*ok));
	pa = calloc((size_t)v->ncand + 1, sizeof(*pa));
	pb = calloc((size_t)v->ncand + 1, sizeof(*pb));
	s->measured_ranking = calloc((size_t)v->ncand + 1, sizeof(char *));
	if (!ok || !pa || !pb || !s->measured_ranking) {
		free(ok);
		free(pa);
		free(pb);
		free(s->measured_ranking);
		s->measured_ranking = NULL;
		return MT_ENOMEM;
	}
	for (i = 0; i < v->ncand; i++) {
		struct mt_vcand *c = &v->cand[i];

		if (c->status == MT_VS_NOT_RUN) {
			s->not_run++;
			continue;
		}
		if (c->status != MT_VS_OK || !c->has_measured) {
			s->failed++;
			continue;
		}
		s->ok++;
		ok[n] = c;
		pa[n] = c->pred.step_s;
		pb[n] = c->meas.step_s;
		n++;
		if (isfinite(c->pred.step_s) && c->pred.step_s > 0) {
			ae += fabs(c->meas.step_s - c->pred.step_s);
			ape += fabs(c->meas.step_s - c->pred.step_s) / c->pred.step_s;
			ne++;
		}
	}
	qsort(ok, (size_t)n, sizeof(*ok), by_measured);
	for (i = 0; i < n; i++)
		s->measured_ranking[i] = ok[i]->name;
	s->nranked = n;
	s->kendall_tau = mt_kendall_tau(pa, pb, n);
	s->mae_step_s = ne ? ae / ne : NAN;
	s->mape_step = ne ? ape / ne : NAN;
	free(ok);
	free(pa);
	free(pb);
	return MT_OK;
}

/* ------------------------------------------------------------ writing */

static void validation_num_or_null(struct jw *w, const char *key, double v, int sig)
{
	if (isfinite(v))
		jw_num(w, key, v, sig);
	else
		jw_null(w, key);
}

static void str_or_null(struct jw *w, const char *key, const char *s)
{
	if (s)
		jw_str(w, key, s);
	else
		jw_null(w, key);
}

/* a cJSON value through the writer (the advice's configuration object) */
static void copy_json(struct jw *w, const char *key, const cJSON *v)
{
	const cJSON *it;

	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		if (cJSON_IsObject(v))
			jw_obj(w, key);
		else
			jw_arr(w, key);
		cJSON_ArrayForEach(it, v)
			copy_json(w, cJSON_IsObject(v) ? it->string : NULL, it);
		jw_end(w);
	} else if (cJSON_IsString(v)) {
		jw_str(w, key, v->valuestring);
	} else if (cJSON_IsNumber(v)) {
		if (v->valuedouble == floor(v->valuedouble) && fabs(v->valuedouble) < 9e15)
			jw_int(w, key, (int64_t)v->valuedouble);
		else
			jw_num(w, key, v->valuedouble, 8);
	} else if (cJSON_IsBool(v)) {
		jw_bool(w, key, cJSON_IsTrue(v));
	} else {
		jw_null(w, key);
	}
}

/* bytes, written exactly; null when not known */
static void bytes_or_null(struct jw *w, const char *key, double v)
{
	if (isfinite(v))
		jw_int(w, key, (int64_t)llround(v));
	else
		jw_null(w, key);
}

/* memory_ranks: each rank's report beside its stage's prediction */
static void memranks_json(struct jw *w, const struct mt_vcand *c)
{
	int i;

	jw_arr(w, "memory_ranks");
	for (i = 0; i < c->nmemr; i++) {
		const struct mt_vmemrank *r = &c->memr[i];
		const struct mt_vmempred *p = &r->pred;

		jw_obj(w, NULL);
		jw_int(w, "rank", r->rank);
		if (r->stage >= 0)
			jw_int(w, "stage", r->stage);
		else
			jw_null(w, "stage");
		jw_int(w, "lineno", r->lineno);
		jw_obj(w, "measured");
		bytes_or_null(w, "allocated_bytes", r->allocated);
		bytes_or_null(w, "max_allocated_bytes", r->max_allocated);
		bytes_or_null(w, "reserved_bytes", r->reserved);
		bytes_or_null(w, "max_reserved_bytes", r->max_reserved);
		jw_end(w);
		if (isfinite(p->allocated) || isfinite(p->max_allocated) || isfinite(p->reserved)) {
			jw_obj(w, "predicted");
			bytes_or_null(w, "allocated_bytes", p->allocated);
			bytes_or_null(w, "max_allocated_bytes", p->max_allocated);
			bytes_or_null(w, "reserved_bytes", p->reserved);
			jw_end(w);
		} else {
			jw_null(w, "predicted");
		}
		jw_end(w);
	}
	jw_end(w);
}

static void cand_json(struct jw *w, const struct mt_vcand *c)
{
	const struct mt_vmeas *m = &c->meas;

	jw_obj(w, NULL);
	jw_str(w, "name", c->name);
	jw_int(w, "predicted_rank", c->predicted_rank);
	if (c->config)
		copy_json(w, "config", c->config);
	else
		jw_null(w, "config");
	jw_str(w, "status", mt_vstatus_name(c->status));
	if (c->evidence_line) {
		jw_obj(w, "evidence");
		jw_str(w, "line", c->evidence_line);
		jw_int(w, "lineno", c->evidence_lineno);
		jw_end(w);
	} else {
		jw_null(w, "evidence");
	}
	str_or_null(w, "reason", c->reason);
	str_or_null(w, "log", c->log);
	str_or_null(w, "command", c->command);
	validation_num_or_null(w, "wall_s", c->wall_s, 4);
	jw_obj(w, "predicted");
	validation_num_or_null(w, "step_s", c->pred.step_s, 6);
	validation_num_or_null(w, "tokens_per_s_per_gpu", c->pred.tokens_per_s_per_gpu, 6);
	validation_num_or_null(w, "tflops_per_gpu", c->pred.tflops_per_gpu, 6);
	validation_num_or_null(w, "mem_gib", c->pred.mem_gib, 5);
	jw_end(w);
	if (c->has_measured) {
		jw_obj(w, "measured");
		validation_num_or_null(w, "step_s", m->step_s, 6);
		jw_int(w, "step_n", m->step_n);
		validation_num_or_null(w, "step_iqr_s", m->step_iqr_s, 4);
		validation_num_or_null(w, "step_min_s", m->step_min_s, 6);
		validation_num_or_null(w, "step_max_s", m->step_max_s, 6);
		validation_num_or_null(w, "tokens_per_s_per_gpu", m->tokens_per_s_per_gpu, 6);
		validation_num_or_null(w, "tflops_per_gpu", m->tflops_per_gpu, 6);
		validation_num_or_null(w, "log_tflops_per_gpu", m->log_tflops_per_gpu, 5);
		validation_num_or_null(w, "mem_max_allocated_gib", m->mem_max_allocated_gib, 5);
		validation_num_or_null(w, "mem_max_reserved_gib", m->mem_max_reserved_gib, 5);
		jw_int(w, "skipped_iterations", m->skipped_iterations);
		jw_end(w);
		jw_obj(w, "rel_error");
		validation_num_or_null(w, "step", mt_vrel(m->step_s, c->pred.step_s), 4);
		validation_num_or_null(w, "tokens_per_s_per_gpu",
			    mt_vrel(m->tokens_per_s_per_gpu, c->pred.tokens_per_s_per_gpu), 4);
		validation_num_or_null(w, "mem", mt_vrel(m->mem_max_reserved_gib, c->pred.mem_gib), 4);
		jw_end(w);
	} else {
		jw_null(w, "measured");
		jw_null(w, "rel_error");
	}
	memranks_json(w, c);
	if (c->tune_run > 0) {
		jw_obj(w, "tune");
		jw_int(w, "run", c->tune_run);
		jw_int(w, "fitted_from_runs", c->tune_fitted_from);
		validation_num_or_null(w, "corrected_step_s", c->tune_corrected_s, 6);
		validation_num_or_null(w, "rel_error_corrected",
			    c->has_measured ? mt_vrel(m->step_s, c->tune_corrected_s) : NAN, 4);
		jw_end(w);
	}
	jw_end(w);
}

static int by_pred(const void *x, const void *y)
{
	const struct mt_vcand *a = *(const struct mt_vcand *const *)x;
	const struct mt_vcand *b = *(const struct mt_vcand *const *)y;
	double p = isfinite(a->pred.step_s) ? a->pred.step_s : INFINITY;
	double q = isfinite(b->pred.step_s) ? b->pred.step_s : INFINITY;

	if (p != q)
		return p < q ? -1 : 1;
	return a->predicted_rank - b->predicted_rank;
}

/* the tune's summary (struct mt_vtune); MT_ENOMEM with nothing written */
static int tune_json(struct jw *w, const struct mt_validation *v)
{
	const struct mt_vtune *t = &v->tune;
	const struct mt_vcand **by = calloc((size_t)v->ncand + 1, sizeof(*by));
	int i;

	if (!by)
		return MT_ENOMEM;
	jw_obj(w, "tune");
	jw_int(w, "runs", t->runs);
	jw_str(w, "stopped", t->stopped);
	jw_str(w, "correction", t->correction);
	for (i = 0; i < v->ncand && t->best_run > 0; i++)
		if (v->cand[i].tune_run == t->best_run)
			jw_str(w, "best", v->cand[i].name);
	if (t->best_run <= 0)
		jw_null(w, "best");
	jw_int(w, "best_run", t->best_run);
	jw_bool(w, "ranking_changed", t->ranking_changed);
	for (i = 0; i < v->ncand; i++)
		by[i] = &v->cand[i];
	qsort(by, (size_t)v->ncand, sizeof(*by), by_pred);
	jw_arr(w, "ranking_uncorrected");
	for (i = 0; i < v->ncand; i++)
		jw_str(w, NULL, by[i]->name);
	jw_end(w);
	jw_arr(w, "ranking_corrected");
	for (i = 0; i < v->ncand && t->order && t->corrected_s; i++) {
		const struct mt_vcand *c = &v->cand[t->order[i]];

		jw_obj(w, NULL);
		jw_str(w, "name", c->name);
		validation_num_or_null(w, "predicted_step_s", c->pred.step_s, 6);
		validation_num_or_null(w, "corrected_step_s", t->corrected_s[t->order[i]], 6);
		jw_end(w);
	}
	jw_end(w);
	jw_end(w);
	free(by);
	return MT_OK;
}

int mt_validation_json(struct sbuf *sb, struct mt_validation *v)
{
	struct jw w;
	int i;

	if (mt_validation_summarize(v) != MT_OK)
		return MT_ENOMEM;
	jw_init(&w, sb, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", MT_VALIDATION_SCHEMA);
	str_or_null(&w, "megatune_version", v->megatune_version);
	str_or_null(&w, "created", v->created);
	str_or_null(&w, "advice", v->advice);
	str_or_null(&w, "model", v->model);
	str_or_null(&w, "cluster", v->cluster);
	jw_int(&w, "gpus", v->gpus);
	jw_int(&w, "seq", v->seq);
	jw_int(&w, "gbs", v->gbs);
	str_or_null(&w, "mode", v->mode);
	jw_int(&w, "iters", v->iters);
	jw_int(&w, "warmup", v->warmup);
	jw_arr(&w, "candidates");
	for (i = 0; i < v->ncand; i++)
		cand_json(&w, &v->cand[i]);
	jw_end(&w);
	jw_obj(&w, "summary");
	jw_arr(&w, "measured_ranking");
	for (i = 0; i < v->sum.nranked; i++)
		jw_str(&w, NULL, v->sum.measured_ranking[i]);
	jw_end(&w);
	validation_num_or_null(&w, "kendall_tau", v->sum.kendall_tau, 4);
	validation_num_or_null(&w, "mae_step", v->sum.mae_step_s, 4);
	validation_num_or_null(&w, "mape_step", v->sum.mape_step, 4);
	jw_int(&w, "ok", v->sum.ok);
	jw_int(&w, "failed", v->sum.failed);
	jw_int(&w, "not_run", v->sum.not_run);
	jw_end(&w);
	if (v->tune.on && tune_json(&w, v) != MT_OK)
		return MT_ENOMEM;
	jw_end(&w);
	sbuf_addc(sb, '\n');
	return sb->failed ? MT_ENOMEM : MT_OK;
}

int mt_validation_write(const char *path, struct mt_validation *v, struct mt_error *err)
{
	struct sbuf sb;
	int rc;

	sbuf_init(&sb);
	if (mt_validation_json(&sb, v) != MT_OK)
		rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", path);
	else
		rc = mt_write_atomic(path, sb.buf, sb.len, err);
	sbuf_release(&sb);
	return rc;
}

/* ------------------------------------------------------------ reading */

/* *out: a copy of the string o.key, NULL when it is not one; MT_ENOMEM when
 * the copy cannot be made */
static int get_str(const cJSON *o, const char *key, char **out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	*out = cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
	return cJSON_IsString(v) && !*out ? MT_ENOMEM : MT_OK;
}

/* One of measured's or predicted's byte counts of a memory report */
static int read_bytes(const struct mt_jpos *at, const cJSON *o, const char *key, double *out,
		      struct mt_error *err)
{
	*out = NAN;
	return mt_jnum(at, o, key, 0, 0, 1e15, out, err);
}

static int read_memrank(const struct mt_jpos *at, const cJSON *o, struct mt_vmemrank *r,
			struct mt_error *err)
{
	char w2[160];
	const cJSON *me = NULL, *pr = NULL;
	struct mt_jpos in;
	double ln = 0;
	int rc;

	r->stage = -1;
	r->allocated = r->max_allocated = r->reserved = r->max_reserved = NAN;
	r->pred.allocated = r->pred.max_allocated = r->pred.reserved = NAN;
	if ((rc = mt_jint32(at, o, "rank", 1, -1, 1 << 24, &r->rank, err)) < 0 ||
	    (rc = mt_jint32(at, o, "stage", 0, 0, 1 << 20, &r->stage, err)) < 0 ||
	    (rc = mt_jnum(at, o, "lineno", 0, 0, 1e15, &ln, err)) < 0 ||
	    (rc = mt_jobj(at, o, "measured", 1, &me, err)) < 0 ||
	    (rc = mt_jobj(at, o, "predicted", 0, &pr, err)) < 0)
		return rc;
	r->lineno = (long)ln;
	snprintf(w2, sizeof(w2), "%s.measured", at->where);
	in = (struct mt_jpos){ at->file, w2 };
	if ((rc = read_bytes(&in, me, "allocated_bytes", &r->allocated, err)) < 0 ||
	    (rc = read_bytes(&in, me, "max_allocated_bytes", &r->max_allocated, err)) < 0 ||
	    (rc = read_bytes(&in, me, "reserved_bytes", &r->reserved, err)) < 0 ||
	    (rc = read_bytes(&in, me, "max_reserved_bytes", &r->max_reserved, err)) < 0)
		return rc;
	if (!pr)
		return MT_OK;
	snprintf(w2, sizeof(w2), "%s.predicted", at->where); /* in.where is w2 */
	if ((rc = read_bytes(&in, pr, "allocated_bytes", &r->pred.allocated, err)) < 0 ||
	    (rc = read_bytes(&in, pr, "max_allocated_bytes", &r->pred.max_allocated, err)) < 0 ||
	    (rc = read_bytes(&in, pr, "reserved_bytes", &r->pred.reserved, err)) < 0)
		return rc;
	return MT_OK;
}

/* memory_ranks (optional: records written before it have none) */
static int read_memranks(const struct mt_jpos *at, const cJSON *o, struct mt_vcand *c,
			 struct mt_error *err)
{
	char w1[96], w2[128];
	const cJSON *arr = NULL, *it;
	int rc, i = 0;

	snprintf(w1, sizeof(w1), "%s.memory_ranks", at->where);
	if ((rc = mt_jarr(at, o, "memory_ranks", 0, &arr, err)) <= 0 || !cJSON_GetArraySize(arr))
		return rc;
	c->memr = calloc((size_t)cJSON_GetArraySize(arr), sizeof(*c->memr));
	if (!c->memr)
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", at->file);
	cJSON_ArrayForEach(it, arr) {
		struct mt_jpos in = { at->file, mt_jpath_index(w2, sizeof(w2), w1, i) };

		if (!cJSON_IsObject(it))
			return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected an object (rank, "
					    "stage, lineno, measured, predicted), got %s", at->file,
					    in.where, mt_json_type(it));
		if ((rc = read_memrank(&in, it, &c->memr[i], err)) < 0)
			return rc;
		c->nmemr = ++i;
	}
	return MT_OK;
}

static int validation_read_cand(const struct mt_jpos *at, const cJSON *o, struct mt_vcand *c,
		     struct mt_error *err)
{
	char st[32], name[256];
	const cJSON *ev, *pr, *me, *cfg, *tu;
	int rc;

	memset(c, 0, sizeof(*c));
	c->wall_s = NAN;
	if ((rc = mt_jstr(at, o, "name", 1, name, sizeof(name), err)) < 0 ||
	    (rc = mt_jint32(at, o, "predicted_rank", 1, 0, 1 << 20, &c->predicted_rank, err)) < 0 ||
	    (rc = mt_jstr(at, o, "status", 1, st, sizeof(st), err)) < 0)
		return rc;
	c->status = mt_vstatus_parse(st);
	if (c->status < 0)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.status': expected one of ok, oom, "
				    "nccl_timeout, nccl_error, nan, hang, exit, no_iterations, "
				    "not_run, got \"%s\"", at->file, at->where, st);
	c->name = strdup(name);
	cfg = cJSON_GetObjectItemCaseSensitive(o, "config");
	c->config = cJSON_IsObject(cfg) ? cJSON_Duplicate(cfg, 1) : NULL;
	ev = cJSON_GetObjectItemCaseSensitive(o, "evidence");
	if (!c->name || (cJSON_IsObject(cfg) && !c->config) ||
	    (cJSON_IsObject(ev) && get_str(ev, "line", &c->evidence_line)) ||
	    get_str(o, "reason", &c->reason) || get_str(o, "log", &c->log) ||
	    get_str(o, "command", &c->command))
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", at->file);
	if (cJSON_IsObject(ev))
		c->evidence_lineno = (long)mt_jget_num(ev, "lineno", 0);
	c->wall_s = mt_jget_num(o, "wall_s", NAN);
	pr = cJSON_GetObjectItemCaseSensitive(o, "predicted");
	c->pred.step_s = mt_jget_num(pr, "step_s", NAN);
	c->pred.tokens_per_s_per_gpu = mt_jget_num(pr, "tokens_per_s_per_gpu", NAN);
	c->pred.tflops_per_gpu = mt_jget_num(pr, "tflops_per_gpu", NAN);
	c->pred.mem_gib = mt_jget_num(pr, "mem_gib", NAN);
	me = cJSON_GetObjectItemCaseSensitive(o, "measured");
	if (cJSON_IsObject(me)) {
		struct mt_vmeas *m = &c->meas;
		double n;

		c->has_measured = 1;
		if ((rc = mt_jnum(at, me, "step_s", 1, 0, 1e9, &m->step_s, err)) < 0)
			return rc;
		n = mt_jget_num(me, "step_n", 0);
		m->step_n = (int)n;
		m->step_iqr_s = mt_jget_num(me, "step_iqr_s", NAN);
		m->step_min_s = mt_jget_num(me, "step_min_s", NAN);
		m->step_max_s = mt_jget_num(me, "step_max_s", NAN);
		m->tokens_per_s_per_gpu = mt_jget_num(me, "tokens_per_s_per_gpu", NAN);
		m->tflops_per_gpu = mt_jget_num(me, "tflops_per_gpu", NAN);
		m->log_tflops_per_gpu = mt_jget_num(me, "log_tflops_per_gpu", NAN);
		m->mem_max_allocated_gib = mt_jget_num(me, "mem_max_allocated_gib", NAN);
		m->mem_max_reserved_gib = mt_jget_num(me, "mem_max_reserved_gib", NAN);
		m->skipped_iterations = (long)mt_jget_num(me, "skipped_iterations", 0);
	}
	tu = cJSON_GetObjectItemCaseSensitive(o, "tune");
	c->tune_corrected_s = NAN;
	if (cJSON_IsObject(tu)) { /* a tune's run: its place and the prediction it ran with */
		char tw[96];
		struct mt_jpos tat = { at->file, tw };

		snprintf(tw, sizeof(tw), "%s.tune", at->where);
		if ((rc = mt_jint32(&tat, tu, "run", 1, 1, 1 << 20, &c->tune_run, err)) < 0)
			return rc;
		c->tune_fitted_from = (int)mt_jget_num(tu, "fitted_from_runs", 0);
		c->tune_corrected_s = mt_jget_num(tu, "corrected_step_s", NAN);
	}
	rc = read_memranks(at, o, c, err);
	return rc < 0 ? rc : MT_OK;
}

int mt_validation_read(const cJSON *doc, const char *file, const char *opt,
		       struct mt_validation *out, struct mt_error *err)
{
	struct mt_jpos top = { file, "" };
	const cJSON *arr, *it;
	char where[64];
	int rc, i = 0;

	memset(out, 0, sizeof(*out));
	if ((rc = mt_jschema(doc, MT_VALIDATION_SCHEMA, file, opt, err)) != MT_OK ||
	    (rc = mt_jarr(&top, doc, "candidates", 1, &arr, err)) < 0)
		return rc < 0 ? rc : MT_EINVAL;
	if (get_str(doc, "megatune_version", &out->megatune_version) ||
	    get_str(doc, "created", &out->created) || get_str(doc, "advice", &out->advice) ||
	    get_str(doc, "model", &out->model) || get_str(doc, "cluster", &out->cluster) ||
	    get_str(doc, "mode", &out->mode))
		goto nomem;
	out->gpus = (int)mt_jget_num(doc, "gpus", 0);
	out->seq = (int)mt_jget_num(doc, "seq", 0);
	out->gbs = (int)mt_jget_num(doc, "gbs", 0);
	out->iters = (int)mt_jget_num(doc, "iters", 0);
	out->warmup = (int)mt_jget_num(doc, "warmup", 0);
	out->cand = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*out->cand));
	if (!out->cand)
		goto nomem;
	cJSON_ArrayForEach(it, arr) {
		struct mt_jpos at = { file, mt_jpath_index(where, sizeof(where), "candidates", i) };

		if (!cJSON_IsObject(it)) {
			mt_error_set(err, MT_EINVAL, "%s: field '%s': expected an object, got %s",
				     file, at.where, mt_json_type(it));
			mt_validation_free(out);
			return MT_EINVAL;
		}
		rc = validation_read_cand(&at, it, &out->cand[i], err);
		out->ncand = ++i;
		if (rc < 0) {
			mt_validation_free(out);
			return rc;
		}
	}
	if (mt_validation_summarize(out) != MT_OK)
		goto nomem;
	return MT_OK;
nomem:
	mt_validation_free(out);
	return mt_error_set(err, MT_ENOMEM, "%s: out of memory", file);
}

int mt_validation_load(const char *path, const char *opt, struct mt_validation *out,
		       struct mt_error *err)
{
	cJSON *doc = NULL;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = mt_json_load(path, &doc, err)) != MT_OK)
		return rc;
	rc = mt_validation_read(doc, path, opt, out, err);
	cJSON_Delete(doc);
	return rc;
}

int mt_rank_stage(int rank, int gpus, int pp)
{
	if (rank < 0 || gpus <= 0 || pp <= 0 || rank >= gpus || gpus % pp)
		return rank == -1 && pp == 1 ? 0 : -1;
	return rank / (gpus / pp);
}

struct mt_vcand *mt_validation_find(struct mt_validation *v, const char *name)
{
	int i;

	for (i = 0; i < v->ncand; i++)
		if (v->cand[i].name && !strcmp(v->cand[i].name, name))
			return &v->cand[i];
	return NULL;
}

static void cand_free(struct mt_vcand *c)
{
	free(c->name);
	cJSON_Delete(c->config);
	free(c->evidence_line);
	free(c->reason);
	free(c->log);
	free(c->command);
	free(c->memr);
	free(c->stage_pred);
	memset(c, 0, sizeof(*c));
}

void mt_validation_free(struct mt_validation *v)
{
	int i;

	for (i = 0; i < v->ncand; i++)
		cand_free(&v->cand[i]);
	free(v->cand);
	free(v->megatune_version);
	free(v->created);
	free(v->advice);
	free(v->model);
	free(v->cluster);
	free(v->mode);
	free(v->sum.measured_ranking);
	free(v->tune.order);
	free(v->tune.corrected_s);
	memset(v, 0, sizeof(*v));
}

