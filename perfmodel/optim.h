/* SPDX-License-Identifier: MIT */
/* optim: the precision-aware optimizer (Megatron-LM --use-precision-aware-
 * optimizer, docs/MODEL.md 4.8): the dtypes of Adam's states, their bytes on
 * the GPU, the FP32 copies its step makes and the bytes the step moves.
 *
 * Megatron-Core hands the states to Transformer Engine's FusedAdam
 * (megatron/core/optimizer/__init__.py @ d98e8a64dd lines 564-589): the two
 * moments in --exp-avg-dtype and --exp-avg-sq-dtype, the master weights in
 * --main-params-dtype (FP32 kept as a 16-bit remainder beside the BF16
 * weight, store_param_remainders).  The main gradients are the DDP gradient
 * buffer, whose dtype is the --grad-reduce knob (Megatron-LM's
 * --main-grads-dtype bf16 turns accumulate_allreduce_grads_in_fp32 off:
 * arguments.py lines 1213-1216; Megatron-Core reads main_grads_dtype nowhere
 * else).  Arithmetic only: no look-up, no allocation.
 */
#ifndef MT_OPTIM_H
#define MT_OPTIM_H

#include "config.h"

/* "fp32", "fp16", "bf16" or "fp8" for an enum mt_opt_dtype, and back (-1
 * when unknown); the parser also takes what Megatron-LM's arguments block
 * prints once validate_args has mapped them (torch.float32, torch.float16,
 * torch.bfloat16, torch.uint8) and Megatron-Bridge's full names
 * (float32, bfloat16, float16). */
const char *mt_opt_dtype_name(int d);
int mt_opt_dtype_parse(const char *s);
/* Bytes of one element of a state in dtype d. */
double mt_opt_dtype_bytes(int d);

/* The precision-aware optimizer on (1) or off (0) in cfg, with its dtypes:
 * the pinned ones, else BF16 moments and FP32 master weights (as NVIDIA's
 * recipes run it); off, or with --optimizer-cpu-offload (whose hybrid device
 * optimizer keeps FP32 states whatever the dtypes), every state FP32. */
void mt_config_prec_opt(const struct mt_job *job, struct mt_config *cfg, int on);
/* Its default: the pin; else on where a dtype is pinned below FP32 or the
 * optimizer is offloaded (which Megatron-LM runs only with it). */
int mt_prec_opt_default(const struct mt_job *job);

/* Bytes on the GPU per parameter of a rank's optimizer shard: the master
 * weights and the two moments (12 without the precision-aware optimizer).
 * dp: the data-parallel size (quantised weights are kept only with DP > 1). */
double mt_opt_state_bytes(const struct mt_job *j, const struct mt_config *c, int dp);
/* Bytes per parameter of the shard that the step adds for a moment: the FP32
 * copy FusedAdam makes of each state below FP32 (0 without any). */
double mt_opt_step_copy_bytes(const struct mt_job *j, const struct mt_config *c);
/* HBM bytes one step moves per parameter of the shard (perfmodel/constants.h). */
double mt_opt_step_moved_bytes(const struct mt_job *j, const struct mt_config *c, int dp);

/* The pins of the precision-aware optimizer against Megatron-LM's checks
 * (docs/MEGATRON_CHECKS.md): MT_OK, or MT_EUSAGE / MT_EINVAL with the flag,
 * the cause and the check. */
int mt_prec_opt_check(const struct mt_job *j, struct mt_error *err);

#endif
