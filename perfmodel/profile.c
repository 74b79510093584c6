/* SPDX-License-Identifier: MIT */
#include "profile.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/bundled.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../lib/sbuf.h"
#include "../lib/stats_json.h"
#include "correction.h"

int mt_profile_load_json(const char *spec, cJSON **out, struct mt_error *err)
{
	const struct mt_bundled *b;

	*out = NULL;
	if (!mt_is_path(spec) && (b = mt_bundled_find("profile", spec)))
		return mt_json_parse(b->path, b->data, b->len, out, err);
	return mt_json_load(spec, out, err);
}

int mt_profile_read(const char *spec, cJSON **out, const char **file, struct mt_error *err)
{
	const struct mt_bundled *b;
	int rc;

	*out = NULL;
	*file = spec;
	if (mt_is_path(spec))
		return mt_json_load(spec, out, err);
	b = mt_bundled_find("profile", spec);
	if (!b) {
		struct sbuf names = SBUF_INIT;

		mt_bundled_list("profile", &names);
		rc = mt_error_set(err, MT_EUSAGE,
				  "unknown cluster '%s': give a profile.json path or one of: %s",
				  spec, names.buf);
		sbuf_release(&names);
		return rc;
	}
	*file = b->path;
	return mt_json_parse(b->path, b->data, b->len, out, err);
}

int mt_profile_new(const char *spec, const char *name, cJSON **doc, struct mt_error *err)
{
	static const char *const arrays[] = { "sources", "gemm", "attention", "collectives",
					      "offload" };
	cJSON *d = NULL;
	size_t i;
	int rc;

	*doc = NULL;
	if (spec) {
		if ((rc = mt_profile_load_json(spec, &d, err)))
			return rc;
		if (!cJSON_IsObject(d)) {
			cJSON_Delete(d);
			return mt_error_set(err, MT_EINVAL,
					    "%s: expected a megatune.profile/1 object at the top level",
					    spec);
		}
	} else {
		d = cJSON_CreateObject();
		if (!d)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	cJSON_DeleteItemFromObjectCaseSensitive(d, "schema");
	cJSON_AddStringToObject(d, "schema", "megatune.profile/1");
	if (name || !cJSON_GetObjectItemCaseSensitive(d, "name")) {
		cJSON_DeleteItemFromObjectCaseSensitive(d, "name");
		cJSON_AddStringToObject(d, "name", name ? name : "calibrated");
	}
	for (i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
		if (!cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d, arrays[i]))) {
			cJSON_DeleteItemFromObjectCaseSensitive(d, arrays[i]);
			cJSON_AddItemToObject(d, arrays[i], cJSON_CreateArray());
		}
	*doc = d;
	return MT_OK;
}

static cJSON *arr(cJSON *doc, const char *key)
{
	cJSON *a = cJSON_GetObjectItemCaseSensitive(doc, key);

	if (!cJSON_IsArray(a)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, key);
		a = cJSON_AddArrayToObject(doc, key);
	}
	return a;
}




/* Replace the element of `a` for which `same` holds, else append. */
static void profile_put(cJSON *a, cJSON *item, int (*same)(const cJSON *x, const cJSON *y))
{
	cJSON *e;
	int i = 0;

	cJSON_ArrayForEach(e, a) {
		if (same(e, item)) {
			cJSON_ReplaceItemInArray(a, i, item);
			return;
		}
		i++;
	}
	cJSON_AddItemToArray(a, item);
}

static int same_id(const cJSON *x, const cJSON *y)
{
	return !strcmp(mt_jget_str(x, "id"), mt_jget_str(y, "id"));
}

int mt_profile_add_source(cJSON *doc, const char *id, const char *kind, const char *citation)
{
	cJSON *s = cJSON_CreateObject();

	if (!s)
		return MT_ENOMEM;
	cJSON_AddStringToObject(s, "id", id);
	cJSON_AddStringToObject(s, "kind", kind);
	cJSON_AddStringToObject(s, "citation", citation);
	profile_put(arr(doc, "sources"), s, same_id);
	return MT_OK;
}

