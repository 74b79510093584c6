/* SPDX-License-Identifier: MIT */
/* host: the host probe's plan (both backends), its CPU cases and the CUDA
 * forwarding of its launch cases (probes/backends.h).
 *
 * "membw": the STREAM triad a[i] = b[i] + s c[i] over three arrays of
 * doubles, each far larger than the caches.  moved = 3 x array bytes: two
 * arrays read and one written, the write-allocate read of `a` not counted
 * (STREAM's convention), so the figure compares with STREAM's "Triad".
 *
 * "adam": one AdamW step (decoupled weight decay, bias correction, as
 * torch.optim.AdamW computes it) over N fp32 parameters with fp32 gradients
 * and fp32 exp_avg / exp_avg_sq:
 *     p  *= 1 - lr wd
 *     m   = b1 m + (1 - b1) g
 *     v   = b2 v + (1 - b2) g^2
 *     p  -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
 * moved = 28 N bytes (p, g, m, v read: 16 N; p, m, v written: 12 N), flops =
 * 14 N (1 + 3 + 4 + 3 + 3 as written above, a square root and a division
 * counted as one each), c->m = N so that the profile's
 * optimizer_gparams_per_s = N / time / 1e9.
 *
 * Both run on a pool of threads (one per online CPU, shared among the ranks
 * of this host, at most 64; the caller is one of them) that split the arrays into contiguous ranges; every
 * thread touches its range first (first-touch NUMA placement) and runs all
 * c->inner operations on it; the sample ends when the last thread is done.
 *
 * PAPI: each host case tries PAPI_TOT_CYC and PAPI_TOT_INS, then the
 * software events perf::TASK-CLOCK, perf::PAGE-FAULTS and
 * perf::CONTEXT-SWITCHES, deciding by PAPI_add_event and PAPI_start; it
 * counts the calling thread over every run() and writes the totals (or why
 * there are none) into its extra facts.  Counters never fail a case.
 *
 * "launch" and "launch_jitter" exist on the CUDA backend only (mt_host_cuda
 * forwards them to the CUDA library).
 */
#include "backends.h"

#include <float.h>
#include <math.h>
#include <papi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"
#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "calibrate.h"
#include "../perfmodel/profile.h"

#define MIB (1024.0 * 1024.0)
#define MAX_THREADS 64
#define MIN_PER_THREAD 65536     /* elements */
#define ADAM_SAMPLES 1024        /* parameters replayed by verify() */
#define LAUNCH_INNER 10000

/* AdamW hyper-parameters (PyTorch defaults, with weight decay) */
#define LR 1e-3f
#define BETA1 0.9f
#define BETA2 0.999f
#define EPS 1e-8f
#define WD 0.01f

/* ------------------------------------------------------------------ plan */

static struct mt_case *host_add(struct mt_plan_buf *p, const char *metric)
{
	struct mt_case *c = mt_plan_push(p);

	if (!c)
		return NULL;
	snprintf(c->metric, sizeof(c->metric), "%s", metric);
	snprintf(c->origin, sizeof(c->origin), "sweep");
	return c;
}

