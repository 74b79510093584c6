/* SPDX-License-Identifier: MIT */
/* attention_graph: the cuDNN backend (graph) API side of the attention probe:
 * descriptors, the unified SDPA nodes and the composite graphs, plans and
 * their execution (probes/cuda/attention.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

/* ------------------------------------------------------------ cuDNN helpers */

int attn_dn_fail(struct mt_error *err, const char *what, cudnnStatus_t stt)
{
	char last[384];
	int code = stt / 1000 == 3 ? MT_EUNSUPPORTED :
		   stt == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
		   stt == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED ? MT_ENOMEM : MT_EINVAL;

	last[0] = 0;
	mtc_dl.cudnnGetLastErrorString(last, sizeof(last));
	return mtc_fail(err, code, "%s: %s (%d)%s%s", what, mtc_dl.cudnnGetErrorString(stt),
			(int)stt, last[0] ? ": " : "", last);
}

static int dn_new(struct attn_state *s, cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *out,
		  struct mt_error *err)
{
	cudnnStatus_t stt;

	*out = NULL;
	if (s->ndesc >= ATTN_MAX_DESC)
		return mtc_fail(err, MT_EINVAL, "attention: more than %d cuDNN descriptors", ATTN_MAX_DESC);
	stt = mtc_dl.cudnnBackendCreateDescriptor(t, out);
	if (stt != CUDNN_STATUS_SUCCESS)
		return attn_dn_fail(err, "cudnnBackendCreateDescriptor", stt);
	s->desc[s->ndesc++] = *out;
	return MT_OK;
}

static int dn_set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
		  int64_t n, const void *v, const char *what, struct mt_error *err)
{
	cudnnStatus_t stt = mtc_dl.cudnnBackendSetAttribute(d, a, t, n, v);
	char call[160];

	if (stt == CUDNN_STATUS_SUCCESS)
		return MT_OK;
	snprintf(call, sizeof(call), "cudnnBackendSetAttribute(%s)", what);
	return attn_dn_fail(err, call, stt);
}

static int dn_fin(cudnnBackendDescriptor_t d, const char *what, struct mt_error *err)
{
	cudnnStatus_t stt = mtc_dl.cudnnBackendFinalize(d);
	char call[160];

	if (stt == CUDNN_STATUS_SUCCESS)
		return MT_OK;
	snprintf(call, sizeof(call), "cudnnBackendFinalize(%s)", what);
	return attn_dn_fail(err, call, stt);
}

