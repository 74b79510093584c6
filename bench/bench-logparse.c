/* SPDX-License-Identifier: MIT */
/* bench-logparse: how fast the validation's log parser reads a training log.
 *
 * A 200,000-line log of every kind the parser knows (Megatron-LM iteration
 * lines with timestamps and throughput, memory reports of 8 ranks, one-line
 * timers, NeMo 2 lines, launcher prefixes, traceback noise), fed in 64 KiB
 * chunks as the runner reads a growing log; median of 5 passes.  Prints lines
 * and MB per second.  A real run prints a few lines per second per rank, so
 * anything above 10^5 lines/s keeps the runner's polling (every 20 ms) far
 * from the log's pace.  Usage: bench-logparse
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "../lib/sbuf.h"
#include "../validate/logparse.h"

#define LINES 200000
#define REPS 5

static void make_log(struct sbuf *sb)
{
	int i;

	for (i = 0; i < LINES; i++) {
		switch (i % 10) {
		case 0:
			sbuf_addf(sb, "[default0]: [2025-08-28 16:31:53] iteration %8d/  500000 | "
				  "consumed samples: %12d | elapsed time per iteration (ms): %.1f | "
				  "throughput per GPU (TFLOP/s/GPU): 220.4 | learning rate: "
				  "3.000000E-06 | global batch size:   128 | lm loss: 1.957101E+00 | "
				  "loss scale: 1.0 | grad norm: 2.853 | number of skipped iterations:   "
				  "0 | number of nan iterations:   0 |\n", i / 10 + 1, i * 128,
				  5900.0 + i % 37);
			break;
		case 1: case 2: case 3:
			sbuf_addf(sb, "[Rank %d] (after %d iterations) memory (MB) | allocated: "
				  "6351.375 | max allocated: 7974.18994140625 | reserved: 8528.0 | max "
				  "reserved: 8528.0\n", i % 8, i / 10);
			break;
		case 4:
			sbuf_adds(sb, "time (ms) | forward-compute: 193.77 | backward-compute: 73.02 | "
				      "optimizer: 63.01 | batch-generator: 25.27\n");
			break;
		case 5:
			sbuf_addf(sb, " 0: Training epoch 0, iteration %d/29 | lr: 5.389e-06 | "
				  "max_memory_reserved: 57466159104 | train_step_timing in s: 27.01 | "
				  "TFLOPS_per_GPU: 48.58\n", i);
			break;
		default:
			sbuf_adds(sb, "  File \"/opt/megatron/megatron/training.py\", line 729, in "
				      "train\n");
		}
	}
}

int main(void)
{
	struct mt_logparse *p = malloc(sizeof(*p));
	double t[REPS], best;
	struct sbuf sb;
	size_t off;
	int r;

	if (!p)
		return 1;
	sbuf_init(&sb);
	make_log(&sb);
	for (r = 0; r < REPS; r++) {
		double t0 = bench_now();

		mt_logparse_init(p);
		for (off = 0; off < sb.len; off += 65536)
			mt_logparse_feed(p, sb.buf + off, sb.len - off < 65536 ? sb.len - off : 65536);
		mt_logparse_finish(p);
		t[r] = bench_now() - t0;
	}
	best = bench_median(t, REPS);
	printf("logparse: %d lines, %.1f MB in %.3f s (median of %d): %.0f lines/s, %.0f MB/s; "
	       "%d steps, status %s\n", LINES, sb.len / 1e6, best, REPS, LINES / best,
	       sb.len / 1e6 / best, p->nstep, mt_vstatus_name(mt_logparse_status(p)));
	r = p->nstep > 0 ? 0 : 1;
	sbuf_release(&sb);
	free(p);
	return r;
}
