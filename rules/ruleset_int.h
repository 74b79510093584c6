/* SPDX-License-Identifier: MIT */
/* ruleset_int: the memory and problems of a rule set (rules/ruleset.c) that
 * its loader (rules/ruleset_load.c) uses too; private to those two files. */
#ifndef MT_RULESET_INT_H
#define MT_RULESET_INT_H

#include <stddef.h>

#include "ruleset.h"

/* Room for `need` elements of `elem` bytes in *p (capacity *cap), doubling:
 * 0, or -1 out of memory with *p unchanged. */
int mt_ruleset_grow(void **p, int *cap, int need, size_t elem);

/* Free what a rule holds and zero it. */
void mt_rule_clear(struct mt_rule *r);

/* Record a problem at file:line (line 0: the file as a whole).  0, or
 * MT_ENOMEM. */
int mt_ruleset_problem(struct mt_ruleset *rs, char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* A copy of `file` the rule set keeps (its rules and problems point into
 * it), or NULL out of memory. */
char *mt_ruleset_keep_file(struct mt_ruleset *rs, const char *file);

#endif
