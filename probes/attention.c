/* SPDX-License-Identifier: MIT */
/* attention: the attention probe's plan (both backends) and its CPU backend,
 * scaled dot-product attention built from BLAS calls (probes/backends.h).
 *
 * FLOPs follow the FlashAttention papers' benchmark convention: forward
 * 4 B H S^2 D (two matmuls, QK^T and PV, of 2 S^2 D each per head), halved
 * when causal; backward 2.5 times the forward (five matmuls: QK^T
 * recomputed, dV, dP, dQ, dK).  The CPU backend computes exactly that:
 *
 *   forward, per head h (key/value head g = h / (H / G)) and block of 128
 *   query rows:  S = scale Q K^T (sgemm), row softmax with the causal mask
 *   (the log-sum-exp kept per row), O = P V (sgemm); with a causal mask only
 *   the key columns up to the block's last row are computed.
 *   backward, from Q, K, V, O, dO and the log-sum-exp: delta = rowsum(dO o O),
 *   P recomputed, dV += P^T dO, dP = dO V^T, dS = P o (dP - delta),
 *   dQ = scale dS K, dK += scale dS^T Q (GQA heads of a group accumulate
 *   into their shared dK, dV).
 *
 * Layouts are [batch][heads][seq][head_dim], fp32.
 */
#include "backends.h"

#include <cblas.h>
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

#define CUDA_TOKENS 16384   /* batch * seq of the CUDA cases */
#define CPU_MODEL_SEQ 256   /* CPU model cases: sequence length */
#define CPU_HEAD_CAP 16     /* CPU model cases: query heads at most */
#define BLK 128             /* CPU: query rows per block */

/* ------------------------------------------------------------------ plan */

static double attention_elem_bytes(int dt)
{
	return dt == MT_DT_FP8 ? 1 : dt == MT_DT_FP32 || dt == MT_DT_TF32 ? 4 : 2;
}

/* Q, K, V and O */
static double qkvo_bytes(int dt, int b, int h, int g, int s, int d)
{
	return (double)b * s * d * (2.0 * h + 2.0 * g) * attention_elem_bytes(dt);
}

static double fwd_flops(int b, int h, int s, int d, int causal)
{
	double f = 4.0 * b * h * (double)s * s * d;

	return causal ? f / 2 : f;
}

static struct mt_case *attention_add(struct mt_plan_buf *p, int dt, int b, int h, int g, int d, int s,
			   int causal, int bwd, const char *origin)
{
	struct mt_case *c = mt_plan_push(p);

	if (!c)
		return NULL;
	c->dtype = dt;
	c->batch = b;
	c->heads = h;
	c->kv_heads = g;
	c->head_dim = d;
	c->seq = s;
	c->causal = causal;
	c->bwd = bwd;
	c->flops = fwd_flops(b, h, s, d, causal) * (bwd ? 2.5 : 1.0);
	c->bytes = qkvo_bytes(dt, b, h, g, s, d);
	snprintf(c->origin, sizeof(c->origin), "%s", origin);
	snprintf(c->label, sizeof(c->label), "%s %s %s h%d/%d d%d s%d", mt_dtype_name(dt),
		 bwd ? "bwd" : "fwd", causal ? "causal" : "full", h, g, d, s);
	if (b != 1 && (CUDA_TOKENS / s) != b) /* batch is implied otherwise */
		snprintf(c->label + strlen(c->label), sizeof(c->label) - strlen(c->label), " b%d", b);
	return c;
}

/* A model case: kept whatever its size; a sweep case with the same label
 * becomes the model's. */
static void add_model(struct mt_plan_buf *p, int dt, int b, int h, int g, int d, int s, int bwd,
		      const char *cap)
{
	struct mt_case *c = attention_add(p, dt, b, h, g, d, s, 1, bwd, "attn");
	struct mt_case *old;

	if (!c)
		return;
	if (cap && *cap)
		snprintf(c->label + strlen(c->label), sizeof(c->label) - strlen(c->label), "%s",
			 cap);
	old = mt_plan_find(p, c->label);
	if (old != c) {
		snprintf(old->origin, sizeof(old->origin), "attn");
		p->n--;
	}
}

