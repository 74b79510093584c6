/* SPDX-License-Identifier: MIT */
/* search: enumeration, validity, pruning and ranking. */
#include "search.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "perf.h"

static const char *const prune_ids[MT_PRUNE_N] = {
	"tp-heads", "tp-kv-heads", "tp-ffn", "cp-sequence", "cp-heads", "cp-attention",
	"ep-experts", "ep-gpus", "etp-ffn", "moe-sp", "sp-sequence", "offload", "pp-layers", "vpp",
	"batch", "memory", "dominated",
};

static const char *const prune_texts[MT_PRUNE_N] = {
	"TP does not divide the attention heads",
	"TP does not divide the key/value heads",
	"TP does not divide the MLP width",
	"the sequence does not split into 2 x CP chunks",
	"a2a context parallelism needs heads divisible by its group",
	"context parallelism needs fused (flash) attention",
	"EP does not divide the number of experts",
	"EP x ETP does not divide the GPUs of a pipeline stage",
	"ETP does not divide the expert width",
	"MoE with TP > 1 needs sequence parallelism",
	"sequence parallelism needs the sequence shard (seq / CP) divisible by TP",
	"activation offload needs PP 1, no recomputation and fewer offloaded layers than layers",
	"the layers cannot be split over PP x VPP stages",
	"interleaving needs PP > 1 and micro-batches divisible by PP",
	"DP x micro-batch does not divide the global batch",
	"does not fit in GPU memory",
	"more recomputation or offload than needed to fit",
};

const char *mt_prune_id(int r) { return r >= 0 && r < MT_PRUNE_N ? prune_ids[r] : "?"; }
const char *mt_prune_text(int r) { return r >= 0 && r < MT_PRUNE_N ? prune_texts[r] : "?"; }

static int pin_or(int pin, int dflt)
{
	return pin != MT_UNSET ? pin : dflt;
}

void mt_config_settings(const struct mt_job *job, struct mt_config *cfg)
{
	const struct mt_pins *p = &job->pins;

	cfg->tp_overlap = pin_or(p->tp_overlap, 1);
	cfg->overlap_grad = pin_or(p->overlap_grad, 1);
	/* Megatron-LM overlaps the parameter gather only with the reduction */
	cfg->overlap_param = pin_or(p->overlap_param, cfg->overlap_grad);
	cfg->fused_ce = pin_or(p->fused_ce, 1);
	cfg->grad_fp32 = pin_or(p->grad_fp32, 1);
	cfg->bucket_params = 0;
}

/* ---------------------------------------------------------------- checks */

static int tp_reason(const struct mt_model *m, int tp)
{
	if (m->heads % tp)
		return MT_PRUNE_TP_HEADS;
	if (!m->mla && m->kv_heads % tp)
		return MT_PRUNE_TP_GROUPS;
	if ((m->moe_layers < m->layers && m->ffn % tp) || (m->shared_ffn && m->shared_ffn % tp))
		return MT_PRUNE_TP_FFN;
	return -1;
}

static int cp_reason(const struct mt_model *m, const struct mt_job *j, int tp, int cp, int cc)
{
	if (cp == 1)
		return -1;
	if (j->seq % (2 * cp))
		return MT_PRUNE_CP_SEQ;
	if (j->attn_impl != MT_ATTN_FLASH)
		return MT_PRUNE_CP_ATTN;
	if (cc == MT_CP_A2A && ((m->heads / tp) % cp || (!m->mla && (m->kv_heads / tp) % cp)))
		return MT_PRUNE_CP_HEADS;
	return -1;
}

/* a2a+p2p: Ulysses inside the NVLink domain, a ring across; the inner size
 * must divide CP (Megatron checks the product of
 * --hierarchical-context-parallel-sizes) and the heads. */
static int cp_a2a_p2p_ok(const struct mt_model *m, const struct mt_cluster *c, int tp, int cp)
{
	int inner = mt_group_per_domain(c, cp, tp);

	return inner > 1 && inner < cp && cp % inner == 0 && (m->heads / tp) % inner == 0 &&
	       (m->mla || (m->kv_heads / tp) % inner == 0);
}

