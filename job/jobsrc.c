/* SPDX-License-Identifier: MIT */
/* jobsrc: a job's arguments, looked up and edited (job/script.h). */
#include "script.h"

#include <stdarg.h>
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

void mt_jobsrc_typo(struct mt_jobsrc *s, int line, const char *what, const char *key,
		    const char *like)
{
	char at[32] = "", name[200];
	int i;

	snprintf(name, sizeof(name), ": unknown %s '%.120s':", what, key);
	for (i = 0; i < s->ntypo; i++)
		if (strstr(s->typo[i], name))
			return;
	if (s->ntypo >= MT_JOBSRC_NOTES)
		return;
	if (line > 0)
		snprintf(at, sizeof(at), ":%d", line);
	snprintf(s->typo[s->ntypo++], sizeof(s->typo[0]), "%.200s%s%s did you mean '%.120s'? "
		 "(megatune does not read it: the job is read as if it were not there)", s->file,
		 at, name, like);
}

void mt_jobsrc_note(struct mt_jobsrc *s, const char *fmt, ...)
{
	va_list ap;
	int i;
	char buf[200];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (i = 0; i < s->nnotes; i++)
		if (!strcmp(s->notes[i], buf))
			return;
	if (s->nnotes < MT_JOBSRC_NOTES)
		snprintf(s->notes[s->nnotes++], sizeof(s->notes[0]), "%s", buf);
}

int mt_jobsrc_push(struct mt_jobsrc *s, const char *file, const char *key, size_t klen,
		   const char *val, int line, struct mt_error *err)
{
	if (s->n >= MT_JOBSRC_ARGS)
		return mt_error_set(err, MT_EINVAL, "%s:%d: more than %d arguments", file, line,
				    MT_JOBSRC_ARGS);
	if (klen >= sizeof(s->arg[0].key))
		klen = sizeof(s->arg[0].key) - 1;
	memcpy(s->arg[s->n].key, key, klen);
	s->arg[s->n].key[klen] = '\0';
	snprintf(s->arg[s->n].val, sizeof(s->arg[s->n].val), "%s", val);
	s->line[s->n] = line;
	s->n++;
	return MT_OK;
}
