/* SPDX-License-Identifier: MIT */
/* attention: fused scaled-dot-product attention with cuDNN's backend (graph)
 * API, called from plain C++ without cudnn-frontend (the CUDA backend of the
 * attention probe).
 *
 * Case: batch, heads, kv_heads (GQA when fewer than heads), head_dim, seq
 * (self-attention: s_q = s_kv), causal (top-left aligned: key j <= query i),
 * bwd (0 forward, 1 backward).  bf16 Q, K, V, O, dO, dQ, dK, dV in BHSD
 * layout, fp32 softmax statistics (log-sum-exp per row, [b, h, s, 1]),
 * scale 1/sqrt(head_dim).  The forward always produces the statistics, as a
 * training step does.
 *
 * Two ways to express the operation, chosen at run time:
 *  - "unified": one CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR (or _BWD_)
 *    node (cuDNN 9.13.1 and later).  It has no mask attribute in 9.19, so it
 *    is used for non-causal cases only.
 *  - "composite": the graph of matmuls, pointwise and reduction nodes that
 *    cuDNN pattern-matches into its flash-attention kernels (the graph the
 *    frontend builds): S = Q.K^T * scale, [causal: GEN_INDEX rows and columns,
 *    CMP_GE, BINARY_SELECT with -inf], max, sub, exp, sum, log, add (stats),
 *    div, P.V; the backward recomputes P from the statistics and produces
 *    dQ (through an fp32 accumulator), dK, dV (summed over the query heads of
 *    a KV group under GQA).
 * Non-causal cases try unified first and fall back to composite; causal
 * cases use composite.  extra() says which ran and why.
 *
 * Method.  setup() fills the inputs with hashed random values, builds the
 * plans (heuristics mode A, then FALLBACK; the first engine config that
 * finalizes; runtime-compiled engines JIT here, outside any timing), runs
 * the forward once for a backward case (O and the statistics are its
 * inputs), times one operation and raises case->inner so that a sample lasts
 * about 10 ms (at most 64 operations behind the spin gate).  run(): spin
 * gate, start event, `inner` executions, stop event, release.
 * verify() recomputes on the device, in fp32 from the same bf16 inputs: 8
 * sampled query rows (O and the statistic; for a backward case also dQ) and,
 * for a backward case, 4 sampled key rows (dK and dV), with the first query
 * row and the last always among them (the rows a wrong mask changes most).
 * An element passes when |got - ref| <= rel |ref| + c sqrt(sum of squared
 * terms): the second term is the size of the rounding a bf16 computation of
 * that sum can show, so a wrong answer (of the size of the terms) fails.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attention.h"

/* ------------------------------------------------------------ reference */

__device__ float blk_reduce(float v, float *sh, int is_max)
{
	int t = threadIdx.x, n = blockDim.x;

	sh[t] = v;
	__syncthreads();
	for (int o = n / 2; o > 0; o >>= 1) {
		if (t < o)
			sh[t] = is_max ? fmaxf(sh[t], sh[t + o]) : sh[t] + sh[t + o];
		__syncthreads();
	}
	v = sh[0];
	__syncthreads();
	return v;
}

struct attn_dims {
	int b, h, hk, d, s, causal, bwd;
	float scale;
	uint64_t seed;
};

__device__ __forceinline__ size_t q_at(const attn_dims &a, int bi, int hi, int i)
{
	return (((size_t)bi * a.h + hi) * a.s + i) * a.d;
}

__device__ __forceinline__ size_t k_at(const attn_dims &a, int bi, int kh, int j)
{
	return (((size_t)bi * a.hk + kh) * a.s + j) * a.d;
}

/* One block per sampled query row r -> (bi, hi, i); 256 threads.
 * out per row: O (ref, rss, got) x d, lse (ref, got), dQ (ref, rss, got) x d.
 * scratch: 2 * s floats per row. */
