/* SPDX-License-Identifier: MIT */
/* The plans of the gemm, attention, offload and host probes (both backends)
 * and their CPU backends run directly: real work, plausible rates, results
 * verified, damaged results caught, the attention backward against finite
 * differences of an independent forward. */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include <cjson/cJSON.h>

#include "../../probes/backends.h"
#include "../../perfmodel/cluster.h"

/* 2 cores x 5 GHz x 64 flop/cycle: far above this machine (or any 2-core
 * slice); a CPU rate above it means the clock or the FLOP count is wrong */
#define CPU_PEAK_TFLOPS (2 * 5e9 * 64 / 1e12)

static struct mt_world world = { 0, 1, 0, 1, 0, 1, "test", 0 };

static struct mt_probe_opts opts(int backend, int depth)
{
	struct mt_probe_opts o;

	memset(&o, 0, sizeof(o));
	o.backend = backend;
	o.depth = depth;
	return o;
}

static struct mt_probe_ctx ctx_of(const struct mt_probe_opts *o)
{
	struct mt_probe_ctx c;

	memset(&c, 0, sizeof(c));
	c.opts = o;
	c.world = &world;
	c.ndevices = 1;
	return c;
}

typedef int (*plan_fn)(const struct mt_probe_ctx *, struct mt_case **, int *, struct mt_error *);

static struct mt_case *plan(plan_fn fn, const struct mt_probe_opts *o, int *n)
{
	struct mt_probe_ctx ctx = ctx_of(o);
	struct mt_error err = MT_ERROR_INIT;
	struct mt_case *c = NULL;

	if (fn(&ctx, &c, n, &err))
		fail_msg("plan: %s", err.msg);
	return c;
}

static const struct mt_case *find(const struct mt_case *c, int n, const char *label)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(c[i].label, label))
			return &c[i];
	fail_msg("no case \"%s\"", label);
	return NULL;
}

static int count_origin(const struct mt_case *c, int n, const char *origin)
{
	int i, k = 0;

	for (i = 0; i < n; i++)
		k += !strcmp(c[i].origin, origin);
	return k;
}

/* ------------------------------------------------------------------ plans */

static void plans_every_depth_and_backend(void **state)
{
	static const plan_fn fns[] = { mt_plan_gemm, mt_plan_attention, mt_plan_offload,
				       mt_plan_host };
	static const char *const names[] = { "gemm", "attention", "offload", "host" };
	int f, b, d, i, j;

	(void)state;
	for (f = 0; f < 4; f++)
		for (b = 0; b < MT_BACKEND_N; b++)
			for (d = MT_DEPTH_QUICK; d <= MT_DEPTH_SMOKE; d++) {
				struct mt_probe_opts o = opts(b, d);
				int n = 0;
				struct mt_case *c = plan(fns[f], &o, &n);

				if (n < 1)
					fail_msg("%s backend %d depth %d: empty plan", names[f], b, d);
				for (i = 0; i < n; i++) {
					assert_true(c[i].label[0] != 0);
					assert_true(c[i].origin[0] != 0);
					assert_true(c[i].inner >= 1);
					if (f < 2)
						assert_true(c[i].flops > 0);
					if (f == 2)
						assert_true(c[i].moved > 0 && c[i].moved == c[i].bytes);
					for (j = 0; j < i; j++)
						if (!strcmp(c[i].label, c[j].label))
							fail_msg("%s: label \"%s\" twice", names[f], c[i].label);
				}
				free(c);
			}
}

