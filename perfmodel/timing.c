/* SPDX-License-Identifier: MIT */
/* timing: level C of the model, the time of one training step and the
 * throughput figures (docs/MODEL.md section 5).  Arithmetic only. */
#include <math.h>
#include <stdlib.h>

#include "constants.h"
#include "eager.h"
#include "eager_opt.h"
#include "hostmem.h"
#include "optim.h"
#include "precision.h"
#include "fsdp.h"
#include "perf.h"
#include "recompute.h"


/* Per MoE layer and micro-batch: time the 1F1B EP overlap saves, and the EP
 * communication it leaves exposed, with the share of paired micro-batches. */
static double ep_overlap_save(const struct mt_costs *a, const struct mt_plan *b)
{
	return mt_ep_overlap_paired(b->pp, b->vpp, b->num_mb) * a->ep_1f1b_save;
}

static double ep_overlap_exposed(const struct mt_costs *a, const struct mt_plan *b)
{
	double f = mt_ep_overlap_paired(b->pp, b->vpp, b->num_mb);
	double none = a->ep_comm[MT_L_MOE];

	return f * a->ep_1f1b_exposed + (1 - f) * none;
}

struct stage_time {
	double t, fwd, bwd;
	double gemm, attn, elem, rc, tp, cp, ep, off, off_hidden, host, slow;
	double cpu, gpu;           /* the host's issue time and the GPU's, per micro-batch */
	double host_removed;       /* host time graphs and a rank budget remove (8.1) */
	struct mt_host_tl tl;      /* the host timeline of one micro-batch (5.8) */
	double fsdp, fsdp_hidden;  /* Megatron-FSDP collectives, per micro-batch (5.10) */
	double params, params_exp;
	int st;
};

/* Megatron-LM's own layers (4.11): each eager kernel shorter on the GPU than
 * its issue leaves the GPU waiting, the loss's and output's ops too; a full
 * recomputation issues the forward again.  Sets the stage's host term and
 * timeline for nl layers and gpu seconds of GPU work; returns the host's
 * issue time. */
static double eager_host(const struct mt_costs *a, const int nl[MT_L_N], double io, double frac,
			 double gpu, struct stage_time *o)
{
	double idle = io * a->host_ops_io * MT_EAGER_HOST_FWD_US * 1e-6, c = idle;
	int k;

	for (k = 0; k < MT_L_N; k++) {
		idle += nl[k] * ((1 + frac) * a->eager_idle_f[k] + a->eager_idle_b[k]);
		c += nl[k] * a->eager_cpu[k];
	}
	o->host = idle;
	o->tl = (struct mt_host_tl){ .t = gpu + idle, .cpu = c, .gpu = gpu, .sync = MT_HS_NONE,
				     .cyc_t = gpu + idle, .cyc_cpu = c, .cyc_gpu = gpu };
	return c;
}

