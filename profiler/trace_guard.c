/* SPDX-License-Identifier: MIT */
/* trace_guard: caps on string and number tokens, in one linear pass. */
#include "trace_guard.h"

static int num_char(unsigned char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

size_t mt_guard_filter(struct mt_guard *g, unsigned char *buf, size_t n)
{
	size_t i, w = 0;
	int was_esc;

	for (i = 0; i < n; i++, g->off++) {
		unsigned char c = buf[i];

		if (!g->in_str) {
			if (c == '"') {
				g->in_str = 1;
				g->len = 0;
				g->esc = 0;
				g->dropping = 0;
				g->in_num = 0;
			} else if (num_char(c)) {
				if (!g->in_num) {
					g->in_num = 1;
					g->len = 0;
				}
				if (++g->len > MT_TRACE_MAX_NUM && !g->bad_num) {
					g->bad_num = 1;
					g->bad_num_at = g->off + 1 - g->len;
				}
			} else {
				g->in_num = 0;
			}
			buf[w++] = c;
			continue;
		}
		/* inside a string */
		was_esc = g->esc;
		if (g->esc) {
			/* \uXXXX: four hex digits after the 'u' */
			g->esc = g->esc == 1 && c == 'u' ? 5 : g->esc - 1;
			if (g->esc == 1)
				g->esc = 0;
		} else if (c == '\\') {
			g->esc = 1;
		} else if (c == '"') {
			g->in_str = 0;
			buf[w++] = c; /* the closing quote always passes */
			continue;
		}
		g->len++;
		if (!g->dropping && g->len > MT_TRACE_MAX_STR && (c & 0xc0) != 0x80 && !was_esc) {
			/* a clean boundary: the start of a character or of an escape */
			g->dropping = 1;
			g->cut++;
		}
		if (!g->dropping)
			buf[w++] = c;
	}
	return w;
}
