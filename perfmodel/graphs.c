/* SPDX-License-Identifier: MIT */
/* graphs: Transformer Engine's per-layer CUDA graphs, their scopes, the EP
 * overlap beside them and their static buffers (docs/MODEL.md 4.8, 5.10).
 * Arithmetic only. */
#include "graphs.h"

#include "constants.h"
#include "perf.h"

#define GS(s) (1u << MT_GS_##s)

unsigned mt_graph_scope_of(const struct mt_model *m, const struct mt_job *j)
{
	unsigned s = GS(ATTN);

	if (j->graph_scope)
		return j->graph_scope;
	if (m->moe_layers < m->layers)
		s |= GS(MLP);
	if (m->experts && j->moe_balance == MT_BAL_DROP)
		s |= GS(MOE);
	else if (m->experts)
		s |= GS(ROUTER) | GS(PRE);
	return s;
}

#define EPO_GRAPH_CITE "Megatron-LM d98e8a6 megatron/core/transformer/transformer_config.py:3063-3071 " \
	"asserts: CUDA graph scope on moe and mlp is not supported with overlap_moe_expert_parallel_comm"
#define EPO_WGRAD_CITE "Megatron-LM d98e8a6 megatron/training/arguments.py:1910-1918 asserts (with " \
	"--overlap-grad-reduce): CUDA graph with delay_wgrad_compute requires TE version >= 2.12.0; " \
	"Megatron-Bridge 067f987df0 src/megatron/bridge/training/comm_overlap.py:540-548 asserts the " \
	"same whatever the gradient overlap"

const char *mt_graph_overlap_reason(const struct mt_model *m, const struct mt_job *j)
{
	unsigned s = mt_graph_scope_of(m, j);

	/* the overlap runs the MLP or MoE block as its own pieces, which a
	 * graph of the whole block would hide (transformer_layer.py:1374) */
	if (s & (GS(MOE) | GS(MLP)))
		return "the EP overlap splits the MLP and MoE blocks into the pieces it interleaves, so "
		       "their graphs (scopes mlp, moe, and megatune's default, which graphs the dense MLP or "
		       "the whole MoE block) cannot run beside it (" EPO_GRAPH_CITE "); graph "
		       "moe_router,moe_preprocess (--cuda-graph-scope)";
	/* its --delay-wgrad-compute leaves weight gradients inside graphed
	 * attention, and inside a router graph that takes the shared experts
	 * (the overlap turns their own overlap off: transformer_config.py:3039-3041) */
	if (s & GS(ATTN))
		return "its --delay-wgrad-compute leaves the attention's weight gradients inside the "
		       "graphed attention, which needs Transformer Engine 2.12.0, and megatune targets "
		       "2.10 (" EPO_WGRAD_CITE "); graph moe_router,moe_preprocess (--cuda-graph-scope)";
	if ((s & GS(ROUTER)) && m->shared_ffn > 0)
		return "its --delay-wgrad-compute leaves the shared experts' weight gradients inside the "
		       "router's graph, which captures the shared experts when they do not overlap the "
		       "dispatch (the EP overlap turns that off), and that needs Transformer Engine "
		       "2.12.0; megatune targets 2.10 (" EPO_WGRAD_CITE ")";
	return NULL;
}

/* What one graphed layer keeps for one micro-batch (bytes): its static
 * inputs, its static outputs, and those outputs with a gradient (whose
 * gradient buffers the graphs share). */
struct slot {
	double in, out, grad;
};

/* Whether a layer of kind k is captured under scopes s (cuda_graphs.py @
 * d98e8a6 2134-2174, _layer_is_graphable) */
static int graphed(unsigned s, int k)
{
	if (s & GS(ATTN))
		return 1;
	return k == MT_L_DENSE ? (s & GS(MLP)) != 0 : (s & (GS(MOE) | GS(ROUTER))) != 0;
}

/* The router's outputs (moe_utils.py @ d98e8a6 1564-1597): without the
 * preprocessing the normalised hidden states, the FP32 probabilities and the
 * routing map of every expert; with it what the dispatcher's preprocessing
 * returns and keeps (its cudagraph_attrs): the all-to-all dispatcher's
 * permuted copies and their probabilities (token_dispatcher.py:665-680),
 * DeepEP's top-k probabilities and indices (1297-1300, 1844), HybridEP's and
 * the all-gather dispatcher's probabilities and map of every expert (1852,
 * 269). */