int mt_plan_attention(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		      struct mt_error *err)
{
	static const int cuda_seq_smoke[] = { 1024 };
	static const int cuda_seq_quick[] = { 2048, 4096, 8192 };
	static const int cuda_seq_normal[] = { 1024, 2048, 4096, 8192, 16384 };
	static const int cuda_seq_full[] = { 512, 1024, 2048, 4096, 8192, 16384 };
	static const int cpu_seq_smoke[] = { 128 };
	static const int cpu_seq_quick[] = { 256, 512 };
	static const int cpu_seq_normal[] = { 128, 256, 512, 1024 };
	static const int d128[] = { 128 }, d64[] = { 64 }, dboth[] = { 64, 128 };
	static const int gqa[][2] = { { 32, 8 }, { 32, 32 } };    /* CUDA: heads, kv heads */
	static const int cpu_gqa[][2] = { { 4, 2 }, { 4, 4 } };  /* CPU */
	const struct mt_probe_opts *o = ctx ? ctx->opts : NULL;
	struct mt_plan_buf p = { 0 };
	const int *seq, *hd;
	const int (*hk)[2];
	int nseq, nhd, nhk, cuda, tp, dt, i, j, l, causal, bwd, rc = MT_OK;
	unsigned dtypes;

	*cases = NULL;
	*n = 0;
	if (!o)
		return mt_error_set(err, MT_EINVAL, "attention plan: no options");
	cuda = o->backend == MT_BACKEND_CUDA;
	tp = o->tp > 0 ? o->tp : 1;
	if (cuda) {
		unsigned ok = (1u << MT_DT_BF16) | (1u << MT_DT_FP16) | (1u << MT_DT_FP8);

		dtypes = o->dtypes ? (unsigned)o->dtypes & ok : 1u << MT_DT_BF16;
		if (!dtypes)
			return mt_error_set(err, MT_EUNSUPPORTED,
					    "attention runs in bf16, fp16 or fp8 only");
		hk = gqa;
		switch (o->depth) {
		case MT_DEPTH_SMOKE: seq = cuda_seq_smoke; nseq = 1; hd = d128; nhd = 1; nhk = 1; break;
		case MT_DEPTH_QUICK: seq = cuda_seq_quick; nseq = 3; hd = d128; nhd = 1; nhk = 1; break;
		case MT_DEPTH_FULL: seq = cuda_seq_full; nseq = 6; hd = dboth; nhd = 2; nhk = 2; break;
		default: seq = cuda_seq_normal; nseq = 5; hd = dboth; nhd = 2; nhk = 2; break;
		}
	} else {
		if (o->dtypes && !(o->dtypes & (1 << MT_DT_FP32)))
			return mt_error_set(err, MT_EUNSUPPORTED,
					    "attention: the CPU backend runs fp32 only");
		dtypes = 1u << MT_DT_FP32;
		hk = cpu_gqa;
		switch (o->depth) {
		case MT_DEPTH_SMOKE: seq = cpu_seq_smoke; nseq = 1; hd = d64; nhd = 1; nhk = 1; break;
		case MT_DEPTH_QUICK: seq = cpu_seq_quick; nseq = 2; hd = d64; nhd = 1; nhk = 1; break;
		case MT_DEPTH_FULL: seq = cpu_seq_normal; nseq = 4; hd = dboth; nhd = 2; nhk = 2; break;
		default: seq = cpu_seq_normal; nseq = 4; hd = dboth; nhd = 2; nhk = 1; break;
		}
	}
	for (dt = 0; dt < MT_DT_N; dt++) {
		if (!(dtypes & (1u << dt)))
			continue;
		for (i = 0; i < nseq; i++)
			for (j = 0; j < nhd; j++)
				for (l = 0; l < nhk; l++)
					for (causal = 1; causal >= 0; causal--)
						for (bwd = 0; bwd < 2; bwd++) {
							int b = cuda ? (CUDA_TOKENS / seq[i] > 0 ? CUDA_TOKENS / seq[i] : 1) : 1;

							if (mt_plan_in_limits(o, qkvo_bytes(dt, b, hk[l][0], hk[l][1], seq[i], hd[j])))
								attention_add(&p, dt, b, hk[l][0], hk[l][1], hd[j], seq[i], causal, bwd, "sweep");
						}
	}
	if (o->model && *o->model) {
		struct mt_model *md = malloc(sizeof(*md));

		if (!md) {
			free(p.v);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
		rc = mt_model_load(o->model, md, err);
		if (!rc && md->mla) {
			/* MLA: query/key and value head sizes differ; the cases
			 * have one head_dim, so the model adds none */
		} else if (!rc && (md->heads % tp || md->kv_heads % tp)) {
			rc = mt_error_set(err, MT_EINVAL,
					  "model %s: %d attention heads and %d key/value heads are not "
					  "divisible by tensor parallel size %d",
					  md->name, md->heads, md->kv_heads, tp);
		} else if (!rc) {
			int h = md->heads / tp, g = md->kv_heads / tp, d = md->head_dim;

			for (dt = 0; dt < MT_DT_N; dt++) {
				if (!(dtypes & (1u << dt)))
					continue;
				if (cuda) {
					for (i = 0; i < nseq; i++)
						for (bwd = 0; bwd < 2; bwd++)
							add_model(&p, dt, CUDA_TOKENS / seq[i] > 0 ? CUDA_TOKENS / seq[i] : 1,
								  h, g, d, seq[i], bwd, NULL);
				} else {
					char cap[48] = "";
					int hc = h, gc = g;

					if (h > CPU_HEAD_CAP) { /* keep the GQA ratio */
						int r = h / g;

						gc = r >= CPU_HEAD_CAP ? 1 : CPU_HEAD_CAP / r;
						hc = gc * (r >= CPU_HEAD_CAP ? CPU_HEAD_CAP : r);
						snprintf(cap, sizeof(cap), ", capped from h%d/%d", h, g);
					}
					for (bwd = 0; bwd < 2; bwd++)
						add_model(&p, dt, 1, hc, gc, d, CPU_MODEL_SEQ, bwd, cap);
				}
			}
		}
		free(md);
		if (rc) {
			free(p.v);
			return rc;
		}
	}
	return mt_plan_finish(&p, "attention", o, cases, n, err);
}

/* ------------------------------------------------------------ CPU backend */

struct attn_state {
	int B, H, G, S, D, causal, bwd;
	float scale;
	float *q, *k, *v, *o, *lse;      /* inputs; o and lse outputs of the forward */
	float *dout, *dq, *dk, *dv, *delta;
	float *sb, *pb;                  /* BLK x S scratch */
};

static int attention_cpu_applicable(const struct mt_probe_ctx *ctx, struct mt_error *err)
{
	(void)ctx;
	(void)err;
	return MT_OK;
}

static size_t qoff(const struct attn_state *s, int b, int h)
{
	return ((size_t)b * (size_t)s->H + (size_t)h) * (size_t)s->S * (size_t)s->D;
}

static size_t kvoff(const struct attn_state *s, int b, int g)
{
	return ((size_t)b * (size_t)s->G + (size_t)g) * (size_t)s->S * (size_t)s->D;
}

static void attention_forward(struct attn_state *s)
{
	int S = s->S, D = s->D, b, h, r0, i, j;

	for (b = 0; b < s->B; b++)
		for (h = 0; h < s->H; h++) {
			int g = h / (s->H / s->G);
			const float *Q = s->q + qoff(s, b, h), *K = s->k + kvoff(s, b, g);
			const float *V = s->v + kvoff(s, b, g);
			float *O = s->o + qoff(s, b, h);
			float *lse = s->lse + ((size_t)b * s->H + h) * S;

			for (r0 = 0; r0 < S; r0 += BLK) {
				int nb = S - r0 < BLK ? S - r0 : BLK;
				int L = s->causal ? r0 + nb : S;

				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, L, D, s->scale,
					    Q + (size_t)r0 * D, D, K, D, 0.0f, s->sb, L);
				for (i = 0; i < nb; i++) {
					float *row = s->sb + (size_t)i * L;
					int lim = s->causal ? r0 + i + 1 : L;
					float mx = row[0], sum = 0, inv;

					for (j = 1; j < lim; j++)
						mx = row[j] > mx ? row[j] : mx;
					for (j = 0; j < lim; j++) {
						row[j] = expf(row[j] - mx);
						sum += row[j];
					}
					for (j = lim; j < L; j++)
						row[j] = 0;
					inv = 1.0f / sum;
					for (j = 0; j < lim; j++)
						row[j] *= inv;
					lse[r0 + i] = mx + logf(sum);
				}
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, D, L, 1.0f,
					    s->sb, L, V, D, 0.0f, O + (size_t)r0 * D, D);
			}
		}
}

