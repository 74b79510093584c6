/* SPDX-License-Identifier: MIT */
/* gemm: the GEMM probe's plan (both backends) and its CPU backend, OpenBLAS
 * sgemm (probes/backends.h).
 *
 * One case is D[m x n] = A[m x k] * B[k x n], row-major, counted as 2mnk
 * FLOPs.  Model shapes are the GEMMs of one transformer layer as Megatron-LM
 * runs them with tensor parallelism `tp` (column-parallel QKV and MLP-up
 * split n by tp, row-parallel projections split k), with m the tokens of a
 * micro-batch (all of them: sequence parallelism gathers them first).
 */
#include "backends.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perfmodel/cluster.h"
#include "../perfmodel/model.h"
#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "calibrate.h"
#include "gpu.h"
#include "../perfmodel/profile.h"

#define CUDA_MODEL_TOKENS 4096 /* micro-batch x sequence of the model shapes */
#define CPU_MODEL_TOKENS 256   /* the same on the CPU backend */
#define CPU_DIM_CAP 2048       /* CPU: n and k capped, one op < ~50 ms on 2 cores */

/* ------------------------------------------------------------------ plan */

static double gemm_elem_bytes(int dt)
{
	switch (dt) {
	case MT_DT_FP8: return 1;
	case MT_DT_BF16: case MT_DT_FP16: return 2;
	default: return 4;
	}
}

/* A, B and D; FP8 GEMMs write BF16 (as Transformer Engine does). */
static double operand_bytes(int dt, double m, double n, double k)
{
	double out = dt == MT_DT_FP8 ? 2 : gemm_elem_bytes(dt);

	return (m * k + k * n) * gemm_elem_bytes(dt) + m * n * out;
}

struct shape {
	const char *origin; /* mt_case.origin */
	const char *name;   /* in the label */
	long long m, n, k;
};

#define MAX_SHAPES 16

static int split(const struct mt_model *md, const char *what, long long v, int tp,
		 long long *out, struct mt_error *err)
{
	if (v % tp)
		return mt_error_set(err, MT_EINVAL,
				    "model %s: %s (%lld) is not divisible by tensor parallel size %d",
				    md->name, what, v, tp);
	*out = v / tp;
	return MT_OK;
}

static void gemm_put(struct shape *s, int *n, const char *origin, const char *name, long long m,
		long long nn, long long k)
{
	if (*n >= MAX_SHAPES)
		return;
	s[*n].origin = origin;
	s[*n].name = name;
	s[*n].m = m;
	s[*n].n = nn;
	s[*n].k = k;
	(*n)++;
}

/* The GEMMs of one layer of `md` for `tokens` tokens at tensor parallel `tp`.
 * Expert GEMMs use expert tensor parallelism = tp (Megatron-Core's default)
 * and tokens * topk / experts rows (balanced routing), rounded up to a
 * multiple of 16 when `pad16` (FP8 GEMMs need it; Megatron pads the same). */
static int model_shapes(const struct mt_model *md, int tp, long long tokens, int pad16,
			struct shape *s, int *ns, struct mt_error *err)
{
	long long h = md->hidden, a = 0, b = 0;
	int rc;

