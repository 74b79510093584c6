/* SPDX-License-Identifier: MIT */
#include "shell.h"

#include <string.h>

#include "sbuf.h"

#define SHELL_SAFE                                                                                 \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%"

void mt_shell_word(struct sbuf *sb, const char *s)
{
	if (*s && !s[strspn(s, SHELL_SAFE)]) {
		sbuf_adds(sb, s);
		return;
	}
	sbuf_addc(sb, '\'');
	for (; *s; s++)
		if (*s == '\'')
			sbuf_adds(sb, "'\\''");
		else
			sbuf_addc(sb, *s);
	sbuf_addc(sb, '\'');
}
