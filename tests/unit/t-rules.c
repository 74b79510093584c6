/* SPDX-License-Identifier: MIT */
/* Rule files and the engine: parsing, every problem reported with its file
 * and line, DISABLE, where each rule is evaluated, and what rules do to the
 * search (prune by id, set knobs with user files first, pins winning and
 * reported, relaxation when nothing fits, evidence in explanations, findings). */
#include <math.h>
#include <stdio.h>

#include "testutil.h"

#include <cjson/cJSON.h>

#include "../../lib/jsonw.h"
#include "../../lib/sbuf.h"
#include "../../reports/advice.h"
#include "../../rules/engine.h"
#include "../../rules/fired.h"
#include "../../tuner/search.h"

static struct mt_cluster *h100;

static int setup(void **state)
{
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	return mt_cluster_load("dgx-h100", &h100, &err);
}

static int teardown(void **state)
{
	(void)state;
	mt_cluster_free(h100);
	return 0;
}

static struct mt_ruleset *parse(const char *file, const char *text, int bundled)
{
	struct mt_ruleset *rs = mt_ruleset_new();

	assert_non_null(rs);
	assert_true(mt_ruleset_add_text(rs, file, text, strlen(text), 1) >= 0);
	if (bundled)
		assert_true(mt_ruleset_add_bundled(rs) >= 0);
	mt_ruleset_finish(rs);
	return rs;
}

/* A problem whose file:line and message contain the given texts. */
static int has_problem(const struct mt_ruleset *rs, int line, const char *text)
{
	int i;

	for (i = 0; i < rs->nproblems; i++)
		if (rs->problems[i].line == line && strstr(rs->problems[i].msg, text))
			return 1;
	for (i = 0; i < rs->nproblems; i++)
		print_message("  %s:%d: %s\n", rs->problems[i].file, rs->problems[i].line,
			      rs->problems[i].msg);
	return 0;
}

static const char good[] =
	"# a site's rules\n"
	"\n"
	"RULE site-tp\n"
	"TITLE At most TP 4 on this cluster\n"
	"KIND constraint\n"
	"WHEN config.tp > 4\n"
	"SAY TP {config.tp} is above the site's limit of 4 \\\n"
	"    (our NVLink switches are shared).\n"
	"CITE Site policy, section 2\r\n"
	"\n"
	"RULE site-bucket\n"
	"TITLE Our bucket size\n"
	"KIND set\n"
	"WHEN dp.group > 1\n"
	"SET config.bucket_params = 50M\n"
	"ARG --some-flag {config.tp}\n"
	"ENV SITE_VAR = {dp.group}\n"
	"SAY [config.pp > 1] Pipelines bucket the first stage only.\n"
	"SAY Buckets of {config.bucket_params:params}.\n"
	"CITE Site policy, section 3\n";

static void a_good_file_parses(void **state)
{
	struct mt_ruleset *rs = parse("site.rules", good, 0);
	const struct mt_rule *r;

	(void)state;
	assert_int_equal(rs->nproblems, 0);
	assert_int_equal(rs->n, 2);
	r = mt_ruleset_find(rs, "site-tp");
	assert_non_null(r);
	assert_int_equal(r->kind, MT_RK_CONSTRAINT);
	assert_int_equal(r->line, 3);
	assert_string_equal(r->file, "site.rules");
	assert_int_equal(r->stage, MT_ST_TP);
	assert_true(r->knobs == K_TP);
	assert_string_equal(r->cites[0], "Site policy, section 2"); /* CRLF taken off */
	assert_true(r->user);
	r = mt_ruleset_find(rs, "site-bucket");
	assert_int_equal(r->kind, MT_RK_SET);
	assert_int_equal(r->stage, MT_ST_BUCKET); /* when the search chooses the knob */
	assert_int_equal(r->nsets, 1);
	assert_int_equal(r->nouts, 2);
	assert_string_equal(r->outs[0].key, "some-flag");
	assert_int_equal(r->outs[1].kind, MT_OUT_ENV);
	assert_int_equal(r->nsays, 2);
	assert_non_null(r->says[0].cond);
	assert_null(r->says[1].cond);
	/* evidence: every fact it reads, once */
	assert_int_equal(r->nevidence, 4);
	assert_null(mt_ruleset_find(rs, "nope"));
	mt_ruleset_free(rs);
}

