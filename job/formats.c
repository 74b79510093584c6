/* SPDX-License-Identifier: MIT */
/* formats: the reader of a job's text, whatever its format (job/formats.h). */
#include "formats.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../lib/fsutil.h"
#include "../lib/sbuf.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/dispatch.h"
#include "../perfmodel/model.h"

#include "bridge.h"
#include "megatron.h"
#include "loongforge.h"
#include "verl.h"
#include "yamlflat.h"

static const char *const bridge_sections[] = {
	"model", "train", "ddp", "optimizer", "mixed_precision", "comm_overlap", "dist", "dataset",
	"checkpoint", "logger", "scheduler", "tokenizer", "rng", "validation", "profiling", NULL,
};
static const char *const verl_sections[] = {
	"actor_rollout_ref", "critic", "trainer", "data", "algorithm", "reward_model", NULL,
};

/* 1 when key's first segment is one of l */
static int first_in(const char *key, const char *const *l)
{
	size_t n = strcspn(key, ".=");

	for (; *l; l++)
		if (strlen(*l) == n && !strncmp(key, *l, n))
			return 1;
	return 0;
}

static int contains(const char *buf, size_t len, const char *w)
{
	size_t i, n = strlen(w);

	for (i = 0; i + n <= len; i++)
		if (buf[i] == w[0] && !memcmp(buf + i, w, n))
			return 1;
	return 0;
}

static int formats_ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);

	return a >= b && !strcmp(s + a - b, suf);
}

/* The first line that is not a comment or blank is "key:" alone or
 * "key: value": YAML, not shell */
static int looks_like_yaml(const char *buf, size_t len)
{
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *q;

		if (!nl)
			nl = end;
		for (q = p; q < nl && (*q == ' ' || *q == '\t'); q++)
			;
		if (q < nl && *q != '#' && *q != '\r') {
			for (; q < nl && (isalnum((unsigned char)*q) || *q == '_'); q++)
				;
			return q < nl && *q == ':' && (q + 1 == nl || q[1] == ' ' || q[1] == '\r');
		}
		p = nl + 1;
	}
	return 0;
}

static int from_yaml(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		     struct mt_error *err)
{
	struct mt_yflat f;
	int rc, named = formats_ends_with(file, ".yaml") || formats_ends_with(file, ".yml"), i;
	char keys[200];
	size_t o = 0;

	if (!named && !looks_like_yaml(buf, len))
		return 1;
	if (mt_yaml_flatten(file, buf, len, &f, err))
		return named ? -1 : (memset(err, 0, sizeof(*err)), 1);
	if (f.root_mapping && (mt_yflat_has_section(&f, "actor_rollout_ref") ||
			       mt_yflat_has_section(&f, "critic"))) {
		s->kind = MT_JS_VERL_YAML;
		s->format = MT_JF_VERL;
		rc = mt_verl_read(s, &f, err) ? -1 : 0;
	} else if (f.root_mapping && mt_yflat_has_section(&f, "model") &&
		   (mt_yflat_has_section(&f, "train") || mt_yflat_has_section(&f, "ddp") ||
		    mt_yflat_has_section(&f, "optimizer"))) {
		s->kind = MT_JS_BRIDGE_YAML;
		s->format = MT_JF_BRIDGE;
		rc = mt_bridge_from_yaml(s, &f, err) ? -1 : 0;
	} else if (f.root_mapping && (named || f.nested)) {
		keys[0] = '\0';
		for (i = 0; i < f.n && o < sizeof(keys) - 1; i++) {
			size_t l = strcspn(f.v[i].path, ".");

			if (i && !strncmp(f.v[i - 1].path, f.v[i].path, l) &&
			    strcspn(f.v[i - 1].path, ".") == l)
				continue;
			o += (size_t)snprintf(keys + o, sizeof(keys) - o, "%s%.*s", o ? ", " : "", (int)l,
					      f.v[i].path);
		}
		rc = -1;
		mt_error_set(err, MT_EINVAL, "%s:1: YAML that is neither a Megatron-Bridge config "
			     "(run_config.yaml: sections model and train, ddp or optimizer) nor a verl "
			     "config (actor_rollout_ref or critic); its top-level keys: %s", file,
			     keys[0] ? keys : "none");
	} else if (named) {
		rc = -1;
		mt_error_set(err, MT_EINVAL, "%s:1: expected a YAML mapping of sections (a "
			     "Megatron-Bridge run_config.yaml or a verl config)", file);
	} else {
		rc = 1;
	}
	mt_yflat_free(&f);
	return rc;
}

static int from_overrides(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
			  struct mt_error *err)
{
	int i, verl = 0, bridge = 0, rc;
	struct mt_yflat f;

	if (mt_jobsrc_overrides(file, buf, len, s, err))
		return -1;
	if (!strncmp(s->entry, "pretrain_", 9))
		return 1; /* Megatron-LM's own training script: its flags */
	for (i = 0; i < s->nraw; i++) {
		verl += first_in(s->raw[i].key, verl_sections);
		bridge += first_in(s->raw[i].key, bridge_sections);
	}
	if (verl) {
		s->kind = MT_JS_VERL_OVERRIDES;
		s->format = MT_JF_VERL;
		if (mt_verl_items(s, &f, err))
			return -1;
		rc = mt_verl_read(s, &f, err) ? -1 : 0;
		mt_yflat_free(&f);
		return rc;
	}
	if (bridge) {
		s->kind = MT_JS_BRIDGE_OVERRIDES;
		s->format = MT_JF_BRIDGE;
		return mt_bridge_from_overrides(s, err) ? -1 : 0;
	}
	return 1;
}

