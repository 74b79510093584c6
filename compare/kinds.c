/* SPDX-License-Identifier: MIT */
/* kinds: the metrics of each document kind `megatune compare` reads, one
 * entry of mt_cm_kinds[] per kind.  Each extractor goes through the kind's
 * owner (probe results are JSON Lines read record by record; profiles,
 * analyses and advice through their documents; nccl-tests and nvbandwidth
 * output through import/).  docs/FORMATS.md section 14 lists what each gives.
 *
 * A new kind is one function and one line of the table: the validation
 * document (`megatune.validation/1`) is read with mt_validation_load() from
 * validate/validation.h and gives, per candidate name, the measured step
 * time (lower is better, with step_iqr_s as its spread) and tokens/s/GPU.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../tuner/advice.h"
#include "../import/import.h"
#include "../lib/jsonr.h"
#include "../lib/stats.h"
#include "../perfmodel/cluster.h"
#include "../validate/logparse.h"
#include "../validate/validation.h"
#include "metrics.h"

#define ADD_FAIL(path) mt_error_set(err, MT_ENOMEM, "%s: out of memory", path)

static void envcpy(char *dst, size_t cap, const char *s)
{
	if (s && *s && !*dst)
		snprintf(dst, cap, "%s", s);
}

/* The statistics object of a measurement ("time_us", "stats") into m. */
static void take_stats(struct mt_cm_metric *m, const cJSON *st)
{
	double cv = mt_jget_num(st, "cv", NAN);
	double n = mt_jget_num(st, "n", 0);

	if (isfinite(cv) && cv >= 0 && n >= 2) {
		m->cv = cv;
		m->n = (int)n;
	}
}

/* ---------------------------------------------------------------- megatune.result/1 */

static int result_record(const char *path, int line, const cJSON *r, struct mt_cm_set *out,
			 struct mt_error *err)
{
	const cJSON *t = mt_jget(r, "time_us"), *smp = mt_jget(r, "samples_us"), *x;
	const char *probe = mt_jget_strd(r, "probe", NULL), *label = mt_jget_strd(r, "label", "");
	double rank = mt_jget_num(r, "rank", -1), med = mt_jget_num(t, "median", NAN);
	char id[512], name[512], rk[32];
	struct mt_cm_metric *m;
	double *v;
	int n = 0;

	if (!probe)
		return mt_error_set(err, MT_EINVAL, "%s:%d: field 'probe': expected a string", path,
				    line);
	if (!cJSON_IsObject(t) || !isfinite(med))
		return MT_OK; /* a case that could not run: nothing to compare */
	snprintf(rk, sizeof(rk), rank < 0 ? "all ranks" : "rank %.0f", rank);
	snprintf(id, sizeof(id), "%s|%s|%s", probe, label, rk);
	snprintf(name, sizeof(name), "%s %s, %s", probe, label, rk);
	if (!(m = mt_cm_add(out, id, name, "us", 0, med)))
		return ADD_FAIL(path);
	take_stats(m, t);
	x = mt_jget(r, "round");
	if (x && (!cJSON_IsNumber(x) || !(x->valuedouble >= 1 && x->valuedouble <= 1e6) ||
		  x->valuedouble != (int)x->valuedouble))
		return mt_error_set(err, MT_EINVAL, "%s:%d: field 'round': expected a whole number "
				    ">= 1", path, line);
	m->round = x ? (int)x->valuedouble : 0;
	x = mt_jget(r, "canary_us");
	if (x && (!cJSON_IsNumber(x) || !(x->valuedouble > 0 && x->valuedouble <= 1e9)))
		return mt_error_set(err, MT_EINVAL, "%s:%d: field 'canary_us': expected a time in "
				    "microseconds > 0", path, line);
	m->canary = x ? x->valuedouble : 0;
	if (x && (m->canary_ix = mt_cm_add_canary(out, rank < 0 ? -1 : rank, m->canary)) < 0)
		return ADD_FAIL(path);
	/* the CPU backend's BLAS probes run at the speed of the core's
	 * arithmetic, which is what the canary times */
	m->compute_bound = x && !strcmp(mt_jget_str(r, "backend"), "cpu") &&
			   (!strcmp(probe, "gemm") || !strcmp(probe, "attention"));
	if (smp && !cJSON_IsArray(smp))
		return mt_error_set(err, MT_EINVAL, "%s:%d: field 'samples_us': expected an array "
				    "of numbers", path, line);
	if (!cJSON_GetArraySize(smp))
		return MT_OK;
	if (!(v = malloc((size_t)cJSON_GetArraySize(smp) * sizeof(double))))
		return ADD_FAIL(path);
	cJSON_ArrayForEach(x, smp) {
		if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0)) {
			free(v);
			return mt_error_set(err, MT_EINVAL, "%s:%d: field 'samples_us[%d]': expected "
					    "a number >= 0", path, line, n);
		}
		v[n++] = x->valuedouble;
	}
	if (mt_cm_set_samples(m, v, n)) {
		free(v);
		return ADD_FAIL(path);
	}
	free(v);
	return MT_OK;
}

