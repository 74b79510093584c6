/* SPDX-License-Identifier: MIT */
/* megatune: calibrate GPU clusters, profile training runs, advise on
 * Megatron-LM configurations.  This file dispatches to the subcommands.
 *
 * `calibrate` and `probe` run in megatune-probe (cli/probe_main.c), the
 * executable that links MPI, BLAS and PAPI: this one execs it from its own
 * folder with the same arguments and environment, and links none of them. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/version.h"
#include "cli.h"

static const char usage[] =
	"usage: megatune <command> [options]\n"
	"\n"
	"Advise on the parallel configuration of Megatron-LM / Megatron-Core /\n"
	"Megatron-Bridge training from a model, a GPU budget and a cluster profile.\n"
	"\n"
	"commands:\n"
	"  advise     search every parallel configuration and rank the best\n"
	"  estimate   break down memory and time of one configuration\n"
	"  rules      list, show, lint and check the tuning rules\n"
	"  report     the HTML report of an advice, a profile, an analysis, a comparison\n"
	"  calibrate  run the probes and write a cluster profile (mpirun/srun for many nodes)\n"
	"  probe      run one probe (gemm, attention, collective, dispatch, offload, host,\n"
	"             topology)\n"
	"  import     turn nccl-tests or nvbandwidth output into a cluster profile\n"
	"  profile    run a command under the CUPTI tracer (one trace per process)\n"
	"  analyze    per-rank time breakdown, overlap, idle and stragglers of traces\n"
	"  compare    noise-aware verdicts of current results against a baseline or a history\n"
	"  history    store runs in a history (SQLite) for compare; list, show, prune\n"
	"  validate   run the top candidates for real and compare predicted with measured\n"
	"  tune       advise, validate, correct and re-rank until the measured best is stable\n"
	"  proxy      run one advice candidate as a layer proxy (under mpirun), printing\n"
	"             Megatron-LM iteration lines\n"
	"\n"
	"Run 'megatune <command> --help' for the options of a command.\n"
	"\n"
	"exit codes:\n"
	"  0   success\n"
	"  1   the check failed (for advise: nothing feasible)\n"
	"  2   bad usage or bad input (the message names the file and field), or a GPU\n"
	"      library missing on a machine with an NVIDIA GPU\n"
	"  77  not applicable on this machine\n";

/* Exec megatune-probe from this program's folder with argv and the
 * environment as they are; returns (2) only when that fails. */
static int run_probe_exe(const char *cmd, char **argv)
{
	char path[4096];

	cli_sibling_exe("megatune-probe", path, sizeof(path));
	execv(path, argv);
	fprintf(stderr, "megatune %s: error: %s: %s (calibrate and probe run in "
		"megatune-probe, built beside megatune by make)\n", cmd, path, strerror(errno));
	return 2;
}

int main(int argc, char **argv)
{
	/* build/probe-<name> names megatune-probe; a link to megatune under
	 * such a name goes there too */
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	atexit(cli_check_stdout);
	if (!strncmp(base, "probe-", 6))
		return run_probe_exe("probe", argv);
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("megatune %s\n", MEGATUNE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "advise"))
		return cmd_advise(argc - 1, argv + 1);
	if (!strcmp(argv[1], "estimate"))
		return cmd_estimate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "rules"))
		return cmd_rules(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "analyze") || !strcmp(argv[1], "analyse"))
		return cmd_analyze(argc - 1, argv + 1);
	if (!strcmp(argv[1], "calibrate") || !strcmp(argv[1], "probe"))
		return run_probe_exe(argv[1], argv);
	if (!strcmp(argv[1], "proxy"))
		return run_probe_exe(argv[1], argv);
	if (!strcmp(argv[1], "import"))
		return cmd_import(argc - 1, argv + 1);
	if (!strcmp(argv[1], "profile"))
		return cmd_profile(argc - 1, argv + 1);
	if (!strcmp(argv[1], "compare"))
		return cmd_compare(argc - 1, argv + 1);
	if (!strcmp(argv[1], "history"))
		return cmd_history(argc - 1, argv + 1);
	if (!strcmp(argv[1], "validate"))
		return cmd_validate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "tune"))
		return cmd_tune(argc - 1, argv + 1);
	fprintf(stderr, "megatune: error: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