static void stage_time(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		       const struct mt_config *cfg, int r, struct stage_time *o)
{
	const struct mt_model *m = x->model;
	int st = b->rep[r], k;
	double layers = b->nl[st][0] + b->nl[st][1], frac = 0, act_mb = 0, cpu, gpu, io = 1;
	const unsigned mods = mt_rc_mods(cfg);

	*o = (struct stage_time){ 0 };
	o->st = st;
	if (layers > 0)
		frac = mt_rc_full_share(cfg, layers / b->vpp);
	for (k = 0; k < MT_L_N; k++) {
		double n = b->nl[st][k];
		o->fwd += n * a->fwd[k];
		o->bwd += n * a->bwd[k];
		if (k == MT_L_MOE && cfg->ep_overlap) {
			double save = n * ep_overlap_save(a, b);
			o->fwd -= MT_COMM_FWD_SHARE * save;
			o->bwd -= (1 - MT_COMM_FWD_SHARE) * save;
		}
		/* FSDP (Megatron-LM asserts CUDA_DEVICE_MAX_CONNECTIONS is not 1)
		 * and the 1F1B EP overlap (32) run several hardware queues for the
		 * whole process: below compute capability 10 the TP and CP
		 * collectives of every layer then lose the issue order their
		 * overlap needs, and what it hid is exposed (5.3, 5.11) */
		if ((cfg->fsdp || cfg->ep_overlap) && (a->tp > 1 || a->cp > 1) &&
		    x->cluster->compute_capability < 10) {
			double lost = n * (a->tp_comm[k] - a->tp_exposed[k] + a->cp_comm[k] -
					   a->cp_exposed[k]);

			o->fwd += MT_COMM_FWD_SHARE * lost;
			o->bwd += (1 - MT_COMM_FWD_SHARE) * lost;
			o->tp += lost;
		}
		o->gemm += n * (a->gemm_f[k] + a->gemm_b[k]);
		o->attn += n * (a->attn_f[k] + a->attn_b[k]);
		o->elem += n * (a->elem_f[k] + a->elem_b[k]);
		o->tp += n * a->tp_exposed[k];
		o->cp += n * a->cp_exposed[k];
		o->ep += n * (k == MT_L_MOE && cfg->ep_overlap ? ep_overlap_exposed(a, b)
							       : a->ep_exposed[k]);
		if (cfg->recompute == MT_RC_SELECTIVE)
			o->rc += n * mt_rc_time(a, k, mods, 0);
		else if (cfg->recompute == MT_RC_FULL)
			o->rc += n * frac * a->rc_full[k];
		act_mb += n * mt_act_kept(a, k, mods);
	}
	if (st == 0) {
		o->fwd += a->emb_f;
		o->bwd += a->emb_b;
		o->elem += a->emb_f + a->emb_b;
		io += 0.5;
	}
	if (st == b->pp - 1 || (m->mtp_layers && st == b->mtp_stage)) {
		/* the output layer and loss, once for the model (last stage) and
		 * once per MTP layer (the MTP stage) */
		double n = (st == b->pp - 1) + (st == b->mtp_stage ? m->mtp_layers : 0);
		o->fwd += n * a->out_f;
		o->bwd += n * a->out_b;
		o->gemm += n * (a->out_f + a->out_b - a->out_tp_exposed);
		o->tp += n * a->out_tp_exposed;
		io += 0.5;
	}
	/* gradient accumulation outside the weight-gradient GEMM (4.3): each
	 * micro-batch's weight gradients read, the main gradients read and
	 * written, every parameter of the stage */
	if (!x->job->grad_accum_fusion || cfg->fsdp == MT_FSDP_TORCH) {
		double acc = (b->par_dense[r] + b->par_exp[r]) * (2 + 2 * (cfg->grad_fp32 ? 4 : 2)) /
			     (x->hbm * MT_ELEM_EFFICIENCY);

		o->bwd += acc;
		o->elem += acc;
	}
	/* the rest of fwd + bwd not itemised above: kernel gaps and the SMs
	 * that overlapped TP/CP communication takes */
	o->slow = o->fwd + o->bwd - (o->gemm + o->attn + o->elem + o->tp + o->cp + o->ep);
	if (o->slow < 0)
		o->slow = 0;
	/* activation offload: out during the forward, back during the backward
	 * (5.7); fine-grained offload moves the named modules' inputs of every
	 * layer (4.10) */
	if ((cfg->offload_layers > 0 || a->act_fine[0] + a->act_fine[1] > 0) && layers > 0) {
		double chunk = layers / b->vpp;
		double bytes = act_mb * fmin(cfg->offload_layers, chunk) / chunk +
			       b->nl[st][0] * a->act_fine[0] + b->nl[st][1] * a->act_fine[1];
		double d2h = mt_offload_gbps(x->cluster, MT_OFF_D2H) * 1e9;
		double h2d = mt_offload_gbps(x->cluster, MT_OFF_H2D) * 1e9;

		double nl = cfg->offload_layers > 0 ? fmin(cfg->offload_layers, chunk) * b->vpp : layers;

		/* copies hide behind compute; they still read and write HBM, and each
		 * offloaded layer waits on its copy events */
		o->off = fmax(0, bytes / d2h - o->fwd) + fmax(0, bytes / h2d - o->bwd) +
			 2 * bytes / (x->hbm * MT_ELEM_EFFICIENCY) + nl * MT_OFFLOAD_LAYER_US * 1e-6;
		o->off_hidden = fmin(bytes / d2h, o->fwd) + fmin(bytes / h2d, o->bwd);
	}
	gpu = o->fwd + o->bwd + o->rc + o->off;
	if (cfg->fsdp) {
		mt_fsdp_stage_time(x, b, st, cfg->fsdp, o->fwd, o->bwd + o->rc, &o->fsdp, &o->fsdp_hidden);
		gpu += o->fsdp + MT_COMM_SM_SLOWDOWN * o->fsdp_hidden;
	}
	/* host: the ops issued per micro-batch against the GPU time, with the
	 * waits of the MoE dispatchers (5.8); the embedding, loss and output
	 * layer's ops, and a full recomputation's forward issued again */
	if (cfg->full_graph) {
		/* one graph of the whole step: replayed once, nothing issued per
		 * op, no wait inside (5.10) */
		o->tl = (struct mt_host_tl){ .t = gpu, .gpu = gpu, .sync = MT_HS_NONE, .cyc_gpu = gpu,
					     .cyc_t = gpu };
		cpu = 0;
	} else {
		double nl[2] = { b->nl[st][0], b->nl[st][1] };
		double extra = io * a->host_ops_io * x->hc.eager;

		for (k = 0; k < MT_L_N; k++)
			extra += frac * nl[k] * a->hl[k].fwd_c[0];
		mt_host_timeline(a->hl, nl, cfg->cuda_graph, x->hc.sync, gpu, extra, &o->tl);
		cpu = o->tl.cpu;
	}
	o->host = fmax(0, o->tl.t - gpu);
	if (a->eager && !cfg->full_graph && !cfg->cuda_graph)
		cpu = eager_host(a, b->nl[st], io, frac, gpu, o);
	/* what the host would expose without graphs and a rank budget, eager
	 * and waiting for the counts: their saving, for the band (8.1) */
	if (cfg->full_graph || cfg->cuda_graph || (a->rank_budget && b->nl[st][MT_L_MOE] > 0)) {
		struct mt_host_layer hb[2] = { a->hl[0], a->rank_budget ? a->hl_wait : a->hl[1] };
		double nl[2] = { b->nl[st][0], b->nl[st][1] };
		double extra = io * a->host_ops_io * x->hc.eager;
		struct mt_host_tl tb;

		for (k = 0; k < MT_L_N; k++)
			extra += frac * nl[k] * a->hl[k].fwd_c[0];
		mt_host_timeline(hb, nl, 0, x->hc.sync, gpu, extra, &tb);
		o->host_removed = fmax(0, fmax(0, tb.t - gpu) - o->host);
	}
	o->cpu = cpu;
	o->gpu = gpu;
	o->t = gpu + o->host;
	o->params = b->par_dense[r];
	o->params_exp = b->par_exp[r];
}

