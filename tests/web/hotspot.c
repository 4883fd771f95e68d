/* hotspot.c - the workload the browser tests record: `hotspot WHICH MS`
 * spins in warmup_spin() for the first 40% of MS milliseconds, then in
 * alpha_hot() or beta_hot() (WHICH = alpha or beta) for the rest;
 * `hotspot deep MS` spins at the end of a chain of DEEP_FRAMES calls (a
 * flame graph taller than the page). Two
 * recordings that differ only in WHICH give a comparison whose changed
 * function is known; the two phases give a timeline whose ranges have
 * different flame graphs. `hotspot nap MS` sleeps in nap_here() five
 * times for MS/10 milliseconds, spinning in between_naps() for as long
 * after each: off-CPU time under a known function. Built with frame
 * pointers, no inlining and no sibling calls so that `perf record -g`
 * sees every frame. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Each phase spins in its own body, so that the phase's function has the
 * self time (a comparison's regressions are by self time). */
#define SPIN_UNTIL(end)						\
	do {							\
		for (unsigned long i = 0; i < 20000; i++)	\
			sink += i ^ (sink >> 3);		\
	} while (now_ms() < (end))

__attribute__((noinline)) void warmup_spin(double end)
{
	SPIN_UNTIL(end);
}

__attribute__((noinline)) void alpha_hot(double end)
{
	SPIN_UNTIL(end);
}

__attribute__((noinline)) void beta_hot(double end)
{
	SPIN_UNTIL(end);
}

#define DEEP_FRAMES 128

/* n frames of descend() above the caller's, then the spin */
__attribute__((noinline)) void descend(int n, double end)
{
	if (n > 1)
		descend(n - 1, end);
	else
		SPIN_UNTIL(end);
	sink++;		/* not a tail call: every frame stays on the stack */
}

/* libc's nanosleep keeps no frame pointer: frame-pointer unwinding skips
 * its caller, this one, and finds nap_here() */
__attribute__((noinline)) void nap_call(double ms)
{
	struct timespec ts = { (time_t)(ms / 1e3), (long)((ms - 1e3 * (time_t)(ms / 1e3)) * 1e6) };

	nanosleep(&ts, NULL);
}

/* blocked in the kernel (nanosleep) with this frame on the stack */
__attribute__((noinline)) void nap_here(double ms)
{
	nap_call(ms);
	sink++;
}

__attribute__((noinline)) void between_naps(double end)
{
	SPIN_UNTIL(end);
}

int main(int argc, char **argv)
{
	double ms = argc > 2 ? atof(argv[2]) : 1000;
	int beta = argc > 1 && strcmp(argv[1], "beta") == 0;
	double start = now_ms();

	if (argc > 1 && strcmp(argv[1], "deep") == 0) {
		descend(DEEP_FRAMES, start + ms);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "nap") == 0) {
		for (int i = 0; i < 5; i++) {
			nap_here(ms / 10);
			between_naps(now_ms() + ms / 10);
		}
		return 0;
	}

	warmup_spin(start + 0.4 * ms);
	if (beta)
		beta_hot(start + ms);
	else
		alpha_hot(start + ms);
	return 0;
}
