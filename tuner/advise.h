/* SPDX-License-Identifier: MIT */
/* advise: what `megatune advise` and `megatune estimate` do between reading
 * their inputs and writing their outputs.  mt_advise() searches a job and
 * gathers what the advice document and its text need (the ranking, what the
 * pick's settings buy, the single changes that fit when nothing does, the
 * rules that fired for each candidate); mt_estimate() evaluates the one
 * configuration the job pins and explains it; mt_candidate_flags() writes a
 * candidate as the flags, overrides or launch script of --format.
 *
 * The structs these fill own what they point to (mt_advised_free,
 * mt_estimated_free, safe on a zeroed struct and after a failure); the
 * model, the cluster, the job and the rule set are borrowed and must outlive
 * them.  Errors are MT_ENOMEM or the search's, with the reason in err.
 */
#ifndef MT_TUNER_ADVISE_H
#define MT_TUNER_ADVISE_H

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "../rules/engine.h"
#include "advice.h"
#include "search.h"

/* A search for advise. */
struct mt_advised {
	struct mt_search_result *res;  /* the ranking (heap) */
	struct mt_rules_run *run;      /* NULL without rules */
	struct mt_explain *ex;         /* with rules: one per ranked candidate (one at least) */
	struct mt_advice_rules ar;     /* what the writers take; all NULL without rules */
};

/* Search job `j` (rs NULL: the model alone): the ranking, what each setting
 * of the pick buys (mt_gains), when nothing fits the changes of the job that
 * would (mt_suggest_fits), and with rules each candidate's explanation.
 * Sets *out up first; MT_OK even when nothing fits (out->res->ntop 0). */
int mt_advise(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	      const struct mt_ruleset *rs, struct mt_advised *out, struct mt_error *err);
void mt_advised_free(struct mt_advised *a);

/* One configuration evaluated for estimate. */
struct mt_estimated {
	struct mt_eval e;              /* the configuration and its costs */
	struct mt_rules_run *run;      /* NULL without rules */
	struct mt_explain ex;          /* with rules, after mt_estimate_explain() */
	struct mt_advice_rules ar;     /* what the writers take; all NULL without rules */
};

/* The configuration job `j` pins (what it leaves unpinned at
 * mt_knobs_estimate_config()'s values) evaluated as the search would.  Sets
 * *out up first; MT_OK for a configuration that does not fit too
 * (out->e.feasible 0). */
int mt_estimate(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
		const struct mt_ruleset *rs, struct mt_estimated *out, struct mt_error *err);
/* The rules that fire for it (nothing without rules); MT_ENOMEM. */
int mt_estimate_explain(struct mt_estimated *est, const struct mt_ruleset *rs,
			struct mt_error *err);
void mt_estimated_free(struct mt_estimated *est);

/* The forms of a candidate --format prints besides the text and the JSON. */
enum mt_flags_form {
	MT_FORM_MEGATRON, /* Megatron-LM's flags, "--flag value \\\n  ..." */
	MT_FORM_BRIDGE,   /* Megatron-Bridge overrides */
	MT_FORM_VERL,     /* verl's Megatron-backend Hydra overrides */
	MT_FORM_ENV,      /* the environment, "export KEY=value" lines */
	MT_FORM_TORCHRUN, /* a script that runs it through torchrun (job/launch.h) */
	MT_FORM_SLURM,    /* the same as an sbatch script */
};

/* Candidate c of job j (ex: the rules that fired for it, or NULL) in form
 * `form` (enum mt_flags_form), appended to sb (a line at the end when there
 * is anything).  The scripts may fail: MT_EINVAL from mt_launch_script (the
 * GPUs make no whole nodes), MT_ENOMEM. */
int mt_candidate_flags(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *cl,
		       const struct mt_job *j, const struct mt_config *c,
		       const struct mt_explain *ex, int form, struct mt_error *err);

#endif
