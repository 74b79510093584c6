/* SPDX-License-Identifier: MIT */
#include "calibrate.h"

#include "../lib/jsonr.h"
#include "../lib/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/profile.h"

/* ------------------------------------------------------------- reading */

/* One line of a results file: a JSON object with no NUL byte in it. */
static cJSON *parse_line(char *line, size_t n, int *nul)
{
	const char *end = NULL;
	cJSON *o;

	*nul = memchr(line, 0, n) != NULL;
	if (*nul)
		return NULL;
	line[n] = 0;
	o = cJSON_ParseWithOpts(line, &end, 1);
	if (o && !cJSON_IsObject(o)) {
		cJSON_Delete(o);
		o = NULL;
	}
	return o;
}

static int load_fail(cJSON *recs, cJSON **head, char *text, int rc)
{
	cJSON_Delete(recs);
	cJSON_Delete(*head);
	*head = NULL;
	free(text);
	return rc;
}

/* The head record on line 1, nothing else carrying a schema. */
static int take_record(const char *path, cJSON *o, int lineno, cJSON **head, cJSON *recs,
		       struct mt_error *err)
{
	const cJSON *schema = cJSON_GetObjectItemCaseSensitive(o, "schema");

	if (!*head && !schema && !cJSON_GetArraySize(recs)) {
		cJSON_Delete(o);
		return mt_error_set(err, MT_EINVAL, "%s: expected a megatune.result/1 head "
				    "record on line 1 (is it a results file of megatune "
				    "calibrate?)", path);
	}
	if (lineno == 1 || schema) {
		if (lineno != 1 || !cJSON_IsString(schema) ||
		    strcmp(schema->valuestring, "megatune.result/1")) {
			cJSON_Delete(o);
			return mt_error_set(err, MT_EINVAL, "%s: line %d: field 'schema': expected "
					    "\"megatune.result/1\" in the first record only",
					    path, lineno);
		}
		*head = o;
		return MT_OK;
	}
	cJSON_AddItemToArray(recs, o);
	return MT_OK;
}

int mt_results_load(const char *path, int repair, cJSON **head, cJSON **records,
		    struct mt_results_damage *d, struct sbuf *kept, struct mt_error *err)
{
	char *text = NULL;
	size_t len, off, good_end = 0;
	int rc, lineno = 0, nul = 0;
	char where[1100];
	cJSON *recs;

	*head = *records = NULL;
	memset(d, 0, sizeof(*d));
	d->first_off = -1;
	if ((rc = mt_read_file(path, (size_t)1 << 30, &text, &len, err)))
		return rc;
	recs = cJSON_CreateArray();
	for (off = 0; off < len;) {
		char *nl = memchr(text + off, '\n', len - off);
		size_t n = nl ? (size_t)(nl - (text + off)) : len - off;
		cJSON *o = NULL;

		lineno++;
		if (n)
			o = nl ? parse_line(text + off, n, &nul) : NULL;
		if (!n && nl) {
			/* an empty line: nothing lost */
		} else if (!o) {
			/* damaged: NUL bytes, a cut or garbled record */
			if (d->first_off < 0) {
				d->first_off = (long long)off;
				d->first_line = lineno;
			}
			d->nul |= nul || memchr(text + off, 0, n) != NULL;
			d->dropped++;
		} else {
			if (d->first_off >= 0)
				d->valid_after = 1;
			if (kept) {
				sbuf_add(kept, text + off, n);
				sbuf_addc(kept, '\n');
			}
			snprintf(where, sizeof(where), "%s: line %d", path, lineno);
			if ((rc = mt_json_check(where, o, err))) {
				cJSON_Delete(o);
				return load_fail(recs, head, text, rc);
			}
			if ((rc = take_record(path, o, lineno, head, recs, err)))
				return load_fail(recs, head, text, rc);
			if (d->first_off < 0)
				good_end = off + n + 1;
		}
		off += n + (nl ? 1 : 0);
	}
	free(text);
	d->good_len = (long long)good_end;
	d->records = cJSON_GetArraySize(recs);
	if (d->valid_after && !repair)
		return load_fail(recs, head, NULL,
			mt_error_set(err, MT_EPARSE, "%s: line %d (byte offset %lld): %s, followed "
				     "by valid records: the file is damaged; `megatune calibrate "
				     "--resume --repair` keeps the valid records and drops %d "
				     "damaged line%s", path, d->first_line, d->first_off,
				     d->nul ? "NUL bytes instead of a record" :
				     "expected a megatune.result/1 JSON record", d->dropped,
				     d->dropped == 1 ? "" : "s"));
	if (!*head)
		return load_fail(recs, head, NULL,
			mt_error_set(err, MT_EINVAL, "%s: expected a megatune.result/1 head record "
				     "on line 1 (is it a results file of megatune calibrate?)",
				     path));
	*records = recs;
	return MT_OK;
}

