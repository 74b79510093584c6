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
 * without the Megatron backend, a value a key cannot take, no job at all.
 * The typos of what the user wrote are in s->typo (mt_megatron_typos). */
int mt_job_read(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		struct mt_error *err);

/* The job's text from path ('-': standard input), at most max bytes, into
 * *buf (NUL-terminated, the caller frees it) and *len. */
int mt_job_read_path(const char *path, size_t max, char **buf, size_t *len, struct mt_error *err);

struct mt_model;
/* The model of a job read by mt_job_read when its own flags do not give it:
 * `given` (--model: a bundled name or a file) when not NULL, else the Hugging
 * Face model the job names (s->model_path: a folder with config.json, a
 * config file, or an id whose last part megatune bundles).  Leaves *m alone
 * and returns MT_OK when there is neither; MT_EINVAL names the job's file and
 * line. */
int mt_job_model(const struct mt_jobsrc *s, const char *given, struct mt_model *m,
		 struct mt_error *err);

struct mt_megatron_job;
struct mt_cluster;
/* The job in file `path` ('-': standard input, at most `max` bytes) read
 * whole: its text into *buf (the caller frees it) and *len, its arguments
 * into *src,
 * and its model, job and configuration into *mj (job/megatron.h), the model
 * from `model` (--model) or the Hugging Face model it names when given
 * (mt_job_model).  MT_EINVAL with "FILE:LINE: ..." for what cannot be read. */
int mt_job_load(const char *path, const char *model, int gpus, size_t max, char **buf,
		size_t *len, struct mt_jobsrc *src, struct mt_megatron_job *mj,
		struct mt_error *err);

/* The job's flex-dispatcher library (--moe-flex-dispatcher-backend) chosen
 * in c's dispatch section; MT_EINVAL naming the job's file and the profile
 * (`cluster`, as given) when the profile has no point of it. */
int mt_job_cluster(const struct mt_megatron_job *mj, const struct mt_jobsrc *src,
		   struct mt_cluster *c, const char *cluster, struct mt_error *err);

#endif
