/* SPDX-License-Identifier: MIT */
/* template: messages with {expression:format} holes, compiled once with the
 * expression compiler and rendered against a run's facts. */
#include "expr.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"

enum fmt {
	FMT_AUTO, FMT_PCT, FMT_GIB, FMT_BYTES, FMT_PARAMS, FMT_S, FMT_MS, FMT_US, FMT_GBPS,
	FMT_TFLOPS, FMT_X, FMT_INT, FMT_FIXED, FMT_ON, FMT_VS, FMT_VER
};

struct part {
	char *text;             /* literal text, or NULL for a hole */
	struct mt_expr *e;
	int fmt, prec;
};

struct mt_tmpl {
	struct part *parts;
	int n;
	int stage;
	unsigned knobs;
	int uses_best;
};

void mt_tmpl_free(struct mt_tmpl *t)
{
	int i;

	if (!t)
		return;
	for (i = 0; i < t->n; i++) {
		free(t->parts[i].text);
		mt_expr_free(t->parts[i].e);
	}
	free(t->parts);
	free(t);
}

static int parse_fmt(const char *s, size_t n, int *fmt, int *prec)
{
	static const struct { const char *name; int fmt; } names[] = {
		{ "pct", FMT_PCT }, { "gib", FMT_GIB }, { "bytes", FMT_BYTES },
		{ "params", FMT_PARAMS }, { "s", FMT_S }, { "ms", FMT_MS }, { "us", FMT_US },
		{ "gbps", FMT_GBPS }, { "tflops", FMT_TFLOPS }, { "x", FMT_X }, { "int", FMT_INT },
		{ "on", FMT_ON }, { "vs", FMT_VS }, { "ver", FMT_VER },
	};
	unsigned i;

	*prec = -1;
	if (n >= 2 && s[0] == '.' && isdigit((unsigned char)s[1]) && n == 2) {
		*fmt = FMT_FIXED;
		*prec = s[1] - '0';
		return 0;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i].name) == n && !memcmp(names[i].name, s, n)) {
			*fmt = names[i].fmt;
			return 0;
		}
	return -1;
}

static int add_part(struct mt_tmpl *t, int *cap)
{
	if (t->n == *cap) {
		int c = *cap ? 2 * *cap : 8;
		struct part *p = realloc(t->parts, (size_t)c * sizeof(*p));
		if (!p)
			return -1;
		t->parts = p;
		*cap = c;
	}
	memset(&t->parts[t->n], 0, sizeof(t->parts[0]));
	return t->n++;
}

struct mt_tmpl *mt_tmpl_compile(const char *src, size_t n, struct mt_cerr *ce)
{
	struct mt_tmpl *t = calloc(1, sizeof(*t));
	struct sbuf text = SBUF_INIT;
	int cap = 0;
	size_t i = 0;