static int extract_result(const char *path, const char *text, size_t len, struct mt_cm_set *out,
			  struct mt_error *err)
{
	size_t i = 0;
	int line = 0, rc = MT_OK;

	while (i < len && !rc) {
		size_t e = i;
		cJSON *r;

		while (e < len && text[e] != '\n')
			e++;
		line++;
		if (e > i + 1 || (e > i && text[i] != '\r')) {
			if (!(r = cJSON_ParseWithLength(text + i, e - i))) {
				/* a last line cut short: the run that wrote it died
				 * mid-record, and its other cases are missing too */
				if (e == len)
					return mt_error_set(err, MT_EPARSE, "%s:%d: a record cut "
							    "short at the end of the file (not a "
							    "whole JSON record, no newline after "
							    "it): the run that wrote it stopped "
							    "mid-record", path, line);
				return mt_error_set(err, MT_EPARSE, "%s:%d: not a JSON record", path,
						    line);
			}
			if (line == 1) {
				envcpy(out->env.host, sizeof(out->env.host), mt_jget_str(r, "host"));
				envcpy(out->env.driver, sizeof(out->env.driver),
				       mt_jget_str(r, "versions.driver"));
				envcpy(out->env.cuda, sizeof(out->env.cuda), mt_jget_str(r, "versions.cuda"));
				envcpy(out->env.nccl, sizeof(out->env.nccl), mt_jget_str(r, "versions.nccl"));
				envcpy(out->env.megatune, sizeof(out->env.megatune),
				       mt_jget_str(r, "megatune"));
				envcpy(out->env.created, sizeof(out->env.created),
				       mt_jget_str(r, "started"));
				envcpy(out->env.gpu, sizeof(out->env.gpu), mt_jget_str(r, "gpu"));
				if (!strcmp(mt_jget_str(r, "backend"), "cpu"))
					envcpy(out->env.gpu, sizeof(out->env.gpu), "none (cpu backend)");
			} else if (!strcmp(mt_jget_str(r, "kind"), "run")) {
				/* a second head: an appended pass */
			} else {
				rc = result_record(path, line, r, out, err);
			}
			cJSON_Delete(r);
		}
		i = e + 1;
	}
	if (!rc && mt_cm_merge_rounds(out))
		rc = ADD_FAIL(path);
	if (!rc)
		mt_cm_canary_medians(out);
	return rc;
}

/* ---------------------------------------------------------------- megatune.profile/1 */

static int prof_add(struct mt_cm_set *out, const char *path, const char *id, const char *name,
		    const char *unit, int hb, double v, const struct mt_stats *st,
		    struct mt_error *err)
{
	struct mt_cm_metric *m;

	if (!isfinite(v))
		return MT_OK;
	if (!(m = mt_cm_add(out, id, name, unit, hb, v)))
		return ADD_FAIL(path);
	if (st && st->n >= 2 && isfinite(st->cv) && st->cv >= 0) {
		m->cv = st->cv;
		m->n = st->n;
	}
	return MT_OK;
}

static int profile_curves(const char *path, const struct mt_cluster *cl, struct mt_cm_set *out,
			  struct mt_error *err)
{
	char id[256], name[256], sz[32];
	int rc = MT_OK, i, j;

