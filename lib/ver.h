/* SPDX-License-Identifier: MIT */
/* ver: software versions such as NCCL's "2.21.5" or CUDA's "12.8".
 *
 * One strict grammar, MAJOR[.MINOR[.PATCH]]: decimal digits only, MAJOR at
 * most 9999, MINOR and PATCH at most 99, nothing before or after (no sign,
 * space, empty part or trailing dot).  A version compares as its code
 * MAJOR * 10000 + MINOR * 100 + PATCH ("2.21.5" -> 22105, "2.26" -> 22600),
 * the form the rules' version() function and the cluster fact use.
 */
#ifndef MT_VER_H
#define MT_VER_H

#include <stddef.h>

/* The code of version `s`, or -1 when s is NULL or not a version. */
long mt_ver_code(const char *s);

/* The length of the longest prefix of `s` that is a version (0 if none):
 * "2.26.6+cuda12.8" -> 6, "12.8 ..." -> 4, "2.26." -> 4. */
size_t mt_ver_span(const char *s);

#endif
