/* SPDX-License-Identifier: MIT */
/* near: the known name an unknown one resembles, for the "did you mean" of
 * every reader (a config key, a Bridge or verl key, a Megatron-LM flag, a
 * rule's fact).
 *
 * The distance is Damerau-Levenshtein's in its optimal-string-alignment form:
 * an insertion, a deletion, a substitution or a swap of two neighbours count
 * one each; '-' and '_' are the same letter (a Megatron-LM flag and its
 * argparse field).  A candidate that differs from the name in digits alone
 * (fp8 and fp4, mtp_1 and mtp_2) is another setting, never a typo.
 *
 *     struct mt_near nr;
 *     mt_near_init(&nr, key, strlen(key), -1);
 *     for (i = 0; known[i]; i++)
 *             mt_near_try(&nr, known[i]);
 *     if (nr.match) ... "did you mean '%s'?", nr.match ...
 *
 * Pure; nothing is allocated; the match points at the caller's candidate.
 */
#ifndef MT_NEAR_H
#define MT_NEAR_H

#include <stddef.h>

#define MT_NEAR_MAX 128 /* names longer than this are near nothing */

/* The distance between a[na] and b[nb]; MT_NEAR_MAX + 1 when either is longer
 * than MT_NEAR_MAX. */
int mt_near_distance(const char *a, size_t na, const char *b, size_t nb);

/* The most edits a typo of a name of n bytes is taken to hold: 0 under 5
 * bytes (short names are too alike), 1 under 10, else 2. */
int mt_near_bound(size_t n);

struct mt_near {
	const char *name; /* the unknown name (n bytes, borrowed) */
	size_t n;
	int max;          /* the most edits accepted */
	int best;         /* the distance of match */
	const char *match; /* the nearest candidate so far (the first of equals), or NULL */
};

/* Start a search for the candidate nearest name[n]; max < 0: mt_near_bound(n). */
void mt_near_init(struct mt_near *nr, const char *name, size_t n, int max);

/* Offer one candidate (NUL-terminated, kept by pointer); the name itself
 * (distance 0) and candidates differing in digits alone are passed over. */
void mt_near_try(struct mt_near *nr, const char *cand);

/* The nearest of a NULL-terminated list within mt_near_bound, or NULL. */
const char *mt_near_list(const char *name, const char *const *cands);

#endif
