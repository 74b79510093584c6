/* SPDX-License-Identifier: MIT */
/* table: fixed-width text tables for terminal output.
 *
 * Cells are added row-major with mt_table_cell(); column widths are computed
 * at render time.  With MT_TABLE_HASH the header and units rows start with '#'
 * so that `grep -v '^#'` leaves only data (the nccl-tests convention).
 * The table owns copies of every string it is given.
 */
#ifndef MT_TABLE_H
#define MT_TABLE_H

#include <stddef.h>

#include "sbuf.h"

#define MT_TABLE_MAXCOLS 24

enum mt_table_flags {
	MT_TABLE_HASH = 1 << 0,  /* prefix header/unit rows with '#' */
	MT_TABLE_RULE = 1 << 1,  /* a rule of dashes under the header */
};

struct mt_table {
	int ncols;
	const char *head[MT_TABLE_MAXCOLS];
	const char *unit[MT_TABLE_MAXCOLS];
	int left[MT_TABLE_MAXCOLS]; /* 1: left-aligned, 0: right-aligned */
	char **cells;
	size_t ncells, cap;
	int failed;
};

void mt_table_init(struct mt_table *t);
/* Define column i.  `head` and `unit` (may be NULL) must outlive the table. */
void mt_table_col(struct mt_table *t, int i, const char *head, const char *unit, int left);
void mt_table_cell(struct mt_table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void mt_table_render(const struct mt_table *t, struct sbuf *sb, const char *indent, int flags);
void mt_table_release(struct mt_table *t);

#endif
