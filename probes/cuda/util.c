/* SPDX-License-Identifier: MIT */
/* util: error text, clock and string helpers of the CUDA backends (mtc.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "mtc.h"

int mtc_fail(struct mt_error *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

double mtc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void mtc_copy(char *dst, size_t n, const char *src)
{
	size_t len;

	if (!n)
		return;
	len = strnlen(src, n - 1);
	memcpy(dst, src, len);
	dst[len] = 0;
}

void mtc_copy_json(char *dst, size_t n, const char *src)
{
	size_t i;

	mtc_copy(dst, n, src);
	for (i = 0; dst[i]; i++) {
		unsigned char ch = (unsigned char)dst[i];

		if (ch == '"')
			dst[i] = '\'';
		else if (ch == '\\')
			dst[i] = '/';
		else if (ch < 0x20 || ch == 0x7f)
			dst[i] = ' ';
	}
}

void mtc_cat(char *buf, size_t n, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (!n || *pos >= n - 1)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *pos, n - *pos, fmt, ap);
	va_end(ap);
	if (w < 0)
		return;
	*pos += (size_t)w;
	if (*pos > n - 1)
		*pos = n - 1;
}

void mtc_member(char *buf, size_t n, size_t *pos, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int w;
	size_t need;

	if (!n)
		return;
	va_start(ap, fmt);
	w = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (w < 0 || (size_t)w >= sizeof(tmp))
		return;
	need = (size_t)w + (*pos ? 2 : 0);
	if (*pos + need >= n)
		return;
	if (*pos) {
		memcpy(buf + *pos, ", ", 2);
		*pos += 2;
	}
	memcpy(buf + *pos, tmp, (size_t)w + 1);
	*pos += (size_t)w;
}
