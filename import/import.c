/* SPDX-License-Identifier: MIT */
/* import: the parsed result (import.h) and the entry points that choose the
 * reader of a file by tool and by its first character (text or JSON). */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"

#define MAX_FILE_BYTES (512u << 20)

/* ------------------------------------------------------------------ */
/* results */

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

/* ------------------------------------------------------------------ */
/* entry points */

int mt_import_parse(int tool, const char *path, const char *text, size_t len,
		    const struct mt_import_opts *o, struct mt_import **out, struct mt_error *err)
{
	static const struct mt_import_opts dflt = { -1, 0, 0 };
	struct mt_import *im;
	const char *p = text, *end = text + len;
	int rc;

	*out = NULL;
	if (!o)
		o = &dflt;
	if (tool < 0 || tool >= MT_IMP_TOOL_N)
		return mt_error_set(err, MT_EUSAGE, "unknown tool: expected nccl-tests or nvbandwidth");
	if (!(im = imp_new(tool, path)))
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	if (len >= 3 && !memcmp(p, "\xef\xbb\xbf", 3))
		p += 3;
	while (p < end && isspace((unsigned char)*p))
		p++;
	if (p < end && *p == '{') {
		cJSON *root = NULL;
		im->json = 1;
		if ((rc = mt_json_parse(path, text, len, &root, err)))
			goto fail;
		if (tool == MT_IMP_NCCL_TESTS) {
			if (mt_jget(root, "nvbandwidth"))
				rc = mt_error_set(err, MT_EINVAL, "%s: this is nvbandwidth JSON, not "
						  "nccl-tests: use 'megatune import nvbandwidth'", path);
			else if (!cJSON_IsObject(root) || (!mt_jget(root, "results") && !mt_jget(root, "config")))
				rc = mt_error_set(err, MT_EINVAL, "%s: not an nccl-tests JSON file (-J): "
						  "expected an object with 'config' and 'results'", path);
			else
				rc = imp_parse_nt_json(im, root, o, err);
		} else {
			if (mt_jget(root, "results") || mt_jget(root, "config"))
				rc = mt_error_set(err, MT_EINVAL, "%s: this is nccl-tests JSON, not "
						  "nvbandwidth: use 'megatune import nccl-tests'", path);
			else if (!mt_jget(root, "nvbandwidth"))
				rc = mt_error_set(err, MT_EINVAL, "%s: not an nvbandwidth JSON file (-j): "
						  "expected an object with 'nvbandwidth'", path);
			else
				rc = imp_parse_nvb_json(im, root, o, err);
		}
		cJSON_Delete(root);
	} else if (tool == MT_IMP_NCCL_TESTS) {
		rc = imp_parse_nt_text(im, text, len, o, err);
	} else {
		rc = imp_parse_nvb_text(im, text, len, o, err);
	}
	if (rc)
		goto fail;
	*out = im;
	return MT_OK;
fail:
	mt_import_free(im);
	return rc;
}

int mt_import_file(int tool, const char *path, const struct mt_import_opts *o,
		   struct mt_import **out, struct mt_error *err)
{
	char *data = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	if ((rc = mt_read_file(path, MAX_FILE_BYTES, &data, &len, err)))
		return rc;
	rc = mt_import_parse(tool, path, data, len, o, out, err);
	free(data);
	return rc;
}