__global__ void attn_row_ref(attn_dims a, const __nv_bfloat16 *q, const __nv_bfloat16 *k,
			     const __nv_bfloat16 *v, const __nv_bfloat16 *o, const float *stats,
			     const __nv_bfloat16 *dout, const __nv_bfloat16 *dq, float *scratch, float *out)
{
	__shared__ float qs[ATTN_MAX_D], dos[ATTN_MAX_D], sh[256];
	int r = blockIdx.x, t = threadIdx.x, bi, hi, i, kh, jmax, j, c;
	float m = -INFINITY, l = 0, lse, dd = 0;
	float *pj = scratch + (size_t)r * 2 * a.s, *dsj = pj + a.s;
	float *res = out + (size_t)r * (6 * a.d + 2);

	if (r == 0) {
		bi = 0;
		hi = 0;
		i = 0;
	} else if (r == 1) {
		bi = a.b - 1;
		hi = a.h - 1;
		i = a.s - 1;
	} else {
		uint64_t x = mtc_mix64(a.seed + (uint64_t)r);

		bi = (int)(x % (uint64_t)a.b);
		hi = (int)((x >> 20) % (uint64_t)a.h);
		i = (int)((x >> 40) % (uint64_t)a.s);
	}
	kh = hi / (a.h / a.hk);
	jmax = a.causal ? i : a.s - 1;
	for (c = t; c < a.d; c += blockDim.x) {
		qs[c] = mtc_ld(q, q_at(a, bi, hi, i) + c);
		dos[c] = a.bwd ? mtc_ld(dout, q_at(a, bi, hi, i) + c) : 0.0f;
	}
	__syncthreads();
	for (j = t; j <= jmax; j += blockDim.x) {
		const __nv_bfloat16 *kr = k + k_at(a, bi, kh, j);
		float sdot = 0;

		for (c = 0; c < a.d; c++)
			sdot += qs[c] * __bfloat162float(kr[c]);
		pj[j] = sdot * a.scale;
		m = fmaxf(m, pj[j]);
	}
	m = blk_reduce(m, sh, 1);
	for (j = t; j <= jmax; j += blockDim.x) {
		pj[j] = expf(pj[j] - m);
		l += pj[j];
	}
	l = blk_reduce(l, sh, 0);
	lse = m + logf(l);
	__syncthreads();
	for (c = t; c < a.d; c += blockDim.x) {
		float acc = 0, sq = 0;

		for (j = 0; j <= jmax; j++) {
			float x = pj[j] / l * __bfloat162float(v[k_at(a, bi, kh, j) + c]);

			acc += x;
			sq += x * x;
		}
		res[3 * c] = acc;
		res[3 * c + 1] = sqrtf(sq);
		res[3 * c + 2] = mtc_ld(o, q_at(a, bi, hi, i) + c);
	}
	if (t == 0) {
		res[3 * a.d] = lse;
		res[3 * a.d + 1] = stats[((size_t)bi * a.h + hi) * a.s + i];
	}
	if (!a.bwd)
		return;
	/* D = dO_i . O_i (the stored O, as the backward uses it) */
	for (c = t; c < a.d; c += blockDim.x)
		dd += dos[c] * mtc_ld(o, q_at(a, bi, hi, i) + c);
	dd = blk_reduce(dd, sh, 0);
	for (j = t; j <= jmax; j += blockDim.x) {
		const __nv_bfloat16 *vr = v + k_at(a, bi, kh, j);
		float dp = 0;

		for (c = 0; c < a.d; c++)
			dp += dos[c] * __bfloat162float(vr[c]);
		dsj[j] = pj[j] / l * (dp - dd);
	}
	__syncthreads();
	for (c = t; c < a.d; c += blockDim.x) {
		float acc = 0, sq = 0;

		for (j = 0; j <= jmax; j++) {
			float x = a.scale * dsj[j] * __bfloat162float(k[k_at(a, bi, kh, j) + c]);

			acc += x;
			sq += x * x;
		}
		res[3 * a.d + 2 + 3 * c] = acc;
		res[3 * a.d + 2 + 3 * c + 1] = sqrtf(sq);
		res[3 * a.d + 2 + 3 * c + 2] = mtc_ld(dq, q_at(a, bi, hi, i) + c);
	}
}

/* One block per sampled key row r -> (bi, kh, j): dV_j and dK_j summed over
 * the query heads of the group and the query rows that see key j, with the
 * probabilities from the forward's statistics.
 * out per sample: dV (ref, rss, got) x d, dK (ref, rss, got) x d.
 * scratch: 2 * g * s floats per sample. */
