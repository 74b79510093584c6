/* SPDX-License-Identifier: MIT */
#include "collective.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perfmodel/cluster.h"
#include "../lib/jsonr.h"
#include "../lib/stats_json.h"
#include "../lib/jsonw.h"
#include "calibrate.h"
#include "gpu.h"
#include "../perfmodel/profile.h"

/* ------------------------------------------------------------- layouts */

int mt_coll_layouts(const struct mt_world *w, int spdev, struct mt_group *g, int max)
{
	int n = 0, s, L = w->local_size;

	if (spdev > 1) { /* one process over its local devices: one group per size */
		for (s = 2; s <= spdev && n < max; s *= 2) {
			struct mt_group *x = &g[n++];
			int d;

			memset(x, 0, sizeof(*x));
			x->span = MT_SPAN_NVLINK;
			x->ranks = x->per_node = s;
			snprintf(x->name, sizeof(x->name), "nvlink-%d", s);
			x->member = 1;
			x->ndev = s;
			for (d = 0; d < s && d < MT_GROUP_MAX_DEV; d++)
				x->devices[d] = d;
		}
		if (spdev & (spdev - 1) && n < max) { /* all devices when not a power of 2 */
			struct mt_group *x = &g[n++];
			int d;

			memset(x, 0, sizeof(*x));
			x->span = MT_SPAN_NVLINK;
			x->ranks = x->per_node = spdev;
			snprintf(x->name, sizeof(x->name), "nvlink-%d", spdev);
			x->member = 1;
			x->ndev = spdev < MT_GROUP_MAX_DEV ? spdev : MT_GROUP_MAX_DEV;
			for (d = 0; d < x->ndev; d++)
				x->devices[d] = d;
		}
		return n;
	}
	/* inside a node: groups of s consecutive local ranks */
	for (s = 2; s <= L && n < max; s *= 2) {
		struct mt_group *x = &g[n++];

		memset(x, 0, sizeof(*x));
		x->span = MT_SPAN_NVLINK;
		x->ranks = x->per_node = s;
		snprintf(x->name, sizeof(x->name), "nvlink-%d", s);
		x->member = w->local_rank < (L / s) * s;
		x->color = x->member ? w->node * 4096 + w->local_rank / s : -1;
		x->grank = w->local_rank % s;
	}
	if (L > 1 && (L & (L - 1)) && n < max) {
		struct mt_group *x = &g[n++];

		memset(x, 0, sizeof(*x));
		x->span = MT_SPAN_NVLINK;
		x->ranks = x->per_node = L;
		snprintf(x->name, sizeof(x->name), "nvlink-%d", L);
		x->member = 1;
		x->color = w->node;
		x->grank = w->local_rank;
	}
	if (w->nnodes > 1 && w->size == w->nnodes * L) {
		/* rails: one rank per node, every local rank's rail at once */
		if (n < max) {
			struct mt_group *x = &g[n++];

			memset(x, 0, sizeof(*x));
			x->span = MT_SPAN_NETWORK;
			x->ranks = w->nnodes;
			x->per_node = 1;
			snprintf(x->name, sizeof(x->name), "rail-%dx1", w->nnodes);
			x->member = 1;
			x->color = w->local_rank;
			x->grank = w->node;
		}
		if (L > 1 && n < max) {
			struct mt_group *x = &g[n++];

			memset(x, 0, sizeof(*x));
			x->span = MT_SPAN_NETWORK;
			x->ranks = w->size;
			x->per_node = L;
			snprintf(x->name, sizeof(x->name), "world-%d", w->size);
			x->member = 1;
			x->color = 0;
			x->grank = w->rank;
		}
	}
	return n;
}

/* --------------------------------------------------------------- plan */

