/* pltloop.c - spends its time calling the tiny functions of pltlib.c, so
 * that a good share of a recording's samples land in PLT slots
 * (usage: pltloop [TENTHS], 1-9 tenths of a second). Built by tests/symbols/test-plt.sh with
 * several PLT layouts (lazy, -z now, IBT's .plt.sec). */
#include <time.h>

int plt_f0(int), plt_f1(int), plt_f2(int), plt_f3(int);
int plt_f4(int), plt_f5(int), plt_f6(int), plt_f7(int);

int main(int argc, char **argv)
{
	/* tenths of a second, read without a libc call of its own */
	long tenths = argc > 1 && argv[1][0] >= '1' && argv[1][0] <= '9' ? argv[1][0] - '0' : 3;
	clock_t end = clock() + (clock_t)(tenths * CLOCKS_PER_SEC / 10);
	volatile int x = 0;

	while (clock() < end)
		for (int i = 0; i < 10000; i++)
			x = plt_f0(plt_f1(plt_f2(plt_f3(plt_f4(plt_f5(plt_f6(plt_f7(x))))))));
	return x == 42;
}
