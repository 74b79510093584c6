/* SPDX-License-Identifier: MIT */
/* knobs: the table (knobs.def) and the walks every reader and writer share. */
#include "knobs.h"

#include <stdio.h>
#include <string.h>

#include "../lib/num.h"
#include "../perfmodel/constants.h"
#include "../perfmodel/dispatch.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/recompute.h"

#define DERIVED MT_KNOB_DERIVED
#define PIN(f) offsetof(struct mt_job, f)
#define CFG(f) (long)offsetof(struct mt_config, f), 0
#define CFG64(f) (long)offsetof(struct mt_config, f), 1
#define NOCFG -1L, 0
#define FACT(id, name, type, stage, kbit, unit, desc) name, kbit
#define NOFACT NULL, 0u
#define PINS MT_KG_PINS
#define SETTINGS MT_KG_SETTINGS
#define GENERIC MT_KG_GENERIC
#define TIMED MT_KG_TIMED

const struct mt_knob mt_knobs[MT_KNOB_N] = {
#define TRY(order, name, scope, follow) order, name, scope, follow, NULL
#define NOTRY(why) 0, NULL, 0, { -1 }, why
#define FOLLOW(...) { __VA_ARGS__, -1 }
#define ALONE { -1 }
#define ALL 0
#define MOE 1
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	     change, help) \
	{ cli, meta, MT_KT_##type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	  change, help },
#include "knobs.def"
#undef KNOB
};

#define G_PINS(id)
#define G_SETTINGS(id)
#define G_GENERIC(id)
#define G_TIMED(id) id,
const int mt_knobs_timed[] = {
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	     change, help) G_##group(MT_KNOB_##id)
#include "knobs.def"
#undef KNOB
	-1
};
#undef G_PINS
#undef G_SETTINGS
#undef G_GENERIC
#undef G_TIMED
const int mt_knobs_ntimed = (int)(sizeof(mt_knobs_timed) / sizeof(mt_knobs_timed[0])) - 1;