static void backward(struct attn_state *s)
{
	int S = s->S, D = s->D, b, h, r0, i, j;
	size_t nrows = (size_t)s->B * s->H * S, kvn = (size_t)s->B * s->G * S * D, x;

	for (x = 0; x < nrows; x++) {
		const float *a = s->dout + x * D, *c = s->o + x * D;
		float acc = 0;

		for (j = 0; j < D; j++)
			acc += a[j] * c[j];
		s->delta[x] = acc;
	}
	memset(s->dk, 0, kvn * sizeof(float));
	memset(s->dv, 0, kvn * sizeof(float));
	for (b = 0; b < s->B; b++)
		for (h = 0; h < s->H; h++) {
			int g = h / (s->H / s->G);
			const float *Q = s->q + qoff(s, b, h), *K = s->k + kvoff(s, b, g);
			const float *V = s->v + kvoff(s, b, g), *dO = s->dout + qoff(s, b, h);
			float *dQ = s->dq + qoff(s, b, h), *dK = s->dk + kvoff(s, b, g);
			float *dV = s->dv + kvoff(s, b, g);
			const float *lse = s->lse + ((size_t)b * s->H + h) * S;
			const float *delta = s->delta + ((size_t)b * s->H + h) * S;

			for (r0 = 0; r0 < S; r0 += BLK) {
				int nb = S - r0 < BLK ? S - r0 : BLK;
				int L = s->causal ? r0 + nb : S;

				/* P, recomputed from the log-sum-exp */
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, L, D, s->scale,
					    Q + (size_t)r0 * D, D, K, D, 0.0f, s->sb, L);
				for (i = 0; i < nb; i++) {
					float *row = s->sb + (size_t)i * L, m = lse[r0 + i];
					int lim = s->causal ? r0 + i + 1 : L;

					for (j = 0; j < lim; j++)
						row[j] = expf(row[j] - m);
					for (j = lim; j < L; j++)
						row[j] = 0;
				}
				/* dV[0:L] += P^T dO */
				cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, L, D, nb, 1.0f, s->sb,
					    L, dO + (size_t)r0 * D, D, 1.0f, dV, D);
				/* dP = dO V^T */
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, L, D, 1.0f,
					    dO + (size_t)r0 * D, D, V, D, 0.0f, s->pb, L);
				/* dS = P o (dP - delta) */
				for (i = 0; i < nb; i++) {
					const float *pr = s->sb + (size_t)i * L;
					float *dr = s->pb + (size_t)i * L, di = delta[r0 + i];

					for (j = 0; j < L; j++)
						dr[j] = pr[j] * (dr[j] - di);
				}
				/* dQ = scale dS K, dK[0:L] += scale dS^T Q */
				cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, D, L, s->scale,
					    s->pb, L, K, D, 0.0f, dQ + (size_t)r0 * D, D);
				cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, L, D, nb, s->scale,
					    s->pb, L, Q + (size_t)r0 * D, D, 1.0f, dK, D);
			}
		}
}

