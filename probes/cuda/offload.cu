/* SPDX-License-Identifier: MIT */
/* offload: host<->device copy bandwidth with the copy engines, nvbandwidth's
 * method (the CUDA backend of the offload probe).
 *
 * Case: dir (0 h2d, 1 d2h, 2 bidirectional), pinned (1 cudaHostAlloc, 0
 * malloc), numa_local (1 host memory on the GPU's NUMA node, 0 on another
 * node), under_load (1 while a kernel streams through HBM on every SM), bytes
 * per copy.
 *
 * Host memory is first touched (filled) after binding the thread to the CPUs
 * of the GPU's NUMA node (NVML CPU affinity, else sysfs local_cpulist), or
 * for numa_local 0 to the other CPUs of the machine, so that the pages land
 * where the case says; the thread stays bound until teardown (pageable copies
 * are staged by the calling thread).  extra() says whether binding happened.
 *
 * Method.  Pinned copies: the spin gate holds the stream(s), the start event
 * and `inner` cudaMemcpyAsync on a non-blocking stream are queued, the stop
 * event, then the gate is released: the time is the copy engines' alone.
 * Bidirectional: the measured direction (h2d) on one stream, the same number
 * of d2h copies on a second stream released by the same gate; only the
 * measured stream is timed, so moved/time is the per-direction rate under
 * opposite traffic (nvbandwidth's *_bidirectional_memcpy_ce).  Pageable
 * copies are staged by the driver through the calling thread and cannot be
 * queued behind a gate (the host would wait for the held stream): they are
 * timed with events without it.  Under load: the load kernel starts on a third
 * stream before the gate and stops after the sample.  setup() times one copy
 * and raises case->inner so that a sample lasts about 10 ms (at most
 * MTC_GATED_MAX_OPS copies).
 * verify(): a 64-bit checksum of every copied buffer on both sides (a kernel
 * on the device, a loop on the host), sampled every 16th word above 256 MiB.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtc.h"

#define OFF_TARGET_S 0.010
#define OFF_LOAD_BYTES (512u << 20)
#define OFF_LOAD_TIMEOUT_NS 120000000000ull
#define OFF_FULL_CHECK (256u << 20)

enum { D_H2D, D_D2H, D_BIDIR };

struct off_state {
	int dev, dir, pinned, numa_local, under_load;
	size_t bytes;
	void *h[2], *d[2];     /* [0] measured direction, [1] the opposite one (bidirectional) */
	struct mtc_timer tm;   /* the measured stream, the events, the gate */
	cudaStream_t st[3];    /* measured (tm.st), opposite, load */
	int have_st[3];        /* [1] and [2]; tm owns [0] */
	struct mtc_gate stop;
	float4 *load;
	size_t load_n;
	unsigned long long *sum;   /* device checksum */
	int bound, node, have_old;
	cpu_set_t old;
	char cpus[96], numa_note[96];
	int verified;
	int sm_count;
};

/* ------------------------------------------------------------ data */

__host__ __device__ __forceinline__ uint64_t off_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

__global__ void off_fill(uint64_t *p, size_t nw, uint64_t seed)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x, step = (size_t)gridDim.x * blockDim.x;

	for (; i < nw; i += step)
		p[i] = off_mix(seed + i);
}

__global__ void off_checksum(const uint64_t *p, size_t nw, size_t stride, unsigned long long *out)
{
	size_t i = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) * stride;
	size_t step = (size_t)gridDim.x * blockDim.x * stride;
	unsigned long long acc = 0;

	for (; i < nw; i += step)
		acc += off_mix(p[i] ^ (uint64_t)i);
	atomicAdd(out, acc);
}

__global__ void off_load_kernel(float4 *buf, size_t n, volatile int *stop, unsigned long long timeout_ns)
{
	__shared__ int halt;
	unsigned long long t0, t;
	size_t i, step = (size_t)gridDim.x * blockDim.x;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (;;) {
		if (threadIdx.x == 0) {
			asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
			halt = stop[0] != 0 || t - t0 > timeout_ns;
		}
		__syncthreads();
		if (halt)
			return;
		for (i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
			float4 v = buf[i];

			v.x = fmaf(v.x, 0.999f, 1e-3f);
			v.y = fmaf(v.y, 0.999f, 1e-3f);
			v.z = fmaf(v.z, 0.999f, 1e-3f);
			v.w = fmaf(v.w, 0.999f, 1e-3f);
			buf[i] = v;
		}
		__syncthreads();
	}
}

