/* SPDX-License-Identifier: MIT */
/* check_change: one change `megatune check` proposes (check/changes.c), as
 * text and JSON: its step against the job's, the exact diff of flags and
 * variables, and what each setting it changes buys (tuner/gains.h).
 *
 * When the job's log measured its step, the change is stated against that
 * measurement: the model's ratio of the two predicted steps applied to the
 * measured step, with a band widened by how far the model was off on the
 * job itself (docs/CHECK.md section 2). */
#ifndef MT_CHECK_CHECK_CHANGE_H
#define MT_CHECK_CHECK_CHANGE_H

#include <cjson/cJSON.h>

#include "../tuner/gains.h"
#include "../job/megatron.h"
#include "../job/script.h"
#include "../lib/sbuf.h"
#include "../rules/engine.h"

/* The job as it is: its evaluation (ok: it runs and fits), its rules, and
 * its measured step (0: no log measured one) */
struct check_base {
	const struct mt_eval *as;
	int ok;
	const struct mt_explain *ex;
	double measured;
};

/* A change: its name ("micro-batch", "TP + FSDP", "everything"), its
 * evaluation, its rules (NULL for none) and what each setting it changes
 * buys against the job's (mt_gains, tuner/gains.h; worked out once by the
 * caller, ngains of them) */
struct check_change {
	const char *title;         /* "one knob", "two knobs", "best overall" */
	const char *name;
	const struct mt_eval *e;
	const struct mt_explain *ex;
	const struct mt_gain *gains;
	int ngains;
};

/* The gain of e over the job: its step over e's, less one; NaN when the job
 * cannot be timed. */
double check_gain(const struct check_base *b, const struct mt_eval *e);

/* The change ch as text into sb (when not NULL) and as an object appended to
 * arr (when not NULL). */
void check_show_change(struct sbuf *sb, cJSON *arr, const struct check_change *ch,
		       const struct check_base *b, const struct mt_jobsrc *src,
		       const struct mt_megatron_job *mj);

#endif
