/* SPDX-License-Identifier: MIT */
/* Fuzz target: the Megatron-family log parser over any bytes, fed whole and
 * in uneven chunks.  Both must agree, and what it reads must be sane: steps
 * positive and finite, a failure with its evidence line, line counts that
 * cover the steps.  Then the validation reader over the same bytes. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/jsonr.h"
#include "../../validate/logparse.h"
#include "../../validate/validation.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_logparse *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct mt_error err = MT_ERROR_INIT;
	struct mt_validation v;
	cJSON *root = NULL;
	size_t i, step = size % 13 + 1;
	int k;

	if (!a || !b)
		return 0;
	mt_logparse_init(a);
	mt_logparse_init(b);
	mt_logparse_feed(a, (const char *)data, size);
	mt_logparse_finish(a);
	for (i = 0; i < size; i += step)
		mt_logparse_feed(b, (const char *)data + i, size - i < step ? size - i : step);
	mt_logparse_finish(b);
	if (a->nstep != b->nstep || a->failure != b->failure || a->lineno != b->lineno ||
	    a->evidence_lineno != b->evidence_lineno)
		__builtin_trap();
	for (k = 0; k < a->nstep; k++)
		if (!(a->step_s[k] > 0 && isfinite(a->step_s[k])) || a->step_s[k] != b->step_s[k])
			__builtin_trap();
	if (a->failure && (a->evidence_lineno < 1 || a->evidence_lineno > a->lineno))
		__builtin_trap();
	if (mt_vstatus_name(mt_logparse_status(a)) == NULL)
		__builtin_trap();
	free(a);
	free(b);
	if (!mt_json_parse("fuzz.json", (const char *)data, size, &root, &err)) {
		if (!mt_validation_read(root, "fuzz.json", "--validation", &v, &err))
			mt_validation_free(&v);
		cJSON_Delete(root);
	}
	return 0;
}
