/* SPDX-License-Identifier: MIT */
/* fsdp: Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy
 * optim_grads_params) and PyTorch FSDP2 (--use-torch-fsdp2, reshard after
 * forward), docs/MODEL.md 5.11: weights, gradients and optimizer
 * states sharded over the data-parallel group (experts over the expert
 * data-parallel group); each layer's parameters all-gathered before its
 * forward and again before its backward, its gradients reduce-scattered
 * after its backward, every micro-batch, hidden behind the layers' compute
 * but for the first gather.  FSDP2 moves the same bytes, and copies each
 * gathered layer out of its flat buffer into per-parameter tensors (and the
 * gradients into one before the reduce-scatter) on the compute stream.
 *
 * Level B fills the per-layer collective times in the plan (profile
 * look-ups); level C is arithmetic.  Nothing here allocates.
 */
#ifndef MT_FSDP_H
#define MT_FSDP_H

#include "perf.h"

/* Why Megatron-FSDP cannot run this configuration: MT_PRUNE_FSDP, or -1
 * when it can (a data-parallel group of at least 2; below compute
 * capability 10 no TP or CP, whose CUDA_DEVICE_MAX_CONNECTIONS=1 FSDP
 * refuses). */
int mt_fsdp_reason(const struct mt_cluster *c, const struct mt_config *cfg);

/* Why the FSDP implementation cfg->fsdp names cannot run this configuration:
 * mt_fsdp_reason's, then for PyTorch FSDP2 MT_PRUNE_TORCH_FSDP (PP > 1, EP >
 * 1 or tied embeddings: validate_args); -1 when it can. */
int mt_fsdp_impl_reason(const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_config *cfg);

/* Level B: the collectives of one layer of each kind, per micro-batch, into
 * b->fsdp_ag[] (one all-gather of its bf16 parameters) and b->fsdp_rs[]
 * (the reduce-scatter of its gradients), and of the embedding and output
 * layer (b->fsdp_io_ag, b->fsdp_io_rs). */
void mt_fsdp_plan(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_config *cfg,
		  struct mt_plan *b);

/* Level C: exposed and hidden FSDP time of one micro-batch on stage st,
 * given that stage's forward and backward compute (seconds), for the
 * implementation impl (enum mt_fsdp_impl; FSDP2's copies are exposed). */
void mt_fsdp_stage_time(const struct mt_ctx *x, const struct mt_plan *b, int st, int impl,
			double fwd, double bwd, double *exposed, double *hidden);

/* Level C: the bytes of the unsharded copies FSDP keeps, parameters into
 * *weights (the layer being gathered and the next one; FSDP2 also the flat
 * all-gather output of one) and gradients into *grads (one layer's full
 * gradients; FSDP2 also the flat reduce-scatter input). */
void mt_fsdp_buffers(const struct mt_costs *a, const struct mt_config *cfg, double *weights,
		     double *grads);

#endif
