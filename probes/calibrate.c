/* SPDX-License-Identifier: MIT */
#include "calibrate.h"

#include "../lib/jsonr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../tuner/cluster.h"
#include "../tuner/profile.h"

/* ------------------------------------------------------------- reading */

int mt_results_read(const char *path, cJSON **head, cJSON **records, int *truncated,
		    struct mt_error *err)
{
	char *text = NULL, *line, *next;
	size_t len;
	int rc, lineno = 0;
	cJSON *recs;

	*head = *records = NULL;
	*truncated = 0;
	if ((rc = mt_read_file(path, (size_t)1 << 30, &text, &len, err)))
		return rc;
	recs = cJSON_CreateArray();
	for (line = text; line && *line; line = next) {
		const char *end = NULL;
		cJSON *o;
		const cJSON *schema;

		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		lineno++;
		if (!*line)
			continue;
		o = cJSON_ParseWithOpts(line, &end, 1);
		if (!o || !cJSON_IsObject(o)) {
			cJSON_Delete(o);
			if (!next) { /* the last line, cut short by a killed run */
				*truncated = 1;
				break;
			}
			free(text);
			cJSON_Delete(recs);
			cJSON_Delete(*head);
			*head = NULL;
			return mt_error_set(err, MT_EPARSE,
					    "%s: line %d: expected a megatune.result/1 JSON record",
					    path, lineno);
		}
		schema = cJSON_GetObjectItemCaseSensitive(o, "schema");
		if (lineno == 1 && !schema) {
			cJSON_Delete(o);
			break; /* no head: said below */
		}
		if (lineno == 1 || cJSON_IsString(schema)) {
			if (lineno != 1 || !cJSON_IsString(schema) ||
			    strcmp(schema->valuestring, "megatune.result/1")) {
				cJSON_Delete(o);
				free(text);
				cJSON_Delete(recs);
				cJSON_Delete(*head);
				*head = NULL;
				return mt_error_set(err, MT_EINVAL,
						    "%s: line %d: field 'schema': expected "
						    "\"megatune.result/1\" in the first record only",
						    path, lineno);
			}
			*head = o;
			continue;
		}
		cJSON_AddItemToArray(recs, o);
	}
	free(text);
	if (!*head) {
		cJSON_Delete(recs);
		return mt_error_set(err, MT_EINVAL, "%s: expected a megatune.result/1 head record "
				    "on line 1 (is it a results file of megatune calibrate?)", path);
	}
	*records = recs;
	return MT_OK;
}




int mt_results_has(const cJSON *records, const char *probe, const char *label)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, records)
		if (!strcmp(mt_jget_str(r, "probe"), probe) && !strcmp(mt_jget_str(r, "label"), label))
			return 1;
	return 0;
}

/* The record's main rate: TFLOP/s, busbw or GB/s; 0 when it has none. */
static double rate_of(const cJSON *r)
{
	double v = mt_jget_num(r, "tflops", 0);

	if (v > 0)
		return v;
	if ((v = mt_jget_num(r, "busbw_gbps", 0)) > 0)
		return v;
	return mt_jget_num(r, "gbps", 0);
}

static int usable(const cJSON *r)
{
	return !strcmp(mt_jget_str(r, "verified"), "yes") &&
	       cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "time_us"));
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* ------------------------------------------------------------ grouping */

/* Usable records grouped by (probe, label): one sort, so that a pass over
 * hundreds of thousands of per-rank records stays O(n log n).  Members of a
 * group keep file order; groups are in file order of their first member. */
struct item {
	const cJSON *r;
	int i;
};

struct rgroup {
	int start, n, first; /* first: the file index of its first member */
};

struct rgroups {
	struct item *it;
	struct rgroup *g;
	int ng;
};

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(mt_jget_str(x->r, "probe"), mt_jget_str(y->r, "probe"));

	if (!c)
		c = strcmp(mt_jget_str(x->r, "label"), mt_jget_str(y->r, "label"));
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int cmp_group_first(const void *a, const void *b)
{
	int x = ((const struct rgroup *)a)->first, y = ((const struct rgroup *)b)->first;
	return (x > y) - (x < y);
}

