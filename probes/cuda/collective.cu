/* SPDX-License-Identifier: MIT */
/* collective: NCCL collectives, timed as nccl-tests times them (the CUDA
 * backend of the collective probe).
 *
 * open() creates one communicator per group layout this rank belongs to
 * (ctx->groups[g].member): rank 0 of the rank's group gets an NCCL id, every
 * rank of the world calls ctx->group_bcast() for every layout in order (an
 * MPI collective underneath), then members call ncclCommInitRankConfig with
 * a non-blocking config and poll ncclCommGetAsyncError against the watchdog
 * deadline (opts->timeout_s, 120 s when 0); on timeout the communicator is
 * aborted and open() fails naming the group.  A rank 0 that cannot get an id
 * broadcasts zeros, which the others recognise.  In single-process mode
 * (groups[g].ndev > 0) one process drives groups[g].devices through
 * ncclCommInitAll and issues the per-device calls inside a group.
 *
 * Cases: op (enum mt_coll), bytes (nccl-tests' "size"), group; float data,
 * sum.  Counts: all_reduce, broadcast, send_recv move bytes/4 elements per
 * rank; all_gather, reduce_scatter and all_to_all have bytes/4 elements in
 * the whole buffer and bytes/4/nranks per rank (per peer for all_to_all).
 * send_recv is nccl-tests' sendrecv: rank r sends to r+1 and receives from
 * r-1 inside one group.  all_to_all uses ncclAlltoAll (NCCL 2.28+, an optional
 * function of dl.h's table, so that an older libnccl still loads) or grouped send/recv.
 * Out-of-place, root 0 for broadcast.
 *
 * Method.  The harness barriers the ranks before each sample; run() records
 * the start event, enqueues `inner` operations (each in its own group, each
 * settled when the communicator is non-blocking), records the stop event and
 * waits by polling the event and ncclCommGetAsyncError until done or the
 * deadline, when it aborts the communicator.  No spin gate: holding one rank's
 * stream would skew the ranks against each other.  The time is the events'
 * (the longest device in single-process mode).  inner is left as planned: it
 * must be the same on every rank.
 * verify(): every rank's input element i is (rank+1) * ((i % 13) + 1), so
 * every expected output is an exact small integer in fp32; a kernel counts
 * the received elements that differ.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dl.h"

enum { C_AR, C_AG, C_RS, C_A2A, C_SR, C_BC, C_N };   /* enum mt_coll */
static const char *const op_names[C_N] = { "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
					   "send_recv", "broadcast" };

struct coll_comm {
	int used;             /* this rank holds communicators of this layout */
	int nranks;           /* ranks of the group */
	int rank0;            /* the group rank of comm[0] */
	int ndev;             /* communicators held: 1, or ndev in single-process mode */
	int blocking;
	int aborted;
	int dev[MT_GROUP_MAX_DEV];
	ncclComm_t comm[MT_GROUP_MAX_DEV];
	char name[32];
};

struct coll_probe {
	int ngroups;
	double timeout;
	int alltoall;         /* ncclAlltoAll usable */
	int version;
	struct coll_comm g[1];   /* ngroups of them */
};

struct coll_dev {
	struct mtc_timer tm;          /* stream and events (no gate) */
	float *send, *recv;
	unsigned long long *check;    /* [0] wrong elements, [1] first wrong index */
};

struct coll_state {
	struct coll_probe *P;
	struct coll_comm *cm;
	int op, nranks, ndev;
	size_t count, per, nsend, nrecv;
	double bytes, timeout;
	unsigned long long wrong;
	int verified;
	struct coll_dev d[MT_GROUP_MAX_DEV];
};

static int nccl_fail(struct mt_error *err, const char *call, ncclResult_t r, ncclComm_t comm)
{
	const char *last = mtc_dl.ncclGetLastError(comm);

	return mtc_fail(err, MT_EINVAL, "%s: %s%s%s", call, mtc_dl.ncclGetErrorString(r),
			last && *last ? ": " : "", last ? last : "");
}

