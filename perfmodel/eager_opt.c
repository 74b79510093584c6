/* SPDX-License-Identifier: MIT */
/* eager_opt: the optimizer step Megatron-LM runs without Transformer Engine
 * and Apex (docs/MODEL.md 4.11).  The tensors are those of Megatron-LM
 * d98e8a6's local layer spec (gpt_layer_specs.py get_gpt_layer_local_spec,
 * moe_module_specs.py); the step is optimizer/__init__.py's fallback to
 * torch.optim.AdamW, optimizer.py (Float16OptimizerWithFloat16Params),
 * clip_grads.py and utils.py's local_multi_tensor_* loops.  Arithmetic
 * only. */
#include <math.h>

#include "constants.h"
#include "eager_opt.h"

/* The tensors of one layer: a norm is a weight (RMSNorm) or a weight and a
 * bias (LayerNorm); a linear a weight and, with --add-bias-linear, a bias. */
static double layer_tensors(const struct mt_model *m, int moe, double local_experts)
{
	const double nt = m->norm == MT_NORM_LAYER ? 2 : 1, lin = m->linear_bias ? 2 : 1;
	double n = 2 * nt; /* input and pre-MLP norms */

	if (m->mla) /* q (down, norm, up; or one projection), kv down, norm, up, projection */
		n += (m->q_lora_rank > 0 ? 2 + nt : 1) + 2 + nt + 1;
	else        /* QKV (its bias with add_qkv_bias too), projection, q and k norms */
		n += 1 + (m->qkv_bias || m->linear_bias) + lin + (m->qk_norm ? 2 * nt : 0);
	if (!moe)
		return n + 2 * lin;
	/* the router; the experts as one grouped MLP (two weights, the
	 * moe-grouped-gemm rule's setting with several per GPU) or an MLP
	 * each; the shared experts' MLP and its gate */
	n += 1 + (local_experts > 1 ? 2 : 2 * lin);
	if (m->shared_ffn > 0)
		n += 2 * lin + (m->shared_gate ? 1 : 0);
	return n;
}

double mt_eager_opt_tensors(const struct mt_model *m, const struct mt_plan *b, int st,
			    double local_experts)
{
	const double nt = m->norm == MT_NORM_LAYER ? 2 : 1;
	double n = b->nl[st][MT_L_DENSE] * layer_tensors(m, 0, local_experts) +
		   b->nl[st][MT_L_MOE] * layer_tensors(m, 1, local_experts);

	if (st == 0) /* word (and learned position) embeddings */
		n += 1 + (m->learned_pos ? 1 : 0);
	/* the final norm; the output layer, a copy of the embedding's on the
	 * last stage when tied under PP */
	if (st == b->pp - 1)
		n += nt + (!m->tied || b->pp > 1 ? 1 : 0);
	/* each MTP layer: its two input norms, projection, layer and final norm */
	if (m->mtp_layers && st == b->mtp_stage)
		n += m->mtp_layers * (3 * nt + 1 +
				      layer_tensors(m, m->is_moe[m->layers - 1], local_experts));
	return n;
}

double mt_eager_opt_time(double tensors, double params, double hbm, double sync_s)
{
	const double op = MT_EAGER_HOST_TINY_US * 1e-6, bw = hbm * MT_EAGER_BW_VEC;
	/* a torch.norm per tensor (local_multi_tensor_l2_norm) */
	double norm = fmax(tensors * op, params * MT_OPT_FALLBACK_NORM_BYTES / bw);
	/* torch.tensor of the norms reads each back to the host: the GPU waits */
	double read = tensors * sync_s;
	/* the clipping and the copy back per tensor, AdamW's foreach kernels */
	double rest = fmax(tensors * MT_OPT_FALLBACK_OPS * op,
			   params * (MT_TORCH_ADAM_BYTES + MT_OPT_FALLBACK_REST_BYTES) / bw);

	return norm + read + rest;
}
