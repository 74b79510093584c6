/* SPDX-License-Identifier: MIT */
/* topology: what the machine is, for `megatune probe topology` and the
 * profile's gpu and node sections.  The host side (CPU model, cores, NUMA
 * nodes, memory) comes from /proc and /sys; the GPU side from the CUDA
 * library (NVML loaded at run time, CUDA-only fallback, probes/gpu.h). */
#ifndef MT_TOPOLOGY_H
#define MT_TOPOLOGY_H

#include "gpu.h"
#include "probe.h"

struct mt_host_info {
	char host[64];
	char cpu_model[128];
	int cores;          /* online logical CPUs */
	int numa_nodes;
	double mem_bytes;   /* MemTotal */
	int ranks;          /* ranks of this run on the host */
};

/* This host (ranks = world->local_size). */
void mt_host_info(const struct mt_world *w, struct mt_host_info *h);

/* Every host of the run, gathered on rank 0 (every rank calls it): *hosts
 * (heap, rank 0 frees) lists distinct hosts in node order. */
int mt_hosts_gather(const struct mt_world *w, struct mt_host_info **hosts, int *n,
		    struct mt_error *err);

/* The local GPUs (MT_EUNSUPPORTED with the reason without a GPU). */
int mt_gpu_topology(struct mt_topo *t, struct mt_error *err);

#endif