static int read_any(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		    struct mt_error *err)
{
	static const char summary[] = "Configuration Summary (Non-Default Values vs Megatron Core)";
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->file, sizeof(s->file), "%s", file);
	if (contains(buf, len, "--- arguments ---"))
		return mt_jobsrc_read(file, buf, len, s, err);

	if (contains(buf, len, summary)) {
		s->kind = MT_JS_BRIDGE_SUMMARY;
		s->format = MT_JF_BRIDGE;
		if (mt_bridge_from_summary(s, buf, len, err))
			return -1;
		if (!s->n)
			return mt_error_set(err, MT_EINVAL, "%s: Megatron-Bridge's configuration summary "
					    "names no field megatune reads (expected [model], [ddp] and "
					    "[train] sections)", file);
		return MT_OK;
	}
	if ((rc = from_yaml(file, buf, len, s, err)) <= 0 ||
	    (rc = from_overrides(file, buf, len, s, err)) <= 0)
		return rc < 0 ? MT_EINVAL : MT_OK;
	/* none of them: Megatron-LM's own arguments, LoongForge's among them */
	if ((rc = mt_jobsrc_read(file, buf, len, s, err)))
		return rc;
	return mt_loongforge_read(s, err);
}

int mt_job_read(const char *file, const char *buf, size_t len, struct mt_jobsrc *s,
		struct mt_error *err)
{
	int rc = read_any(file, buf, len, s, err);

	if (!rc)
		mt_megatron_typos(s);
	return rc;
}

int mt_job_read_path(const char *path, size_t max, char **buf, size_t *len, struct mt_error *err)
{
	struct sbuf sb = SBUF_INIT;
	char chunk[65536];
	size_t n;

	if (strcmp(path, "-"))
		return mt_read_file(path, max, buf, len, err);
	while ((n = fread(chunk, 1, sizeof(chunk), stdin)) > 0) {
		sbuf_add(&sb, chunk, n);
		if (sb.len > max) {
			sbuf_release(&sb);
			return mt_error_set(err, MT_EINVAL, "standard input: more than %zu bytes", max);
		}
	}
	sbuf_adds(&sb, "");
	if (sb.failed) {
		sbuf_release(&sb);
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	}
	*buf = sbuf_detach(&sb, len);
	return MT_OK;
}

int mt_job_model(const struct mt_jobsrc *s, const char *given, struct mt_model *m,
		 struct mt_error *err)
{
	char path[600], why[MT_ERROR_MSG_MAX];
	const char *p = s->model_path, *home = getenv("HOME");
	struct stat st;

	if (given)
		return mt_model_load(given, m, err);
	if (!p[0])
		return MT_OK;
	if (p[0] == '~' && p[1] == '/' && home)
		snprintf(path, sizeof(path), "%s%s", home, p + 1);
	else
		snprintf(path, sizeof(path), "%s", p);
	/* a directory holds config.json; a Hugging Face id with no such file
	 * here (meta-llama/Meta-Llama-3-8B) is read as the bundled model it
	 * stands for, by mt_model_load */
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		size_t l = strlen(path);

		snprintf(path + l, sizeof(path) - l, "/config.json");
	}
	if (mt_model_load(path, m, err)) {
		snprintf(why, sizeof(why), "%s", err->msg);
		return mt_error_set(err, MT_EINVAL, "%s:%d: the model %s cannot be read (%s): give "
				    "the model with --model (a name megatune bundles or a Hugging "
				    "Face config.json)", s->file, s->model_path_line, p, why);
	}
	return MT_OK;
}

int mt_job_load(const char *path, const char *model, int gpus, size_t max, char **buf,
		size_t *len, struct mt_jobsrc *src, struct mt_megatron_job *mj,
		struct mt_error *err)
{
	struct mt_model *given = malloc(sizeof(*given));
	int rc;

	if (!given)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (!(rc = mt_job_read_path(path, max, buf, len, err)) &&
	    !(rc = mt_job_read(!strcmp(path, "-") ? "<stdin>" : path, *buf, *len, src, err)) &&
	    !(rc = mt_job_model(src, model, given, err)))
		rc = mt_megatron_job(src, gpus, model || src->model_path[0] ? given : NULL, mj, err);
	free(given);
	return rc;
}

int mt_job_cluster(const struct mt_megatron_job *mj, const struct mt_jobsrc *src,
		   struct mt_cluster *c, const char *cluster, struct mt_error *err)
{
	if (mj->flex_backend >= 0 && mt_dispatch_use_backend(&c->dispatch, mj->flex_backend))
		return mt_error_set(err, MT_EINVAL, "%s: --moe-flex-dispatcher-backend %s: profile "
				    "%s has no moe_dispatch point of that library", src->file,
				    mt_flex_backend_name(mj->flex_backend), cluster);
	return MT_OK;
}
