/* SPDX-License-Identifier: MIT */
/* proxy_plan: one configuration's per-layer work on one GPU (probes/proxy.h,
 * docs/MODEL.md "The proxy"). */
#include "proxy.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"

#define MAX_DIM 65536 /* the largest m, n or k the GEMM backends take */

struct pbuf {
	struct mt_proxy_item *v;
	int n, cap, oom;
	int gemm_dt, elem;      /* dtype of the GEMMs, bytes of an activation element */
};

static struct mt_proxy_item *proxy_plan_push(struct pbuf *b, int probe, int part, int bwd, double weight)
{
	struct mt_proxy_item *it;

	if (b->n == b->cap) {
		int cap = b->cap ? 2 * b->cap : 32;
		struct mt_proxy_item *v = realloc(b->v, (size_t)cap * sizeof(*v));

		if (!v) {
			b->oom = 1;
			return NULL;
		}
		b->v = v;
		b->cap = cap;
	}
	it = &b->v[b->n++];
	memset(it, 0, sizeof(*it));
	it->probe = probe;
	it->part = part;
	it->bwd = bwd;
	it->weight = weight;
	it->c.inner = 1;
	return it;
}

/* One GEMM of the forward pass, D[m x n] = A[m x k] B[k x n], and the two of
 * its backward: the data gradient [m x k] = [m x n][n x k] and the weight
 * gradient [k x n] = [k x m][m x n].  `count` GEMMs of this shape. */
static void gemm3(struct pbuf *b, int part, const char *what, long long m, long long n,
		  long long k, double count)
{
	static const char *const dir[3] = { "fwd", "dgrad", "wgrad" };
	long long s[3][3] = { { m, n, k }, { m, k, n }, { k, n, m } };
	int i;

	for (i = 0; i < 3; i++) {
		struct mt_proxy_item *it;
		int d = s[i][1] >= s[i][0] && s[i][1] >= s[i][2] ? 1 : s[i][0] >= s[i][2] ? 0 : 2;
		long long parts = (s[i][d] + MAX_DIM - 1) / MAX_DIM;

		/* a dimension above what a backend takes (the output layer's
		 * vocabulary): that many GEMMs of an equal share */
		s[i][d] = (s[i][d] + parts - 1) / parts;
		if (!(it = proxy_plan_push(b, MT_PX_GEMM, part, i > 0, count * (double)parts)))
			return;
		it->c.dtype = b->gemm_dt;
		it->c.m = s[i][0];
		it->c.n = s[i][1];
		it->c.k = s[i][2];
		it->c.flops = 2.0 * (double)s[i][0] * (double)s[i][1] * (double)s[i][2];
		snprintf(it->c.origin, sizeof(it->c.origin), "%s", what);
		snprintf(it->c.label, sizeof(it->c.label), "%s %s %lldx%lldx%lld", what, dir[i],
			 s[i][0], s[i][1], s[i][2]);
	}
}

static void attn(struct pbuf *b, int batch, int heads, int kv, int hd, int seq, int causal,
		 double count)
{
	int bwd;

	for (bwd = 0; bwd < 2; bwd++) {
		struct mt_proxy_item *it = proxy_plan_push(b, MT_PX_ATTN, MT_PX_COMMON, bwd, count);
		double f = 4.0 * batch * heads * (double)seq * seq * hd * (causal ? 0.5 : 1);

		if (!it)
			return;
		it->attn_fwd = !bwd;
		it->c.dtype = b->gemm_dt == MT_DT_FP32 ? MT_DT_FP32 : MT_DT_BF16;
		it->c.batch = batch;
		it->c.heads = heads;
		it->c.kv_heads = kv;
		it->c.head_dim = hd;
		it->c.seq = seq;
		it->c.causal = causal;
		it->c.bwd = bwd;
		it->c.flops = bwd ? 2.5 * f : f;
		snprintf(it->c.origin, sizeof(it->c.origin), "attention");
		snprintf(it->c.label, sizeof(it->c.label), "attention %s b%d h%d/%d d%d s%d%s",
			 bwd ? "bwd" : "fwd", batch, heads, kv, hd, seq, causal ? " causal" : "");
	}
}

