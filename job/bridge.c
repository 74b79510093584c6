/* SPDX-License-Identifier: MIT */
/* bridge: a Megatron-Bridge job as Megatron-LM arguments (job/bridge.h).
 *
 * Names read at Megatron-Bridge 067f987df0 (src/megatron/bridge/training/
 * config.py: ConfigContainer, log_non_default_values; models/gpt/
 * model_config.py: model.transformer.*) and Megatron-LM d98e8a64dd
 * (megatron/training/config/yaml_utils.py: `_target_` / `_call_` / `_args_`
 * for enums, callables and dtypes).
 */
#include "bridge.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/near.h"
#include "../lib/text.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/precision.h"
#include "knobs.h"
#include "yamlflat.h"

/* Sections whose keys megatune reads; the others do not change the step time */
static const char *const timed_sections[] = {
	"model", "train", "ddp", "optimizer", "mixed_precision", "comm_overlap", "dist", "dataset",
	NULL,
};

/* Keys whose Megatron-LM field is another name */
static const struct {
	const char *key, *dest;
} renames[] = {
	{ "train.global_batch_size", "global_batch_size" },
	{ "model.seq_length", "seq_length" },
	{ "dataset.seq_length", "seq_length" },
	{ "dataset.sequence_length", "seq_length" },
	{ "model.num_moe_experts", "num_experts" },
	{ "model.layernorm_epsilon", "norm_epsilon" },
	{ "model.gated_linear_unit", "swiglu" },
	{ "model.rope_scaling", "use_rope_scaling" },
	{ "optimizer.use_distributed_optimizer", "use_distributed_optimizer" },
	{ "dist.use_megatron_fsdp", "use_megatron_fsdp" },
	{ "dist.use_torch_fsdp2", "use_torch_fsdp2" },
	{ "comm_overlap.bucket_size", "ddp_bucket_size" },
	{ "mixed_precision.fp8", "fp8" },
	{ "model.fp8_param", "fp8_param_gather" },
	{ "model.fp4_param", "fp4_param_gather" },
};

/* Keys of the timed sections that Megatron-LM's field of the same name
 * reads, beyond the model section (which passes every field) */
static const char *const same_name[] = {
	"ddp.data_parallel_sharding_strategy", "ddp.overlap_grad_reduce", "ddp.overlap_param_gather",
	"ddp.use_distributed_optimizer", "ddp.use_megatron_fsdp", "ddp.bucket_size",
	"ddp.fp8_param_gather", "ddp.fp4_param_gather", "ddp.reuse_grad_buf_for_mxfp8_param_ag",
	"optimizer.optimizer_cpu_offload", "optimizer.optimizer_offload_fraction",
	"optimizer.reuse_grad_buf_for_mxfp8_param_ag",
	"comm_overlap.tp_comm_overlap",
	"comm_overlap.overlap_p2p_comm", "comm_overlap.overlap_moe_expert_parallel_comm",
	"comm_overlap.delay_wgrad_compute", "mixed_precision.bf16", "mixed_precision.fp16",
	"mixed_precision.fp8_recipe", "mixed_precision.fp8_param_gather", "mixed_precision.fp4",
	"mixed_precision.fp4_recipe", "mixed_precision.fp4_param_gather",
	"mixed_precision.reuse_grad_buf_for_mxfp8_param_ag", "train.micro_batch_size",
	NULL,
};

/* AttnBackend's values (megatron/core/transformer/enums.py @ d98e8a64dd) */
static const char *const attn_backends[] = { "", "flash", "fused", "unfused", "local", "auto" };

static int bridge_in_list(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return 1;
	return 0;
}

static int section_timed(const char *key)
{
	char sec[64];
	size_t l = strcspn(key, ".");

	snprintf(sec, sizeof(sec), "%.*s", (int)(l < sizeof(sec) ? l : sizeof(sec) - 1), key);
	return bridge_in_list(sec, timed_sections);
}

/* mixed_precision as a recipe name (bf16_mixed, bf16_with_fp8_...): the
 * flags job/flags.c prints for that recipe */
