/* SPDX-License-Identifier: MIT */
/* proxy: run one candidate of an advice file as a layer proxy under MPI and
 * print Megatron-LM iteration lines (probes/proxy.h). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../tuner/advice.h"
#include "../lib/fsutil.h"
#include "../lib/jsonr.h"
#include "../probes/mpi.h"
#include "../probes/proxy.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "cli.h"

static const char proxy_head[] =
	"usage: megatune-probe proxy --advice FILE --candidate K [--backend cpu|gpu]\n"
	"                            [--iters N] [--warmup W] [--timeout S]\n"
	"       (megatune proxy ... runs the same)\n"
	"\n"
	"Runs the K-th candidate (1 = best) of a megatune.advice/1 file as a layer proxy on\n"
	"the ranks of this launch (mpirun -np P, srun): the GEMMs of its TP/ETP shards\n"
	"(forward, data and weight gradients), the attention of its sequence shard, its TP,\n"
	"CP and EP collectives at their sizes over groups laid out as Megatron-LM orders\n"
	"ranks, the PP send/recv and the DP gradient reduction.  Each iteration runs one\n"
	"layer's work once and composes the step (docs/MODEL.md, \"The proxy\"):\n"
	"  step = (layers per stage x layer time + output layer + VPP x send/recv)\n"
	"         x (micro-batches + (PP - 1) / VPP) + exposed DP reduction\n"
	"Rank 0 prints one Megatron-LM iteration line per iteration (elapsed time per\n"
	"iteration = the composed step, the slowest rank's; throughput = megatune's model\n"
	"FLOPs per step / step / GPUs) and the memory report after the first and the last\n"
	"(the proxy's own buffers: not the job's memory).  With fewer ranks than the\n"
	"configuration's GPUs, DP replicas, then PP stages, EP, CP and TP groups are made\n"
	"smaller (said on stderr); the per-GPU shapes and message sizes stay.\n";

static const char proxy_tail[] =
	"exit codes: 0 success; 2 bad usage or input (missing advice, wrong schema, a\n"
	"candidate out of range, a configuration the model cannot split); 77 the backend\n"
	"does not apply here (no GPU), with the reason.\n";

struct pargs {
	const char *advice;
	int cand, backend, iters, warmup;
	double timeout;
};

static int proxy_opt_backend(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	struct pargs *a = args;

	if (!strcmp(arg, "cpu"))
		a->backend = MT_BACKEND_CPU;
	else if (!strcmp(arg, "gpu") || !strcmp(arg, "cuda"))
		a->backend = MT_BACKEND_CUDA;
	else
		return cli_opt_bad(cmd, opt->name, "cpu or gpu", arg);
	return 0;
}

#define PA(field) offsetof(struct pargs, field)

static const struct cli_opt proxy_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STR, .name = "advice", .meta = "FILE", .off = PA(advice),
	  .help = "a megatune.advice/1 file (megatune advise --json FILE)" },
	{ .type = CLI_INT, .name = "candidate", .meta = "K", .off = PA(cand), .lo = 1,
	  .hi = 1000000, .help = "which candidate, 1 = the best" },
	{ .type = CLI_FN, .name = "backend", .meta = "cpu|gpu", .fn = proxy_opt_backend, .has_arg = 1,
	  .help = "cpu: OpenBLAS, BLAS attention, MPI; gpu (default):\n"
		  "cuBLASLt, the attention kernels, NCCL (also spelt cuda)" },
	{ .type = CLI_INT, .name = "iters", .meta = "N", .off = PA(iters), .lo = 1, .hi = 1000000,
	  .help = "iterations printed (default 10)" },
	{ .type = CLI_INT, .name = "warmup", .meta = "W", .off = PA(warmup), .lo = 0, .hi = 1000000,
	  .help = "iterations run first and not printed (default 2)" },
	{ .type = CLI_NUM, .name = "timeout", .meta = "S", .off = PA(timeout), .lo = 0, .hi = 86400,
	  .want = "seconds from 0 to 86400",
	  .help = "a collective not finished after S seconds is aborted\n(gpu)" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_proxy = {
	.cmd = "proxy", .head = proxy_head, .opts = proxy_opts, .tail = proxy_tail,
};

/* 0 to go on, -1 after the help, or the exit code. */
static int proxy_parse(int argc, char **argv, struct pargs *a)
{
	int rc, first;

	memset(a, 0, sizeof(*a));
	a->backend = MT_BACKEND_CUDA;
	a->iters = 10;
	a->warmup = 2;
	if ((rc = cli_parse(&cli_spec_proxy, argc, argv, a, &first)) >= 0)
		return rc ? rc : -1;
	if (first < argc)
		return cli_usage_error("proxy", "unexpected argument '%s'", argv[first]);
	if (!a->advice)
		return cli_usage_error("proxy", "--advice FILE is required");
	if (!a->cand)
		return cli_usage_error("proxy", "--candidate K is required");
	return 0;
}

