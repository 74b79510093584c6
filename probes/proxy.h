/* SPDX-License-Identifier: MIT */
/* proxy: one configuration's per-layer work, run on the allocated ranks with
 * the probes' own backends, and composed into a measured step time
 * (docs/MODEL.md, "The proxy").
 *
 * mt_proxy_plan() turns a model, a job (seq, gbs, gpus, precision) and one
 * configuration (TP, PP, VPP, CP, EP, ETP, DP, MBS, micro-batches,
 * recompute, SP, distributed optimizer) into the work of one layer on one
 * GPU, as Megatron-LM shards it: the GEMMs of each TP/ETP shard (forward,
 * data gradient and weight gradient), the attention of the local sequence
 * shard (forward and backward), the TP, CP and EP collectives of the layer at
 * their message sizes over groups laid out as Megatron orders ranks
 * (tp-cp-dp-pp; experts etp-ep), the PP send/recv of one activation and the
 * DP gradient reduction of the stage's parameters.  When the world has fewer
 * ranks than the configuration, groups are made smaller in this order: DP
 * replicas, PP stages (two are enough for the send/recv), EP, CP, TP; the
 * per-GPU shapes and sizes never change.  mt_proxy_plan() says what it
 * scaled in plan->scaled.
 *
 * mt_proxy_run() measures it: every rank sets up every item once, then each
 * iteration runs every item once (collectives with their group) and composes
 * the step; rank 0 writes one Megatron-LM iteration line per iteration and
 * the memory report line after the first and the last (format of Megatron-LM
 * training_log() and report_memory()).  The step time of an iteration is the
 * slowest rank's.  Plans and results are plain records; items are a heap
 * array freed by mt_proxy_plan_free().  Errors are returned (lib/err.h).
 */
#ifndef MT_PROXY_H
#define MT_PROXY_H

#include <stdio.h>

#include "probe.h"

struct mt_model;
struct mt_job;
struct mt_config;

/* Where an item's time goes in the composition. */
enum mt_proxy_part {
	MT_PX_COMMON,   /* every layer: attention block (GEMMs, attention, its TP/CP comm) */
	MT_PX_DENSE,    /* dense layers: the MLP and its TP comm */
	MT_PX_MOE,      /* MoE layers: routed and shared experts, EP all-to-all */
	MT_PX_OUTPUT,   /* last stage: output layer, once per micro-batch */
	MT_PX_P2P,      /* PP send/recv, per micro-batch and model chunk */
	MT_PX_DP_RS,    /* DP gradient reduce-scatter (or all-reduce), once per step */
	MT_PX_DP_AG,    /* DP parameter all-gather (distributed optimizer), once per step */
	MT_PX_NPART
};

enum mt_proxy_probe { MT_PX_GEMM, MT_PX_ATTN, MT_PX_COLL, MT_PX_NPROBE };

/* Group layouts of the proxy (index = mt_case.group of collective items). */
enum mt_proxy_group { MT_PG_TP, MT_PG_CP, MT_PG_EP, MT_PG_DP, MT_PG_PP, MT_PG_N };

struct mt_proxy_item {
	struct mt_case c;       /* the probe case (label, shape or op and bytes) */
	int probe;              /* enum mt_proxy_probe */
	int part;               /* enum mt_proxy_part */
	int bwd;                /* 1: backward work */
	int attn_fwd;           /* 1: attention forward (what selective recompute repeats) */
	double weight;          /* times it counts per layer (or per micro-batch, step) */
};

struct mt_proxy_plan {
	/* the configuration */
	int tp, pp, vpp, cp, ep, etp, dp, mbs, num_mb, gpus, seq, recompute;
	int overlap_grad, overlap_param;
	long long gbs;
	double layers_dense, layers_moe; /* per pipeline stage */
	double model_flops_step;         /* Megatron's count (docs/MODEL.md 2) */
	/* the run: group sizes and strides as laid out, ranks used */
	int gsize[MT_PG_N], gstride[MT_PG_N], gblock[MT_PG_N];
	int run_tp, run_cp, run_pp, run_dp, run_ep, used;
	char scaled[512];        /* "" when run at full size, else what was scaled */
	struct mt_proxy_item *items;
	int nitems;
};

/* Build the plan of configuration `cfg` of `m` for `job` on a world of
 * `world_size` ranks, for `backend` (enum mt_backend: the CPU runs fp32).
 * MT_EINVAL names what does not divide (heads by TP, experts by EP, ...). */
int mt_proxy_plan(const struct mt_model *m, const struct mt_job *job, const struct mt_config *cfg,
		  int world_size, int backend, struct mt_proxy_plan *out, struct mt_error *err);
void mt_proxy_plan_free(struct mt_proxy_plan *p);

/* One iteration's composition (seconds): the slowest rank's. */
struct mt_proxy_iter {
	double step_s;
	double layer_dense_s, layer_moe_s; /* forward + backward (+ recompute) */
	double part_s[MT_PX_NPART];        /* measured, per execution */
	double tflops_per_gpu;             /* model FLOPs / step / GPUs */
};

struct mt_proxy_opts {
	int backend;            /* enum mt_backend */
	int iters, warmup;      /* iterations printed; warm-up iterations not printed */
	double timeout_s;       /* collective watchdog (CUDA), 0: the probe's */
};

/* Run the plan.  Rank 0 writes the iteration and memory lines to `out` and
 * returns the median of the iterations in *median (other ranks: the same
 * value).  MT_EUNSUPPORTED when a backend does not apply here (no GPU). */
int mt_proxy_run(const struct mt_proxy_plan *p, const struct mt_proxy_opts *o,
		 const struct mt_world *w, FILE *out, struct mt_proxy_iter *median,
		 struct mt_error *err);

/* The lines, for tests: the Megatron-LM iteration line (leading space, no
 * newline) and the memory report (MiB values). */
void mt_proxy_iter_line(char *buf, size_t cap, long long now, int iter, int iters,
			long long gbs, double step_s, double tflops);
void mt_proxy_mem_line(char *buf, size_t cap, int rank, int iter, double alloc_mib,
		       double max_alloc_mib, double reserved_mib, double max_reserved_mib);

#endif
