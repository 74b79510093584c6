/* SPDX-License-Identifier: MIT */
/* out: the trace file writer of libmegatune_trace.so (the contract is in out.h). */
#include "out.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int g_fd = -1;
char g_path[PATH_MAX];
char *g_out;
size_t g_out_len;
int g_write_failed;
uint64_t g_records;

void log_line(const char *fmt, ...)
{
	char line[1024];
	size_t n = strlen(LOG_PREFIX);
	memcpy(line, LOG_PREFIX, n);
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(line + n, sizeof line - n - 1, fmt, ap);
	va_end(ap);
	if (k < 0)
		k = 0;
	n += (size_t)k < sizeof line - n - 1 ? (size_t)k : sizeof line - n - 2;
	line[n++] = '\n';
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(STDERR_FILENO, line + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

/* strict non-negative integer from the environment; -1 when unset or malformed */
long env_nonneg(const char *name)
{
	const char *s = getenv(name);
	if (s == NULL || *s == '\0')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0 || v > INT_MAX)
		return -1;
	return v;
}

int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX];
	size_t n = strlen(dir);
	if (n == 0 || n >= sizeof tmp) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, dir, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0777) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

/* ---- output (caller holds g_lock) ---------------------------------------------------- */

void out_flush(void)
{
	size_t off = 0;
	while (off < g_out_len && g_fd >= 0 && !g_write_failed) {
		ssize_t w = write(g_fd, g_out + off, g_out_len - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			g_write_failed = 1;
			log_line("writing %s failed: %s; the trace stops here", g_path,
				 w < 0 ? strerror(errno) : "no progress");
			break;
		}
		off += (size_t)w;
	}
	g_out_len = 0;
}

void out_raw(const char *s, size_t n)
{
	while (n > 0) {
		if (g_out_len == OUT_BUF_SIZE)
			out_flush();
		size_t room = OUT_BUF_SIZE - g_out_len;
		size_t k = n < room ? n : room;
		memcpy(g_out + g_out_len, s, k);
		g_out_len += k;
		s += k;
		n -= k;
	}
}

void out_s(const char *s)
{
	out_raw(s, strlen(s));
}

void out_u64(uint64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "%" PRIu64, v);
	if (n > 0)
		out_raw(b, (size_t)n);
}

void out_i64(int64_t v)
{
	char b[24];
	int n = snprintf(b, sizeof b, "%" PRId64, v);
	if (n > 0)
		out_raw(b, (size_t)n);
}

/* length of a valid UTF-8 sequence at s (0 when invalid) */
static size_t utf8_len(const unsigned char *s)
{
	unsigned c = s[0];
	size_t n;
	unsigned min;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, min = 0x80;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned cp = c & (0x3fu >> (n - 1));
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3fu);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* a JSON string, quoted */
void out_json(const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	out_raw("\"", 1);
	while (*s) {
		const unsigned char *run = s;
		while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
			s++;
		if (s > run)
			out_raw((const char *)run, (size_t)(s - run));
		if (*s == '\0')
			break;
		char esc[8];
		if (*s == '"' || *s == '\\') {
			esc[0] = '\\', esc[1] = (char)*s;
			out_raw(esc, 2);
			s++;
		} else if (*s < 0x20) {
			const char *named = *s == '\n' ? "\\n" : *s == '\t' ? "\\t" : *s == '\r' ? "\\r" : NULL;
			if (named) {
				out_s(named);
			} else {
				snprintf(esc, sizeof esc, "\\u%04x", *s);
				out_raw(esc, 6);
			}
			s++;
		} else {
			size_t n = utf8_len(s);
			if (n == 0) {
				out_s("\\ufffd");
				s++;
			} else {
				out_raw((const char *)s, n);
				s += n;
			}
		}
	}
	out_raw("\"", 1);
}

/* ,"key":value */
void kv_u64(const char *key, uint64_t v)
{
	out_raw(",\"", 2);
	out_s(key);
	out_raw("\":", 2);
	out_u64(v);
}

void kv_str(const char *key, const char *v)
{
	out_raw(",\"", 2);
	out_s(key);
	out_raw("\":", 2);
	out_json(v);
}

void kv_dim3(const char *key, int32_t x, int32_t y, int32_t z)
{
	out_raw(",\"", 2);
	out_s(key);
	out_raw("\":[", 3);
	out_i64(x);
	out_raw(",", 1);
	out_i64(y);
	out_raw(",", 1);
	out_i64(z);
	out_raw("]", 1);
}

void line_begin(const char *type, const char *name)
{
	out_s("{\"t\":");
	out_json(type);
	kv_str("name", name);
}

void line_end(void)
{
	out_raw("}\n", 2);
	g_records++;
}