static int bridge_precision_recipe(struct mt_jobsrc *s, const char *name, int line, int orig,
			    struct mt_error *err)
{
	int r, rc;

	for (r = 0; r < MT_RECIPE_N; r++)
		if (!strcmp(mt_recipe(r)->bridge, name))
			break;
	if (r == MT_RECIPE_N) {
		if (!strcmp(name, "fp16_mixed"))
			return mt_jobsrc_field(s, "fp16", "True", 0, line, orig, err);
		return mt_error_set(err, MT_EINVAL, "%s:%d: mixed_precision: expected a recipe megatune "
				    "times (bf16_mixed, bf16_with_fp8_delayed_scaling_mixed, "
				    "bf16_with_fp8_current_scaling_mixed, "
				    "bf16_with_fp8_subchannel_scaling_mixed, bf16_with_mxfp8_mixed, "
				    "bf16_with_nvfp4_mixed), got '%s'", s->file, line, name);
	}
	if ((rc = mt_jobsrc_field(s, "bf16", "True", 0, line, orig, err)) || r == MT_RECIPE_BF16)
		return rc;
	/* the recipes keep the weights quantised for the all-gather, blockwise
	 * scaling aside (training/mixed_precision.py @ 067f987df0: fp8_param_gather
	 * True but in bf16_with_fp8_subchannel_scaling_mixed, fp4_param_gather in
	 * bf16_with_nvfp4_mixed), the MXFP8 ones in BF16 through the gradient
	 * buffer (reuse_grad_buf_for_mxfp8_param_ag, line 265) */
	if (r == MT_RECIPE_NVFP4)
		return mt_jobsrc_field(s, "fp4", "e2m1", 0, line, orig, err) ||
		       mt_jobsrc_field(s, "fp4_recipe", "nvfp4", 0, line, orig, err) ||
		       mt_jobsrc_field(s, "fp4_param_gather", "True", 0, line, orig, err);
	return mt_jobsrc_field(s, "fp8", "hybrid", 0, line, orig, err) ||
	       mt_jobsrc_field(s, "fp8_recipe", mt_recipe(r)->megatron, 0, line, orig, err) ||
	       (r != MT_RECIPE_FP8_BLOCKWISE &&
		mt_jobsrc_field(s, "fp8_param_gather", "True", 0, line, orig, err)) ||
	       (r == MT_RECIPE_MXFP8 &&
		mt_jobsrc_field(s, "reuse_grad_buf_for_mxfp8_param_ag", "True", 0, line, orig, err));
}

/* A value as Bridge writes it, in plain words: quotes off, an enum's member
 * ("<AttnBackend.fused: 2>", "{_target_:...AttnBackend.fused,_call_:false}")
 * its name; "" for what no field takes (a function, a dtype) */
static void plain(const char *v, char *out, size_t cap)
{
	size_t l = strlen(v);
	const char *t, *e;

	if (l >= 2 && (v[0] == '\'' || v[0] == '"') && v[l - 1] == v[0]) {
		snprintf(out, cap, "%.*s", (int)(l - 2), v + 1);
		return;
	}
	if (v[0] == '<' || (v[0] == '{' && strstr(v, "_target_"))) {
		out[0] = '\0';
		if (!strncmp(v, "<function", 9) || !(t = strstr(v, "AttnBackend.")))
			return;
		t += 12;
		for (e = t; isalnum((unsigned char)*e) || *e == '_'; e++)
			;
		snprintf(out, cap, "%.*s", (int)(e - t), t);
		return;
	}
	if (!strncmp(v, "torch.", 6)) {
		out[0] = '\0';
		return;
	}
	snprintf(out, cap, "%s", v);
}

/* A key of a timed section megatune does not read: when it resembles one it
 * reads, a typo (job/script.h), named as the job wrote it (a verl path) */
