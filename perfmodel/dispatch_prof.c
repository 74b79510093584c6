/* SPDX-License-Identifier: MIT */
/* dispatch_prof: the profile's `moe_dispatch` section (docs/FORMATS.md
 * section 2), read into struct mt_dispatch_prof for the profile reader
 * (cluster.c), and the look-ups on it (dispatch.h).  The timing of dispatch
 * and combine, which uses these, is dispatch.c. */
#include "dispatch.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "cluster.h"

static const char *const backend_names[MT_FLEX_N] = { "deepep", "hybridep", "probe" };
static const char *const op_names[MT_DOP_N] = { "dispatch", "combine" };
static const char *const basis_names[MT_DBASIS_N] = { "rank", "node" };
/* the section's fields and its points' (docs/FORMATS.md section 2); any other
 * key is refused */
static const char *const section_keys[] = { "flex_backend", "flex_sms", "points", NULL };
static const char *const point_keys[] = { "backend", "op", "dtype", "span", "ranks", "sms",
					  "tokens", "basis", "gbps", "latency_us", "source", NULL };

const char *mt_flex_backend_name(int b)
{
	return b >= 0 && b < MT_FLEX_N ? backend_names[b] : "?";
}

int mt_dispatch_use_backend(struct mt_dispatch_prof *p, int b)
{
	int i;

	for (i = 0; i < p->npts; i++)
		if (p->pts[i].backend == b) {
			/* the profile's SM count is its own backend's; DeepEP
			 * run in its place takes Megatron-Core's default, 20
			 * (token_dispatcher.py @ d98e8a6: moe_flex_dispatcher_num_sms
			 * unset) */
			if (b != p->flex_backend && b == MT_FLEX_DEEPEP)
				p->flex_sms = 20;
			p->flex_backend = b;
			return 0;
		}
	return -1;
}

/* ---------------------------------------------------------------- reading */

static int dispatch_prof_pick(const char *file, const char *where, const char *key, const char *v,
		const char *const *names, int n, int *out, struct mt_error *err)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(v, names[i])) {
			*out = i;
			return MT_OK;
		}
	return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': unknown value \"%s\"", file, where,
			    key, v);
}

static int source_of(const char *file, const char *where, const struct mt_cluster *c,
		     const char *id, int *out, struct mt_error *err)
{
	int i;

	for (i = 0; i < c->nsources; i++)
		if (!strcmp(c->sources[i].id, id)) {
			*out = i;
			return MT_OK;
		}
	return mt_error_set(err, MT_EINVAL,
			    "%s: field '%s.source': unknown source id \"%s\" (expected an id listed in "
			    "'sources')", file, where, id);
}

static int read_point(const char *file, const char *where, const cJSON *e, struct mt_cluster *c,
		      struct mt_dispatch_pt *p, struct mt_error *err)
{
	struct mt_jpos at = { file, where };
	char backend[16], op[16], dtype[16], span[16], basis[16] = "rank", src[48];
	int rc;

