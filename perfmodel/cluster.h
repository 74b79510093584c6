/* SPDX-License-Identifier: MIT */
/* cluster: a cluster profile (`megatune.profile/1`, docs/FORMATS.md section 2)
 * and the lookups the time model makes in its measured curves.
 *
 * mt_cluster_load() reads a profile (a path or a bundled name) through the
 * document's loader (profile.h) and validates it into a heap object the caller frees with mt_cluster_free().  Loading also
 * prepares the curves (sorted, log-scaled) so that every lookup afterwards is
 * allocation-free and takes a few hundred nanoseconds at most.
 *
 * Lookups never return a single constant per GPU: GEMM rates are interpolated
 * by shape from the measured sweep, collective times by message size, group
 * size and span from the measured curves (docs/MODEL.md section 3).
 */
#ifndef MT_CLUSTER_H
#define MT_CLUSTER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/stats.h"
#include "dispatch.h"
#include "correction.h"

/* MT_DT_FP4: NVFP4 (E2M1 with E4M3 scales per 16 elements), Blackwell only;
 * profiles give its peak, its curve is derived from the FP8 one (3.1) */
enum mt_dtype { MT_DT_BF16, MT_DT_FP16, MT_DT_FP8, MT_DT_TF32, MT_DT_FP32, MT_DT_FP4, MT_DT_N };

enum mt_coll {
	MT_COLL_ALL_REDUCE,
	MT_COLL_ALL_GATHER,
	MT_COLL_REDUCE_SCATTER,
	MT_COLL_ALL_TO_ALL,
	MT_COLL_SEND_RECV,
	MT_COLL_BROADCAST,
	MT_COLL_N
};

enum mt_span {
	MT_SPAN_NVLINK,  /* the whole group inside one NVLink domain */
	MT_SPAN_NETWORK, /* the group crosses NVLink domains */
	MT_SPAN_N
};

enum mt_attn_impl { MT_ATTN_FLASH, MT_ATTN_UNFUSED, MT_ATTN_IMPL_N };

enum mt_offload_dir { MT_OFF_H2D, MT_OFF_D2H, MT_OFF_BIDIR, MT_OFF_N };


struct mt_source {
	char id[48];
	char kind[16];      /* spec, published, measured, imported, derived */
	char citation[512];
};

struct mt_gemm_pt {
	int dtype;
	double m, n, k, tflops;
	int src;            /* index into sources */
	struct mt_stats st;
};

struct mt_attn_pt {
	int impl, dtype, head_dim, seq, causal;
	double fwd_tflops, bwd_tflops;
	int src;
};

struct mt_coll_pt {
	double bytes, busbw_gbps, time_us;
	int src;
	struct mt_stats st;
};

struct mt_coll_curve {
	int op, span, ranks, per_node;
	int npts;
	struct mt_coll_pt *pts;  /* sorted by bytes */
	int src;
	/* prepared: log-scaled copies and the alpha-beta fit of the two smallest
	 * sizes used below the measured range; the highest busbw of the points */
	double *lx, *ly;
	double alpha_us, beta_us_per_byte;
	double peak_gbps;
};

struct mt_offload_pt {
	int dir, pinned, numa_local, under_load;
	double gbps;
	int src;
};

struct mt_gemm_curve { /* square-equivalent sweep of one dtype, prepared */
	int n;
	double *lc, *lr;    /* log(cube-root size), log(TFLOP/s) */
	int derived_from;   /* -1 measured, else the dtype it was scaled from */
	double sustained;   /* TFLOP/s of the largest size: no rate exceeds it (3.1) */
};

struct mt_cluster {
	char name[64];
	char description[512];
	char file[256];

	struct mt_source *sources;
	int nsources;

	char gpu_name[96];
	double memory_bytes;
	int sm_count;
	double compute_capability;   /* 9.0 Hopper, 10.0 Blackwell; 0 when not given */
	double peak_tflops[MT_DT_N]; /* dense; 0 when the GPU lacks the dtype */
	double hbm_spec_gbps;
	int gpu_src;

