/* SPDX-License-Identifier: MIT */
/* pipeline: level B of the model, the layer split over pipeline stages and
 * the data-parallel communication (docs/MODEL.md sections 4.6 and 5.4-5.5). */
#include <math.h>
#include <string.h>

#include "constants.h"
#include "fsdp.h"
#include "optim.h"
#include "perf.h"
#include "precision.h"


int mt_chunk_layers(int L, int pp, int vpp, int split, int first, int last, int chunk)
{
	int n = pp * vpp, stage = chunk % pp, vi = chunk / pp, k;

	switch (split) {
	case MT_SPLIT_EVEN:
		return L / n;
	case MT_SPLIT_ACCOUNT:
		k = (L + 2) / n;
		return k - ((stage == 0 && vi == 0) || (stage == pp - 1 && vi == vpp - 1));
	case MT_SPLIT_ACCOUNT_LOSS:
		k = (L + 1) / n;
		return k - (stage == pp - 1 && vi == vpp - 1);
	default:
		if (stage == 0)
			return first / vpp;
		if (stage == pp - 1)
			return last / vpp;
		return (L - first - last) / (pp - 2) / vpp;
	}
}

/* Choose how L layers split over pp x vpp chunks (docs/MODEL.md 4.6).
 * Returns -1 when no split exists. */
static int choose_split(int L, int pp, int vpp, unsigned off, int *split, int *first, int *last)
{
	int n = pp * vpp, X, Y, best = 1 << 30, bd = 1 << 30;

	*first = *last = 0;
	if (L % n == 0) {
		*split = MT_SPLIT_EVEN;
		return 0;
	}
	if (vpp > 1 && (off & MT_ROFF_SPLIT_UNEVEN_VPP))
		return -1;
	if (pp > 1 && !(off & MT_ROFF_SPLIT_ACCOUNT) && (L + 2) % n == 0 && (L + 2) / n >= 2) {
		*split = MT_SPLIT_ACCOUNT;
		return 0;
	}
	if (pp > 1 && !(off & MT_ROFF_SPLIT_ACCOUNT) && (L + 1) % n == 0 && (L + 1) / n >= 2) {
		*split = MT_SPLIT_ACCOUNT_LOSS;
		return 0;
	}
	if (pp < 2 || (off & MT_ROFF_SPLIT_FIRST_LAST))
		return -1;
	for (X = vpp; X < L; X += vpp) {
		for (Y = vpp; X + Y <= L; Y += vpp) {
			int rem = L - X - Y, mid, cost, d;

			if (pp == 2) {
				if (rem)
					continue;
				mid = 0;
			} else {
				if (rem <= 0 || rem % (pp - 2) || (rem / (pp - 2)) % vpp)
					continue;
				mid = rem / (pp - 2);
			}
			cost = X > Y ? X : Y;
			if (mid > cost)
				cost = mid;
			/* prefer lighter end stages: they also hold the embedding and
			 * the output layer */
			d = (X > mid ? X - mid : 0) + (Y > mid ? Y - mid : 0) + (X > Y ? X - Y : Y - X);
			if (cost < best || (cost == best && d < bd)) {
				best = cost;
				bd = d;
				*first = X;
				*last = Y;
			}
		}
	}
	if (best == 1 << 30)
		return -1;
	*split = MT_SPLIT_FIRST_LAST;
	return 0;
}

double mt_stage_params(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *p,
		       int stage, double *exp, double *fp8)
{
	const struct mt_model *m = x->model;
	double d = 0, V = 0;
	int k;

	*exp = *fp8 = 0;
	for (k = 0; k < MT_L_N; k++) {
		d += p->nl[stage][k] * (a->par_tp[k] + a->par_rep[k]);
		*exp += p->nl[stage][k] * a->par_exp[k];
		*fp8 += p->nl[stage][k] * a->par_fp8[k];
	}
	if (stage == 0)
		d += a->par_emb;
	if (stage == p->pp - 1 || (m->mtp_layers && stage == p->mtp_stage))
		V = mt_model_padded_vocab(m, a->tp);
	if (stage == p->pp - 1) {
		if (!m->tied || p->pp > 1)
			d += V * m->hidden / a->tp;
		d += (double)m->hidden * m->norm;
	}
	if (m->mtp_layers && stage == p->mtp_stage) {
		/* the MTP modules' projections and norms; apart from the loss
		 * stage, they also hold a copy of the output layer */
		d += m->mtp_layers * (2.0 * m->hidden * m->hidden / a->tp + 3.0 * m->hidden * m->norm);
		if (stage != p->pp - 1)
			d += V * m->hidden / a->tp;
		/* and, in a model chunk other than the first, a copy of the word
		 * embedding that the MTP layers embed their shifted tokens with,
		 * kept in step with the first chunk's (Megatron-LM d98e8a6
		 * megatron/core/models/gpt/gpt_model.py:173: an embedding where
		 * pre_process or mtp_process; language_module.py:278-290): its
		 * weights, gradients and optimizer states (4.8) */
		if (p->layout.mtp_chunk != 0)
			d += a->par_emb;
	}
	return d;
}

