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

struct mt_ruleset;
/* Load the rule files at `paths` (user files, evaluated first) and, when
 * `bundled`, the bundled rules; any problem is an error naming FILE:LINE. */
int cli_load_rules(const char *const *paths, int npaths, int bundled, struct mt_ruleset **out,
		   struct mt_error *err);

struct sbuf;
struct jw;
struct mt_explain;
/* The rules that fired, as text ("[id] title / message / source") and as a
 * JSON array `key` of {id, kind, title, message, cite[]} (ex may be NULL). */
void cli_fired_text(struct sbuf *sb, const struct mt_explain *ex);
void cli_fired_json(struct jw *w, const char *key, const struct mt_explain *ex);

#endif