/* MXFP8 weights gathered in BF16 are cast into their storage on every rank,
 * the whole stage's, once a step on the compute stream (4.9): seconds */
static double param_recast(const struct mt_ctx *x, const struct mt_plan *b,
			   const struct mt_config *cfg)
{
	double q = 0;
	int r;

	if (!mt_param_gather_applies(x->job, cfg))
		return 0;
	for (r = 0; r < b->nrep; r++)
		q = fmax(q, b->par_fp8[r]);
	return q * mt_param_ag_recast(x->job, 1) / x->hbm;
}

/* The hidden parts of the TP, CP and EP traffic of the critical stage st,
 * for the report. */
static void timing_hidden(const struct mt_model *m, const struct mt_costs *a,
			  const struct mt_plan *b, int st, double mb, struct mt_time *t)
{
	double tpc = 0, cpc = 0, epc = 0;
	int k;

	tpc += ((st == b->pp - 1) + (st == b->mtp_stage ? m->mtp_layers : 0)) * a->out_tp_comm;
	for (k = 0; k < MT_L_N; k++) {
		tpc += b->nl[st][k] * a->tp_comm[k];
		cpc += b->nl[st][k] * a->cp_comm[k];
		epc += b->nl[st][k] * a->ep_comm[k];
	}
	t->tp_hidden = fmax(0, mb * tpc - t->tp_exposed);
	t->cp_hidden = fmax(0, mb * cpc - t->cp_exposed);
	t->ep_hidden = fmax(0, mb * epc - t->ep_exposed);
}

/* Data parallel (5.4): only the last micro-batch's backward hides the
 * gradient reduction, only the first forward hides the parameter gather. */
