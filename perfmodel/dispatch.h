/* SPDX-License-Identifier: MIT */
/* dispatch: MoE token dispatch and combine (docs/MODEL.md 5.3).
 *
 * Three token dispatchers of Megatron-Core (--moe-token-dispatcher-type):
 *   alltoall   NCCL all-to-all of every routed copy, timed from the profile's
 *              all_to_all collective curve; a host synchronisation per layer
 *              for the split sizes;
 *   allgather  all-gather of the tokens over the EP group, reduce-scatter
 *              back (the collective curves);
 *   flex       DeepEP (Hopper: NVLink inside a node, RDMA across) or HybridEP
 *              (NVL72, Blackwell), timed from the profile's `moe_dispatch`
 *              section: published or measured bandwidth by backend, operation
 *              (dispatch, combine), dtype, span and EP size.  Its kernels take
 *              `sms` SMs from compute while they run under it.
 *
 * Every dispatcher megatune times sends what Megatron-LM sends: the BF16
 * hidden states, in FP8 training too (docs/MODEL.md 5.3); a point's dtype
 * only says what its measurement sent.
 *
 * The profile section is read by dispatch_prof.c (mt_dispatch_read(), called
 * by the profile reader in cluster.c) into struct mt_dispatch_prof; every
 * look-up afterwards (dispatch_prof.c) is arithmetic on it, without
 * allocation.  dispatch.c times the dispatchers from those look-ups and the
 * collective curves.
 */
#ifndef MT_DISPATCH_H
#define MT_DISPATCH_H

#include <cjson/cJSON.h>

#include "../lib/err.h"

struct mt_cluster;

/* The order of the first two is the old job setting's (alltoall 0, flex 1). */
enum mt_dispatcher { MT_DISPATCH_ALLTOALL, MT_DISPATCH_FLEX, MT_DISPATCH_ALLGATHER, MT_DISPATCH_N };
#define MT_DISPATCH_AUTO (-1)

/* The library of a flex point; "probe": megatune's dispatch probe measured
 * the traffic pattern itself (MPI), whichever library flex runs. */
enum mt_flex_backend { MT_FLEX_DEEPEP, MT_FLEX_HYBRIDEP, MT_FLEX_PROBE, MT_FLEX_N };
enum mt_dispatch_op { MT_DOP_DISPATCH, MT_DOP_COMBINE, MT_DOP_N };
/* What a point's bandwidth counts: bytes a rank receives, one copy of a token
 * per destination rank (NVLink bottleneck; algorithm bandwidth), or bytes a
 * rank sends over RDMA, one copy per destination node other than its own. */
enum mt_dispatch_basis { MT_DBASIS_RANK, MT_DBASIS_NODE, MT_DBASIS_N };

struct mt_dispatch_pt {
	int backend, op, fp8, span, ranks, sms, basis;
	double gbps;
	double latency_us;          /* fixed time per call (0: not measured) */
	double tokens;              /* tokens per rank it was measured at (0: not given) */
	int src;                    /* index into the cluster's sources */
};

struct mt_dispatch_prof {
	int flex_backend;           /* enum mt_flex_backend; -1 without a section */
	int flex_sms;               /* SMs the flex kernels take */
	int npts;
	struct mt_dispatch_pt *pts;
};

const char *mt_dispatcher_name(int d);      /* "alltoall", "flex", "allgather", "auto" */
/* An enum value, MT_DISPATCH_AUTO for "auto", or -2 for an unknown name. */
int mt_dispatcher_parse(const char *s);
const char *mt_flex_backend_name(int b);    /* "deepep", "hybridep" */
/* Run the flex dispatcher with library b (--moe-flex-backend) instead of
 * the profile's flex_backend: 0, or -1 when the profile has no point of b
 * (nothing changed). */
int mt_dispatch_use_backend(struct mt_dispatch_prof *p, int b);

/* Read the optional `moe_dispatch` section of a profile into c->dispatch
 * (sources must be read already).  MT_OK, or MT_EINVAL naming the field. */
