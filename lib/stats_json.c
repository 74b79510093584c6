/* SPDX-License-Identifier: MIT */
#include "stats_json.h"

#include <limits.h>
#include <string.h>

void mt_stats_jw(struct jw *w, const char *key, const struct mt_stats *s)
{
	jw_obj(w, key);
	jw_int(w, "n", s->n);
	jw_num(w, "median", s->median, 6);
	jw_num(w, "min", s->min, 6);
	jw_num(w, "max", s->max, 6);
	jw_num(w, "p95", s->p95, 6);
	jw_num(w, "cv", s->cv, 3);
	jw_end(w);
}

cJSON *mt_stats_add(cJSON *o, const char *key, const struct mt_stats *s)
{
	cJSON *j;

	if (!s || s->n <= 0)
		return NULL;
	j = cJSON_AddObjectToObject(o, key);
	if (!j)
		return NULL;
	cJSON_AddNumberToObject(j, "n", s->n);
	cJSON_AddNumberToObject(j, "median", mt_round_sig(s->median, 6));
	cJSON_AddNumberToObject(j, "min", mt_round_sig(s->min, 6));
	cJSON_AddNumberToObject(j, "max", mt_round_sig(s->max, 6));
	cJSON_AddNumberToObject(j, "p95", mt_round_sig(s->p95, 6));
	cJSON_AddNumberToObject(j, "cv", mt_round_sig(s->cv, 3));
	return j;
}

int mt_stats_read(const struct mt_jpos *at, const cJSON *o, const char *key, int required,
		  struct mt_stats *out, struct mt_error *err)
{
	struct mt_jpos in = *at;
	const cJSON *s = NULL;
	char w[256];
	int rc;

	memset(out, 0, sizeof(*out));
	rc = mt_jobj(at, o, key, required, &s, err);
	if (rc <= 0)
		return rc;
	in.where = mt_jpath(w, sizeof(w), at->where, key);
	if ((rc = mt_jint32(&in, s, "n", 1, 1, INT_MAX, &out->n, err)) < 0 ||
	    (rc = mt_jnum(&in, s, "median", 1, 0, 1e300, &out->median, err)) < 0 ||
	    (rc = mt_jnum(&in, s, "min", 0, 0, 1e300, &out->min, err)) < 0 ||
	    (rc = mt_jnum(&in, s, "max", 0, 0, 1e300, &out->max, err)) < 0 ||
	    (rc = mt_jnum(&in, s, "p95", 0, 0, 1e300, &out->p95, err)) < 0 ||
	    (rc = mt_jnum(&in, s, "cv", 0, 0, 1e300, &out->cv, err)) < 0)
		return rc;
	return 1;
}

void mt_stats_get(const cJSON *s, struct mt_stats *out)
{
	out->n = (int)mt_jget_num(s, "n", 0);
	out->median = mt_jget_num(s, "median", 0);
	out->min = mt_jget_num(s, "min", 0);
	out->max = mt_jget_num(s, "max", 0);
	out->p95 = mt_jget_num(s, "p95", 0);
	out->cv = mt_jget_num(s, "cv", 0);
}