static void timing_dp(const struct mt_plan *b, const struct mt_config *cfg,
		      const struct stage_time *crit, struct mt_time *t)
{
	int d = cfg->dist_opt ? 1 : 0;
	double rs = b->dp_rs[d], ag = b->dp_ag[d], ers, eag;
	double bwd_mb = crit->bwd + crit->rc, fwd_mb = crit->fwd;

	ers = cfg->overlap_grad ? fmax(b->dp_rs_last[d], rs - bwd_mb) : rs;
	if (ers > rs)
		ers = rs;
	eag = (d && cfg->overlap_param) ? fmax(b->dp_ag_first[d], ag - fwd_mb) : ag;
	if (eag > ag)
		eag = ag;
	t->dp_exposed = ers + eag;
	t->dp_hidden = rs + ag - t->dp_exposed;
	if (cfg->fsdp) /* no step-end reduction: the stage time holds it */
		t->dp_exposed = t->dp_hidden = 0;
}

void mt_timing(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
	       const struct mt_config *cfg, struct mt_time *t, struct mt_tput *tp)
{
	const struct mt_model *m = x->model;
	const struct mt_job *j = x->job;
	struct stage_time s, crit = { 0 };
	double mb = b->num_mb, pp = b->pp, vpp = b->vpp, mean, opt_params = 0, opt_local = 0;
	double total_layers_time = 0, extra, rc_flops = 0, frac = 0, hw, L;
	double dshard = cfg->dist_opt || cfg->fsdp ? (double)b->dp * a->cp : 1;
	double eshard = cfg->dist_opt || cfg->fsdp ? b->edp : 1;
	int r, k;

	for (r = 0; r < b->nrep; r++) {
		stage_time(x, a, b, cfg, r, &s);
		if (s.t > crit.t)
			crit = s;
		if (s.params / dshard + s.params_exp / eshard > opt_params)
			opt_params = s.params / dshard + s.params_exp / eshard;
		/* without Transformer Engine and Apex: torch's AdamW and the
		 * per-tensor loops (4.11), on the GPU's share */
		if (j->transformer_impl == MT_TI_LOCAL) {
			double le = m->experts > 0 ? (double)m->experts / cfg->ep : 0;
			double n = fmax(1, mt_eager_opt_tensors(m, b, b->rep[r], le) / dshard);
			double p = (s.params / dshard + s.params_exp / eshard) * (1 - j->opt_offload);

			opt_local = fmax(opt_local, mt_eager_opt_time(n, p, x->hbm, x->hc.sync));
		}
	}
	/* the mean stage: all layers spread over pp stages, plus the overheads
	 * of the representative stages */
	L = b->tot[0] + b->tot[1];
	if (L > 0)
		frac = mt_rc_full_share(cfg, L / ((double)vpp * pp));
	for (k = 0; k < MT_L_N; k++) {
		double w = a->fwd[k] + a->bwd[k];
		if (k == MT_L_MOE && cfg->ep_overlap)
			w -= ep_overlap_save(a, b);
		if (cfg->recompute == MT_RC_SELECTIVE)
			w += mt_rc_time(a, k, mt_rc_mods(cfg), 0);
		else if (cfg->recompute == MT_RC_FULL)
			w += frac * a->rc_full[k];
		total_layers_time += b->tot[k] * w;
	}
	extra = a->emb_f + a->emb_b + (1 + m->mtp_layers) * (a->out_f + a->out_b);
	mean = (total_layers_time + extra) / pp;
	if (mean > crit.t)
		mean = crit.t;

	*t = (struct mt_time){ 0 };
	t->gemm = mb * crit.gemm;
	t->attention = mb * crit.attn;
	t->elementwise = mb * crit.elem;
	t->recompute = mb * crit.rc;
	t->gpu_overhead = mb * crit.slow;
	t->compute = t->gemm + t->attention + t->elementwise + t->recompute + t->gpu_overhead;
	t->tp_exposed = mb * crit.tp;
	t->cp_exposed = mb * crit.cp;
	t->ep_exposed = mb * crit.ep;
	t->offload_exposed = mb * crit.off;
	t->offload_hidden = mb * crit.off_hidden;
	t->host_exposed = mb * crit.host;
	t->host_cpu = mb * crit.cpu;
	t->host_removed = mb * crit.host_removed;
	t->host_gpu = mb * crit.gpu;
	t->host_tl = crit.tl;
	t->bubble = pp > 1 ? (pp - 1) / vpp * mean : 0;
	t->imbalance = mb * (crit.t - mean);
	timing_hidden(m, a, b, crit.st, mb, t);
	/* pipeline point-to-point (5.5) */
	if (pp > 1) {
		double all = 2 * mb * vpp * b->p2p_time;
		/* interleaved: every lap of the ring in the fill and the drain
		 * waits for its p sends, 2(v.p - 1) transfers in all (5.5) */
		t->pp_exposed = vpp > 1 ? 2 * (vpp * pp - 1) * b->p2p_time
					: 2 * (mb + pp - 1) * b->p2p_time;
		if (mt_p2p_blocks(cfg)) /* each chunk waits for its sends */
			t->pp_exposed = all;
		t->pp_hidden = fmax(0, all - t->pp_exposed);
	}
	timing_dp(b, cfg, &crit, t);
	/* the GPU steps what stays (with Megatron-LM's own layers the fallback
	 * above); the host share adds its copies and CPU Adam (4.10) */
	t->optimizer = (j->transformer_impl == MT_TI_LOCAL
				? opt_local
				: opt_params * (1 - j->opt_offload) *
					  mt_opt_step_moved_bytes(j, cfg, b->dp) / x->hbm) +
		       mt_opt_offload_time(x, opt_params);
	t->optimizer += param_recast(x, b, cfg);
	/* hidden DP and PP traffic still takes SMs from the compute it hides under */
	t->gpu_overhead += MT_COMM_SM_SLOWDOWN * (t->dp_hidden + t->pp_hidden);
	t->compute += MT_COMM_SM_SLOWDOWN * (t->dp_hidden + t->pp_hidden);
	t->host_exposed += MT_STEP_OVERHEAD_S;
	t->step = mb * crit.t + t->bubble + t->pp_exposed + t->dp_exposed + t->optimizer +
		  MT_COMM_SM_SLOWDOWN * (t->dp_hidden + t->pp_hidden) + MT_STEP_OVERHEAD_S;
#ifdef MT_TEST_KNOB
	if (cfg->extra[MT_TEST_KNOB_SLOT] != MT_UNSET)
		t->step += MT_TEST_KNOB_S * abs(cfg->extra[MT_TEST_KNOB_SLOT] - MT_TEST_KNOB_BEST);
#endif
	if (cfg->fsdp) { /* reported as DP traffic; already in the stage time */
		t->dp_exposed = mb * crit.fsdp;
		t->dp_hidden = mb * crit.fsdp_hidden;
		t->gpu_overhead += MT_COMM_SM_SLOWDOWN * t->dp_hidden;
		t->compute += MT_COMM_SM_SLOWDOWN * t->dp_hidden;
	}

	/* throughput (5.9) */
	tp->model_flops_step = mt_model_step_flops(m, (double)j->gbs, j->seq,
						   mt_model_padded_vocab(m, a->tp), MT_FLOPS_MEGATRON);
	for (k = 0; k < MT_L_N; k++) {
		if (cfg->recompute == MT_RC_SELECTIVE)
			rc_flops += b->tot[k] * mt_rc_time(a, k, mt_rc_mods(cfg), 1);
		else if (cfg->recompute == MT_RC_FULL)
			rc_flops += b->tot[k] * frac * (a->flops_gemm_f[k] + a->flops_attn_f[k]);
	}
	hw = 0;
	for (k = 0; k < MT_L_N; k++)
		hw += b->tot[k] * 3 * (a->flops_gemm_f[k] + a->flops_attn_f[k]);
	hw += (1 + m->mtp_layers) * 3 * a->flops_out_f + rc_flops;
	/* per GPU: the pipeline's work over its pp stages, for every micro-batch */
	tp->hw_flops_step = hw * mb / pp * j->gpus;
	tp->tokens_per_s_per_gpu = (double)j->gbs * j->seq / t->step / j->gpus;
	tp->model_tflops_per_gpu = tp->model_flops_step / t->step / j->gpus / 1e12;
	tp->hw_tflops_per_gpu = tp->hw_flops_step / t->step / j->gpus / 1e12;
	tp->mfu = tp->model_tflops_per_gpu / x->peak;
}

