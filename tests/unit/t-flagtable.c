/* SPDX-License-Identifier: MIT */
/* Flags by release: the table (job/flagtable.def) is well formed, holds
 * every Megatron-LM flag and Megatron-Bridge override megatune prints (the
 * configuration's own for every branch of job/flags.c and job/overrides.c,
 * the bundled rules' ARG and BRIDGE effects, the launch script's benchmark
 * arguments), and an older release gets the older spelling or a note. */
#include <stdio.h>

#include "testutil.h"

#include "../../tuner/advice.h"
#include "../../tuner/search.h"
#include "../../rules/engine.h"
#include "../../rules/ruleset.h"
#include "../../perfmodel/cluster.h"
#include "../../perfmodel/eager.h"
#include "../../job/flags.h"
#include "../../job/flagtable.h"
#include "../../job/launch.h"

static void rows_are_well_formed(void **state)
{
	const struct mt_flag_row *rows = NULL;
	int n, i, k, kind;

	(void)state;
	rows = mt_flag_rows(&n);
	assert_true(n > 100);
	for (kind = MT_FLAG_MEGATRON; kind <= MT_FLAG_BRIDGE; kind++) {
		assert_true(mt_release_count(kind) >= 5);
		for (i = 0; i < mt_release_count(kind); i++) {
			assert_int_equal(mt_release_find(kind, mt_release_name(kind, i)), i);
			for (k = 0; k < i; k++)
				assert_string_not_equal(mt_release_name(kind, k),
							mt_release_name(kind, i));
		}
		/* the forks follow the releases, each on a release of its kind */
		for (i = mt_release_count(kind); i < mt_release_count(kind) + mt_release_forks(kind);
		     i++) {
			assert_int_equal(mt_release_find(kind, mt_release_name(kind, i)), i);
			assert_true(mt_release_find(kind, mt_release_fork_base(kind, i)) >= 0);
			assert_true(mt_release_find(kind, mt_release_fork_base(kind, i)) <
				    mt_release_count(kind));
		}
		assert_null(mt_release_fork_base(kind, 0));
		assert_null(mt_release_name(kind, mt_release_count(kind) + mt_release_forks(kind)));
	}
	assert_int_equal(mt_release_forks(MT_FLAG_MEGATRON), 1);
	assert_string_equal(mt_release_name(MT_FLAG_MEGATRON, mt_release_count(MT_FLAG_MEGATRON)),
			    "loongforge");
	/* a fork accepts its base's rows and its own, not a later release's */
	{
		int lf = mt_release_find(MT_FLAG_MEGATRON, "loongforge");

		assert_true(mt_flag_accepts(mt_flag_find(MT_FLAG_MEGATRON, "offload-modules"), lf));
		assert_false(mt_flag_accepts(mt_flag_find(MT_FLAG_MEGATRON, "offload-modules"),
					     mt_release_find(MT_FLAG_MEGATRON, "core_v0.15.0")));
		assert_false(mt_flag_accepts(mt_flag_find(MT_FLAG_MEGATRON,
							  "cpu-offloading-num-layers"), lf));
		assert_true(mt_flag_accepts(mt_flag_find(MT_FLAG_MEGATRON,
							 "overlap-moe-expert-parallel-comm"), lf));
	}
	for (i = 0; i < n; i++) {
		const struct mt_flag_row *r = &rows[i];
		int first = mt_release_find(r->kind, r->first);

		if (first < 0)
			fail_msg("%s: first release %s is not in the table", r->name, r->first);
		if (r->last[0] && mt_release_find(r->kind, r->last) < first)
			fail_msg("%s: last release %s unknown or before %s", r->name, r->last,
				 r->first);
		if (r->older[0] && !mt_flag_find(r->kind, r->older))
			fail_msg("%s: older spelling %s has no row", r->name, r->older);
		if (r->older[0] && mt_release_find(r->kind, mt_flag_find(r->kind, r->older)->first)
		    >= first)
			fail_msg("%s: older spelling %s is not older", r->name, r->older);
		assert_true(r->conv >= MT_CONV_SAME && r->conv <= MT_CONV_BARE);
		if (!strchr(r->source, '@') || (r->source_new[0] && !strchr(r->source_new, '@')))
			fail_msg("%s: a source is file@tag", r->name);
		assert_true(r->name[0] && r->name[0] != '-');
		if (strchr(r->name, '=')) {
			/* a value row: its name has a row of its own */
			char base[96];

			snprintf(base, sizeof(base), "%.*s", (int)strcspn(r->name, "="), r->name);
			if (!mt_flag_find(r->kind, base))
				fail_msg("%s: no row for %s", r->name, base);
		} else {
			assert_true(r->kind == MT_FLAG_MEGATRON ? !strchr(r->name, '_') :
				    !strchr(r->name, '-'));
		}
		assert_ptr_equal(mt_flag_find(r->kind, r->name), r);
	}
	assert_int_equal(mt_release_find(MT_FLAG_MEGATRON, "0.14"),
			 mt_release_find(MT_FLAG_MEGATRON, "core_v0.14.0"));
	assert_int_equal(mt_release_find(MT_FLAG_BRIDGE, "0.5.0"),
			 mt_release_find(MT_FLAG_BRIDGE, "v0.5.0"));
	assert_int_equal(mt_release_find(MT_FLAG_MEGATRON, "0.1"), -1);
	assert_int_equal(mt_release_find(MT_FLAG_MEGATRON, "v0.5.0"), -1);
	assert_int_equal(mt_release_resolve(MT_FLAG_BRIDGE, 0),
			 mt_release_count(MT_FLAG_BRIDGE) - 1);
}

