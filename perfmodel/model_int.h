/* SPDX-License-Identifier: MIT */
/* model_int: the config readers (perfmodel/model_read.c) that
 * mt_model_from_json() (model.c) chooses between by the file's "schema";
 * private to those two files.
 *
 * Each fills *m, which the caller has cleared, from the JSON object o (file
 * names it in messages) and returns MT_OK, or MT_EINVAL naming the file, the
 * field and what was expected; the caller then validates and counts the
 * record (mt_model_finish). */
#ifndef MT_MODEL_INT_H
#define MT_MODEL_INT_H

#include <cjson/cJSON.h>

#include "../lib/err.h"
#include "model.h"

/* A Hugging Face config.json (no "schema" field). */
int mt_model_read_hf(const cJSON *o, const char *file, struct mt_model *m, struct mt_error *err);

/* A megatune.model/1 file: Megatron-LM argument names. */
int mt_model_read_megatune(const cJSON *o, const char *file, struct mt_model *m,
			   struct mt_error *err);

#endif
