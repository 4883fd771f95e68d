/*
 * fuzz-symbols-replay - run fuzz-symbols' entry point over ELF files and
 * damaged copies of them: each file whole, cut at 16 lengths, and with
 * bytes overwritten at pseudo-random places (a fixed seed, so every run is
 * the same), 64 copies each. A crash or sanitizer report fails the test.
 *
 *   fuzz-symbols-replay FILE...	(make check: programs of this build)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xorshift.h"

#define CUTS 16
#define MUTANTS 64
#define MAX_FILE (8u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	return xorshift64(&rng);
}

int main(int argc, char **argv)
{
	unsigned long runs = 0;

	for (int a = 1; a < argc; a++) {
		FILE *fp = fopen(argv[a], "rb");
		uint8_t *buf, *copy;
		size_t n;

		if (!fp) {
			fprintf(stderr, "fuzz-symbols-replay: cannot open %s\n", argv[a]);
			return 1;
		}
		buf = malloc(MAX_FILE);
		copy = malloc(MAX_FILE);
		n = buf ? fread(buf, 1, MAX_FILE, fp) : 0;
		fclose(fp);
		if (!buf || !copy || !n) {
			fprintf(stderr, "fuzz-symbols-replay: %s: empty or too large\n", argv[a]);
			return 1;
		}
		LLVMFuzzerTestOneInput(buf, n);
		runs++;
		for (int c = 1; c <= CUTS; c++, runs++)
			LLVMFuzzerTestOneInput(buf, n * (size_t)c / (CUTS + 1));
		for (int m = 0; m < MUTANTS; m++, runs++) {
			/* a few bytes, more of them in the headers and tables at
			 * either end of the file, where lengths and offsets live */
			memcpy(copy, buf, n);
			for (int k = 0; k < 1 + m % 8; k++) {
				uint64_t r = next_rand();
				size_t at = (r & 1) ? (size_t)(r >> 8) % (n < 4096 ? n : 4096) :
					    (size_t)(r >> 8) % n;

				if (r & 2)
					at = n - 1 - at % (n < 65536 ? n : 65536);
				copy[at] = (uint8_t)(next_rand() >> 24);
			}
			LLVMFuzzerTestOneInput(copy, n);
		}
		free(buf);
		free(copy);
	}
	printf("fuzz-symbols-replay: %lu inputs from %d files, no crash\n", runs, argc - 1);
	return 0;
}
