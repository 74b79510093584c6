/* SPDX-License-Identifier: MIT */
/* jsonw: streaming JSON writer. */
#include "jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "text.h"

void jw_init(struct jw *w, struct sbuf *sb, int pretty)
{
	w->sb = sb;
	w->depth = 0;
	w->pretty = pretty;
	w->count[0] = 0;
}

void jw_quote(struct sbuf *sb, const char *s)
{
	const unsigned char *p;

	sbuf_addc(sb, '"');
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': sbuf_adds(sb, "\\\""); break;
		case '\\': sbuf_adds(sb, "\\\\"); break;
		case '\n': sbuf_adds(sb, "\\n"); break;
		case '\r': sbuf_adds(sb, "\\r"); break;
		case '\t': sbuf_adds(sb, "\\t"); break;
		case '\b': sbuf_adds(sb, "\\b"); break;
		case '\f': sbuf_adds(sb, "\\f"); break;
		default:
			if (*p < 0x20) {
				sbuf_addf(sb, "\\u%04x", *p);
			} else if (*p >= 0x80) {
				/* valid UTF-8 as it is; any other byte as U+FFFD */
				int k = mt_utf8_len(p, strnlen((const char *)p, 4));

				if (!k) {
					sbuf_adds(sb, "\\ufffd");
				} else {
					sbuf_add(sb, p, (size_t)k);
					p += k - 1;
				}
			} else {
				sbuf_addc(sb, (char)*p);
			}
		}
	}
	sbuf_addc(sb, '"');
}

static void newline(struct jw *w)
{
	if (!w->pretty)
		return;
	sbuf_addc(w->sb, '\n');
	sbuf_pad(w->sb, ' ', (size_t)w->depth * 2);
}

static void item(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		if (w->count[w->depth])
			sbuf_addc(w->sb, ',');
		if (w->count[w->depth] < 255)
			w->count[w->depth]++;
		newline(w);
	}
	if (key) {
		jw_quote(w->sb, key);
		sbuf_adds(w->sb, w->pretty ? ": " : ":");
	}
}

static void open(struct jw *w, const char *key, char o, char c)
{
	item(w, key);
	sbuf_addc(w->sb, o);
	if (w->depth + 1 < JW_MAX_DEPTH) {
		w->depth++;
		w->count[w->depth] = 0;
		w->close[w->depth] = c;
	}
}

void jw_obj(struct jw *w, const char *key) { open(w, key, '{', '}'); }
void jw_arr(struct jw *w, const char *key) { open(w, key, '[', ']'); }

void jw_end(struct jw *w)
{
	int had;
	char c;

	if (w->depth == 0)
		return;
	had = w->count[w->depth];
	c = w->close[w->depth];
	w->depth--;
	if (had)
		newline(w);
	sbuf_addc(w->sb, c);
	if (w->depth == 0 && w->pretty)
		sbuf_addc(w->sb, '\n');
}

void jw_str(struct jw *w, const char *key, const char *val)
{
	item(w, key);
	if (val)
		jw_quote(w->sb, val);
	else
		sbuf_adds(w->sb, "null");
}

void jw_int(struct jw *w, const char *key, int64_t val)
{
	item(w, key);
	sbuf_addf(w->sb, "%" PRId64, val);
}

void jw_num(struct jw *w, const char *key, double val, int sig)
{
	item(w, key);
	if (!isfinite(val))
		sbuf_adds(w->sb, "null");
	else if (val == 0)
		sbuf_adds(w->sb, "0");
	else
		sbuf_addf(w->sb, "%.*g", sig, val);
}

void jw_fix(struct jw *w, const char *key, double val, int dec)
{
	item(w, key);
	if (!isfinite(val))
		sbuf_adds(w->sb, "null");
	else
		sbuf_addf(w->sb, "%.*f", dec, val);
}

void jw_bool(struct jw *w, const char *key, int val)
{
	item(w, key);
	sbuf_adds(w->sb, val ? "true" : "false");
}

void jw_null(struct jw *w, const char *key)
{
	item(w, key);
	sbuf_adds(w->sb, "null");
}
