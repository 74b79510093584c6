/* SPDX-License-Identifier: MIT */
/* against: a trace's measured time per class beside the model's terms for the
 * same configuration (`megatune analyze --against`, docs/MODEL.md 11.2).
 *
 * What the trace covers ("the unit") is either one training step per
 * ProfilerStep (the default: every layer of the rank's stage and every
 * micro-batch, the bubble and the optimizer; the model's terms are those of
 * the evaluated step), or N layers, each through its forward and backward
 * for one micro-batch (`layers` > 0: the model's per-layer terms of the
 * job's most common layer kind, MoE for an MoE model, times N).
 *
 * The classes and how each side is counted:
 *   gemm, attention      kernel durations of that category (profiler/analyze.c)
 *                        against the model's GEMM and attention terms;
 *   element-wise         element-wise, reduction, memset and other kernels
 *                        against the element-wise term (norms, activations,
 *                        casts, permutations, optimizer kernels in a step);
 *   recompute            the model's re-run forward (a trace cannot tell it
 *                        apart: it is inside the classes above);
 *   kernel gaps          the model's gaps between kernels and the compute the
 *                        SMs lent to overlapped communication cost (inside
 *                        the measured kernels' durations: a GEMM beside a
 *                        DeepEP kernel runs on fewer SMs);
 *   computation          the union of computation kernels against the sum of
 *                        the five terms above;
 *   communication        the union of communication kernels against the sum
 *                        of the model's TP, CP, EP, PP and DP communication,
 *                        hidden and exposed; `EP` is the part of expert
 *                        dispatch (DeepEP, NVSHMEM, all-to-all kernels);
 *   exposed comm.        communication not under computation, both sides;
 *   idle                 GPU idle (host waits and launch gaps) against the
 *                        model's host-exposed time, bubble and exposed
 *                        offload;
 *   window               the whole window against the model's time.
 * Measured figures are the mean over the traces (ranks) given, divided by the
 * units the window holds (its ProfilerSteps, or 1 with `layers`).
 */
#ifndef MT_AGAINST_H
#define MT_AGAINST_H

#include "../lib/err.h"
#include "../lib/jsonw.h"
#include "../lib/sbuf.h"
#include "../perfmodel/config.h"
#include "analyze.h"

enum mt_ag_row {
	MT_AG_GEMM, MT_AG_ATTN, MT_AG_ELEM, MT_AG_RECOMPUTE, MT_AG_GAPS, MT_AG_COMP, MT_AG_COMM,
	MT_AG_COMM_EP, MT_AG_EXPOSED, MT_AG_IDLE, MT_AG_WINDOW, MT_AG_N
};

#define MT_AG_WHY_OFF 0.25

struct mt_against {
	int layers;                /* the unit: N layers (0: one step) */
	int kind;                  /* the layer kind of the per-layer terms (MT_L_*) */
	double units;              /* units in the window (steps, or 1) */
	int ranks;                 /* traces pooled */
	double meas[MT_AG_N];      /* s per unit; NAN where the trace cannot say */
	double model[MT_AG_N];     /* s per unit; NAN where the model has no term */
	int worst;                 /* the row furthest off (|meas - model|), -1 if none */
	char config[160];          /* the configuration compared, as a label */
	/* for a kernel class (GEMM, attention, element-wise) more than
	 * MT_AG_WHY_OFF off: why, in words ("" where within it) */
	char why[MT_AG_N][320];
};

/* The name of a row ("gemm", "exposed_comm", ...: the JSON keys) and its
 * words for the text. */
const char *mt_against_key(int row);
const char *mt_against_label(int row);

/* Compare the traces' pooled statistics (r[0..n-1]) with the model's terms
 * for cfg: e is cfg's evaluation (mt_evaluate) under m, c and j; layers as
 * above.  Fills *out.  MT_EINVAL when the unit cannot be compared (a step
 * unit and a trace without ProfilerStep ranges; layers above the model's). */
int mt_against_compare(const struct mt_model *m, const struct mt_cluster *c,
		       const struct mt_job *j, const struct mt_eval *e,
		       const struct mt_rank_stats *r, int n, int layers,
		       struct mt_against *out, struct mt_error *err);

/* The comparison as text (a table, then the term furthest off), appended. */
void mt_against_text(struct sbuf *sb, const struct mt_against *a);

/* The comparison as the `against` member of megatune.analysis/1
 * (docs/FORMATS.md section 4): config, unit, layers, layer_kind, units,
 * ranks, classes.{gemm,...}.{measured_ms,model_ms} (null where a side has
 * no figure) and furthest_off. */
void mt_against_jw(struct jw *w, const struct mt_against *a);

#endif
