/* SPDX-License-Identifier: MIT */
#include "clock.h"

#include <time.h>

double mt_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}
