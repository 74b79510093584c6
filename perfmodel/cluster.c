/* SPDX-License-Identifier: MIT */
/* cluster: the profile reader and validator, the names of its enums (the
 * curves it builds and their lookups are curves.c). */
#include "cluster.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/stats_json.h"
#include "../lib/ver.h"
#include "constants.h"
#include "cluster_int.h"
#include "profile.h"

#define INT_MAXV 0x7fffffff

/* The fields of megatune.profile/1, object by object (docs/FORMATS.md section
 * 2 says what part of the model each feeds): any other key is refused, since
 * a misspelt one would be read as absent and its default would stand in. */
static const char *const top_keys[] = { "schema", "name", "description", "sources", "gpu",
					"node", "memory_bandwidth", "gemm", "attention",
					"collectives", "offload", "host", "software", "outliers",
					"corrections", "moe_dispatch", "skeleton", NULL };
static const char *const source_keys[] = { "id", "kind", "citation", NULL };
static const char *const gpu_keys[] = { "name", "memory_bytes", "sm_count", "compute_capability",
					"hbm_gbps", "peak_tflops", "source", NULL };
static const char *const node_keys[] = { "gpus_per_node", "nvlink_domain", "nvlink_gbps",
					 "nics_per_node", "nic_gbps", "nic_latency_us",
					 "pcie_gbps", "numa_nodes", "host_memory_bytes", "source",
					 NULL };
static const char *const membw_keys[] = { "kernel", "gbps", "source", NULL };
static const char *const gemm_keys[] = { "dtype", "m", "n", "k", "tflops", "stats", "source",
					 NULL };
static const char *const attn_keys[] = { "impl", "dtype", "head_dim", "seq", "causal",
					 "fwd_tflops", "bwd_tflops", "source", NULL };
static const char *const coll_keys[] = { "op", "span", "ranks", "ranks_per_node", "source",
					 "points", NULL };
static const char *const point_keys[] = { "bytes", "busbw_gbps", "time_us", "stats", "source",
					  NULL };
static const char *const offload_keys[] = { "direction", "memory", "numa_local", "under_load",
					    "gbps", "stats", "source", NULL };
static const char *const host_keys[] = { "launch_overhead_us", "optimizer_gparams_per_s",
					 "memory_gbps", "eager_op_us", "te_module_us",
					 "graph_launch_us", "sync_us", "source", NULL };
static const char *const software_keys[] = { "nccl", "cuda", NULL };
static const char *const outlier_keys[] = { "what", "metric", "value", "median", "below_pct",
					    NULL };
static const char *const stats_keys[] = { "n", "median", "min", "max", "p95", "cv", NULL };
static const char *const corr_keys[] = { "source", "fitted", "model", "factors", "not_fitted",
					 "memory_overhead_bytes", "runs_used", "memory_runs_used",
					 "rms_rel_error_before", "rms_rel_error_after",
					 "loo_mean_abs_rel_error_before",
					 "loo_mean_abs_rel_error_after",
					 "memory_loo_mean_abs_rel_error_before",
					 "memory_loo_mean_abs_rel_error_after", "runs",
					 "step_memory_factor", "memory_basis",
					 "step_memory_not_applied", "memory_points_used",
					 "max_allocated_rms_rel_error_before",
					 "max_allocated_rms_rel_error_after",
					 "max_allocated_loo_mean_abs_rel_error_before",
					 "max_allocated_loo_mean_abs_rel_error_after", "memory_points",
					 NULL };
static const char *const corr_run_keys[] = { "file", "name", "measured_step_s",
					     "predicted_step_s", "corrected_step_s",
					     "measured_mem_bytes", "predicted_mem_bytes", NULL };
static const char *const corr_drop_keys[] = { "factor", "why", NULL };
static const char *const corr_pt_keys[] = { "file", "name", "rank", "stage",
					    "measured_max_allocated_bytes",
					    "predicted_max_allocated_bytes",
					    "corrected_max_allocated_bytes",
					    "measured_max_reserved_bytes", "predicted_reserved_bytes",
					    "corrected_reserved_bytes", NULL };
static const char *const skeleton_keys[] = { "copy_gbps", "bytes", "source", NULL };

static const char *const dtype_names[MT_DT_N] = { "bf16", "fp16", "fp8", "tf32", "fp32", "fp4" };
static const char *const coll_names[MT_COLL_N] = { "all_reduce", "all_gather",
						   "reduce_scatter", "alltoall",
						   "sendrecv", "broadcast" };
static const char *const span_names[MT_SPAN_N] = { "nvlink", "network" };
static const char *const impl_names[MT_ATTN_IMPL_N] = { "flash", "unfused" };
static const char *const dir_names[MT_OFF_N] = { "h2d", "d2h", "bidirectional" };