static unsigned off_blocks(size_t n)
{
	size_t b = (n + 255) / 256;

	return (unsigned)(b < 1 ? 1 : b > 4096 ? 4096 : b);
}

static size_t check_stride(size_t bytes)
{
	return bytes > OFF_FULL_CHECK ? 16 : 1;
}

static uint64_t host_checksum(const void *p, size_t bytes)
{
	const uint64_t *w = (const uint64_t *)p;
	size_t nw = bytes / 8, i, stride = check_stride(bytes);
	uint64_t acc = 0;

	for (i = 0; i < nw; i += stride)
		acc += off_mix(w[i] ^ (uint64_t)i);
	return acc;
}

static int dev_checksum(struct off_state *s, const void *p, uint64_t *out, struct mt_error *err)
{
	unsigned long long v = 0;
	int rc = MT_OK;
	size_t nw = s->bytes / 8, stride = check_stride(s->bytes);

	MTC_CK(cudaMemsetAsync(s->sum, 0, sizeof(*s->sum), s->st[0]));
	off_checksum<<<off_blocks((nw + stride - 1) / stride), 256, 0, s->st[0]>>>((const uint64_t *)p, nw, stride,
										    s->sum);
	MTC_CK(cudaGetLastError());
	MTC_CK(cudaMemcpyAsync(&v, s->sum, sizeof(v), cudaMemcpyDeviceToHost, s->st[0]));
	MTC_CK(cudaStreamSynchronize(s->st[0]));
	*out = v;
fail:
	return rc;
}

/* ------------------------------------------------------------ NUMA */

static void numa_bind(struct off_state *s)
{
	uint64_t mask[16];
	cpu_set_t want;
	char why[160];
	int i, n = 0;

	s->node = -1;
	if (mtc_gpu_cpus(s->dev, mask, 16, &s->node, why, sizeof(why)) != MT_OK) {
		mtc_copy_json(s->numa_note, sizeof(s->numa_note), why);
		return;
	}
	if (sched_getaffinity(0, sizeof(s->old), &s->old) != 0) {
		snprintf(s->numa_note, sizeof(s->numa_note), "sched_getaffinity failed");
		return;
	}
	CPU_ZERO(&want);
	for (i = 0; i < CPU_SETSIZE && i < 16 * 64; i++) {
		int local = (int)(mask[i / 64] >> (i % 64) & 1);

		if (CPU_ISSET(i, &s->old) && (s->numa_local ? local : !local)) {
			CPU_SET(i, &want);
			n++;
		}
	}
	if (!n) {
		snprintf(s->numa_note, sizeof(s->numa_note), "%s",
			 s->numa_local ? "none of the GPU's CPUs is allowed here" :
					 "no CPU outside the GPU's NUMA node (one node)");
		return;
	}
	if (sched_setaffinity(0, sizeof(want), &want) != 0) {
		snprintf(s->numa_note, sizeof(s->numa_note), "sched_setaffinity failed");
		return;
	}
	s->have_old = 1;
	s->bound = 1;
	/* the CPU list in words, as topology() writes it */
	{
		size_t pos = 0;
		int start = -1;

		s->cpus[0] = 0;
		for (i = 0; i <= CPU_SETSIZE; i++) {
			int set = i < CPU_SETSIZE && CPU_ISSET(i, &want);

			if (set && start < 0)
				start = i;
			if (!set && start >= 0) {
				if (start == i - 1)
					mtc_cat(s->cpus, sizeof(s->cpus), &pos, "%s%d", pos ? "," : "", start);
				else
					mtc_cat(s->cpus, sizeof(s->cpus), &pos, "%s%d-%d", pos ? "," : "", start, i - 1);
				start = -1;
			}
		}
	}
}

