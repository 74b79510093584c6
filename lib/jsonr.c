/* SPDX-License-Identifier: MIT */
/* jsonr: JSON input with precise error messages. */
#include "jsonr.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fsutil.h"
#include "text.h"

#define JSON_MAX_BYTES (64u << 20)

static void line_col(const char *text, const char *at, int *line, int *col)
{
	const char *p;

	*line = 1;
	*col = 1;
	for (p = text; p < at; p++) {
		if (*p == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int only_space(const char *p, const char *end)
{
	for (; p < end; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
			return 0;
	return 1;
}

/* 1 when the text ends inside a string or with objects or arrays still open:
 * the sign of a file cut short rather than a syntax error. */
static int ends_open(const char *text, size_t len)
{
	size_t i;
	int depth = 0, in_str = 0, esc = 0;

	for (i = 0; i < len; i++) {
		char ch = text[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (ch == '\\')
				esc = 1;
			else if (ch == '"')
				in_str = 0;
			continue;
		}
		if (ch == '"')
			in_str = 1;
		else if (ch == '{' || ch == '[')
			depth++;
		else if (ch == '}' || ch == ']')
			depth--;
	}
	return in_str || depth > 0;
}

static int cmp_names(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;

	return strcmp(x->string, y->string);
}

/* The first key of object o that appears twice, or NULL. */
static const char *dup_key(const cJSON *o)
{
	const cJSON *c, *d, **v;
	const char *dup = NULL;
	int n = cJSON_GetArraySize(o), i = 0;

	if (n <= 32) {
		for (c = o->child; c; c = c->next)
			for (d = c->next; d; d = d->next)
				if (c->string && d->string && !strcmp(c->string, d->string))
					return c->string;
		return NULL;
	}
	v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return NULL;
	for (c = o->child; c; c = c->next)
		if (c->string)
			v[i++] = c;
	qsort(v, (size_t)i, sizeof(*v), cmp_names);
	for (n = 1; n < i && !dup; n++)
		if (!strcmp(v[n - 1]->string, v[n]->string))
			dup = v[n]->string;
	free(v);
	return dup;
}

static int check_tree(const char *file, const cJSON *v, char *path, size_t cap, size_t plen,
		      struct mt_error *err)
{
	const cJSON *c;
	const char *dup;
	int i = 0, rc;

	if (cJSON_IsNumber(v) && !(fabs(v->valuedouble) <= MT_JSON_NUM_MAX))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected a number of at most "
				    "%g in magnitude, got %s", file, plen ? path : "(top level)",
				    MT_JSON_NUM_MAX, isfinite(v->valuedouble) ? "a larger one" :
				    "one beyond the range of a double");
	if (cJSON_IsObject(v) && (dup = dup_key(v)) != NULL) {
		char shown[64];

		mt_text_escape(shown, sizeof(shown), dup);
		return mt_error_set(err, MT_EINVAL, "%s: field '%s%s%s': duplicate key (each key "
				    "may appear once in an object)", file, path, plen ? "." : "",
				    shown);
	}
	for (c = v->child; c; c = c->next, i++) {
		size_t n = plen;

		if (cJSON_IsObject(v))
			n += (size_t)snprintf(path + plen, cap - plen, "%s%s", plen ? "." : "",
					      c->string ? c->string : "");
		else
			n += (size_t)snprintf(path + plen, cap - plen, "[%d]", i);
		if (n >= cap)
			n = cap - 1;
		if ((rc = check_tree(file, c, path, cap, n, err)))
			return rc;
		path[plen] = 0;
	}
	return MT_OK;
}

int mt_json_check(const char *file, const cJSON *root, struct mt_error *err)
{
	char path[512] = "";

	return root ? check_tree(file, root, path, sizeof(path), 0, err) : MT_OK;
}

int mt_json_parse(const char *file, const char *text, size_t len, cJSON **root,
		  struct mt_error *err)
{
	const char *end = NULL;
	int line, col;

	*root = NULL;
	if (only_space(text, text + len))
		return mt_error_set(err, MT_EPARSE, "%s: empty file, expected a JSON object", file);
	if (memchr(text, '\0', len))
		return mt_error_set(err, MT_EPARSE, "%s: not a text file (contains NUL bytes)", file);
	*root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
	if (!*root) {
		const char *at = end ? end : text;

		if (at > text + len)
			at = text + len;
		if (ends_open(text, len))
			at = text + len;
		line_col(text, at, &line, &col);
		if (only_space(at, text + len))
			return mt_error_set(err, MT_EPARSE,
					    "%s:%d:%d: malformed JSON: the file ends too early "
					    "(truncated?)", file, line, col);
		{
			/* the text need not end in NUL: copy a bounded, printable excerpt */
			char near[24];
			size_t n = (size_t)(text + len - at), i;

			if (n > 20)
				n = 20;
			for (i = 0; i < n && at[i] != '\n'; i++)
				near[i] = (at[i] >= 0x20 && at[i] < 0x7f) ? at[i] : '?';
			near[i] = '\0';
			return mt_error_set(err, MT_EPARSE, "%s:%d:%d: malformed JSON near '%s'",
					    file, line, col, near);
		}
	}
	if (end && !only_space(end, text + len)) {
		line_col(text, end, &line, &col);
		cJSON_Delete(*root);
		*root = NULL;
		return mt_error_set(err, MT_EPARSE,
				    "%s:%d:%d: malformed JSON: unexpected text after the value",
				    file, line, col);
	}
	if (mt_json_check(file, *root, err)) {
		cJSON_Delete(*root);
		*root = NULL;
		return err ? err->code : MT_EINVAL;
	}
	return MT_OK;
}

int mt_json_load(const char *path, cJSON **root, struct mt_error *err)
{
	char *text;
	size_t len;
	int rc;

	*root = NULL;
	rc = mt_read_file(path, JSON_MAX_BYTES, &text, &len, err);
	if (rc)
		return rc;
	rc = mt_json_parse(path, text, len, root, err);
	free(text);
	return rc;
}

const char *mt_json_type(const cJSON *v)
{
	if (!v)
		return "nothing";
	if (cJSON_IsNull(v))
		return "null";
	if (cJSON_IsBool(v))
		return "a boolean";
	if (cJSON_IsNumber(v))
		return "a number";
	if (cJSON_IsString(v))
		return "a string";
	if (cJSON_IsArray(v))
		return "an array";
	if (cJSON_IsObject(v))
		return "an object";
	return "an unknown value";
}

const char *mt_jpath(char *buf, size_t cap, const char *where, const char *key)
{
	if (where && *where)
		snprintf(buf, cap, "%s.%s", where, key);
	else
		snprintf(buf, cap, "%s", key);
	return buf;
}

const char *mt_jpath_index(char *buf, size_t cap, const char *where, int index)
{
	snprintf(buf, cap, "%s[%d]", where ? where : "", index);
	return buf;
}

static const cJSON *jsonr_member(const cJSON *obj, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(obj, key);
}

static int jsonr_missing(const struct mt_jpos *at, const char *key, const char *what,
		   struct mt_error *err)
{
	char p[256];

	return mt_error_set(err, MT_EINVAL, "%s: missing field '%s': expected %s", at->file,
			    mt_jpath(p, sizeof(p), at->where, key), what);
}

/* A name or label: valid UTF-8, no control character (an escape sequence in
 * a name would reach the terminal). */
static int text_ok(const char *s)
{
	const char *p;

	for (p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return mt_utf8_valid(s, (size_t)(p - s));
}

static int wrong(const struct mt_jpos *at, const char *key, const char *what,
		 const cJSON *v, struct mt_error *err)
{
	char p[256], got[96], shown[64];

	if (cJSON_IsNumber(v))
		snprintf(got, sizeof(got), "%.17g", v->valuedouble);
	else if (cJSON_IsString(v))
		snprintf(got, sizeof(got), "\"%s\"", mt_text_escape(shown, sizeof(shown),
								     v->valuestring));
	else
		snprintf(got, sizeof(got), "%s", mt_json_type(v));
	return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected %s, got %s", at->file,
			    mt_jpath(p, sizeof(p), at->where, key), what, got);
}

int mt_jnum(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    double lo, double hi, double *out, struct mt_error *err)
{
	const cJSON *v = jsonr_member(obj, key);
	char what[128];

	if (hi >= 1e300)
		snprintf(what, sizeof(what), "a number >= %g", lo);
	else
		snprintf(what, sizeof(what), "a number in [%g, %g]", lo, hi);
	if (!v || cJSON_IsNull(v))
		return required ? jsonr_missing(at, key, what, err) : 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > hi)
		return wrong(at, key, what, v, err);
	*out = v->valuedouble;
	return 1;
}

int mt_jint(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    int64_t lo, int64_t hi, int64_t *out, struct mt_error *err)
{
	const cJSON *v = jsonr_member(obj, key);
	char what[128];
	double d;

	snprintf(what, sizeof(what), "an integer in [%lld, %lld]", (long long)lo, (long long)hi);
	if (!v || cJSON_IsNull(v))
		return required ? jsonr_missing(at, key, what, err) : 0;
	if (!cJSON_IsNumber(v))
		return wrong(at, key, what, v, err);
	d = v->valuedouble;
	if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi)
		return wrong(at, key, what, v, err);
	*out = (int64_t)d;
	return 1;
}

int mt_jint32(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	      int lo, int hi, int *out, struct mt_error *err)
{
	int64_t v;
	int rc = mt_jint(at, obj, key, required, lo, hi, &v, err);

	if (rc == 1)
		*out = (int)v;
	return rc;
}

int mt_jstr(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    char *out, size_t cap, struct mt_error *err)
{
	const cJSON *v = jsonr_member(obj, key);
	char what[64];

	snprintf(what, sizeof(what), "a string of at most %zu characters", cap - 1);
	if (!v || cJSON_IsNull(v))
		return required ? jsonr_missing(at, key, "a string", err) : 0;
	if (!cJSON_IsString(v) || strlen(v->valuestring) >= cap)
		return wrong(at, key, what, v, err);
	if (!text_ok(v->valuestring))
		return wrong(at, key, "text without control characters, in UTF-8", v, err);
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return 1;
}

int mt_jbool(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	     int *out, struct mt_error *err)
{
	const cJSON *v = jsonr_member(obj, key);

	if (!v || cJSON_IsNull(v))
		return required ? jsonr_missing(at, key, "true or false", err) : 0;
	if (!cJSON_IsBool(v))
		return wrong(at, key, "true or false", v, err);
	*out = cJSON_IsTrue(v) ? 1 : 0;
	return 1;
}

int mt_jobj(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    const cJSON **out, struct mt_error *err)
{
	const cJSON *v = jsonr_member(obj, key);

	if (!v || cJSON_IsNull(v))
		return required ? jsonr_missing(at, key, "an object", err) : 0;
	if (!cJSON_IsObject(v))
		return wrong(at, key, "an object", v, err);
	*out = v;
	return 1;
}

int mt_jarr(const struct mt_jpos *at, const cJSON *obj, const char *key, int required,
	    const cJSON **out, struct mt_error *err)
{
	const cJSON *v = jsonr_member(obj, key);

	if (!v || cJSON_IsNull(v))
		return required ? jsonr_missing(at, key, "an array", err) : 0;
	if (!cJSON_IsArray(v))
		return wrong(at, key, "an array", v, err);
	*out = v;
	return 1;
}

int mt_jkeys(const struct mt_jpos *at, const cJSON *obj, const char *const *keys,
	     struct mt_error *err)
{
	const cJSON *v;
	char p[256], list[1024];
	size_t i, n;

	for (v = obj ? obj->child : NULL; v; v = v->next) {
		for (i = 0; keys[i] && strcmp(keys[i], v->string ? v->string : ""); i++)
			;
		if (keys[i])
			continue;
		for (i = 0, n = 0, list[0] = 0; keys[i] && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "", keys[i]);
		return mt_error_set(err, MT_EINVAL,
				    "%s: field '%s': unknown field (expected one of %s)", at->file,
				    mt_jpath(p, sizeof(p), at->where, v->string ? v->string : ""),
				    list);
	}
	return MT_OK;
}

const cJSON *mt_jget(const cJSON *o, const char *path)
{
	const cJSON *v;

	for (;;) {
		size_t n = strcspn(path, ".");

		if (!cJSON_IsObject(o))
			return NULL;
		for (v = o->child; v; v = v->next)
			if (v->string && !strncmp(v->string, path, n) && !v->string[n])
				break;
		if (!v || !path[n])
			return v;
		o = v;
		path += n + 1;
	}
}

const char *mt_jget_strd(const cJSON *o, const char *path, const char *dflt)
{
	const cJSON *v = mt_jget(o, path);

	return cJSON_IsString(v) ? v->valuestring : dflt;
}

const char *mt_jget_str(const cJSON *o, const char *path)
{
	return mt_jget_strd(o, path, "");
}

double mt_jget_num(const cJSON *o, const char *path, double dflt)
{
	const cJSON *v = mt_jget(o, path);

	return cJSON_IsNumber(v) ? v->valuedouble : dflt;
}

int mt_jget_bool(const cJSON *o, const char *path, int dflt)
{
	const cJSON *v = mt_jget(o, path);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

int mt_jschema(const cJSON *doc, const char *want, const char *file, const char *opt,
	       struct mt_error *err)
{
	const char *s = mt_jget_strd(doc, "schema", NULL);

	if (!cJSON_IsObject(doc))
		return mt_error_set(err, MT_EINVAL, "%s: expected a JSON object (%s)", file, opt);
	if (!s)
		return mt_error_set(err, MT_EINVAL, "%s: field 'schema': missing; %s expects \"%s\"",
				    file, opt, want);
	if (strcmp(s, want))
		return mt_error_set(err, MT_EINVAL, "%s: field 'schema': %s expects \"%s\", got \"%s\"",
				    file, opt, want, s);
	return MT_OK;
}