static int group_records(const cJSON *records, struct rgroups *out)
{
	int n = cJSON_GetArraySize(records), k = 0, i;
	const cJSON *r;

	memset(out, 0, sizeof(*out));
	out->it = calloc((size_t)n + 1, sizeof(*out->it));
	out->g = calloc((size_t)n + 1, sizeof(*out->g));
	if (!out->it || !out->g) {
		free(out->it);
		free(out->g);
		return MT_ENOMEM;
	}
	i = 0;
	cJSON_ArrayForEach(r, records) {
		if (usable(r)) {
			out->it[k].r = r;
			out->it[k++].i = i;
		}
		i++;
	}
	qsort(out->it, (size_t)k, sizeof(*out->it), cmp_item);
	for (i = 0; i < k; i++) {
		if (i == 0 || strcmp(mt_jget_str(out->it[i].r, "probe"), mt_jget_str(out->it[i - 1].r, "probe")) ||
		    strcmp(mt_jget_str(out->it[i].r, "label"), mt_jget_str(out->it[i - 1].r, "label"))) {
			out->g[out->ng].start = i;
			out->g[out->ng].first = out->it[i].i;
			out->ng++;
		}
		out->g[out->ng - 1].n++;
	}
	qsort(out->g, (size_t)out->ng, sizeof(*out->g), cmp_group_first);
	return MT_OK;
}

static void groups_free(struct rgroups *gr)
{
	free(gr->it);
	free(gr->g);
}

static const cJSON *member(const struct rgroups *gr, int g, int j)
{
	return gr->it[gr->g[g].start + j].r;
}

/* ------------------------------------------------------------ outliers */

int mt_find_outliers(const cJSON *records, double margin_pct, struct mt_outlier *out, int max)
{
	struct rgroups gr;
	double *v;
	int g, j, found = 0;

	if (group_records(records, &gr))
		return 0;
	v = calloc((size_t)cJSON_GetArraySize(records) + 1, sizeof(double));
	for (g = 0; v && g < gr.ng; g++) {
		const cJSON *f = member(&gr, g, 0);
		int k = 0, hosts2 = 0;
		double med;

		for (j = 0; j < gr.g[g].n; j++) {
			const cJSON *r = member(&gr, g, j);

			if (mt_jget_num(r, "rank", -1) < 0 || rate_of(r) <= 0)
				continue;
			v[k++] = rate_of(r);
			hosts2 |= strcmp(mt_jget_str(f, "host"), mt_jget_str(r, "host")) != 0;
		}
		if (k < 3 && !(k == 2 && hosts2))
			continue;
		med = median(v, k);
		for (j = 0; j < gr.g[g].n; j++) {
			const cJSON *r = member(&gr, g, j);
			double below = 100.0 * (1 - rate_of(r) / med);

			if (mt_jget_num(r, "rank", -1) < 0 || rate_of(r) <= 0 || below <= margin_pct)
				continue;
			if (found < max) {
				struct mt_outlier *o = &out[found];

				snprintf(o->what, sizeof(o->what), "%s rank %d (%s device %d)",
					 !strcmp(mt_jget_str(r, "probe"), "offload") ? "link of" :
					 !strcmp(mt_jget_str(r, "backend"), "cpu") ? "CPU" : "GPU",
					 (int)mt_jget_num(r, "rank", 0), mt_jget_str(r, "host"), (int)mt_jget_num(r, "device", 0));
				snprintf(o->metric, sizeof(o->metric), "%s %s", mt_jget_str(r, "probe"),
					 mt_jget_str(r, "label"));
				o->value = rate_of(r);
				o->median = med;
				o->below_pct = below;
			}
			found++;
		}
	}
	free(v);
	groups_free(&gr);
	return found;
}

/* ------------------------------------------------------------- profile */