int mt_split_exists(int L, int pp, int vpp)
{
	/* a pipeline layout exists whenever every chunk can hold one item */
	return pp >= 1 && vpp >= 1 && pp <= MT_MAX_PP && pp * vpp <= L + 2 &&
	       pp * vpp <= MT_LAYOUT_MAX;
}

/* The split in layout form: the layers of each chunk, MTP on the last one. */
static void split_layout(const struct mt_model *m, int pp, int vpp, int split, int first, int last,
			 struct mt_layout *l)
{
	int c, n = pp * vpp;

	l->n = n;
	l->layers = m->layers;
	l->mtp = m->mtp_layers;
	l->mtp_chunk = m->mtp_layers ? n - 1 : -1;
	for (c = 0; c < n; c++) {
		l->t[c] = (unsigned short)mt_chunk_layers(m->layers, pp, vpp, split, first, last, c);
		l->m[c] = 0;
	}
	if (m->mtp_layers)
		l->m[n - 1] = (unsigned char)m->mtp_layers;
}

/* The job's own split (mt_job.split) where L layers over pp x vpp chunks
 * can run it, as Megatron-LM's validate_args and get_num_layers_to_build
 * accept it: 1 with it in *split, *first, *last, else 0. */
static int job_split(const struct mt_job *j, int L, int pp, int vpp, int *split, int *first,
		     int *last)
{
	int n = pp * vpp, mid;

	*first = *last = 0;
	*split = j->split;
	if (pp < 2)
		return 0;
	switch (j->split) {
	case MT_SPLIT_ACCOUNT:
		return (L + 2) % n == 0 && (L + 2) / n >= 1;
	case MT_SPLIT_ACCOUNT_LOSS:
		return (L + 1) % n == 0 && (L + 1) / n >= 1;
	case MT_SPLIT_FIRST_LAST:
		*first = j->split_first > 0 ? j->split_first : 0;
		*last = j->split_last > 0 ? j->split_last : 0;
		/* one given: the other stages share the rest evenly */
		if (!*first || !*last) {
			int rest = L - *first - *last, k = pp - (*first > 0) - (*last > 0);

			if (k <= 0 || rest % k)
				return 0;
			if (!*first)
				*first = rest / k;
			if (!*last)
				*last = rest / k;
		}
		mid = L - *first - *last;
		if (*first % vpp || *last % vpp || mid < 0)
			return 0;
		if (pp == 2)
			return mid == 0;
		return mid % (pp - 2) == 0 && (mid / (pp - 2)) % vpp == 0;
	default:
		return 0;
	}
}

/* The split of the plan (docs/MODEL.md 4.6): a pinned layout; else even,
 * accounted, loss-accounted; else the lighter (heaviest stage) of the
 * first/last split and the balanced layout; else the balanced layout. */
/* plan_split's answers by (model, sequence, pinned layout, pp, vpp): the
 * split depends on nothing else, and a balanced layout costs microseconds
 * that the search would otherwise pay for every layer shape.  An open-
 * addressed table, filled without allocating: a search visits at most a few
 * hundred (pp, vpp) pairs, each probed from its hash until found or an empty
 * slot takes it; a full neighbourhood computes without keeping. */
#define SPLIT_MEMO 1021 /* a prime */
#define SPLIT_PROBES 16
struct split_memo {
	unsigned gen; /* the context's (0: empty) */
	int pp, vpp, rc, split, first, last;
	struct mt_layout l;
};
static struct split_memo memo[SPLIT_MEMO];

static int plan_split_uncached(const struct mt_ctx *x, int pp, int vpp, struct mt_plan *o);

