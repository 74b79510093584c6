/* SPDX-License-Identifier: MIT */
/* dispatch: MoE token dispatch and combine as an all-to-all with the traffic
 * pattern of a model (docs/MODEL.md 5.3).
 *
 * Each rank of an EP group routes `tokens` tokens to the top-k of E experts
 * (E / ranks per rank, drawn without replacement by a fixed hash of the rank
 * and the token) and sends each token once to every rank holding one of its
 * experts, as DeepEP and HybridEP do: first the counts (the notify step),
 * then the tokens (an all-to-all-v).  Dispatch moves FP8 tokens (h bytes and
 * one 4-byte scale per 128 elements), combine sends BF16 results (2h bytes)
 * back the same way.  Every token carries its source and index, and its bytes
 * a pattern of them: the verify step checks each received byte.
 *
 * The rate is the bytes a rank receives per second, one copy of a token per
 * destination rank: the `rank` basis of the profile's moe_dispatch points.
 * The model's shapes come from --model (default: DeepSeek-V3's hidden 7168,
 * top-8 of 256 experts, the published DeepEP tables' setting).  CPU backend
 * over MPI only; with CUDA it does not apply (exit 77): the GPU libraries are
 * DeepEP's and HybridEP's, whose published tables the bundled profiles carry.
 *
 * Profile: `moe_dispatch.points[]` {"backend": "probe", "op", "dtype", "span",
 * "ranks", "basis": "rank", "tokens", "gbps", "source"}, the largest token
 * count measured per operation, span and EP size (docs/FORMATS.md section 2).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/model.h"
#include "../perfmodel/profile.h"
#include "calibrate.h"
#include "probe.h"

#define HDR 8 /* bytes of a token's header: source rank, token index */

struct shape {
	int hidden, topk, experts;
};

static int model_shape(const struct mt_probe_opts *o, struct shape *s, struct mt_error *err)
{
	struct mt_model m;
	int rc;

	s->hidden = 7168;
	s->topk = 8;
	s->experts = 256;
	if (!o->model)
		return MT_OK;
	if ((rc = mt_model_load(o->model, &m, err)))
		return rc;
	if (!m.experts)
		return mt_error_set(err, MT_EUSAGE, "dispatch: --model %s has no experts", o->model);
	s->hidden = (int)m.hidden;
	s->topk = m.topk;
	s->experts = m.experts;
	return MT_OK;
}

/* ------------------------------------------------------------------ plan */

static int dispatch_plan(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
			 struct mt_error *err)
{
	static const int smoke[] = { 32 }, quick[] = { 128, 512 }, normal[] = { 256, 1024, 4096 };
	const int *tk = normal;
	int ntk = 3, g, op, t, cnt = 0, rc;
	struct shape sh;

	if ((rc = model_shape(ctx->opts, &sh, err)))
		return rc;
	if (ctx->opts->depth == MT_DEPTH_SMOKE) {
		tk = smoke;
		ntk = 1;
	} else if (ctx->opts->depth == MT_DEPTH_QUICK) {
		tk = quick;
		ntk = 2;
	}
	*cases = calloc((size_t)(ctx->ngroups * 2 * ntk + 1), sizeof(**cases));
	if (!*cases)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	for (g = 0; g < ctx->ngroups; g++) {
		const struct mt_group *gr = &ctx->groups[g];

		for (op = 0; op < MT_DOP_N; op++) {
			for (t = 0; t < ntk; t++) {
				struct mt_case *c = &(*cases)[cnt++];

				snprintf(c->label, sizeof(c->label), "%s %s t%d", op ? "combine" : "dispatch",
					 gr->name, tk[t]);
				snprintf(c->origin, sizeof(c->origin), "sweep");
				c->op = op;
				c->span = gr->span;
				c->ranks = gr->ranks;
				c->per_node = gr->per_node;
				c->group = g;
				c->m = tk[t];          /* tokens per rank */
				c->n = sh.hidden;
				c->k = sh.topk;
				c->batch = sh.experts;
				c->dtype = op ? MT_DT_BF16 : MT_DT_FP8;
				c->inner = 1;
			}
		}
	}
	*n = cnt;
	return MT_OK;
}

/* ------------------------------------------------------------ CPU backend */

