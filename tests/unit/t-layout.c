/* SPDX-License-Identifier: MIT */
/* Pipeline layouts (perfmodel/layout.h): Megatron's grammar, the checks against
 * a model, the balanced layouts the search builds, and the strings written
 * back; the plan of a layout (perfmodel/pipeline.c) puts the MTP layers, the
 * embedding and the loss on the stages the layout names. */
#include <stdio.h>

#include "testutil.h"

#include "../../perfmodel/cluster.h"
#include "../../perfmodel/layout.h"
#include "../../perfmodel/model.h"
#include "../../perfmodel/perf.h"

static struct mt_model dsv3, llama8, qwen235;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	if (mt_model_load("deepseek-v3", &dsv3, &err) || mt_model_load("llama3-8b", &llama8, &err) ||
	    mt_model_load("qwen3-235b-a22b", &qwen235, &err)) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	return 0;
}

static int sum_t(const struct mt_layout *l)
{
	int c, n = 0;

	for (c = 0; c < l->n; c++)
		n += l->t[c];
	return n;
}

static void parses_megatron_grammar(void **state)
{
	struct mt_layout l;
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	/* the example of parse_str_to_list's docstring */
	assert_int_equal(mt_layout_parse("Ettt|(tt|)*29,m|L", &l, &err), MT_OK);
	assert_int_equal(l.n, 32);
	assert_int_equal(l.t[0], 3);
	assert_int_equal(l.t[1], 2);
	assert_int_equal(l.t[29], 2);
	assert_int_equal(l.t[30], 0);
	assert_int_equal(l.m[30], 1);
	assert_int_equal(l.mtp_chunk, 30);
	assert_int_equal(l.layers, 61);
	assert_int_equal(l.t[31], 0);
	/* single-character repetition inside a group, and a repeated '|' */
	assert_int_equal(mt_layout_parse("E(t*3|)*2t|*2tL", &l, &err), MT_OK);
	assert_int_equal(l.n, 5);
	assert_int_equal(l.t[0], 3);
	assert_int_equal(l.t[1], 3);
	assert_int_equal(l.t[2], 1);
	assert_int_equal(l.t[3], 0);
	assert_int_equal(l.t[4], 1);
	assert_int_equal(mt_layout_parse("E|(t|)*94L", &l, &err), MT_OK);
	assert_int_equal(l.n, 96);
	assert_int_equal(l.layers, 94);
}