int mt_plan_host(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		 struct mt_error *err)
{
	static const int bw_smoke[] = { 8 }, bw_normal[] = { 64 }, bw_full[] = { 64, 256 };
	static const int ad_smoke[] = { 1 }, ad_quick[] = { 16 }, ad_normal[] = { 16, 64 };
	static const int ad_full[] = { 16, 64, 256 };
	const struct mt_probe_opts *o = ctx ? ctx->opts : NULL;
	struct mt_plan_buf p = { 0 };
	const int *bw, *ad;
	int nbw, nad, i, cuda;
	struct mt_case *c;

	*cases = NULL;
	*n = 0;
	if (!o)
		return mt_error_set(err, MT_EINVAL, "host plan: no options");
	cuda = o->backend == MT_BACKEND_CUDA;
	switch (o->depth) {
	case MT_DEPTH_SMOKE: bw = bw_smoke; nbw = 1; ad = ad_smoke; nad = 1; break;
	case MT_DEPTH_QUICK: bw = bw_normal; nbw = 1; ad = ad_quick; nad = 1; break;
	case MT_DEPTH_FULL: bw = bw_full; nbw = 2; ad = ad_full; nad = 3; break;
	default: bw = bw_normal; nbw = 1; ad = ad_normal; nad = 2; break;
	}
	if (cuda) {
		if ((c = host_add(&p, "launch"))) {
			snprintf(c->label, sizeof(c->label), "launch");
			c->inner = LAUNCH_INNER;
		}
		if ((c = host_add(&p, "launch_jitter"))) {
			snprintf(c->label, sizeof(c->label), "launch jitter");
			c->inner = LAUNCH_INNER;
		}
	}
	for (i = 0; i < nbw; i++) {
		double bytes = bw[i] * MIB;
		char sz[32];

		if (!mt_plan_in_limits(o, bytes) || !(c = host_add(&p, "membw")))
			continue;
		c->bytes = bytes;
		c->moved = 3 * bytes;
		snprintf(c->label, sizeof(c->label), "triad 3x%s", mt_fmt_size(sz, sizeof(sz), bytes));
	}
	for (i = 0; i < nad; i++) {
		double np = ad[i] * 1e6;

		if (!mt_plan_in_limits(o, 16 * np) || !(c = host_add(&p, "adam")))
			continue;
		c->m = (long long)np;
		c->bytes = 16 * np;
		c->moved = 28 * np;
		c->flops = 14 * np;
		snprintf(c->label, sizeof(c->label), "adam %dM params", ad[i]);
	}
	return mt_plan_finish(&p, "host", o, cases, n, err);
}

/* ------------------------------------------------------------ thread pool */

struct host_state;

struct pool {
	int n;                      /* threads, the caller included */
	pthread_t tid[MAX_THREADS];
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	int sync;                   /* mu, go and done exist */
	unsigned gen;               /* dispatch generation */
	int pending;                /* workers still running this generation */
	int quit;
	void (*fn)(struct host_state *s, int idx);
	struct host_state *s;
};

struct worker_arg {
	struct pool *pool;
	int idx;
};

enum { K_MEMBW, K_ADAM };

#define PAPI_MAXEV 5

struct host_state {
	int kind;
	size_t n;                   /* elements (membw) or parameters (adam) */
	struct pool pool;
	struct worker_arg wa[MAX_THREADS];
	int inner;                  /* operations of the current dispatch */
	/* membw */
	double *a, *b, *c;
	double scalar;
	/* adam */
	float *p, *g, *m, *v;
	long long step;             /* steps taken */
	size_t sidx[ADAM_SAMPLES];
	float s0[4][ADAM_SAMPLES];  /* p, g, m, v at the samples, initially */
	int nsamp;
	/* PAPI */
	int papi_es;                /* PAPI_NULL when none */
	int papi_n;
	char papi_name[PAPI_MAXEV][28];
	long long papi_val[PAPI_MAXEV];
	long long papi_ops;
	char papi_why[112];         /* why hardware (or all) counters are missing */
	int papi_none;              /* no counters at all */
};

static size_t range_lo(const struct host_state *s, int idx)
{
	size_t per = s->n / (size_t)s->pool.n;

	return per * (size_t)idx;
}

static size_t range_hi(const struct host_state *s, int idx)
{
	return idx == s->pool.n - 1 ? s->n : range_lo(s, idx + 1);
}

static void *worker_main(void *arg)
{
	struct worker_arg *w = arg;
	struct pool *pl = w->pool;
	unsigned seen = 0;

	pthread_mutex_lock(&pl->mu);
	for (;;) {
		while (pl->gen == seen && !pl->quit)
			pthread_cond_wait(&pl->go, &pl->mu);
		if (pl->quit)
			break;
		seen = pl->gen;
		pthread_mutex_unlock(&pl->mu);
		pl->fn(pl->s, w->idx);
		pthread_mutex_lock(&pl->mu);
		if (--pl->pending == 0)
			pthread_cond_signal(&pl->done);
	}
	pthread_mutex_unlock(&pl->mu);
	return NULL;
}