static void plans_respect_size_limits(void **state)
{
	static const plan_fn fns[] = { mt_plan_gemm, mt_plan_attention, mt_plan_offload,
				       mt_plan_host };
	struct mt_probe_opts o;
	struct mt_probe_ctx ctx;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_case *c;
	int f, b, i, n, kept;

	(void)state;
	for (f = 0; f < 4; f++)
		for (b = 0; b < MT_BACKEND_N; b++) {
			/* the middle of the full sweep's sizes */
			double lo, hi;

			o = opts(b, MT_DEPTH_FULL);
			c = plan(fns[f], &o, &n);
			lo = hi = c[0].bytes;
			for (i = 0; i < n; i++) {
				lo = c[i].bytes < lo ? c[i].bytes : lo;
				hi = c[i].bytes > hi ? c[i].bytes : hi;
			}
			free(c);
			o.min_bytes = lo * 1.5;
			o.max_bytes = hi / 1.5;
			if (o.min_bytes > o.max_bytes)
				continue;
			c = plan(fns[f], &o, &n);
			for (i = kept = 0; i < n; i++) {
				if (!strcmp(c[i].metric, "launch") || !strcmp(c[i].metric, "launch_jitter"))
					continue;
				kept++;
				if (c[i].bytes < o.min_bytes || c[i].bytes > o.max_bytes)
					fail_msg("probe %d backend %d: \"%s\" (%.0f bytes) is outside "
						 "%.0f..%.0f", f, b, c[i].label, c[i].bytes, o.min_bytes,
						 o.max_bytes);
			}
			assert_true(kept > 0);
			free(c);
		}
	/* nothing left: an error naming the limits */
	o = opts(MT_BACKEND_CPU, MT_DEPTH_QUICK);
	o.max_bytes = 16;
	ctx = ctx_of(&o);
	for (f = 0; f < 4; f++) {
		c = NULL;
		assert_int_equal(fns[f](&ctx, &c, &n, &err), MT_EINVAL);
		assert_null(c);
		assert_non_null(strstr(err.msg, "size limits"));
	}
}

static void gemm_plan_dtypes_and_sizes(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CUDA, MT_DEPTH_QUICK);
	struct mt_probe_ctx ctx;
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_case *x;
	struct mt_case *c;
	int n, i;

	(void)state;
	/* CUDA default: bf16, fp8, tf32 at 2048, 4096, 8192 */
	c = plan(mt_plan_gemm, &o, &n);
	assert_int_equal(n, 9);
	x = find(c, n, "bf16 8192x8192x8192");
	assert_int_equal(x->dtype, MT_DT_BF16);
	assert_close(x->flops, 2.0 * 8192 * 8192 * 8192, 1e-12);
	assert_close(x->bytes, 3.0 * 8192 * 8192 * 2, 1e-12);
	x = find(c, n, "fp8 2048x2048x2048");
	assert_close(x->bytes, 2.0 * 2048 * 2048 + 2048.0 * 2048 * 2, 1e-12); /* bf16 out */
	find(c, n, "tf32 4096x4096x4096");
	free(c);
	/* fp16 when asked */
	o.dtypes = 1 << MT_DT_FP16;
	c = plan(mt_plan_gemm, &o, &n);
	assert_int_equal(n, 3);
	for (i = 0; i < n; i++)
		assert_int_equal(c[i].dtype, MT_DT_FP16);
	free(c);
	/* full: every power of two and the 3/2 steps, and non-square shapes */
	o = opts(MT_BACKEND_CUDA, MT_DEPTH_FULL);
	o.dtypes = 1 << MT_DT_BF16;
	c = plan(mt_plan_gemm, &o, &n);
	find(c, n, "bf16 1024x1024x1024");
	find(c, n, "bf16 12288x12288x12288");
	find(c, n, "bf16 16384x16384x16384");
	find(c, n, "bf16 16384x4096x4096");
	free(c);
	/* CPU: fp32 squares */
	o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	c = plan(mt_plan_gemm, &o, &n);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].dtype, MT_DT_FP32);
	find(c, n, "fp32 64x64x64");
	find(c, n, "fp32 128x128x128");
	free(c);
	/* the CPU backend has no bf16 */
	o.dtypes = 1 << MT_DT_BF16;
	ctx = ctx_of(&o);
	c = NULL;
	assert_int_equal(mt_plan_gemm(&ctx, &c, &n, &err), MT_EUNSUPPORTED);
	assert_null(c);
}