const char *mt_dtype_name(int dt)
{
	return dt >= 0 && dt < MT_DT_N ? dtype_names[dt] : "?";
}

static int parse_in(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

int mt_dtype_parse(const char *s) { return parse_in(s, dtype_names, MT_DT_N); }
const char *mt_coll_name(int op) { return op >= 0 && op < MT_COLL_N ? coll_names[op] : "?"; }
int mt_coll_parse(const char *s) { return parse_in(s, coll_names, MT_COLL_N); }
const char *mt_span_name(int span) { return span >= 0 && span < MT_SPAN_N ? span_names[span] : "?"; }
const char *mt_attn_impl_name(int impl)
{
	return impl >= 0 && impl < MT_ATTN_IMPL_N ? impl_names[impl] : "?";
}
const char *mt_offload_dir_name(int dir) { return dir >= 0 && dir < MT_OFF_N ? dir_names[dir] : "?"; }

double mt_coll_busbw_factor(int op, int n)
{
	if (n <= 1)
		return 1;
	switch (op) {
	case MT_COLL_ALL_REDUCE:
		return 2.0 * (n - 1) / n;
	case MT_COLL_ALL_GATHER:
	case MT_COLL_REDUCE_SCATTER:
	case MT_COLL_ALL_TO_ALL:
		return (double)(n - 1) / n;
	default:
		return 1;
	}
}

const struct mt_source *mt_cluster_source(const struct mt_cluster *c, int i)
{
	return i >= 0 && i < c->nsources ? &c->sources[i] : NULL;
}

double mt_cluster_mfu_peak(const struct mt_cluster *c, int dtype, int *used)
{
	if (dtype < 0 || dtype >= MT_DT_N || !(c->peak_tflops[dtype] > 0))
		dtype = MT_DT_BF16;
	if (used)
		*used = dtype;
	return c->peak_tflops[dtype];
}

void mt_cluster_free(struct mt_cluster *c)
{
	int i;

	if (!c)
		return;
	free(c->sources);
	free(c->gemm);
	for (i = 0; i < MT_DT_N; i++) {
		free(c->gcurve[i].lc);
		free(c->gcurve[i].lr);
	}
	free(c->attn);
	for (i = 0; i < c->ncoll; i++) {
		free(c->coll[i].pts);
		free(c->coll[i].lx);
		free(c->coll[i].ly);
	}
	free(c->coll);
	free(c->offload);
	mt_dispatch_free(&c->dispatch);
	for (i = 0; i < c->noutliers; i++)
		free(c->outliers[i]);
	free(c->outliers);
	free(c);
}

/* ---------------------------------------------------------------- reading */

struct rd {
	const char *file;
	struct mt_cluster *c;
	struct mt_error *err;
};

static int source_ref(struct rd *r, const cJSON *o, const char *where, int required, int dflt,
		      int *out)
{
	struct mt_jpos at = { r->file, where };
	char id[48], p[256];
	int rc, i;

	*out = dflt;
	rc = mt_jstr(&at, o, "source", required && dflt < 0, id, sizeof(id), r->err);
	if (rc <= 0)
		return rc;
	for (i = 0; i < r->c->nsources; i++)
		if (!strcmp(r->c->sources[i].id, id)) {
			*out = i;
			return 1;
		}
	return mt_error_set(r->err, MT_EINVAL,
			    "%s: field '%s': unknown source id \"%s\" (expected an id listed in "
			    "'sources')", r->file, mt_jpath(p, sizeof(p), where, "source"), id);
}

static int read_stats(struct rd *r, const cJSON *o, const char *where, struct mt_stats *st)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "stats");
	char p[256];
	int rc;

	if (cJSON_IsObject(s) &&
	    (rc = mt_jkeys(&(struct mt_jpos){ r->file, mt_jpath(p, sizeof(p), where, "stats") }, s,
			   stats_keys, r->err)) < 0)
		return rc;
	return mt_stats_read(&(struct mt_jpos){ r->file, where }, o, "stats", 0, st, r->err);
}

static int enum_field(struct rd *r, const cJSON *o, const char *where, const char *key,
		      const char *const *names, int n, int required, int *out)
{
	struct mt_jpos at = { r->file, where };
	char s[48], p[256], list[256] = "";
	int rc, i;

	rc = mt_jstr(&at, o, key, required, s, sizeof(s), r->err);
	if (rc <= 0)
		return rc;
	i = parse_in(s, names, n);
	if (i >= 0) {
		*out = i;
		return 1;
	}
	for (i = 0; i < n; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"",
			 i ? ", " : "", names[i]);
	return mt_error_set(r->err, MT_EINVAL, "%s: field '%s': expected one of %s, got \"%s\"",
			    r->file, mt_jpath(p, sizeof(p), where, key), list, s);
}