	if (!cJSON_IsObject(e))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected an object", file, where);
	p->latency_us = 0;
	p->sms = 0;
	if ((rc = mt_jkeys(&at, e, point_keys, err)) < 0 ||
	    (rc = mt_jstr(&at, e, "backend", 1, backend, sizeof(backend), err)) < 0 ||
	    (rc = mt_jstr(&at, e, "op", 1, op, sizeof(op), err)) < 0 ||
	    (rc = mt_jstr(&at, e, "dtype", 1, dtype, sizeof(dtype), err)) < 0 ||
	    (rc = mt_jstr(&at, e, "span", 1, span, sizeof(span), err)) < 0 ||
	    (rc = mt_jstr(&at, e, "basis", 0, basis, sizeof(basis), err)) < 0 ||
	    (rc = mt_jint32(&at, e, "ranks", 1, 2, 1 << 20, &p->ranks, err)) < 0 ||
	    (rc = mt_jint32(&at, e, "sms", 0, 0, 100000, &p->sms, err)) < 0 ||
	    (rc = mt_jnum(&at, e, "gbps", 1, 1e-3, 1e6, &p->gbps, err)) < 0 ||
	    (rc = mt_jnum(&at, e, "latency_us", 0, 0, 1e7, &p->latency_us, err)) < 0 ||
	    (rc = mt_jnum(&at, e, "tokens", 0, 0, 1e9, &p->tokens, err)) < 0 ||
	    (rc = mt_jstr(&at, e, "source", 1, src, sizeof(src), err)) < 0)
		return rc;
	if ((rc = dispatch_prof_pick(file, where, "backend", backend, backend_names, MT_FLEX_N, &p->backend, err)) ||
	    (rc = dispatch_prof_pick(file, where, "op", op, op_names, MT_DOP_N, &p->op, err)) ||
	    (rc = dispatch_prof_pick(file, where, "basis", basis, basis_names, MT_DBASIS_N, &p->basis, err)) ||
	    (rc = source_of(file, where, c, src, &p->src, err)))
		return rc;
	if (strcmp(dtype, "fp8") && strcmp(dtype, "bf16"))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.dtype': expected \"fp8\" or \"bf16\", "
				    "got \"%s\"", file, where, dtype);
	p->fp8 = !strcmp(dtype, "fp8");
	if (strcmp(span, "nvlink") && strcmp(span, "network"))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.span': expected \"nvlink\" or "
				    "\"network\", got \"%s\"", file, where, span);
	p->span = !strcmp(span, "nvlink") ? MT_SPAN_NVLINK : MT_SPAN_NETWORK;
	if (p->op == MT_DOP_COMBINE && p->fp8)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.dtype': the combine runs in bf16",
				    file, where);
	return MT_OK;
}

int mt_dispatch_read(const cJSON *root, const char *file, struct mt_cluster *c,
		     struct mt_error *err)
{
	struct mt_jpos at = { file, "moe_dispatch" };
	struct mt_dispatch_prof *p = &c->dispatch;
	const cJSON *sec, *arr = NULL, *e;
	char backend[16], w[96];
	int rc, i = 0;

	p->flex_backend = -1;
	sec = cJSON_GetObjectItemCaseSensitive(root, "moe_dispatch");
	if (!sec)
		return MT_OK;
	if (!cJSON_IsObject(sec))
		return mt_error_set(err, MT_EINVAL, "%s: field 'moe_dispatch': expected an object, got %s",
				    file, mt_json_type(sec));
	p->flex_sms = 20;
	/* the wire dtype is Megatron's, not the cluster's (docs/MODEL.md 5.3):
	 * the section-wide flag of older profiles is refused with the reason */
	if (cJSON_GetObjectItemCaseSensitive(sec, "fp8_dispatch"))
		return mt_error_set(err, MT_EINVAL, "%s: field 'moe_dispatch.fp8_dispatch': no longer "
				    "read: Megatron-LM's DeepEP and HybridEP dispatchers send BF16 "
				    "tokens whatever the precision (docs/MODEL.md 5.3), and each "
				    "point's 'dtype' says what its measurement sent; remove the key",
				    file);
	if ((rc = mt_jkeys(&at, sec, section_keys, err)) < 0 ||
	    (rc = mt_jstr(&at, sec, "flex_backend", 1, backend, sizeof(backend), err)) < 0 ||
	    (rc = mt_jint32(&at, sec, "flex_sms", 0, 1, 100000, &p->flex_sms, err)) < 0 ||
	    (rc = mt_jarr(&at, sec, "points", 1, &arr, err)) < 0)
		return rc;
	if ((rc = dispatch_prof_pick(file, "moe_dispatch", "flex_backend", backend, backend_names, MT_FLEX_PROBE,
		       &p->flex_backend, err)))
		return rc;
	p->npts = cJSON_GetArraySize(arr);
	if (!p->npts)
		return mt_error_set(err, MT_EINVAL, "%s: field 'moe_dispatch.points': expected at "
				    "least one point", file);
	p->pts = calloc((size_t)p->npts, sizeof(*p->pts));
	if (!p->pts)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	cJSON_ArrayForEach(e, arr) {
		snprintf(w, sizeof(w), "moe_dispatch.points[%d]", i);
		if ((rc = read_point(file, w, e, c, &p->pts[i], err)))
			return rc;
		i++;
	}
	return MT_OK;
}