/* Run fn on every thread (the caller is thread 0); returns when all are done. */
static void pool_dispatch(struct host_state *s, void (*fn)(struct host_state *, int))
{
	struct pool *pl = &s->pool;

	pl->fn = fn;
	if (pl->n > 1) {
		pthread_mutex_lock(&pl->mu);
		pl->pending = pl->n - 1;
		pl->gen++;
		pthread_cond_broadcast(&pl->go);
		pthread_mutex_unlock(&pl->mu);
	}
	fn(s, 0);
	if (pl->n > 1) {
		pthread_mutex_lock(&pl->mu);
		while (pl->pending > 0)
			pthread_cond_wait(&pl->done, &pl->mu);
		pthread_mutex_unlock(&pl->mu);
	}
}

/* Start up to n - 1 workers; with fewer (a thread limit), the pool is
 * smaller.  Never fails: one thread is the caller. */
static void pool_start(struct host_state *s, int n)
{
	struct pool *pl = &s->pool;
	int i;

	pl->n = 1;
	pl->s = s;
	if (n <= 1)
		return;
	if (pthread_mutex_init(&pl->mu, NULL))
		return;
	if (pthread_cond_init(&pl->go, NULL)) {
		pthread_mutex_destroy(&pl->mu);
		return;
	}
	if (pthread_cond_init(&pl->done, NULL)) {
		pthread_cond_destroy(&pl->go);
		pthread_mutex_destroy(&pl->mu);
		return;
	}
	pl->sync = 1;
	for (i = 1; i < n; i++) {
		s->wa[i].pool = pl;
		s->wa[i].idx = i;
		if (pthread_create(&pl->tid[i], NULL, worker_main, &s->wa[i]))
			break;
		pl->n = i + 1;
	}
}

static void pool_stop(struct pool *pl)
{
	int i;

	if (!pl->sync)
		return;
	pthread_mutex_lock(&pl->mu);
	pl->quit = 1;
	pthread_cond_broadcast(&pl->go);
	pthread_mutex_unlock(&pl->mu);
	for (i = 1; i < pl->n; i++)
		pthread_join(pl->tid[i], NULL);
	pthread_cond_destroy(&pl->go);
	pthread_cond_destroy(&pl->done);
	pthread_mutex_destroy(&pl->mu);
	pl->sync = 0;
	pl->n = 1;
}

static int pool_size(const struct mt_probe_ctx *ctx, size_t n)
{
	size_t t = (size_t)mt_cpu_threads(ctx);

	if (t > MAX_THREADS)
		t = MAX_THREADS;
	while (t > 1 && n / t < MIN_PER_THREAD)
		t--;
	return (int)t;
}

/* ---------------------------------------------------------------- kernels */

/* Deterministic value in [-1, 1) for element i: a hash, so that threads can
 * fill their own ranges (first touch) with the same data whatever their
 * number. */
