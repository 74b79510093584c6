/* SPDX-License-Identifier: MIT */
/* doc: megatune.check/1 (docs/CHECK.md section 3), the one writer of it, and
 * the HTML report of a check, made from it (reports/html.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../reports/html.h"
#include "check_memory.h"
#include "state.h"

/* The kinds of job, in words and in megatune.check/1 */
static const struct {
	int kind;
	const char *words, *json;
} kinds[] = {
	{ MT_JS_ARGS, "arguments", "arguments" },
	{ MT_JS_SCRIPT, "launch script", "script" },
	{ MT_JS_ARGBLOCK, "Megatron-LM log (arguments block)", "arguments_block" },
	{ MT_JS_BRIDGE_YAML, "Megatron-Bridge config", "bridge_yaml" },
	{ MT_JS_BRIDGE_SUMMARY, "Megatron-Bridge log (configuration summary)", "bridge_summary" },
	{ MT_JS_BRIDGE_OVERRIDES, "Megatron-Bridge overrides", "bridge_overrides" },
	{ MT_JS_VERL_YAML, "verl config", "verl_yaml" },
	{ MT_JS_VERL_OVERRIDES, "verl overrides", "verl_overrides" },
};

const char *check_kind_name(int k, int json)
{
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == k)
			return json ? kinds[i].json : kinds[i].words;
	return "arguments";
}

/* A job whose text lists every field, set or at its default */
int check_lists_every_field(int k)
{
	return k == MT_JS_ARGBLOCK || k == MT_JS_BRIDGE_YAML || k == MT_JS_VERL_YAML;
}

/* An argument of the job in its own words: the key it wrote (Bridge, verl)
 * or the flag */
void check_arg_name(const struct mt_jobsrc *s, int i, char *buf, size_t cap)
{
	if (s->orig[i] > 0)
		snprintf(buf, cap, "%s", s->raw[s->orig[i] - 1].key);
	else
		snprintf(buf, cap, "--%s", s->arg[i].key);
}

/* The log's run in the JSON: "measured" (docs/CHECK.md section 3) */
static void json_measured(cJSON *doc, const struct mt_check *t)
{
	const struct mt_vcand *c = t->has_run ? &t->v.cand[0] : NULL;
	cJSON *m;

	if (c) {
		m = cJSON_AddObjectToObject(doc, "measured");
		cJSON_AddStringToObject(m, "status", mt_vstatus_name(c->status));
		if (c->reason)
			cJSON_AddStringToObject(m, "reason", c->reason);
		if (c->evidence_line) {
			cJSON_AddStringToObject(m, "evidence_line", c->evidence_line);
			cJSON_AddNumberToObject(m, "evidence_lineno", (double)c->evidence_lineno);
		}
		cJSON_AddNumberToObject(m, "warmup", t->warmup);
		if (c->nmemr)
			check_memory_ranks(NULL, cJSON_AddArrayToObject(m, "memory_ranks"), c);
		if (t->lp->cut_lineno) /* the log ends mid-line there: that step not counted */
			cJSON_AddNumberToObject(m, "log_cut_lineno", (double)t->lp->cut_lineno);
		if (c->has_measured) {
			cJSON_AddNumberToObject(m, "step_s", c->meas.step_s);
			cJSON_AddNumberToObject(m, "step_n", c->meas.step_n);
			cJSON_AddNumberToObject(m, "step_iqr_s", c->meas.step_iqr_s);
			cJSON_AddNumberToObject(m, "tokens_per_s_per_gpu", c->meas.tokens_per_s_per_gpu);
			cJSON_AddNumberToObject(m, "tflops_per_gpu", c->meas.tflops_per_gpu);
			if (isfinite(c->meas.mem_max_reserved_gib))
				cJSON_AddNumberToObject(m, "mem_max_reserved_gib",
							c->meas.mem_max_reserved_gib);
			cJSON_AddNumberToObject(m, "predicted_step_s", c->pred.step_s);
			cJSON_AddNumberToObject(m, "rel_error_step",
						mt_vrel(c->meas.step_s, c->pred.step_s));
			/* the changes' step_s_measured_basis: their step times this */
			if (t->base.measured > 0)
				cJSON_AddNumberToObject(m, "changes_scale",
							t->base.measured / t->as.time.step);
		}
	}
}