/* every pin lies inside the job (an extra[i] past MT_KNOB_EXTRA fails here only
 * when it also runs past struct mt_job; keep i below MT_KNOB_EXTRA) */
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, ...) \
	_Static_assert(pin < sizeof(struct mt_job), "knobs.def: " #id ": the pin is outside the job");
#include "knobs.def"
#undef KNOB

/* a TIMED row is searched over a handful of values and has the value
 * Megatron-LM runs without its flag as its default */
#define KNOB(id, cli, meta, type, lo, hi, dflt, pin, cfg, fact, json, mlm, bridge, verl, group, \
	     ...) \
	_Static_assert(group != MT_KG_TIMED || ((hi) - (lo) < MT_KNOB_VALUES_MAX && (dflt) >= (lo) && \
						(dflt) <= (hi)), \
		       "knobs.def: " #id ": a TIMED knob needs at most 16 values and its default among them");
#include "knobs.def"
#undef KNOB

int mt_knob_in_slot(int k)
{
	return mt_knobs[k].group == MT_KG_GENERIC || mt_knobs[k].group == MT_KG_TIMED;
}

int mt_knob_values(int k, int *out, int max)
{
	const struct mt_knob *kn = &mt_knobs[k];
	long long v;
	int n = 0;

	for (v = kn->lo; v <= kn->hi && n < max; v++)
		out[n++] = (int)v;
	return n;
}

int mt_knob_changes(int *out, int max)
{
	int n = 0, order, k;

	/* the orders are few and small: a walk per order keeps it stable */
	for (order = 1; order <= MT_KNOB_N + 1 && n < max; order++)
		for (k = 0; k < MT_KNOB_N && n < max; k++)
			if (mt_knobs[k].try_order == order)
				out[n++] = k;
	return n;
}

int mt_knob_by_cli(const char *cli)
{
	int k;

	for (k = 0; k < MT_KNOB_N; k++)
		if (!strcmp(mt_knobs[k].cli, cli))
			return k;
	return -1;
}

int mt_knob_by_fact(const char *fact)
{
	int k;

	for (k = 0; k < MT_KNOB_N; k++)
		if (mt_knobs[k].fact && !strcmp(mt_knobs[k].fact, fact))
			return k;
	return -1;
}

int mt_knob_pin(const struct mt_job *j, int k)
{
	int v;

	memcpy(&v, (const char *)j + mt_knobs[k].pin, sizeof(v));
	return v;
}

void mt_knob_set_pin(struct mt_job *j, int k, int v)
{
	memcpy((char *)j + mt_knobs[k].pin, &v, sizeof(v));
}

int mt_knob_differs(const struct mt_config *a, const struct mt_config *b, int k)
{
	long long va = mt_knob_cfg(a, k), vb = mt_knob_cfg(b, k);

	if (mt_knobs[k].cfg < 0 || va == vb)
		return 0;
	if (k == MT_KNOB_RC_METHOD) /* a method counts only between two full candidates */
		return a->recompute == MT_RC_FULL && b->recompute == MT_RC_FULL;
	if (mt_knobs[k].type == MT_KT_OPT_DTYPE) /* the optimizer's dtypes: between two with it */
		return a->prec_opt && b->prec_opt;
	return k != MT_KNOB_RC_MODULES || (va > 0 && vb > 0);
}

/* The dtype --precision-aware-optimizer on gives a state unless pinned */
static long long opt_dtype_default(int k)
{
	return k == MT_KNOB_MAIN_PARAMS ? MT_OD_MASTER_DEFAULT : MT_OD_MOMENT_DEFAULT;
}

int mt_knob_shows(const struct mt_config *a, const struct mt_config *b, int k)
{
	long long va = mt_knob_cfg(a, k);

	if (mt_knob_differs(a, b, k))
		return 1;
	if (k == MT_KNOB_RC_MODULES)
		return a->recompute == MT_RC_SELECTIVE && va > 0 && b->recompute != MT_RC_SELECTIVE;
	if (k == MT_KNOB_RC_METHOD)
		return a->recompute == MT_RC_FULL && va == MT_RC_UNIFORM && b->recompute != MT_RC_FULL;
	if (mt_knobs[k].type == MT_KT_OPT_DTYPE)
		return a->prec_opt && !b->prec_opt && va != opt_dtype_default(k);
	return 0;
}

long long mt_knob_cfg(const struct mt_config *c, int k)
{
	const struct mt_knob *kn = &mt_knobs[k];
	int64_t v64;
	int v;

	if (kn->cfg < 0)
		return MT_UNSET;
	if (kn->cfg64) {
		memcpy(&v64, (const char *)c + kn->cfg, sizeof(v64));
		return v64;
	}
	memcpy(&v, (const char *)c + kn->cfg, sizeof(v));
	return v;
}

void mt_knob_set_cfg(struct mt_config *c, int k, long long v)
{
	const struct mt_knob *kn = &mt_knobs[k];
	int64_t v64 = v;
	int v32 = (int)v;

	if (kn->cfg < 0)
		return;
	if (kn->cfg64)
		memcpy((char *)c + kn->cfg, &v64, sizeof(v64));
	else
		memcpy((char *)c + kn->cfg, &v32, sizeof(v32));
}

int mt_knob_parse(int k, const char *s, int *out, char *want, size_t cap)
{
	const struct mt_knob *kn = &mt_knobs[k];
	long long v;
	int x = -1;

	switch (kn->type) {
	case MT_KT_INT:
	case MT_KT_LAYERS:
		if (kn->type == MT_KT_LAYERS && !strcmp(s, "all")) {
			*out = MT_ALL_LAYERS;
			return 0;
		}
		if (kn->lo == 1 && kn->hi == 1 << 24)
			snprintf(want, cap, "a positive integer%s",
				 kn->type == MT_KT_LAYERS ? " or all" : "");
		else
			snprintf(want, cap, "an integer from %lld to %lld%s", kn->lo, kn->hi,
				 kn->type == MT_KT_LAYERS ? " or all" : "");
		if (mt_parse_int(s, kn->lo, kn->hi, &v))
			return -1;
		*out = (int)v;
		return 0;
	case MT_KT_ONOFF:
		snprintf(want, cap, "on or off");
		x = mt_parse_onoff(s);
		break;
	case MT_KT_RECOMPUTE:
		snprintf(want, cap, "none, selective or full");
		x = mt_recompute_parse(s);
		break;
	case MT_KT_RC_METHOD:
		snprintf(want, cap, "block or uniform");
		x = mt_rc_method_parse(s);
		break;
	case MT_KT_OPT_DTYPE: {
		size_t o = 0;

		for (v = kn->lo; v <= kn->hi && o < cap; v++)
			o += (size_t)snprintf(want + o, cap - o, "%s%s",
					      v == kn->lo ? "" : v == kn->hi ? " or " : ", ",
					      mt_opt_dtype_name((int)v));
		x = mt_opt_dtype_parse(s);
		if (x < kn->lo || x > kn->hi)
			return -1;
		break;
	}
	case MT_KT_CP_COMM:
		snprintf(want, cap, "p2p, all_gather, a2a or a2a+p2p");
		x = mt_cp_comm_parse(s);
		break;
	case MT_KT_FSDP:
		snprintf(want, cap, "on, off, megatron or torch");
		if ((x = mt_fsdp_impl_parse(s)) < 0 && (x = mt_parse_onoff(s)) >= 0)
			x = x ? MT_FSDP_MEGATRON : MT_FSDP_OFF;
		break;
	case MT_KT_GRAD_DTYPE:
		snprintf(want, cap, "fp32 or bf16");
		x = !strcmp(s, "fp32") ? 1 : !strcmp(s, "bf16") ? 0 : -1;
		break;
	case MT_KT_RC_MODULES: {
		char bad[64];
		unsigned bits;

		if (!mt_rc_modules_parse(s, &bits, bad, sizeof(bad))) {
			*out = (int)bits;
			return 0;
		}
		snprintf(want, cap, "modules from core_attn, moe_act, layernorm, mla_up_proj, mlp, "
			 "moe, shared_experts, separated by commas%s%s%s", *bad ? " ('" : "", bad,
			 *bad ? "' is none of them)" : "");
		return -1;
	}
	case MT_KT_DISPATCHER:
		snprintf(want, cap, "alltoall, allgather, flex or auto");
		x = mt_dispatcher_parse(s);
		if (x < MT_DISPATCH_AUTO)
			return -1;
		*out = x;
		return 0;
	}
	if (x < 0)
		return -1;
	*out = x;
	return 0;
}

const char *mt_knob_format(int k, long long v, char *buf, size_t cap)
{
	switch (mt_knobs[k].type) {
	case MT_KT_ONOFF:
		return v ? "on" : "off";
	case MT_KT_RECOMPUTE:
		return mt_recompute_name((int)v);
	case MT_KT_RC_METHOD:
		return mt_rc_method_name((int)v);
	case MT_KT_OPT_DTYPE:
		return mt_opt_dtype_name((int)v);
	case MT_KT_CP_COMM:
		return mt_cp_comm_name((int)v);
	case MT_KT_FSDP:
		return mt_fsdp_impl_name((int)v);
	case MT_KT_GRAD_DTYPE:
		return v ? "fp32" : "bf16";
	case MT_KT_DISPATCHER:
		return mt_dispatcher_name((int)v);
	case MT_KT_RC_MODULES:
		return v > 0 ? mt_rc_modules_format((unsigned)v, ',', buf, cap) : "none";
	case MT_KT_LAYERS:
		if (v == MT_ALL_LAYERS)
			return "all";
		/* fall through */
	default:
		snprintf(buf, cap, "%lld", v);
		return buf;
	}
}

unsigned mt_pinned_knobs(const struct mt_job *j)
{
	unsigned bits = 0;
	int k;

	for (k = 0; k < MT_KNOB_N; k++) {
		int v = mt_knob_pin(j, k);

		/* the dispatcher's unpinned value is auto */
		if (mt_knobs[k].type == MT_KT_DISPATCHER ? v != MT_DISPATCH_AUTO : v != MT_UNSET)
			bits |= mt_knobs[k].kbit;
	}
	return bits;
}

void mt_knobs_estimate_config(const struct mt_job *job, struct mt_config *cfg)
{
	int k;

	mt_config_settings(job, cfg);
	for (k = 0; k < MT_KNOB_N; k++) {
		const struct mt_knob *kn = &mt_knobs[k];
		int pin = mt_knob_pin(job, k);

		if (kn->cfg < 0 || kn->type == MT_KT_DISPATCHER)
			continue;
		if (pin != MT_UNSET)
			mt_knob_set_cfg(cfg, k, pin);
		else if (kn->dflt != MT_UNSET && kn->dflt != MT_KNOB_DERIVED)
			mt_knob_set_cfg(cfg, k, kn->dflt);
	}
	/* what follows from the others: VPP from a pinned layout, SP with TP */
	if (job->pins.vpp == MT_UNSET)
		cfg->vpp = mt_pins_vpp(&job->pins) != MT_UNSET ? mt_pins_vpp(&job->pins) : 1;
	if (job->pins.sp == MT_UNSET)
		cfg->sp = cfg->tp > 1;
	/* named recompute modules are selective recomputation; without it, none */
	if (job->pins.recompute_modules != MT_UNSET && job->pins.recompute == MT_UNSET)
		cfg->recompute = MT_RC_SELECTIVE;
	if (cfg->recompute != MT_RC_SELECTIVE)
		cfg->recompute_modules = 0;
	else if (cfg->recompute_modules <= 0)
		cfg->recompute_modules = MT_RCM_DEFAULT;
}

const char *mt_knob_flag(int k, char *buf, size_t cap)
{
	size_t i;

	snprintf(buf, cap, "%s", mt_knobs[k].megatron);
	for (i = 0; buf[i]; i++)
		if (buf[i] == '_')
			buf[i] = '-';
	return buf;
}

/* The knobs in spare slots that are set, other than to their default, as
 * key and value. */
static int generic(const struct mt_config *c, struct mt_kv *o, int n, int cap, int bridge)
{
	int k;

	for (k = 0; k < MT_KNOB_N && n < cap; k++) {
		const struct mt_knob *kn = &mt_knobs[k];
		long long v = mt_knob_cfg(c, k);
		char buf[MT_KNOB_FMT_MAX];

		if (!mt_knob_in_slot(k) || v == MT_UNSET || v == kn->dflt ||
		    !*(bridge ? kn->bridge : kn->megatron))
			continue;
		if (!bridge && kn->type == MT_KT_ONOFF && !v)
			continue; /* Megatron-LM's store_true flags: off is the flag left out */
		if (bridge)
			snprintf(o[n].key, sizeof(o[n].key), "%s", kn->bridge);
		else
			mt_knob_flag(k, o[n].key, sizeof(o[n].key));
		if (kn->type == MT_KT_ONOFF)
			snprintf(o[n].val, sizeof(o[n].val), "%s", bridge ? (v ? "true" : "false") : "");
		else if (kn->type == MT_KT_INT || kn->type == MT_KT_LAYERS)
			snprintf(o[n].val, sizeof(o[n].val), "%lld", v);
		else
			snprintf(o[n].val, sizeof(o[n].val), "%s", mt_knob_format(k, v, buf, sizeof(buf)));
		n++;
	}
	return n;
}

int mt_knobs_megatron_generic(const struct mt_config *c, struct mt_kv *o, int n, int cap)
{
	return generic(c, o, n, cap, 0);
}

int mt_knobs_bridge_generic(const struct mt_config *c, struct mt_kv *o, int n, int cap)
{
	return generic(c, o, n, cap, 1);
}