static void near_key(struct mt_jobsrc *s, const char *k, int line, int orig)
{
	static const char *const special[] = {
		"mixed_precision.grad_reduce_in_fp32", "ddp.grad_reduce_in_fp32", NULL,
	};
	const char *written = orig > 0 && orig <= s->nraw ? s->raw[orig - 1].key : k, *dot;
	char like[200];
	struct mt_near nr;
	size_t i;

	if (s->kind == MT_JS_BRIDGE_SUMMARY)
		return;
	/* the bound of a typo from the field's own name, not the section's */
	dot = strrchr(k, '.');
	mt_near_init(&nr, k, strlen(k), mt_near_bound(strlen(dot ? dot + 1 : k)));
	for (i = 0; same_name[i]; i++)
		mt_near_try(&nr, same_name[i]);
	for (i = 0; special[i]; i++)
		mt_near_try(&nr, special[i]);
	for (i = 0; i < sizeof(renames) / sizeof(renames[0]); i++)
		mt_near_try(&nr, renames[i].key);
	for (i = 0; i < MT_KNOB_N; i++)
		if (mt_knobs[i].bridge[0] && mt_knobs[i].megatron[0])
			mt_near_try(&nr, mt_knobs[i].bridge);
	if (!nr.match)
		return;
	dot = strrchr(written, '.');
	if (!strcmp(written, k) || !dot || !strrchr(nr.match, '.'))
		snprintf(like, sizeof(like), "%s", nr.match);
	else
		snprintf(like, sizeof(like), "%.*s%s", (int)(dot - written), written,
			 strrchr(nr.match, '.'));
	mt_jobsrc_typo(s, line, "key", written, like);
}

/* model.attention_backend written as an enum: "._target_" (a member,
 * _call_ false) or "._args_" (the class called with the member's value) */
static int attn_enum(struct mt_jobsrc *s, const char *k, const char *val, int line, int orig,
		     struct mt_error *err)
{
	const char *d;
	int v;

	if (!strcmp(k, "model.attention_backend._args_")) {
		v = atoi(val);
		if (v > 0 && v < (int)(sizeof(attn_backends) / sizeof(attn_backends[0])))
			return mt_jobsrc_field(s, "attention_backend", attn_backends[v], 0, line, orig,
					       err);
		return MT_OK;
	}
	if (!strcmp(k, "model.attention_backend._target_") && (d = strstr(val, "AttnBackend.")))
		return mt_jobsrc_field(s, "attention_backend", d + 12, 0, line, orig, err);
	return MT_OK;
}

/* An OptimizerConfig dtype: torch's name as Bridge writes it ("torch.bfloat16",
 * or {_target_: torch.bfloat16, _call_: false}) or a short one ("bf16"), as
 * Megatron-LM's flag.  The main gradients' is skipped: Megatron-Core reads
 * the DDP buffer's (ddp.grad_reduce_in_fp32) and main_grads_dtype in no
 * other place (perfmodel/optim.h). */
static int bridge_opt_dtype(struct mt_jobsrc *s, const char *k, const char *val, int line, int orig,
		     struct mt_error *err)
{
	char dest[96], v[64];
	size_t l = strlen(val), i;
	int d;

	if (strstr(k, "._call_") || !strncmp(k, "optimizer.main_grads_dtype", 26)) {
		s->nskipped++;
		return MT_OK;
	}
	if (l >= 2 && (val[0] == '\'' || val[0] == '"') && val[l - 1] == val[0])
		snprintf(v, sizeof(v), "%.*s", (int)(l - 2), val + 1);
	else
		snprintf(v, sizeof(v), "%s", val);
	if (!v[0] || !strcmp(v, "None") || !strcmp(v, "null"))
		return MT_OK;
	snprintf(dest, sizeof(dest), "%.*s", (int)strcspn(k + 10, "."), k + 10);
	for (i = 0; i < MT_KNOB_N; i++)
		if (mt_knobs[i].type == MT_KT_OPT_DTYPE && !strcmp(mt_knobs[i].megatron, dest))
			break;
	if (i == MT_KNOB_N) {
		near_key(s, k, line, orig);
		s->nskipped++;
		return MT_OK;
	}
	d = mt_opt_dtype_parse(v);
	return mt_jobsrc_field(s, dest, d >= 0 ? mt_opt_dtype_name(d) : v, 0, line, orig, err);
}

