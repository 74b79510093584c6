/* SPDX-License-Identifier: MIT */
/* import: the JSON file nccl-tests writes with -J (format versions 1 to 3). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* nccl-tests -J JSON (util.cu of nccl-tests 2.17 and later) */

/* A number field of the -J file; "nan" (how it writes NaN) gives NAN.
 * 1 present, 0 absent or null, <0 error. */
static int jnumber(struct mt_import *im, const cJSON *o, const char *where, const char *key,
		   double *out, struct mt_error *err)
{
	const cJSON *v = mt_jget(o, key);
	char w[160];

	*out = NAN;
	if (!v || cJSON_IsNull(v))
		return 0;
	if (cJSON_IsNumber(v)) {
		*out = v->valuedouble;
		return 1;
	}
	if (cJSON_IsString(v) && (!strcmp(v->valuestring, "nan") || !strcmp(v->valuestring, "-nan")))
		return 1;
	snprintf(w, sizeof(w), "%s%s%s", where, where[0] ? "." : "", key);
	return imp_jtype_error(err, im->path, w, "a number", v);
}


static int nccl_json_half(struct mt_import *im, const cJSON *h, const char *where,
		     struct mt_nt_half *x, int *cputime, struct mt_error *err)
{
	double v;
	int rc;

	if (!h || cJSON_IsNull(h))
		return MT_OK;
	if (!cJSON_IsObject(h))
		return imp_jtype_error(err, im->path, where, "an object", h);
	x->present = 1;
	if ((rc = jnumber(im, h, where, "time", &v, err)) < 0)
		return rc;
	if (!rc) {
		if ((rc = jnumber(im, h, where, "cpu_time", &v, err)) < 0)
			return rc;
		if (rc)
			*cputime = 1;
	}
	imp_num_set(&x->time, v, "%f");
	if ((rc = jnumber(im, h, where, "alg_bw", &v, err)) < 0)
		return rc;
	imp_num_set(&x->algbw, v, "%f");
	if ((rc = jnumber(im, h, where, "bus_bw", &v, err)) < 0)
		return rc;
	if (!rc)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.bus_bw': missing", im->path, where);
	imp_num_set(&x->busbw, v, "%f");
	if ((rc = jnumber(im, h, where, "nwrong", &v, err)) < 0)
		return rc;
	imp_num_set(&x->wrong, v, "%.0f");
	return MT_OK;
}

static int json_per_iter(struct mt_import *im, const cJSON *p, const char *where,
			 struct mt_nt_half *x, struct mt_error *err)
{
	double v;
	int rc;

	if (!cJSON_IsObject(p))
		return MT_OK;
	if ((rc = jnumber(im, p, where, "min_us", &v, err)) < 0)
		return rc;
	imp_num_set(&x->i_min, v, "%f");
	if ((rc = jnumber(im, p, where, "max_us", &v, err)) < 0)
		return rc;
	imp_num_set(&x->i_max, v, "%f");
	if ((rc = jnumber(im, p, where, "p99_us", &v, err)) < 0)
		return rc;
	imp_num_set(&x->i_p99, v, "%f");
	if ((rc = jnumber(im, p, where, "cv_pct", &v, err)) < 0)
		return rc;
	imp_num_set(&x->i_cv, v, "%f");
	return 1;
}

static int jbool(const cJSON *v, int dflt)
{
	if (cJSON_IsBool(v))
		return cJSON_IsTrue(v);
	if (cJSON_IsString(v))
		return !strcmp(v->valuestring, "true");
	return dflt;
}

/* The command line of the -J file: the test and its -g / -t. */
static void json_args(const cJSON *v, struct mt_nt_test *t, struct ntp *s)
{
	const cJSON *e;
	int k = 0;

	if (!cJSON_IsArray(v))
		return;
	cJSON_ArrayForEach(e, v) {
		const cJSON *nx = e->next;
		const char *a = cJSON_IsString(e) ? e->valuestring : "";
		int val = nx && cJSON_IsString(nx) ? toint(nx->valuestring) : 0;
		if (k++ == 0 && imp_op_of_test(a) != -1) {
			copys(t->name, sizeof(t->name), base_name(a));
			copys(t->op_from, sizeof(t->op_from), "JSON args");
		}
		if ((!strcmp(a, "-g") || !strcmp(a, "--ngpus")) && val > 0 && val < 4096)
			s->cmd.g = val;
		if ((!strcmp(a, "-t") || !strcmp(a, "--nthreads")) && val > 0 && val < 4096)
			s->cmd.t = val;
	}
}