static void every_problem_is_reported_with_its_line(void **state)
{
	static const char bad[] =
		"TITLE outside\n"                                   /* 1 */
		"RULE a-1\n"                                        /* 2 */
		"TITLE no citation\n"
		"KIND advise\n"
		"WHEN config.tpp > 1\n"                             /* 5 */
		"SAY x\n"
		"RULE a-2\n"                                        /* 7 */
		"TITLE ok\n"
		"KIND advise\n"
		"WHEN config.tp > 1\n"
		"SAY x\n"                                           /* 11: no CITE */
		"RULE a-3\n"                                        /* 12 */
		"TITLE sets a searched knob\n"
		"KIND set\n"
		"WHEN true\n"
		"SET config.tp = 2\n"                               /* 16 */
		"SAY x\n"
		"CITE c\n"
		"RULE a-4\n"                                        /* 19 */
		"TITLE reads the future\n"
		"KIND set\n"
		"WHEN time.step_s > 1\n"
		"SET config.sp = on\n"
		"SAY x\n"
		"CITE c\n"
		"RULE a-5\n"                                        /* 26 */
		"TITLE a constraint that sets\n"
		"KIND constraint\n"
		"WHEN true\n"
		"ENV X = 1\n"
		"SAY x\n"
		"CITE c\n"
		"RULE a-6\n"                                        /* 33 */
		"TITLE uses the ranking\n"
		"KIND constraint\n"
		"WHEN best(\"tp\", 4) > 1\n"
		"SAY x\n"
		"CITE c\n"
		"RULE a-7\n"                                        /* 39 */
		"TITLE diagnose without findings\n"
		"KIND diagnose\n"
		"WHEN config.tp > 1\n"
		"SAY x\n"
		"CITE c\n"
		"RULE a-8\n"                                        /* 45 */
		"TITLE bad kind\n"
		"KIND suggestion\n"                                 /* 47 */
		"RULE memory\n"                                     /* 48: a built-in id */
		"RULE Bad_Id\n"                                     /* 49 */
		"FROB x\n"                                          /* 50 */
		"RULE a-9\n"                                        /* 51 */
		"TITLE two conditions\n"
		"KIND advise\n"
		"WHEN true\n"
		"WHEN false\n"                                      /* 55 */
		"RULE a-10\n"                                       /* 56 */
		"TITLE bad env\n"
		"KIND set\n"
		"WHEN true\n"
		"ENV lower = 1\n"                                   /* 60 */
		"RULE a-11\n"                                       /* 61 */
		"TITLE bad template\n"
		"KIND advise\n"
		"WHEN true\n"
		"SAY value {config.tp:furlongs}\n"                  /* 65 */
		"CITE c\n"
		"DISABLE no-such-rule\n";                           /* 67 */
	struct mt_ruleset *rs = parse("bad.rules", bad, 0);
	struct mt_error err = MT_ERROR_INIT;

	(void)state;
	assert_true(has_problem(rs, 1, "TITLE outside a rule"));
	assert_true(has_problem(rs, 5, "unknown name 'config.tpp' (did you mean 'config.tp'?) (column 6)"));
	assert_true(has_problem(rs, 7, "rule 'a-2': missing CITE"));
	assert_true(has_problem(rs, 16, "SET config.tp: rules may set config.sp"));
	assert_true(has_problem(rs, 19, "WHEN reads facts the search knows only after it chooses config.sp"));
	assert_true(has_problem(rs, 26, "a constraint prunes; SET, ARG, BRIDGE and ENV belong to set rules"));
	assert_true(has_problem(rs, 33, "a constraint rule cannot read search.*, best()"));
	assert_true(has_problem(rs, 39, "a diagnose rule's WHEN reads finding.* facts"));
	assert_true(has_problem(rs, 47, "KIND 'suggestion': expected constraint, set, advise or diagnose"));
	assert_true(has_problem(rs, 48, "the id is taken by a built-in pruning reason"));
	assert_true(has_problem(rs, 49, "an id is lower-case letters"));
	assert_true(has_problem(rs, 50, "unknown directive 'FROB'"));
	assert_true(has_problem(rs, 55, "a second WHEN"));
	assert_true(has_problem(rs, 60, "bad name 'lower'"));
	assert_true(has_problem(rs, 65, "unknown format 'furlongs'"));
	assert_true(has_problem(rs, 67, "DISABLE no-such-rule: no such rule"));
	/* rules with a problem are dropped, the rest are kept */
	assert_null(mt_ruleset_find(rs, "a-1"));
	assert_null(mt_ruleset_find(rs, "a-3"));
	assert_int_equal(rs->n, 0);
	/* loading stops on the first: FILE:LINE: reason */
	assert_int_equal(mt_ruleset_error(rs, &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "bad.rules:1: TITLE outside a rule"));
	assert_non_null(strstr(err.msg, "megatune rules lint lists them"));
	mt_ruleset_free(rs);
}

