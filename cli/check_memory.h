/* SPDX-License-Identifier: MIT */
/* check_memory: the memory reports of a job's log beside the prediction for
 * the pipeline stage of each reporting rank (docs/CHECK.md section 2,
 * docs/MODEL.md 4.8): what PyTorch's caching allocator holds between steps
 * (allocated), its peak inside a step (max allocated) and what it keeps
 * (reserved, max reserved), as Megatron-LM's report_memory prints them. */
#ifndef MT_CLI_CHECK_MEMORY_H
#define MT_CLI_CHECK_MEMORY_H

#include <cjson/cJSON.h>

#include "../lib/sbuf.h"
#include "../tuner/config.h"
#include "../validate/logparse.h"

/* Each rank's last report of lp beside stages[its stage] (pp entries, from
 * mt_eval_stages; NULL: measured alone): lines into sb (when not NULL),
 * objects appended to arr (when not NULL).  Nothing when the log has no
 * memory report. */
void check_memory_ranks(struct sbuf *sb, cJSON *arr, const struct mt_logparse *lp,
			const struct mt_mem *stages, int gpus, int pp);

#endif
