/* SPDX-License-Identifier: MIT */
/* runner: one candidate's command run for real, watched through its log.
 *
 * The command runs under /bin/sh -c in a process group of its own, stdin
 * from /dev/null, stdout and stderr to the log file (truncated first).  The
 * log is read as it grows and fed to a struct mt_logparse.  The run ends
 * when the command exits, when no new iteration line came for `timeout_s`
 * (counted from the start, then from the last iteration line: a hang), when
 * the budget's end passes, or when *stop becomes non-zero (SIGINT): in the
 * last three cases the group gets SIGTERM, then SIGKILL after `grace_s`.
 * Whatever way it ends, the group is signalled the same way once the command
 * is gone, so no process it started is left behind.
 *
 * Templates: `{name}` placeholders of MT_TEMPLATE_KEYS are replaced by the
 * value given (already shell-quoted by the caller where it is a list);
 * `${...}` (shell parameters) and braces around anything but a lowercase
 * identifier are left as written, `{{` and `}}` are literal braces; any
 * other `{identifier}` is an error naming it.
 */
#ifndef MT_VALIDATE_RUNNER_H
#define MT_VALIDATE_RUNNER_H

#include <signal.h>

#include "../lib/clock.h"
#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "logparse.h"

#define MT_TEMPLATE_KEYS                                                              \
	"megatron_args bridge_overrides env nodes gpus gpus_per_node name dir log iters " \
	"warmup rank advice"

/* The value of each placeholder, by name (NULL: not defined). */
typedef const char *(*mt_template_lookup)(const char *key, void *ctx);

/* Append tmpl with its placeholders replaced to out; MT_EINVAL naming the
 * placeholder ("unknown placeholder {foo} in --launch; known: ...") when one
 * is not a key of MT_TEMPLATE_KEYS, or when lookup has no value for it. */
int mt_template_fill(const char *tmpl, mt_template_lookup lookup, void *ctx, struct sbuf *out,
		     struct mt_error *err);

/* The program a command line starts (its first word after VAR=value
 * assignments and `env`) exists: a path that is executable, or a name found on PATH;
 * shell keywords and builtins pass.  MT_EINVAL naming it otherwise. */
int mt_program_check(const char *cmd, const char *what, struct mt_error *err);

enum mt_run_end {
	MT_RUN_EXITED = 0,  /* the command ended by itself */
	MT_RUN_HANG,        /* killed: no iteration line for timeout_s */
	MT_RUN_BUDGET,      /* killed: the budget ended */
	MT_RUN_INTERRUPTED, /* killed: *stop was set */
};

struct mt_run_opts {
	const char *command;
	const char *log_path;
	double timeout_s;      /* > 0 */
	double grace_s;        /* SIGTERM to SIGKILL */
	double deadline;       /* mt_now() value at which the budget ends, 0: none */
	volatile sig_atomic_t *stop;
};

struct mt_run_result {
	int end;               /* enum mt_run_end */
	int exit_code;         /* when the command exited: its status, else -1 */
	int signo;             /* when a signal ended it, that signal, else 0 */
	double wall_s;
};

/* Run it; p is fed the whole log (mt_logparse_finish called).  MT_EIO when
 * the log cannot be created or the process not started. */
int mt_run(const struct mt_run_opts *o, struct mt_logparse *p, struct mt_run_result *r,
	   struct mt_error *err);

/* SIGINT and SIGTERM set *flag (and are otherwise ignored) until
 * mt_runner_signals(NULL) restores the defaults. */
void mt_runner_signals(volatile sig_atomic_t *flag);

#endif
