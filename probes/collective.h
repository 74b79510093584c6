/* SPDX-License-Identifier: MIT */
/* collective: the group layouts a calibration measures and the collective
 * probe's plan and CPU (MPI) backend.
 *
 * Layouts follow the parallel groups a job uses (docs/METRICS.md,
 * "Collectives"): inside a node (NVLink domain; host shared memory on the CPU
 * backend) groups of 2, 4, 8, ... consecutive local ranks, all such groups of
 * a size at once, as TP groups run; across nodes one rank per node for each
 * local rank (rails, as DP groups run) and the whole world.  Sizes follow
 * nccl-tests: `bytes` is the total buffer for all_gather, reduce_scatter and
 * all-to-all, rounded down to a multiple of 16 bytes per rank; busbw uses the
 * nccl-tests factors (mt_coll_busbw_factor).
 */
#ifndef MT_COLLECTIVE_H
#define MT_COLLECTIVE_H

#include "probe.h"

/* The layouts for this world (MPI: ranks; single process: local devices).
 * Fills at most `max` groups; returns how many. */
int mt_coll_layouts(const struct mt_world *w, int single_process_devices,
		    struct mt_group *g, int max);

int mt_plan_collective(const struct mt_probe_ctx *ctx, struct mt_case **cases, int *n,
		       struct mt_error *err);

extern const struct mt_probe_ops mt_collective_cpu;

#endif