static int ep_reason(const struct mt_model *m, int ep, int etp)
{
	if (!m->experts)
		return (ep == 1 && etp == 1) ? -1 : MT_PRUNE_EP_EXPERTS;
	if (m->experts % ep)
		return MT_PRUNE_EP_EXPERTS;
	if (m->moe_ffn % etp)
		return MT_PRUNE_ETP_FFN;
	return -1;
}

#define MT_GBS_MAX (1 << 24)
#define MT_GPUS_MAX (1 << 20)
#define MT_SEQ_MAX (1 << 24)

int mt_job_check(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		 struct mt_error *err)
{
	const struct mt_pins *p = &j->pins;
	long model_par = 1;

	if (j->gpus < 1 || j->gpus > MT_GPUS_MAX)
		return mt_error_set(err, MT_EUSAGE, "--gpus: expected between 1 and %d GPUs",
				    MT_GPUS_MAX);
	if (j->seq < 1 || j->seq > MT_SEQ_MAX)
		return mt_error_set(err, MT_EUSAGE, "--seq: expected a sequence length between 1 and %d",
				    MT_SEQ_MAX);
	if (j->gbs < 1 || j->gbs > MT_GBS_MAX)
		return mt_error_set(err, MT_EUSAGE, "--gbs: expected a global batch size between 1 and %d",
				    MT_GBS_MAX);
	if (j->gpus > c->gpus_per_node && j->gpus % c->gpus_per_node)
		return mt_error_set(err, MT_EINVAL,
				    "--gpus %d: more than one node of %d GPUs must be whole nodes "
				    "(a multiple of %d) on cluster '%s'", j->gpus, c->gpus_per_node,
				    c->gpus_per_node, c->name);
	if (j->precision == MT_PREC_FP8 && c->peak_tflops[MT_DT_FP8] <= 0)
		return mt_error_set(err, MT_EINVAL,
				    "--precision fp8: the %s GPUs of cluster '%s' have no FP8 tensor "
				    "cores (no gpu.peak_tflops.fp8 in its profile)", c->gpu_name,
				    c->name);
	if (p->tp != MT_UNSET) {
		int r;
		if (p->tp < 1 || j->gpus % p->tp)
			return mt_error_set(err, MT_EINVAL, "--tp %d: must divide --gpus %d", p->tp,
					    j->gpus);
		r = tp_reason(m, p->tp);
		if (r == MT_PRUNE_TP_HEADS)
			return mt_error_set(err, MT_EINVAL,
					    "--tp %d: model '%s' has %d attention heads, which TP must "
					    "divide", p->tp, m->name, m->heads);
		if (r == MT_PRUNE_TP_GROUPS)
			return mt_error_set(err, MT_EINVAL,
					    "--tp %d: model '%s' has %d key/value heads, which TP must "
					    "divide", p->tp, m->name, m->kv_heads);
		if (r == MT_PRUNE_TP_FFN)
			return mt_error_set(err, MT_EINVAL,
					    "--tp %d: does not divide the MLP width of model '%s'",
					    p->tp, m->name);
		model_par *= p->tp;
	}
	if (p->pp != MT_UNSET) {
		if (p->pp < 1 || p->pp > m->layers || j->gpus % p->pp)
			return mt_error_set(err, MT_EINVAL,
					    "--pp %d: must divide --gpus %d and be at most the %d layers",
					    p->pp, j->gpus, m->layers);
		model_par *= p->pp;
	}
	if (p->cp != MT_UNSET) {
		if (p->cp < 1 || j->gpus % p->cp)
			return mt_error_set(err, MT_EINVAL, "--cp %d: must divide --gpus %d", p->cp,
					    j->gpus);
		if (p->cp > 1 && j->seq % (2 * p->cp))
			return mt_error_set(err, MT_EINVAL,
					    "--cp %d: the sequence length %d must be divisible by 2 x CP "
					    "= %d", p->cp, j->seq, 2 * p->cp);
		if (p->cp > 1 && j->attn_impl != MT_ATTN_FLASH)
			return mt_error_set(err, MT_EINVAL,
					    "--cp %d: context parallelism needs fused attention, not "
					    "--attention unfused", p->cp);
		model_par *= p->cp;
	}
	if (j->gpus % model_par)
		return mt_error_set(err, MT_EINVAL,
				    "--tp x --cp x --pp = %ld does not divide --gpus %d", model_par,
				    j->gpus);
	if ((p->ep != MT_UNSET && p->ep != 1) || (p->etp != MT_UNSET && p->etp != 1)) {
		if (!m->experts)
			return mt_error_set(err, MT_EINVAL,
					    "--ep/--etp: model '%s' is dense (no experts)", m->name);
	}
	if (p->ep != MT_UNSET && (p->ep < 1 || (m->experts && m->experts % p->ep)))
		return mt_error_set(err, MT_EINVAL, "--ep %d: must divide the %d experts of model '%s'",
				    p->ep, m->experts, m->name);
	if (p->etp != MT_UNSET && (p->etp < 1 || (m->experts && m->moe_ffn % p->etp)))
		return mt_error_set(err, MT_EINVAL, "--etp %d: must divide the expert width %d",
				    p->etp, m->moe_ffn);
	if (p->mbs != MT_UNSET && (p->mbs < 1 || j->gbs % p->mbs))
		return mt_error_set(err, MT_EINVAL, "--mbs %d: must divide --gbs %lld", p->mbs,
				    (long long)j->gbs);
	if (p->vpp != MT_UNSET && (p->vpp < 1 || p->vpp > m->layers))
		return mt_error_set(err, MT_EINVAL, "--vpp %d: expected between 1 and the %d layers",
				    p->vpp, m->layers);
	if (p->vpp != MT_UNSET && p->vpp > 1 && p->pp == 1)
		return mt_error_set(err, MT_EINVAL, "--vpp %d: interleaving needs --pp > 1", p->vpp);
	if (p->recompute_layers != MT_UNSET && p->recompute != MT_UNSET && p->recompute != MT_RC_FULL)
		return mt_error_set(err, MT_EINVAL,
				    "--recompute-layers applies to --recompute full only");
	if (p->sp == 1 && p->tp == 1)
		return mt_error_set(err, MT_EINVAL, "--sequence-parallel on needs --tp > 1");
	if (p->sp == 0 && m->experts && p->tp != MT_UNSET && p->tp > 1)
		return mt_error_set(err, MT_EINVAL,
				    "--sequence-parallel off: Megatron-Core needs sequence parallelism "
				    "for MoE models with TP > 1");
	if (p->offload_layers != MT_UNSET && p->offload_layers > 0) {
		if ((p->pp != MT_UNSET && p->pp > 1) ||
		    (p->recompute != MT_UNSET && p->recompute != MT_RC_NONE) ||
		    p->offload_layers >= m->layers)
			return mt_error_set(err, MT_EINVAL,
					    "--offload-layers %d: Megatron-Core offloads activations "
					    "only with PP 1, no recomputation and fewer than the %d "
					    "layers", p->offload_layers, m->layers);
	}
	if (p->overlap_param == 1 && p->overlap_grad == 0)
		return mt_error_set(err, MT_EINVAL,
				    "--overlap-param-gather on needs --overlap-grad-reduce on "
				    "(Megatron-LM requires both)");
	if (p->overlap_param == 1 && p->dist_opt == 0)
		return mt_error_set(err, MT_EINVAL,
				    "--overlap-param-gather on needs the distributed optimizer");
	return MT_OK;
}

