/* SPDX-License-Identifier: MIT */
/* argblock: the arguments block of a Megatron-LM log, and the argparse
 * fields of every reader as flags (script.h). */
#include "script.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/text.h"
#include "yamlflat.h"

/* argparse fields whose flag is not the field with dashes.  neg: a field
 * that is True by default, set False by the flag. */
static const struct {
	const char *dest, *flag;
	int neg;
} dest_flags[] = {
	{ "fp8", "fp8-format", 0 },
	{ "fp4", "fp4-format", 0 },
	{ "add_bias_linear", "disable-bias-linear", 1 },
	{ "overlap_p2p_comm", "no-overlap-p2p-communication", 1 },
	{ "gradient_accumulation_fusion", "no-gradient-accumulation-fusion", 1 },
	{ "add_position_embedding", "no-position-embedding", 1 },
	{ "masked_softmax_fusion", "no-masked-softmax-fusion", 1 },
	{ "bias_gelu_fusion", "no-bias-gelu-fusion", 1 },
	{ "bias_swiglu_fusion", "no-bias-swiglu-fusion", 1 },
	{ "bias_dropout_fusion", "no-bias-dropout-fusion", 1 },
	{ "apply_rope_fusion", "no-rope-fusion", 1 },
	{ "use_gloo_process_groups", "disable-gloo-process-groups", 1 },
	{ "check_for_nan_in_loss_and_grad", "no-check-for-nan-in-loss-and-grad", 1 },
	{ "virtual_pipeline_model_parallel_size", "virtual-pipeline-model-parallel-size", 0 },
	{ "ckpt_fully_parallel_save", "no-ckpt-fully-parallel-save", 1 },
};

/* Fields the block prints that no flag sets (derived by validate_args, or
 * the process's own): not arguments. */
static const char *const derived_fields[] = {
	"world_size", "data_parallel_size", "rank", "local_rank", "params_dtype",
	"padded_vocab_size", "consumed_train_samples", "consumed_valid_samples",
	"variable_seq_lengths", "iteration", "transformer_pipeline_model_parallel_size",
	"encoder_num_layers", "decoder_num_layers", NULL,
};

static int argblock_in_list(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return 1;
	return 0;
}

/* A Python str() value as flag words: lists lose brackets, quotes and
 * commas ("['core_attn', 'mlp']" -> "core_attn mlp"), an enum member its
 * class ("AttnBackend.fused" -> "fused"). */
static void py_words(const char *v, char *out, size_t cap)
{
	size_t o = 0;
	const char *d;

	if (*v == '[' || *v == '(') {
		for (v++; *v && o + 1 < cap; v++) {
			if (*v == ']' || *v == ')' || *v == '\'' || *v == '"')
				continue;
			if (*v == ',') {
				out[o++] = ' ';
				while (v[1] == ' ')
					v++;
				continue;
			}
			out[o++] = *v;
		}
		out[o] = '\0';
		return;
	}
	d = strchr(v, '.');
	if (d && isupper((unsigned char)*v) && !strchr(d + 1, '.') && !isdigit((unsigned char)d[1])) {
		const char *q;

		for (q = v; q < d && isalnum((unsigned char)*q); q++)
			;
		if (q == d)
			v = d + 1;
	}
	snprintf(out, cap, "%s", v);
}

int mt_jobsrc_field(struct mt_jobsrc *s, const char *dest, const char *v, int py, int line,
		    int orig, struct mt_error *err)
{
	char flag[96], words[256];
	size_t i;
	int neg = 0, b, rc, n0 = s->n;

	if (argblock_in_list(dest, derived_fields) || dest[0] == '_' || (py && !strcmp(v, "None")))
		return MT_OK;
	snprintf(flag, sizeof(flag), "%s", dest);
	for (i = 0; flag[i]; i++)
		if (flag[i] == '_')
			flag[i] = '-';
	for (i = 0; i < sizeof(dest_flags) / sizeof(dest_flags[0]); i++)
		if (!strcmp(dest, dest_flags[i].dest)) {
			snprintf(flag, sizeof(flag), "%s", dest_flags[i].flag);
			neg = dest_flags[i].neg;
		}
	b = mt_yaml_bool(v); /* Python's True/False, YAML's too */
	if (b >= 0) {
		if (b == !neg)
			rc = mt_jobsrc_push(s, s->file, flag, strlen(flag), "", line, err);
		else
			return MT_OK;
	} else {
		if (!strcmp(dest, "moe_layer_freq") || !py)
			snprintf(words, sizeof(words), "%s", v);
		else
			py_words(v, words, sizeof(words));
		if (!strcmp(words, "") && (*v == '[' || *v == '('))
			return MT_OK; /* an empty list: nothing set */
		rc = mt_jobsrc_push(s, s->file, flag, strlen(flag), words, line, err);
	}
	if (!rc && s->n > n0)
		s->orig[s->n - 1] = orig;
	return rc;
}

