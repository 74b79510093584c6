/* SPDX-License-Identifier: MIT */
/* probe_opts: the probe options shared by `megatune probe` and
 * `megatune calibrate`: one option group (cli/opts.h) whose offsets are
 * relative to a struct mt_probe_opts, and its defaults. */
#ifndef MT_CLI_PROBE_OPTS_H
#define MT_CLI_PROBE_OPTS_H

#include "../probes/probe.h"
#include "opts.h"

/* --backend, --quick, --full, --smoke, --warmup, --repeats, --min-bytes, --max-bytes,
 * --dtype, --model, --tp, --ops, --single-process, --timeout: a table for CLI_GROUP
 * at offsetof(the command's arguments, its struct mt_probe_opts). */
extern const struct cli_opt probe_opts_group[];

/* The defaults: the CUDA backend, the normal sweep, TP 1, a 120 s timeout. */
void probe_opts_init(struct mt_probe_opts *o);
/* Parse a size such as 4096, 64K, 1M, 4G (powers of 1024); -1 when bad. */
double probe_parse_size(const char *s);

#endif
