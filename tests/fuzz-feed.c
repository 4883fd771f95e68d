/*
 * fuzz-feed - libFuzzer target over the engine's feed and the deeper
 * views: a recording from memory read into a profile (symbolized without
 * any file of this machine), off-CPU time tracked from its switch events
 * and sched_switch samples, leaf addresses counted; then every view asked
 * of it under each weight: flame graph, top, the timeline, and callers,
 * callees and the annotation of its hottest functions. Built with
 * --enable-fuzzing as tests/fuzz-feed; tests/fuzz-feed-replay runs the
 * same entry point over tests/fuzz-feed/ and tests/fuzz-corpus/ in every
 * `make check`.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "engine/feed.h"
#include "engine/query.h"

#define FUZZ_MAX_INPUT (4u << 20)
#define FUZZ_MAX_DECOMPRESSED (8ULL << 20)
#define FUZZ_FUNCTIONS 3	/* the hottest functions asked about */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static int enter(void *ctx, const char *name, size_t len, const char *dso, uint64_t value)
{
	(void)ctx;
	sink += len + value + (name ? (unsigned char)name[0] : 0) + (dso ? strlen(dso) : 0);
	return 0;
}

static int leave(void *ctx)
{
	(void)ctx;
	return 0;
}

static const pe_tree_cb tree = { enter, leave };

static int cmp_self(const void *a, const void *b)
{
	uint64_t x = ((const pe_top_row *)a)->self, y = ((const pe_top_row *)b)->self;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* Every view under one weight. */
static void ask(pe_offline *o, int by_samples, int measure)
{
	pe_model *m = pe_offline_model(o);
	pe_filter f;
	pe_selection *s = NULL;
	pe_top_row *rows = NULL;
	pe_timeline tl;
	const char *why;
	size_t n = 0, i;

	memset(&f, 0, sizeof(f));
	f.pid = f.tid = -1;
	f.measure = measure;
	f.max_nodes = by_samples ? 50 : 0;
	sink += (uint64_t)pe_measure_check(m, &f, &why);
	if (pe_select(m, &f, pe_offline_blocks(o), &s) < 0)
		return;
	pe_flame(m, &f, s, by_samples, &tree, NULL);
	if (pe_top(m, &f, s, by_samples, &rows, &n) == 0 && n) {
		qsort(rows, n, sizeof(*rows), cmp_self);
		for (i = 0; i < n && i < FUZZ_FUNCTIONS; i++) {
			pe_annot a;

			pe_sandwich(m, &f, s, by_samples, rows[i].name, &tree, NULL, &tree, NULL);
			if (pe_annotate(m, &f, rows[i].name, pe_offline_leaves(o), &a) == 0) {
				sink += a.samples + a.value + a.n;
				pe_annot_free(&a);
			}
		}
	}
	pe_top_free(rows, n);
	pe_selection_free(s);
	if (pe_timeline_measured(m, &f, 1000000, pe_offline_blocks(o), &tl) == 0) {
		for (i = 0; i < tl.n; i++)
			sink += tl.buckets[i].offcpu + tl.buckets[i].samples;
		pe_timeline_free(&tl);
	}
	f.from_ns = 1;
	f.to_ns = UINT64_MAX / 2;
	if (pe_select(m, &f, pe_offline_blocks(o), &s) == 0)
		pe_selection_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	pd_options opt = { .ordered = 1, .max_decompressed = FUZZ_MAX_DECOMPRESSED };
	/* no file of this machine: every lookup under a root that is not there */
	pd_sym_options so = { .symfs = "/nonexistent", .buildid_dir = "/nonexistent",
			      .debug_dir = "/nonexistent", .jit_dir = "/nonexistent",
			      .kallsyms = "/nonexistent", .no_kernel_symbols = 1 };
	pd_symbolizer *sym = NULL;
	pe_offline *o = NULL;
	pe_feed *in = NULL;
	pd_error err;
	pd_file *f;

	if (size > FUZZ_MAX_INPUT)
		return 0;
	if (!(f = pd_open_mem(data, size, &opt, &err)))
		return 0;
	sym = pd_symbolizer_new(f, NULL, &so);
	o = pe_offline_new();
	if (sym && o && (in = pe_feed_new(f, sym, pe_offline_builder(o))) &&
	    pe_feed_run(in, NULL, &err) == PE_FEED_DONE && pe_offline_finish(o) == 0) {
		ask(o, 1, PE_MEASURE_PERIOD);
		ask(o, 0, PE_MEASURE_PERIOD);
		ask(o, 0, PE_MEASURE_OFFCPU);
		ask(o, 0, PE_MEASURE_WALL);
	}
	pe_feed_free(in);
	pe_offline_free(o);
	pd_symbolizer_free(sym);
	pd_close(f);
	return 0;
}
