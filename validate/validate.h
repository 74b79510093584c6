/* SPDX-License-Identifier: MIT */
/* validate: run the top candidates of an advice for real, one after another
 * on the same allocation, and compare predicted with measured
 * (`megatune validate`, docs/VALIDATE.md).
 *
 * Each candidate's command is the --launch template filled with its
 * configuration (runner.h), or with --proxy the proxy of megatune-probe under
 * mpirun.  The run's log goes to DIR/<name>.log; the log parser gives the
 * steps, memory and failures; the document (validation.h) is written after
 * every candidate, so an interruption loses nothing measured, and `resume`
 * keeps every candidate of an earlier document that was run.
 *
 * Measured step: the median of the steps whose iteration number is above
 * `warmup`, with n, the interquartile range, min and max; tokens/s per GPU
 * = gbs * seq / step / gpus; TFLOP/s per GPU = the advice's
 * model_flops_per_step (megatune's count, mt_model_step_flops) / step /
 * gpus, and the log's own figure (median over the same steps) when printed.
 */
#ifndef MT_VALIDATE_VALIDATE_H
#define MT_VALIDATE_VALIDATE_H

#include <signal.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "logparse.h"
#include "validation.h"

struct mt_validate_opts {
	const char *advice_path;  /* for messages, {advice} and the document */
	int top;                  /* candidates taken from the advice (best first) */
	const char *launch;       /* the template, or NULL with proxy */
	int proxy;                /* run megatune-probe proxy instead */
	const char *backend;      /* proxy: cpu or gpu */
	const char *mpirun;       /* proxy: prefix template (NULL: "mpirun -np {gpus}", "": none) */
	const char *probe_exe;    /* proxy: the megatune-probe program */
	const char *dir;          /* logs */
	const char *out;          /* the document, written after each candidate (NULL: not) */
	int iters, warmup;
	double timeout_s, grace_s;
	double deadline;          /* mt_now() at which the budget ends, 0: none */
	int dry_run;              /* print the commands, run nothing */
	FILE *progress;           /* one line per candidate (NULL: quiet) */
	volatile sig_atomic_t *stop;
};

/* The defaults every caller starts from (validate and tune alike): the top 5, the CPU
 * proxy backend, 20 iterations of which 5 warm-up, a 600 s hang timeout with a 10 s
 * grace, megatune-probe found on PATH, logs in `dir`; the rest zero/NULL. */
void mt_validate_opts_init(struct mt_validate_opts *o, const char *dir);

/* Read the advice (MT_EINVAL naming the file and field when it is not a
 * megatune.advice/1 document with candidates) and fill v with its first
 * `top` candidates, none run.  v is owned by the caller (mt_validation_free);
 * on an error (MT_ENOMEM when memory runs out) nothing is left to free. */
int mt_validate_init(struct mt_validation *v, const cJSON *advice,
		     const struct mt_validate_opts *o, struct mt_error *err);

/* Candidate c of v from a log that already exists (a run the user made; the
 * parser p has read it whole): its measurement (the steps after `warmup`),
 * status (the log's failure, else ok with steady steps, else no_iterations),
 * evidence and reason, as mt_validate_one judges a run that exited by itself.
 * flops_step: the model FLOPs of a step (NAN: unknown); log: its path.
 * MT_OK, or MT_ENOMEM (c judged in part; v still freed whole). */
int mt_validate_from_log(struct mt_validation *v, int c, const struct mt_logparse *p,
			 double flops_step, int warmup, const char *log);

/* Copy into v the candidates of prev (same name) that were run.  MT_OK, or
 * MT_ENOMEM (some copied in part; v still freed whole). */
int mt_validate_resume(struct mt_validation *v, const struct mt_validation *prev);

/* The command candidate i would run, appended to sb; MT_EINVAL for an
 * unknown placeholder, MT_ENOMEM when it cannot be formed whole. */
int mt_validate_command(const struct mt_validation *v, const cJSON *advice, int i,
			const struct mt_validate_opts *o, struct sbuf *sb, struct mt_error *err);

/* Run candidate i (status, evidence, measured) and write the document.
 * MT_EINVAL when its program is not found (nothing run), MT_ENOMEM when
 * memory runs out (the run not recorded). */
int mt_validate_one(struct mt_validation *v, const cJSON *advice, int i,
		    const struct mt_validate_opts *o, struct mt_error *err);

/* Every candidate not yet run, in order, until the budget ends or *stop;
 * those left are not_run with the reason.  Returns MT_OK (also when
 * interrupted: see *o->stop) or the first error. */
int mt_validate_all(struct mt_validation *v, const cJSON *advice,
		    const struct mt_validate_opts *o, struct mt_error *err);

/* The summary as text: one row per candidate (predicted and measured step,
 * error, memory, status, evidence) and the ranking, tau, mean errors.
 * MT_OK, or MT_ENOMEM (sb holds part of it). */
int mt_validation_text(struct sbuf *sb, struct mt_validation *v);

#endif
