/* SPDX-License-Identifier: MIT */
/* Fuzz target: the job readers over any bytes (job/formats.h: Megatron-LM
 * scripts, argument files and arguments blocks, Bridge YAML, summaries and
 * overrides, verl configs and overrides), under three file names that pick
 * the YAML path or not, then the model, job and configuration read from what
 * they return.  Either a job or an error with a message; every argument with
 * a line inside the text and a raw key it points to. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../job/formats.h"
#include "../../job/megatron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "job.sh", "run_config.yaml", "config.yaml" };
	struct mt_jobsrc *s = malloc(sizeof(*s));
	struct mt_megatron_job *mj = malloc(sizeof(*mj));
	size_t k, lines = 1;
	int i, rc;

	if (!s || !mj)
		goto out;
	for (k = 0; k < size; k++)
		lines += data[k] == '\n';
	for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
		struct mt_error err = MT_ERROR_INIT;

		rc = mt_job_read(names[k], (const char *)data, size, s, &err);
		if (rc != MT_OK) {
			if (!err.msg[0])
				__builtin_trap(); /* an error says what */
			continue;
		}
		if (s->n < 0 || s->n > MT_JOBSRC_ARGS || s->nraw < 0 || s->nraw > MT_JOBSRC_ARGS)
			__builtin_trap();
		for (i = 0; i < s->n; i++)
			if (s->line[i] < 0 || (size_t)s->line[i] > lines || s->orig[i] < 0 ||
			    s->orig[i] > s->nraw)
				__builtin_trap();
		memset(&err, 0, sizeof(err));
		if (mt_megatron_job(s, 8, NULL, mj, &err) != MT_OK && !err.msg[0])
			__builtin_trap();
	}
out:
	free(s);
	free(mj);
	return 0;
}