struct dst {
	MPI_Comm comm;
	int n, r, op;
	long long tokens;
	size_t rec_d, rec_c;            /* bytes of a dispatched and a combined token */
	int *scnt, *sdsp, *rcnt, *rdsp; /* dispatch counts in bytes, per rank */
	int *tok_scnt, *tok_rcnt;       /* the same in tokens */
	int *c_scnt, *c_sdsp, *c_rcnt, *c_rdsp; /* combine counts in bytes (BF16 records) */
	unsigned char *sbuf, *rbuf;     /* dispatch send / receive */
	unsigned char *cbuf, *cback;    /* combine send (receiver side) / receive */
	int *order;                     /* token index of each send slot */
};

static unsigned char pat(int src, long long tok, size_t j, int salt)
{
	return (unsigned char)(src * 131 + tok * 7 + (long long)j * 13 + salt);
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* The destination ranks of token t of rank r (1 in dest[]), top-k experts of
 * E drawn without replacement. */
static void route(int r, long long t, int k, int E, int n, unsigned char *dest)
{
	int chosen[64], nc = 0, i, local = E / n > 0 ? E / n : 1;
	uint64_t s = mix(((uint64_t)r << 40) ^ (uint64_t)t ^ 0x9e3779b97f4a7c15ULL);

	memset(dest, 0, (size_t)n);
	while (nc < k && nc < E && nc < 64) {
		int e, dup = 0;

		s = mix(s + 0x9e3779b97f4a7c15ULL);
		e = (int)(s % (uint64_t)(local * n));
		for (i = 0; i < nc; i++)
			dup |= chosen[i] == e;
		if (dup)
			continue;
		chosen[nc++] = e;
		dest[e / local] = 1;
	}
}

static void dst_free(struct dst *d)
{
	if (!d)
		return;
	free(d->scnt);
	free(d->sdsp);
	free(d->rcnt);
	free(d->rdsp);
	free(d->tok_scnt);
	free(d->tok_rcnt);
	free(d->c_scnt);
	free(d->c_sdsp);
	free(d->c_rcnt);
	free(d->c_rdsp);
	free(d->sbuf);
	free(d->rbuf);
	free(d->cbuf);
	free(d->cback);
	free(d->order);
	free(d);
}

static int dispatch_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	if (ctx->world->size < 2)
		return mt_error_set(err, MT_EUNSUPPORTED,
				    "dispatch: one rank; launch with mpirun -np N (N >= 2)");
	if (ctx->ngroups == 0)
		return mt_error_set(err, MT_EUNSUPPORTED, "dispatch: no group of 2 or more ranks");
	return MT_OK;
}

/* Counts, the dispatch send buffer (tokens grouped by destination rank) and
 * one dispatch, so that the combine's buffers can be built from it. */
