/* SPDX-License-Identifier: MIT */
/* local: what Megatron-LM's own layers (--transformer-impl local,
 * docs/MODEL.md 4.11) can run.  megatune times them as they run where
 * Transformer Engine and Apex are not installed, and whatever needs
 * Transformer Engine (its quantised GEMMs, userbuffers, graphs, fused
 * experts, offload hooks and fused optimizer) is neither searched nor
 * accepted as a pin.  Each reason cites Megatron-LM d98e8a64dd.
 */
#ifndef MT_JOB_LOCAL_H
#define MT_JOB_LOCAL_H

#include "../lib/err.h"
#include "../perfmodel/config.h"

/* Restrict `j` to what Megatron-LM's own layers run when j->transformer_impl
 * is MT_TI_LOCAL (else nothing changes): the attention unfused (their
 * DotProductAttention), CP pinned to 1, and the TP communication overlap,
 * per-layer CUDA graphs, the 1F1B EP overlap, the rank budget and the
 * precision-aware optimizer pinned off where they are not pinned.  A pin or job setting the
 * layers cannot run (FP8 or NVFP4, one of those knobs pinned on, CP > 1,
 * fine-grained activation offload, the optimizer CPU offload or a dtype of
 * the precision-aware optimizer) is MT_EUSAGE: "--tp-comm-overlap on:
 * Megatron-LM's own layers (--transformer-impl local) cannot run it: ...",
 * with the check of Megatron-LM that says so. */
int mt_local_restrict(struct mt_job *j, struct mt_error *err);

/* The attention and the gradient accumulation of job `j` where the command
 * line left them unset (-1), as its layers run: with MT_TI_LOCAL, unfused
 * attention (DotProductAttention materialises the scores whatever
 * --attention-backend says: Megatron-LM d98e8a6
 * megatron/core/models/backends.py:129-131) and the accumulation apart (megatune
 * times those layers where Apex is not installed either, docs/MODEL.md 4.11,
 * and their fused accumulation is Apex's); otherwise flash attention and the
 * fused accumulation.  MT_EUSAGE, with the reason, for --grad-accum-fusion on
 * or --attention flash with local layers, and for fusions turned off without
 * them (those are timed on Megatron-LM's own layers only). */
int mt_local_defaults(struct mt_job *j, struct mt_error *err);

/* 1 when fusion f (enum mt_fusion, perfmodel/eager.h) exists in a job of model m
 * with attention attn_impl, so that its --no-*-fusion flag means something:
 * the masked softmax with unfused attention, RoPE's with rotary
 * embeddings; the others always (megatron_job.c reads them so). */
int mt_fusion_applies(const struct mt_model *m, int attn_impl, int f);

#endif
