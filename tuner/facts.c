/* SPDX-License-Identifier: MIT */
/* facts: a configuration as the rules' facts, stage by stage. */
#include "facts.h"

#include <math.h>
#include <string.h>

#include "../perfmodel/constants.h"

#define F(id) cf->f[MT_F_##id].n

void mt_cfg_facts_init(struct mt_cfg_facts *cf, struct mt_rules_run *r, const struct mt_ctx *x)
{
	memset(cf, 0, sizeof(*cf));
	cf->r = r;
	cf->f = r ? mt_rules_facts(r) : NULL;
	cf->x = x;
	memset(cf->vsplit, -1, sizeof(cf->vsplit));
}

static double kv_elems(const struct mt_model *m)
{
	if (m->mla)
		return (double)m->heads * (m->qk_nope_dim + m->qk_rope_dim + m->v_head_dim) / 2;
	return (double)m->kv_heads * m->head_dim;
}

/* The derived facts stay out of line, so that writing the facts of a stage
 * that only copies knobs costs a store, not a function's prologue. */

static __attribute__((noinline)) void cp_facts(struct mt_cfg_facts *cf, int tp, int cp)
{
	const struct mt_ctx *x = cf->x;
	const struct mt_model *m = x->model;
	double s = x->job->seq, chunk = s / cp, kvb, dqk, dv, flops;
	int pd = mt_group_per_domain(x->cluster, cp, tp);

	F(CFG_CP) = cp;
	F(CP_CHUNK) = chunk;
	F(CP_PER_DOMAIN) = pd;
	kvb = chunk * 2 * kv_elems(m) / tp * 2;
	F(CP_KV_BYTES) = kvb;
	if (cp < 2) {
		F(CP_RING_STEP_S) = F(CP_ATTN_STEP_S) = 0;
		return;
	}
	dqk = m->mla ? m->qk_nope_dim + m->qk_rope_dim : m->head_dim;
	dv = m->mla ? m->v_head_dim : m->head_dim;
	F(CP_RING_STEP_S) = mt_coll_time(x->cluster, MT_COLL_SEND_RECV, cp, pd, kvb);
	flops = 2 * chunk * s * ((double)m->heads / tp) * (dqk + dv) *
		(x->job->attn_impl == MT_ATTN_FLASH ? 0.5 : 1.0) / cp;
	F(CP_ATTN_STEP_S) = flops / (mt_attn_rate(x, x->job->attn_impl, (int)dqk, (int)chunk, 0) * 1e12);
}

static void cp_a2a_facts(struct mt_cfg_facts *cf, int tp, int cp, int inner)
{
	const struct mt_model *m = cf->x->model;

	F(CFG_CP_A2A) = inner;
	F(CP_HIER_OK) = inner > 1 && inner < cp && cp % inner == 0 && (m->heads / tp) % inner == 0 &&
			(m->mla || (m->kv_heads / tp) % inner == 0);
}

