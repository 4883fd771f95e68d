/*
 * test-symtab.c - a finished symbol table answers every address as a
 * scan of its symbols does. Tables of sized, non-overlapping symbols
 * (read from perf's JIT map format) from a few to thousands, packed
 * tight, sparse, spread over the whole address space (a kernel-like span:
 * the search index widens its blocks), clustered, and one whose last
 * symbol reaches far past the block it starts in, are asked about
 * every symbol's first byte, last byte and the bytes either side, gaps
 * and random addresses; the name and the offset must be the scan's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "symtab.h"
#include "../xorshift.h"

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

typedef struct sym { uint64_t start, size; } sym;

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	return xorshift64(&rng);
}

/* the scan: the symbol holding addr, or -1 */
static long scan(const sym *v, size_t n, uint64_t addr)
{
	for (size_t i = 0; i < n; i++)
		if (addr >= v[i].start && addr - v[i].start < v[i].size)
			return (long)i;
	return -1;
}

static void ask(pd_symtab *t, const sym *v, size_t n, uint64_t addr, const char *what)
{
	long want = scan(v, n, addr);
	uint64_t off = UINT64_MAX;
	const char *got = pd_symtab_lookup(t, addr, &off);
	char name[32];

	if (want < 0) {
		CHECK(!got, "%s: %zu symbols, 0x%" PRIx64 " is in none, found %s", what, n, addr, got);
		return;
	}
	snprintf(name, sizeof(name), "s%ld", want);
	CHECK(got && !strcmp(got, name) && off == addr - v[want].start,
	      "%s: %zu symbols, 0x%" PRIx64 " is %s+%" PRIu64 ", found %s+%" PRIu64, what, n, addr,
	      name, addr - v[want].start, got ? got : "nothing", off);
}

/* v: sorted, not overlapping */
static void check_table(const sym *v, size_t n, const char *what)
{
	char path[] = "/tmp/test-symtab-XXXXXX";
	int fd = mkstemp(path);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	pd_symtab *t = pd_symtab_new();

	if (!fp || !t) {
		CHECK(0, "setup failed");
		return;
	}
	/* in a shuffled order: the table sorts them */
	for (size_t k = 0; k < n; k++) {
		size_t i = (k * 7919) % n;

		fprintf(fp, "%" PRIx64 " %" PRIx64 " s%zu\n", v[i].start, v[i].size, i);
	}
	fclose(fp);
	CHECK(pd_symtab_add_perfmap(t, path) == 0, "%s: reading the map", what);
	unlink(path);
	pd_symtab_finish(t, 0);
	CHECK(pd_symtab_count(t) == n, "%s: %zu symbols kept of %zu", what, pd_symtab_count(t), n);
	for (size_t i = 0; i < n; i++) {
		ask(t, v, n, v[i].start, what);
		ask(t, v, n, v[i].start + v[i].size - 1, what);
		ask(t, v, n, v[i].start + v[i].size, what);
		if (v[i].start)
			ask(t, v, n, v[i].start - 1, what);
		ask(t, v, n, v[i].start + next() % v[i].size, what);
	}
	for (int k = 0; k < 2000; k++) {
		uint64_t lo = v[0].start, hi = v[n - 1].start + v[n - 1].size;

		ask(t, v, n, lo + next() % (hi - lo + 1), what);
		ask(t, v, n, next(), what);
	}
	ask(t, v, n, 0, what);
	ask(t, v, n, UINT64_MAX, what);
	pd_symtab_free(t);
}

/* n symbols from base: sizes and gaps drawn below max_size, max_gap; now
 * and then a jump of `jump` (0: none) */
static size_t make(sym *v, size_t n, uint64_t base, uint64_t max_size, uint64_t max_gap,
		   uint64_t jump)
{
	uint64_t at = base;

	for (size_t i = 0; i < n; i++) {
		v[i].start = at;
		v[i].size = 1 + next() % max_size;
		at += v[i].size + (max_gap ? next() % max_gap : 0);
		if (jump && next() % 64 == 0)
			at += jump;
	}
	return n;
}

int main(void)
{
	static sym v[6000];
	static const size_t sizes[] = { 1, 5, 63, 64, 65, 200, 1000, 5999 };

	for (size_t k = 0; k < sizeof(sizes) / sizeof(*sizes); k++) {
		size_t n = sizes[k];

		check_table(v, make(v, n, 0x400000, 64, 0, 0), "packed");
		check_table(v, make(v, n, 0x400000, 4096, 65536, 0), "sparse");
		check_table(v, make(v, n, 0x1000, 256, 16, 1ull << 40), "clustered");
	}
	/* a kernel's span: text low in the top 2 GB, modules 1 GB above */
	make(v, 3000, 0xffffffff81000000ull, 512, 64, 0);
	make(v + 3000, 3000, 0xffffffffc0000000ull, 512, 64, 0);
	check_table(v, 6000, "kernel-like");
	/* one symbol at each end of the address space */
	v[0] = (sym){ 0x1000, 16 };
	make(v + 1, 199, 0x7f0000000000ull, 128, 8, 0);
	v[200] = (sym){ 0xfffffffffffff000ull, 0xfff };
	check_table(v, 201, "whole space");
	/* the last symbol reaching far past the block it starts in */
	make(v, 500, 0x400000, 64, 0, 0);
	v[499].size = 1u << 24;
	check_table(v, 500, "long last");
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("symtab: lookups through the block index = a scan of the symbols\n");
	return 0;
}