static int op_wanted(const char *list, int op)
{
	const char *name = mt_coll_name(op), *p = list;
	size_t len = strlen(name);

	if (!list || !*list)
		return 1;
	while (p && *p) {
		const char *e = strchr(p, ',');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if ((l == len && !strncmp(p, name, l)) ||
		    (op == MT_COLL_ALL_TO_ALL && l == 10 && !strncmp(p, "all_to_all", l)) ||
		    (op == MT_COLL_SEND_RECV && l == 9 && !strncmp(p, "send_recv", l)))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

int mt_plan_collective(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		       struct mt_error *err)
{
	const struct mt_probe_opts *o = ctx->opts;
	int cpu = o->backend == MT_BACKEND_CPU;
	double lo, hi, step, b;
	int g, op, cap = 0, cnt = 0, quick_ops;
	struct mt_case *cs = NULL;

	/* the sweep: nccl-tests sizes (powers of two); quick takes a few */
	switch (o->depth) {
	case MT_DEPTH_SMOKE: lo = 1024; hi = cpu ? 65536 : 1 << 20; step = 16; break;
	case MT_DEPTH_QUICK: lo = cpu ? 4096 : 65536; hi = cpu ? 4 << 20 : 1 << 30; step = 16; break;
	case MT_DEPTH_FULL: lo = 1024; hi = cpu ? 64 << 20 : 4.0 * (1 << 30); step = 2; break;
	default: lo = 1024; hi = cpu ? 16 << 20 : 4.0 * (1 << 30); step = 4; break;
	}
	if (o->min_bytes > 0)
		lo = o->min_bytes;
	if (o->max_bytes > 0)
		hi = o->max_bytes;
	if (lo > hi)
		return mt_error_set(err, MT_EUSAGE,
				    "--min-bytes %.0f is above --max-bytes %.0f", lo, hi);
	/* quick: the collectives the model uses most */
	quick_ops = o->depth == MT_DEPTH_QUICK || o->depth == MT_DEPTH_SMOKE;
	for (g = 0; g < ctx->ngroups; g++) {
		const struct mt_group *gr = &ctx->groups[g];

		for (op = 0; op < MT_COLL_N; op++) {
			if (!op_wanted(o->ops, op))
				continue;
			if (!o->ops && quick_ops && op != MT_COLL_ALL_REDUCE &&
			    op != MT_COLL_ALL_GATHER && op != MT_COLL_REDUCE_SCATTER &&
			    !(op == MT_COLL_ALL_TO_ALL && gr->span == MT_SPAN_NVLINK))
				continue;
			for (b = lo; b <= hi * 1.0000001; b *= step) {
				struct mt_case *c;
				double bytes = b;
				int per = gr->ranks;

				if (op == MT_COLL_ALL_GATHER || op == MT_COLL_REDUCE_SCATTER ||
				    op == MT_COLL_ALL_TO_ALL) {
					/* nccl-tests: whole elements per rank, 16-byte aligned */
					double unit = 16.0 * per;
					bytes = (double)(long long)(b / unit) * unit;
					if (bytes <= 0)
						continue;
				}
				if (cnt == cap) {
					struct mt_case *t;

					cap = cap ? 2 * cap : 64;
					t = realloc(cs, (size_t)cap * sizeof(*cs));
					if (!t) {
						free(cs);
						return mt_error_set(err, MT_ENOMEM, "out of memory");
					}
					cs = t;
				}
				c = &cs[cnt++];
				memset(c, 0, sizeof(*c));
				c->op = op;
				c->span = gr->span;
				c->ranks = gr->ranks;
				c->per_node = gr->per_node;
				c->group = g;
				c->dtype = MT_DT_FP32;
				c->bytes = bytes;
				c->moved = bytes;
				c->busbw_factor = mt_coll_busbw_factor(op, gr->ranks);
				/* the same on every rank: collectives must agree */
				c->inner = bytes <= 65536 ? 20 : bytes <= (4 << 20) ? 10 : 5;
				snprintf(c->origin, sizeof(c->origin), "sweep");
				snprintf(c->label, sizeof(c->label), "%s %s %.0f", mt_coll_name(op),
					 gr->name, bytes);
			}
		}
	}
	*cases = cs;
	*n = cnt;
	return MT_OK;
}

/* ------------------------------------------------------ CPU backend (MPI) */

struct cst {
	MPI_Comm comm;
	int n, r;          /* group size and this rank */
	long long count;   /* elements per call (per rank for gather/scatter/a2a) */
	float *s, *d;
	int op;
};

static int collective_cpu_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	if (ctx->world->size < 2)
		return mt_error_set(err, MT_EUNSUPPORTED,
				    "collective: one rank; launch with mpirun -np N (N >= 2)");
	if (ctx->ngroups == 0)
		return mt_error_set(err, MT_EUNSUPPORTED,
				    "collective: no group of 2 or more ranks on one host or across "
				    "hosts");
	return MT_OK;
}

/* Input of rank r, element i: small integers, so sums are exact in float. */
static float in_val(int r, long long i)
{
	return (float)(r + 1 + (int)(i % 7));
}

static int cpu_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		     struct mt_error *err)
{
	struct cst *st;
	void *comm = ctx->group_comm(ctx, c->group);
	long long i, total;

	*state = NULL;
	if (!comm)
		return MT_OK; /* not a member of this layout: nothing to run */
	st = calloc(1, sizeof(*st));
	if (!st)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	st->comm = *(MPI_Comm *)comm;
	MPI_Comm_size(st->comm, &st->n);
	MPI_Comm_rank(st->comm, &st->r);
	st->op = c->op;
	switch (c->op) {
	case MT_COLL_ALL_GATHER:
	case MT_COLL_REDUCE_SCATTER:
	case MT_COLL_ALL_TO_ALL:
		st->count = (long long)(c->bytes / 4) / st->n;
		total = st->count * st->n;
		break;
	default:
		st->count = (long long)(c->bytes / 4);
		total = st->count;
	}
	st->s = malloc((size_t)total * sizeof(float));
	st->d = malloc((size_t)total * sizeof(float));
	if (!st->s || !st->d) {
		free(st->s);
		free(st->d);
		free(st);
		return mt_error_set(err, MT_ENOMEM, "collective: cannot allocate 2 x %.0f bytes",
				    (double)total * 4);
	}
	for (i = 0; i < total; i++) {
		st->s[i] = c->op == MT_COLL_ALL_TO_ALL ? in_val(st->r, i) * 8 + (float)(i / st->count % 8)
						       : in_val(st->r, i);
		st->d[i] = -1;
	}
	*state = st;
	return MT_OK;
}