static __attribute__((noinline)) void shape_facts(struct mt_cfg_facts *cf, const struct mt_costs *a)
{
	const struct mt_ctx *x = cf->x;
	const struct mt_model *m = x->model;
	const struct mt_cluster *c = x->cluster;
	double w[MT_L_N], T = a->tokens, h = m->hidden, layer = 0, gemm = 0, tpc = 0, tpe = 0;
	double cpc = 0, cpe = 0, act = 0, host = 0, host_g = 0, ffn;
	int k, tp = a->tp;

	w[MT_L_MOE] = (double)m->moe_layers / m->layers;
	w[MT_L_DENSE] = 1 - w[MT_L_MOE];
	for (k = 0; k < MT_L_N; k++) {
		if (w[k] <= 0)
			continue;
		layer += w[k] * (a->gemm_f[k] + a->gemm_b[k] + a->attn_f[k] + a->attn_b[k] +
				 a->elem_f[k] + a->elem_b[k]);
		gemm += w[k] * (a->gemm_f[k] + a->gemm_b[k]);
		tpc += w[k] * a->tp_comm[k];
		tpe += w[k] * a->tp_exposed[k];
		cpc += w[k] * a->cp_comm[k];
		cpe += w[k] * a->cp_exposed[k];
		act += w[k] * a->act[k][MT_RC_NONE];
		host += w[k] * mt_host_layer_cpu(&a->hl[k], 0);
		host_g += w[k] * mt_host_layer_cpu(&a->hl[k], 1);
	}
	F(SHAPE_TOKENS) = T;
	F(SHAPE_HEADS_PER_TP) = (double)m->heads / tp;
	F(SHAPE_HIDDEN_PER_TP) = h / tp;
	F(SHAPE_LAYER_S) = layer;
	F(SHAPE_GEMM_FRAC) = layer > 0 ? gemm / layer : NAN;
	ffn = m->ffn > 0 && m->moe_layers < m->layers ? m->ffn : m->moe_ffn;
	if (c->peak_tflops[MT_DT_FP8] > 0 && ffn > 0) {
		double gm = m->gated ? 2 : 1;
		double b = mt_gemm_tflops(c, MT_DT_BF16, T, gm * ffn / tp, h);
		F(SHAPE_FP8_RATIO) = b > 0 ? mt_gemm_tflops(c, MT_DT_FP8, T, gm * ffn / tp, h) / b : NAN;
	} else {
		F(SHAPE_FP8_RATIO) = 0;
	}
	F(SHAPE_TP_PER_DOMAIN) = mt_group_per_domain(c, tp, 1);
	F(SHAPE_TP_BYTES) = tp > 1 ? T * h * 2 : 0;
	F(SHAPE_TP_BUSBW) = tp > 1 ? mt_coll_busbw(c, a->sp ? MT_COLL_REDUCE_SCATTER : MT_COLL_ALL_REDUCE,
						   tp, mt_group_per_domain(c, tp, 1), T * h * 2)
			    : NAN;
	F(SHAPE_TP_COMM_S) = tpc;
	F(SHAPE_TP_EXPOSED_S) = tpe;
	F(SHAPE_CP_COMM_S) = cpc;
	F(SHAPE_CP_EXPOSED_S) = cpe;
	F(SHAPE_EP_PER_DOMAIN) = mt_group_per_domain(c, a->ep, a->etp);
	if (m->experts) {
		int per = mt_group_per_domain(c, a->ep, a->etp);

		F(SHAPE_EP_BYTES) = a->disp.bytes;
		F(SHAPE_EP_BUSBW) = a->ep <= 1 ? NAN
			: a->dispatcher == MT_DISPATCH_ALLTOALL
			? mt_coll_busbw(c, MT_COLL_ALL_TO_ALL, a->ep, per, a->disp.bytes)
			: a->disp.gbps;
		F(SHAPE_EP_COMM_S) = a->ep_comm[MT_L_MOE];
		F(SHAPE_EXPERTS_PER_GPU) = (double)m->experts / a->ep;
		F(SHAPE_EP_DOMAINS) = (a->ep + per - 1) / per;
		F(SHAPE_EP_SHARED_HIDDEN_S) = a->ep_shared_hidden;
		F(SHAPE_EP_1F1B_EXPOSED_S) = a->ep_1f1b_exposed;
	} else {
		F(SHAPE_EP_BYTES) = F(SHAPE_EP_COMM_S) = F(SHAPE_EXPERTS_PER_GPU) = 0;
		F(SHAPE_EP_BUSBW) = NAN;
		F(SHAPE_EP_DOMAINS) = 1;
		F(SHAPE_EP_SHARED_HIDDEN_S) = F(SHAPE_EP_1F1B_EXPOSED_S) = 0;
	}
	F(SHAPE_FLEX_BACKEND) = c->dispatch.flex_backend >= 0 ? c->dispatch.flex_backend : NAN;
	F(SHAPE_FLEX_SMS) = c->dispatch.flex_backend >= 0 ? c->dispatch.flex_sms : NAN;
	F(SHAPE_ACT_BYTES) = act;
	F(SHAPE_OFFLOAD_S) = act / (mt_offload_gbps(c, MT_OFF_D2H) * 1e9);
	F(SHAPE_HOST_LAYER_S) = host;
	F(SHAPE_HOST_LAYER_GRAPHED_S) = host_g;
}

