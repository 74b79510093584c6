/* SPDX-License-Identifier: MIT */
/* units: human-readable numbers for terminal output (JSON keeps raw units). */
#ifndef MT_UNITS_H
#define MT_UNITS_H

#include <stddef.h>

#define MT_GIB 1073741824.0

/* "1.23 B", "70.6 B", "405 M": a parameter count. */
const char *mt_fmt_count(char *buf, size_t cap, double n);
/* Seconds as "812 us", "12.3 ms", "4.56 s". */
const char *mt_fmt_seconds(char *buf, size_t cap, double s);

#endif