/* megatune.check/1 (docs/CHECK.md section 3) */
cJSON *mt_check_doc(struct mt_check *t)
{
	const struct mt_jobsrc *src = t->src;
	const struct mt_megatron_job *mj = t->mj;
	const struct mt_explain *ex = t->run ? &t->as_ex : NULL;
	cJSON *doc = cJSON_CreateObject(), *j, *arr, *ch;
	int i;

	cJSON_AddStringToObject(doc, "schema", "megatune.check/1");
	j = cJSON_AddObjectToObject(doc, "job");
	cJSON_AddStringToObject(j, "file", src->file);
	cJSON_AddStringToObject(j, "kind", check_kind_name(src->kind, 1));
	cJSON_AddStringToObject(j, "format", src->format == MT_JF_BRIDGE ? "bridge" :
				src->format == MT_JF_VERL ? "verl" : "megatron");
	cJSON_AddStringToObject(j, "entry", src->entry);
	cJSON_AddNumberToObject(j, "gpus", mj->job.gpus);
	cJSON_AddStringToObject(j, "gpus_from", mj->gpus_from);
	cJSON_AddNumberToObject(j, "seq", mj->job.seq);
	cJSON_AddNumberToObject(j, "gbs", (double)mj->job.gbs);
	cJSON_AddStringToObject(j, "model", mj->model.name);
	cJSON_AddNumberToObject(j, "params", (double)mj->model.params_total);
	cJSON_AddStringToObject(j, "cluster", t->c->name);
	arr = cJSON_AddArrayToObject(j, "not_modelled");
	for (i = 0; i < mj->nunknown; i++) {
		cJSON *u = cJSON_CreateObject();

		char name[128];

		check_arg_name(src, mj->unknown[i], name, sizeof(name));
		cJSON_AddStringToObject(u, "flag", name[0] == '-' ? name + 2 : name);
		cJSON_AddNumberToObject(u, "line", src->line[mj->unknown[i]]);
		cJSON_AddItemToArray(arr, u);
	}
	arr = cJSON_AddArrayToObject(j, "timed_as_fused");
	for (i = 0; i < mj->nfusion_off; i++) {
		char name[128];

		check_arg_name(src, mj->fusion_off[i], name, sizeof(name));
		cJSON_AddItemToArray(arr, cJSON_CreateString(name[0] == '-' ? name + 2 : name));
	}
	arr = cJSON_AddArrayToObject(j, "notes");
	for (i = 0; i < src->nnotes; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateString(src->notes[i]));
	if (t->cant[0]) {
		cJSON_AddStringToObject(doc, "cannot_time", t->cant);
	} else {
		cJSON *e = check_as_is_doc(t);

		if (e)
			cJSON_AddItemToObject(doc, "as_is", e);
	}
	json_measured(doc, t);
	arr = cJSON_AddArrayToObject(doc, "diagnoses");
	check_diagnoses(NULL, arr, !t->cant[0] ? ex : NULL);
	arr = cJSON_AddArrayToObject(doc, "environment");
	check_env_gaps(NULL, arr, src, t->want_env, t->nwant);
	ch = cJSON_AddArrayToObject(doc, "changes");
	if (t->best1.feasible)
		check_changes_show(NULL, ch, "one knob", &t->best1, t);
	if (t->best2.feasible)
		check_changes_show(NULL, ch, "two knobs", &t->best2, t);
	if (t->overall.feasible)
		check_changes_show(NULL, ch, "best overall", &t->overall, t);
	return doc;
}

int mt_check_write_doc(const char *path, const cJSON *doc, struct mt_error *err)
{
	char *out = doc ? cJSON_Print(doc) : NULL;
	struct sbuf o = SBUF_INIT;
	int rc;

	if (!out)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	sbuf_adds(&o, out);
	sbuf_addc(&o, '\n');
	free(out);
	rc = o.failed ? mt_error_set(err, MT_ENOMEM, "out of memory")
		      : mt_write_atomic(path, o.buf, o.len, err);
	sbuf_release(&o);
	return rc;
}

int mt_check_write_json(struct mt_check *t, const char *path, struct mt_error *err)
{
	cJSON *doc = mt_check_doc(t);
	int rc = mt_check_write_doc(path, doc, err);

	cJSON_Delete(doc);
	return rc;
}

int mt_check_write_report(struct mt_check *t, const char *path, struct mt_error *err)
{
	struct mt_report_in in;
	cJSON *doc = mt_check_doc(t);
	int rc;

	if (!doc)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	memset(&in, 0, sizeof(in));
	in.check = doc;
	in.check_file = t->a.job;
	in.advice = cJSON_GetObjectItemCaseSensitive(doc, "as_is");
	in.advice_file = in.advice ? t->a.job : NULL;
	rc = mt_report_write(path, &in, err);
	cJSON_Delete(doc);
	return rc;
}
