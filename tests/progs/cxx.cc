// cxx.cc - C++ names for demangling tests: namespaces, templates,
// overloads, an anonymous namespace, a class method.
#include <cstdlib>
#include <time.h>

volatile unsigned long cxx_sink;

namespace perfhub_test {
namespace {
__attribute__((noinline)) void hidden_spin(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		cxx_sink += i ^ (cxx_sink >> 2);
}
} // namespace

template <typename T> struct Worker {
	__attribute__((noinline)) void run(T n) { hidden_spin((unsigned long)n); }
};

__attribute__((noinline)) void overloaded(int n) { Worker<int>().run(n); }
__attribute__((noinline)) void overloaded(double n) { Worker<double>().run(n); }

template <int N> __attribute__((noinline)) void depth(unsigned long n)
{
	depth<N - 1>(n);
}
template <> __attribute__((noinline)) void depth<0>(unsigned long n)
{
	overloaded((int)n);
}
} // namespace perfhub_test

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 0.3;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		perfhub_test::overloaded(300000);
		perfhub_test::overloaded(200000.0);
		perfhub_test::depth<3>(300000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	return 0;
}