static double hash_unit(uint64_t i, uint64_t seed)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull + seed * 0xbf58476d1ce4e5b9ull + 1;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (double)(x >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static void fill_range(struct host_state *s, int idx)
{
	size_t i, lo = range_lo(s, idx), hi = range_hi(s, idx);

	if (s->kind == K_MEMBW) {
		for (i = lo; i < hi; i++) {
			s->a[i] = 0.5;
			s->b[i] = hash_unit(i, 1);
			s->c[i] = hash_unit(i, 2);
		}
	} else {
		for (i = lo; i < hi; i++) {
			s->p[i] = (float)hash_unit(i, 3);
			s->g[i] = (float)hash_unit(i, 4);
			s->m[i] = (float)(0.1 * hash_unit(i, 5));
			s->v[i] = (float)(0.01 * (1.0 + hash_unit(i, 6)));
		}
	}
}

/* Kept out of line so that repeated identical passes are not merged. */
__attribute__((noinline)) static void triad(double *restrict a, const double *restrict b,
					    const double *restrict c, double scalar, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		a[i] = b[i] + scalar * c[i];
}

static void triad_range(struct host_state *s, int idx)
{
	size_t lo = range_lo(s, idx), hi = range_hi(s, idx);
	int it;

	for (it = 0; it < s->inner; it++)
		triad(s->a + lo, s->b + lo, s->c + lo, s->scalar, hi - lo);
}

struct adam_k {
	float decay, omb1, omb2, step, rbc2;
};

static struct adam_k adam_consts(long long t)
{
	struct adam_k k;
	double bc1 = 1.0 - pow((double)BETA1, (double)t);
	double bc2 = 1.0 - pow((double)BETA2, (double)t);

	k.decay = 1.0f - LR * WD;
	k.omb1 = 1.0f - BETA1;
	k.omb2 = 1.0f - BETA2;
	k.step = (float)(LR / bc1);
	k.rbc2 = (float)(1.0 / sqrt(bc2));
	return k;
}

__attribute__((noinline)) static void adam(float *restrict p, const float *restrict g,
					   float *restrict m, float *restrict v, size_t n,
					   struct adam_k k)
{
	size_t i;

	for (i = 0; i < n; i++) {
		float gi = g[i];
		float mi = BETA1 * m[i] + k.omb1 * gi;
		float vi = BETA2 * v[i] + k.omb2 * gi * gi;
		float denom = sqrtf(vi) * k.rbc2 + EPS;
		float pi = p[i] * k.decay;

		m[i] = mi;
		v[i] = vi;
		p[i] = pi - k.step * mi / denom;
	}
}

static void adam_range(struct host_state *s, int idx)
{
	size_t lo = range_lo(s, idx), hi = range_hi(s, idx);
	int it;

	for (it = 0; it < s->inner; it++)
		adam(s->p + lo, s->g + lo, s->m + lo, s->v + lo, hi - lo,
		     adam_consts(s->step + it + 1));
}

/* ------------------------------------------------------------------ PAPI */

static void papi_setup(struct host_state *s)
{
	static const int hw[] = { PAPI_TOT_CYC, PAPI_TOT_INS };
	static const char *const hw_name[] = { "PAPI_TOT_CYC", "PAPI_TOT_INS" };
	static const char *const sw[] = { "perf::TASK-CLOCK", "perf::PAGE-FAULTS",
					  "perf::CONTEXT-SWITCHES" };
	int rc, i, pass;

	s->papi_es = PAPI_NULL;
	if (PAPI_is_initialized() == PAPI_NOT_INITED &&
	    (rc = PAPI_library_init(PAPI_VER_CURRENT)) != PAPI_VER_CURRENT) {
		snprintf(s->papi_why, sizeof(s->papi_why), "PAPI_library_init: %s",
			 rc < 0 ? PAPI_strerror(rc) : "version mismatch");
		s->papi_none = 1;
		return;
	}
	/* pass 0: hardware counters; pass 1: software events */
	for (pass = 0; pass < 2; pass++) {
		int es = PAPI_NULL;

		s->papi_n = 0;
		if ((rc = PAPI_create_eventset(&es)) != PAPI_OK) {
			snprintf(s->papi_why, sizeof(s->papi_why), "PAPI_create_eventset: %s",
				 PAPI_strerror(rc));
			break;
		}
		if (pass == 0) {
			for (i = 0; i < 2; i++) {
				if ((rc = PAPI_add_event(es, hw[i])) != PAPI_OK) {
					snprintf(s->papi_why, sizeof(s->papi_why), "%s: %s",
						 hw_name[i], PAPI_strerror(rc));
					break;
				}
				snprintf(s->papi_name[s->papi_n++], sizeof(s->papi_name[0]), "%s",
					 hw_name[i]);
			}
			if (i < 2)
				s->papi_n = 0;
		} else {
			for (i = 0; i < 3; i++)
				if (PAPI_add_named_event(es, sw[i]) == PAPI_OK)
					snprintf(s->papi_name[s->papi_n++], sizeof(s->papi_name[0]),
						 "%s", sw[i]);
		}
		if (s->papi_n > 0) {
			long long tmp[PAPI_MAXEV];

			rc = PAPI_start(es);
			if (rc == PAPI_OK && PAPI_stop(es, tmp) == PAPI_OK) {
				s->papi_es = es;
				return;
			}
			if (pass == 0)
				snprintf(s->papi_why, sizeof(s->papi_why), "PAPI_start: %s",
					 PAPI_strerror(rc));
			else
				snprintf(s->papi_why + strlen(s->papi_why),
					 sizeof(s->papi_why) - strlen(s->papi_why),
					 "; software events: PAPI_start: %s", PAPI_strerror(rc));
		} else if (pass == 1) {
			snprintf(s->papi_why + strlen(s->papi_why),
				 sizeof(s->papi_why) - strlen(s->papi_why),
				 "; software events refused too");
		}
		PAPI_cleanup_eventset(es);
		PAPI_destroy_eventset(&es);
	}
	s->papi_n = 0;
	s->papi_none = 1;
}

static void papi_teardown(struct host_state *s)
{
	if (s->papi_es != PAPI_NULL) {
		PAPI_cleanup_eventset(s->papi_es);
		PAPI_destroy_eventset(&s->papi_es);
		s->papi_es = PAPI_NULL;
	}
}

/* ------------------------------------------------------------ CPU backend */

static int host_cpu_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	(void)ctx;
	(void)err;
	return MT_OK;
}