/* A collective of `bytes` (nccl-tests' size) over group g, `count` times. */
static void proxy_plan_coll(struct pbuf *b, int part, int bwd, int g, int op, double bytes, double count,
		 const char *what)
{
	struct mt_proxy_item *it;

	if (bytes < 64)
		bytes = 64;
	bytes = floor(bytes / 64) * 64; /* whole floats per rank of any group up to 16 */
	if (!(it = proxy_plan_push(b, MT_PX_COLL, part, bwd, count)))
		return;
	it->c.op = op;
	it->c.group = g;
	it->c.bytes = bytes;
	snprintf(it->c.origin, sizeof(it->c.origin), "%s", what);
	snprintf(it->c.label, sizeof(it->c.label), "%s %s %.0fB", what, mt_coll_name(op), bytes);
}

static int need_div(const struct mt_model *m, const char *what, long long v, int by,
		    const char *knob, struct mt_error *err)
{
	if (by < 1 || v % by)
		return mt_error_set(err, MT_EINVAL,
				    "model %s: %s (%lld) is not divisible by %s %d", m->name, what, v,
				    knob, by);
	return MT_OK;
}

/* Group sizes for the run: the configuration's, made smaller (DP, then PP,
 * EP, CP, TP) until they fit `world` ranks. */
static void proxy_plan_layout(struct mt_proxy_plan *p, int world)
{
	struct sbuf sb;
	int tp = p->tp, cp = p->cp, pp = p->pp, dp = p->dp, ep = p->ep, etp = p->etp, rest;

	sbuf_init(&sb);
	if (tp > world)
		tp = world;
	if (cp > world / tp)
		cp = world / tp;
	rest = world / (tp * cp);
	if (pp > rest)
		pp = rest >= 2 ? 2 : 1;
	if (dp > rest / pp)
		dp = rest / pp;
	if (dp < 1)
		dp = 1;
	/* experts: etp-ep blocks over the ranks used */
	if (etp > tp * cp * dp)
		etp = 1;
	while (ep > 1 && (tp * cp * dp) % (ep * etp))
		ep--;
	p->run_tp = tp;
	p->run_cp = cp;
	p->run_pp = pp;
	p->run_dp = dp;
	p->run_ep = ep;
	p->used = tp * cp * dp * pp;
	p->gsize[MT_PG_TP] = tp, p->gstride[MT_PG_TP] = 1, p->gblock[MT_PG_TP] = tp;
	p->gsize[MT_PG_CP] = cp, p->gstride[MT_PG_CP] = tp, p->gblock[MT_PG_CP] = tp * cp;
	p->gsize[MT_PG_DP] = cp * dp, p->gstride[MT_PG_DP] = tp, p->gblock[MT_PG_DP] = tp * cp * dp;
	p->gsize[MT_PG_PP] = pp, p->gstride[MT_PG_PP] = tp * cp * dp, p->gblock[MT_PG_PP] = p->used;
	p->gsize[MT_PG_EP] = ep, p->gstride[MT_PG_EP] = etp, p->gblock[MT_PG_EP] = etp * ep;
	if (tp != p->tp)
		sbuf_addf(&sb, "%sTP group %d -> %d ranks", sb.len ? "; " : "", p->tp, tp);
	if (cp != p->cp)
		sbuf_addf(&sb, "%sCP group %d -> %d ranks", sb.len ? "; " : "", p->cp, cp);
	if (pp != p->pp)
		sbuf_addf(&sb, "%sPP %d -> %d stages (send/recv between two; %g layers per stage "
			    "kept)", sb.len ? "; " : "", p->pp, pp, p->layers_dense + p->layers_moe);
	if (dp != p->dp)
		sbuf_addf(&sb, "%sDP %d -> %d replicas (gradient reduction over %d ranks)",
			    sb.len ? "; " : "", p->dp, dp, cp * dp);
	if (ep != p->ep)
		sbuf_addf(&sb, "%sEP group %d -> %d ranks", sb.len ? "; " : "", p->ep, ep);
	if (p->used < world)
		sbuf_addf(&sb, "%s%d of %d ranks idle", sb.len ? "; " : "", world - p->used,
			    world);
	snprintf(p->scaled, sizeof(p->scaled), "%s", sb.len ? sb.buf : "");
	sbuf_release(&sb);
}

