/* SPDX-License-Identifier: MIT */
/* logparse: what a Megatron-family training log says, read line by line.
 *
 * Pure: no I/O.  The caller feeds bytes as they arrive (mt_logparse_feed,
 * any chunking; lines end at '\n' or '\r', so Lightning progress-bar updates
 * are lines) and calls mt_logparse_finish at the end.  The line formats, the
 * code that prints each and real excerpts are in
 * tests/fixtures/megatron-logs/README.md; what is read (docs/VALIDATE.md):
 *
 *  - steps: Megatron-LM / Megatron-Bridge `iteration N/ M | ... elapsed time
 *    per iteration (ms): X |` of every era (with or without timestamp,
 *    throughput, consumed samples; the 2019 layout without colons), with
 *    `throughput per GPU (TFLOP/s/GPU): T` when printed; NeMo 2
 *    `Training epoch E, iteration I/M | ... train_step_timing in s: X`
 *    (I is 0-based: step I+1) with `TFLOPS_per_GPU`; Lightning progress bars
 *    `Epoch E: ... N/M [..., train_step_timing in s=X]`; Bridge's
 *    `Step Time : Xs GPU utilization: T[ ]MODEL_TFLOP/s/GPU`, used only in a
 *    log without iteration lines (it repeats their time).  A line for the
 *    iteration of the step before (another rank's, a redrawn bar) adds no
 *    step.  An interval
 *    whose iterations were all skipped (fp16 loss-scale search) counts in
 *    `skipped` and gives no step.
 *  - memory, worst line: `[Rank R] (...) memory (MB) | allocated | max
 *    allocated | reserved | max reserved` (MiB; the 2019 `cached` names are
 *    reserved; no [Rank R] before 2020), Bridge `memory (GB) |
 *    mem-max-allocated-gigabytes | mem-max-reserved-gigabytes` (1e9 bytes),
 *    NeMo 2 `max_memory_allocated`, `max_memory_reserved`,
 *    `peak_memory_usage` (bytes; the last taken as reserved).
 *  - prefixes stripped first: torchrun `[defaultN]:`, PyTorch `[rankN]: `,
 *    srun --label ` N: `.
 *  - failures, the first line of the most telling kind kept as evidence
 *    (out of memory > NaN > NCCL timeout > NCCL error: an OOM or a NaN on one
 *    rank makes the others time out or fail in NCCL): CUDA out of memory
 *    (PyTorch's `CUDA out of memory` of both eras, `CUDA error: out of
 *    memory`, NCCL's `Cuda failure 2 'out of memory'`); NCCL watchdog
 *    `Watchdog caught collective operation timeout`; `NCCL error` and
 *    `ncclSystemError`-style codes; NaN: `found NaN`, `grad norm: nan`,
 *    a loss printed as nan, `number of nan iterations: K>0`, or a loss field
 *    that vanished from an iteration line after earlier lines had one while
 *    that interval skipped no iteration (the line holding a field Megatron-LM
 *    prints after the losses: loss scale, grad norm, the counts; a line
 *    ending before them says nothing of its loss).
 *  - a cut log: the last line has no newline and is a progress line without
 *    its end: an iteration line with fewer field separators (`|`, `,`, `]`)
 *    than the whole iteration lines of the log (with none to compare: a
 *    Megatron-LM line not closed by `|`), a Lightning bar not closed by `]`.
 *    It gives no step, no failure and no progress; cut_lineno names it.
 */
#ifndef MT_VALIDATE_LOGPARSE_H
#define MT_VALIDATE_LOGPARSE_H

#include <stddef.h>

#include "../lib/sbuf.h"

/* The status of a candidate's run (megatune.validation/1 `status`). */
enum mt_vstatus {
	MT_VS_OK = 0,
	MT_VS_OOM,
	MT_VS_NCCL_TIMEOUT,
	MT_VS_NCCL_ERROR,
	MT_VS_NAN,
	MT_VS_HANG,
	MT_VS_EXIT,
	MT_VS_NO_ITERATIONS,
	MT_VS_NOT_RUN,
	MT_VS_N
};

/* "ok", "oom", ... as in the document; NULL out of range. */
const char *mt_vstatus_name(int s);
/* The status named s, or -1. */
int mt_vstatus_parse(const char *s);

#define MT_LOG_MAX_STEPS 8192
#define MT_LOG_LINE_MAX 2048 /* longer lines are cut there (evidence and parsing) */

