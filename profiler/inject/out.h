/* SPDX-License-Identifier: MIT */
/* out: the output of libmegatune_trace.so (profiler/inject.c): the trace file's
 * buffered writer, its JSON Lines records and the library's one-line log.
 *
 * Private to the library: its symbols are hidden, so that they never meet
 * the names of the traced process.  The file state (g_fd, g_path, g_out of
 * OUT_BUF_SIZE bytes allocated by the set-up) is defined here and owned by
 * inject.c's set-up and finishing; every out_*, kv_* and line_* call is made
 * with inject.c's g_lock held.  log_line() may be called at any time: it
 * writes one line to stderr with write(2), nothing else.
 */
#ifndef MT_INJECT_OUT_H
#define MT_INJECT_OUT_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

#define LOG_PREFIX "megatune-trace: "
#define OUT_BUF_SIZE ((size_t)1 << 20)

extern int g_fd;               /* the trace file, -1 when closed */
extern char g_path[PATH_MAX];  /* its path */
extern char *g_out;            /* OUT_BUF_SIZE bytes of pending output */
extern size_t g_out_len;
extern int g_write_failed;     /* a write failed: the trace stops there */
extern uint64_t g_records;     /* record lines written */

/* "megatune-trace: <message>" on stderr. */
__attribute__((format(printf, 1, 2))) void log_line(const char *fmt, ...);
/* A strict non-negative integer from the environment; -1 when unset or
 * malformed. */
long env_nonneg(const char *name);
/* mkdir -p; 0 or -1 with errno set. */
int mkdir_p(const char *dir);

/* Write the pending output to g_fd (a failure is logged once and sets
 * g_write_failed). */
void out_flush(void);
void out_raw(const char *s, size_t n);
void out_s(const char *s);
void out_u64(uint64_t v);
void out_i64(int64_t v);
/* A JSON string, quoted; invalid UTF-8 bytes become U+FFFD. */
void out_json(const char *str);
/* ,"key":value */
void kv_u64(const char *key, uint64_t v);
void kv_str(const char *key, const char *v);
void kv_dim3(const char *key, int32_t x, int32_t y, int32_t z);
/* {"t":type,"name":name ... }\n; line_end() counts the record. */
void line_begin(const char *type, const char *name);
void line_end(void);

#pragma GCC visibility pop

#endif
