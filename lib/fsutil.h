/* SPDX-License-Identifier: MIT */
/* fsutil: whole-file reads and crash-safe writes.
 *
 * Outputs are never written in place: mt_write_atomic() writes a temporary file
 * next to the target, flushes it to disk and renames it over the target, so a
 * failed or interrupted write leaves the previous file untouched.
 */
#ifndef MT_FSUTIL_H
#define MT_FSUTIL_H

#include <stddef.h>

#include "err.h"

/* Read a whole file.  On success *data is a heap buffer (caller frees) with a
 * terminating NUL not counted in *len.  Refuses files over `max_bytes`. */
int mt_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
		 struct mt_error *err);

/* 1 when `spec` names a file rather than a bundled name: it contains '/',
 * ends in ".json", or exists. */
int mt_is_path(const char *spec);

/* Write `len` bytes to `path` through a temporary file and rename().
 * "-" writes to standard output. */
int mt_write_atomic(const char *path, const void *data, size_t len, struct mt_error *err);

#endif