static void nap(void)
{
	struct timespec ts = { 0, 50000 };

	nanosleep(&ts, NULL);
}

static void comm_abort(struct coll_comm *cm)
{
	int i;

	for (i = 0; i < cm->ndev; i++)
		if (cm->comm[i]) {
			mtc_dl.ncclCommAbort(cm->comm[i]);
			cm->comm[i] = NULL;
		}
	cm->aborted = 1;
}

/* A non-blocking call answered r: wait until the communicator leaves
 * ncclInProgress.  1 when the deadline passed (nothing aborted here). */
static int settle(ncclComm_t comm, ncclResult_t r, double deadline, const char *call, int *timed_out,
		  struct mt_error *err)
{
	ncclResult_t st = r;

	*timed_out = 0;
	if (r != ncclSuccess && r != ncclInProgress)
		return nccl_fail(err, call, r, comm);
	if (r == ncclSuccess)
		return MT_OK;
	for (;;) {
		ncclResult_t q = mtc_dl.ncclCommGetAsyncError(comm, &st);

		if (q != ncclSuccess)
			return nccl_fail(err, "ncclCommGetAsyncError", q, comm);
		if (st != ncclInProgress)
			break;
		if (mtc_now() > deadline) {
			*timed_out = 1;
			return MT_EINVAL;
		}
		nap();
	}
	if (st != ncclSuccess)
		return nccl_fail(err, call, st, comm);
	return MT_OK;
}

/* ------------------------------------------------------------ open, close */

static void close_comm(struct coll_comm *cm, double timeout)
{
	int i, to;
	ncclResult_t r;

	if (!cm->used || cm->aborted)
		return;
	if (cm->ndev > 1) {
		mtc_dl.ncclGroupStart();
		for (i = 0; i < cm->ndev; i++)
			mtc_dl.ncclCommFinalize(cm->comm[i]);
		mtc_dl.ncclGroupEnd();
		for (i = 0; i < cm->ndev; i++)
			mtc_dl.ncclCommDestroy(cm->comm[i]);
	} else if (cm->comm[0]) {
		r = mtc_dl.ncclCommFinalize(cm->comm[0]);
		if (settle(cm->comm[0], r, mtc_now() + timeout, "ncclCommFinalize", &to, NULL) != MT_OK) {
			mtc_dl.ncclCommAbort(cm->comm[0]);
			cm->comm[0] = NULL;
			return;
		}
		mtc_dl.ncclCommDestroy(cm->comm[0]);
	}
	for (i = 0; i < cm->ndev; i++)
		cm->comm[i] = NULL;
}

static void coll_close(struct mt_probe_ctx *ctx)
{
	struct coll_probe *P = (struct coll_probe *)ctx->probe_state;
	int g;

	if (!P)
		return;
	for (g = 0; g < P->ngroups; g++)
		close_comm(&P->g[g], P->timeout);
	free(P);
	ctx->probe_state = NULL;
}

static int init_single(struct coll_comm *cm, const struct mt_group *G, struct mt_error *err)
{
	ncclResult_t r;
	int i;

	if (G->ndev > MT_GROUP_MAX_DEV)
		return mtc_fail(err, MT_EINVAL, "group %s: %d devices (at most %d)", G->name, G->ndev,
				MT_GROUP_MAX_DEV);
	for (i = 0; i < G->ndev; i++) {
		int rc = mtc_device_check(G->devices[i], err);

		if (rc)
			return rc;
		cm->dev[i] = G->devices[i];
	}
	r = mtc_dl.ncclCommInitAll(cm->comm, G->ndev, G->devices);
	if (r != ncclSuccess)
		return nccl_fail(err, "ncclCommInitAll", r, NULL);
	cm->ndev = G->ndev;
	cm->nranks = G->ndev;
	cm->rank0 = 0;
	cm->blocking = 1;
	cm->used = 1;
	return MT_OK;
}

