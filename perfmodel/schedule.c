/* SPDX-License-Identifier: MIT */
/* schedule: the shape of the pipeline schedule (docs/MODEL.md 4.8, 5.3,
 * 5.5): micro-batches in flight on a stage, the share of them the 1F1B EP
 * overlap pairs, whether the interleaved sends block.  Arithmetic on the
 * plan's sizes alone, below the files of the model that use it (pipeline,
 * memory, host memory, graphs, timing), so that their calls run one way. */
#include "config.h"
#include "schedule.h"

int mt_inflight(int pp, int vpp, int num_mb, int stage)
{
	int n;

	if (pp <= 1)
		return 1;
	if (vpp <= 1) {
		n = pp - stage;
		return n < num_mb ? n : num_mb;
	}
	/* Megatron's interleaved schedule with microbatch groups of pp:
	 * warm-up (pp - stage - 1) * 2 + (vpp - 1) * pp chunks, plus the one
	 * in its first backward */
	n = (pp - stage - 1) * 2 + (vpp - 1) * pp + 1;
	return n < num_mb * vpp ? n : num_mb * vpp;
}

double mt_ep_overlap_paired(int pp, int vpp, int num_mb)
{
	/* the forwards of the warm-up (interleaved 1F1B: 2 (pp - 1) + (vpp - 1)
	 * pp model chunks on the first stage; one without PP) have no backward
	 * beside them */
	double chunks = (double)num_mb * vpp;
	double warm = pp > 1 ? 2.0 * (pp - 1) + (double)(vpp - 1) * pp : 1;

	return chunks > warm ? 1 - warm / chunks : 0;
}

int mt_p2p_blocks(const struct mt_config *c)
{
	return c->pp > 1 && c->vpp > 1 && c->p2p_blocking;
}
