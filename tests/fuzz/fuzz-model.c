/* SPDX-License-Identifier: MIT */
/* Fuzz target: model config readers (Hugging Face and megatune formats).
 * Any input must end in a model or an error message, never a crash. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/jsonr.h"
#include "../../perfmodel/model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_model m;
	cJSON *root = NULL;

	if (!mt_json_parse("fuzz.json", (const char *)data, size, &root, &err)) {
		if (!mt_model_from_json(root, "fuzz.json", &m, &err)) {
			/* a model that loads has sane, finite counts */
			if (m.params_total <= 0 || m.layers <= 0 || m.layers > MT_MAX_LAYERS)
				__builtin_trap();
			(void)mt_model_step_flops(&m, 1, 128, mt_model_padded_vocab(&m, 1),
						  MT_FLOPS_MEGATRON);
		} else if (!err.msg[0]) {
			__builtin_trap(); /* an error must say what is wrong */
		}
	} else if (!err.msg[0]) {
		__builtin_trap();
	}
	cJSON_Delete(root);
	return 0;
}