__global__ void attn_col_ref(attn_dims a, const __nv_bfloat16 *q, const __nv_bfloat16 *k,
			     const __nv_bfloat16 *v, const __nv_bfloat16 *o, const float *stats,
			     const __nv_bfloat16 *dout, const __nv_bfloat16 *dk, const __nv_bfloat16 *dv,
			     float *scratch, float *out)
{
	__shared__ float ks[ATTN_MAX_D], vs[ATTN_MAX_D];
	int r = blockIdx.x, t = threadIdx.x, bi, kh, j, g = a.h / a.hk, n = g * a.s, idx, c;
	float *pp = scratch + (size_t)r * 2 * n, *dss = pp + n;
	float *res = out + (size_t)r * 6 * a.d;

	if (r == 0) {
		bi = 0;
		kh = 0;
		j = 0;
	} else if (r == 1) {
		bi = a.b - 1;
		kh = a.hk - 1;
		j = a.s - 1;
	} else {
		uint64_t x = mtc_mix64(a.seed * 7 + (uint64_t)r);

		bi = (int)(x % (uint64_t)a.b);
		kh = (int)((x >> 20) % (uint64_t)a.hk);
		j = (int)((x >> 40) % (uint64_t)a.s);
	}
	for (c = t; c < a.d; c += blockDim.x) {
		ks[c] = mtc_ld(k, k_at(a, bi, kh, j) + c);
		vs[c] = mtc_ld(v, k_at(a, bi, kh, j) + c);
	}
	__syncthreads();
	for (idx = t; idx < n; idx += blockDim.x) {
		int hi = kh * g + idx / a.s, i = idx % a.s;
		size_t qo = q_at(a, bi, hi, i);
		float sdot = 0, dp = 0, dd = 0, p;

		if (a.causal && i < j) {
			pp[idx] = 0;
			dss[idx] = 0;
			continue;
		}
		for (c = 0; c < a.d; c++) {
			float dov = __bfloat162float(dout[qo + c]);

			sdot += __bfloat162float(q[qo + c]) * ks[c];
			dp += dov * vs[c];
			dd += dov * __bfloat162float(o[qo + c]);
		}
		p = expf(sdot * a.scale - stats[((size_t)bi * a.h + hi) * a.s + i]);
		pp[idx] = p;
		dss[idx] = p * (dp - dd);
	}
	__syncthreads();
	for (c = t; c < a.d; c += blockDim.x) {
		float av = 0, sv = 0, ak = 0, sk = 0;

		for (idx = 0; idx < n; idx++) {
			int hi = kh * g + idx / a.s, i = idx % a.s;
			size_t qo = q_at(a, bi, hi, i);
			float xv = pp[idx] * __bfloat162float(dout[qo + c]);
			float xk = a.scale * dss[idx] * __bfloat162float(q[qo + c]);

			av += xv;
			sv += xv * xv;
			ak += xk;
			sk += xk * xk;
		}
		res[3 * c] = av;
		res[3 * c + 1] = sqrtf(sv);
		res[3 * c + 2] = mtc_ld(dv, k_at(a, bi, kh, j) + c);
		res[3 * a.d + 3 * c] = ak;
		res[3 * a.d + 3 * c + 1] = sqrtf(sk);
		res[3 * a.d + 3 * c + 2] = mtc_ld(dk, k_at(a, bi, kh, j) + c);
	}
}

/* ------------------------------------------------------------ ops */

static int attn_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	int rc = mtc_device_check(ctx->device, err), major = 0;
	size_t ver = mtc_dl.cudnnGetVersion();

	if (rc)
		return rc;
	if (ver < 90000)
		return mtc_fail(err, MT_EUNSUPPORTED, "cuDNN %zu is older than 9.0 (the backend SDPA graphs)", ver);
	cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->device);
	if (major < 8)
		return mtc_fail(err, MT_EUNSUPPORTED, "cuDNN fused attention needs an sm_80 or newer GPU (this is sm_%d0)",
				major);
	return MT_OK;
}

