/* SPDX-License-Identifier: MIT */
/* probe_opts: the probe options shared by `megatune probe` and
 * `megatune calibrate` (getopt_long entries, parsing, help text). */
#ifndef MT_CLI_PROBE_OPTS_H
#define MT_CLI_PROBE_OPTS_H

#include <getopt.h>

#include "../probes/probe.h"

enum {
	PO_BACKEND = 1000, PO_QUICK, PO_FULL, PO_SMOKE, PO_WARMUP, PO_REPEATS, PO_MINB, PO_MAXB,
	PO_DTYPE, PO_MODEL, PO_TP, PO_OPS, PO_SINGLE, PO_TIMEOUT
};

#define PROBE_LONGOPTS                                                          \
	{ "backend", required_argument, NULL, PO_BACKEND },                     \
	{ "quick", no_argument, NULL, PO_QUICK },                               \
	{ "full", no_argument, NULL, PO_FULL },                                 \
	{ "smoke", no_argument, NULL, PO_SMOKE },                               \
	{ "warmup", required_argument, NULL, PO_WARMUP },                       \
	{ "repeats", required_argument, NULL, PO_REPEATS },                     \
	{ "min-bytes", required_argument, NULL, PO_MINB },                      \
	{ "max-bytes", required_argument, NULL, PO_MAXB },                      \
	{ "dtype", required_argument, NULL, PO_DTYPE },                         \
	{ "model", required_argument, NULL, PO_MODEL },                         \
	{ "tp", required_argument, NULL, PO_TP },                               \
	{ "ops", required_argument, NULL, PO_OPS },                             \
	{ "single-process", no_argument, NULL, PO_SINGLE },                     \
	{ "timeout", required_argument, NULL, PO_TIMEOUT }

#define PROBE_OPTS_HELP                                                                     \
	"  --backend cuda|cpu   cuda (default): the GPUs; cpu: the CPU backends (OpenBLAS,\n" \
	"                       BLAS attention, MPI collectives, memcpy), real work on any\n" \
	"                       machine\n"                                                   \
	"  --quick | --full     a short sweep (about a minute per node) or the complete\n"    \
	"                       one; --smoke: tiny sizes, for tests\n"                        \
	"  --warmup N           untimed runs before measuring (default 2)\n"                 \
	"  --repeats N          timed samples per case (default 7; full 20; smoke 3)\n"      \
	"  --min-bytes SIZE     smallest message or copy (1K, 64M, 4G: powers of 1024)\n"     \
	"  --max-bytes SIZE     largest message or copy\n"                                   \
	"  --dtype LIST         gemm and attention types: bf16,fp8,tf32,fp16,fp32\n"         \
	"  --model NAME|FILE    gemm and attention also at this model's exact shapes;\n"      \
	"                       dispatch: its hidden size, top-k and experts\n"             \
	"  --tp N               with --model: the tensor-parallel size (default 1)\n"        \
	"  --ops LIST           collectives to run (all_reduce,all_gather,reduce_scatter,\n" \
	"                       alltoall,sendrecv,broadcast; default all, quick a few)\n"    \
	"  --single-process     one process over every local GPU (no mpirun)\n"              \
	"  --timeout S          a collective that has not finished after S seconds is\n"     \
	"                       aborted and reported (default 120)\n"

void probe_opts_init(struct mt_probe_opts *o);
/* Handle one option; 0, or the exit code (2) after printing the error. */
int probe_opt(int c, const char *arg, struct mt_probe_opts *o, const char *cmd);
/* Parse a size such as 4096, 64K, 1M, 4G (powers of 1024); -1 when bad. */
double probe_parse_size(const char *s);

#endif
