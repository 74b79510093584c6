/* SPDX-License-Identifier: MIT */
/* megatron_job: a whole Megatron-LM job from its arguments (megatron.h
 * mt_megatron_job): the model from its flags, the GPU count, the configuration
 * through the knob table, the job's settings and the pins. */
#include "megatron.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "../lib/num.h"
#include "../perfmodel/dispatch.h"
#include "../perfmodel/cluster.h"
#include "../perfmodel/eager.h"
#include "../perfmodel/hostmem.h"
#include "../perfmodel/layout.h"
#include "../perfmodel/optim.h"
#include "../perfmodel/recompute.h"
#include "flagtable.h"
#include "knobs.h"
#include "megatron_tables.h"

/* ---- a whole job: model, job, configuration ---- */

static int megatron_at(const struct mt_jobsrc *s, const char *flag)
{
	return mt_jobsrc_find(s, flag);
}

static const char *val(const struct mt_jobsrc *s, const char *flag)
{
	int i = megatron_at(s, flag);

	return i < 0 ? NULL : s->arg[i].val;
}

/* The argument as the job wrote it: a Bridge or verl key with the flag it
 * sets ("model.num_layers (--num-layers)"), or the flag */
static const char *arg_words(const struct mt_jobsrc *s, int i, char *buf, size_t cap)
{
	if (s->orig[i] > 0)
		snprintf(buf, cap, "%.95s (--%.95s)", s->raw[s->orig[i] - 1].key, s->arg[i].key);
	else
		snprintf(buf, cap, "--%.95s", s->arg[i].key);
	return buf;
}

static int bad_at(struct mt_error *err, const struct mt_jobsrc *s, int i, const char *want)
{
	char name[200];

	return mt_error_set(err, MT_EINVAL, "%s:%d: %s: expected %s, got '%s'", s->file,
			    s->line[i], arg_words(s, i, name, sizeof(name)), want, s->arg[i].val);
}

/* An integer flag in [lo, hi]: 1 with *out, 0 when absent, or the error */
static int megatron_get_int(const struct mt_jobsrc *s, const char *flag, long long lo, long long hi,
		   long long *out, struct mt_error *err)
{
	int i = megatron_at(s, flag);
	char want[96];

	if (i < 0)
		return 0;
	if (mt_parse_int(s->arg[i].val, lo, hi, out)) {
		snprintf(want, sizeof(want), "an integer from %lld to %lld", lo, hi);
		bad_at(err, s, i, want);
		return -1;
	}
	return 1;
}

static int get_num(const struct mt_jobsrc *s, const char *flag, double lo, double hi, double *out,
		   struct mt_error *err)
{
	int i = megatron_at(s, flag);
	char want[96];

	if (i < 0)
		return 0;
	if (mt_parse_num_range(s->arg[i].val, lo, hi, out)) {
		snprintf(want, sizeof(want), "a number from %g to %g", lo, hi);
		bad_at(err, s, i, want);
		return -1;
	}
	return 1;
}

/* A capacity factor of flag: get_num() from 0 to 64, then at least 1, which
 * is what megatune times; `what` names it in the error. */
static int get_factor(const struct mt_jobsrc *s, const char *flag, const char *what, double *out,
		      struct mt_error *err)
{
	int rc = get_num(s, flag, 0, 64, out, err);

	if (rc > 0 && *out < 1) {
		bad_at(err, s, megatron_at(s, flag), what);
		return -1;
	}
	return rc;
}

/* --moe-layer-freq: an integer k (every k-th layer) or Megatron's Python
 * list expression ("([0]*3+[1]*58)", "[1]*4+[0]*4", "[0, 1, 1]"): the
 * 0/1 pattern in out (n entries at most). */
struct freq {
	const char *p;
	int bad;
};

static int fq_expr(struct freq *f, unsigned char *out, int cap);

static void fq_ws(struct freq *f)
{
	while (*f->p == ' ')
		f->p++;
}

