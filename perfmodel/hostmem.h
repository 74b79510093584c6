/* SPDX-License-Identifier: MIT */
/* hostmem: host (CPU) memory of a candidate and the time of optimizer CPU
 * offload (docs/MODEL.md 4.10).  What a rank keeps on the host: the
 * activations it offloads (pinned), the optimizer states it offloads with the
 * FP32 gradients they step on, and the process itself; the ranks of a node
 * share its memory.  Arithmetic only: no look-up, no allocation.
 */
#ifndef MT_HOSTMEM_H
#define MT_HOSTMEM_H

#include <stddef.h>

#include "config.h"

struct mt_ctx;
struct mt_costs;
struct mt_plan;
struct mt_cluster;

/* Megatron-Core's fine-grained activation offload modules (--offload-modules;
 * transformer_config.py offload_modules): the input of each is offloaded. */
enum mt_offload_module {
	MT_OM_ATTN_NORM, MT_OM_QKV_LINEAR, MT_OM_CORE_ATTN, MT_OM_ATTN_PROJ, MT_OM_MLP_NORM,
	MT_OM_EXPERT_FC1, MT_OM_MOE_ACT, MT_OM_N
};
const char *mt_offload_module_name(int m);
/* Parse "core_attn,attn_proj" (commas or spaces) into bits; -1 with the
 * unknown name copied to bad (cap bytes). */
int mt_offload_modules_parse(const char *s, unsigned *bits, char *bad, size_t cap);

/* Fill mem->host_per_gpu and mem->host_per_node for the stage mem was
 * computed for (mem->stage). */
void mt_hostmem(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		const struct mt_config *cfg, struct mt_mem *mem);

/* Host memory of a node the ranks may use (bytes): the profile's
 * node.host_memory_bytes less what the system keeps; 0 when the profile does
 * not give it (nothing is checked then). */
double mt_host_capacity(const struct mt_cluster *c);

/* Optimizer parameters of one rank that are offloaded to the host, and the
 * seconds its offloaded step adds: gradients to the host, Adam on the CPU
 * (the node's throughput shared by its ranks), parameters back. */
double mt_opt_offload_time(const struct mt_ctx *x, double opt_params);

/* Check the host-memory options of a job: MT_OK, or MT_EINVAL naming the
 * option and what Megatron-LM requires. */
int mt_hostmem_check(const struct mt_job *j, struct mt_error *err);

/* Fine-grained offload against the model and pins: MT_OK, or MT_EINVAL
 * naming the module and Megatron-LM's check. */
struct mt_model;
int mt_offload_modules_check(const struct mt_model *m, const struct mt_job *j,
			     struct mt_error *err);

#endif
