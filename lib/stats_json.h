/* SPDX-License-Identifier: MIT */
/* stats_json: struct mt_stats in JSON documents, one way to write it and one
 * way to read it back.
 *
 * The object is {"n", "median", "min", "max", "p95", "cv"}: the figures with
 * 6 significant digits, cv with 3 (a measurement, not a binary fraction).
 * The streaming writer (jsonw) prints them with %.6g / %.3g; the cJSON writer
 * stores the values rounded to those digits (mt_round_sig), which cJSON then
 * prints in its own shortest form.  Readers copy nothing out of the document.
 */
#ifndef MT_STATS_JSON_H
#define MT_STATS_JSON_H

#include <cjson/cJSON.h>

#include "err.h"
#include "jsonr.h"
#include "jsonw.h"
#include "stats.h"

/* Write `s` as the object `key` (NULL inside an array). */
void mt_stats_jw(struct jw *w, const char *key, const struct mt_stats *s);

/* Add `s` to object `o` as member `key`, rounded; nothing when s is NULL or
 * s->n <= 0.  The new member (borrowed from o), or NULL. */
cJSON *mt_stats_add(cJSON *o, const char *key, const struct mt_stats *s);

/* Read member `key` of `o` strictly, as jsonr does: n an integer >= 1 and
 * median a number >= 0 are required in the object, min, max, p95 and cv are
 * numbers >= 0 when present (0 when not).  1 read, 0 absent and not
 * `required` (*out zeroed), or a negative status with the message in err. */
int mt_stats_read(const struct mt_jpos *at, const cJSON *o, const char *key, int required,
		  struct mt_stats *out, struct mt_error *err);

/* Leniently, from an object megatune wrote itself: each field, or 0 when it
 * is missing or not a number (n truncated to an int). */
void mt_stats_get(const cJSON *s, struct mt_stats *out);

#endif