#define SET(d, a, t, n, v)                                                    \
	do {                                                                  \
		rc = dn_set((d), (a), (t), (n), (v), #a, err);                \
		if (rc)                                                       \
			return rc;                                            \
	} while (0)
#define FIN(d, what)                                                          \
	do {                                                                  \
		rc = dn_fin((d), (what), err);                                \
		if (rc)                                                       \
			return rc;                                            \
	} while (0)
#define NEW(t, out)                                                           \
	do {                                                                  \
		rc = dn_new(s, (t), (out), err);                              \
		if (rc)                                                       \
			return rc;                                            \
	} while (0)

typedef cudnnBackendDescriptor_t dnd;

/* A 4-d tensor; uid 0 takes the next virtual id. */
static int tensor(struct attn_state *s, int64_t uid, cudnnDataType_t dt, int64_t d0, int64_t d1, int64_t d2,
		  int64_t d3, int64_t s0, int64_t s1, int64_t s2, int64_t s3, int is_virtual, int by_value,
		  dnd *out, struct mt_error *err)
{
	int64_t dim[4] = { d0, d1, d2, d3 }, str[4] = { s0, s1, s2, s3 }, align = 16;
	bool virt = is_virtual != 0, byval = true;
	int rc;

	if (!uid)
		uid = s->next_uid++;
	NEW(CUDNN_BACKEND_TENSOR_DESCRIPTOR, out);
	SET(*out, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
	SET(*out, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dim);
	SET(*out, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, str);
	SET(*out, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
	SET(*out, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
	SET(*out, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &virt);
	if (by_value)
		SET(*out, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &byval);
	FIN(*out, "tensor");
	return MT_OK;
}

/* packed virtual tensors */
static int vt4(struct attn_state *s, cudnnDataType_t dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3,
	       dnd *out, struct mt_error *err)
{
	return tensor(s, 0, dt, d0, d1, d2, d3, d1 * d2 * d3, d2 * d3, d3, 1, 1, 0, out, err);
}

static int scalar(struct attn_state *s, int64_t uid, dnd *out, struct mt_error *err)
{
	return tensor(s, uid, CUDNN_DATA_FLOAT, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, out, err);
}

/* y = mode(x, b[, t]); prec is the compute type; axis >= 0 for GEN_INDEX */
static int pw(struct attn_state *s, cudnnPointwiseMode_t mode, cudnnDataType_t prec, int64_t axis, dnd x,
	      dnd b, dnd t, dnd y, dnd *op, struct mt_error *err)
{
	dnd p;
	float one = 1.0f;
	int rc;

	NEW(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, &p);
	SET(p, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
	SET(p, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
	if (axis >= 0)
		SET(p, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
	FIN(p, "pointwise");
	NEW(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, op);
	SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &p);
	SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	if (b)
		SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	if (t)
		SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t);
	SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, 1, &one);
	SET(*op, CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, 1, &one);
	FIN(*op, "pointwise operation");
	return MT_OK;
}

static int mm(struct attn_state *s, dnd a, dnd b, dnd c, dnd *op, struct mt_error *err)
{
	dnd m;
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	int rc;

	NEW(CUDNN_BACKEND_MATMUL_DESCRIPTOR, &m);
	SET(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
	FIN(m, "matmul");
	NEW(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, op);
	SET(*op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &a);
	SET(*op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &b);
	SET(*op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &c);
	SET(*op, CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &m);
	FIN(*op, "matmul operation");
	return MT_OK;
}

static int red(struct attn_state *s, cudnnReduceTensorOp_t mode, dnd x, dnd y, dnd *op, struct mt_error *err)
{
	dnd r;
	cudnnDataType_t comp = CUDNN_DATA_FLOAT;
	int rc;

	NEW(CUDNN_BACKEND_REDUCTION_DESCRIPTOR, &r);
	SET(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
	SET(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &comp);
	FIN(r, "reduction");
	NEW(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, op);
	SET(*op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	SET(*op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	SET(*op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &r);
	FIN(*op, "reduction operation");
	return MT_OK;
}

static int reshape(struct attn_state *s, dnd x, dnd y, dnd *op, struct mt_error *err)
{
	int rc;

	NEW(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, op);
	SET(*op, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
	SET(*op, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
	FIN(*op, "reshape operation");
	return MT_OK;
}

/* Operation graph, heuristics (mode A, then FALLBACK), the first engine
 * config whose plan finalizes, the variant pack. */
static int make_plan(struct attn_state *s, dnd *ops, int nops, const int64_t *uids, void *const *ptrs,
		     int nptr, struct attn_plan *p, struct mt_error *err)
{
	static const cudnnBackendHeurMode_t modes[2] = { CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK };
	dnd graph, heur, cfg[ATTN_MAX_CFG], plan, engine;
	int64_t count = 0, ws = 0, idx = -1, got = 0;
	cudnnStatus_t stt, last = CUDNN_STATUS_NOT_SUPPORTED;
	char last_msg[384];
	int rc, m, i;

	last_msg[0] = 0;
	NEW(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, &graph);
	SET(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &s->handle);
	SET(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, nops, ops);
	FIN(graph, "operation graph");
	for (m = 0; m < 2; m++) {
		NEW(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, &heur);
		SET(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
		SET(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &modes[m]);
		stt = mtc_dl.cudnnBackendFinalize(heur);
		if (stt != CUDNN_STATUS_SUCCESS) {
			last = stt;
			mtc_dl.cudnnGetLastErrorString(last_msg, sizeof(last_msg));
			continue;
		}
		for (i = 0; i < ATTN_MAX_CFG; i++)
			NEW(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &cfg[i]);
		count = 0;
		stt = mtc_dl.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
						      CUDNN_TYPE_BACKEND_DESCRIPTOR, ATTN_MAX_CFG,
						      &count, cfg);
		if (stt != CUDNN_STATUS_SUCCESS) {
			last = stt;
			mtc_dl.cudnnGetLastErrorString(last_msg, sizeof(last_msg));
			continue;
		}
		for (i = 0; i < count && i < ATTN_MAX_CFG; i++) {
			NEW(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan);
			SET(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &s->handle);
			SET(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg[i]);
			/* runtime-compiled engines JIT here */
			stt = mtc_dl.cudnnBackendFinalize(plan);
			if (stt != CUDNN_STATUS_SUCCESS) {
				last = stt;
				mtc_dl.cudnnGetLastErrorString(last_msg, sizeof(last_msg));
				continue;
			}
			stt = mtc_dl.cudnnBackendGetAttribute(
				plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
				&got, &ws);
			if (stt != CUDNN_STATUS_SUCCESS)
				return attn_dn_fail(err, "cudnnBackendGetAttribute(EXECUTION_PLAN_WORKSPACE_SIZE)", stt);
			if (dn_new(s, CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine, NULL) == MT_OK &&
			    mtc_dl.cudnnBackendGetAttribute(cfg[i], CUDNN_ATTR_ENGINECFG_ENGINE,
							    CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got,
							    &engine) == CUDNN_STATUS_SUCCESS)
				mtc_dl.cudnnBackendGetAttribute(engine,
								CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
								CUDNN_TYPE_INT64, 1, &got, &idx);
			p->plan = plan;
			p->ws_bytes = ws;
			p->engine = idx;
			p->heur_fallback = m == 1;
			goto found;
		}
	}
	{
		char what[512];

		snprintf(what, sizeof(what), "no cuDNN engine for this attention graph (%d engine configs "
			 "tried)%s%s", (int)count, last_msg[0] ? "; last: " : "", last_msg);
		return attn_dn_fail(err, what, last);
	}
found:
	if (p->ws_bytes > 0) {
		cudaError_t e = cudaMalloc(&p->ws, (size_t)p->ws_bytes);

		if (e != cudaSuccess)
			return mtc_cuda_fail(err, "cudaMalloc(cuDNN workspace)", e);
	}
	NEW(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p->pack);
	SET(p->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, nptr, uids);
	SET(p->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, nptr, ptrs);
	SET(p->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &p->ws);
	FIN(p->pack, "variant pack");
	return MT_OK;
}

/* ------------------------------------------------------------ graphs */

struct attn_t {   /* the named tensors of one graph */
	dnd q, k, kt, v, vt, o, stats, scale, neginf, one, dout, dq, dk, dv, dqacc, ssum;
};

static int io_tensors(struct attn_state *s, struct attn_t *t, int bwd, struct mt_error *err)
{
	int64_t b = s->b, h = s->h, hk = s->hk, S = s->s, d = s->d;
	int rc;

	memset(t, 0, sizeof(*t));
	rc = tensor(s, U_Q, CUDNN_DATA_BFLOAT16, b, h, S, d, h * S * d, S * d, d, 1, 0, 0, &t->q, err);
	if (!rc)
		rc = tensor(s, U_O, CUDNN_DATA_BFLOAT16, b, h, S, d, h * S * d, S * d, d, 1, 0, 0, &t->o, err);
	if (!rc)
		rc = tensor(s, U_STATS, CUDNN_DATA_FLOAT, b, h, S, 1, h * S, S, 1, 1, 0, 0, &t->stats, err);
	if (!rc)
		rc = scalar(s, U_SCALE, &t->scale, err);
	if (!rc && bwd) {
		rc = tensor(s, U_DO, CUDNN_DATA_BFLOAT16, b, h, S, d, h * S * d, S * d, d, 1, 0, 0, &t->dout, err);
		if (!rc)
			rc = tensor(s, U_DQ, CUDNN_DATA_BFLOAT16, b, h, S, d, h * S * d, S * d, d, 1, 0, 0, &t->dq, err);
		if (!rc)
			rc = tensor(s, U_DK, CUDNN_DATA_BFLOAT16, b, hk, S, d, hk * S * d, S * d, d, 1, 0, 0, &t->dk, err);
		if (!rc)
			rc = tensor(s, U_DV, CUDNN_DATA_BFLOAT16, b, hk, S, d, hk * S * d, S * d, d, 1, 0, 0, &t->dv, err);
	}
	return rc;
}

/* K and V as stored (BHSD) or seen transposed (B H D S) by the composite graph */
static int kv_tensors(struct attn_state *s, struct attn_t *t, int kt, int vt, struct mt_error *err)
{
	int64_t b = s->b, hk = s->hk, S = s->s, d = s->d;
	int rc;

	if (kt)
		rc = tensor(s, U_K, CUDNN_DATA_BFLOAT16, b, hk, d, S, hk * S * d, S * d, 1, d, 0, 0, &t->kt, err);
	else
		rc = tensor(s, U_K, CUDNN_DATA_BFLOAT16, b, hk, S, d, hk * S * d, S * d, d, 1, 0, 0, &t->k, err);
	if (rc)
		return rc;
	if (vt)
		return tensor(s, U_V, CUDNN_DATA_BFLOAT16, b, hk, d, S, hk * S * d, S * d, 1, d, 0, 0, &t->vt, err);
	return tensor(s, U_V, CUDNN_DATA_BFLOAT16, b, hk, S, d, hk * S * d, S * d, d, 1, 0, 0, &t->v, err);
}

static int fwd_unified(struct attn_state *s, struct mt_error *err)
{
	struct attn_t t;
	dnd op;
	int rc;
	int64_t uids[6] = { U_Q, U_K, U_V, U_O, U_STATS, U_SCALE };
	void *ptrs[6] = { s->q, s->k, s->v, s->o, s->stats, &s->scale };

	rc = io_tensors(s, &t, 0, err);
	if (!rc)
		rc = kv_tensors(s, &t, 0, 0, err);
	if (rc)
		return rc;
	NEW(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, &op);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.q);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.k);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.v);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.o);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.stats);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.scale);
	FIN(op, "SDPA_FWD operation");
	s->fwd.unified = 1;
	return make_plan(s, &op, 1, uids, ptrs, 6, &s->fwd, err);
}

/* The causal mask on score tensor x (top-left diagonal): y = (row >= col) ? x : -inf */
static int causal_mask(struct attn_state *s, dnd x, dnd neginf, dnd *y, dnd *ops, int *n,
		       struct mt_error *err)
{
	int64_t b = s->b, h = s->h, S = s->s;
	dnd row, col, mask;
	int rc;

	rc = vt4(s, CUDNN_DATA_INT32, b, h, S, S, &row, err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_INT32, b, h, S, S, &col, err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_BOOLEAN, b, h, S, S, &mask, err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, y, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, 2, x, NULL, NULL, row, &ops[(*n)++], err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_FLOAT, 3, x, NULL, NULL, col, &ops[(*n)++], err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, row, col, NULL, mask, &ops[(*n)++], err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, x, neginf, mask, *y,
			&ops[(*n)++], err);
	return rc;
}

static int fwd_composite(struct attn_state *s, struct mt_error *err)
{
	int64_t b = s->b, h = s->h, S = s->s;
	struct attn_t t;
	dnd ops[24], sc, sc1, cur, mx, sub, ex, sum, lg, p;
	int n = 0, rc, np = 6;
	int64_t uids[7] = { U_Q, U_K, U_V, U_O, U_STATS, U_SCALE, U_NEGINF };
	void *ptrs[7] = { s->q, s->k, s->v, s->o, s->stats, &s->scale, &s->neginf };

	s->fwd.unified = 0;
	rc = io_tensors(s, &t, 0, err);
	if (!rc)
		rc = kv_tensors(s, &t, 1, 0, err);
	if (!rc && s->causal) {
		rc = scalar(s, U_NEGINF, &t.neginf, err);
		np = 7;
	}
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &sc, err);
	if (!rc)
		rc = mm(s, t.q, t.kt, sc, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &sc1, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, sc, t.scale, NULL, sc1, &ops[n++], err);
	cur = sc1;
	if (!rc && s->causal)
		rc = causal_mask(s, sc1, t.neginf, &cur, ops, &n, err);
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_FLOAT, b, h, S, 1, h * S, S, 1, 1, 1, 0, &mx, err);
	if (!rc)
		rc = red(s, CUDNN_REDUCE_TENSOR_MAX, cur, mx, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &sub, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, -1, cur, mx, NULL, sub, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &ex, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, -1, sub, NULL, NULL, ex, &ops[n++], err);
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_FLOAT, b, h, S, 1, h * S, S, 1, 1, 1, 0, &sum, err);
	if (!rc)
		rc = red(s, CUDNN_REDUCE_TENSOR_ADD, ex, sum, &ops[n++], err);
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_FLOAT, b, h, S, 1, h * S, S, 1, 1, 1, 0, &lg, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_LOG, CUDNN_DATA_FLOAT, -1, sum, NULL, NULL, lg, &ops[n++], err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_ADD, CUDNN_DATA_FLOAT, -1, mx, lg, NULL, t.stats, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_BFLOAT16, b, h, S, S, &p, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_DIV, CUDNN_DATA_FLOAT, -1, ex, sum, NULL, p, &ops[n++], err);
	if (!rc)
		rc = mm(s, p, t.v, t.o, &ops[n++], err);
	if (rc)
		return rc;
	return make_plan(s, ops, n, uids, ptrs, np, &s->fwd, err);
}

