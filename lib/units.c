/* SPDX-License-Identifier: MIT */
/* units: formatting helpers. */
#include "units.h"

#include <stdio.h>

const char *mt_fmt_count(char *buf, size_t cap, double n)
{
	if (n >= 1e9)
		snprintf(buf, cap, "%.3g B", n / 1e9);
	else if (n >= 1e6)
		snprintf(buf, cap, "%.3g M", n / 1e6);
	else
		snprintf(buf, cap, "%.0f", n);
	return buf;
}

const char *mt_fmt_seconds(char *buf, size_t cap, double s)
{
	if (s < 1e-3)
		snprintf(buf, cap, "%.0f us", s * 1e6);
	else if (s < 1)
		snprintf(buf, cap, "%.3g ms", s * 1e3);
	else
		snprintf(buf, cap, "%.3g s", s);
	return buf;
}
