/* SPDX-License-Identifier: MIT */
/* advice_config: a candidate's `config` object back into struct mt_config
 * (advisor/advice.h, docs/FORMATS.md section 3). */
#include "advice.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../lib/jsonr.h"

static int get_int(const cJSON *o, const char *key, int required, int lo, int *out,
		   const char *file, const char *where, struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v) {
		if (required)
			return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': missing (expected an "
					    "integer >= %d)", file, where, key, lo);
		return MT_OK;
	}
	if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo ||
	    v->valuedouble > 1e9)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected an integer >= %d", file,
				    where, key, lo);
	*out = (int)v->valuedouble;
	return MT_OK;
}

static int get_bool(const cJSON *o, const char *key, int *out, const char *file,
		    const char *where, struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!v)
		return MT_OK;
	if (!cJSON_IsBool(v))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected true or false", file,
				    where, key);
	*out = cJSON_IsTrue(v);
	return MT_OK;
}

static int get_enum(const cJSON *o, const char *key, int (*parse)(const char *), int *out,
		    const char *want, const char *file, const char *where, struct mt_error *err)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
	int x;

	if (!v)
		return MT_OK;
	if (!cJSON_IsString(v) || (x = parse(v->valuestring)) < 0)
		return mt_error_set(err, MT_EINVAL, "%s: field '%s.%s': expected %s", file, where, key,
				    want);
	*out = x;
	return MT_OK;
}

static int split_parse(const char *s)
{
	static const char *const n[] = { "even", "account_embedding_and_loss", "account_loss",
					 "first_last" };
	int i;

	for (i = 0; i < 4; i++)
		if (!strcmp(s, n[i]))
			return i;
	return -1;
}

static int dtype_fp32(const char *s)
{
	return !strcmp(s, "fp32") ? 1 : !strcmp(s, "bf16") ? 0 : -1;
}

int mt_advice_config(const cJSON *o, const struct mt_job *job, const char *file,
		     const char *where, struct mt_config *c, struct mt_error *err)
{
	int rc, bucket = -1;

	memset(c, 0, sizeof(*c));
	if (!cJSON_IsObject(o))
		return mt_error_set(err, MT_EINVAL, "%s: field '%s': expected the configuration object",
				    file, where);
	mt_config_settings(job, c);
	c->vpp = c->ep = c->etp = 1;
	c->dist_opt = 1;
	if ((rc = get_int(o, "tp", 1, 1, &c->tp, file, where, err)) ||
	    (rc = get_int(o, "pp", 1, 1, &c->pp, file, where, err)) ||
	    (rc = get_int(o, "cp", 1, 1, &c->cp, file, where, err)) ||
	    (rc = get_int(o, "mbs", 1, 1, &c->mbs, file, where, err)) ||
	    (rc = get_int(o, "vpp", 0, 1, &c->vpp, file, where, err)) ||
	    (rc = get_int(o, "ep", 0, 1, &c->ep, file, where, err)) ||
	    (rc = get_int(o, "etp", 0, 1, &c->etp, file, where, err)) ||
	    (rc = get_int(o, "dp", 0, 1, &c->dp, file, where, err)) ||
	    (rc = get_int(o, "edp", 0, 1, &c->edp, file, where, err)) ||
	    (rc = get_int(o, "num_microbatches", 0, 1, &c->num_mb, file, where, err)) ||
	    (rc = get_int(o, "recompute_layers", 0, 0, &c->recompute_layers, file, where, err)) ||
	    (rc = get_int(o, "offload_layers", 0, 0, &c->offload_layers, file, where, err)) ||
	    (rc = get_int(o, "bucket_size_params", 0, 0, &bucket, file, where, err)) ||
	    (rc = get_int(o, "first_stage_layers", 0, 0, &c->first_layers, file, where, err)) ||
	    (rc = get_int(o, "last_stage_layers", 0, 0, &c->last_layers, file, where, err)) ||
	    (rc = get_bool(o, "sequence_parallel", &c->sp, file, where, err)) ||
	    (rc = get_bool(o, "distributed_optimizer", &c->dist_opt, file, where, err)) ||
	    (rc = get_bool(o, "tp_comm_overlap", &c->tp_overlap, file, where, err)) ||
	    (rc = get_bool(o, "overlap_grad_reduce", &c->overlap_grad, file, where, err)) ||
	    (rc = get_bool(o, "overlap_param_gather", &c->overlap_param, file, where, err)) ||
	    (rc = get_bool(o, "cross_entropy_fusion", &c->fused_ce, file, where, err)) ||
	    (rc = get_enum(o, "recompute", mt_recompute_parse, &c->recompute,
			   "none, selective or full", file, where, err)) ||
	    (rc = get_enum(o, "cp_comm_type", mt_cp_comm_parse, &c->cp_comm,
			   "p2p, all_gather, a2a or a2a+p2p", file, where, err)) ||
	    (rc = get_enum(o, "grad_reduce_dtype", dtype_fp32, &c->grad_fp32, "bf16 or fp32", file,
			   where, err)) ||
	    (rc = get_enum(o, "pipeline_split", split_parse, &c->split,
			   "even, account_embedding_and_loss, account_loss or first_last", file,
			   where, err)))
		return rc;
	if (bucket >= 0)
		c->bucket_params = bucket;
	if (c->recompute == MT_RC_FULL && c->recompute_layers == 0)
		c->recompute_layers = MT_ALL_LAYERS;
	return MT_OK;
}