/* Megatron's layer GEMMs for llama3-8b at tp = 2 and 4096 tokens. */
static void gemm_model_shapes_dense(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CUDA, MT_DEPTH_QUICK);
	const struct mt_case *x;
	struct mt_case *c;
	int n;

	(void)state;
	o.dtypes = 1 << MT_DT_BF16;
	o.model = "llama3-8b";
	o.tp = 2;
	c = plan(mt_plan_gemm, &o, &n);
	assert_int_equal(n, 3 + 4);
	/* QKV: [tokens x hidden] x [hidden x (32 + 2*8) * 128 / 2] */
	x = find(c, n, "bf16 4096x3072x4096 qkv");
	assert_string_equal(x->origin, "qkv");
	assert_int_equal(x->m, 4096);
	assert_int_equal(x->n, (32 + 2 * 8) * 128 / 2);
	assert_int_equal(x->k, 4096);
	assert_close(x->flops, 2.0 * 4096 * 3072 * 4096, 1e-12);
	/* attention output: row-parallel, k = heads * head_dim / tp */
	x = find(c, n, "bf16 4096x4096x2048 attn out");
	assert_string_equal(x->origin, "attn_out");
	/* SwiGLU up: 2 * ffn / tp; down: k = ffn / tp */
	x = find(c, n, "bf16 4096x14336x4096 mlp up");
	assert_string_equal(x->origin, "mlp_up");
	assert_int_equal(x->n, 2 * 14336 / 2);
	x = find(c, n, "bf16 4096x4096x7168 mlp down");
	assert_string_equal(x->origin, "mlp_down");
	assert_int_equal(count_origin(c, n, "expert"), 0);
	free(c);
}

static void gemm_model_shapes_moe_and_mla(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CUDA, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx;
	struct mt_error err = MT_ERROR_INIT;
	const struct mt_case *x;
	struct mt_case *c;
	int n;

	(void)state;
	o.dtypes = 1 << MT_DT_BF16;
	o.tp = 2;
	/* Mixtral 8x7B: every layer MoE, 8 experts, top-2: 4096 * 2 / 8 rows */
	o.model = "mixtral-8x7b";
	c = plan(mt_plan_gemm, &o, &n);
	x = find(c, n, "bf16 1024x14336x4096 expert up");
	assert_string_equal(x->origin, "expert");
	find(c, n, "bf16 1024x4096x7168 expert down");
	assert_int_equal(count_origin(c, n, "mlp_up"), 0); /* no dense MLP */
	free(c);
	/* Qwen3-30B-A3B: 128 experts, top-8, expert ffn 768; GQA 32/4 */
	o.model = "qwen3-30b-a3b";
	c = plan(mt_plan_gemm, &o, &n);
	find(c, n, "bf16 4096x2560x2048 qkv");
	find(c, n, "bf16 256x768x2048 expert up");
	find(c, n, "bf16 256x2048x384 expert down");
	free(c);
	/* FP8: routed rows padded to a multiple of 16 (4096 * 8 / 128 already is) */
	o.dtypes = 1 << MT_DT_FP8;
	c = plan(mt_plan_gemm, &o, &n);
	find(c, n, "fp8 256x768x2048 expert up");
	free(c);
	/* DeepSeek-V3: MLA projections, dense first layers, shared expert */
	o.dtypes = 1 << MT_DT_BF16;
	o.model = "deepseek-v3";
	c = plan(mt_plan_gemm, &o, &n);
	find(c, n, "bf16 4096x1536x7168 q down");
	find(c, n, "bf16 4096x12288x1536 q up");       /* 64 heads x (128 + 64) */
	find(c, n, "bf16 4096x576x7168 kv down");      /* 512 + 64 */
	find(c, n, "bf16 4096x16384x512 kv up");       /* 64 x (128 + 128) */
	find(c, n, "bf16 4096x7168x8192 attn out");    /* 64 x 128 */
	find(c, n, "bf16 4096x18432x7168 mlp up");     /* dense layers: 2 x 18432 / 2 */
	find(c, n, "bf16 128x2048x7168 expert up");    /* 4096 x 8 / 256 rows */
	find(c, n, "bf16 4096x2048x7168 shared up");
	free(c);
	/* tp must divide the heads */
	o.model = "llama3-8b";
	o.tp = 3;
	ctx = ctx_of(&o);
	c = NULL;
	assert_int_equal(mt_plan_gemm(&ctx, &c, &n, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "tensor parallel size 3"));
	assert_null(c);
	/* an unknown model is an error, not an empty plan */
	o.model = "no-such-model";
	o.tp = 1;
	assert_int_not_equal(mt_plan_gemm(&ctx, &c, &n, &err), MT_OK);
	assert_null(c);
}