static int build(struct dst *d, const struct mt_case *c, struct mt_error *err)
{
	int n = d->n, i, k = (int)c->k, E = c->batch;
	long long t, slots = 0, recv = 0;
	unsigned char *dest = malloc((size_t)n);
	size_t off;

	if (!dest)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	for (t = 0; t < d->tokens; t++) {
		route(d->r, t, k, E, n, dest);
		for (i = 0; i < n; i++)
			d->tok_scnt[i] += dest[i];
	}
	for (i = 0; i < n; i++)
		slots += d->tok_scnt[i];
	MPI_Alltoall(d->tok_scnt, 1, MPI_INT, d->tok_rcnt, 1, MPI_INT, d->comm);
	for (i = 0; i < n; i++)
		recv += d->tok_rcnt[i];
	if ((double)(slots > recv ? slots : recv) * (double)d->rec_c > 2e9) {
		free(dest);
		return mt_error_set(err, MT_EUNSUPPORTED, "dispatch: %s exceeds MPI's int counts",
				    c->label);
	}
	d->sbuf = malloc((size_t)slots * d->rec_d + 1);
	d->rbuf = malloc((size_t)recv * d->rec_d + 1);
	d->cbuf = malloc((size_t)recv * d->rec_c + 1);
	d->cback = malloc((size_t)slots * d->rec_c + 1);
	d->order = malloc((size_t)slots * sizeof(int) + sizeof(int));
	if (!d->sbuf || !d->rbuf || !d->cbuf || !d->cback || !d->order) {
		free(dest);
		return mt_error_set(err, MT_ENOMEM, "dispatch: cannot allocate the buffers of %s",
				    c->label);
	}
	/* byte counts and displacements, dispatch direction */
	for (i = 0, off = 0; i < n; i++) {
		d->scnt[i] = (int)((size_t)d->tok_scnt[i] * d->rec_d);
		d->sdsp[i] = (int)off;
		off += (size_t)d->scnt[i];
	}
	for (i = 0, off = 0; i < n; i++) {
		d->rcnt[i] = (int)((size_t)d->tok_rcnt[i] * d->rec_d);
		d->rdsp[i] = (int)off;
		off += (size_t)d->rcnt[i];
	}
	/* the combine goes back the same way: BF16 records, directions swapped */
	{
		size_t so = 0, ro = 0;

		for (i = 0; i < n; i++) {
			d->c_scnt[i] = (int)((size_t)d->tok_rcnt[i] * d->rec_c);
			d->c_sdsp[i] = (int)so;
			so += (size_t)d->c_scnt[i];
			d->c_rcnt[i] = (int)((size_t)d->tok_scnt[i] * d->rec_c);
			d->c_rdsp[i] = (int)ro;
			ro += (size_t)d->c_rcnt[i];
		}
	}
	/* fill: per destination, its tokens in index order */
	{
		long long *fill = calloc((size_t)n, sizeof(long long));

		if (!fill) {
			free(dest);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
		for (t = 0; t < d->tokens; t++) {
			route(d->r, t, k, E, n, dest);
			for (i = 0; i < n; i++) {
				long long slot;
				unsigned char *p;
				size_t j;

				if (!dest[i])
					continue;
				slot = d->sdsp[i] / (long long)d->rec_d + fill[i]++;
				d->order[slot] = (int)t;
				p = d->sbuf + (size_t)slot * d->rec_d;
				memcpy(p, &d->r, 4);
				memcpy(p + 4, &(int32_t){ (int32_t)t }, 4);
				for (j = HDR; j < d->rec_d; j++)
					p[j] = pat(d->r, t, j, 0);
			}
		}
		free(fill);
	}
	free(dest);
	MPI_Alltoallv(d->sbuf, d->scnt, d->sdsp, MPI_BYTE, d->rbuf, d->rcnt, d->rdsp, MPI_BYTE,
		      d->comm);
	/* the combine's results: each received token answered by this rank */
	{
		long long s;

		for (s = 0; s < recv; s++) {
			unsigned char *p = d->cbuf + (size_t)s * d->rec_c;
			int32_t tok;
			size_t j;

			memcpy(&tok, d->rbuf + (size_t)s * d->rec_d + 4, 4);
			memcpy(p, &d->r, 4);
			memcpy(p + 4, &tok, 4);
			for (j = HDR; j < d->rec_c; j++)
				p[j] = pat(d->r, tok, j, 1);
		}
	}
	return MT_OK;
}

static int dispatch_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
			  struct mt_error *err)
{
	void *comm = ctx->group_comm(ctx, c->group);
	struct dst *d;
	long long i, got = 0;
	int rc;

	*state = NULL;
	if (!comm)
		return MT_OK; /* not a member of this layout */
	d = calloc(1, sizeof(*d));
	if (!d)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	d->comm = *(MPI_Comm *)comm;
	MPI_Comm_size(d->comm, &d->n);
	MPI_Comm_rank(d->comm, &d->r);
	d->op = c->op;
	d->tokens = c->m;
	d->rec_d = (size_t)c->n + (size_t)(c->n / 128) * 4; /* FP8 and its scales */
	d->rec_c = (size_t)c->n * 2;                         /* BF16 */
	if (d->rec_d < HDR + 1)
		d->rec_d = HDR + 1;
	d->scnt = calloc((size_t)d->n, sizeof(int));
	d->sdsp = calloc((size_t)d->n, sizeof(int));
	d->rcnt = calloc((size_t)d->n, sizeof(int));
	d->rdsp = calloc((size_t)d->n, sizeof(int));
	d->tok_scnt = calloc((size_t)d->n, sizeof(int));
	d->tok_rcnt = calloc((size_t)d->n, sizeof(int));
	d->c_scnt = calloc((size_t)d->n, sizeof(int));
	d->c_sdsp = calloc((size_t)d->n, sizeof(int));
	d->c_rcnt = calloc((size_t)d->n, sizeof(int));
	d->c_rdsp = calloc((size_t)d->n, sizeof(int));
	if (!d->scnt || !d->sdsp || !d->rcnt || !d->rdsp || !d->tok_scnt || !d->tok_rcnt ||
	    !d->c_scnt || !d->c_sdsp || !d->c_rcnt || !d->c_rdsp) {
		dst_free(d);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	if ((rc = build(d, c, err))) {
		dst_free(d);
		return rc;
	}
	for (i = 0; i < d->n; i++)
		got += d->op == MT_DOP_DISPATCH ? d->tok_rcnt[i] : d->tok_scnt[i];
	c->moved = (double)got * (double)(d->op == MT_DOP_DISPATCH ? d->rec_d : d->rec_c);
	*state = d;
	return MT_OK;
}

static int dispatch_run(void *state, const struct mt_case *c, double *seconds,
			struct mt_error *err)
{
	struct dst *d = state;
	int i, rc = MPI_SUCCESS;
	double t0;