static void host_teardown(void *state)
{
	struct host_state *s = state;

	if (!s)
		return;
	pool_stop(&s->pool);
	papi_teardown(s);
	free(s->a);
	free(s->b);
	free(s->c);
	free(s->p);
	free(s->g);
	free(s->m);
	free(s->v);
	free(s);
}

static void *alloc64(size_t bytes)
{
	return aligned_alloc(64, (bytes + 63) / 64 * 64);
}

static void one_pass(struct host_state *s, int inner)
{
	s->inner = inner;
	pool_dispatch(s, s->kind == K_MEMBW ? triad_range : adam_range);
	if (s->kind == K_ADAM)
		s->step += inner;
}

static void host_ops(void *state, int count)
{
	one_pass(state, count);
}

static int host_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		      struct mt_error *err)
{
	struct host_state *s;
	int i;

	*state = NULL;
	if (!(s = calloc(1, sizeof(*s))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	s->papi_es = PAPI_NULL;
	if (!strcmp(c->metric, "membw")) {
		s->kind = K_MEMBW;
		if (!(c->bytes >= 8 && c->bytes <= 1e12)) {
			free(s);
			return mt_error_set(err, MT_EINVAL, "host %s: bytes must be 8..1e12", c->label);
		}
		s->n = (size_t)(c->bytes / sizeof(double));
		s->scalar = 3.0;
		s->a = alloc64(s->n * sizeof(double));
		s->b = alloc64(s->n * sizeof(double));
		s->c = alloc64(s->n * sizeof(double));
		if (!s->a || !s->b || !s->c) {
			host_teardown(s);
			return mt_error_set(err, MT_ENOMEM, "host %s: out of memory", c->label);
		}
	} else if (!strcmp(c->metric, "adam")) {
		s->kind = K_ADAM;
		if (c->m < 1 || c->m > 100000000000LL) {
			free(s);
			return mt_error_set(err, MT_EINVAL, "host %s: m (parameters) must be 1..1e11",
					    c->label);
		}
		s->n = (size_t)c->m;
		s->p = alloc64(s->n * sizeof(float));
		s->g = alloc64(s->n * sizeof(float));
		s->m = alloc64(s->n * sizeof(float));
		s->v = alloc64(s->n * sizeof(float));
		if (!s->p || !s->g || !s->m || !s->v) {
			host_teardown(s);
			return mt_error_set(err, MT_ENOMEM, "host %s: out of memory", c->label);
		}
	} else {
		free(s);
		return mt_error_set(err, MT_EUNSUPPORTED,
				    "host %s: metric \"%s\" needs the CUDA backend", c->label,
				    c->metric);
	}
	pool_start(s, pool_size(ctx, s->n));
	pool_dispatch(s, fill_range);
	if (s->kind == K_ADAM) {
		s->nsamp = s->n < ADAM_SAMPLES ? (int)s->n : ADAM_SAMPLES;
		for (i = 0; i < s->nsamp; i++) {
			size_t x = (size_t)(((double)i + 0.5) * (double)s->n / s->nsamp);

			s->sidx[i] = x < s->n ? x : s->n - 1;
			s->s0[0][i] = s->p[s->sidx[i]];
			s->s0[1][i] = s->g[s->sidx[i]];
			s->s0[2][i] = s->m[s->sidx[i]];
			s->s0[3][i] = s->v[s->sidx[i]];
		}
	}
	papi_setup(s);
	c->inner = mt_cpu_calibrate(ctx, host_ops, s);
	if (s->kind == K_MEMBW)
		memset(s->a, 0, s->n * sizeof(double)); /* a run that writes nothing fails */
	*state = s;
	return MT_OK;
}

static int host_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct host_state *s = state;
	int counting = 0;
	double t0, t1;

	(void)err;
	if (s->papi_es != PAPI_NULL) {
		int rc = PAPI_start(s->papi_es);

		if (rc == PAPI_OK) {
			counting = 1;
		} else {
			snprintf(s->papi_why, sizeof(s->papi_why), "PAPI_start: %s", PAPI_strerror(rc));
			papi_teardown(s);
			s->papi_none = 1;
		}
	}
	t0 = mt_now();
	one_pass(s, c->inner);
	t1 = mt_now();
	if (counting) {
		long long v[PAPI_MAXEV];
		int i;

		if (PAPI_stop(s->papi_es, v) == PAPI_OK) {
			for (i = 0; i < s->papi_n; i++)
				s->papi_val[i] += v[i];
			s->papi_ops += c->inner;
		}
	}
	*seconds = t1 - t0;
	return MT_OK;
}

static int verify_membw(const struct host_state *s, const struct mt_case *c, struct mt_error *err)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		double want = hash_unit(i, 1) + s->scalar * hash_unit(i, 2);

		if (!(fabs(s->a[i] - want) <= 1e-15 * (1 + fabs(want))))
			return mt_error_set(err, MT_EINVAL, "host %s: a[%zu] = %.17g, expected %.17g",
					    c->label, i, s->a[i], want);
	}
	return MT_OK;
}