static int fq_atom(struct freq *f, unsigned char *out, int cap)
{
	int n = 0;

	fq_ws(f);
	if (*f->p == '(') {
		f->p++;
		n = fq_expr(f, out, cap);
		fq_ws(f);
		if (*f->p++ != ')')
			f->bad = 1;
		return n;
	}
	if (*f->p != '[') {
		f->bad = 1;
		return 0;
	}
	f->p++;
	for (;;) {
		fq_ws(f);
		if (*f->p != '0' && *f->p != '1') {
			f->bad = 1;
			return n;
		}
		if (n < cap)
			out[n] = (unsigned char)(*f->p - '0');
		n++;
		f->p++;
		fq_ws(f);
		if (*f->p == ',') {
			f->p++;
			continue;
		}
		if (*f->p++ != ']')
			f->bad = 1;
		return n;
	}
}

static int fq_term(struct freq *f, unsigned char *out, int cap)
{
	int n = fq_atom(f, out, cap), k, r;
	char *e;

	for (;;) {
		fq_ws(f);
		if (*f->p != '*' || f->bad)
			return n;
		f->p++;
		fq_ws(f);
		k = (int)strtol(f->p, &e, 10);
		if (e == f->p || k < 1 || (long)n * k > 1 << 20) {
			f->bad = 1;
			return n;
		}
		f->p = e;
		for (r = 1; r < k; r++) {
			int i;

			for (i = 0; i < n; i++)
				if (r * n + i < cap)
					out[r * n + i] = out[i];
		}
		n *= k;
	}
}

static int fq_expr(struct freq *f, unsigned char *out, int cap)
{
	int n = fq_term(f, out, cap);

	for (;;) {
		fq_ws(f);
		if (*f->p != '+' || f->bad)
			return n;
		f->p++;
		n += fq_term(f, n < cap ? out + n : out, n < cap ? cap - n : 0);
	}
}

static int moe_freq(const struct mt_jobsrc *s, int layers, cJSON *o, struct mt_error *err)
{
	int i = megatron_at(s, "moe-layer-freq"), n, k;
	unsigned char pat[MT_MAX_LAYERS];
	long long every;
	struct freq f;
	cJSON *a;
	char want[128];

	if (i < 0)
		return MT_OK;
	if (!mt_parse_int(s->arg[i].val, 1, 1 << 20, &every)) {
		cJSON_AddNumberToObject(o, "moe_layer_freq", (double)every);
		return MT_OK;
	}
	f.p = s->arg[i].val;
	f.bad = 0;
	n = fq_expr(&f, pat, MT_MAX_LAYERS);
	fq_ws(&f);
	snprintf(want, sizeof(want), "an integer or a list expression of %d zeros and ones "
		 "(e.g. ([0]*3+[1]*%d))", layers, layers > 3 ? layers - 3 : 1);
	if (f.bad || *f.p || n != layers)
		return bad_at(err, s, i, want);
	a = cJSON_AddArrayToObject(o, "moe_layer_freq");
	for (k = 0; a && k < n; k++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber(pat[k]));
	return MT_OK;
}

/* Whether the fusion a flag turns off exists in this job: the arguments
 * block prints every field, and validate_args itself turns off GELU's
 * fusion for SwiGLU models. */
static int fusion_applies(const struct mt_megatron_job *o, const char *flag)
{
	const struct mt_model *m = &o->model;

	if (!strcmp(flag, "no-bias-gelu-fusion"))
		return !m->gated;
	if (!strcmp(flag, "no-bias-swiglu-fusion"))
		return m->gated;
	if (!strcmp(flag, "no-rope-fusion"))
		return !m->learned_pos && !m->no_pos;
	if (!strcmp(flag, "no-masked-softmax-fusion"))
		return o->job.attn_impl == MT_ATTN_UNFUSED;
	return 1;
}

/* The vocabulary: --vocab-size, or the size of a tokenizer megatune knows */
static int vocab_of(const struct mt_jobsrc *s, long long *v, struct mt_error *err)
{
	const char *t = val(s, "tokenizer-type");
	int rc = megatron_get_int(s, "vocab-size", 1, 1 << 24, v, err);

	if (rc)
		return rc < 0 ? -1 : 1;
	if (t && !strcmp(t, "GPT2BPETokenizer")) {
		*v = 50257; /* GPT-2's BPE vocabulary */
		return 1;
	}
	mt_error_set(err, MT_EINVAL, "%s: no vocabulary size: the job gives no --vocab-size and its "
		     "tokenizer (%s) is read from files megatune does not open; give the model's "
		     "Hugging Face config with --model, or add --vocab-size N to the job", s->file,
		     t ? t : "none given");
	return -1;
}

