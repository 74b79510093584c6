/* SPDX-License-Identifier: MIT */
/* testutil: helpers shared by the cmocka unit tests.  Tests run from the
 * repository root (tests/run.sh), so fixture paths are relative to it. */
#ifndef MT_TESTUTIL_H
#define MT_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* |a - b| <= rel * |b| */
#define assert_close(a, b, rel) do { \
	double a_ = (a), b_ = (b); \
	if (!(a_ - b_ <= (rel) * (b_ < 0 ? -b_ : b_) && b_ - a_ <= (rel) * (b_ < 0 ? -b_ : b_))) \
		fail_msg("%s = %.9g, expected %.9g within %.3g%%", #a, a_, b_, 100.0 * (rel)); \
} while (0)

static inline int mt_test_verbose(void)
{
	const char *v = getenv("MT_VERBOSE");
	return v && *v && strcmp(v, "0");
}

#endif
