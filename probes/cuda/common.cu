/* SPDX-License-Identifier: MIT */
/* common: the exported table (mt_cuda_api), env(), nccl_id(), the device
 * check, the fill kernels, the spin gate and the NVTX ranges (mtc.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

#include "dl.h"

/* ------------------------------------------------------------ errors */

int mtc_cuda_status(cudaError_t e)
{
	switch (e) {
	case cudaErrorMemoryAllocation:
		return MT_ENOMEM;
	case cudaErrorInsufficientDriver:
	case cudaErrorNoDevice:
	case cudaErrorStubLibrary:
	case cudaErrorNoKernelImageForDevice:
	case cudaErrorUnsupportedPtxVersion:
	case cudaErrorSystemDriverMismatch:
	case cudaErrorCompatNotSupportedOnDevice:
		return MT_EUNSUPPORTED;
	default:
		return MT_EINVAL;
	}
}

int mtc_cuda_fail(struct mt_error *err, const char *call, cudaError_t e)
{
	return mtc_fail(err, mtc_cuda_status(e), "%s: %s (%s)", call, cudaGetErrorName(e),
			cudaGetErrorString(e));
}

/* ------------------------------------------------------------ device check */

int mtc_gpu_check(int *count, struct mt_error *err)
{
	int n = 0, drv = 0, rt = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	const char *vis = getenv("CUDA_VISIBLE_DEVICES");

	if (e == cudaSuccess && n > 0) {
		if (count)
			*count = n;
		return MT_OK;
	}
	if (count)
		*count = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	switch (e) {
	case cudaSuccess:
	case cudaErrorNoDevice:
		return mtc_fail(err, MT_EUNSUPPORTED,
				"no GPU visible to CUDA (cudaGetDeviceCount: %s; CUDA_VISIBLE_DEVICES=%s)",
				e == cudaSuccess ? "0 devices" : "cudaErrorNoDevice",
				vis ? vis : "(unset)");
	case cudaErrorInsufficientDriver:
		if (drv == 0)
			return mtc_fail(err, MT_EUNSUPPORTED,
					"no NVIDIA driver (libcuda.so.1) found: cudaGetDeviceCount returned "
					"cudaErrorInsufficientDriver (%s)", cudaGetErrorString(e));
		return mtc_fail(err, MT_EUNSUPPORTED,
				"the NVIDIA driver supports CUDA %d.%d, older than the CUDA %d.%d runtime "
				"of this library; an R580 or newer driver is needed "
				"(cudaGetDeviceCount: cudaErrorInsufficientDriver)",
				drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10);
	case cudaErrorStubLibrary:
		return mtc_fail(err, MT_EUNSUPPORTED,
				"the CUDA driver loaded is the toolkit's link-only libcuda.so "
				"(cudaErrorStubLibrary); remove the toolkit's lib64/stubs folder from "
				"LD_LIBRARY_PATH or install the NVIDIA driver");
	case cudaErrorSystemDriverMismatch:
		return mtc_fail(err, MT_EUNSUPPORTED,
				"the NVIDIA kernel module and the user-mode driver differ in version "
				"(cudaErrorSystemDriverMismatch); reload the module or reboot");
	case cudaErrorSystemNotReady:
		return mtc_fail(err, MT_EUNSUPPORTED,
				"the GPU system is not ready (cudaErrorSystemNotReady): on NVSwitch "
				"systems the fabric manager must be running");
	default:
		return mtc_fail(err, MT_EUNSUPPORTED, "no usable GPU: cudaGetDeviceCount: %s (%s)",
				cudaGetErrorName(e), cudaGetErrorString(e));
	}
}

template <typename T> __global__ void mtc_fill_kernel(T *p, size_t n, uint64_t seed, float scale);
__global__ void mtc_spin_kernel(volatile int *flag, unsigned long long timeout_ns);

