/* SPDX-License-Identifier: MIT */
/* facts_file: read and write a megatune.facts/1 document (docs/FORMATS.md). */
#include "engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/jsonw.h"
#include "../lib/sbuf.h"

/* A value a measurement can have: fractions in [0, 1], durations, sizes,
 * rates and counts (any unit but "" and "x") not negative. */
static int plausible(int f, double v)
{
	const char *u = mt_facts[f].unit;

	if (!strcmp(u, "fraction"))
		return v >= 0 && v <= 1;
	if (u[0] && strcmp(u, "x"))
		return v >= 0;
	return 1;
}

int mt_facts_read(const char *path, struct mt_val *facts, unsigned char *given, char **strings,
		  struct mt_error *err)
{
	cJSON *root = NULL, *item;
	const cJSON *fo;
	struct mt_jpos at = { path, "" };
	char schema[64];
	struct sbuf pool = SBUF_INIT;
	size_t offs[MT_F_N];
	int i, rc;

	*strings = NULL;
	for (i = 0; i < MT_F_N; i++) {
		facts[i].n = NAN;
		facts[i].s = NULL;
		given[i] = 0;
	}
	if ((rc = mt_json_load(path, &root, err)))
		return rc;
	if (!cJSON_IsObject(root)) {
		rc = mt_error_set(err, MT_EINVAL, "%s: expected a JSON object at the top level, got %s",
				  path, mt_json_type(root));
		goto out;
	}
	if ((rc = mt_jstr(&at, root, "schema", 1, schema, sizeof(schema), err)) < 0)
		goto out;
	if (strcmp(schema, "megatune.facts/1")) {
		rc = mt_error_set(err, MT_EINVAL,
				  "%s: field 'schema': expected \"megatune.facts/1\", got \"%s\"", path,
				  schema);
		goto out;
	}
	if ((rc = mt_jobj(&at, root, "facts", 1, &fo, err)) < 0)
		goto out;
	if (!cJSON_IsObject(fo)) {
		rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts': expected an object, got %s",
				  path, mt_json_type(fo));
		goto out;
	}
	cJSON_ArrayForEach(item, fo) {
		int f = mt_fact_find(item->string, strlen(item->string));
		if (f < 0) {
			const char *sug = mt_fact_suggest(item->string, strlen(item->string));
			rc = mt_error_set(err, MT_EINVAL,
					  "%s: field 'facts.%s': unknown fact%s%s%s (megatune rules facts "
					  "lists them)", path, item->string, sug ? " (did you mean '" : "",
					  sug ? sug : "", sug ? "'?)" : "");
			goto out;
		}
		if (given[f]) {
			rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts.%s': given twice", path,
					  item->string);
			goto out;
		}
		if (cJSON_IsNumber(item) && mt_facts[f].type != MT_FT_STR &&
		    !plausible(f, item->valuedouble)) {
			rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts.%s': expected %s, got "
					  "%.6g", path, item->string,
					  !strcmp(mt_facts[f].unit, "fraction") ?
					  "a fraction between 0 and 1" : "a value of at least 0",
					  item->valuedouble);
			goto out;
		} else if (cJSON_IsNumber(item) && mt_facts[f].type != MT_FT_STR) {
			facts[f].n = item->valuedouble;
		} else if (cJSON_IsBool(item) && mt_facts[f].type == MT_FT_BOOL) {
			facts[f].n = cJSON_IsTrue(item);
		} else if (cJSON_IsNull(item) && mt_facts[f].type != MT_FT_STR) {
			facts[f].n = NAN;
		} else if (cJSON_IsString(item) && mt_facts[f].type == MT_FT_ENUM) {
			int idx = mt_fact_enum(f, item->valuestring);
			if (idx < 0) {
				rc = mt_error_set(err, MT_EINVAL,
						  "%s: field 'facts.%s': \"%s\" is not one of its values",
						  path, item->string, item->valuestring);
				goto out;
			}
			facts[f].n = idx;
		} else if (cJSON_IsString(item) && mt_facts[f].type == MT_FT_STR) {
			offs[f] = pool.len;
			sbuf_adds(&pool, item->valuestring);
			sbuf_addc(&pool, '\0');
		} else {
			rc = mt_error_set(err, MT_EINVAL, "%s: field 'facts.%s': expected %s, got %s", path,
					  item->string,
					  mt_facts[f].type == MT_FT_STR ? "a string"
					  : mt_facts[f].type == MT_FT_BOOL ? "a number or true/false"
					  : mt_facts[f].type == MT_FT_ENUM ? "one of its value names"
									   : "a number",
					  mt_json_type(item));
			goto out;
		}
		given[f] = 1;
	}
	if (pool.failed) {
		rc = mt_error_set(err, MT_ENOMEM, "out of memory");
		goto out;
	}
	if (pool.len) {
		*strings = sbuf_detach(&pool, NULL);
		for (i = 0; i < MT_F_N; i++)
			if (given[i] && mt_facts[i].type == MT_FT_STR)
				facts[i].s = *strings + offs[i];
	}
	rc = MT_OK;
out:
	sbuf_release(&pool);
	cJSON_Delete(root);
	return rc;
}

void mt_facts_json(struct jw *w, const struct mt_val *facts, const unsigned char *given)
{
	int k;

	jw_obj(w, "facts");
	for (k = 0; k < MT_F_N; k++)
		if (given[k])
			jw_num(w, mt_facts[k].name, facts[k].n, 6);
	jw_end(w);
}
