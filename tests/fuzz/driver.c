/* SPDX-License-Identifier: MIT */
/* A main() for the fuzz targets when libFuzzer is not used: run the target
 * once on each file named on the command line (the seed corpus, in
 * `make test`), so the harness and the corpus are exercised by every build. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../lib/fsutil.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		struct mt_error err = MT_ERROR_INIT;
		char *data;
		size_t len, cut;

		if (mt_read_file(argv[i], 64u << 20, &data, &len, &err)) {
			fprintf(stderr, "%s\n", err.msg);
			return 2;
		}
		LLVMFuzzerTestOneInput((const uint8_t *)data, len);
		/* every prefix length class: truncations are the commonest damage */
		for (cut = 0; cut < len; cut += 1 + len / 64)
			LLVMFuzzerTestOneInput((const uint8_t *)data, cut);
		free(data);
	}
	printf("%d inputs\n", argc - 1);
	return 0;
}