static void gemm_cpu_model_shapes_are_capped(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	const struct mt_case *x;
	struct mt_case *c;
	int n, i;

	(void)state;
	o.model = "llama3-8b";
	o.tp = 2;
	c = plan(mt_plan_gemm, &o, &n);
	x = find(c, n, "fp32 256x2048x2048 qkv, capped from 256x3072x4096");
	assert_string_equal(x->origin, "qkv");
	find(c, n, "fp32 256x2048x2048 mlp down, capped from 256x4096x7168");
	for (i = 0; i < n; i++)
		assert_true(c[i].flops <= 2.0 * 256 * 2048 * 2048 || !strcmp(c[i].origin, "sweep"));
	free(c);
}

static void attention_plan_flops_and_model(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CUDA, MT_DEPTH_QUICK);
	const struct mt_case *x;
	struct mt_case *c;
	double f;
	int n, i;

	(void)state;
	c = plan(mt_plan_attention, &o, &n);
	x = find(c, n, "bf16 fwd causal h32/8 d128 s4096");
	assert_int_equal(x->batch * x->seq, 16384);
	f = 4.0 * x->batch * 32 * 4096.0 * 4096 * 128 / 2; /* FlashAttention: causal halved */
	assert_close(x->flops, f, 1e-12);
	x = find(c, n, "bf16 bwd causal h32/8 d128 s4096");
	assert_close(x->flops, 2.5 * f, 1e-12);
	x = find(c, n, "bf16 fwd full h32/8 d128 s2048");
	assert_close(x->flops, 4.0 * 8 * 32 * 2048.0 * 2048 * 128, 1e-12);
	for (i = 0; i < n; i++)
		assert_true(c[i].seq == 2048 || c[i].seq == 4096 || c[i].seq == 8192);
	free(c);
	/* normal: head_dim 64 and 128, GQA and MHA */
	o.depth = MT_DEPTH_NORMAL;
	c = plan(mt_plan_attention, &o, &n);
	find(c, n, "bf16 fwd full h32/32 d64 s16384");
	find(c, n, "bf16 bwd causal h32/8 d128 s1024");
	free(c);
	/* llama3-8b at tp 2: 16 query heads, 4 key/value heads per GPU */
	o.depth = MT_DEPTH_QUICK;
	o.model = "llama3-8b";
	o.tp = 2;
	c = plan(mt_plan_attention, &o, &n);
	x = find(c, n, "bf16 fwd causal h16/4 d128 s8192");
	assert_string_equal(x->origin, "attn");
	find(c, n, "bf16 bwd causal h16/4 d128 s2048");
	free(c);
	/* CPU: fp32, small, model heads capped with the GQA ratio kept */
	o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	o.model = "llama3-70b";
	c = plan(mt_plan_attention, &o, &n);
	find(c, n, "fp32 fwd causal h4/2 d64 s128");
	x = find(c, n, "fp32 bwd causal h16/2 d128 s256, capped from h64/8");
	assert_string_equal(x->origin, "attn");
	free(c);
}

