/* SPDX-License-Identifier: MIT */
/* bench-rules: what the rule engine costs the search.
 *
 * For large spaces with every knob free, the search runs three ways (median
 * of 5 runs each):
 *   none         the model alone (advise --no-rules)
 *   constraints  the bundled constraint rules only: the same knobs are
 *                enumerated, so this is the per-candidate cost of evaluating
 *                constraints (and filling the facts they read)
 *   all          every bundled rule: set rules fix knobs (fewer candidates),
 *                constraints prune, every candidate is recorded for best()
 * and prints evaluations per second and wall time of each, the wall time
 * against the model alone, and how far the best step time with all rules is
 * from the model-alone best (the rules trade model optimality for the
 * guidance; a large gap would be worth a look).  Then the cost of the rules per
 * candidate (every constraint evaluated on one candidate's facts, against the
 * model's memory + time of a candidate) and of explaining the top 5.
 * Target (issue "the rule engine"): the search with all rules on within 2x of
 * its speed without them.  Usage: bench-rules
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "../rules/engine.h"
#include "../perfmodel/perf.h"
#include "../tuner/search.h"

#define REPS 5

struct job_def {
	const char *model;
	int gpus, seq, gbs;
};

static const struct job_def jobs[] = {
	{ "deepseek-v3", 1024, 4096, 8192 },
	{ "qwen3-235b-a22b", 256, 4096, 2048 },
	{ "llama3.1-405b", 2048, 8192, 2048 },
	{ "llama3-70b", 64, 8192, 128 },
	{ "mixtral-8x22b", 256, 4096, 1024 },
};

struct run {
	double seconds, step;
	long long evaluated;
	int relaxed;
};

static struct run measure(const struct mt_model *m, const struct mt_cluster *c,
			  const struct mt_job *j, const struct mt_ruleset *rs)
{
	struct mt_search_result *r = calloc(1, sizeof(*r));
	double secs[REPS];
	struct run out;
	int k;

	if (!r)
		exit(1);
	for (k = 0; k < REPS; k++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_rules_run *run = NULL;
		double t0 = bench_now();

		if ((rs && mt_rules_start(rs, m, c, j, &run, &err)) ||
		    mt_search(m, c, j, run, r, &err)) {
			fprintf(stderr, "bench-rules: %s\n", err.msg);
			exit(1);
		}
		secs[k] = bench_now() - t0;
		mt_rules_end(run);
	}
	out.seconds = bench_median(secs, REPS);
	out.evaluated = r->evaluated + r->strict_evaluated;
	out.step = r->ntop ? r->top[0].time.step : 0;
	out.relaxed = r->relaxed;
	free(r);
	return out;
}

static struct mt_ruleset *bundled(int constraints_only)
{
	struct mt_ruleset *rs = mt_ruleset_new();
	int i;

	if (!rs || mt_ruleset_add_bundled(rs) || mt_ruleset_finish(rs)) {
		fprintf(stderr, "bench-rules: the bundled rules do not load\n");
		exit(1);
	}
	for (i = 0; constraints_only && i < rs->n; i++)
		if (rs->rules[i].kind != MT_RK_CONSTRAINT)
			rs->rules[i].disabled = 1;
	return rs;
}

static int count_constraints(const struct mt_ruleset *rs)
{
	int i, n = 0;

	for (i = 0; i < rs->n; i++)
		n += rs->rules[i].kind == MT_RK_CONSTRAINT;
	return n;
}

/* Every constraint of every stage evaluated on the facts of one candidate
 * (the best of Llama 3 70B on 64 GPUs, which none prunes), against the
 * model's memory and time of that candidate; and explaining the top 5. */
