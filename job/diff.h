/* SPDX-License-Identifier: MIT */
/* diff: the lines that turn a job into another configuration, in the job's
 * own words (`megatune check`'s changes, docs/CHECK.md section 1.4).
 *
 * a and b are two configurations as the job's format prints them
 * (mt_candidate_args, _bridge or _verl): a the job as it is, b the new one.
 * A key whose rendering differs is removed as the job wrote it ("-") and
 * added as b has it ("+"): "- --flag value" / "+ --flag value" for a
 * Megatron-LM job (older releases' spellings of the same setting removed
 * too), "- key=value" / "+ key=value" for a Bridge or verl job (values
 * compared without quotes, brackets and commas).  Lines go to sb (text, each
 * after indent) and to arr (JSON strings); either may be NULL.
 */
#ifndef MT_JOB_DIFF_H
#define MT_JOB_DIFF_H

#include <cjson/cJSON.h>

#include "../lib/sbuf.h"
#include "../perfmodel/config.h"
#include "script.h"

void mt_job_diff(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		 const struct mt_kv *a, int na, const struct mt_kv *b, int nb);

/* The variables b wants that the job lacks or sets otherwise: "- NAME=old"
 * "+ NAME=new". */
void mt_job_env_diff(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		     const struct mt_kv *b, int nb);

/* The item of a list with `key` (notes skipped), or NULL. */
const struct mt_kv *mt_kv_find(const struct mt_kv *kv, int n, const char *key);

#endif
