/* SPDX-License-Identifier: MIT */
/* flags_common: what the Megatron-LM arguments (job/flags.c) and the Megatron-Bridge
 * overrides (job/overrides.c) share, and nothing else includes: a knob's flag and
 * Bridge path, adding an item to a list (MT_FLAGS_MAX entries: past that nothing is
 * added), the values both spell (the pipeline layout, the token dispatcher, the
 * modules of the per-layer CUDA graphs and of the activation offload, the
 * full-iteration graphs of a release), and the model's and the layers' own flags,
 * which the overrides print as notes and as TransformerConfig fields. */
#ifndef MT_JOB_FLAGS_COMMON_H
#define MT_JOB_FLAGS_COMMON_H

#include <stddef.h>
#include <stdio.h>

#include "../perfmodel/config.h"
#include "../perfmodel/dispatch.h"
#include "../perfmodel/graphs.h"
#include "../perfmodel/host.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/model.h"
#include "flags.h"
#include "flagtable.h"
#include "knobs.h"

/* A knob's Megatron-LM flag and Bridge path, as the knob table declares them */
#define KF(id) mt_knob_flag(MT_KNOB_##id, (char[96]){ 0 }, 96)
#define KB(id) (mt_knobs[MT_KNOB_##id].bridge)

static inline int flags_add(struct mt_kv *o, int n, const char *k, const char *fmt, long long v)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "%s", k);
	if (fmt)
		snprintf(o[n].val, sizeof(o[n].val), fmt, v);
	else
		o[n].val[0] = '\0';
	return n + 1;
}

static inline int adds(struct mt_kv *o, int n, const char *k, const char *v)
{
	if (n >= MT_FLAGS_MAX)
		return n;
	snprintf(o[n].key, sizeof(o[n].key), "%s", k);
	snprintf(o[n].val, sizeof(o[n].val), "%s", v);
	return n + 1;
}

/* The candidate's pipeline layout as Megatron's string (perfmodel/layout.h). */
static inline int layout_str(const struct mt_model *m, const struct mt_job *j,
			     const struct mt_config *c, char *buf, size_t cap)
{
	struct mt_layout l;

	if (mt_layout_of(m, j, c->pp, c->vpp, &l) || mt_layout_format(&l, buf, cap) < 0)
		return -1;
	return 0;
}

static inline int addg(struct mt_kv *o, int n, const char *k, double v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%g", v);
	return adds(o, n, k, buf);
}

/* The candidate's token dispatcher: the job's when pinned, else the one the
 * search chose. */
static inline int dispatcher_of(const struct mt_job *j, const struct mt_config *c)
{
	return j->moe_dispatcher != MT_DISPATCH_AUTO ? j->moe_dispatcher : c->dispatcher;
}

/* The modules Transformer Engine's per-layer graphs capture (the job's, or
 * megatune's default: perfmodel/graphs.h); Megatron-LM d98e8a6
 * transformer_config.py lines 2804-2852 check these combinations. */
static inline const char *graph_modules(const struct mt_model *m, const struct mt_job *j,
					char *buf, size_t cap, char sep)
{
	const unsigned scope = mt_graph_scope_of(m, j);
	const char sepstr[2] = { sep, '\0' };
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < MT_GS_N && len < cap; i++)
		if (scope & (1u << i))
			len += (size_t)snprintf(buf + len, cap - len, "%s%s", len ? sepstr : "",
						mt_graph_scope_name(i));
	return buf;
}

/* The fine-grained offload modules, separated by sep. */
static inline const char *offload_list(unsigned bits, char *buf, size_t cap, char sep)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < MT_OM_N; i++)
		if (bits & (1u << i))
			len += (size_t)snprintf(buf + len, cap > len ? cap - len : 0, "%s%s",
						len ? (sep == ' ' ? " " : ",") : "",
						mt_offload_module_name(i));
	return buf;
}

/* 1 when the job's target release spells full-iteration graphs as an
 * implementation of their own (core_v0.18.0, Bridge v0.6.0), 0 when as the
 * local implementation's scope (core_v0.16.0 and core_v0.17.x). */
static inline int full_graph_impl(int kind, int setting)
{
	const struct mt_flag_row *r = mt_flag_find(kind, kind == MT_FLAG_MEGATRON
						   ? "cuda-graph-impl=full_iteration"
						   : "model.cuda_graph_impl=full_iteration");

	return r && mt_flag_accepts(r, mt_release_resolve(kind, setting));
}

/* The model's own flags (mt_megatron_args' first items), appended to the n of o;
 * returns the count. */
int mt_flags_model(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n);
/* The layers' implementation and the fusions the job turns off: Megatron-LM's flags,
 * or with bridge the TransformerConfig fields; returns the count. */
int mt_flags_layers(const struct mt_model *m, const struct mt_job *j, struct mt_kv *o, int n,
		    int bridge);

#endif
