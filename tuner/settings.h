/* SPDX-License-Identifier: MIT */
/* settings: the knobs the search (tuner/search.c) and one evaluation
 * (tuner/evaluate.c) set alike, at the same stages: a pin wins, else a set
 * rule's choice, else the default (mt_config_settings()'s).  With rules, each
 * writes its stage's facts (tuner/facts.h).  Arithmetic only: nothing is
 * allocated, nothing is kept. */
#ifndef MT_TUNER_SETTINGS_H
#define MT_TUNER_SETTINGS_H

#include "facts.h"

/* The value of the knob of fact f: the pin, else a set rule's choice (r may
 * be NULL).  Returns 1 with *v when fixed, 0 when the search enumerates it. */
int mt_set_fixed(struct mt_rules_run *r, int f, int pin, int *v);

/* A knob the search does not enumerate: the pin, a set rule's, or dflt. */
int mt_set_knob(struct mt_rules_run *r, int f, int pin, int dflt);

/* The TP communication overlap and the cross-entropy fusion (MT_ST_FUSION). */
void mt_set_fusion(struct mt_cfg_facts *cf, const struct mt_pins *p, struct mt_config *cfg);

/* The DP overlaps and the gradient precision (MT_ST_OVERLAP). */
void mt_set_dp(struct mt_cfg_facts *cf, const struct mt_pins *p, struct mt_config *cfg);

/* The DDP bucket, 0: Megatron's default, which the plan sets (MT_ST_BUCKET). */
void mt_set_bucket(struct mt_cfg_facts *cf, const struct mt_pins *p, struct mt_config *cfg);

/* CUDA graphs for cfg's recompute mode and EP overlap (with the job's graph
 * scopes): 1 on, 0 off. */
int mt_set_graph(struct mt_rules_run *r, const struct mt_model *m, const struct mt_job *j,
		 const struct mt_config *cfg);

#endif
