/* SPDX-License-Identifier: MIT */
/* advice: the owner of the `megatune.advice/1` document (docs/FORMATS.md
 * section 3): the writer for a search or an estimate, and a typed reader for
 * what reads advice files back (the report, validation).
 *
 * Writers append to an sbuf the caller owns; every string from an input
 * (model and cluster names) is escaped.  The reader's strings and candidates
 * are owned by the struct it fills (mt_advice_doc_free).
 */
#ifndef MT_TUNER_ADVICE_H
#define MT_TUNER_ADVICE_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "../lib/sbuf.h"
#include "../job/flags.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "search.h"

struct mt_ruleset;
struct mt_rules_run;
struct mt_explain;

/* What the rules contributed: NULL members when rules are off. */
struct mt_advice_rules {
	const struct mt_ruleset *set;
	const struct mt_rules_run *run;   /* counts of candidates pruned per rule */
	const struct mt_explain *ex;      /* one per candidate, best first */
	int nex;
};

/* The whole advice document for a search result (candidates best first). */
void mt_advice_json(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r,
		    const struct mt_advice_rules *rules);

/* An advice document with one candidate (estimate). */
void mt_estimate_json(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e,
		      const struct mt_advice_rules *rules);

/* The explanation of candidate i (best first), or NULL. */
const struct mt_explain *mt_advice_explain(const struct mt_advice_rules *ar, int i);

/* The flags of a candidate: the configuration's own, with the effects of the
 * set rules that fired for it (ex may be NULL), spelled for the job's
 * megatron_version / bridge_version (job/flagtable.h: what that release
 * does not accept becomes a note).  Each returns the count. */
int mt_candidate_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		      const struct mt_explain *ex, struct mt_kv *out);
int mt_candidate_bridge(const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *c, const struct mt_explain *ex, struct mt_kv *out);
/* The candidate as verl's Megatron-backend keys (job/verl.h): the Bridge
 * overrides above, with verl's names and Hydra prefixes. */
int mt_candidate_verl(const struct mt_model *m, const struct mt_job *j,
		      const struct mt_config *c, const struct mt_explain *ex, struct mt_kv *out);
int mt_candidate_env(const struct mt_explain *ex, struct mt_kv *out);

/* One configuration as a compact label: "TP8 PP4 VPP5 CP1 DP2 MBS1". */
const char *mt_config_label(char *buf, size_t cap, const struct mt_model *m,
			    const struct mt_config *cfg);

/* ---------------------------------------------------------------- reading */

/* One candidate as read; a number the document lacks is NAN. */
struct mt_advice_cand {
	double rank;
	double tp, pp, vpp, cp, ep, etp, dp, mbs;      /* config */
	const char *cp_comm_type;                      /* NULL when absent */
	double step_s, peak_bytes, tokens_per_s_per_gpu, mfu;
	const cJSON *json;                             /* the whole candidate */
};

/* An advice document as read: the job and the candidates, best first.
 * Strings point into the document, which must outlive the struct. */
struct mt_advice_doc {
	const char *model, *cluster, *precision;       /* NULL when absent */
	const char *model_source, *attention, *moe_dispatcher; /* NULL when absent */
	double gpus, seq, gbs;
	int ncand;
	struct mt_advice_cand *cand;
};

/* Check doc is a megatune.advice/1 object with a `candidates` array and read
 * it.  MT_EINVAL names `file` and the field; the schema message says which
 * option (`opt`, "--advice") expected the document. */
int mt_advice_read(const cJSON *doc, const char *file, const char *opt,
		   struct mt_advice_doc *out, struct mt_error *err);
void mt_advice_doc_free(struct mt_advice_doc *d);

/* A candidate's `config` object read back into the configuration it
 * describes (tuner/advice_config.c): every key the writer puts; a key
 * that is absent keeps the job's default (mt_config_settings).  tp, pp, cp,
 * mbs must be there.  MT_EINVAL names `file`, `where` ("candidates[2].config")
 * and the field. */
int mt_advice_config(const cJSON *config, const struct mt_job *job, const char *file,
		     const char *where, struct mt_config *out, struct mt_error *err);

/* The pipeline layout of a candidate's `config` object: for pipeline_split
 * "layout", its `pipeline_layout` string read with mt_layout_parse
 * (perfmodel/layout.h) into *out, which the caller owns, and checked to have PP x
 * VPP chunks; otherwise out->n is 0 (and a pipeline_layout is an error).
 * mt_advice_config makes the same checks.  MT_EINVAL names `file`, `where`
 * and the field. */
int mt_advice_layout(const cJSON *config, const char *file, const char *where,
		     struct mt_layout *out, struct mt_error *err);

/* The job under which mt_evaluate (tuner/search.h) evaluates a
 * configuration read back (mt_advice_config) as it was advised and run: `job`
 * with what mt_evaluate would otherwise choose itself pinned to cfg's values
 * (the token dispatcher of an MoE configuration with EP or ETP > 1 when the
 * job leaves it to the search, the 1F1B EP overlap, CUDA graphs) and, for a
 * `layout` split, out->pins.layout = layout (from mt_advice_layout; borrowed:
 * it must outlive *out and every copy of it).  The parallel sizes,
 * recomputation and offload those pins' checks read are pinned too. */
void mt_advice_eval_job(const struct mt_job *job, const struct mt_config *cfg,
			const struct mt_layout *layout, struct mt_job *out);

/* The settings of an advice document's `job` object that the evaluation of
 * its candidates depends on, read into *job over what it holds: precision,
 * fp8_recipe, attention, moe_dispatcher, optimizer_cpu_offload,
 * offload_modules, mem_headroom (a key that is absent leaves the field as it
 * is).  MT_EINVAL names `file` and the field. */
int mt_advice_job(const cJSON *doc, const char *file, struct mt_job *job, struct mt_error *err);

/* The model an advice document was made for, as mt_model_load takes it: the
 * file `advise` read (job.model_source) when it is a path that can still be
 * opened, else the model's name (job.model).  Writes "" to out when the
 * document has neither. */
void mt_advice_model(const struct mt_advice_doc *d, char *out, size_t cap);

/* Candidate k (1 = best) of the advice document in `file`, read back: its
 * job (gpus, seq, gbs and the settings of mt_advice_job), its configuration
 * (mt_advice_config), its layout when `layout` is not NULL (mt_advice_layout:
 * out->n 0 unless its split is a layout), the profile it names into
 * cluster (cap bytes, "" when absent; may be NULL) and, when m is not NULL,
 * its model (mt_advice_model, then mt_model_load).  MT_EUSAGE for k out of
 * range ("--candidate K"), MT_EINVAL naming `file` and the field. */
struct mt_layout;
int mt_advice_candidate(const char *file, int k, struct mt_model *m, struct mt_job *job,
			struct mt_config *cfg, struct mt_layout *layout, char *cluster, size_t cap,
			struct mt_error *err);

#endif
