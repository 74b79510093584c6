/* SPDX-License-Identifier: MIT */
/* Fuzz target: the streaming trace reader (Kineto JSON and megatune.trace/1
 * lines) and the analysis of whatever it read. */
#include <stddef.h>
#include <stdint.h>

#include "../../profiler/analyze.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_trace *t = NULL;
	static const char *const steps[] = { "iteration", NULL };
	struct mt_trace_opts o = { steps };

	if (!mt_trace_read_mem("fuzz.json", data, size, &o, &t, &err)) {
		struct mt_analyze_opts ao = { 0 };
		struct mt_rank_stats r;
		int w;
		for (w = 0; w < 3; w++) {
			ao.window = (enum mt_window)w;
			ao.linked_only = w == 1;
			if (!mt_analyze_rank(t, 0, &ao, &r, &err)) {
				/* the breakdown adds up and nothing is negative */
				if (r.comp + r.exposed_comm + r.exposed_memcpy + r.idle != r.total ||
				    r.idle < 0 || r.busy > r.total || r.exposed_comm > r.comm ||
				    r.idle_host_wait + r.idle_launch + r.idle_unattributed != r.idle)
					__builtin_trap();
			} else if (!err.msg[0]) {
				__builtin_trap();
			}
		}
		mt_trace_free(t);
	} else if (!err.msg[0]) {
		__builtin_trap();
	}
	return 0;
}
