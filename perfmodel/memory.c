/* SPDX-License-Identifier: MIT */
/* memory: level C of the model, per-GPU memory of each pipeline stage and of
 * the most loaded one (docs/MODEL.md section 4.8).  Arithmetic only: no
 * look-up, no allocation. */
#include <math.h>

#include "constants.h"
#include "dispatch.h"
#include "eager.h"
#include "hostmem.h"
#include "fsdp.h"
#include "graphs.h"
#include "optim.h"
#include "perf.h"
#include "precision.h"
#include "recompute.h"

/* Activation bytes of one model chunk (one micro-batch) of a stage, with its
 * recompute and offload settings; *layer_avg gets one layer's kept bytes and
 * *moving what the stage holds once, however many chunks are in flight: the
 * one layer on its way to or from the host. */
static double chunk_act(const struct mt_costs *a, const struct mt_plan *b,
			const struct mt_config *cfg, int st, double *layer_avg, double *moving)
{
	double layers = b->nl[st][0] + b->nl[st][1], chunk, f_rc, f_ck, f_off = 0, act = 0, avg;
	const unsigned mods = mt_rc_mods(cfg);
	/* per layer without full recompute: less what the recomputed modules
	 * free, and less what fine-grained offload moves of what stays (4.10):
	 * a module's inputs that its recomputation already discards are not
	 * moved again */
	const double kept[MT_L_N] = { mt_act_kept(a, 0, mods), mt_act_kept(a, 1, mods) };
	const double stay[MT_L_N] = { fmax(0, kept[0] - a->act_fine[0]),
				      fmax(0, kept[1] - a->act_fine[1]) };
	int k;

	*layer_avg = *moving = 0;
	if (layers <= 0)
		return 0;
	chunk = layers / b->vpp;
	/* full recompute: the recomputed layers are reduced to the kept inputs
	 * of their checkpoints (block: one a layer; uniform: one a group) */
	f_rc = mt_rc_full_share(cfg, chunk);
	f_ck = mt_rc_ckpt_share(cfg, chunk);
	if (cfg->offload_layers > 0)
		f_off = fmin(cfg->offload_layers, chunk * (1 - f_rc)) / chunk;
	for (k = 0; k < MT_L_N; k++) {
		double n = b->nl[st][k] / (double)b->vpp;

		act += n * ((1 - f_rc) * stay[k] + f_ck * a->act[k][MT_RC_FULL]);
		act -= n * f_off * stay[k];
	}
	avg = (b->nl[st][0] * kept[0] + b->nl[st][1] * kept[1]) / layers;
	*layer_avg = avg;
	if (f_off > 0)
		*moving += (b->nl[st][0] * stay[0] + b->nl[st][1] * stay[1]) / layers;
	if (a->act_fine[0] + a->act_fine[1] > 0) /* one layer's module inputs in flight */
		*moving += (b->nl[st][0] * (kept[0] - stay[0]) + b->nl[st][1] * (kept[1] - stay[1])) /
			   layers;
	return act;
}

/* The GEMM workspaces the caching allocator holds between steps (4.8):
 * PyTorch's cuBLAS workspace for each of the two threads that run GEMMs,
 * and with Transformer Engine its own, one per compute stream of a MoE
 * stage's grouped GEMM, and userbuffers' for overlapped TP GEMMs. */
static double gemm_workspaces(const struct mt_ctx *x, const struct mt_plan *b,
			      const struct mt_config *cfg, int st)
{
	const double cc = x->cluster->compute_capability;
	const int hopper = cc <= 0 || cc >= 9;
	double te = hopper ? MT_TE_CUBLAS_WS_BYTES : MT_TE_CUBLAS_WS_AMPERE_BYTES;
	double ws = MT_TORCH_CUBLAS_HANDLES *
		    (hopper ? MT_TORCH_CUBLAS_WS_BYTES : MT_TORCH_CUBLAS_WS_AMPERE_BYTES);

	if (x->job->transformer_impl == MT_TI_LOCAL)
		return ws;
	ws += te;
	if (b->nl[st][MT_L_MOE] > 0 && x->job->moe_grouped_gemm)
		ws += MT_TE_GROUPED_GEMM_STREAMS * te;
	if (cfg->tp_overlap && cfg->sp && cfg->tp > 1)
		ws += MT_TE_UB_STREAMS * te;
	return ws;
}

/* --defer-embedding-wgrad-compute: the last stage keeps, for each
 * micro-batch whose output-layer weight gradient waits for the last one
 * (up to --wgrad-deferral-limit), that layer's input and the logits'
 * BF16 gradient (Megatron-LM d98e8a6 tensor_parallel/layers.py:661-663,
 * 1229-1230; drained after the last backward, schedules.py:915-925); at
 * the last micro-batch's loss all of them are held (4.8). */
