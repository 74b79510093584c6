/* SPDX-License-Identifier: MIT */
#include "calibrate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../tuner/cluster.h"
#include "profile.h"

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

static const char *sget(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

static double nget(const cJSON *o, const char *key, double dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

static int bget(const cJSON *o, const char *key)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, key));
}

int mt_results_has(const cJSON *records, const char *probe, const char *label)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, records)
		if (!strcmp(sget(r, "probe"), probe) && !strcmp(sget(r, "label"), label))
			return 1;
	return 0;
}

/* The record's main rate: TFLOP/s, busbw or GB/s; 0 when it has none. */
static double rate_of(const cJSON *r)
{
	double v = nget(r, "tflops", 0);

	if (v > 0)
		return v;
	if ((v = nget(r, "busbw_gbps", 0)) > 0)
		return v;
	return nget(r, "gbps", 0);
}

static int usable(const cJSON *r)
{
	return !strcmp(sget(r, "verified"), "yes") &&
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

/* ------------------------------------------------------------ outliers */

int mt_find_outliers(const cJSON *records, double margin_pct, struct mt_outlier *out, int max)
{
	int n = cJSON_GetArraySize(records), i, j, found = 0;
	const cJSON **rs = calloc((size_t)n + 1, sizeof(*rs));
	char *done = calloc((size_t)n + 1, 1);
	double *v = calloc((size_t)n + 1, sizeof(double));

	if (!rs || !done || !v)
		goto out;
	i = 0;
	{
		const cJSON *r;
		cJSON_ArrayForEach(r, records)
			rs[i++] = r;
	}
	for (i = 0; i < n; i++) {
		int k = 0, hosts2 = 0;
		double med;

		if (done[i] || nget(rs[i], "rank", -1) < 0 || !usable(rs[i]) || rate_of(rs[i]) <= 0)
			continue;
		for (j = i; j < n; j++) {
			if (done[j] || strcmp(sget(rs[i], "probe"), sget(rs[j], "probe")) ||
			    strcmp(sget(rs[i], "label"), sget(rs[j], "label")) ||
			    nget(rs[j], "rank", -1) < 0 || !usable(rs[j]))
				continue;
			done[j] = 1;
			v[k++] = rate_of(rs[j]);
			hosts2 |= strcmp(sget(rs[i], "host"), sget(rs[j], "host")) != 0;
		}
		if (k < 3 && !(k == 2 && hosts2))
			continue;
		med = median(v, k);
		for (j = i; j < n; j++) {
			double r, below;

			if (strcmp(sget(rs[i], "probe"), sget(rs[j], "probe")) ||
			    strcmp(sget(rs[i], "label"), sget(rs[j], "label")) ||
			    nget(rs[j], "rank", -1) < 0 || !usable(rs[j]))
				continue;
			r = rate_of(rs[j]);
			below = 100.0 * (1 - r / med);
			if (below > margin_pct) {
				if (found < max) {
					struct mt_outlier *o = &out[found];
					snprintf(o->what, sizeof(o->what), "%s rank %d (%s device %d)",
						 !strcmp(sget(rs[j], "probe"), "offload") ? "link of" :
						 !strcmp(sget(rs[j], "backend"), "cpu") ? "CPU" : "GPU",
						 (int)nget(rs[j], "rank", 0), sget(rs[j], "host"),
						 (int)nget(rs[j], "device", 0));
					snprintf(o->metric, sizeof(o->metric), "%s %s", sget(rs[j], "probe"),
						 sget(rs[j], "label"));
					o->value = r;
					o->median = med;
					o->below_pct = below;
				}
				found++;
			}
		}
	}
out:
	free(rs);
	free(done);
	free(v);
	return found;
}

/* ------------------------------------------------------------- profile */

/* Across ranks: the median of the ranks' medians, with the spread kept. */
struct agg {
	double rate[1024];
	double tmed[1024];
	int n;
	struct mt_stats st;   /* of the rate */
};

static void agg_add(struct agg *a, const cJSON *r)
{
	const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "rate");
	double rt = rate_of(r);

	if (a->n >= 1024)
		return;
	if (!a->n) {
		a->st.min = 1e300;
		a->st.max = 0;
		a->st.cv = 0;
	}
	a->rate[a->n] = rt;
	a->tmed[a->n] = nget(cJSON_GetObjectItemCaseSensitive(r, "time_us"), "median", 0);
	a->n++;
	a->st.n += (int)nget(st, "n", 1);
	if (nget(st, "min", rt) < a->st.min)
		a->st.min = nget(st, "min", rt);
	if (nget(st, "max", rt) > a->st.max)
		a->st.max = nget(st, "max", rt);
	if (nget(st, "cv", 0) > a->st.cv)
		a->st.cv = nget(st, "cv", 0);
	a->st.p95 = nget(st, "p95", rt); /* refined below */
}