/* ------------------------------------------------------------ ops */

static int off_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	return mtc_device_check(ctx->device, err);
}

static void load_stop(struct off_state *s)
{
	if (s->load && s->stop.host) {
		mtc_gate_release(&s->stop);
		cudaStreamSynchronize(s->st[2]);
	}
}

static void off_teardown(void *state)
{
	struct off_state *s = (struct off_state *)state;
	int i;

	if (!s)
		return;
	load_stop(s);
	mtc_timer_sync(&s->tm);
	for (i = 1; i < 3; i++)
		if (s->have_st[i])
			cudaStreamSynchronize(s->st[i]);
	for (i = 0; i < 2; i++) {
		if (s->pinned)
			cudaFreeHost(s->h[i]);
		else
			free(s->h[i]);
		cudaFree(s->d[i]);
	}
	cudaFree(s->load);
	cudaFree(s->sum);
	mtc_timer_free(&s->tm);
	for (i = 1; i < 3; i++)
		if (s->have_st[i])
			cudaStreamDestroy(s->st[i]);
	mtc_gate_free(&s->stop);
	if (s->have_old)
		sched_setaffinity(0, sizeof(s->old), &s->old);
	free(s);
}

static int host_alloc(struct off_state *s, void **p, struct mt_error *err)
{
	cudaError_t e;

	if (s->pinned) {
		e = cudaHostAlloc(p, s->bytes, cudaHostAllocPortable);
		if (e != cudaSuccess)
			return mtc_cuda_fail(err, "cudaHostAlloc(copy buffer)", e);
		return MT_OK;
	}
	*p = aligned_alloc(4096, (s->bytes + 4095) / 4096 * 4096);
	if (!*p)
		return mtc_fail(err, MT_ENOMEM, "offload: malloc of %zu bytes failed", s->bytes);
	return MT_OK;
}

static void host_fill(void *p, size_t bytes, uint64_t seed)
{
	uint64_t *w = (uint64_t *)p;
	size_t i, nw = bytes / 8;

	for (i = 0; i < nw; i++)
		w[i] = off_mix(seed + i);
	memset((char *)p + nw * 8, 0x5a, bytes - nw * 8);
}

/* Queue `n` copies of the measured direction on st[0] and, bidirectional,
 * the opposite direction on st[1]. */
static cudaError_t off_queue(struct off_state *s, int n)
{
	cudaError_t e = cudaSuccess;
	int i;

	for (i = 0; i < n && e == cudaSuccess; i++) {
		if (s->dir == D_D2H)
			e = cudaMemcpyAsync(s->h[0], s->d[0], s->bytes, cudaMemcpyDeviceToHost, s->st[0]);
		else
			e = cudaMemcpyAsync(s->d[0], s->h[0], s->bytes, cudaMemcpyHostToDevice, s->st[0]);
		if (e == cudaSuccess && s->dir == D_BIDIR)
			e = cudaMemcpyAsync(s->h[1], s->d[1], s->bytes, cudaMemcpyDeviceToHost, s->st[1]);
	}
	return e;
}

