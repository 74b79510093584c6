/* SPDX-License-Identifier: MIT */
#include "probe_opts.h"
#include "common.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/num.h"
#include "../perfmodel/cluster.h"

void probe_opts_init(struct mt_probe_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->backend = MT_BACKEND_CUDA;
	o->depth = MT_DEPTH_NORMAL;
	o->tp = 1;
	o->timeout_s = 120;
}

double probe_parse_size(const char *s)
{
	char num[64], *end;
	double v;
	size_t n = strspn(s, "0123456789.eE+-");

	/* the number before the unit, read by the one number reader (lib/num.h) */
	if (n == 0 || n >= sizeof(num))
		return -1;
	memcpy(num, s, n);
	num[n] = 0;
	end = (char *)s + n;
	if (mt_parse_num(num, &v) || v <= 0)
		return -1;
	switch (*end) {
	case 0: return v;
	case 'k': case 'K': v *= 1024; break;
	case 'm': case 'M': v *= 1024.0 * 1024; break;
	case 'g': case 'G': v *= 1024.0 * 1024 * 1024; break;
	default: return -1;
	}
	end++;
	if (*end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	return *end ? -1 : floor(v);
}

/* --backend cuda|gpu|cpu */
static int probe_opt_backend(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	struct mt_probe_opts *o = args;

	if (!strcmp(arg, "cuda") || !strcmp(arg, "gpu"))
		o->backend = MT_BACKEND_CUDA;
	else if (!strcmp(arg, "cpu"))
		o->backend = MT_BACKEND_CPU;
	else
		return cli_opt_bad(cmd, opt->name, "cuda or cpu", arg);
	return 0;
}

/* --quick, --full, --smoke: the depth the entry's data points to */
static int opt_depth(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	(void)cmd;
	(void)arg;
	((struct mt_probe_opts *)args)->depth = *(const int *)opt->data;
	return 0;
}

/* --min-bytes, --max-bytes: a size, into the double at the entry's offset */
static int opt_size(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	double v = probe_parse_size(arg);

	if (v < 1)
		return cli_opt_bad(cmd, opt->name, "a size such as 4096, 64K, 1M or 4G", arg);
	*(double *)((char *)args + opt->off) = v;
	return 0;
}

static int probe_opt_dtype(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	struct mt_probe_opts *o = args;
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", arg);
	o->dtypes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int d = mt_dtype_parse(tok);
		if (d < 0 || d == MT_DT_FP4) /* no FP4 kernel in the probes */
			return cli_opt_bad(cmd, opt->name, "bf16, fp16, fp8, tf32 or fp32", tok);
		o->dtypes |= 1 << d;
	}
	if (!o->dtypes)
		return cli_opt_bad(cmd, opt->name, "a list such as bf16,fp8", arg);
	return 0;
}

static int opt_ops(const char *cmd, const struct cli_opt *opt, const char *arg, void *args)
{
	char buf[128], *tok, *save;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (mt_coll_parse(tok) < 0 && strcmp(tok, "all_to_all") && strcmp(tok, "send_recv"))
			return cli_opt_bad(cmd, opt->name, "all_reduce, all_gather, "
					   "reduce_scatter, alltoall, sendrecv or broadcast", tok);
	((struct mt_probe_opts *)args)->ops = arg;
	return 0;
}

static const int depth_quick = MT_DEPTH_QUICK, depth_full = MT_DEPTH_FULL,
		 depth_smoke = MT_DEPTH_SMOKE;

#define PO(field) offsetof(struct mt_probe_opts, field)

const struct cli_opt probe_opts_group[] = {
	{ .type = CLI_FN, .name = "backend", .meta = "cuda|cpu", .fn = probe_opt_backend, .has_arg = 1,
	  .help = "cuda (default): the GPUs; cpu: the CPU backends\n"
		  "(OpenBLAS, BLAS attention, MPI collectives, memcpy),\n"
		  "real work on any machine" },
	{ .type = CLI_FN, .name = "quick", .fn = opt_depth, .data = &depth_quick,
	  .help = "a short sweep (about a minute per node)" },
	{ .type = CLI_FN, .name = "full", .fn = opt_depth, .data = &depth_full,
	  .help = "the complete sweep" },
	{ .type = CLI_FN, .name = "smoke", .fn = opt_depth, .data = &depth_smoke,
	  .help = "tiny sizes, for tests" },
	{ .type = CLI_INT, .name = "warmup", .meta = "N", .off = PO(warmup), .lo = 0, .hi = 1000000,
	  .help = "untimed runs before measuring (default 2)" },
	{ .type = CLI_INT, .name = "repeats", .meta = "N", .off = PO(repeats), .lo = 1,
	  .hi = 1000000, .help = "timed samples per case (default 7; full 20; smoke 3)" },
	{ .type = CLI_FN, .name = "min-bytes", .meta = "SIZE", .off = PO(min_bytes), .fn = opt_size,
	  .has_arg = 1, .help = "smallest message or copy (1K, 64M, 4G: powers of 1024)" },
	{ .type = CLI_FN, .name = "max-bytes", .meta = "SIZE", .off = PO(max_bytes), .fn = opt_size,
	  .has_arg = 1, .help = "largest message or copy" },
	{ .type = CLI_FN, .name = "dtype", .meta = "LIST", .fn = probe_opt_dtype, .has_arg = 1,
	  .help = "gemm and attention types: bf16,fp8,tf32,fp16,fp32" },
	{ .type = CLI_STR, .name = "model", .meta = "NAME|FILE", .off = PO(model),
	  .help = "gemm and attention also at this model's exact shapes;\n"
		  "dispatch: its hidden size, top-k and experts" },
	{ .type = CLI_INT, .name = "tp", .meta = "N", .off = PO(tp), .lo = 1, .hi = 1000000,
	  .help = "with --model: the tensor-parallel size (default 1)" },
	{ .type = CLI_FN, .name = "ops", .meta = "LIST", .fn = opt_ops, .has_arg = 1,
	  .help = "collectives to run (all_reduce,all_gather,\n"
		  "reduce_scatter,alltoall,sendrecv,broadcast; default\n"
		  "all, quick a few)" },
	{ .type = CLI_FLAG, .name = "single-process", .off = PO(single_process),
	  .help = "one process over every local GPU (no mpirun)" },
	{ .type = CLI_NUM, .name = "timeout", .meta = "S", .off = PO(timeout_s), .lo = 0.001,
	  .hi = 86400, .want = "seconds from 0.001 to 86400",
	  .help = "a collective that has not finished after S seconds is\n"
		  "aborted and reported (default 120)" },
	CLI_OPT_END
};