static void agg_done(struct agg *a)
{
	double p95s = a->st.p95;

	a->st.median = median(a->rate, a->n);
	a->st.p95 = a->n == 1 ? p95s : a->st.min; /* several ranks: the slowest bound */
	median(a->tmed, a->n);
}

/* Collect records matching `want` and aggregate those with the same key. */
typedef int (*match_fn)(const cJSON *r, const cJSON *first);

static int same_label(const cJSON *r, const cJSON *f)
{
	return !strcmp(sget(r, "probe"), sget(f, "probe")) && !strcmp(sget(r, "label"), sget(f, "label"));
}

static void aggregate(const cJSON *records, const cJSON *first, struct agg *a)
{
	const cJSON *r;

	memset(a, 0, sizeof(*a));
	cJSON_ArrayForEach(r, records)
		if (usable(r) && same_label(r, first))
			agg_add(a, r);
	agg_done(a);
}

static int first_of_label(const cJSON *records, const cJSON *r)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, records) {
		if (x == r)
			return 1;
		if (usable(x) && same_label(x, r))
			return 0;
	}
	return 1;
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

static cJSON *obj(cJSON *doc, const char *key)
{
	cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, key);

	if (!cJSON_IsObject(o)) {
		cJSON_DeleteItemFromObjectCaseSensitive(doc, key);
		o = cJSON_AddObjectToObject(doc, key);
	}
	return o;
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
	int nout, i;

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
		if (!strcmp(sget(r, "probe"), "gemm") && (dt = mt_dtype_parse(sget(c, "dtype"))) >= 0 &&
		    nget(r, "tflops", 0) > best[dt])
			best[dt] = nget(r, "tflops", 0);
	}

	/* measurements */
	cJSON_ArrayForEach(r, records) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(r, "case");
		const char *probe = sget(r, "probe");
		struct agg a;

		if (!usable(r) || !first_of_label(records, r))
			continue;
		if (!strcmp(probe, "collective")) {
			cJSON *cv = mt_profile_coll_curve(d, sget(c, "op"), sget(c, "span"),
							  (int)nget(c, "ranks", 0),
							  (int)nget(c, "ranks_per_node", 0), src);
			const cJSON *x;
			const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "rate");
			struct mt_stats s = { (int)nget(st, "n", 0), nget(st, "median", 0),
					      nget(st, "min", 0), nget(st, "max", 0),
					      nget(st, "p95", 0), nget(st, "cv", 0) };

			/* every size of this curve; later records of a size win */
			(void)x;
			mt_profile_coll_point(cv, nget(c, "bytes", 0), nget(r, "busbw_gbps", 0),
					      nget(cJSON_GetObjectItemCaseSensitive(r, "time_us"),
						   "median", 0), s.n ? &s : NULL);
			if (!strcmp(sget(c, "op"), "all_reduce")) {
				double *bw = !strcmp(sget(c, "span"), "nvlink") ? &nvl_bw : &net_bw;
				if (nget(r, "busbw_gbps", 0) > *bw)
					*bw = nget(r, "busbw_gbps", 0);
			}
			continue;
		}
		aggregate(records, r, &a);
		if (!a.n)
			continue;
		if (!strcmp(probe, "gemm")) {
			mt_profile_gemm(d, sget(c, "dtype"), nget(c, "m", 0), nget(c, "n", 0),
					nget(c, "k", 0), a.st.median, &a.st, src);
		} else if (!strcmp(probe, "attention")) {
			/* the profile keys attention by head_dim, seq and causal: forward
			 * and backward records of one shape make one entry */
			const cJSON *x;
			double fwd = 0, bwd = 0;

			cJSON_ArrayForEach(x, records) {
				const cJSON *xc = cJSON_GetObjectItemCaseSensitive(x, "case");
				struct agg b;

				if (!usable(x) || strcmp(sget(x, "probe"), "attention") ||
				    nget(xc, "head_dim", 0) != nget(c, "head_dim", 0) ||
				    nget(xc, "seq", 0) != nget(c, "seq", 0) ||
				    nget(xc, "heads", 0) != nget(c, "heads", 0) ||
				    nget(xc, "kv_heads", 0) != nget(c, "kv_heads", 0) ||
				    bget(xc, "causal") != bget(c, "causal") ||
				    strcmp(sget(xc, "dtype"), sget(c, "dtype")))
					continue;
				aggregate(records, x, &b);
				if (!strcmp(sget(xc, "direction"), "bwd"))
					bwd = b.st.median;
				else
					fwd = b.st.median;
			}
			if (fwd > 0 && !strcmp(sget(c, "direction"), "fwd"))
				mt_profile_attention(d, sget(c, "dtype")[0] ? sget(c, "dtype") : "bf16",
						     (int)nget(c, "head_dim", 0), (int)nget(c, "seq", 0),
						     bget(c, "causal"), fwd, bwd > 0 ? bwd : fwd, src);
		} else if (!strcmp(probe, "offload")) {
			/* the largest copy of each kind: the asymptotic bandwidth */
			static const char *const dirs[] = { "h2d", "d2h", "bidirectional" };
			int di, key;

			for (di = 0; di < 3 && strcmp(dirs[di], sget(c, "direction")); di++)
				;
			if (di == 3)
				continue;
			key = di * 2 + !strcmp(sget(c, "memory"), "pinned");
			if (bget(c, "under_load"))
				key = 6 + (key & 1);
			if (nget(c, "bytes", 0) < biggest_off[key])
				continue;
			biggest_off[key] = nget(c, "bytes", 0);
			mt_profile_offload(d, dirs[di], !strcmp(sget(c, "memory"), "pinned"),
					   !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "numa_local")),
					   bget(c, "under_load"), a.st.median, &a.st, src);
		} else if (!strcmp(probe, "host")) {
			const char *m = sget(c, "metric");

			if (!strcmp(m, "launch")) {
				double t[1024];
				const cJSON *x;
				int k = 0;

				cJSON_ArrayForEach(x, records)
					if (usable(x) && same_label(x, r) && k < 1024)
						t[k++] = nget(cJSON_GetObjectItemCaseSensitive(x, "time_us"),
							      "median", 0);
				mt_profile_host(d, "launch_overhead_us", median(t, k), src);
			} else if (!strcmp(m, "adam") && nget(c, "params", 0) > 0) {
				double t[1024];
				const cJSON *x;
				int k = 0;

				cJSON_ArrayForEach(x, records)
					if (usable(x) && same_label(x, r) && k < 1024)
						t[k++] = nget(cJSON_GetObjectItemCaseSensitive(x, "time_us"),
							      "median", 0);
				mt_profile_host(d, "optimizer_gparams_per_s",
						nget(c, "params", 0) / (median(t, k) * 1e-6) / 1e9, src);
			} else if (!strcmp(m, "membw")) {
				if (a.st.median > membw)
					membw = a.st.median;
				mt_profile_host(d, "memory_gbps", a.st.median, src);
			}
		}
	}

	/* the device and the node */
	gpu = obj(d, "gpu");
	node = obj(d, "node");
	if (in->backend == MT_BACKEND_CUDA && in->topo && in->topo->ngpus > 0) {
		const struct mt_topo_gpu *g = &in->topo->gpu[0];

		set_str(gpu, "name", g->name);
		set_num(gpu, "memory_bytes", g->memory_bytes);
		set_num(gpu, "sm_count", g->sm_count);
		set_num(gpu, "compute_capability", g->cc_major + g->cc_minor / 10.0);
		if (!base) {
			cJSON *pk = cJSON_AddObjectToObject(gpu, "peak_tflops");
			for (dt = 0; dt < MT_DT_N; dt++)
				if (best[dt] > 0)
					cJSON_AddNumberToObject(pk, mt_dtype_name(dt), best[dt]);
			if (best[MT_DT_BF16] <= 0)
				cJSON_AddNumberToObject(pk, "bf16", best[MT_DT_FP16] > 0 ? best[MT_DT_FP16] : 1);
			set_num(gpu, "hbm_gbps", g->mem_clock_mhz * 2e6 * g->mem_bus_width / 8 / 1e9 > 1
					 ? g->mem_clock_mhz * 2e6 * g->mem_bus_width / 8 / 1e9 : 1000);
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