cJSON *mt_profile_coll_curve(cJSON *doc, const char *op, const char *span, int ranks,
			     int per_node, const char *src)
{
	cJSON *a = arr(doc, "collectives"), *c;

	cJSON_ArrayForEach(c, a) {
		if (!strcmp(mt_jget_str(c, "op"), op) && !strcmp(mt_jget_str(c, "span"), span) &&
		    (int)mt_jget_num(c, "ranks", 0) == ranks &&
		    (int)mt_jget_num(c, "ranks_per_node", ranks) == per_node) {
			cJSON_DeleteItemFromObjectCaseSensitive(c, "points");
			cJSON_DeleteItemFromObjectCaseSensitive(c, "source");
			cJSON_AddStringToObject(c, "source", src);
			cJSON_AddArrayToObject(c, "points");
			return c;
		}
	}
	c = cJSON_CreateObject();
	cJSON_AddStringToObject(c, "op", op);
	cJSON_AddStringToObject(c, "span", span);
	cJSON_AddNumberToObject(c, "ranks", ranks);
	cJSON_AddNumberToObject(c, "ranks_per_node", per_node);
	cJSON_AddStringToObject(c, "source", src);
	cJSON_AddArrayToObject(c, "points");
	cJSON_AddItemToArray(a, c);
	return c;
}

static int same_bytes(const cJSON *x, const cJSON *y)
{
	return mt_jget_num(x, "bytes", -1) == mt_jget_num(y, "bytes", -2);
}

void mt_profile_coll_point(cJSON *curve, double bytes, double busbw_gbps, double time_us,
			   const struct mt_stats *st)
{
	cJSON *p = cJSON_CreateObject();

	cJSON_AddNumberToObject(p, "bytes", bytes);
	cJSON_AddNumberToObject(p, "busbw_gbps", mt_round_sig(busbw_gbps, 6));
	if (time_us > 0)
		cJSON_AddNumberToObject(p, "time_us", mt_round_sig(time_us, 6));
	if (st) {
		mt_stats_add(p, "stats", st);
	}
	profile_put(arr(curve, "points"), p, same_bytes);
}

static int same_gemm(const cJSON *x, const cJSON *y)
{
	return !strcmp(mt_jget_str(x, "dtype"), mt_jget_str(y, "dtype")) && mt_jget_num(x, "m", 0) == mt_jget_num(y, "m", 0) &&
	       mt_jget_num(x, "n", 0) == mt_jget_num(y, "n", 0) && mt_jget_num(x, "k", 0) == mt_jget_num(y, "k", 0);
}

void mt_profile_gemm(cJSON *doc, const char *dtype, double m, double n, double k, double tflops,
		     const struct mt_stats *st, const char *src)
{
	cJSON *g = cJSON_CreateObject();

	cJSON_AddStringToObject(g, "dtype", dtype);
	cJSON_AddNumberToObject(g, "m", m);
	cJSON_AddNumberToObject(g, "n", n);
	cJSON_AddNumberToObject(g, "k", k);
	cJSON_AddNumberToObject(g, "tflops", mt_round_sig(tflops, 6));
	if (st) {
		mt_stats_add(g, "stats", st);
	}
	cJSON_AddStringToObject(g, "source", src);
	profile_put(arr(doc, "gemm"), g, same_gemm);
}

static int same_attn(const cJSON *x, const cJSON *y)
{
	return !strcmp(mt_jget_str(x, "dtype"), mt_jget_str(y, "dtype")) &&
	       mt_jget_num(x, "head_dim", 0) == mt_jget_num(y, "head_dim", 0) &&
	       mt_jget_num(x, "seq", 0) == mt_jget_num(y, "seq", 0) &&
	       mt_jget_bool(x, "causal", 0) == mt_jget_bool(y, "causal", 0) &&
	       !strcmp(mt_jget_str(x, "impl")[0] ? mt_jget_str(x, "impl") : "flash",
		       mt_jget_str(y, "impl")[0] ? mt_jget_str(y, "impl") : "flash");
}

void mt_profile_attention(cJSON *doc, const char *dtype, int head_dim, int seq, int causal,
			  double fwd_tflops, double bwd_tflops, const char *src)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "impl", "flash");
	cJSON_AddStringToObject(a, "dtype", dtype);
	cJSON_AddNumberToObject(a, "head_dim", head_dim);
	cJSON_AddNumberToObject(a, "seq", seq);
	cJSON_AddBoolToObject(a, "causal", causal);
	cJSON_AddNumberToObject(a, "fwd_tflops", mt_round_sig(fwd_tflops, 6));
	cJSON_AddNumberToObject(a, "bwd_tflops", mt_round_sig(bwd_tflops, 6));
	cJSON_AddStringToObject(a, "source", src);
	profile_put(arr(doc, "attention"), a, same_attn);
}

