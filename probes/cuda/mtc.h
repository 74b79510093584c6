/* SPDX-License-Identifier: MIT */
/* mtc: what the CUDA backends (build/libmegatune_cuda.so) share inside the
 * library.  Nothing here is exported: the library is built with
 * -fvisibility=hidden and only mt_cuda_api() (common.cu) is visible.
 *
 * Included by the C files (topology.c, util.c, compiled by gcc) and by the
 * .cu files (compiled by nvcc as C++); the declarations are extern "C" so
 * both halves link.  The device helpers at the end exist only under nvcc.
 *
 * Errors: every function that can fail fills `struct mt_error` itself (code
 * and one line of text naming the failing call and its error string) and
 * returns the negative status; nothing prints, nothing exits.  Status use:
 *   MT_EUNSUPPORTED  no driver, no GPU, a library or GPU without the feature
 *   MT_ENOMEM        a device or host allocation failed
 *   MT_EINVAL        any other CUDA, cuBLASLt, cuDNN or NCCL failure, a
 *                    verification that could not run, a watchdog timeout
 */
#ifndef MT_CUDA_MTC_H
#define MT_CUDA_MTC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "../probe.h"
#include "../gpu.h"

/* ------------------------------------------------------------ errors */

/* Fill err (when not NULL) with `code` and the formatted text; returns code. */
int mtc_fail(struct mt_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* CLOCK_MONOTONIC in seconds. */
double mtc_now(void);

/* Copy a string, truncated to n - 1 bytes, always terminated. */
void mtc_copy(char *dst, size_t n, const char *src);

/* mtc_copy() that also makes the text safe inside a JSON string: quotes
 * become apostrophes, backslashes slashes, control characters spaces. */
void mtc_copy_json(char *dst, size_t n, const char *src);

/* Append printf-style text to buf (size n) at *pos; never overflows and
 * keeps *pos <= n - 1. */
void mtc_cat(char *buf, size_t n, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Add one JSON member ("\"key\": value", formatted) to buf for extra():
 * with ", " before it when buf is not empty, and only when the whole member
 * fits, so that a short buffer drops members but stays valid JSON.  buf must
 * start as "" with *pos == 0. */
void mtc_member(char *buf, size_t n, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------ device check */

/* The first CUDA call of every entry point: cudaGetDeviceCount, its failure
 * mapped to a reason (no driver, a driver older than
 * the runtime, the toolkit's link-only libcuda, no visible device).  MT_OK and *count >= 1,
 * or MT_EUNSUPPORTED with the reason.  `count` may be NULL. */
int mtc_gpu_check(int *count, struct mt_error *err);

/* mtc_gpu_check() plus: `device` exists and this library's kernels load on
 * it (a GPU older than the build's sm_90 answers MT_EUNSUPPORTED). */
int mtc_device_check(int device, struct mt_error *err);

/* nccl_id() of the api table: ncclGetUniqueId into 128 bytes (common.cu). */
int mtc_nccl_id(unsigned char id[128], struct mt_error *err);

/* ------------------------------------------------------------ NVML (topology.c) */

/* NVML loaded once with dlopen("libnvidia-ml.so.1") and initialised; MT_OK,
 * or MT_EUNSUPPORTED with why NVML is not usable in `why` (never fatal: the
 * callers fall back to CUDA and sysfs). */
int mtc_nvml_ready(char *why, size_t n);

/* The CPUs local to CUDA device `dev` (its NUMA node): NVML's CPU affinity
 * when NVML is there, else /sys/bus/pci/devices/<busid>/local_cpulist.
 * Fills `mask` (bit i = CPU i, `nwords` 64-bit words) and `*node` (-1
 * unknown).  MT_OK, or MT_EUNSUPPORTED with the reason in `why`. */
int mtc_gpu_cpus(int dev, uint64_t *mask, int nwords, int *node, char *why, size_t n);

/* topology() of the api table (topology.c). */
int mtc_topology(struct mt_topo *t, struct mt_error *err);

/* The probe tables: `extern "C" const struct mt_probe_ops mtc_<name>_ops` in
 * each <name>.cu, listed by one line in common.cu (MTC_PROBES). */

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------ CUDA side */
#ifdef __CUDACC__
#include <cuda_runtime.h>

/* Status for a failed runtime call: MT_ENOMEM, MT_EUNSUPPORTED or MT_EINVAL. */
int mtc_cuda_status(cudaError_t e);
/* Fill err with "<call>: <cudaErrorName> (<string>)"; returns the status. */
int mtc_cuda_fail(struct mt_error *err, const char *call, cudaError_t e);

/* Inside a function with `int rc` and a `fail:` label. */
#define MTC_CK(call)                                                  \
	do {                                                          \
		cudaError_t e_ = (call);                              \
		if (e_ != cudaSuccess) {                              \
			rc = mtc_cuda_fail(err, #call, e_);           \
			goto fail;                                    \
		}                                                     \
	} while (0)

/* Element kinds of the fill kernels. */
enum mtc_elt { MTC_F32, MTC_BF16, MTC_F16, MTC_E4M3 };

size_t mtc_elt_size(int kind);

/* Fill `n` elements at device pointer p with uniform values in
 * [-scale, scale) from a hash of (seed, index): random-looking, never zero
 * filled, reproducible.  Enqueued on `s`. */
int mtc_fill(void *p, size_t n, int kind, uint64_t seed, float scale, cudaStream_t s,
	     struct mt_error *err);

/* The spin gate (nvbandwidth's method): a one-thread kernel holds a stream
 * until the host releases a host-mapped flag, so that the start event and all
 * the operations of a sample are queued before the GPU starts them.  The
 * kernel gives up after MTC_GATE_TIMEOUT_NS (it then sets `timed_out`), so a
 * host that cannot finish queueing never deadlocks the device; a sample whose
 * gate timed out is reported as an error. */
#define MTC_GATE_TIMEOUT_NS 10000000000ull
struct mtc_gate {
	volatile int *host;   /* [0] release flag, [1] timed out; cudaHostAlloc mapped */
	int *dev;             /* the same memory seen from the device */
};
int mtc_gate_init(struct mtc_gate *g, struct mt_error *err);
/* Lower the flag and queue the spin kernel on `s`. */
int mtc_gate_hold(struct mtc_gate *g, cudaStream_t s, struct mt_error *err);
void mtc_gate_release(struct mtc_gate *g);
int mtc_gate_timed_out(const struct mtc_gate *g);
/* The end of a gated sample: an error when the gate timed out before the
 * `inner` operations were queued (only when `gated`), else the time between
 * e0 and e1 in *seconds.  `what` and `label` name the case in the message. */
int mtc_gate_elapsed(const struct mtc_gate *g, int gated, cudaEvent_t e0, cudaEvent_t e1,
		     const char *what, const char *label, int inner, double *seconds,
		     struct mt_error *err);
void mtc_gate_free(struct mtc_gate *g);

/* What a timed case holds: a non-blocking stream, the start and stop events
 * and (when `gate`) a spin gate.  mtc_timer_init() creates them in that order
 * (on failure the ones made are kept for mtc_timer_free()); mtc_timer_sync() waits for
 * the stream's work (teardown starts with it, before freeing the buffers the
 * work uses); mtc_timer_free() destroys what was made.  Zeroed = nothing made. */
struct mtc_timer {
	cudaStream_t st;
	cudaEvent_t e0, e1;
	int have_st, have_e0, have_e1;
	struct mtc_gate gate;
};
int mtc_timer_init(struct mtc_timer *t, int gate, struct mt_error *err);
void mtc_timer_sync(const struct mtc_timer *t);
void mtc_timer_free(struct mtc_timer *t);

/* NVTX ranges "<probe>:<label>" (header-only nvtx3). */
void mtc_nvtx_push(const char *probe, const char *label);
void mtc_nvtx_pop(void);

/* Operations queued behind a gate are capped: the driver's launch queue holds
 * about a thousand launches per stream, and a library call may launch a few
 * kernels; beyond that the host would block while the gate holds the GPU. */
#define MTC_GATED_MAX_OPS 256

/* Pick `inner` so that one sample lasts about `target_s`: at least the
 * planner's value, at most `cap`. */
int mtc_pick_inner(int planned, double op_seconds, double target_s, int cap);

/* ---- device helpers */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

__device__ __forceinline__ uint64_t mtc_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Uniform in [-1, 1) from (seed, i). */
__device__ __forceinline__ float mtc_uniform(uint64_t seed, uint64_t i)
{
	uint64_t h = mtc_mix64(seed * 0x100000001b3ull ^ mtc_mix64(i));
	return (float)(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

__device__ __forceinline__ float mtc_ld(const float *p, size_t i) { return p[i]; }
__device__ __forceinline__ float mtc_ld(const __nv_bfloat16 *p, size_t i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float mtc_ld(const __half *p, size_t i) { return __half2float(p[i]); }
__device__ __forceinline__ float mtc_ld(const __nv_fp8_e4m3 *p, size_t i) { return (float)p[i]; }

/* Sum over a warp (all 32 lanes active). */
__device__ __forceinline__ float mtc_warp_sum(float v)
{
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}
#endif /* __CUDACC__ */

#endif