int mt_dispatch_read(const cJSON *root, const char *file, struct mt_cluster *c,
		     struct mt_error *err);
void mt_dispatch_free(struct mt_dispatch_prof *p);

/* 1 when the profile makes dispatcher d available (alltoall and allgather
 * always; flex with a moe_dispatch section). */
int mt_dispatch_available(const struct mt_cluster *c, int d);

/* Bandwidth (GB/s) of one flex operation sending `fp8` (1) or BF16 (0) tokens
 * over `ranks` EP ranks of which `per_domain` share an NVLink domain: the
 * best-fitting family of points (span, then for a span across domains the
 * node basis, then backend, dtype and SM count), log-interpolated in the EP
 * size; *basis and *src tell what it counts and where it comes from (-1: no
 * point).  0 when the profile has none. */
double mt_dispatch_gbps(const struct mt_cluster *c, int op, int fp8, int ranks, int per_domain,
			int *basis, int *src, double *latency_us);

/* Routing: expected distinct EP ranks (of ep) and distinct other nodes (of
 * `nodes`) that one token's top-k experts, drawn uniformly from E, land on. */
double mt_route_ranks(int E, int k, int ep);
double mt_route_remote_nodes(int E, int k, int nodes);

/* The cost of one MoE layer's dispatch and combine for one micro-batch on
 * one GPU, forward (the backward mirrors it). */
struct mt_dispatch_cost {
	double dispatch_s, combine_s;   /* forward, busiest rank */
	double bytes;                   /* dispatched bytes per GPU, mean rank */
	double gbps;                    /* the bandwidth used */
	double sm_share;                /* compute lost per second of hidden dispatch */
	double perm_bytes;              /* HBM traffic of the permutations per token, forward */
	int src;                        /* provenance (flex), -1 for collective curves */
};

struct mt_ctx;
/* tokens: routed by this GPU (T / SP); lam: the load-imbalance factor. */
void mt_dispatch_cost(const struct mt_ctx *x, int dispatcher, int ep, int etp, double tokens,
		      double lam, struct mt_dispatch_cost *out);

/* The token buffers of one MoE layer's dispatch on one GPU, bytes
 * (docs/MODEL.md 4.8): in PyTorch's caching allocator `base` whatever the
 * routing and `load` per unit of the received load (the rank's routed copies
 * over the mean); `fixed`, DeepEP's or HybridEP's own buffers, allocated
 * once outside it (the profile's flex backend). */
struct mt_dispatch_buffers {
	double base, load, fixed;
};
void mt_dispatch_buffers(const struct mt_ctx *x, int dispatcher, int ep, int etp, double tokens,
			 struct mt_dispatch_buffers *out);

/* Load balance of the router (job.moe_balance): an auxiliary loss trained
 * from scratch, forced (random) routing, padded token drop, or the router of
 * a released checkpoint (fine-tuning, continued pre-training). */
enum mt_moe_balance { MT_BAL_AUX, MT_BAL_FORCED, MT_BAL_DROP, MT_BAL_PRETRAINED };
/* The busiest of ep ranks' routed tokens over the mean, each rank routing
 * `tokens` per micro-batch (docs/MODEL.md 5.3): the largest of ep draws of
 * the rank's load, whose spread is the routing's chance (top-k of E experts
 * for every token) and the router's skew between experts; with token drop
 * at most the capacity factor. */
double mt_moe_imbalance(const struct mt_ctx *x, int ep, double tokens);

/* The load the dispatcher's buffers are sized by at their peak, over the
 * mean: with padded token drop the capacity factor (every expert padded to
 * its capacity); dropless the busiest of ep ranks over `draws` dispatches
 * each (a stage's MoE layers times its micro-batches), the spread of
 * mt_moe_imbalance, at most every token's copies that fit on one rank. */
double mt_moe_peak_load(const struct mt_ctx *x, int ep, double tokens, double draws);

/* The expected largest of n independent standard normal draws (n >= 1). */
double mt_normal_max(int n);

#endif
