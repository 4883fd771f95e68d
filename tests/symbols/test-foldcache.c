/*
 * test-foldcache.c - the fold caches give exactly what symbolizing every
 * sample whole gives. A synthesized recording maps real binaries of the
 * build (tests/progs/calls, then tests/progs/cxx at the same address, then
 * calls again in a forked child), changes comms in between, and repeats
 * the same user and kernel callchains under each, so that a cache entry
 * that outlived the change it depends on would name a frame wrongly. Both
 * folds are compared line by line; the caches must also have been used.
 *
 *   test-foldcache [BUILDDIR]	(default: $top_builddir, else ".")
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fold.h"
#include "foldcache.h"
#include "pdwrite.h"
#include "symbols.h"

#define BASE 0x555555554000ull
#define KBASE 0xffffffff81000000ull
#define CHAINS 40

static int failures;

#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL %s:%d: ", __FILE__, __LINE__); \
	printf(__VA_ARGS__); printf("\n"); } } while (0)

static uint64_t chains[CHAINS][12];
static unsigned nchain[CHAINS];

/* callchains: some user only, some kernel then user, all inside the first
 * 64 KB of the mapped file (text of the small test programs) */
static void make_chains(void)
{
	unsigned seed = 12345;

	for (unsigned c = 0; c < CHAINS; c++) {
		unsigned n = 0;

		seed = seed * 1103515245 + 12345;
		if (c % 3 == 0) {
			chains[c][n++] = PD_CONTEXT_KERNEL;
			chains[c][n++] = KBASE + (seed >> 8) % 0x100000;
		}
		chains[c][n++] = PD_CONTEXT_USER;
		for (unsigned k = 0; k < 3 + c % 4; k++) {
			seed = seed * 1103515245 + 12345;
			chains[c][n++] = BASE + 0x1000 + (seed >> 8) % 0x3000;
		}
		nchain[c] = n;
	}
}

static void samples(pdw *w, uint32_t pid, uint64_t *t)
{
	/* every chain three times, and the leaf of some changed: the caches'
	 * whole-chain and per-address paths */
	for (unsigned rep = 0; rep < 3; rep++)
		for (unsigned c = 0; c < CHAINS; c++) {
			uint64_t ch[12];
			pd_sample s = { .identifier = 9, .pid = pid, .tid = pid, .time = (*t)++,
					.period = 1000 + c, .nr_callchain = nchain[c], .callchain = ch };

			memcpy(ch, chains[c], sizeof(ch));
			if (rep == 2 && c % 2)
				ch[1] = ch[1] + 7;	/* a new leaf under known callers */
			s.ip = ch[1];
			pdw_sample(w, 0, ch[0] == PD_CONTEXT_KERNEL ? PD_MISC_KERNEL : PD_MISC_USER, &s);
		}
}

static uint8_t *build(const char *bin1, const char *bin2, size_t *len)
{
	pdw *w = pdw_new(&(pdw_config){ .attr_size = 128 });
	pd_sample_id sid = { .time = 1, .id = 9, .identifier = 9 };
	uint8_t *buf = NULL;
	uint64_t t = 10;
	struct stat st;

	pdw_add_cpu_clock(w, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
			      PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN, 9);
	sid.pid = sid.tid = 100;
	pdw_comm(w, 0, &(pd_comm){ .pid = 100, .tid = 100, .comm = "first" }, &sid);
	stat(bin1, &st);
	pdw_mmap2(w, 0, PD_MISC_USER, &(pd_mmap){ .pid = 100, .tid = 100, .start = BASE,
		  .len = ((uint64_t)st.st_size + 4095) & ~4095ull, .prot = 5, .flags = 2,
		  .filename = bin1 }, &sid);
	samples(w, 100, &t);
	/* the comm changes: every stack of pid 100 folds differently */
	pdw_comm(w, 0, &(pd_comm){ .pid = 100, .tid = 100, .comm = "second", .exec = 1 }, &sid);
	samples(w, 100, &t);
	/* another binary at the same address: every frame is named anew */
	stat(bin2, &st);
	pdw_mmap2(w, 0, PD_MISC_USER, &(pd_mmap){ .pid = 100, .tid = 100, .start = BASE,
		  .len = ((uint64_t)st.st_size + 4095) & ~4095ull, .prot = 5, .flags = 2,
		  .filename = bin2 }, &sid);
	samples(w, 100, &t);
	/* a child inherits comm and maps, then maps the first binary back */
	pdw_task(w, 0, PD_RECORD_FORK, &(pd_task){ .pid = 101, .ppid = 100, .tid = 101,
		 .ptid = 100, .time = t }, &sid);
	samples(w, 101, &t);
	sid.pid = sid.tid = 101;
	stat(bin1, &st);
	pdw_mmap2(w, 0, PD_MISC_USER, &(pd_mmap){ .pid = 101, .tid = 101, .start = BASE,
		  .len = ((uint64_t)st.st_size + 4095) & ~4095ull, .prot = 5, .flags = 2,
		  .filename = bin1 }, &sid);
	samples(w, 101, &t);
	samples(w, 100, &t);
	if (pdw_finish(w, &buf, len))
		buf = NULL;
	pdw_free(w);
	return buf;
}

