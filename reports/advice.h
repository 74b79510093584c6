/* SPDX-License-Identifier: MIT */
/* advice: the advisor's outputs, `megatune.advice/1` JSON (docs/FORMATS.md
 * section 3) and the text a person reads in a terminal.
 *
 * Writers append to an sbuf the caller owns.  Every string from an input
 * (model and cluster names) is escaped by the JSON writer.
 */
#ifndef MT_ADVICE_H
#define MT_ADVICE_H

#include "../lib/sbuf.h"
#include "../tuner/flags.h"
#include "../tuner/cluster.h"
#include "../tuner/config.h"
#include "../tuner/model.h"
#include "../advisor/search.h"

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

/* Terminal output of advise: job line, search summary, ranking, and the
 * details of the best candidate. */
void mt_advice_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r,
		    const struct mt_advice_rules *rules);

/* When nothing fits: why, with the closest candidate's memory. */
void mt_infeasible_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_job *j, const struct mt_search_result *r,
			const struct mt_advice_rules *rules);

/* Terminal output of estimate: the full memory and time breakdown. */
void mt_estimate_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e,
		      const struct mt_advice_rules *rules);

/* The flags of a candidate: the configuration's own, with the effects of the
 * set rules that fired for it (ex may be NULL).  Each returns the count. */
int mt_candidate_args(const struct mt_model *m, const struct mt_job *j, const struct mt_config *c,
		      const struct mt_explain *ex, struct mt_kv *out);
int mt_candidate_bridge(const struct mt_model *m, const struct mt_job *j,
			const struct mt_config *c, const struct mt_explain *ex, struct mt_kv *out);
int mt_candidate_env(const struct mt_explain *ex, struct mt_kv *out);

/* Where a fired rule goes when the advice is shown, in the order of the
 * groups: constraints the candidate breaks, the explanations (why-* rules),
 * the set rules that chose a knob, the other advice, and the set rules that
 * only add flags or variables.  Shared by the terminal text and the report. */
enum mt_rule_group {
	MT_RG_VIOLATED, MT_RG_WHY, MT_RG_CHOSEN, MT_RG_ADVICE, MT_RG_FLAGS, MT_RG_N
};
enum mt_rule_group mt_rule_group(const char *id, int violated, int is_set, int sets_knob);

/* Rank of a why-* rule in the order a reader asks: TP, PP, CP, EP, bucket,
 * then any other (a site's own), ranks 0 .. MT_WHY_RANKS - 1. */
#define MT_WHY_RANKS 6
int mt_why_rank(const char *id);

/* One configuration as a compact label: "TP8 PP4 VPP5 CP1 DP2 MBS1". */
const char *mt_config_label(char *buf, size_t cap, const struct mt_model *m,
			    const struct mt_config *cfg);

#endif