static void attn_teardown(void *state)
{
	struct attn_state *s = (struct attn_state *)state;
	int i;

	if (!s)
		return;
	mtc_timer_sync(&s->tm);
	for (i = s->ndesc - 1; i >= 0; i--)
		mtc_dl.cudnnBackendDestroyDescriptor(s->desc[i]);
	if (s->handle)
		mtc_dl.cudnnDestroy(s->handle);
	cudaFree(s->fwd.ws);
	cudaFree(s->bwdp.ws);
	cudaFree(s->q);
	cudaFree(s->k);
	cudaFree(s->v);
	cudaFree(s->o);
	cudaFree(s->stats);
	cudaFree(s->dout);
	cudaFree(s->dq);
	cudaFree(s->dk);
	cudaFree(s->dv);
	cudaFree(s->dqacc);
	cudaFree(s->ssum);
	cudaFree(s->scratch);
	cudaFree(s->vout);
	mtc_timer_free(&s->tm);
	free(s);
}

static int attn_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state, struct mt_error *err)
{
	struct attn_state *s;
	struct attn_plan *p;
	cudnnStatus_t stt;
	float ms = 0;
	int rc, kvh = c->kv_heads > 0 ? c->kv_heads : c->heads, g;
	size_t sq, vsz;

	*state = NULL;
	if (c->batch <= 0 || c->heads <= 0 || c->seq <= 0 || c->head_dim <= 0)
		return mtc_fail(err, MT_EINVAL, "attention case %s: batch, heads, seq, head_dim must be positive",
				c->label);
	if (c->head_dim > ATTN_MAX_D || c->head_dim % 8)
		return mtc_fail(err, MT_EUNSUPPORTED, "attention case %s: head_dim %d (a multiple of 8 up to %d)",
				c->label, c->head_dim, ATTN_MAX_D);
	if (kvh <= 0 || c->heads % kvh)
		return mtc_fail(err, MT_EINVAL, "attention case %s: heads %d not a multiple of kv_heads %d",
				c->label, c->heads, kvh);
	rc = attn_applicable(ctx, err);
	if (rc)
		return rc;
	s = (struct attn_state *)calloc(1, sizeof(*s));
	if (!s)
		return mtc_fail(err, MT_ENOMEM, "attention: out of memory");
	mtc_nvtx_push("attention", c->label);
	s->dev = ctx->device;
	s->b = c->batch;
	s->h = c->heads;
	s->hk = kvh;
	s->d = c->head_dim;
	s->s = c->seq;
	s->causal = c->causal != 0;
	s->bwd = c->bwd != 0;
	s->ver = (int)mtc_dl.cudnnGetVersion();
	s->scale = 1.0f / sqrtf((float)s->d);
	s->neginf = -INFINITY;
	s->one = 1.0f;
	s->next_uid = U_VIRT;
	s->verify_worst = -1;
	s->nq = (size_t)s->b * s->h * s->s * s->d;
	s->nk = (size_t)s->b * s->hk * s->s * s->d;
	sq = (size_t)s->b * s->h * s->s;
	g = s->h / s->hk;

	rc = mtc_timer_init(&s->tm, 1, err);
	if (rc)
		goto fail;
	MTC_CK(cudaMalloc(&s->q, s->nq * 2));
	MTC_CK(cudaMalloc(&s->k, s->nk * 2));
	MTC_CK(cudaMalloc(&s->v, s->nk * 2));
	MTC_CK(cudaMalloc(&s->o, s->nq * 2));
	MTC_CK(cudaMalloc(&s->stats, sq * 4));
	if (s->bwd) {
		MTC_CK(cudaMalloc(&s->dout, s->nq * 2));
		MTC_CK(cudaMalloc(&s->dq, s->nq * 2));
		MTC_CK(cudaMalloc(&s->dk, s->nk * 2));
		MTC_CK(cudaMalloc(&s->dv, s->nk * 2));
		MTC_CK(cudaMalloc(&s->dqacc, s->nq * 4));
		MTC_CK(cudaMalloc(&s->ssum, sq * 4));
	}
	s->scratch_n = (size_t)2 * s->s * (ATTN_ROWS > ATTN_COLS * g ? ATTN_ROWS : ATTN_COLS * g);
	MTC_CK(cudaMalloc((void **)&s->scratch, s->scratch_n * 4));
	vsz = (size_t)ATTN_ROWS * (6 * s->d + 2) + (size_t)ATTN_COLS * 6 * s->d;
	MTC_CK(cudaMalloc((void **)&s->vout, vsz * 4));
	rc = mtc_fill(s->q, s->nq, MTC_BF16, 0xa1, 1.0f, s->tm.st, err);
	if (!rc)
		rc = mtc_fill(s->k, s->nk, MTC_BF16, 0xa2, 1.0f, s->tm.st, err);
	if (!rc)
		rc = mtc_fill(s->v, s->nk, MTC_BF16, 0xa3, 1.0f, s->tm.st, err);
	if (!rc && s->bwd)
		rc = mtc_fill(s->dout, s->nq, MTC_BF16, 0xa4, 1.0f, s->tm.st, err);
	if (rc)
		goto fail;
	MTC_CK(cudaMemsetAsync(s->o, 0, s->nq * 2, s->tm.st));
	MTC_CK(cudaMemsetAsync(s->stats, 0, sq * 4, s->tm.st));

	stt = mtc_dl.cudnnCreate(&s->handle);
	if (stt != CUDNN_STATUS_SUCCESS) {
		s->handle = NULL;
		rc = attn_dn_fail(err, "cudnnCreate", stt);
		goto fail;
	}
	stt = mtc_dl.cudnnSetStream(s->handle, s->tm.st);
	if (stt != CUDNN_STATUS_SUCCESS) {
		rc = attn_dn_fail(err, "cudnnSetStream", stt);
		goto fail;
	}
	rc = attn_build(s, 0, err);
	if (rc)
		goto fail;
	if (s->bwd) {
		rc = attn_exec(s, &s->fwd, err);   /* O and the statistics are the backward's inputs */
		if (!rc)
			rc = attn_build(s, 1, err);
		if (rc)
			goto fail;
	}
	p = s->bwd ? &s->bwdp : &s->fwd;
	/* one warm-up, then one timed operation to size the samples */
	rc = attn_exec(s, p, err);
	if (rc)
		goto fail;
	MTC_CK(cudaEventRecord(s->tm.e0, s->tm.st));
	rc = attn_exec(s, p, err);
	if (rc)
		goto fail;
	MTC_CK(cudaEventRecord(s->tm.e1, s->tm.st));
	MTC_CK(cudaEventSynchronize(s->tm.e1));
	MTC_CK(cudaEventElapsedTime(&ms, s->tm.e0, s->tm.e1));
	c->inner = mtc_pick_inner(c->inner, ms / 1e3, ATTN_TARGET_S, ATTN_MAX_OPS);
	/* a gated trial: an engine that waited for the stream inside
	 * cudnnBackendExecute would hold the gate until its timeout */
	rc = mtc_gate_hold(&s->tm.gate, s->tm.st, err);
	if (rc)
		goto fail;
	{
		double t0 = mtc_now(), queued;
		int xrc = attn_exec(s, p, err);

		queued = mtc_now() - t0;
		mtc_gate_release(&s->tm.gate);
		MTC_CK(cudaStreamSynchronize(s->tm.st));
		if (xrc) {
			rc = xrc;
			goto fail;
		}
		s->nogate = mtc_gate_timed_out(&s->tm.gate) || queued > 1.0;
	}
	mtc_nvtx_pop();
	*state = s;
	return MT_OK;
fail:
	mtc_nvtx_pop();
	attn_teardown(s);
	return rc;
}