static int read_sources(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" };
	const cJSON *arr, *e;
	static const char *const kinds[] = { "spec", "published", "measured", "imported",
					     "derived" };
	char w[64];
	int rc, i = 0, j, k;

	if ((rc = mt_jarr(&at, root, "sources", 1, &arr, r->err)) < 0)
		return rc;
	r->c->nsources = cJSON_GetArraySize(arr);
	if (!r->c->nsources)
		return mt_error_set(r->err, MT_EINVAL,
				    "%s: field 'sources': expected at least one source (every value "
				    "needs its provenance)", r->file);
	r->c->sources = calloc((size_t)r->c->nsources, sizeof(*r->c->sources));
	if (!r->c->sources)
		return mt_error_set(r->err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		struct mt_source *s = &r->c->sources[i];
		struct mt_jpos ea = { r->file, mt_jpath_index(w, sizeof(w), "sources", i) };

		if (!cJSON_IsObject(e))
			return mt_error_set(r->err, MT_EINVAL, "%s: field '%s': expected an object",
					    r->file, ea.where);
		if ((rc = mt_jkeys(&ea, e, source_keys, r->err)) < 0 ||
		    (rc = mt_jstr(&ea, e, "id", 1, s->id, sizeof(s->id), r->err)) < 0 ||
		    (rc = mt_jstr(&ea, e, "citation", 1, s->citation, sizeof(s->citation), r->err)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "kind", kinds, 5, 1, &k)) < 0)
			return rc;
		snprintf(s->kind, sizeof(s->kind), "%s", kinds[k]);
		for (j = 0; j < i; j++)
			if (!strcmp(r->c->sources[j].id, s->id))
				return mt_error_set(r->err, MT_EINVAL,
						    "%s: field '%s.id': duplicate source id \"%s\"",
						    r->file, ea.where, s->id);
		i++;
	}
	return MT_OK;
}

static int read_gpu(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" }, ga = { r->file, "gpu" },
		       pa = { r->file, "gpu.peak_tflops" };
	const cJSON *g, *pk;
	struct mt_cluster *c = r->c;
	int rc, i;

	if ((rc = mt_jobj(&at, root, "gpu", 1, &g, r->err)) < 0)
		return rc;
	if ((rc = mt_jkeys(&ga, g, gpu_keys, r->err)) < 0 ||
	    (rc = mt_jstr(&ga, g, "name", 1, c->gpu_name, sizeof(c->gpu_name), r->err)) < 0 ||
	    (rc = mt_jnum(&ga, g, "memory_bytes", 1, 1e9, 1e14, &c->memory_bytes, r->err)) < 0 ||
	    (rc = mt_jint32(&ga, g, "sm_count", 0, 1, 100000, &c->sm_count, r->err)) < 0 ||
	    (rc = mt_jnum(&ga, g, "compute_capability", 0, 1, 100, &c->compute_capability, r->err)) < 0 ||
	    (rc = mt_jnum(&ga, g, "hbm_gbps", 1, 1, 1e6, &c->hbm_spec_gbps, r->err)) < 0 ||
	    (rc = mt_jobj(&ga, g, "peak_tflops", 1, &pk, r->err)) < 0 ||
	    (rc = source_ref(r, g, "gpu", 1, -1, &c->gpu_src)) < 0)
		return rc;
	{
		const char *dts[MT_DT_N + 1];

		for (i = 0; i < MT_DT_N; i++)
			dts[i] = dtype_names[i];
		dts[MT_DT_N] = NULL;
		if ((rc = mt_jkeys(&pa, pk, dts, r->err)) < 0)
			return rc;
	}
	for (i = 0; i < MT_DT_N; i++)
		if ((rc = mt_jnum(&pa, pk, dtype_names[i], i == MT_DT_BF16, 0.001, 1e6,
				  &c->peak_tflops[i], r->err)) < 0)
			return rc;
	return MT_OK;
}

