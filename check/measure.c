/* SPDX-License-Identifier: MIT */
/* measure: a log's run, predicted beside measured (megatune.validation/1,
 * validate/validation.h): its steady step, memory and failure, the basis the
 * changes are stated against (check_change.h), and the record --validation
 * writes with the advice of the job as it is beside it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../validate/validate.h"
#include "state.h"

cJSON *check_as_is_doc(struct mt_check *t)
{
	struct sbuf ej = SBUF_INIT;
	struct mt_error e2 = MT_ERROR_INIT;
	cJSON *e = NULL;

	mt_estimate_json(&ej, &t->mj->model, t->c, &t->mj->job, &t->as, &t->ar);
	if (ej.failed || mt_json_parse("estimate", ej.buf, ej.len, &e, &e2))
		e = NULL;
	sbuf_release(&ej);
	return e;
}

/* A log's run as a megatune.validation/1 candidate, predicted beside
 * measured, from the advice document of the job as it is (t->v) */
int check_measure_log(struct mt_check *t, struct mt_error *err)
{
	struct mt_validate_opts o;
	cJSON *adv;
	int rc;

	t->base = (struct check_base){ &t->as, t->as_ok, t->run ? &t->as_ex : NULL, 0 };
	if (!t->lp || t->cant[0])
		return MT_OK;
	if (!(adv = check_as_is_doc(t)))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	mt_validate_opts_init(&o, ".");
	o.advice_path = "";
	o.top = 1;
	o.warmup = t->warmup;
	rc = mt_validate_init(&t->v, adv, &o, err);
	cJSON_Delete(adv);
	if (rc)
		return rc;
	if (mt_validate_from_log(&t->v, 0, t->lp, t->as.tput.model_flops_step, t->warmup,
				 t->src->file) != MT_OK)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	free(t->v.mode);
	t->v.mode = strdup("log");
	t->v.iters = t->lp->nstep ? (int)t->lp->last_iter : 0;
	if (mt_validation_summarize(&t->v) != MT_OK)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	t->has_run = 1;
	/* the changes are stated against the measured step (check_change.h) */
	if (t->v.cand[0].has_measured && t->v.cand[0].meas.step_s > 0 && t->as.time.step > 0)
		t->base.measured = t->v.cand[0].meas.step_s;
	return MT_OK;
}

/* --validation FILE: the record, the advice of the job as it is and the
 * model of its flags beside it, all written or none */
int mt_check_write_validation(struct mt_check *t, const char *f, struct mt_error *err)
{
	char adv_path[1100], model_path[1100];
	const char *dot = strrchr(f, '.');
	size_t stem = dot && dot > strrchr(f, '/') && !strcmp(dot, ".json") ? (size_t)(dot - f)
									     : strlen(f);
	struct mt_outset os;
	struct sbuf doc = SBUF_INIT;
	cJSON *adv = NULL;
	char *advtext = NULL;
	int rc = MT_EINVAL;

	if (!t->has_run)
		return mt_error_set(err, MT_EINVAL, "--validation: %s", t->cant[0] ?
				    "megatune cannot time the job as written" :
				    "the job is not a log (no run to record)");
	snprintf(adv_path, sizeof(adv_path), "%.*s.advice.json", (int)stem, f);
	snprintf(model_path, sizeof(model_path), "%.*s.model.json", (int)stem, f);
	if (strlen(model_path) >= sizeof(t->mj->model.source))
		return mt_error_set(err, MT_EINVAL, "--validation %s: a path of at most %zu bytes, "
				    "with its .model.json", f, sizeof(t->mj->model.source) - 12);
	if (t->mj->model_json[0])
		memcpy(t->mj->model.source, model_path, strlen(model_path) + 1);
	if (!(adv = check_as_is_doc(t)) || !(advtext = cJSON_Print(adv))) {
		mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	free(t->v.advice);
	t->v.advice = strdup(adv_path);
	if (mt_validation_json(&doc, &t->v) != MT_OK) {
		mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	mt_outset_begin(&os);
	if ((t->mj->model_json[0] &&
	     mt_outset_stage(&os, model_path, t->mj->model_json, strlen(t->mj->model_json), err)) ||
	    mt_outset_stage(&os, adv_path, advtext, strlen(advtext), err) ||
	    mt_outset_stage(&os, f, doc.buf, doc.len, err)) {
		mt_outset_abort(&os);
		goto out;
	}
	rc = mt_outset_commit(&os, err);
out:
	free(advtext);
	cJSON_Delete(adv);
	sbuf_release(&doc);
	return rc;
}