static int init_rank(struct coll_comm *cm, const struct mt_group *G, int dev, const unsigned char id[128],
		     double timeout, struct mt_error *err)
{
	ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
	ncclUniqueId uid;
	ncclResult_t r;
	cudaError_t e;
	int rc, to;

	cfg.blocking = 0;
	memcpy(&uid, id, sizeof(uid));
	e = cudaSetDevice(dev);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "cudaSetDevice", e);
	cm->dev[0] = dev;
	cm->ndev = 1;
	cm->nranks = G->ranks;
	cm->rank0 = G->grank;
	cm->blocking = 0;
	cm->comm[0] = NULL;
	r = mtc_dl.ncclCommInitRankConfig(&cm->comm[0], G->ranks, uid, G->grank, &cfg);
	if (r != ncclSuccess && r != ncclInProgress) {
		rc = nccl_fail(err, "ncclCommInitRankConfig", r, cm->comm[0]);
		if (cm->comm[0])
			mtc_dl.ncclCommAbort(cm->comm[0]);
		cm->comm[0] = NULL;
		return rc;
	}
	rc = settle(cm->comm[0], r, mtc_now() + timeout, "ncclCommInitRankConfig", &to, err);
	if (rc) {
		mtc_dl.ncclCommAbort(cm->comm[0]);
		cm->comm[0] = NULL;
		if (to)
			return mtc_fail(err, MT_EINVAL,
					"NCCL communicator init for group %s (rank %d of %d) did not finish within "
					"%g s; communicator aborted (a peer is missing or the network hangs)",
					G->name, G->grank, G->ranks, timeout);
		return rc;
	}
	cm->used = 1;
	return MT_OK;
}

static int coll_open(struct mt_probe_ctx *ctx, struct mt_error *err)
{
	struct coll_probe *P;
	const struct mt_probe_opts *o = ctx->opts;
	int g, rc, first_rc = MT_OK, v = 0;
	struct mt_error first;

	ctx->probe_state = NULL;
	first.code = 0;
	first.msg[0] = 0;
	P = (struct coll_probe *)calloc(1, sizeof(*P) + (size_t)(ctx->ngroups > 0 ? ctx->ngroups : 1) *
					       sizeof(struct coll_comm));
	if (!P)
		return mtc_fail(err, MT_ENOMEM, "collective: out of memory");
	P->ngroups = ctx->ngroups > 0 ? ctx->ngroups : 0;
	P->timeout = o && o->timeout_s > 0 ? o->timeout_s : 120.0;
	if (mtc_dl.ncclGetVersion(&v) == ncclSuccess)
		P->version = v;
	P->alltoall = mtc_dl.ncclAlltoAll != NULL && P->version >= 22800;

	/* every layout in order on every rank, whatever fails: the broadcasts
	 * are MPI collectives and must match across the world */
	for (g = 0; g < P->ngroups; g++) {
		const struct mt_group *G = &ctx->groups[g];
		struct coll_comm *cm = &P->g[g];
		unsigned char id[128];
		static const unsigned char zero[128] = { 0 };
		struct mt_error e1;

		e1.code = 0;
		e1.msg[0] = 0;
		rc = MT_OK;
		mtc_copy(cm->name, sizeof(cm->name), G->name);
		memset(id, 0, sizeof(id));
		if (G->ndev > 0) {
			if (ctx->group_bcast)
				rc = ctx->group_bcast(ctx, g, id, 128, &e1);
			if (!rc && G->member && !first_rc)
				rc = init_single(cm, G, &e1);
		} else {
			if (G->member && G->grank == 0 && !first_rc)
				rc = mtc_nccl_id(id, &e1);
			if (ctx->group_bcast) {
				struct mt_error e2;
				int brc;

				e2.code = 0;
				e2.msg[0] = 0;
				brc = ctx->group_bcast(ctx, g, id, 128, &e2);
				if (!rc && brc) {
					rc = brc;
					e1 = e2;
				}
			} else if (ctx->world && ctx->world->size > 1 && G->ranks > 1) {
				rc = mtc_fail(&e1, MT_EINVAL, "collective: no group_bcast to share the NCCL id of "
					      "group %s", G->name);
			}
			if (!rc && G->member && !first_rc) {
				if (!memcmp(id, zero, sizeof(id)))
					rc = mtc_fail(&e1, MT_EINVAL, "group %s: rank 0 of the group could not "
						      "create an NCCL id", G->name);
				else
					rc = init_rank(cm, G, ctx->device, id, P->timeout, &e1);
			}
		}
		if (rc && !first_rc) {
			first_rc = rc;
			first = e1;
			if (!first.code)
				first.code = rc;
		}
	}
	if (first_rc) {
		for (g = 0; g < P->ngroups; g++)
			if (P->g[g].used)
				comm_abort(&P->g[g]);
		free(P);
		if (err)
			*err = first;
		return first_rc;
	}
	ctx->probe_state = P;
	return MT_OK;
}