	if (!d) {
		*seconds = 0;
		return MT_OK;
	}
	t0 = mt_now();
	for (i = 0; i < c->inner && rc == MPI_SUCCESS; i++) {
		if (d->op == MT_DOP_DISPATCH) {
			/* notify (counts), then the tokens */
			rc = MPI_Alltoall(d->tok_scnt, 1, MPI_INT, d->tok_rcnt, 1, MPI_INT, d->comm);
			if (rc == MPI_SUCCESS)
				rc = MPI_Alltoallv(d->sbuf, d->scnt, d->sdsp, MPI_BYTE, d->rbuf, d->rcnt,
						   d->rdsp, MPI_BYTE, d->comm);
		} else {
			/* counts of the combine are the dispatch's: no notify */
			rc = MPI_Alltoallv(d->cbuf, d->c_scnt, d->c_sdsp, MPI_BYTE, d->cback,
					   d->c_rcnt, d->c_rdsp, MPI_BYTE, d->comm);
		}
	}
	*seconds = mt_now() - t0;
	if (rc != MPI_SUCCESS)
		return mt_error_set(err, MT_EIO, "dispatch: %s failed (MPI error %d)", c->label, rc);
	return MT_OK;
}

static int check_rec(const unsigned char *p, size_t len, int src, long long tok, int salt,
		     const struct mt_case *c, struct mt_error *err)
{
	int32_t s, t;
	size_t j;

	memcpy(&s, p, 4);
	memcpy(&t, p + 4, 4);
	if (s != src || t != tok)
		return mt_error_set(err, MT_EINVAL, "%s: token from rank %d index %lld arrived as "
				    "rank %d index %d", c->label, src, tok, (int)s, (int)t);
	for (j = HDR; j < len; j++)
		if (p[j] != pat(src, tok, j, salt))
			return mt_error_set(err, MT_EINVAL, "%s: byte %zu of token %lld of rank %d is "
					    "wrong", c->label, j, tok, src);
	return MT_OK;
}

static int dispatch_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct dst *d = state;
	long long s, base = 0, prev;
	int i, rc;

	if (!d)
		return MT_OK;
	if (d->op == MT_DOP_DISPATCH) {
		/* from each source, its tokens in increasing index order */
		for (i = 0; i < d->n; i++) {
			prev = -1;
			for (s = 0; s < d->tok_rcnt[i]; s++) {
				const unsigned char *p = d->rbuf + (size_t)(base + s) * d->rec_d;
				int32_t tok;

				memcpy(&tok, p + 4, 4);
				if (tok <= prev || tok >= d->tokens)
					return mt_error_set(err, MT_EINVAL, "%s: rank %d sent token %d out "
							    "of order", c->label, i, (int)tok);
				prev = tok;
				if ((rc = check_rec(p, d->rec_d, i, tok, 0, c, err)))
					return rc;
			}
			base += d->tok_rcnt[i];
		}
		return MT_OK;
	}
	/* combine: each destination answers our tokens in the order we sent them */
	for (i = 0; i < d->n; i++) {
		for (s = 0; s < d->tok_scnt[i]; s++) {
			long long slot = base + s;
			const unsigned char *p = d->cback + (size_t)slot * d->rec_c;

			if ((rc = check_rec(p, d->rec_c, i, d->order[slot], 1, c, err)))
				return rc;
		}
		base += d->tok_scnt[i];
	}
	return MT_OK;
}