static int read_node(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" }, na = { r->file, "node" };
	const cJSON *n;
	struct mt_cluster *c = r->c;
	int rc;

	if ((rc = mt_jobj(&at, root, "node", 1, &n, r->err)) < 0)
		return rc;
	c->numa_nodes = 1;
	c->nic_latency_us = MT_NIC_LATENCY_US;
	if ((rc = mt_jkeys(&na, n, node_keys, r->err)) < 0 ||
	    (rc = mt_jint32(&na, n, "gpus_per_node", 1, 1, 4096, &c->gpus_per_node, r->err)) < 0 ||
	    (rc = mt_jint32(&na, n, "nvlink_domain", 1, 1, 1 << 20, &c->nvlink_domain, r->err)) < 0 ||
	    (rc = mt_jnum(&na, n, "nvlink_gbps", c->nvlink_domain > 1, 0.1, 1e6, &c->nvlink_gbps, r->err)) < 0 ||
	    (rc = mt_jint32(&na, n, "nics_per_node", 1, 0, 4096, &c->nics_per_node, r->err)) < 0 ||
	    (rc = mt_jnum(&na, n, "nic_gbps", c->nics_per_node > 0, 0.1, 1e6, &c->nic_gbps, r->err)) < 0 ||
	    (rc = mt_jnum(&na, n, "nic_latency_us", 0, 0.01, 1e5, &c->nic_latency_us, r->err)) < 0 ||
	    (rc = mt_jnum(&na, n, "pcie_gbps", 0, 0.1, 1e6, &c->pcie_gbps, r->err)) < 0 ||
	    (rc = mt_jnum(&na, n, "host_memory_bytes", 0, 1e9, 1e15, &c->host_memory_bytes,
			  r->err)) < 0 ||
	    (rc = c->numa_given = mt_jint32(&na, n, "numa_nodes", 0, 1, 1024, &c->numa_nodes,
					    r->err)) < 0 ||
	    (rc = source_ref(r, n, "node", 1, -1, &c->node_src)) < 0)
		return rc;
	if (c->nvlink_domain % c->gpus_per_node && c->gpus_per_node % c->nvlink_domain)
		return mt_error_set(r->err, MT_EINVAL,
				    "%s: field 'node.nvlink_domain': %d must divide or be a multiple "
				    "of node.gpus_per_node (%d)", r->file, c->nvlink_domain,
				    c->gpus_per_node);
	return MT_OK;
}

static int read_hbm(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" }, ma = { r->file, "memory_bandwidth" };
	const cJSON *m = NULL;
	char kernel[256];
	int rc;

	if ((rc = mt_jobj(&at, root, "memory_bandwidth", 0, &m, r->err)) < 0)
		return rc;
	if (!rc) { /* no measurement: 90% of the datasheet, provenance of the GPU */
		r->c->hbm_gbps = 0.9 * r->c->hbm_spec_gbps;
		r->c->hbm_src = r->c->gpu_src;
		return MT_OK;
	}
	if ((rc = mt_jkeys(&ma, m, membw_keys, r->err)) < 0 ||
	    (rc = mt_jnum(&ma, m, "gbps", 1, 1, 1e6, &r->c->hbm_measured_gbps, r->err)) < 0 ||
	    (rc = mt_jstr(&ma, m, "kernel", 0, kernel, sizeof(kernel), r->err)) < 0 ||
	    (rc = source_ref(r, m, "memory_bandwidth", 1, -1, &r->c->hbm_src)) < 0)
		return rc;
	r->c->hbm_measured = 1;
	/* the datasheet bounds what was measured (mt_cluster_note names it) */
	r->c->hbm_gbps = r->c->hbm_measured_gbps < r->c->hbm_spec_gbps ? r->c->hbm_measured_gbps
								      : r->c->hbm_spec_gbps;
	return MT_OK;
}

static int read_gemm(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" };
	const cJSON *arr = NULL, *e;
	char w[64];
	int rc, i = 0;

	if ((rc = mt_jarr(&at, root, "gemm", 1, &arr, r->err)) < 0)
		return rc;
	r->c->ngemm = cJSON_GetArraySize(arr);
	r->c->gemm = calloc((size_t)r->c->ngemm + 1, sizeof(*r->c->gemm));
	if (!r->c->gemm)
		return mt_error_set(r->err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		struct mt_gemm_pt *g = &r->c->gemm[i];
		struct mt_jpos ea = { r->file, mt_jpath_index(w, sizeof(w), "gemm", i) };

		if (!cJSON_IsObject(e))
			return mt_error_set(r->err, MT_EINVAL, "%s: field '%s': expected an object",
					    r->file, ea.where);
		if ((rc = mt_jkeys(&ea, e, gemm_keys, r->err)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "dtype", dtype_names, MT_DT_N, 1, &g->dtype)) < 0 ||
		    (rc = mt_jnum(&ea, e, "m", 1, 1, 1e9, &g->m, r->err)) < 0 ||
		    (rc = mt_jnum(&ea, e, "n", 1, 1, 1e9, &g->n, r->err)) < 0 ||
		    (rc = mt_jnum(&ea, e, "k", 1, 1, 1e9, &g->k, r->err)) < 0 ||
		    (rc = mt_jnum(&ea, e, "tflops", 1, 1e-6, 1e6, &g->tflops, r->err)) < 0 ||
		    (rc = read_stats(r, e, ea.where, &g->st)) < 0 ||
		    (rc = source_ref(r, e, ea.where, 1, -1, &g->src)) < 0)
			return rc;
		if (r->c->peak_tflops[g->dtype] > 0 && g->tflops > 1.02 * r->c->peak_tflops[g->dtype])
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field '%s.tflops': %.1f is above the %s peak of "
					    "%.1f TFLOP/s in gpu.peak_tflops", r->file, ea.where,
					    g->tflops, dtype_names[g->dtype],
					    r->c->peak_tflops[g->dtype]);
		i++;
	}
	return MT_OK;
}