	for (i = 0; i < cl->ncoll && !rc; i++) {
		const struct mt_coll_curve *c = &cl->coll[i];
		const char *op = mt_coll_name(c->op), *span = mt_span_name(c->span);

		for (j = 0; j < c->npts && !rc; j++) {
			const struct mt_coll_pt *p = &c->pts[j];

			snprintf(id, sizeof(id), "collective|%s|%s|%d|%d|%.0f", op, span, c->ranks,
				 c->per_node, p->bytes);
			snprintf(name, sizeof(name), "%s busbw, %s, %d ranks (%d per node), %s", op,
				 span, c->ranks, c->per_node, mt_cm_size(sz, sizeof(sz), p->bytes));
			rc = prof_add(out, path, id, name, "GB/s", 1, p->busbw_gbps, &p->st, err);
		}
	}
	for (i = 0; i < cl->noffload && !rc; i++) {
		const struct mt_offload_pt *o = &cl->offload[i];
		const char *dir = mt_offload_dir_name(o->dir), *mem = o->pinned ? "pinned" : "pageable";

		snprintf(id, sizeof(id), "offload|%s|%s|%d|%d", dir, mem, o->numa_local, o->under_load);
		snprintf(name, sizeof(name), "offload %s %s%s%s", dir, mem,
			 o->numa_local ? "" : ", NUMA remote", o->under_load ? ", under load" : "");
		rc = prof_add(out, path, id, name, "GB/s", 1, o->gbps, NULL, err);
	}
	return rc;
}

/* Through the profile's owner: validated (perfmodel/cluster.h), typed. */
static int extract_profile(const char *path, const char *text, size_t len, struct mt_cm_set *out,
			   struct mt_error *err)
{
	struct mt_cluster *cl = NULL;
	cJSON *doc;
	char id[256], name[256];
	int rc, i, d;

	if ((rc = mt_json_parse(path, text, len, &doc, err)))
		return rc;
	rc = mt_cluster_from_json(doc, path, &cl, err);
	cJSON_Delete(doc);
	if (rc)
		return rc;
	envcpy(out->env.gpu, sizeof(out->env.gpu), cl->gpu_name);
	envcpy(out->env.nccl, sizeof(out->env.nccl), cl->nccl_version);
	envcpy(out->env.cuda, sizeof(out->env.cuda), cl->cuda_version);
	envcpy(out->env.host, sizeof(out->env.host), cl->name);
	for (i = 0; i < cl->ngemm && !rc; i++) {
		const struct mt_gemm_pt *g = &cl->gemm[i];
		const char *dt = mt_dtype_name(g->dtype);

		snprintf(id, sizeof(id), "gemm|%s|%.0f|%.0f|%.0f", dt, g->m, g->n, g->k);
		snprintf(name, sizeof(name), "gemm %s %.0fx%.0fx%.0f", dt, g->m, g->n, g->k);
		rc = prof_add(out, path, id, name, "TFLOP/s", 1, g->tflops, &g->st, err);
	}
	for (i = 0; i < cl->nattn && !rc; i++) {
		const struct mt_attn_pt *a = &cl->attn[i];
		const char *impl = mt_attn_impl_name(a->impl), *dt = mt_dtype_name(a->dtype);

		for (d = 0; d < 2 && !rc; d++) {
			snprintf(id, sizeof(id), "attention|%s|%s|%d|%d|%d|%s", impl, dt, a->head_dim,
				 a->seq, a->causal, d ? "bwd" : "fwd");
			snprintf(name, sizeof(name), "attention %s %s d%d s%d%s %s", impl, dt,
				 a->head_dim, a->seq, a->causal ? " causal" : "", d ? "bwd" : "fwd");
			rc = prof_add(out, path, id, name, "TFLOP/s", 1,
				      d ? a->bwd_tflops : a->fwd_tflops, NULL, err);
		}
	}
	if (!rc)
		rc = profile_curves(path, cl, out, err);
	if (!rc && cl->hbm_measured) /* as measured, before the datasheet bounds it */
		rc = prof_add(out, path, "memory_bandwidth", "memory bandwidth", "GB/s", 1,
			      cl->hbm_measured_gbps, NULL, err);
	if (!rc && cl->launch_overhead_us > 0)
		rc = prof_add(out, path, "host|launch_overhead_us", "host launch overhead", "us", 0,
			      cl->launch_overhead_us, NULL, err);
	if (!rc && cl->optimizer_gparams_per_s > 0)
		rc = prof_add(out, path, "host|optimizer_gparams_per_s", "host Adam throughput",
			      "Gparam/s", 1, cl->optimizer_gparams_per_s, NULL, err);
	mt_cluster_free(cl);
	return rc;
}