static double deferred_wgrad(const struct mt_ctx *x, const struct mt_costs *a,
			     const struct mt_plan *b)
{
	const struct mt_job *j = x->job;
	double V = mt_model_padded_vocab(x->model, a->tp), kept;

	if (!j->wgrad_defer || b->num_mb < 2)
		return 0;
	kept = b->num_mb - 1;
	if (j->wgrad_defer_limit > 0 && j->wgrad_defer_limit < kept)
		kept = j->wgrad_defer_limit;
	return kept * a->tokens * (2.0 * V / a->tp + 2.0 * x->model->hidden);
}

/* The total as PyTorch's caching allocator reports it (docs/MODEL.md 4.8):
 * allocated between steps, the peak inside a step, reserved, and outside.
 * graph_pool: the graphs' buffers in their private pool, reserved but not
 * counted as allocated. */
static void allocator_terms(double corr, double graph_pool, double disp_out, struct mt_mem *o)
{
	o->allocated = o->weights + o->grads + o->optimizer + o->workspace + o->cuda_graphs -
		       graph_pool;
	o->max_allocated = o->allocated + o->activations + o->logits + o->transient +
			   o->moe_dispatch - disp_out;
	/* the measured correction is fitted against the reserved memory; what
	 * a negative one takes beyond the slack comes off the rest */
	o->reserved = o->max_allocated + graph_pool + fmax(0, o->fragmentation + corr);
	o->outside = o->total - o->reserved;
}