/* ------------------------------------------------------------ data */

__device__ __forceinline__ float coll_f(size_t x)
{
	return (float)(x % 13 + 1);
}

__global__ void coll_fill(float *p, size_t n, int rank)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += step)
		p[i] = (float)(rank + 1) * coll_f(i);
}

/* The value rank `rank` of `n` must hold at recv[idx] after the operation. */
__device__ __forceinline__ float coll_expect(int op, int rank, int n, size_t per, size_t idx)
{
	float tri = (float)n * (float)(n + 1) / 2.0f;
	size_t p = per ? idx / per : 0, i = per ? idx % per : 0;

	switch (op) {
	case C_AR:
		return tri * coll_f(idx);
	case C_AG:
		return (float)(p + 1) * coll_f(i);
	case C_RS:
		return tri * coll_f((size_t)rank * per + idx);
	case C_A2A:
		return (float)(p + 1) * coll_f((size_t)rank * per + i);
	case C_SR:
		return (float)((rank - 1 + n) % n + 1) * coll_f(idx);
	default:   /* broadcast from root 0 */
		return coll_f(idx);
	}
}

__global__ void coll_check(const float *recv, size_t n, int op, int rank, int nranks, size_t per,
			   unsigned long long *out)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += step)
		if (recv[i] != coll_expect(op, rank, nranks, per, i)) {
			atomicAdd(&out[0], 1ull);
			atomicMin(&out[1], (unsigned long long)i);
		}
}

static unsigned coll_blocks(size_t n)
{
	size_t b = (n + 255) / 256;

	return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

/* ------------------------------------------------------------ cases */

/* A rank outside every group of the case's layout gets no state (NULL):
 * run() answers 0 s, which the harness leaves out of the mean over ranks,
 * verify() passes, teardown() and extra() do nothing. */

static int coll_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	int v = 0, rc = mtc_device_check(ctx->device, err);
	ncclResult_t r;

	if (rc)
		return rc;
	r = mtc_dl.ncclGetVersion(&v);
	if (r != ncclSuccess)
		return nccl_fail(err, "ncclGetVersion", r, NULL);
	return MT_OK;
}

static void coll_teardown(void *state)
{
	struct coll_state *s = (struct coll_state *)state;
	int i;

	if (!s)
		return;
	for (i = 0; i < s->ndev; i++) {
		struct coll_dev *d = &s->d[i];

		cudaSetDevice(s->cm->dev[i]);
		if (!s->cm->aborted)
			mtc_timer_sync(&d->tm);
		cudaFree(d->send);
		cudaFree(d->recv);
		cudaFree(d->check);
		mtc_timer_free(&d->tm);
	}
	free(s);
}

