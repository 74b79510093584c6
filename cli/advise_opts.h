/* SPDX-License-Identifier: MIT */
/* advise_opts: the options of advise and estimate (cli/advise_opts.c), one
 * table each from the groups they share: the job, the pins and settings of
 * job/knobs.def, the rules and the output; estimate adds --stage.  They fill
 * struct advise_args; cli/cmd_advise.c checks what the options say together. */
#ifndef MT_CLI_ADVISE_OPTS_H
#define MT_CLI_ADVISE_OPTS_H

#include "../perfmodel/config.h"
#include "../perfmodel/layout.h"
#include "opts.h"

/* F_NONE: nothing of the format's own on stdout (--json - or --report - has it);
 * F_MEGATRON to F_SLURM in the order of enum mt_flags_form (tuner/advise.h) */
enum out_format { F_TEXT, F_JSON, F_MEGATRON, F_BRIDGE, F_VERL, F_ENV, F_TORCHRUN, F_SLURM, F_NONE };

#define MAX_RULE_PATHS 16

struct advise_args {
	const char *model, *cluster, *json, *report;
	int format;
	struct mt_job job;
	const char *rule_paths[MAX_RULE_PATHS];
	int nrule_paths;
	int no_rules;
	int strict;              /* --strict: a typo in the model's config is an error */
	int recipe_given;        /* --fp8-recipe was given */
	int flex_backend;        /* --moe-flex-backend: enum mt_flex_backend + 1, 0 the profile's */
	struct mt_layout layout; /* --pp-layout, when given (job.pins.layout points here) */
	int stage;               /* estimate --stage: the stage whose memory table is printed;
				  * -1: the most loaded */
};

/* The tables of cli_spec_advise and cli_spec_estimate (cli/cli.h) */
extern const struct cli_opt cli_advise_opts[];
extern const struct cli_opt cli_estimate_opts[];
/* The names of --format (enum out_format) and of --moe-flex-backend
 * (enum mt_flex_backend + 1) */
extern const char *const cli_advise_formats[];
extern const char *const cli_advise_flex[];

#endif
