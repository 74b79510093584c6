/* SPDX-License-Identifier: MIT */
/* launch: the host's cost of launching a kernel (the CUDA part of the host
 * probe: cases with metric "launch" and "launch_jitter").
 *
 * Method.  run() synchronizes the stream, then launches a one-thread kernel
 * `inner` times on a non-blocking stream, reading CLOCK_MONOTONIC around each
 * cudaLaunchKernel; *seconds is the host time from the first launch call to
 * the return of the last, so the harness's per-operation time is the host
 * cost of one launch (the GPU runs the kernels meanwhile, and inner stays far
 * below the ~1000 launches a stream queues, so the host never waits for the
 * GPU).  Each launch's own time is kept (up to 1,000,000 across samples);
 * extra() gives their p50, p99 and maximum, the spread a "launch_jitter" case
 * is about.  The kernel adds one to a device counter; verify() checks that
 * every launch ran.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtc.h"

#define LAUNCH_DEFAULT_INNER 200
#define LAUNCH_MAX_INNER 512
#define LAUNCH_MAX_KEPT 1000000

struct launch_state {
	int dev, jitter;
	cudaStream_t st;
	int have_st;
	unsigned long long *count;
	unsigned long long launched;
	double *lat;
	size_t nlat;
	int verified;
};

__global__ void mtc_launch_kernel(unsigned long long *count)
{
	atomicAdd(count, 1ull);
}

static int launch_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	return mtc_device_check(ctx->device, err);
}

static void launch_teardown(void *state)
{
	struct launch_state *s = (struct launch_state *)state;

	if (!s)
		return;
	if (s->have_st) {
		cudaStreamSynchronize(s->st);
		cudaStreamDestroy(s->st);
	}
	cudaFree(s->count);
	free(s->lat);
	free(s);
}

static int launch_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state, struct mt_error *err)
{
	struct launch_state *s;
	int rc, i;

	*state = NULL;
	if (strcmp(c->metric, "launch") && strcmp(c->metric, "launch_jitter"))
		return mtc_fail(err, MT_EINVAL, "launch case %s: metric \"%s\" is not launch or launch_jitter",
				c->label, c->metric);
	rc = mtc_device_check(ctx->device, err);
	if (rc)
		return rc;
	s = (struct launch_state *)calloc(1, sizeof(*s));
	if (!s)
		return mtc_fail(err, MT_ENOMEM, "launch: out of memory");
	mtc_nvtx_push("launch", c->label);
	s->dev = ctx->device;
	s->jitter = !strcmp(c->metric, "launch_jitter");
	s->lat = (double *)malloc(LAUNCH_MAX_KEPT * sizeof(double));
	if (!s->lat) {
		rc = mtc_fail(err, MT_ENOMEM, "launch: out of memory");
		goto fail;
	}
	MTC_CK(cudaStreamCreateWithFlags(&s->st, cudaStreamNonBlocking));
	s->have_st = 1;
	MTC_CK(cudaMalloc((void **)&s->count, sizeof(*s->count)));
	MTC_CK(cudaMemsetAsync(s->count, 0, sizeof(*s->count), s->st));
	/* load the module and warm the launch path */
	for (i = 0; i < 64; i++)
		mtc_launch_kernel<<<1, 1, 0, s->st>>>(s->count);
	MTC_CK(cudaGetLastError());
	MTC_CK(cudaStreamSynchronize(s->st));
	s->launched = 64;
	if (c->inner <= 1)
		c->inner = LAUNCH_DEFAULT_INNER;
	if (c->inner > LAUNCH_MAX_INNER)
		c->inner = LAUNCH_MAX_INNER;
	mtc_nvtx_pop();
	*state = s;
	return MT_OK;
fail:
	mtc_nvtx_pop();
	launch_teardown(s);
	return rc;
}

static int launch_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct launch_state *s = (struct launch_state *)state;
	int i, rc = MT_OK, inner = c->inner > 0 ? c->inner : 1;
	double t0, t1, first = 0, last = 0;

	*seconds = 0;
	if (inner > LAUNCH_MAX_INNER)
		inner = LAUNCH_MAX_INNER;
	mtc_nvtx_push("launch", c->label);
	MTC_CK(cudaStreamSynchronize(s->st));
	for (i = 0; i < inner; i++) {
		t0 = mtc_now();
		mtc_launch_kernel<<<1, 1, 0, s->st>>>(s->count);
		t1 = mtc_now();
		if (i == 0)
			first = t0;
		last = t1;
		if (s->nlat < LAUNCH_MAX_KEPT)
			s->lat[s->nlat++] = t1 - t0;
	}
	s->launched += (unsigned long long)inner;
	MTC_CK(cudaGetLastError());
	MTC_CK(cudaStreamSynchronize(s->st));
	*seconds = last - first;
fail:
	mtc_nvtx_pop();
	return rc;
}

static int launch_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct launch_state *s = (struct launch_state *)state;
	unsigned long long n = 0;
	int rc = MT_OK;

	MTC_CK(cudaMemcpyAsync(&n, s->count, sizeof(n), cudaMemcpyDeviceToHost, s->st));
	MTC_CK(cudaStreamSynchronize(s->st));
	if (n != s->launched)
		return mtc_fail(err, MT_EINVAL, "launch %s: %llu kernels launched, %llu ran", c->label, s->launched, n);
	s->verified = 1;
	return MT_OK;
fail:
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void launch_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct launch_state *s = (struct launch_state *)state;
	size_t pos = 0, k;
	double *x, p50, p99;

	(void)c;
	if (!n)
		return;
	buf[0] = 0;
	if (!s || !s->nlat)
		return;
	x = (double *)malloc(s->nlat * sizeof(double));
	if (!x)
		return;
	memcpy(x, s->lat, s->nlat * sizeof(double));
	qsort(x, s->nlat, sizeof(double), cmp_double);
	k = s->nlat - 1;
	p50 = x[(size_t)floor(0.50 * (double)k)];
	p99 = x[(size_t)floor(0.99 * (double)k)];
	mtc_member(buf, n, &pos, "\"launch_p50_us\": %.3f", p50 * 1e6);
	mtc_member(buf, n, &pos, "\"launch_p99_us\": %.3f", p99 * 1e6);
	mtc_member(buf, n, &pos, "\"launch_max_us\": %.3f", x[k] * 1e6);
	mtc_member(buf, n, &pos, "\"p99_over_p50\": %.3f", p50 > 0 ? p99 / p50 : 0.0);
	mtc_member(buf, n, &pos, "\"launches\": %zu", s->nlat);
	free(x);
}

extern "C" const struct mt_probe_ops mtc_launch_ops = {
	launch_applicable,
	NULL,
	NULL,
	NULL,
	launch_setup,
	launch_run,
	launch_verify,
	launch_teardown,
	launch_extra,
};