/* Replay every step taken so far on the sampled parameters, in double. */
static int verify_adam(const struct host_state *s, const struct mt_case *c, struct mt_error *err)
{
	double tol = (double)(s->step + 1) * 4 * FLT_EPSILON;
	int i;

	for (i = 0; i < s->nsamp; i++) {
		double p = s->s0[0][i], g = s->s0[1][i], m = s->s0[2][i], v = s->s0[3][i];
		double b1t = 1, b2t = 1;
		size_t x = s->sidx[i];
		long long t;

		for (t = 1; t <= s->step; t++) {
			double bc1 = 1 - (b1t *= BETA1), bc2 = 1 - (b2t *= BETA2);

			p *= 1 - (double)LR * WD;
			m = BETA1 * m + (1 - (double)BETA1) * g;
			v = BETA2 * v + (1 - (double)BETA2) * g * g;
			p -= LR / bc1 * m / (sqrt(v) / sqrt(bc2) + EPS);
		}
		if (!(fabs(s->p[x] - p) <= tol * (1 + fabs(p))) ||
		    !(fabs(s->m[x] - m) <= tol * (1 + fabs(m))) ||
		    !(fabs(s->v[x] - v) <= tol * (1 + fabs(v))))
			return mt_error_set(err, MT_EINVAL,
					    "host %s: parameter %zu after %lld steps is p %.9g m %.9g v "
					    "%.9g, expected %.9g %.9g %.9g",
					    c->label, x, s->step, (double)s->p[x], (double)s->m[x],
					    (double)s->v[x], p, m, v);
	}
	return MT_OK;
}

