/* SPDX-License-Identifier: MIT */
/* fire: the rules that fire on a set of facts (a ranked candidate's, or a
 * facts file's), with their messages, evidence and effects. */
#include "engine.h"
#include "run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"

/* ---------------------------------------------------------------- explanations */

static const char *const status_names[] = { "applied", "note", "violated", "overridden" };

const char *mt_fire_status_name(int s)
{
	return s >= 0 && s <= MT_FIRE_OVERRIDDEN ? status_names[s] : "?";
}

void mt_explain_free(struct mt_explain *x)
{
	int i;

	for (i = 0; i < x->n; i++) {
		free(x->v[i].message);
		free(x->v[i].effect);
		free(x->v[i].ev);
	}
	free(x->v);
	memset(x, 0, sizeof(*x));
}

static int kv_put(struct mt_kv *kv, int *n, const char *key, const char *val)
{
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(kv[i].key, key))
			return 0; /* the first rule to set a name wins */
	if (*n >= MT_RULE_KV_MAX)
		return 1; /* dropped, counted by the caller */
	snprintf(kv[*n].key, sizeof(kv[*n].key), "%s", key);
	snprintf(kv[*n].val, sizeof(kv[*n].val), "%s", val);
	(*n)++;
	return 0;
}

static struct mt_fired *add_fired(struct mt_explain *x, const struct mt_rule *rl, int status,
				  const struct mt_val *facts, const struct mt_env *env)
{
	struct mt_fired *f;
	struct sbuf sb = SBUF_INIT;
	int i;

	if (x->n == x->cap) {
		int cap = x->cap ? 2 * x->cap : 16;
		struct mt_fired *v = realloc(x->v, (size_t)cap * sizeof(*v));
		if (!v) {
			x->failed = 1;
			return NULL;
		}
		x->v = v;
		x->cap = cap;
	}
	f = &x->v[x->n];
	memset(f, 0, sizeof(*f));
	f->rule = rl;
	f->status = status;
	for (i = 0; i < rl->nsays; i++) {
		if (rl->says[i].cond && !mt_expr_true(rl->says[i].cond, env))
			continue;
		if (sb.len)
			sbuf_addc(&sb, ' ');
		mt_tmpl_render(rl->says[i].t, env, &sb);
	}
	if (sb.failed) {
		sbuf_release(&sb);
		x->failed = 1;
		return NULL;
	}
	f->message = sbuf_detach(&sb, NULL);
	f->ev = malloc((size_t)(rl->nevidence ? rl->nevidence : 1) * sizeof(*f->ev));
	if (!f->ev || !f->message) {
		free(f->ev);
		free(f->message);
		x->failed = 1;
		return NULL;
	}
	for (i = 0; i < rl->nevidence; i++) {
		f->ev[i].fact = rl->evidence[i];
		f->ev[i].n = facts[rl->evidence[i]].n;
		f->ev[i].s = facts[rl->evidence[i]].s;
	}
	f->nev = rl->nevidence;
	x->n++;
	return f;
}

static void set_effect(struct mt_fired *f, struct sbuf *eff, struct mt_explain *x)
{
	if (!f)
		return;
	if (eff->failed) {
		x->failed = 1;
		return;
	}
	if (eff->len)
		f->effect = sbuf_detach(eff, NULL);
}

/* The value a pin gives a settable knob, or 0 when it is not pinned: the
 * knob whose fact it is (job/knobs.def). */
static int pin_of(const struct mt_job *j, int fact, double *v)
{
	int k = mt_knob_by_fact(mt_facts[fact].name), pin;

	if (k < 0)
		return 0;
	pin = mt_knob_pin(j, k);
	if (pin == MT_UNSET || (mt_knobs[k].type == MT_KT_DISPATCHER && pin == MT_DISPATCH_AUTO))
		return 0;
	*v = mt_knobs[k].type == MT_KT_FSDP ? pin != MT_FSDP_OFF : pin;
	return 1;
}

static void fmt_fact(struct sbuf *sb, int fact, double v)
{
	struct mt_val x = { v, NULL };
	mt_val_format(sb, x, fact == MT_F_CFG_BUCKET ? "params" : NULL, fact);
}

/* Evaluate every rule with the facts as they are; `search` is 1 for a
 * candidate of the search (set rules are checked against its knobs). */
