/* SPDX-License-Identifier: MIT */
#include "comparison.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/jsonw.h"

#define SCHEMA "megatune.comparison/1"

/* An optional array of strings into a borrowed array (owned by the struct). */
static int read_names(const cJSON *doc, const char *key, const char *file, const char ***out,
		      int *n, struct mt_error *err)
{
	const cJSON *a = mt_jget(doc, key), *x;

	*out = NULL;
	*n = 0;
	if (!a)
		return MT_OK;
	if (!cJSON_IsArray(a))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected an array of strings",
				    file, key);
	if (cJSON_GetArraySize(a) && !(*out = calloc((size_t)cJSON_GetArraySize(a), sizeof(char *))))
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", file);
	cJSON_ArrayForEach(x, a) {
		if (!cJSON_IsString(x))
			return mt_error_set(err, MT_EINVAL, "%s: field '%s[%d]': expected a string",
					    file, key, *n);
		(*out)[(*n)++] = x->valuestring;
	}
	return MT_OK;
}

int mt_comparison_read(const cJSON *doc, const char *file, const char *opt,
		       struct mt_comparison *out, struct mt_error *err)
{
	const cJSON *ms = mt_jget(doc, "metrics"), *m;
	int i = 0, rc;

	memset(out, 0, sizeof(*out));
	if ((rc = mt_jschema(doc, SCHEMA, file, opt, err)))
		return rc;
	if (ms && !cJSON_IsArray(ms))
		return mt_error_set(err, MT_EINVAL, "%s: field 'metrics': expected an array", file);
	out->source = mt_jget_strd(doc, "source", NULL);
	out->verdict = mt_jget_strd(doc, "verdict", NULL);
	out->nmetrics = cJSON_GetArraySize(ms);
	if (out->nmetrics > 0 && !(out->metrics = calloc((size_t)out->nmetrics, sizeof(*out->metrics)))) {
		out->nmetrics = 0;
		return mt_error_set(err, MT_ENOMEM, "%s: out of memory", file);
	}
	cJSON_ArrayForEach(m, ms) {
		struct mt_cmp_metric *x = &out->metrics[i];

		if (!cJSON_IsObject(m)) {
			mt_comparison_free(out);
			return mt_error_set(err, MT_EINVAL, "%s: field 'metrics[%d]': expected an object",
					    file, i);
		}
		x->name = mt_jget_strd(m, "name", NULL);
		x->unit = mt_jget_strd(m, "unit", NULL);
		x->baseline = mt_jget_num(m, "baseline", NAN);
		x->current = mt_jget_num(m, "current", NAN);
		x->change_pct = mt_jget_num(m, "change_pct", NAN);
		x->noise_pct = mt_jget_num(m, "noise_pct", NAN);
		x->verdict = mt_jget_strd(m, "verdict", NULL);
		x->id = mt_jget_strd(m, "id", NULL);
		x->better = mt_jget_strd(m, "better", NULL);
		x->method = mt_jget_strd(m, "method", NULL);
		x->tolerance_pct = mt_jget_num(m, "tolerance_pct", NAN);
		x->p_value = mt_jget_num(m, "p_value", NAN);
		x->n_baseline = (int)mt_jget_num(m, "n_baseline", 0);
		x->n_current = (int)mt_jget_num(m, "n_current", 0);
		x->note = mt_jget_strd(m, "note", NULL);
		i++;
	}
	out->kind = mt_jget_strd(doc, "kind", NULL);
	out->baseline_file = mt_jget_strd(doc, "baseline", NULL);
	out->current_file = mt_jget_strd(doc, "current", NULL);
	out->tolerance_pct = mt_jget_num(doc, "tolerance_pct", NAN);
	out->confidence_pct = mt_jget_num(doc, "confidence_pct", NAN);
	out->counts[0] = (int)mt_jget_num(doc, "counts.regressed", 0);
	out->counts[1] = (int)mt_jget_num(doc, "counts.improved", 0);
	out->counts[2] = (int)mt_jget_num(doc, "counts.unchanged", 0);
	out->counts[3] = (int)mt_jget_num(doc, "counts.inconclusive", 0);
	/* absent: a document from before the gate on missing metrics */
	out->allow_missing = !cJSON_IsFalse(mt_jget(doc, "allow_missing"));
	if ((rc = read_names(doc, "only_baseline", file, &out->only_baseline,
			     &out->nonly_baseline, err)) ||
	    (rc = read_names(doc, "only_current", file, &out->only_current, &out->nonly_current,
			     err)))
		mt_comparison_free(out);
	return rc;
}

