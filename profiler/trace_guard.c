/* SPDX-License-Identifier: MIT */
/* trace_guard: caps on string and number tokens, in one linear pass. */
#include "trace_guard.h"

#include <string.h>

/* Byte classes: inside a string only '"' and '\\' matter; outside, '"' and
 * the characters of a number. */
enum { B_PLAIN, B_QUOTE, B_BACKSLASH, B_NUM };

static unsigned char cls[256];

static void init_cls(void)
{
	const char *p;

	cls['"'] = B_QUOTE;
	cls['\\'] = B_BACKSLASH;
	for (p = "0123456789+-.eE"; *p; p++)
		cls[(unsigned char)*p] = B_NUM;
}

/* Inside a string: one byte that is not plain (or any byte once past the
 * cap, or inside an escape).  Returns 1 when the byte is kept. */
static int string_byte(struct mt_guard *g, unsigned char c)
{
	int was_esc = g->esc;

	if (g->esc) {
		/* \uXXXX: four hex digits after the 'u' */
		g->esc = g->esc == 1 && c == 'u' ? 5 : g->esc - 1;
		if (g->esc == 1)
			g->esc = 0;
	} else if (c == '\\') {
		g->esc = 1;
	} else if (c == '"') {
		g->in_str = 0;
		return 1; /* the closing quote always passes */
	}
	g->len++;
	if (!g->dropping && g->len > MT_TRACE_MAX_STR && (c & 0xc0) != 0x80 && !was_esc) {
		/* a clean boundary: the start of a character or of an escape */
		g->dropping = 1;
		g->cut++;
	}
	return !g->dropping;
}

/* Move buf[i..j) to buf[w..) (nothing to do until a first byte is dropped). */
static size_t trace_guard_keep(unsigned char *buf, size_t w, size_t i, size_t j)
{
	if (w != i)
		memmove(buf + w, buf + i, j - i);
	return w + (j - i);
}

static size_t precise(struct mt_guard *g, unsigned char *buf, size_t n)
{
	size_t i = 0, w = 0, j;

	while (i < n) {
		if (!g->in_str) {
			/* between strings: find the next quote; a number run is
			 * measured byte by byte only where the gap could hold a
			 * long one (or one carried over from the previous chunk) */
			const unsigned char *q = memchr(buf + i, '"', n - i);
			size_t run = g->in_num ? g->len : 0;

			j = q ? (size_t)(q - buf) : n;
			if (run || j - i > MT_TRACE_MAX_NUM) {
				size_t k;

				for (k = i; k < j; k++) {
					if (cls[buf[k]] != B_NUM) {
						run = 0;
					} else if (++run > MT_TRACE_MAX_NUM && !g->bad_num) {
						g->bad_num = 1;
						g->bad_num_at = g->off + k + 1 - run;
					}
				}
			} else if (j == n) {
				/* the chunk ends in the gap: carry its trailing run */
				size_t k = j;

				while (k > i && cls[buf[k - 1]] == B_NUM)
					k--;
				run = j - k;
			}
			g->in_num = j == n && run > 0;
			g->len = run;
			w = trace_guard_keep(buf, w, i, j);
			i = j;
			if (i < n) {
				g->in_str = 1;
				g->len = 0;
				g->esc = 0;
				g->dropping = 0;
				g->in_num = 0;
				buf[w++] = buf[i++];
			}
			continue;
		}
		if (!g->esc && !g->dropping) {
			/* the common case: plain string bytes below the cap */
			size_t room = MT_TRACE_MAX_STR - (g->len < MT_TRACE_MAX_STR ? g->len :
							   MT_TRACE_MAX_STR);
			size_t lim = n - i < room ? n : i + room;

			const unsigned char *q = memchr(buf + i, '"', lim - i);
			const unsigned char *b;

			j = q ? (size_t)(q - buf) : lim;
			b = memchr(buf + i, '\\', j - i);
			if (b)
				j = (size_t)(b - buf);
			w = trace_guard_keep(buf, w, i, j);
			g->len += j - i;
			i = j;
			if (i == n)
				break;
		}
		if (string_byte(g, buf[i]))
			buf[w++] = buf[i];
		i++;
	}
	g->off += n;
	return w;
}

/* Quotes in buf[0..n), eight bytes at a time: a byte equal to '"' becomes
 * zero after the xor, and the expression sets the high bit of exactly the
 * zero bytes. */
static size_t count_quotes(const unsigned char *buf, size_t n)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL, q = 0x2222222222222222ULL;
	size_t k = 0, nq = 0;

	for (; k + 8 <= n; k += 8) {
		uint64_t v, x, t;

		memcpy(&v, buf + k, 8);
		x = v ^ q;
		t = ~(((x & lo7) + lo7) | x | lo7);
		nq += (size_t)(((t >> 7) * 0x0101010101010101ULL) >> 56); /* the set bits */
	}
	for (; k < n; k++)
		nq += buf[k] == '"';
	return nq;
}

/* The common chunk, in a few fast passes: no backslash in it, and no
 * string that crosses the cap (a string or number wholly inside one chunk
 * costs yajl nothing: only tokens that span chunks are buffered).  Returns 0
 * when the chunk needs the precise pass. */
static int fast(struct mt_guard *g, const unsigned char *buf, size_t n)
{
	const unsigned char *first, *last = NULL;
	size_t nq = 0, k, run;

	if (g->esc || g->dropping || memchr(buf, '\\', n))
		return 0;
	first = memchr(buf, '"', n);
	if (g->in_str && g->len + (first ? (size_t)(first - buf) : n) > MT_TRACE_MAX_STR)
		return 0;
	if (!g->in_str && g->in_num) {
		/* a number carried over from the previous chunk */
		for (k = 0; k < n && cls[buf[k]] == B_NUM; k++)
			;
		if (g->len + k > MT_TRACE_MAX_NUM)
			return 0;
	}
	nq = count_quotes(buf, n);
	if (!nq) {
		if (g->in_str) {
			g->len += n;
		} else {
			for (k = n; k > 0 && cls[buf[k - 1]] == B_NUM; k--)
				;
			run = k == 0 && g->in_num ? g->len + n : n - k;
			g->in_num = run > 0;
			g->len = run;
		}
		return 1;
	}
	for (k = n; k > 0; k--)
		if (buf[k - 1] == '"') {
			last = buf + k - 1;
			break;
		}
	g->in_str ^= (int)(nq & 1);
	if (g->in_str) {
		g->len = (size_t)(buf + n - last - 1);
		g->in_num = 0;
	} else {
		for (k = n; k > (size_t)(last - buf) + 1 && cls[buf[k - 1]] == B_NUM; k--)
			;
		g->len = n - k;
		g->in_num = g->len > 0;
	}
	return 1;
}

size_t mt_guard_filter(struct mt_guard *g, unsigned char *buf, size_t n)
{
	if (!cls['"'])
		init_cls();
	if (fast(g, buf, n)) {
		g->off += n;
		return n;
	}
	return precise(g, buf, n);
}
