/* SPDX-License-Identifier: MIT */
#include "ver.h"

/* Parse the version at the start of s; its length, or 0 if there is none.
 * A part after a dot is taken only when it is a valid part. */
static size_t scan(const char *s, long *code)
{
	static const long limit[3] = { 9999, 99, 99 }, scale[3] = { 10000, 100, 1 };
	size_t i = 0, end = 0;
	long c = 0;
	int k;

	for (k = 0; k < 3; k++) {
		size_t j = i;
		long part = 0;

		if (k) {
			if (s[i] != '.')
				break;
			j = i + 1;
		}
		if (s[j] < '0' || s[j] > '9')
			break;
		for (; s[j] >= '0' && s[j] <= '9'; j++) {
			part = part * 10 + (s[j] - '0');
			if (part > limit[k])
				break;
		}
		if (part > limit[k])
			break;
		c += part * scale[k];
		i = end = j;
	}
	*code = c;
	return end;
}

long mt_ver_code(const char *s)
{
	long code;
	size_t n;

	if (!s)
		return -1;
	n = scan(s, &code);
	return n && !s[n] ? code : -1;
}

size_t mt_ver_span(const char *s)
{
	long code;

	return s ? scan(s, &code) : 0;
}
