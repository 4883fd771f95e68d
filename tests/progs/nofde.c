/* nofde.c - calls spin_nofde (nofde.S), a function without CFI, for
 * SECONDS (default 0.3): usage nofde [SECONDS]. */
#include <stdlib.h>
#include <time.h>

void spin_nofde(unsigned long n);

__attribute__((noinline)) void caller(void)
{
	spin_nofde(1000000);
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		caller();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
