/* SPDX-License-Identifier: MIT */
/* Fuzz target: the rule-file parser, the expression compiler and evaluator,
 * and message templates.  Whatever the input, a rule set either loads or
 * reports at least one problem, and every rule that loads evaluates and
 * renders without crashing. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/sbuf.h"
#include "../../rules/ruleset.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_ruleset *rs = mt_ruleset_new();
	struct mt_val facts[MT_F_N];
	struct mt_env env;
	int i, k, problems;

	if (!rs)
		return 0;
	problems = mt_ruleset_add_text(rs, "fuzz.rules", (const char *)data, size, 1);
	mt_ruleset_finish(rs);
	if (problems > 0 && rs->nproblems == 0)
		__builtin_trap();
	for (i = 0; i < MT_F_N; i++) {
		facts[i].n = (double)(i % 7) + 0.5;
		facts[i].s = mt_facts[i].type == MT_FT_STR ? "name" : NULL;
	}
	memset(&env, 0, sizeof(env));
	env.facts = facts;
	for (i = 0; i < rs->n; i++) {
		struct mt_rule *r = &rs->rules[i];
		struct sbuf sb = SBUF_INIT;

		if (!r->title || !r->when || !r->ncites || !r->nsays)
			__builtin_trap(); /* a rule that loads is complete */
		(void)mt_expr_true(r->when, &env);
		for (k = 0; k < r->nsets; k++)
			(void)mt_expr_eval(r->sets[k].e, &env);
		for (k = 0; k < r->nsays; k++)
			mt_tmpl_render(r->says[k].t, &env, &sb);
		for (k = 0; k < r->nouts; k++)
			if (r->outs[k].val)
				mt_tmpl_render(r->outs[k].val, &env, &sb);
		mt_rule_show(r, &sb);
		sbuf_release(&sb);
	}
	{
		struct sbuf sb = SBUF_INIT;
		mt_ruleset_doc(rs, &sb);
		sbuf_release(&sb);
	}
	mt_ruleset_free(rs);
	return 0;
}
