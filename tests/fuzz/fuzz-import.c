/* SPDX-License-Identifier: MIT */
/* Fuzz target: the nccl-tests and nvbandwidth parsers of `megatune import`
 * (text and JSON), with and without --strict, and the profile they build. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "../../import/import.h"
#include "../../perfmodel/profile.h"
#include "../../perfmodel/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(int tool, const struct mt_import_opts *o, const uint8_t *data, size_t size)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_import *im = NULL;
	struct mt_cluster *c = NULL;
	cJSON *doc = NULL;
	char **warn = NULL;
	int nwarn = 0, i;

	if (mt_import_parse(tool, "fuzz.log", (const char *)data, size, o, &im, &err)) {
		if (!err.msg[0] || im)
			__builtin_trap();
		return;
	}
	if (!mt_profile_new("dgx-h100", "fuzz", &doc, &err) &&
	    !mt_import_build(doc, &im, 1, NULL, &warn, &nwarn, &err)) {
		/* what the import adds must be a valid profile, or say why not */
		if (mt_cluster_from_json(doc, "fuzz.json", &c, &err) && !err.msg[0])
			__builtin_trap();
		mt_cluster_free(c);
	}
	for (i = 0; i < nwarn; i++)
		free(warn[i]);
	free(warn);
	cJSON_Delete(doc);
	mt_import_free(im);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct mt_import_opts plain = { -1, 0, 0 }, strict = { 0, 4, 1 };

	one(MT_IMP_NCCL_TESTS, &plain, data, size);
	one(MT_IMP_NCCL_TESTS, &strict, data, size);
	one(MT_IMP_NVBANDWIDTH, &plain, data, size);
	return 0;
}
