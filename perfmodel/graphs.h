/* SPDX-License-Identifier: MIT */
/* graphs: Transformer Engine's per-layer CUDA graphs (--cuda-graph-impl
 * transformer_engine): the scopes they capture, which of them run beside the
 * 1F1B EP overlap, and the static buffers they keep (docs/MODEL.md 4.8,
 * 5.10).  Arithmetic only: no look-up, no allocation.
 */
#ifndef MT_GRAPHS_H
#define MT_GRAPHS_H

struct mt_model;
struct mt_job;
struct mt_ctx;
struct mt_costs;
struct mt_plan;
struct mt_config;

/* The scopes per-layer graphs capture, as bits of enum mt_graph_scope
 * (perfmodel/host.h): the job's (--cuda-graph-scope), else the modules megatune
 * names for Megatron-LM: attn; mlp where the model has dense layers; in MoE
 * layers moe with padded token drop, else moe_router and moe_preprocess. */
unsigned mt_graph_scope_of(const struct mt_model *m, const struct mt_job *j);

/* NULL where Megatron-LM runs per-layer graphs of the job's scopes beside the
 * 1F1B EP overlap (--overlap-moe-expert-parallel-comm with its
 * --delay-wgrad-compute) at the Transformer Engine release megatune targets;
 * else why not, with Megatron-LM's check. */
const char *mt_graph_overlap_reason(const struct mt_model *m, const struct mt_job *j);

/* Bytes of the static buffers the per-layer graphs of stage st keep (0
 * without them): their inputs and outputs for every graphed layer of every
 * micro-batch in flight, and the gradient buffers they share.  *pool gets
 * the part that lives in the graphs' private memory pool (the outputs and
 * input gradients captured inside the graphs), which the caching allocator
 * reserves but does not count as allocated. */
double mt_graph_bytes(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		      const struct mt_config *cfg, int st, double *pool);

#endif