static int bwd_unified(struct attn_state *s, struct mt_error *err)
{
	struct attn_t t;
	dnd op;
	int rc;
	int64_t uids[10] = { U_Q, U_K, U_V, U_O, U_STATS, U_SCALE, U_DO, U_DQ, U_DK, U_DV };
	void *ptrs[10] = { s->q, s->k, s->v, s->o, s->stats, &s->scale, s->dout, s->dq, s->dk, s->dv };

	rc = io_tensors(s, &t, 1, err);
	if (!rc)
		rc = kv_tensors(s, &t, 0, 0, err);
	if (rc)
		return rc;
	NEW(CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, &op);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_QDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.q);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_KDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.k);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_VDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.v);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_ODESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.o);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_STATSDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.stats);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_SCALEDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.scale);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DODDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.dout);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DQDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.dq);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DKDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.dk);
	SET(op, CUDNN_ATTR_OPERATION_SDPA_BWD_DVDESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &t.dv);
	FIN(op, "SDPA_BWD operation");
	s->bwdp.unified = 1;
	return make_plan(s, &op, 1, uids, ptrs, 10, &s->bwdp, err);
}

/* dX = P^T-like product into X (b, hk, s, d); with GQA a full-head product
 * summed over the query heads of each KV group. */
static int grad_kv(struct attn_state *s, dnd at, dnd bmat, dnd out, dnd *ops, int *n, struct mt_error *err)
{
	dnd full;
	int rc;

	if (s->h == s->hk)
		return mm(s, at, bmat, out, &ops[(*n)++], err);
	rc = vt4(s, CUDNN_DATA_BFLOAT16, s->b, s->h, s->s, s->d, &full, err);
	if (!rc)
		rc = mm(s, at, bmat, full, &ops[(*n)++], err);
	if (!rc)
		rc = red(s, CUDNN_REDUCE_TENSOR_ADD, full, out, &ops[(*n)++], err);
	return rc;
}