	*ns = 0;
	if (md->mla) {
		/* Multi-latent attention: the down projections are replicated
		 * (not split by TP), the up projections column-parallel. */
		long long qk = md->qk_nope_dim + md->qk_rope_dim;

		if ((rc = split(md, "attention heads", md->heads, tp, &a, err)))
			return rc;
		if (md->q_lora_rank > 0) {
			gemm_put(s, ns, "qkv", "q down", tokens, md->q_lora_rank, h);
			gemm_put(s, ns, "qkv", "q up", tokens, a * qk, md->q_lora_rank);
		} else {
			gemm_put(s, ns, "qkv", "q", tokens, a * qk, h);
		}
		gemm_put(s, ns, "qkv", "kv down", tokens, md->kv_lora_rank + md->qk_rope_dim, h);
		gemm_put(s, ns, "qkv", "kv up", tokens, a * (md->qk_nope_dim + md->v_head_dim),
		    md->kv_lora_rank);
		gemm_put(s, ns, "attn_out", "attn out", tokens, h, a * md->v_head_dim);
	} else {
		if ((rc = split(md, "attention heads", md->heads, tp, &a, err)) ||
		    (rc = split(md, "key/value heads", md->kv_heads, tp, &b, err)))
			return rc;
		gemm_put(s, ns, "qkv", "qkv", tokens, (a + 2 * b) * md->head_dim, h);
		gemm_put(s, ns, "attn_out", "attn out", tokens, h, a * md->head_dim);
	}
	if (md->experts == 0 || md->moe_layers < md->layers) {
		if ((rc = split(md, "ffn size", md->ffn, tp, &a, err)))
			return rc;
		gemm_put(s, ns, "mlp_up", "mlp up", tokens, (md->gated ? 2 : 1) * a, h);
		gemm_put(s, ns, "mlp_down", "mlp down", tokens, h, a);
	}
	if (md->experts > 0) {
		long long routed = (tokens * md->topk + md->experts - 1) / md->experts;

		if (pad16)
			routed = (routed + 15) / 16 * 16;
		if (routed < 1)
			routed = 1;
		if ((rc = split(md, "expert ffn size", md->moe_ffn, tp, &a, err)))
			return rc;
		gemm_put(s, ns, "expert", "expert up", routed, (md->gated ? 2 : 1) * a, h);
		gemm_put(s, ns, "expert", "expert down", routed, h, a);
		if (md->shared_ffn > 0) {
			if ((rc = split(md, "shared expert ffn size", md->shared_ffn, tp, &a, err)))
				return rc;
			gemm_put(s, ns, "mlp_up", "shared up", tokens, (md->gated ? 2 : 1) * a, h);
			gemm_put(s, ns, "mlp_down", "shared down", tokens, h, a);
		}
	}
	return MT_OK;
}

static struct mt_case *gemm_add(struct mt_plan_buf *p, int dt, long long m, long long n, long long k,
			   const char *origin)
{
	struct mt_case *c = mt_plan_push(p);

	if (!c)
		return NULL;
	c->dtype = dt;
	c->m = m;
	c->n = n;
	c->k = k;
	c->flops = 2.0 * (double)m * (double)n * (double)k;
	c->bytes = operand_bytes(dt, (double)m, (double)n, (double)k);
	snprintf(c->origin, sizeof(c->origin), "%s", origin);
	snprintf(c->label, sizeof(c->label), "%s %lldx%lldx%lld", mt_dtype_name(dt), m, n, k);
	return c;
}

static void add_sweep(struct mt_plan_buf *p, const struct mt_probe_opts *o, int dt,
		      const int *sq, int nsq, const int (*ns)[3], int nns)
{
	int i;

	for (i = 0; i < nsq; i++)
		if (mt_plan_in_limits(o, operand_bytes(dt, sq[i], sq[i], sq[i])))
			gemm_add(p, dt, sq[i], sq[i], sq[i], "sweep");
	for (i = 0; i < nns; i++)
		if (mt_plan_in_limits(o, operand_bytes(dt, ns[i][0], ns[i][1], ns[i][2])))
			gemm_add(p, dt, ns[i][0], ns[i][1], ns[i][2], "sweep");
}

