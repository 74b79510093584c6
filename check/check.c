/* SPDX-License-Identifier: MIT */
/* check: one check, loaded and run (check.h): the job, its model, the
 * cluster and the rules; the job evaluated as it is; a log's run measured
 * (measure.c); the searches from the job (changes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../job/formats.h"
#include "state.h"

#define JOB_MAX_BYTES (256u << 20)

struct mt_check *mt_check_new(void)
{
	return calloc(1, sizeof(struct mt_check));
}

/* The job, its model, the cluster and a log's iteration lines */
int mt_check_load(struct mt_check *t, const struct mt_check_opts *o, struct mt_error *err)
{
	size_t len = 0;
	int rc;

	t->a = *o;
	t->src = calloc(1, sizeof(*t->src));
	t->mj = calloc(1, sizeof(*t->mj));
	if (!t->src || !t->mj || check_changes_new(t))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if ((rc = mt_job_load(t->a.job, t->a.model, t->a.gpus, JOB_MAX_BYTES, &t->buf, &len, t->src,
			      t->mj, err)) ||
	    (rc = mt_cluster_load(t->a.cluster, &t->c, err)) ||
	    (rc = mt_job_cluster(t->mj, t->src, t->c, t->a.cluster, err)))
		return rc;
	if (t->src->kind == MT_JS_ARGBLOCK || t->src->kind == MT_JS_BRIDGE_SUMMARY) {
		if (!(t->lp = malloc(sizeof(*t->lp))))
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		mt_logparse_init(t->lp);
		mt_logparse_feed(t->lp, t->buf, len);
		mt_logparse_finish(t->lp);
		/* the first logged interval holds the start-up */
		t->warmup = t->a.warmup >= 0 ? t->a.warmup : t->lp->nstep > 1 ? (int)t->lp->iter[0] : 0;
	}
	return MT_OK;
}

const struct mt_jobsrc *mt_check_src(const struct mt_check *t)
{
	return t->src;
}

const struct mt_model *mt_check_model(const struct mt_check *t)
{
	return &t->mj->model;
}

const struct mt_cluster *mt_check_cluster(const struct mt_check *t)
{
	return t->c;
}

/* The job as it is: every knob pinned to the job's value */
static int check_as_is(struct mt_check *t, struct mt_error *err)
{
	struct mt_megatron_job *mj = t->mj;
	struct mt_config cfg = mj->cfg;

	if (t->rs && mt_rules_start(t->rs, &mj->model, t->c, &mj->job, &t->run, err))
		return MT_EINVAL;
	t->as.cfg = cfg;
	if (mt_evaluate(&mj->model, t->c, &mj->job, t->run, &cfg, &t->as, err)) {
		/* the same message as a pin: megatune cannot time the job as
		 * written; the searches from it still say what would run */
		snprintf(t->cant, sizeof(t->cant), "%s", err->msg);
		memset(err, 0, sizeof(*err));
		t->as.cfg = mj->cfg;
	}
	t->as_ok = !t->cant[0] && t->as.feasible;
	if (t->run && !t->cant[0] && !mt_rules_explain(t->run, &t->as, 0, -1, 0, &t->as_ex)) {
		t->ar.set = t->rs;
		t->ar.run = t->run;
		t->ar.ex = &t->as_ex;
		t->ar.nex = 1;
		t->nwant = mt_candidate_env(&t->as_ex, t->want_env);
	}
	return MT_OK;
}

int mt_check_run(struct mt_check *t, struct mt_error *err)
{
	int rc;

	if (!t->a.no_rules &&
	    mt_ruleset_load_files(t->a.rule_paths, t->a.nrule_paths, 1, &t->rs, err))
		return MT_EINVAL;
	if ((rc = check_as_is(t, err)) || (rc = check_measure_log(t, err)))
		return rc;
	return check_changes_search(t, err);
}

int mt_check_has_run(const struct mt_check *t)
{
	return t->has_run;
}

int mt_check_nothing_fits(const struct mt_check *t)
{
	return !t->as_ok && !t->best1.feasible && !t->best2.feasible && !t->overall.feasible;
}

void mt_check_free(struct mt_check *t)
{
	if (!t)
		return;
	check_changes_free(t);
	mt_explain_free(&t->as_ex);
	mt_rules_end(t->run);
	mt_ruleset_free(t->rs);
	mt_cluster_free(t->c);
	free(t->buf);
	free(t->lp);
	mt_validation_free(&t->v);
	free(t->one);
	free(t->mj);
	free(t->src);
	free(t);
}
