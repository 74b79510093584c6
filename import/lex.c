/* SPDX-License-Identifier: MIT */
/* import: what the readers share: warnings, the tokenizer, mpirun tags,
 * printed numbers and their rounding, NCCL versions, test names, JSON fields
 * (internal.h). */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/jsonr.h"
#include "../lib/num.h"
#include "../lib/ver.h"
#include "../perfmodel/cluster.h"

void imp_vwarn(char ***w, int *n, const char *fmt, va_list ap)
{
	char buf[1024], *s, **a;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (*n >= 10000)
		return;
	s = strdup(buf);
	a = realloc(*w, (size_t)(*n + 1) * sizeof(*a));
	if (!s || !a) {
		free(s);
		if (a)
			*w = a;
		return;
	}
	a[(*n)++] = s;
	*w = a;
}

void imp_warnf(struct mt_import *im, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	imp_vwarn(&im->warn, &im->nwarn, fmt, ap);
	va_end(ap);
}

void imp_tokenize(const char *s, struct toks *t)
{
	t->n = 0;
	for (;;) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			return;
		if (t->n == MAXTOK) {
			t->n = MAXTOK + 1;
			return;
		}
		t->p[t->n] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		t->len[t->n] = (int)(s - t->p[t->n]);
		t->n++;
	}
}

/* Remove mpirun --tag-output prefixes ("[1,0]<stdout>:"), wherever they are,
 * and a leading srun --label ("0: "), keeping the other characters where
 * they were. */
int imp_strip_tags(char *s)
{
	char *q = s;
	int found = 0;

	while ((q = strchr(q, '['))) {
		char *r = q + 1;
		int d1 = 0, d2 = 0;
		while (isdigit((unsigned char)*r))
			r++, d1++;
		if (d1 && *r == ',') {
			r++;
			while (isdigit((unsigned char)*r))
				r++, d2++;
		}
		if (d1 && d2 && r[0] == ']' && r[1] == '<') {
			char *gt = strchr(r + 2, '>');
			if (gt && gt - r < 12 && gt[1] == ':') {
				memset(q, ' ', (size_t)(gt + 2 - q));
				q = gt + 2;
				found = 1;
				continue;
			}
		}
		q++;
	}
	{
		char *p = s;
		while (*p == ' ' || *p == '\t')
			p++;
		if (isdigit((unsigned char)*p)) {
			char *r = p;
			while (isdigit((unsigned char)*r))
				r++;
			if (r[0] == ':' && r[1] == ' ' && r - p <= 6)
				memset(s, ' ', (size_t)(r + 1 - s));
		}
	}
	return found;
}

/* A decimal number as the tools print them: [+-]digits[.digits][e[+-]digits]
 * (no hex, no inf or nan). */
static int number_syntax(const char *p, int len)
{
	int i = 0, digits = 0;

	if (i < len && (p[i] == '+' || p[i] == '-'))
		i++;
	while (i < len && isdigit((unsigned char)p[i]))
		i++, digits++;
	if (i < len && p[i] == '.') {
		i++;
		while (i < len && isdigit((unsigned char)p[i]))
			i++, digits++;
	}
	if (!digits)
		return 0;
	if (i < len && (p[i] == 'e' || p[i] == 'E')) {
		int ed = 0;
		i++;
		if (i < len && (p[i] == '+' || p[i] == '-'))
			i++;
		while (i < len && isdigit((unsigned char)p[i]))
			i++, ed++;
		if (!ed)
			return 0;
	}
	return i == len;
}

int imp_all_digits(const char *p, int len)
{
	int i;

	if (len <= 0 || len > 20)
		return 0;
	for (i = 0; i < len; i++)
		if (!isdigit((unsigned char)p[i]))
			return 0;
	return 1;
}

/* 0: a number; 1: "N/A" (v = NAN); -1: neither. */
int imp_parse_num(const char *p, int len, struct mt_imp_num *out)
{
	char buf[64];

	out->v = NAN;
	out->s[0] = 0;
	if (len == 3 && !memcmp(p, "N/A", 3)) {
		copys(out->s, sizeof(out->s), "N/A");
		return 1;
	}
	if (len <= 0 || len >= (int)sizeof(buf) || !number_syntax(p, len))
		return -1;
	memcpy(buf, p, (size_t)len);
	buf[len] = 0;
	if (mt_parse_num(buf, &out->v))
		return -1;
	copy(out->s, sizeof(out->s), p, (size_t)len);
	return 0;
}