static int off_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state, struct mt_error *err)
{
	struct off_state *s;
	float ms = 0;
	int rc, i, nbuf;

	*state = NULL;
	if (c->bytes < 8 || c->bytes > 1e12)
		return mtc_fail(err, MT_EINVAL, "offload case %s: %.0f bytes per copy (8 bytes to 1 TB)", c->label,
				c->bytes);
	if (c->dir < 0 || c->dir > D_BIDIR)
		return mtc_fail(err, MT_EINVAL, "offload case %s: unknown direction %d", c->label, c->dir);
	rc = mtc_device_check(ctx->device, err);
	if (rc)
		return rc;
	s = (struct off_state *)calloc(1, sizeof(*s));
	if (!s)
		return mtc_fail(err, MT_ENOMEM, "offload: out of memory");
	mtc_nvtx_push("offload", c->label);
	s->dev = ctx->device;
	s->dir = c->dir;
	s->pinned = c->pinned != 0;
	s->numa_local = c->numa_local != 0;
	s->under_load = c->under_load != 0;
	s->bytes = (size_t)c->bytes;
	s->node = -1;
	nbuf = s->dir == D_BIDIR ? 2 : 1;
	cudaDeviceGetAttribute(&s->sm_count, cudaDevAttrMultiProcessorCount, s->dev);

	numa_bind(s);
	rc = mtc_timer_init(&s->tm, 1, err);
	if (rc)
		goto fail;
	s->st[0] = s->tm.st;
	for (i = 1; i < 3; i++) {
		MTC_CK(cudaStreamCreateWithFlags(&s->st[i], cudaStreamNonBlocking));
		s->have_st[i] = 1;
	}
	rc = mtc_gate_init(&s->stop, err);
	if (rc)
		goto fail;
	MTC_CK(cudaMalloc((void **)&s->sum, sizeof(*s->sum)));
	for (i = 0; i < nbuf; i++) {
		rc = host_alloc(s, &s->h[i], err);
		if (rc)
			goto fail;
		MTC_CK(cudaMalloc(&s->d[i], s->bytes));
	}
	/* sources get data, destinations get touched, all under the binding */
	if (s->dir == D_D2H) {
		memset(s->h[0], 0, s->bytes);
		off_fill<<<off_blocks(s->bytes / 8), 256, 0, s->st[0]>>>((uint64_t *)s->d[0], s->bytes / 8, 0x0ff1);
		MTC_CK(cudaGetLastError());
	} else {
		host_fill(s->h[0], s->bytes, 0x0ff0);
		MTC_CK(cudaMemsetAsync(s->d[0], 0, s->bytes, s->st[0]));
	}
	if (s->dir == D_BIDIR) {
		memset(s->h[1], 0, s->bytes);
		off_fill<<<off_blocks(s->bytes / 8), 256, 0, s->st[0]>>>((uint64_t *)s->d[1], s->bytes / 8, 0x0ff2);
		MTC_CK(cudaGetLastError());
	}
	if (s->under_load) {
		struct cudaFuncAttributes fa;

		/* loaded now: lazy loading while the spin kernel holds a stream
		 * could wait for it */
		MTC_CK(cudaFuncGetAttributes(&fa, off_load_kernel));
		s->load_n = OFF_LOAD_BYTES / sizeof(float4);
		MTC_CK(cudaMalloc((void **)&s->load, OFF_LOAD_BYTES));
		MTC_CK(cudaMemsetAsync(s->load, 0, OFF_LOAD_BYTES, s->st[0]));
	}
	MTC_CK(cudaStreamSynchronize(s->st[0]));
	/* one warm-up and one timed copy (no gate) to size the samples */
	MTC_CK(off_queue(s, 1));
	MTC_CK(cudaEventRecord(s->tm.e0, s->st[0]));
	MTC_CK(off_queue(s, 1));
	MTC_CK(cudaEventRecord(s->tm.e1, s->st[0]));
	MTC_CK(cudaEventSynchronize(s->tm.e1));
	MTC_CK(cudaStreamSynchronize(s->st[1]));
	MTC_CK(cudaEventElapsedTime(&ms, s->tm.e0, s->tm.e1));
	c->inner = mtc_pick_inner(c->inner, ms / 1e3, OFF_TARGET_S, MTC_GATED_MAX_OPS);
	mtc_nvtx_pop();
	*state = s;
	return MT_OK;
fail:
	mtc_nvtx_pop();
	off_teardown(s);
	return rc;
}