/* ---------------------------------------------------------------- megatune.analysis/1 */

static int extract_analysis(const char *path, const char *text, size_t len, struct mt_cm_set *out,
			    struct mt_error *err)
{
	static const struct {
		const char *key, *what, *unit;
		int hb;
	} f[] = {
		{ "total_us", "total time", "us", 0 },
		{ "busy_us", "busy time", "us", 0 },
		{ "idle_us", "idle time", "us", 0 },
		{ "exposed_comm_us", "exposed communication", "us", 0 },
		{ "exposed_memcpy_us", "exposed memory copies", "us", 0 },
		{ "overlap_pct", "communication overlap", "%", 1 },
	};
	const cJSON *r;
	cJSON *doc;
	char id[128], name[160];
	int rc, i;

	if ((rc = mt_json_parse(path, text, len, &doc, err)))
		return rc;
	cJSON_ArrayForEach(r, mt_jget(doc, "ranks")) {
		double rank = mt_jget_num(r, "rank", NAN);

		for (i = 0; i < (int)(sizeof(f) / sizeof(f[0])); i++) {
			snprintf(id, sizeof(id), "rank %.0f|%s", rank, f[i].key);
			snprintf(name, sizeof(name), "rank %.0f %s", rank, f[i].what);
			if ((rc = prof_add(out, path, id, name, f[i].unit, f[i].hb,
					   mt_jget_num(r, f[i].key, NAN), NULL, err)))
				goto out;
		}
	}
	rc = prof_add(out, path, "job|step_mean_s", "mean step time", "s", 0,
		      mt_jget_num(doc, "job.step_mean_s", NAN), NULL, err);
out:
	cJSON_Delete(doc);
	return rc;
}

/* ---------------------------------------------------------------- megatune.advice/1 */

static int extract_advice(const char *path, const char *text, size_t len, struct mt_cm_set *out,
			  struct mt_error *err)
{
	struct mt_advice_doc adv;
	cJSON *doc;
	char cfg[256], id[300], name[320];
	int rc, i;

	if ((rc = mt_json_parse(path, text, len, &doc, err)))
		return rc;
	if ((rc = mt_advice_read(doc, path, "CURRENT", &adv, err))) {
		cJSON_Delete(doc);
		return rc;
	}
	envcpy(out->env.host, sizeof(out->env.host), adv.cluster);
	for (i = 0; i < adv.ncand && !rc; i++) {
		const struct mt_advice_cand *c = &adv.cand[i];

		/* the configuration is the identity: the rank may change */
		snprintf(cfg, sizeof(cfg), "TP%.0f PP%.0f VPP%.0f CP%.0f EP%.0f ETP%.0f DP%.0f MBS%.0f%s%s",
			 c->tp, c->pp, c->vpp, c->cp, c->ep, c->etp, c->dp, c->mbs,
			 c->cp_comm_type ? " " : "", c->cp_comm_type ? c->cp_comm_type : "");
		snprintf(id, sizeof(id), "%s|step_s", cfg);
		snprintf(name, sizeof(name), "predicted step time, %s", cfg);
		if ((rc = prof_add(out, path, id, name, "s", 0, c->step_s, NULL, err)))
			break;
		snprintf(id, sizeof(id), "%s|tokens_per_s_per_gpu", cfg);
		snprintf(name, sizeof(name), "predicted tokens/s/GPU, %s", cfg);
		rc = prof_add(out, path, id, name, "tokens/s", 1, c->tokens_per_s_per_gpu, NULL, err);
	}
	mt_advice_doc_free(&adv);
	cJSON_Delete(doc);
	return rc;
}