static void offload_and_host_plans(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CUDA, MT_DEPTH_QUICK);
	const struct mt_case *x;
	struct mt_case *c;
	int n, i;

	(void)state;
	c = plan(mt_plan_offload, &o, &n);
	assert_int_equal(n, 9); /* 3 directions x (pinned, pinned loaded, pageable) */
	x = find(c, n, "h2d pinned 256MiB");
	assert_int_equal(x->dir, MT_OFF_H2D);
	assert_int_equal(x->pinned, 1);
	assert_close(x->moved, 256.0 * 1024 * 1024, 1e-12);
	x = find(c, n, "bidir pageable 256MiB");
	assert_int_equal(x->dir, MT_OFF_BIDIR);
	assert_int_equal(x->pinned, 0);
	x = find(c, n, "d2h pinned 256MiB loaded");
	assert_int_equal(x->under_load, 1);
	free(c);
	o.depth = MT_DEPTH_FULL;
	c = plan(mt_plan_offload, &o, &n);
	find(c, n, "h2d pinned 64MiB");
	find(c, n, "d2h pageable 1GiB");
	free(c);
	/* CPU: memcpy, one direction */
	o = opts(MT_BACKEND_CPU, MT_DEPTH_QUICK);
	c = plan(mt_plan_offload, &o, &n);
	assert_int_equal(n, 3);
	find(c, n, "memcpy pinned 256MiB");
	find(c, n, "memcpy pinned 256MiB loaded");
	find(c, n, "memcpy pageable 256MiB");
	free(c);

	/* host: launch cases on CUDA only */
	o = opts(MT_BACKEND_CUDA, MT_DEPTH_QUICK);
	c = plan(mt_plan_host, &o, &n);
	x = find(c, n, "launch");
	assert_string_equal(x->metric, "launch");
	assert_int_equal(x->inner, 10000);
	x = find(c, n, "launch jitter");
	assert_string_equal(x->metric, "launch_jitter");
	x = find(c, n, "triad 3x64MiB");
	assert_close(x->moved, 3 * 64.0 * 1024 * 1024, 1e-12);
	x = find(c, n, "adam 16M params");
	assert_int_equal(x->m, 16000000);
	assert_close(x->moved, 28 * 16e6, 1e-12);
	assert_close(x->flops, 14 * 16e6, 1e-12);
	free(c);
	o = opts(MT_BACKEND_CPU, MT_DEPTH_FULL);
	c = plan(mt_plan_host, &o, &n);
	find(c, n, "adam 256M params");
	for (i = 0; i < n; i++)
		assert_true(strncmp(c[i].metric, "launch", 6) != 0);
	free(c);
}

/* ------------------------------------------------------------ CPU backends */

/* The extra facts are JSON object members. */
static cJSON *extra_json(const char *members)
{
	char buf[600];
	cJSON *j;

	snprintf(buf, sizeof(buf), "{%s}", members);
	j = cJSON_Parse(buf);
	if (!j)
		fail_msg("extra is not JSON members: %s", members);
	return j;
}

/* setup, two timed runs (the faster kept), verify, extra, damage and
 * verify again (must fail), teardown.  Returns seconds per operation. */
static double exercise(const struct mt_probe_ops *ops, const struct mt_probe_ctx *ctx,
		       struct mt_case *c, void (*damage)(void *), cJSON **extra)
{
	struct mt_error err = MT_ERROR_INIT;
	void *st = NULL;
	double s, best = 1e30;
	char buf[256] = "";
	int i, rc;

	assert_int_equal(ops->applicable(ctx, &err), MT_OK);
	rc = ops->setup(ctx, c, &st, &err);
	if (rc)
		fail_msg("%s: setup: %s", c->label, err.msg);
	assert_true(c->inner >= 1);
	for (i = 0; i < 2; i++) {
		s = -1;
		assert_int_equal(ops->run(st, c, &s, &err), MT_OK);
		assert_true(s > 0);
		best = s < best ? s : best;
	}
	/* a sample lasts about the smoke target (1 ms) or more */
	if (best < 0.3e-3)
		fail_msg("%s: a sample of %d ops lasted only %.3g s", c->label, c->inner, best);
	rc = ops->verify(st, c, &err);
	if (rc)
		fail_msg("%s: verify: %s", c->label, err.msg);
	ops->extra(st, c, buf, sizeof(buf));
	*extra = extra_json(buf);
	damage(st);
	memset(&err, 0, sizeof(err));
	assert_int_not_equal(ops->verify(st, c, &err), MT_OK);
	assert_true(err.msg[0] != 0);
	if (mt_test_verbose())
		fprintf(stderr, "# %s: damaged: %s\n", c->label, err.msg);
	ops->teardown(st);
	return best / c->inner;
}

