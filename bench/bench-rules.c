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
 * and prints evaluations per second and wall time of each, the ratio of the
 * per-candidate cost to the model alone, and how far the best step time with
 * all rules is from the model-alone best (the rules trade model optimality for
 * the guidance; a large gap would be worth a look).  Target (issue "the rule
 * engine"): the search with all rules on within 2x of its speed without them.
 * Usage: bench-rules
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rules/engine.h"
#include "../tuner/search.h"

#define REPS 5

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

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
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		if ((rs && mt_rules_start(rs, m, c, j, &run, &err)) ||
		    mt_search(m, c, j, run, r, &err)) {
			fprintf(stderr, "bench-rules: %s\n", err.msg);
			exit(1);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		mt_rules_end(run);
		secs[k] = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
	}
	qsort(secs, REPS, sizeof(double), cmp);
	out.seconds = secs[REPS / 2];
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
	       "seconds", "evals/s", "cost/eval", "best step");
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
			double per = r[k].seconds / (double)r[k].evaluated;
			double base = r[0].seconds / (double)r[0].evaluated;

			if (per / base > worst)
				worst = per / base;
			printf("  %-16s %5d  %-12s %10lld %8.3f %12.0f %8.2fx %9.3fs%s\n",
			       k ? "" : jobs[i].model, k ? 0 : j.gpus, names[k], r[k].evaluated,
			       r[k].seconds, r[k].evaluated / r[k].seconds, per / base, r[k].step,
			       r[k].relaxed ? " (constraints relaxed)" : "");
		}
		printf("  %-16s %5s  all rules: wall time %.2fx the model alone; best step %+.1f%% "
		       "against the model-alone best\n", "", "", r[2].seconds / r[0].seconds,
		       100 * (r[2].step / r[0].step - 1));
	}
	printf("# worst cost per evaluation with rules: %.2fx the model alone (target <= 2x)\n",
	       worst);
	mt_ruleset_free(all);
	mt_ruleset_free(cons);
	mt_cluster_free(c);
	return 0;
}
