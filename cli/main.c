/* SPDX-License-Identifier: MIT */
/* megatune: calibrate GPU clusters, profile training runs, advise on
 * Megatron-LM configurations.  This file dispatches to the subcommands. */
#include <stdio.h>
#include <string.h>

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
	"  probe      run one probe (gemm, attention, collective, offload, host, topology)\n"
	"  import     turn nccl-tests or nvbandwidth output into a cluster profile\n"
	"  profile    run a command under the CUPTI tracer (one trace per process)\n"
	"  analyze    per-rank time breakdown, overlap, idle and stragglers of traces\n"
	"\n"
	"Run 'megatune <command> --help' for the options of a command.\n"
	"\n"
	"exit codes:\n"
	"  0   success\n"
	"  1   the check failed (for advise: nothing feasible)\n"
	"  2   bad usage or bad input (the message names the file and field)\n"
	"  77  not applicable on this machine\n";

int main(int argc, char **argv)
{
	/* build/probe-<name> is this program under another name */
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	if (!strncmp(base, "probe-", 6)) {
		argv[0] = (char *)base + 6;
		return cmd_probe(argc, argv);
	}
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
	if (!strcmp(argv[1], "calibrate"))
		return cmd_calibrate(argc - 1, argv + 1);
	if (!strcmp(argv[1], "probe")) {
		if (argc < 3 || argv[2][0] == '-')
			return cmd_probe(argc - 1, argv + 1);
		return cmd_probe(argc - 2, argv + 2);
	}
	if (!strcmp(argv[1], "import"))
		return cmd_import(argc - 1, argv + 1);
	if (!strcmp(argv[1], "profile"))
		return cmd_profile(argc - 1, argv + 1);
	fprintf(stderr, "megatune: error: unknown command '%s'\n\n%s", argv[1], usage);
	return 2;
}
