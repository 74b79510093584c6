/* SPDX-License-Identifier: MIT */
/* megatune-probe: the measuring half of megatune, `calibrate` and `probe`.
 *
 * It is the only executable that links OpenMPI, OpenBLAS and PAPI (the CPU
 * backends and the multi-process harness, probes/), so that the advisor's
 * commands start without them.  `megatune calibrate|probe ...` executes this
 * program from beside itself with the same arguments and environment (so
 * `mpirun -np 4 megatune calibrate ...` runs it on every rank), and
 * build/probe-<name> are links to it: under such a name it runs
 * `probe <name>`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "common.h"

static const char usage[] =
	"usage: megatune calibrate [options]   (megatune calibrate --help)\n"
	"       megatune probe NAME [options]  (megatune probe --help)\n"
	"       megatune-probe proxy --advice FILE --candidate K [options]\n"
	"                                      (megatune-probe proxy --help)\n"
	"\n"
	"megatune-probe runs the probes for megatune: run it as megatune calibrate or\n"
	"megatune probe, or as build/probe-NAME; `proxy` runs one candidate of an\n"
	"advice file as a layer proxy and prints Megatron-LM iteration lines.\n";

int main(int argc, char **argv)
{
	/* build/probe-<name> is this program under another name */
	const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];

	atexit(cli_check_stdout);
	if (!strncmp(base, "probe-", 6)) {
		argv[0] = (char *)base + 6;
		return cmd_probe(argc, argv);
	}
	if (argc >= 2 && !strcmp(argv[1], "calibrate"))
		return cmd_calibrate(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "proxy"))
		return cmd_proxy(argc - 1, argv + 1);
	if (argc >= 2 && !strcmp(argv[1], "probe")) {
		if (argc < 3 || argv[2][0] == '-')
			return cmd_probe(argc - 1, argv + 1);
		return cmd_probe(argc - 2, argv + 2);
	}
	if (argc >= 2)
		fprintf(stderr, "megatune-probe: error: unknown command '%s'\n\n", argv[1]);
	fputs(usage, stderr);
	return 2;
}