static int job_model(const struct mt_jobsrc *s, struct mt_model *m, char *json, size_t cap,
		     struct mt_error *err)
{
	cJSON *o = cJSON_CreateObject();
	long long iv, layers = 0;
	double dv;
	size_t k;
	int i, rc = MT_OK;
	const char *pos = val(s, "position-embedding-type");
	char flag[96];

	if (!o)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (megatron_at(s, "num-layers") < 0 || megatron_at(s, "hidden-size") < 0 || megatron_at(s, "num-attention-heads") < 0) {
		rc = mt_error_set(err, MT_EINVAL, "%s: no model flags: expected --num-layers, "
				  "--hidden-size and --num-attention-heads in the job (or the model "
				  "with --model)", s->file);
		goto out;
	}
	cJSON_AddStringToObject(o, "schema", "megatune.model/1");
	for (k = 0; k < sizeof(model_keys) / sizeof(model_keys[0]); k++) {
		const char *key = model_keys[k].key;
		size_t c;

		snprintf(flag, sizeof(flag), "%s", key);
		for (c = 0; flag[c]; c++)
			if (flag[c] == '_')
				flag[c] = '-';
		if ((i = megatron_at(s, flag)) < 0)
			continue;
		switch (model_keys[k].type) {
		case 'i':
			if (megatron_get_int(s, flag, 0, 1 << 30, &iv, err) < 0) {
				rc = MT_EINVAL;
				goto out;
			}
			cJSON_AddNumberToObject(o, key, (double)iv);
			if (!strcmp(key, "num_layers"))
				layers = iv;
			break;
		case 'n':
			if (get_num(s, flag, 0, 1e15, &dv, err) < 0) {
				rc = MT_EINVAL;
				goto out;
			}
			cJSON_AddNumberToObject(o, key, dv);
			break;
		case 'b':
			cJSON_AddBoolToObject(o, key, 1);
			break;
		default:
			if (!strcmp(key, "normalization") && strcmp(s->arg[i].val, "LayerNorm") &&
			    strcmp(s->arg[i].val, "RMSNorm")) {
				rc = bad_at(err, s, i, "LayerNorm or RMSNorm");
				goto out;
			}
			cJSON_AddStringToObject(o, key, s->arg[i].val);
		}
	}
	if (megatron_at(s, "group-query-attention") < 0)
		cJSON_DeleteItemFromObjectCaseSensitive(o, "num_query_groups");
	else if (megatron_get_int(s, "num-query-groups", 1, 1 << 20, &iv, err) < 0) {
		rc = MT_EINVAL;
		goto out;
	} else if (megatron_at(s, "num-query-groups") >= 0) {
		cJSON_AddNumberToObject(o, "num_query_groups", (double)iv);
	}
	if (megatron_at(s, "disable-bias-linear") >= 0)
		cJSON_AddBoolToObject(o, "add_bias_linear", 0);
	if (vocab_of(s, &iv, err) < 0) {
		rc = MT_EINVAL;
		goto out;
	}
	cJSON_AddNumberToObject(o, "vocab_size", (double)iv);
	if (pos && strcmp(pos, "learned_absolute") && strcmp(pos, "rope") && strcmp(pos, "yarn") &&
	    strcmp(pos, "none")) {
		rc = bad_at(err, s, megatron_at(s, "position-embedding-type"),
			    "learned_absolute, rope, yarn or none (megatune times these)");
		goto out;
	}
	cJSON_AddStringToObject(o, "position_embedding_type",
				!pos ? "learned_absolute" : !strcmp(pos, "yarn") ? "rope" : pos);
	if (!cJSON_GetObjectItemCaseSensitive(o, "max_position_embeddings")) {
		/* validate_args: the sequence length when not given */
		if (megatron_get_int(s, "seq-length", 1, 1 << 26, &iv, err) > 0)
			cJSON_AddNumberToObject(o, "max_position_embeddings", (double)iv);
	}
	if (cJSON_GetObjectItemCaseSensitive(o, "multi_latent_attention")) {
		/* MLATransformerConfig's defaults (arguments.py: --kv-lora-rank 32,
		 * --qk-head-dim 128, --qk-pos-emb-head-dim 64, --v-head-dim 128) */
		static const struct { const char *k; int v; } mla[] = {
			{ "kv_lora_rank", 32 }, { "qk_head_dim", 128 },
			{ "qk_pos_emb_head_dim", 64 }, { "v_head_dim", 128 },
		};
		for (k = 0; k < sizeof(mla) / sizeof(mla[0]); k++)
			if (!cJSON_GetObjectItemCaseSensitive(o, mla[k].k))
				cJSON_AddNumberToObject(o, mla[k].k, mla[k].v);
	}
	if ((rc = moe_freq(s, (int)layers, o, err)))
		goto out;
	if ((rc = mt_model_from_json(o, s->file, m, err)))
		goto out;
	snprintf(m->name, sizeof(m->name), "%.100s (its flags)", strrchr(s->file, '/') ? strrchr(s->file, '/') + 1 : s->file);
	cJSON_AddStringToObject(o, "name", m->name);
	if (!cJSON_PrintPreallocated(o, json, (int)cap, 1)) {
		rc = mt_error_set(err, MT_EINVAL, "%s: the model of the flags is more than %zu bytes "
				  "as JSON", s->file, cap);
		goto out;
	}
	/* RoPE scaling and the balance loss: what perfmodel/model.c does not read
	 * from megatune.model/1, as job/flags.c writes it */
	if (megatron_at(s, "use-rope-scaling") >= 0) {
		m->rope_scaling = MT_ROPE_LLAMA3;
		m->rope_factor = 8;
		if (get_num(s, "rope-scaling-factor", 1e-6, 1e6, &m->rope_factor, err) < 0)
			rc = MT_EINVAL;
		snprintf(m->rope_type, sizeof(m->rope_type), "llama3");
	} else if ((pos && !strcmp(pos, "yarn")) || (val(s, "rope-type") && !strcmp(val(s, "rope-type"), "yarn"))) {
		m->rope_scaling = MT_ROPE_YARN;
		snprintf(m->rope_type, sizeof(m->rope_type), "yarn");
		if (get_num(s, "rotary-scaling-factor", 1e-6, 1e6, &m->rope_factor, err) < 0 ||
		    get_num(s, "mscale", 0, 1e6, &m->yarn_mscale, err) < 0 ||
		    get_num(s, "mscale-all-dim", 0, 1e6, &m->yarn_mscale_all_dim, err) < 0 ||
		    get_num(s, "yarn-beta-fast", 0, 1e6, &m->yarn_beta_fast, err) < 0 ||
		    get_num(s, "yarn-beta-slow", 0, 1e6, &m->yarn_beta_slow, err) < 0 ||
		    megatron_get_int(s, "yarn-original-max-position-embeddings", 1, 1 << 26, &iv, err) < 0)
			rc = MT_EINVAL;
		else if (megatron_at(s, "yarn-original-max-position-embeddings") >= 0)
			m->rope_orig_max = (int)iv;
	} else if (get_num(s, "rotary-seq-len-interpolation-factor", 1, 1e6, &dv, err) > 0) {
		m->rope_scaling = MT_ROPE_LINEAR;
		m->rope_factor = dv;
		snprintf(m->rope_type, sizeof(m->rope_type), "linear");
	}
	if (val(s, "moe-router-load-balancing-type") &&
	    !strcmp(val(s, "moe-router-load-balancing-type"), "seq_aux_loss"))
		m->seq_aux = 1;
out:
	cJSON_Delete(o);
	return rc;
}