/* Across the ranks of one group: the median of the ranks' median rates,
 * with the spread kept (n summed, min and max over all ranks, p95 the
 * slowest bound, cv the largest); *time_med is the median of the ranks'
 * median times.  MT_ENOMEM or MT_OK. */
static int aggregate(const struct rgroups *gr, int g, struct mt_stats *st, double *time_med)
{
	int n = gr->g[g].n, j;
	double *rate = calloc((size_t)n, sizeof(double)), *t = calloc((size_t)n, sizeof(double));

	if (!rate || !t) {
		free(rate);
		free(t);
		return MT_ENOMEM;
	}
	memset(st, 0, sizeof(*st));
	st->min = 1e300;
	for (j = 0; j < n; j++) {
		const cJSON *r = member(gr, g, j), *s = cJSON_GetObjectItemCaseSensitive(r, "rate");
		double rt = rate_of(r);

		rate[j] = rt;
		t[j] = mt_jget_num(cJSON_GetObjectItemCaseSensitive(r, "time_us"), "median", 0);
		st->n += (int)mt_jget_num(s, "n", 1);
		if (mt_jget_num(s, "min", rt) < st->min)
			st->min = mt_jget_num(s, "min", rt);
		if (mt_jget_num(s, "max", rt) > st->max)
			st->max = mt_jget_num(s, "max", rt);
		if (mt_jget_num(s, "cv", 0) > st->cv)
			st->cv = mt_jget_num(s, "cv", 0);
		st->p95 = mt_jget_num(s, "p95", rt);
	}
	st->median = median(rate, n);
	if (n > 1)
		st->p95 = st->min; /* several ranks: the slowest bound */
	*time_med = median(t, n);
	free(rate);
	free(t);
	return MT_OK;
}

struct gpu_known {
	const char *match, *profile;
};

static const char *base_for(const char *gpu)
{
	static const struct gpu_known k[] = {
		{ "GB200", "gb200-nvl72" }, { "B200", "dgx-b200" }, { "H200", "dgx-h200" },
		{ "H100", "dgx-h100" }, { "A100", "dgx-a100-80g" },
	};
	size_t i;

	for (i = 0; i < sizeof(k) / sizeof(k[0]); i++)
		if (strstr(gpu, k[i].match))
			return k[i].profile;
	return NULL;
}

static void set_num(cJSON *o, const char *key, double v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddNumberToObject(o, key, v);
}

static void set_str(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddStringToObject(o, key, v);
}


int mt_calibrate_profile(const cJSON *records, const struct mt_calib_info *in, cJSON **doc,
			 struct mt_error *err)
{
	const char *src = "measured";
	const struct mt_host_info *h0 = in->nhosts > 0 ? &in->hosts[0] : NULL;
	const char *base = NULL;
	double best[MT_DT_N] = { 0 }, membw = 0, nvl_bw = 0, net_bw = 0, biggest_off[8] = { 0 };
	const cJSON *r;
	cJSON *d, *gpu, *node;
	char cite[768];
	int rc, dt;
	struct mt_outlier outl[64];
	struct rgroups gr;
	int nout, i, g;

	*doc = NULL;
	if (in->backend == MT_BACKEND_CUDA && in->topo && in->topo->ngpus > 0)
		base = base_for(in->topo->gpu[0].name);
	if ((rc = mt_profile_new(base, in->name, &d, err)))
		return rc;
	snprintf(cite, sizeof(cite),
		 "megatune calibrate --backend %s on %d host%s (%s%s), %d rank%s%s%s; %s",
		 in->backend == MT_BACKEND_CUDA ? "cuda" : "cpu", in->nhosts,
		 in->nhosts == 1 ? "" : "s", h0 ? h0->host : "?", in->nhosts > 1 ? ", ..." : "",
		 in->ranks, in->ranks == 1 ? "" : "s", in->nccl ? ", NCCL " : "",
		 in->nccl ? in->nccl : "", in->when ? in->when : "");
	mt_profile_add_source(d, src, "measured", cite);
	cJSON_DeleteItemFromObjectCaseSensitive(d, "description");
	{
		char desc[512];
		snprintf(desc, sizeof(desc), "Calibrated by megatune calibrate%s%s.",
			 base ? "; values not measured come from the bundled profile " : "",
			 base ? base : "");
		cJSON_AddStringToObject(d, "description", desc);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(d, "outliers");

	/* best rates, for the peaks of an unknown device */
	cJSON_ArrayForEach(r, records) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "case");