int mt_bridge_item(struct mt_jobsrc *s, const char *key, const char *val, int py, int line,
		   int orig, struct mt_error *err)
{
	char k[160], v[256], dest[128];
	const char *dot;
	size_t i;
	int b;

	if (!strncmp(key, "model.transformer.", 18))
		snprintf(k, sizeof(k), "model.%s", key + 18);
	else
		snprintf(k, sizeof(k), "%s", key);
	if (!strncmp(k, "env_vars.", 9)) { /* the variables Bridge's launcher sets */
		mt_jobsrc_setenv(s, k + 9, val, line);
		return MT_OK;
	}
	if (!section_timed(k)) {
		s->nskipped++;
		return MT_OK;
	}
	if (!strncmp(k, "optimizer.", 10) && (dot = strstr(k, "_dtype")) &&
	    (!dot[6] || !strcmp(dot + 6, "._target_") || !strcmp(dot + 6, "._call_")))
		return bridge_opt_dtype(s, k, val, line, orig, err);
	/* the local layer spec, as a whole or YAML's ._target_: Megatron-LM's own
	 * layers (models/gpt_provider.py @ 067f987df0 local_layer_spec) */
	if (!strncmp(k, "model.transformer_layer_spec", 28) && (!k[28] || !strcmp(k + 28, "._target_"))) {
		if (strstr(val, ".local_layer_spec"))
			return mt_jobsrc_field(s, "transformer_impl", "local", 0, line, orig, err);
		s->nskipped++;
		return MT_OK;
	}
	if (strstr(k, "._"))
		return attn_enum(s, k, val, line, orig, err);
	plain(val, v, sizeof(v));
	if (!v[0] || !strcmp(v, "None") || !strcmp(v, "null"))
		return MT_OK;
	b = mt_yaml_bool(v);
	py = py || v[0] == '[';
	if (!strcmp(k, "mixed_precision"))
		return bridge_precision_recipe(s, v, line, orig, err);
	/* MixedPrecisionConfig.setup() copies the recipe's reuse onto the DDP and
	 * optimizer configs (mixed_precision.py lines 138-161, from config.py line
	 * 2016), and mixed_precision.* cannot follow mixed_precision=<name>: an
	 * override turning it off does not */
	if (b == 0 && (!strcmp(k, "mixed_precision.reuse_grad_buf_for_mxfp8_param_ag") ||
		       !strcmp(k, "ddp.reuse_grad_buf_for_mxfp8_param_ag"))) {
		mt_jobsrc_note(s, "line %d: %s=false is undone by the precision recipe, which copies "
			       "its own onto ddp and the optimizer: read as the recipe sets it", line, k);
		return MT_OK;
	}
	if (b == 0 && (!strcmp(k, "mixed_precision.fp8_param_gather") ||
		       !strcmp(k, "mixed_precision.fp4_param_gather"))) {
		mt_jobsrc_drop(s, !strcmp(k, "mixed_precision.fp8_param_gather") ? "fp8-param-gather" :
			    "fp4-param-gather");
		return MT_OK;
	}
	if (!strcmp(k, "mixed_precision.grad_reduce_in_fp32") || !strcmp(k, "ddp.grad_reduce_in_fp32"))
		return b == 0 ? mt_jobsrc_field(s, "grad_reduce_in_bf16", "True", 0, line, orig, err) : MT_OK;
	/* TransformerConfig's one field for Megatron-LM's two flags of the MLP's
	 * bias fusion (argument_utils.py @ d98e8a64dd lines 316-319 set it from
	 * either); the reader keeps the one the model's MLP has */
	if (!strcmp(k, "model.bias_activation_fusion")) {
		int rc;

		if (b != 0)
			return MT_OK;
		if ((rc = mt_jobsrc_field(s, "bias_swiglu_fusion", "False", 0, line, orig, err)))
			return rc;
		return mt_jobsrc_field(s, "bias_gelu_fusion", "False", 0, line, orig, err);
	}
	if (!strcmp(k, "model.share_embeddings_and_output_weights"))
		return b == 0 ? mt_jobsrc_field(s, "untie_embeddings_and_output_weights", "True", 0, line,
						orig, err) : MT_OK;
	if (!strcmp(k, "model.activation_func") || !strcmp(k, "model.gated_linear_unit") ||
	    !strcmp(k, "model.moe_layer_freq")) {
		if (!strcmp(k, "model.gated_linear_unit"))
			return mt_jobsrc_field(s, "swiglu", v, 0, line, orig, err);
		if (!strcmp(k, "model.moe_layer_freq") && !py && strchr(v, ' ')) {
			char l[256];
			size_t o = 0;

			/* YAML's list words as the Python list Megatron-LM's flag takes */
			l[o++] = '[';
			for (i = 0; v[i] && o + 2 < sizeof(l); i++)
				l[o++] = v[i] == ' ' ? ',' : v[i];
			l[o++] = ']';
			l[o] = '\0';
			return mt_jobsrc_field(s, "moe_layer_freq", l, 0, line, orig, err);
		}
		if (!strcmp(k, "model.moe_layer_freq"))
			return mt_jobsrc_field(s, "moe_layer_freq", v, 0, line, orig, err);
		return MT_OK;
	}
	dest[0] = '\0';
	for (i = 0; i < MT_KNOB_N; i++)
		if (mt_knobs[i].bridge[0] && mt_knobs[i].megatron[0] && !strcmp(mt_knobs[i].bridge, k))
			snprintf(dest, sizeof(dest), "%s", mt_knobs[i].megatron);
	for (i = 0; !dest[0] && i < sizeof(renames) / sizeof(renames[0]); i++)
		if (!strcmp(renames[i].key, k))
			snprintf(dest, sizeof(dest), "%s", renames[i].dest);
	if (!dest[0] && (bridge_in_list(k, same_name) || !strncmp(k, "model.", 6))) {
		dot = strchr(k, '.');
		snprintf(dest, sizeof(dest), "%s", dot + 1);
	}
	if (!dest[0]) {
		near_key(s, k, line, orig);
		s->nskipped++;
		return MT_OK;
	}
	if (!strcmp(dest, "num_query_groups")) {
		int rc = mt_jobsrc_field(s, "group_query_attention", "True", 0, line, orig, err);

		if (rc)
			return rc;
	}
	return mt_jobsrc_field(s, dest, v, py, line, orig, err);
}