	if (!t)
		goto nomem;
	while (i <= n) {
		if (i == n || (src[i] == '{' && !(i + 1 < n && src[i + 1] == '{'))) {
			int k;
			if (text.len) {
				if (text.failed || (k = add_part(t, &cap)) < 0)
					goto nomem;
				t->parts[k].text = sbuf_detach(&text, NULL);
				if (!t->parts[k].text)
					goto nomem;
			}
			if (i == n)
				break;
			{
				/* the hole: up to the matching '}' outside strings and
				 * parentheses; a format after the last top-level ':' */
				size_t j = i + 1, colon = 0;
				int depth = 0, instr = 0;
				struct mt_cerr sub;

				for (; j < n; j++) {
					char ch = src[j];
					if (instr) {
						if (ch == '\\')
							j++;
						else if (ch == '"')
							instr = 0;
						continue;
					}
					if (ch == '"')
						instr = 1;
					else if (ch == '(')
						depth++;
					else if (ch == ')')
						depth--;
					else if (ch == ':' && depth == 0)
						colon = j;
					else if (ch == '}' && depth == 0)
						break;
				}
				if (j >= n) {
					if (ce) {
						ce->col = (int)i;
						snprintf(ce->msg, sizeof(ce->msg), "'{' without a matching '}'");
					}
					goto fail;
				}
				if ((k = add_part(t, &cap)) < 0)
					goto nomem;
				if (colon) {
					if (parse_fmt(src + colon + 1, j - colon - 1, &t->parts[k].fmt,
						      &t->parts[k].prec)) {
						if (ce) {
							ce->col = (int)colon + 1;
							snprintf(ce->msg, sizeof(ce->msg),
								 "unknown format '%.*s'; expected pct, gib, "
								 "bytes, params, s, ms, us, gbps, tflops, x, "
								 "int, on, vs, ver or .N", (int)(j - colon - 1),
								 src + colon + 1);
						}
						goto fail;
					}
				}
				t->parts[k].e = mt_expr_compile(src + i + 1, (colon ? colon : j) - i - 1, &sub);
				if (!t->parts[k].e) {
					if (ce) {
						ce->col = (int)(i + 1) + sub.col;
						snprintf(ce->msg, sizeof(ce->msg), "%s", sub.msg);
					}
					goto fail;
				}
				if (mt_expr_stage(t->parts[k].e) > t->stage)
					t->stage = mt_expr_stage(t->parts[k].e);
				t->uses_best |= mt_expr_uses_best(t->parts[k].e);
				t->knobs |= mt_expr_knobs(t->parts[k].e);
				i = j + 1;
			}
			continue;
		}
		if (src[i] == '}' && !(i + 1 < n && src[i + 1] == '}')) {
			if (ce) {
				ce->col = (int)i;
				snprintf(ce->msg, sizeof(ce->msg), "'}' without a '{' (write }} for a brace)");
			}
			goto fail;
		}
		sbuf_addc(&text, src[i]);
		i += (src[i] == '{' || src[i] == '}') ? 2 : 1;
	}
	if (text.failed)
		goto nomem;
	sbuf_release(&text);
	return t;
nomem:
	if (ce) {
		ce->col = 0;
		snprintf(ce->msg, sizeof(ce->msg), "out of memory");
	}
fail:
	sbuf_release(&text);
	mt_tmpl_free(t);
	return NULL;
}

int mt_tmpl_stage(const struct mt_tmpl *t) { return t->stage; }
int mt_tmpl_uses_best(const struct mt_tmpl *t) { return t->uses_best; }
unsigned mt_tmpl_knobs(const struct mt_tmpl *t) { return t->knobs; }

void mt_tmpl_each_fact(const struct mt_tmpl *t, void (*fn)(int fact, void *ctx), void *ctx)
{
	int i, k, n;

	for (i = 0; i < t->n; i++) {
		const int *f;
		if (!t->parts[i].e)
			continue;
		f = mt_expr_facts(t->parts[i].e, &n);
		for (k = 0; k < n; k++)
			fn(f[k], ctx);
	}
}

/* a human-readable scale: 3 significant digits */
static void scaled(struct sbuf *sb, double x, double base, const char *const *units, int nu)
{
	int u = 0;
	double a = fabs(x);

	while (u + 1 < nu && a >= base) {
		a /= base;
		x /= base;
		u++;
	}
	sbuf_addf(sb, a >= 100 || u == 0 ? "%.0f %s" : a >= 10 ? "%.1f %s" : "%.2f %s", x, units[u]);
}