static void duplicates_and_disable(void **state)
{
	static const char dup[] =
		"RULE tp-nvlink\n"
		"TITLE mine\n"
		"KIND constraint\n"
		"WHEN config.tp > 4\n"
		"SAY x\n"
		"CITE c\n";
	static const char replace[] =
		"DISABLE tp-nvlink\n"
		"RULE site-tp-nvlink\n"
		"TITLE mine\n"
		"KIND constraint\n"
		"WHEN config.tp > 4\n"
		"SAY x\n"
		"CITE c\n";
	struct mt_ruleset *rs = parse("dup.rules", dup, 1);

	(void)state;
	assert_true(has_problem(rs, 1, "duplicate rule id 'tp-nvlink'"));
	mt_ruleset_free(rs);
	rs = parse("replace.rules", replace, 1);
	assert_int_equal(rs->nproblems, 0);
	assert_true(mt_ruleset_find(rs, "tp-nvlink")->disabled);
	assert_false(mt_ruleset_find(rs, "site-tp-nvlink")->disabled);
	mt_ruleset_free(rs);
}

static void files_and_folders(void **state)
{
	struct mt_ruleset *rs = mt_ruleset_new();

	(void)state;
	assert_int_equal(mt_ruleset_add_path(rs, "tests/fixtures/rules/no-such.rules", 1), 1);
	assert_non_null(strstr(rs->problems[0].msg, "cannot read"));
	assert_int_equal(mt_ruleset_add_path(rs, "tests/fixtures/models", 1), 1);
	assert_non_null(strstr(rs->problems[1].msg, "no *.rules file in this folder"));
	assert_int_equal(mt_ruleset_add_text(rs, "bin.rules", "RULE x\0y", 8, 1), 1);
	assert_non_null(strstr(rs->problems[2].msg, "NUL bytes"));
	mt_ruleset_free(rs);
	/* the bundled rules load clean, each cited and explained */
	rs = mt_ruleset_new();
	assert_int_equal(mt_ruleset_add_bundled(rs), 0);
	assert_int_equal(mt_ruleset_finish(rs), 0);
	assert_true(rs->n >= 60);
	for (int i = 0; i < rs->n; i++) {
		assert_true(rs->rules[i].ncites >= 1);
		assert_true(rs->rules[i].nsays >= 1);
		assert_false(rs->rules[i].user);
	}
	mt_ruleset_free(rs);
}