static int off_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct off_state *s = (struct off_state *)state;
	int rc = MT_OK, inner = c->inner > 0 ? c->inner : 1, held = 0, loading = 0;
	cudaError_t e;

	*seconds = 0;
	if (inner > MTC_GATED_MAX_OPS)
		return mtc_fail(err, MT_EINVAL, "offload %s: inner %d exceeds %d copies per sample", c->label, inner,
				MTC_GATED_MAX_OPS);
	mtc_nvtx_push("offload", c->label);
	if (s->under_load) {
		s->stop.host[0] = 0;
		__sync_synchronize();
		off_load_kernel<<<s->sm_count > 0 ? s->sm_count : 1, 256, 0, s->st[2]>>>(
			s->load, s->load_n, (volatile int *)s->stop.dev, OFF_LOAD_TIMEOUT_NS);
		MTC_CK(cudaGetLastError());
		loading = 1;
	}
	if (s->pinned) {
		rc = mtc_gate_hold(&s->tm.gate, s->st[0], err);
		if (!rc && s->dir == D_BIDIR)
			rc = mtc_gate_hold(&s->tm.gate, s->st[1], err);
		held = 1;
		if (rc)
			goto fail;
	}
	e = cudaEventRecord(s->tm.e0, s->st[0]);
	if (e == cudaSuccess)
		e = off_queue(s, inner);
	if (e == cudaSuccess)
		e = cudaEventRecord(s->tm.e1, s->st[0]);
	if (held)
		mtc_gate_release(&s->tm.gate);
	held = 0;
	if (e != cudaSuccess) {
		rc = mtc_cuda_fail(err, "queueing the copies", e);
		goto fail;
	}
	MTC_CK(cudaEventSynchronize(s->tm.e1));
	MTC_CK(cudaStreamSynchronize(s->st[1]));
	rc = mtc_gate_elapsed(&s->tm.gate, s->pinned, s->tm.e0, s->tm.e1, "offload", c->label, inner,
			      seconds, err);
fail:
	if (held)
		mtc_gate_release(&s->tm.gate);
	if (rc) {
		cudaStreamSynchronize(s->st[0]);
		cudaStreamSynchronize(s->st[1]);
	}
	if (loading)
		load_stop(s);
	mtc_nvtx_pop();
	return rc;
}

static int off_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct off_state *s = (struct off_state *)state;
	uint64_t dsum = 0, hsum;
	int rc;

	rc = dev_checksum(s, s->d[0], &dsum, err);
	if (rc)
		return rc;
	hsum = host_checksum(s->h[0], s->bytes);
	if (dsum != hsum)
		return mtc_fail(err, MT_EINVAL, "offload %s: %s copy of %zu bytes: checksums differ (device %016llx, "
				"host %016llx)", c->label, s->dir == D_D2H ? "d2h" : "h2d", s->bytes,
				(unsigned long long)dsum, (unsigned long long)hsum);
	if (s->dir == D_BIDIR) {
		rc = dev_checksum(s, s->d[1], &dsum, err);
		if (rc)
			return rc;
		hsum = host_checksum(s->h[1], s->bytes);
		if (dsum != hsum)
			return mtc_fail(err, MT_EINVAL, "offload %s: opposite (d2h) copy of %zu bytes: checksums "
					"differ", c->label, s->bytes);
	}
	s->verified = 1;
	return MT_OK;
}

static void off_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct off_state *s = (struct off_state *)state;
	size_t pos = 0;

	(void)c;
	if (!n)
		return;
	buf[0] = 0;
	if (!s)
		return;
	mtc_member(buf, n, &pos, "\"method\": \"memcpy_ce\"");
	mtc_member(buf, n, &pos, "\"gated\": %s", s->pinned ? "true" : "false");
	mtc_member(buf, n, &pos, "\"numa_bound\": %s", s->bound ? "true" : "false");
	mtc_member(buf, n, &pos, "\"gpu_numa_node\": %d", s->node);
	if (s->dir == D_BIDIR)
		mtc_member(buf, n, &pos, "\"measured\": \"h2d, d2h on a second stream; rate per direction\"");
	if (s->under_load)
		mtc_member(buf, n, &pos, "\"load\": \"hbm-stream kernel on every SM\"");
	if (!s->bound && s->numa_note[0])
		mtc_member(buf, n, &pos, "\"numa_note\": \"%s\"", s->numa_note);
	if (s->bound)
		mtc_member(buf, n, &pos, "\"cpus\": \"%s\"", s->cpus);
}

extern "C" const struct mt_probe_ops mtc_offload_ops = {
	off_applicable,
	NULL,
	NULL,
	NULL,
	off_setup,
	off_run,
	off_verify,
	off_teardown,
	off_extra,
};