/* ---------------------------------------------------------------- nccl-tests text */

static int parse_tool(int tool, const char *path, const char *text, size_t len,
		      struct mt_import **im, struct mt_error *err)
{
	struct mt_import_opts o = { .op = -1, .ranks = 0, .strict = 0 };

	return mt_import_parse(tool, path, text, len, &o, im, err);
}

static int sniff_nccl(const char *path, const char *text, size_t len)
{
	struct mt_import *im = NULL;
	int ok = !parse_tool(MT_IMP_NCCL_TESTS, path, text, len, &im, NULL) && im && im->nnt > 0;

	mt_import_free(im);
	return ok;
}

/* The relative noise of one printed time: nccl-tests prints one mean per
 * size and placement and no spread, so the document's own repeat is used:
 * out-of-place and in-place time the same operation.  The median over the
 * rows of |oop - ip| / mean is 0.954 sigma of one measurement when the two
 * differ by noise alone (the median of |N(0, 2 sigma^2)|); systematic
 * differences make it larger, never smaller.  NAN when no row has both. */
static double placement_spread(const struct mt_import *im)
{
	double *d;
	int n = 0, t, r;
	double s;

	for (t = 0, r = 0; t < im->nnt; t++)
		r += im->nt[t].nrows;
	if (!r || !(d = malloc((size_t)r * sizeof(double))))
		return NAN;
	for (t = 0; t < im->nnt; t++)
		for (r = 0; r < im->nt[t].nrows; r++) {
			const struct mt_nt_row *w = &im->nt[t].rows[r];
			double a = w->h[0].time.v, b = w->h[1].time.v;

			if (w->h[0].present && w->h[1].present && a > 0 && b > 0)
				d[n++] = fabs(a - b) / ((a + b) / 2);
		}
	if (!n) {
		free(d);
		return NAN;
	}
	s = mt_median(d, (size_t)n) / 0.954;
	free(d);
	return s;
}

static int extract_nccl(const char *path, const char *text, size_t len, struct mt_cm_set *out,
			struct mt_error *err)
{
	static const char *const place[] = { "out of place", "in place" };
	struct mt_import *im = NULL;
	char id[256], name[256], sz[32], opn[64];
	double spread;
	int rc, t, r, h;

	if ((rc = parse_tool(MT_IMP_NCCL_TESTS, path, text, len, &im, err)))
		return rc;
	spread = placement_spread(im);
	for (t = 0; t < im->nnt && !rc; t++) {
		const struct mt_nt_test *nt = &im->nt[t];

		envcpy(out->env.gpu, sizeof(out->env.gpu), nt->gpu);
		envcpy(out->env.nccl, sizeof(out->env.nccl), nt->nccl);
		envcpy(out->env.cuda, sizeof(out->env.cuda), nt->cuda);
		if (nt->op >= 0)
			snprintf(opn, sizeof(opn), "%s", mt_coll_name(nt->op));
		else
			snprintf(opn, sizeof(opn), "%s", nt->name[0] ? nt->name : "test");
		for (r = 0; r < nt->nrows && !rc; r++) {
			const struct mt_nt_row *w = &nt->rows[r];

			if (!(w->size.v > 0))
				continue;
			for (h = 0; h < 2 && !rc; h++) {
				struct mt_cm_metric *m;
				double us = w->h[h].time.v * (nt->time_ms ? 1e3 : 1);

				if (!w->h[h].present || !(us > 0) || nt->cputime)
					continue;
				snprintf(id, sizeof(id), "%s|%d ranks|%.0f|%s", opn, nt->ranks,
					 w->size.v, h ? "in-place" : "out-of-place");
				snprintf(name, sizeof(name), "%s time, %d ranks, %s, %s", opn,
					 nt->ranks, mt_cm_size(sz, sizeof(sz), w->size.v), place[h]);
				if (!(m = mt_cm_add(out, id, name, "us", 0, us)))
					rc = ADD_FAIL(path);
				else
					m->spread = spread;
			}
		}
	}
	mt_import_free(im);
	return rc;
}

/* ---------------------------------------------------------------- nvbandwidth text */

