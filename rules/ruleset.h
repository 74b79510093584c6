/* SPDX-License-Identifier: MIT */
/* ruleset: rule files, parsed and checked once.
 *
 * A rule file (docs/RULES.md, "The rule file format") is a list of rules:
 *
 *     # comment
 *     RULE tp-nvlink
 *     TITLE Keep TP inside the NVLink domain
 *     KIND constraint
 *     WHEN config.tp > cluster.nvlink_domain
 *     SAY TP {config.tp} would cross NVLink domains of {cluster.nvlink_domain} GPUs
 *     CITE Megatron-Bridge performance guide, "Parallel Mapping Strategies" 2.1
 *
 * with SET knob = expr, ARG --flag [value], BRIDGE key = value and ENV NAME =
 * value as the effects of `set` rules, SAY [cond] text for a conditional
 * sentence, a trailing backslash to continue a line, and `DISABLE id` (outside
 * a rule) to turn off a rule of another file.
 *
 * Loading never stops at the first problem: every problem is recorded with
 * its file and line (mt_ruleset_problems), so that `megatune rules lint`
 * can list them all; a rule with a problem is dropped.  A rule set is
 * read-only once finished, except for the caches its expressions keep.
 */
#ifndef MT_RULESET_H
#define MT_RULESET_H

#include "../lib/err.h"
#include "expr.h"

struct sbuf;

enum mt_rule_kind { MT_RK_CONSTRAINT, MT_RK_SET, MT_RK_ADVISE, MT_RK_DIAGNOSE, MT_RK_N };

const char *mt_rule_kind_name(int k);

enum mt_out_kind { MT_OUT_ARG, MT_OUT_BRIDGE, MT_OUT_ENV };

struct mt_rule_set {        /* SET config.X = expr */
	int fact;
	struct mt_expr *e;
	char *src;
};

struct mt_rule_out {        /* ARG, BRIDGE, ENV */
	int kind;
	char key[96];
	struct mt_tmpl *val;    /* NULL: a flag without a value */
	char *src;
};

struct mt_say {
	struct mt_expr *cond;   /* NULL: always */
	struct mt_tmpl *t;
	char *src;
};

#define MT_RULE_EVIDENCE_MAX 48

struct mt_rule {
	char id[64];
	char *title;
	int kind;
	struct mt_expr *when;
	char *when_src;
	struct mt_rule_set *sets;
	int nsets;
	struct mt_rule_out *outs;
	int nouts;
	struct mt_say *says;
	int nsays;
	char **cites;
	int ncites;
	char *file;             /* shared with the rule set's file list */
	int line;
	int stage;              /* when the search evaluates it */
	unsigned knobs;         /* the knobs its condition names (K_*): when the user pinned
				 * them all, a constraint does not prune */
	int uses_best;          /* calls best() or least_mem() somewhere */
	int evidence[MT_RULE_EVIDENCE_MAX]; /* facts it reads, in order of first use */
	int nevidence;
	int user;               /* from a --rules file, not bundled */
	int disabled;           /* DISABLEd by another file */
};

struct mt_problem {
	char *file;
	int line;
	char msg[320];
};

struct mt_ruleset {
	struct mt_rule *rules;
	int n, cap;
	char **files;
	int nfiles, files_cap;
	struct mt_problem *problems;
	int nproblems, problems_cap;
	struct { char id[64]; char *file; int line; } *disables;
	int ndisables, disables_cap;
	int finished;
};

struct mt_ruleset *mt_ruleset_new(void);
void mt_ruleset_free(struct mt_ruleset *rs);

/* Parse rules from text; `file` names it in problems.  Returns the number of
 * problems found in it (0: all well), or MT_ENOMEM. */
int mt_ruleset_add_text(struct mt_ruleset *rs, const char *file, const char *text, size_t len,
			int user);
/* A .rules file, or every *.rules file of a folder (sorted).  A file that
 * cannot be read is a problem too. */
int mt_ruleset_add_path(struct mt_ruleset *rs, const char *path, int user);
/* The rules compiled into the binary (rules/defs/). */
int mt_ruleset_add_bundled(struct mt_ruleset *rs);
/* Cross-file checks (duplicate ids, DISABLE targets).  Returns the total
 * number of problems. */
int mt_ruleset_finish(struct mt_ruleset *rs);

/* The first problem as an error ("FILE:LINE: reason"), MT_EINVAL; MT_OK when
 * there is none. */
int mt_ruleset_error(const struct mt_ruleset *rs, struct mt_error *err);

/* A finished rule set from the rule files at `paths` (the user's, evaluated
 * first) and, when `bundled`, the bundled rules.  Returns MT_OK and *out
 * (free with mt_ruleset_free), MT_EINVAL with the first problem as
 * "FILE:LINE: reason", or MT_ENOMEM. */
int mt_ruleset_load_files(const char *const *paths, int npaths, int bundled,
			  struct mt_ruleset **out, struct mt_error *err);

/* The rule with this id, or NULL. */
const struct mt_rule *mt_ruleset_find(const struct mt_ruleset *rs, const char *id);

/* ruleset_text.c: the Markdown reference (docs/RULES.md): format, facts,
 * functions, rules. */
void mt_ruleset_doc(const struct mt_ruleset *rs, struct sbuf *sb);

/* One rule as text (megatune rules show). */
void mt_rule_show(const struct mt_rule *r, struct sbuf *sb);

/* Knobs a SET may choose (fact ids), for docs and checks; the i-th of them
 * in the order the reference lists them, -1 past the last. */
int mt_rule_settable(int fact);
int mt_rule_settable_at(int i);

#endif