int mtc_device_check(int device, struct mt_error *err)
{
	int n = 0, rc, major = 0, minor = 0;
	cudaError_t e;
	struct cudaFuncAttributes fa;

	rc = mtc_gpu_check(&n, err);
	if (rc)
		return rc;
	if (device < 0 || device >= n)
		return mtc_fail(err, MT_EUNSUPPORTED,
				"CUDA device %d does not exist (%d visible; check the local rank and "
				"CUDA_VISIBLE_DEVICES)", device, n);
	e = cudaSetDevice(device);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "cudaSetDevice", e);
	e = cudaFuncGetAttributes(&fa, mtc_fill_kernel<float>);
	if (e != cudaSuccess) {
		cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
		cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
		if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorUnsupportedPtxVersion ||
		    e == cudaErrorInvalidDeviceFunction)
			return mtc_fail(err, MT_EUNSUPPORTED,
					"this library's kernels do not load on GPU %d (sm_%d%d): it was "
					"built for sm_90 and compute_90 PTX (%s)", device, major, minor,
					cudaGetErrorName(e));
		return mtc_cuda_fail(err, "cudaFuncGetAttributes", e);
	}
	/* load the spin kernel now: with lazy loading, loading it later while
	 * other kernels run could wait for them */
	e = cudaFuncGetAttributes(&fa, mtc_spin_kernel);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "cudaFuncGetAttributes(spin kernel)", e);
	return MT_OK;
}

/* ------------------------------------------------------------ fill */

__device__ __forceinline__ void mtc_st(float *p, size_t i, float v) { p[i] = v; }
__device__ __forceinline__ void mtc_st(__nv_bfloat16 *p, size_t i, float v) { p[i] = __float2bfloat16(v); }
__device__ __forceinline__ void mtc_st(__half *p, size_t i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void mtc_st(__nv_fp8_e4m3 *p, size_t i, float v) { p[i] = __nv_fp8_e4m3(v); }

template <typename T> __global__ void mtc_fill_kernel(T *p, size_t n, uint64_t seed, float scale)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t step = (size_t)gridDim.x * blockDim.x;

	for (; i < n; i += step)
		mtc_st(p, i, scale * mtc_uniform(seed, i));
}

size_t mtc_elt_size(int kind)
{
	switch (kind) {
	case MTC_F32:
		return 4;
	case MTC_BF16:
	case MTC_F16:
		return 2;
	default:
		return 1;
	}
}

int mtc_fill(void *p, size_t n, int kind, uint64_t seed, float scale, cudaStream_t s,
	     struct mt_error *err)
{
	unsigned blocks = (unsigned)((n + 255) / 256);
	cudaError_t e;

	if (!n)
		return MT_OK;
	if (blocks > 4096)
		blocks = 4096;
	switch (kind) {
	case MTC_F32:
		mtc_fill_kernel<<<blocks, 256, 0, s>>>((float *)p, n, seed, scale);
		break;
	case MTC_BF16:
		mtc_fill_kernel<<<blocks, 256, 0, s>>>((__nv_bfloat16 *)p, n, seed, scale);
		break;
	case MTC_F16:
		mtc_fill_kernel<<<blocks, 256, 0, s>>>((__half *)p, n, seed, scale);
		break;
	default:
		mtc_fill_kernel<<<blocks, 256, 0, s>>>((__nv_fp8_e4m3 *)p, n, seed, scale);
		break;
	}
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "fill kernel launch", e);
	return MT_OK;
}

/* ------------------------------------------------------------ spin gate */

