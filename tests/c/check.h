/*
 * check.h - the C tests' one assertion: CHECK(cond) counts a pass or prints the
 * failure with its line and counts it; each test's main() prints "N passed, M failed"
 * from the counts and exits nonzero when any failed.
 */
#ifndef PZ_TESTS_CHECK_H
#define PZ_TESTS_CHECK_H

#include <stdio.h>

static int passed, failed;

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (cond)                                                      \
			passed++;                                              \
		else {                                                         \
			failed++;                                              \
			printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                              \
	} while (0)

#endif /* PZ_TESTS_CHECK_H */
