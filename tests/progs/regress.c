/* regress.c - a workload with known changes, for the tests of questions
 * about many recordings: main -> run_batch -> parse_rows and hash_rows,
 * each spinning in its own frame so each holds its own self samples. A
 * fixed amount of work (not a fixed time), so a slower build takes longer:
 *
 *   regress [--slow | --uniform] [ROUNDS]
 *
 * --slow: hash_rows does four times its work (its share grows from about
 * half to about four fifths); --uniform: both do twice theirs (the shares
 * stay, each run takes twice as long). Built with frame pointers and no
 * inlining, so `perf record -g` sees every frame. */
#include <stdlib.h>
#include <string.h>

volatile unsigned long sink;

#define WORK 2000000UL

/* A call after the loop: a function that calls none gets no frame of its
 * own from the compiler, and its caller would be missing from its stacks. */
__attribute__((noinline)) void batch_done(unsigned long n)
{
	sink += n;
}

__attribute__((noinline)) void parse_rows(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
	batch_done(n);
}

__attribute__((noinline)) void hash_rows(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink ^= (sink << 5) + i;
	batch_done(n);
}

__attribute__((noinline)) void run_batch(unsigned long parse, unsigned long hash)
{
	parse_rows(parse);
	hash_rows(hash);
}

int main(int argc, char **argv)
{
	unsigned long parse = WORK, hash = WORK;
	long rounds = 25;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--slow"))
			hash = 4 * WORK;
		else if (!strcmp(argv[i], "--uniform"))
			parse = hash = 2 * WORK;
		else
			rounds = atol(argv[i]);
	}
	for (long r = 0; r < rounds; r++)
		run_batch(parse, hash);
	return 0;
}
