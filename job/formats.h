/* SPDX-License-Identifier: MIT */
/* formats: which reader a job's text is for, beyond Megatron-LM's own
 * arguments (job/script.h reads those): Megatron-Bridge's YAML, summary and
 * overrides (job/bridge.h), verl's YAML and Hydra overrides (job/verl.h).
 */
#ifndef MT_JOB_FORMATS_H
#define MT_JOB_FORMATS_H

#include <stddef.h>

#include "../lib/err.h"
#include "script.h"

/* Read the job in buf (len bytes; `file` names it) into s, whatever its
 * format: a log with Megatron-LM's arguments block; Bridge's configuration
 * summary, a Bridge or verl YAML, Bridge or verl overrides (a list or a
 * script); else Megatron-LM arguments (mt_jobsrc_read).  Returns MT_OK, or
 * MT_EINVAL with "FILE:LINE: ..." for a job that cannot be read: YAML that
 * is not YAML or is neither a Bridge nor a verl config, a verl config
 * without the Megatron backend, a value a key cannot take, no job at all. */
int mt_job_read(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		struct mt_error *err);

#endif