/* The attention block: QKV, attention, projection, and their TP/CP comm. */
static int attention_block(const struct mt_model *m, const struct mt_config *c, struct pbuf *b,
			   long long T, int seq_local, struct mt_error *err)
{
	long long h = m->hidden, a, g;
	double act = (double)T * h * b->elem;
	int rc, hd = m->head_dim;

	if ((rc = need_div(m, "attention heads", m->heads, c->tp, "TP", err)))
		return rc;
	a = m->heads / c->tp;
	if (m->mla) {
		long long qk = m->qk_nope_dim + m->qk_rope_dim;

		if (m->q_lora_rank > 0) {
			gemm3(b, MT_PX_COMMON, "q down", T, m->q_lora_rank, h, 1);
			gemm3(b, MT_PX_COMMON, "q up", T, a * qk, m->q_lora_rank, 1);
		} else {
			gemm3(b, MT_PX_COMMON, "q", T, a * qk, h, 1);
		}
		gemm3(b, MT_PX_COMMON, "kv down", T, m->kv_lora_rank + m->qk_rope_dim, h, 1);
		gemm3(b, MT_PX_COMMON, "kv up", T, a * (m->qk_nope_dim + m->v_head_dim),
		      m->kv_lora_rank, 1);
		gemm3(b, MT_PX_COMMON, "attn out", T, h, a * m->v_head_dim, 1);
		g = a;
		hd = (int)qk;
	} else {
		if ((rc = need_div(m, "key/value heads", m->kv_heads, c->tp, "TP", err)))
			return rc;
		g = m->kv_heads / c->tp;
		gemm3(b, MT_PX_COMMON, "qkv", T, (a + 2 * g) * m->head_dim, h, 1);
		gemm3(b, MT_PX_COMMON, "attn out", T, h, a * m->head_dim, 1);
	}
	/* causal attention of the local shard; with CP the local queries also
	 * meet (cp - 1) / 2 full blocks of the others' keys on average
	 * (load-balanced chunks) */
	attn(b, c->mbs, (int)a, (int)g, hd, seq_local, 1, 1);
	if (c->cp > 1)
		attn(b, c->mbs, (int)a, (int)g, hd, seq_local, 0, (c->cp - 1) / 2.0);
	if (c->tp > 1) {
		if (c->sp) {
			proxy_plan_coll(b, MT_PX_COMMON, 0, MT_PG_TP, MT_COLL_ALL_GATHER, act, 1, "tp");
			proxy_plan_coll(b, MT_PX_COMMON, 0, MT_PG_TP, MT_COLL_REDUCE_SCATTER, act, 1, "tp");
			proxy_plan_coll(b, MT_PX_COMMON, 1, MT_PG_TP, MT_COLL_ALL_GATHER, act, 2, "tp");
			proxy_plan_coll(b, MT_PX_COMMON, 1, MT_PG_TP, MT_COLL_REDUCE_SCATTER, act, 1, "tp");
		} else {
			proxy_plan_coll(b, MT_PX_COMMON, 0, MT_PG_TP, MT_COLL_ALL_REDUCE, act, 1, "tp");
			proxy_plan_coll(b, MT_PX_COMMON, 1, MT_PG_TP, MT_COLL_ALL_REDUCE, act, 1, "tp");
		}
	}
	if (c->cp > 1) {
		/* K and V of the local shard to each other CP rank (forward), and
		 * dK, dV back (backward); all-to-all types move Q, K, V and O */
		double kv = 2.0 * (double)T * g * hd * b->elem;

		if (c->cp_comm == MT_CP_A2A || c->cp_comm == MT_CP_A2A_P2P) {
			double q = (double)T * a * hd * b->elem;

			proxy_plan_coll(b, MT_PX_COMMON, 0, MT_PG_CP, MT_COLL_ALL_TO_ALL, q + kv / 2, 2, "cp");
			proxy_plan_coll(b, MT_PX_COMMON, 1, MT_PG_CP, MT_COLL_ALL_TO_ALL, q + kv / 2, 2, "cp");
		} else if (c->cp_comm == MT_CP_ALL_GATHER) {
			proxy_plan_coll(b, MT_PX_COMMON, 0, MT_PG_CP, MT_COLL_ALL_GATHER, kv * c->cp, 1, "cp");
			proxy_plan_coll(b, MT_PX_COMMON, 1, MT_PG_CP, MT_COLL_REDUCE_SCATTER, kv * c->cp, 1, "cp");
		} else {
			proxy_plan_coll(b, MT_PX_COMMON, 0, MT_PG_CP, MT_COLL_SEND_RECV, kv, c->cp - 1, "cp");
			proxy_plan_coll(b, MT_PX_COMMON, 1, MT_PG_CP, MT_COLL_SEND_RECV, kv, 2.0 * (c->cp - 1), "cp");
		}
	}
	return MT_OK;
}

