/* SPDX-License-Identifier: MIT */
/* fsdp: Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy
 * optim_grads_params), docs/MODEL.md 5.11: weights, gradients and optimizer
 * states sharded over the data-parallel group (experts over the expert
 * data-parallel group); each layer's parameters all-gathered before its
 * forward and again before its backward, its gradients reduce-scattered
 * after its backward, every micro-batch, hidden behind the layers' compute
 * but for the first gather.
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

/* Level B: the collectives of one layer of each kind, per micro-batch, into
 * b->fsdp_ag[] (one all-gather of its bf16 parameters) and b->fsdp_rs[]
 * (the reduce-scatter of its gradients), and of the embedding and output
 * layer (b->fsdp_io_ag, b->fsdp_io_rs). */
void mt_fsdp_plan(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_config *cfg,
		  struct mt_plan *b);

/* Level C: exposed and hidden FSDP time of one micro-batch on stage st,
 * given that stage's forward and backward compute (seconds). */
void mt_fsdp_stage_time(const struct mt_ctx *x, const struct mt_plan *b, int st, double fwd,
			double bwd, double *exposed, double *hidden);

/* Level C: the bytes of the unsharded copies FSDP keeps (the layer being
 * gathered and the next one, and one layer's full gradients). */
double mt_fsdp_buffer_bytes(const struct mt_costs *a, const struct mt_config *cfg);

#endif
