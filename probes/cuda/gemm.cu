/* SPDX-License-Identifier: MIT */
/* gemm: dense GEMM throughput with cuBLASLt (the CUDA backend of the gemm probe).
 *
 * Case: D[m x n] = A[m x k] * B[k x n] in `case->dtype` (enum mt_dtype):
 *   bf16  A, B, C, D bf16, compute 32F
 *   fp16  A, B, C, D fp16, compute 32F
 *   fp8   A, B e4m3 with per-tensor scales (device floats 0.5 and 0.25),
 *         C, D bf16, compute 32F, fast accumulation on (what Transformer
 *         Engine uses for forward GEMMs)
 *   tf32  fp32 data, CUBLAS_COMPUTE_32F_FAST_TF32
 *   fp32  fp32 data, CUBLAS_COMPUTE_32F
 * Layout "TN" in cuBLASLt's column-major terms (required for fp8 on Hopper,
 * the layout of a Linear layer's forward): A stored k x m (lda = k) and
 * transposed, B stored k x n (ldb = k), D m x n (ldd = m); beta = 0.
 *
 * Method.  setup() fills A and B with hashed random values on the device
 * (never zeros: zero data flatters power and clocks), asks the heuristics for
 * up to 8 algorithms with a 32 MiB workspace, times each (1 warm-up call and
 * 3 to 16 calls, about 200 us, queued behind the spin gate) and keeps the
 * fastest.  It raises case->inner so that one sample lasts about 10 ms (at
 * most MTC_GATED_MAX_OPS calls).  run() holds the
 * stream with the spin gate, records the start event, queues `inner` calls,
 * records the stop event and releases the gate: the time is the GPU's alone.
 * verify() recomputes 256 sampled elements of D (two corners and hashed
 * positions) in double precision on the device from the same inputs and
 * checks |D - ref| <= rel * |ref| + acc * sum|a*b| with rel and acc suited to
 * the dtype (output rounding, accumulation and input conversion).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl.h"

#define GEMM_MAX_ALGOS 8
#define GEMM_WORKSPACE (32u << 20)
#define GEMM_SAMPLES 256
#define GEMM_TARGET_S 0.010

enum { DT_BF16, DT_FP16, DT_FP8, DT_TF32, DT_FP32, DT_N };  /* enum mt_dtype */
static const char *const dt_names[DT_N] = { "bf16", "fp16", "fp8", "tf32", "fp32" };

struct gemm_state {
	int dev, dtype, fast_accum;
	long long m, n, k;
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc, ld;
	cublasLtMatmulPreference_t pref;
	void *a, *b, *d, *ws;
	void *c;                 /* a C apart from D, or NULL: C is D (beta is 0) */
	float *scales;           /* device: [0] A scale, [GEMM_SCALE_STRIDE] B scale (fp8) */
	float *vdev;             /* device: 3 floats per verification sample */
	struct mtc_timer tm;     /* stream, events, spin gate */
	float alpha, beta;
	cublasLtMatmulHeuristicResult_t res[GEMM_MAX_ALGOS];
	float algo_us[GEMM_MAX_ALGOS];
	int nres, best;
	double verify_worst;
	int verify_bad;
	int nogate;              /* a gated trial blocked the host: time without the gate */
	int tune_calls;          /* calls per algorithm when autotuning (gate_trial) */
};

static int lt_fail(struct mt_error *err, const char *call, cublasStatus_t st)
{
	int code = st == CUBLAS_STATUS_NOT_SUPPORTED ? MT_EUNSUPPORTED :
		   st == CUBLAS_STATUS_ALLOC_FAILED ? MT_ENOMEM : MT_EINVAL;

	return mtc_fail(err, code, "%s: %s (%s)", call, mtc_dl.cublasLtGetStatusName(st),
			mtc_dl.cublasLtGetStatusString(st));
}

