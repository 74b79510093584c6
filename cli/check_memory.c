/* SPDX-License-Identifier: MIT */
/* check_memory: a log's memory reports beside the prediction (check_memory.h). */
#include "check_memory.h"

#include <math.h>
#include <stdio.h>

#define GIB 1073741824.0

/* The stage of global rank `rank` of a job of `gpus` GPUs in `pp` pipeline
 * stages, in Megatron-LM's default rank order (tp-cp-ep-dp-pp: the pipeline
 * outermost); -1 when the rank is unknown or outside the job. */
static int check_rank_stage(int rank, int gpus, int pp)
{
	if (rank < 0 || gpus <= 0 || pp <= 0 || rank >= gpus || gpus % pp)
		return rank == -1 && pp == 1 ? 0 : -1;
	return rank / (gpus / pp);
}

/* One figure, measured beside predicted: " allocated 5.88 (6.02)" */
static void fig(struct sbuf *sb, cJSON *o, const char *name, const char *key, double meas,
		double pred)
{
	char k[64];

	if (isnan(meas))
		return;
	if (sb) {
		sbuf_addf(sb, ", %s %.2f", name, meas / GIB);
		if (!isnan(pred))
			sbuf_addf(sb, " (%.2f, %+.1f%%)", pred / GIB, 100 * (meas / pred - 1));
	}
	if (o) {
		snprintf(k, sizeof(k), "%s_gib", key);
		cJSON_AddNumberToObject(o, k, meas / GIB);
		if (!isnan(pred)) {
			snprintf(k, sizeof(k), "predicted_%s_gib", key);
			cJSON_AddNumberToObject(o, k, pred / GIB);
		}
	}
}

void check_memory_ranks(struct sbuf *sb, cJSON *arr, const struct mt_logparse *lp,
			const struct mt_mem *stages, int gpus, int pp)
{
	int i;

	if (!lp->nmemr)
		return;
	if (sb)
		sbuf_adds(sb, "  memory (GiB; predicted for the rank's stage, as PyTorch's allocator "
			      "counts it):\n");
	for (i = 0; i < lp->nmemr; i++) {
		const struct mt_logmem *r = &lp->memr[i];
		int st = check_rank_stage(r->rank, gpus, pp);
		const struct mt_mem *m = stages && st >= 0 ? &stages[st] : NULL;
		cJSON *o = arr ? cJSON_CreateObject() : NULL;

		if (sb) {
			if (r->rank >= 0)
				sbuf_addf(sb, "    rank %d", r->rank);
			else
				sbuf_adds(sb, "    the log's rank");
			if (st >= 0)
				sbuf_addf(sb, " (stage %d)", st);
			sbuf_addf(sb, ", line %ld", r->lineno);
		}
		if (o) {
			cJSON_AddNumberToObject(o, "rank", r->rank);
			if (st >= 0)
				cJSON_AddNumberToObject(o, "stage", st);
			cJSON_AddNumberToObject(o, "line", (double)r->lineno);
		}
		fig(sb, o, "allocated", "allocated", r->alloc_b, m ? m->allocated : NAN);
		fig(sb, o, "max allocated", "max_allocated", r->max_alloc_b,
		    m ? m->max_allocated : NAN);
		fig(sb, o, "reserved", "reserved", r->reserved_b, NAN);
		fig(sb, o, "max reserved", "max_reserved", r->max_reserved_b, m ? m->reserved : NAN);
		if (sb)
			sbuf_adds(sb, "\n");
		if (o)
			cJSON_AddItemToArray(arr, o);
	}
}
