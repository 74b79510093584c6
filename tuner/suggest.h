/* SPDX-License-Identifier: MIT */
/* suggest: when nothing fits, the smallest single changes of the job that do
 * (more GPUs, the optimizer states on the host, fine-grained activation
 * offload, full recompute, a shorter sequence), each searched, so that the
 * answer to "nothing feasible" is a way that fits, not a guess.
 */
#ifndef MT_SUGGEST_H
#define MT_SUGGEST_H

#include "search.h"

/* Fill res->sugg (at most MT_SUGGEST_MAX) with the changes of `job` that make
 * a configuration fit, each the fastest the search finds with that one
 * change, by the model alone (no rules: rerunning with the change gives the
 * rules' answer).  Returns the number of suggestions, or -1 when out of memory. */
int mt_suggest_fits(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *job,
		    struct mt_search_result *res);

#endif