static int coll_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state, struct mt_error *err)
{
	struct coll_probe *P = (struct coll_probe *)ctx->probe_state;
	struct coll_state *s;
	struct coll_comm *cm;
	size_t total;
	int i, rc = MT_OK;

	*state = NULL;
	if (!P)
		return mtc_fail(err, MT_EINVAL, "collective: setup before open");
	if (c->group < 0 || c->group >= P->ngroups)
		return mtc_fail(err, MT_EINVAL, "collective case %s: group %d out of range (%d layouts)", c->label,
				c->group, P->ngroups);
	cm = &P->g[c->group];
	if (!cm->used)
		return MT_OK;   /* not a member of this layout: no state, run() answers 0 s */
	if (cm->aborted)
		return mtc_fail(err, MT_EINVAL, "collective case %s: the communicator of group %s was aborted "
				"after an earlier timeout", c->label, cm->name);
	if (c->op < 0 || c->op >= C_N)
		return mtc_fail(err, MT_EINVAL, "collective case %s: unknown op %d", c->label, c->op);
	s = (struct coll_state *)calloc(1, sizeof(*s));
	if (!s)
		return mtc_fail(err, MT_ENOMEM, "collective: out of memory");
	mtc_nvtx_push("collective", c->label);
	s->P = P;
	s->cm = cm;
	s->op = c->op;
	s->nranks = cm->nranks;
	s->ndev = cm->ndev;
	s->bytes = c->bytes;
	s->timeout = P->timeout;
	total = (size_t)(c->bytes / 4);
	switch (c->op) {
	case C_AG:
		s->per = total / (size_t)s->nranks;
		s->nsend = s->per;
		s->nrecv = s->per * (size_t)s->nranks;
		s->count = s->per;
		break;
	case C_RS:
		s->per = total / (size_t)s->nranks;
		s->nsend = s->per * (size_t)s->nranks;
		s->nrecv = s->per;
		s->count = s->per;
		break;
	case C_A2A:
		s->per = total / (size_t)s->nranks;
		s->nsend = s->nrecv = s->per * (size_t)s->nranks;
		s->count = s->per;
		break;
	default:
		s->per = total;
		s->nsend = s->nrecv = s->count = total;
		break;
	}
	if (s->count == 0) {
		rc = mtc_fail(err, MT_EINVAL, "collective case %s: %.0f bytes is less than one float per rank "
			      "(%d ranks)", c->label, c->bytes, s->nranks);
		goto fail;
	}
	for (i = 0; i < s->ndev; i++) {
		struct coll_dev *d = &s->d[i];
		unsigned long long init[2] = { 0, ~0ull };

		MTC_CK(cudaSetDevice(cm->dev[i]));
		if ((rc = mtc_timer_init(&d->tm, 0, err)))
			goto fail;
		MTC_CK(cudaMalloc((void **)&d->send, s->nsend * sizeof(float)));
		MTC_CK(cudaMalloc((void **)&d->recv, s->nrecv * sizeof(float)));
		MTC_CK(cudaMalloc((void **)&d->check, sizeof(init)));
		coll_fill<<<coll_blocks(s->nsend), 256, 0, d->tm.st>>>(d->send, s->nsend, cm->rank0 + i);
		MTC_CK(cudaGetLastError());
		MTC_CK(cudaMemsetAsync(d->recv, 0, s->nrecv * sizeof(float), d->tm.st));
		MTC_CK(cudaMemcpyAsync(d->check, init, sizeof(init), cudaMemcpyHostToDevice, d->tm.st));
		MTC_CK(cudaStreamSynchronize(d->tm.st));
	}
	mtc_nvtx_pop();
	*state = s;
	return MT_OK;
fail:
	mtc_nvtx_pop();
	coll_teardown(s);
	return rc;
}