/* ---------------------------------------------------------------- search */

struct split_cache {
	signed char *ok; /* [pp][vpp]: -1 unknown, 0 no, 1 yes */
	int maxpp, maxv;
};

struct srch {
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_job *j;
	struct mt_ctx x;
	struct mt_search_result *res;
	double cap;
	int k;
};

/* Micro-batch sizes and expert-TP sizes searched unless pinned. */
#define MT_MBS_MAX 32
#define MT_ETP_MAX 16

/* Divisors of n up to `upto`, ascending (at most `max`). */
static int divisors_upto(long n, long upto, int *out, int max)
{
	long big[64];
	int cnt = 0, nb = 0;
	long i;

	for (i = 1; i * i <= n; i++) {
		if (n % i)
			continue;
		if (i <= upto && cnt < max)
			out[cnt++] = (int)i;
		if (n / i != i && n / i <= upto && nb < 64)
			big[nb++] = n / i;
	}
	while (nb > 0 && cnt < max)
		out[cnt++] = (int)big[--nb];
	return cnt;
}

static int divisors(long n, int *out, int max)
{
	return divisors_upto(n, n, out, max);
}

static void keep(struct srch *s, const struct mt_eval *e)
{
	struct mt_search_result *r = s->res;
	int i;

	if (r->ntop == s->k && e->time.step >= r->top[r->ntop - 1].time.step)
		return;
	i = r->ntop < s->k ? r->ntop++ : r->ntop - 1;
	while (i > 0 && r->top[i - 1].time.step > e->time.step) {
		r->top[i] = r->top[i - 1];
		i--;
	}
	r->top[i] = *e;
}

