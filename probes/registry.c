/* SPDX-License-Identifier: MIT */
/* registry: the one static table of probes. */
#include <string.h>

#include "backends.h"
#include "collective.h"
#include "gpu.h"
#include "probe.h"

static const struct mt_probe registry[] = {
	{ "gemm", "matrix multiply throughput (cuBLASLt BF16/FP8/TF32; CPU: OpenBLAS FP32)",
	  MT_PROBE_DEVICE, { &mt_gemm_cpu, &mt_gemm_cuda } },
	{ "attention", "fused attention forward and backward (cuDNN SDPA; CPU: BLAS attention)",
	  MT_PROBE_DEVICE, { &mt_attention_cpu, &mt_attention_cuda } },
	{ "collective", "all-reduce, all-gather, reduce-scatter, all-to-all, send/recv, broadcast "
	  "(NCCL; CPU: MPI)", MT_PROBE_COLLECTIVE, { &mt_collective_cpu, &mt_collective_cuda } },
	{ "offload", "host<->device copies, pinned and pageable, idle and under a GEMM "
	  "(CPU: memcpy)", MT_PROBE_DEVICE, { &mt_offload_cpu, &mt_offload_cuda } },
	{ "host", "kernel launch overhead, host memory bandwidth, CPU Adam step, PAPI counters",
	  MT_PROBE_DEVICE, { &mt_host_cpu, &mt_host_cuda } },
	{ "topology", "GPUs, SMs, memory, clocks, NVLink, PCIe, NUMA affinity, hosts and ranks",
	  MT_PROBE_INFO, { NULL, NULL } },
};

const struct mt_probe *mt_probe_at(int i)
{
	return i >= 0 && i < (int)(sizeof(registry) / sizeof(registry[0])) ? &registry[i] : NULL;
}

const struct mt_probe *mt_probe_find(const char *name)
{
	const struct mt_probe *p;
	int i;

	for (i = 0; (p = mt_probe_at(i)); i++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}
