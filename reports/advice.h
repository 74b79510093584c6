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
#include "../tuner/cluster.h"
#include "../tuner/config.h"
#include "../tuner/model.h"
#include "../tuner/search.h"

/* The whole advice document for a search result (candidates best first). */
void mt_advice_json(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r);

/* An advice document with one candidate (estimate). */
void mt_estimate_json(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e);

/* Terminal output of advise: job line, search summary, ranking, and the
 * details of the best candidate. */
void mt_advice_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		    const struct mt_job *j, const struct mt_search_result *r);

/* When nothing fits: why, with the closest candidate's memory. */
void mt_infeasible_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
			const struct mt_job *j, const struct mt_search_result *r);

/* Terminal output of estimate: the full memory and time breakdown. */
void mt_estimate_text(struct sbuf *sb, const struct mt_model *m, const struct mt_cluster *c,
		      const struct mt_job *j, const struct mt_eval *e);

/* One configuration as a compact label: "TP8 PP4 VPP5 CP1 DP2 MBS1". */
const char *mt_config_label(char *buf, size_t cap, const struct mt_model *m,
			    const struct mt_config *cfg);

#endif
