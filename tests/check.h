/* check.h - the unit tests' CHECK: count a failure and say where and what, go on. */
#ifndef PERFHUB_TESTS_CHECK_H
#define PERFHUB_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) do { \
	if (!(cond)) { \
		failures++; \
		printf("FAIL %s:%d: ", __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
	} \
} while (0)

/* The exit status and last line of a test program. */
static inline int check_done(const char *name)
{
	if (failures)
		printf("%s: %d check(s) failed\n", name, failures);
	else
		printf("%s: all checks passed\n", name);
	return failures ? 1 : 0;
}

#endif
