/* SPDX-License-Identifier: MIT */
#include "common.h"

#include <stdarg.h>
#include <stdio.h>

void cli_usage_hint(const char *cmd)
{
	fprintf(stderr, "run 'megatune %s --help' for the options\n", cmd);
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "megatune %s: error: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cli_usage_hint(cmd);
	return 2;
}

int cli_fail(const char *cmd, const struct mt_error *err)
{
	fprintf(stderr, "megatune %s: error: %s\n", cmd, err->msg);
	return mt_exit_code(err->code);
}
