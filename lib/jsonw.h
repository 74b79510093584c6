/* SPDX-License-Identifier: MIT */
/* jsonw: a small streaming JSON writer into an sbuf.
 *
 * We format numbers ourselves (cJSON prints every number as a double): 64-bit
 * integers are written exactly, floating values with a stated number of
 * significant digits, and non-finite values as null.  The writer tracks
 * nesting and commas; `key` is NULL inside arrays.  Output is indented with
 * two spaces per level when `pretty` is set.
 *
 *     struct jw w;
 *     jw_init(&w, &sb, 1);
 *     jw_obj(&w, NULL);
 *     jw_str(&w, "schema", "megatune.advice/1");
 *     jw_end(&w);
 */
#ifndef MT_JSONW_H
#define MT_JSONW_H

#include <stdint.h>

#include "sbuf.h"

#define JW_MAX_DEPTH 32

struct jw {
	struct sbuf *sb;
	int depth;
	int pretty;
	unsigned char count[JW_MAX_DEPTH]; /* items written at each level (capped) */
	char close[JW_MAX_DEPTH];          /* '}' or ']' */
};

void jw_init(struct jw *w, struct sbuf *sb, int pretty);
void jw_obj(struct jw *w, const char *key);
void jw_arr(struct jw *w, const char *key);
void jw_end(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *val);
void jw_int(struct jw *w, const char *key, int64_t val);
/* A floating value with `sig` significant digits (%.{sig}g), null if non-finite. */
void jw_num(struct jw *w, const char *key, double val, int sig);
/* A value rounded to `dec` decimals (%.{dec}f), null if non-finite. */
void jw_fix(struct jw *w, const char *key, double val, int dec);
void jw_bool(struct jw *w, const char *key, int val);
void jw_null(struct jw *w, const char *key);

/* Append `s` as a JSON string literal (quotes and escapes) to sb. */
void jw_quote(struct sbuf *sb, const char *s);

#endif
