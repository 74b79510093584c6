/* SPDX-License-Identifier: MIT */
/* cli: the command-line layer, the only code that prints usage or exits.
 * Each subcommand is `int cmd_<name>(int argc, char **argv)` returning the
 * process exit code (documented in `megatune --help`). */
#ifndef MT_CLI_H
#define MT_CLI_H

#include "../lib/err.h"

int cmd_advise(int argc, char **argv);
int cmd_estimate(int argc, char **argv);

/* Print "megatune <cmd>: error: <msg>" to stderr and return the exit code
 * for err->code. */
int cli_fail(const char *cmd, const struct mt_error *err);

#endif