int mt_plan_gemm(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		 struct mt_error *err)
{
	static const int cuda_smoke[] = { 1024, 2048 };
	static const int cuda_quick[] = { 2048, 4096, 8192 };
	static const int cuda_normal[] = { 1024, 2048, 4096, 8192, 16384 };
	static const int cuda_full[] = { 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384 };
	static const int cuda_ns[][3] = { { 16384, 4096, 4096 }, { 4096, 16384, 4096 },
					  { 4096, 4096, 16384 }, { 8192, 1024, 8192 } };
	static const int cpu_smoke[] = { 64, 128 };
	static const int cpu_quick[] = { 256, 512, 1024 };
	static const int cpu_normal[] = { 128, 256, 512, 1024 };
	static const int cpu_full[] = { 128, 192, 256, 384, 512, 768, 1024 };
	static const int cpu_ns[][3] = { { 1024, 256, 1024 }, { 256, 1024, 1024 },
					 { 1024, 1024, 256 } };
	const struct mt_probe_opts *o = ctx ? ctx->opts : NULL;
	struct mt_plan_buf p = { 0 };
	const int *sq;
	int nsq, nns = 0, dt, cuda, tp, rc = MT_OK;
	const int (*ns)[3] = NULL;
	unsigned dtypes;

	*cases = NULL;
	*n = 0;
	if (!o)
		return mt_error_set(err, MT_EINVAL, "gemm plan: no options");
	cuda = o->backend == MT_BACKEND_CUDA;
	tp = o->tp > 0 ? o->tp : 1;
	if (cuda) {
		dtypes = o->dtypes ? (unsigned)o->dtypes
				   : (1u << MT_DT_BF16) | (1u << MT_DT_FP8) | (1u << MT_DT_TF32);
		switch (o->depth) {
		case MT_DEPTH_SMOKE: sq = cuda_smoke; nsq = 2; break;
		case MT_DEPTH_QUICK: sq = cuda_quick; nsq = 3; break;
		case MT_DEPTH_FULL: sq = cuda_full; nsq = 9; ns = cuda_ns; nns = 4; break;
		default: sq = cuda_normal; nsq = 5; break;
		}
	} else {
		if (o->dtypes && !(o->dtypes & (1 << MT_DT_FP32)))
			return mt_error_set(err, MT_EUNSUPPORTED,
					    "gemm: the CPU backend runs fp32 only (OpenBLAS sgemm)");
		dtypes = 1u << MT_DT_FP32;
		switch (o->depth) {
		case MT_DEPTH_SMOKE: sq = cpu_smoke; nsq = 2; break;
		case MT_DEPTH_QUICK: sq = cpu_quick; nsq = 3; break;
		case MT_DEPTH_FULL: sq = cpu_full; nsq = 7; ns = cpu_ns; nns = 3; break;
		default: sq = cpu_normal; nsq = 4; break;
		}
	}
	for (dt = 0; dt < MT_DT_N; dt++)
		if (dtypes & (1u << dt))
			add_sweep(&p, o, dt, sq, nsq, ns, nns);

	if (o->model && *o->model) {
		struct mt_model *md = malloc(sizeof(*md));
		struct shape s[MAX_SHAPES];
		int i, nsh = 0, fp8;

		if (!md) {
			free(p.v);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
		rc = mt_model_load(o->model, md, err);
		for (dt = 0; !rc && dt < MT_DT_N; dt++) {
			/* model shapes in the training precisions (tf32/fp32
			 * only when nothing else was asked for) */
			if (!(dtypes & (1u << dt)))
				continue;
			if ((dt == MT_DT_TF32 || dt == MT_DT_FP32) &&
			    (dtypes & ((1u << MT_DT_BF16) | (1u << MT_DT_FP16) | (1u << MT_DT_FP8))))
				continue;
			fp8 = dt == MT_DT_FP8;
			rc = model_shapes(md, tp, cuda ? CUDA_MODEL_TOKENS : CPU_MODEL_TOKENS, fp8, s,
					  &nsh, err);
			for (i = 0; !rc && i < nsh; i++) {
				long long m = s[i].m, nn = s[i].n, k = s[i].k;
				struct mt_case *c;

				if (!cuda) {
					m = m > CPU_DIM_CAP ? CPU_DIM_CAP : m;
					nn = nn > CPU_DIM_CAP ? CPU_DIM_CAP : nn;
					k = k > CPU_DIM_CAP ? CPU_DIM_CAP : k;
				}
				if (!(c = gemm_add(&p, dt, m, nn, k, s[i].origin)))
					break;
				if (m != s[i].m || nn != s[i].n || k != s[i].k)
					snprintf(c->label, sizeof(c->label),
						 "%s %lldx%lldx%lld %s, capped from %lldx%lldx%lld",
						 mt_dtype_name(dt), m, nn, k, s[i].name, s[i].m,
						 s[i].n, s[i].k);
				else
					snprintf(c->label, sizeof(c->label), "%s %lldx%lldx%lld %s",
						 mt_dtype_name(dt), m, nn, k, s[i].name);
				if (mt_plan_find(&p, c->label) != c)
					p.n--; /* the same GEMM twice in a layer */
			}
		}
		free(md);
		if (rc) {
			free(p.v);
			return rc;
		}
	}
	return mt_plan_finish(&p, "gemm", o, cases, n, err);
}

/* ------------------------------------------------------------ CPU backend */

struct gemm_state {
	int m, n, k;
	float *a, *b, *d;
};

static int gemm_cpu_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	(void)ctx;
	(void)err;
	return MT_OK; /* OpenBLAS is linked in */
}

