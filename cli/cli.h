/* SPDX-License-Identifier: MIT */
/* cli: the command-line layer, the only code that prints usage or exits.
 * Each subcommand is `int cmd_<name>(int argc, char **argv)` returning the
 * process exit code (documented in `megatune --help`). */
#ifndef MT_CLI_H
#define MT_CLI_H

#include "../lib/err.h"
#include "common.h" /* cli_fail(), cli_usage_error() */
#include "opts.h"   /* struct cli_spec */

int cmd_advise(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_check(int argc, char **argv);
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

/* Each command's options and help (cli/opts.h), defined in its cmd_<name>.c:
 * its --help is cli_help() of it, and tests/unit/t-cli-opts.c reads them all.
 * cli_spec_calibrate, cli_spec_probe and cli_spec_proxy are in megatune-probe. */
extern const struct cli_spec cli_spec_advise;
extern const struct cli_spec cli_spec_estimate;
extern const struct cli_spec cli_spec_check;
extern const struct cli_spec cli_spec_rules;
extern const struct cli_spec cli_spec_report;
extern const struct cli_spec cli_spec_analyze;
extern const struct cli_spec cli_spec_calibrate;
extern const struct cli_spec cli_spec_probe;
extern const struct cli_spec cli_spec_import;
extern const struct cli_spec cli_spec_profile;
extern const struct cli_spec cli_spec_compare;
extern const struct cli_spec cli_spec_history;
extern const struct cli_spec cli_spec_validate;
extern const struct cli_spec cli_spec_tune;
extern const struct cli_spec cli_spec_proxy;

#endif