/* LT_CK(cublasLtCreate, &lt): the call through mtc_dl (dl.h), named as written */
#define LT_CK(fn, ...)                                                    \
	do {                                                              \
		cublasStatus_t st_ = mtc_dl.fn(__VA_ARGS__);              \
		if (st_ != CUBLAS_STATUS_SUCCESS) {                       \
			rc = lt_fail(err, #fn "(" #__VA_ARGS__ ")", st_); \
			goto fail;                                        \
		}                                                         \
	} while (0)

/* ------------------------------------------------------------ reference */

__device__ __forceinline__ long long gemm_pick(int s, int first, long long dim, uint64_t seed)
{
	if (s == 0)
		return 0;
	if (s == 1)
		return dim - 1;
	return (long long)(mtc_mix64(seed ^ ((uint64_t)s * 2 + (uint64_t)first)) % (uint64_t)dim);
}

/* One warp per sample: ref = scale * sum_p A(i,p) B(p,j) and sum |a*b| in
 * double; out[3s] = ref, out[3s+1] = sum of magnitudes, out[3s+2] = D(i,j). */
template <typename TA, typename TD>
__global__ void gemm_ref_kernel(const TA *a, const TA *b, const TD *d, long long m, long long n,
				long long k, double scale, uint64_t seed, float *out)
{
	int s = blockIdx.x, lane = threadIdx.x;
	long long i = gemm_pick(s, 0, m, seed), j = gemm_pick(s, 1, n, seed), p;
	double acc = 0, mag = 0;

	for (p = lane; p < k; p += 32) {
		double x = (double)mtc_ld(a, (size_t)i * (size_t)k + (size_t)p) *
			   (double)mtc_ld(b, (size_t)j * (size_t)k + (size_t)p);

		acc += x;
		mag += fabs(x);
	}
	for (int o = 16; o > 0; o >>= 1) {
		acc += __shfl_xor_sync(0xffffffffu, acc, o);
		mag += __shfl_xor_sync(0xffffffffu, mag, o);
	}
	if (lane == 0) {
		out[3 * s] = (float)(acc * scale);
		out[3 * s + 1] = (float)(mag * fabs(scale));
		out[3 * s + 2] = mtc_ld(d, (size_t)j * (size_t)m + (size_t)i);
	}
}

/* ------------------------------------------------------------ ops */

static int gemm_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	return mtc_device_check(ctx->device, err);
}

static void gemm_teardown(void *state)
{
	struct gemm_state *s = (struct gemm_state *)state;

	if (!s)
		return;
	mtc_timer_sync(&s->tm);
	if (s->pref)
		mtc_dl.cublasLtMatmulPreferenceDestroy(s->pref);
	if (s->la)
		mtc_dl.cublasLtMatrixLayoutDestroy(s->la);
	if (s->lb)
		mtc_dl.cublasLtMatrixLayoutDestroy(s->lb);
	if (s->lc)
		mtc_dl.cublasLtMatrixLayoutDestroy(s->lc);
	if (s->ld)
		mtc_dl.cublasLtMatrixLayoutDestroy(s->ld);
	if (s->op)
		mtc_dl.cublasLtMatmulDescDestroy(s->op);
	if (s->lt)
		mtc_dl.cublasLtDestroy(s->lt);
	cudaFree(s->a);
	cudaFree(s->b);
	cudaFree(s->d);
	cudaFree(s->c);
	cudaFree(s->ws);
	cudaFree(s->scales);
	cudaFree(s->vdev);
	mtc_timer_free(&s->tm);
	free(s);
}

/* Each FP8 scale on its own 256-byte boundary: cuBLASLt wants its pointers
 * 16-byte aligned, and on the first H100 run every FP8 algorithm answered
 * NOT_SUPPORTED with B's scale 4 bytes after A's (PyTorch and Transformer
 * Engine pass scales as separate allocations) */
#define GEMM_SCALE_STRIDE 64

static cublasStatus_t gemm_call(struct gemm_state *s, const cublasLtMatmulAlgo_t *algo)
{
	return mtc_dl.cublasLtMatmul(s->lt, s->op, &s->alpha, s->a, s->la, s->b, s->lb, &s->beta,
				     s->c ? s->c : s->d, s->lc, s->d, s->ld, algo, s->ws,
				     GEMM_WORKSPACE, s->tm.st);
}

