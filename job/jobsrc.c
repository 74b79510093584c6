/* SPDX-License-Identifier: MIT */
/* jobsrc: a job's arguments, looked up and edited (job/script.h). */
#include "script.h"

#include <stdio.h>
#include <string.h>

int mt_jobsrc_find(const struct mt_jobsrc *s, const char *flag)
{
	int i;

	for (i = s->n - 1; i >= 0; i--)
		if (!strcmp(s->arg[i].key, flag))
			return i;
	return -1;
}

const char *mt_jobsrc_env(const struct mt_jobsrc *s, const char *name)
{
	int i;

	for (i = 0; i < s->nenv; i++)
		if (!strcmp(s->env[i].key, name))
			return s->env[i].val;
	return NULL;
}

int mt_jobsrc_raw(struct mt_jobsrc *s, const char *key, const char *val, int line)
{
	if (s->nraw >= MT_JOBSRC_ARGS)
		return 0;
	snprintf(s->raw[s->nraw].key, sizeof(s->raw[0].key), "%s", key);
	snprintf(s->raw[s->nraw].val, sizeof(s->raw[0].val), "%s", val);
	s->raw_line[s->nraw] = line;
	return ++s->nraw;
}

void mt_jobsrc_drop(struct mt_jobsrc *s, const char *flag)
{
	int i, k = 0;

	for (i = 0; i < s->n; i++) {
		if (!strcmp(s->arg[i].key, flag))
			continue;
		s->arg[k] = s->arg[i];
		s->line[k] = s->line[i];
		s->orig[k] = s->orig[i];
		k++;
	}
	s->n = k;
}