static void closest(struct srch *s, const struct mt_eval *e)
{
	s->res->closest = *e;
	s->res->has_closest = 1;
}

/* Memory of cfg; counts one evaluation. */
static double mem_of(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		     const struct mt_config *cfg, struct mt_mem *mem)
{
	s->res->evaluated++;
	mt_memory(&s->x, a, b, cfg, mem);
	return mem->total;
}

static void finish(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		   const struct mt_config *cfg, const struct mt_mem *mem)
{
	struct mt_eval e;

	e.cfg = *cfg;
	e.mem = *mem;
	e.feasible = mem->total <= s->cap;
	if (!e.feasible) {
		s->res->pruned[MT_PRUNE_MEMORY]++;
		/* time it only if it is the closest miss so far */
		if (!s->res->has_closest || mem->total < s->res->closest.mem.total) {
			mt_timing(&s->x, a, b, cfg, &e.time, &e.tput);
			closest(s, &e);
		}
		return;
	}
	mt_timing(&s->x, a, b, cfg, &e.time, &e.tput);
	s->res->timed++;
	keep(s, &e);
}

/* Level C: recompute, distributed optimizer, activation offload.  Memory falls
 * and time rises with more recomputed or offloaded layers, so for each mode
 * only the fewest layers that fit is timed; the rest are counted dominated. */
static void level_c(struct srch *s, const struct mt_costs *a, const struct mt_plan *b,
		    struct mt_config *cfg)
{
	const struct mt_pins *p = &s->j->pins;
	const int L = s->m->layers;
	struct mt_mem mem;
	int d, rc, chunk = b->chunk_layers_max;