static int same_off(const cJSON *x, const cJSON *y)
{
	return !strcmp(mt_jget_str(x, "direction"), mt_jget_str(y, "direction")) &&
	       !strcmp(mt_jget_str(x, "memory"), mt_jget_str(y, "memory")) &&
	       mt_jget_bool(x, "numa_local", 1) == mt_jget_bool(y, "numa_local", 1) &&
	       mt_jget_bool(x, "under_load", 0) == mt_jget_bool(y, "under_load", 0);
}

void mt_profile_offload(cJSON *doc, const char *direction, int pinned, int numa_local,
			int under_load, double gbps, const struct mt_stats *st, const char *src)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "direction", direction);
	cJSON_AddStringToObject(o, "memory", pinned ? "pinned" : "pageable");
	cJSON_AddBoolToObject(o, "numa_local", numa_local);
	cJSON_AddBoolToObject(o, "under_load", under_load);
	cJSON_AddNumberToObject(o, "gbps", mt_round_sig(gbps, 6));
	if (st) {
		mt_stats_add(o, "stats", st);
	}
	cJSON_AddStringToObject(o, "source", src);
	profile_put(arr(doc, "offload"), o, same_off);
}

cJSON *mt_profile_object(cJSON *doc, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, key);

	if (!cJSON_IsObject(o)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, key);
		o = cJSON_AddObjectToObject(doc, key);
	}
	return o;
}

void mt_profile_host(cJSON *doc, const char *key, double value, const char *src)
{
	cJSON *h = mt_profile_object(doc, "host");

	cJSON_DeleteItemFromObjectCaseSensitive(h, key);
	cJSON_AddNumberToObject(h, key, mt_round_sig(value, 6));
	cJSON_DeleteItemFromObjectCaseSensitive(h, "source");
	cJSON_AddStringToObject(h, "source", src);
}

void mt_profile_memory_bandwidth(cJSON *doc, const char *kernel, double gbps, const char *src)
{
	cJSON *m;

	cJSON_DeleteItemFromObjectCaseSensitive(doc, "memory_bandwidth");
	m = cJSON_AddObjectToObject(doc, "memory_bandwidth");
	cJSON_AddStringToObject(m, "kernel", kernel);
	cJSON_AddNumberToObject(m, "gbps", mt_round_sig(gbps, 6));
	cJSON_AddStringToObject(m, "source", src);
}

void mt_profile_software(cJSON *doc, const char *nccl, const char *cuda)
{
	cJSON *s = mt_profile_object(doc, "software");

	if (nccl) {
		cJSON_DeleteItemFromObjectCaseSensitive(s, "nccl");
		cJSON_AddStringToObject(s, "nccl", nccl);
	}
	if (cuda) {
		cJSON_DeleteItemFromObjectCaseSensitive(s, "cuda");
		cJSON_AddStringToObject(s, "cuda", cuda);
	}
}

void mt_profile_outlier(cJSON *doc, const char *what, const char *metric, double value,
			double median, double below_pct)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "what", what);
	cJSON_AddStringToObject(o, "metric", metric);
	cJSON_AddNumberToObject(o, "value", mt_round_sig(value, 6));
	cJSON_AddNumberToObject(o, "median", mt_round_sig(median, 6));
	cJSON_AddNumberToObject(o, "below_pct", mt_round_sig(below_pct, 3));
	cJSON_AddItemToArray(arr(doc, "outliers"), o);
}

static void profile_num_or_null(cJSON *o, const char *key, double v)
{
	if (isfinite(v))
		cJSON_AddNumberToObject(o, key, v);
	else
		cJSON_AddNullToObject(o, key);
}