	int gpus_per_node;
	int nvlink_domain;           /* GPUs sharing one NVLink domain */
	double nvlink_gbps;          /* per GPU, per direction */
	int nics_per_node;
	double nic_gbps;             /* per NIC, per direction (GB/s) */
	double nic_latency_us;       /* one network step of an NCCL ring (node.nic_latency_us,
				      * default MT_NIC_LATENCY_US): the derived network curves */
	double pcie_gbps;
	int numa_nodes;
	int numa_given;              /* numa_nodes was in the profile (else 1) */
	int node_src;

	double hbm_gbps;             /* achievable (STREAM-like) bandwidth, at most the datasheet's */
	double hbm_measured_gbps;    /* memory_bandwidth.gbps as the profile gives it, 0 without */
	int hbm_src;
	int hbm_measured;            /* memory_bandwidth given (else 90% of the datasheet) */

	struct mt_gemm_pt *gemm;
	int ngemm;
	struct mt_gemm_curve gcurve[MT_DT_N];

	struct mt_attn_pt *attn;
	int nattn;

	struct mt_coll_curve *coll;
	int ncoll;

	struct mt_offload_pt *offload;
	int noffload;

	double host_memory_bytes;    /* host RAM per node (node.host_memory_bytes), 0 unknown */
	double launch_overhead_us;   /* 0 when not measured */
	/* the host timeline's per-op CPU costs (docs/MODEL.md 5.8), µs; 0:
	 * megatune's defaults (perfmodel/constants.h MT_HOST_*) */
	double eager_op_us;          /* one PyTorch eager op */
	double te_module_us;         /* one Transformer Engine module call, BF16 */
	double graph_launch_us;      /* one graphed callable replayed */
	double sync_us;              /* one device synchronisation */
	double optimizer_gparams_per_s; /* host Adam throughput, 0 when unknown */
	double host_memory_gbps;     /* host STREAM triad (host.memory_gbps), 0 when unknown */
	int host_src;

	/* software the measurements ran with ("" when not given) */
	char nccl_version[32];
	char cuda_version[32];

	char **outliers;
	int noutliers;

	/* MoE token dispatch (flex: DeepEP / HybridEP), perfmodel/dispatch.h */
	struct mt_dispatch_prof dispatch;
	/* factors fitted from measured runs (correction.h); applied by the
	 * GEMM and collective look-ups below and by the memory model */
	struct mt_corr corr;
};

/* Load a profile from a path or a bundled name (dgx-h100, ...). */
int mt_cluster_load(const char *spec, struct mt_cluster **out, struct mt_error *err);
int mt_cluster_from_json(const cJSON *root, const char *file, struct mt_cluster **out,
			 struct mt_error *err);
void mt_cluster_free(struct mt_cluster *c);

const char *mt_dtype_name(int dt);
int mt_dtype_parse(const char *s);
const char *mt_coll_name(int op);
int mt_coll_parse(const char *s);
const char *mt_span_name(int span);
const char *mt_attn_impl_name(int impl);   /* "flash", "unfused" */
const char *mt_offload_dir_name(int dir);  /* "h2d", "d2h", "bidirectional" */

/* nccl-tests bus-bandwidth factor: busbw = algbw * factor (PERFORMANCE.md). */
double mt_coll_busbw_factor(int op, int nranks);

/* Achieved TFLOP/s of an (m x k) * (k x n) GEMM in `dtype` (docs/MODEL.md 3.1),
 * at most the rate of the dtype's largest measured size (the sustained rate). */
double mt_gemm_tflops(const struct mt_cluster *c, int dtype, double m, double n, double k);
/* Seconds for `count` such GEMMs, roofline-capped by the HBM bandwidth. */
double mt_gemm_time(const struct mt_cluster *c, int dtype, double m, double n, double k);

/* Attention TFLOP/s (standard count) for one direction (bwd = 1 for backward). */
double mt_attn_tflops(const struct mt_cluster *c, int impl, int head_dim, int seq, int bwd);

