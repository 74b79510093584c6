/* SPDX-License-Identifier: MIT */
/* correction: the fitted factors the model applies (perfmodel/correction.h). */
#include "correction.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "cluster.h"

static const char *const names[MT_CORR_N] = {
	"gemm_large", "gemm_small", "coll_nvlink", "coll_network", "a2a_nvlink", "a2a_network"
};

const char *mt_corr_name(int i)
{
	return i >= 0 && i < MT_CORR_N ? names[i] : NULL;
}

int mt_corr_parse(const char *s)
{
	int i;

	for (i = 0; s && i < MT_CORR_N; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

void mt_corr_init(struct mt_corr *k)
{
	int i;

	memset(k, 0, sizeof(*k));
	for (i = 0; i < MT_CORR_N; i++)
		k->f[i] = 1;
	k->mem_step = 1;
	k->loo_before = k->loo_after = NAN;
}

int mt_corr_read(const cJSON *root, const char *file, struct mt_corr *out, struct mt_error *err)
{
	const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, "corrections"), *f, *v;
	const char *src, *when;
	char step[48] = "";
	int n = 0;

	mt_corr_init(out);
	if (!sec)
		return MT_OK;
	if (!cJSON_IsObject(sec))
		return mt_error_set(err, MT_EINVAL, "%s: field 'corrections': expected an object, got %s",
				    file, mt_json_type(sec));
	f = cJSON_GetObjectItemCaseSensitive(sec, "factors");
	if (f && !cJSON_IsObject(f))
		return mt_error_set(err, MT_EINVAL, "%s: field 'corrections.factors': expected an "
				    "object of factor: number", file);
	cJSON_ArrayForEach(v, f) {
		int i = mt_corr_parse(v->string);

		if (i < 0)
			return mt_error_set(err, MT_EINVAL, "%s: field 'corrections.factors.%s': unknown "
					    "factor (expected gemm_large, gemm_small, coll_nvlink, "
					    "coll_network, a2a_nvlink or a2a_network)", file, v->string);
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= MT_CORR_MIN) ||
		    !(v->valuedouble <= MT_CORR_MAX))
			return mt_error_set(err, MT_EINVAL, "%s: field 'corrections.factors.%s': expected "
					    "a number from %g to %g", file, v->string, MT_CORR_MIN,
					    MT_CORR_MAX);
		out->f[i] = v->valuedouble;
		n++;
	}
	v = cJSON_GetObjectItemCaseSensitive(sec, "memory_overhead_bytes");
	if (v) {
		if (!cJSON_IsNumber(v) || !(fabs(v->valuedouble) < 1e13))
			return mt_error_set(err, MT_EINVAL, "%s: field 'corrections.memory_overhead_bytes': "
					    "expected a number of bytes", file);
		out->mem_bytes = v->valuedouble;
	}
	v = cJSON_GetObjectItemCaseSensitive(sec, "step_memory_factor");
	if (v) {
		if (!cJSON_IsNumber(v) || !(v->valuedouble >= MT_CORR_MIN) ||
		    !(v->valuedouble <= MT_CORR_MAX))
			return mt_error_set(err, MT_EINVAL, "%s: field 'corrections.step_memory_factor': "
					    "expected a number from %g to %g", file, MT_CORR_MIN,
					    MT_CORR_MAX);
		out->mem_step = v->valuedouble;
	}
	out->on = 1;
	out->loo_before = mt_jget_num(sec, "loo_mean_abs_rel_error_before", NAN);
	out->loo_after = mt_jget_num(sec, "loo_mean_abs_rel_error_after", NAN);
	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(sec, "runs")) {
		struct mt_corr_run *r;

		if (out->nruns >= MT_CORR_RUNS || !cJSON_IsObject(v))
			break;
		r = &out->runs[out->nruns++];
		snprintf(r->name, sizeof(r->name), "%s", mt_jget_strd(v, "name", "?"));
		r->measured_s = mt_jget_num(v, "measured_step_s", NAN);
		r->predicted_s = mt_jget_num(v, "predicted_step_s", NAN);
		r->corrected_s = mt_jget_num(v, "corrected_step_s", NAN);
	}
	src = mt_jget_strd(sec, "source", "?");
	when = mt_jget_strd(sec, "fitted", "?");
	if (fabs(out->mem_step - 1) >= 0.0005)
		snprintf(step, sizeof(step), ", a step memory factor of %.3f", out->mem_step);
	snprintf(out->note, sizeof(out->note), "%d factor%s%s and a memory term of %+.2f GiB fitted "
		 "from %d measured run%s on %s (source %s)", n, n == 1 ? "" : "s", step,
		 out->mem_bytes / (1024.0 * 1024 * 1024), (int)mt_jget_num(sec, "runs_used", 0),
		 (int)mt_jget_num(sec, "runs_used", 0) == 1 ? "" : "s", when, src);
	return MT_OK;
}

double mt_corr_gemm(const struct mt_corr *k, double m, double n, double kk)
{
	if (!k->on)
		return 1;
	return k->f[cbrt(m * n * kk) >= MT_CORR_LARGE_GEMM ? MT_CORR_GEMM_LARGE : MT_CORR_GEMM_SMALL];
}

double mt_corr_coll(const struct mt_corr *k, int op, int nranks, int per_domain)
{
	int net = per_domain < nranks;

	if (!k->on)
		return 1;
	if (op == MT_COLL_ALL_TO_ALL)
		return k->f[net ? MT_CORR_A2A_NETWORK : MT_CORR_A2A_NVLINK];
	return k->f[net ? MT_CORR_COLL_NETWORK : MT_CORR_COLL_NVLINK];
}

double mt_corr_mem_step(const struct mt_corr *k)
{
	return k->on ? k->mem_step : 1;
}

void mt_corr_text(struct sbuf *sb, const struct mt_corr *k)
{
	int i, any = 0;

	if (!k->on)
		return;
	sbuf_adds(sb, "model corrected by calibrate --from-validation:");
	for (i = 0; i < MT_CORR_N; i++)
		if (fabs(k->f[i] - 1) >= 0.0005) {
			sbuf_addf(sb, "%s %s x%.3f", any ? "," : "", names[i], k->f[i]);
			any = 1;
		}
	if (!any)
		sbuf_adds(sb, " every time factor 1");
	if (fabs(k->mem_step - 1) >= 0.0005)
		sbuf_addf(sb, "; step memory x%.3f", k->mem_step);
	sbuf_addf(sb, "; memory %+.2f GiB\n  (%s)\n", k->mem_bytes / (1024.0 * 1024 * 1024), k->note);
}