static int mlp_blocks(const struct mt_model *m, const struct mt_config *c, struct pbuf *b,
		      long long T, struct mt_error *err)
{
	long long h = m->hidden, f;
	double act = (double)T * h * b->elem;
	int rc, up = m->gated ? 2 : 1;

	if (m->experts == 0 || m->moe_layers < m->layers) {
		if ((rc = need_div(m, "ffn size", m->ffn, c->tp, "TP", err)))
			return rc;
		f = m->ffn / c->tp;
		gemm3(b, MT_PX_DENSE, "mlp up", T, up * f, h, 1);
		gemm3(b, MT_PX_DENSE, "mlp down", T, h, f, 1);
		if (c->tp > 1 && c->sp) {
			proxy_plan_coll(b, MT_PX_DENSE, 0, MT_PG_TP, MT_COLL_ALL_GATHER, act, 1, "tp");
			proxy_plan_coll(b, MT_PX_DENSE, 0, MT_PG_TP, MT_COLL_REDUCE_SCATTER, act, 1, "tp");
			proxy_plan_coll(b, MT_PX_DENSE, 1, MT_PG_TP, MT_COLL_ALL_GATHER, act, 2, "tp");
			proxy_plan_coll(b, MT_PX_DENSE, 1, MT_PG_TP, MT_COLL_REDUCE_SCATTER, act, 1, "tp");
		} else if (c->tp > 1) {
			proxy_plan_coll(b, MT_PX_DENSE, 0, MT_PG_TP, MT_COLL_ALL_REDUCE, act, 1, "tp");
			proxy_plan_coll(b, MT_PX_DENSE, 1, MT_PG_TP, MT_COLL_ALL_REDUCE, act, 1, "tp");
		}
	}
	if (m->experts > 0) {
		/* tokens on this rank before dispatch (SP shards them over TP
		 * unless the experts are split by ETP = TP), each sent to topk
		 * experts; balanced routing gives each of the E / EP local experts
		 * tokens * topk * EP / E rows */
		double tin = (double)T * c->etp / c->tp, rows;

		if ((rc = need_div(m, "experts", m->experts, c->ep, "EP", err)) ||
		    (rc = need_div(m, "expert ffn size", m->moe_ffn, c->etp, "ETP", err)))
			return rc;
		rows = ceil(tin * m->topk * c->ep / m->experts);
		f = m->moe_ffn / c->etp;
		gemm3(b, MT_PX_MOE, "expert up", rows < 1 ? 1 : (long long)rows, up * f, h,
		      (double)m->experts / c->ep);
		gemm3(b, MT_PX_MOE, "expert down", rows < 1 ? 1 : (long long)rows, h, f,
		      (double)m->experts / c->ep);
		gemm3(b, MT_PX_MOE, "router", T, m->experts, h, 1);
		if (m->shared_ffn > 0) {
			if ((rc = need_div(m, "shared expert ffn size", m->shared_ffn, c->tp, "TP",
					   err)))
				return rc;
			f = m->shared_ffn / c->tp;
			gemm3(b, MT_PX_MOE, "shared up", T, up * f, h, 1);
			gemm3(b, MT_PX_MOE, "shared down", T, h, f, 1);
		}
		if (c->ep > 1) {
			double bytes = tin * m->topk * h * b->elem;

			proxy_plan_coll(b, MT_PX_MOE, 0, MT_PG_EP, MT_COLL_ALL_TO_ALL, bytes, 2, "ep");
			proxy_plan_coll(b, MT_PX_MOE, 1, MT_PG_EP, MT_COLL_ALL_TO_ALL, bytes, 2, "ep");
		}
	}
	return MT_OK;
}

/* Parameters (elements) of the GEMMs of a part, per layer. */
static double part_params(const struct pbuf *b, int part)
{
	double s = 0;
	int i;

	for (i = 0; i < b->n; i++)
		if (b->v[i].part == part && b->v[i].probe == MT_PX_GEMM && !b->v[i].bwd)
			s += (double)b->v[i].c.n * (double)b->v[i].c.k * b->v[i].weight;
	return s;
}

