/* SPDX-License-Identifier: MIT */
/* analyze: what a training run's GPUs did, per rank and across ranks.
 *
 * Definitions (docs/METRICS.md has them with their sources):
 *   - GPU work: kernel, memcpy and memset events; the window (total) runs from
 *     the first start to the last end of the chosen events.
 *   - Chosen events: every GPU event by default; with `linked_only` only those
 *     whose correlation id matches a CPU launch call (TraceLens's default);
 *     with a step window only the linked events whose launch call starts in
 *     it (MT_WIN_STEPS: first to last ProfilerStep; MT_WIN_HTA: from the first
 *     to the start of the last of >= 2 steps, as Holistic Trace Analysis).
 *   - Classes (TraceLens): memcpy; communication = kernels (or memsets) whose
 *     name matches the communication patterns; computation = all other
 *     kernels and memsets.  busy = |U all|, idle = total - busy,
 *     computation = |U comp|, comm = |U comm|, exposed_comm = |U comm - U comp|,
 *     exposed_memcpy = |U memcpy - U comp - U comm|; so
 *     computation + exposed_comm + exposed_memcpy + idle = total.
 *   - overlap_pct = 100 |U comm n U comp| / |U comm| (HTA).
 *   - Idle gaps are split by the launch call of the event that ends them:
 *     host_wait = gap time before that call began (the host had not yet asked
 *     for the work), launch = gap time after it (launch latency, queueing);
 *     a gap ended by an unlinked event is unattributed.
 *
 * All times are integer ns.  Nothing here prints; the caller formats.
 */
#ifndef MT_ANALYZE_H
#define MT_ANALYZE_H

#include <stddef.h>
#include <stdint.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "trace.h"

enum mt_window { MT_WIN_ALL, MT_WIN_STEPS, MT_WIN_HTA };

/* Kernel categories by name. */
enum mt_kcat { MT_KC_GEMM, MT_KC_ATTENTION, MT_KC_ELEMENTWISE, MT_KC_REDUCTION, MT_KC_COMM,
	       MT_KC_MEMCPY, MT_KC_MEMSET, MT_KC_OTHER, MT_KC_N };

const char *mt_kcat_name(enum mt_kcat c);

#define MT_MAX_COMM_PATTERNS 16

struct mt_analyze_opts {
	int linked_only;
	enum mt_window window;
	/* extra communication patterns: POSIX extended regular expressions */
	const char *comm_patterns[MT_MAX_COMM_PATTERNS];
	int ncomm_patterns;
};

struct mt_rank_stats {
	char path[512];
	int64_t rank;              /* from the trace, else its index */
	int rank_from_trace;
	int64_t world_size;
	char gpu_name[96];         /* "" when the trace does not say */

	int64_t t0, t1;            /* window, ns on the trace's clock */
	int64_t total, busy, idle, comp, comm, exposed_comm, memcpy, exposed_memcpy;
	int64_t idle_host_wait, idle_launch, idle_unattributed;
	int64_t coll_time[MT_TC_N], coll_exposed[MT_TC_N];
	size_t coll_kernels[MT_TC_N];
	int64_t custom_comm, custom_exposed; /* DeepEP / NVSHMEM / --comm-pattern kernels */
	size_t custom_kernels;
	int64_t ep_comm, dp_comm;  /* exposed expert (all-to-all) and data-parallel time (facts) */
	int dp_present, ep_present;
	double overlap_pct;

	size_t nevents, nkernels, nmemcpy, nmemset, ncomm, nunlinked, nstreams, ndevices;
	size_t nleft_out;          /* events outside the window or unlinked (left out) */
	/* of them, left out while reading (profiler/trace.h): broken times (null,
	 * not a number, beyond int64 ns), ending before starting, lasting over an
	 * hour, past the reader's cap on events; and what was cut or merged */
	size_t left_bad_time, left_order, left_long, left_cap;
	size_t strings_cut, names_capped, other_cap;
	size_t cat_count[MT_KC_N];
	int64_t cat_time[MT_KC_N]; /* sum of durations (not a union) */
	double median_kernel;      /* ns; the mean of the two middle ones when even */

	size_t nsteps;
	int64_t step_mean, step_min, step_max;   /* CPU durations of the iterations */
	int64_t first_step_num, first_step_start; /* epoch-based when the trace says so */
	int has_steps;

	int no_comm_multi_stream; /* work on >= 2 streams and no communication recognised */
	char note[192];            /* about the trace itself (megatune format: killed, drops) */

	/* for the job-level checks (the trace itself may be freed by then) */
	int64_t step_num[32], step_start[32]; /* earliest CPU start of each step number */
	int nstep_num;
	int device;                /* the one device of the chosen events, -1 if several */
	int ndevice_props;
	uint64_t device_props_hash;
};

struct mt_job_stats {
	int nranks;
	int slowest;               /* index into ranks[], -1 with one rank */
	double slowest_ratio;      /* its computation over the median rank's */
	int stragglers[64];        /* indices of ranks > 5% above the median computation */
	int nstragglers;
	int one_clock;             /* the ranks are shown to share one host clock */
	char clock_evidence[256];
	int64_t start_skew;        /* ns, when one_clock and a common step exists; else -1 */
	int wait_rank;             /* index of the earliest starter, -1 */
	int64_t skew_step;         /* the ProfilerStep number used */
	double step_mean_s;        /* mean iteration time over ranks (s); NaN if none */
	int64_t idle_max, idle_min;
};

/* Analyse one rank.  `index` is its position on the command line (its rank
 * when the trace does not say).  Returns 0, MT_ENOMEM, or MT_EINVAL (bad
 * pattern, or no GPU work in the window: a message names the file). */
int mt_analyze_rank(const struct mt_trace *t, int index, const struct mt_analyze_opts *o,
		    struct mt_rank_stats *out, struct mt_error *err);

/* Across ranks. */
void mt_analyze_job(const struct mt_rank_stats *r, int n, struct mt_job_stats *out);

struct mt_val;
/* The megatune.facts/1 findings the diagnose rules read (facts[MT_F_N],
 * given[MT_F_N]); pooled over ranks: summed times over summed windows. */
void mt_analyze_facts(const struct mt_rank_stats *r, int n, const struct mt_job_stats *j,
		      struct mt_val *facts, unsigned char *given);

/* The method text: how the figures were computed with these options. */
void mt_analyze_method(const struct mt_analyze_opts *o, struct sbuf *sb);

#endif