/* The step memory factor and the ranks' reports it was fitted on */
static void corr_mempts(cJSON *sec, const struct mt_profile_corr *pc)
{
	cJSON *a;
	int i;

	cJSON_AddNumberToObject(sec, "step_memory_factor", pc->corr->mem_step);
	cJSON_AddStringToObject(sec, "memory_basis", "rank_reports");
	if (pc->mem_step_why)
		cJSON_AddStringToObject(sec, "step_memory_not_applied", pc->mem_step_why);
	cJSON_AddNumberToObject(sec, "memory_points_used", pc->npts);
	profile_num_or_null(sec, "max_allocated_rms_rel_error_before", pc->max_alloc_rms_before);
	profile_num_or_null(sec, "max_allocated_rms_rel_error_after", pc->max_alloc_rms_after);
	profile_num_or_null(sec, "max_allocated_loo_mean_abs_rel_error_before", pc->max_alloc_loo_before);
	profile_num_or_null(sec, "max_allocated_loo_mean_abs_rel_error_after", pc->max_alloc_loo_after);
	a = cJSON_AddArrayToObject(sec, "memory_points");
	for (i = 0; a && i < pc->npts; i++) {
		const struct mt_profile_corr_mempt *p = &pc->pts[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "file", p->file);
		cJSON_AddStringToObject(o, "name", p->name);
		cJSON_AddNumberToObject(o, "rank", p->rank);
		cJSON_AddNumberToObject(o, "stage", p->stage);
		cJSON_AddNumberToObject(o, "measured_max_allocated_bytes", round(p->measured_max_allocated));
		cJSON_AddNumberToObject(o, "predicted_max_allocated_bytes",
					round(p->predicted_max_allocated));
		cJSON_AddNumberToObject(o, "corrected_max_allocated_bytes",
					round(p->corrected_max_allocated));
		profile_num_or_null(o, "measured_max_reserved_bytes", round(p->measured_max_reserved));
		cJSON_AddNumberToObject(o, "predicted_reserved_bytes", round(p->predicted_reserved));
		cJSON_AddNumberToObject(o, "corrected_reserved_bytes", round(p->corrected_reserved));
		cJSON_AddItemToArray(a, o);
	}
}

void mt_profile_corrections(cJSON *doc, const struct mt_profile_corr *pc, const char *src)
{
	cJSON *sec = cJSON_CreateObject(), *f, *a;
	int i;

	if (!sec)
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(doc, "corrections");
	cJSON_AddStringToObject(sec, "source", src);
	cJSON_AddStringToObject(sec, "fitted", pc->fitted_at);
	cJSON_AddStringToObject(sec, "model", "time factors multiply the curves' GEMM and collective "
				"times by class; step_memory_factor multiplies what a stage "
				"allocates inside a step; memory_overhead_bytes is added to every "
				"stage's reserved memory and peak (docs/MODEL.md section 10)");
	f = cJSON_AddObjectToObject(sec, "factors");
	for (i = 0; f && i < pc->nfitted; i++)
		cJSON_AddNumberToObject(f, mt_corr_name(pc->fitted[i]), pc->corr->f[pc->fitted[i]]);
	a = cJSON_AddArrayToObject(sec, "not_fitted");
	for (i = 0; a && i < pc->ndropped; i++) {
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "factor", mt_corr_name(pc->dropped[i]));
		cJSON_AddStringToObject(o, "why", pc->dropped_why[i]);
		cJSON_AddItemToArray(a, o);
	}
	if (pc->mem_runs > 0)
		cJSON_AddNumberToObject(sec, "memory_overhead_bytes", round(pc->corr->mem_bytes));
	if (pc->npts > 0)
		corr_mempts(sec, pc);
	else if (pc->mem_runs > 0)
		cJSON_AddStringToObject(sec, "memory_basis", "worst_rank_max_reserved");
	cJSON_AddNumberToObject(sec, "runs_used", pc->nruns);
	cJSON_AddNumberToObject(sec, "memory_runs_used", pc->mem_runs);
	profile_num_or_null(sec, "rms_rel_error_before", pc->rms_before);
	profile_num_or_null(sec, "rms_rel_error_after", pc->rms_after);
	profile_num_or_null(sec, "loo_mean_abs_rel_error_before", pc->loo_before);
	profile_num_or_null(sec, "loo_mean_abs_rel_error_after", pc->loo_after);
	profile_num_or_null(sec, "memory_loo_mean_abs_rel_error_before", pc->mem_loo_before);
	profile_num_or_null(sec, "memory_loo_mean_abs_rel_error_after", pc->mem_loo_after);
	a = cJSON_AddArrayToObject(sec, "runs");
	for (i = 0; a && i < pc->nruns; i++) {
		const struct mt_profile_corr_run *r = &pc->runs[i];
		cJSON *o = cJSON_CreateObject();

		cJSON_AddStringToObject(o, "file", r->file);
		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddNumberToObject(o, "measured_step_s", r->measured_step_s);
		cJSON_AddNumberToObject(o, "predicted_step_s", r->predicted_step_s);
		cJSON_AddNumberToObject(o, "corrected_step_s", r->corrected_step_s);
		profile_num_or_null(o, "measured_mem_bytes", r->measured_mem_bytes);
		profile_num_or_null(o, "predicted_mem_bytes", r->predicted_mem_bytes);
		cJSON_AddItemToArray(a, o);
	}
	cJSON_AddItemToObject(doc, "corrections", sec);
}