int mt_proxy_plan(const struct mt_model *m, const struct mt_job *job, const struct mt_config *c,
		  int world_size, int backend, struct mt_proxy_plan *p, struct mt_error *err)
{
	struct pbuf b = { 0 };
	long long T;
	int rc, seq_local, pvocab;
	double params, act;

	memset(p, 0, sizeof(*p));
	if (c->tp < 1 || c->pp < 1 || c->cp < 1 || c->ep < 1 || c->etp < 1 || c->dp < 1 ||
	    c->mbs < 1 || c->num_mb < 1 || (c->vpp != 0 && c->vpp < 1))
		return mt_error_set(err, MT_EINVAL, "configuration: tp, pp, cp, ep, etp, dp, mbs and "
				    "num_microbatches must be positive integers");
	if (job->seq % (2 * c->cp) && c->cp > 1)
		return mt_error_set(err, MT_EINVAL, "configuration: sequence %d does not split into "
				    "2 x CP %d chunks", job->seq, c->cp);
	p->tp = c->tp, p->pp = c->pp, p->vpp = c->vpp > 0 ? c->vpp : 1, p->cp = c->cp;
	p->ep = c->ep, p->etp = c->etp, p->dp = c->dp, p->mbs = c->mbs, p->num_mb = c->num_mb;
	p->gpus = job->gpus, p->seq = job->seq, p->gbs = job->gbs, p->recompute = c->recompute;
	p->overlap_grad = c->overlap_grad, p->overlap_param = c->overlap_param && c->dist_opt;
	p->layers_moe = (double)m->moe_layers / c->pp;
	p->layers_dense = (double)(m->layers - m->moe_layers) / c->pp;
	pvocab = mt_model_padded_vocab(m, c->tp);
	p->model_flops_step = mt_model_step_flops(m, (double)job->gbs, job->seq, pvocab,
						  MT_FLOPS_MEGATRON);
	b.gemm_dt = backend == MT_BACKEND_CPU ? MT_DT_FP32
		    : job->precision == MT_PREC_FP8 ? MT_DT_FP8 : MT_DT_BF16;
	b.elem = 2; /* BF16 activations on the wire */
	seq_local = job->seq / c->cp;
	T = (long long)c->mbs * seq_local;
	if ((rc = attention_block(m, c, &b, T, seq_local, err)) ||
	    (rc = mlp_blocks(m, c, &b, T, err))) {
		free(b.v);
		return rc;
	}
	act = (double)T * m->hidden * b.elem;
	/* the output layer (last stage), its TP gather of the hidden states */
	gemm3(&b, MT_PX_OUTPUT, "output", T, pvocab / c->tp, m->hidden, 1);
	if (c->tp > 1 && c->sp) {
		proxy_plan_coll(&b, MT_PX_OUTPUT, 0, MT_PG_TP, MT_COLL_ALL_GATHER, act, 1, "tp");
		proxy_plan_coll(&b, MT_PX_OUTPUT, 1, MT_PG_TP, MT_COLL_REDUCE_SCATTER, act, 1, "tp");
	}
	/* one activation to the next stage, one gradient back (SP: a TP shard) */
	if (c->pp > 1)
		proxy_plan_coll(&b, MT_PX_P2P, 0, MT_PG_PP, MT_COLL_SEND_RECV,
		     act / (c->sp && c->tp > 1 ? c->tp : 1), 2, "pp");
	/* the stage's gradients over DP x CP, once per step */
	params = part_params(&b, MT_PX_COMMON) * (p->layers_dense + p->layers_moe) +
		 part_params(&b, MT_PX_DENSE) * p->layers_dense +
		 part_params(&b, MT_PX_MOE) * p->layers_moe + part_params(&b, MT_PX_OUTPUT);
	if (c->dp * c->cp > 1) {
		/* in DDP buckets (Megatron-LM's default: max(40M, 1M x DP)
		 * parameters), one bucket measured and counted for all */
		double bucket = c->bucket_params > 0 ? (double)c->bucket_params
				: fmax(40e6, 1e6 * c->dp * c->cp);
		double nb = params / bucket < 1 ? 1 : params / bucket, per = params / nb;

		if (c->dist_opt) {
			proxy_plan_coll(&b, MT_PX_DP_RS, 1, MT_PG_DP, MT_COLL_REDUCE_SCATTER,
			     per * (c->grad_fp32 ? 4 : 2), nb, "dp");
			proxy_plan_coll(&b, MT_PX_DP_AG, 0, MT_PG_DP, MT_COLL_ALL_GATHER, per * 2, nb, "dp");
		} else {
			proxy_plan_coll(&b, MT_PX_DP_RS, 1, MT_PG_DP, MT_COLL_ALL_REDUCE,
			     per * (c->grad_fp32 ? 4 : 2), nb, "dp");
		}
	}
	if (b.oom) {
		free(b.v);
		return mt_error_set(err, MT_ENOMEM, "proxy: out of memory");
	}
	p->items = b.v;
	p->nitems = b.n;
	proxy_plan_layout(p, world_size);
	return MT_OK;
}

void mt_proxy_plan_free(struct mt_proxy_plan *p)
{
	free(p->items);
	p->items = NULL;
	p->nitems = 0;
}
