/* SPDX-License-Identifier: MIT */
/* trace_guard: bounds on what the streaming trace reader hands to yajl.
 *
 * yajl buffers a string or number token that spans read chunks and its time
 * grows with the square of the token's length (a 256 MB string took 76 s, a
 * 1 GB one did not finish).  The guard sees every byte first, in one linear
 * pass that tracks only whether it is inside a string (and an escape):
 *  - a string or key longer than MT_TRACE_MAX_STR bytes is cut there (the
 *    bytes after the cap, up to the closing quote, are not passed on; the cut
 *    falls on a character boundary, never inside an escape or a UTF-8
 *    sequence) and counted;
 *  - a number token longer than MT_TRACE_MAX_NUM characters is an error
 *    naming its byte offset.
 * The reader's memory then stays bounded by the caps of trace.h, whatever
 * the input. */
#ifndef MT_TRACE_GUARD_H
#define MT_TRACE_GUARD_H

#include <stddef.h>
#include <stdint.h>

#define MT_TRACE_MAX_STR ((size_t)1 << 20) /* 1 MiB: kernel names are a few KiB */
#define MT_TRACE_MAX_NUM 64                /* characters of one number */

struct mt_guard {
	uint64_t off;        /* bytes of the original stream seen */
	size_t len;          /* bytes of the current string (or number) so far */
	int in_str, esc, dropping, in_num;
	size_t cut;          /* strings cut */
	uint64_t bad_num_at; /* byte offset of a number over the cap (valid when bad_num) */
	int bad_num;
};

/* Filter buf[0..n) in place; returns the bytes left to parse.  After a call,
 * g->bad_num set means the stream must be refused. */
size_t mt_guard_filter(struct mt_guard *g, unsigned char *buf, size_t n);

#endif