	for (d = 1; d >= 0; d--) {
		if (p->dist_opt != MT_UNSET && p->dist_opt != d)
			continue;
		cfg->dist_opt = d;
		for (rc = 0; rc < MT_RC_N; rc++) {
			int can_offload = cfg->pp == 1 && rc == MT_RC_NONE && L > 1;

			if (p->recompute != MT_UNSET && p->recompute != rc)
				continue;
			cfg->recompute = rc;
			cfg->recompute_layers = 0;
			cfg->offload_layers = 0;
			if (p->offload_layers != MT_UNSET && p->offload_layers > 0) {
				if (!can_offload || p->offload_layers >= L) {
					s->res->pruned[MT_PRUNE_OFFLOAD]++;
					continue;
				}
				cfg->offload_layers = p->offload_layers;
			}
			if (rc == MT_RC_FULL) {
				int lo = 1, hi = chunk, n;

				if (p->recompute_layers != MT_UNSET) {
					cfg->recompute_layers = p->recompute_layers < chunk
									? p->recompute_layers : chunk;
				} else {
					cfg->recompute_layers = hi;
					if (mem_of(s, a, b, cfg, &mem) <= s->cap) {
						while (lo < hi) {
							n = (lo + hi) / 2;
							cfg->recompute_layers = n;
							if (mem_of(s, a, b, cfg, &mem) <= s->cap)
								hi = n;
							else
								lo = n + 1;
						}
						s->res->pruned[MT_PRUNE_DOMINATED] += chunk - lo;
						s->res->pruned[MT_PRUNE_MEMORY] += lo - 1;
						cfg->recompute_layers = lo;
					}
				}
				mem_of(s, a, b, cfg, &mem);
				finish(s, a, b, cfg, &mem);
				continue;
			}
			if (mem_of(s, a, b, cfg, &mem) <= s->cap || !can_offload ||
			    p->offload_layers != MT_UNSET) {
				finish(s, a, b, cfg, &mem);
				if (can_offload && p->offload_layers == MT_UNSET)
					s->res->pruned[MT_PRUNE_DOMINATED] += L - 1;
				continue;
			}
			/* offload: the fewest layers that fit */
			{
				struct mt_mem m2;
				int lo = 1, hi = L - 1, n;

				cfg->offload_layers = hi;
				if (mem_of(s, a, b, cfg, &m2) > s->cap) {
					cfg->offload_layers = 0;
					finish(s, a, b, cfg, &mem); /* records the miss */
					s->res->pruned[MT_PRUNE_MEMORY] += L - 1;
					continue;
				}
				while (lo < hi) {
					n = (lo + hi) / 2;
					cfg->offload_layers = n;
					if (mem_of(s, a, b, cfg, &m2) <= s->cap)
						hi = n;
					else
						lo = n + 1;
				}
				s->res->pruned[MT_PRUNE_DOMINATED] += L - 1 - lo;
				s->res->pruned[MT_PRUNE_MEMORY] += lo;
				cfg->offload_layers = lo;
				mem_of(s, a, b, cfg, &m2);
				finish(s, a, b, cfg, &m2);
			}
		}
	}
}

static int split_ok(struct split_cache *sc, struct srch *s, const struct mt_costs *a, int pp,
		    int vpp, int dp, int mb, struct mt_config *cfg, struct mt_plan *plan)
{
	signed char *slot = NULL;

	if (pp <= sc->maxpp && vpp <= sc->maxv) {
		slot = &sc->ok[(size_t)pp * (size_t)(sc->maxv + 1) + (size_t)vpp];
		if (*slot == 0)
			return 0;
	}
	if (mt_plan_compute(&s->x, a, pp, vpp, dp, mb, cfg, plan)) {
		if (slot)
			*slot = 0;
		return 0;
	}
	if (slot)
		*slot = 1;
	return 1;
}

/* Level B loop: PP and VPP for one layer shape (DP and micro-batches follow). */
static void search_pipeline(struct srch *s, struct split_cache *sc, const struct mt_costs *a,
			    struct mt_plan *plan, struct mt_config *cfg)
{
	const struct mt_model *m = s->m;
	const struct mt_job *j = s->j;
	const struct mt_pins *p = &j->pins;
	struct mt_search_result *res = s->res;
	int pps[64], npp, ip, vpp;

	npp = divisors(j->gpus / (a->tp * a->cp), pps, 64);
	for (ip = 0; ip < npp; ip++) {
		int pp = pps[ip];
		long dp = j->gpus / ((long)a->tp * a->cp * pp), mb;

		if (p->pp != MT_UNSET && p->pp != pp)
			continue;
		if (pp > m->layers) {
			res->pruned[MT_PRUNE_PP_LAYERS]++;
			continue;
		}
		if ((j->gpus / pp) % ((long)a->ep * a->etp)) {
			res->pruned[MT_PRUNE_EP_GPUS]++;
			continue;
		}
		if (j->gbs % (dp * a->mbs)) {
			res->pruned[MT_PRUNE_BATCH]++;
			continue;
		}
		mb = j->gbs / (dp * a->mbs);
		for (vpp = 1; vpp <= m->layers / pp; vpp++) {
			if (p->vpp != MT_UNSET && p->vpp != vpp)
				continue;
			if (vpp > 1 && (pp == 1 || mb % pp)) {
				res->pruned[MT_PRUNE_VPP]++;
				continue;
			}
			if (!split_ok(sc, s, a, pp, vpp, (int)dp, (int)mb, cfg, plan)) {
				res->pruned[MT_PRUNE_PP_LAYERS]++;
				continue;
			}
			cfg->pp = pp;
			cfg->vpp = vpp;
			cfg->dp = (int)dp;
			cfg->edp = plan->edp;
			cfg->num_mb = (int)mb;
			cfg->split = plan->split;
			cfg->first_layers = plan->first_layers;
			cfg->last_layers = plan->last_layers;
			cfg->bucket_params = plan->bucket_params;
			level_c(s, a, plan, cfg);
			cfg->bucket_params = 0;
		}
	}
}