/* Run a search with the bundled rules and a user file. */
static struct mt_search_result *search(const char *user, const char *model, struct mt_job *j,
				       struct mt_ruleset **rs_out, struct mt_rules_run **run_out,
				       struct mt_model *m)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_search_result *r = calloc(1, sizeof(*r));

	assert_non_null(rs);
	assert_non_null(r);
	if (user)
		assert_int_equal(mt_ruleset_add_text(rs, "user.rules", user, strlen(user), 1), 0);
	assert_int_equal(mt_ruleset_add_bundled(rs), 0);
	if (mt_ruleset_finish(rs))
		fail_msg("%s:%d: %s", rs->problems[0].file, rs->problems[0].line, rs->problems[0].msg);
	assert_int_equal(mt_model_load(model, m, &err), 0);
	assert_int_equal(mt_rules_start(rs, m, h100, j, run_out, &err), 0);
	if (mt_search(m, h100, j, *run_out, r, &err))
		fail_msg("%s", err.msg);
	*rs_out = rs;
	return r;
}

static void job(struct mt_job *j, int gpus, int seq, int gbs)
{
	mt_job_init(j);
	j->gpus = gpus;
	j->seq = seq;
	j->gbs = gbs;
	j->top_k = 8;
}

static int rule_index(const struct mt_ruleset *rs, const char *id)
{
	const struct mt_rule *r = mt_ruleset_find(rs, id);

	assert_non_null(r);
	return (int)(r - rs->rules);
}

static const struct mt_fired *fired(const struct mt_explain *x, const char *id)
{
	int i;

	for (i = 0; i < x->n; i++)
		if (!strcmp(x->v[i].rule->id, id))
			return &x->v[i];
	return NULL;
}

static void a_site_constraint_prunes_and_is_counted(void **state)
{
	static const char site[] =
		"RULE site-tp\n"
		"TITLE At most TP 2\n"
		"KIND constraint\n"
		"WHEN config.tp > 2\n"
		"SAY TP {config.tp} is above the site limit\n"
		"CITE site policy\n";
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_model m;
	struct mt_job j;
	int i, k;

	(void)state;
	job(&j, 64, 8192, 128);
	r = search(site, "llama3-70b", &j, &rs, &run, &m);
	assert_true(r->ntop > 0);
	k = rule_index(rs, "site-tp");
	assert_true(mt_rules_pruned(run, k) > 0);
	for (i = 0; i < r->ntop; i++)
		assert_true(r->top[i].cfg.tp <= 2);
	assert_false(r->relaxed);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
}

static void set_rules_fix_knobs_and_user_files_come_first(void **state)
{
	static const char site[] =
		"RULE site-no-sp\n"
		"TITLE No sequence parallelism here\n"
		"KIND set\n"
		"WHEN config.tp > 1\n"
		"SET config.sp = off\n"
		"SAY site policy\n"
		"CITE site policy\n";
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_explain x;
	struct mt_model m;
	struct mt_job j;
	int i;

	(void)state;
	/* the bundled sp-with-tp turns SP on whenever TP > 1 ... */
	job(&j, 64, 8192, 128);
	r = search(NULL, "llama3-70b", &j, &rs, &run, &m);
	for (i = 0; i < r->ntop; i++)
		assert_int_equal(r->top[i].cfg.sp, r->top[i].cfg.tp > 1);
	assert_int_equal(mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x), 0);
	assert_non_null(fired(&x, "sp-with-tp"));
	assert_int_equal(fired(&x, "sp-with-tp")->status, MT_FIRE_APPLIED);
	assert_string_equal(fired(&x, "sp-with-tp")->effect, "config.sp = on");
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
	/* ... a user's set rule for the same knob wins over it */
	r = search(site, "llama3-70b", &j, &rs, &run, &m);
	assert_true(r->ntop > 0);
	for (i = 0; i < r->ntop; i++)
		assert_int_equal(r->top[i].cfg.sp, 0);
	assert_int_equal(mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x), 0);
	if (r->top[0].cfg.tp > 1) {
		assert_non_null(fired(&x, "site-no-sp"));
		assert_null(fired(&x, "sp-with-tp")); /* decided by the first rule */
	}
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
}

