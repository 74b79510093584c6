/* SPDX-License-Identifier: MIT */
/* diagnose: what the job departs from, each with its rule: the constraints
 * it breaks, the set rules its flags override, the diagnose rules that fire,
 * and the environment the rules want otherwise (docs/CHECK.md). */
#include <stdio.h>
#include <string.h>

#include "../job/flags.h"
#include "../job/script.h"
#include "../rules/engine.h"
#include "../rules/ruleset.h"
#include "state.h"

/* The job's environment as the rules want it for configuration c: the
 * variables the job lacks or sets otherwise (diagnoses). */
int check_env_gaps(struct sbuf *sb, cJSON *arr, const struct mt_jobsrc *s,
		   const struct mt_kv *want, int nwant)
{
	int i, n = 0;
	char line[512];

	for (i = 0; i < nwant; i++) {
		const char *have = mt_jobsrc_env(s, want[i].key);

		if (mt_kv_is_note(&want[i]) || (have && !strcmp(have, want[i].val)))
			continue;
		n++;
		if (have)
			snprintf(line, sizeof(line), "%s=%s, the rules want %s", want[i].key, have,
				 want[i].val);
		else
			snprintf(line, sizeof(line), "%s is not set; the rules want %s=%s", want[i].key,
				 want[i].key, want[i].val);
		if (sb)
			sbuf_addf(sb, "  ! %s\n", line);
		if (arr)
			cJSON_AddItemToArray(arr, cJSON_CreateString(line));
	}
	return n;
}

/* What the job departs from: the constraints it breaks, the set rules its
 * flags override, the diagnose rules that fire.  Returns the count. */
int check_diagnoses(struct sbuf *sb, cJSON *arr, const struct mt_explain *ex)
{
	int i, n = 0;

	for (i = 0; ex && i < ex->n; i++) {
		const struct mt_fired *f = &ex->v[i];
		const char *what;

		if (f->status == MT_FIRE_VIOLATED)
			what = "breaks";
		else if (f->status == MT_FIRE_OVERRIDDEN)
			what = "overrides";
		else if (f->status == MT_FIRE_NOTE && f->rule->kind == MT_RK_DIAGNOSE)
			what = "diagnosis";
		else
			continue;
		n++;
		if (sb) {
			sbuf_addf(sb, "  ! %s (%s%s%s): %s\n", f->rule->id, what,
				  f->effect ? ": the rule sets " : "", f->effect ? f->effect : "",
				  f->message ? f->message : "");
			if (f->rule->ncites)
				sbuf_addf(sb, "      source: %s\n", f->rule->cites[0]);
		}
		if (arr) {
			cJSON *o = cJSON_CreateObject();

			cJSON_AddStringToObject(o, "rule", f->rule->id);
			cJSON_AddStringToObject(o, "status", mt_fire_status_name(f->status));
			if (f->effect)
				cJSON_AddStringToObject(o, "effect", f->effect);
			cJSON_AddStringToObject(o, "message", f->message ? f->message : "");
			if (f->rule->ncites)
				cJSON_AddStringToObject(o, "cite", f->rule->cites[0]);
			cJSON_AddItemToArray(arr, o);
		}
	}
	return n;
}

/* TP (with CP inside it) larger than an NVLink domain */
int check_span_domains(const struct mt_config *cfg, const struct mt_cluster *c)
{
	return c->nvlink_domain > 0 && cfg->tp > c->nvlink_domain;
}
