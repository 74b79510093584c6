/* SPDX-License-Identifier: MIT */
/* dispbuf: the MoE token dispatcher's buffers, in PyTorch's caching
 * allocator and preallocated by DeepEP and HybridEP (docs/MODEL.md 4.8,
 * 5.3).  Arithmetic only. */
#include "dispatch.h"

#include <math.h>

#include "constants.h"
#include "perf.h"

/* DeepEP's NVLink and RDMA buffers for `ranks` ranks and tokens of hb bytes
 * (constants.h: v1.2.1 csrc/config.hpp:44-95) */
static double deepep_fixed(int ranks, double hb, int sms)
{
	const double ch = sms / 2, nvl = ranks < MT_DEEPEP_NVL_PEERS ? ranks : MT_DEEPEP_NVL_PEERS;
	const double rdma = ranks > MT_DEEPEP_NVL_PEERS ? ranks / MT_DEEPEP_NVL_PEERS : 1;
	const double slots = ranks <= 8 ? MT_DEEPEP_NVL_SLOTS_8
			     : ranks <= 64 ? MT_DEEPEP_NVL_SLOTS_64
			     : ranks <= 128 ? MT_DEEPEP_NVL_SLOTS_128 : MT_DEEPEP_NVL_SLOTS_MAX;
	double b = ch * nvl * (2 * rdma + 3) * 4 + ch * nvl * slots * (hb + MT_DEEPEP_SLOT_META);

	if (ranks > MT_DEEPEP_NVL_PEERS) /* across nodes: sent and received */
		b += ch * rdma * (MT_DEEPEP_NVL_PEERS * 2 + 2) * 2 * 4 +
		     ch * rdma * MT_DEEPEP_RDMA_SLOTS * (hb + MT_DEEPEP_SLOT_META + 16) * 2;
	return b;
}

/* HybridEP's buffers for `tokens` per rank over `ranks` ranks, `per` of them
 * in one NVLink domain, E experts (constants.h: hybrid-ep @ 94a9f8f6b1) */
static double hybridep_fixed(double tokens, int ranks, int per, double E, double h)
{
	const double nodes = ranks / per, sf = 4 * h / MT_HYBRIDEP_SCALE_BLOCK;
	const double dom = E / ranks * per; /* experts of the domain */
	double b = tokens * ranks * (2 * h + 4 * dom + sf);

	if (nodes > 1)
		b += tokens * (2 * h + 4 * E + sf) +
		     tokens * (nodes - 1) * (3 * (2 * h + 4 * dom) + sf);
	return b;
}

void mt_dispatch_buffers(const struct mt_ctx *x, int d, int ep, int etp, double tokens,
			 struct mt_dispatch_buffers *o)
{
	const struct mt_cluster *c = x->cluster;
	const struct mt_model *m = x->model;
	const double h = m->hidden, k = m->topk, copy = tokens * k * etp * h * 2;

	o->base = o->load = o->fixed = 0;
	if (!m->experts)
		return;
	if (d == MT_DISPATCH_FLEX && ep * etp > 1) {
		int per = mt_group_per_domain(c, ep, etp);

		/* the received tokens permuted for the experts, and later the
		 * experts' output the combine reads, each num_permuted_tokens rows
		 * (token_dispatcher.py @ d98e8a6 1175-1192; HybridEP allocates
		 * the first with PyTorch: hybrid_ep.cu @ 94a9f8f6b1 314); what
		 * the experts keep for backward is the activations' (4.4) */
		o->load = copy;
		if (c->dispatch.flex_backend > 0) {
			o->fixed = hybridep_fixed(tokens, ep, per < 1 ? 1 : per, m->experts, h) * etp;
		} else {
			/* DeepEP hands the distinct tokens it receives to PyTorch
			 * first (csrc/deep_ep.cpp @ v1.2.1 472, 843), which
			 * Megatron-Core permutes beside them */
			o->load += tokens * mt_route_ranks(m->experts, m->topk, ep) * h * 2;
			o->fixed = deepep_fixed(ep * etp, h * 2,
						c->dispatch.flex_backend == MT_FLEX_DEEPEP &&
								c->dispatch.flex_sms > 0
							? c->dispatch.flex_sms
							: MT_DEEPEP_SMS);
		}
	} else if (d == MT_DISPATCH_ALLGATHER && ep * etp > 1) {
		/* every EP rank's tokens gathered (token_dispatcher.py:299-301;
		 * at the combine the reduce-scatter's input of the same size,
		 * 366), beside the copies routed to the local experts, permuted */
		o->base = tokens * h * 2 * ep * etp;
		o->load = copy;
	} else {
		/* what the rank receives and its sort by local expert, live
		 * together at the sort (token_dispatcher.py:705, 782); the rank's
		 * own copies it sent (665-680, k a token, exactly) are freed by
		 * then */
		o->load = 2 * copy;
	}
}
