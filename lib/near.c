/* SPDX-License-Identifier: MIT */
/* near: the known name an unknown one resembles (near.h). */
#include "near.h"

#include <ctype.h>
#include <string.h>

static int same(char a, char b)
{
	return a == b || ((a == '-' || a == '_') && (b == '-' || b == '_'));
}

int mt_near_distance(const char *a, size_t na, const char *b, size_t nb)
{
	int row[3][MT_NEAR_MAX + 1];
	int *pp, *p, *c, best;
	size_t i, j;

	if (na > MT_NEAR_MAX || nb > MT_NEAR_MAX)
		return MT_NEAR_MAX + 1;
	for (j = 0; j <= nb; j++)
		row[1][j] = (int)j;
	for (i = 1; i <= na; i++) {
		c = row[(i + 1) % 3];  /* the row of i, row[1] that of 0 */
		p = row[i % 3];        /* the row of i - 1 */
		pp = row[(i + 2) % 3]; /* the row of i - 2 */
		c[0] = (int)i;
		for (j = 1; j <= nb; j++) {
			best = p[j - 1] + !same(a[i - 1], b[j - 1]);
			if (p[j] + 1 < best)
				best = p[j] + 1;
			if (c[j - 1] + 1 < best)
				best = c[j - 1] + 1;
			if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]) &&
			    pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			c[j] = best;
		}
	}
	return row[(na + 1) % 3][nb];
}

int mt_near_bound(size_t n)
{
	return n < 5 ? 0 : n < 10 ? 1 : 2;
}

void mt_near_init(struct mt_near *nr, const char *name, size_t n, int max)
{
	nr->name = name;
	nr->n = n;
	nr->max = max < 0 ? mt_near_bound(n) : max;
	nr->best = nr->max + 1;
	nr->match = NULL;
}

/* the same length, and every byte that differs a digit on both sides */
static int digits_apart(const char *a, size_t na, const char *b)
{
	size_t i;

	if (strlen(b) != na)
		return 0;
	for (i = 0; i < na; i++)
		if (!same(a[i], b[i]) &&
		    !(isdigit((unsigned char)a[i]) && isdigit((unsigned char)b[i])))
			return 0;
	return 1;
}

void mt_near_try(struct mt_near *nr, const char *cand)
{
	int d;

	if (!nr->max || !cand)
		return;
	d = mt_near_distance(nr->name, nr->n, cand, strlen(cand));
	if (d == 0 || d >= nr->best || digits_apart(nr->name, nr->n, cand))
		return;
	nr->best = d;
	nr->match = cand;
}

const char *mt_near_list(const char *name, const char *const *cands)
{
	struct mt_near nr;

	mt_near_init(&nr, name, strlen(name), -1);
	for (; *cands; cands++)
		mt_near_try(&nr, *cands);
	return nr.match;
}