static void cpu_gemm_runs(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx = ctx_of(&o);
	struct mt_case *c;
	int n, i;

	(void)state;
	c = plan(mt_gemm_cpu.plan, &o, &n);
	for (i = 0; i < n; i++) {
		cJSON *x;
		double t = exercise(&mt_gemm_cpu, &ctx, &c[i], mt_gemm_cpu_damage, &x);
		double tf = c[i].flops / t / 1e12;

		if (mt_test_verbose())
			fprintf(stderr, "# %s: %.4f TFLOP/s\n", c[i].label, tf);
		assert_true(tf > 1e-4 && tf < CPU_PEAK_TFLOPS);
		assert_non_null(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(x, "blas")),
				       "OpenBLAS"));
		cJSON_Delete(x);
	}
	free(c);
	/* a non-square shape with odd sizes */
	{
		struct mt_case k;
		cJSON *x;
		double t;

		memset(&k, 0, sizeof(k));
		snprintf(k.label, sizeof(k.label), "odd");
		k.dtype = MT_DT_FP32;
		k.m = 37;
		k.n = 301;
		k.k = 129;
		k.flops = 2.0 * 37 * 301 * 129;
		t = exercise(&mt_gemm_cpu, &ctx, &k, mt_gemm_cpu_damage, &x);
		assert_true(k.flops / t / 1e12 < CPU_PEAK_TFLOPS);
		cJSON_Delete(x);
	}
}

static void cpu_attention_runs(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx = ctx_of(&o);
	struct mt_case *c;
	int n, i, bwd = 0;

	(void)state;
	c = plan(mt_attention_cpu.plan, &o, &n);
	for (i = 0; i < n; i++) {
		cJSON *x;
		double t = exercise(&mt_attention_cpu, &ctx, &c[i], mt_attention_cpu_damage, &x);
		double tf = c[i].flops / t / 1e12;

		if (mt_test_verbose())
			fprintf(stderr, "# %s: %.4f TFLOP/s\n", c[i].label, tf);
		assert_true(tf > 1e-5 && tf < CPU_PEAK_TFLOPS);
		bwd += c[i].bwd;
		cJSON_Delete(x);
	}
	assert_true(bwd > 0);
	free(c);
}

/* ---- attention backward against finite differences of a forward in double */

struct ref_attn {
	int B, H, G, S, D, causal;
	double *q, *k, *v, *dout;
};

static double ref_loss(const struct ref_attn *r)
{
	double loss = 0, scale = 1.0 / sqrt((double)r->D), *p = malloc(r->S * sizeof(double));
	int b, h, i, j, d;

	for (b = 0; b < r->B; b++)
		for (h = 0; h < r->H; h++) {
			int g = h / (r->H / r->G);
			const double *Q = r->q + (size_t)(b * r->H + h) * r->S * r->D;
			const double *K = r->k + (size_t)(b * r->G + g) * r->S * r->D;
			const double *V = r->v + (size_t)(b * r->G + g) * r->S * r->D;
			const double *dO = r->dout + (size_t)(b * r->H + h) * r->S * r->D;

			for (i = 0; i < r->S; i++) {
				int lim = r->causal ? i + 1 : r->S;
				double mx = -INFINITY, sum = 0;

				for (j = 0; j < lim; j++) {
					double s = 0;

					for (d = 0; d < r->D; d++)
						s += Q[i * r->D + d] * K[j * r->D + d];
					p[j] = s * scale;
					mx = p[j] > mx ? p[j] : mx;
				}
				for (j = 0; j < lim; j++)
					sum += (p[j] = exp(p[j] - mx));
				for (d = 0; d < r->D; d++) {
					double o = 0;

					for (j = 0; j < lim; j++)
						o += p[j] / sum * V[j * r->D + d];
					loss += o * dO[i * r->D + d];
				}
			}
		}
	free(p);
	return loss;
}

static double *to_double(const float *x, size_t n)
{
	double *y = malloc(n * sizeof(double));
	size_t i;

	for (i = 0; i < n; i++)
		y[i] = x[i];
	return y;
}

/* d loss / d x[i], central differences */
static double fd(struct ref_attn *r, double *x, size_t i)
{
	const double h = 1e-4;
	double keep = x[i], lp, lm;

	x[i] = keep + h;
	lp = ref_loss(r);
	x[i] = keep - h;
	lm = ref_loss(r);
	x[i] = keep;
	return (lp - lm) / (2 * h);
}

