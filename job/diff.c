/* SPDX-License-Identifier: MIT */
/* diff: what turns a job into another configuration, in the job's own words
 * (job/diff.h). */
#include "diff.h"

#include <stdio.h>
#include <string.h>

#include "../lib/shell.h"
#include "flags.h"

const struct mt_kv *mt_kv_find(const struct mt_kv *kv, int n, const char *key)
{
	int i;

	for (i = 0; i < n; i++)
		if (!mt_kv_is_note(&kv[i]) && !strcmp(kv[i].key, key))
			return &kv[i];
	return NULL;
}

static void diff_line(struct sbuf *sb, cJSON *arr, const char *indent, char sign, int env,
		      const char *key, const char *val)
{
	struct sbuf line = SBUF_INIT;

	if (env == 2) { /* an override: key=value as one word */
		struct sbuf kv = SBUF_INIT;

		sbuf_addf(&kv, "%s=%s", key, val);
		sbuf_addf(&line, "%c ", sign);
		if (!kv.failed)
			mt_shell_word(&line, kv.buf);
		sbuf_release(&kv);
	} else if (env) {
		sbuf_addf(&line, "%c %s=", sign, key);
		mt_shell_word(&line, val);
	} else {
		sbuf_addf(&line, "%c --%s", sign, key);
		mt_kv_value_words(&line, val);
	}
	if (line.failed) {
		sbuf_release(&line);
		return;
	}
	if (sb)
		sbuf_addf(sb, "%s%s\n", indent, line.buf);
	if (arr)
		cJSON_AddItemToArray(arr, cJSON_CreateString(line.buf));
	sbuf_release(&line);
}

/* Flags of older releases that set what a flag megatune prints sets */
static const char *const aliases[][2] = {
	{ "num-virtual-stages-per-pipeline-rank", "num-layers-per-virtual-pipeline-stage" },
	{ "num-virtual-stages-per-pipeline-rank", "virtual-pipeline-model-parallel-size" },
	{ "moe-flex-dispatcher-backend", "moe-enable-deepep" },
	{ "moe-token-dispatcher-type", "moe-enable-deepep" },
};

/* The flags that turn the job into configuration b, in the job's own words:
 * `a` is megatune's rendering of the job's configuration, `b` of the new
 * one; a flag whose rendering differs is removed as the job wrote it ("-")
 * and added as b has it ("+").  Into sb (text, with indent) and arr (JSON
 * strings); either may be NULL. */
static void diff_flags(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		       const struct mt_kv *a, int na, const struct mt_kv *b, int nb)
{
	int i, k, pass;

	for (pass = 0; pass < 2; pass++) {
		const struct mt_kv *x = pass ? b : a, *y = pass ? a : b;
		int nx = pass ? nb : na, ny = pass ? na : nb;

		for (i = 0; i < nx; i++) {
			const struct mt_kv *o, *n;
			int u;

			if (mt_kv_is_note(&x[i]))
				continue;
			o = mt_kv_find(y, ny, x[i].key);
			if (pass && o)
				continue; /* both: done in the first pass */
			if (o && !strcmp(o->val, x[i].val))
				continue;
			n = pass ? &x[i] : o;
			u = mt_jobsrc_find(src, x[i].key);
			if (n && u >= 0 && !strcmp(src->arg[u].val, n->val))
				continue; /* the job already says it */
			if (u >= 0)
				diff_line(sb, arr, indent, '-', 0, src->arg[u].key, src->arg[u].val);
			for (k = 0; k < (int)(sizeof(aliases) / sizeof(aliases[0])); k++)
				if (!strcmp(aliases[k][0], x[i].key) &&
				    (u = mt_jobsrc_find(src, aliases[k][1])) >= 0)
					diff_line(sb, arr, indent, '-', 0, src->arg[u].key, src->arg[u].val);
			if (n)
				diff_line(sb, arr, indent, '+', 0, n->key, n->val);
		}
	}
}

/* A value with its quotes, brackets and commas off, for comparing how two
 * writers spell it ("[core_attn,mlp]", "core_attn mlp") */
static void norm_value(const char *v, char *out, size_t cap)
{
	size_t o = 0;

	for (; *v && o + 1 < cap; v++) {
		if (*v == '"' || *v == '\'' || *v == '[' || *v == ']')
			continue;
		out[o++] = *v == ',' ? ' ' : *v;
		if (out[o - 1] == ' ' && (o == 1 || out[o - 2] == ' '))
			o--;
	}
	out[o] = '\0';
	if (!strcmp(out, "True"))
		snprintf(out, cap, "true");
	else if (!strcmp(out, "False"))
		snprintf(out, cap, "false");
}

/* The job's own value of an override key (a Hydra prefix ignored), or NULL */
static const struct mt_kv *raw_find(const struct mt_jobsrc *s, const char *key)
{
	int i;

	while (*key == '+')
		key++;
	for (i = s->nraw - 1; i >= 0; i--)
		if (!strcmp(s->raw[i].key, key))
			return &s->raw[i];
	return NULL;
}

/* diff() for a Bridge or verl job: a and b are the two configurations as
 * overrides in the job's format; "-" the key as the job wrote it, "+" the
 * key as the new configuration needs it */
static void diff_assign(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
			const struct mt_kv *a, int na, const struct mt_kv *b, int nb)
{
	int i, pass;
	char x1[256], x2[256];

	for (pass = 0; pass < 2; pass++) {
		const struct mt_kv *x = pass ? b : a, *y = pass ? a : b;
		int nx = pass ? nb : na, ny = pass ? na : nb;

		for (i = 0; i < nx; i++) {
			const struct mt_kv *o, *n, *r;

			if (mt_kv_is_note(&x[i]))
				continue;
			o = mt_kv_find(y, ny, x[i].key);
			if (pass && o)
				continue;
			if (o && !strcmp(o->val, x[i].val))
				continue;
			n = pass ? &x[i] : o;
			r = raw_find(src, x[i].key);
			if (n && r) {
				norm_value(r->val, x1, sizeof(x1));
				norm_value(n->val, x2, sizeof(x2));
				if (!strcmp(x1, x2))
					continue; /* the job already says it */
			}
			if (r)
				diff_line(sb, arr, indent, '-', 2, r->key, r->val);
			if (n)
				diff_line(sb, arr, indent, '+', 2, n->key, n->val);
		}
	}
}

/* The variables configuration b wants that the job lacks or sets otherwise */
void mt_job_env_diff(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		     const struct mt_kv *b, int nb)
{
	int i;

	for (i = 0; i < nb; i++) {
		const char *have = mt_jobsrc_env(src, b[i].key);

		if (mt_kv_is_note(&b[i]) || (have && !strcmp(have, b[i].val)))
			continue;
		if (have)
			diff_line(sb, arr, indent, '-', 1, b[i].key, have);
		diff_line(sb, arr, indent, '+', 1, b[i].key, b[i].val);
	}
}

void mt_job_diff(struct sbuf *sb, cJSON *arr, const char *indent, const struct mt_jobsrc *src,
		 const struct mt_kv *a, int na, const struct mt_kv *b, int nb)
{
	if (src->format == MT_JF_MEGATRON)
		diff_flags(sb, arr, indent, src, a, na, b, nb);
	else
		diff_assign(sb, arr, indent, src, a, na, b, nb);
}