/* Every item of a list is a row the newest release accepts. */
static void assert_in_table(int kind, const struct mt_kv *kv, int n)
{
	int newest = mt_release_count(kind) - 1, i;

	for (i = 0; i < n; i++) {
		const struct mt_flag_row *r;

		if (mt_kv_is_note(&kv[i])) {
			if (strstr(kv[i].val, " needs Megatron") ||
			    strstr(kv[i].val, "accepted up to"))
				fail_msg("a release note at the newest release: %s", kv[i].val);
			continue;
		}
		r = mt_flag_find(kind, kv[i].key);
		if (!r)
			fail_msg("%s%s is printed but not in job/flagtable.def",
				 kind == MT_FLAG_MEGATRON ? "--" : "", kv[i].key);
		if (!mt_flag_accepts(r, newest))
			fail_msg("%s is not accepted by the newest release", kv[i].key);
	}
}

static void rule_effects_are_in_the_table(void **state)
{
	struct mt_ruleset *rs = mt_ruleset_new();
	int i, k, seen = 0;

	(void)state;
	assert_non_null(rs);
	assert_int_equal(mt_ruleset_add_bundled(rs), 0);
	for (i = 0; i < rs->n; i++)
		for (k = 0; k < rs->rules[i].nouts; k++) {
			const struct mt_rule_out *o = &rs->rules[i].outs[k];
			const char *key = o->key;

			if (o->kind == MT_OUT_ENV)
				continue;
			if (!strncmp(key, "--", 2))
				key += 2;
			if (!mt_flag_find(o->kind == MT_OUT_ARG ? MT_FLAG_MEGATRON : MT_FLAG_BRIDGE,
					  key))
				fail_msg("rule %s: %s is not in job/flagtable.def",
					 rs->rules[i].id, o->key);
			seen++;
		}
	assert_true(seen >= 10);
	mt_ruleset_free(rs);
}

static struct mt_model dense, moe, mla;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	return mt_model_load("llama3-70b", &dense, &err) ||
	       mt_model_load("mixtral-8x7b", &moe, &err) ||
	       mt_model_load("deepseek-v3", &mla, &err);
}

