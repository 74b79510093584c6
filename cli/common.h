/* SPDX-License-Identifier: MIT */
/* common: what every command file shares, and nothing else: reporting a
 * usage error and a failed operation in one wording, with the exit codes of
 * `megatune --help` (cli/main.c).  A command file includes this header and
 * the declarations of its own command; it never calls another command file.
 */
#ifndef MT_CLI_COMMON_H
#define MT_CLI_COMMON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../lib/err.h"

struct mt_cluster;

/* The one hint after a usage error, on a line of its own:
 *     run 'megatune <cmd> --help' for the options
 * Printed to stderr. */
void cli_usage_hint(const char *cmd);

/* Print "megatune <cmd>: error: <message>" (printf-style, no trailing
 * newline needed) and the hint to stderr; return 2, the exit code of bad
 * usage. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Print "megatune <cmd>: error: <msg>" to stderr and return the exit code
 * for err->code (mt_exit_code()). */
int cli_fail(const char *cmd, const struct mt_error *err);

/* The program `name` in this executable's folder (what `make` builds beside it, e.g.
 * megatune-probe), into buf (cap bytes); `name` alone (found on PATH) when the folder
 * cannot be read. */
void cli_sibling_exe(const char *name, char *buf, size_t cap);

/* A file megatune keeps beside its programs (libmegatune_trace.so): `name` in this
 * executable's folder (a build folder), else in ../lib/megatune/ from it (an installed
 * tree, make install: bin/ and lib/megatune/).  0 with the readable file's path in buf;
 * -1 when neither is readable, buf then naming the first place looked. */
int cli_installed_file(const char *name, char *buf, size_t cap);

/* "megatune <cmd>: warning: <msg>" on stderr, the control characters an
 * input put in msg written as visible escapes. */
void cli_warning(const char *cmd, const char *msg);

/* The measurements of profile c above the hardware it describes, which the
 * model caps (mt_cluster_note()), as "megatune <cmd>: warning: ..." lines on
 * stderr. */
void cli_cluster_warnings(const char *cmd, const struct mt_cluster *c);

/* The same for the profile document doc about to be or just written to
 * `file` (nothing when it does not validate: the writer says why). */
void cli_profile_warnings(const char *cmd, const cJSON *doc, const char *file);

struct mt_jobsrc;
struct mt_model;
/* The typos the readers found in a job and its model (src and m may be NULL;
 * a key megatune does not read that resembles one it does, each message
 * naming the file, the line, the key and the one it resembles): "megatune
 * <cmd>: warning: ..." lines on stderr, or under `strict` "error:" lines and
 * MT_EINVAL with the reason in err (for cli_fail); else MT_OK. */
int cli_typos(const char *cmd, const struct mt_jobsrc *src, const struct mt_model *m, int strict,
	      struct mt_error *err);

/* At exit (registered with atexit() by main): standard output flushed and
 * checked; a failed write (a full disk, /dev/full, a closed pipe) ends the
 * process with "megatune: error: cannot write to standard output" and exit 2
 * instead of a silent 0. */
void cli_check_stdout(void);

/* Refuse an output that is also an input, or two outputs naming one file
 * (symbolic links followed; an output that does not exist yet is compared by
 * its directory and name).  `in` and `out` are arrays of paths; NULL entries
 * and "-" are skipped.  Prints "megatune <cmd>: error: output 'X' is the same
 * file as input 'Y' ..." and returns 2, or returns 0. */
int cli_check_io(const char *cmd, const char *const *in, int nin, const char *const *out,
		 int nout);

/* The same for one input and one output (shorthand). */
int cli_check_io1(const char *cmd, const char *in, const char *out);

#endif
