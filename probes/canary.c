/* SPDX-License-Identifier: MIT */
/* canary: the speed of this core now (canary.h). */
#include "canary.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double mt_canary_us(void)
{
	static volatile uint64_t sink;
	double t[MT_CANARY_REPS];
	int r, i;

	for (r = 0; r < MT_CANARY_REPS; r++) {
		uint64_t x = (uint64_t)r + 1;
		double t0 = now_s();

		for (i = 0; i < MT_CANARY_STEPS; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			x ^= x >> 29;
		}
		t[r] = (now_s() - t0) * 1e6;
		sink += x;
	}
	qsort(t, MT_CANARY_REPS, sizeof(t[0]), cmp_double);
	return t[MT_CANARY_REPS / 2];
}