static int attn_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct attn_state *s = (struct attn_state *)state;
	struct attn_plan *p = s->bwd ? &s->bwdp : &s->fwd;
	cudaError_t e;
	int i, rc = MT_OK, erc = MT_OK, inner = c->inner > 0 ? c->inner : 1;
	struct mt_error exec_err;

	*seconds = 0;
	if (inner > ATTN_MAX_OPS)
		return mtc_fail(err, MT_EINVAL, "attention %s: inner %d exceeds %d operations per gated sample",
				c->label, inner, ATTN_MAX_OPS);
	mtc_nvtx_push("attention", c->label);
	if (!s->nogate)
		rc = mtc_gate_hold(&s->tm.gate, s->tm.st, err);
	if (rc)
		goto out;
	e = cudaEventRecord(s->tm.e0, s->tm.st);
	for (i = 0; i < inner && e == cudaSuccess && !erc; i++)
		erc = attn_exec(s, p, &exec_err);
	if (e == cudaSuccess)
		e = cudaEventRecord(s->tm.e1, s->tm.st);
	mtc_gate_release(&s->tm.gate);
	if (e != cudaSuccess) {
		cudaStreamSynchronize(s->tm.st);
		rc = mtc_cuda_fail(err, "cudaEventRecord", e);
		goto out;
	}
	e = cudaEventSynchronize(s->tm.e1);
	if (e != cudaSuccess) {
		rc = mtc_cuda_fail(err, "cudaEventSynchronize (attention sample)", e);
		goto out;
	}
	if (erc) {
		if (err)
			*err = exec_err;
		rc = erc;
		goto out;
	}
	rc = mtc_gate_elapsed(&s->tm.gate, !s->nogate, s->tm.e0, s->tm.e1, "attention", c->label, inner,
			      seconds, err);
