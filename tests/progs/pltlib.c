/* pltlib.c - eight tiny exported functions, each reached through its own
 * PLT slot from pltloop.c. */
#define PLT_FN(n) \
	__attribute__((noinline)) int plt_f##n(int x) { return x + n; }
PLT_FN(0)
PLT_FN(1)
PLT_FN(2)
PLT_FN(3)
PLT_FN(4)
PLT_FN(5)
PLT_FN(6)
PLT_FN(7)