static const char *const part_label[MT_PX_NPART] = {
	"attention block", "dense MLP", "MoE", "output layer", "PP send/recv", "DP reduce", "DP gather"
};

int cmd_proxy(int argc, char **argv)
{
	struct pargs a;
	struct mt_world w;
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model *m = NULL;
	struct mt_job job;
	struct mt_config cfg;
	struct mt_proxy_plan plan;
	struct mt_proxy_opts o;
	struct mt_proxy_iter med;
	int rc, code = 0, i;

	memset(&plan, 0, sizeof(plan));
	if ((rc = proxy_parse(argc, argv, &a)))
		return rc < 0 ? 0 : rc;
	if (mt_world_init(&w, &argc, &argv, &err))
		return cli_fail("proxy", &err);
	if (!(m = calloc(1, sizeof(*m)))) {
		code = cli_fail("proxy", &(struct mt_error){ MT_ENOMEM, "out of memory" });
		goto done;
	}
	rc = mt_advice_candidate(a.advice, a.cand, m, &job, &cfg, NULL, NULL, 0, &err);
	if (!rc)
		rc = mt_proxy_plan(m, &job, &cfg, w.size, a.backend, &plan, &err);
	if (rc) {
		if (w.rank == 0)
			code = cli_fail("proxy", &err);
		else
			code = mt_exit_code(rc);
		goto done;
	}
	if (w.rank == 0) {
		fprintf(stderr, "megatune proxy: candidate %d of %s: TP%d PP%d VPP%d CP%d EP%d ETP%d "
			"DP%d MBS%d, %d micro-batches, %d GPUs; %d rank%s, backend %s\n", a.cand,
			a.advice, cfg.tp, cfg.pp, cfg.vpp, cfg.cp, cfg.ep, cfg.etp, cfg.dp, cfg.mbs,
			cfg.num_mb, job.gpus, w.size, w.size == 1 ? "" : "s",
			a.backend == MT_BACKEND_CPU ? "cpu" : "gpu");
		if (plan.scaled[0])
			fprintf(stderr, "megatune proxy: scaled to this launch: %s\n", plan.scaled);
	}
	memset(&o, 0, sizeof(o));
	o.backend = a.backend;
	o.iters = a.iters;
	o.warmup = a.warmup;
	o.timeout_s = a.timeout;
	rc = mt_proxy_run(&plan, &o, &w, w.rank == 0 ? stdout : NULL, &med, &err);
	if (rc) {
		if (w.rank == 0)
			code = cli_fail("proxy", &err);
		else
			code = mt_exit_code(rc);
		goto done;
	}
	if (w.rank == 0) {
		fprintf(stderr, "megatune proxy: median step %.6f s;", med.step_s);
		if (plan.layers_dense > 0)
			fprintf(stderr, " dense layer %.6f s (%g per stage);", med.layer_dense_s,
				plan.layers_dense);
		if (plan.layers_moe > 0)
			fprintf(stderr, " MoE layer %.6f s (%g per stage);", med.layer_moe_s,
				plan.layers_moe);
		for (i = 0; i < MT_PX_NPART; i++)
			fprintf(stderr, "%s %s %.6f s", i ? "," : "", part_label[i], med.part_s[i]);
		fprintf(stderr, " (rank 0, per execution)\n");
	}
done:
	mt_proxy_plan_free(&plan);
	free(m);
	fflush(stdout);
	mt_world_finalize(&w);
	return code;
}