static void refuses_bad_strings(void **state)
{
	struct mt_layout l;
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	assert_int_equal(mt_layout_parse("Et*3|tx|L", &l, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "--pp-layout: position 7: unknown symbol 'x'"));
	assert_int_equal(mt_layout_parse("tE|L", &l, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "position 1"));
	assert_int_equal(mt_layout_parse("Et|tL|t", &l, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "the loss must be the last symbol"));
	assert_int_equal(mt_layout_parse("Et|tm|m|L", &l, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "all MTP layers must be in one stage"));
	assert_int_equal(mt_layout_parse("E(t|)L", &l, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown symbol '('"));
	assert_int_equal(mt_layout_parse("", &l, &err), MT_EUSAGE);
	assert_int_equal(mt_layout_parse("E(t|)*99999L", &l, &err), MT_EUSAGE);
}

static void checks_against_model(void **state)
{
	struct mt_layout l;
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	assert_int_equal(mt_layout_parse("Et*3|(tt|)*29m|L", &l, &err), MT_OK);
	assert_int_equal(mt_layout_check(&l, &dsv3, 8, 4, &err), MT_OK);
	assert_int_equal(mt_layout_check(&l, &dsv3, 16, 0, &err), MT_OK);
	assert_int_equal(mt_layout_check(&l, &dsv3, 8, 2, &err), MT_EUSAGE);
	assert_int_equal(mt_layout_check(&l, &dsv3, 5, 0, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "not a multiple of PP 5"));
	/* the MTP chunk 30 is on the last virtual stage only with PP >= 2 */
	assert_int_equal(mt_layout_check(&l, &dsv3, 1, 0, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "last virtual stage"));
	assert_int_equal(mt_layout_check(&l, &llama8, 8, 4, &err), MT_EUSAGE);
	assert_non_null(strstr(err.msg, "has no MTP layers"));
	assert_int_equal(mt_layout_parse("Et*3|(tt|)*29t|L", &l, &err), MT_OK);
	assert_int_equal(mt_layout_check(&l, &dsv3, 8, 4, &err), MT_EUSAGE);
}

/* Any string of the grammar's characters is read or refused, never more: a
 * read layout has E first and L last and its chunks add up to its counts. */
static void random_strings(void **state)
{
	static const char alphabet[] = "EtmL|()*0123456789,x";
	struct mt_layout l;
	struct mt_error err = MT_ERROR_INIT;
	unsigned long long r = 20261123;
	char s[64];
	int i, k, len, c, t, m;

	(void)state;
	for (i = 0; i < 20000; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		len = (int)(r >> 58);
		for (k = 0; k < len; k++) {
			r = r * 6364136223846793005ull + 1442695040888963407ull;
			s[k] = alphabet[(r >> 33) % (sizeof(alphabet) - 1)];
		}
		s[len] = '\0';
		if (mt_layout_parse(s, &l, &err) != MT_OK) {
			assert_non_null(strstr(err.msg, "--pp-layout"));
			continue;
		}
		assert_true(l.n >= 1 && l.n <= MT_LAYOUT_MAX);
		for (c = 0, t = 0, m = 0; c < l.n; c++) {
			t += l.t[c];
			m += l.m[c];
		}
		assert_int_equal(t, l.layers);
		assert_int_equal(m, l.mtp);
	}
}

/* What the search builds: p x v non-empty chunks, every layer once, MTP on
 * the last virtual stage, a string that reads back to the same chunks, and
 * no heavier stage than NVIDIA's own DeepSeek-V3 layout. */
static void builds_balanced_layouts(void **state)
{
	static const struct {
		const struct mt_model *m;
		int pp, vpp;
	} cases[] = {
		{ &dsv3, 8, 4 }, { &dsv3, 16, 2 }, { &dsv3, 32, 1 }, { &dsv3, 4, 4 },
		{ &qwen235, 32, 3 }, { &qwen235, 8, 4 }, { &qwen235, 8, 8 }, { &llama8, 2, 6 },
	};
	struct mt_layout l, back, nv;
	struct mt_error err = MT_ERROR_INIT;
	char s[MT_LAYOUT_STR_MAX + 1];
	size_t i;
	int c;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct mt_model *m = cases[i].m;
		int pp = cases[i].pp, vpp = cases[i].vpp;

		assert_int_equal(mt_layout_balanced(m, 4096, pp, vpp, &l), 0);
		assert_int_equal(l.n, pp * vpp);
		assert_int_equal(sum_t(&l), m->layers);
		assert_int_equal(l.mtp, m->mtp_layers);
		for (c = 1; c + 1 < l.n; c++)
			assert_true(l.t[c] + l.m[c] > 0);
		assert_true(mt_layout_format(&l, s, sizeof(s)) > 0);
		assert_int_equal(mt_layout_parse(s, &back, &err), MT_OK);
		assert_int_equal(mt_layout_check(&back, m, pp, vpp, &err), MT_OK);
		assert_int_equal(back.n, l.n);
		assert_memory_equal(back.t, l.t, sizeof(l.t[0]) * (size_t)l.n);
		assert_memory_equal(back.m, l.m, sizeof(l.m[0]) * (size_t)l.n);
		if (mt_test_verbose())
			printf("# %s PP%d VPP%d: %s (heaviest stage %.3g)\n", m->name, pp, vpp, s,
			       mt_layout_max_stage(m, 4096, &l, pp));
	}
	/* one item per chunk when there are as many chunks as items */
	assert_int_equal(mt_layout_balanced(&qwen235, 4096, 32, 3, &l), 0);
	assert_true(mt_layout_format(&l, s, sizeof(s)) > 0);
	assert_string_equal(s, "E|(t|)*94L");
	/* more chunks than items: none */
	assert_int_equal(mt_layout_balanced(&llama8, 4096, 2, 18, &l), -1);
	/* never heavier than NVIDIA's DeepSeek-V3 PP8 VPP4 layout */
	assert_int_equal(mt_layout_balanced(&dsv3, 4096, 8, 4, &l), 0);
	assert_int_equal(mt_layout_parse("Et*3|(tt|)*29m|L", &nv, &err), MT_OK);
	assert_true(mt_layout_max_stage(&dsv3, 4096, &l, 8) <=
		    mt_layout_max_stage(&dsv3, 4096, &nv, 8));
	/* the weights: the loss of a large vocabulary outweighs a layer */
	assert_true(mt_layout_weight_loss(&qwen235) > mt_layout_weight_layer(&qwen235, 4096, 0));
	assert_true(mt_layout_weight_mtp(&dsv3, 4096) >
		    mt_layout_weight_layer(&dsv3, 4096, 60) + mt_layout_weight_loss(&dsv3));
}

/* The plan of a pinned layout: layers per stage as written, the MTP layers
 * on the stage of their chunk, with their own output layer. */
static void plan_follows_the_layout(void **state)
{
	struct mt_cluster *cl = NULL;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_layout l;
	struct mt_job j;
	struct mt_ctx x;
	struct mt_config cfg;
	struct mt_shape sh;
	struct mt_costs *a = calloc(1, sizeof(*a));
	struct mt_plan *p = calloc(1, sizeof(*p));
	int st, n;

	(void)state;
	assert_non_null(a);
	assert_non_null(p);
	assert_int_equal(mt_cluster_load("dgx-h100", &cl, &err), 0);
	mt_job_init(&j);
	j.gpus = 1024;
	j.seq = 4096;
	j.gbs = 8192;
	assert_int_equal(mt_layout_parse("Et*3|(tt|)*29m|L", &l, &err), MT_OK);
	j.pins.layout = &l;
	memset(&cfg, 0, sizeof(cfg));
	cfg.tp = 2;
	cfg.pp = 8;
	cfg.vpp = 4;
	cfg.cp = cfg.etp = cfg.mbs = 1;
	cfg.ep = 64;
	cfg.sp = 1;
	mt_config_settings(&j, &cfg);
	mt_ctx_init(&x, &dsv3, cl, &j);
	mt_shape_of(&cfg, &sh);
	mt_costs_compute(&x, &sh, a);
	assert_int_equal(mt_plan_compute(&x, a, 8, 4, 64, 128, &cfg, p), 0);
	assert_int_equal(p->split, MT_SPLIT_LAYOUT);
	/* chunk 30 (the MTP layer) is on stage 6 */
	assert_int_equal(p->mtp_stage, 6);
	/* stage 0: E, 3 dense layers, then 2 MoE layers in each of 3 chunks */
	assert_int_equal(p->nl[0][MT_L_DENSE], 3);
	assert_int_equal(p->nl[0][MT_L_MOE], 6);
	for (st = 1, n = 0; st < 8; st++)
		n += p->nl[st][MT_L_DENSE] + p->nl[st][MT_L_MOE];
	/* 52 layers on stages 1-7 plus the MTP layer counted as a layer */
	assert_int_equal(n, 52 + 1);
	assert_int_equal(p->nl[6][MT_L_MOE], 7);
	assert_int_equal(p->nl[7][MT_L_MOE], 6);
	/* the MTP stage is evaluated */
	for (st = 0, n = 0; st < p->nrep; st++)
		n += p->rep[st] == 6;
	assert_int_equal(n, 1);
	/* another PP x VPP than the pinned layout's: no plan */
	assert_int_equal(mt_plan_compute(&x, a, 16, 1, 32, 256, &cfg, p), -1);
	mt_cluster_free(cl);
	free(a);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_megatron_grammar),
		cmocka_unit_test(refuses_bad_strings),
		cmocka_unit_test(checks_against_model),
		cmocka_unit_test(random_strings),
		cmocka_unit_test(builds_balanced_layouts),
		cmocka_unit_test(plan_follows_the_layout),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
