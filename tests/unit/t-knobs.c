/* SPDX-License-Identifier: MIT */
/* The knob table (job/knobs.def): its columns agree with the rule facts and
 * the release table, and a candidate printed as Megatron-LM arguments reads
 * back, knob by knob, into the same configuration. */
#include "testutil.h"

#include <stdio.h>

#include "../../tuner/search.h"
#include "../../job/flags.h"
#include "../../job/flagtable.h"
#include "../../job/knobs.h"
#include "../../job/megatron.h"
#include "../../rules/engine.h"
#include "../../rules/facts.h"
#include "../../rules/ruleset.h"

static void test_table(void **state)
{
	int k, i;

	(void)state;
	for (k = 0; k < MT_KNOB_N; k++) {
		const struct mt_knob *kn = &mt_knobs[k];
		char flag[96];

		/* a fact named is a fact of the rules */
		if (kn->fact && mt_fact_find(kn->fact, strlen(kn->fact)) < 0)
			fail_msg("knob --%s: fact '%s' is not in the fact table", kn->cli, kn->fact);
		assert_int_equal(mt_knob_by_cli(kn->cli), k);
		for (i = 0; i < k; i++)
			if (!strcmp(mt_knobs[i].json, kn->json))
				fail_msg("knobs --%s and --%s share the JSON key '%s'", kn->cli,
					 mt_knobs[i].cli, kn->json);
		/* every flag the table names has its row of releases (flagtable.def) */
		mt_knob_flag(k, flag, sizeof(flag));
		if (kn->group != MT_KG_GENERIC && k != MT_KNOB_P2P_OVERLAP && *flag &&
		    !mt_flag_find(MT_FLAG_MEGATRON, flag))
			fail_msg("knob --%s: --%s has no row in job/flagtable.def", kn->cli, flag);
		/* the candidate's knobs are printed as overrides (a job setting
		 * such as the quantised gather comes with Bridge's precision recipe;
		 * the gradients' precision is a note: Bridge copies the recipe's
		 * onto ddp) */
		if (kn->group != MT_KG_GENERIC && kn->cfg >= 0 && k != MT_KNOB_GRAD_FP32 &&
		    *kn->bridge &&
		    !mt_flag_find(MT_FLAG_BRIDGE, kn->bridge))
			fail_msg("knob --%s: %s has no row in job/flagtable.def", kn->cli, kn->bridge);
	}
}

/* What the printed flags can say of a knob (job/flags.c prints a setting
 * only where Megatron-LM uses it): the value to compare, or MT_UNSET. */
static long long said(const struct mt_model *m, const struct mt_config *c, int k)
{
	switch (k) {
	case MT_KNOB_CP_COMM:
		return c->cp > 1 ? c->cp_comm : MT_UNSET;
	case MT_KNOB_EP: case MT_KNOB_ETP: case MT_KNOB_DISPATCHER: case MT_KNOB_EP_OVERLAP:
		return m->experts ? mt_knob_cfg(c, k) : MT_UNSET;
	case MT_KNOB_OVERLAP_PARAM:
		return c->dist_opt && c->overlap_param && c->overlap_grad;
	case MT_KNOB_TP_OVERLAP:
		return c->tp_overlap && c->sp;
	case MT_KNOB_RC_LAYERS:
		return c->recompute == MT_RC_FULL ? c->recompute_layers : MT_UNSET;
	default:
		return mt_knob_cfg(c, k);
	}
}

struct golden {
	const char *model, *cluster;
	int gpus, seq, gbs, precision;
};

/* the advise jobs of tests/golden/outputs.cmds */
static const struct golden golden[] = {
	{ "llama3-70b", "dgx-h100", 64, 8192, 128, MT_PREC_BF16 },
	{ "llama3-8b", "dgx-h100", 8, 8192, 64, MT_PREC_BF16 },
	{ "deepseek-v3", "dgx-h100", 1024, 4096, 8192, MT_PREC_BF16 },
	{ "qwen3-235b-a22b", "dgx-h100", 256, 4096, 2048, MT_PREC_BF16 },
	{ "mixtral-8x7b", "dgx-a100-80g", 64, 4096, 256, MT_PREC_BF16 },
	{ "llama3-70b", "dgx-h100", 64, 65536, 64, MT_PREC_BF16 },
	{ "llama3.1-405b", "dgx-h200", 512, 8192, 512, MT_PREC_FP8 },
	{ "tests/fixtures/models/hf-qwen2-7b.json", "dgx-b200", 16, 4096, 128, MT_PREC_BF16 },
};

