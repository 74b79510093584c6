/* SPDX-License-Identifier: MIT */
/* suggest: the changes of a job that fit (suggest.h). */
#include "suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../perfmodel/hostmem.h"

/* Search j alone; 1 with the best into *e when something fits. */
static int fits(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		struct mt_search_result *tmp, struct mt_eval *e)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_job one = *j;

	one.top_k = 1;
	if (mt_search(m, c, &one, NULL, tmp, &err) || tmp->ntop < 1)
		return 0;
	*e = tmp->top[0];
	return 1;
}

static void suggest_add(struct mt_search_result *res, const char *change, const struct mt_eval *e)
{
	struct mt_suggestion *s;

	if (res->nsugg >= MT_SUGGEST_MAX)
		return;
	s = &res->sugg[res->nsugg++];
	snprintf(s->change, sizeof(s->change), "%s", change);
	s->best = *e;
}

/* The offload modules the model has: the expert ones with experts. */
static unsigned model_modules(const struct mt_model *m)
{
	unsigned bits = 0;
	int i;

	for (i = 0; i < MT_OM_N; i++)
		if (m->experts || (i != MT_OM_EXPERT_FC1 && i != MT_OM_MOE_ACT))
			bits |= 1u << i;
	return bits;
}

int mt_suggest_fits(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		    struct mt_search_result *res)
{
	struct mt_search_result *tmp = malloc(sizeof(*tmp));
	struct mt_job j;
	struct mt_eval e;
	char change[96];
	int k;

	res->nsugg = 0;
	if (!tmp)
		return -1;
	/* the optimizer states on the host (with the distributed optimizer) */
	j = *job;
	if (j.opt_offload < 1 && j.pins.fsdp <= 0 && j.pins.dist_opt != 0) {
		j.opt_offload = 1;
		if (fits(m, c, &j, tmp, &e))
			suggest_add(res, "--optimizer-cpu-offload 1", &e);
	}
	/* the inputs of every module on the host */
	j = *job;
	if (!j.offload_modules && j.pins.offload_layers <= 0) {
		j.offload_modules = model_modules(m);
		if (fits(m, c, &j, tmp, &e)) {
			size_t len = (size_t)snprintf(change, sizeof(change), "--offload-modules ");
			for (k = 0; k < MT_OM_N && len < sizeof(change); k++)
				if (j.offload_modules & (1u << k))
					len += (size_t)snprintf(change + len, sizeof(change) - len, "%s%s",
								k ? "," : "", mt_offload_module_name(k));
			suggest_add(res, change, &e);
		}
	}
	/* full recompute, when a pin rules it out */
	j = *job;
	if (j.pins.recompute != MT_UNSET && j.pins.recompute != MT_RC_FULL) {
		j.pins.recompute = MT_RC_FULL;
		if (fits(m, c, &j, tmp, &e))
			suggest_add(res, "--recompute full", &e);
	}
	/* a shorter sequence: halved, at most three times */
	for (k = 1; k <= 3 && (job->seq >> k) >= 256; k++) {
		j = *job;
		j.seq = job->seq >> k;
		if (fits(m, c, &j, tmp, &e)) {
			snprintf(change, sizeof(change), "--seq %d", j.seq);
			suggest_add(res, change, &e);
			break;
		}
	}
	/* more GPUs: twice as many, up to sixteen times */
	for (k = 2; k <= 16; k *= 2) {
		j = *job;
		j.gpus = job->gpus * k;
		if (fits(m, c, &j, tmp, &e)) {
			snprintf(change, sizeof(change), "--gpus %d", j.gpus);
			suggest_add(res, change, &e);
			break;
		}
	}
	free(tmp);
	return res->nsugg;
}