static int read_attention(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" };
	const cJSON *arr = NULL, *e;
	char w[64];
	int rc, i = 0;

	if ((rc = mt_jarr(&at, root, "attention", 0, &arr, r->err)) <= 0)
		return rc;
	r->c->nattn = cJSON_GetArraySize(arr);
	r->c->attn = calloc((size_t)r->c->nattn + 1, sizeof(*r->c->attn));
	if (!r->c->attn)
		return mt_error_set(r->err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		struct mt_attn_pt *a = &r->c->attn[i];
		struct mt_jpos ea = { r->file, mt_jpath_index(w, sizeof(w), "attention", i) };

		if (!cJSON_IsObject(e))
			return mt_error_set(r->err, MT_EINVAL, "%s: field '%s': expected an object",
					    r->file, ea.where);
		a->impl = MT_ATTN_FLASH;
		a->dtype = MT_DT_BF16;
		if ((rc = mt_jkeys(&ea, e, attn_keys, r->err)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "impl", impl_names, MT_ATTN_IMPL_N, 0, &a->impl)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "dtype", dtype_names, MT_DT_N, 0, &a->dtype)) < 0 ||
		    (rc = mt_jint32(&ea, e, "head_dim", 1, 1, 4096, &a->head_dim, r->err)) < 0 ||
		    (rc = mt_jint32(&ea, e, "seq", 1, 1, 1 << 28, &a->seq, r->err)) < 0 ||
		    (rc = mt_jbool(&ea, e, "causal", 0, &a->causal, r->err)) < 0 ||
		    (rc = mt_jnum(&ea, e, "fwd_tflops", 1, 1e-6, 1e6, &a->fwd_tflops, r->err)) < 0 ||
		    (rc = mt_jnum(&ea, e, "bwd_tflops", 1, 1e-6, 1e6, &a->bwd_tflops, r->err)) < 0 ||
		    (rc = source_ref(r, e, ea.where, 1, -1, &a->src)) < 0)
			return rc;
		i++;
	}
	return MT_OK;
}

static int cmp_pt(const void *a, const void *b)
{
	const struct mt_coll_pt *x = a, *y = b;

	return (x->bytes > y->bytes) - (x->bytes < y->bytes);
}