/* The job's GPUs: --gpus, the log's world size, or the launcher's */
static int job_gpus(const struct mt_jobsrc *s, int gpus, struct mt_megatron_job *o,
		    struct mt_error *err)
{
	if (gpus > 0) {
		o->job.gpus = gpus;
		snprintf(o->gpus_from, sizeof(o->gpus_from), "--gpus");
	} else if (s->world_size > 0) {
		o->job.gpus = s->world_size;
		snprintf(o->gpus_from, sizeof(o->gpus_from), "the log's world_size");
	} else if (s->nproc_per_node > 0) {
		o->job.gpus = s->nproc_per_node * (s->nnodes > 0 ? s->nnodes : 1);
		snprintf(o->gpus_from, sizeof(o->gpus_from), "%s: %d per node x %d node%s",
			 s->format == MT_JF_VERL ? "verl's trainer.n_gpus_per_node x trainer.nnodes" :
			 "the launcher", s->nproc_per_node, s->nnodes > 0 ? s->nnodes : 1,
			 s->nnodes > 1 ? "s" : "");
	} else {
		return mt_error_set(err, MT_EINVAL, "%s: no GPU count: the job states no launcher "
				    "--nproc-per-node / --nnodes and no world_size; give --gpus N",
				    s->file);
	}
	return MT_OK;
}

