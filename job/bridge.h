/* SPDX-License-Identifier: MIT */
/* bridge: a Megatron-Bridge job read into Megatron-LM arguments (struct
 * mt_jobsrc), so that job/megatron.h times it as any other job.  Bridge's
 * ConfigContainer hands Megatron-Core the same TransformerConfig, DDP and
 * optimizer fields Megatron-LM's flags set, so each key is the argparse
 * field of its name, with the few renames Bridge's providers make
 * (num_moe_experts, layernorm_epsilon, gated_linear_unit, ...).
 *
 * Three forms, each read by its own function (the dispatcher is
 * mt_jobsrc_other, job/formats.c):
 *  - the ConfigContainer as YAML (run_config.yaml saved with each
 *    checkpoint, or logger.save_config_filepath): sections model (flat, or
 *    model.transformer.* in newer releases), train, ddp, optimizer,
 *    mixed_precision (a recipe name or a MixedPrecisionConfig), comm_overlap,
 *    dist, dataset; `_target_` mappings for enums and callables;
 *  - the "Configuration Summary (Non-Default Values vs Megatron Core)" Bridge
 *    prints at start-up (ConfigContainer.log_non_default_values, v0.4.0 on):
 *    `[model] Non-default values ...` then `  field: repr  (Mcore default:
 *    repr)` lines, then `[train]:` ... with Python repr() values;
 *  - override lists (`section.field=value`, as `advise --format bridge`
 *    prints them), one per line or on a script's command line.
 * Sections that do not change the step time (checkpoint, logger, scheduler,
 * rng, validation, tokenizer, ...) are counted in s->nskipped.
 */
#ifndef MT_JOB_BRIDGE_H
#define MT_JOB_BRIDGE_H

#include <stddef.h>

#include "../lib/err.h"
#include "script.h"
#include "yamlflat.h"

/* One Bridge key (`model.num_layers`, `ddp.overlap_grad_reduce`,
 * `mixed_precision`) and its value into s's arguments.  py: the value is
 * Python's repr() (the summary); else YAML's words.  `orig` as
 * mt_jobsrc_field.  MT_OK, or MT_EINVAL naming the key and what it
 * expected (an unknown mixed_precision recipe). */
int mt_bridge_item(struct mt_jobsrc *s, const char *key, const char *val, int py, int line,
		   int orig, struct mt_error *err);

/* The whole of a ConfigContainer YAML, flattened (job/yamlflat.h). */
int mt_bridge_from_yaml(struct mt_jobsrc *s, const struct mt_yflat *f, struct mt_error *err);

/* The configuration summary in a log (buf, len). */
int mt_bridge_from_summary(struct mt_jobsrc *s, const char *buf, size_t len,
			   struct mt_error *err);

/* The overrides in s->raw (mt_jobsrc_overrides read them). */
int mt_bridge_from_overrides(struct mt_jobsrc *s, struct mt_error *err);

#endif
