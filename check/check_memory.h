/* SPDX-License-Identifier: MIT */
/* check_memory: the memory reports of a job's log beside the prediction for
 * the pipeline stage of each reporting rank (docs/CHECK.md section 2,
 * docs/MODEL.md 4.8): what PyTorch's caching allocator holds between steps
 * (allocated), its peak inside a step (max allocated) and what it keeps
 * (reserved, max reserved), as Megatron-LM's report_memory prints them. */
#ifndef MT_CHECK_CHECK_MEMORY_H
#define MT_CHECK_CHECK_MEMORY_H

#include <cjson/cJSON.h>

#include "../lib/sbuf.h"
#include "../validate/validation.h"

/* Each rank's last report of the log's run c beside the prediction for its
 * stage (c->memr, which mt_validate_from_log set from the log and the advice
 * of the job as it is; a rank without a prediction is printed alone): lines
 * into sb (when not NULL), objects appended to arr (when not NULL).  Nothing
 * when the log has no memory report. */
void check_memory_ranks(struct sbuf *sb, cJSON *arr, const struct mt_vcand *c);

#endif
