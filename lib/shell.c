/* SPDX-License-Identifier: MIT */
#include "shell.h"

#include "sbuf.h"

void mt_shell_squote(struct sbuf *sb, const char *s)
{
	sbuf_addc(sb, '\'');
	for (; *s; s++)
		if (*s == '\'')
			sbuf_adds(sb, "'\\''");
		else
			sbuf_addc(sb, *s);
	sbuf_addc(sb, '\'');
}