/* What Megatron-Core runs where the job says nothing and Megatron-LM's flags
 * differ: the pipeline sends' overlap, off in ModelParallelConfig
 * (core/model_parallel_config.py:385 @ d98e8a64dd), on without
 * --no-overlap-p2p-communication */
static int mcore_defaults(struct mt_jobsrc *s, struct mt_error *err)
{
	int i;

	for (i = 0; i < s->nraw; i++)
		if (!strcmp(s->raw[i].key, "model.overlap_p2p_comm") ||
		    !strcmp(s->raw[i].key, "model.transformer.overlap_p2p_comm") ||
		    !strcmp(s->raw[i].key, "comm_overlap.overlap_p2p_comm"))
			return MT_OK;
	if (s->kind == MT_JS_BRIDGE_OVERRIDES)
		mt_jobsrc_note(s, "model.overlap_p2p_comm is not set: read as Megatron-Core's default "
			       "(off); a recipe with a CommOverlapConfig turns it on with VPP");
	return mt_jobsrc_field(s, "overlap_p2p_comm", "False", 0, 0, 0, err);
}

/* The job's own keys (raw[]) worth keeping for the diffs: the timed
 * sections' scalars and lists */
static int keep_raw(struct mt_jobsrc *s, const char *key, const char *val, int line)
{
	if (!section_timed(key) || strstr(key, "._"))
		return 0;
	return mt_jobsrc_raw(s, key, val, line);
}

