/* SPDX-License-Identifier: MIT */
/* Fuzz target: the readers of `megatune compare` (every kind of the table:
 * probe results, profiles, analyses, advice, nccl-tests and nvbandwidth
 * text), a comparison of what was read with itself, and every rendering. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../compare/compare.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_error err = MT_ERROR_INIT;
	struct mt_cmp_opts o = { .tolerance_pct = 5, .confidence_pct = 99 };
	struct mt_comparison c;
	struct mt_cm_set s;
	struct sbuf sb = SBUF_INIT;
	int i;

	if (mt_cm_parse("fuzz.log", (const char *)data, size, &s, &err)) {
		if (!err.msg[0])
			__builtin_trap();
		mt_cm_set_free(&s);
		return 0;
	}
	if (!mt_compare_sets(&s, &s, &o, &c, &err)) {
		/* a document against itself: nothing regressed, nothing unmatched */
		if (c.counts[0] || c.nonly_baseline || c.nonly_current || c.nmetrics != s.n)
			__builtin_trap();
		for (i = 0; i < c.nmetrics; i++)
			if (strcmp(c.metrics[i].verdict, "unchanged") &&
			    strcmp(c.metrics[i].verdict, "inconclusive"))
				__builtin_trap();
		c.baseline_file = c.current_file = "fuzz.log";
		mt_comparison_json(&sb, &c);
		mt_compare_text(&sb, &c, 1);
		mt_compare_junit(&sb, &c);
		mt_compare_markdown(&sb, &c);
		mt_compare_free(&c);
	}
	sbuf_release(&sb);
	mt_cm_set_free(&s);
	return 0;
}
