/* SPDX-License-Identifier: MIT */
/* text: terminal escaping and UTF-8 checks for untrusted text. */
#include "text.h"

#include <stdio.h>
#include <string.h>

#include "sbuf.h"

int mt_utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0], cp;
	int len, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07;
	else
		return 0;
	if ((size_t)len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

int mt_utf8_valid(const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		int k = mt_utf8_len(p + i, n - i);

		if (!k)
			return 0;
		i += (size_t)k;
	}
	return 1;
}

void mt_term_clean(struct sbuf *sb, const char *s, size_t n, int keep_newline)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned c = p[i];
		int k = mt_utf8_len(p + i, n - i);

		if (c == '\n' || c == '\t') {
			if (keep_newline)
				sbuf_addc(sb, (char)c);
			else
				sbuf_adds(sb, c == '\n' ? "\\n" : "\\t");
			i++;
		} else if (c == '\r') {
			sbuf_adds(sb, "\\r");
			i++;
		} else if (c < 0x20 || c == 0x7f || !k) {
			sbuf_addf(sb, "\\x%02x", c);
			i++;
		} else if (k == 2 && c == 0xc2 && p[i + 1] < 0xa0) {
			/* C1 controls (U+0080..U+009F): 8-bit CSI and friends */
			sbuf_addf(sb, "\\u%04x", (unsigned)p[i + 1]);
			i += 2;
		} else {
			sbuf_add(sb, p + i, (size_t)k);
			i += (size_t)k;
		}
	}
}

const char *mt_text_escape(char *buf, size_t cap, const char *s)
{
	struct sbuf sb = SBUF_INIT;

	if (!cap)
		return buf;
	mt_term_clean(&sb, s ? s : "", s ? strlen(s) : 0, 0);
	if (sb.failed || !sb.buf) {
		buf[0] = 0;
	} else if (sb.len < cap) {
		memcpy(buf, sb.buf, sb.len + 1);
	} else {
		size_t k = cap > 4 ? cap - 4 : 0;

		/* do not cut a UTF-8 sequence in two */
		while (k > 0 && ((unsigned char)sb.buf[k] & 0xc0) == 0x80)
			k--;
		memcpy(buf, sb.buf, k);
		memcpy(buf + k, "...", cap > 4 ? 4 : 0);
		if (cap <= 4)
			buf[0] = 0;
	}
	sbuf_release(&sb);
	return buf;
}

int mt_text_line(const char *buf, size_t len, size_t *at, char *ln, size_t cap)
{
	const char *p = buf + *at, *nl;
	size_t n;

	if (*at >= len)
		return 0;
	nl = memchr(p, '\n', len - *at);
	n = nl ? (size_t)(nl - p) : len - *at;
	*at += n + (nl != NULL);
	if (cap)
		snprintf(ln, cap, "%.*s", (int)(n < cap ? n : cap - 1), p);
	return 1;
}