out:
	mtc_nvtx_pop();
	return rc;
}

/* Compare n (ref, rss, got) triples; returns the worst |got-ref|/tol. */
static double check_vec(const float *x, int n, double rel, double c, int *bad, double *got0, double *ref0)
{
	double worst = 0;
	int i;

	for (i = 0; i < n; i++) {
		double ref = x[3 * i], rss = x[3 * i + 1], got = x[3 * i + 2];
		double ratio = fabs(got - ref) / (rel * fabs(ref) + c * rss + 1e-6);

		if (!isfinite(ratio))
			ratio = 1e9;
		if (ratio > 1.0 && !*bad) {
			*got0 = got;
			*ref0 = ref;
		}
		if (ratio > 1.0)
			(*bad)++;
		if (ratio > worst)
			worst = ratio;
	}
	return worst;
}

static int attn_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct attn_state *s = (struct attn_state *)state;
	attn_dims a;
	size_t nrow = 6 * (size_t)s->d + 2, ncol = 6 * (size_t)s->d, n;
	float *host;
	cudaError_t e;
	double worst = 0, w, got0 = 0, ref0 = 0;
	int r, bad = 0, bad_o = 0, bad_lse = 0, bad_dq = 0, bad_dk = 0, bad_dv = 0;

	a.b = s->b;
	a.h = s->h;
	a.hk = s->hk;
	a.d = s->d;
	a.s = s->s;
	a.causal = s->causal;
	a.bwd = s->bwd;
	a.scale = s->scale;
	a.seed = 0xa77e + (uint64_t)s->s;
	n = ATTN_ROWS * nrow + (s->bwd ? ATTN_COLS * ncol : 0);
	host = (float *)malloc(n * sizeof(float));
	if (!host)
		return mtc_fail(err, MT_ENOMEM, "attention verification: out of memory");
	attn_row_ref<<<ATTN_ROWS, 256, 0, s->tm.st>>>(a, (const __nv_bfloat16 *)s->q, (const __nv_bfloat16 *)s->k,
		(const __nv_bfloat16 *)s->v, (const __nv_bfloat16 *)s->o, (const float *)s->stats,
		(const __nv_bfloat16 *)s->dout, (const __nv_bfloat16 *)s->dq, s->scratch, s->vout);
	e = cudaGetLastError();
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s->tm.st);
	if (e == cudaSuccess && s->bwd) {
		attn_col_ref<<<ATTN_COLS, 256, 0, s->tm.st>>>(a, (const __nv_bfloat16 *)s->q,
			(const __nv_bfloat16 *)s->k, (const __nv_bfloat16 *)s->v, (const __nv_bfloat16 *)s->o,
			(const float *)s->stats, (const __nv_bfloat16 *)s->dout, (const __nv_bfloat16 *)s->dk,
			(const __nv_bfloat16 *)s->dv, s->scratch, s->vout + ATTN_ROWS * nrow);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(host, s->vout, n * sizeof(float), cudaMemcpyDeviceToHost, s->tm.st);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s->tm.st);
	if (e != cudaSuccess) {
		free(host);
		return mtc_cuda_fail(err, "attention reference kernels", e);
	}
	for (r = 0; r < ATTN_ROWS; r++) {
		const float *x = host + r * nrow;
		double lr = x[3 * s->d], lg = x[3 * s->d + 1], lt = 1e-3 + 1e-3 * fabs(lr);

		w = check_vec(x, s->d, 1e-2, 2e-2, &bad_o, &got0, &ref0);
		worst = w > worst ? w : worst;
		w = fabs(lg - lr) / lt;
		if (!isfinite(w))
			w = 1e9;
		if (w > 1.0)
			bad_lse++;
		worst = w > worst ? w : worst;
		if (s->bwd) {
			w = check_vec(x + 3 * s->d + 2, s->d, 2e-2, 4e-2, &bad_dq, &got0, &ref0);
			worst = w > worst ? w : worst;
		}
	}
	for (r = 0; s->bwd && r < ATTN_COLS; r++) {
		const float *x = host + ATTN_ROWS * nrow + r * ncol;

		w = check_vec(x, s->d, 2e-2, 4e-2, &bad_dv, &got0, &ref0);
		worst = w > worst ? w : worst;
		w = check_vec(x + 3 * s->d, s->d, 2e-2, 4e-2, &bad_dk, &got0, &ref0);
		worst = w > worst ? w : worst;
	}
	s->verify_worst = worst;
	bad = bad_o + bad_lse + bad_dq + bad_dk + bad_dv;
	if (bad) {
		int rc;

		if (bad_lse && !bad_o) {
			const float *x = host;
			int i;

			for (i = 0; i < ATTN_ROWS; i++)
				if (fabs(x[i * nrow + 3 * s->d + 1] - x[i * nrow + 3 * s->d]) >
				    1e-3 + 1e-3 * fabs(x[i * nrow + 3 * s->d]))
					break;
			got0 = x[i * nrow + 3 * s->d + 1];
			ref0 = x[i * nrow + 3 * s->d];
		}
		rc = mtc_fail(err, MT_EINVAL,
			      "attention %s: wrong results in sampled rows: O %d, statistics (natural-log "
			      "log-sum-exp) %d, dQ %d, dK %d, dV %d elements (first: got %g, expected %g)",
			      c->label, bad_o, bad_lse, bad_dq, bad_dk, bad_dv, got0, ref0);
		free(host);
		return rc;
	}
	free(host);
	return MT_OK;
}

