/* sigwork.c - work in a signal handler (usage: sigwork [SECONDS [alt]]):
 * a 5 ms CPU-time interval timer's SIGPROF runs on_alarm -> handler_work over
 * main -> main_work, on the alternate signal stack with "alt". With
 * --call-graph dwarf the walks pass glibc's signal trampoline, whose pc
 * perf's unwinder lowers by one while keeping the interrupted frame's. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

volatile unsigned long sink;

__attribute__((noinline)) void handler_work(void)
{
	for (int i = 0; i < 1000000; i++)
		sink += (unsigned long)i ^ (sink >> 2);
}

__attribute__((noinline)) void on_alarm(int sig)
{
	(void)sig;
	handler_work();
}

__attribute__((noinline)) void main_work(void)
{
	for (int i = 0; i < 100000; i++)
		sink += (unsigned long)i;
}

int main(int argc, char **argv)
{
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	struct sigaction sa;
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	struct timespec t0, t;
	double secs = argc > 1 ? atof(argv[1]) : 0.3;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	if (argc > 2 && sigaltstack(&ss, NULL) == 0)
		sa.sa_flags = SA_ONSTACK;
	sigaction(SIGPROF, &sa, NULL);
	setitimer(ITIMER_PROF, &it, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		main_work();
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