static void cpu_attention_backward_matches_finite_differences(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx = ctx_of(&o);
	struct mt_error err = MT_ERROR_INIT;
	int causal;

	(void)state;
	for (causal = 0; causal < 2; causal++) {
		/* 2 batches, GQA 4/2, 160 rows: two blocks of query rows */
		struct mt_case c;
		struct mt_attn_tensors t;
		struct ref_attn r;
		void *st = NULL;
		double s;
		size_t qn, kvn;
		uint64_t rng = 99;
		int w, trial;

		memset(&c, 0, sizeof(c));
		snprintf(c.label, sizeof(c.label), "fd");
		c.dtype = MT_DT_FP32;
		c.batch = 2;
		c.heads = 4;
		c.kv_heads = 2;
		c.head_dim = 8;
		c.seq = 160;
		c.causal = causal;
		c.bwd = 1;
		assert_int_equal(mt_attention_cpu.setup(&ctx, &c, &st, &err), MT_OK);
		assert_int_equal(mt_attention_cpu.run(st, &c, &s, &err), MT_OK);
		assert_int_equal(mt_attention_cpu.verify(st, &c, &err), MT_OK);
		mt_attention_cpu_tensors(st, &t);
		assert_non_null(t.dq);
		qn = (size_t)c.batch * c.heads * c.seq * c.head_dim;
		kvn = (size_t)c.batch * c.kv_heads * c.seq * c.head_dim;
		r.B = c.batch;
		r.H = c.heads;
		r.G = c.kv_heads;
		r.S = c.seq;
		r.D = c.head_dim;
		r.causal = causal;
		r.q = to_double(t.q, qn);
		r.k = to_double(t.k, kvn);
		r.v = to_double(t.v, kvn);
		r.dout = to_double(t.dout, qn);
		for (w = 0; w < 3; w++)
			for (trial = 0; trial < 12; trial++) {
				size_t n = w == 0 ? qn : kvn, i;
				double *x = w == 0 ? r.q : w == 1 ? r.k : r.v, want, got;
				const float *gsrc = w == 0 ? t.dq : w == 1 ? t.dk : t.dv;

				/* include the last rows (second block) */
				i = trial == 0 ? n - 1 : (size_t)(mt_rng_next(&rng) % n);
				want = fd(&r, x, i);
				got = gsrc[i];
				if (mt_test_verbose() && trial < 3)
					fprintf(stderr, "# causal %d d%c[%zu]: %.7g, finite differences %.7g\n",
						causal, "qkv"[w], i, got, want);
				if (!(fabs(got - want) <= 1e-5 + 1e-3 * fabs(want)))
					fail_msg("causal %d: d%c[%zu] = %.7g, finite differences %.7g",
						 causal, "qkv"[w], i, got, want);
			}
		free(r.q);
		free(r.k);
		free(r.v);
		free(r.dout);
		mt_attention_cpu.teardown(st);
	}
}

static void cpu_offload_runs(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx = ctx_of(&o);
	struct mt_case *c;
	int n, i, loaded = 0;

	(void)state;
	c = plan(mt_offload_cpu.plan, &o, &n);
	for (i = 0; i < n; i++) {
		int asked = c[i].pinned;
		cJSON *x;
		double t = exercise(&mt_offload_cpu, &ctx, &c[i], mt_offload_cpu_damage, &x);
		double gbps = c[i].moved / t / 1e9;
		cJSON *locked = cJSON_GetObjectItem(x, "locked");

		if (mt_test_verbose())
			fprintf(stderr, "# %s: %.2f GB/s\n", c[i].label, gbps);
		assert_true(gbps > 0.05 && gbps < 1000);
		assert_non_null(locked);
		/* pinned means locked; when the limit refused, the case says
		 * so and is measured as pageable */
		if (asked && !cJSON_IsTrue(locked)) {
			assert_int_equal(c[i].pinned, 0);
			assert_non_null(cJSON_GetObjectItem(x, "pinned_unavailable"));
		}
		if (!asked)
			assert_true(cJSON_IsFalse(locked));
		if (c[i].under_load) {
			loaded++;
			assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(x, "load_gflops")) > 0);
		}
		cJSON_Delete(x);
	}
	assert_int_equal(loaded, 1);
	free(c);
}

