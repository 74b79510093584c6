/* SPDX-License-Identifier: MIT */
/* validation: the owner of the `megatune.validation/1` document
 * (docs/FORMATS.md): predicted and measured side by side for each candidate
 * of an advice that `megatune validate` ran, with the status of each run and
 * its evidence, and a summary (the measured ranking, Kendall's tau between
 * predicted and measured step, the mean absolute error).
 *
 * The only reader and writer of the kind: mt_validation_load() is the typed
 * reader everything else uses (the report, compare, tune, calibrate).  A
 * struct mt_validation owns its strings, its candidates' config objects and
 * memory reports (mt_validation_free).  Numbers absent from the document read
 * as NAN.
 */
#ifndef MT_VALIDATE_VALIDATION_H
#define MT_VALIDATE_VALIDATION_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"

#define MT_VALIDATION_SCHEMA "megatune.validation/1"

struct mt_vpred {
	double step_s, tokens_per_s_per_gpu, tflops_per_gpu, mem_gib;
};

struct mt_vmeas {
	double step_s, step_iqr_s, step_min_s, step_max_s;
	int step_n;
	double tokens_per_s_per_gpu, tflops_per_gpu, log_tflops_per_gpu; /* log's: NAN if none */
	double mem_max_allocated_gib, mem_max_reserved_gib;              /* NAN if not printed */
	long skipped_iterations;
};

/* The memory of a pipeline stage as PyTorch's caching allocator counts it
 * (docs/MODEL.md 4.8), bytes; NAN: none. */
struct mt_vmempred {
	double allocated, max_allocated, reserved;
};

/* One rank's last memory report (Megatron-LM report_memory, read by
 * logparse.h) beside the prediction for its pipeline stage: `memory_ranks`
 * of a candidate.  Bytes; NAN: not printed. */
struct mt_vmemrank {
	int rank;               /* -1: a line without "[Rank N]" */
	int stage;              /* -1: not known (mt_rank_stage) */
	long lineno;            /* the report's line in the log */
	double allocated, max_allocated, reserved, max_reserved;
	struct mt_vmempred pred; /* its stage's; NAN when not predicted */
};

struct mt_vcand {
	char *name;             /* c<rank>-tp..-pp..[-vpp..][-cp..][-ep..]-mbs..[-rc..] */
	int predicted_rank;
	cJSON *config;          /* the advice's configuration object (owned) */
	int status;             /* enum mt_vstatus (logparse.h) */
	char *evidence_line;    /* NULL: no evidence */
	long evidence_lineno;
	char *reason;           /* one sentence on the status, or NULL */
	char *log;              /* the run's log, or NULL */
	char *command;          /* the command run, or NULL */
	double wall_s;          /* the run's wall time, NAN if not run */
	struct mt_vpred pred;
	int has_measured;
	struct mt_vmeas meas;
	int nmemr;
	struct mt_vmemrank *memr; /* each reporting rank's memory (owned) */
	/* not written: each stage's predicted memory from the advice
	 * (mt_validate_init), set beside the ranks' reports of a run */
	int nstage_pred;
	struct mt_vmempred *stage_pred;
	/* tune (validate/tune.h): the run's place in the loop and what the
	 * correction fitted from the runs before it predicted; tune_run 0 when
	 * tune did not run it */
	int tune_run;           /* 1 for tune's first run, ... */
	int tune_fitted_from;   /* runs (status ok) the correction was fitted from, 0: none */
	double tune_corrected_s; /* the corrected prediction it ran with, NAN without a correction */
};

/* What tune (validate/tune.h) adds to the document: written when `on`, not
 * read back (a resumed tune works it out again). */
struct mt_vtune {
	int on;
	char stopped[160];      /* why the loop stopped */
	char correction[512];   /* the last correction in words */
	int runs;               /* candidates run, in all (resumed ones included) */
	int best_run;           /* the tune_run of the measured best, 0: none */
	int ranking_changed;    /* the last correction orders the list otherwise than the
				 * uncorrected prediction does */
	int *order;             /* the list by the last corrected prediction (indices into
				 * cand, ncand of them; owned), NULL: none */
	double *corrected_s;    /* per candidate, the last corrected prediction (owned) */
};

struct mt_vsummary {
	int nranked;
	char **measured_ranking; /* names of the ok candidates, fastest first (borrowed from cand) */
	double kendall_tau;      /* predicted vs measured step over ok candidates; NAN below 2 */
	double mae_step_s;       /* mean |measured - predicted| step, s; NAN when none */
	double mape_step;        /* mean |measured - predicted| / predicted */
	int ok, failed, not_run;
};

struct mt_validation {
	char *megatune_version, *created, *advice, *model, *cluster, *mode;
	int gpus, seq, gbs;
	int iters, warmup;
	int ncand;
	struct mt_vcand *cand;
	struct mt_vsummary sum; /* mt_validation_summarize */
	struct mt_vtune tune;   /* written by tune only */
};

/* Compute sum from the candidates (any order).  MT_OK, or MT_ENOMEM (sum
 * left empty: nothing ranked, no counts). */
int mt_validation_summarize(struct mt_validation *v);

/* Relative error (measured - predicted) / predicted, NAN when either lacks. */
double mt_vrel(double measured, double predicted);

/* The document (summary computed here) appended to sb.  MT_OK, or MT_ENOMEM
 * (sb holds part of it). */
int mt_validation_json(struct sbuf *sb, struct mt_validation *v);

/* Write it atomically to path (MT_ENOMEM, nothing written, when memory runs
 * out). */
int mt_validation_write(const char *path, struct mt_validation *v, struct mt_error *err);

/* Read a megatune.validation/1 file; MT_EINVAL naming file and field when
 * it is not one (`opt`, e.g. "--validation", names the option that expected
 * it in the schema message), MT_ENOMEM when memory runs out; on an error
 * nothing is left to free. */
int mt_validation_load(const char *path, const char *opt, struct mt_validation *out,
		       struct mt_error *err);
/* The same from a parsed document. */
int mt_validation_read(const cJSON *doc, const char *file, const char *opt,
		       struct mt_validation *out, struct mt_error *err);

/* The pipeline stage of global rank `rank` of a job of `gpus` GPUs in `pp`
 * stages, in Megatron-LM's default rank order (tp-cp-ep-dp-pp: the pipeline
 * outermost); -1 when the rank is unknown or outside the job (a line without
 * a rank is stage 0 of a job without a pipeline). */
int mt_rank_stage(int rank, int gpus, int pp);

/* The candidate named name, or NULL. */
struct mt_vcand *mt_validation_find(struct mt_validation *v, const char *name);

void mt_validation_free(struct mt_validation *v);

/* Kendall's tau-a of two series (pairs tied in either count as 0); NAN below 2. */
double mt_kendall_tau(const double *a, const double *b, int n);

#endif
