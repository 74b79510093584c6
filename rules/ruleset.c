/* SPDX-License-Identifier: MIT */
/* ruleset: the rule-file parser and the checks of each rule it reads (rule
 * sets, their files and the checks across them are ruleset_load.c; the
 * generated reference is ruleset_text.c). */
#include "ruleset.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/sbuf.h"
#include "../perfmodel/config.h"
#include "ruleset_int.h"
#include "run.h"

static const char *const kind_names[MT_RK_N] = { "constraint", "set", "advise", "diagnose" };

const char *mt_rule_kind_name(int k) { return k >= 0 && k < MT_RK_N ? kind_names[k] : "?"; }

static const int settable[] = {
	MT_F_CFG_CP_A2A, MT_F_CFG_CP_COMM, MT_F_CFG_SP, MT_F_CFG_ETP, MT_F_CFG_TP_OVERLAP,
	MT_F_CFG_FUSED_CE, MT_F_CFG_OVERLAP_GRAD, MT_F_CFG_OVERLAP_PARAM, MT_F_CFG_GRAD_FP32,
	MT_F_CFG_BUCKET, MT_F_CFG_DIST_OPT, MT_F_CFG_CUDA_GRAPH,
};

int mt_rule_settable_at(int i)
{
	return i >= 0 && i < (int)(sizeof(settable) / sizeof(settable[0])) ? settable[i] : -1;
}

int mt_rule_settable(int fact)
{
	unsigned i;

	for (i = 0; i < sizeof(settable) / sizeof(settable[0]); i++)
		if (settable[i] == fact)
			return 1;
	return 0;
}

/* ---------------------------------------------------------------- memory */

