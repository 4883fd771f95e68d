/* calls.c - a known call tree for symbolization tests: main -> outer_a ->
 * middle_b -> leaf_spin, main -> outer_c -> recurse(depth) -> leaf_spin,
 * and a call into a shared library (usage: calls [SECONDS [DEPTH]]).
 * Built with frame pointers, no
 * inlining, so `perf record -g` sees every frame. */
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

int lib_work(int n);	/* libsymlib.so */

volatile unsigned long sink;

__attribute__((noinline)) void leaf_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

__attribute__((noinline)) void middle_b(unsigned long n)
{
	leaf_spin(n);
}

__attribute__((noinline)) void outer_a(unsigned long n)
{
	middle_b(n);
}

__attribute__((noinline)) void recurse(int depth, unsigned long n)
{
	if (depth > 0)
		recurse(depth - 1, n);
	else
		leaf_spin(n);
}

static int chain_depth = 5;

__attribute__((noinline)) void outer_c(unsigned long n)
{
	recurse(chain_depth, n);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;

	if (argc > 2)	/* deeper stacks for benchmarks */
		chain_depth = atoi(argv[2]);
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		outer_a(400000);
		outer_c(200000);
		sink += (unsigned long)lib_work(20000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