static void dispatch_teardown(void *state)
{
	dst_free(state);
}

static void dispatch_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	(void)state;
	(void)c;
	snprintf(buf, n, "\"library\": \"MPI\"");
}

static const struct mt_probe_ops dispatch_cpu = {
	.applicable = dispatch_applicable,
	.plan = dispatch_plan,
	.setup = dispatch_setup,
	.run = dispatch_run,
	.verify = dispatch_verify,
	.teardown = dispatch_teardown,
	.extra = dispatch_extra,
};

/* ------------------------------------------------------- record, profile */

static void dispatch_describe(const struct mt_case *c, struct jw *w)
{
	jw_str(w, "op", c->op ? "combine" : "dispatch");
	jw_str(w, "dtype", c->op ? "bf16" : "fp8");
	jw_str(w, "span", mt_span_name(c->span));
	jw_int(w, "ranks", c->ranks);
	jw_int(w, "ranks_per_node", c->per_node);
	jw_int(w, "tokens", c->m);
	jw_int(w, "hidden", c->n);
	jw_int(w, "topk", c->k);
	jw_int(w, "experts", c->batch);
}

/* One point per operation, span and EP size: the largest token count. */
static int dispatch_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *c = mt_calib_case(b, g);
	cJSON *sec = mt_profile_object(b->doc, "moe_dispatch"), *pts, *e, *pt;
	const char *op = mt_jget_strd(c, "op", "dispatch"), *span = mt_jget_strd(c, "span", "nvlink");
	int ranks = (int)mt_jget_num(c, "ranks", 0), idx = 0, rc;
	double tokens = mt_jget_num(c, "tokens", 0), tmed;
	struct mt_stats st;

	if (ranks < 2)
		return MT_OK;
	if (!cJSON_GetObjectItemCaseSensitive(sec, "flex_backend"))
		cJSON_AddStringToObject(sec, "flex_backend", "deepep");
	pts = cJSON_GetObjectItemCaseSensitive(sec, "points");
	if (!cJSON_IsArray(pts)) {
		cJSON_DeleteItemFromObjectCaseSensitive(sec, "points");
		pts = cJSON_AddArrayToObject(sec, "points");
		if (!pts)
			return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	cJSON_ArrayForEach(e, pts) {
		if (!strcmp(mt_jget_strd(e, "backend", ""), "probe") &&
		    !strcmp(mt_jget_strd(e, "op", ""), op) && !strcmp(mt_jget_strd(e, "span", ""), span) &&
		    (int)mt_jget_num(e, "ranks", 0) == ranks) {
			if (mt_jget_num(e, "tokens", 0) >= tokens)
				return MT_OK;
			cJSON_DeleteItemFromArray(pts, idx);
			break;
		}
		idx++;
	}
	if ((rc = mt_calib_aggregate(b, g, &st, &tmed, err)))
		return rc;
	if (st.median <= 0)
		return MT_OK;
	pt = cJSON_CreateObject();
	if (!pt)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	cJSON_AddStringToObject(pt, "backend", "probe");
	cJSON_AddStringToObject(pt, "op", op);
	cJSON_AddStringToObject(pt, "dtype", mt_jget_strd(c, "dtype", "bf16"));
	cJSON_AddStringToObject(pt, "span", span);
	cJSON_AddNumberToObject(pt, "ranks", ranks);
	cJSON_AddStringToObject(pt, "basis", "rank");
	cJSON_AddNumberToObject(pt, "tokens", tokens);
	cJSON_AddNumberToObject(pt, "gbps", st.median);
	cJSON_AddStringToObject(pt, "source", b->src);
	cJSON_AddItemToArray(pts, pt);
	return MT_OK;
}

const struct mt_probe mt_probe_dispatch = {
	.name = "dispatch",
	.summary = "MoE token dispatch and combine: top-k routed all-to-all of a model's tokens "
		   "(CPU: MPI)",
	.kind = MT_PROBE_COLLECTIVE,
	.ops = { &dispatch_cpu, NULL },
	.describe = dispatch_describe,
	.to_profile = dispatch_to_profile,
};