static void attn_teardown(void *state)
{
	struct attn_state *s = state;

	if (!s)
		return;
	free(s->q);
	free(s->k);
	free(s->v);
	free(s->o);
	free(s->lse);
	free(s->dout);
	free(s->dq);
	free(s->dk);
	free(s->dv);
	free(s->delta);
	free(s->sb);
	free(s->pb);
	free(s);
}

static void once(struct attn_state *s)
{
	if (s->bwd)
		backward(s);
	else
		attention_forward(s);
}

static void attn_ops(void *state, int count)
{
	int i;

	for (i = 0; i < count; i++)
		once(state);
}

static int attn_setup(const struct mt_probe_ctx *ctx, struct mt_case *c, void **state,
		      struct mt_error *err)
{
	struct attn_state *s;
	size_t qn, kvn, rows;

	*state = NULL;
	if (ctx && ctx->world && ctx->world->local_size > 1)
		openblas_set_num_threads(mt_cpu_threads(ctx));
	if (c->dtype != MT_DT_FP32)
		return mt_error_set(err, MT_EUNSUPPORTED,
				    "attention %s: the CPU backend runs fp32 only", c->label);
	if (c->batch < 1 || c->heads < 1 || c->kv_heads < 1 || c->heads % c->kv_heads ||
	    c->head_dim < 1 || c->head_dim > 1024 || c->seq < 1 || c->seq > 65536)
		return mt_error_set(err, MT_EINVAL,
				    "attention %s: needs batch, heads, kv_heads dividing heads, "
				    "head_dim 1..1024 and seq 1..65536",
				    c->label);
	if (!(s = calloc(1, sizeof(*s))))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	s->B = c->batch;
	s->H = c->heads;
	s->G = c->kv_heads;
	s->S = c->seq;
	s->D = c->head_dim;
	s->causal = c->causal != 0;
	s->bwd = c->bwd != 0;
	s->scale = (float)(1.0 / sqrt((double)s->D));
	rows = (size_t)s->B * s->H * s->S;
	qn = rows * s->D;
	kvn = (size_t)s->B * s->G * s->S * s->D;
	s->q = malloc(qn * sizeof(float));
	s->k = malloc(kvn * sizeof(float));
	s->v = malloc(kvn * sizeof(float));
	s->o = malloc(qn * sizeof(float));
	s->lse = malloc(rows * sizeof(float));
	s->sb = malloc((size_t)BLK * s->S * sizeof(float));
	s->pb = malloc((size_t)BLK * s->S * sizeof(float));
	if (s->bwd) {
		s->dout = malloc(qn * sizeof(float));
		s->dq = malloc(qn * sizeof(float));
		s->dk = malloc(kvn * sizeof(float));
		s->dv = malloc(kvn * sizeof(float));
		s->delta = malloc(rows * sizeof(float));
	}
	if (!s->q || !s->k || !s->v || !s->o || !s->lse || !s->sb || !s->pb ||
	    (s->bwd && (!s->dout || !s->dq || !s->dk || !s->dv || !s->delta))) {
		attn_teardown(s);
		return mt_error_set(err, MT_ENOMEM, "attention %s: out of memory", c->label);
	}
	mt_fill_float(s->q, qn, 11);
	mt_fill_float(s->k, kvn, 12);
	mt_fill_float(s->v, kvn, 13);
	mt_fill_float(s->o, qn, 14);
	if (s->bwd) {
		mt_fill_float(s->dout, qn, 15);
		mt_fill_float(s->dq, qn, 16);
		attention_forward(s); /* O and the log-sum-exp are inputs of the backward */
	}
	c->inner = mt_cpu_calibrate(ctx, attn_ops, s);
	*state = s;
	return MT_OK;
}

