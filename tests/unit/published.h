/* SPDX-License-Identifier: MIT */
/* published: what the tests against published runs share (t-published.c,
 * t-effects.c): reading a row of a published CSV table, and setting a job's
 * pins from a JSON object of tests/fixtures/published/ (setup.json rows and
 * effects.json sides use the same keys).
 *
 * Pin keys: tp pp vpp cp ep etp mbs (integers); recompute (none, selective,
 * full); recompute_modules ("layernorm,moe_act"); recompute_layers (N or
 * "all"); dist_opt tp_comm_overlap overlap_grad_reduce ce_fusion ep_overlap
 * cuda_graphs moe_rank_budget full_iteration_graphs overlap_p2p
 * grad_accum_fusion (booleans); offload_layers; moe_dispatcher (alltoall,
 * allgather, flex); moe_flex_backend (deepep, hybridep); moe_balance (aux,
 * pretrained, forced, drop:CF); fsdp (false, true or "megatron", "torch"); pp_layout. */
#ifndef MT_TEST_PUBLISHED_H
#define MT_TEST_PUBLISHED_H

#include <stdio.h>

#include <cjson/cJSON.h>

#include "testutil.h"

#include "../../perfmodel/cluster.h"
#include "../../perfmodel/config.h"
#include "../../perfmodel/dispatch.h"
#include "../../perfmodel/host.h"
#include "../../perfmodel/layout.h"
#include "../../perfmodel/recompute.h"

/* The end of the field that starts at p: a comma or the line's end outside
 * double quotes (the files quote fields that hold commas). */
static inline const char *pub_field_end(const char *p)
{
	int q = 0;

	for (; *p && *p != '\r' && *p != '\n'; p++) {
		if (*p == '"')
			q = !q;
		else if (*p == ',' && !q)
			break;
	}
	return p;
}

/* Column of `name` in a CSV header line, or -1. */
static inline int pub_col(const char *header, const char *name)
{
	char buf[1024], *tok, *save = NULL;
	int i = 0;

	snprintf(buf, sizeof(buf), "%s", header);
	for (tok = strtok_r(buf, ",\r\n", &save); tok; tok = strtok_r(NULL, ",\r\n", &save), i++)
		if (!strcmp(tok, name))
			return i;
	return -1;
}

/* Field i of a CSV line, quotes kept. */
static inline const char *pub_field(const char *line, int i, char *out, size_t cap)
{
	const char *p = line;
	size_t n;

	while (i-- > 0) {
		p = pub_field_end(p);
		if (*p != ',')
			return "";
		p++;
	}
	n = (size_t)(pub_field_end(p) - p);
	if (n >= cap)
		n = cap - 1;
	memcpy(out, p, n);
	out[n] = '\0';
	return out;
}

static inline double pub_num(const char *header, const char *line, const char *name, double dflt)
{
	char buf[128];
	int c = pub_col(header, name);
	const char *f;

	if (c < 0)
		return dflt;
	f = pub_field(line, c, buf, sizeof(buf));
	if (!*f || !strcmp(f, "n/a"))
		return dflt;
	return atof(f);
}

static inline double pub_first_num(const char *header, const char *line,
				   const char *const *names, double dflt)
{
	for (; *names; names++)
		if (pub_col(header, *names) >= 0)
			return pub_num(header, line, *names, dflt);
	return dflt;
}

#define PUB_NAMES(...) ((const char *const[]){ __VA_ARGS__, NULL })

static inline int pub_onoff(const cJSON *pins, const char *key, int dflt)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(pins, key);

	return cJSON_IsBool(v) ? cJSON_IsTrue(v) : dflt;
}

static inline void pub_int(const cJSON *pins, const char *key, int *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(pins, key);

	if (cJSON_IsNumber(v))
		*out = v->valueint;
}

/* Set the job's pins (and the cluster's flex backend) from pins; a layout
 * named by pp_layout is parsed into *layout, which must outlive the job. */
static inline void pub_apply_pins(const cJSON *pins, struct mt_job *j, struct mt_cluster *c,
				  struct mt_layout *layout)
{
	static const char *const keys[] = {
		"tp", "pp", "vpp", "cp", "ep", "etp", "mbs", "recompute", "recompute_modules",
		"recompute_layers", "dist_opt", "tp_comm_overlap", "overlap_grad_reduce", "overlap_param_gather",
		"ce_fusion", "ep_overlap", "cuda_graphs", "moe_rank_budget",
		"full_iteration_graphs", "overlap_p2p", "grad_accum_fusion", "offload_layers",
		"fsdp", "moe_dispatcher", "moe_balance", "moe_flex_backend", "pp_layout",
		"cuda_graph_scope", NULL
	};
	const cJSON *v;

