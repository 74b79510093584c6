/* SPDX-License-Identifier: MIT */
/* rules: list, show, lint, check and document the rule files. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonw.h"
#include "../lib/sbuf.h"
#include "../lib/table.h"
#include "../rules/engine.h"
#include "../rules/fired.h"
#include "cli.h"
#include "common.h"

static const char rules_head[] =
	"usage: megatune rules list  [--rules PATH]... [--kind K] [--ids]\n"
	"       megatune rules show  ID [--rules PATH]...\n"
	"       megatune rules lint  [FILE|DIR...]\n"
	"       megatune rules check --facts FILE [--rules PATH]... [--cluster NAME|FILE] [--json]\n"
	"       megatune rules facts\n"
	"       megatune rules doc   [-o FILE]\n"
	"\n"
	"The tuning guidance advise applies, as rules: the bundled ones (rules/defs/)\n"
	"and any added with --rules (a .rules file or a folder of them).\n"
	"\n"
	"  list    every rule: id, kind, the stage it is evaluated at, title (--ids: the\n"
	"          ids alone, one per line)\n"
	"  show    one rule: condition, effects, message, citation, the facts it reads\n"
	"  lint    check rule files (with the bundled ones): syntax, unknown names,\n"
	"          missing citation, duplicate ids; every problem as FILE:LINE: reason\n"
	"  check   evaluate the rules on a megatune.facts/1 file (profile findings):\n"
	"          prints the rules that fire, with their messages\n"
	"  facts   the names a rule may use, with units and meaning\n"
	"  doc     the Markdown reference (docs/RULES.md)\n";

static const char rules_tail[] =
	"exit codes: 0 success; 2 bad usage, a rule file with a problem, or bad input.\n";

struct ropts {
	const char *paths[16];
	int npaths;
	const char *kind, *facts, *cluster, *out;
	int json, ids;
	char **rest;
	int nrest;
};

#define RO(field) offsetof(struct ropts, field)

static const struct cli_opt rules_opts[] = {
	CLI_SEC("options"),
	{ .type = CLI_STRS, .name = "rules", .meta = "PATH", .off = RO(paths),
	  .count_off = RO(npaths), .cap = 16, .want = "paths",
	  .help = "more rules: a .rules file or a folder of them (list,\n"
		  "show, check, doc)" },
	{ .type = CLI_STR, .name = "kind", .meta = "K", .off = RO(kind),
	  .help = "list: only rules of this kind (constraint, set, advise,\ndiagnose)" },
	{ .type = CLI_FLAG, .name = "ids", .off = RO(ids),
	  .help = "list: the ids alone, one per line" },
	{ .type = CLI_STR, .name = "facts", .meta = "FILE", .off = RO(facts),
	  .help = "check: the megatune.facts/1 file" },
	{ .type = CLI_STR, .name = "cluster", .meta = "NAME|FILE", .off = RO(cluster),
	  .help = "check: a cluster profile for rules that read cluster\nfacts" },
	{ .type = CLI_FLAG, .name = "json", .off = RO(json),
	  .help = "check: the rules that fire as JSON\n(megatune.rulecheck/1)" },
	{ .type = CLI_STR, .name = "output", .short_name = 'o', .meta = "FILE", .off = RO(out),
	  .help = "doc: the file to write (default: standard output)" },
	CLI_OPT_END
};

const struct cli_spec cli_spec_rules = {
	.cmd = "rules", .head = rules_head, .opts = rules_opts, .tail = rules_tail,
};

/* argv[0] is the subcommand. */
static int rules_parse(int argc, char **argv, struct ropts *o)
{
	int rc, first;

	memset(o, 0, sizeof(*o));
	if ((rc = cli_parse(&cli_spec_rules, argc, argv, o, &first)) >= 0)
		return rc;
	o->rest = argv + first;
	o->nrest = argc - first;
	return -1;
}

static int rules_load(const struct ropts *o, struct mt_ruleset **rs)
{
	struct mt_error err = MT_ERROR_INIT;

	if (mt_ruleset_load_files(o->paths, o->npaths, 1, rs, &err))
		return cli_fail("rules", &err);
	return -1;
}