__device__ __forceinline__ unsigned long long mtc_globaltimer(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

__global__ void mtc_spin_kernel(volatile int *flag, unsigned long long timeout_ns)
{
	unsigned long long t0 = mtc_globaltimer();

	while (flag[0] == 0) {
		if (mtc_globaltimer() - t0 > timeout_ns) {
			flag[1] = 1;
			__threadfence_system();
			return;
		}
		__nanosleep(200);
	}
}

int mtc_gate_init(struct mtc_gate *g, struct mt_error *err)
{
	void *h = NULL, *d = NULL;
	cudaError_t e;

	g->host = NULL;
	g->dev = NULL;
	e = cudaHostAlloc(&h, 64, cudaHostAllocMapped | cudaHostAllocPortable);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "cudaHostAlloc(gate flag, mapped)", e);
	e = cudaHostGetDevicePointer(&d, h, 0);
	if (e != cudaSuccess) {
		cudaFreeHost(h);
		return mtc_cuda_fail(err, "cudaHostGetDevicePointer(gate flag)", e);
	}
	memset(h, 0, 64);
	g->host = (volatile int *)h;
	g->dev = (int *)d;
	return MT_OK;
}

int mtc_gate_hold(struct mtc_gate *g, cudaStream_t s, struct mt_error *err)
{
	cudaError_t e;

	g->host[0] = 0;
	g->host[1] = 0;
	__sync_synchronize();
	mtc_spin_kernel<<<1, 1, 0, s>>>((volatile int *)g->dev, MTC_GATE_TIMEOUT_NS);
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "spin gate kernel launch", e);
	return MT_OK;
}

void mtc_gate_release(struct mtc_gate *g)
{
	if (g->host)
		__atomic_store_n((int *)g->host, 1, __ATOMIC_SEQ_CST);
}

int mtc_gate_timed_out(const struct mtc_gate *g)
{
	return g->host ? g->host[1] != 0 : 0;
}

int mtc_gate_elapsed(const struct mtc_gate *g, int gated, cudaEvent_t e0, cudaEvent_t e1,
		     const char *what, const char *label, int inner, double *seconds,
		     struct mt_error *err)
{
	cudaError_t e;
	float ms = 0;

	if (gated && mtc_gate_timed_out(g))
		return mtc_fail(err, MT_EINVAL, "%s %s: the spin gate timed out before %d operations "
				"were queued; the sample is not valid", what, label, inner);
	e = cudaEventElapsedTime(&ms, e0, e1);
	if (e != cudaSuccess)
		return mtc_cuda_fail(err, "cudaEventElapsedTime", e);
	*seconds = ms / 1e3;
	return MT_OK;
}

void mtc_gate_free(struct mtc_gate *g)
{
	if (g->host)
		cudaFreeHost((void *)g->host);
	g->host = NULL;
	g->dev = NULL;
}

int mtc_timer_init(struct mtc_timer *t, int gate, struct mt_error *err)
{
	cudaError_t e;

	if ((e = cudaStreamCreateWithFlags(&t->st, cudaStreamNonBlocking)) != cudaSuccess)
		return mtc_cuda_fail(err, "cudaStreamCreateWithFlags(&t->st, cudaStreamNonBlocking)", e);
	t->have_st = 1;
	if ((e = cudaEventCreate(&t->e0)) != cudaSuccess)
		return mtc_cuda_fail(err, "cudaEventCreate(&t->e0)", e);
	t->have_e0 = 1;
	if ((e = cudaEventCreate(&t->e1)) != cudaSuccess)
		return mtc_cuda_fail(err, "cudaEventCreate(&t->e1)", e);
	t->have_e1 = 1;
	return gate ? mtc_gate_init(&t->gate, err) : MT_OK;
}

void mtc_timer_sync(const struct mtc_timer *t)
{
	if (t->have_st)
		cudaStreamSynchronize(t->st);
}

void mtc_timer_free(struct mtc_timer *t)
{
	if (t->have_e0)
		cudaEventDestroy(t->e0);
	if (t->have_e1)
		cudaEventDestroy(t->e1);
	if (t->have_st)
		cudaStreamDestroy(t->st);
	t->have_st = t->have_e0 = t->have_e1 = 0;
	mtc_gate_free(&t->gate);
}

