/* SPDX-License-Identifier: MIT */
/* bundled: look-ups in the table of data compiled into the binary. */
#include "bundled.h"

#include <string.h>

#include "sbuf.h"

const struct mt_bundled *mt_bundled_find(const char *kind, const char *name)
{
	const struct mt_bundled *b;

	for (b = mt_bundled_files; b->name; b++)
		if (!strcmp(b->kind, kind) && !strcmp(b->name, name))
			return b;
	return NULL;
}

void mt_bundled_list(const char *kind, struct sbuf *sb)
{
	const struct mt_bundled *b;
	int n = 0;

	for (b = mt_bundled_files; b->name; b++)
		if (!strcmp(b->kind, kind))
			sbuf_addf(sb, "%s%s", n++ ? ", " : "", b->name);
}