/* The pipeline split, CP groups, flex library and shared-expert overlap:
 * the configuration beyond the knob table, as job/flags.c writes it. */
static int job_config(const struct mt_jobsrc *s, struct mt_megatron_job *o, struct mt_error *err)
{
	struct mt_config *c = &o->cfg;
	const char *v;
	long long iv;
	int i;

	memset(c, 0, sizeof(*c));
	mt_config_settings(&o->job, c);
	if (mt_megatron_read(s->arg, s->n, c, err)) {
		/* name the line of the flag the message names */
		for (i = 0; i < s->n; i++) {
			char pre[112];

			snprintf(pre, sizeof(pre), "--%s:", s->arg[i].key);
			if (!strncmp(err->msg, pre, strlen(pre))) {
				char msg[sizeof(err->msg)], name[200];

				snprintf(msg, sizeof(msg), "%s", err->msg + strlen(pre));
				return mt_error_set(err, MT_EINVAL, "%s:%d: %s:%s", s->file, s->line[i],
						    arg_words(s, i, name, sizeof(name)), msg);
			}
		}
		return mt_error_set(err, MT_EINVAL, "%s: %s", s->file, err->msg);
	}
	if (megatron_at(s, mt_knob_flag(MT_KNOB_VPP, (char[96]){ 0 }, 96)) < 0 && c->split != MT_SPLIT_LAYOUT) {
		if (megatron_get_int(s, "virtual-pipeline-model-parallel-size", 1, 1 << 20, &iv, err) > 0)
			c->vpp = (int)iv;
		else if (megatron_get_int(s, "num-layers-per-virtual-pipeline-stage", 1, 1 << 20, &iv, err) > 0 &&
			 c->pp > 0 && o->model.layers % (c->pp * iv) == 0)
			c->vpp = (int)(o->model.layers / (c->pp * iv));
		if (err->code)
			return MT_EINVAL;
	}
	if ((i = megatron_at(s, "pipeline-model-parallel-layout")) >= 0) {
		if (mt_layout_parse(s->arg[i].val, &o->layout, err))
			return mt_error_set(err, MT_EINVAL, "%s:%d: --%s: %s", s->file, s->line[i],
					    s->arg[i].key, err->msg);
		if (s->layout_mtp_last && !o->layout.mtp && o->model.mtp_layers > 0 &&
		    o->model.mtp_layers < 256) {
			/* LoongForge's conversion puts the model's MTP layers
			 * before the loss (job/loongforge.h) */
			o->layout.m[o->layout.n - 1] = (unsigned char)o->model.mtp_layers;
			o->layout.mtp = o->model.mtp_layers;
			o->layout.mtp_chunk = o->layout.n - 1;
			o->layout.mtp_pos = (int)strlen(s->arg[i].val);
		}
		o->job.pins.layout = &o->layout;
	} else if (megatron_at(s, "decoder-first-pipeline-num-layers") >= 0 ||
		   megatron_at(s, "decoder-last-pipeline-num-layers") >= 0) {
		c->split = MT_SPLIT_FIRST_LAST;
		if (megatron_get_int(s, "decoder-first-pipeline-num-layers", 0, 1 << 20, &iv, err) > 0)
			c->first_layers = (int)iv;
		if (megatron_get_int(s, "decoder-last-pipeline-num-layers", 0, 1 << 20, &iv, err) > 0)
			c->last_layers = (int)iv;
		if (err->code)
			return MT_EINVAL;
	} else if (megatron_at(s, "account-for-embedding-in-pipeline-split") >= 0) {
		c->split = MT_SPLIT_ACCOUNT;
	} else if (megatron_at(s, "account-for-loss-in-pipeline-split") >= 0) {
		c->split = MT_SPLIT_ACCOUNT_LOSS;
	}
	if ((v = val(s, "hierarchical-context-parallel-sizes")))
		c->cp_a2a = atoi(v);
	o->flex_backend = -1;
	if ((v = val(s, "moe-flex-dispatcher-backend"))) {
		if (!strcmp(v, "deepep"))
			o->flex_backend = MT_FLEX_DEEPEP;
		else if (!strcmp(v, "hybridep"))
			o->flex_backend = MT_FLEX_HYBRIDEP;
		else
			return bad_at(err, s, megatron_at(s, "moe-flex-dispatcher-backend"), "deepep or hybridep");
	} else if (megatron_at(s, "moe-enable-deepep") >= 0) { /* before core_v0.14 */
		c->dispatcher = MT_DISPATCH_FLEX;
		o->flex_backend = MT_FLEX_DEEPEP;
	}
	c->shared_overlap = megatron_at(s, "moe-shared-expert-overlap") >= 0;
	if (!o->model.experts) {
		/* a dense model: the arguments block prints expert fields anyway
		 * (ETP = TP, the flex library's default) */
		c->ep = c->etp = 1;
		c->dispatcher = MT_DISPATCH_ALLTOALL;
		c->ep_overlap = c->shared_overlap = 0;
		o->flex_backend = -1;
	} else if (megatron_at(s, "expert-tensor-parallel-size") < 0) {
		c->etp = c->tp; /* validate_args: ETP defaults to TP (arguments.py @ d98e8a64dd, line 587) */
	}
	if (c->dispatcher != MT_DISPATCH_FLEX)
		o->flex_backend = -1;
	return MT_OK;
}