static int explain_all(const struct mt_ruleset *rs, struct mt_val *facts,
		       const struct mt_env *env, const struct mt_job *j, int search,
		       const unsigned char *given, struct mt_explain *x, int *skipped)
{
	unsigned char decided[MT_F_N];
	int i, s;

	memset(decided, 0, sizeof(decided));
	for (i = 0; i < rs->n && !x->failed; i++) {
		const struct mt_rule *rl = &rs->rules[i];
		struct sbuf eff = SBUF_INIT;
		struct mt_fired *f;
		int status = MT_FIRE_NOTE;

		if (rl->disabled)
			continue;
		if (given) {
			/* every fact it reads: condition, values, messages */
			int k, all = 1;
			for (k = 0; k < rl->nevidence && all; k++)
				all = given[rl->evidence[k]];
			if (!all) {
				(*skipped)++;
				continue;
			}
		}
		if (!mt_expr_true(rl->when, env))
			continue;
		switch (rl->kind) {
		case MT_RK_CONSTRAINT:
			status = MT_FIRE_VIOLATED;
			break;
		case MT_RK_SET:
			status = MT_FIRE_APPLIED;
			for (s = 0; s < rl->nsets; s++) {
				int fact = rl->sets[s].fact;
				double v, have = facts[fact].n, pin;
				if (decided[fact] || mt_rules_knob_value(fact, mt_expr_eval(rl->sets[s].e, env), &v))
					continue; /* an earlier rule chose this knob, or no value */
				decided[fact] = 1;
				if (eff.len)
					sbuf_adds(&eff, ", ");
				sbuf_addf(&eff, "%s = ", mt_facts[fact].name);
				fmt_fact(&eff, fact, v);
				if (v != have && (search || given[fact])) {
					/* a pin, or (facts of a run) what the run used */
					status = MT_FIRE_OVERRIDDEN;
					sbuf_adds(&eff, !search ? " (the run has " : pin_of(j, fact, &pin)
						  ? " (pinned to " : " (not applied: ");
					fmt_fact(&eff, fact, have);
					sbuf_adds(&eff, ")");
				}
			}
			if (rl->nsets && !eff.len) {
				/* earlier rules chose every knob it sets */
				sbuf_release(&eff);
				continue;
			}
			for (s = 0; s < rl->nouts; s++) {
				const struct mt_rule_out *o = &rl->outs[s];
				struct sbuf val = SBUF_INIT;
				int rc;
				if (o->val)
					mt_tmpl_render(o->val, env, &val);
				if (eff.len)
					sbuf_adds(&eff, ", ");
				if (o->kind == MT_OUT_ARG) {
					sbuf_addf(&eff, "--%s%s%s", o->key, val.len ? " " : "", val.buf);
					rc = kv_put(x->args, &x->nargs, o->key, val.buf);
				} else if (o->kind == MT_OUT_BRIDGE) {
					sbuf_addf(&eff, "%s=%s", o->key, val.buf);
					rc = kv_put(x->bridge, &x->nbridge, o->key, val.buf);
				} else {
					sbuf_addf(&eff, "%s=%s", o->key, val.buf);
					rc = kv_put(x->env, &x->nenv, o->key, val.buf);
				}
				if (rc > 0)
					x->dropped++;
				if (val.failed)
					x->failed = 1;
				sbuf_release(&val);
			}
			break;
		default:
			break;
		}
		f = add_fired(x, rl, status, facts, env);
		set_effect(f, &eff, x);
		sbuf_release(&eff);
	}
	return x->failed ? MT_ENOMEM : MT_OK;
}

int mt_rules_explain_facts(struct mt_rules_run *r, struct mt_explain *out)
{
	memset(out, 0, sizeof(*out));
	return explain_all(r->rs, r->facts, &r->env, r->j, 1, NULL, out, NULL);
}

int mt_rules_on_facts(const struct mt_ruleset *rs, const struct mt_val *facts,
		      const unsigned char *given, const struct mt_cluster *c,
		      struct mt_explain *out, int *skipped)
{
	struct mt_env env;
	struct mt_job j;
	struct mt_val *f = malloc(MT_F_N * sizeof(*f));
	unsigned char *g = malloc(MT_F_N);
	int i, rc;

	memset(out, 0, sizeof(*out));
	*skipped = 0;
	if (!f || !g) {
		free(f);
		free(g);
		return MT_ENOMEM;
	}
	/* a copy: set rules write what they set into it */
	memcpy(f, facts, MT_F_N * sizeof(*f));
	memcpy(g, given, MT_F_N);
	if (c) { /* the cluster's facts, where the file does not give them */
		struct mt_val cf[MT_F_N];
		for (i = 0; i < MT_F_N; i++) {
			cf[i].n = NAN;
			cf[i].s = NULL;
		}
		mt_rules_cluster_facts(cf, c);
		for (i = 0; i < MT_F_N; i++)
			if (!g[i] && !strncmp(mt_facts[i].name, "cluster.", 8)) {
				f[i] = cf[i];
				g[i] = 1;
			}
	}
	memset(&env, 0, sizeof(env));
	env.facts = f;
	env.cluster = c;
	mt_job_init(&j);
	rc = explain_all(rs, f, &env, &j, 0, g, out, skipped);
	/* evidence keeps values, not pointers into f (strings point into the
	 * file's or the cluster's, which outlive this) */
	free(f);
	free(g);
	return rc;
}