static int collect(void *ctx, const char *stack, uint64_t count)
{
	char **out = ctx;
	size_t o = *out ? strlen(*out) : 0, n = strlen(stack) + 32;
	char *p = realloc(*out, o + n);

	if (!p)
		return 1;
	snprintf(p + o, n, "%s %llu\n", stack, (unsigned long long)count);
	*out = p;
	return 0;
}

/* Fold the recording twice, whole and through the caches. */
static void run(const uint8_t *buf, size_t len, unsigned flags)
{
	pd_error err;
	pd_file *f1 = pd_open_mem(buf, len, NULL, &err), *f2 = pd_open_mem(buf, len, NULL, &err);
	pd_symcache *cache = pd_symcache_new(0);
	pd_sym_options so = { .no_kernel_symbols = 1 };
	pd_symbolizer *s1 = f1 ? pd_symbolizer_new(f1, cache, &so) : NULL;
	pd_symbolizer *s2 = f2 ? pd_symbolizer_new(f2, cache, &so) : NULL;
	pd_fold *ref = pd_fold_new(flags), *fast = pd_fold_new(flags);
	pd_foldcache *fc = s2 && fast ? pd_foldcache_new(s2, fast) : NULL;
	pd_foldcache_stats st;
	pd_record r;
	char *a = NULL, *b = NULL;
	int rc;

	if (!fc) {
		CHECK(0, "setup failed");
		goto out;
	}
	while ((rc = pd_next(f1, &r, &err)) > 0) {
		pd_stack stk;

		if (r.type != PD_RECORD_SAMPLE) {
			pd_symbolizer_record(s1, &r);
			continue;
		}
		CHECK(pd_symbolize(s1, &r, &stk) == 0 && pd_fold_add(ref, &stk, r.u.sample.period) == 0,
		      "reference fold");
	}
	while ((rc = pd_next(f2, &r, &err)) > 0) {
		if (r.type != PD_RECORD_SAMPLE) {
			pd_symbolizer_record(s2, &r);
			continue;
		}
		CHECK(pd_foldcache_add(fc, &r, r.u.sample.period) == 0, "cached fold");
	}
	pd_fold_foreach(ref, collect, &a);
	pd_fold_foreach(fast, collect, &b);
	CHECK(a && b && !strcmp(a, b), "flags %u: the folds differ:\n--- whole\n%s--- cached\n%s",
	      flags, a ? a : "", b ? b : "");
	pd_foldcache_get_stats(fc, &st);
	CHECK(st.chain_hits > 0 && st.frame_folds > 0 && st.misses == 0,
	      "caches unused: %llu chain hits, %llu folded by address, %llu whole",
	      (unsigned long long)st.chain_hits, (unsigned long long)st.frame_folds,
	      (unsigned long long)st.misses);
	/* the comm and binary changes show: stacks of both comms, and of frames
	 * named from both binaries */
	CHECK(a && strstr(a, "first") && strstr(a, "second"), "comm changes lost");
out:
	free(a);
	free(b);
	pd_foldcache_free(fc);
	pd_fold_free(ref);
	pd_fold_free(fast);
	pd_symbolizer_free(s1);
	pd_symbolizer_free(s2);
	pd_symcache_free(cache);
	pd_close(f1);
	pd_close(f2);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : getenv("top_builddir");
	char bin1[4096], bin2[4096];
	uint8_t *buf;
	size_t len;

	snprintf(bin1, sizeof(bin1), "%s/tests/progs/calls", dir ? dir : ".");
	snprintf(bin2, sizeof(bin2), "%s/tests/progs/cxx", dir ? dir : ".");
	make_chains();
	buf = build(bin1, bin2, &len);
	if (!buf) {
		printf("FAIL: cannot write the recording\n");
		return 1;
	}
	run(buf, len, 0);
	run(buf, len, PD_FOLD_PID | PD_FOLD_KERNEL);
	run(buf, len, PD_FOLD_TID);
	free(buf);
	if (failures) {
		printf("%d failures\n", failures);
		return 1;
	}
	printf("foldcache: the same folds as symbolizing every sample\n");
	return 0;
}