static int plan_split(const struct mt_ctx *x, int pp, int vpp, struct mt_plan *o)
{
	unsigned h = ((unsigned)pp * 2654435761u ^ (unsigned)vpp * 40503u) % SPLIT_MEMO;
	struct split_memo *e = NULL;
	int i;

	for (i = 0; i < SPLIT_PROBES; i++) {
		e = &memo[(h + (unsigned)i) % SPLIT_MEMO];
		if (e->gen != x->gen)
			break; /* empty for this context: take it */
		if (e->pp == pp && e->vpp == vpp) {
			if (e->rc)
				return e->rc;
			o->split = e->split;
			o->first_layers = e->first;
			o->last_layers = e->last;
			memcpy(&o->layout, &e->l, sizeof(e->l));
			return 0;
		}
	}
	if (i == SPLIT_PROBES)
		return plan_split_uncached(x, pp, vpp, o);
	e->rc = plan_split_uncached(x, pp, vpp, o);
	e->gen = x->gen;
	e->pp = pp;
	e->vpp = vpp;
	e->split = o->split;
	e->first = o->first_layers;
	e->last = o->last_layers;
	if (!e->rc)
		memcpy(&e->l, &o->layout, sizeof(e->l));
	return e->rc;
}

static int plan_split_uncached(const struct mt_ctx *x, int pp, int vpp, struct mt_plan *o)
{
	const struct mt_model *m = x->model;
	const struct mt_layout *pin = x->job->pins.layout;
	int split, first, last, seq = x->job->seq;

	o->first_layers = o->last_layers = 0;
	if (pin) {
		if (pin->n != pp * vpp || pin->layers != m->layers || pin->mtp != m->mtp_layers ||
		    (pin->mtp && pin->mtp_chunk < pin->n - pp))
			return -1;
		o->split = MT_SPLIT_LAYOUT;
		memcpy(&o->layout, pin, sizeof(*pin));
		return 0;
	}
	if (pp * vpp > MT_LAYOUT_MAX)
		return -1;
	if (job_split(x->job, m->layers, pp, vpp, &split, &first, &last)) {
		split_layout(m, pp, vpp, split, first, last, &o->layout);
		o->split = split;
		o->first_layers = first;
		o->last_layers = last;
		return 0;
	}
	if (pp <= m->layers &&
	    !choose_split(m->layers, pp, vpp, x->job->release_off, &split, &first, &last)) {
		split_layout(m, pp, vpp, split, first, last, &o->layout);
		o->split = split;
		o->first_layers = first;
		o->last_layers = last;
		if (split != MT_SPLIT_FIRST_LAST)
			return 0;
	} else {
		o->split = -1;
	}
	if (pp < 2 || (x->job->release_off & MT_ROFF_SPLIT_LAYOUT) ||
	    (vpp > 1 && (x->job->release_off & MT_ROFF_SPLIT_UNEVEN_VPP)))
		return o->split < 0 ? -1 : 0;
	{
		struct mt_layout bal;

		if (mt_layout_balanced(m, seq, pp, vpp, &bal))
			return o->split < 0 ? -1 : 0;
		if (o->split < 0 || mt_layout_max_stage(m, seq, &bal, pp) <
					    mt_layout_max_stage(m, seq, &o->layout, pp)) {
			memcpy(&o->layout, &bal, sizeof(bal));
			o->split = MT_SPLIT_LAYOUT;
			o->first_layers = o->last_layers = 0;
		}
	}
	return 0;
}

/* bucketed()'s answers: the same DP traffic recurs for every micro-batch
 * size and layer setting of a TP x CP x EP shape, and each answer costs two
 * curve look-ups.  A direct-mapped table, filled without allocating. */
#define BUCKET_MEMO 1024
struct bucket_memo {
	unsigned gen; /* the context's (0: empty) */
	double P, bucket, bytes_per, total, one;
	int op, n, stride;
};
static struct bucket_memo bmemo[BUCKET_MEMO];

static void bucketed_uncached(const struct mt_ctx *x, int op, int n, int stride, double P,
			      double bucket, double bytes_per, double *total, double *one);

