/* SPDX-License-Identifier: MIT */
/* calibrate_fit: `megatune calibrate --from-validation` (cli/calibrate_fit.c),
 * reached from cmd_calibrate() when that option is on the command line. */
#ifndef MT_CLI_CALIBRATE_FIT_H
#define MT_CLI_CALIBRATE_FIT_H

#define CALIBRATE_FIT_USAGE                                                                   \
	"       megatune calibrate --from-validation V.json [V2.json ...] --cluster PROFILE\n" \
	"                          -o CORRECTED.json\n"

#define CALIBRATE_FIT_HELP                                                                    \
	"With --from-validation: fit correction factors by least squares over the measured\n" \
	"runs (status ok) of megatune.validation/1 files: the time of large (cbrt(m n k) >=\n" \
	"4096) and small GEMMs, of collectives and of all-to-all inside and across NVLink\n"  \
	"domains, and the memory (docs/MODEL.md section 10).  Only factors that move\n"       \
	"some run's step by 1% are fitted (the others are named with the reason), with\n"     \
	"one parameter for all of them from one or two runs, and from three runs the\n"       \
	"count of parameters (up to two fewer than the runs) that predicts runs left out\n"   \
	"best, the last shared by the factors past it.  Memory: where the records carry\n"    \
	"the ranks' memory reports (memory_ranks: check --validation or validate of a\n"      \
	"Megatron-LM log with `[Rank N] ... memory (MB)` lines), a step memory factor on\n"   \
	"what a stage allocates inside a step, fitted so that each report's predicted max\n"  \
	"allocated matches the measured one (least squares over every report of every\n"      \
	"run), then a term on the reserved memory from max reserved; without them, the\n"     \
	"memory term alone from the worst rank's max reserved against the predicted peak,\n"  \
	"as the output says.  Prints the leave-one-out error before and after, and writes\n"  \
	"PROFILE with a `corrections` section (factors, runs, memory points, residuals)\n"    \
	"that advise, estimate and check apply.  Exit 2 for a file of another schema, no\n"   \
	"candidates, no measured run, or a malformed field (named).\n"

/* 1 when argv holds --from-validation. */
int calibrate_fit_wanted(int argc, char **argv);
/* The command; returns the exit code (0, or 2 for bad input). */
int calibrate_fit_main(int argc, char **argv);

#endif