int mtc_pick_inner(int planned, double op_seconds, double target_s, int cap)
{
	double want;
	int inner = planned > 0 ? planned : 1;

	if (op_seconds > 0 && isfinite(op_seconds)) {
		want = ceil(target_s / op_seconds);
		if (want > cap)
			want = cap;
		if (want > inner)
			inner = (int)want;
	}
	if (inner > cap)
		inner = cap;
	return inner < 1 ? 1 : inner;
}

/* ------------------------------------------------------------ NVTX */

void mtc_nvtx_push(const char *probe, const char *label)
{
	char name[160];

	snprintf(name, sizeof(name), "%s:%s", probe, label ? label : "");
	nvtxRangePushA(name);
}

void mtc_nvtx_pop(void)
{
	nvtxRangePop();
}

/* ------------------------------------------------------------ the table */

static int env_fn(struct mt_cuda_env *env, struct mt_error *err)
{
	int n = 0, rc, i;

	memset(env, 0, sizeof(*env));
	/* cudaGetDeviceCount first: it is what reports a missing driver */
	rc = mtc_gpu_check(&n, err);
	cudaRuntimeGetVersion(&env->runtime_version);
	cudaDriverGetVersion(&env->driver_version);
	/* the CUDA stack's libraries: where each was found, or why not (never fatal here:
	 * a probe that needs one asks need()) */
	for (i = 0; i < MT_CUDA_NLIBS; i++)
		mtc_dl_info(i, &env->libs[i]);
	env->device_count = rc ? 0 : n;
	return rc;
}

int mtc_nccl_id(unsigned char id[128], struct mt_error *err)
{
	ncclUniqueId u;
	ncclResult_t r;
	int rc;

	if ((rc = mtc_dl_need(MT_LIB_NCCL, err)))
		return rc;
	memset(&u, 0, sizeof(u));
	r = mtc_dl.ncclGetUniqueId(&u);
	if (r != ncclSuccess)
		return mtc_fail(err, MT_EINVAL, "ncclGetUniqueId: %s (%s)",
				mtc_dl.ncclGetErrorString(r), mtc_dl.ncclGetLastError(NULL));
	memcpy(id, &u, sizeof(u) < 128 ? sizeof(u) : 128);
	return MT_OK;
}

/* The probes of the library, one line each: `mtc_<name>_ops`, defined in
 * <name>.cu as `extern "C" const struct mt_probe_ops`, found by the C side
 * under the registry's name (probes/gpu.h, mt_cuda_ops()), and the library of
 * the CUDA stack it needs (-1: none beyond the runtime). */
#define MTC_PROBES(X)              \
	X(gemm, MT_LIB_CUBLASLT)   \
	X(attention, MT_LIB_CUDNN) \
	X(collective, MT_LIB_NCCL) \
	X(offload, -1)             \
	X(launch, -1)

#define MTC_DECLARE(name, lib) extern "C" const struct mt_probe_ops mtc_##name##_ops;
#define MTC_ENTRY(name, lib) { #name, &mtc_##name##_ops },
#define MTC_NEEDS(name, lib) lib,
MTC_PROBES(MTC_DECLARE)

static const struct mt_cuda_probe probes[] = { MTC_PROBES(MTC_ENTRY) };
static const int probe_lib[] = { MTC_PROBES(MTC_NEEDS) };

static int need_fn(const char *name, struct mt_error *err)
{
	size_t i;

	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		if (!strcmp(probes[i].name, name))
			return probe_lib[i] < 0 ? MT_OK : mtc_dl_need(probe_lib[i], err);
	return mtc_fail(err, MT_EUNSUPPORTED, "the CUDA library has no %s probe", name);
}

static const struct mt_cuda_api the_api = {
	MT_CUDA_ABI,
	env_fn,
	mtc_topology,
	mtc_nccl_id,
	probes,
	(int)(sizeof(probes) / sizeof(probes[0])),
	need_fn,
};

extern "C" __attribute__((visibility("default"))) const struct mt_cuda_api *mt_cuda_api(void)
{
	return &the_api;
}