/* Time every heuristic result briefly; keep the fastest in s->best.  Each
 * algorithm runs once untimed, then s->tune_calls calls queued behind the
 * spin gate (unless s->nogate) between the two events: the GPU's time alone.
 * Three ungated calls of a 24 us GEMM timed the host's launches as much as
 * the GPU and picked an algorithm 17% slower than the best on the first H100
 * run (617 against 724 TFLOP/s at 2048^3).  gate_trial() sets the count:
 * enough calls for GEMM_TUNE_S of GPU time, 3 to GEMM_TUNE_CALLS. */
#define GEMM_TUNE_CALLS 16
#define GEMM_TUNE_S 200e-6
static int gemm_autotune(struct gemm_state *s, double *best_s, struct mt_error *err)
{
	cublasStatus_t st, last = CUBLAS_STATUS_SUCCESS;
	cudaError_t e;
	float ms, best_ms = -1;
	int i, r, rc, calls = s->tune_calls > 0 ? s->tune_calls : 3;

	s->best = -1;
	for (i = 0; i < s->nres; i++) {
		s->algo_us[i] = -1;
		st = gemm_call(s, &s->res[i].algo);
		if (st != CUBLAS_STATUS_SUCCESS) {
			last = st;
			continue;
		}
		if (!s->nogate && (rc = mtc_gate_hold(&s->tm.gate, s->tm.st, err)))
			return rc;
		e = cudaEventRecord(s->tm.e0, s->tm.st);
		for (r = 0; r < calls && e == cudaSuccess && st == CUBLAS_STATUS_SUCCESS; r++)
			st = gemm_call(s, &s->res[i].algo);
		if (e == cudaSuccess)
			e = cudaEventRecord(s->tm.e1, s->tm.st);
		if (!s->nogate)
			mtc_gate_release(&s->tm.gate);
		if (e == cudaSuccess)
			e = cudaEventSynchronize(s->tm.e1);
		if (e != cudaSuccess)
			return mtc_cuda_fail(err, "timing cuBLASLt algorithms", e);
		if (st != CUBLAS_STATUS_SUCCESS) {
			last = st;
			continue;
		}
		if (!s->nogate && mtc_gate_timed_out(&s->tm.gate))
			return mtc_fail(err, MT_EINVAL, "timing cuBLASLt algorithms: the spin gate "
					"timed out before %d calls were queued", calls);
		e = cudaEventElapsedTime(&ms, s->tm.e0, s->tm.e1);
		if (e != cudaSuccess)
			return mtc_cuda_fail(err, "cudaEventElapsedTime", e);
		s->algo_us[i] = ms * 1000.0f / calls;
		if (best_ms < 0 || ms < best_ms) {
			best_ms = ms;
			s->best = i;
		}
	}
	if (s->best < 0) {
		rc = lt_fail(err, "cublasLtMatmul (every heuristic algorithm)", last);
		return rc;
	}
	*best_s = best_ms / calls / 1e3;
	return MT_OK;
}

/* A gated trial, with the heuristic's first algorithm loaded outside the
 * gate: should the library ever wait for the stream inside a call, the gate
 * would hold it until its timeout; time without it then (s->nogate: the
 * autotuning and every sample). */