int mt_results_read(const char *path, cJSON **head, cJSON **records, int *truncated,
		    struct mt_error *err)
{
	struct mt_results_damage d;
	int rc = mt_results_load(path, 0, head, records, &d, NULL, err);

	*truncated = !rc && d.first_off >= 0;
	return rc;
}

/* A record's round: its "round", 1 when it has none (a pass without rounds). */
static int round_of(const cJSON *r)
{
	double x = mt_jget_num(r, "round", 1);

	return x >= 1 && x <= 1e6 ? (int)x : 1;
}

int mt_results_has(const cJSON *records, const char *probe, const char *label, int round)
{
	const cJSON *r;

	if (round < 1)
		round = 1;
	cJSON_ArrayForEach(r, records)
		if (!strcmp(mt_jget_str(r, "probe"), probe) &&
		    !strcmp(mt_jget_str(r, "label"), label) && round_of(r) == round)
			return 1;
	return 0;
}

/* Records of one measurement (probe, label, rank, host, device) across rounds. */
struct ritem {
	const cJSON *r;
	int i;
	double med;
};

/* by measurement: probe, label, host, rank, device */
static int cmp_measurement(const cJSON *x, const cJSON *y)
{
	static const char *const strs[] = { "probe", "label", "host" };
	static const char *const nums[] = { "rank", "device" };
	int c = 0, k;

	for (k = 0; k < 3 && !c; k++)
		c = strcmp(mt_jget_str(x, strs[k]), mt_jget_str(y, strs[k]));
	for (k = 0; k < 2 && !c; k++) {
		double a = mt_jget_num(x, nums[k], -1), b = mt_jget_num(y, nums[k], -1);

		c = (a > b) - (a < b);
	}
	return c;
}

