/* SPDX-License-Identifier: MIT */
/* check: `megatune check` (docs/CHECK.md).  The job a user already runs, read
 * from its own file, evaluated as it is, diagnosed by the rules, and searched
 * from: the best change of one knob, of two, and the best overall, each with
 * its gain and the exact diff of flags.  The readers are job/script.h and
 * job/megatron.h; this module owns megatune.check/1.
 *
 * A check is loaded (mt_check_load: the job, its model, the cluster, a log's
 * iteration lines), run (mt_check_run: the rules, the job as it is, the log's
 * run measured, the searches of check/changes.c), then rendered: the text,
 * the document, the HTML report, the log's validation record.  Nothing here
 * prints or exits: the caller prints the text and the warnings (the typos of
 * the job and model, the notes of the model and the cluster, through the
 * accessors below) and turns statuses into exit codes. */
#ifndef MT_CHECK_CHECK_H
#define MT_CHECK_CHECK_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"

struct mt_cluster;
struct mt_jobsrc;
struct mt_model;

/* What to check; the strings and the array outlive the check */
struct mt_check_opts {
	const char *job;               /* the job's file ('-': standard input) */
	const char *model;             /* a model instead of the job's own flags, or NULL */
	const char *cluster;           /* a bundled profile or a megatune.profile/1 file */
	int gpus;                      /* 0: the launcher's or the log's */
	int warmup;                    /* iterations of a log left out; -1: its first interval */
	int no_rules;                  /* the model alone: no diagnoses, no rule choices */
	const char *const *rule_paths; /* rule files or folders besides the bundled rules */
	int nrule_paths;
};

/* Everything one check holds (check/state.h) */
struct mt_check;

/* A check of nothing yet (mt_check_free), NULL when memory runs out */
struct mt_check *mt_check_new(void);
void mt_check_free(struct mt_check *t);

/* The job o->job, its model, the cluster and, for a log, its iteration lines,
 * into t.  MT_OK, or the status of the reader that refused (its message in
 * err: FILE:LINE: reason).  t keeps o->job for its text and the summary. */
int mt_check_load(struct mt_check *t, const struct mt_check_opts *o, struct mt_error *err);

/* What mt_check_load read: the job as written (its typos), its model (its
 * typos and notes), the cluster profile (mt_cluster_note) */
const struct mt_jobsrc *mt_check_src(const struct mt_check *t);
const struct mt_model *mt_check_model(const struct mt_check *t);
const struct mt_cluster *mt_check_cluster(const struct mt_check *t);

/* The rules loaded, the job evaluated as it is, a log's run measured beside
 * the prediction, the searches from the job.  MT_OK, or MT_EINVAL (a rule
 * file), MT_ENOMEM, with err set.  A job megatune cannot time as written is
 * no error: the text and the document say why, and the searches still run. */
int mt_check_run(struct mt_check *t, struct mt_error *err);

/* Whether the job is a log with a run (a validation record to write) */
int mt_check_has_run(const struct mt_check *t);

/* Whether nothing fits: the job does not, and no change found makes it fit */
int mt_check_nothing_fits(const struct mt_check *t);

/* The text of a check appended to sb: the job, as it is and its diagnoses,
 * the log's run, the changes.  MT_ENOMEM (err set) when sb ran out. */
int mt_check_text(struct sbuf *sb, const struct mt_check *t, struct mt_error *err);

/* megatune.check/1 (docs/CHECK.md section 3), NULL when memory runs out */
cJSON *mt_check_doc(struct mt_check *t);

/* doc (a document or an array of them) printed, with a newline, atomically
 * to path ('-': standard output) */
int mt_check_write_doc(const char *path, const cJSON *doc, struct mt_error *err);

/* The check's megatune.check/1 to path (mt_check_write_doc) */
int mt_check_write_json(struct mt_check *t, const char *path, struct mt_error *err);

/* The HTML report to path: the Check section, then the job as it is */
int mt_check_write_report(struct mt_check *t, const char *path, struct mt_error *err);

/* The log's run as megatune.validation/1 to path, the advice of the job as it
 * is (path's stem + .advice.json) and, for a model read from the flags, the
 * model (.model.json) beside it: all written or none.  MT_EINVAL when the job
 * is no log with a run. */
int mt_check_write_validation(struct mt_check *t, const char *path, struct mt_error *err);

/* Several jobs: the closing lines, one a job (its outcome, its measured step
 * against the prediction where it is a log with a run), then the median and
 * largest step error of the measured runs */
enum mt_check_outcome {
	MT_CHECK_CHECKED,  /* checked; something fits */
	MT_CHECK_NO_FIT,   /* checked; nothing fits */
	MT_CHECK_NOT_READ, /* not checked (the error the caller printed) */
};

struct mt_check_tally {
	struct sbuf sum; /* the lines */
	double *err;     /* each measured run's relative step error, unsigned */
	int nerr;
};

/* A tally of njobs jobs: its first line.  MT_ENOMEM (nothing to free). */
int mt_check_tally_init(struct mt_check_tally *y, int njobs);
/* The line of check t */
void mt_check_tally_add(struct mt_check_tally *y, const struct mt_check *t,
			enum mt_check_outcome outcome);
/* The line of the step errors, when a run was measured */
void mt_check_tally_end(struct mt_check_tally *y);
void mt_check_tally_free(struct mt_check_tally *y);

#endif
