/* SPDX-License-Identifier: MIT */
/* runner_opts: the runner options of `megatune validate`, which `megatune tune`
 * shares: what runs each candidate (--launch, --proxy, --backend, --mpirun) and
 * how (--iters, --warmup, --timeout, --kill-grace, --budget), declared once as
 * two option groups (cli/opts.h), with their defaults and the checks the options
 * make together.  Both commands include this file; neither calls the other. */
#ifndef MT_CLI_RUNNER_OPTS_H
#define MT_CLI_RUNNER_OPTS_H

#include "../validate/validate.h"
#include "opts.h"

/* What the groups fill.  o.probe_exe points into probe (the struct is not moved
 * after cli_runner_init()). */
struct cli_runner {
	struct mt_validate_opts o;
	double budget_min;  /* --budget: minutes for the whole run, 0: none */
	char probe[4096];   /* megatune-probe, found beside this program */
};

/* --launch, --proxy, --backend, --mpirun; offsets relative to struct cli_runner. */
extern const struct cli_opt cli_runner_what[];
/* --iters, --warmup, --timeout, --kill-grace, --budget; the same. */
extern const struct cli_opt cli_runner_how[];

/* validate's defaults (mt_validate_opts_init(), logs in `dir`), megatune-probe
 * found beside this program (cli_sibling_exe()), no budget. */
void cli_runner_init(struct cli_runner *r, const char *dir);

/* The checks between the options, after parsing: --launch or --proxy (one of
 * them), --backend cpu or gpu with --proxy, --mpirun only with --proxy, a
 * warm-up shorter than --iters.  0, or 2 after the usage error ("megatune
 * CMD: error: ..."). */
int cli_runner_check(const char *cmd, const struct cli_runner *r);

/* The time at which the budget ends (mt_now() + budget), 0 without one. */
double cli_runner_deadline(const struct cli_runner *r);

#endif
