/* SPDX-License-Identifier: MIT */
/* shell: text written as a POSIX shell word, the one quoter of megatune.
 *
 * Every printer of a command line (advise's flags, overrides and launch
 * scripts, the report's copy blocks, check's diffs, validate's and tune's
 * commands) writes each word it prints through mt_shell_word(), so what is
 * pasted into a shell reads back as printed. */
#ifndef MT_SHELL_H
#define MT_SHELL_H

struct sbuf;

/* Append s to sb as one shell word: as it is when it is not empty and holds
 * only characters the shell reads literally anywhere in a word (letters,
 * digits and _ - + = . , / : @ %), else in single quotes, each ' inside
 * written '\'' (close the quotes, an escaped quote, reopen): the shell reads
 * back exactly s, whatever it holds ('' for ""). */
void mt_shell_word(struct sbuf *sb, const char *s);

/* 1 when s is not empty and holds only the characters mt_shell_word leaves
 * bare, spaces too when `spaces` is set: what the shell reads as it is
 * (split at the spaces). */
int mt_shell_literal(const char *s, int spaces);

#endif