static void bucketed(const struct mt_ctx *x, int op, int n, int stride, double P, double bucket,
		     double bytes_per, double *total, double *one)
{
	unsigned long long h;
	struct bucket_memo *e;

	if (n <= 1 || P <= 0) {
		*total = *one = 0;
		return;
	}
	h = (unsigned long long)P * 0x9E3779B97F4A7C15ull ^ (unsigned long long)bucket * 31u ^
	    (unsigned long long)(op * 7919 + n * 131 + stride * 17 + (int)bytes_per);
	e = &bmemo[(h ^ (h >> 29)) % BUCKET_MEMO];
	if (e->gen == x->gen && e->op == op && e->n == n && e->stride == stride &&
	    e->P == P && e->bucket == bucket && e->bytes_per == bytes_per) {
		*total = e->total;
		*one = e->one;
		return;
	}
	bucketed_uncached(x, op, n, stride, P, bucket, bytes_per, total, one);
	*e = (struct bucket_memo){ x->gen, P, bucket, bytes_per, *total, *one, op, n, stride };
}

/* Time of the bucketed gradient reduction (or parameter gather) of P
 * parameters of `bytes_per` bytes over a group, and of its largest bucket. */
static void bucketed_uncached(const struct mt_ctx *x, int op, int n, int stride, double P,
			      double bucket, double bytes_per, double *total, double *one)
{
	double nb, last, tb;
	int pd;

	*total = *one = 0;
	if (n <= 1 || P <= 0)
		return;
	pd = mt_group_per_domain(x->cluster, n, stride);
	nb = ceil(P / bucket);
	last = P - (nb - 1) * bucket;
	tb = mt_coll_time(x->cluster, op, n, pd, (P < bucket ? P : bucket) * bytes_per);
	*total = (nb - 1) * tb + mt_coll_time(x->cluster, op, n, pd, last * bytes_per);
	*one = tb;
}

static double comm_buffers(const struct mt_ctx *x, int n, int stride)
{
	int inside;

	if (n <= 1)
		return 0;
	inside = mt_group_per_domain(x->cluster, n, stride) == n;
	return (inside ? MT_NCCL_CHANNELS_NVLINK : MT_NCCL_CHANNELS_NETWORK) * MT_NCCL_CHANNEL_BYTES;
}

/* The model chunks of stage st in flight at its peak, in units of the
 * stage's mean chunk (its layers / vpp): under the interleaved schedule
 * the chunks in flight are not a sample of every chunk but the first
 * forwards' (the warm-up runs microbatch groups of pp through chunk 0, then
 * chunk 1, ...), then one forward and one backward in turn (backwards from
 * the last chunk).  Walked over the step, the most layers live at once;
 * with even chunks this is mt_inflight (docs/MODEL.md 4.8).  A plan's
 * own: the memory of every candidate on it reads it (mt_plan.inflight_ck). */
static double inflight_chunks(const struct mt_plan *b, int st)
{
	int pp = b->pp, vpp = b->vpp, n = b->num_mb * vpp, warm, k, v, len;
	double lc[MT_LAYOUT_MAX], tot = 0, live = 0, peak = 0;

	if (vpp <= 1 || pp <= 1 || b->layout.n != pp * vpp)
		return mt_inflight(pp, vpp, b->num_mb, st);
	for (v = 0; v < vpp; v++) {
		lc[v] = b->layout.t[v * pp + st] + b->layout.m[v * pp + st];
		tot += lc[v];
	}
	if (tot <= 0)
		return mt_inflight(pp, vpp, b->num_mb, st);
	warm = (pp - st - 1) * 2 + (vpp - 1) * pp;
	if (warm > n)
		warm = n;
	/* the warm-up's forwards, a group of pp micro-batches per chunk */
	for (k = 0; k < warm; k += len) {
		len = pp - k % pp < warm - k ? pp - k % pp : warm - k;
		live += len * lc[(k / pp) % vpp];
	}
	peak = live;
	/* the steady state repeats every pp x vpp steps (each chunk enters and
	 * leaves pp times a period), so one period past the warm-up holds the
	 * peak; the cool-down only frees.  Each step adds a forward's chunk,
	 * then frees a backward's; between the steps where either chunk changes
	 * the change per step is the same, so the peak of a run of steps is at
	 * its first or its last */
	if (n > warm + pp * vpp)
		n = warm + pp * vpp;
	for (k = warm; k < n; k += len) {
		int j = k - warm;
		double f = lc[(k / pp) % vpp], r = lc[vpp - 1 - (j / pp) % vpp];

		len = pp - k % pp < pp - j % pp ? pp - k % pp : pp - j % pp;
		if (len > n - k)
			len = n - k;
		peak = fmax(peak, live + f + (f >= r ? (len - 1) * (f - r) : 0));
		live += len * (f - r);
	}
	return peak * vpp / tot;
}

