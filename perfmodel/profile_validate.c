/* SPDX-License-Identifier: MIT */
/* profile_validate: the profile document (profile.h) validated by the
 * reader `megatune advise` uses (mt_cluster_from_json(), cluster.c): into a
 * cluster for the caller, or before it is written.  Finding, loading and
 * building the document are profile.c, which calls no reader of cluster.c. */
#include "profile.h"

#include <stdlib.h>
#include <string.h>

#include "../lib/bundled.h"
#include "../lib/fsutil.h"
#include "cluster.h"

int mt_profile_cluster(const char *spec, const cJSON *doc, struct mt_cluster **out,
		       struct mt_error *err)
{
	const struct mt_bundled *b = mt_is_path(spec) ? NULL : mt_bundled_find("profile", spec);

	return mt_cluster_from_json(doc, b ? b->path : spec, out, err);
}

int mt_profile_write(const cJSON *doc, const char *path, struct mt_error *err)
{
	struct mt_cluster *c = NULL;
	char *text;
	int rc;

	if ((rc = mt_cluster_from_json(doc, path, &c, err)))
		return mt_error_prefix(err, "not writing %s, the profile would be invalid: ",
				       path);
	mt_cluster_free(c);
	text = cJSON_Print(doc);
	if (!text)
		return mt_error_set(err, MT_ENOMEM, "out of memory");
	{
		size_t n = strlen(text);
		char *t = realloc(text, n + 2);
		if (!t) {
			cJSON_free(text);
			return mt_error_set(err, MT_ENOMEM, "out of memory");
		}
		text = t;
		text[n] = '\n';
		text[n + 1] = 0;
		rc = mt_write_atomic(path, text, n + 1, err);
	}
	free(text);
	return rc;
}