static void check_config(const struct mt_model *m, const struct mt_job *j,
			 const struct mt_config *c)
{
	struct mt_kv kv[MT_FLAGS_MAX];

	assert_in_table(MT_FLAG_MEGATRON, kv, mt_candidate_args(m, j, c, NULL, kv));
	assert_in_table(MT_FLAG_BRIDGE, kv, mt_candidate_bridge(m, j, c, NULL, kv));
}

/* Every branch of job/flags.c and job/overrides.c: splits, CP kinds, experts and dispatchers,
 * precision, recompute, offload, overlap, buckets, gradient reduction. */
static void every_branch_is_in_the_table(void **state)
{
	const struct mt_model *models[] = { &dense, &moe, &mla };
	struct mt_config c;
	struct mt_job j;
	int mi, v;

	(void)state;
	for (mi = 0; mi < 3; mi++)
		for (v = 0; v < 32; v++) {
			mt_job_init(&j);
			j.gpus = 64;
			j.seq = 8192;
			j.gbs = 256;
			j.precision = v & 1 ? MT_PREC_FP8 : MT_PREC_BF16;
			j.fp8_recipe = v & 2 ? MT_FP8_TENSORWISE : MT_FP8_DELAYED;
			j.moe_dispatcher = v & 4 ? MT_DISPATCH_FLEX : MT_DISPATCH_ALLTOALL;
			j.attn_impl = v & 8 ? MT_ATTN_UNFUSED : MT_ATTN_FLASH;
			if (v & 8) { /* Megatron-LM's own layers, every fusion off */
				j.transformer_impl = MT_TI_LOCAL;
				j.fusions_off = (1u << MT_FU_N) - 1;
				j.grad_accum_fusion = 0;
			}
			memset(&c, 0, sizeof(c));
			c.tp = c.pp = c.cp = c.ep = c.etp = c.mbs = c.dp = 1;
			c.pp = 4;
			c.vpp = v & 16 ? 2 : 1;
			c.split = v % 5; /* MT_SPLIT_LAYOUT included */
			c.fsdp = v % 3 == 1;
			c.first_layers = c.last_layers = 2;
			c.cp = v & 2 ? 4 : 1;
			c.cp_comm = v % 4;
			c.cp_a2a = 2;
			c.sp = c.tp_overlap = c.dist_opt = c.overlap_param = v & 4 ? 1 : 0;
			c.overlap_grad = c.fused_ce = c.grad_fp32 = v & 8 ? 1 : 0;
			c.bucket_params = v & 1 ? 40000000 : 0;
			c.recompute = v % 3;
			c.recompute_layers = 1;
			c.offload_layers = v & 16 ? 0 : 2;
			check_config(models[mi], &j, &c);
		}
}

/* The rules that add flags fire in searches of these jobs: dense, MoE with
 * both dispatchers, MLA, FP8, long sequence, B200 and GB200; the launch
 * script's own arguments too. */