/* Level A loop: the knobs that change a layer's shape. */
static void search_shapes(struct srch *s, struct split_cache *sc, struct mt_costs *a,
			  struct mt_plan *plan, struct mt_config *cfg)
{
	const struct mt_model *m = s->m;
	const struct mt_cluster *c = s->c;
	const struct mt_job *j = s->j;
	const struct mt_pins *p = &j->pins;
	struct mt_search_result *res = s->res;
	int tps[64], cps[64], eps[64], etps[16], mbss[64];
	int ntp, ncp, nep, netp, nmbs, it, ic, ie, iet, imb, sp, cc, r;

	/* a pinned knob is searched at its value only, even outside the
	 * default ranges */
	ntp = divisors(j->gpus, tps, 64);
	nmbs = p->mbs != MT_UNSET ? (mbss[0] = p->mbs, 1)
				  : divisors_upto(j->gbs, MT_MBS_MAX, mbss, 64);
	nep = p->ep != MT_UNSET ? (eps[0] = p->ep, 1)
		: m->experts ? divisors(m->experts, eps, 64) : (eps[0] = 1, 1);
	netp = p->etp != MT_UNSET ? (etps[0] = p->etp, 1)
	       : m->experts ? divisors(MT_ETP_MAX, etps, 16) : (etps[0] = 1, 1);
	for (it = 0; it < ntp; it++) {
		int tp = tps[it];

		if (p->tp != MT_UNSET && p->tp != tp)
			continue;
		r = tp > m->heads ? MT_PRUNE_TP_HEADS : tp_reason(m, tp);
		if (r >= 0) {
			res->pruned[r]++;
			continue;
		}
		ncp = divisors(j->gpus / tp, cps, 64);
		for (sp = (tp > 1); sp >= 0; sp--) {
			if (p->sp != MT_UNSET && p->sp != sp && tp > 1)
				continue;
			if (m->experts && tp > 1 && !sp) {
				res->pruned[MT_PRUNE_MOE_SP]++;
				continue;
			}
			for (ic = 0; ic < ncp; ic++) {
				int cp = cps[ic];

				if (p->cp != MT_UNSET && p->cp != cp)
					continue;
				for (cc = 0; cc < (cp > 1 ? MT_CP_N : 1); cc++) {
					if (p->cp_comm != MT_UNSET && cp > 1 && p->cp_comm != cc)
						continue;
					if ((r = cp_reason(m, j, tp, cp, cc)) >= 0 ||
					    (cc == MT_CP_A2A_P2P && !cp_a2a_p2p_ok(m, c, tp, cp) &&
					     (r = MT_PRUNE_CP_HEADS) >= 0) ||
					    (sp && (j->seq / cp) % tp && (r = MT_PRUNE_SP_SEQ) >= 0)) {
						res->pruned[r]++;
						continue;
					}
					for (ie = 0; ie < nep; ie++) {
						for (iet = 0; iet < netp; iet++) {
							int ep = eps[ie], etp = etps[iet];

							if ((p->ep != MT_UNSET && p->ep != ep) ||
							    (p->etp != MT_UNSET && p->etp != etp))
								continue;
							if ((r = ep_reason(m, ep, etp)) >= 0) {
								res->pruned[r]++;
								continue;
							}
							for (imb = 0; imb < nmbs; imb++) {
								int mbs = mbss[imb];

								if (p->mbs != MT_UNSET && p->mbs != mbs)
									continue;
								mt_costs_compute(&s->x, tp, cp, mbs, ep, etp, sp,
										 cc, cfg->tp_overlap,
										 cfg->fused_ce, a);
								cfg->tp = tp;
								cfg->cp = cp;
								cfg->ep = ep;
								cfg->etp = etp;
								cfg->mbs = mbs;
								cfg->sp = sp;
								cfg->cp_comm = cp > 1 ? cc : MT_CP_P2P;
								cfg->cp_a2a = cc == MT_CP_A2A_P2P
										      ? mt_group_per_domain(c, cp, tp)
										      : 0;
								search_pipeline(s, sc, a, plan, cfg);
							}
						}
					}
				}
			}
		}
	}
}