static int attn_run(void *state, const struct mt_case *c, double *seconds, struct mt_error *err)
{
	struct attn_state *s = state;
	double t0;
	int i;

	(void)err;
	t0 = mt_now();
	for (i = 0; i < c->inner; i++)
		once(s);
	*seconds = mt_now() - t0;
	return MT_OK;
}

/* Reference softmax row i of head (b, h) in double: p[0..lim) and the
 * log-sum-exp; returns lim. */
static int ref_row(const struct attn_state *s, int b, int h, int i, double *p, double *lse)
{
	int g = h / (s->H / s->G), lim = s->causal ? i + 1 : s->S, j, d;
	const float *q = s->q + qoff(s, b, h) + (size_t)i * s->D, *K = s->k + kvoff(s, b, g);
	double mx = -INFINITY, sum = 0;

	for (j = 0; j < lim; j++) {
		double acc = 0;

		for (d = 0; d < s->D; d++)
			acc += (double)q[d] * K[(size_t)j * s->D + d];
		p[j] = acc * s->scale;
		mx = p[j] > mx ? p[j] : mx;
	}
	for (j = 0; j < lim; j++) {
		p[j] = exp(p[j] - mx);
		sum += p[j];
	}
	for (j = 0; j < lim; j++)
		p[j] /= sum;
	*lse = mx + log(sum);
	return lim;
}

static int finite_all(const float *x, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return 0;
	return 1;
}

/* Forward: rows 0, S/2, S/2 + 31, S - 1 of the first and last head of the
 * first and last batch against a naive reference in double; every output is
 * finite and inside the range of V (a convex combination of its rows). */
static int verify_fwd(const struct attn_state *s, const char *label, double *p,
		      struct mt_error *err)
{
	int bs[2] = { 0, s->B - 1 }, hs[2] = { 0, s->H - 1 };
	int rows[4] = { 0, s->S / 2, s->S / 2 + 31 < s->S ? s->S / 2 + 31 : s->S - 1, s->S - 1 };
	size_t n = (size_t)s->B * s->H * s->S * s->D, x;
	int a, e, r, j, d;

