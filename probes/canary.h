/* SPDX-License-Identifier: MIT */
/* canary: how fast this CPU core runs right now, measured before each case
 * of the CPU backend and kept in its record (`canary_us`), so that `megatune
 * compare` can tell a change of the machine (frequency, another tenant on a
 * shared core) from a change of what a probe measures (compare.h). */
#ifndef MT_CANARY_H
#define MT_CANARY_H

/* Integer steps of one canary timing: a dependent chain of 64-bit
 * multiply-add and xor-shift, no memory traffic (about 0.15 ms at 3 GHz). */
#define MT_CANARY_STEPS 100000
#define MT_CANARY_REPS 9

/* The median time of MT_CANARY_REPS timings of the chain, in microseconds. */
double mt_canary_us(void);

#endif
