/* SPDX-License-Identifier: MIT */
/* run: the state of a rules run, private to rules/: set-up and search hooks
 * (engine.c), the best() and least_mem() tables (best.c), explanations
 * (fire.c).  Nothing outside rules/ includes this header.
 */
#ifndef MT_RULES_RUN_H
#define MT_RULES_RUN_H

#include "engine.h"

/* Least step time and least memory per (tp, pp, cp, ep, etp), and per value of
 * each knob that stands alone. */
#define TUPLE_SLOTS 8192
#define SMALL_MAX 1025

struct tuple {
	int key[5];
	int used;
	double step, mem;
};

struct pair {
	double step, mem;
};

struct best {
	struct tuple *t;        /* TUPLE_SLOTS */
	int *used;              /* the slots in use, in order of first use */
	int nused;
	int last;               /* slot of the last update */
	struct pair *vpp, *mbs; /* [SMALL_MAX] */
	struct pair rc[MT_RC_N], dist[2], sp[2], cc[MT_CP_N];
};

struct mt_rules_run {
	const struct mt_ruleset *rs;
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_job *j;
	struct mt_val facts[MT_F_N];
	struct mt_env env;
	unsigned pinned;
	int relaxed;
	int *cons[MT_ST_N];     /* constraint rule indices per stage */
	int ncons[MT_ST_N];
	int *setters[MT_F_N];   /* set rules per knob fact, in order */
	int nsetters[MT_F_N];
	int *pool;              /* storage of the lists above */
	long long *pruned;      /* per rule */
	long long *strict;      /* per rule, the search with every constraint (frozen) */
	int frozen;
	int relaxed_one;        /* the one constraint relaxed, or -1 */
	int observing;
	struct best best;
	double nccl_code;
};

/* best.c: set every pair of the tables to "nothing seen", and the function
 * behind best() and least_mem() (struct mt_env's best, ctx the run). */
void mt_rules_best_init(struct best *b);
double mt_rules_best_fn(void *ctx, int what, const int *knob, const double *val, int n);

/* engine.c: the cluster's facts into f; a knob value from a set rule's
 * expression (0 and *out, or -1 when it is not a valid value). */
void mt_rules_cluster_facts(struct mt_val *f, const struct mt_cluster *c);
int mt_rules_knob_value(int fact, struct mt_val v, double *out);

#endif
