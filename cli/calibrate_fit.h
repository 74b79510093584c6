/* SPDX-License-Identifier: MIT */
/* calibrate_fit: `megatune calibrate --from-validation` (cli/calibrate_fit.c),
 * reached from cmd_calibrate() when that option is on the command line. */
#ifndef MT_CLI_CALIBRATE_FIT_H
#define MT_CLI_CALIBRATE_FIT_H

#define CALIBRATE_FIT_USAGE                                                                   \
	"       megatune calibrate --from-validation V.json [V2.json ...] --cluster PROFILE\n"  \
	"                          -o CORRECTED.json\n"

#define CALIBRATE_FIT_HELP                                                                    \
	"With --from-validation: fit correction factors by least squares over the measured\n" \
	"runs (status ok) of megatune.validation/1 files: the time of large (cbrt(m n k) >=\n" \
	"4096) and small GEMMs, of collectives and of all-to-all inside and across NVLink\n"   \
	"domains, and a memory term (docs/MODEL.md section 10).  Only factors that move\n"    \
	"some run's step by 1% are fitted (the others are named with the reason), with\n"    \
	"one parameter for all of them from one or two runs, and from three runs the\n"     \
	"count of parameters (up to two fewer than the runs) that predicts runs left out\n" \
	"best, the last shared by the factors past it.  Prints the leave-one-out\n"          \
	"error before and after, and writes PROFILE with a `corrections` section (factors,\n" \
	"runs, residuals) that advise and estimate apply.  Exit 2 for a file of another\n"  \
	"schema, no candidates, or no measured run.\n"

/* 1 when argv holds --from-validation. */
int calibrate_fit_wanted(int argc, char **argv);
/* The command; returns the exit code (0, or 2 for bad input). */
int calibrate_fit_main(int argc, char **argv);

#endif
