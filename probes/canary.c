/* SPDX-License-Identifier: MIT */
/* canary: the speed of this core now (canary.h). */
#include "canary.h"

#include <stdint.h>

#include "../lib/stats.h"
#include "probe.h"

double mt_canary_us(void)
{
	static volatile uint64_t sink;
	double t[MT_CANARY_REPS];
	int r, i;

	for (r = 0; r < MT_CANARY_REPS; r++) {
		uint64_t x = (uint64_t)r + 1;
		double t0 = mt_now();

		for (i = 0; i < MT_CANARY_STEPS; i++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			x ^= x >> 29;
		}
		t[r] = (mt_now() - t0) * 1e6;
		sink += x;
	}
	return mt_median(t, MT_CANARY_REPS);
}