static int gate_trial(struct gemm_state *s, struct mt_error *err)
{
	cublasStatus_t st;
	double t0, queued;
	cudaError_t e;
	float ms;
	int rc;

	gemm_call(s, &s->res[0].algo);
	if ((e = cudaStreamSynchronize(s->tm.st)) != cudaSuccess)
		return mtc_cuda_fail(err, "cudaStreamSynchronize", e);
	if ((rc = mtc_gate_hold(&s->tm.gate, s->tm.st, err)))
		return rc;
	t0 = mtc_now();
	e = cudaEventRecord(s->tm.e0, s->tm.st);
	st = gemm_call(s, &s->res[0].algo);
	if (st == CUBLAS_STATUS_SUCCESS)
		st = gemm_call(s, &s->res[0].algo);
	if (e == cudaSuccess)
		e = cudaEventRecord(s->tm.e1, s->tm.st);
	queued = mtc_now() - t0;
	mtc_gate_release(&s->tm.gate);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s->tm.st);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "the gated trial", e);
	s->nogate = mtc_gate_timed_out(&s->tm.gate) || queued > 1.0;
	s->tune_calls = 3;
	if (st == CUBLAS_STATUS_SUCCESS && !s->nogate &&
	    cudaEventElapsedTime(&ms, s->tm.e0, s->tm.e1) == cudaSuccess && ms > 0) {
		double n = ceil(GEMM_TUNE_S / (ms * 1e-3 / 2));

		s->tune_calls = n > GEMM_TUNE_CALLS ? GEMM_TUNE_CALLS : n < 3 ? 3 : (int)n;
	} else if (st != CUBLAS_STATUS_SUCCESS) {
		s->tune_calls = GEMM_TUNE_CALLS;   /* unknown: the most */
	}
	return MT_OK;
}