static int cmd_list(const struct ropts *o)
{
	struct mt_ruleset *rs;
	struct mt_table t;
	struct sbuf sb = SBUF_INIT;
	int i, rc, k = -1, shown = 0;

	if (o->kind) {
		for (k = 0; k < MT_RK_N; k++)
			if (!strcmp(o->kind, mt_rule_kind_name(k)))
				break;
		if (k == MT_RK_N)
			return cli_usage_error("rules",
				"--kind: expected constraint, set, advise or diagnose, got '%s'",
					   o->kind);
	}
	if ((rc = rules_load(o, &rs)) >= 0)
		return rc;
	mt_table_init(&t);
	mt_table_col(&t, 0, "id", NULL, 1);
	mt_table_col(&t, 1, "kind", NULL, 1);
	mt_table_col(&t, 2, "stage", NULL, 1);
	mt_table_col(&t, 3, "title", NULL, 1);
	for (i = 0; i < rs->n; i++) {
		const struct mt_rule *r = &rs->rules[i];
		if (k >= 0 && r->kind != k)
			continue;
		if (o->ids) {
			printf("%s\n", r->id);
			continue;
		}
		mt_table_cell(&t, "%s", r->id);
		mt_table_cell(&t, "%s%s", mt_rule_kind_name(r->kind), r->disabled ? " (off)" : "");
		mt_table_cell(&t, "%s", mt_stage_name(r->stage));
		mt_table_cell(&t, "%s", r->title);
		shown++;
	}
	if (!o->ids) {
		mt_table_render(&t, &sb, "", MT_TABLE_RULE);
		sbuf_addf(&sb, "%d rules\n", shown);
		fputs(sb.buf, stdout);
	}
	mt_table_release(&t);
	sbuf_release(&sb);
	mt_ruleset_free(rs);
	return 0;
}

static int cmd_show(const struct ropts *o)
{
	struct mt_ruleset *rs;
	const struct mt_rule *r;
	struct sbuf sb = SBUF_INIT;
	int rc;

	if (o->nrest != 1)
		return cli_usage_error("rules", "rules show: expected one rule id");
	if ((rc = rules_load(o, &rs)) >= 0)
		return rc;
	r = mt_ruleset_find(rs, o->rest[0]);
	if (!r) {
		fprintf(stderr, "megatune rules: error: no rule '%s' (megatune rules list shows them)\n",
			o->rest[0]);
		mt_ruleset_free(rs);
		return 2;
	}
	mt_rule_show(r, &sb);
	fputs(sb.buf, stdout);
	sbuf_release(&sb);
	mt_ruleset_free(rs);
	return 0;
}

static int cmd_lint(const struct ropts *o)
{
	struct mt_ruleset *rs = mt_ruleset_new();
	int i, n, users = 0;

	if (!rs)
		return 2;
	for (i = 0; i < o->nrest; i++)
		if (mt_ruleset_add_path(rs, o->rest[i], 1) < 0)
			goto nomem;
	if (mt_ruleset_add_bundled(rs) < 0)
		goto nomem;
	n = mt_ruleset_finish(rs);
	for (i = 0; i < rs->nproblems; i++) {
		const struct mt_problem *p = &rs->problems[i];
		if (p->line > 0)
			fprintf(stderr, "%s:%d: %s\n", p->file, p->line, p->msg);
		else
			fprintf(stderr, "%s: %s\n", p->file, p->msg);
	}
	for (i = 0; i < rs->n; i++)
		users += rs->rules[i].user;
	if (n)
		fprintf(stderr, "%d problem%s\n", n, n == 1 ? "" : "s");
	else if (o->nrest)
		printf("%d rules from %d path%s and %d bundled: no problems\n", users, o->nrest,
		       o->nrest == 1 ? "" : "s", rs->n - users);
	else
		printf("%d bundled rules: no problems\n", rs->n);
	mt_ruleset_free(rs);
	return n ? 2 : 0;
nomem:
	mt_ruleset_free(rs);
	fprintf(stderr, "megatune rules: error: out of memory\n");
	return 2;
}

static int cmd_facts(void)
{
	struct mt_table t;
	struct sbuf sb = SBUF_INIT;
	int i;

	mt_table_init(&t);
	mt_table_col(&t, 0, "name", NULL, 1);
	mt_table_col(&t, 1, "unit", NULL, 1);
	mt_table_col(&t, 2, "stage", NULL, 1);
	mt_table_col(&t, 3, "meaning", NULL, 1);
	for (i = 0; i < MT_F_N; i++) {
		const struct mt_fact_info *f = &mt_facts[i];
		mt_table_cell(&t, "%s", f->name);
		mt_table_cell(&t, "%s", f->type == MT_FT_BOOL ? "on/off" : f->type == MT_FT_STR ? "text"
				 : f->type == MT_FT_ENUM ? "name" : f->unit);
		mt_table_cell(&t, "%s", mt_stage_name(f->stage));
		mt_table_cell(&t, "%s", f->desc);
	}
	mt_table_render(&t, &sb, "", MT_TABLE_RULE);
	mt_table_release(&t);
	fputs(sb.buf, stdout);
	sbuf_release(&sb);
	return 0;
}

