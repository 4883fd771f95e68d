/*
 * bssobj.c - objects in .bss of several sizes after some in .data, for
 * tests/symbols/test-bss.sh: a frame-pointer walk through code without
 * frame pointers reads data words as return addresses, and those that
 * point into .bss are named by the objects there. Built by the test as a
 * program and as a shared library (-DBSSOBJ_LIB).
 */
#include <stdio.h>
#include <string.h>

int bss_data_word = 7;			/* .data: the file bytes before .bss */
char bss_data_name[40] = "bssobj";
static char bss_small[24];		/* static: a local symbol */
char bss_table[3000];
long bss_counters[700];			/* past the first page of .bss */
double bss_tail[3];

/* touch every object, so that none is dropped */
int bssobj_touch(int n)
{
	memset(bss_small, n, sizeof(bss_small));
	bss_table[n % sizeof(bss_table)] = (char)n;
	bss_counters[n % 700] += n;
	bss_tail[n % 3] = n;
	return bss_data_word + bss_small[0] + bss_table[0] + (int)bss_counters[0] +
	       (int)bss_tail[0] + bss_data_name[0];
}

#ifndef BSSOBJ_LIB
int main(int argc, char **argv)
{
	(void)argv;
	printf("%d\n", bssobj_touch(argc));
	return 0;
}
#endif
