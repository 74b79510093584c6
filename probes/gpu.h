/* SPDX-License-Identifier: MIT */
/* gpu: the boundary between the C harness and the CUDA backends.
 *
 * All CUDA code (the .cu files under probes/cuda/) is built by nvcc into one shared library,
 * build/libmegatune_cuda.so, linked against the CUDA runtime, cuBLASLt, cuDNN
 * and NCCL, never against libcuda or its stub.  megatune itself does not link
 * any of them: mt_cuda_load() dlopens the library at run time (next to the
 * executable, or $MEGATUNE_CUDA_LIB), so megatune starts and runs its CPU
 * backends on machines without the CUDA libraries or a driver, and a GPU probe
 * there fails with MT_EUNSUPPORTED and the reason (exit 77).
 *
 * The library exports one symbol, mt_cuda_api(), returning a static table
 * with a list of probe ops by name (one line per probe in probes/cuda/common.cu).
 * Its probe ops follow probes/probe.h with `plan` left NULL: the cases are
 * planned in C (probes/gemm.c, attention.c, offload.c, host.c, collective.c),
 * the same for both backends.  On the C side every such probe's CUDA backend
 * is the one forwarding table mt_cuda_forward, which finds the library's ops
 * by the probe's name, so a CUDA probe is its .cu file, one line in the
 * library's list and its registry entry.  Code in the library fills `struct
 * mt_error` directly (code and msg) and calls nothing in megatune.
 */
#ifndef MT_GPU_H
#define MT_GPU_H

#include "probe.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MT_CUDA_ABI 2

/* What the library and the driver report, for result heads and profiles. */
struct mt_cuda_env {
	int driver_version;     /* cudaDriverGetVersion, 0 without a driver */
	int runtime_version;    /* cudaRuntimeGetVersion */
	int nccl_version;       /* ncclGetVersion (22809 = 2.28.9) */
	int cublaslt_version;   /* cublasLtGetVersion */
	int cudnn_version;      /* cudnnGetVersion */
	int device_count;       /* 0 when none is usable */
};

#define MT_TOPO_MAX_GPUS 64

struct mt_topo_gpu {
	int index;                 /* CUDA device index */
	char name[96];
	char uuid[48];
	char pci_bus_id[32];
	double memory_bytes;       /* cudaDeviceProp.totalGlobalMem */
	int sm_count;
	int cc_major, cc_minor;
	int sm_clock_mhz, mem_clock_mhz, mem_bus_width;  /* max clocks */
	int nvlinks;               /* active NVLink links (NVML), -1 unknown */
	int nvlink_peers;          /* GPUs reachable over NVLink (or NVSwitch), -1 unknown */
	int pcie_gen, pcie_width;  /* current link, -1 unknown */
	int numa_node;             /* -1 unknown */
	char cpu_affinity[128];    /* cpulist of the GPU's NUMA node, "" unknown */
	int p2p[MT_TOPO_MAX_GPUS]; /* 1 peer access to GPU j, 0 none */
};

struct mt_topo {
	int ngpus;
	struct mt_topo_gpu gpu[MT_TOPO_MAX_GPUS];
	int nvlink_domain;         /* GPUs of one NVLink domain seen from here
				    * (NVSwitch fabric clique or P2P-over-NVLink set),
				    * 1 when none */
	int nvml;                  /* 1 when NVML answered, 0 CUDA-only fallback */
	char nvml_reason[128];     /* why NVML was not used */
	char driver[32];           /* NVML driver version string, "" unknown */
};

/* One probe of the library: its name (the registry's) and its ops. */
struct mt_cuda_probe {
	const char *name;
	const struct mt_probe_ops *ops;
};

struct mt_cuda_api {
	int abi;                   /* MT_CUDA_ABI */
	/* Versions and the usable device count.  MT_EUNSUPPORTED with the
	 * reason when there is no driver, a stub libcuda, no GPU, or a driver
	 * too old for this runtime (see mtc_gpu_check() in probes/cuda/mtc.h). */
	int (*env)(struct mt_cuda_env *env, struct mt_error *err);
	/* The local GPUs: NVML loaded at run time, CUDA-only fallback. */
	int (*topology)(struct mt_topo *t, struct mt_error *err);
	/* NCCL unique id (128 bytes) for a group; rank 0 of the group calls it
	 * and the harness broadcasts it (ctx->group_bcast). */
	int (*nccl_id)(unsigned char id[128], struct mt_error *err);
	/* the probes' ops by name: "gemm", "attention", "collective", "offload",
	 * and "launch" (the host probe's "launch" and "launch_jitter" cases) */
	const struct mt_cuda_probe *probes;
	int nprobes;
};

typedef const struct mt_cuda_api *(*mt_cuda_api_fn)(void);
const struct mt_cuda_api *mt_cuda_api(void);

/* C side (probes/gpu.c): load the library once.  MT_OK and *api, or
 * MT_EUNSUPPORTED with the reason (library missing, no driver, no GPU). */
int mt_cuda_load(const struct mt_cuda_api **api, struct mt_cuda_env *env, struct mt_error *err);

/* Driver, CUDA runtime and NCCL versions as strings ("" without the
 * library or a driver), each buffer `n` bytes (probes/result.c). */
void mt_cuda_versions(char *nccl, char *cuda, char *driver, size_t n);

/* The library's ops of the probe `name`: the library loaded (mt_cuda_load())
 * and the name in its list; NULL with MT_EUNSUPPORTED and the reason in err
 * (err may be NULL). */
const struct mt_probe_ops *mt_cuda_ops(const char *name, struct mt_error *err);

/* The CUDA backend of a registry entry whose library ops carry the probe's
 * name: the plan of the probe's CPU backend (plans are the same for both,
 * probes/backends.h), everything else forwarded to mt_cuda_ops(ctx->probe->name). */
extern const struct mt_probe_ops mt_cuda_forward;

#ifdef __cplusplus
}
#endif

#endif
