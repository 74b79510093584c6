/* SPDX-License-Identifier: MIT */
/* import: the entry points that choose the reader of a file by tool and by
 * its first character (text or JSON); the result they fill is parsed.c. */
#include "internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/fsutil.h"
#include "../lib/jsonr.h"

#define MAX_FILE_BYTES (512u << 20)

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
