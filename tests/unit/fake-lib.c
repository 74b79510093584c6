/* SPDX-License-Identifier: MIT */
/* A shared library with nothing in it but one function, for t-dlsearch: copied under
 * fake toolkit and wheel folders to test where lib/dlsearch.h finds a library.  Built as
 * $(BUILD)/tests/libmtfake.so with the soname libmtfake.so.1. */
int mtfake_answer(void);

int mtfake_answer(void)
{
	return 42;
}
