/* SPDX-License-Identifier: MIT */
/* gains: each setting of a pick reverted alone (gains.h, docs/MODEL.md 8.2). */
#include "gains.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../perfmodel/dispatch.h"
#include "../perfmodel/perf.h"
#include "../perfmodel/recompute.h"
#include "search.h"

/* The settings, in the order the outputs list them */
enum {
	G_DISPATCHER, G_EP_OVERLAP, G_CUDA_GRAPHS, G_FULL_GRAPH, G_RANK_BUDGET, G_OFFLOAD,
	G_RECOMPUTE, G_TP_OVERLAP, G_DP_OVERLAP, G_DIST_OPT, G_FSDP, G_N
};

static const char *const names[G_N] = {
	"moe-dispatcher", "ep-overlap", "cuda-graphs", "full-iteration-graphs", "moe-rank-budget",
	"offload-layers", "recompute", "tp-comm-overlap", "dp-overlap", "dist-opt", "fsdp",
};

static const char *onoff(int v)
{
	return v ? "on" : "off";
}

/* The DP overlaps: the gradient reduce-scatter, the parameter all-gather */
static const char *dp_words(const struct mt_config *c)
{
	return c->overlap_grad && c->overlap_param ? "grad+param"
	       : c->overlap_grad		    ? "grad only"
	       : c->overlap_param		    ? "param only"
						    : "off";
}

static void dispatcher_words(const struct mt_config *c, char *buf, size_t cap)
{
	if (c->dispatcher == MT_DISPATCH_FLEX)
		snprintf(buf, cap, "flex (%s)", mt_flex_backend_name(c->flex_backend));
	else
		snprintf(buf, cap, "%s", mt_dispatcher_name(c->dispatcher));
}

static void recompute_words(const struct mt_config *c, char *buf, size_t cap)
{
	char mods[64];

	if (c->recompute == MT_RC_SELECTIVE) {
		mt_rc_modules_format(c->recompute_modules > 0 ? (unsigned)c->recompute_modules
							       : MT_RCM_DEFAULT,
				     ',', mods, sizeof(mods));
		snprintf(buf, cap, "selective (%s)", mods);
	} else if (c->recompute == MT_RC_FULL) {
		char w[64];

		snprintf(buf, cap, "full (%s)",
			 mt_rc_full_words(c->recompute_method, c->recompute_layers, w, sizeof(w)));
	} else {
		snprintf(buf, cap, "none");
	}
}

/* An on/off setting g of c */
static int flag(int g, const struct mt_config *c)
{
	switch (g) {
	case G_CUDA_GRAPHS:
		return c->cuda_graph;
	case G_FULL_GRAPH:
		return c->full_graph;
	case G_RANK_BUDGET:
		return c->rank_budget;
	case G_TP_OVERLAP:
		return c->tp_overlap;
	default:
		return c->dist_opt;
	}
}