/* The changes check tries come from the table: every knob is tried or says
 * why not, the orders are distinct, a change frees only knobs it does not
 * also try on their own unless they lead one, and the list holds them all in
 * order. */
static void test_changes(void **state)
{
	int order_seen[MT_KNOB_N + 2] = { 0 }, list[MT_KNOB_N], n, k, i, tried = 0;

	(void)state;
	for (k = 0; k < MT_KNOB_N; k++) {
		const struct mt_knob *kn = &mt_knobs[k];

		if (!kn->try_order) {
			assert_non_null(kn->notry);
			assert_true(strlen(kn->notry) > 10);
			assert_null(kn->change);
			continue;
		}
		tried++;
		assert_null(kn->notry);
		assert_non_null(kn->change);
		assert_true(kn->try_order <= MT_KNOB_N + 1);
		assert_int_equal(order_seen[kn->try_order], 0);
		order_seen[kn->try_order] = 1;
		for (i = 0; i < 4 && kn->follow[i] >= 0; i++)
			assert_true(kn->follow[i] < MT_KNOB_N && kn->follow[i] != k);
		assert_true(i < 4);
	}
	n = mt_knob_changes(list, MT_KNOB_N);
	assert_int_equal(n, tried);
	for (i = 1; i < n; i++)
		assert_true(mt_knobs[list[i - 1]].try_order < mt_knobs[list[i]].try_order);
	/* of the two the hand-written list once left out, the rank budget is
	 * tried; full-iteration graphs, which turn the loss NaN check off, say so */
	assert_true(mt_knobs[MT_KNOB_RANK_BUDGET].try_order > 0);
	assert_non_null(strstr(mt_knobs[MT_KNOB_FULL_GRAPH].notry, "NaN check"));
}

/* Each knob in a spare slot has a slot of its own, inside the arrays, in the
 * pins and in the configuration alike. */
static void test_slots(void **state)
{
	int k, i;

	(void)state;
	for (k = 0; k < MT_KNOB_N; k++) {
		if (!mt_knob_in_slot(k))
			continue;
		assert_true(mt_knobs[k].pin >= offsetof(struct mt_job, pins.extra) &&
			    mt_knobs[k].pin < offsetof(struct mt_job, pins.extra) + sizeof(int) * MT_KNOB_EXTRA);
		assert_true(mt_knobs[k].cfg >= (long)offsetof(struct mt_config, extra) &&
			    mt_knobs[k].cfg < (long)(offsetof(struct mt_config, extra) + sizeof(int) * MT_KNOB_EXTRA));
		assert_int_equal(mt_knobs[k].pin - offsetof(struct mt_job, pins.extra),
				 mt_knobs[k].cfg - (long)offsetof(struct mt_config, extra));
		for (i = k + 1; i < MT_KNOB_N; i++)
			if (mt_knob_in_slot(i))
				assert_true(mt_knobs[i].cfg != mt_knobs[k].cfg);
	}
}

static void round_trip(const struct mt_model *m, const struct mt_job *j, const struct mt_eval *e,
		       int *checked)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_kv kv[MT_FLAGS_MAX];
	struct mt_config back;
	int n = mt_megatron_args(m, j, &e->cfg, kv), k;

	memset(&back, 0, sizeof(back));
	if (mt_megatron_read(kv, n, &back, &err))
		fail_msg("%s: %s", m->name, err.msg);
	for (k = 0; k < MT_KNOB_N; k++) {
		long long want = said(m, &e->cfg, k), got = said(m, &back, k);

		if (k == MT_KNOB_P2P_OVERLAP) {
			want = mt_p2p_blocks(&e->cfg);
			got = back.p2p_blocking;
		}
		if (mt_knobs[k].cfg < 0 && k != MT_KNOB_P2P_OVERLAP)
			continue;
		if (want != got)
			fail_msg("%s on %d GPUs: --%s printed as %lld, read back as %lld", m->name,
				 j->gpus, mt_knobs[k].cli, want, got);
		(*checked)++;
	}
}