	for (x = 0; x < n; x++)
		if (!(fabsf(s->o[x]) <= 1.0f + 1e-5f))
			return mt_error_set(err, MT_EINVAL,
					    "attention %s: O[%zu] = %g is outside the range of V",
					    label, x, (double)s->o[x]);
	for (a = 0; a < 2; a++)
		for (e = 0; e < 2; e++)
			for (r = 0; r < 4; r++) {
				int b = bs[a], h = hs[e], i = rows[r], g = h / (s->H / s->G);
				const float *V = s->v + kvoff(s, b, g);
				const float *O = s->o + qoff(s, b, h) + (size_t)i * s->D;
				double lse, got = s->lse[((size_t)b * s->H + h) * s->S + i];
				int lim = ref_row(s, b, h, i, p, &lse);

				if (!(fabs(got - lse) <= 1e-5 * (1 + fabs(lse))))
					return mt_error_set(err, MT_EINVAL,
							    "attention %s: log-sum-exp of b%d h%d row %d "
							    "is %.7g, expected %.7g",
							    label, b, h, i, got, lse);
				for (d = 0; d < s->D; d++) {
					double want = 0, bound = 0;

					for (j = 0; j < lim; j++) {
						want += p[j] * V[(size_t)j * s->D + d];
						bound += p[j] * fabs(V[(size_t)j * s->D + d]);
					}
					if (!(fabs(O[d] - want) <= 1e-4 * bound + 1e-6))
						return mt_error_set(err, MT_EINVAL,
								    "attention %s: O[b%d h%d row %d][%d] = "
								    "%.7g, expected %.7g",
								    label, b, h, i, d, (double)O[d], want);
				}
			}
	return MT_OK;
}

/* Backward, from the op's inputs (Q, K, V, O, dO, log-sum-exp) in double:
 * dQ rows as in the forward check, dK and dV columns 0, S/2, S-1 of the
 * first and last key/value head of the first and last batch; every gradient
 * finite. */
static int verify_bwd(const struct attn_state *s, const char *label, double *p, double *acc,
		      struct mt_error *err)
{
	int bs[2] = { 0, s->B - 1 }, hs[2] = { 0, s->H - 1 }, gs[2] = { 0, s->G - 1 };
	int rows[4] = { 0, s->S / 2, s->S / 2 + 31 < s->S ? s->S / 2 + 31 : s->S - 1, s->S - 1 };
	int cols[3] = { 0, s->S / 2, s->S - 1 };
	int S = s->S, D = s->D, a, e, r, j, d, hh;
	size_t qn = (size_t)s->B * s->H * S * D, kvn = (size_t)s->B * s->G * S * D;

