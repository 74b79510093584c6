/* SPDX-License-Identifier: MIT */
/* fired: the one writer of the rules that fired (struct mt_explain,
 * rules/engine.h), as text and as JSON.
 *
 * Two JSON forms, one record each:
 *   MT_FIRED_BRIEF  {id, kind, title, message, cite[]}: the findings of an
 *                   analysis (megatune.analysis/1) and `rules check --json`
 *   MT_FIRED_FULL   {id, kind, status, title, effect, message, evidence{},
 *                   cite[], source}: a candidate's rules (megatune.advice/1)
 * docs/FORMATS.md describes both.  The writers append to the caller's writer.
 */
#ifndef MT_FIRED_H
#define MT_FIRED_H

#include "../lib/jsonw.h"
#include "../lib/sbuf.h"
#include "engine.h"

enum mt_fired_form { MT_FIRED_BRIEF, MT_FIRED_FULL };

/* "[id] VIOLATED: title\n  message\n  source: first citation\n" per rule. */
void mt_fired_text(struct sbuf *sb, const struct mt_explain *ex);

/* The array `key` of the fired rules (ex may be NULL: an empty array). */
void mt_fired_json(struct jw *w, const char *key, const struct mt_explain *ex, int form);

#endif
