/* SPDX-License-Identifier: MIT */
/* bundled: data files compiled into the binary (models/, profiles/ and the rule
 * files of rules/defs/).
 *
 * The build turns every JSON file of models/ and profiles/ into a byte array
 * (tools/embed.c), so the one binary runs anywhere without its source tree.
 * Strings are NUL-terminated; `len` excludes the NUL.
 */
#ifndef MT_BUNDLED_H
#define MT_BUNDLED_H

#include <stddef.h>

struct mt_bundled {
	const char *kind; /* "model", "profile" or "rules" */
	const char *name; /* file name without its extension */
	const char *path; /* path in the source tree, for messages */
	const char *data;
	size_t len;
};

/* Terminated by an entry with name == NULL. */
extern const struct mt_bundled mt_bundled_files[];

/* The entry of this kind and name, or NULL. */
const struct mt_bundled *mt_bundled_find(const char *kind, const char *name);

struct sbuf;
/* Append the names of one kind, comma-separated, to sb. */
void mt_bundled_list(const char *kind, struct sbuf *sb);

#endif