static __attribute__((noinline)) void pp_facts(struct mt_cfg_facts *cf, int tp, int cp, int pp, int dp, int num_mb)
{
	int L = cf->x->model->layers, v;

	if (pp >= 1 && pp <= MT_MAX_PP && cf->vsplit[pp] < 0) {
		cf->vsplit[pp] = 0;
		for (v = 2; pp > 1 && v <= L / pp; v++)
			if (mt_split_exists(L, pp, v)) {
				cf->vsplit[pp] = 1;
				break;
			}
	}
	/* with blocking sends Megatron-LM interleaves only over PP > 2 (prune p2p-pp) */
	F(PIPE_INTERLEAVABLE) = pp > 1 && pp <= MT_MAX_PP && cf->vsplit[pp] == 1 && num_mb % pp == 0 &&
				!(cf->x->job->pins.p2p_overlap == 0 && pp <= 2);
	F(CFG_PP) = pp;
	F(CFG_DP) = dp;
	F(CFG_NUM_MB) = num_mb;
	F(DP_GROUP) = (double)dp * cp;
	F(DP_PER_DOMAIN) = mt_group_per_domain(cf->x->cluster, dp * cp, tp);
}

static void vpp_facts(struct mt_cfg_facts *cf, int vpp)
{
	F(CFG_VPP) = vpp;
	F(PIPE_BUBBLE) = (F(CFG_PP) - 1) / (vpp * F(CFG_NUM_MB));
}

/* The transformer layers of the end stages and of the fullest stage between
 * them, from the split's chunks (chunk i on stage i % PP). */
static void stage_layers(struct mt_cfg_facts *cf, const struct mt_plan *b)
{
	int n[MT_MAX_PP] = { 0 }, i, mid = -1;

	for (i = 0; i < b->layout.n; i++)
		n[i % b->pp] += b->layout.t[i];
	for (i = 1; i < b->pp - 1; i++)
		if (n[i] > mid)
			mid = n[i];
	F(PIPE_FIRST_LAYERS) = n[0];
	F(PIPE_LAST_LAYERS) = n[b->pp - 1];
	F(PIPE_MIDDLE_LAYERS) = mid >= 0 ? mid : NAN;
}

static __attribute__((noinline)) void plan_facts(struct mt_cfg_facts *cf, const struct mt_costs *a, const struct mt_plan *b,
		       const struct mt_config *cfg)
{
	const struct mt_cluster *c = cf->x->cluster;
	double gb = cfg->grad_fp32 ? 4 : 2, group = (double)b->dp * a->cp;

	F(CFG_EDP) = b->edp;
	F(CFG_SPLIT) = b->split;
	F(CFG_BUCKET) = (double)b->bucket_params;
	F(PIPE_CHUNK_LAYERS) = b->chunk_layers_max;
	stage_layers(cf, b);
	F(PIPE_P2P_BYTES) = a->p2p_bytes;
	F(PIPE_P2P_S) = b->p2p_time;
	F(DP_PARAMS) = b->par_dense[0] + b->par_exp[0];
	F(DP_BUCKET_BYTES) = (double)b->bucket_params * gb;
	F(DP_BUCKET_BUSBW) = group > 1 ? mt_coll_busbw(c, MT_COLL_REDUCE_SCATTER, (int)group,
						       mt_group_per_domain(c, (int)group, a->tp),
						       (double)b->bucket_params * gb)
				       : NAN;
	F(DP_RS_S) = b->dp_rs[1];
	F(DP_AG_S) = b->dp_ag[1];
	F(DP_AR_S) = b->dp_rs[0];
}