int mt_search(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	      struct mt_search_result *res, struct mt_error *err)
{
	struct srch s;
	struct split_cache sc;
	struct mt_costs *a = NULL;
	struct mt_plan *plan = NULL;
	struct mt_config cfg;
	struct timespec t0, t1;
	int rc;

	memset(res, 0, sizeof(*res));
	rc = mt_job_check(m, c, j, err);
	if (rc)
		return rc;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	memset(&s, 0, sizeof(s));
	s.m = m;
	s.c = c;
	s.j = j;
	s.res = res;
	s.k = j->top_k < 1 ? 1 : (j->top_k > MT_TOP_MAX ? MT_TOP_MAX : j->top_k);
	s.cap = c->memory_bytes * (1 - j->mem_headroom);
	res->capacity_bytes = s.cap;
	mt_ctx_init(&s.x, m, c, j);

	/* the only allocations of a search, whatever the size of the space */
	sc.maxpp = m->layers < MT_MAX_PP ? m->layers : MT_MAX_PP;
	sc.maxv = m->layers;
	sc.ok = malloc((size_t)(sc.maxpp + 1) * (size_t)(sc.maxv + 1));
	a = malloc(sizeof(*a));
	plan = malloc(sizeof(*plan));
	if (!sc.ok || !a || !plan) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	memset(sc.ok, -1, (size_t)(sc.maxpp + 1) * (size_t)(sc.maxv + 1));
	memset(&cfg, 0, sizeof(cfg));
	mt_config_settings(j, &cfg);
	search_shapes(&s, &sc, a, plan, &cfg);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	res->seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
out:
	free(sc.ok);
	free(a);
	free(plan);
	return rc;
}

/* ---------------------------------------------------------------- one config */