void mt_comparison_free(struct mt_comparison *c)
{
	free(c->metrics);
	free(c->only_baseline);
	free(c->only_current);
	memset(c, 0, sizeof(*c));
}

int mt_comparison_missing(const struct mt_comparison *c)
{
	return c->allow_missing ? 0 : c->nonly_baseline;
}

const char *mt_comparison_verdict(const struct mt_comparison *c)
{
	int i;

	for (i = 0; i < c->nmetrics; i++)
		if (c->metrics[i].verdict && !strcmp(c->metrics[i].verdict, "regressed"))
			return "regressed";
	return mt_comparison_missing(c) ? "fail" : "pass";
}

static void names_json(struct jw *w, const char *key, const char *const *names, int n)
{
	int i;

	jw_arr(w, key);
	for (i = 0; i < n; i++)
		jw_str(w, NULL, names[i]);
	jw_end(w);
}

void mt_comparison_json(struct sbuf *sb, const struct mt_comparison *c)
{
	static const char *const cn[] = { "regressed", "improved", "unchanged", "inconclusive" };
	struct jw w;
	int i;

	jw_init(&w, sb, 1);
	jw_obj(&w, NULL);
	jw_str(&w, "schema", SCHEMA);
	jw_str(&w, "source", c->source);
	jw_str(&w, "kind", c->kind);
	jw_str(&w, "baseline", c->baseline_file);
	jw_str(&w, "current", c->current_file);
	jw_num(&w, "tolerance_pct", c->tolerance_pct, 6);
	jw_num(&w, "confidence_pct", c->confidence_pct, 6);
	jw_bool(&w, "allow_missing", c->allow_missing);
	jw_str(&w, "verdict", mt_comparison_verdict(c));
	jw_obj(&w, "counts");
	for (i = 0; i < 4; i++)
		jw_int(&w, cn[i], c->counts[i]);
	jw_int(&w, "missing", mt_comparison_missing(c));
	jw_end(&w);
	jw_arr(&w, "metrics");
	for (i = 0; i < c->nmetrics; i++) {
		const struct mt_cmp_metric *m = &c->metrics[i];

		jw_obj(&w, NULL);
		jw_str(&w, "id", m->id);
		jw_str(&w, "name", m->name);
		jw_str(&w, "unit", m->unit);
		jw_str(&w, "better", m->better);
		jw_num(&w, "baseline", m->baseline, 6);
		jw_num(&w, "current", m->current, 6);
		jw_fix(&w, "change_pct", m->change_pct, 2);
		jw_fix(&w, "noise_pct", m->noise_pct, 2);
		jw_fix(&w, "tolerance_pct", m->tolerance_pct, 2);
		jw_str(&w, "method", m->method);
		jw_num(&w, "p_value", m->p_value, 3);
		jw_int(&w, "n_baseline", m->n_baseline);
		jw_int(&w, "n_current", m->n_current);
		jw_str(&w, "verdict", m->verdict);
		if (m->note)
			jw_str(&w, "note", m->note);
		jw_end(&w);
	}
	jw_end(&w);
	names_json(&w, "only_baseline", c->only_baseline, c->nonly_baseline);
	names_json(&w, "only_current", c->only_current, c->nonly_current);
	jw_end(&w);
	sbuf_addc(sb, '\n');
}