static void sgemm_once(const struct gemm_state *s)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s->m, s->n, s->k, 1.0f, s->a, s->k,
		    s->b, s->n, 0.0f, s->d, s->n);
}

static void gemm_ops(void *state, int count)
{
	int i;

	for (i = 0; i < count; i++)
		sgemm_once(state);
}

static void gemm_teardown(void *state)
{
	struct gemm_state *s = state;

	if (!s)
		return;
	free(s->a);
	free(s->b);
	free(s->d);
	free(s);
}

static int gemm_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		      struct mt_error *err)
{
	struct gemm_state *s;

	*state = NULL;
	if (ctx && ctx->world && ctx->world->local_size > 1)
		openblas_set_num_threads(mt_cpu_threads(ctx));
	if (c->dtype != MT_DT_FP32)
		return mt_error_set(err, MT_EUNSUPPORTED, "gemm %s: the CPU backend runs fp32 only",
				    c->label);
	if (c->m < 1 || c->n < 1 || c->k < 1 || c->m > 65536 || c->n > 65536 || c->k > 65536)
		return mt_error_set(err, MT_EINVAL, "gemm %s: m, n and k must be 1..65536",
				    c->label);
	if (!(s = calloc(1, sizeof(*s))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	s->m = (int)c->m;
	s->n = (int)c->n;
	s->k = (int)c->k;
	s->a = malloc((size_t)s->m * (size_t)s->k * sizeof(float));
	s->b = malloc((size_t)s->k * (size_t)s->n * sizeof(float));
	s->d = malloc((size_t)s->m * (size_t)s->n * sizeof(float));
	if (!s->a || !s->b || !s->d) {
		gemm_teardown(s);
		return mt_error_set(err, MT_ENOMEM, "gemm %s: out of memory", c->label);
	}
	mt_fill_float(s->a, (size_t)s->m * (size_t)s->k, 1);
	mt_fill_float(s->b, (size_t)s->k * (size_t)s->n, 2);
	mt_fill_float(s->d, (size_t)s->m * (size_t)s->n, 3);
	/* the first call starts the BLAS threads */
	c->inner = mt_cpu_calibrate(ctx, gemm_ops, s);
	*state = s;
	return MT_OK;
}

static int gemm_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct gemm_state *s = state;
	double t0;
	int i;

	(void)err;
	t0 = mt_now();
	for (i = 0; i < c->inner; i++)
		sgemm_once(s);
	*seconds = mt_now() - t0;
	return MT_OK;
}

/* Two independent checks in double precision, with a bound on fp32
 * rounding of 4 (sqrt(k) + 1) u times the sum of |terms| (a probabilistic
 * bound, far above what blocked FMA accumulation produces):
 *  - every row at once (Freivalds): D x against A (B x) for a positive
 *    random x, so one wrong element anywhere shows;
 *  - a sample of elements against their dot products. */
static int gemm_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	const struct gemm_state *s = state;
	size_t m = (size_t)s->m, n = (size_t)s->n, k = (size_t)s->k, i, j, l;
	double *x = malloc(n * sizeof(double)), *y = malloc(k * sizeof(double));
	double *ya = malloc(k * sizeof(double));
	double f = 4.0 * (sqrt((double)k) + 1.0) * FLT_EPSILON;
	uint64_t rng = 77;
	int rc = MT_OK, t;

	if (!x || !y || !ya) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	for (j = 0; j < n; j++)
		x[j] = 0.75 + 0.25 * mt_rng_float(&rng);
	for (l = 0; l < k; l++) {
		double v = 0, va = 0;

		for (j = 0; j < n; j++) {
			v += (double)s->b[l * n + j] * x[j];
			va += fabs((double)s->b[l * n + j]) * x[j];
		}
		y[l] = v;
		ya[l] = va;
	}
	for (i = 0; i < m && !rc; i++) {
		double want = 0, bound = 0, got = 0;

		for (l = 0; l < k; l++) {
			want += (double)s->a[i * k + l] * y[l];
			bound += fabs((double)s->a[i * k + l]) * ya[l];
		}
		for (j = 0; j < n; j++)
			got += (double)s->d[i * n + j] * x[j];
		if (!(fabs(got - want) <= f * bound + 1e-30))
			rc = mt_error_set(err, MT_EINVAL,
					  "gemm %s: row %zu of D is wrong (D x = %.9g, A B x = %.9g)",
					  c->label, i, got, want);
	}
	for (t = 0; t < 64 && !rc; t++) {
		double want = 0, bound = 0, got;

		i = t == 0 ? 0 : t == 1 ? m - 1 : (size_t)(mt_rng_next(&rng) % m);
		j = t == 0 ? 0 : t == 1 ? n - 1 : (size_t)(mt_rng_next(&rng) % n);
		for (l = 0; l < k; l++) {
			double p = (double)s->a[i * k + l] * (double)s->b[l * n + j];

			want += p;
			bound += fabs(p);
		}
		got = s->d[i * n + j];
		if (!(fabs(got - want) <= f * bound + 1e-30))
			rc = mt_error_set(err, MT_EINVAL, "gemm %s: D[%zu][%zu] = %.9g, expected %.9g",
					  c->label, i, j, got, want);
	}
out:
	free(x);
	free(y);
	free(ya);
	return rc;
}