/* The job's own settings: sequence, batch, precision, balance, offloads */
static int job_settings(const struct mt_jobsrc *s, struct mt_megatron_job *o, struct mt_error *err)
{
	struct mt_job *j = &o->job;
	const char *v;
	long long iv;
	double d;
	int i, rc;

	if ((rc = megatron_get_int(s, "seq-length", 1, 1 << 26, &iv, err)) < 0)
		return MT_EINVAL;
	if (!rc && (rc = megatron_get_int(s, "encoder-seq-length", 1, 1 << 26, &iv, err)) < 0)
		return MT_EINVAL;
	if (!rc)
		return mt_error_set(err, MT_EINVAL, "%s: no sequence length: expected --seq-length",
				    s->file);
	j->seq = (int)iv;
	if ((rc = megatron_get_int(s, "global-batch-size", 1, (long long)1e15, &iv, err)) < 0)
		return MT_EINVAL;
	j->gbs = rc ? iv : 0; /* 0: micro-batch x DP, once the configuration is known */
	if (megatron_at(s, "fp4-format") >= 0) {
		j->precision = MT_PREC_NVFP4;
	} else if (megatron_at(s, "fp8-format") >= 0) {
		j->precision = MT_PREC_FP8;
		if ((i = megatron_at(s, "fp8-recipe")) >= 0) {
			int r = mt_fp8_recipe_parse(s->arg[i].val);

			if (r < 0)
				return bad_at(err, s, i, "delayed, tensorwise, blockwise or mxfp8");
			j->fp8_recipe = r;
		}
	}
	j->param_gather_q = megatron_at(s, j->precision == MT_PREC_NVFP4 ? "fp4-param-gather" :
			       "fp8-param-gather") >= 0;
	j->mxfp8_ag_bf16 = megatron_at(s, "reuse-grad-buf-for-mxfp8-param-ag") >= 0;
	if ((v = val(s, "attention-backend")) && (!strcmp(v, "unfused") || !strcmp(v, "local")))
		j->attn_impl = MT_ATTN_UNFUSED;
	/* Megatron-LM's own layers (get_gpt_layer_local_spec) attend with
	 * DotProductAttention: the score matrix materialised, whatever
	 * --attention-backend says (it chooses among Transformer Engine's) */
	if ((v = val(s, "transformer-impl")) && !strcmp(v, "local")) {
		j->attn_impl = MT_ATTN_UNFUSED;
		j->transformer_impl = MT_TI_LOCAL;
	}
	/* the fusions the job turns off: with Megatron-LM's own layers each picks
	 * the eager ops the model times (docs/MODEL.md 4.11) */
	for (i = 0; fusion_bits[i].flag; i++)
		if (megatron_at(s, fusion_bits[i].flag) >= 0 && fusion_applies(o, fusion_bits[i].flag))
			j->fusions_off |= 1u << fusion_bits[i].bit;
	/* validate_args turns the FP32 softmax on with the layer scaling */
	if (megatron_at(s, "attention-softmax-in-fp32") >= 0 || megatron_at(s, "apply-query-key-layer-scaling") >= 0)
		j->softmax_fp32 = 1;
	/* the job's own choice: PyTorch FSDP2 requires the flag (arguments.py @
	 * d98e8a64dd lines 1039-1040), and the model times FSDP2 so anyway (4.3);
	 * Megatron-LM's own layers need it without Apex (job/local.h) whatever
	 * the data parallelism, and are timed with it */
	if (megatron_at(s, "no-gradient-accumulation-fusion") >= 0 &&
	    (megatron_at(s, "use-torch-fsdp2") < 0 || j->transformer_impl == MT_TI_LOCAL))
		j->grad_accum_fusion = 0;
	/* Megatron-LM's default loss fusion, the only one its validate_args
	 * accepts (arguments.py @ d98e8a6 lines 1697-1702); Bridge's default
	 * too (model_parallel_config.py:325) */
	v = val(s, "cross-entropy-fusion-impl");
	j->ce_native = !v || strcmp(v, "te");
	j->moe_grouped_gemm = megatron_at(s, "moe-grouped-gemm") >= 0;
	if ((rc = megatron_get_int(s, "num-distributed-optimizer-instances", 1, 1 << 20, &iv, err)) < 0)
		return MT_EINVAL;
	if (rc)
		j->dist_opt_instances = (int)iv;
	if (megatron_at(s, "defer-embedding-wgrad-compute") >= 0) {
		j->wgrad_defer = 1;
		if ((rc = megatron_get_int(s, "wgrad-deferral-limit", 0, 1 << 20, &iv, err)) < 0)
			return MT_EINVAL;
		j->wgrad_defer_limit = rc ? (int)iv : 0;
	}
	if (megatron_at(s, "moe-router-force-load-balancing") >= 0) {
		j->moe_balance = MT_BAL_FORCED;
	} else if ((rc = get_factor(s, "moe-expert-capacity-factor", "a capacity factor from 1 to "
				    "64 (megatune times token drop at 1 or more)", &d, err)) != 0) {
		if (rc < 0)
			return MT_EINVAL;
		j->moe_balance = MT_BAL_DROP;
		j->moe_capacity = d;
	}
	if ((rc = get_factor(s, "moe-expert-rank-capacity-factor", "a rank budget from 1 to 64 times "
			     "the mean (tokens over it are dropped, and Megatron-LM reruns the step)",
			     &d, err)) < 0)
		return MT_EINVAL;
	if (rc)
		j->moe_rank_budget = d;
	if (megatron_at(s, "optimizer-cpu-offload") >= 0) {
		j->opt_offload = 1;
		if ((rc = get_num(s, "optimizer-offload-fraction", 0, 1, &d, err)) < 0)
			return MT_EINVAL;
		if (rc)
			j->opt_offload = d;
	}
	if (megatron_at(s, "fine-grained-activation-offloading") >= 0 && (i = megatron_at(s, "offload-modules")) >= 0) {
		char list[256], badm[64];
		size_t c;

		snprintf(list, sizeof(list), "%s", s->arg[i].val);
		for (c = 0; list[c]; c++)
			if (list[c] == ' ')
				list[c] = ',';
		if (mt_offload_modules_parse(list, &j->offload_modules, badm, sizeof(badm)))
			return bad_at(err, s, i, "modules among attn_norm, qkv_linear, core_attn, "
				      "attn_proj, mlp_norm, expert_fc1, moe_act");
	}
	return MT_OK;
}

