/* SPDX-License-Identifier: MIT */
/* sbuf: a growable, always NUL-terminated string buffer.
 *
 * Invariants: `buf` is never NULL after sbuf_init() (it points at a static ""
 * until the first append), `len` excludes the terminating NUL.  When an
 * allocation fails the buffer keeps what it had and sets `failed`; later
 * appends are ignored, so callers check `failed` once at the end.
 *
 *     struct sbuf sb = SBUF_INIT;
 *     sbuf_addf(&sb, "%d GPUs", n);
 *     ... use sb.buf ...
 *     sbuf_release(&sb);
 */
#ifndef MT_SBUF_H
#define MT_SBUF_H

#include <stdarg.h>
#include <stddef.h>

struct sbuf {
	char *buf;
	size_t len;
	size_t cap;   /* 0 while buf points at the static empty string */
	int failed;
};

extern char sbuf_empty[];
#define SBUF_INIT { sbuf_empty, 0, 0, 0 }

void sbuf_init(struct sbuf *sb);
/* Free the contents; the buffer is ready for reuse (as after sbuf_init). */
void sbuf_release(struct sbuf *sb);
/* Make room for `extra` more bytes; returns 0 or -1 (and sets failed). */
int sbuf_grow(struct sbuf *sb, size_t extra);
void sbuf_add(struct sbuf *sb, const void *data, size_t n);
void sbuf_adds(struct sbuf *sb, const char *s);
void sbuf_addc(struct sbuf *sb, char c);
void sbuf_addf(struct sbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sbuf_vaddf(struct sbuf *sb, const char *fmt, va_list ap);
/* Append `n` copies of `c`. */
void sbuf_pad(struct sbuf *sb, char c, size_t n);
void sbuf_reset(struct sbuf *sb); /* len = 0, keeps the allocation */
/* Take ownership of the heap string (never NULL; caller frees); sb is reset. */
char *sbuf_detach(struct sbuf *sb, size_t *len);

#endif