/* Queue one operation on every local communicator (one group). */
static ncclResult_t coll_enqueue(struct coll_state *s, int *which)
{
	struct coll_comm *cm = s->cm;
	ncclResult_t r = mtc_dl.ncclGroupStart();
	int i, p;

	*which = 0;
	for (i = 0; r == ncclSuccess && i < s->ndev; i++) {
		struct coll_dev *d = &s->d[i];
		ncclComm_t comm = cm->comm[i];
		int rank = cm->rank0 + i, n = s->nranks;

		switch (s->op) {
		case C_AR:
			r = mtc_dl.ncclAllReduce(d->send, d->recv, s->count, ncclFloat, ncclSum,
						 comm, d->tm.st);
			break;
		case C_AG:
			r = mtc_dl.ncclAllGather(d->send, d->recv, s->count, ncclFloat, comm,
						 d->tm.st);
			break;
		case C_RS:
			r = mtc_dl.ncclReduceScatter(d->send, d->recv, s->count, ncclFloat, ncclSum,
						     comm, d->tm.st);
			break;
		case C_A2A:
			if (s->P->alltoall) {
				r = mtc_dl.ncclAlltoAll(d->send, d->recv, s->count, ncclFloat, comm,
							d->tm.st);
				break;
			}
			for (p = 0; r == ncclSuccess && p < n; p++) {
				r = mtc_dl.ncclSend(d->send + (size_t)p * s->per, s->per, ncclFloat,
						    p, comm, d->tm.st);
				if (r == ncclSuccess)
					r = mtc_dl.ncclRecv(d->recv + (size_t)p * s->per, s->per,
							    ncclFloat, p, comm, d->tm.st);
			}
			break;
		case C_SR:
			r = mtc_dl.ncclSend(d->send, s->count, ncclFloat, (rank + 1) % n, comm,
					    d->tm.st);
			if (r == ncclSuccess)
				r = mtc_dl.ncclRecv(d->recv, s->count, ncclFloat,
						    (rank - 1 + n) % n, comm, d->tm.st);
			break;
		default:
			r = mtc_dl.ncclBroadcast(d->send, d->recv, s->count, ncclFloat, 0, comm,
						 d->tm.st);
			break;
		}
		*which = i;
	}
	if (r != ncclSuccess) {
		mtc_dl.ncclGroupEnd();
		return r;
	}
	*which = -1;
	return mtc_dl.ncclGroupEnd();
}

static int coll_timeout(struct coll_state *s, const struct mt_case *c, const char *what, struct mt_error *err)
{
	comm_abort(s->cm);
	return mtc_fail(err, MT_EINVAL, "%s of %.0f bytes on group %s did not finish within %g s (%s); "
			"communicator aborted", op_names[s->op], c->bytes, s->cm->name, s->timeout, what);
}

static int coll_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct coll_state *s = (struct coll_state *)state;
	struct coll_comm *cm;
	double deadline, worst = 0;
	int i, it, rc = MT_OK, to, which, inner = c->inner > 0 ? c->inner : 1;
	ncclResult_t r;
	cudaError_t e;
	float ms;

	*seconds = 0;
	if (!s)
		return MT_OK;   /* not a member */
	cm = s->cm;
	deadline = mtc_now() + s->timeout;
	if (cm->aborted)
		return mtc_fail(err, MT_EINVAL, "collective %s: the communicator of group %s was aborted",
				c->label, cm->name);
	mtc_nvtx_push("collective", c->label);
	for (i = 0; i < s->ndev; i++) {
		MTC_CK(cudaSetDevice(cm->dev[i]));
		MTC_CK(cudaEventRecord(s->d[i].tm.e0, s->d[i].tm.st));
	}
	for (it = 0; it < inner; it++) {
		r = coll_enqueue(s, &which);
		if (r != ncclSuccess && r != ncclInProgress) {
			rc = nccl_fail(err, op_names[s->op], r, cm->comm[which < 0 ? 0 : which]);
			goto fail;
		}
		for (i = 0; !cm->blocking && i < s->ndev; i++) {
			rc = settle(cm->comm[i], r, deadline, op_names[s->op], &to, err);
			if (rc && to) {
				rc = coll_timeout(s, c, "enqueue", err);
				goto fail;
			}
			if (rc)
				goto fail;
		}
	}
	for (i = 0; i < s->ndev; i++) {
		MTC_CK(cudaSetDevice(cm->dev[i]));
		MTC_CK(cudaEventRecord(s->d[i].tm.e1, s->d[i].tm.st));
	}
	/* the watchdog: poll the stop events and the communicators */
	for (;;) {
		int done = 1;

		for (i = 0; i < s->ndev; i++) {
			e = cudaEventQuery(s->d[i].tm.e1);
			if (e == cudaErrorNotReady) {
				done = 0;
			} else if (e != cudaSuccess) {
				rc = mtc_cuda_fail(err, "cudaEventQuery (collective sample)", e);
				goto fail;
			}
		}
		if (done)
			break;
		for (i = 0; i < s->ndev; i++) {
			ncclResult_t st = ncclSuccess;

			if (mtc_dl.ncclCommGetAsyncError(cm->comm[i], &st) == ncclSuccess &&
			    st != ncclSuccess && st != ncclInProgress) {
				rc = nccl_fail(err, "NCCL asynchronous error", st, cm->comm[i]);
				comm_abort(cm);
				goto fail;
			}
		}
		if (mtc_now() > deadline) {
			rc = coll_timeout(s, c, "waiting for the GPU", err);
			goto fail;
		}
		nap();
	}
	for (i = 0; i < s->ndev; i++) {
		ms = 0;
		MTC_CK(cudaEventElapsedTime(&ms, s->d[i].tm.e0, s->d[i].tm.e1));
		if (ms > worst)
			worst = ms;
	}
	*seconds = worst / 1e3;
