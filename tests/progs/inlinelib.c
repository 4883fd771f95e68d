/* inlinelib.c - a shared library whose hot code is static inline helpers,
 * built with -O2 -g by tests/symbols/test-farm.sh: --call-graph dwarf
 * samples land in code inlined three levels deep, so their frames are
 * named from the DWARF (addr2line -i) as perf names them. inl_spin_a and
 * inl_spin_b (inlineasm.S) are one assembler function under two names.
 */
#define INLINE static inline __attribute__((always_inline))

void inl_spin_a(unsigned long n);

INLINE unsigned long inl_mix(unsigned long x)
{
	for (int i = 0; i < 16; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x ^ (x >> 29);
}

INLINE unsigned long inl_step(unsigned long x)
{
	unsigned long a = inl_mix(x), b = inl_mix(x + 1);

	return a + (b >> 3);
}

INLINE unsigned long inl_round(unsigned long x, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		x = inl_step(x) ^ i;
	return x;
}

__attribute__((noinline)) unsigned long inl_work(unsigned long n)
{
	unsigned long x = inl_round(n, n);

	inl_spin_a(n * 4);
	return x;
}
