/* deepsys.c - system calls from the bottom of a deep stack (usage:
 * deepsys [SECONDS [DEPTH]], default 0.3 s, 150 frames): with
 * --call-graph dwarf its samples have kernel frames over more user
 * frames than perf's 127, whose limit perf applies to each part alone. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

volatile long sink;

__attribute__((noinline)) void ask_kernel(double secs)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++)
			sink += syscall(SYS_getppid);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
}

__attribute__((noinline)) void descend(int depth, double secs)
{
	if (depth > 0)
		descend(depth - 1, secs);
	else
		ask_kernel(secs);
	sink++;	/* no tail call: every level keeps its frame */
}

int main(int argc, char **argv)
{
	descend(argc > 2 ? atoi(argv[2]) : 150, argc > 1 ? atof(argv[1]) : 0.3);
	return 0;
}