static void pins_win_and_are_reported(void **state)
{
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_explain x;
	struct mt_model m;
	struct mt_job j;
	const struct mt_fired *f;

	(void)state;
	job(&j, 64, 2048, 128);
	j.pins.tp = 16; /* gpt3-175b: 96 heads, TP 16 crosses the NVLink domain */
	j.pins.sp = 0;
	r = search(NULL, "gpt3-175b", &j, &rs, &run, &m);
	assert_true(r->ntop > 0);
	assert_int_equal(r->top[0].cfg.tp, 16);
	/* the constraint on a pinned knob did not prune; it is listed as broken */
	assert_int_equal(mt_rules_pruned(run, rule_index(rs, "tp-nvlink")), 0);
	assert_int_equal(mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x), 0);
	f = fired(&x, "tp-nvlink");
	assert_non_null(f);
	assert_int_equal(f->status, MT_FIRE_VIOLATED);
	if (!strstr(f->message, "TP 16 would span 2 NVLink domains of 8 GPUs"))
		fail_msg("message: %s", f->message);
	/* the set rule the pin overrode says what it would have chosen */
	f = fired(&x, "sp-with-tp");
	assert_non_null(f);
	assert_int_equal(f->status, MT_FIRE_OVERRIDDEN);
	assert_string_equal(f->effect, "config.sp = on (pinned to off)");
	/* evidence: the facts and their values */
	f = fired(&x, "tp-nvlink");
	assert_int_equal(f->ev[0].fact, MT_F_CFG_TP);
	assert_true(f->ev[0].n == 16);
	assert_int_equal(f->ev[1].fact, MT_F_CLUSTER_NVLINK_DOMAIN);
	assert_true(f->ev[1].n == 8);
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
}

static void when_constraints_leave_nothing_one_is_relaxed(void **state)
{
	static const char site[] =
		"RULE site-only-tp3\n"
		"TITLE TP 3 only (no model has it)\n"
		"KIND constraint\n"
		"WHEN config.tp != 3\n"
		"SAY TP {config.tp} is not 3\n"
		"CITE a test\n";
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_explain x;
	struct mt_model m;
	struct mt_job j;

	(void)state;
	job(&j, 64, 8192, 128);
	r = search(site, "llama3-70b", &j, &rs, &run, &m);
	assert_true(r->relaxed);
	assert_int_equal(r->relaxed_rule, rule_index(rs, "site-only-tp3"));
	assert_true(r->ntop > 0);
	assert_true(mt_rules_pruned(run, r->relaxed_rule) > 0); /* the strict count */
	assert_int_equal(mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x), 0);
	assert_int_equal(fired(&x, "site-only-tp3")->status, MT_FIRE_VIOLATED);
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
}

static void explanations_say_why_with_numbers(void **state)
{
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_explain x;
	struct mt_model m;
	struct mt_job j;
	const struct mt_fired *f;
	char want[64];

	(void)state;
	job(&j, 64, 8192, 128);
	r = search(NULL, "llama3-70b", &j, &rs, &run, &m);
	assert_int_equal(mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x), 0);
	f = fired(&x, "why-tp");
	assert_non_null(f);
	snprintf(want, sizeof(want), "TP %d:", r->top[0].cfg.tp);
	assert_non_null(strstr(f->message, want));
	/* where the curve comes from: the profile derives its 4-GPU curves */
	assert_non_null(strstr(f->message, "GB/s (derived, not measured, inside one NVLink domain)"));
	assert_non_null(fired(&x, "why-pp"));
	assert_non_null(fired(&x, "why-cp"));
	assert_non_null(fired(&x, "why-bucket"));
	assert_null(fired(&x, "why-ep")); /* a dense model */
	/* the environment comes from rules, the first to name a variable wins */
	assert_true(x.nenv >= 2);
	mt_explain_free(&x);
	/* estimate (rank 0): no ranking, no why-* */
	assert_int_equal(mt_rules_explain(run, &r->top[0], 0, -1, 0, &x), 0);
	assert_null(fired(&x, "why-tp"));
	assert_non_null(fired(&x, "sp-with-tp"));
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
}

