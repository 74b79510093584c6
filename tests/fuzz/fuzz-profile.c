/* SPDX-License-Identifier: MIT */
/* Fuzz target: the cluster-profile reader and its look-ups. */
#include <stddef.h>
#include <stdint.h>

#include "../../lib/jsonr.h"
#include "../../perfmodel/cluster.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cluster *c = NULL;
	cJSON *root = NULL;

	if (!mt_json_parse("fuzz.json", (const char *)data, size, &root, &err) &&
	    !mt_cluster_from_json(root, "fuzz.json", &c, &err)) {
		/* look-ups on whatever loaded stay finite and non-negative */
		double r = mt_gemm_time(c, MT_DT_BF16, 4096, 4096, 4096);
		double t = mt_coll_time(c, MT_COLL_ALL_GATHER, 8, 8, 1e6) +
			   mt_coll_time(c, MT_COLL_ALL_REDUCE, 64, 1, 1e9);
		if (!(r >= 0 && t >= 0 && r < 1e30 && t < 1e30))
			__builtin_trap();
		mt_cluster_free(c);
	} else if (!err.msg[0]) {
		__builtin_trap();
	}
	cJSON_Delete(root);
	return 0;
}