/* The "config" object: threads, GPUs per thread, the devices and their
 * hosts (counted in s, which the caller frees), per-iteration timing. */
static int json_config(struct mt_import *im, const cJSON *cfg, struct mt_nt_test *t,
		       struct ntp *s, int *per_iter, struct mt_error *err)
{
	const cJSON *devs, *e;
	double d;
	int rc, per;

	if (!cJSON_IsObject(cfg))
		return MT_OK;
	devs = mt_jget(cfg, "devices");
	if (jnumber(im, cfg, "config", "nthreads", &d, err) > 0 && d >= 1 && d < 4096)
		t->nthread = (int)d;
	if (jnumber(im, cfg, "config", "ngpus", &d, err) > 0 && d >= 1 && d < 4096)
		t->ngpus = (int)d;
	*per_iter = jbool(mt_jget(cfg, "per_iter_timing"), 0);
	if (!cJSON_IsArray(devs) || cJSON_GetArraySize(devs) <= 0)
		return MT_OK;
	s->max_rank = -1;
	cJSON_ArrayForEach(e, devs) {
		char host[128] = "", info[96] = "";
		t->ndev++;
		imp_jstring(e, "hostname", host, sizeof(host));
		imp_jstring(e, "device_info", info, sizeof(info));
		if (host[0] && (rc = imp_nt_add_host(s, host, strlen(host))))
			return rc;
		if (!t->gpu[0])
			copys(t->gpu, sizeof(t->gpu), info);
		else if (info[0] && strcmp(info, t->gpu))
			t->mixed_gpus = 1;
	}
	/* one entry per process: each runs nthreads x ngpus ranks */
	per = (t->nthread ? t->nthread : 1) * (t->ngpus ? t->ngpus : 1);
	t->ranks = t->ndev * per;
	copys(t->ranks_from, sizeof(t->ranks_from), "JSON devices x nthreads x ngpus");
	if (s->nhosts) {
		s->cur = 0;
		imp_nt_close_hosts(s);
		t->per_node *= per;
	}
	return MT_OK;
}

int imp_parse_nt_json(struct mt_import *im, const cJSON *root, const struct mt_import_opts *o,
			 struct mt_error *err)
{
	const cJSON *cfg = mt_jget(root, "config"), *res = mt_jget(root, "results"), *v, *e;
	struct mt_nt_test *t;
	struct ntp s;
	double d;
	int i = 0, rc, per_iter = 0;

