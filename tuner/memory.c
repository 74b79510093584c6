/* SPDX-License-Identifier: MIT */
/* memory: level C of the model, per-GPU memory of the most loaded pipeline
 * stage (docs/MODEL.md section 4.8).  Arithmetic only: no look-up, no allocation. */
#include <math.h>

#include "constants.h"
#include "fsdp.h"
#include "perf.h"

/* Activation bytes of one model chunk (one micro-batch) of a stage, with its
 * recompute and offload settings; *peak gets one rematerialised layer. */
static double chunk_act(const struct mt_costs *a, const struct mt_plan *b,
			const struct mt_config *cfg, int st, double *layer_avg)
{
	double layers = b->nl[st][0] + b->nl[st][1], chunk, f_rc = 0, f_off = 0, act = 0, avg;
	int base = cfg->recompute == MT_RC_SELECTIVE ? MT_RC_SELECTIVE : MT_RC_NONE, k;

	*layer_avg = 0;
	if (layers <= 0)
		return 0;
	chunk = layers / b->vpp;
	if (cfg->recompute == MT_RC_FULL)
		f_rc = fmin(cfg->recompute_layers, chunk) / chunk;
	if (cfg->offload_layers > 0)
		f_off = fmin(cfg->offload_layers, chunk * (1 - f_rc)) / chunk;
	for (k = 0; k < MT_L_N; k++) {
		double n = b->nl[st][k] / (double)b->vpp;
		act += n * ((1 - f_rc) * a->act[k][base] + f_rc * a->act[k][MT_RC_FULL]);
		act -= n * f_off * a->act[k][base];
	}
	avg = (b->nl[st][0] * a->act[0][base] + b->nl[st][1] * a->act[1][base]) / layers;
	*layer_avg = avg;
	if (f_off > 0)
		act += avg; /* one layer in flight to or from the host */
	return act;
}

static void stage_memory(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
			 const struct mt_config *cfg, int r, struct mt_mem *o)
{
	const struct mt_model *m = x->model;
	int st = b->rep[r], inflight;
	double Pd = b->par_dense[r], Pe = b->par_exp[r], dshard, eshard, gb, layer_avg, act;

	dshard = cfg->dist_opt || cfg->fsdp ? (double)b->dp * a->cp : 1;
	eshard = cfg->dist_opt || cfg->fsdp ? (double)b->edp : 1;
	gb = cfg->grad_fp32 ? 4 : 2;
	o->stage = st;
	o->weights = 2 * (Pd + Pe) + b->par_fp8[r]; /* bf16, plus the FP8 weight copies */
	o->grads = gb * (Pd + Pe);
	if (cfg->fsdp) { /* everything sharded, plus the layers gathered (5.10) */
		double buf = mt_fsdp_buffer_bytes(a, cfg);
		o->weights = (2 * Pd + b->par_fp8[r]) / dshard + 2 * Pe / eshard + buf * 4 / (4 + gb);
		o->grads = gb * (Pd / dshard + Pe / eshard) + buf * gb / (4 + gb);
	}
	o->optimizer = 12 * (Pd / dshard + Pe / eshard);
	inflight = mt_inflight(b->pp, b->vpp, b->num_mb, st);
	act = inflight * chunk_act(a, b, cfg, st, &layer_avg);
	if (st == 0)
		act += mt_inflight(b->pp, 1, b->num_mb, 0) * a->act_emb;
	if (cfg->recompute == MT_RC_FULL)
		act += layer_avg > 0 ? a->act_layer_peak[b->nl[st][1] ? 1 : 0] : 0;
	o->activations = act;
	/* the logits of the loss (last stage) and of each MTP layer (its stage) */
	o->logits = (st == b->pp - 1 ? a->act_out : 0) +
		    (st == b->mtp_stage ? a->act_out * m->mtp_layers : 0);
	o->moe_dispatch = b->nl[st][MT_L_MOE] ? a->moe_dispatch : 0;
	o->transient = fmax(a->transient, st == b->pp - 1 || (m->mtp_layers && st == b->mtp_stage)
					  ? a->logits_transient : 0);
	o->nccl = b->nccl_bytes;
	o->cuda_context = MT_CUDA_CONTEXT_BYTES;
	o->workspace = MT_WORKSPACE_BYTES;
	o->cuda_graphs = 0;
	o->fragmentation = MT_FRAGMENTATION * (o->activations + o->logits + o->transient +
					       o->moe_dispatch);
	o->total = o->weights + o->grads + o->optimizer + o->activations + o->logits +
		   o->moe_dispatch + o->transient + o->nccl + o->cuda_context + o->workspace +
		   o->cuda_graphs + o->fragmentation;
}

void mt_memory(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
	       const struct mt_config *cfg, struct mt_mem *out)
{
	struct mt_mem cur;
	int r;

	out->total = -1;
	for (r = 0; r < b->nrep; r++) {
		stage_memory(x, a, b, cfg, r, &cur);
		if (cur.total > out->total)
			*out = cur;
	}
}