static int cpu_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct cst *st = state;
	int i, rc = MPI_SUCCESS, cnt;
	double t0;

	if (!st) {
		*seconds = 0;
		return MT_OK;
	}
	if (st->count > 0x7fffffff)
		return mt_error_set(err, MT_EUNSUPPORTED, "collective: %lld elements exceed MPI's int count",
				    st->count);
	cnt = (int)st->count;
	t0 = mt_now();
	for (i = 0; i < c->inner && rc == MPI_SUCCESS; i++) {
		switch (st->op) {
		case MT_COLL_ALL_REDUCE:
			rc = MPI_Allreduce(st->s, st->d, cnt, MPI_FLOAT, MPI_SUM, st->comm);
			break;
		case MT_COLL_ALL_GATHER:
			rc = MPI_Allgather(st->s, cnt, MPI_FLOAT, st->d, cnt, MPI_FLOAT, st->comm);
			break;
		case MT_COLL_REDUCE_SCATTER:
			rc = MPI_Reduce_scatter_block(st->s, st->d, cnt, MPI_FLOAT, MPI_SUM, st->comm);
			break;
		case MT_COLL_ALL_TO_ALL:
			rc = MPI_Alltoall(st->s, cnt, MPI_FLOAT, st->d, cnt, MPI_FLOAT, st->comm);
			break;
		case MT_COLL_SEND_RECV:
			rc = MPI_Sendrecv(st->s, cnt, MPI_FLOAT, (st->r + 1) % st->n, 0, st->d, cnt,
					  MPI_FLOAT, (st->r - 1 + st->n) % st->n, 0, st->comm,
					  MPI_STATUS_IGNORE);
			break;
		default:
			if (st->r == 0)
				memcpy(st->d, st->s, (size_t)cnt * sizeof(float));
			rc = MPI_Bcast(st->d, cnt, MPI_FLOAT, 0, st->comm);
		}
	}
	*seconds = mt_now() - t0;
	if (rc != MPI_SUCCESS)
		return mt_error_set(err, MT_EIO, "collective: %s failed (MPI error %d)",
				    mt_coll_name(st->op), rc);
	return MT_OK;
}