static void stage_memory(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
			 const struct mt_config *cfg, int st, struct mt_mem *o)
{
	const struct mt_model *m = x->model;
	double Pd, Pe, Pq, dshard, eshard, gb, layer_avg, moving, act, corr, graph_pool, disp_out = 0;

	dshard = cfg->dist_opt || cfg->fsdp ? (double)b->dp * a->cp : 1;
	eshard = cfg->dist_opt || cfg->fsdp ? (double)b->edp : 1;
	/* --num-distributed-optimizer-instances N: each instance shards over
	 * its share of the data-parallel ranks, dense and expert
	 * (parallel_state.py @ d98e8a6 lines 924-929, 1448-1451; 4.8) */
	if (cfg->dist_opt && !cfg->fsdp && x->job->dist_opt_instances > 1) {
		int n = x->job->dist_opt_instances;

		if (b->dp * a->cp % n == 0)
			dshard /= n;
		if (b->edp % n == 0)
			eshard /= n;
	}
	gb = cfg->grad_fp32 ? 4 : 2;
	o->stage = st;
	Pd = mt_stage_params(x, a, b, st, &Pe, &Pq);
	/* bf16, plus the recipe's quantised weight copies; kept quantised
	 * instead of bf16 with the quantised parameter gather (4.9) */
	{
		double wq = mt_recipe_weight_cache_bytes(x->recipe, x->cluster->compute_capability);

		if (mt_param_gather_q(x->job, cfg->dist_opt) && b->dp > 1)
			o->weights = 2 * (Pd + Pe - Pq) + wq * Pq;
		else
			o->weights = 2 * (Pd + Pe) + wq * Pq;
	}
	o->grads = gb * (Pd + Pe);
	if (cfg->fsdp) { /* everything sharded, plus the layers gathered (5.10) */
		double bw, bg;

		mt_fsdp_buffers(a, cfg, &bw, &bg);
		o->weights = (2 * Pd + Pq) / dshard + 2 * Pe / eshard + bw;
		o->grads = gb * (Pd / dshard + Pe / eshard) + bg;
	}
	/* master weights and moments, in the precision-aware optimizer's dtypes;
	 * the share offloaded to the host leaves the GPU (4.8, 4.10) */
	o->optimizer = mt_opt_state_bytes(x->job, cfg, b->dp) * (Pd / dshard + Pe / eshard) *
		       (1 - x->job->opt_offload);
	act = b->inflight_ck[st] * chunk_act(a, b, cfg, st, &layer_avg, &moving) + moving;
	if (st == 0)
		act += mt_inflight(b->pp, 1, b->num_mb, 0) * a->act_emb;
	/* full recompute: one checkpoint's layers rematerialised in backward
	 * (uniform: the whole group of N) */
	if (cfg->recompute == MT_RC_FULL && layer_avg > 0)
		act += a->act_layer_peak[b->nl[st][1] ? 1 : 0] +
		       (mt_rc_group_layers(cfg, (b->nl[st][0] + b->nl[st][1]) / b->vpp) - 1) *
			       layer_avg;
	/* 1F1B EP overlap: a second micro-batch's layer is live beside the one
	 * in backward (docs/MODEL.md 5.3) */
	if (cfg->ep_overlap)
		act += a->act_layer_peak[b->nl[st][1] ? 1 : 0];
	if (st == b->pp - 1)
		act += deferred_wgrad(x, a, b);
	o->activations = act;
	/* the logits of the loss (last stage) and of each MTP layer (its stage) */
	o->logits = (st == b->pp - 1 ? a->act_out : 0) +
		    (st == b->mtp_stage ? a->act_out * m->mtp_layers : 0);
	/* the dispatcher's token buffers of one MoE layer, at the load they
	 * peak at: the rank budget's static size, else the busiest rank over
	 * the stage's dispatches; DeepEP's and HybridEP's own buffers lie
	 * outside the allocator (4.8) */
	o->moe_dispatch = 0;
	if (b->nl[st][MT_L_MOE]) {
		double load = cfg->rank_budget ? x->job->moe_rank_budget
				  : mt_moe_peak_load(x, cfg->ep, a->moe_tokens,
						     (double)b->nl[st][MT_L_MOE] * b->num_mb);

		disp_out = a->dbuf.fixed;
		o->moe_dispatch = a->dbuf.base + load * a->dbuf.load + disp_out;
	}
	/* a stage with a loss: one BF16 copy of the logits beside those kept;
	 * no layer's own buffers are live with them (4.8) */
	o->transient = a->transient;
	if (st == b->pp - 1 || (m->mtp_layers && st == b->mtp_stage))
		o->transient = fmax(a->transient - o->logits, a->logits_transient);
	/* the optimizer step, activations and logits freed: FusedAdam's FP32
	 * copies of the states below FP32 (4.8) */
	o->transient = fmax(o->transient, mt_opt_step_copy_bytes(x->job, cfg) *
						  (Pd / dshard + Pe / eshard) -
					  o->activations - o->logits);
	/* calibrate --from-validation: the memory allocated inside a step as
	 * the ranks' reports measured it (docs/MODEL.md 10) */
	{
		double k = mt_corr_mem_step(&x->cluster->corr);

		o->activations *= k;
		o->logits *= k;
		o->moe_dispatch *= k;
		o->transient *= k;
	}
	o->nccl = b->nccl_bytes;
	o->cuda_context = MT_CUDA_CONTEXT_BYTES;
	/* with Megatron-LM's own layers, the attention's score buffer (4.11) */
	o->workspace = gemm_workspaces(x, b, cfg, st) + a->eager_buffer;
	/* per-layer CUDA graphs keep static buffers for every graphed layer of
	 * every micro-batch in flight, by their scopes (5.10) */
	o->cuda_graphs = mt_graph_bytes(x, a, b, cfg, st, &graph_pool);
	o->fragmentation = MT_FRAGMENTATION * (o->activations + o->logits + o->transient +
					       o->moe_dispatch - disp_out);
	o->total = o->weights + o->grads + o->optimizer + o->activations + o->logits +
		   o->moe_dispatch + o->transient + o->nccl + o->cuda_context + o->workspace +
		   o->cuda_graphs + o->fragmentation;
	/* calibrate --from-validation: the reserved memory's term */
	corr = x->cluster->corr.on ? x->cluster->corr.mem_bytes : 0;
	o->total += corr;
	allocator_terms(corr, graph_pool, disp_out, o);
}

/* 1 when middle stage st holds the layers of an earlier middle stage: with
 * fewer micro-batches in flight (mt_inflight falls with the stage) it holds
 * less memory, whatever the level-C settings. */
static int like_earlier(const struct mt_plan *b, int st)
{
	int i;

	for (i = 1; i < st; i++)
		if (i != b->mtp_stage && b->nl[i][0] == b->nl[st][0] && b->nl[i][1] == b->nl[st][1])
			return 1;
	return 0;
}

void mt_memory(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
	       const struct mt_config *cfg, struct mt_mem *out)
{
	struct mt_mem cur;
	int st;

	out->total = -1;
	for (st = 0; st < b->pp; st++) {
		if (st > 0 && st < b->pp - 1 && st != b->mtp_stage && like_earlier(b, st))
			continue;
		stage_memory(x, a, b, cfg, st, &cur);
		if (cur.total > out->total)
			*out = cur;
	}
	mt_hostmem(x, a, b, cfg, out);
}

int mt_memory_stages(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		     const struct mt_config *cfg, struct mt_mem *out)
{
	int st;

	for (st = 0; st < b->pp; st++) {
		stage_memory(x, a, b, cfg, st, &out[st]);
		mt_hostmem(x, a, b, cfg, &out[st]);
	}
	return b->pp;
}
