/* SPDX-License-Identifier: MIT */
/* gpu: the boundary between the C harness and the CUDA backends.
 *
 * All CUDA code (the .cu files under probes/cuda/) is built by nvcc into one shared library,
 * build/libmegatune_cuda.so, with the CUDA runtime linked in statically and nothing else of
 * CUDA: never libcuda (the driver's or the toolkit's link-only one), and cuBLASLt, cuDNN
 * and NCCL are found and loaded at run time (probes/cuda/dl.cu through lib/dlsearch.h: the
 * toolkit or the pip wheels), so the library itself needs only libc, libm and libstdc++.
 * megatune itself links none of them:
 * mt_cuda_load() dlopens the library at run time (next to the executable, or
 * $MEGATUNE_CUDA_LIB), so megatune starts and runs its CPU backends on machines without
 * the CUDA libraries or a driver.
 *
 * Not applicable, or broken?  Where there is no NVIDIA GPU (no driver, none bound, none
 * visible) a GPU probe fails with MT_EUNSUPPORTED and the reason (exit 77).  Where the
 * kernel driver has a GPU (mt_dl_nvidia_gpus() > 0) a library that is missing, ours or
 * one of the CUDA stack's that a probe needs, is MT_ENOLIB (exit 2) naming the library and
 * every place it was looked for: on a GPU machine that is a set-up to fix, not a skip.
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

#define MT_CUDA_ABI 3

/* The libraries of the CUDA stack the library loads at run time. */
enum mt_cuda_libid { MT_LIB_CUBLASLT, MT_LIB_CUDNN, MT_LIB_NCCL, MT_CUDA_NLIBS };

struct mt_cuda_lib {
	char name[16];          /* "cuBLASLt", "cuDNN", "NCCL" */
	int version;            /* its own version code (cuBLASLt 130100, cuDNN 91900, NCCL
				 * 22809 = 2.28.9), 0 when not loaded */
	char path[512];         /* the file loaded, "" when not loaded */
	char from[48];          /* where it was found (lib/dlsearch.h), "" when not loaded */
	char why[768];          /* why it is not loaded: the places looked in; "" when loaded */
};

/* What the library and the driver report, for result heads and profiles. */
struct mt_cuda_env {
	int driver_version;     /* cudaDriverGetVersion, 0 without a driver */
	int runtime_version;    /* cudaRuntimeGetVersion */
	int device_count;       /* 0 when none is usable */
	struct mt_cuda_lib libs[MT_CUDA_NLIBS];   /* by enum mt_cuda_libid */
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
	 * reason when there is no driver, a link-only libcuda, no GPU, or a driver
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
	/* The libraries of the CUDA stack the probe `name` needs (gemm cuBLASLt,
	 * attention cuDNN, collective NCCL) are loaded: MT_OK, or MT_ENOLIB naming
	 * the library and the places looked in (env() has already found a GPU). */
	int (*need)(const char *name, struct mt_error *err);
};

typedef const struct mt_cuda_api *(*mt_cuda_api_fn)(void);
const struct mt_cuda_api *mt_cuda_api(void);

/* C side (probes/gpu.c): load the library once.  MT_OK and *api; MT_EUNSUPPORTED with
 * the reason (no driver, no GPU, or the library missing on a machine without a GPU);
 * MT_ENOLIB when the library is missing or does not load on a machine with a GPU. */
int mt_cuda_load(const struct mt_cuda_api **api, struct mt_cuda_env *env, struct mt_error *err);

/* The libraries of the CUDA stack (cuBLASLt, cuDNN, NCCL) as the CUDA library found
 * them, whether or not a GPU is usable: where each was loaded from, or why it was not.
 * MT_OK and libs[MT_CUDA_NLIBS]; otherwise mt_cuda_load()'s error (the CUDA library
 * itself did not load). */
int mt_cuda_libraries(struct mt_cuda_lib libs[MT_CUDA_NLIBS], struct mt_error *err);

/* Driver, CUDA runtime and NCCL versions as strings ("" without the
 * library or a driver), each buffer `n` bytes (probes/result.c). */
void mt_cuda_versions(char *nccl, char *cuda, char *driver, size_t n);

/* The library's ops of the probe `name`: the library loaded (mt_cuda_load()),
 * the name in its list and the libraries it needs loaded (api->need); NULL with
 * MT_EUNSUPPORTED or MT_ENOLIB and the reason in err (err may be NULL). */
const struct mt_probe_ops *mt_cuda_ops(const char *name, struct mt_error *err);

/* The CUDA backend of a registry entry whose library ops carry the probe's
 * name: the plan of the probe's CPU backend (plans are the same for both,
 * probes/backends.h), everything else forwarded to mt_cuda_ops(ctx->probe->name). */
extern const struct mt_probe_ops mt_cuda_forward;

#ifdef __cplusplus
}
#endif

#endif