enum mt_log_format {
	MT_LOGF_NONE = 0,
	MT_LOGF_MEGATRON,  /* Megatron-LM / Bridge iteration lines */
	MT_LOGF_NEMO2,     /* Training epoch E, iteration I/M */
	MT_LOGF_LIGHTNING, /* progress bar */
	MT_LOGF_STEPTIME,  /* Bridge Step Time lines only */
};

/* the ranks whose memory reports are kept */
#define MT_LOG_MEM_RANKS 64

struct mt_logparse {
	/* steps, in log order */
	int nstep;
	double step_s[MT_LOG_MAX_STEPS];
	long iter[MT_LOG_MAX_STEPS];       /* the iteration number, 1-based */
	double log_tflops[MT_LOG_MAX_STEPS]; /* TFLOP/s/GPU the log printed, or NAN */
	int format;                        /* enum mt_log_format of the steps */
	long iter_lines;                   /* progress lines seen (grows with each) */
	long last_iter;                    /* the last iteration number, 0: none */
	long train_iters;                  /* M of `N/ M`, 0: unknown */
	/* memory, worst rank, bytes (NAN: not printed) */
	double mem_max_alloc_b, mem_max_reserved_b;
	int mem_lines;
	/* memory, each rank's last report (Megatron-LM prints one per model-
	 * parallel rank of the first data-parallel group; rank -1: a line
	 * without "[Rank N]"), in the order first seen; bytes, NAN: not printed */
	struct mt_logmem {
		int rank;
		long lineno;
		double alloc_b, max_alloc_b, reserved_b, max_reserved_b;
	} memr[MT_LOG_MEM_RANKS];
	int nmemr;
	/* counters */
	long skipped;                      /* iterations skipped (sum over intervals) */
	long skip_lineno;                  /* the first line reporting a skip, 0: none */
	char skip_line[MT_LOG_LINE_MAX];
	long nan_iters;                    /* `number of nan iterations` summed */
	/* the failure, MT_VS_OK when none */
	int failure;
	long evidence_lineno;              /* 1-based line of the evidence, 0: none */
	char evidence[MT_LOG_LINE_MAX];
	long lineno;                       /* lines read so far */
	char last_line[MT_LOG_LINE_MAX];   /* the last line with text (not blank, not a
					    * rule of dashes or equals signs) */
	long last_lineno;
	char err_line[MT_LOG_LINE_MAX];    /* the last line saying `error:` (a launcher's,
					    * argparse's, a Python exception's), the
					    * evidence of a non-zero exit before last_line */
	long err_lineno;                   /* 0: none */
	char last_iter_line[MT_LOG_LINE_MAX]; /* the last progress line */
	long last_iter_lineno;
	long cut_lineno;                   /* the log is cut: its last line, a progress
					    * line without its end (no newline, and fewer
					    * fields than the whole ones), read for nothing
					    * (no step, no failure, no progress); 0: none */
	char cut_line[MT_LOG_LINE_MAX];
	/* private: Bridge Step Time series, loss tracking, the partial line */
	int nst;
	double st_s[MT_LOG_MAX_STEPS], st_tflops[MT_LOG_MAX_STEPS];
	int loss_seen;
	int at_end;                        /* the line read is the partial last one */
	int seps, whole_seps;              /* the line's field separators, the most
					    * of a whole progress line */
	size_t plen;
	int prev_cr;
	char part[MT_LOG_LINE_MAX];
};

void mt_logparse_init(struct mt_logparse *p);
/* Read n bytes (any chunk of the log). */
void mt_logparse_feed(struct mt_logparse *p, const char *buf, size_t n);
/* One whole line without its end (n bytes, need not be NUL-terminated). */
void mt_logparse_line(struct mt_logparse *p, const char *line, size_t n);
/* The end of the log: the last partial line, the Step Time fallback. */
void mt_logparse_finish(struct mt_logparse *p);

/* The status the log alone gives: its failure, else ok with steps, else
 * no_iterations. */
int mt_logparse_status(const struct mt_logparse *p);

/* What was read, as text (the golden files of tests/golden/megatron-logs):
 * format, steps with their iteration and the log's TFLOP/s, memory, counts,
 * status and evidence. */
void mt_logparse_text(struct sbuf *sb, const struct mt_logparse *p);

#endif