static void per_candidate(const struct mt_cluster *c, const struct mt_ruleset *rs)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_search_result *r = calloc(1, sizeof(*r));
	struct mt_rules_run *run = NULL;
	struct mt_explain x;
	struct mt_model m;
	struct mt_job j;
	struct mt_ctx ctx;
	struct mt_shape sh;
	struct mt_costs *a = malloc(sizeof(*a));
	struct mt_plan *p = malloc(sizeof(*p));
	struct mt_mem mem;
	struct mt_time t;
	struct mt_tput tp;
	const struct mt_config *cfg;
	double t0, dt, model_ns, rules_ns, level_c_ns, sink = 0;
	long n = 0, i;
	int s, k, pruned = 0;

	if (!r || !a || !p || mt_model_load("llama3-70b", &m, &err))
		exit(1);
	mt_job_init(&j);
	j.gpus = 64;
	j.seq = 8192;
	j.gbs = 128;
	if (mt_rules_start(rs, &m, c, &j, &run, &err) || mt_search(&m, c, &j, run, r, &err) ||
	    !r->ntop)
		exit(1);
	cfg = &r->top[0].cfg;
	/* facts of the best candidate, all stages */
	if (mt_rules_explain(run, &r->top[0], 1, (int)r->feasible, r->top[0].time.step, &x))
		exit(1);
	mt_explain_free(&x);
	t0 = bench_now();
	do {
		for (i = 0; i < 100000; i++)
			for (s = 0; s <= MT_ST_TIME; s++)
				pruned += mt_rules_check(run, s) >= 0;
		n += i;
		dt = bench_now() - t0;
	} while (dt < 0.5);
	rules_ns = 1e9 * dt / n;
	/* what every level-C candidate pays: the constraints from dist_opt on */
	n = 0;
	t0 = bench_now();
	do {
		for (i = 0; i < 100000; i++)
			for (s = MT_ST_DIST_OPT; s <= MT_ST_TIME; s++)
				pruned += mt_rules_check(run, s) >= 0;
		n += i;
		dt = bench_now() - t0;
	} while (dt < 0.5);
	level_c_ns = 1e9 * dt / n;
	mt_ctx_init(&ctx, &m, c, &j);
	mt_shape_of(cfg, &sh);
	mt_costs_compute(&ctx, &sh, a);
	if (mt_plan_compute(&ctx, a, cfg->pp, cfg->vpp, cfg->dp, cfg->num_mb, cfg, p))
		exit(1);
	n = 0;
	t0 = bench_now();
	do {
		for (i = 0; i < 100000; i++) {
			mt_memory(&ctx, a, p, cfg, &mem);
			mt_timing(&ctx, a, p, cfg, &t, &tp);
			sink += mem.total + t.step;
		}
		n += i;
		dt = bench_now() - t0;
	} while (dt < 0.5);
	model_ns = 1e9 * dt / n;
	printf("# per candidate: the constraints every level-C candidate pays %.0f ns; all %d constraints "
	       "of all stages %.0f ns (an upper bound); the model's memory + time %.0f ns%s\n",
	       level_c_ns, count_constraints(rs), rules_ns, model_ns, pruned || sink < 0 ? " (!)" : "");
	t0 = bench_now();
	for (k = 0; k < r->ntop; k++) {
		if (mt_rules_explain(run, &r->top[k], k + 1, (int)r->feasible, r->top[0].time.step, &x))
			exit(1);
		mt_explain_free(&x);
	}
	printf("# explaining the top %d (every rule, messages and evidence): %.2f ms\n", r->ntop,
	       1e3 * (bench_now() - t0));
	mt_rules_end(run);
	free(a);
	free(p);
	free(r);
}

int main(void)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	struct mt_ruleset *all = bundled(0), *cons = bundled(1);
	double worst = 0;
	size_t i;

	if (mt_cluster_load("dgx-h100", &c, &err)) {
		fprintf(stderr, "bench-rules: %s\n", err.msg);
		return 1;
	}
	printf("# rules in the search, every knob free, dgx-h100 (median of %d runs; %d rules, "
	       "of them %d constraints)\n", REPS, all->n, count_constraints(all));
	printf("# %-16s %5s  %-12s %10s %8s %12s %9s %10s\n", "model", "gpus", "rules", "evaluated",
	       "seconds", "evals/s", "wall", "best step");
	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct mt_model m;
		struct mt_job j;
		struct run r[3];
		const char *names[3] = { "none", "constraints", "all" };
		int k;

		if (mt_model_load(jobs[i].model, &m, &err)) {
			fprintf(stderr, "bench-rules: %s\n", err.msg);
			return 1;
		}
		mt_job_init(&j);
		j.gpus = jobs[i].gpus;
		j.seq = jobs[i].seq;
		j.gbs = jobs[i].gbs;
		r[0] = measure(&m, c, &j, NULL);
		r[1] = measure(&m, c, &j, cons);
		r[2] = measure(&m, c, &j, all);
		for (k = 0; k < 3; k++) {
			double wall = r[k].seconds / r[0].seconds;

			if (k && wall > worst)
				worst = wall;
			printf("  %-16s %5s  %-12s %10lld %8.3f %12.0f %8.2fx %9.3fs%s\n",
			       k ? "" : jobs[i].model, k ? "" : "", names[k], r[k].evaluated,
			       r[k].seconds, r[k].evaluated / r[k].seconds, wall, r[k].step,
			       r[k].relaxed ? " (relaxed)" : "");
		}
		printf("  %-16s %5d  best step with all rules %+.1f%% against the model alone\n", "",
		       j.gpus, 100 * (r[2].step / r[0].step - 1));
	}
	printf("# worst wall time with rules: %.2fx the model alone (target <= 2x)\n", worst);
	per_candidate(c, all);
	mt_ruleset_free(all);
	mt_ruleset_free(cons);
	mt_cluster_free(c);
	return 0;
}
