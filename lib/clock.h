/* SPDX-License-Identifier: MIT */
/* clock: the one clock megatune times with. */
#ifndef MT_CLOCK_H
#define MT_CLOCK_H

/* Seconds on CLOCK_MONOTONIC (an arbitrary origin: only differences mean
 * anything). */
double mt_now(void);

#endif
