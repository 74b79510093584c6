/* SPDX-License-Identifier: MIT */
/* jsonr: reading JSON input files with messages a user can act on.
 *
 * Files are parsed whole with cJSON (inputs here are small: model configs and
 * cluster profiles).  Every accessor reports a problem as
 *     "<file>: field '<where>.<key>': expected <what>, got <what was there>"
 * and returns MT_EINVAL; a syntax error is reported with its line and column.
 *
 * Accessors return 1 when the value was present and stored, 0 when it was
 * absent and not required (the output is left untouched, so callers set
 * defaults first), or a negative status.
 */
#ifndef MT_JSONR_H
#define MT_JSONR_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

/* Where a value lives, for messages: the file name and the dotted path of the
 * enclosing object ("" at the top level). */
struct mt_jpos {
	const char *file;
	const char *where;
};

/* Parse `text` (of `len` bytes; need not be NUL-terminated at len).  On success
 * *root is owned by the caller (cJSON_Delete). */
int mt_json_parse(const char *file, const char *text, size_t len, cJSON **root,
		  struct mt_error *err);

/* The checks mt_json_parse() makes on every document after parsing: a key
 * appearing twice in one object is refused naming it (one policy for every
 * reader), and so is a number above MT_JSON_NUM_MAX in magnitude (1e308, a
 * 309-digit integer, 1e400): no quantity megatune reads comes near it (the
 * largest, FLOPs per step, are below 1e23), so such a value is a damaged or
 * hostile input, never rendered as if valid.
 * MT_EINVAL with "<file>: field '<path>': ...". */
#define MT_JSON_NUM_MAX 1e30

int mt_json_check(const char *file, const cJSON *root, struct mt_error *err);

/* Read and parse a file (at most 64 MiB). */
int mt_json_load(const char *path, cJSON **root, struct mt_error *err);

/* A short description of a JSON value's type, for messages ("a string"). */
const char *mt_json_type(const cJSON *v);

int mt_jnum(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    double lo, double hi, double *out, struct mt_error *err);
/* An integer in [lo, hi]; rejects fractions. */
int mt_jint(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    int64_t lo, int64_t hi, int64_t *out, struct mt_error *err);
int mt_jint32(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	      int lo, int hi, int *out, struct mt_error *err);
/* A string copied into out[cap]; longer strings are an error. */
int mt_jstr(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    char *out, size_t cap, struct mt_error *err);
int mt_jbool(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	     int *out, struct mt_error *err);
/* An object or array member; *out is borrowed from obj. */
int mt_jobj(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    const cJSON **out, struct mt_error *err);
int mt_jarr(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    const cJSON **out, struct mt_error *err);

/* Every member of the object obj (at `at`) is named in keys[] (a NULL-ended
 * list): MT_OK, else MT_EINVAL "<file>: field '<where>.<key>': unknown field
 * (expected one of <keys>)".  A misspelt key would otherwise be read as
 * absent, its default silently standing in for what the file meant. */
int mt_jkeys(const struct mt_jpos *at, const cJSON *obj, const char *const *keys,
	     struct mt_error *err);

/* Lenient reads of documents already validated or written by megatune
 * itself.  `path` is a key or a dotted path of keys through nested objects
 * ("gpu.name"); a step into anything but an object finds nothing.  Each
 * returns the value, or "" / `dflt` when it is missing or of another type
 * (case-sensitive keys). */
/* The document `doc` (from `file`, given as option `opt`) is an object whose
 * "schema" is `want`: MT_OK, else MT_EINVAL with the file, the field and what
 * the option expects. */
int mt_jschema(const cJSON *doc, const char *want, const char *file, const char *opt,
	       struct mt_error *err);

const cJSON *mt_jget(const cJSON *o, const char *path);
const char *mt_jget_str(const cJSON *o, const char *path);
const char *mt_jget_strd(const cJSON *o, const char *path, const char *dflt);
double mt_jget_num(const cJSON *o, const char *path, double dflt);
int mt_jget_bool(const cJSON *o, const char *path, int dflt);

/* Format "where.key" (or "key" at top level, "where[i]" for arrays) into buf. */
const char *mt_jpath(char *buf, size_t cap, const char *where, const char *key);
const char *mt_jpath_index(char *buf, size_t cap, const char *where, int index);

#endif
