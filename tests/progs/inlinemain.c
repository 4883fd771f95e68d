/* inlinemain.c - calls inlinelib.c's inl_work for about N tenths of a
 * second (usage: inlinemain [TENTHS], 1-9, default 3). */
#include <stdio.h>
#include <time.h>

unsigned long inl_work(unsigned long n);

int main(int argc, char **argv)
{
	long tenths = argc > 1 && argv[1][0] >= '1' && argv[1][0] <= '9' ? argv[1][0] - '0' : 3;
	clock_t end = clock() + (clock_t)(tenths * CLOCKS_PER_SEC / 10);
	unsigned long x = 0;

	while (clock() < end)
		x += inl_work(20000);
	printf("%lu\n", x & 1);
	return 0;
}
