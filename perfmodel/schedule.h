/* SPDX-License-Identifier: MIT */
/* schedule: the shape of the pipeline schedule, arithmetic on the plan's
 * sizes that the pipeline, memory, host memory, graphs and timing files all
 * use (perfmodel/schedule.c; config.h and perf.h include it). */
#ifndef MT_SCHEDULE_H
#define MT_SCHEDULE_H

struct mt_config;

/* In-flight micro-batches (1F1B) or model chunks (interleaved) on stage i. */
int mt_inflight(int pp, int vpp, int num_mb, int stage);

/* Share of the micro-batches whose forward pairs with another's backward
 * under the 1F1B EP overlap (docs/MODEL.md 5.3). */
double mt_ep_overlap_paired(int pp, int vpp, int num_mb);

/* 1 when the configuration's pipeline sends block: interleaving (PP > 1,
 * VPP > 1) with --overlap-p2p off (docs/MODEL.md 5.5). */
int mt_p2p_blocks(const struct mt_config *c);

#endif
