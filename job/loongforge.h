/* SPDX-License-Identifier: MIT */
/* loongforge: LoongForge's dialect of Megatron-LM arguments, read
 * (baidu-baige/LoongForge @ c627566184, on Loong-Megatron's core_v0.15.0
 * branch).  Its launch scripts run loongforge/train.py under torchrun with
 * Megatron-LM's flags and a few of its own:
 *  - --model-name NAME (or --config-file) picks the model from LoongForge's
 *    configs instead of the shape flags: megatune takes the model it bundles
 *    under that name (s->model_path), else --model;
 *  - --custom-pipeline-layers a,b,... (decoder layers per pipeline rank) and
 *    --custom-virtual-pipeline-layers (per virtual stage, all ranks' first
 *    stage first) become the --pipeline-model-parallel-layout they stand for,
 *    as loongforge/utils/utils.py convert_custom_pipeline_to_layout builds it
 *    (embedding on the first stage, MTP and loss on the last, the MTP depth
 *    the model's where the flags do not give it; a rank's layers
 *    over its virtual stages q or q + 1 each, the larger ones last), and the
 *    virtual-stage count is dropped, as LoongForge's validators do;
 *  - --offload-tensors, --cross-entropy-fusion-impl linear: listed as not
 *    modelled by the Megatron-LM reader.
 */
#ifndef MT_JOB_LOONGFORGE_H
#define MT_JOB_LOONGFORGE_H

#include "../lib/err.h"
#include "script.h"

/* Rewrite LoongForge's own flags of s in place; nothing for a job without
 * them.  MT_OK, or MT_EINVAL naming the flag (a split that is not a list of
 * counts, more stages than the layout holds). */
int mt_loongforge_read(struct mt_jobsrc *s, struct mt_error *err);

#endif
