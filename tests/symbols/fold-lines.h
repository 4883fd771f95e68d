/* fold-lines.h - a pd_fold_foreach callback that appends "stack count\n"
 * to a growing string (*ctx, a char *), for comparing folds. */
#ifndef PERFHUB_TESTS_FOLD_LINES_H
#define PERFHUB_TESTS_FOLD_LINES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int collect(void *ctx, const char *stack, uint64_t count)
{
	char **out = ctx;
	size_t o = *out ? strlen(*out) : 0, n = strlen(stack) + 32;
	char *p = realloc(*out, o + n);

	if (!p)
		return 1;
	snprintf(p + o, n, "%s %llu\n", stack, (unsigned long long)count);
	*out = p;
	return 0;
}

#endif
