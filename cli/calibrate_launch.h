/* SPDX-License-Identifier: MIT */
/* calibrate_launch: `megatune calibrate --launcher CMD` (cli/calibrate_launch.c),
 * reached from cmd_calibrate() when that option is given outside a launch of
 * its own: each round of the pass runs as a launch of its own, this program
 * started again under CMD with --launched-round K. */
#ifndef MT_CLI_CALIBRATE_LAUNCH_H
#define MT_CLI_CALIBRATE_LAUNCH_H

#include "../probes/calib_pass.h"

/* The rounds c->rounds launched one after the other, argc and argv the
 * command's own (argv[0] "calibrate"), SIGINT and SIGTERM passed on to the
 * launch running.  Returns the exit code. */
int calibrate_launch(const char *launcher, const struct mt_calib_opts *c, int argc, char **argv);

/* The line an interrupted pass ends with, naming `results` and the round
 * (0: none). */
void calibrate_say_interrupted(const char *results, int round);

#endif
