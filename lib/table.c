/* SPDX-License-Identifier: MIT */
/* table: fixed-width text tables. */
#include "table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mt_table_init(struct mt_table *t)
{
	memset(t, 0, sizeof(*t));
}

void mt_table_col(struct mt_table *t, int i, const char *head, const char *unit, int left)
{
	if (i < 0 || i >= MT_TABLE_MAXCOLS)
		return;
	t->head[i] = head;
	t->unit[i] = unit;
	t->left[i] = left;
	if (i + 1 > t->ncols)
		t->ncols = i + 1;
}

void mt_table_cell(struct mt_table *t, const char *fmt, ...)
{
	struct sbuf sb = SBUF_INIT;
	va_list ap;

	if (t->failed)
		return;
	if (t->ncells == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		char **nc = realloc(t->cells, ncap * sizeof(*nc));
		if (!nc) {
			t->failed = 1;
			return;
		}
		t->cells = nc;
		t->cap = ncap;
	}
	va_start(ap, fmt);
	sbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (sb.failed) {
		t->failed = 1;
		sbuf_release(&sb);
		return;
	}
	t->cells[t->ncells++] = sbuf_detach(&sb, NULL);
}

static size_t width(const char *s)
{
	size_t n = 0;

	/* count UTF-8 code points, not bytes */
	for (; s && *s; s++)
		if (((unsigned char)*s & 0xC0) != 0x80)
			n++;
	return n;
}

static void table_put(struct sbuf *sb, const char *s, size_t w, int left)
{
	size_t n = width(s);

	if (!left && n < w)
		sbuf_pad(sb, ' ', w - n);
	sbuf_adds(sb, s ? s : "");
	if (left && n < w)
		sbuf_pad(sb, ' ', w - n);
}

static void row(struct sbuf *sb, const struct mt_table *t, const size_t *w,
		const char *const *cells, const char *lead)
{
	int i;
	size_t end = sb->len;

	sbuf_adds(sb, lead);
	for (i = 0; i < t->ncols; i++) {
		if (i)
			sbuf_adds(sb, "  ");
		table_put(sb, cells[i], w[i], t->left[i]);
	}
	/* strip trailing blanks */
	while (sb->len > end && sb->buf[sb->len - 1] == ' ')
		sb->len--;
	sb->buf[sb->len] = '\0';
	sbuf_addc(sb, '\n');
}

void mt_table_render(const struct mt_table *t, struct sbuf *sb, const char *indent, int flags)
{
	size_t w[MT_TABLE_MAXCOLS] = { 0 };
	size_t nrows, r;
	int i, has_units = 0;
	char lead[64];

	if (!t->ncols)
		return;
	nrows = t->ncells / (size_t)t->ncols;
	for (i = 0; i < t->ncols; i++) {
		if (width(t->head[i]) > w[i])
			w[i] = width(t->head[i]);
		if (t->unit[i]) {
			has_units = 1;
			if (width(t->unit[i]) > w[i])
				w[i] = width(t->unit[i]);
		}
		for (r = 0; r < nrows; r++) {
			size_t cw = width(t->cells[r * (size_t)t->ncols + (size_t)i]);
			if (cw > w[i])
				w[i] = cw;
		}
	}
	snprintf(lead, sizeof(lead), "%s%s", indent ? indent : "",
		 (flags & MT_TABLE_HASH) ? "# " : "");
	row(sb, t, w, t->head, lead);
	if (has_units) {
		const char *u[MT_TABLE_MAXCOLS];
		for (i = 0; i < t->ncols; i++)
			u[i] = t->unit[i] ? t->unit[i] : "";
		row(sb, t, w, u, lead);
	}
	if (flags & MT_TABLE_RULE) {
		size_t total = 0;
		for (i = 0; i < t->ncols; i++)
			total += w[i] + (i ? 2 : 0);
		sbuf_adds(sb, lead);
		sbuf_pad(sb, '-', total);
		sbuf_addc(sb, '\n');
	}
	snprintf(lead, sizeof(lead), "%s%s", indent ? indent : "",
		 (flags & MT_TABLE_HASH) ? "  " : "");
	for (r = 0; r < nrows; r++)
		row(sb, t, w, (const char *const *)&t->cells[r * (size_t)t->ncols], lead);
}

void mt_table_release(struct mt_table *t)
{
	size_t i;

	for (i = 0; i < t->ncells; i++)
		free(t->cells[i]);
	free(t->cells);
	mt_table_init(t);
}
