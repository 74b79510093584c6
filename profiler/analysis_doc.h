/* SPDX-License-Identifier: MIT */
/* analysis_doc: the owner of `megatune.analysis/1` (docs/FORMATS.md section
 * 4): the per-rank breakdowns of mt_analyze_rank(), the job's figures of
 * mt_analyze_job() and the rules that fired on them, written as the
 * document, as the findings' `megatune.facts/1` document that `megatune rules
 * check` reads (rules/engine.h mt_facts_read), and as the text `megatune
 * analyze` prints.
 *
 * Each writer appends to the caller's buffer and allocates nothing it keeps;
 * `ex` may be NULL (no rules were run).
 */
#ifndef MT_ANALYSIS_DOC_H
#define MT_ANALYSIS_DOC_H

#include "../lib/sbuf.h"
#include "../rules/engine.h"
#include "against.h"
#include "analyze.h"

/* The text summary: the per-rank table, the job's lines, the findings. */
void mt_analysis_text(struct sbuf *sb, const struct mt_rank_stats *r, int n,
		      const struct mt_job_stats *j, const struct mt_explain *ex,
		      const struct mt_analyze_opts *ao);

/* megatune.analysis/1 with its facts and findings, the comparison with the
 * model when ag is not NULL, and a final newline. */
void mt_analysis_json(struct sbuf *sb, const struct mt_rank_stats *r, int n,
		      const struct mt_job_stats *j, const struct mt_explain *ex,
		      const struct mt_val *facts, const unsigned char *given,
		      const struct mt_analyze_opts *ao, const struct mt_against *ag);

/* megatune.facts/1: the source traces, the method and the facts. */
void mt_analysis_facts(struct sbuf *sb, const struct mt_rank_stats *r, int n,
		       const struct mt_val *facts, const unsigned char *given,
		       const struct mt_analyze_opts *ao);

#endif
