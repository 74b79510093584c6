/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include "cli.h"
int cmd_probe(int argc, char **argv)
{
	(void)argc; (void)argv;
	fputs("megatune probe: not built yet\n", stderr);
	return 2;
}