static char *dupn(const char *s, size_t n)
{
	char *p = malloc(n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

int mt_ruleset_grow(void **p, int *cap, int need, size_t elem)
{
	void *q;
	int c;

	if (need <= *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	while (c < need)
		c *= 2;
	q = realloc(*p, (size_t)c * elem);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

/* Room for one more element at the end of a rule's short arrays (sets, outs,
 * says; a handful each): 0, or -1 out of memory with *p unchanged. */
static int grow_one(void **p, int n, size_t elem)
{
	void *q = realloc(*p, (size_t)(n + 1) * elem);

	if (!q)
		return -1;
	*p = q;
	return 0;
}

void mt_rule_clear(struct mt_rule *r)
{
	int i;

	free(r->title);
	mt_expr_free(r->when);
	free(r->when_src);
	for (i = 0; i < r->nsets; i++) {
		mt_expr_free(r->sets[i].e);
		free(r->sets[i].src);
	}
	free(r->sets);
	for (i = 0; i < r->nouts; i++) {
		mt_tmpl_free(r->outs[i].val);
		free(r->outs[i].src);
	}
	free(r->outs);
	for (i = 0; i < r->nsays; i++) {
		mt_expr_free(r->says[i].cond);
		mt_tmpl_free(r->says[i].t);
		free(r->says[i].src);
	}
	free(r->says);
	for (i = 0; i < r->ncites; i++)
		free(r->cites[i]);
	free(r->cites);
	memset(r, 0, sizeof(*r));
}

int mt_ruleset_problem(struct mt_ruleset *rs, char *file, int line, const char *fmt, ...)
{
	va_list ap;
	struct mt_problem *p;

	if (mt_ruleset_grow((void **)&rs->problems, &rs->problems_cap, rs->nproblems + 1, sizeof(*p)))
		return MT_ENOMEM;
	p = &rs->problems[rs->nproblems++];
	p->file = file;
	p->line = line;
	va_start(ap, fmt);
	vsnprintf(p->msg, sizeof(p->msg), fmt, ap);
	va_end(ap);
	return 0;
}

/* ---------------------------------------------------------------- parsing */

struct pstate {
	struct mt_ruleset *rs;
	char *file;
	int user;
	struct mt_rule cur;
	int open;       /* a rule is being read */
	int bad;        /* it has a problem */
	int start_line;
	int problems;
	int nomem;
	int seen_title, seen_kind, seen_when;
};

static void perr(struct pstate *ps, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void perr(struct pstate *ps, int line, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (mt_ruleset_problem(ps->rs, ps->file, line, "%s", msg))
		ps->nomem = 1;
	ps->problems++;
	if (ps->open)
		ps->bad = 1;
}

static void add_evidence(struct mt_rule *r, int f)
{
	int i;

	for (i = 0; i < r->nevidence; i++)
		if (r->evidence[i] == f)
			return;
	if (r->nevidence < MT_RULE_EVIDENCE_MAX)
		r->evidence[r->nevidence++] = f;
}

static void evidence_cb(int f, void *ctx)
{
	add_evidence(ctx, f);
}

static void evidence_expr(struct mt_rule *r, const struct mt_expr *e)
{
	const int *f;
	int n, i;

	if (!e)
		return;
	f = mt_expr_facts(e, &n);
	for (i = 0; i < n; i++)
		add_evidence(r, f[i]);
}

static int uses_finding(const struct mt_expr *e)
{
	const int *f;
	int n, i;

	if (!e)
		return 0;
	f = mt_expr_facts(e, &n);
	for (i = 0; i < n; i++)
		if (mt_facts[f[i]].stage == MT_ST_FINDING)
			return 1;
	return 0;
}

static int builtin_id(const char *id)
{
	int i;

	for (i = 0; i < MT_PRUNE_N; i++)
		if (!strcmp(mt_prune_id(i), id))
			return 1;
	return 0;
}

/* Validate the rule being read and keep it, or drop it. */
static void close_rule(struct pstate *ps)
{
	struct mt_rule *r = &ps->cur;
	struct mt_ruleset *rs = ps->rs;
	int line = ps->start_line, i, stage;

	if (!ps->open)
		return;
	if (!ps->bad) {
		if (!r->title)
			perr(ps, line, "rule '%s': missing TITLE", r->id);
		if (!ps->seen_kind)
			perr(ps, line, "rule '%s': missing KIND (constraint, set, advise or diagnose)",
			     r->id);
		if (!r->when)
			perr(ps, line, "rule '%s': missing WHEN", r->id);
		if (!r->ncites)
			perr(ps, line, "rule '%s': missing CITE (every rule names its source)", r->id);
		if (!r->nsays)
			perr(ps, line, "rule '%s': missing SAY (every rule explains itself)", r->id);
	}
	if (!ps->bad) {
		int effects = r->nsets + r->nouts;

		if (r->kind == MT_RK_CONSTRAINT && effects)
			perr(ps, line, "rule '%s': a constraint prunes; SET, ARG, BRIDGE and ENV belong "
			     "to set rules", r->id);
		if (r->kind == MT_RK_SET && !effects)
			perr(ps, line, "rule '%s': a set rule needs a SET, ARG, BRIDGE or ENV", r->id);
		if ((r->kind == MT_RK_ADVISE || r->kind == MT_RK_DIAGNOSE) && effects)
			perr(ps, line, "rule '%s': an %s rule changes nothing; use KIND set for SET, "
			     "ARG, BRIDGE or ENV", r->id, mt_rule_kind_name(r->kind));
	}
	if (!ps->bad) {
		/* when the rule is evaluated */
		stage = mt_expr_stage(r->when);
		if (r->kind == MT_RK_SET && r->nsets) {
			int ks = mt_facts[r->sets[0].fact].stage;
			for (i = 0; i < r->nsets; i++) {
				int fs = mt_facts[r->sets[i].fact].stage;
				if (fs != ks)
					perr(ps, line, "rule '%s': %s and %s are chosen at different points "
					     "of the search; set them in two rules", r->id,
					     mt_facts[r->sets[0].fact].name, mt_facts[r->sets[i].fact].name);
				else if (mt_expr_stage(r->sets[i].e) >= ks)
					perr(ps, line, "rule '%s': SET %s reads facts the search knows only "
					     "after it chooses %s (at '%s' or later)", r->id,
					     mt_facts[r->sets[i].fact].name, mt_facts[r->sets[i].fact].name,
					     mt_stage_name(mt_expr_stage(r->sets[i].e)));
			}
			if (!ps->bad && stage >= ks)
				perr(ps, line, "rule '%s': WHEN reads facts the search knows only after it "
				     "chooses %s (at '%s')", r->id, mt_facts[r->sets[0].fact].name,
				     mt_stage_name(stage));
			stage = ks;
		} else if (r->kind == MT_RK_SET) {
			for (i = 0; i < r->nouts; i++)
				if (r->outs[i].val && mt_tmpl_stage(r->outs[i].val) > stage)
					stage = mt_tmpl_stage(r->outs[i].val);
		}
		if (!ps->bad && (r->kind == MT_RK_CONSTRAINT || r->kind == MT_RK_SET) &&
		    stage > MT_ST_TIME)
			perr(ps, line, "rule '%s': a %s rule cannot read search.*, best(), least_mem() "
			     "or finding.* (they exist only after the search)", r->id,
			     mt_rule_kind_name(r->kind));
		if (!ps->bad && r->kind == MT_RK_ADVISE && uses_finding(r->when))
			perr(ps, line, "rule '%s': finding.* facts belong to diagnose rules", r->id);
		if (!ps->bad && r->kind == MT_RK_DIAGNOSE && !uses_finding(r->when))
			perr(ps, line, "rule '%s': a diagnose rule's WHEN reads finding.* facts", r->id);
		r->stage = stage;
		/* the knobs it names: config.* facts of one knob each (config.dp and
		 * the like follow from several and do not count) */
		{
			const int *wf;
			int nf, k;
			r->knobs = 0;
			wf = mt_expr_facts(r->when, &nf);
			for (k = 0; k < nf; k++) {
				unsigned kb = mt_facts[wf[k]].knobs;
				if (!strncmp(mt_facts[wf[k]].name, "config.", 7) && kb && !(kb & (kb - 1)))
					r->knobs |= kb;
			}
		}
	}
	if (ps->bad || ps->nomem) {
		mt_rule_clear(r);
	} else {
		evidence_expr(r, r->when);
		for (i = 0; i < r->nsets; i++)
			evidence_expr(r, r->sets[i].e);
		for (i = 0; i < r->nsays; i++) {
			evidence_expr(r, r->says[i].cond);
			mt_tmpl_each_fact(r->says[i].t, evidence_cb, r);
		}
		for (i = 0; i < r->nouts; i++)
			if (r->outs[i].val)
				mt_tmpl_each_fact(r->outs[i].val, evidence_cb, r);
		r->file = ps->file;
		r->line = ps->start_line;
		r->user = ps->user;
		r->uses_best = mt_expr_uses_best(r->when);
		for (i = 0; i < r->nsets; i++)
			r->uses_best |= mt_expr_uses_best(r->sets[i].e);
		for (i = 0; i < r->nsays; i++)
			r->uses_best |= (r->says[i].cond && mt_expr_uses_best(r->says[i].cond)) ||
					mt_tmpl_uses_best(r->says[i].t);
		for (i = 0; i < r->nouts; i++)
			r->uses_best |= r->outs[i].val && mt_tmpl_uses_best(r->outs[i].val);
		if (mt_ruleset_grow((void **)&rs->rules, &rs->cap, rs->n + 1, sizeof(*r))) {
			ps->nomem = 1;
			mt_rule_clear(r);
		} else {
			rs->rules[rs->n++] = *r;
			memset(r, 0, sizeof(*r));
		}
	}
	ps->open = 0;
	ps->bad = 0;
}

static const char *skip(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

static size_t trimmed_len(const char *s)
{
	size_t n = strlen(s);

	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

static struct mt_expr *compile_at(struct pstate *ps, int line, const char *what, const char *src,
				  size_t n, int col0)
{
	struct mt_cerr ce;
	struct mt_expr *e = mt_expr_compile(src, n, &ce);

	if (!e)
		perr(ps, line, "%s: %s (column %d)", what, ce.msg, col0 + ce.col + 1);
	return e;
}

static struct mt_tmpl *tmpl_at(struct pstate *ps, int line, const char *what, const char *src,
			       size_t n, int col0)
{
	struct mt_cerr ce;
	struct mt_tmpl *t = mt_tmpl_compile(src, n, &ce);

	if (!t)
		perr(ps, line, "%s: %s (column %d)", what, ce.msg, col0 + ce.col + 1);
	return t;
}

static int valid_id(const char *s, size_t n)
{
	size_t i;

	if (!n || n >= 48 || !(islower((unsigned char)s[0]) || isdigit((unsigned char)s[0])))
		return 0;
	for (i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
			return 0;
	return 1;
}

/* "key = value": split at the first '='. */
static int split_assign(const char *rest, const char **key, size_t *klen, const char **val)
{
	const char *eq = strchr(rest, '=');

	if (!eq)
		return -1;
	*key = rest;
	*klen = (size_t)(eq - rest);
	while (*klen && (rest[*klen - 1] == ' ' || rest[*klen - 1] == '\t'))
		(*klen)--;
	*val = skip(eq + 1);
	return 0;
}

static int key_ok(const char *k, size_t n, int env)
{
	size_t i;

	if (!n || n >= 96)
		return 0;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)k[i];
		if (env ? !(isupper(c) || c == '_' || (i && isdigit(c)))
			: !(isalnum(c) || c == '_' || c == '.' || c == '-'))
			return 0;
	}
	return 1;
}

/* A SET whose expression reads no fact is a constant: its value must be one
 * the knob takes (SET config.bucket_params = 0 would be dropped silently at
 * every evaluation).  0 when it is a constant the knob refuses. */
static int const_set_ok(const struct mt_rule_set *s)
{
	static struct mt_val none[MT_F_N];
	struct mt_env env;
	struct mt_val v;
	double out;
	int n = 0;

	mt_expr_facts(s->e, &n);
	if (n || mt_expr_uses_best(s->e))
		return 1;
	memset(&env, 0, sizeof(env));
	env.facts = none;
	v = mt_expr_eval(s->e, &env);
	if (!v.s && isnan(v.n))
		return 1; /* a curve function: known only with a cluster */
	return mt_rules_knob_value(s->fact, v, &out) == 0;
}

/* SET config.knob = expression */
static void dir_set(struct pstate *ps, int line, const char *rest, size_t rl, int col)
{
	struct mt_rule *r = &ps->cur;
	const char *key, *val;
	size_t kl;
	int f;
	struct mt_rule_set *s;

	if (split_assign(rest, &key, &kl, &val)) {
		perr(ps, line, "rule '%s': SET: expected 'SET config.knob = expression'", r->id);
		return;
	}
	f = mt_fact_find(key, kl);
	if (f < 0 || !mt_rule_settable(f)) {
		perr(ps, line, "rule '%s': SET %.*s: rules may set config.sp, config.cp_comm, "
		     "config.cp_a2a, config.etp, config.tp_overlap, config.fused_ce, "
		     "config.overlap_grad, config.overlap_param, config.grad_fp32, "
		     "config.bucket_params, config.dist_opt or config.cuda_graph (the others are searched: "
		     "prune them with a constraint)", r->id, (int)kl, key);
		return;
	}
	if (grow_one((void **)&r->sets, r->nsets, sizeof(*s))) {
		ps->nomem = 1;
		return;
	}
	s = &r->sets[r->nsets];
	memset(s, 0, sizeof(*s));
	s->fact = f;
	s->e = compile_at(ps, line, "SET", val, trimmed_len(val), col + (int)(val - rest));
	if (!s->e)
		return;
	r->nsets++;
	if (!const_set_ok(s))
		perr(ps, line, "rule '%s': SET %.*s = %.*s: not a value this knob takes (the "
		     "rule would never apply)", r->id, (int)kl, key, (int)trimmed_len(val), val);
	if (!(s->src = dupn(rest, rl)))
		ps->nomem = 1;
	if (mt_facts[f].type == MT_FT_ENUM) {
		struct mt_cerr ce;
		if (mt_expr_check_enum(s->e, f, &ce))
			perr(ps, line, "rule '%s': SET: %s", r->id, ce.msg);
	} else if (mt_expr_type(s->e) == MT_VT_STR) {
		perr(ps, line, "rule '%s': SET %s needs a number, got a string", r->id,
		     mt_facts[f].name);
	}
}

/* The first character of a value's literal text (outside {expressions})
 * that a shell would interpret, or 0. */
static int shell_meta(const char *v, size_t n)
{
	size_t i;
	int depth = 0;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c == '{')
			depth++;
		else if (c == '}' && depth)
			depth--;
		else if (!depth && !isalnum(c) && !strchr(" ._,:=+/@%-", c))
			return c;
	}
	return 0;
}

/* ARG --flag [value], BRIDGE name = value, ENV NAME = value */
static void dir_out(struct pstate *ps, int line, const char *kw, size_t kwl, const char *rest,
		    int col, int kind)
{
	struct mt_rule *r = &ps->cur;
	struct mt_rule_out *o;
	const char *key, *val = NULL;
	size_t kl, rl = trimmed_len(rest);
	int bad;

	if (kind == MT_OUT_ARG) {
		if (strncmp(rest, "--", 2)) {
			perr(ps, line, "rule '%s': ARG: expected '--flag [value]', got '%.*s'",
			     r->id, (int)rl, rest);
			return;
		}
		key = rest + 2;
		kl = strcspn(key, " \t");
		val = skip(key + kl);
		if (!*val)
			val = NULL;
	} else if (split_assign(rest, &key, &kl, &val)) {
		perr(ps, line, "rule '%s': %.*s: expected 'NAME = value'", r->id, (int)kwl, kw);
		return;
	}
	if (!key_ok(key, kl, kind == MT_OUT_ENV)) {
		perr(ps, line, "rule '%s': %.*s: bad name '%.*s'%s", r->id, (int)kwl, kw, (int)kl,
		     key, kind == MT_OUT_ENV ? " (upper-case letters, digits and '_')" : "");
		return;
	}
	if (grow_one((void **)&r->outs, r->nouts, sizeof(*o))) {
		ps->nomem = 1;
		return;
	}
	o = &r->outs[r->nouts];
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	memcpy(o->key, key, kl);
	o->key[kl] = '\0';
	if (val && *val && (bad = shell_meta(val, trimmed_len(val)))) {
		perr(ps, line, "rule '%s': %.*s %s: the value holds '%c', a shell metacharacter "
		     "(values are pasted into a shell: letters, digits, spaces and ._,:=+/@%%- "
		     "only, with {expressions})", r->id, (int)kwl, kw, o->key, bad);
		return;
	}
	if (val && *val) {
		o->val = tmpl_at(ps, line, "value", val, trimmed_len(val), col + (int)(val - rest));
		if (!o->val)
			return;
	} else if (kind != MT_OUT_ARG) {
		perr(ps, line, "rule '%s': %.*s %s: the value is empty", r->id, (int)kwl, kw, o->key);
		return;
	}
	r->nouts++;
	if (!(o->src = dupn(rest, rl)))
		ps->nomem = 1;
}

/* SAY [condition] text */
static void dir_say(struct pstate *ps, int line, const char *rest, size_t rl, int col)
{
	struct mt_rule *r = &ps->cur;
	struct mt_say *s;
	const char *text = rest;
	struct mt_expr *cond = NULL;

	if (*rest == '[') {
		const char *p = rest + 1;
		int instr = 0;
		for (; *p && (instr || *p != ']'); p++)
			if (*p == '"' && (p == rest + 1 || p[-1] != '\\'))
				instr = !instr;
		if (!*p) {
			perr(ps, line, "rule '%s': SAY [condition]: missing ']'", r->id);
			return;
		}
		cond = compile_at(ps, line, "SAY condition", rest + 1, (size_t)(p - rest - 1), col + 1);
		if (!cond)
			return;
		text = skip(p + 1);
	}
	if (!*text) {
		mt_expr_free(cond);
		perr(ps, line, "rule '%s': SAY is empty", r->id);
		return;
	}
	if (grow_one((void **)&r->says, r->nsays, sizeof(*s))) {
		mt_expr_free(cond);
		ps->nomem = 1;
		return;
	}
	s = &r->says[r->nsays];
	memset(s, 0, sizeof(*s));
	s->cond = cond;
	s->t = tmpl_at(ps, line, "SAY", text, trimmed_len(text), col + (int)(text - rest));
	if (!s->t) {
		mt_expr_free(cond);
		s->cond = NULL;
		return;
	}
	r->nsays++;
	if (!(s->src = dupn(rest, rl)))
		ps->nomem = 1;
}

static void directive(struct pstate *ps, int line, const char *kw, size_t kwl, const char *rest,
		      int col)
{
	struct mt_rule *r = &ps->cur;
	size_t rl = trimmed_len(rest);

#define IS(s) (kwl == strlen(s) && !memcmp(kw, s, kwl))
	if (IS("RULE")) {
		close_rule(ps);
		memset(r, 0, sizeof(*r));
		ps->open = 1;
		ps->bad = 0;
		ps->start_line = line;
		ps->seen_title = ps->seen_kind = ps->seen_when = 0;
		if (!valid_id(rest, rl)) {
			snprintf(r->id, sizeof(r->id), "%.*s", (int)(rl > 40 ? 40 : rl), rest);
			perr(ps, line, "RULE '%.*s': an id is lower-case letters, digits and '-' (at most "
			     "47), starting with a letter or digit", (int)(rl > 40 ? 40 : rl), rest);
			return;
		}
		memcpy(r->id, rest, rl);
		r->id[rl] = '\0';
		if (builtin_id(r->id))
			perr(ps, line, "RULE '%s': the id is taken by a built-in pruning reason", r->id);
		return;
	}
	if (IS("DISABLE")) {
		struct mt_ruleset *rs = ps->rs;
		if (!valid_id(rest, rl)) {
			perr(ps, line, "DISABLE: expected a rule id, got '%.*s'", (int)rl, rest);
			return;
		}
		if (mt_ruleset_grow((void **)&rs->disables, &rs->disables_cap, rs->ndisables + 1,
			 sizeof(*rs->disables))) {
			ps->nomem = 1;
			return;
		}
		snprintf(rs->disables[rs->ndisables].id, sizeof(rs->disables[0].id), "%.*s", (int)rl, rest);
		rs->disables[rs->ndisables].file = ps->file;
		rs->disables[rs->ndisables].line = line;
		rs->ndisables++;
		return;
	}
	if (!(IS("TITLE") || IS("KIND") || IS("WHEN") || IS("SET") || IS("ARG") || IS("BRIDGE") ||
	      IS("ENV") || IS("SAY") || IS("CITE"))) {
		perr(ps, line, "unknown directive '%.*s'; expected RULE, TITLE, KIND, WHEN, SET, ARG, "
		     "BRIDGE, ENV, SAY, CITE or DISABLE", (int)kwl, kw);
		return;
	}
	if (!ps->open) {
		perr(ps, line, "%.*s outside a rule (a rule starts with RULE id)", (int)kwl, kw);
		return;
	}
	if (ps->bad)
		return;
	if (IS("TITLE")) {
		if (r->title)
			perr(ps, line, "rule '%s': a second TITLE", r->id);
		else if (!rl)
			perr(ps, line, "rule '%s': TITLE is empty", r->id);
		else if (!(r->title = dupn(rest, rl)))
			ps->nomem = 1;
	} else if (IS("KIND")) {
		int k;
		for (k = 0; k < MT_RK_N; k++)
			if (strlen(kind_names[k]) == rl && !memcmp(kind_names[k], rest, rl))
				break;
		if (ps->seen_kind)
			perr(ps, line, "rule '%s': a second KIND", r->id);
		else if (k == MT_RK_N)
			perr(ps, line, "rule '%s': KIND '%.*s': expected constraint, set, advise or "
			     "diagnose", r->id, (int)rl, rest);
		r->kind = k;
		ps->seen_kind = 1;
	} else if (IS("WHEN")) {
		if (r->when) {
			perr(ps, line, "rule '%s': a second WHEN (join conditions with &&)", r->id);
			return;
		}
		r->when = compile_at(ps, line, "WHEN", rest, rl, col);
		if (r->when && !(r->when_src = dupn(rest, rl)))
			ps->nomem = 1;
		if (r->when && mt_expr_type(r->when) == MT_VT_STR)
			perr(ps, line, "rule '%s': WHEN is a string, not a condition", r->id);
	} else if (IS("SET")) {
		dir_set(ps, line, rest, rl, col);
	} else if (IS("ARG") || IS("BRIDGE") || IS("ENV")) {
		dir_out(ps, line, kw, kwl, rest, col,
			IS("ARG") ? MT_OUT_ARG : IS("BRIDGE") ? MT_OUT_BRIDGE : MT_OUT_ENV);
	} else if (IS("SAY")) {
		dir_say(ps, line, rest, rl, col);
	} else if (IS("CITE")) {
		char **c;
		if (!rl) {
			perr(ps, line, "rule '%s': CITE is empty", r->id);
			return;
		}
		c = realloc(r->cites, (size_t)(r->ncites + 1) * sizeof(*c));
		if (!c) {
			ps->nomem = 1;
			return;
		}
		r->cites = c;
		if (!(r->cites[r->ncites] = dupn(rest, rl)))
			ps->nomem = 1;
		else
			r->ncites++;
	} else {
		perr(ps, line, "unknown directive '%.*s'; expected RULE, TITLE, KIND, WHEN, SET, ARG, "
		     "BRIDGE, ENV, SAY, CITE or DISABLE", (int)kwl, kw);
	}
#undef IS
}

char *mt_ruleset_keep_file(struct mt_ruleset *rs, const char *file)
{
	char *f;

	if (mt_ruleset_grow((void **)&rs->files, &rs->files_cap, rs->nfiles + 1, sizeof(*rs->files)))
		return NULL;
	f = dupn(file, strlen(file));
	if (f)
		rs->files[rs->nfiles++] = f;
	return f;
}

int mt_ruleset_add_text(struct mt_ruleset *rs, const char *file, const char *text, size_t len,
			int user)
{
	struct pstate ps;
	struct sbuf logical = SBUF_INIT;
	size_t i = 0;
	int line = 0;

	memset(&ps, 0, sizeof(ps));
	ps.rs = rs;
	ps.user = user;
	ps.file = mt_ruleset_keep_file(rs, file);
	if (!ps.file)
		return MT_ENOMEM;
	if (memchr(text, '\0', len)) {
		mt_ruleset_problem(rs, ps.file, 1, "not a text file (it contains NUL bytes)");
		return 1;
	}
	while (i < len && !ps.nomem) {
		int first;
		const char *s, *kw;
		size_t kwl;

		/* one logical line: physical lines joined at a trailing backslash */
		sbuf_reset(&logical);
		first = line + 1;
		for (;;) {
			size_t e = i;
			size_t n;
			while (e < len && text[e] != '\n')
				e++;
			n = e - i;
			line++;
			if (n && text[i + n - 1] == '\r')
				n--;
			/* a comment line ends where it ends, backslash or not */
			if (!logical.len) {
				size_t k = 0;
				while (k < n && (text[i + k] == ' ' || text[i + k] == '\t'))
					k++;
				if (k < n && text[i + k] == '#') {
					i = e + 1;
					break;
				}
			}
			/* a continuation starts after its indentation */
			if (logical.len) {
				while (n && (text[i] == ' ' || text[i] == '\t')) {
					i++;
					n--;
				}
			}
			if (n && text[i + n - 1] == '\\') {
				/* joined with exactly one space */
				size_t k = n - 1;
				while (k && (text[i + k - 1] == ' ' || text[i + k - 1] == '\t'))
					k--;
				sbuf_add(&logical, text + i, k);
				sbuf_addc(&logical, ' ');
				i = e + 1;
				if (i < len)
					continue;
			} else {
				sbuf_add(&logical, text + i, n);
				i = e + 1;
			}
			break;
		}
		if (logical.failed) {
			ps.nomem = 1;
			break;
		}
		s = skip(logical.buf);
		if (!*s || *s == '#')
			continue;
		kw = s;
		kwl = 0;
		while (isupper((unsigned char)kw[kwl]))
			kwl++;
		if (!kwl || (kw[kwl] && kw[kwl] != ' ' && kw[kwl] != '\t')) {
			perr(&ps, first, "expected a directive (RULE, TITLE, KIND, WHEN, SET, ARG, BRIDGE, "
			     "ENV, SAY, CITE, DISABLE) at the start of the line, got '%.20s'", s);
			continue;
		}
		directive(&ps, first, kw, kwl, skip(kw + kwl), (int)(skip(kw + kwl) - logical.buf));
	}
	if (!ps.nomem)
		close_rule(&ps);
	else
		mt_rule_clear(&ps.cur);
	sbuf_release(&logical);
	if (ps.nomem)
		return MT_ENOMEM;
	rs->finished = 0;
	return ps.problems;
}