static int bwd_composite(struct attn_state *s, struct mt_error *err)
{
	int64_t b = s->b, h = s->h, hk = s->hk, S = s->s, d = s->d;
	struct attn_t t;
	dnd ops[40], t1, t2, sc, sc1, sc2, cur, p, pt, dp, t3, t4, ds, dst, kr;
	int n = 0, rc, np = 14;
	int64_t uids[15] = { U_Q, U_K, U_V, U_O, U_STATS, U_SCALE, U_DO, U_DQ, U_DK, U_DV, U_ONE, U_SSUM,
			     U_DQACC, U_NEGINF };
	void *ptrs[15] = { s->q, s->k, s->v, s->o, s->stats, &s->scale, s->dout, s->dq, s->dk, s->dv,
			   &s->one, s->ssum, s->dqacc, &s->neginf };

	s->bwdp.unified = 0;
	if (!s->causal)
		np = 13;
	rc = io_tensors(s, &t, 1, err);
	if (!rc)
		rc = kv_tensors(s, &t, 1, 1, err);
	if (!rc)
		rc = scalar(s, U_ONE, &t.one, err);
	if (!rc && s->causal)
		rc = scalar(s, U_NEGINF, &t.neginf, err);
	if (!rc)
		rc = tensor(s, U_SSUM, CUDNN_DATA_FLOAT, b, h, S, 1, h * S, S, 1, 1, 0, 0, &t.ssum, err);
	if (!rc)
		rc = tensor(s, U_DQACC, CUDNN_DATA_FLOAT, b, h, S, d, h * S * d, S * d, d, 1, 0, 0, &t.dqacc, err);
	/* softmax_sum = rowsum(dO * O) * 1 */
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_FLOAT, b, h, S, d, h * S * d, S * d, h * d, 1, 1, 0, &t1, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, t.dout, t.o, NULL, t1, &ops[n++], err);
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_FLOAT, b, h, S, 1, h * S, S, 1, 1, 1, 0, &t2, err);
	if (!rc)
		rc = red(s, CUDNN_REDUCE_TENSOR_ADD, t1, t2, &ops[n++], err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, t2, t.one, NULL, t.ssum, &ops[n++], err);
	/* P = exp(Q.K^T * scale - stats), masked */
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &sc, err);
	if (!rc)
		rc = mm(s, t.q, t.kt, sc, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &sc1, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, sc, t.scale, NULL, sc1, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &sc2, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, -1, sc1, t.stats, NULL, sc2, &ops[n++], err);
	cur = sc2;
	if (!rc && s->causal)
		rc = causal_mask(s, sc2, t.neginf, &cur, ops, &n, err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &p, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_EXP, CUDNN_DATA_FLOAT, -1, cur, NULL, NULL, p, &ops[n++], err);
	/* dV = P^T dO */
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_BFLOAT16, b, h, S, S, h * S * S, S * S, 1, S, 1, 0, &pt, err);
	if (!rc)
		rc = reshape(s, p, pt, &ops[n++], err);
	if (!rc)
		rc = grad_kv(s, pt, t.dout, t.dv, ops, &n, err);
	/* dS = P * (dO.V^T - softmax_sum) * scale */
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &dp, err);
	if (!rc)
		rc = mm(s, t.dout, t.vt, dp, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &t3, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_SUB, CUDNN_DATA_FLOAT, -1, dp, t.ssum, NULL, t3, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &t4, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, t3, p, NULL, t4, &ops[n++], err);
	if (!rc)
		rc = vt4(s, CUDNN_DATA_FLOAT, b, h, S, S, &ds, err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, t4, t.scale, NULL, ds, &ops[n++], err);
	/* dK = dS^T Q */
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_BFLOAT16, b, h, S, S, h * S * S, S * S, 1, S, 1, 0, &dst, err);
	if (!rc)
		rc = reshape(s, ds, dst, &ops[n++], err);
	if (!rc)
		rc = grad_kv(s, dst, t.q, t.dk, ops, &n, err);
	/* dQ = dS K through the fp32 accumulator */
	if (!rc)
		rc = tensor(s, 0, CUDNN_DATA_FLOAT, b, hk, S, d, hk * S * d, S * d, d, 1, 1, 0, &kr, err);
	if (!rc)
		rc = reshape(s, t.kt, kr, &ops[n++], err);
	if (!rc)
		rc = mm(s, ds, kr, t.dqacc, &ops[n++], err);
	if (!rc)
		rc = pw(s, CUDNN_POINTWISE_IDENTITY, CUDNN_DATA_FLOAT, -1, t.dqacc, NULL, NULL, t.dq, &ops[n++],
			err);
	if (rc)
		return rc;
	return make_plan(s, ops, n, uids, ptrs, np, &s->bwdp, err);
}

