/* SPDX-License-Identifier: MIT */
/* ref-gemm: the plainest cuBLASLt BF16 GEMM timing loop, to hold the gemm
 * probe against on a GPU (tests/gpu/probes.sh): same layout as the probe
 * (column-major "TN": A stored k x m and transposed, B stored k x n, D m x n,
 * bf16 data, fp32 compute, beta 0, 32 MiB workspace), random inputs, the
 * heuristic's first algorithm, 20 warm-up calls, 100 timed calls between two
 * events on one stream, no spin gate.
 *
 *   ref-gemm M N K      prints "ref-gemm m=M n=N k=K tflops=T"
 * Exit 0, 1 on a CUDA or cuBLASLt error, 2 on bad usage, 77 without a GPU.
 */
#include <stdio.h>
#include <stdlib.h>

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CK(call)                                                                      \
	do {                                                                          \
		cudaError_t e_ = (call);                                              \
		if (e_ != cudaSuccess) {                                              \
			fprintf(stderr, "ref-gemm: %s: %s\n", #call, cudaGetErrorString(e_)); \
			return 1;                                                     \
		}                                                                     \
	} while (0)
#define LT(call)                                                                      \
	do {                                                                          \
		cublasStatus_t s_ = (call);                                           \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                    \
			fprintf(stderr, "ref-gemm: %s: %s\n", #call, cublasLtGetStatusString(s_)); \
			return 1;                                                     \
		}                                                                     \
	} while (0)

__global__ void fill(__nv_bfloat16 *p, size_t n, unsigned long long seed)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += step) {
		unsigned long long x = (seed + i) * 0x9e3779b97f4a7c15ull;

		x ^= x >> 29;
		p[i] = __float2bfloat16((float)(x >> 40) / 8388608.0f - 1.0f);
	}
}

int main(int argc, char **argv)
{
	long long m, n, k;
	int count = 0, nres = 0, i;
	void *a, *b, *d, *ws;
	size_t wsz = 32u << 20;
	float alpha = 1, beta = 0, ms = 0;
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t res;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	cudaStream_t st;
	cudaEvent_t e0, e1;

	if (argc != 4 || (m = atoll(argv[1])) <= 0 || (n = atoll(argv[2])) <= 0 || (k = atoll(argv[3])) <= 0) {
		fprintf(stderr, "usage: ref-gemm M N K\n");
		return 2;
	}
	if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
		printf("ref-gemm: no usable GPU\n");
		return 77;
	}
	CK(cudaStreamCreate(&st));
	CK(cudaEventCreate(&e0));
	CK(cudaEventCreate(&e1));
	CK(cudaMalloc(&a, (size_t)m * k * 2));
	CK(cudaMalloc(&b, (size_t)k * n * 2));
	CK(cudaMalloc(&d, (size_t)m * n * 2));
	CK(cudaMalloc(&ws, wsz));
	fill<<<1024, 256, 0, st>>>((__nv_bfloat16 *)a, (size_t)m * k, 1);
	fill<<<1024, 256, 0, st>>>((__nv_bfloat16 *)b, (size_t)k * n, 2);
	CK(cudaGetLastError());

	LT(cublasLtCreate(&lt));
	LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
	LT(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
	LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, k, m, k));
	LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
	LT(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
	LT(cublasLtMatmulPreferenceCreate(&pref));
	LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsz, sizeof(wsz)));
	LT(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &res, &nres));
	if (nres < 1) {
		fprintf(stderr, "ref-gemm: no cuBLASLt algorithm\n");
		return 1;
	}
	for (i = 0; i < 20; i++)
		LT(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &res.algo, ws, wsz, st));
	CK(cudaEventRecord(e0, st));
	for (i = 0; i < 100; i++)
		LT(cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &res.algo, ws, wsz, st));
	CK(cudaEventRecord(e1, st));
	CK(cudaEventSynchronize(e1));
	CK(cudaEventElapsedTime(&ms, e0, e1));
	printf("ref-gemm m=%lld n=%lld k=%lld tflops=%.2f\n", m, n, k,
	       2.0 * m * n * k * 100 / (ms / 1e3) / 1e12);
	return 0;
}