	memset(&s, 0, sizeof(s));
	s.im = im;
	s.o = o;
	s.err = err;
	if (!cJSON_IsArray(res))
		return imp_jtype_error(err, im->path, "results", "an array of result rows", res);
	if (!(t = imp_new_test(im, 0)))
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
	t->layout = MT_NT_JSON;
	if (cJSON_IsNumber(v = mt_jget(root, "version")))
		im->json_version = dtoi(v->valuedouble);
	if (cJSON_IsNumber(v = mt_jget(root, "nccl_version")))
		imp_nccl_code(dtoi(v->valuedouble), t->nccl, sizeof(t->nccl));
	json_args(mt_jget(root, "args"), t, &s);
	rc = json_config(im, cfg, t, &s, &per_iter, err);
	free(s.hosts);
	free(s.host_ranks);
	s.hosts = NULL;
	s.host_ranks = NULL;
	if (rc)
		return rc;
	cJSON_ArrayForEach(e, res) {
		char w[64];
		struct mt_nt_row *r;
		const cJSON *rt;
		if (!(r = imp_new_row(t)))
			return mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
		snprintf(w, sizeof(w), "results[%d]", i++);
		if (!cJSON_IsObject(e))
			return imp_jtype_error(err, im->path, w, "an object", e);
		if ((rc = jnumber(im, e, w, "size", &d, err)) < 0)
			return rc;
		if (!rc || !(d >= 0) || d != floor(d))
			return imp_jtype_error(err, im->path, w, "a 'size' in bytes", mt_jget(e, "size"));
		imp_num_set(&r->size, d, "%.0f");
		if ((rc = jnumber(im, e, w, "count", &d, err)) < 0)
			return rc;
		imp_num_set(&r->count, d, "%.0f");
		imp_jstring(e, "type", r->type, sizeof(r->type));
		imp_jstring(e, "redop", r->redop, sizeof(r->redop));
		rt = mt_jget(e, "root");
		if (cJSON_IsString(rt) || cJSON_IsNumber(rt)) {
			r->has_root = 1;
			r->root = cJSON_IsNumber(rt) ? dtoi(rt->valuedouble) : toint(rt->valuestring);
		}
		{
			char w2[96];
			snprintf(w2, sizeof(w2), "%s.out_of_place", w);
			if ((rc = nccl_json_half(im, mt_jget(e, "out_of_place"), w2, &r->h[0], &t->cputime, err)))
				return rc;
			snprintf(w2, sizeof(w2), "%s.in_place", w);
			if ((rc = nccl_json_half(im, mt_jget(e, "in_place"), w2, &r->h[1], &t->cputime, err)))
				return rc;
			snprintf(w2, sizeof(w2), "%s.out_of_place_per_iter", w);
			if ((rc = json_per_iter(im, mt_jget(e, "out_of_place_per_iter"), w2, &r->h[0], err)) < 0)
				return rc;
			per_iter |= rc;
			snprintf(w2, sizeof(w2), "%s.in_place_per_iter", w);
			if ((rc = json_per_iter(im, mt_jget(e, "in_place_per_iter"), w2, &r->h[1], err)) < 0)
				return rc;
		}
		if (!r->h[0].present && !r->h[1].present)
			return mt_error_set(err, MT_EINVAL, "%s: field '%s': neither 'out_of_place' nor "
					    "'in_place' results", im->path, w);
	}
	if (!t->nrows)
		return mt_error_set(err, MT_EINVAL, "%s: field 'results': no result rows (the test "
				    "printed no results)", im->path);
	t->per_iter = per_iter;
	snprintf(t->columns, sizeof(t->columns), "size count type redop root %s alg_bw bus_bw nwrong "
		 "%s alg_bw bus_bw nwrong", t->cputime ? "cpu_time" : "time",
		 t->cputime ? "cpu_time" : "time");
	/* the footer; format version 1 spelt it "average_bus_bandwidith" */
	v = mt_jget(root, "average_bus_bandwidth");
	if (!v)
		v = mt_jget(root, "average_bus_bandwidith");
	if (cJSON_IsObject(v)) {
		if ((rc = jnumber(im, v, "average_bus_bandwidth", "bandwidth", &d, err)) < 0)
			return rc;
		if (!rc && (rc = jnumber(im, v, "average_bus_bandwidth", "bandwidith", &d, err)) < 0)
			return rc;
		if (rc) {
			t->has_avg = 1;
			imp_num_set(&t->avg, d, "%f");
		}
	}
	v = mt_jget(root, "out_of_bounds");
	if (cJSON_IsObject(v) && jnumber(im, v, "out_of_bounds", "count", &d, err) > 0) {
		t->has_oob = 1;
		t->oob = d >= 0 && d < 1e9 ? (int)d : 1;
		t->oob_ok = jbool(mt_jget(v, "okay"), t->oob == 0);
	}
	if (cJSON_IsArray(v = mt_jget(root, "errors")))
		cJSON_ArrayForEach(e, v)
			if (cJSON_IsString(e) && e->valuestring[0])
				imp_warnf(im, "%s: nccl-tests reported an error: %.300s", im->path, e->valuestring);
	if (!t->ranks && (s.cmd.g || s.cmd.t))
		s.cmd.seen = 1;
	if ((rc = imp_nt_finish_test(&s, t)))
		return rc;
	if (t->mixed_gpus)
		imp_warnf(im, "%s: the device list names more than one GPU model; '%s' is used", im->path,
			  t->gpu);
	return imp_nt_report_checks(im, o, err);
}