static int cpu_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct cst *st = state;
	long long i, total = st ? st->count : 0;
	int n, r;

	(void)c;
	if (!st)
		return MT_OK;
	n = st->n;
	r = st->r;
	if (st->op == MT_COLL_ALL_GATHER || st->op == MT_COLL_ALL_TO_ALL)
		total = st->count * n;
	for (i = 0; i < total; i++) {
		float want;
		long long p = i / (st->count ? st->count : 1), j = i % (st->count ? st->count : 1);
		int k;

		switch (st->op) {
		case MT_COLL_ALL_REDUCE:
			for (want = 0, k = 0; k < n; k++)
				want += in_val(k, i);
			break;
		case MT_COLL_REDUCE_SCATTER:
			for (want = 0, k = 0; k < n; k++)
				want += in_val(k, (long long)r * st->count + i);
			break;
		case MT_COLL_ALL_GATHER:
			want = in_val((int)p, j);
			break;
		case MT_COLL_ALL_TO_ALL:
			/* block p came from rank p, which sent us its block r */
			want = in_val((int)p, (long long)r * st->count + j) * 8 + (float)(r % 8);
			break;
		case MT_COLL_SEND_RECV:
			want = in_val((r - 1 + n) % n, i);
			break;
		default:
			want = in_val(0, i);
		}
		if (st->d[i] != want)
			return mt_error_set(err, MT_EINVAL,
					    "collective: %s element %lld on group rank %d is %g, "
					    "expected %g", mt_coll_name(st->op), i, r,
					    (double)st->d[i], (double)want);
	}
	return MT_OK;
}

static void cpu_teardown(void *state)
{
	struct cst *st = state;

	if (st) {
		free(st->s);
		free(st->d);
		free(st);
	}
}

static void cpu_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	(void)state;
	(void)c;
	snprintf(buf, n, "\"library\": \"MPI\", \"dtype\": \"float\"");
}

const struct mt_probe_ops mt_collective_cpu = {
	.applicable = collective_cpu_applicable,
	.plan = mt_plan_collective,
	.setup = cpu_setup,
	.run = cpu_run,
	.verify = cpu_verify,
	.teardown = cpu_teardown,
	.extra = cpu_extra,
};

/* ------------------------------------------------------- record, profile */

static void collective_describe(const struct mt_case *c, struct jw *w)
{
	jw_str(w, "op", mt_coll_name(c->op));
	jw_str(w, "span", mt_span_name(c->span));
	jw_int(w, "ranks", c->ranks);
	jw_int(w, "ranks_per_node", c->per_node);
	jw_int(w, "bytes", (int64_t)c->bytes);
}

/* One record per case (all ranks combined): a point of its curve as
 * measured; the best all-reduce inside and across NVLink domains. */
static int collective_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *r = mt_calib_record(b, g, 0), *c = mt_calib_case(b, g);
	cJSON *cv = mt_profile_coll_curve(b->doc, mt_jget_str(c, "op"), mt_jget_str(c, "span"),
					  (int)mt_jget_num(c, "ranks", 0),
					  (int)mt_jget_num(c, "ranks_per_node", 0), b->src);
	struct mt_stats s;
	double busbw = mt_jget_num(r, "busbw_gbps", 0);

	(void)err;
	mt_stats_get(mt_jget(r, "rate"), &s);
	mt_profile_coll_point(cv, mt_jget_num(c, "bytes", 0), busbw,
			      mt_jget_num(r, "time_us.median", 0),
			      s.n ? &s : NULL);
	if (!strcmp(mt_jget_str(c, "op"), "all_reduce")) {
		double *bw = !strcmp(mt_jget_str(c, "span"), "nvlink") ? &b->nvlink_busbw
								      : &b->net_busbw;
		if (busbw > *bw)
			*bw = busbw;
	}
	return MT_OK;
}

const struct mt_probe mt_probe_collective = {
	.name = "collective",
	.summary = "all-reduce, all-gather, reduce-scatter, all-to-all, send/recv, broadcast "
		   "(NCCL; CPU: MPI)",
	.kind = MT_PROBE_COLLECTIVE,
	.ops = { &mt_collective_cpu, &mt_cuda_forward },
	.describe = collective_describe,
	.to_profile = collective_to_profile,
};