/* Whether setting g differs between p and b; its words into g's entry. */
static int differs(int g, const struct mt_model *m, const struct mt_config *p,
		   const struct mt_config *b, struct mt_gain *o)
{
	int moe = m->experts && p->ep * p->etp > 1;

	switch (g) {
	case G_DISPATCHER:
		if (!moe || p->dispatcher == b->dispatcher)
			return 0;
		dispatcher_words(b, o->from, sizeof(o->from));
		dispatcher_words(p, o->to, sizeof(o->to));
		return 1;
	case G_EP_OVERLAP:
		if (p->ep_overlap == b->ep_overlap)
			return 0;
		snprintf(o->from, sizeof(o->from), "%s", onoff(b->ep_overlap));
		snprintf(o->to, sizeof(o->to), "%s", onoff(p->ep_overlap));
		return 1;
	case G_CUDA_GRAPHS:
	case G_FULL_GRAPH:
	case G_RANK_BUDGET:
	case G_TP_OVERLAP:
	case G_DIST_OPT:
		if (!flag(g, p) == !flag(g, b) || (g == G_TP_OVERLAP && p->tp < 2) ||
		    (g == G_DIST_OPT && p->fsdp))
			return 0;
		snprintf(o->from, sizeof(o->from), "%s", onoff(flag(g, b)));
		snprintf(o->to, sizeof(o->to), "%s", onoff(flag(g, p)));
		return 1;
	case G_OFFLOAD:
		if (p->offload_layers == b->offload_layers)
			return 0;
		snprintf(o->from, sizeof(o->from), "%d", b->offload_layers);
		snprintf(o->to, sizeof(o->to), "%d", p->offload_layers);
		return 1;
	case G_RECOMPUTE:
		if (p->recompute == b->recompute &&
		    (p->recompute != MT_RC_SELECTIVE || mt_rc_mods(p) == mt_rc_mods(b)) &&
		    (p->recompute != MT_RC_FULL || (p->recompute_layers == b->recompute_layers &&
						     p->recompute_method == b->recompute_method)))
			return 0;
		recompute_words(b, o->from, sizeof(o->from));
		recompute_words(p, o->to, sizeof(o->to));
		return 1;
	case G_DP_OVERLAP:
		if (!p->overlap_grad == !b->overlap_grad && !p->overlap_param == !b->overlap_param)
			return 0;
		snprintf(o->from, sizeof(o->from), "%s", dp_words(b));
		snprintf(o->to, sizeof(o->to), "%s", dp_words(p));
		return 1;
	case G_FSDP:
		if (p->fsdp == b->fsdp)
			return 0;
		snprintf(o->from, sizeof(o->from), "%s", mt_fsdp_impl_name(b->fsdp));
		snprintf(o->to, sizeof(o->to), "%s", mt_fsdp_impl_name(p->fsdp));
		return 1;
	}
	return 0;
}

/* p with setting g as in b; what it needs reverted with it named in with */
static void revert(int g, const struct mt_config *b, struct mt_config *p, char *with, size_t cap)
{
	with[0] = '\0';
	switch (g) {
	case G_DISPATCHER:
		p->dispatcher = b->dispatcher;
		if (p->rank_budget && !(p->dispatcher == MT_DISPATCH_FLEX &&
					p->flex_backend == MT_FLEX_HYBRIDEP)) {
			p->rank_budget = 0;
			snprintf(with, cap, "moe-rank-budget off");
		}
		if (p->ep_overlap && p->dispatcher == MT_DISPATCH_ALLGATHER) {
			p->ep_overlap = 0;
			snprintf(with + strlen(with), cap - strlen(with), "%sep-overlap off",
				 *with ? ", " : "");
		}
		break;
	case G_EP_OVERLAP:
		p->ep_overlap = b->ep_overlap;
		break;
	case G_CUDA_GRAPHS:
		p->cuda_graph = b->cuda_graph;
		break;
	case G_FULL_GRAPH:
		p->full_graph = b->full_graph;
		break;
	case G_RANK_BUDGET:
		p->rank_budget = b->rank_budget;
		break;
	case G_OFFLOAD:
		p->offload_layers = b->offload_layers;
		break;
	case G_RECOMPUTE:
		p->recompute = b->recompute;
		p->recompute_modules = b->recompute_modules;
		p->recompute_layers = b->recompute_layers;
		p->recompute_method = b->recompute_method;
		break;
	case G_TP_OVERLAP:
		p->tp_overlap = b->tp_overlap;
		break;
	case G_DP_OVERLAP:
		p->overlap_grad = b->overlap_grad;
		p->overlap_param = b->overlap_param;
		break;
	case G_DIST_OPT:
		p->dist_opt = b->dist_opt;
		break;
	case G_FSDP:
		p->fsdp = b->fsdp;
		p->dist_opt = b->dist_opt;
		break;
	}
	/* a step waiting for the host cannot be one graph (5.10): those
	 * graphs go with what brought the wait back */
	if (p->full_graph && (g == G_DISPATCHER || g == G_RANK_BUDGET) && !p->rank_budget &&
	    p->dispatcher != MT_DISPATCH_ALLGATHER) {
		p->full_graph = 0;
		snprintf(with + strlen(with), cap - strlen(with), "%sfull-iteration-graphs off",
			 *with ? ", " : "");
	}
}

