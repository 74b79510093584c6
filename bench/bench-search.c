/* SPDX-License-Identifier: MIT */
/* bench-search: how fast the advisor searches.
 *
 * Prints, for large spaces with every knob free:
 *   - the time of the search as advise runs it (bounded: a layer shape or a
 *     pipeline plan whose step floor cannot rank is skipped) and of the
 *     exhaustive one, with its candidate evaluations per second (one core),
 *   - evaluations per second of the bare level-C model (memory + time of one
 *     candidate whose layer costs and pipeline plan are known),
 *   - wall time and peak resident memory of the whole `megatune advise`
 *     command (a child process: loading, search and output), median of 5.
 * Targets: >= 1,000,000 evaluations/s per core, and the DeepSeek-V3 1024-GPU
 * search with every knob free (the model alone) and its advise under 2 s.
 * Usage: bench-search [path/to/megatune]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"
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
};

static void search_rate(const struct mt_cluster *c)
{
	size_t i;

	printf("# search, every knob free, dgx-h100, the model alone: bounded (the default,\n"
	       "# median of %d runs) and --exhaustive (one run: every candidate evaluated)\n", REPS);
	printf("# %-16s %6s %12s %10s %12s %10s %14s\n", "model", "gpus", "evaluated", "seconds",
	       "exhaustive", "seconds", "evals/s");
	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct mt_error err = MT_ERROR_INIT;
		struct mt_search_result *r = calloc(1, sizeof(*r));
		struct mt_model m;
		struct mt_job j;
		double secs[REPS], med;
		long long bounded;
		int k;

		if (!r || mt_model_load(jobs[i].model, &m, &err)) {
			fprintf(stderr, "bench-search: %s\n", err.msg);
			exit(1);
		}
		mt_job_init(&j);
		j.gpus = jobs[i].gpus;
		j.seq = jobs[i].seq;
		j.gbs = jobs[i].gbs;
		for (k = 0; k < REPS; k++) {
			if (mt_search(&m, c, &j, NULL, r, &err)) {
				fprintf(stderr, "bench-search: %s\n", err.msg);
				exit(1);
			}
			secs[k] = r->seconds;
		}
		med = bench_median(secs, REPS);
		bounded = r->evaluated;
		j.exhaustive = 1;
		if (mt_search(&m, c, &j, NULL, r, &err)) {
			fprintf(stderr, "bench-search: %s\n", err.msg);
			exit(1);
		}
		printf("  %-16s %6d %12lld %10.3f %12lld %10.3f %14.0f\n", jobs[i].model, j.gpus,
		       bounded, med, r->evaluated, r->seconds, r->evaluated / r->seconds);
		free(r);
	}
}

/* The level-C model alone: memory and time of one candidate. */
static void model_rate(const struct mt_cluster *c)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	struct mt_job j;
	struct mt_ctx x;
	struct mt_costs *a = malloc(sizeof(*a));
	struct mt_plan *p = malloc(sizeof(*p));
	struct mt_config cfg;
	struct mt_mem mem;
	struct mt_time t;
	struct mt_tput tp;
	double t0, dt, sink = 0;
	long n = 0, i;

	if (!a || !p || mt_model_load("deepseek-v3", &m, &err))
		exit(1);
	mt_job_init(&j);
	j.gpus = 1024;
	j.seq = 4096;
	j.gbs = 8192;
	mt_ctx_init(&x, &m, c, &j);
	memset(&cfg, 0, sizeof(cfg));
	mt_config_settings(&j, &cfg);
	cfg.tp = cfg.cp = cfg.etp = cfg.mbs = cfg.vpp = 1;
	cfg.pp = 16;
	cfg.ep = 64;
	cfg.dp = 64;
	cfg.num_mb = 128;
	mt_costs_compute(&x, &(struct mt_shape){ .tp = 1, .cp = 1, .mbs = 1, .ep = 64, .etp = 1, .sp = 0,
				 .cp_comm = MT_CP_P2P, .cp_a2a = 0, .tp_overlap = 1, .fused_ce = 1 }, a);
	if (mt_plan_compute(&x, a, 16, 1, 64, 128, &cfg, p))
		exit(1);
	t0 = bench_now();
	do {
		for (i = 0; i < 100000; i++) {
			cfg.recompute = (int)(i % 3);
			cfg.recompute_layers = 1 + (int)(i % 4);
			cfg.dist_opt = (int)(i & 1);
			mt_memory(&x, a, p, &cfg, &mem);
			mt_timing(&x, a, p, &cfg, &t, &tp);
			sink += mem.total + t.step;
		}
		n += i;
		dt = bench_now() - t0;
	} while (dt < 1.0);
	printf("# model alone (memory + time of one candidate, DeepSeek-V3 PP16 EP64)\n");
	printf("  %.0f evaluations/s, %.0f ns each%s\n", n / dt, 1e9 * dt / n, sink < 0 ? "!" : "");
	free(a);
	free(p);
}

/* The whole command in a child process: wall time and peak RSS. */
static void command_time(const char *exe)
{
	size_t i;

	printf("# megatune advise, whole command (median of %d runs)\n", REPS);
	printf("# %-16s %6s %10s %12s\n", "model", "gpus", "seconds", "peak RSS MiB");
	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		double secs[REPS];
		long rss = 0;
		int k;

		for (k = 0; k < REPS; k++) {
			char g[16], s[16], b[16];
			struct rusage ru;
			double t0 = bench_now();
			int status;
			pid_t pid;

			snprintf(g, sizeof(g), "%d", jobs[i].gpus);
			snprintf(s, sizeof(s), "%d", jobs[i].seq);
			snprintf(b, sizeof(b), "%d", jobs[i].gbs);
			fflush(stdout);
			pid = fork();
			if (pid == 0) {
				if (!freopen("/dev/null", "w", stdout))
					_exit(126);
				execl(exe, exe, "advise", "--model", jobs[i].model, "--gpus", g, "--seq",
				      s, "--gbs", b, (char *)NULL);
				_exit(127);
			}
			if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
			    WEXITSTATUS(status)) {
				fprintf(stderr, "bench-search: '%s advise' failed\n", exe);
				exit(1);
			}
			secs[k] = bench_now() - t0;
			/* the largest resident set of any child waited for so far */
			if (!getrusage(RUSAGE_CHILDREN, &ru) && ru.ru_maxrss > rss)
				rss = ru.ru_maxrss;
		}
		printf("  %-16s %6d %10.3f %12.1f\n", jobs[i].model, jobs[i].gpus,
		       bench_median(secs, REPS), rss / 1024.0);
	}
}

int main(int argc, char **argv)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	const char *exe = argc > 1 ? argv[1] : "build/megatune";

	if (mt_cluster_load("dgx-h100", &c, &err)) {
		fprintf(stderr, "bench-search: %s\n", err.msg);
		return 1;
	}
	search_rate(c);
	model_rate(c);
	command_time(exe);
	mt_cluster_free(c);
	return 0;
}