static void gemm_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	const char *cfg = openblas_get_config();
	char clean[128];
	size_t i, j = 0;

	(void)state;
	(void)c;
	for (i = 0; cfg && cfg[i] && j + 1 < sizeof(clean); i++)
		if (cfg[i] != '"' && cfg[i] != '\\' && (unsigned char)cfg[i] >= 0x20)
			clean[j++] = cfg[i];
	clean[j] = 0;
	snprintf(buf, n, "\"blas\": \"%s\", \"blas_threads\": %d", clean,
		 openblas_get_num_threads());
}

void mt_gemm_cpu_damage(void *state)
{
	struct gemm_state *s = state;

	s->d[(size_t)(s->m / 2) * (size_t)s->n + (size_t)(s->n / 2)] += 1000.0f;
}

const struct mt_probe_ops mt_gemm_cpu = {
	.applicable = gemm_cpu_applicable,
	.plan = mt_plan_gemm,
	.setup = gemm_setup,
	.run = gemm_run,
	.verify = gemm_verify,
	.teardown = gemm_teardown,
	.extra = gemm_extra,
};

/* ------------------------------------------------------- record, profile */

static void gemm_describe(const struct mt_case *c, struct jw *w)
{
	jw_str(w, "dtype", mt_dtype_name(c->dtype));
	jw_int(w, "m", c->m);
	jw_int(w, "n", c->n);
	jw_int(w, "k", c->k);
}

/* One GEMM shape of one type; the best rate of each type, for the peaks of
 * an unknown device. */
static int gemm_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *c = mt_calib_case(b, g);
	int dt = mt_dtype_parse(mt_jget_str(c, "dtype")), j, rc;
	struct mt_stats st;
	double tmed;

	if ((rc = mt_calib_aggregate(b, g, &st, &tmed, err)))
		return rc;
	for (j = 0; dt >= 0 && j < mt_calib_size(b, g); j++) {
		double t = mt_jget_num(mt_calib_record(b, g, j), "tflops", 0);

		if (t > b->best_tflops[dt])
			b->best_tflops[dt] = t;
	}
	mt_profile_gemm(b->doc, mt_jget_str(c, "dtype"), mt_jget_num(c, "m", 0),
			mt_jget_num(c, "n", 0), mt_jget_num(c, "k", 0), st.median, &st, b->src);
	return MT_OK;
}

const struct mt_probe mt_probe_gemm = {
	.name = "gemm",
	.summary = "matrix multiply throughput (cuBLASLt BF16/FP8/TF32; CPU: OpenBLAS FP32)",
	.kind = MT_PROBE_DEVICE,
	.ops = { &mt_gemm_cpu, &mt_cuda_forward },
	.describe = gemm_describe,
	.to_profile = gemm_to_profile,
};