static int cmd_doc(const struct ropts *o)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs;
	struct sbuf sb = SBUF_INIT;
	int rc;

	if ((rc = rules_load(o, &rs)) >= 0)
		return rc;
	mt_ruleset_doc(rs, &sb);
	mt_ruleset_free(rs);
	if (sb.failed) {
		sbuf_release(&sb);
		fprintf(stderr, "megatune rules: error: out of memory\n");
		return 2;
	}
	rc = mt_write_atomic(o->out ? o->out : "-", sb.buf, sb.len, &err);
	sbuf_release(&sb);
	return rc ? cli_fail("rules", &err) : 0;
}

static int rules_check(const struct ropts *o)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_ruleset *rs = NULL;
	struct mt_cluster *c = NULL;
	struct mt_val *facts = NULL;
	unsigned char given[MT_F_N];
	char *strings = NULL;
	struct mt_explain ex;
	struct sbuf sb = SBUF_INIT;
	int rc, i, skipped = 0, ngiven = 0;

	memset(&ex, 0, sizeof(ex));
	if (!o->facts)
		return cli_usage_error("rules", "rules check: --facts FILE is required");
	facts = calloc(MT_F_N, sizeof(*facts));
	if (!facts)
		return 2;
	if (mt_facts_read(o->facts, facts, given, &strings, &err)) {
		rc = cli_fail("rules", &err);
		goto out;
	}
	if (o->cluster && mt_cluster_load(o->cluster, &c, &err)) {
		rc = cli_fail("rules", &err);
		goto out;
	}
	if ((rc = rules_load(o, &rs)) >= 0)
		goto out;
	if (mt_rules_on_facts(rs, facts, given, c, &ex, &skipped)) {
		mt_error_set(&err, MT_ENOMEM, "out of memory");
		rc = cli_fail("rules", &err);
		goto out;
	}
	for (i = 0; i < MT_F_N; i++)
		ngiven += given[i];
	if (o->json) {
		struct jw w;

		jw_init(&w, &sb, 1);
		jw_obj(&w, NULL);
		jw_str(&w, "schema", "megatune.rulecheck/1");
		jw_str(&w, "facts_file", o->facts);
		jw_int(&w, "facts_given", ngiven);
		jw_int(&w, "rules_not_evaluated", skipped);
		mt_fired_json(&w, "fired", &ex, MT_FIRED_BRIEF);
		jw_end(&w);
	} else {
		sbuf_addf(&sb, "%s: %d facts; %d rules evaluated, %d not (they read facts the file "
			       "does not give)\n", o->facts, ngiven, rs->n - skipped, skipped);
		if (!ex.n)
			sbuf_adds(&sb, "no rule fired\n");
		mt_fired_text(&sb, &ex);
	}
	rc = sb.failed ? 2 : 0;
	if (!rc)
		fputs(sb.buf, stdout);
out:
	mt_explain_free(&ex);
	sbuf_release(&sb);
	mt_ruleset_free(rs);
	mt_cluster_free(c);
	free(strings);
	free(facts);
	return rc;
}

int cmd_rules(int argc, char **argv)
{
	struct ropts o;
	const char *sub;
	int rc;

	if (argc < 2) {
		cli_help(stderr, &cli_spec_rules);
		return 2;
	}
	sub = argv[1];
	if ((rc = cli_help_arg(&cli_spec_rules, sub)) >= 0)
		return rc;
	if ((rc = rules_parse(argc - 1, argv + 1, &o)) >= 0)
		return rc;
	if (!strcmp(sub, "list"))
		return o.nrest ? cli_usage_error("rules",
			"rules list: unexpected argument '%s'", o.rest[0]) : cmd_list(&o);
	if (!strcmp(sub, "show"))
		return cmd_show(&o);
	if (!strcmp(sub, "lint"))
		return cmd_lint(&o);
	if (!strcmp(sub, "facts"))
		return cmd_facts();
	if (!strcmp(sub, "doc"))
		return cmd_doc(&o);
	if (!strcmp(sub, "check"))
		return rules_check(&o);
	return cli_usage_error("rules",
		"unknown rules command '%s' (list, show, lint, check, facts, doc)", sub);
}