/* Every knob pinned to the job's value: estimate evaluates the job as it is,
 * and a search from it frees the knobs it changes. */
static void pin_all(struct mt_megatron_job *o)
{
	struct mt_job *j = &o->job;
	const struct mt_config *c = &o->cfg;
	int k;

	for (k = 0; k < MT_KNOB_N; k++) {
		long long v;

		if (mt_knobs[k].cfg < 0 || mt_knobs[k].type == MT_KT_DISPATCHER)
			continue;
		v = mt_knob_cfg(c, k);
		if (v == MT_UNSET)
			continue;
		if (((k == MT_KNOB_RC_LAYERS || k == MT_KNOB_RC_METHOD) &&
		     c->recompute != MT_RC_FULL) ||
		    (k == MT_KNOB_RC_MODULES && c->recompute != MT_RC_SELECTIVE) ||
		    (k == MT_KNOB_CP_COMM && c->cp <= 1) ||
		    (k == MT_KNOB_EP_OVERLAP && !o->model.experts) ||
		    (k == MT_KNOB_VPP && c->split == MT_SPLIT_LAYOUT))
			continue;
		mt_knob_set_pin(j, k, (int)v);
	}
	j->pins.p2p_overlap = !c->p2p_blocking;
	if (o->model.experts)
		j->moe_dispatcher = c->dispatcher;
}