	if (!finite_all(s->dq, qn) || !finite_all(s->dk, kvn) || !finite_all(s->dv, kvn))
		return mt_error_set(err, MT_EINVAL, "attention %s: a gradient is not finite", label);
	/* dQ_i = scale sum_j P_ij (dO_i . V_j - dO_i . O_i) K_j */
	for (a = 0; a < 2; a++)
		for (e = 0; e < 2; e++)
			for (r = 0; r < 4; r++) {
				int b = bs[a], h = hs[e], i = rows[r], g = h / (s->H / s->G);
				const float *K = s->k + kvoff(s, b, g), *V = s->v + kvoff(s, b, g);
				const float *dO = s->dout + qoff(s, b, h) + (size_t)i * D;
				const float *O = s->o + qoff(s, b, h) + (size_t)i * D;
				const float *dQ = s->dq + qoff(s, b, h) + (size_t)i * D;
				double lse = s->lse[((size_t)b * s->H + h) * S + i], del = 0;
				const float *q = s->q + qoff(s, b, h) + (size_t)i * D;
				int lim = s->causal ? i + 1 : S;

				for (d = 0; d < D; d++)
					del += (double)dO[d] * O[d];
				for (d = 0; d < D; d++)
					acc[d] = acc[D + d] = 0;
				for (j = 0; j < lim; j++) {
					double sc = 0, dp = 0, ds;

					for (d = 0; d < D; d++) {
						sc += (double)q[d] * K[(size_t)j * D + d];
						dp += (double)dO[d] * V[(size_t)j * D + d];
					}
					p[j] = exp(sc * s->scale - lse);
					ds = p[j] * (dp - del);
					for (d = 0; d < D; d++) {
						acc[d] += ds * K[(size_t)j * D + d];
						acc[D + d] += fabs(ds * K[(size_t)j * D + d]);
					}
				}
				for (d = 0; d < D; d++) {
					double want = s->scale * acc[d], bound = s->scale * acc[D + d];

					if (!(fabs(dQ[d] - want) <= 1e-4 * bound + 1e-6))
						return mt_error_set(err, MT_EINVAL,
								    "attention %s: dQ[b%d h%d row %d][%d] = "
								    "%.7g, expected %.7g",
								    label, b, h, i, d, (double)dQ[d], want);
				}
			}
	/* dV_j = sum_h sum_i P_ij dO_i;  dK_j = scale sum_h sum_i dS_ij Q_i */
	for (a = 0; a < 2; a++)
		for (e = 0; e < 2; e++)
			for (r = 0; r < 3; r++) {
				int b = bs[a], g = gs[e], jj = cols[r], rep = s->H / s->G, i;
				const float *K = s->k + kvoff(s, b, g) + (size_t)jj * D;
				const float *V = s->v + kvoff(s, b, g) + (size_t)jj * D;
				const float *dK = s->dk + kvoff(s, b, g) + (size_t)jj * D;
				const float *dV = s->dv + kvoff(s, b, g) + (size_t)jj * D;

				for (d = 0; d < 4 * D; d++)
					acc[d] = 0;
				for (hh = g * rep; hh < (g + 1) * rep; hh++)
					for (i = s->causal ? jj : 0; i < S; i++) {
						const float *q = s->q + qoff(s, b, hh) + (size_t)i * D;
						const float *dO = s->dout + qoff(s, b, hh) + (size_t)i * D;
						const float *O = s->o + qoff(s, b, hh) + (size_t)i * D;
						double lse = s->lse[((size_t)b * s->H + hh) * S + i];
						double sc = 0, dp = 0, del = 0, pij, ds;

						for (d = 0; d < D; d++) {
							sc += (double)q[d] * K[d];
							dp += (double)dO[d] * V[d];
							del += (double)dO[d] * O[d];
						}
						pij = exp(sc * s->scale - lse);
						ds = pij * (dp - del);
						for (d = 0; d < D; d++) {
							acc[d] += pij * dO[d];
							acc[D + d] += fabs(pij * dO[d]);
							acc[2 * D + d] += ds * q[d];
							acc[3 * D + d] += fabs(ds * q[d]);
						}
					}
				for (d = 0; d < D; d++) {
					double wv = acc[d], bv = acc[D + d];
					double wk = s->scale * acc[2 * D + d], bk = s->scale * acc[3 * D + d];

					if (!(fabs(dV[d] - wv) <= 1e-4 * bv + 1e-6))
						return mt_error_set(err, MT_EINVAL,
								    "attention %s: dV[b%d g%d row %d][%d] = "
								    "%.7g, expected %.7g",
								    label, b, g, jj, d, (double)dV[d], wv);
					if (!(fabs(dK[d] - wk) <= 1e-4 * bk + 1e-6))
						return mt_error_set(err, MT_EINVAL,
								    "attention %s: dK[b%d g%d row %d][%d] = "
								    "%.7g, expected %.7g",
								    label, b, g, jj, d, (double)dK[d], wk);
				}
			}
	return MT_OK;
}

static int attn_verify(void *state, const struct mt_case *c, struct mt_error *err)
{
	const struct attn_state *s = state;
	double *p = malloc((size_t)s->S * sizeof(double));
	double *acc = malloc((size_t)4 * s->D * sizeof(double));
	int rc;

	if (!p || !acc)
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
	else if (s->bwd)
		rc = verify_bwd(s, c->label, p, acc, err);
	else
		rc = verify_fwd(s, c->label, p, err);
	free(p);
	free(acc);
	return rc;
}

static void attn_extra(void *state, const struct mt_case *c, char *buf, size_t n)
{
	(void)state;
	snprintf(buf, n,
		 "\"impl\": \"cpu blas, blocks of %d query rows%s\", \"flops_convention\": "
		 "\"fa: fwd 4bhs^2d%s, bwd 2.5x fwd\", \"blas_threads\": %d",
		 BLK, c->causal ? ", causal blocks skipped" : "", c->causal ? "/2" : "",
		 openblas_get_num_threads());
}