/* Unified first where it applies, composite otherwise or when it fails. */
int attn_build(struct attn_state *s, int bwd, struct mt_error *err)
{
	struct attn_plan *p = bwd ? &s->bwdp : &s->fwd;
	char first[MT_ERROR_MSG_MAX];
	int rc;

	if (!s->causal && s->ver >= 91301) {
		rc = bwd ? bwd_unified(s, err) : fwd_unified(s, err);
		if (rc == MT_OK)
			return MT_OK;
		p->unified_failed = 1;
		mtc_copy(first, sizeof(first), err ? err->msg : "");
		cudaFree(p->ws);   /* the descriptors stay in s->desc until teardown */
		p->ws = NULL;
		p->plan = p->pack = NULL;
		p->ws_bytes = 0;
		p->engine = -1;
		rc = bwd ? bwd_composite(s, err) : fwd_composite(s, err);
		if (rc && err) {
			char both[MT_ERROR_MSG_MAX];

			snprintf(both, sizeof(both), "unified SDPA node: %.400s; composite graph: %.500s", first,
				 err->msg);
			mtc_copy(err->msg, sizeof(err->msg), both);
		}
		return rc;
	}
	return bwd ? bwd_composite(s, err) : fwd_composite(s, err);
}

int attn_exec(struct attn_state *s, struct attn_plan *p, struct mt_error *err)
{
	cudnnStatus_t stt;

	/* before 9.6 the fp32 dQ accumulator of the composite backward had to
	 * start at zero (cuDNN clears it itself since) */
	if (p == &s->bwdp && !p->unified && s->ver < 90600) {
		cudaError_t e = cudaMemsetAsync(s->dqacc, 0, s->nq * 4, s->tm.st);

		if (e != cudaSuccess)
			return mtc_cuda_fail(err, "cudaMemsetAsync(dQ accumulator)", e);
	}
	stt = mtc_dl.cudnnBackendExecute(s->handle, p->plan, p->pack);

	if (stt != CUDNN_STATUS_SUCCESS)
		return attn_dn_fail(err, "cudnnBackendExecute", stt);
	return MT_OK;
}
