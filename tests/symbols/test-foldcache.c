/*
 * test-foldcache.c - the fold caches give exactly what symbolizing every
 * sample whole gives. A synthesized recording maps real binaries of the
 * build (tests/progs/calls, then tests/progs/cxx at the same address, then
 * calls again in a forked child), changes comms in between, and repeats
 * the same user and kernel callchains under each, so that a cache entry
 * that outlived the change it depends on would name a frame wrongly. Both
 * folds are compared line by line; the caches must also have been used.
 * Some callchains hold words no map covers (kernel addresses too: no
 * kernel symbols are read), which fold to "[unknown]" by a cached name.
 * The header lists both binaries' build-ids, as perf record writes them,
 * so a third fold runs with their tables loaded ahead (preload.h): it
 * must give the same lines and load no table itself.
 *
 *   test-foldcache [BUILDDIR]	(default: $top_builddir, else ".")
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "dso.h"
#include "elfid.h"
#include "fold.h"
#include "fold-lines.h"
#include "foldcache.h"
#include "pdwrite.h"
#include "preload.h"
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
		/* a word no map covers, as a frame-pointer-less caller leaves
		 * on the stack: named "[unknown]" by a cached name */
		if (c % 5 == 1)
			chains[c][n++] = 0x7ffd00000000ull + (seed >> 4) % 0x100000;
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

/* A HEADER_BUILD_ID entry (perf's build_id_event, the size in misc). */
static void put_build_id(pdw *w, const char *path, const uint8_t *bid, size_t size)
{
	size_t nlen = (strlen(path) + 1 + 7) / 8 * 8;
	uint8_t id[24] = { 0 };

	memcpy(id, bid, size > 20 ? 20 : size);
	id[20] = (uint8_t)size;
	pdw_put_u32(w, PD_RECORD_HEADER_BUILD_ID);
	pdw_put_u16(w, PD_MISC_USER | (1u << 15));
	pdw_put_u16(w, (uint16_t)(36 + nlen));
	pdw_put_u32(w, UINT32_MAX);
	pdw_put_bytes(w, id, sizeof(id));
	pdw_put_bytes(w, path, strlen(path));
	for (size_t i = strlen(path); i < nlen; i++)
		pdw_put_u8(w, 0);
}

static int build_id_of(const char *path, elfid *id)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	elfid_of_fd(fd, id);
	close(fd);
	return id->bid_size ? 0 : -1;
}

/* The build-ids of both binaries, the kernel's and a module's (neither
 * loaded here), as perf record lists the DSOs with samples. */
static void build_ids(pdw *w, const char *bin1, const char *bin2)
{
	elfid a, b;
	static const uint8_t other[20] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	if (build_id_of(bin1, &a) < 0 || build_id_of(bin2, &b) < 0)
		return;	/* no build-ids: the preload check says so */
	pdw_feature_begin(w, PD_FEAT_BUILD_ID);
	put_build_id(w, "[kernel.kallsyms]", other, 20);
	put_build_id(w, bin1, a.bid, a.bid_size);
	put_build_id(w, "/lib/modules/6.1.0/kernel/fs/ext4/ext4.ko", other, 20);
	put_build_id(w, bin2, b.bid, b.bid_size);
	pdw_feature_end(w);
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
	build_ids(w, bin1, bin2);
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

/* Fold through the caches with the header's tables loaded ahead into a
 * cache of their own: the lines must be `want`, and the fold must find
 * every table it needs loaded (the preload asked the cache for them as
 * the symbolizer does). */
static void preloaded(const uint8_t *buf, size_t len, unsigned flags, const char *want)
{
	pd_error err;
	pd_file *f = pd_open_mem(buf, len, NULL, &err);
	pd_symcache *cache = pd_symcache_new(0);
	pd_sym_options so = { .no_kernel_symbols = 1 };
	pd_symbolizer *s = f ? pd_symbolizer_new(f, cache, &so) : NULL;
	pd_fold *fold = pd_fold_new(flags);
	pd_foldcache *fc = s && fold ? pd_foldcache_new(s, fold) : NULL;
	pd_preload *p = fc ? pd_preload_start(s, 2) : NULL;
	size_t before;
	pd_record r;
	char *got = NULL;
	int i;

	CHECK(p, "nothing to load ahead: the header's build-ids were not read");
	if (!p)
		goto out;
	/* the two binaries, not the kernel (no kallsyms asked for) nor the
	 * module (its symbols come from kallsyms) */
	for (i = 0; i < 1000 && pd_preload_loaded(p) < 2; i++)
		nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
	CHECK(pd_preload_loaded(p) == 2, "%zu tables loaded ahead, not 2", pd_preload_loaded(p));
	before = pd_dso_cache_bytes(cache);
	CHECK(before > 0, "the tables loaded ahead hold no memory");
	while (pd_next(f, &r, &err) > 0) {
		if (r.type != PD_RECORD_SAMPLE) {
			pd_symbolizer_record(s, &r);
			continue;
		}
		CHECK(pd_foldcache_add(fc, &r, r.u.sample.period) == 0, "preloaded fold");
	}
	CHECK(pd_dso_cache_bytes(cache) == before,
	      "the fold loaded tables of its own (%zu bytes, %zu loaded ahead)",
	      pd_dso_cache_bytes(cache), before);
	pd_fold_foreach(fold, collect, &got);
	CHECK(got && want && !strcmp(got, want), "flags %u: the preloaded fold differs:\n%s",
	      flags, got ? got : "");
out:
	pd_preload_stop(p);
	free(got);
	pd_foldcache_free(fc);
	pd_fold_free(fold);
	pd_symbolizer_free(s);
	pd_symcache_free(cache);
	pd_close(f);
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
	CHECK(a && strstr(a, ";[unknown]"), "no unmapped frame folded");
	preloaded(buf, len, flags, a);
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