static int gemm_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		      struct mt_error *err)
{
	struct gemm_state *s;
	cudaDataType_t ab, cd;
	cublasComputeType_t comp = CUBLAS_COMPUTE_32F;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	size_t ws = GEMM_WORKSPACE, esz_ab, esz_cd;
	float host_scales[GEMM_SCALE_STRIDE + 1] = { 0.5f };
	double best_s = 0;
	int rc = MT_OK, kind_ab, major = 0, minor = 0;
	int8_t fast = 1;

	*state = NULL;
	if (c->dtype < 0 || c->dtype >= DT_N)
		return mtc_fail(err, MT_EINVAL, "gemm case %s: unknown dtype %d", c->label, c->dtype);
	if (c->m <= 0 || c->n <= 0 || c->k <= 0)
		return mtc_fail(err, MT_EINVAL, "gemm case %s: m, n, k must be positive (%lld %lld %lld)",
				c->label, c->m, c->n, c->k);
	rc = mtc_device_check(ctx->device, err);
	if (rc)
		return rc;
	s = (struct gemm_state *)calloc(1, sizeof(*s));
	if (!s)
		return mtc_fail(err, MT_ENOMEM, "gemm: out of memory");
	mtc_nvtx_push("gemm", c->label);
	s->dev = ctx->device;
	s->dtype = c->dtype;
	s->m = c->m;
	s->n = c->n;
	s->k = c->k;
	s->alpha = 1.0f;
	s->beta = 0.0f;
	s->best = -1;
	s->verify_worst = -1;

	switch (c->dtype) {
	case DT_BF16:
		ab = cd = CUDA_R_16BF;
		kind_ab = MTC_BF16;
		break;
	case DT_FP16:
		ab = cd = CUDA_R_16F;
		kind_ab = MTC_F16;
		break;
	case DT_FP8:
		ab = CUDA_R_8F_E4M3;
		cd = CUDA_R_16BF;
		kind_ab = MTC_E4M3;
		s->fast_accum = 1;
		break;
	case DT_TF32:
		ab = cd = CUDA_R_32F;
		kind_ab = MTC_F32;
		comp = CUBLAS_COMPUTE_32F_FAST_TF32;
		break;
	default:
		ab = cd = CUDA_R_32F;
		kind_ab = MTC_F32;
		break;
	}
	esz_ab = mtc_elt_size(kind_ab);
	esz_cd = cd == CUDA_R_32F ? 4 : 2;

	rc = mtc_timer_init(&s->tm, 1, err);
	if (rc)
		goto fail;
	MTC_CK(cudaMalloc(&s->a, (size_t)s->m * (size_t)s->k * esz_ab));
	MTC_CK(cudaMalloc(&s->b, (size_t)s->k * (size_t)s->n * esz_ab));
	MTC_CK(cudaMalloc(&s->d, (size_t)s->m * (size_t)s->n * esz_cd));
	MTC_CK(cudaMalloc(&s->ws, ws));
	host_scales[GEMM_SCALE_STRIDE] = 0.25f;
	MTC_CK(cudaMalloc((void **)&s->scales, sizeof(host_scales)));
	MTC_CK(cudaMalloc((void **)&s->vdev, 3 * GEMM_SAMPLES * sizeof(float)));
	MTC_CK(cudaMemcpyAsync(s->scales, host_scales, sizeof(host_scales), cudaMemcpyHostToDevice, s->tm.st));
	rc = mtc_fill(s->a, (size_t)s->m * (size_t)s->k, kind_ab, 0x6a + (uint64_t)c->dtype, 1.0f, s->tm.st, err);
	if (!rc)
		rc = mtc_fill(s->b, (size_t)s->k * (size_t)s->n, kind_ab, 0x6b + (uint64_t)c->dtype, 1.0f, s->tm.st, err);
	if (rc)
		goto fail;
	MTC_CK(cudaMemsetAsync(s->d, 0, (size_t)s->m * (size_t)s->n * esz_cd, s->tm.st));

	LT_CK(cublasLtCreate, &s->lt);
	LT_CK(cublasLtMatmulDescCreate, &s->op, comp, CUDA_R_32F);
	LT_CK(cublasLtMatmulDescSetAttribute, s->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
	LT_CK(cublasLtMatmulDescSetAttribute, s->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb));
	if (c->dtype == DT_FP8) {
		const float *sa = s->scales, *sb = s->scales + GEMM_SCALE_STRIDE;

		LT_CK(cublasLtMatmulDescSetAttribute, s->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
		      &sa, sizeof(sa));
		LT_CK(cublasLtMatmulDescSetAttribute, s->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
		      &sb, sizeof(sb));
		LT_CK(cublasLtMatmulDescSetAttribute, s->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
		      sizeof(fast));
	}
	LT_CK(cublasLtMatrixLayoutCreate, &s->la, ab, (uint64_t)s->k, (uint64_t)s->m, s->k);
	LT_CK(cublasLtMatrixLayoutCreate, &s->lb, ab, (uint64_t)s->k, (uint64_t)s->n, s->k);
	LT_CK(cublasLtMatrixLayoutCreate, &s->lc, cd, (uint64_t)s->m, (uint64_t)s->n, s->m);
	LT_CK(cublasLtMatrixLayoutCreate, &s->ld, cd, (uint64_t)s->m, (uint64_t)s->n, s->m);
	LT_CK(cublasLtMatmulPreferenceCreate, &s->pref);
	LT_CK(cublasLtMatmulPreferenceSetAttribute, s->pref,
	      CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
	LT_CK(cublasLtMatmulAlgoGetHeuristic, s->lt, s->op, s->la, s->lb, s->lc, s->ld, s->pref,
	      GEMM_MAX_ALGOS, s->res, &s->nres);
	if (s->nres <= 0) {
		cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, s->dev);
		cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, s->dev);
		rc = mtc_fail(err, MT_EUNSUPPORTED,
			      "cuBLASLt has no algorithm for a %s TN GEMM m=%lld n=%lld k=%lld on this GPU "
			      "(sm_%d%d)%s", dt_names[c->dtype], s->m, s->n, s->k, major, minor,
			      c->dtype == DT_FP8 ? "; fp8 needs sm_89 or newer and m, n, k multiples of 16" : "");
		goto fail;
	}
	rc = gate_trial(s, err);
	if (!rc)
		rc = gemm_autotune(s, &best_s, err);
	if (rc == MT_EUNSUPPORTED && c->dtype == DT_FP8) {
		/* On the first H100 run (cuBLASLt 13.1, driver 580) every heuristic
		 * FP8 algorithm answered NOT_SUPPORTED with C aliasing D, with no
		 * reason logged: once more with a C of its own before giving up */
		char first[sizeof(err->msg)], again[sizeof(err->msg)];

		snprintf(first, sizeof(first), "%s", err->msg);
		MTC_CK(cudaMalloc(&s->c, (size_t)s->m * (size_t)s->n * esz_cd));
		MTC_CK(cudaMemsetAsync(s->c, 0, (size_t)s->m * (size_t)s->n * esz_cd, s->tm.st));
		rc = gemm_autotune(s, &best_s, err);
		if (rc) {
			snprintf(again, sizeof(again), "%s", err->msg);
			mtc_fail(err, rc, "%s; again with C apart from D: %s", first, again);
		}
	}
	if (rc)
		goto fail;
	c->inner = mtc_pick_inner(c->inner, best_s, GEMM_TARGET_S, MTC_GATED_MAX_OPS);
	mtc_nvtx_pop();
	*state = s;
	return MT_OK;
