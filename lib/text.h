/* SPDX-License-Identifier: MIT */
/* text: untrusted text made safe to show, and read line by line.
 *
 * Names, keys and rule text come from input files and command lines.  Before
 * they reach a terminal, control characters (escape sequences included) are
 * written as visible escapes; before they reach a JSON or HTML output, bytes
 * that are not valid UTF-8 are replaced by U+FFFD.  Every writer of text uses
 * these helpers (lib/jsonw.c, reports/svg.c, cli/common.c). */
#ifndef MT_TEXT_H
#define MT_TEXT_H

#include <stddef.h>

struct sbuf;

/* Length (1 to 4) of the valid UTF-8 sequence at s (n bytes available), or 0
 * when the bytes there are not valid UTF-8 (overlong forms, surrogates and
 * code points above U+10FFFF are invalid). */
int mt_utf8_len(const unsigned char *s, size_t n);

/* 1 when the n bytes at s are all valid UTF-8. */
int mt_utf8_valid(const char *s, size_t n);

/* Append the n bytes at s to sb for a terminal: C0 controls (ESC included),
 * DEL, C1 controls (U+0080 to U+009F) and invalid UTF-8 bytes written as
 * \xNN (\n, \t, \r as such); with `keep_newline`, '\n' and '\t' pass as
 * they are (whole messages and tables, whose layout megatune made). */
void mt_term_clean(struct sbuf *sb, const char *s, size_t n, int keep_newline);

/* The same into buf[cap] for one name or key (never keeps newlines),
 * truncated with "..." when it does not fit; returns buf. */
const char *mt_text_escape(char *buf, size_t cap, const char *s);

/* The next line of buf[len] from *at: its bytes without the '\n' into
 * ln[cap] (cut to fit), *at moved past it; 0 when *at is at the end (a last
 * line without its newline is a line; the end after a newline is none). */
int mt_text_line(const char *buf, size_t len, size_t *at, char *ln, size_t cap);

#endif