double mt_timing_floor(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		       int ep_overlap)
{
	const struct mt_model *m = x->model;
	double w[MT_L_N], crit = 0, opt = 0, mean = 0, step, mb = b->num_mb, pp = b->pp;
	int r, k;

	for (k = 0; k < MT_L_N; k++) {
		w[k] = a->fwd[k] + a->bwd[k];
		if (k == MT_L_MOE && ep_overlap)
			w[k] -= fmax(0, ep_overlap_save(a, b));
		mean += b->tot[k] * w[k];
	}
	mean = (mean + a->emb_f + a->emb_b + (1 + m->mtp_layers) * (a->out_f + a->out_b)) / pp;
	for (r = 0; r < b->nrep; r++) {
		int st = b->rep[r];
		double t = 0, sh;

		for (k = 0; k < MT_L_N; k++)
			t += b->nl[st][k] * w[k];
		if (st == 0)
			t += a->emb_f + a->emb_b;
		t += ((st == b->pp - 1) + (m->mtp_layers && st == b->mtp_stage ? m->mtp_layers : 0)) *
		     (a->out_f + a->out_b);
		if (t > crit)
			crit = t;
		sh = b->par_dense[r] / ((double)b->dp * a->cp) + b->par_exp[r] / (b->edp > 0 ? b->edp : 1);
		if (sh > opt)
			opt = sh;
	}
	step = mb * crit + opt * (1 - x->job->opt_offload) * b->opt_s_per_param + MT_STEP_OVERHEAD_S;
	if (pp > 1)
		step += (pp - 1) / b->vpp * fmin(mean, crit) +
			fmin(b->vpp > 1 ? 2 * (b->vpp * pp - 1) : 2 * (mb + pp - 1), 2 * mb * b->vpp) *
				b->p2p_time; /* the sends, blocking or not (5.5) */
	return step;
}

