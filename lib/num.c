/* SPDX-License-Identifier: MIT */
/* num: finite decimal numbers from text. */
#include "num.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int mt_parse_num(const char *s, double *out)
{
	const char *p = s;
	char *end;
	double v;
	int digits = 0;

	if (!s)
		return -1;
	/* the syntax of a decimal number only: [+-]digits[.digits][e[+-]digits] */
	if (*p == '+' || *p == '-')
		p++;
	while (isdigit((unsigned char)*p))
		p++, digits++;
	if (*p == '.')
		for (p++; isdigit((unsigned char)*p); p++)
			digits++;
	if (!digits)
		return -1;
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return -1;
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (end != p || errno == ERANGE || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int mt_parse_num_range(const char *s, double lo, double hi, double *out)
{
	double v;

	if (mt_parse_num(s, &v) || !(v >= lo && v <= hi))
		return -1;
	*out = v;
	return 0;
}

int mt_parse_int(const char *s, long long lo, long long hi, long long *out)
{
	double v;

	/* digits and a sign only, read by the one reader: exact up to 2^53,
	 * beyond what any option takes */
	if (!s || s[strspn(s, "-0123456789")] || mt_parse_num(s, &v) || v < (double)lo ||
	    v > (double)hi || fabs(v) > 9007199254740992.0)
		return -1;
	*out = (long long)v;
	return 0;
}

int mt_parse_onoff(const char *s)
{
	if (!s)
		return -1;
	if (!strcmp(s, "on") || !strcmp(s, "true") || !strcmp(s, "1"))
		return 1;
	if (!strcmp(s, "off") || !strcmp(s, "false") || !strcmp(s, "0"))
		return 0;
	return -1;
}