fail:
	mtc_nvtx_pop();
	return rc;
}

static int coll_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct coll_state *s = (struct coll_state *)state;
	unsigned long long res[2], wrong = 0, first = ~0ull;
	int i, rc = MT_OK;

	if (!s)
		return MT_OK;   /* not a member */
	if (s->cm->aborted)
		return mtc_fail(err, MT_EINVAL, "collective %s: communicator aborted, nothing to verify", c->label);
	for (i = 0; i < s->ndev; i++) {
		struct coll_dev *d = &s->d[i];
		unsigned long long init[2] = { 0, ~0ull };

		MTC_CK(cudaSetDevice(s->cm->dev[i]));
		MTC_CK(cudaMemcpyAsync(d->check, init, sizeof(init), cudaMemcpyHostToDevice, d->tm.st));
		coll_check<<<coll_blocks(s->nrecv), 256, 0, d->tm.st>>>(d->recv, s->nrecv, s->op, s->cm->rank0 + i,
								    s->nranks, s->per, d->check);
		MTC_CK(cudaGetLastError());
		MTC_CK(cudaMemcpyAsync(res, d->check, sizeof(res), cudaMemcpyDeviceToHost, d->tm.st));
		MTC_CK(cudaStreamSynchronize(d->tm.st));
		wrong += res[0];
		if (res[1] < first)
			first = res[1];
	}
	s->wrong = wrong;
	s->verified = 1;
	if (wrong)
		return mtc_fail(err, MT_EINVAL, "%s of %.0f bytes on group %s: %llu of %zu received elements are "
				"wrong (first at index %llu)", op_names[s->op], c->bytes, s->cm->name, wrong,
				s->nrecv * (size_t)s->ndev, first);
	return MT_OK;
fail:
	return rc;
}

static void coll_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct coll_state *s = (struct coll_state *)state;
	size_t pos = 0;

	(void)c;
	if (!n)
		return;
	buf[0] = 0;
	if (!s)
		return;
	mtc_member(buf, n, &pos, "\"nranks\": %d", s->nranks);
	mtc_member(buf, n, &pos, "\"count\": %zu", s->count);
	mtc_member(buf, n, &pos, "\"dtype\": \"float\"");
	if (s->op == C_AR || s->op == C_RS)
		mtc_member(buf, n, &pos, "\"redop\": \"sum\"");
	if (s->verified)
		mtc_member(buf, n, &pos, "\"wrong\": %llu", s->wrong);
	if (s->op == C_A2A)
		mtc_member(buf, n, &pos, "\"alltoall\": \"%s\"", s->P->alltoall ? "ncclAlltoAll" : "grouped send/recv");
	mtc_member(buf, n, &pos, "\"single_process\": %s", s->cm->blocking ? "true" : "false");
	mtc_member(buf, n, &pos, "\"nccl\": %d", s->P->version);
	mtc_member(buf, n, &pos, "\"group\": \"%s\"", s->cm->name);
}

extern "C" const struct mt_probe_ops mtc_collective_ops = {
	coll_applicable,
	coll_open,
	coll_close,
	NULL,
	coll_setup,
	coll_run,
	coll_verify,
	coll_teardown,
	coll_extra,
};