	if (!pins)
		return;
	cJSON_ArrayForEach(v, pins) {
		size_t i;

		for (i = 0; keys[i] && strcmp(keys[i], v->string); i++)
			;
		if (!keys[i])
			fail_msg("pins: unknown key '%s'", v->string);
	}
	pub_int(pins, "tp", &j->pins.tp);
	pub_int(pins, "pp", &j->pins.pp);
	pub_int(pins, "vpp", &j->pins.vpp);
	pub_int(pins, "cp", &j->pins.cp);
	pub_int(pins, "ep", &j->pins.ep);
	pub_int(pins, "etp", &j->pins.etp);
	pub_int(pins, "mbs", &j->pins.mbs);
	if ((v = cJSON_GetObjectItem(pins, "recompute")))
		j->pins.recompute = mt_recompute_parse(v->valuestring);
	if ((v = cJSON_GetObjectItem(pins, "recompute_modules"))) {
		unsigned bits = 0;
		char bad[32];

		assert_int_equal(mt_rc_modules_parse(v->valuestring, &bits, bad, sizeof(bad)), 0);
		j->pins.recompute_modules = (int)bits;
	}
	if ((v = cJSON_GetObjectItem(pins, "recompute_layers")))
		j->pins.recompute_layers = cJSON_IsString(v) && !strcmp(v->valuestring, "all")
						   ? MT_ALL_LAYERS : v->valueint;
	j->pins.dist_opt = pub_onoff(pins, "dist_opt", j->pins.dist_opt);
	j->pins.tp_overlap = pub_onoff(pins, "tp_comm_overlap", j->pins.tp_overlap);
	j->pins.overlap_grad = pub_onoff(pins, "overlap_grad_reduce", j->pins.overlap_grad);
	j->pins.overlap_param = pub_onoff(pins, "overlap_param_gather", j->pins.overlap_param);
	j->pins.fused_ce = pub_onoff(pins, "ce_fusion", j->pins.fused_ce);
	j->pins.ep_overlap = pub_onoff(pins, "ep_overlap", j->pins.ep_overlap);
	j->pins.cuda_graph = pub_onoff(pins, "cuda_graphs", j->pins.cuda_graph);
	j->pins.rank_budget = pub_onoff(pins, "moe_rank_budget", j->pins.rank_budget);
	j->pins.full_graph = pub_onoff(pins, "full_iteration_graphs", j->pins.full_graph);
	j->pins.p2p_overlap = pub_onoff(pins, "overlap_p2p", j->pins.p2p_overlap);
	j->grad_accum_fusion = pub_onoff(pins, "grad_accum_fusion", j->grad_accum_fusion);
	pub_int(pins, "offload_layers", &j->pins.offload_layers);
	if ((v = cJSON_GetObjectItem(pins, "fsdp")))
		j->pins.fsdp = cJSON_IsBool(v) ? (cJSON_IsTrue(v) ? MT_FSDP_MEGATRON : MT_FSDP_OFF)
			       : !strcmp(v->valuestring, "torch") ? MT_FSDP_TORCH : MT_FSDP_MEGATRON;
	if ((v = cJSON_GetObjectItem(pins, "moe_dispatcher")))
		assert_true((j->moe_dispatcher = mt_dispatcher_parse(v->valuestring)) >= 0);
	if ((v = cJSON_GetObjectItem(pins, "moe_balance"))) {
		j->moe_balance = !strcmp(v->valuestring, "forced")       ? MT_BAL_FORCED
				 : !strcmp(v->valuestring, "pretrained") ? MT_BAL_PRETRAINED
									 : MT_BAL_AUX;
		if (!strncmp(v->valuestring, "drop:", 5)) {
			j->moe_balance = MT_BAL_DROP;
			j->moe_capacity = atof(v->valuestring + 5);
		}
	}
	if ((v = cJSON_GetObjectItem(pins, "moe_flex_backend")))
		assert_int_equal(mt_dispatch_use_backend(&c->dispatch,
							 !strcmp(v->valuestring, "hybridep")
								 ? MT_FLEX_HYBRIDEP
								 : MT_FLEX_DEEPEP),
				 0);
	if ((v = cJSON_GetObjectItem(pins, "cuda_graph_scope"))) {
		char bad[64];

		assert_int_equal(mt_graph_scope_parse(v->valuestring, &j->graph_scope, bad,
						      sizeof(bad)), 0);
		if (j->pins.cuda_graph == MT_UNSET)
			j->pins.cuda_graph = 1;
	}
	if ((v = cJSON_GetObjectItem(pins, "pp_layout"))) {
		struct mt_error err = MT_ERROR_INIT;

		assert_int_equal(mt_layout_parse(v->valuestring, layout, &err), 0);
		j->pins.layout = layout;
	}
}

#endif