static void test_round_trip(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs = NULL;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	unsigned i;
	int t, checked = 0, candidates = 0;

	(void)state;
	assert_non_null(r);
	assert_int_equal(mt_ruleset_load_files(NULL, 0, 1, &rs, &err), 0);
	for (i = 0; i < sizeof(golden) / sizeof(golden[0]); i++) {
		struct mt_cluster *c = NULL;
		struct mt_rules_run *rr = NULL;
		struct mt_model m;
		struct mt_job j;

		assert_int_equal(mt_model_load(golden[i].model, &m, &err), 0);
		assert_int_equal(mt_cluster_load(golden[i].cluster, &c, &err), 0);
		mt_job_init(&j);
		j.gpus = golden[i].gpus;
		j.seq = golden[i].seq;
		j.gbs = golden[i].gbs;
		j.precision = golden[i].precision;
		j.top_k = 10;
		assert_int_equal(mt_rules_start(rs, &m, c, &j, &rr, &err), 0);
		if (mt_search(&m, c, &j, rr, r, &err))
			fail_msg("%s: %s", golden[i].model, err.msg);
		for (t = 0; t < r->ntop; t++, candidates++)
			round_trip(&m, &j, &r->top[t], &checked);
		mt_rules_end(rr);
		mt_cluster_free(c);
	}
	if (mt_test_verbose())
		printf("# %d candidates, %d knob values read back\n", candidates, checked);
	assert_true(candidates >= 40);
	mt_ruleset_free(rs);
	free(r);
}

/* A flag that says a knob's value wrongly is refused, naming it. */
static void test_read_bad(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config c;
	struct mt_kv kv[2] = { { "tensor-model-parallel-size", "0x8" },
			       { "recompute-granularity", "some" } };

	(void)state;
	memset(&c, 0, sizeof(c));
	assert_int_equal(mt_megatron_read(kv, 1, &c, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "--tensor-model-parallel-size: expected a positive integer"));
	err = (struct mt_error)MT_ERROR_INIT;
	assert_int_equal(mt_megatron_read(kv + 1, 1, &c, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "none, selective or full"));
}

/* --recompute-modules: a list both ways, read back from Megatron-LM's
 * space-separated nargs list; selective alone is core_attn; an unknown name
 * is refused with the list. */
static void test_rc_modules(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_config c;
	struct mt_kv kv[2] = { { "recompute-granularity", "selective" },
			       { "recompute-modules", "mlp mla_up_proj" } };
	char buf[MT_KNOB_FMT_MAX], want[200];
	int v;

	(void)state;
	assert_int_equal(mt_knob_parse(MT_KNOB_RC_MODULES, "moe_act,layernorm", &v, want,
				       sizeof(want)), 0);
	assert_string_equal(mt_knob_format(MT_KNOB_RC_MODULES, v, buf, sizeof(buf)),
			    "moe_act,layernorm");
	assert_int_equal(mt_knob_parse(MT_KNOB_RC_MODULES, "core_attn,everything", &v, want,
				       sizeof(want)), -1);
	assert_non_null(strstr(want, "shared_experts"));
	assert_non_null(strstr(want, "'everything'"));
	assert_int_equal(mt_knob_parse(MT_KNOB_RC_MODULES, "", &v, want, sizeof(want)), -1);
	memset(&c, 0, sizeof(c));
	assert_int_equal(mt_megatron_read(kv, 2, &c, &err), MT_OK);
	assert_int_equal(c.recompute, MT_RC_SELECTIVE);
	assert_int_equal(c.recompute_modules, (1 << 3) | (1 << 4)); /* mla_up_proj, mlp */
	memset(&c, 0, sizeof(c));
	assert_int_equal(mt_megatron_read(kv, 1, &c, &err), MT_OK);
	assert_int_equal(c.recompute_modules, 1); /* core_attn */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_changes),
		cmocka_unit_test(test_slots),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_read_bad),
		cmocka_unit_test(test_rc_modules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
