/* SPDX-License-Identifier: MIT */
/* yamlflat: a YAML document (a Megatron-Bridge run_config.yaml, a verl
 * .hydra/config.yaml) as a flat list of dotted paths and scalar values, the
 * form the Bridge and verl job readers (job/bridge.h, job/verl.h) take.
 * Parsed with libyaml; aliases resolve to the node they name.
 *
 *   model:                      model.num_layers            = "32"
 *     num_layers: 32            model.recompute_modules     = "core_attn mlp" (list)
 *     recompute_modules:        model.activation_func._target_ = "torch.nn.functional.silu"
 *     - core_attn               model.rotary_base           = "500000.0"
 *     - mlp
 *
 * A sequence of scalars becomes one item, its words separated by spaces
 * (list set); a sequence of mappings is left out (no knob is one).  Plain
 * null ("null", "~", "") gives an item with null set.  Values of the form
 * ${path} and ${oc.select:path,default} (Hydra / OmegaConf interpolations, as
 * a run's saved config keeps them) are resolved against the document, the
 * default where the path is absent.
 */
#ifndef MT_JOB_YAMLFLAT_H
#define MT_JOB_YAMLFLAT_H

#include <stddef.h>

#include "../lib/err.h"

struct mt_yitem {
	char path[160];
	char val[256];
	int line;       /* 1-based line of the value */
	int list;       /* a sequence of scalars, words separated by ' ' */
	int null;       /* a plain null */
	int quoted;     /* a quoted scalar ('null' is then the word) */
};

struct mt_yflat {
	int n, cap;
	struct mt_yitem *v; /* owned: mt_yflat_free */
	int root_mapping;   /* the document is a mapping */
	int nested;         /* some value of the root is itself a mapping */
};

/* Parse buf (len bytes; `file` names it in messages) into out.  Returns MT_OK,
 * or MT_EINVAL with "FILE:LINE: YAML: <libyaml's problem>" when the text is
 * not YAML.  An empty document gives no items. */
int mt_yaml_flatten(const char *file, const char *buf, size_t len, struct mt_yflat *out,
		    struct mt_error *err);

/* The item at `path`, or NULL. */
const struct mt_yitem *mt_yflat_get(const struct mt_yflat *f, const char *path);

/* 1 when some item's path starts with `prefix` followed by '.' (a section). */
int mt_yflat_has_section(const struct mt_yflat *f, const char *prefix);

void mt_yflat_free(struct mt_yflat *f);

/* 1 for YAML's true words (true, True, TRUE), 0 for false ones, -1 else. */
int mt_yaml_bool(const char *s);

#endif
