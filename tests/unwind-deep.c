/*
 * unwind-deep.c: a program with known call chains for the DWARF unwinding
 * test. The test builds it with -O0 -g -fomit-frame-pointer, so only the
 * CFI (.eh_frame) can walk its frames, and records it with
 * `perf record --call-graph dwarf`.
 *
 * Chains (innermost first):
 *   leaf_spin chain_d chain_c chain_b chain_a main
 *   leaf_spin recurse x (RECURSE_DEPTH + 1) main
 *   leaf_spin chain_d chain_c chain_b chain_a worker   (a second thread)
 */
#include <pthread.h>
#include <stdlib.h>

#define RECURSE_DEPTH	6

static volatile unsigned long sink;

__attribute__((noinline)) static void leaf_spin(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		sink += i * 7;
}

__attribute__((noinline)) static void chain_d(unsigned n) { leaf_spin(n); sink++; }
__attribute__((noinline)) static void chain_c(unsigned n) { chain_d(n); sink++; }
__attribute__((noinline)) static void chain_b(unsigned n) { chain_c(n); sink++; }
__attribute__((noinline)) static void chain_a(unsigned n) { chain_b(n); sink++; }

/* a frame with locals, so the CFA moves by more than the return address */
__attribute__((noinline)) static void recurse(unsigned depth, unsigned n)
{
	char pad[64];

	pad[depth % 64] = (char)depth;
	sink += (unsigned char)pad[depth % 64];
	if (depth == 0)
		leaf_spin(n);
	else
		recurse(depth - 1, n);
	sink++;
}

static unsigned rounds = 200;

__attribute__((noinline)) static void *worker(void *arg)
{
	(void)arg;
	for (unsigned r = 0; r < rounds; r++)
		chain_a(200000);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th;

	if (argc > 1)
		rounds = (unsigned)atoi(argv[1]);
	if (pthread_create(&th, NULL, worker, NULL) != 0)
		return 1;
	for (unsigned r = 0; r < rounds; r++) {
		chain_a(200000);
		recurse(RECURSE_DEPTH, 200000);
	}
	pthread_join(th, NULL);
	return 0;
}
