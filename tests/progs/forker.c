/* forker.c - comm changes and inheritance: the parent renames itself
 * (prctl), forks a child that spins under the inherited comm, then the
 * child execs the calls program (a new comm at exec). */
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

volatile unsigned long fsink;

__attribute__((noinline)) void child_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fsink += i ^ (fsink >> 5);
}

__attribute__((noinline)) void parent_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		fsink += i ^ (fsink >> 1);
}

int main(int argc, char **argv)
{
	const char *exe = argc > 1 ? argv[1] : NULL;
	pid_t pid;

	prctl(PR_SET_NAME, "fk-renamed", 0, 0, 0);
	parent_spin(30000000);
	pid = fork();
	if (pid == 0) {
		child_spin(30000000);
		if (exe)
			execl(exe, exe, "0.1", (char *)NULL);
		_exit(0);
	}
	parent_spin(20000000);
	waitpid(pid, NULL, 0);
	return 0;
}
