/* SPDX-License-Identifier: MIT */
/* megatron: Megatron-LM arguments read back into the knobs of a
 * configuration, through the knob table (job/knobs.def): the other direction
 * of job/flags.h, and the start of the readers of a user's own job.
 */
#ifndef MT_JOB_MEGATRON_H
#define MT_JOB_MEGATRON_H

#include "../lib/err.h"
#include "../perfmodel/config.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/model.h"
#include "script.h"

/* The knobs of the n arguments kv (struct mt_kv: the flag without "--" and
 * its value, "" for a bare flag) into c, every knob of the table set (a
 * knob whose flag is absent takes what Megatron-LM runs without it: TP 1,
 * no SP, no recompute, ...; a GENERIC knob MT_UNSET).  The dispatcher's
 * flag is read into c->dispatcher; VPP comes from the virtual-stage flag or
 * from a pipeline layout over PP.  Returns MT_OK, or MT_EINVAL naming the
 * flag and what it expected. */
int mt_megatron_read(const struct mt_kv *kv, int n, struct mt_config *c, struct mt_error *err);

/* What a flag of a job is to megatune (mt_megatron_flag_class). */
enum mt_flag_class {
	MT_FC_READ,       /* read: the model, the job or a knob */
	MT_FC_NOT_TIMED,  /* known, no effect on the step time (paths, learning rate,
			   * logging, checkpoints, data) */
	MT_FC_UNKNOWN,    /* not modelled: megatune does not know what it changes */
	MT_FC_FUSION_OFF, /* turns off a fusion that is Megatron-LM's default: megatune
			   * times the fused kernels, so the job runs slower than timed */
};
int mt_megatron_flag_class(const char *flag);

/* The typos of a job a user wrote (not an arguments block nor Bridge's
 * summary): each argument megatune does not model (MT_FC_UNKNOWN) that
 * resembles a flag it reads the job does not set (lib/near.h) into s->typo,
 * in the job's own words (--flag, or the Bridge or verl key). */
void mt_megatron_typos(struct mt_jobsrc *s);

/* A Megatron-LM job as megatune evaluates it.  job.pins point into this
 * struct (the pipeline layout): use it where it was filled, do not copy it. */
struct mt_megatron_job {
	struct mt_model model;
	struct mt_job job;        /* gpus, sequence, batch, precision, balance, and every
				   * knob pinned to the job's value */
	struct mt_config cfg;     /* the job's configuration as its flags set it */
	int flex_backend;         /* enum mt_flex_backend the flags name, -1: none */
	struct mt_layout layout;  /* --pipeline-model-parallel-layout (job.pins.layout) */
	int nunknown;             /* flags megatune does not model (their indices in
				   * the source), and those it knows not to time */
	int unknown[MT_JOBSRC_ARGS];
	int nnot_timed;
	int nfusion_off;          /* flags of MT_FC_FUSION_OFF (their indices) */
	int fusion_off[16];
	char gpus_from[96];       /* where the GPU count came from */
	char model_json[8192];    /* the model read from the flags as megatune.model/1
				   * (what `check --validation` writes beside the record);
				   * "" when the model was given */
};

/* The model (from the job's own model flags), the job and its configuration
 * from the arguments of s.  `gpus` > 0 overrides the launcher's count.
 * Returns MT_OK, or MT_EINVAL with "FILE:LINE: --flag: expected ..., got
 * ..." (or "FILE: ..." for what no one line says: no model flags, no GPU
 * count, no sequence length).  `given` (may be NULL) is the model instead of
 * the job's model flags. */
int mt_megatron_job(const struct mt_jobsrc *s, int gpus, const struct mt_model *given,
		    struct mt_megatron_job *out, struct mt_error *err);

#endif