static void searched_candidates_are_in_the_table(void **state)
{
	static const struct {
		const struct mt_model *m;
		const char *cluster;
		int gpus, seq, gbs, fp8, flex;
	} jobs[] = {
		{ &dense, "dgx-h100", 64, 8192, 512, 0, 0 },
		{ &dense, "dgx-h100", 64, 65536, 64, 0, 0 },
		{ &dense, "dgx-b200", 64, 8192, 512, 1, 0 },
		{ &moe, "dgx-h100", 64, 4096, 512, 0, 1 },
		{ &moe, "gb200-nvl72", 72, 4096, 576, 1, 0 },
		{ &mla, "dgx-h100", 256, 4096, 1024, 1, 1 },
	};
	struct mt_kv kv[MT_FLAGS_MAX];
	size_t t;
	int i;

	(void)state;
	for (t = 0; t < sizeof(jobs) / sizeof(jobs[0]); t++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_search_result *res = calloc(1, sizeof(*res));
		struct mt_ruleset *rs = mt_ruleset_new();
		struct mt_rules_run *run = NULL;
		struct mt_cluster *cl = NULL;
		struct mt_job j;

		mt_job_init(&j);
		j.gpus = jobs[t].gpus;
		j.seq = jobs[t].seq;
		j.gbs = jobs[t].gbs;
		j.precision = jobs[t].fp8 ? MT_PREC_FP8 : MT_PREC_BF16;
		j.moe_dispatcher = jobs[t].flex ? MT_DISPATCH_FLEX : MT_DISPATCH_ALLTOALL;
		j.top_k = 5;
		if (!res || !rs || mt_cluster_load(jobs[t].cluster, &cl, &err) ||
		    mt_ruleset_add_bundled(rs) || mt_ruleset_finish(rs) ||
		    mt_rules_start(rs, jobs[t].m, cl, &j, &run, &err) ||
		    mt_search(jobs[t].m, cl, &j, run, res, &err))
			fail_msg("job %zu: %s", t, err.msg);
		for (i = 0; i < res->ntop; i++) {
			struct mt_explain ex;

			assert_int_equal(mt_rules_explain(run, &res->top[i], i + 1,
							  (int)res->feasible,
							  res->top[0].time.step, &ex), 0);
			assert_in_table(MT_FLAG_MEGATRON, kv, mt_candidate_args(jobs[t].m, &j,
						&res->top[i].cfg, &ex, kv));
			assert_in_table(MT_FLAG_BRIDGE, kv, mt_candidate_bridge(jobs[t].m, &j,
						&res->top[i].cfg, &ex, kv));
			mt_explain_free(&ex);
		}
		mt_rules_end(run);
		mt_ruleset_free(rs);
		mt_cluster_free(cl);
		free(res);
	}
}

static void launch_arguments_are_in_the_table(void **state)
{
	struct mt_kv args[MT_FLAGS_MAX], one;
	struct mt_error err = MT_ERROR_INIT;
	struct sbuf sb = SBUF_INIT;
	struct mt_launch l;
	const char *p;
	int words = 0;

	(void)state;
	memset(&l, 0, sizeof(l));
	l.kind = MT_LAUNCH_TORCHRUN;
	l.gpus = l.gpus_per_node = 8;
	l.args = args;
	assert_int_equal(mt_launch_script(&sb, &l, &err), 0);
	p = strstr(sb.buf, "pretrain_gpt.py");
	assert_non_null(p);
	while ((p = strstr(p, " --"))) {
		size_t len = strcspn(p + 3, " \\\n");

		snprintf(one.key, sizeof(one.key), "%.*s", (int)len, p + 3);
		one.val[0] = '\0';
		assert_in_table(MT_FLAG_MEGATRON, &one, 1);
		p += 3 + len;
		words++;
	}
	assert_int_equal(words, 7);
	sbuf_release(&sb);
}

static const char *value_of(const struct mt_kv *kv, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(kv[i].key, key))
			return kv[i].val;
	return NULL;
}

static int has_note(const struct mt_kv *kv, int n, const char *text)
{
	int i;

	for (i = 0; i < n; i++)
		if (mt_kv_is_note(&kv[i]) && !strcmp(kv[i].val, text))
			return 1;
	return 0;
}

/* core_v0.10.0 has no --num-virtual-stages-per-pipeline-rank: the layers per
 * virtual stage instead (80 layers, PP 4, 2 stages: 10); no
 * --account-for-*-in-pipeline-split or --attention-backend either.  Flex
 * dispatch is --moe-enable-deepep from core_v0.12.0 to core_v0.15.0, and
 * Bridge before v0.6.0 names the dataset's sequence length sequence_length. */