static int read_collectives(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" };
	const cJSON *arr = NULL, *e, *pts, *p;
	char w[64], w2[96];
	int rc, i = 0, j;

	if ((rc = mt_jarr(&at, root, "collectives", 0, &arr, r->err)) <= 0)
		return rc;
	r->c->coll = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*r->c->coll));
	if (!r->c->coll) /* ncoll stays 0: mt_cluster_free frees no curve */
		return mt_error_set(r->err, MT_ENOMEM, "out of memory");
	r->c->ncoll = cJSON_GetArraySize(arr);
	cJSON_ArrayForEach(e, arr) {
		struct mt_coll_curve *cv = &r->c->coll[i];
		struct mt_jpos ea = { r->file, mt_jpath_index(w, sizeof(w), "collectives", i) };

		if (!cJSON_IsObject(e))
			return mt_error_set(r->err, MT_EINVAL, "%s: field '%s': expected an object",
					    r->file, ea.where);
		if ((rc = mt_jkeys(&ea, e, coll_keys, r->err)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "op", coll_names, MT_COLL_N, 1, &cv->op)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "span", span_names, MT_SPAN_N, 1, &cv->span)) < 0 ||
		    (rc = mt_jint32(&ea, e, "ranks", 1, 2, 1 << 24, &cv->ranks, r->err)) < 0 ||
		    (rc = mt_jint32(&ea, e, "ranks_per_node", 0, 1, 1 << 24, &cv->per_node, r->err)) < 0 ||
		    (rc = source_ref(r, e, ea.where, 1, -1, &cv->src)) < 0 ||
		    (rc = mt_jarr(&ea, e, "points", 1, &pts, r->err)) < 0)
			return rc;
		if (!cv->per_node)
			cv->per_node = cv->span == MT_SPAN_NVLINK ? cv->ranks
								  : (r->c->gpus_per_node < cv->ranks
									     ? r->c->gpus_per_node
									     : 1);
		if (cv->span == MT_SPAN_NVLINK && cv->ranks > r->c->nvlink_domain)
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field '%s.ranks': %d ranks cannot be inside an "
					    "NVLink domain of %d GPUs", r->file, ea.where, cv->ranks,
					    r->c->nvlink_domain);
		if (cv->per_node > cv->ranks)
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field '%s.ranks_per_node': %d is more than the %d "
					    "ranks", r->file, ea.where, cv->per_node, cv->ranks);
		if (cv->span == MT_SPAN_NETWORK && cv->per_node > r->c->gpus_per_node)
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field '%s.ranks_per_node': %d ranks on a node of "
					    "node.gpus_per_node %d GPUs", r->file, ea.where, cv->per_node,
					    r->c->gpus_per_node);
		cv->npts = cJSON_GetArraySize(pts);
		if (cv->npts < 1)
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field '%s.points': expected at least one point",
					    r->file, ea.where);
		cv->pts = calloc((size_t)cv->npts, sizeof(*cv->pts));
		cv->lx = calloc((size_t)cv->npts, sizeof(double));
		cv->ly = calloc((size_t)cv->npts, sizeof(double));
		if (!cv->pts || !cv->lx || !cv->ly)
			return mt_error_set(r->err, MT_ENOMEM, "out of memory");
		j = 0;
		cJSON_ArrayForEach(p, pts) {
			struct mt_coll_pt *pt = &cv->pts[j];
			struct mt_jpos pa = { r->file, NULL };
			char ws[64];
			double algbw;
			int has_t = 0;

			snprintf(ws, sizeof(ws), "%s.points", ea.where);
			pa.where = mt_jpath_index(w2, sizeof(w2), ws, j);
			if (!cJSON_IsObject(p))
				return mt_error_set(r->err, MT_EINVAL,
						    "%s: field '%s': expected an object", r->file,
						    pa.where);
			if ((rc = mt_jkeys(&pa, p, point_keys, r->err)) < 0 ||
			    (rc = mt_jnum(&pa, p, "bytes", 1, 1, 1e15, &pt->bytes, r->err)) < 0 ||
			    (rc = mt_jnum(&pa, p, "busbw_gbps", 1, 1e-6, 1e6, &pt->busbw_gbps, r->err)) < 0 ||
			    (has_t = mt_jnum(&pa, p, "time_us", 0, 1e-3, 1e12, &pt->time_us, r->err)) < 0 ||
			    (rc = read_stats(r, p, pa.where, &pt->st)) < 0 ||
			    (rc = source_ref(r, p, pa.where, 0, cv->src, &pt->src)) < 0)
				return has_t < 0 ? has_t : rc;
			algbw = pt->busbw_gbps / mt_coll_busbw_factor(cv->op, cv->ranks);
			if (!has_t)
				pt->time_us = pt->bytes / (algbw * 1e3);
			j++;
		}
		qsort(cv->pts, (size_t)cv->npts, sizeof(*cv->pts), cmp_pt);
		for (j = 1; j < cv->npts; j++)
			if (cv->pts[j].bytes == cv->pts[j - 1].bytes)
				return mt_error_set(r->err, MT_EINVAL,
						    "%s: field '%s.points': two points for %.0f bytes",
						    r->file, ea.where, cv->pts[j].bytes);
		i++;
	}
	return MT_OK;
}

static int read_offload(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" };
	const cJSON *arr = NULL, *e;
	struct mt_stats st;
	char w[64], mem[16];
	int rc, i = 0;

	if ((rc = mt_jarr(&at, root, "offload", 0, &arr, r->err)) <= 0)
		return rc;
	r->c->noffload = cJSON_GetArraySize(arr);
	r->c->offload = calloc((size_t)r->c->noffload + 1, sizeof(*r->c->offload));
	if (!r->c->offload)
		return mt_error_set(r->err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		struct mt_offload_pt *o = &r->c->offload[i];
		struct mt_jpos ea = { r->file, mt_jpath_index(w, sizeof(w), "offload", i) };

		if (!cJSON_IsObject(e))
			return mt_error_set(r->err, MT_EINVAL, "%s: field '%s': expected an object",
					    r->file, ea.where);
		snprintf(mem, sizeof(mem), "pinned");
		o->numa_local = 1;
		if ((rc = mt_jkeys(&ea, e, offload_keys, r->err)) < 0 ||
		    (rc = enum_field(r, e, ea.where, "direction", dir_names, MT_OFF_N, 1, &o->dir)) < 0 ||
		    (rc = mt_jstr(&ea, e, "memory", 0, mem, sizeof(mem), r->err)) < 0 ||
		    (rc = mt_jbool(&ea, e, "numa_local", 0, &o->numa_local, r->err)) < 0 ||
		    (rc = mt_jbool(&ea, e, "under_load", 0, &o->under_load, r->err)) < 0 ||
		    (rc = mt_jnum(&ea, e, "gbps", 1, 1e-3, 1e6, &o->gbps, r->err)) < 0 ||
		    (rc = read_stats(r, e, ea.where, &st)) < 0 ||
		    (rc = source_ref(r, e, ea.where, 1, -1, &o->src)) < 0)
			return rc;
		if (strcmp(mem, "pinned") && strcmp(mem, "pageable"))
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field '%s.memory': expected \"pinned\" or "
					    "\"pageable\", got \"%s\"", r->file, ea.where, mem);
		o->pinned = !strcmp(mem, "pinned");
		i++;
	}
	return MT_OK;
}

