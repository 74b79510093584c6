/* SPDX-License-Identifier: MIT */
#include "probe_opts.h"
#include "common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/num.h"
#include "../tuner/cluster.h"

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

static int bad(const char *cmd, const char *opt, const char *arg, const char *want)
{
	fprintf(stderr, "megatune %s: error: %s '%s': expected %s\n", cmd, opt, arg, want);
	return 2;
}

static int posint(const char *arg, int *out)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (end == arg || *end || v < 0 || v > 1000000)
		return -1;
	*out = (int)v;
	return 0;
}

int probe_opt(int c, const char *arg, struct mt_probe_opts *o, const char *cmd)
{
	char buf[128], *tok, *save;
	double v;

	switch (c) {
	case PO_BACKEND:
		if (!strcmp(arg, "cuda") || !strcmp(arg, "gpu"))
			o->backend = MT_BACKEND_CUDA;
		else if (!strcmp(arg, "cpu"))
			o->backend = MT_BACKEND_CPU;
		else
			return bad(cmd, "--backend", arg, "cuda or cpu");
		return 0;
	case PO_QUICK: o->depth = MT_DEPTH_QUICK; return 0;
	case PO_FULL: o->depth = MT_DEPTH_FULL; return 0;
	case PO_SMOKE: o->depth = MT_DEPTH_SMOKE; return 0;
	case PO_WARMUP:
		return posint(arg, &o->warmup) ? bad(cmd, "--warmup", arg, "a count") : 0;
	case PO_REPEATS:
		if (posint(arg, &o->repeats) || o->repeats < 1)
			return bad(cmd, "--repeats", arg, "a count of at least 1");
		return 0;
	case PO_MINB:
	case PO_MAXB:
		if ((v = probe_parse_size(arg)) < 1)
			return bad(cmd, c == PO_MINB ? "--min-bytes" : "--max-bytes", arg,
				   "a size such as 4096, 64K, 1M or 4G");
		if (c == PO_MINB)
			o->min_bytes = v;
		else
			o->max_bytes = v;
		return 0;
	case PO_DTYPE:
		snprintf(buf, sizeof(buf), "%s", arg);
		o->dtypes = 0;
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			int d = mt_dtype_parse(tok);
			if (d < 0 || d == MT_DT_FP4) /* no FP4 kernel in the probes */
				return bad(cmd, "--dtype", tok, "bf16, fp16, fp8, tf32 or fp32");
			o->dtypes |= 1 << d;
		}
		if (!o->dtypes)
			return bad(cmd, "--dtype", arg, "a list such as bf16,fp8");
		return 0;
	case PO_MODEL: o->model = arg; return 0;
	case PO_TP:
		if (posint(arg, &o->tp) || o->tp < 1)
			return bad(cmd, "--tp", arg, "a tensor-parallel size of at least 1");
		return 0;
	case PO_OPS:
		snprintf(buf, sizeof(buf), "%s", arg);
		for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
			if (mt_coll_parse(tok) < 0 && strcmp(tok, "all_to_all") && strcmp(tok, "send_recv"))
				return bad(cmd, "--ops", tok, "all_reduce, all_gather, reduce_scatter, "
					   "alltoall, sendrecv or broadcast");
		o->ops = arg;
		return 0;
	case PO_SINGLE: o->single_process = 1; return 0;
	case PO_TIMEOUT: {
		if (mt_parse_num_range(arg, 0, 86400, &v) || !(v > 0))
			return bad(cmd, "--timeout", arg, "seconds between 0 and 86400");
		o->timeout_s = v;
		return 0;
	}
	default:
		return cli_usage_error(cmd, "unknown option");
	}
}
