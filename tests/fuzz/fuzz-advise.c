/* SPDX-License-Identifier: MIT */
/* Fuzz target: a model from the input, searched on 8 to 64 H100 GPUs.  Whatever
 * loads must search without a crash and rank only finite, positive results. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../lib/jsonr.h"
#include "../../tuner/search.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct mt_cluster *h100;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_search_result *r;
	struct mt_model m;
	struct mt_job j;
	cJSON *root = NULL;
	int i;

	if (!h100 && mt_cluster_load("dgx-h100", &h100, &err))
		__builtin_trap();
	if (mt_json_parse("fuzz.json", (const char *)data, size, &root, &err) ||
	    mt_model_from_json(root, "fuzz.json", &m, &err)) {
		cJSON_Delete(root);
		return 0;
	}
	cJSON_Delete(root);
	if (m.params_total > 2e10) /* keep each run fast */
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return 0;
	mt_job_init(&j);
	j.gpus = size % 2 ? 8 : 16;
	j.seq = 512 << (size % 4);
	j.gbs = 64;
	if (!mt_search(&m, h100, &j, NULL, r, &err)) {
		for (i = 0; i < r->ntop; i++) {
			const struct mt_eval *e = &r->top[i];
			if (!(e->time.step > 0 && isfinite(e->time.step) && e->mem.total > 0 &&
			      isfinite(e->mem.total) && isfinite(e->tput.mfu)))
				__builtin_trap();
		}
	}
	free(r);
	return 0;
}