		if (!usable(r))
			continue;
		if (!strcmp(mt_jget_str(r, "probe"), "gemm") && (dt = mt_dtype_parse(mt_jget_str(c, "dtype"))) >= 0 &&
		    mt_jget_num(r, "tflops", 0) > best[dt])
			best[dt] = mt_jget_num(r, "tflops", 0);
	}

	/* measurements, one group (probe and case) at a time */
	if (group_records(records, &gr)) {
		cJSON_Delete(d);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	for (g = 0; g < gr.ng; g++) {
		const cJSON *c;
		const char *probe;
		struct mt_stats st;
		double tmed;

		r = member(&gr, g, 0);
		c = cJSON_GetObjectItemCaseSensitive(r, "case");
		probe = mt_jget_str(r, "probe");
		if (!strcmp(probe, "collective")) {
			/* one record per case (all ranks combined): as measured */
			cJSON *cv = mt_profile_coll_curve(d, mt_jget_str(c, "op"), mt_jget_str(c, "span"),
							  (int)mt_jget_num(c, "ranks", 0),
							  (int)mt_jget_num(c, "ranks_per_node", 0), src);
			const cJSON *rs = cJSON_GetObjectItemCaseSensitive(r, "rate");
			struct mt_stats s = { (int)mt_jget_num(rs, "n", 0), mt_jget_num(rs, "median", 0),
					      mt_jget_num(rs, "min", 0), mt_jget_num(rs, "max", 0),
					      mt_jget_num(rs, "p95", 0), mt_jget_num(rs, "cv", 0) };

			mt_profile_coll_point(cv, mt_jget_num(c, "bytes", 0), mt_jget_num(r, "busbw_gbps", 0),
					      mt_jget_num(cJSON_GetObjectItemCaseSensitive(r, "time_us"),
						   "median", 0), s.n ? &s : NULL);
			if (!strcmp(mt_jget_str(c, "op"), "all_reduce")) {
				double *bw = !strcmp(mt_jget_str(c, "span"), "nvlink") ? &nvl_bw : &net_bw;
				if (mt_jget_num(r, "busbw_gbps", 0) > *bw)
					*bw = mt_jget_num(r, "busbw_gbps", 0);
			}
			continue;
		}
		if (aggregate(&gr, g, &st, &tmed)) {
			groups_free(&gr);
			cJSON_Delete(d);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
		if (!strcmp(probe, "gemm")) {
			mt_profile_gemm(d, mt_jget_str(c, "dtype"), mt_jget_num(c, "m", 0), mt_jget_num(c, "n", 0),
					mt_jget_num(c, "k", 0), st.median, &st, src);
		} else if (!strcmp(probe, "attention") && !strcmp(mt_jget_str(c, "direction"), "fwd")) {
			/* the profile keys attention by head_dim, seq and causal: the
			 * forward case and the backward case of one shape make one entry */
			double bwd = 0, bt;
			struct mt_stats bs;
			int h;

			for (h = 0; h < gr.ng; h++) {
				const cJSON *x = member(&gr, h, 0),
					    *xc = cJSON_GetObjectItemCaseSensitive(x, "case");

				if (strcmp(mt_jget_str(x, "probe"), "attention") ||
				    strcmp(mt_jget_str(xc, "direction"), "bwd") ||
				    mt_jget_num(xc, "head_dim", 0) != mt_jget_num(c, "head_dim", 0) ||
				    mt_jget_num(xc, "seq", 0) != mt_jget_num(c, "seq", 0) ||
				    mt_jget_num(xc, "heads", 0) != mt_jget_num(c, "heads", 0) ||
				    mt_jget_num(xc, "kv_heads", 0) != mt_jget_num(c, "kv_heads", 0) ||
				    mt_jget_num(xc, "batch", 0) != mt_jget_num(c, "batch", 0) ||
				    mt_jget_bool(xc, "causal", 0) != mt_jget_bool(c, "causal", 0) ||
				    strcmp(mt_jget_str(xc, "dtype"), mt_jget_str(c, "dtype")))
					continue;
				if (!aggregate(&gr, h, &bs, &bt))
					bwd = bs.median;
				break;
			}
			mt_profile_attention(d, mt_jget_str(c, "dtype")[0] ? mt_jget_str(c, "dtype") : "bf16",
					     (int)mt_jget_num(c, "head_dim", 0), (int)mt_jget_num(c, "seq", 0),
					     mt_jget_bool(c, "causal", 0), st.median, bwd > 0 ? bwd : st.median, src);
		} else if (!strcmp(probe, "offload")) {
			/* the largest copy of each kind: the asymptotic bandwidth */
			static const char *const dirs[] = { "h2d", "d2h", "bidirectional" };
			int di, key;

			for (di = 0; di < 3 && strcmp(dirs[di], mt_jget_str(c, "direction")); di++)
				;
			if (di == 3)
				continue;
			key = di * 2 + !strcmp(mt_jget_str(c, "memory"), "pinned");
			if (mt_jget_bool(c, "under_load", 0))
				key = 6 + (key & 1);
			if (mt_jget_num(c, "bytes", 0) < biggest_off[key])
				continue;
			biggest_off[key] = mt_jget_num(c, "bytes", 0);
			mt_profile_offload(d, dirs[di], !strcmp(mt_jget_str(c, "memory"), "pinned"),
					   !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "numa_local")),
					   mt_jget_bool(c, "under_load", 0), st.median, &st, src);
		} else if (!strcmp(probe, "host")) {
			const char *m = mt_jget_str(c, "metric");

			if (!strcmp(m, "launch"))
				mt_profile_host(d, "launch_overhead_us", tmed, src);
			else if (!strcmp(m, "adam") && mt_jget_num(c, "params", 0) > 0 && tmed > 0)
				mt_profile_host(d, "optimizer_gparams_per_s",
						mt_jget_num(c, "params", 0) / (tmed * 1e-6) / 1e9, src);
			else if (!strcmp(m, "membw")) {
				if (st.median > membw)
					membw = st.median;
				mt_profile_host(d, "memory_gbps", st.median, src);
			}
		}
	}
	groups_free(&gr);

	/* the device and the node */
	gpu = mt_profile_object(d, "gpu");
	node = mt_profile_object(d, "node");
	if (in->backend == MT_BACKEND_CUDA && in->topo && in->topo->ngpus > 0) {
		const struct mt_topo_gpu *tg = &in->topo->gpu[0];

		set_str(gpu, "name", tg->name);
		set_num(gpu, "memory_bytes", tg->memory_bytes);
		set_num(gpu, "sm_count", tg->sm_count);
		set_num(gpu, "compute_capability", tg->cc_major + tg->cc_minor / 10.0);
		if (!base) {
			cJSON *pk = cJSON_AddObjectToObject(gpu, "peak_tflops");
			for (dt = 0; dt < MT_DT_N; dt++)
				if (best[dt] > 0)
					cJSON_AddNumberToObject(pk, mt_dtype_name(dt), best[dt]);
			if (best[MT_DT_BF16] <= 0)
				cJSON_AddNumberToObject(pk, "bf16", best[MT_DT_FP16] > 0 ? best[MT_DT_FP16] : 1);
			set_num(gpu, "hbm_gbps", tg->mem_clock_mhz * 2e6 * tg->mem_bus_width / 8 / 1e9 > 1
					 ? tg->mem_clock_mhz * 2e6 * tg->mem_bus_width / 8 / 1e9 : 1000);
			mt_profile_add_source(d, "derived-peaks", "derived",
					      "Unknown GPU: the peak of each type is the best rate "
					      "measured, HBM bandwidth from the memory clock and bus width");
			set_str(gpu, "source", "derived-peaks");
		}
		set_num(node, "gpus_per_node", in->ranks_per_node > 1 ? in->ranks_per_node : in->topo->ngpus);
		set_num(node, "nvlink_domain", in->topo->nvlink_domain > 0 ? in->topo->nvlink_domain : 1);
		if (!base) {
			set_num(node, "nics_per_node", 0);
			set_str(node, "source", src);
		}
		if (nvl_bw >= 0.1) /* the reader's floor; a GPU link is far above it */
			set_num(node, "nvlink_gbps", nvl_bw);
	} else {
		/* CPU backend: the CPU stands for the GPU, each rank for a device;
		 * a CPU has no bf16 units in OpenBLAS, so bf16 runs at the fp32 rate */
		char name[200];
		double peak = best[MT_DT_FP32] > 0 ? best[MT_DT_FP32] : 0.001;

		snprintf(name, sizeof(name), "CPU: %s", h0 ? h0->cpu_model : "unknown");
		set_str(gpu, "name", name);
		set_num(gpu, "memory_bytes", h0 && h0->mem_bytes >= 1e9 ? h0->mem_bytes : 1e9);
		set_num(gpu, "sm_count", h0 ? h0->cores : 1);
		set_num(gpu, "hbm_gbps", membw > 1 ? membw : 1);
		cJSON_DeleteItemFromObjectCaseSensitive(gpu, "peak_tflops");
		{
			cJSON *pk = cJSON_AddObjectToObject(gpu, "peak_tflops");
			cJSON_AddNumberToObject(pk, "bf16", peak);
			cJSON_AddNumberToObject(pk, "fp32", peak);
		}
		mt_profile_add_source(d, "cpu-derived", "derived",
				      "CPU backend: the peak is the best OpenBLAS FP32 GEMM rate "
				      "measured; bf16 runs at the FP32 rate (no bf16 GEMM in OpenBLAS "
				      "here); memory bandwidth and the intra-node link rate are the "
				      "STREAM triad measured");
		set_str(gpu, "source", "cpu-derived");
		set_num(node, "gpus_per_node", in->ranks_per_node > 0 ? in->ranks_per_node : 1);
		set_num(node, "nvlink_domain", in->ranks_per_node > 0 ? in->ranks_per_node : 1);
		if (in->ranks_per_node > 1)
			/* shared memory is the CPU's intra-node link: its line rate is
			 * the triad bandwidth; without it the best all-reduce busbw,
			 * which small sizes on a loaded machine can put below the
			 * reader's floor of 0.1 GB/s */
			set_num(node, "nvlink_gbps", membw > 0 ? membw : nvl_bw > 0.1 ? nvl_bw : 0.1);
		set_num(node, "nics_per_node", in->nhosts > 1 ? 1 : 0);
		if (in->nhosts > 1)
			set_num(node, "nic_gbps", net_bw > 0.1 ? net_bw : 0.1);
		set_num(node, "numa_nodes", h0 ? h0->numa_nodes : 1);
		set_str(node, "source", "measured");
		if (membw > 0)
			mt_profile_memory_bandwidth(d, "stream-triad", membw, src);
	}
	mt_profile_software(d, in->nccl && *in->nccl ? in->nccl : NULL,
			    in->cuda && *in->cuda ? in->cuda : NULL);
	nout = mt_find_outliers(records, in->margin_pct, outl, 64);
	for (i = 0; i < nout && i < 64; i++)
		mt_profile_outlier(d, outl[i].what, outl[i].metric, outl[i].value, outl[i].median,
				   outl[i].below_pct);
	*doc = d;
	return MT_OK;
}
