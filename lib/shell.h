/* SPDX-License-Identifier: MIT */
/* shell: text written as a POSIX shell word, the one quoter of megatune.
 *
 * Callers decide when a word needs quoting (job/flags.c when it holds a
 * character the shell would expand or split, validate/runner.c's
 * mt_shell_quote() unless it holds only safe characters); this writes it
 * quoted. */
#ifndef MT_SHELL_H
#define MT_SHELL_H

struct sbuf;

/* Append s to sb in single quotes, each ' inside written '\'' (close the
 * quotes, an escaped quote, reopen), every other byte as it is: the shell
 * reads back exactly s, whatever it holds, as one word ('' for ""). */
void mt_shell_squote(struct sbuf *sb, const char *s);

#endif