static void findings_drive_the_diagnose_rules(void **state)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_val facts[MT_F_N];
	unsigned char given[MT_F_N];
	char *strings = NULL;
	struct mt_explain x;
	int skipped;

	(void)state;
	assert_int_equal(mt_ruleset_add_bundled(rs), 0);
	assert_int_equal(mt_ruleset_finish(rs), 0);
	/* BERT inference on an H100, measured 92% idle: host-bound */
	assert_int_equal(mt_facts_read("tests/fixtures/findings/tracelens-bert-h100.json", facts, given,
				       &strings, &err), 0);
	assert_true(given[MT_F_FIND_IDLE]);
	assert_int_equal(mt_rules_on_facts(rs, facts, given, NULL, &x, &skipped), 0);
	assert_non_null(fired(&x, "diag-idle-gpu"));
	assert_non_null(strstr(fired(&x, "diag-idle-gpu")->message, "host-bound"));
	assert_null(fired(&x, "diag-exposed-dp"));
	/* the rules whose facts the file lacks are not evaluated, and say so */
	assert_true(skipped > 50);
	mt_explain_free(&x);
	free(strings);
	/* bad files: the field and what was expected */
	assert_int_equal(mt_facts_read("tests/fixtures/bad/facts-unknown.json", facts, given, &strings,
				       &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'facts.finding.idle_fraction': unknown fact (did you mean 'finding.idle_frac'?)"));
	assert_int_equal(mt_facts_read("tests/fixtures/bad/facts-type.json", facts, given, &strings,
				       &err), MT_EINVAL);
	assert_non_null(strstr(err.msg, "field 'facts.config.cp_comm': \"ring\" is not one of its values"));
	mt_ruleset_free(rs);
}

static void review_cases(void **state)
{
	static const char site_static[] =
		"RULE site-small-jobs\n"
		"TITLE Jobs of at most 32 GPUs here\n"
		"KIND constraint\n"
		"WHEN job.gpus > 32\n"
		"SAY {job.gpus} GPUs is above the limit\n"
		"CITE site policy\n";
	static const char site_estimate[] =
		"# a comment ending in a backslash does not swallow the next line \\\n"
		"RULE site-no-dist-opt\n"
		"TITLE No distributed optimizer for small shards\n"
		"KIND set\n"
		"WHEN dp.params < 100G\n"
		"SET config.dist_opt = off\n"
		"SAY site policy\n"
		"CITE site policy\n"
		"RULE site-cp-comm\n"
		"TITLE Literals passed to functions are not values of the knob\n"
		"KIND set\n"
		"WHEN config.cp > 1\n"
		"SET config.cp_comm = if(busbw(\"sendrecv\", config.cp, cp.per_domain, 64Mi) > 1, \"p2p\", \"all_gather\")\n"
		"SAY site policy\n"
		"CITE site policy\n";
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_explain x;
	struct mt_config cfg;
	struct mt_eval e;
	struct mt_model m;
	struct mt_job j;

	(void)state;
	/* a constraint on static facts prunes everything, then is relaxed */
	job(&j, 64, 8192, 128);
	r = search(site_static, "llama3-70b", &j, &rs, &run, &m);
	assert_true(mt_rules_pruned(run, rule_index(rs, "site-small-jobs")) > 0);
	assert_true(r->relaxed);
	assert_int_equal(r->relaxed_rule, rule_index(rs, "site-small-jobs"));
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
	/* memory alone: nothing to relax, no claim that rules were relaxed */
	job(&j, 8, 8192, 64);
	j.pins.tp = 8;
	j.pins.pp = 1;
	j.pins.cp = 1;
	r = search(NULL, "llama3.1-405b", &j, &rs, &run, &m);
	assert_int_equal(r->ntop, 0);
	assert_false(r->relaxed);
	assert_true(r->has_closest);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
	/* pinned knobs waive the constraints that name them, derived facts aside */
	job(&j, 64, 8192, 128);
	j.pins.pp = 4;
	j.pins.vpp = 1;
	r = search(NULL, "llama3-70b", &j, &rs, &run, &m);
	assert_false(r->relaxed);
	assert_int_equal(mt_rules_pruned(run, rule_index(rs, "pp-vpp")), 0);
	assert_true(r->ntop > 0 && r->top[0].cfg.vpp == 1);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
	/* estimate applies set rules that read the layer's costs and the plan */
	job(&j, 8, 4096, 64);
	r = search(site_estimate, "llama3-8b", &j, &rs, &run, &m);
	free(r);
	memset(&cfg, 0, sizeof(cfg));
	mt_config_settings(&j, &cfg);
	cfg.tp = cfg.pp = cfg.vpp = cfg.cp = cfg.ep = cfg.etp = cfg.mbs = 1;
	cfg.dist_opt = 1;
	assert_int_equal(mt_evaluate(&m, h100, &j, run, &cfg, &e, &err), 0);
	assert_int_equal(e.cfg.dist_opt, 0);
	assert_int_equal(mt_rules_explain(run, &e, 0, -1, 0, &x), 0);
	assert_int_equal(fired(&x, "site-no-dist-opt")->status, MT_FIRE_APPLIED);
	assert_null(fired(&x, "dist-opt")); /* the user's rule decided the knob */
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
}

/* The full form of the fired-rule writer is the advice document's "rules" of
 * a candidate, field for field. */
static void fired_json_is_the_advice_form(void **state)
{
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_search_result *r;
	struct mt_explain x;
	struct mt_advice_rules ar;
	struct mt_model m;
	struct mt_job j;
	struct sbuf adv = SBUF_INIT, own = SBUF_INIT;
	struct jw w;
	cJSON *a, *b;

	(void)state;
	job(&j, 64, 8192, 128);
	r = search(NULL, "llama3-70b", &j, &rs, &run, &m);
	assert_true(r->ntop > 0);
	r->ntop = 1;
	assert_int_equal(mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x), 0);
	assert_true(x.n > 0);
	ar.set = rs;
	ar.run = run;
	ar.ex = &x;
	ar.nex = 1;
	mt_advice_json(&adv, &m, h100, &j, r, &ar);
	jw_init(&w, &own, 1);
	jw_obj(&w, NULL);
	mt_fired_json(&w, "rules", &x, MT_FIRED_FULL);
	jw_end(&w);
	a = cJSON_Parse(adv.buf);
	b = cJSON_Parse(own.buf);
	assert_non_null(a);
	assert_non_null(b);
	assert_true(cJSON_Compare(cJSON_GetObjectItem(cJSON_GetArrayItem(
					cJSON_GetObjectItem(a, "candidates"), 0), "rules"),
				  cJSON_GetObjectItem(b, "rules"), 1));
	cJSON_Delete(a);
	cJSON_Delete(b);
	sbuf_release(&adv);
	sbuf_release(&own);
	mt_explain_free(&x);
	mt_rules_end(run);
	mt_ruleset_free(rs);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_good_file_parses),
		cmocka_unit_test(every_problem_is_reported_with_its_line),
		cmocka_unit_test(duplicates_and_disable),
		cmocka_unit_test(files_and_folders),
		cmocka_unit_test(a_site_constraint_prunes_and_is_counted),
		cmocka_unit_test(set_rules_fix_knobs_and_user_files_come_first),
		cmocka_unit_test(pins_win_and_are_reported),
		cmocka_unit_test(when_constraints_leave_nothing_one_is_relaxed),
		cmocka_unit_test(explanations_say_why_with_numbers),
		cmocka_unit_test(findings_drive_the_diagnose_rules),
		cmocka_unit_test(review_cases),
		cmocka_unit_test(fired_json_is_the_advice_form),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