int mt_megatron_job(const struct mt_jobsrc *s, int gpus, const struct mt_model *given,
		    struct mt_megatron_job *o, struct mt_error *err)
{
	int i, rc;

	memset(o, 0, sizeof(*o));
	mt_job_init(&o->job);
	o->job.fp8_recipe = MT_FP8_DELAYED;
	/* a LoongForge job: its fork's flags, and its spelling in the diffs */
	if (s->loongforge || mt_jobsrc_find(s, "model-name") >= 0 ||
	    mt_jobsrc_find(s, "custom-pipeline-layers") >= 0 || mt_jobsrc_find(s, "offload-tensors") >= 0)
		o->job.megatron_version = mt_release_find(MT_FLAG_MEGATRON, "loongforge") + 1;
	if (given)
		o->model = *given;
	if ((!given && (rc = job_model(s, &o->model, o->model_json, sizeof(o->model_json), err))) || (rc = job_gpus(s, gpus, o, err)) ||
	    (rc = job_settings(s, o, err)) || (rc = job_config(s, o, err))) {
		/* what a typo left at its default may be the cause */
		if (s->ntypo && err && strlen(err->msg) + 8 < sizeof(err->msg))
			snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
				 " (and %s)", s->typo[0]);
		return rc;
	}
	if (!o->job.gbs) { /* Megatron-LM: micro-batch x data-parallel size */
		long rest = (long)o->cfg.tp * o->cfg.pp * o->cfg.cp;

		if (rest > 0 && o->job.gpus % rest == 0)
			o->job.gbs = (int64_t)o->cfg.mbs * (o->job.gpus / rest);
		else
			o->job.gbs = o->cfg.mbs;
	}
	pin_all(o);
	if (o->cfg.split == MT_SPLIT_FIRST_LAST || o->cfg.split == MT_SPLIT_ACCOUNT ||
	    o->cfg.split == MT_SPLIT_ACCOUNT_LOSS) {
		o->job.split = o->cfg.split;
		o->job.split_first = o->cfg.first_layers;
		o->job.split_last = o->cfg.last_layers;
	}
	for (i = 0; i < s->n; i++) {
		int fc = mt_megatron_flag_class(s->arg[i].key);

		if (fc == MT_FC_UNKNOWN)
			o->unknown[o->nunknown++] = i;
		else if (fc == MT_FC_NOT_TIMED)
			o->nnot_timed++;
		else if (fc == MT_FC_FUSION_OFF && o->nfusion_off < 16 && fusion_applies(o, s->arg[i].key) &&
			 o->job.transformer_impl != MT_TI_LOCAL) /* timed with the local layers */
			o->fusion_off[o->nfusion_off++] = i;
	}
	return MT_OK;
}
