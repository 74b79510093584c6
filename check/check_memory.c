/* SPDX-License-Identifier: MIT */
/* check_memory: a log's memory reports beside the prediction (check_memory.h). */
#include "check_memory.h"

#include <math.h>
#include <stdio.h>

#define GIB 1073741824.0

/* One figure, measured beside predicted: " allocated 5.88 (6.02)" */
static void check_memory_fig(struct sbuf *sb, cJSON *o, const char *name, const char *key, double meas,
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

void check_memory_ranks(struct sbuf *sb, cJSON *arr, const struct mt_vcand *c)
{
	int i;

	if (!c->nmemr)
		return;
	if (sb)
		sbuf_adds(sb, "  memory (GiB; predicted for the rank's stage, as PyTorch's allocator "
			      "counts it):\n");
	for (i = 0; i < c->nmemr; i++) {
		const struct mt_vmemrank *r = &c->memr[i];
		cJSON *o = arr ? cJSON_CreateObject() : NULL;

		if (sb) {
			if (r->rank >= 0)
				sbuf_addf(sb, "    rank %d", r->rank);
			else
				sbuf_adds(sb, "    the log's rank");
			if (r->stage >= 0)
				sbuf_addf(sb, " (stage %d)", r->stage);
			sbuf_addf(sb, ", line %ld", r->lineno);
		}
		if (o) {
			cJSON_AddNumberToObject(o, "rank", r->rank);
			if (r->stage >= 0)
				cJSON_AddNumberToObject(o, "stage", r->stage);
			cJSON_AddNumberToObject(o, "line", (double)r->lineno);
		}
		check_memory_fig(sb, o, "allocated", "allocated", r->allocated, r->pred.allocated);
		check_memory_fig(sb, o, "max allocated", "max_allocated", r->max_allocated, r->pred.max_allocated);
		check_memory_fig(sb, o, "reserved", "reserved", r->reserved, NAN);
		check_memory_fig(sb, o, "max reserved", "max_reserved", r->max_reserved, r->pred.reserved);
		if (sb)
			sbuf_adds(sb, "\n");
		if (o)
			cJSON_AddItemToArray(arr, o);
	}
}