/* The representative stages, those the plan's candidates are evaluated on (o->rep). */
static void plan_rep_stages(const struct mt_model *m, const struct mt_costs *a, int pp, int vpp,
			    int num_mb, struct mt_plan *o)
{
	double w[MT_L_N], best_w = -1;
	int i, k;

	/* representative stages: first, the heaviest middle one (and the
	 * heaviest once the 1F1B EP overlap saves its share of each MoE layer,
	 * when that is another: so the stages evaluated hold the heaviest with
	 * the overlap on or off, 5.3), the MTP stage, last */
	for (k = 0; k < MT_L_N; k++)
		w[k] = a->fwd[k] + a->bwd[k];
	o->nrep = 0;
	o->rep[o->nrep++] = 0;
	if (pp > 2) {
		double ws = w[MT_L_MOE] - mt_ep_overlap_paired(pp, vpp, num_mb) * fmax(0, a->ep_1f1b_save);
		double best_s = -1;
		int arg = 1, arg_s = 1;

		for (i = 1; i < pp - 1; i++) {
			double wi = o->nl[i][0] * w[0] + o->nl[i][1] * w[1];
			double si = o->nl[i][MT_L_DENSE] * w[MT_L_DENSE] + o->nl[i][MT_L_MOE] * ws;

			if (wi > best_w) {
				best_w = wi;
				arg = i;
			}
			if (si > best_s) {
				best_s = si;
				arg_s = i;
			}
		}
		o->rep[o->nrep++] = arg;
		if (arg_s != arg)
			o->rep[o->nrep++] = arg_s;
	}
	if (m->mtp_layers && o->mtp_stage != 0 && o->mtp_stage != pp - 1 &&
	    o->mtp_stage != o->rep[1] && o->mtp_stage != o->rep[o->nrep - 1])
		o->rep[o->nrep++] = o->mtp_stage;
	if (pp > 1)
		o->rep[o->nrep++] = pp - 1;
}

/* The data-parallel communication per step of Pd dense and Pe expert parameters. */
static void plan_dp_comm(const struct mt_ctx *x, const struct mt_costs *a, int dp,
			 const struct mt_config *cfg, double Pd, double Pe, struct mt_plan *o)
{
	double gb, bucket, agb;
	int i;

	/* data-parallel communication per step (5.4); quantised weights are
	 * gathered in their format (4.9) */
	gb = cfg->grad_fp32 ? 4 : 2;
	agb = mt_param_ag_bytes(x->job, o->par_dense[0] + o->par_exp[0], o->par_fp8[0]);
	bucket = (double)cfg->bucket_params;
	o->bucket_params = cfg->bucket_params;
	if (bucket <= 0) {
		double dflt = 1e6 * dp * a->cp;
		bucket = dflt > 4e7 ? dflt : 4e7;
		o->bucket_params = (int64_t)bucket;
	}
	for (i = 0; i < 2; i++) {
		double t1, o1, t2, o2;
		int n = dp * a->cp, en = o->edp;

		if (i) { /* distributed optimizer: reduce-scatter grads, all-gather params */
			bucketed(x, MT_COLL_REDUCE_SCATTER, n, a->tp, Pd, bucket, gb, &t1, &o1);
			bucketed(x, MT_COLL_REDUCE_SCATTER, en, a->ep * a->etp, Pe, bucket, gb, &t2, &o2);
			o->dp_rs[i] = t1 + t2;
			o->dp_rs_last[i] = fmax(o1, o2);
			bucketed(x, MT_COLL_ALL_GATHER, n, a->tp, Pd, bucket, agb, &t1, &o1);
			bucketed(x, MT_COLL_ALL_GATHER, en, a->ep * a->etp, Pe, bucket, agb, &t2, &o2);
			o->dp_ag[i] = t1 + t2;
			o->dp_ag_first[i] = fmax(o1, o2);
		} else {
			bucketed(x, MT_COLL_ALL_REDUCE, n, a->tp, Pd, bucket, gb, &t1, &o1);
			bucketed(x, MT_COLL_ALL_REDUCE, en, a->ep * a->etp, Pe, bucket, gb, &t2, &o2);
			o->dp_rs[i] = t1 + t2;
			o->dp_rs_last[i] = fmax(o1, o2);
			o->dp_ag[i] = o->dp_ag_first[i] = 0;
		}
	}
}