int mt_evaluate(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		struct mt_config *cfg, struct mt_eval *out, struct mt_error *err)
{
	struct mt_ctx x;
	struct mt_costs *a;
	struct mt_plan *plan;
	long dp, mb, rest;
	int r, rc = MT_OK;

	rc = mt_job_check(m, c, j, err);
	if (rc)
		return rc;
	if (cfg->tp < 1 || cfg->pp < 1 || cfg->cp < 1 || cfg->ep < 1 || cfg->etp < 1 ||
	    cfg->vpp < 1 || cfg->mbs < 1)
		return mt_error_set(err, MT_EINVAL, "every parallel size must be at least 1");
	rest = (long)cfg->tp * cfg->cp * cfg->pp;
	if (j->gpus % rest)
		return mt_error_set(err, MT_EINVAL,
				    "TP x CP x PP = %ld does not divide the %d GPUs", rest, j->gpus);
	dp = j->gpus / rest;
	if (j->gbs % (dp * cfg->mbs))
		return mt_error_set(err, MT_EINVAL,
				    "DP x micro-batch = %ld x %d does not divide the global batch %lld",
				    dp, cfg->mbs, (long long)j->gbs);
	mb = j->gbs / (dp * cfg->mbs);
	if ((r = tp_reason(m, cfg->tp)) >= 0 || (r = cp_reason(m, j, cfg->tp, cfg->cp, cfg->cp_comm)) >= 0 ||
	    (r = ep_reason(m, cfg->ep, cfg->etp)) >= 0)
		return mt_error_set(err, MT_EINVAL, "this configuration cannot run: %s",
				    mt_prune_text(r));
	if (cfg->cp > 1 && cfg->cp_comm == MT_CP_A2A_P2P && !cp_a2a_p2p_ok(m, c, cfg->tp, cfg->cp))
		return mt_error_set(err, MT_EINVAL,
				    "--cp-comm a2a+p2p: the a2a group inside the NVLink domain (%d "
				    "GPUs) must be more than 1, less than CP %d and divide it and the "
				    "heads per TP rank", mt_group_per_domain(c, cfg->cp, cfg->tp), cfg->cp);
	if ((j->gpus / cfg->pp) % ((long)cfg->ep * cfg->etp))
		return mt_error_set(err, MT_EINVAL, "this configuration cannot run: %s",
				    mt_prune_text(MT_PRUNE_EP_GPUS));
	if (m->experts && cfg->tp > 1 && !cfg->sp)
		return mt_error_set(err, MT_EINVAL, "this configuration cannot run: %s",
				    mt_prune_text(MT_PRUNE_MOE_SP));
	if (cfg->vpp > 1 && (cfg->pp == 1 || mb % cfg->pp))
		return mt_error_set(err, MT_EINVAL,
				    "--vpp %d: interleaving needs --pp > 1 and the %ld micro-batches "
				    "divisible by PP %d", cfg->vpp, mb, cfg->pp);
	if (cfg->tp == 1)
		cfg->sp = 0;
	if (cfg->sp && (j->seq / cfg->cp) % cfg->tp)
		return mt_error_set(err, MT_EINVAL, "this configuration cannot run: %s",
				    mt_prune_text(MT_PRUNE_SP_SEQ));
	if (cfg->offload_layers > 0 &&
	    (cfg->pp > 1 || cfg->recompute != MT_RC_NONE || cfg->offload_layers >= m->layers))
		return mt_error_set(err, MT_EINVAL,
				    "--offload-layers %d: Megatron-Core offloads activations only "
				    "with PP 1, no recomputation and fewer than the %d layers",
				    cfg->offload_layers, m->layers);
	cfg->cp_a2a = cfg->cp > 1 && cfg->cp_comm == MT_CP_A2A_P2P ? mt_group_per_domain(c, cfg->cp, cfg->tp) : 0;
	cfg->dp = (int)dp;
	cfg->num_mb = (int)mb;
	mt_ctx_init(&x, m, c, j);
	a = malloc(sizeof(*a));
	plan = malloc(sizeof(*plan));
	if (!a || !plan) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	mt_costs_compute(&x, cfg->tp, cfg->cp, cfg->mbs, cfg->ep, cfg->etp, cfg->sp, cfg->cp_comm,
			 cfg->tp_overlap, cfg->fused_ce, a);
	if (mt_plan_compute(&x, a, cfg->pp, cfg->vpp, (int)dp, (int)mb, cfg, plan)) {
		rc = mt_error_set(err, MT_EINVAL,
				  "the %d layers of model '%s' cannot be split over PP %d x VPP %d",
				  m->layers, m->name, cfg->pp, cfg->vpp);
		goto out;
	}
	cfg->edp = plan->edp;
	cfg->split = plan->split;
	cfg->first_layers = plan->first_layers;
	cfg->last_layers = plan->last_layers;
	cfg->bucket_params = plan->bucket_params;
	if (cfg->recompute == MT_RC_FULL &&
	    (cfg->recompute_layers <= 0 || cfg->recompute_layers > plan->chunk_layers_max))
		cfg->recompute_layers = plan->chunk_layers_max;
	out->cfg = *cfg;
	mt_memory(&x, a, plan, cfg, &out->mem);
	mt_timing(&x, a, plan, cfg, &out->time, &out->tput);
	out->feasible = out->mem.total <= c->memory_bytes * (1 - j->mem_headroom);
out:
	free(a);
	free(plan);
	return rc;
}