static int host_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	const struct host_state *s = state;

	return s->kind == K_MEMBW ? verify_membw(s, c, err) : verify_adam(s, c, err);
}

/* Append `src` when it fits whole, so that the members stay valid JSON. */
static void host_put(char *buf, size_t n, const char *src)
{
	size_t len = strlen(buf), add = strlen(src);

	if (len + add < n)
		memcpy(buf + len, src, add + 1);
}

static void host_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	const struct host_state *s = state;
	char part[256], why[128];
	size_t i, j = 0;
	int e;

	(void)c;
	if (!n)
		return;
	buf[0] = 0;
	snprintf(part, sizeof(part), "\"threads\": %d", s->pool.n);
	host_put(buf, n, part);
	for (i = 0; s->papi_why[i] && j + 1 < sizeof(why); i++)
		if (s->papi_why[i] != '"' && s->papi_why[i] != '\\')
			why[j++] = s->papi_why[i];
	why[j] = 0;
	if (s->papi_n > 0 && !s->papi_none) {
		host_put(buf, n, ", \"papi\": {");
		for (e = 0; e < s->papi_n; e++) {
			snprintf(part, sizeof(part), "%s\"%s\": %lld", e ? ", " : "", s->papi_name[e],
				 s->papi_val[e]);
			host_put(buf, n, part);
		}
		snprintf(part, sizeof(part), "}, \"papi_ops\": %lld", s->papi_ops);
		host_put(buf, n, part);
		if (why[0]) {
			snprintf(part, sizeof(part), ", \"papi_hw_unavailable\": \"%s\"", why);
			host_put(buf, n, part);
		}
	} else {
		snprintf(part, sizeof(part), ", \"papi_unavailable\": \"%s\"",
			 why[0] ? why : "no counters");
		host_put(buf, n, part);
	}
}

void mt_host_cpu_damage(void *state)
{
	struct host_state *s = state;

	if (s->kind == K_MEMBW)
		s->a[s->n / 2] += 1.0;
	else
		s->p[s->sidx[s->nsamp / 2]] += 1.0f;
}

const struct mt_probe_ops mt_host_cpu = {
	.applicable = host_cpu_applicable,
	.plan = mt_plan_host,
	.setup = host_setup,
	.run = host_run,
	.verify = host_verify,
	.teardown = host_teardown,
	.extra = host_extra,
};

/* ------------------------------------------------- CUDA backend: forwarding */

/* The wrapper state says who owns the inner state (teardown has no case). */
struct hc_state {
	int cuda;
	void *inner;
};

static int is_launch(const struct mt_case *c)
{
	return !strncmp(c->metric, "launch", 6);
}

static const struct mt_probe_ops *launch_ops(struct mt_error *err)
{
	return mt_cuda_ops("launch", err);
}

static int hc_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	const struct mt_probe_ops *o = launch_ops(err);

	if (!o)
		return err && err->code ? err->code : MT_EUNSUPPORTED;
	return o->applicable ? o->applicable(ctx, err) : MT_OK;
}

static int hc_open(struct mt_probe_ctx *ctx, struct mt_error *err)
{
	const struct mt_probe_ops *o = launch_ops(err);

	if (!o)
		return err && err->code ? err->code : MT_EUNSUPPORTED;
	return o->open ? o->open(ctx, err) : MT_OK;
}