fail:
	mtc_nvtx_pop();
	gemm_teardown(s);
	return rc;
}

static int gemm_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct gemm_state *s = (struct gemm_state *)state;
	cublasStatus_t st = CUBLAS_STATUS_SUCCESS;
	cudaError_t e;
	int i, rc = MT_OK, inner = c->inner > 0 ? c->inner : 1;

	*seconds = 0;
	if (inner > MTC_GATED_MAX_OPS)
		return mtc_fail(err, MT_EINVAL, "gemm %s: inner %d exceeds %d operations per gated sample",
				c->label, inner, MTC_GATED_MAX_OPS);
	mtc_nvtx_push("gemm", c->label);
	if (!s->nogate)
		rc = mtc_gate_hold(&s->tm.gate, s->tm.st, err);
	if (rc)
		goto out;
	e = cudaEventRecord(s->tm.e0, s->tm.st);
	for (i = 0; i < inner && e == cudaSuccess && st == CUBLAS_STATUS_SUCCESS; i++)
		st = gemm_call(s, &s->res[s->best].algo);
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
		rc = mtc_cuda_fail(err, "cudaEventSynchronize (gemm sample)", e);
		goto out;
	}
	if (st != CUBLAS_STATUS_SUCCESS) {
		rc = lt_fail(err, "cublasLtMatmul", st);
		goto out;
	}
	rc = mtc_gate_elapsed(&s->tm.gate, !s->nogate, s->tm.e0, s->tm.e1, "gemm", c->label, inner,
			      seconds, err);
out:
	mtc_nvtx_pop();
	return rc;
}

static int gemm_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct gemm_state *s = (struct gemm_state *)state;
	float out[3 * GEMM_SAMPLES];
	double rel, acc, scale = s->dtype == DT_FP8 ? 0.5 * 0.25 : 1.0, worst = 0, ratio;
	int i, bad = 0, first = -1;
	uint64_t seed = 0x5eed + (uint64_t)s->m * 31 + (uint64_t)s->n;
	cudaError_t e;

	switch (s->dtype) {
	case DT_BF16:
		rel = 1.0 / 128;
		acc = 1.0 / 4096;
		gemm_ref_kernel<<<GEMM_SAMPLES, 32, 0, s->tm.st>>>((const __nv_bfloat16 *)s->a,
			(const __nv_bfloat16 *)s->b, (const __nv_bfloat16 *)s->d, s->m, s->n, s->k, scale,
			seed, s->vdev);
		break;
	case DT_FP16:
		rel = 1.0 / 1024;
		acc = 1.0 / 4096;
		gemm_ref_kernel<<<GEMM_SAMPLES, 32, 0, s->tm.st>>>((const __half *)s->a, (const __half *)s->b,
			(const __half *)s->d, s->m, s->n, s->k, scale, seed, s->vdev);
		break;
	case DT_FP8:
		rel = 1.0 / 128;
		acc = 1.0 / 512;
		gemm_ref_kernel<<<GEMM_SAMPLES, 32, 0, s->tm.st>>>((const __nv_fp8_e4m3 *)s->a,
			(const __nv_fp8_e4m3 *)s->b, (const __nv_bfloat16 *)s->d, s->m, s->n, s->k, scale,
			seed, s->vdev);
		break;
	case DT_TF32:
		rel = 1e-6;
		acc = 1.0 / 512;
		gemm_ref_kernel<<<GEMM_SAMPLES, 32, 0, s->tm.st>>>((const float *)s->a, (const float *)s->b,
			(const float *)s->d, s->m, s->n, s->k, scale, seed, s->vdev);
		break;
	default:
		rel = 1e-5;
		acc = 1.0 / 65536;
		gemm_ref_kernel<<<GEMM_SAMPLES, 32, 0, s->tm.st>>>((const float *)s->a, (const float *)s->b,
			(const float *)s->d, s->m, s->n, s->k, scale, seed, s->vdev);
		break;
	}
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "gemm reference kernel launch", e);
	e = cudaMemcpyAsync(out, s->vdev, sizeof(out), cudaMemcpyDeviceToHost, s->tm.st);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s->tm.st);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "gemm verification", e);
	for (i = 0; i < GEMM_SAMPLES; i++) {
		double ref = out[3 * i], mag = out[3 * i + 1], got = out[3 * i + 2];
		double tol = rel * fabs(ref) + acc * mag + 1e-6;

		ratio = fabs(got - ref) / tol;
		if (!isfinite(ratio))   /* NaN or Inf in D: wrong, and JSON-safe */
			ratio = 1e9;
		if (ratio > 1.0) {
			bad++;
			if (first < 0)
				first = i;
		}
		if (ratio > worst)
			worst = ratio;
	}
	s->verify_worst = worst;
	s->verify_bad = bad;
	if (bad)
		return mtc_fail(err, MT_EINVAL,
				"gemm %s: %d of %d sampled elements of D are wrong (first: got %g, expected %g "
				"within %g)", c->label, bad, GEMM_SAMPLES, (double)out[3 * first + 2],
				(double)out[3 * first],
				rel * fabs(out[3 * first]) + acc * out[3 * first + 1] + 1e-6);
	return MT_OK;
}

