/* SPDX-License-Identifier: MIT */
/* eager_opt: the optimizer step Megatron-LM runs without Transformer Engine
 * and Apex (docs/MODEL.md 4.11), which megatune assumes of a job with its
 * own layers (--transformer-impl local, mt_job.transformer_impl).
 *
 * Megatron-LM d98e8a6 then falls back to torch.optim.AdamW (foreach) and to
 * Python loops over the parameter tensors for the gradient norm (a
 * torch.norm each, every one read back to the host) and for the clipping;
 * the BF16 copy back is a loop of copy_ either way.  Its time is the norms,
 * then one read-back per tensor with the GPU idle, then the rest; each part
 * the longer of the host's issue (one tiny eager op each, MT_EAGER_HOST_TINY_US)
 * and the bytes its kernels move (MT_TORCH_ADAM_BYTES and
 * MT_OPT_FALLBACK_*_BYTES a parameter at the vectorised share of the
 * achieved HBM bandwidth).
 *
 * Arithmetic only; the model and plan are borrowed.
 */
#ifndef MT_EAGER_OPT_H
#define MT_EAGER_OPT_H

#include "model.h"
#include "perf.h"

/* The parameter tensors pipeline stage st (0 .. b->pp - 1) holds with
 * Megatron-LM's local layer spec: per layer its norms, its attention's and
 * MLP's (or router's and experts') weights and biases, local_experts
 * routed experts per GPU; the embedding on the first stage, the final norm
 * and output layer on the last, the MTP layers on theirs. */
double mt_eager_opt_tensors(const struct mt_model *m, const struct mt_plan *b, int st,
			    double local_experts);

/* Seconds of the fallback step for `tensors` parameter tensors holding
 * `params` elements on one GPU; hbm the achieved HBM bandwidth (B/s),
 * sync_s the host's read of one value from the GPU. */
double mt_eager_opt_time(double tensors, double params, double hbm, double sync_s);

#endif