/* Half a unit of the last printed digit of s ("321.10" -> 0.005,
 * "2e-07" -> 5e-8, "12646" -> 0.5). */
double imp_half_unit(const char *s)
{
	const char *dot = NULL, *e = NULL, *p;
	int dec = 0, ex = 0;

	for (p = s; *p; p++) {
		if (*p == '.')
			dot = p;
		else if (*p == 'e' || *p == 'E') {
			e = p;
			break;
		}
	}
	if (dot)
		dec = (int)((e ? e : p) - dot - 1);
	if (e)
		ex = toint(e + 1);
	if (ex - dec < -300 || ex - dec > 300)
		return 0;
	return 0.5 * pow(10, ex - dec);
}

void imp_num_set(struct mt_imp_num *n, double v, const char *fmt)
{
	n->v = v;
	if (isfinite(v))
		snprintf(n->s, sizeof(n->s), fmt, v);
	else
		copys(n->s, sizeof(n->s), "N/A");
}

/* NCCL_VERSION_CODE: major*10000 + minor*100 + patch from 2.9 on, before
 * that major*1000 + minor*100 + patch. */
void imp_nccl_code(int code, char *out, size_t cap)
{
	if (code <= 0 || code > 999999) {
		out[0] = 0;
		return;
	}
	if (code >= 20900)
		snprintf(out, cap, "%d.%d.%d", code / 10000, code % 10000 / 100, code % 100);
	else
		snprintf(out, cap, "%d.%d.%d", code / 1000, code % 1000 / 100, code % 100);
}

/* "2.26.6+cuda12.8 ..." -> "2.26.6" and "12.8" */
void imp_nccl_version_text(const char *s, char *nccl, size_t ncap, char *cuda, size_t ccap)
{
	size_t n = mt_ver_span(s), m;

	if (!n)
		return;
	copy(nccl, ncap, s, n);
	if (starts(s + n, "+cuda") && (m = mt_ver_span(s + n + 5)) > 0)
		copy(cuda, ccap, s + n + 5, m);
}

/* The collective an nccl-tests binary measures: "all_reduce_perf" ->
 * MT_COLL_ALL_REDUCE; -2 a test with no profile curve (reduce, gather, ...);
 * -1 not a test name. */
int imp_op_of_test(const char *name)
{
	static const struct {
		const char *test;
		int op;
	} map[] = {
		{ "all_reduce", MT_COLL_ALL_REDUCE }, { "all_gather", MT_COLL_ALL_GATHER },
		{ "reduce_scatter", MT_COLL_REDUCE_SCATTER }, { "alltoall", MT_COLL_ALL_TO_ALL },
		{ "sendrecv", MT_COLL_SEND_RECV }, { "broadcast", MT_COLL_BROADCAST },
		{ "reduce", -2 }, { "gather", -2 }, { "scatter", -2 }, { "hypercube", -2 },
		{ "alltoallv", -2 }, { "alltoallv2", -2 }, { "bisection", -2 },
		{ "all_reduce_group", -2 },
	};
	char buf[64];
	char *p;
	size_t i;

	copys(buf, sizeof(buf), base_name(name));
	p = strstr(buf, "_perf");
	if (!p)
		return -1;
	*p = 0;
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(buf, map[i].test))
			return map[i].op;
	return -2;
}

int imp_jtype_error(struct mt_error *err, const char *path, const char *where,
		       const char *what, const cJSON *v)
{
	return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected %s, got %s", path, where, what,
			    v ? mt_json_type(v) : "nothing");
}

int imp_jstring(const cJSON *o, const char *key, char *out, size_t cap)
{
	const cJSON *v = mt_jget(o, key);

	if (!cJSON_IsString(v))
		return 0;
	copys(out, cap, v->valuestring);
	return 1;
}

int imp_each_line(struct mt_import *im, const char *text, size_t len, int *lineno,
		  int (*fn)(void *state, char *line), void *state, struct mt_error *err)
{
	const char *p = text, *end = text + len;
	char *buf = NULL;
	size_t cap = 0;
	int rc = MT_OK;

	while (p < end && rc == MT_OK) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (l + 1 > cap) {
			char *b = realloc(buf, l + 1);
			if (!b) {
				rc = mt_error_set(err, MT_ENOMEM, "%s: out of memory", im->path);
				break;
			}
			buf = b;
			cap = l + 1;
		}
		memcpy(buf, p, l);
		buf[l] = 0;
		(*lineno)++;
		p = nl ? nl + 1 : end;
		rc = fn(state, buf);
	}
	free(buf);
	return rc;
}
