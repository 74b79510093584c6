/* SPDX-License-Identifier: MIT */
/* advice: the advisor's results as the text a person reads in a terminal.
 * The `megatune.advice/1` document itself is tuner/advice.h's.
 *
 * Writers append to an sbuf the caller owns.
 */
#ifndef MT_ADVICE_H
#define MT_ADVICE_H

#include "../tuner/advice.h"
#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/config.h"
#include "../perfmodel/model.h"
#include "../tuner/search.h"

/* Terminal output of advise: job line, search summary, ranking, and the
 * details of the best candidate. */
void mt_advice_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r,
		    const struct mt_advice_rules *rules);

/* When nothing fits: why, with the closest candidate's memory. */
/* The gains of a configuration's settings (tuner/gains.h), a line each
 * under the heading head, each with its published evidence or none. */
void mt_gains_text(struct sbuf *sb, const struct mt_gain *gains, int n, const char *ind,
		   const char *head);

void mt_infeasible_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_job *j, const struct mt_search_result *r,
			const struct mt_advice_rules *rules);

/* Terminal output of estimate: the full memory and time breakdown, the
 * memory table of pipeline stage `stage` (0 .. PP - 1; -1: the most loaded
 * one), the allocator's figures and, with PP > 1, a line per stage. */
void mt_estimate_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e, int stage,
		      const struct mt_advice_rules *rules);

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

#endif
