/* symlib.c - a shared library with a known call chain for tests. */
volatile unsigned long lib_sink;

__attribute__((noinline)) int lib_inner(int n)
{
	for (int i = 0; i < n; i++)
		lib_sink += (unsigned long)i * 7;
	return (int)lib_sink;
}

__attribute__((noinline)) int lib_work(int n)
{
	return lib_inner(n) + 1;
}