static int sniff_nvb(const char *path, const char *text, size_t len)
{
	struct mt_import *im = NULL;
	int ok = !parse_tool(MT_IMP_NVBANDWIDTH, path, text, len, &im, NULL) && im && im->nnvb > 0;

	mt_import_free(im);
	return ok;
}

static int extract_nvb(const char *path, const char *text, size_t len, struct mt_cm_set *out,
		       struct mt_error *err)
{
	struct mt_import *im = NULL;
	char id[256], name[256];
	int rc, t, i, j;

	if ((rc = parse_tool(MT_IMP_NVBANDWIDTH, path, text, len, &im, err)))
		return rc;
	envcpy(out->env.driver, sizeof(out->env.driver), im->driver);
	envcpy(out->env.cuda, sizeof(out->env.cuda), im->cuda_runtime);
	envcpy(out->env.host, sizeof(out->env.host), im->host);
	if (im->ngpu > 0)
		envcpy(out->env.gpu, sizeof(out->env.gpu), im->gpu[0]);
	for (t = 0; t < im->nnvb && !rc; t++) {
		const struct mt_nvb_test *nb = &im->nvb[t];

		for (i = 0; i < nb->nrows && !rc; i++)
			for (j = 0; j < nb->ncols && !rc; j++) {
				double v = nb->v[i * nb->ncols + j];

				snprintf(id, sizeof(id), "%s|%d|%d", nb->name, i, j);
				snprintf(name, sizeof(name), "%s [%d][%d]", nb->name, i, j);
				rc = prof_add(out, path, id, name, "GB/s", 1, v, NULL, err);
			}
	}
	mt_import_free(im);
	return rc;
}

/* ---------------------------------------------------------------- the table */

/* ---------------------------------------------------------------- megatune.validation/1 */

/* Per candidate that ran to the end (status ok): its measured step (lower is
 * better; the spread is the run's interquartile range of steps over its median)
 * and tokens/s per GPU (higher is better).  Identity: the candidate's name. */
static int extract_validation(const char *path, const char *text, size_t len,
			      struct mt_cm_set *out, struct mt_error *err)
{
	struct mt_validation v;
	struct mt_cm_metric *m;
	char id[320], name[340];
	cJSON *doc;
	int rc, i;

	if ((rc = mt_json_parse(path, text, len, &doc, err)))
		return rc;
	rc = mt_validation_read(doc, path, "CURRENT", &v, err);
	cJSON_Delete(doc);
	if (rc)
		return rc;
	for (i = 0; i < v.ncand && !rc; i++) {
		const struct mt_vcand *c = &v.cand[i];

		if (c->status != MT_VS_OK || !c->has_measured || !(c->meas.step_s > 0))
			continue;
		snprintf(id, sizeof(id), "%s|step_s", c->name);
		snprintf(name, sizeof(name), "%s measured step", c->name);
		if (!(m = mt_cm_add(out, id, name, "s", 0, c->meas.step_s))) {
			rc = ADD_FAIL(path);
			break;
		}
		if (isfinite(c->meas.step_iqr_s) && c->meas.step_iqr_s >= 0 && c->meas.step_n >= 2)
			m->spread = c->meas.step_iqr_s / 1.349 / c->meas.step_s;
		snprintf(id, sizeof(id), "%s|tokens_per_s_per_gpu", c->name);
		snprintf(name, sizeof(name), "%s measured tokens/s per GPU", c->name);
		rc = prof_add(out, path, id, name, "tokens/s", 1, c->meas.tokens_per_s_per_gpu, NULL,
			      err);
	}
	mt_validation_free(&v);
	return rc;
}

const struct mt_cm_kind mt_cm_kinds[] = {
	{ "result", "megatune.result/1", NULL, extract_result },
	{ "profile", "megatune.profile/1", NULL, extract_profile },
	{ "analysis", "megatune.analysis/1", NULL, extract_analysis },
	{ "advice", "megatune.advice/1", NULL, extract_advice },
	{ "validation", "megatune.validation/1", NULL, extract_validation },
	{ "nccl-tests", NULL, sniff_nccl, extract_nccl },
	{ "nvbandwidth", NULL, sniff_nvb, extract_nvb },
	{ NULL, NULL, NULL, NULL },
};