int mt_plan_compute(const struct mt_ctx *x, const struct mt_costs *a, int pp, int vpp, int dp,
		    int num_mb, const struct mt_config *cfg, struct mt_plan *o)
{
	const struct mt_model *m = x->model;
	const int L = m->layers;
	double Pd = 0, Pe = 0;
	int chunk, layer = 0, i, r, k;

	o->valid = 0;
	if (pp > MT_MAX_PP || pp < 1 || vpp < 1 || plan_split(x, pp, vpp, o))
		return -1;
	o->pp = pp;
	o->vpp = vpp;
	o->dp = dp;
	o->num_mb = num_mb;
	o->edp = (int)((long)dp * a->cp * a->tp / ((long)a->ep * a->etp));
	memset(o->nl, 0, sizeof(o->nl[0]) * (size_t)pp);
	o->tot[0] = o->tot[1] = 0;
	o->chunk_layers_max = 0;
	o->mtp_stage = pp - 1;
	for (chunk = 0; chunk < o->layout.n; chunk++) {
		int n = o->layout.t[chunk], st = chunk % pp;

		if (n > o->chunk_layers_max)
			o->chunk_layers_max = n;
		for (i = 0; i < n && layer < L; i++, layer++) {
			k = m->is_moe[layer] ? MT_L_MOE : MT_L_DENSE;
			o->nl[st][k]++;
			o->tot[k]++;
		}
	}
	if (m->mtp_layers) { /* the MTP modules: on the last stage unless a layout moves them */
		if (o->layout.mtp_chunk >= 0)
			o->mtp_stage = o->layout.mtp_chunk % pp;
		k = m->is_moe[L - 1] ? MT_L_MOE : MT_L_DENSE;
		o->nl[o->mtp_stage][k] += m->mtp_layers;
		o->tot[k] += m->mtp_layers;
	}

	plan_rep_stages(m, a, pp, vpp, num_mb, o);
	for (r = 0; r < o->nrep; r++) {
		o->par_dense[r] =
			mt_stage_params(x, a, o, o->rep[r], &o->par_exp[r], &o->par_fp8[r]);
		if (o->par_dense[r] > Pd)
			Pd = o->par_dense[r];
		if (o->par_exp[r] > Pe)
			Pe = o->par_exp[r];
	}

	plan_dp_comm(x, a, dp, cfg, Pd, Pe, o);
	/* the optimizer step per parameter at its least, with or without the
	 * precision-aware optimizer that level C may add (the step floor, 7) */
	{
		struct mt_config po = *cfg;

		mt_config_prec_opt(x->job, &po, 1);
		o->opt_s_per_param = fmin(MT_ADAM_BYTES_PER_PARAM,
					  mt_opt_step_moved_bytes(x->job, &po, dp)) / x->hbm;
	}
	o->p2p_time = 0;
	if (pp > 1) {
		int pd = mt_group_per_domain(x->cluster, pp, a->tp * a->cp * dp) > 1 ? 2 : 1;
		o->p2p_time = mt_coll_time(x->cluster, MT_COLL_SEND_RECV, 2, pd, a->p2p_bytes);
	}

	/* Megatron-FSDP's per-layer collectives (5.10), where it can run */
	if (mt_fsdp_reason(x->cluster, cfg) < 0 || cfg->fsdp)
		mt_fsdp_plan(x, a, cfg, o);

	/* communicator buffers (4.7) */
	o->nccl_bytes = comm_buffers(x, a->tp, 1) + comm_buffers(x, a->cp, a->tp) +
			comm_buffers(x, dp * a->cp, a->tp) + comm_buffers(x, pp, a->tp * a->cp * dp) +
			(m->experts ? comm_buffers(x, a->ep, a->etp) + comm_buffers(x, a->etp, 1) +
					      comm_buffers(x, o->edp, a->ep * a->etp)
				    : 0);
	for (r = 0; r < pp; r++)
		o->inflight_ck[r] = inflight_chunks(o, r);
	o->valid = 1;
	return 0;
}
