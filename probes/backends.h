/* SPDX-License-Identifier: MIT */
/* backends: the plans of the gemm, attention, offload and host probes and
 * their CPU backends (probes/gemm.c, attention.c, offload.c, host.c).
 *
 * Plans are functions of ctx->opts only (depth, backend, dtypes, size
 * limits, model and tp), so both backends measure the cases they describe:
 * the CPU ops tables below carry them, and probes/gpu.c pairs them with the
 * CUDA library's setup/run/verify/teardown.  Every plan returns a heap array
 * the caller frees (free()), with a unique `label` per case; `flops`, `moved`
 * and `inner` are set so that the harness computes TFLOP/s = flops / time and
 * GB/s = moved / time per operation (docs/METRICS.md, "Probes").
 *
 * Size limits (opts->min_bytes, max_bytes; 0: none) select the cases of the
 * size sweep by their `bytes`: gemm the A, B and D operands, attention Q, K,
 * V and O, offload the buffer, host one triad array or the four Adam arrays.
 * A model's exact shapes (opts->model) are kept whatever their size: they are
 * what the job runs.  A plan left empty by the limits is MT_EINVAL.
 *
 * The CPU backends do real work: OpenBLAS sgemm, a BLAS attention forward and
 * backward, memcpy between two host buffers, a STREAM triad and an AdamW
 * step.  They are always applicable.  setup() allocates and fills the inputs
 * with deterministic pseudo-random data and raises c->inner so that one timed
 * sample lasts at least 10 ms (1 ms at MT_DEPTH_SMOKE); run() allocates
 * nothing and times c->inner operations with mt_now(); verify() checks the
 * results of the last run against independent references.  Per-case state
 * belongs to the backend between setup() and teardown().  With several ranks
 * on a host, each uses its share of the CPUs (mt_cpu_threads(): the host
 * probe's threads; gemm and attention set OpenBLAS's thread count to it).
 */
#ifndef MT_BACKENDS_H
#define MT_BACKENDS_H

#include "probe.h"

/* Plans (both backends).  MT_OK and a heap array in *cases (*n >= 1), or an
 * error (a model that does not load, tp that does not divide it, limits
 * that leave nothing). */
int mt_plan_gemm(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		 struct mt_error *err);
int mt_plan_attention(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		      struct mt_error *err);
int mt_plan_offload(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		    struct mt_error *err);
int mt_plan_host(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		 struct mt_error *err);

/* CPU ops tables (static; `plan` is the plan above). */
extern const struct mt_probe_ops mt_gemm_cpu, mt_attention_cpu, mt_offload_cpu, mt_host_cpu;

/* The host probe on the CUDA backend: "membw" and "adam" cases run on the
 * CPU exactly as in mt_host_cpu; "launch" and "launch_jitter" cases go to the
 * CUDA library's `launch` ops (mt_cuda_load()), whose open/close also receive
 * the context.  Not applicable when the library or a GPU is missing. */
extern const struct mt_probe_ops mt_host_cuda;

/* Test hooks: damage the output of the last run of a CPU case (`state` from
 * its setup()) in a place verify() inspects, so that tests can check that
 * verify() notices.  gemm: one element of D gets 1000 added; attention: a
 * 64-row tile of the last head's output (O forward, dQ backward) is zeroed;
 * offload: one byte of the destination is flipped; host: one element of the
 * triad result or one parameter changes. */
void mt_gemm_cpu_damage(void *state);
void mt_attention_cpu_damage(void *state);
void mt_offload_cpu_damage(void *state);
void mt_host_cpu_damage(void *state);

/* Test hook: the tensors of a CPU attention case, [batch][heads][seq][dim]
 * (K, V, dK, dV over kv_heads); the gradients are NULL for a forward case. */
struct mt_attn_tensors {
	const float *q, *k, *v, *o, *dout, *dq, *dk, *dv;
};
void mt_attention_cpu_tensors(void *state, struct mt_attn_tensors *t);

/* ------------------------------------------------------------------------
 * Helpers shared by the four files above (not for other callers).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* xorshift64* (Vigna): deterministic inputs, never all zeros. */