static int cmp_ritem(const void *a, const void *b)
{
	const struct ritem *x = a, *y = b;
	int c = cmp_measurement(x->r, y->r);

	if (!c) /* by time, failed (NAN) last; then file order */
		c = isnan(x->med) != isnan(y->med) ? isnan(x->med) - isnan(y->med)
		    : (x->med > y->med) - (x->med < y->med);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

cJSON *mt_results_one_round(const cJSON *records)
{
	int n = cJSON_GetArraySize(records), i = 0, s, e, k;
	struct ritem *it = NULL;
	char *keep = NULL;
	cJSON *out;
	const cJSON *r;

	cJSON_ArrayForEach(r, records)
		if (mt_jget(r, "round"))
			break;
	if (!r) /* no rounds: every record as it is */
		return cJSON_Duplicate(records, 1);
	it = calloc((size_t)n, sizeof(*it));
	keep = calloc((size_t)n, 1);
	out = cJSON_CreateArray();
	if (!it || !keep || !out)
		goto fail;
	cJSON_ArrayForEach(r, records) {
		it[i].r = r;
		it[i].i = i;
		it[i].med = mt_jget_num(r, "time_us.median", NAN);
		i++;
	}
	qsort(it, (size_t)n, sizeof(*it), cmp_ritem);
	for (s = 0; s < n; s = e) {
		int ok = 0;

		for (e = s + 1; e < n && !cmp_measurement(it[s].r, it[e].r); e++)
			;
		for (k = s; k < e; k++)
			ok += !isnan(it[k].med);
		/* the lower median of the rounds that have a time, else the first */
		keep[it[ok ? s + (ok - 1) / 2 : s].i] = 1;
	}
	i = 0;
	cJSON_ArrayForEach(r, records) {
		cJSON *d;

		if (keep[i++] && (!(d = cJSON_Duplicate(r, 1)) || !cJSON_AddItemToArray(out, d))) {
			cJSON_Delete(d);
			goto fail;
		}
	}
	free(it);
	free(keep);
	return out;
fail:
	free(it);
	free(keep);
	cJSON_Delete(out);
	return NULL;
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

static int calibrate_usable(const cJSON *r)
{
	return !strcmp(mt_jget_str(r, "verified"), "yes") &&
	       cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(r, "time_us"));
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
		if (calibrate_usable(r)) {
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

static const cJSON *calibrate_member(const struct rgroups *gr, int g, int j)
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
		const cJSON *f = calibrate_member(&gr, g, 0);
		int k = 0, hosts2 = 0;
		double med;

		for (j = 0; j < gr.g[g].n; j++) {
			const cJSON *r = calibrate_member(&gr, g, j);

			if (mt_jget_num(r, "rank", -1) < 0 || rate_of(r) <= 0)
				continue;
			v[k++] = rate_of(r);
			hosts2 |= strcmp(mt_jget_str(f, "host"), mt_jget_str(r, "host")) != 0;
		}
		if (k < 3 && !(k == 2 && hosts2))
			continue;
		med = mt_median(v, (size_t)k);
		for (j = 0; j < gr.g[g].n; j++) {
			const cJSON *r = calibrate_member(&gr, g, j);
			double below = 100.0 * (1 - rate_of(r) / med);

			if (mt_jget_num(r, "rank", -1) < 0 || rate_of(r) <= 0 || below <= margin_pct)
				continue;
			if (found < max) {
				struct mt_outlier *o = &out[found];

				const struct mt_probe *p = mt_probe_find(mt_jget_str(r, "probe"));

				snprintf(o->what, sizeof(o->what), "%s rank %d (%s device %d)",
					 p && p->outlier_what ? p->outlier_what :
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

int mt_calib_groups(const struct mt_calib *b)
{
	return ((const struct rgroups *)b->groups)->ng;
}

int mt_calib_size(const struct mt_calib *b, int g)
{
	return ((const struct rgroups *)b->groups)->g[g].n;
}

const cJSON *mt_calib_record(const struct mt_calib *b, int g, int j)
{
	return calibrate_member(b->groups, g, j);
}

const cJSON *mt_calib_case(const struct mt_calib *b, int g)
{
	return cJSON_GetObjectItemCaseSensitive(calibrate_member(b->groups, g, 0), "case");
}

int mt_calib_aggregate(const struct mt_calib *b, int g, struct mt_stats *st, double *time_med,
		       struct mt_error *err)
{
	const struct rgroups *gr = b->groups;
	int n = gr->g[g].n, j;
	double *rate = calloc((size_t)n, sizeof(double)), *t = calloc((size_t)n, sizeof(double));

	if (!rate || !t) {
		free(rate);
		free(t);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	memset(st, 0, sizeof(*st));
	st->min = 1e300;
	for (j = 0; j < n; j++) {
		const cJSON *r = calibrate_member(gr, g, j), *s = cJSON_GetObjectItemCaseSensitive(r, "rate");
		double rt = rate_of(r);

		rate[j] = rt;
		t[j] = mt_jget_num(r, "time_us.median", 0);
		st->n += (int)mt_jget_num(s, "n", 1);
		if (mt_jget_num(s, "min", rt) < st->min)
			st->min = mt_jget_num(s, "min", rt);
		if (mt_jget_num(s, "max", rt) > st->max)
			st->max = mt_jget_num(s, "max", rt);
		if (mt_jget_num(s, "cv", 0) > st->cv)
			st->cv = mt_jget_num(s, "cv", 0);
		st->p95 = mt_jget_num(s, "p95", rt);
	}
	st->median = mt_median(rate, (size_t)n);
	if (n > 1)
		st->p95 = st->min; /* several ranks: the slowest bound */
	*time_med = mt_median(t, (size_t)n);
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

static void calibrate_set_str(cJSON *o, const char *key, const char *v)
{
	cJSON_DeleteItemFromObjectCaseSensitive(o, key);
	cJSON_AddStringToObject(o, key, v);
}

/* The document: the bundled profile of a known GPU (or a skeleton), its
 * name, the measured source and the description. */
static int profile_start(const struct mt_calib_info *in, const char *base, const char *src,
			 cJSON **doc, struct mt_error *err)
{
	const struct mt_host_info *h0 = in->nhosts > 0 ? &in->hosts[0] : NULL;
	char cite[768], desc[512];
	int rc;

	if ((rc = mt_profile_new(base, in->name, doc, err)))
		return rc;
	snprintf(cite, sizeof(cite),
		 "megatune calibrate --backend %s on %d host%s (%s%s), %d rank%s%s%s; %s",
		 in->backend == MT_BACKEND_CUDA ? "cuda" : "cpu", in->nhosts,
		 in->nhosts == 1 ? "" : "s", h0 ? h0->host : "?", in->nhosts > 1 ? ", ..." : "",
		 in->ranks, in->ranks == 1 ? "" : "s", in->nccl ? ", NCCL " : "",
		 in->nccl ? in->nccl : "", in->when ? in->when : "");
	mt_profile_add_source(*doc, src, "measured", cite);
	cJSON_DeleteItemFromObjectCaseSensitive(*doc, "description");
	snprintf(desc, sizeof(desc), "Calibrated by megatune calibrate%s%s.",
		 base ? "; values not measured come from the bundled profile " : "",
		 base ? base : "");
	cJSON_AddStringToObject(*doc, "description", desc);
	cJSON_DeleteItemFromObjectCaseSensitive(*doc, "outliers");
	return MT_OK;
}

/* Each group of records to its probe's to_profile(), in file order. */
static int profile_measured(struct mt_calib *b, struct mt_error *err)
{
	int g, rc;

	for (g = 0; g < mt_calib_groups(b); g++) {
		const struct mt_probe *p = mt_probe_find(mt_jget_str(mt_calib_record(b, g, 0), "probe"));

		if (p && p->to_profile && (rc = p->to_profile(b, g, err)))
			return rc;
	}
	return MT_OK;
}

/* The GPU and node of the CUDA backend: the bundled profile's when the GPU
 * is known (`base`), else derived from the best rates and the topology. */
static void profile_gpu(const struct mt_calib *b, const char *base, cJSON *gpu, cJSON *node)
{
	const struct mt_calib_info *in = b->info;
	const struct mt_topo_gpu *tg = &in->topo->gpu[0];
	double base_gpn;
	int dt, seen;

	calibrate_set_str(gpu, "name", tg->name);
	set_num(gpu, "memory_bytes", tg->memory_bytes);
	set_num(gpu, "sm_count", tg->sm_count);
	set_num(gpu, "compute_capability", tg->cc_major + tg->cc_minor / 10.0);
	if (!base) {
		cJSON *pk = cJSON_AddObjectToObject(gpu, "peak_tflops");
		for (dt = 0; dt < MT_DT_N; dt++)
			if (b->best_tflops[dt] > 0)
				cJSON_AddNumberToObject(pk, mt_dtype_name(dt), b->best_tflops[dt]);
		if (b->best_tflops[MT_DT_BF16] <= 0)
			cJSON_AddNumberToObject(pk, "bf16", b->best_tflops[MT_DT_FP16] > 0
						? b->best_tflops[MT_DT_FP16] : 1);
		set_num(gpu, "hbm_gbps", tg->mem_clock_mhz * 2e6 * tg->mem_bus_width / 8 / 1e9 > 1
				 ? tg->mem_clock_mhz * 2e6 * tg->mem_bus_width / 8 / 1e9 : 1000);
		mt_profile_add_source(b->doc, "derived-peaks", "derived",
				      "Unknown GPU: the peak of each type is the best rate "
				      "measured, HBM bandwidth from the memory clock and bus width");
		calibrate_set_str(gpu, "source", "derived-peaks");
	}
	seen = in->ranks_per_node > 1 ? in->ranks_per_node : in->topo->ngpus;
	base_gpn = base ? mt_jget_num(node, "gpus_per_node", 0) : 0;
	if (base && seen < base_gpn) {
		/* fewer GPUs visible than the bundled node holds (a VM or a
		 * container given part of a node): the node's shape and its
		 * collective curves stay the bundled profile's, which its curves
		 * need (a curve of 8 ranks cannot sit in a domain of 1), and the
		 * description says so */
		char desc[512];
		const char *d = mt_jget_str(b->doc, "description");

		snprintf(desc, sizeof(desc), "%s Only %d of the node's %.0f GPUs were visible: "
			 "the node's shape and collective curves are %s's.", d ? d : "", seen,
			 base_gpn, base);
		cJSON_DeleteItemFromObjectCaseSensitive(b->doc, "description");
		cJSON_AddStringToObject(b->doc, "description", desc);
	} else {
		set_num(node, "gpus_per_node", seen);
		set_num(node, "nvlink_domain", in->topo->nvlink_domain > 0 ? in->topo->nvlink_domain : 1);
	}
	if (!base) {
		set_num(node, "nics_per_node", 0);
		calibrate_set_str(node, "source", b->src);
	}
	if (b->nvlink_busbw >= 0.1) /* the reader's floor; a GPU link is far above it */
		set_num(node, "nvlink_gbps", b->nvlink_busbw);
	/* the node's RAM (MemTotal of /proc/meminfo) replaces the datasheet's */
	if (in->nhosts > 0 && in->hosts[0].mem_bytes >= 1e9)
		set_num(node, "host_memory_bytes", in->hosts[0].mem_bytes);
}

/* CPU backend: the CPU stands for the GPU, each rank for a device; a CPU has
 * no bf16 units in OpenBLAS, so bf16 runs at the fp32 rate. */
static void profile_cpu(const struct mt_calib *b, cJSON *gpu, cJSON *node)
{
	const struct mt_calib_info *in = b->info;
	const struct mt_host_info *h0 = in->nhosts > 0 ? &in->hosts[0] : NULL;
	double peak = b->best_tflops[MT_DT_FP32] > 0 ? b->best_tflops[MT_DT_FP32] : 0.001;
	double membw = b->membw_gbps, nvl_bw = b->nvlink_busbw, net_bw = b->net_busbw;
	char name[200];
	cJSON *pk;

	snprintf(name, sizeof(name), "CPU: %s", h0 ? h0->cpu_model : "unknown");
	calibrate_set_str(gpu, "name", name);
	set_num(gpu, "memory_bytes", h0 && h0->mem_bytes >= 1e9 ? h0->mem_bytes : 1e9);
	set_num(gpu, "sm_count", h0 ? h0->cores : 1);
	set_num(gpu, "hbm_gbps", membw > 1 ? membw : 1);
	cJSON_DeleteItemFromObjectCaseSensitive(gpu, "peak_tflops");
	pk = cJSON_AddObjectToObject(gpu, "peak_tflops");
	cJSON_AddNumberToObject(pk, "bf16", peak);
	cJSON_AddNumberToObject(pk, "fp32", peak);
	mt_profile_add_source(b->doc, "cpu-derived", "derived",
			      "CPU backend: the peak is the best OpenBLAS FP32 GEMM rate "
			      "measured; bf16 runs at the FP32 rate (no bf16 GEMM in OpenBLAS "
			      "here); memory bandwidth and the intra-node link rate are the "
			      "STREAM triad measured");
	calibrate_set_str(gpu, "source", "cpu-derived");
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
	if (h0 && h0->mem_bytes >= 1e9) /* MemTotal of /proc/meminfo */
		set_num(node, "host_memory_bytes", h0->mem_bytes);
	calibrate_set_str(node, "source", "measured");
	if (membw > 0)
		mt_profile_memory_bandwidth(b->doc, "stream-triad", membw, b->src);
}

/* The link rates of the node cover what its own curves reach: calibrate
 * writes the best all-reduce as the NVLink (and, on the CPU backend, the
 * network) rate, or keeps a bundled base's, and the described hardware
 * bounds every curve (docs/MODEL.md 3.3).  A rate below a measured curve is
 * raised to the least one that covers it (the bounds are in proportion to
 * the rate): what calibrate measured is the hardware. */
static void links_cover_curves(cJSON *doc, cJSON *node)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	double nvl, nic;
	int i;

	if (mt_cluster_from_json(doc, "(calibrated profile)", &c, &err))
		return; /* writing it says why */
	nvl = c->nvlink_gbps;
	nic = c->nic_gbps;
	for (i = 0; i < c->ncoll; i++) {
		const struct mt_coll_curve *cv = &c->coll[i];
		int nvlink = cv->span == MT_SPAN_NVLINK;
		double line = mt_coll_line_gbps(c, cv->op, cv->ranks, nvlink ? cv->ranks : cv->per_node);
		double need = line > 0 ? cv->peak_gbps / line * (nvlink ? c->nvlink_gbps : c->nic_gbps)
				       : 0;

		if (nvlink && need > nvl)
			nvl = need;
		else if (!nvlink && need > nic)
			nic = need;
	}
	if (nvl > c->nvlink_gbps)
		set_num(node, "nvlink_gbps", nvl);
	if (nic > c->nic_gbps)
		set_num(node, "nic_gbps", nic);
	mt_cluster_free(c);
}

int mt_calibrate_profile(const cJSON *records, const struct mt_calib_info *in, cJSON **doc,
			 struct mt_error *err)
{
	const char *base = NULL;
	struct mt_outlier outl[64];
	struct mt_calib b;
	struct rgroups gr;
	cJSON *gpu, *node;
	int rc, nout, i;

	*doc = NULL;
	memset(&b, 0, sizeof(b));
	b.src = "measured";
	b.info = in;
	if (in->backend == MT_BACKEND_CUDA && in->topo && in->topo->ngpus > 0)
		base = base_for(in->topo->gpu[0].name);
	if ((rc = profile_start(in, base, b.src, &b.doc, err)))
		return rc;

	/* measurements, one group (probe and case) at a time */
	if (group_records(records, &gr)) {
		cJSON_Delete(b.doc);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	b.groups = &gr;
	rc = profile_measured(&b, err);
	groups_free(&gr);
	b.groups = NULL;
	if (rc) {
		cJSON_Delete(b.doc);
		return rc;
	}

	/* the device and the node */
	gpu = mt_profile_object(b.doc, "gpu");
	node = mt_profile_object(b.doc, "node");
	if (in->backend == MT_BACKEND_CUDA && in->topo && in->topo->ngpus > 0)
		profile_gpu(&b, base, gpu, node);
	else
		profile_cpu(&b, gpu, node);
	links_cover_curves(b.doc, node);
	mt_profile_software(b.doc, in->nccl && *in->nccl ? in->nccl : NULL,
			    in->cuda && *in->cuda ? in->cuda : NULL);
	nout = mt_find_outliers(records, in->margin_pct, outl, 64);
	for (i = 0; i < nout && i < 64; i++)
		mt_profile_outlier(b.doc, outl[i].what, outl[i].metric, outl[i].value,
				   outl[i].median, outl[i].below_pct);
	*doc = b.doc;
	return MT_OK;
}