void mt_attention_cpu_damage(void *state)
{
	struct attn_state *s = state;
	float *out = s->bwd ? s->dq : s->o;
	int r0 = s->S / 2, nr = s->S - r0 < 64 ? s->S - r0 : 64;

	memset(out + qoff(s, s->B - 1, s->H - 1) + (size_t)r0 * s->D, 0,
	       (size_t)nr * s->D * sizeof(float));
}

void mt_attention_cpu_tensors(void *state, struct mt_attn_tensors *t)
{
	const struct attn_state *s = state;

	t->q = s->q;
	t->k = s->k;
	t->v = s->v;
	t->o = s->o;
	t->dout = s->dout;
	t->dq = s->dq;
	t->dk = s->dk;
	t->dv = s->dv;
}

const struct mt_probe_ops mt_attention_cpu = {
	.applicable = attention_cpu_applicable,
	.plan = mt_plan_attention,
	.setup = attn_setup,
	.run = attn_run,
	.verify = attn_verify,
	.teardown = attn_teardown,
	.extra = attn_extra,
};

/* ------------------------------------------------------- record, profile */

static void attention_describe(const struct mt_case *c, struct jw *w)
{
	jw_str(w, "dtype", mt_dtype_name(c->dtype));
	jw_int(w, "batch", c->batch);
	jw_int(w, "heads", c->heads);
	jw_int(w, "kv_heads", c->kv_heads);
	jw_int(w, "head_dim", c->head_dim);
	jw_int(w, "seq", c->seq);
	jw_bool(w, "causal", c->causal);
	jw_str(w, "direction", c->bwd ? "bwd" : "fwd");
}

/* 1 when the cases are the same shape (direction aside). */
static int same_shape(const cJSON *x, const cJSON *c)
{
	return mt_jget_num(x, "head_dim", 0) == mt_jget_num(c, "head_dim", 0) &&
	       mt_jget_num(x, "seq", 0) == mt_jget_num(c, "seq", 0) &&
	       mt_jget_num(x, "heads", 0) == mt_jget_num(c, "heads", 0) &&
	       mt_jget_num(x, "kv_heads", 0) == mt_jget_num(c, "kv_heads", 0) &&
	       mt_jget_num(x, "batch", 0) == mt_jget_num(c, "batch", 0) &&
	       mt_jget_bool(x, "causal", 0) == mt_jget_bool(c, "causal", 0) &&
	       !strcmp(mt_jget_str(x, "dtype"), mt_jget_str(c, "dtype"));
}

/* The profile keys attention by head_dim, seq and causal: the forward case
 * and the backward case of one shape make one entry (written at the
 * forward case). */
static int attention_to_profile(struct mt_calib *b, int g, struct mt_error *err)
{
	const cJSON *c = mt_calib_case(b, g);
	double bwd = 0, tmed, bt;
	struct mt_stats st, bs;
	int h, rc;

	if (strcmp(mt_jget_str(c, "direction"), "fwd"))
		return MT_OK;
	if ((rc = mt_calib_aggregate(b, g, &st, &tmed, err)))
		return rc;
	for (h = 0; h < mt_calib_groups(b); h++) {
		const cJSON *xc = mt_calib_case(b, h);

		if (strcmp(mt_jget_str(mt_calib_record(b, h, 0), "probe"), "attention") ||
		    strcmp(mt_jget_str(xc, "direction"), "bwd") || !same_shape(xc, c))
			continue;
		if (!mt_calib_aggregate(b, h, &bs, &bt, NULL))
			bwd = bs.median;
		break;
	}
	mt_profile_attention(b->doc, mt_jget_str(c, "dtype")[0] ? mt_jget_str(c, "dtype") : "bf16",
			     (int)mt_jget_num(c, "head_dim", 0), (int)mt_jget_num(c, "seq", 0),
			     mt_jget_bool(c, "causal", 0), st.median, bwd > 0 ? bwd : st.median,
			     b->src);
	return MT_OK;
}

const struct mt_probe mt_probe_attention = {
	.name = "attention",
	.summary = "fused attention forward and backward (cuDNN SDPA; CPU: BLAS attention)",
	.kind = MT_PROBE_DEVICE,
	.ops = { &mt_attention_cpu, &mt_cuda_forward },
	.describe = attention_describe,
	.to_profile = attention_to_profile,
};
