/* SPDX-License-Identifier: MIT */
/* parsed: the result of an import (struct mt_import, import.h): its
 * constructors, which the readers call to add tests and rows, its names and
 * mt_import_free().  It calls no reader; the entry points that choose one are
 * import.c. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mt_import *imp_new(int tool, const char *path)
{
	struct mt_import *im = calloc(1, sizeof(*im));

	if (!im)
		return NULL;
	im->tool = tool;
	copys(im->path, sizeof(im->path), path);
	copys(im->base_name, sizeof(im->base_name), base_name(path));
	return im;
}

void mt_import_free(struct mt_import *im)
{
	int i;

	if (!im)
		return;
	for (i = 0; i < im->nnt; i++)
		free(im->nt[i].rows);
	free(im->nt);
	for (i = 0; i < im->nnvb; i++)
		free(im->nvb[i].v);
	free(im->nvb);
	free(im->gpu);
	for (i = 0; i < im->nwarn; i++)
		free(im->warn[i]);
	free(im->warn);
	free(im);
}

static const char *const tool_names[MT_IMP_TOOL_N] = { "nccl-tests", "nvbandwidth" };

const char *mt_import_tool_name(int tool)
{
	return tool >= 0 && tool < MT_IMP_TOOL_N ? tool_names[tool] : "?";
}

int mt_import_tool_parse(const char *s)
{
	int i;

	for (i = 0; i < MT_IMP_TOOL_N; i++)
		if (!strcmp(s, tool_names[i]))
			return i;
	return -1;
}

const char *mt_nt_layout_name(int layout)
{
	switch (layout) {
	case MT_NT_CURRENT: return "current";
	case MT_NT_OLD: return "old";
	case MT_NT_VERY_OLD: return "very old";
	case MT_NT_JSON: return "json";
	default: return "?";
	}
}

struct mt_nt_test *imp_new_test(struct mt_import *im, int line)
{
	struct mt_nt_test *a, *t;

	if (im->nnt >= 4096)
		return NULL;
	a = realloc(im->nt, (size_t)(im->nnt + 1) * sizeof(*a));
	if (!a)
		return NULL;
	im->nt = a;
	t = &a[im->nnt++];
	memset(t, 0, sizeof(*t));
	t->op = -1;
	t->line = line;
	t->footer_ok = -1;
	t->span = -1;
	t->avg.v = NAN;
	return t;
}

struct mt_nt_row *imp_new_row(struct mt_nt_test *t)
{
	struct mt_nt_row *r;

	if (t->nrows == t->caprows) {
		int cap = t->caprows ? 2 * t->caprows : 32;
		struct mt_nt_row *a;
		if (cap > (1 << 22))
			return NULL;
		a = realloc(t->rows, (size_t)cap * sizeof(*a));
		if (!a)
			return NULL;
		t->rows = a;
		t->caprows = cap;
	}
	r = &t->rows[t->nrows++];
	memset(r, 0, sizeof(*r));
	r->size.v = r->count.v = NAN;
	return r;
}
