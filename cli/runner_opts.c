/* SPDX-License-Identifier: MIT */
/* runner_opts: validate's runner options, shared with tune (runner_opts.h). */
#include "runner_opts.h"

#include <stddef.h>
#include <string.h>

#include "../lib/clock.h"
#include "common.h"

#define RO(field) offsetof(struct cli_runner, field)

const struct cli_opt cli_runner_what[] = {
	{ .type = CLI_STR, .name = "launch", .meta = "TEMPLATE", .off = RO(o.launch),
	  .help = "a command line run by /bin/sh for each candidate, with\n"
		  "{megatron_args} {bridge_overrides} {env} {nodes} {gpus}\n"
		  "{gpus_per_node} {name} {dir} {log} {iters} {warmup}\n"
		  "{rank} {advice} replaced (shell-quoted); {{ }} are\n"
		  "literal braces and ${VAR} is left to the shell; another\n"
		  "{word} is an error" },
	{ .type = CLI_FLAG, .name = "proxy", .off = RO(o.proxy),
	  .help = "run megatune-probe's proxy of each candidate instead:\n"
		  "MPIRUN megatune-probe proxy --advice FILE --candidate K\n"
		  "--backend B --iters N --warmup W" },
	{ .type = CLI_STR, .name = "backend", .meta = "cpu|gpu", .off = RO(o.backend),
	  .help = "the proxy's backend (default cpu)" },
	{ .type = CLI_STR, .name = "mpirun", .meta = "CMD", .off = RO(o.mpirun),
	  .help = "the proxy's launcher prefix (default\n"
		  "'mpirun -np {gpus}'; '' runs the proxy alone)" },
	CLI_OPT_END
};

const struct cli_opt cli_runner_how[] = {
	{ .type = CLI_INT, .name = "iters", .meta = "N", .off = RO(o.iters), .lo = 1, .hi = 1000000,
	  .help = "iterations each run is asked for ({iters}, default 20)" },
	{ .type = CLI_INT, .name = "warmup", .meta = "N", .off = RO(o.warmup), .lo = 0,
	  .hi = 1000000, .help = "iterations dropped before the median (default 5)" },
	{ .type = CLI_NUM, .name = "timeout", .meta = "S", .off = RO(o.timeout_s), .lo = 0.001,
	  .hi = 10000000, .want = "seconds from 0.001 to 10000000",
	  .help = "no new iteration line for S seconds (from the start,\n"
		  "then from the last one) is a hang: SIGTERM to the run's\n"
		  "process group, SIGKILL after --kill-grace (default 600)" },
	{ .type = CLI_NUM, .name = "kill-grace", .meta = "S", .off = RO(o.grace_s), .lo = 0,
	  .hi = 10000000, .want = "seconds from 0 to 10000000",
	  .help = "seconds between SIGTERM and SIGKILL (default 10)" },
	{ .type = CLI_NUM, .name = "budget", .meta = "MIN", .off = RO(budget_min), .lo = 0.001,
	  .hi = 10000000, .want = "minutes from 0.001 to 10000000",
	  .help = "minutes for the whole validation; what is left is\nnot_run" },
	CLI_OPT_END
};

void cli_runner_init(struct cli_runner *r, const char *dir)
{
	memset(r, 0, sizeof(*r));
	mt_validate_opts_init(&r->o, dir);
	cli_sibling_exe("megatune-probe", r->probe, sizeof(r->probe));
	r->o.probe_exe = r->probe;
}

int cli_runner_check(const char *cmd, const struct cli_runner *r)
{
	const struct mt_validate_opts *o = &r->o;

	if (!o->launch == !o->proxy)
		return cli_usage_error(cmd, o->proxy ? "give --launch or --proxy, not both"
				       : "missing --launch TEMPLATE or --proxy (what to run)");
	if (o->proxy && strcmp(o->backend, "cpu") && strcmp(o->backend, "gpu"))
		return cli_usage_error(cmd, "--backend expects cpu or gpu, got '%s'", o->backend);
	if (!o->proxy && o->mpirun)
		return cli_usage_error(cmd, "--mpirun goes with --proxy");
	if (o->warmup >= o->iters)
		return cli_usage_error(cmd, "--warmup %d leaves no iteration of --iters %d",
				       o->warmup, o->iters);
	return 0;
}

double cli_runner_deadline(const struct cli_runner *r)
{
	return r->budget_min > 0 ? mt_now() + r->budget_min * 60 : 0;
}
