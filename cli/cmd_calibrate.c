/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include "cli.h"
int cmd_calibrate(int argc, char **argv)
{
	(void)argc; (void)argv;
	fputs("megatune calibrate: not built yet\n", stderr);
	return 2;
}