void mt_dispatch_free(struct mt_dispatch_prof *p)
{
	free(p->pts);
	p->pts = NULL;
	p->npts = 0;
}

int mt_dispatch_available(const struct mt_cluster *c, int d)
{
	if (d == MT_DISPATCH_FLEX)
		return c->dispatch.flex_backend >= 0 && c->dispatch.npts > 0;
	return d >= 0 && d < MT_DISPATCH_N;
}

/* ---------------------------------------------------------------- look-ups */

/* Score of a point for a query: lower is better; -1 when it does not apply. */
static double fit(const struct mt_dispatch_prof *p, const struct mt_dispatch_pt *q, int op,
		  int fp8, int span)
{
	double s = 1;

	if (q->op != op)
		return -1;
	if (q->span != span)
		s += 100;
	/* a measurement of the pattern stands for whichever library runs it */
	if (q->backend == MT_FLEX_PROBE)
		s -= 1;
	else if (q->backend != p->flex_backend)
		s += 10;
	if (q->fp8 != fp8)
		s += 5;
	/* across NVLink domains the RDMA links bound the dispatch: a figure of
	 * the bytes sent to other nodes (DeepEP's internode "bottleneck"
	 * bandwidth) is the one measured on that basis, before any library's
	 * per-rank (algorithm, logical) figure, whose local share depends on the
	 * topology it was measured on; measured patterns keep their own basis */
	if (span == MT_SPAN_NETWORK && q->basis != MT_DBASIS_NODE && q->backend != MT_FLEX_PROBE)
		s += 20;
	if (q->sms && p->flex_sms)
		s += fabs(log((double)q->sms / p->flex_sms));
	return s;
}

double mt_dispatch_gbps(const struct mt_cluster *c, int op, int fp8, int ranks, int per_domain,
			int *basis, int *src, double *latency_us)
{
	const struct mt_dispatch_prof *p = &c->dispatch;
	int span = per_domain >= ranks ? MT_SPAN_NVLINK : MT_SPAN_NETWORK;
	const struct mt_dispatch_pt *lo = NULL, *hi = NULL;
	double best = -1;
	int i;

	*basis = MT_DBASIS_RANK;
	*src = -1;
	*latency_us = 0;
	/* the best-fitting family (span, basis, backend, dtype, SMs) ... */
	for (i = 0; i < p->npts; i++) {
		double f = fit(p, &p->pts[i], op, fp8, span);
		if (f >= 0 && (best < 0 || f < best))
			best = f;
	}
	if (best < 0)
		return 0;
	/* ... and in it, the points bracketing the EP size */
	for (i = 0; i < p->npts; i++) {
		const struct mt_dispatch_pt *q = &p->pts[i];

		if (fit(p, q, op, fp8, span) != best)
			continue;
		if (q->ranks <= ranks && (!lo || q->ranks > lo->ranks))
			lo = q;
		if (q->ranks >= ranks && (!hi || q->ranks < hi->ranks))
			hi = q;
	}
	if (!lo)
		lo = hi;
	if (!hi)
		hi = lo;
	*basis = lo->basis;
	*src = lo->src;
	*latency_us = lo->latency_us;
	if (lo == hi || hi->ranks == lo->ranks)
		return lo->gbps;
	{
		double t = (log((double)ranks) - log((double)lo->ranks)) /
			   (log((double)hi->ranks) - log((double)lo->ranks));
		return lo->gbps + t * (hi->gbps - lo->gbps);
	}
}
