/* SPDX-License-Identifier: MIT */
/* sbuf: growable string buffer. */
#include "sbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char sbuf_empty[1];

void sbuf_init(struct sbuf *sb)
{
	sb->buf = sbuf_empty;
	sb->len = sb->cap = 0;
	sb->failed = 0;
}

void sbuf_release(struct sbuf *sb)
{
	if (sb->cap)
		free(sb->buf);
	sbuf_init(sb);
}

int sbuf_grow(struct sbuf *sb, size_t extra)
{
	size_t want, ncap;
	char *nb;

	if (sb->failed)
		return -1;
	want = sb->len + extra + 1;
	if (want <= sb->cap)
		return 0;
	ncap = sb->cap ? sb->cap : 64;
	while (ncap < want)
		ncap *= 2;
	nb = sb->cap ? realloc(sb->buf, ncap) : malloc(ncap);
	if (!nb) {
		sb->failed = 1;
		return -1;
	}
	if (!sb->cap)
		nb[0] = '\0';
	sb->buf = nb;
	sb->cap = ncap;
	return 0;
}

void sbuf_add(struct sbuf *sb, const void *data, size_t n)
{
	if (sbuf_grow(sb, n))
		return;
	memcpy(sb->buf + sb->len, data, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sbuf_adds(struct sbuf *sb, const char *s)
{
	sbuf_add(sb, s, strlen(s));
}

void sbuf_addc(struct sbuf *sb, char c)
{
	sbuf_add(sb, &c, 1);
}

void sbuf_pad(struct sbuf *sb, char c, size_t n)
{
	if (sbuf_grow(sb, n))
		return;
	memset(sb->buf + sb->len, c, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (sb->failed)
		return;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || sbuf_grow(sb, (size_t)n))
		return;
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sbuf_addf(struct sbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sbuf_reset(struct sbuf *sb)
{
	sb->len = 0;
	if (sb->cap)
		sb->buf[0] = '\0';
}

char *sbuf_detach(struct sbuf *sb, size_t *len)
{
	char *r;

	if (len)
		*len = sb->len;
	if (!sb->cap) {
		r = malloc(1);
		if (r)
			r[0] = '\0';
	} else {
		r = sb->buf;
	}
	sbuf_init(sb);
	return r;
}