static int read_host(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" }, ha = { r->file, "host" };
	const cJSON *h = NULL;
	int rc;

	if ((rc = mt_jobj(&at, root, "host", 0, &h, r->err)) <= 0)
		return rc;
	if ((rc = mt_jkeys(&ha, h, host_keys, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "launch_overhead_us", 0, 0.01, 1e6, &r->c->launch_overhead_us, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "optimizer_gparams_per_s", 0, 1e-6, 1e6, &r->c->optimizer_gparams_per_s, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "memory_gbps", 0, 1e-3, 1e6, &r->c->host_memory_gbps, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "eager_op_us", 0, 0.1, 1e4, &r->c->eager_op_us, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "te_module_us", 0, 0.1, 1e4, &r->c->te_module_us, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "graph_launch_us", 0, 0.1, 1e4, &r->c->graph_launch_us, r->err)) < 0 ||
	    (rc = mt_jnum(&ha, h, "sync_us", 0, 0.1, 1e5, &r->c->sync_us, r->err)) < 0 ||
	    (rc = source_ref(r, h, "host", 1, -1, &r->c->host_src)) < 0)
		return rc;
	return MT_OK;
}


static int read_software(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" }, sa = { r->file, "software" };
	const cJSON *s = NULL;
	int rc;

	if ((rc = mt_jobj(&at, root, "software", 0, &s, r->err)) <= 0)
		return rc;
	if ((rc = mt_jkeys(&sa, s, software_keys, r->err)) < 0 ||
	    (rc = mt_jstr(&sa, s, "nccl", 0, r->c->nccl_version, sizeof(r->c->nccl_version), r->err)) < 0 ||
	    (rc = mt_jstr(&sa, s, "cuda", 0, r->c->cuda_version, sizeof(r->c->cuda_version), r->err)) < 0)
		return rc;
	if (r->c->nccl_version[0] && mt_ver_code(r->c->nccl_version) < 0)
		return mt_error_set(r->err, MT_EINVAL,
				    "%s: field 'software.nccl': expected a version like \"2.21.5\", "
				    "got \"%s\"", r->file, r->c->nccl_version);
	if (r->c->cuda_version[0] && mt_ver_code(r->c->cuda_version) < 0)
		return mt_error_set(r->err, MT_EINVAL,
				    "%s: field 'software.cuda': expected a version like \"12.4\", "
				    "got \"%s\"", r->file, r->c->cuda_version);
	return MT_OK;
}

static int read_outliers(struct rd *r, const cJSON *root)
{
	struct mt_jpos at = { r->file, "" };
	const cJSON *arr = NULL, *e;
	int rc, i = 0;

	if ((rc = mt_jarr(&at, root, "outliers", 0, &arr, r->err)) <= 0)
		return rc;
	r->c->noutliers = cJSON_GetArraySize(arr);
	r->c->outliers = calloc((size_t)r->c->noutliers + 1, sizeof(char *));
	if (!r->c->outliers)
		return mt_error_set(r->err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		const cJSON *what = cJSON_GetObjectItemCaseSensitive(e, "what");
		const char *s = cJSON_IsString(e) ? e->valuestring
			      : cJSON_IsString(what) ? what->valuestring : NULL;

		if (!s)
			return mt_error_set(r->err, MT_EINVAL,
					    "%s: field 'outliers[%d]': expected a string or an object "
					    "with a string 'what'", r->file, i);
		if (cJSON_IsObject(e)) {
			char w[64];
			int rc2 = mt_jkeys(&(struct mt_jpos){ r->file,
						   mt_jpath_index(w, sizeof(w), "outliers", i) },
					   e, outlier_keys, r->err);

			if (rc2 < 0)
				return rc2;
		}
		r->c->outliers[i] = strdup(s);
		if (!r->c->outliers[i])
			return mt_error_set(r->err, MT_ENOMEM, "out of memory");
		i++;
	}
	return MT_OK;
}

/* The keys of the records of two sections no reader here reads: the fitted
 * corrections' provenance (the factors are correction.c's) and the template
 * probe's record (probes/skeleton.c), which no model reads. */
