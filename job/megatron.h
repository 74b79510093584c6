/* SPDX-License-Identifier: MIT */
/* megatron: Megatron-LM arguments read back into the knobs of a
 * configuration, through the knob table (job/knobs.def): the other direction
 * of job/flags.h, and the start of the readers of a user's own job.
 */
#ifndef MT_JOB_MEGATRON_H
#define MT_JOB_MEGATRON_H

#include "../lib/err.h"
#include "../tuner/config.h"

/* The knobs of the n arguments kv (struct mt_kv: the flag without "--" and
 * its value, "" for a bare flag) into c, every knob of the table set (a
 * knob whose flag is absent takes what Megatron-LM runs without it: TP 1,
 * no SP, no recompute, ...; a GENERIC knob MT_UNSET).  The dispatcher's
 * flag is read into c->dispatcher; VPP comes from the virtual-stage flag or
 * from a pipeline layout over PP.  Returns MT_OK, or MT_EINVAL naming the
 * flag and what it expected. */
int mt_megatron_read(const struct mt_kv *kv, int n, struct mt_config *c, struct mt_error *err);

#endif