/* The evidence of setting g for the pick, or NULL */
static const struct mt_effect *evidence_of(int g, const struct mt_cluster *c,
					     const struct mt_config *p)
{
	switch (g) {
	case G_DISPATCHER:
		if (p->dispatcher != MT_DISPATCH_FLEX)
			return NULL;
		return p->flex_backend == MT_FLEX_HYBRIDEP
			       ? mt_effect_find(MT_EF_FLEX_BACKEND, c, p)
			       : mt_effect_find(MT_EF_DISPATCHER, c, p);
	case G_EP_OVERLAP:
		return p->ep_overlap ? mt_effect_find(MT_EF_EP_OVERLAP, c, p) : NULL;
	case G_CUDA_GRAPHS:
		return p->cuda_graph ? mt_effect_find(MT_EF_CUDA_GRAPHS, c, p) : NULL;
	case G_RECOMPUTE:
		return (mt_rc_mods(p) & (1u << MT_RCM_MLA_UP_PROJ)) ? mt_effect_find(MT_EF_RECOMPUTE, c, p)
								      : NULL;
	}
	return NULL;
}

/* Megatron-LM's defaults for the layout of p */
static void defaults(const struct mt_cluster *c, const struct mt_config *p, struct mt_config *b)
{
	*b = *p;
	b->dispatcher = MT_DISPATCH_ALLTOALL;
	b->flex_backend = c->dispatch.flex_backend > 0 ? c->dispatch.flex_backend : MT_FLEX_DEEPEP;
	b->ep_overlap = b->cuda_graph = b->full_graph = b->rank_budget = 0;
	b->offload_layers = 0;
	b->recompute = MT_RC_NONE;
	b->recompute_modules = 0;
	b->recompute_layers = 0;
	b->tp_overlap = b->overlap_grad = b->overlap_param = 0;
	b->dist_opt = 0;
	b->fsdp = MT_FSDP_OFF;
}

int mt_gains(const struct mt_model *m, const struct mt_cluster *c, const struct mt_job *j,
	     const struct mt_eval *pick, const struct mt_config *base, struct mt_gain *out,
	     int max)
{
	struct mt_config b, p;
	int g, n = 0;

	if (pick->time.step <= 0)
		return 0;
	if (base)
		b = *base;
	else
		defaults(c, &pick->cfg, &b);
	for (g = 0; g < G_N && n < max; g++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_gain *o = &out[n];
		struct mt_job jj = *j;
		struct mt_eval e;

		memset(o, 0, sizeof(*o));
		if (!differs(g, m, &pick->cfg, &b, o))
			continue;
		p = pick->cfg;
		revert(g, &b, &p, o->with, sizeof(o->with));
		/* evaluate exactly p: the job's pins (its own settings) left out but
		 * a pipeline layout, p's dispatcher, overlap and graphs pinned */
		mt_pins_init(&jj.pins);
		jj.pins.layout = j->pins.layout;
		jj.moe_dispatcher = p.dispatcher;
		jj.pins.ep_overlap = p.ep_overlap;
		jj.pins.cuda_graph = p.cuda_graph;
		if (!p.cuda_graph) /* the job's scopes go with its graphs */
			jj.graph_scope = 0;
		jj.pins.full_graph = p.full_graph;
		jj.pins.rank_budget = p.rank_budget;
		jj.pins.fsdp = p.fsdp;
		jj.pins.dist_opt = p.fsdp ? MT_UNSET : p.dist_opt;
		snprintf(o->setting, sizeof(o->setting), "%s", names[g]);
		o->ev = evidence_of(g, c, &pick->cfg);
		n++;
		if (mt_evaluate(m, c, &jj, NULL, &p, &e, &err)) {
			/* it cannot run without it alone: say why, no gain */
			snprintf(o->with, sizeof(o->with), "cannot run without it: %.370s", err.msg);
			o->gain = NAN;
			o->fits = 1;
			continue;
		}
		o->gain = e.time.step / pick->time.step - 1;
		o->mem_bytes = e.mem.total;
		o->fits = e.feasible;
	}
	return n;
}
