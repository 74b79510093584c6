/* SPDX-License-Identifier: MIT */
/* state: what the files of check/ share and nothing else includes: one check
 * whole (struct mt_check, opaque in check.h), the result of a search, and
 * the functions each file lends the others:
 *
 *   check.c        loading, the job as it is, the run of a check
 *   changes.c      the changes searched (the knob table's CHANGE column) and their searches
 *   measure.c      a log's run, predicted beside measured; its record
 *   diagnose.c     the diagnoses: broken rules, overrides, the environment
 *   doc.c          megatune.check/1, and the HTML report from it
 *   text.c         the text, and the closing lines of several jobs
 *   check_change.c one change, text and JSON
 *   check_memory.c a log's memory reports beside the prediction
 */
#ifndef MT_CHECK_STATE_H
#define MT_CHECK_STATE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "../job/flags.h"
#include "../job/megatron.h"
#include "../job/script.h"
#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../rules/engine.h"
#include "../rules/ruleset.h"
#include "../tuner/advice.h"
#include "../tuner/gains.h"
#include "../tuner/search.h"
#include "../validate/logparse.h"
#include "../validate/validation.h"
#include "check.h"
#include "check_change.h"

/* A gain counts when it is at least this share of the step (below it the
 * model's own resolution decides) */
#define MIN_GAIN 0.005

struct found {
	int feasible;
	struct mt_eval e;
	int a, b;          /* the changes (-1: none); a = -2: everything free */
	struct mt_explain ex;
	int have_ex;
	struct mt_gain g[MT_GAINS_MAX]; /* what each setting buys (the shown changes) */
	int ng;
};

struct ctx {
	const struct mt_model *m;
	const struct mt_cluster *c;
	const struct mt_ruleset *rs;
	long long searches;
};

/* Everything one check holds */
struct mt_check {
	struct mt_check_opts a;
	struct mt_jobsrc *src;
	struct mt_megatron_job *mj;
	struct mt_cluster *c;
	struct mt_ruleset *rs;
	struct mt_rules_run *run;
	struct mt_explain as_ex;
	struct mt_advice_rules ar;
	int chg[MT_KNOB_N], nchg;   /* the changes tried: the knobs the CHANGE column of
				     * job/knobs.def tries, in its order */
	struct found *one, best1, best2, overall; /* one: a result per change */
	struct mt_eval as;
	int as_ok;
	char cant[MT_ERROR_MSG_MAX]; /* why the job as written cannot be timed, or "" */
	struct mt_kv want_env[MT_FLAGS_MAX];
	int nwant;
	struct ctx x;
	char *buf;
	struct mt_logparse *lp;  /* a log's iteration lines, NULL for a script */
	int warmup;              /* iterations of the log left out */
	struct mt_validation v;  /* the log's run, predicted beside measured */
	int has_run;
	struct check_base base;  /* the job as it is, and its measured step, for the changes */
};

/* changes.c: t->one, a result for each change (MT_ENOMEM) */
int check_changes_new(struct mt_check *t);
/* The searches from the job: each change alone, each pair, everything; MT_EINVAL
 * (err set) when one fails for another reason than a pin it cannot meet */
int check_changes_search(struct mt_check *t, struct mt_error *err);
/* One change, text and JSON (check_change.h): its name from the knob table */
void check_changes_show(struct sbuf *sb, cJSON *arr, const char *title, const struct found *f,
			const struct mt_check *t);
/* The results of the searches freed */
void check_changes_free(struct mt_check *t);

/* measure.c: t->base, and for a log t->v: its run, predicted beside measured */
int check_measure_log(struct mt_check *t, struct mt_error *err);
/* The advice document of the job as it is, parsed; NULL when memory runs out */
cJSON *check_as_is_doc(struct mt_check *t);

/* diagnose.c: the broken rules, overrides and diagnoses of ex, the variables
 * of the environment the rules want otherwise; each returns its count */
int check_diagnoses(struct sbuf *sb, cJSON *arr, const struct mt_explain *ex);
int check_env_gaps(struct sbuf *sb, cJSON *arr, const struct mt_jobsrc *s,
		   const struct mt_kv *want, int nwant);
/* TP (with CP inside it) larger than an NVLink domain */
int check_span_domains(const struct mt_config *cfg, const struct mt_cluster *c);

/* doc.c: the kind of job in words (json 0) or in megatune.check/1 (json 1) */
const char *check_kind_name(int k, int json);
/* A job whose text lists every field, set or at its default */
int check_lists_every_field(int k);
/* Argument i of the job in its own words: the key it wrote or the flag */
void check_arg_name(const struct mt_jobsrc *s, int i, char *buf, size_t cap);

#endif
