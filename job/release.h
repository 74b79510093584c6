/* SPDX-License-Identifier: MIT */
/* release: the knob values a target Megatron-LM / Megatron-Bridge release can
 * run, from the flags and paths that print them (job/flagtable.def).  The
 * search leaves out what the job's releases lack; a pin of it is refused
 * naming the release that introduced it.
 */
#ifndef MT_JOB_RELEASE_H
#define MT_JOB_RELEASE_H

#include "../lib/err.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"

/* Restrict `j` to its releases (j->megatron_version, j->bridge_version):
 * an unpinned knob whose value they cannot run is pinned to Megatron's
 * default (the EP overlap, CUDA graphs and layer offload off; gradients kept
 * and reduced in FP32 before --grad-reduce-in-bf16), the values the
 * search must skip are set in j->release_off (MT_ROFF_*), and a pinned knob
 * or a job setting (precision, FP8 recipe, offload) they cannot run is
 * MT_EUSAGE: "--ep-overlap on needs Megatron-LM core_v0.14.0 or newer
 * (--overlap-moe-expert-parallel-comm); the target is core_v0.12.0".
 * With the newest releases nothing changes. */
int mt_release_restrict(struct mt_job *j, const struct mt_cluster *c, struct mt_error *err);

/* 1 when the job's Megatron-LM release can keep and reduce gradients in BF16
 * (--grad-reduce-in-bf16, core_v0.12.0); before it, arguments.py turns
 * accumulate_allreduce_grads_in_fp32 on for every --bf16 job. */
int mt_release_grad_bf16(const struct mt_job *j);

#endif