double mt_shape_floor(const struct mt_ctx *x, const struct mt_costs *a, double mb_per_pp,
		      int ep_overlap)
{
	const struct mt_model *m = x->model;
	double moe = m->moe_layers + (m->mtp_layers && m->is_moe[m->layers - 1] ? m->mtp_layers : 0);
	double dense = m->layers + m->mtp_layers - moe, wm = a->fwd[MT_L_MOE] + a->bwd[MT_L_MOE];

	if (ep_overlap) /* at most every micro-batch paired */
		wm -= fmax(0, a->ep_1f1b_save);
	return mb_per_pp * (dense * (a->fwd[MT_L_DENSE] + a->bwd[MT_L_DENSE]) + moe * wm + a->emb_f +
			    a->emb_b + (1 + m->mtp_layers) * (a->out_f + a->out_b)) +
	       MT_STEP_OVERHEAD_S;
}

const char *mt_full_graph_reason(const struct mt_ctx *x, const struct mt_costs *a,
				 const struct mt_config *cfg)
{
	const struct mt_model *m = x->model;
	const unsigned mods = mt_rc_mods(cfg);

	if (m->moe_layers > 0 && a->hl[MT_L_MOE].sync != MT_HS_NONE)
		return "a MoE layer waits for the host (the dispatcher's token counts), which a graph "
		       "cannot capture; padded token drop (--moe-balance drop:1) or a HybridEP rank "
		       "budget (--moe-rank-budget on) removes the wait";
	if (x->job->offload_modules)
		return "fine-grained activation offload inside a full-iteration graph needs "
		       "--fine-grained-offloading-max-inflight-offloads (Megatron-LM d98e8a6 "
		       "transformer_config.py:2967), which megatune does not set";
	/* a whole-step graph counts as graphing every module (d98e8a6
	 * transformer_config.py:2872-2897) */
	if ((mods & MT_RCM_DEFAULT) && m->attn_dropout > 0)
		return "attention dropout with core_attn recomputed inside a graph (Megatron-LM d98e8a6 "
		       "transformer_config.py:2879 asserts: attention dropout is not supported with "
		       "graphed attention recomputation)";
	if ((mods & ((1u << MT_RCM_MLP) | (1u << MT_RCM_MOE))) && m->dropout > 0)
		return "hidden dropout with the MLP or MoE recomputed inside a graph (Megatron-LM d98e8a6 "
		       "transformer_config.py:2886 asserts: hidden dropout is not supported with graphed "
		       "MLP/MoE recomputation)";
	if (cfg->offload_layers > 0 && (x->job->release_off & MT_ROFF_GRAPH_OFFLOAD))
		return "CPU offloading: before core_v0.18.0 (Megatron-Bridge v0.6.0) Megatron-LM refuses "
		       "every CUDA graph with it (transformer_config.py@core_v0.17.0:1951)";
	return NULL;
}

int mt_full_graph_helps(const struct mt_time *t)
{
	return t->host_exposed - MT_STEP_OVERHEAD_S > MT_FULL_GRAPH_GAIN * t->step;
}