static void hc_close(struct mt_probe_ctx *ctx)
{
	const struct mt_probe_ops *o = launch_ops(NULL);

	if (o && o->close)
		o->close(ctx);
}

static int hc_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		    struct mt_error *err)
{
	struct hc_state *w = calloc(1, sizeof(*w));
	int rc;

	*state = NULL;
	if (!w)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	w->cuda = is_launch(c);
	if (w->cuda) {
		const struct mt_probe_ops *o = launch_ops(err);

		rc = o ? o->setup(ctx, c, &w->inner, err)
		       : (err && err->code ? err->code : MT_EUNSUPPORTED);
	} else {
		rc = host_setup(ctx, c, &w->inner, err);
	}
	if (rc) {
		free(w);
		return rc;
	}
	*state = w;
	return MT_OK;
}

static int hc_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct hc_state *w = state;

	return w->cuda ? launch_ops(NULL)->run(w->inner, c, seconds, err)
		       : host_run(w->inner, c, seconds, err);
}

static int hc_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	struct hc_state *w = state;
	const struct mt_probe_ops *o;

	if (!w->cuda)
		return host_verify(w->inner, c, err);
	o = launch_ops(NULL);
	return o->verify ? o->verify(w->inner, c, err) : MT_OK;
}

static void hc_teardown(void *state)
{
	struct hc_state *w = state;

	if (!w)
		return;
	if (w->cuda)
		launch_ops(NULL)->teardown(w->inner);
	else
		host_teardown(w->inner);
	free(w);
}

static void hc_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	struct hc_state *w = state;
	const struct mt_probe_ops *o;

	if (!w->cuda) {
		host_extra(w->inner, c, buf, n);
		return;
	}
	o = launch_ops(NULL);
	if (o->extra)
		o->extra(w->inner, c, buf, n);
}

const struct mt_probe_ops mt_host_cuda = {
	.applicable = hc_applicable,
	.open = hc_open,
	.close = hc_close,
	.plan = mt_plan_host,
	.setup = hc_setup,
	.run = hc_run,
	.verify = hc_verify,
	.teardown = hc_teardown,
	.extra = hc_extra,
};

/* ------------------------------------------------------- record, profile */

static void host_describe(const struct mt_case *c, struct jw *w)
{
	jw_str(w, "metric", c->metric);
	if (c->m)
		jw_int(w, "params", c->m);
	if (c->bytes > 0)
		jw_int(w, "bytes", (int64_t)c->bytes);
}

/* The profile's host section: launch overhead, optimizer throughput, memory
 * bandwidth (the best triad also stands for the device memory and the link
 * of the CPU backend). */
static int host_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *c = mt_calib_case(b, g);
	const char *m = mt_jget_str(c, "metric");
	struct mt_stats st;
	double tmed;
	int rc;

	if ((rc = mt_calib_aggregate(b, g, &st, &tmed, err)))
		return rc;
	if (!strcmp(m, "launch")) {
		mt_profile_host(b->doc, "launch_overhead_us", tmed, b->src);
	} else if (!strcmp(m, "adam") && mt_jget_num(c, "params", 0) > 0 && tmed > 0) {
		mt_profile_host(b->doc, "optimizer_gparams_per_s",
				mt_jget_num(c, "params", 0) / (tmed * 1e-6) / 1e9, b->src);
	} else if (!strcmp(m, "membw")) {
		if (st.median > b->membw_gbps)
			b->membw_gbps = st.median;
		mt_profile_host(b->doc, "memory_gbps", st.median, b->src);
	}
	return MT_OK;
}

const struct mt_probe mt_probe_host = {
	.name = "host",
	.summary = "kernel launch overhead, host memory bandwidth, CPU Adam step, PAPI counters",
	.kind = MT_PROBE_DEVICE,
	.ops = { &mt_host_cpu, &mt_host_cuda },
	.describe = host_describe,
	.to_profile = host_to_profile,
};
