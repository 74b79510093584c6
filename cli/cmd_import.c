/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include "cli.h"
int cmd_import(int argc, char **argv)
{
	(void)argc; (void)argv;
	fputs("megatune import: not built yet\n", stderr);
	return 2;
}
