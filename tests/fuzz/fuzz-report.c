/* SPDX-License-Identifier: MIT */
/* Fuzz target: the HTML report on arbitrary JSON.  Whatever the document, it
 * is rendered as each of the four kinds the report reads (its schema field
 * replaced; a profile only when it is valid), and the page is complete and carries no input unescaped. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/jsonr.h"
#include "../../reports/html.h"
#include "../../perfmodel/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const schemas[4] = { "megatune.advice/1", "megatune.profile/1",
						"megatune.analysis/1", "megatune.comparison/1" };
	struct mt_error err = MT_ERROR_INIT;
	cJSON *root = NULL;
	int k;

	if (mt_json_parse("fuzz.json", (const char *)data, size, &root, &err) || !cJSON_IsObject(root)) {
		cJSON_Delete(root);
		return 0;
	}
	for (k = 0; k < 4; k++) {
		struct mt_report_in in;
		struct mt_cluster *cl = NULL;
		struct sbuf sb = SBUF_INIT;
		const char *p;
		int scripts = 0;

		cJSON_DeleteItemFromObjectCaseSensitive(root, "schema");
		cJSON_AddStringToObject(root, "schema", schemas[k]);
		memset(&in, 0, sizeof(in));
		if (k == 0) in.advice = root, in.advice_file = "a";
		if (k == 1 && mt_cluster_from_json(root, "p", &cl, &err))
			continue;
		if (k == 1) in.cluster = cl, in.profile_file = "p";
		if (k == 2) in.analysis = root, in.analysis_file = "n";
		if (k == 3) in.compare = root, in.compare_file = "c";
		if (mt_report_check(&in, &err))
			continue;
		mt_report_html(&sb, &in);
		if (!sb.failed) {
			if (!strstr(sb.buf, "</html>"))
				__builtin_trap();
			for (p = sb.buf; (p = strstr(p, "<script")); p++)
				scripts++;
			if (scripts != 1) /* ours; an input's would be escaped */
				__builtin_trap();
		}
		sbuf_release(&sb);
		mt_cluster_free(cl);
	}
	cJSON_Delete(root);
	return 0;
}
