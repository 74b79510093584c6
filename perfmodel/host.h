/* SPDX-License-Identifier: MIT */
/* host: the host timeline of a training step (docs/MODEL.md 5.8).
 *
 * The host (one Python thread per rank) issues every kernel; the GPU runs
 * them in order.  Between two synchronisation points the two run side by
 * side and the longer one sets the pace; at a synchronisation point the
 * host waits until the GPU has run everything issued before it, so the GPU
 * then idles until the host has issued the next kernels.  Each layer's
 * forward is cut into regions (attention, router, dispatcher preprocessing,
 * dispatch, MLP or experts, combine), each with the CPU time its ops cost
 * (classes: a PyTorch eager op, a Transformer Engine module call, one GEMM
 * of a grouped expert GEMM, a CUDA graph replay) and the GPU time of its
 * kernels.  The dispatchers of dropless MoE synchronise once per MoE layer
 * forward (region `sync`); the time between two such points is the
 * two-machine flow shop of its regions:
 *
 *     T = max over k of ( sum_{r<k} cpu_r + max(cpu_k, gpu_k) + sum_{r>k} gpu_r )
 *
 * and the segments add.  Without a synchronisation point the host runs
 * ahead across layers and micro-batches: T = max(cpu, gpu).
 *
 * Arithmetic only: level A (costs_comm.c) fills struct mt_host_layer per layer
 * kind; level C (timing.c) calls mt_host_timeline() per stage.
 */
#ifndef MT_HOST_H
#define MT_HOST_H

#include <stddef.h>

/* The regions of a layer's forward, in the order the host issues them.  A
 * dense layer uses ATTN and MLP. */
enum mt_hreg {
	MT_HR_ATTN,     /* norm, QKV, attention, projection, residual */
	MT_HR_ROUTER,   /* pre-MLP norm, router, load-balancing loss */
	MT_HR_PRE,      /* the dispatcher's preprocessing (split sizes) */
	MT_HR_DISPATCH, /* permutation and token dispatch */
	MT_HR_MLP,      /* the dense MLP, or the experts (grouped GEMMs) */
	MT_HR_COMBINE,  /* combine, un-permutation, residual */
	MT_HR_N
};

/* The scopes of Transformer Engine's per-layer CUDA graphs
 * (--cuda-graph-modules, --cuda-graph-scope before core_v0.18.0), as bits of
 * mt_job.graph_scope: the attention; a dense layer's MLP; a MoE layer's
 * router and its dispatcher's preprocessing; the whole MoE block (padded
 * token drop only: transformer_config.py @ d98e8a6 2840). */
enum mt_graph_scope { MT_GS_ATTN, MT_GS_MLP, MT_GS_ROUTER, MT_GS_PRE, MT_GS_MOE, MT_GS_N };

/* Parse "attn,moe_router" into *bits: 0, or -1 with the unknown name in
 * bad. */
int mt_graph_scope_parse(const char *s, unsigned *bits, char *bad, size_t cap);

/* The scope named by the n characters at s, or -1. */
int mt_graph_scope_find(const char *s, size_t n);

/* Megatron-LM's name of scope i ("moe_router"). */
const char *mt_graph_scope_name(int i);

/* Where a layer's forward waits for the GPU. */
enum mt_hsync {
	MT_HS_NONE,       /* no wait (dense, padded token drop, a rank budget) */
	MT_HS_BEFORE_DISPATCH, /* all-to-all and flex: the counts before the tokens move */
	MT_HS_DISPATCH,   /* allgather: the experts' counts after the gather */
	MT_HS_N
};

/* One layer kind's host and GPU time per micro-batch (level A). */
struct mt_host_layer {
	double cf[MT_HR_N];   /* CPU, forward, per region (s) */
	double cb[MT_HR_N];   /* CPU, backward, per region (s) */
	double gf[MT_HR_N];   /* GPU, forward, per region (s) */
	unsigned graphable;   /* regions per-layer CUDA graphs capture (bits of enum mt_hreg) */
	int graph_calls;      /* graphed callables per layer, forward (the backward as many) */
	int sync;             /* enum mt_hsync */
	/* derived by mt_host_layer_finish(), [0] eager, [1] with per-layer graphs */
	double fc[2][MT_HR_N]; /* CPU, forward, per region (graphed regions replayed) */
	double bc[2];          /* CPU, backward */
	double fwd_c[2], fwd_g; /* CPU and GPU of the forward */
	double seg_t[2], seg_c[2], seg_g; /* between two waits (sync only) */
};

/* What a stage's micro-batch looks like on the host (level C). */
struct mt_host_tl {
	double t;             /* time of one micro-batch with the host's waits (s) */
	double cpu, gpu;      /* CPU and GPU time of one micro-batch */
	int syncs;            /* synchronisation points per micro-batch */
	int sync;             /* enum mt_hsync of the MoE layers */
	/* one segment between two synchronisation points inside the forward
	 * (from one MoE layer's wait to the next), 0 without */
	double seg_cpu, seg_gpu, seg_t;
	/* the segment across the backward: the last MoE layer's forward after
	 * its wait, the backward, the next micro-batch's forward up to its first
	 * wait (or the whole micro-batch without a wait) */
	double cyc_cpu, cyc_gpu, cyc_t;
	double wait;          /* host wait at the synchronisation points (s per micro-batch) */
};


/* Per-op CPU costs (s), from the profile's host section or the defaults of
 * constants.h. */
struct mt_host_costs {
	double eager;         /* one PyTorch eager op, forward */
	double te;            /* one Transformer Engine module call (BF16) */
	double te_fp8;        /* ... with a quantised recipe */
	double graph;         /* one graphed callable replayed */
	double sync;          /* one device synchronisation (copy and wake-up) */
};
/* Level A: derive the eager and graphed figures of *h (its cf, cb, gf,
 * graphable, graph_calls and sync set) and the time between two of its
 * waits, so that level C only adds. */
void mt_host_layer_finish(struct mt_host_layer *h, double graph_s);

/* The host and GPU time per micro-batch of a stage holding nl[k] layers of
 * each kind (enum in perf.h: dense, MoE), with per-layer CUDA graphs or not.
 * gpu_total: the stage's GPU time per micro-batch (forward, backward,
 * recomputation, offload waits: everything, the layers' forward included);
 * cpu_extra: CPU time outside the layers (embedding, loss, recomputation's
 * re-issued forward). */
void mt_host_timeline(const struct mt_host_layer hl[2], const double nl[2], int graphs,
		      double sync_s, double gpu_total, double cpu_extra, struct mt_host_tl *out);

/* CPU time of one (finished) layer kind per micro-batch, forward + backward,
 * eager or with its graphable regions replayed. */
static inline double mt_host_layer_cpu(const struct mt_host_layer *h, int graphs)
{
	return h->fwd_c[graphs != 0] + h->bc[graphs != 0];
}

/* Name of a synchronisation point, for the printers. */
const char *mt_hsync_name(int s);

#endif