static void cpu_host_runs(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CPU, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx = ctx_of(&o);
	struct mt_error err = MT_ERROR_INIT;
	struct mt_case *c;
	void *st = NULL;
	int n, i, seen = 0;

	(void)state;
	c = plan(mt_host_cpu.plan, &o, &n);
	for (i = 0; i < n; i++) {
		cJSON *x;
		double t = exercise(&mt_host_cpu, &ctx, &c[i], mt_host_cpu_damage, &x);
		double gbps = c[i].moved / t / 1e9;

		if (mt_test_verbose())
			fprintf(stderr, "# %s: %.2f GB/s%s\n", c[i].label, gbps,
				c[i].m ? " (adam)" : "");
		assert_true(gbps > 0.05 && gbps < 1000);
		if (!strcmp(c[i].metric, "adam")) {
			double gparams = (double)c[i].m / t / 1e9;

			assert_true(gparams > 1e-4 && gparams < 100);
			assert_true(c[i].flops / t / 1e12 < CPU_PEAK_TFLOPS);
			seen |= 2;
		} else {
			assert_string_equal(c[i].metric, "membw");
			seen |= 1;
		}
		assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(x, "threads")) >= 1);
		/* counters or the reason they are missing; never a failure */
		if (!cJSON_GetObjectItem(x, "papi"))
			assert_non_null(cJSON_GetObjectItem(x, "papi_unavailable"));
		else
			assert_true(cJSON_GetNumberValue(cJSON_GetObjectItem(x, "papi_ops")) >= 2);
		cJSON_Delete(x);
	}
	assert_int_equal(seen, 3);
	free(c);
	/* a launch case needs the CUDA backend */
	{
		struct mt_case k;

		memset(&k, 0, sizeof(k));
		snprintf(k.label, sizeof(k.label), "launch");
		snprintf(k.metric, sizeof(k.metric), "launch");
		assert_int_equal(mt_host_cpu.setup(&ctx, &k, &st, &err), MT_EUNSUPPORTED);
	}
	/* an Adam over a few parameters, many steps: the replay still agrees */
	{
		struct mt_case k;
		cJSON *x;

		memset(&k, 0, sizeof(k));
		snprintf(k.label, sizeof(k.label), "adam small");
		snprintf(k.metric, sizeof(k.metric), "adam");
		k.m = 1000;
		k.moved = 28 * 1000;
		exercise(&mt_host_cpu, &ctx, &k, mt_host_cpu_damage, &x);
		assert_true(k.inner > 10);
		cJSON_Delete(x);
	}
}

/* Without the CUDA library the host probe's CUDA table does not apply. */
static void host_cuda_needs_the_library(void **state)
{
	struct mt_probe_opts o = opts(MT_BACKEND_CUDA, MT_DEPTH_SMOKE);
	struct mt_probe_ctx ctx = ctx_of(&o);
	struct mt_error err = MT_ERROR_INIT;
	int rc;

	(void)state;
	assert_ptr_equal(mt_host_cuda.plan, mt_plan_host);
	rc = mt_host_cuda.applicable(&ctx, &err);
	if (rc == MT_OK)
		skip(); /* a machine with the library and a GPU */
	assert_int_equal(rc, MT_EUNSUPPORTED);
	assert_true(err.msg[0] != 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(plans_every_depth_and_backend),
		cmocka_unit_test(plans_respect_size_limits),
		cmocka_unit_test(gemm_plan_dtypes_and_sizes),
		cmocka_unit_test(gemm_model_shapes_dense),
		cmocka_unit_test(gemm_model_shapes_moe_and_mla),
		cmocka_unit_test(gemm_cpu_model_shapes_are_capped),
		cmocka_unit_test(attention_plan_flops_and_model),
		cmocka_unit_test(offload_and_host_plans),
		cmocka_unit_test(cpu_gemm_runs),
		cmocka_unit_test(cpu_attention_runs),
		cmocka_unit_test(cpu_attention_backward_matches_finite_differences),
		cmocka_unit_test(cpu_offload_runs),
		cmocka_unit_test(cpu_host_runs),
		cmocka_unit_test(host_cuda_needs_the_library),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