static void attn_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct attn_state *s = (struct attn_state *)state;
	struct attn_plan *p;
	size_t pos = 0;

	(void)c;
	if (!n)
		return;
	buf[0] = 0;
	if (!s)
		return;
	p = s->bwd ? &s->bwdp : &s->fwd;
	mtc_member(buf, n, &pos, "\"impl\": \"%s\"", p->unified ? "cudnn-sdpa-unified" : "cudnn-sdpa-composite");
	mtc_member(buf, n, &pos, "\"engine\": %lld", (long long)p->engine);
	mtc_member(buf, n, &pos, "\"workspace_bytes\": %lld", (long long)p->ws_bytes);
	if (s->verify_worst >= 0)
		mtc_member(buf, n, &pos, "\"verify_worst\": %.3g", s->verify_worst);
	mtc_member(buf, n, &pos, "\"cudnn\": %d", s->ver);
	mtc_member(buf, n, &pos, "\"heuristics\": \"%s\"", p->heur_fallback ? "fallback" : "A");
	if (p->unified_failed)
		mtc_member(buf, n, &pos, "\"unified_failed\": true");
	if (s->nogate)
		mtc_member(buf, n, &pos, "\"gated\": false");
	if (s->bwd)
		mtc_member(buf, n, &pos, "\"fwd_impl\": \"%s\"", s->fwd.unified ? "unified" : "composite");
}

extern "C" const struct mt_probe_ops mtc_attention_ops = {
	attn_applicable,
	NULL,
	NULL,
	NULL,
	attn_setup,
	attn_run,
	attn_verify,
	attn_teardown,
	attn_extra,
};