static void router_out(const struct mt_ctx *x, const struct mt_config *cfg, unsigned s, double A,
		       double Tm, struct slot *o)
{
	const double k = x->model->topk, E = (double)x->model->experts * cfg->etp;

	if (!(s & GS(PRE))) {
		o->out = A + Tm * E * (4 + 1);
		o->grad = A + Tm * E * 4;
	} else if (cfg->dispatcher == MT_DISPATCH_ALLTOALL) {
		o->out = o->grad = k * A + Tm * k * 4;
	} else if (cfg->dispatcher == MT_DISPATCH_FLEX && cfg->flex_backend == MT_FLEX_DEEPEP) {
		o->out = A + Tm * k * (4 + 8);
		o->grad = A + Tm * k * 4;
	} else {
		o->out = A + Tm * E * (4 + 1);
		o->grad = A + Tm * E * 4;
	}
	/* and the residual (transformer_layer.py:951), and the shared experts'
	 * output where they do not overlap the dispatch (1254-1260) */
	o->out += A;
	o->grad += A;
	if (x->model->shared_ffn > 0 && !cfg->shared_overlap) {
		o->out += A;
		o->grad += A;
	}
}

/* One layer of kind k under scopes s, one micro-batch (the caller knows it
 * is graphed).  Inputs (Megatron-Core's sample arguments, cuda_graphs.py
 * 2387-2442): the hidden states [s/cp/tp (SP), b, h] in BF16 (module.py
 * 266-271), and with attention in the graph its mask [b, 1, s/cp, s] of
 * booleans (transformer_layer.py:1221-1232), built for each layer and
 * micro-batch.  Outputs (1263-1318): the layer's, or the attention's, hidden
 * states; the router's (router_out). */
static struct slot layer_slot(const struct mt_ctx *x, const struct mt_config *cfg, unsigned s, int k,
			      double A)
{
	const double T = (double)cfg->mbs * x->job->seq / cfg->cp;
	const double Tm = T / (cfg->sp ? cfg->tp : 1);
	struct slot o = { A, A, A };

	if (s & GS(ATTN))
		o.in += T * x->job->seq;
	if (k == MT_L_MOE && !(s & GS(MOE)) && (s & GS(ROUTER)))
		router_out(x, cfg, s, A, Tm, &o);
	return o;
}

double mt_graph_bytes(const struct mt_ctx *x, const struct mt_costs *a, const struct mt_plan *b,
		      const struct mt_config *cfg, int st, double *pool)
{
	const unsigned s = mt_graph_scope_of(x->model, x->job);
	const double A = a->p2p_bytes;
	/* every micro-batch in flight; with PP 1 and no EP overlap Megatron-Core
	 * captures one micro-batch and replays it (cuda_graphs.py:2597-2601);
	 * else one set per micro-batch, reused once its backward has run
	 * (2322-2565; Transformer Engine's _reuse_graph_input_output_buffers,
	 * 2684-2686) */
	const double inflight = mt_inflight(b->pp, b->vpp, b->num_mb, st);
	struct slot ext = { 0, 0, 0 };
	double total = 0, in_pool = 0;
	int k;

	*pool = 0;
	if (!cfg->cuda_graph)
		return 0;
	for (k = 0; k < MT_L_N; k++) {
		double n = (double)b->nl[st][k] / b->vpp;
		struct slot sl;

		if (n <= 0 || !graphed(s, k))
			continue;
		sl = layer_slot(x, cfg, s, k, A);
		total += inflight * n * (sl.in + sl.out);
		in_pool += inflight * n * sl.out;
		/* the gradient buffers of the outputs: one set for every graph of
		 * the same outputs (graph.py @ TE v2.10 512-525) */
		total += sl.grad;
		/* the EP overlap runs a second micro-batch's layer beside the
		 * one in backward (5.3) */
		if (cfg->ep_overlap && sl.in + sl.out > ext.in + ext.out)
			ext = sl;
	}
	if (total <= 0)
		return 0;
	/* the input gradients, released but for the last layers' (graph.py
	 * 567-598) */
	total += ext.in + ext.out + MT_GRAPH_GRAD_INPUTS * A;
	in_pool += ext.out + MT_GRAPH_GRAD_INPUTS * A;
	*pool = in_pool;
	return total;
}