/* Most useful first: a short buffer keeps the leading members. */
static void gemm_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct gemm_state *s = (struct gemm_state *)state;
	const cublasLtMatmulAlgo_t *algo;
	int id = -1, splitk = 1;
	uint32_t tile = 0, stages = 0;
	size_t pos = 0, w;

	(void)c;
	if (!n)
		return;
	buf[0] = 0;
	if (!s || s->best < 0)
		return;
	algo = &s->res[s->best].algo;
	mtc_dl.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id),
						    &w);
	mtc_dl.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile,
						    sizeof(tile), &w);
	mtc_dl.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
						    sizeof(stages), &w);
	mtc_dl.cublasLtMatmulAlgoConfigGetAttribute(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
						    sizeof(splitk), &w);
	mtc_member(buf, n, &pos, "\"algo_index\": %d", s->best);
	mtc_member(buf, n, &pos, "\"algos_tried\": %d", s->nres);
	mtc_member(buf, n, &pos, "\"workspace_bytes\": %u", GEMM_WORKSPACE);
	mtc_member(buf, n, &pos, "\"fast_accum\": %s", s->fast_accum ? "true" : "false");
	if (s->nogate)
		mtc_member(buf, n, &pos, "\"gated\": false");
	if (s->verify_worst >= 0)
		mtc_member(buf, n, &pos, "\"verify_worst\": %.3g", s->verify_worst);
	mtc_member(buf, n, &pos, "\"algo_id\": %d", id);
	mtc_member(buf, n, &pos, "\"tile_id\": %u", (unsigned)tile);
	mtc_member(buf, n, &pos, "\"stages_id\": %u", (unsigned)stages);
	mtc_member(buf, n, &pos, "\"splitk\": %d", splitk);
	mtc_member(buf, n, &pos, "\"algo_workspace_bytes\": %zu", s->res[s->best].workspaceSize);
	mtc_member(buf, n, &pos, "\"compute\": \"%s\"", s->dtype == DT_TF32 ? "32F_FAST_TF32" : "32F");
}

extern "C" const struct mt_probe_ops mtc_gemm_ops = {
	gemm_applicable,
	NULL,          /* open */
	NULL,          /* close */
	NULL,          /* plan: in C, probes/gemm.c */
	gemm_setup,
	gemm_run,
	gemm_verify,
	gemm_teardown,
	gemm_extra,
};