static void memory_facts(struct mt_cfg_facts *cf, const struct mt_mem *mem)
{
	F(MEM_TOTAL) = mem->total;
	F(MEM_HEADROOM) = F(MEM_CAPACITY) - mem->total;
	F(MEM_WEIGHTS) = mem->weights;
	F(MEM_GRADS) = mem->grads;
	F(MEM_OPTIMIZER) = mem->optimizer;
	F(MEM_ACTIVATIONS) = mem->activations;
	F(MEM_NCCL) = mem->nccl;
}

static __attribute__((noinline)) void time_facts(struct mt_cfg_facts *cf, const struct mt_time *t, const struct mt_tput *tp)
{
	F(TIME_STEP) = t->step;
	F(TIME_COMPUTE) = t->compute;
	F(TIME_GEMM) = t->gemm;
	F(TIME_RECOMPUTE) = t->recompute;
	F(TIME_TP_EXPOSED) = t->tp_exposed;
	F(TIME_TP_HIDDEN) = t->tp_hidden;
	F(TIME_CP_EXPOSED) = t->cp_exposed;
	F(TIME_EP_EXPOSED) = t->ep_exposed;
	F(TIME_PP_EXPOSED) = t->pp_exposed;
	F(TIME_DP_EXPOSED) = t->dp_exposed;
	F(TIME_DP_HIDDEN) = t->dp_hidden;
	F(TIME_EP_HIDDEN) = t->ep_hidden;
	F(TIME_OFFLOAD_EXPOSED) = t->offload_exposed;
	F(TIME_BUBBLE) = t->bubble;
	F(TIME_OPTIMIZER) = t->optimizer;
	F(TIME_HOST) = t->host_exposed;
	F(TPUT_TOKENS) = tp->tokens_per_s_per_gpu;
	F(TPUT_MFU) = tp->mfu;
}

/* The facts of the knobs in spare slots (GENERIC and TIMED, job/knobs.def):
 * each the value in the configuration, n/a when not set, written at the
 * fact's stage. */
#define FACT(id, name, type, stage, kbit, unit, desc) MT_F_##id, MT_ST_##stage
#define NOFACT -1, -1
#define G_PINS(...)
#define G_SETTINGS(...)
#define G_GENERIC(...) { __VA_ARGS__ },
#define G_TIMED(...) { __VA_ARGS__ },
static const struct { int fact, stage, knob; } generic[] = {
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	     change, help) G_##group(fact, MT_KNOB_##id)
#include "../job/knobs.def"
#undef KNOB
	{ -1, -1, -1 },
};
#undef G_PINS
#undef G_SETTINGS
#undef G_GENERIC
#undef G_TIMED
#undef NOFACT
#undef FACT
#define NGENERIC ((int)(sizeof(generic) / sizeof(generic[0])) - 1)

static void generic_facts(struct mt_cfg_facts *cf, int stage, const struct mt_config *cfg)
{
	int i;

	for (i = 0; i < NGENERIC; i++)
		if (generic[i].fact >= 0 && generic[i].stage == stage) {
			long long v = mt_knob_cfg(cfg, generic[i].knob);
			cf->f[generic[i].fact].n = v == MT_UNSET ? NAN : (double)v;
		}
}