static void fmt_num(struct sbuf *sb, double x, int fmt, int prec)
{
	static const char *const bytes[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	static const char *const params[] = { "", "K", "M", "B", "T" };

	if (isnan(x)) {
		sbuf_adds(sb, "n/a");
		return;
	}
	if (isinf(x)) {
		sbuf_adds(sb, x > 0 ? "inf" : "-inf");
		return;
	}
	switch (fmt) {
	case FMT_PCT: sbuf_addf(sb, "%.1f%%", 100 * x); break;
	case FMT_GIB: sbuf_addf(sb, "%.1f GiB", x / 1073741824.0); break;
	case FMT_BYTES: scaled(sb, x, 1024, bytes, 5); break;
	case FMT_PARAMS: {
		double a = fabs(x);
		int u = 0;
		while (u < 4 && a >= 1000) {
			a /= 1000;
			u++;
		}
		sbuf_addf(sb, a >= 100 || u == 0 ? "%.0f%s" : a >= 10 ? "%.1f%s" : "%.2f%s",
			  x < 0 ? -a : a, params[u]);
		break;
	}
	case FMT_S:
		if (x == 0)
			sbuf_adds(sb, "0 s");
		else if (fabs(x) >= 1)
			sbuf_addf(sb, "%.3f s", x);
		else if (fabs(x) >= 1e-3)
			sbuf_addf(sb, "%.2f ms", x * 1e3);
		else
			sbuf_addf(sb, "%.1f us", x * 1e6);
		break;
	case FMT_MS: sbuf_addf(sb, "%.2f ms", x * 1e3); break;
	case FMT_US: sbuf_addf(sb, "%.1f us", x * 1e6); break;
	case FMT_GBPS: sbuf_addf(sb, fabs(x) >= 10 ? "%.0f GB/s" : "%.1f GB/s", x); break;
	case FMT_TFLOPS: sbuf_addf(sb, "%.0f TFLOP/s", x); break;
	case FMT_X: sbuf_addf(sb, "%.2fx", x); break;
	case FMT_INT: sbuf_addf(sb, "%.0f", x); break;
	case FMT_FIXED: sbuf_addf(sb, "%.*f", prec, x); break;
	case FMT_ON: sbuf_adds(sb, x != 0 ? "on" : "off"); break;
	case FMT_VER: /* a version code: 22105 -> "2.21.5" */
		if (x < 0 || x >= 1e9) {
			sbuf_addf(sb, "%.0f", x);
			break;
		}
		sbuf_addf(sb, "%ld.%ld", (long)x / 10000, (long)x / 100 % 100);
		if ((long)x % 100)
			sbuf_addf(sb, ".%ld", (long)x % 100);
		break;
	case FMT_VS: /* a relative difference: 0.031 -> "3.1% slower" */
		if (x >= 0.0005)
			sbuf_addf(sb, "%.1f%% slower", 100 * x);
		else if (x <= -0.0005)
			sbuf_addf(sb, "%.1f%% faster", -100 * x);
		else
			sbuf_adds(sb, "as fast");
		break;
	default:
		if (x == floor(x) && fabs(x) < 1e15)
			sbuf_addf(sb, "%.0f", x);
		else
			sbuf_addf(sb, "%.4g", x);
		break;
	}
}

static void fmt_val(struct sbuf *sb, struct mt_val v, int fmt, int prec, int fact)
{
	if (v.s) {
		sbuf_adds(sb, v.s);
		return;
	}
	if (fmt == FMT_AUTO && fact >= 0 && !isnan(v.n)) {
		if (mt_facts[fact].type == MT_FT_BOOL) {
			sbuf_adds(sb, v.n != 0 ? "on" : "off");
			return;
		}
		if (mt_facts[fact].type == MT_FT_ENUM) {
			const char *const *e = mt_facts[fact].enums;
			int i, k = (int)v.n;
			for (i = 0; e[i] && i < k; i++)
				;
			if (e[i] && i == k) {
				sbuf_adds(sb, e[i]);
				return;
			}
		}
	}
	fmt_num(sb, v.n, fmt, prec);
}

void mt_val_format(struct sbuf *sb, struct mt_val v, const char *fmt, int fact)
{
	int f = FMT_AUTO, prec = -1;

	if (fmt && parse_fmt(fmt, strlen(fmt), &f, &prec))
		f = FMT_AUTO;
	fmt_val(sb, v, f, prec, fact);
}

void mt_tmpl_render(struct mt_tmpl *t, const struct mt_env *env, struct sbuf *sb)
{
	int i;

	for (i = 0; i < t->n; i++) {
		struct part *p = &t->parts[i];
		if (p->text)
			sbuf_adds(sb, p->text);
		else if (p->e)
			fmt_val(sb, mt_expr_eval(p->e, env), p->fmt, p->prec, mt_expr_bare_fact(p->e));
	}
}
