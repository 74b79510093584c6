/* SPDX-License-Identifier: MIT */
/* cli: the command-line layer, the only code that prints usage or exits.
 * Each subcommand is `int cmd_<name>(int argc, char **argv)` returning the
 * process exit code (documented in `megatune --help`). */
#ifndef MT_CLI_H
#define MT_CLI_H

#include "../lib/err.h"
#include "common.h" /* cli_fail(), cli_usage_error() */

int cmd_advise(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_rules(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
/* argv[0] is the probe's name ("gemm"), or the options start at argv[1]
 * when no name was given (then it prints the list) */
int cmd_probe(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_tune(int argc, char **argv);
/* megatune-probe proxy: one advice candidate as a layer proxy */
int cmd_proxy(int argc, char **argv);

#endif