static int check_sections(struct rd *r, const cJSON *root)
{
	static const struct {
		const char *key;
		const char *const *keys;
	} lists[] = { { "runs", corr_run_keys }, { "not_fitted", corr_drop_keys },
		      { "memory_points", corr_pt_keys } };
	struct mt_jpos at = { r->file, "" }, ca = { r->file, "corrections" },
		       sa = { r->file, "skeleton" };
	const cJSON *sec = cJSON_GetObjectItemCaseSensitive(root, "corrections"), *e;
	char w[64], p[64];
	size_t l;
	int rc, i, src;

	if (cJSON_IsObject(sec)) {
		if ((rc = mt_jkeys(&ca, sec, corr_keys, r->err)) < 0)
			return rc;
		for (l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
			i = 0;
			snprintf(p, sizeof(p), "corrections.%s", lists[l].key);
			cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(sec, lists[l].key)) {
				struct mt_jpos ea = { r->file, mt_jpath_index(w, sizeof(w), p, i++) };

				if (cJSON_IsObject(e) && (rc = mt_jkeys(&ea, e, lists[l].keys, r->err)) < 0)
					return rc;
			}
		}
	}
	if ((rc = mt_jobj(&at, root, "skeleton", 0, &sec, r->err)) <= 0)
		return rc;
	if ((rc = mt_jkeys(&sa, sec, skeleton_keys, r->err)) < 0 ||
	    (rc = source_ref(r, sec, "skeleton", 0, -1, &src)) < 0)
		return rc;
	return MT_OK;
}

int mt_cluster_from_json(const cJSON *root, const char *file, struct mt_cluster **out,
			 struct mt_error *err)
{
	struct mt_jpos at = { file, "" };
	struct mt_cluster *c;
	struct rd r;
	char schema[64];
	int rc;

	*out = NULL;
	if (!cJSON_IsObject(root))
		return mt_error_set(err, MT_EINVAL, "%s: expected a JSON object at the top level, got %s",
				    file, mt_json_type(root));
	if ((rc = mt_jstr(&at, root, "schema", 1, schema, sizeof(schema), err)) < 0)
		return rc;
	if (strncmp(schema, "megatune.profile/", 17))
		return mt_error_set(err, MT_EINVAL,
				    "%s: field 'schema': expected \"megatune.profile/1\", got \"%s\"",
				    file, schema);
	if (strcmp(schema, "megatune.profile/1"))
		return mt_error_set(err, MT_EINVAL,
				    "%s: field 'schema': version \"%s\" is not supported (this "
				    "megatune reads megatune.profile/1)", file, schema);
	if ((rc = mt_jkeys(&at, root, top_keys, err)) < 0)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	r.file = file;
	r.c = c;
	r.err = err;
	snprintf(c->file, sizeof(c->file), "%s", file);
	c->host_src = -1;
	if ((rc = mt_jstr(&at, root, "name", 1, c->name, sizeof(c->name), err)) < 0 ||
	    (rc = mt_jstr(&at, root, "description", 0, c->description, sizeof(c->description), err)) < 0 ||
	    (rc = read_sources(&r, root)) < 0 || (rc = read_gpu(&r, root)) < 0 ||
	    (rc = read_node(&r, root)) < 0 || (rc = read_hbm(&r, root)) < 0 ||
	    (rc = read_gemm(&r, root)) < 0 || (rc = read_attention(&r, root)) < 0 ||
	    (rc = read_collectives(&r, root)) < 0 || (rc = read_offload(&r, root)) < 0 ||
	    (rc = read_host(&r, root)) < 0 || (rc = read_software(&r, root)) < 0 ||
	    (rc = read_outliers(&r, root)) < 0 || (rc = check_sections(&r, root)) < 0 ||
	    (rc = mt_dispatch_read(root, file, c, err)) < 0 ||
	    (rc = mt_cluster_prepare_gemm(c, file, err)) < 0)
		goto fail;
	if (c->gpus_per_node > 1 || c->nvlink_domain > 1) {
		int i, has = 0;
		for (i = 0; i < c->ncoll; i++)
			has |= c->coll[i].span == MT_SPAN_NVLINK;
		if (!has) {
			rc = mt_error_set(err, MT_EINVAL,
					  "%s: field 'collectives': expected at least one curve with "
					  "span \"nvlink\" for a node of %d GPUs", file,
					  c->gpus_per_node);
			goto fail;
		}
	}
	if ((rc = mt_corr_read(root, file, &c->corr, err)))
		goto fail;
	mt_cluster_prepare_coll(c);
	*out = c;
	return MT_OK;
fail:
	mt_cluster_free(c);
	return rc;
}

int mt_cluster_load(const char *spec, struct mt_cluster **out, struct mt_error *err)
{
	const char *file;
	cJSON *root = NULL;
	int rc;

	*out = NULL;
	rc = mt_profile_read(spec, &root, &file, err);
	if (!rc)
		rc = mt_cluster_from_json(root, file, out, err);
	cJSON_Delete(root);
	return rc;
}