static int argblock_line(struct mt_jobsrc *s, const char *ln, int lineno, struct mt_error *err)
{
	const char *dots = strstr(ln, " ..."), *name, *ne, *val;
	char dest[96], v[256];
	size_t len;

	if (!dots)
		return MT_OK;
	for (ne = dots; ne > ln && ne[-1] == ' '; ne--)
		;
	for (name = ne; name > ln && !isspace((unsigned char)name[-1]); name--)
		;
	len = (size_t)(ne - name);
	if (!len || len >= sizeof(dest))
		return MT_OK;
	memcpy(dest, name, len);
	dest[len] = '\0';
	for (val = dots + 1; *val == '.'; val++)
		;
	while (*val == ' ')
		val++;
	len = strlen(val);
	while (len && (val[len - 1] == '\r' || val[len - 1] == ' '))
		len--;
	snprintf(v, sizeof(v), "%.*s", (int)len, val);
	if (!v[0]) /* str('') of a field set to an empty string: nothing set */
		return MT_OK;
	if (!strcmp(dest, "world_size")) {
		s->world_size = atoi(v);
		return MT_OK;
	}
	return mt_jobsrc_field(s, dest, v, 1, lineno, 0, err);
}

/* 1 when the line is `name ....` with nothing after the dots: the name into
 * name[cap] */
static int no_value(const char *ln, char *name, size_t cap)
{
	const char *d = strstr(ln, " ..."), *n;

	if (!d)
		return 0;
	for (n = d; n > ln && !isspace((unsigned char)n[-1]); n--)
		;
	snprintf(name, cap, "%.*s", (int)(d - n), n);
	d += strspn(d, " .");
	return !d[strspn(d, " \r\t")];
}

/* The first block read through before any of it is: a block without its end
 * line (the log cut while Megatron-LM printed it, or a second block started
 * before it ended) is refused, its fields after the cut would read as their
 * defaults.  MT_OK, or MT_EINVAL naming the block's last line. */
static int argblock_cut(const char *file, const char *buf, size_t len, struct mt_error *err)
{
	int lineno = 0, in = 0, last = 0, next = 0;
	char ln[1024], lastln[160] = "", name[96];
	size_t at = 0;

	while (mt_text_line(buf, len, &at, ln, sizeof(ln))) {
		lineno++;
		if (strstr(ln, "--- arguments ---") && in) {
			next = lineno;
			break;
		}
		if (strstr(ln, "--- arguments ---"))
			in = 1;
		else if (in && strstr(ln, "end of arguments"))
			return MT_OK;
		else if (in && ln[strspn(ln, " \r\t")]) {
			last = lineno;
			snprintf(lastln, sizeof(lastln), "%s", ln + strspn(ln, " \t"));
			lastln[strcspn(lastln, "\r")] = '\0';
		}
	}
	if (!last)
		return MT_OK; /* an empty block: "holds no argument" */
	if (next)
		return mt_error_set(err, MT_EINVAL, "%s:%d: the arguments block is cut: a second block "
				    "starts at line %d before the first ends (no 'end of arguments' "
				    "line after '%s'); nothing is read from a cut block: give the "
				    "log of one whole start, or the launch script", file, last, next,
				    lastln);
	if (no_value(lastln, name, sizeof(name)))
		return mt_error_set(err, MT_EINVAL, "%s:%d: the arguments block is cut: field '%s' "
				    "has no value and no 'end of arguments' line follows (the log "
				    "ends inside the block); nothing is read from a cut block: give "
				    "the whole log, or the launch script", file, last, name);
	return mt_error_set(err, MT_EINVAL, "%s:%d: the arguments block is cut: the log ends "
			    "after this line ('%s') with no 'end of arguments' line; nothing is "
			    "read from a cut block: give the whole log, or the launch script", file,
			    last, lastln);
}

static int argblock(const char *buf, size_t len, struct mt_jobsrc *s, struct mt_error *err)
{
	int lineno = 0, in = 0, blocks = 0, rc;
	char ln[1024];
	size_t at = 0;

	while (mt_text_line(buf, len, &at, ln, sizeof(ln))) {
		lineno++;
		if (strstr(ln, "--- arguments ---")) {
			if (blocks++) {
				mt_jobsrc_note(s, "line %d: a second arguments block (a restart?) is not read; "
				     "the first is", lineno);
				break;
			}
			in = 1;
			continue;
		}
		if (in && strstr(ln, "end of arguments")) {
			in = 0;
			continue;
		}
		if (in && (rc = argblock_line(s, ln, lineno, err)))
			return rc;
	}
	return MT_OK;
}

int mt_jobsrc_argblock(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		       struct mt_error *err)
{
	int rc = argblock_cut(file, buf, len, err);

	return rc ? rc : argblock(buf, len, s, err);
}
