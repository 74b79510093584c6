/* SPDX-License-Identifier: MIT */
#include "comparison.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"

#define SCHEMA "megatune.comparison/1"

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
		i++;
	}
	return MT_OK;
}

void mt_comparison_free(struct mt_comparison *c)
{
	free(c->metrics);
	memset(c, 0, sizeof(*c));
}
