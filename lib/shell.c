/* SPDX-License-Identifier: MIT */
#include "shell.h"

#include <string.h>

#include "sbuf.h"

#define SHELL_SAFE                                                                                 \
	"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%"

int mt_shell_literal(const char *s, int spaces)
{
	return *s && !s[strspn(s, spaces ? SHELL_SAFE " " : SHELL_SAFE)];
}

void mt_shell_word(struct sbuf *sb, const char *s)
{
	if (mt_shell_literal(s, 0)) {
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