void mt_cfg_facts_stage(struct mt_cfg_facts *cf, int stage, const struct mt_config *cfg)
{
	if (!cf->r)
		return;
	if (NGENERIC)
		generic_facts(cf, stage, cfg);
	switch (stage) {
	case MT_ST_TP: F(CFG_TP) = cfg->tp; break;
	case MT_ST_CP: cp_facts(cf, cfg->tp, cfg->cp); break;
	case MT_ST_CP_A2A:
		cp_a2a_facts(cf, cfg->tp, cfg->cp, cfg->cp_a2a > 0 ? cfg->cp_a2a
					: mt_group_per_domain(cf->x->cluster, cfg->cp, cfg->tp));
		break;
	case MT_ST_CP_COMM: F(CFG_CP_COMM) = cfg->cp_comm; break;
	case MT_ST_SP: F(CFG_SP) = cfg->sp; break;
	case MT_ST_EP: F(CFG_EP) = cfg->ep; break;
	case MT_ST_ETP:
		F(CFG_ETP) = cfg->etp;
		F(CFG_DISPATCHER) = cfg->dispatcher;
		F(CFG_RANK_BUDGET) = cfg->dispatcher == MT_DISPATCH_FLEX && cfg->rank_budget;
		break;
	case MT_ST_MBS: F(CFG_MBS) = cfg->mbs; break;
	case MT_ST_FUSION:
		F(CFG_TP_OVERLAP) = cfg->tp_overlap;
		F(CFG_FUSED_CE) = cfg->fused_ce;
		break;
	case MT_ST_SHAPE: shape_facts(cf, cf->a); break;
	case MT_ST_PP: pp_facts(cf, cfg->tp, cfg->cp, cfg->pp, cfg->dp, cfg->num_mb); break;
	case MT_ST_VPP: vpp_facts(cf, cfg->vpp); break;
	case MT_ST_OVERLAP:
		F(CFG_OVERLAP_GRAD) = cfg->overlap_grad;
		F(CFG_OVERLAP_PARAM) = cfg->overlap_param;
		F(CFG_GRAD_FP32) = cfg->grad_fp32;
		break;
	case MT_ST_BUCKET: F(CFG_BUCKET) = (double)cfg->bucket_params; break;
	case MT_ST_PLAN:
		if (cf->b)
			plan_facts(cf, cf->a, cf->b, cfg);
		break;
	case MT_ST_DIST_OPT:
		F(CFG_DIST_OPT) = cfg->dist_opt;
		F(CFG_FSDP) = cfg->fsdp != MT_FSDP_OFF;
		F(CFG_TORCH_FSDP) = cfg->fsdp == MT_FSDP_TORCH;
		break;
	case MT_ST_RECOMPUTE:
		F(CFG_RECOMPUTE) = cfg->recompute;
		F(CFG_RC_MODULES) = cfg->recompute != MT_RC_SELECTIVE ? 0
				    : cfg->recompute_modules > 0 ? cfg->recompute_modules : 1;
		F(CFG_EP_OVERLAP) = cfg->ep_overlap;
		break;
	case MT_ST_LAYERS:
		F(CFG_RC_LAYERS) = cfg->recompute == MT_RC_FULL ? cfg->recompute_layers : 0;
		F(CFG_RC_METHOD) = cfg->recompute == MT_RC_FULL ? cfg->recompute_method : MT_RC_BLOCK;
		F(CFG_OFFLOAD) = cfg->offload_layers;
		F(CFG_CUDA_GRAPH) = cfg->cuda_graph;
		F(CFG_FULL_GRAPH) = cfg->full_graph;
		F(CFG_PREC_OPT) = cfg->prec_opt;
		F(CFG_EXP_AVG) = cfg->exp_avg;
		F(CFG_EXP_AVG_SQ) = cfg->exp_avg_sq;
		F(CFG_MAIN_PARAMS) = cfg->main_params;
		break;
	case MT_ST_MEMORY: memory_facts(cf, cf->mem); break;
	case MT_ST_TIME: time_facts(cf, cf->time, cf->tput); break;
	default: break;
	}
}

void mt_cfg_facts_upto(struct mt_cfg_facts *cf, int last, const struct mt_config *cfg)
{
	int st;

	for (st = MT_ST_TP; st <= last; st++)
		mt_cfg_facts_stage(cf, st, cfg);
}

void mt_cfg_facts_rank(struct mt_cfg_facts *cf, int rank, int feasible, double best_step)
{
	if (!cf->r)
		return;
	F(SEARCH_RANK) = rank > 0 ? rank : NAN;
	F(SEARCH_BEST_STEP) = best_step > 0 ? best_step : NAN;
	F(SEARCH_FEASIBLE) = feasible >= 0 ? feasible : NAN;
}