static inline uint64_t mt_rng_next(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9e3779b97f4a7c15ull;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [-1, 1). */
static inline float mt_rng_float(uint64_t *s)
{
	return (float)((double)(mt_rng_next(s) >> 40) * (2.0 / 16777216.0) - 1.0);
}

static inline void mt_fill_float(float *x, size_t n, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull + 1;
	size_t i;

	for (i = 0; i < n; i++)
		x[i] = mt_rng_float(&s);
}

/* A growing plan.  Cases are zeroed, then filled by the caller; push()
 * returns NULL when out of memory. */
struct mt_plan_buf {
	struct mt_case *v;
	int n, cap;
	int oom;
};

static inline struct mt_case *mt_plan_push(struct mt_plan_buf *p)
{
	struct mt_case *c;

	if (p->n == p->cap) {
		int cap = p->cap ? p->cap * 2 : 32;
		struct mt_case *v = realloc(p->v, (size_t)cap * sizeof(*v));

		if (!v) {
			p->oom = 1;
			return NULL;
		}
		p->v = v;
		p->cap = cap;
	}
	c = &p->v[p->n++];
	memset(c, 0, sizeof(*c));
	c->inner = 1;
	return c;
}

/* The case with this label, or NULL. */
static inline struct mt_case *mt_plan_find(struct mt_plan_buf *p, const char *label)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].label, label))
			return &p->v[i];
	return NULL;
}

/* 1 when `bytes` lies inside the opts' limits (0: no limit). */
/* The end of every plan: out of memory, nothing within the limits, or the
 * cases handed over. */
static inline int mt_plan_finish(struct mt_plan_buf *p, const char *probe,
				 const struct mt_probe_opts *o, struct mt_case **cases, int *n,
				 struct mt_error *err)
{
	if (p->oom) {
		free(p->v);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	if (p->n == 0) {
		free(p->v);
		return mt_error_set(err, MT_EINVAL,
				    "%s: no case within the size limits (%.0f..%.0f bytes)",
				    probe, o->min_bytes, o->max_bytes);
	}
	*cases = p->v;
	*n = p->n;
	return MT_OK;
}

static inline int mt_plan_in_limits(const struct mt_probe_opts *o, double bytes)
{
	return !((o->min_bytes > 0 && bytes < o->min_bytes) ||
		 (o->max_bytes > 0 && bytes > o->max_bytes));
}

/* "512KiB", "64MiB", "1GiB", "1.5GiB": a buffer size for labels. */
static inline const char *mt_fmt_size(char *buf, size_t cap, double bytes)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	while (bytes >= 1024 && u < 4) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, cap, "%g%s", bytes, unit[u]);
	return buf;
}

/* CPU threads one rank may use: the online CPUs shared among the ranks on
 * this host (per-device probes run on every local rank at once). */
static inline int mt_cpu_threads(const struct mt_probe_ctx *ctx)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int ranks = ctx && ctx->world && ctx->world->local_size > 1 ? ctx->world->local_size : 1;

	cpus = cpus > 0 ? cpus / ranks : 1;
	return cpus > 1 ? (int)cpus : 1;
}

/* Seconds one timed sample should last at this depth. */
static inline double mt_cpu_sample_target(const struct mt_probe_ctx *ctx)
{
	return ctx && ctx->opts && ctx->opts->depth == MT_DEPTH_SMOKE ? 1e-3 : 10e-3;
}

/* Operations per sample so that a sample lasts >= target, given one op's time. */
static inline int mt_cpu_inner(double target, double one)
{
	double k;

	if (!(one > 0))
		return 1000;
	k = target / one;
	if (k <= 1)
		return 1;
	if (k > 1e6)
		return 1000000;
	return (int)k + 1;
}

/* Operations per timed sample for `op` (which runs `count` operations):
 * one untimed call, then batches 4x larger until one lasts target / 8, then
 * the best of three such batches (a stray interruption does not shrink
 * the samples). */
static inline int mt_cpu_calibrate(const struct mt_probe_ctx *ctx, void (*op)(void *arg, int count),
				   void *arg)
{
	double target = mt_cpu_sample_target(ctx), t0, t, best;
	int reps = 1, i;

	op(arg, 1);
	for (;;) {
		t0 = mt_now();
		op(arg, reps);
		t = mt_now() - t0;
		if (t >= target / 8 || reps >= (1 << 20))
			break;
		reps *= 4;
	}
	best = t;
	for (i = 0; i < 2; i++) {
		t0 = mt_now();
		op(arg, reps);
		t = mt_now() - t0;
		best = t < best ? t : best;
	}
	return mt_cpu_inner(target, best / reps);
}

#endif
