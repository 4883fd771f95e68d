// cxxinline.cc - static C++ helpers inlined into one function: their
// DWARF names are plain DW_AT_names (no linkage name), which binutils'
// addr2line answers with the ELF symbol covering the address the first
// time each inlined copy is asked about, with the DWARF name after.
#include <cstdlib>
#include <time.h>

volatile unsigned long cxxi_sink;

static inline unsigned long mix_step(unsigned long x)
{
	x ^= x >> 13;
	x *= 0x9e3779b97f4a7c15UL;
	return x ^ (x >> 29);
}

static inline unsigned long fold_step(unsigned long acc, unsigned long v)
{
	for (int k = 0; k < 4; k++)
		acc = (acc << 5 | acc >> 59) + (v ^ (unsigned long)k);
	return acc;
}

__attribute__((noinline)) unsigned long churn(unsigned long n)
{
	unsigned long acc = 1;

	for (unsigned long i = 0; i < n; i++)
		acc = fold_step(acc, mix_step(i + cxxi_sink));
	return acc;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.5;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		cxxi_sink += churn(200000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
