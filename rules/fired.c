/* SPDX-License-Identifier: MIT */
/* fired: the rules that fired, as text and JSON. */
#include "fired.h"

#include <stdio.h>

#include "facts.h"
#include "ruleset.h"

void mt_fired_text(struct sbuf *sb, const struct mt_explain *ex)
{
	int i;

	for (i = 0; i < ex->n; i++) {
		const struct mt_fired *f = &ex->v[i];
		sbuf_addf(sb, "[%s] %s%s\n  %s\n  source: %s\n", f->rule->id,
			  f->status == MT_FIRE_VIOLATED ? "VIOLATED: " : "", f->rule->title,
			  f->message, f->rule->cites[0]);
	}
}

/* The facts a rule read, with their values. */
static void json_evidence(struct jw *w, const struct mt_fired *f)
{
	int i;

	jw_obj(w, "evidence");
	for (i = 0; i < f->nev; i++) {
		const struct mt_evidence *ev = &f->ev[i];
		const struct mt_fact_info *fi = &mt_facts[ev->fact];

		if (ev->s)
			jw_str(w, fi->name, ev->s);
		else if (ev->n != ev->n)
			jw_null(w, fi->name);
		else if (fi->type == MT_FT_BOOL)
			jw_bool(w, fi->name, ev->n != 0);
		else if (fi->type == MT_FT_ENUM && ev->n >= 0)
			jw_str(w, fi->name, fi->enums[(int)ev->n]);
		else
			jw_num(w, fi->name, ev->n, 8);
	}
	jw_end(w);
}

void mt_fired_json(struct jw *w, const char *key, const struct mt_explain *ex, int form)
{
	char src[320];
	int i, k;

	jw_arr(w, key);
	for (i = 0; ex && i < ex->n; i++) {
		const struct mt_fired *f = &ex->v[i];
		const struct mt_rule *r = f->rule;

		jw_obj(w, NULL);
		jw_str(w, "id", r->id);
		jw_str(w, "kind", mt_rule_kind_name(r->kind));
		if (form == MT_FIRED_FULL)
			jw_str(w, "status", mt_fire_status_name(f->status));
		jw_str(w, "title", r->title);
		if (form == MT_FIRED_FULL) {
			if (f->effect)
				jw_str(w, "effect", f->effect);
			else
				jw_null(w, "effect");
		}
		jw_str(w, "message", f->message);
		if (form == MT_FIRED_FULL)
			json_evidence(w, f);
		jw_arr(w, "cite");
		for (k = 0; k < r->ncites; k++)
			jw_str(w, NULL, r->cites[k]);
		jw_end(w);
		if (form == MT_FIRED_FULL) {
			snprintf(src, sizeof(src), "%s:%d", r->file, r->line);
			jw_str(w, "source", src);
		}
		jw_end(w);
	}
	jw_end(w);
}