int mt_bridge_from_yaml(struct mt_jobsrc *s, const struct mt_yflat *f, struct mt_error *err)
{
	int i, rc, orig;

	for (i = 0; i < f->n; i++) {
		const struct mt_yitem *it = &f->v[i];

		if (it->null)
			continue;
		orig = keep_raw(s, it->path, it->val, it->line);
		if ((rc = mt_bridge_item(s, it->path, it->val, 0, it->line, orig, err)))
			return rc;
	}
	if (s->nraw >= MT_JOBSRC_ARGS)
		mt_jobsrc_note(s, "more than %d keys in the timed sections: the diffs name the first "
			       "%d as written", MT_JOBSRC_ARGS, MT_JOBSRC_ARGS);
	return mcore_defaults(s, err);
}

/* A summary line's section header: "[model] Non-default values ..." or
 * "[train]:"; the name into sec */
static int summary_section(const char *ln, char *sec, size_t cap)
{
	const char *a = strchr(ln, '['), *b;

	while (a) {
		for (b = a + 1; islower((unsigned char)*b) || *b == '_'; b++)
			;
		if (*b == ']' && b > a + 1 && (!strncmp(b, "] Non-default", 13) || !strncmp(b, "]:", 2))) {
			snprintf(sec, cap, "%.*s", (int)(b - a - 1), a + 1);
			return 1;
		}
		a = strchr(a + 1, '[');
	}
	return 0;
}

/* "  field: value  (Mcore default: x)": the field and the value */
static int summary_item(const char *ln, char *field, size_t fcap, char *val, size_t vcap)
{
	const char *c = strstr(ln, ": "), *f, *e;
	size_t l;

	while (c) {
		for (f = c; f > ln && (islower((unsigned char)f[-1]) || isdigit((unsigned char)f[-1]) ||
				      f[-1] == '_'); f--)
			;
		if (f < c && (f == ln || f[-1] == ' ') && islower((unsigned char)*f))
			break;
		c = strstr(c + 1, ": ");
	}
	if (!c)
		return 0;
	snprintf(field, fcap, "%.*s", (int)(c - f), f);
	c += 2;
	e = strstr(c, "  (Mcore default:");
	l = e ? (size_t)(e - c) : strlen(c);
	while (l && (c[l - 1] == '\r' || c[l - 1] == ' '))
		l--;
	snprintf(val, vcap, "%.*s", (int)l, c);
	return 1;
}

int mt_bridge_from_summary(struct mt_jobsrc *s, const char *buf, size_t len, struct mt_error *err)
{
	char ln[1024], sec[64] = "", field[128], val[256], key[200];
	int lineno = 0, in = 0, rules = 0, rc, orig;
	size_t at = 0;

	while (mt_text_line(buf, len, &at, ln, sizeof(ln))) {
		lineno++;
		if (!in) {
			if (strstr(ln, "Configuration Summary (Non-Default Values vs Megatron Core)"))
				in = 1, rules = 0;
		} else if (strstr(ln, "=======")) {
			if (++rules >= 2) /* the rule under the title, then the closing one */
				break;
		} else if (summary_section(ln, sec, sizeof(sec))) {
			;
		} else if (sec[0] && summary_item(ln, field, sizeof(field), val, sizeof(val))) {
			snprintf(key, sizeof(key), "%s.%s", sec, field);
			orig = keep_raw(s, key, val, lineno);
			if ((rc = mt_bridge_item(s, key, val, 1, lineno, orig, err)))
				return rc;
		}
	}
	return s->n ? mcore_defaults(s, err) : MT_OK;
}

int mt_bridge_from_overrides(struct mt_jobsrc *s, struct mt_error *err)
{
	int i, rc;

	for (i = 0; i < s->nraw; i++)
		if ((rc = mt_bridge_item(s, s->raw[i].key, s->raw[i].val, 0, s->raw_line[i], i + 1, err)))
			return rc;
	return mcore_defaults(s, err);
}