/* The measured head dimension of impl nearest to head_dim, whose points
 * mt_attn_tflops() reads (-1: none of impl). */
int mt_attn_nearest_hd(const struct mt_cluster *c, int impl, int head_dim);

/* 1 when the attention measurement nearest to (impl, head_dim) was causal. */
int mt_attn_causal(const struct mt_cluster *c, int impl, int head_dim);

/* Number of members of a strided group (stride `stride`, size n) that share
 * one NVLink domain, given Megatron's rank order (docs/MODEL.md 3.3): the
 * per_domain of the collective look-ups below. */
int mt_group_per_domain(const struct mt_cluster *c, int n, int stride);

/* Seconds for one collective of `bytes` (the nccl-tests "size") over `nranks`
 * ranks of which `per_domain` share an NVLink domain (docs/MODEL.md 3.3). */
double mt_coll_time(const struct mt_cluster *c, int op, int nranks, int per_domain,
		    double bytes);
/* The bus bandwidth (GB/s) of one curve at `bytes`, as the profile gives it:
 * interpolated in log-log, flat above the largest size, the alpha-beta line
 * through the two smallest below it (docs/MODEL.md 3.3); no bound applied. */
double mt_coll_curve_busbw(const struct mt_coll_curve *cv, double bytes);
/* The bus bandwidth (GB/s) that mt_coll_time() used. */
double mt_coll_busbw(const struct mt_cluster *c, int op, int nranks, int per_domain,
		     double bytes);

/* Where the curve mt_coll_busbw() uses comes from, in words: "measured",
 * "published measurement", "derived, not measured", "... from another
 * collective's curve" when the profile lacks this one, each with ", bounded
 * by the NICs' line rate" (or "the NVLink line rate") when the curve is
 * faster than the hardware the profile describes; "derived from the NIC
 * description" for a network group of a profile without network curves
 * ("estimated, the profile describes no NICs" without NICs either); or
 * "estimated from the NVLink line rate".  A static string. */
const char *mt_coll_provenance(const struct mt_cluster *c, int op, int nranks, int per_domain);

/* The line rate that bounds a collective's bus bandwidth (GB/s) by the
 * hardware the profile describes (docs/MODEL.md 3.3): across NVLink domains
 * the NICs of the `per_domain` members (node.nics_per_node, nic_gbps), inside
 * one domain node.nvlink_gbps; 0 when the profile describes no such link.
 * mt_coll_busbw() never exceeds it: a curve whose peak P is above it has
 * 1/busbw' = 1/busbw + 1/line - 1/P (each byte at the described rate, the
 * measured latency kept). */
double mt_coll_line_gbps(const struct mt_cluster *c, int op, int nranks, int per_domain);

/* Sentence i (from 0) about measurements of the profile above the hardware
 * it describes, which the model bounds there (memory_bandwidth above
 * gpu.hbm_gbps, a pinned NUMA-local offload measurement above
 * node.pcie_gbps, the network curves above their NICs' line rate, the NVLink
 * curves above node.nvlink_gbps: one sentence each), written into buf[cap]:
 * 1 when there is a sentence i, 0 after the last (buf then undefined).  For
 * the commands that load or write a profile to print as warnings. */
int mt_cluster_note(const struct mt_cluster *c, int i, char *buf, size_t cap);

/* Host<->device copy bandwidth (GB/s), pinned NUMA-local memory, at most
 * node.pcie_gbps. */
double mt_offload_gbps(const struct mt_cluster *c, int dir);

/* The source record of index i (for provenance output). */
const struct mt_source *mt_cluster_source(const struct mt_cluster *c, int i);

/* The dense peak (TFLOP/s) MFU counts against for GEMMs of `dtype`: the
 * profile's peak of that dtype, else its BF16 peak (which every profile
 * gives); *used (may be NULL) gets the dtype whose peak it is. */
double mt_cluster_mfu_peak(const struct mt_cluster *c, int dtype, int *used);

#endif