static void an_older_release_gets_the_older_spelling(void **state)
{
	struct mt_kv kv[MT_FLAGS_MAX];
	struct mt_config c;
	struct mt_job j;
	int n;

	(void)state;
	mt_job_init(&j);
	j.gpus = 64;
	j.seq = 8192;
	j.gbs = 256;
	memset(&c, 0, sizeof(c));
	c.tp = c.cp = c.ep = c.etp = c.mbs = 1;
	c.pp = 4;
	c.vpp = 2;
	c.split = MT_SPLIT_ACCOUNT;
	j.megatron_version = mt_release_find(MT_FLAG_MEGATRON, "core_v0.10.0") + 1;
	n = mt_candidate_args(&dense, &j, &c, NULL, kv);
	assert_null(value_of(kv, n, "num-virtual-stages-per-pipeline-rank"));
	assert_string_equal(value_of(kv, n, "num-layers-per-virtual-pipeline-stage"), "10");
	assert_true(has_note(kv, n, "--account-for-loss-in-pipeline-split needs Megatron-LM >= "
				    "core_v0.11.0 (left out for core_v0.10.0)"));
	assert_true(has_note(kv, n, "--attention-backend needs Megatron-LM >= core_v0.11.0 "
				    "(left out for core_v0.10.0)"));
	assert_null(value_of(kv, n, "attention-backend"));

	/* an uneven split has no layers-per-stage form */
	c.split = MT_SPLIT_FIRST_LAST;
	c.first_layers = c.last_layers = 18;
	n = mt_candidate_args(&dense, &j, &c, NULL, kv);
	assert_null(value_of(kv, n, "num-layers-per-virtual-pipeline-stage"));
	assert_true(has_note(kv, n, "--num-virtual-stages-per-pipeline-rank needs Megatron-LM "
				    ">= core_v0.11.0 (left out for core_v0.10.0)"));

	c.split = 0;
	c.vpp = 1;
	c.ep = 8;
	j.moe_dispatcher = MT_DISPATCH_FLEX;
	j.megatron_version = mt_release_find(MT_FLAG_MEGATRON, "0.14") + 1;
	n = mt_candidate_args(&moe, &j, &c, NULL, kv);
	assert_string_equal(value_of(kv, n, "moe-enable-deepep"), "");
	assert_string_equal(value_of(kv, n, "moe-token-dispatcher-type"), "flex");
	assert_null(value_of(kv, n, "moe-flex-dispatcher-backend"));
	/* no flex dispatcher before core_v0.12.0: the choice is refused */
	j.megatron_version = mt_release_find(MT_FLAG_MEGATRON, "0.11") + 1;
	n = mt_candidate_args(&moe, &j, &c, NULL, kv);
	assert_null(value_of(kv, n, "moe-token-dispatcher-type"));
	assert_true(has_note(kv, n, "--moe-token-dispatcher-type flex needs Megatron-LM >= "
				    "core_v0.12.0 (left out for core_v0.11.0)"));
	j.megatron_version = 0;
	n = mt_candidate_args(&moe, &j, &c, NULL, kv);
	assert_string_equal(value_of(kv, n, "moe-flex-dispatcher-backend"), "deepep");
	assert_null(value_of(kv, n, "moe-enable-deepep"));

	j.bridge_version = mt_release_find(MT_FLAG_BRIDGE, "v0.5.0") + 1;
	n = mt_candidate_bridge(&dense, &j, &c, NULL, kv);
	assert_string_equal(value_of(kv, n, "dataset.sequence_length"), "8192");
	assert_null(value_of(kv, n, "dataset.seq_length"));
	j.bridge_version = 0;
	n = mt_candidate_bridge(&dense, &j, &c, NULL, kv);
	assert_string_equal(value_of(kv, n, "dataset.seq_length"), "8192");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_are_well_formed),
		cmocka_unit_test(rule_effects_are_in_the_table),
		cmocka_unit_test(every_branch_is_in_the_table),
		cmocka_unit_test(searched_candidates_are_in_the_table),
		cmocka_unit_test(launch_arguments_are_in_the_table),
		cmocka_unit_test(an_older_release_gets_the_older_spelling),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
