/*
 * engine-blocks: the sample-block codec (a full block round trip, every
 * kind of damage refused), the builder's rows and ids, a model that
 * ignores ids out of range, a corrupt block making a time-range question
 * fail rather than answer wrong, the model cache (bound, generations,
 * models in use outliving eviction), and the builder's flush hook: a
 * profile built in memory (offline.h) through many row flushes and blocks
 * answers as one built in one go.
 */
#include "config.h"

#include "engine_common.h"
#include "engine/cache.h"
#include "engine/offline.h"

static void test_codec(void)
{
	pe_block_packer *k = pe_block_packer_new();
	pe_block *in = calloc(1, sizeof(*in)), *out = calloc(1, sizeof(*out));
	uint8_t *raw = malloc(PE_BLOCK_RAW_MAX), *bad;
	pe_packed_block pb;
	uint32_t i;

	if (!k || !in || !out || !raw) {
		CHECK(0, "out of memory");
		return;
	}
	in->n = PE_BLOCK_SAMPLES;
	for (i = 0; i < in->n; i++) {
		in->time[i] = 1000000000ull + (uint64_t)i * 997 % 5000;	/* not sorted */
		in->event[i] = i % 3;
		in->cpu[i] = i % 2;
		in->pid[i] = i == 7 ? UINT32_MAX : 100 + i % 5;
		in->tid[i] = in->pid[i] + i % 2;
		in->period[i] = UINT64_MAX - i;
		in->weight[i] = i;
		in->stack[i] = i * 3;
		in->comm[i] = i % 4 + 1;
	}
	CHECK(pe_block_pack(k, in, 9, &pb) == 0, "pack");
	CHECK(pb.seq == 9 && pb.nr == PE_BLOCK_SAMPLES && pb.min_time == 1000000000ull &&
	      pb.max_time == 1000000000ull + 4999, "min %llu max %llu",
	      (unsigned long long)pb.min_time, (unsigned long long)pb.max_time);
	CHECK(pb.len < PE_BLOCK_RAW_MAX / 4, "compressed to %zu bytes", pb.len);
	CHECK(pe_block_decode(pb.data, pb.len, pb.nr, raw, out) == 0, "decode");
	CHECK(out->n == in->n && !memcmp(out->time, in->time, sizeof(in->time)) &&
	      !memcmp(out->event, in->event, sizeof(in->event)) &&
	      !memcmp(out->cpu, in->cpu, sizeof(in->cpu)) &&
	      !memcmp(out->pid, in->pid, sizeof(in->pid)) &&
	      !memcmp(out->tid, in->tid, sizeof(in->tid)) &&
	      !memcmp(out->period, in->period, sizeof(in->period)) &&
	      !memcmp(out->weight, in->weight, sizeof(in->weight)) &&
	      !memcmp(out->stack, in->stack, sizeof(in->stack)) &&
	      !memcmp(out->comm, in->comm, sizeof(in->comm)), "round trip");
	/* damage: another count, cut bytes, a flipped byte, no bytes, too many */
	bad = malloc(pb.len);
	memcpy(bad, pb.data, pb.len);
	CHECK(pe_block_decode(bad, pb.len, pb.nr - 1, raw, out) < 0, "wrong count");
	CHECK(pe_block_decode(bad, pb.len / 2, pb.nr, raw, out) < 0, "truncated");
	bad[0] ^= 0x55;
	CHECK(pe_block_decode(bad, pb.len, pb.nr, raw, out) < 0, "not a zstd frame");
	CHECK(pe_block_decode(NULL, 0, 1, raw, out) < 0, "no bytes");
	CHECK(pe_block_decode(pb.data, pb.len, PE_BLOCK_SAMPLES + 1, raw, out) < 0, "count cap");
	CHECK(pe_block_decode(pb.data, pb.len, 0, raw, out) < 0, "count 0");
	free(bad);
	free(raw);
	free(in);
	free(out);
	pe_block_packer_free(k);
}

static void test_builder(void)
{
	pe_builder *b = pe_builder_new();
	const pe_row *rows;
	uint32_t s1, s2, f1, f2, n1, n2, hint = 0;
	pe_sample x = { .time = 5, .pid = 1, .tid = 1, .period = 1 };
	size_t n, i, kinds[PE_NR_ROW_KINDS] = { 0 };
	const pe_agg_row *agg;

	if (!b) {
		CHECK(0, "out of memory");
		return;
	}
	s1 = pe_builder_string(b, "a");
	s2 = pe_builder_string(b, "a");
	CHECK(s1 == 1 && s2 == 1 && !pe_builder_string(b, NULL), "strings interned from 1");
	f1 = pe_builder_frame(b, "f", "/lib/x.so", 1, 0);
	f2 = pe_builder_frame(b, "f", NULL, 0, 0);
	CHECK(f1 && f2 && f1 != f2 && pe_builder_frame(b, "f", "/lib/x.so", 1, 0) == f1,
	      "a frame is its name and DSO");
	n1 = pe_builder_stack(b, 0, f1);
	n2 = pe_builder_stack(b, n1, f2);
	CHECK(n2 > n1 && pe_builder_stack(b, n1, f2) == n2 && !pe_builder_stack(b, n1, 0),
	      "stack nodes interned, parents first");
	pe_builder_frame_offset(b, f1, 0x1234);
	pe_builder_frame_offset(b, f1, 0x1234);
	pe_builder_mmap(b, 1, 0x1000, 0x2000, 0, "/lib/x.so", "abcd", 3);
	pe_builder_feature(b, "hostname", "\"h\"");
	pe_builder_record_count(b, "SAMPLE", 3);
	rows = pe_builder_rows(b, &n);
	for (i = 0; i < n; i++)
		kinds[rows[i].kind]++;
	CHECK(kinds[PE_ROW_STRING] == 3 && kinds[PE_ROW_FRAME] == 2 && kinds[PE_ROW_STACK] == 2 &&
	      kinds[PE_ROW_FRAME_OFFSET] == 1 && kinds[PE_ROW_MAP] == 1 &&
	      kinds[PE_ROW_FEATURE] == 1 && kinds[PE_ROW_RECORD] == 1, "one row per new thing");
	for (i = 0; i < n; i++) {
		if (rows[i].kind == PE_ROW_MAP) {
			CHECK_STR(pe_row_text(&rows[i], 6), "abcd");
		} else if (rows[i].kind == PE_ROW_FEATURE) {
			CHECK_STR(pe_row_text(&rows[i], 0), "hostname");
			CHECK_STR(pe_row_text(&rows[i], 1), "\"h\"");
		} else if (rows[i].kind == PE_ROW_FRAME && rows[i].v[0] == f2) {
			CHECK(rows[i].null_mask & 4, "a frame without DSO stores NULL");
		}
	}
	pe_builder_rows_done(b);
	pe_builder_rows(b, &n);
	CHECK(n == 0, "rows done");
	/* samples: the hint saves lookups, a stale hint costs only the lookup */
	x.stack = n2;
	x.comm = s1;
	for (i = 0; i < PE_BLOCK_SAMPLES - 1; i++)
		CHECK(pe_builder_sample(b, &x, &hint) == 0, "sample %zu", i);
	CHECK(hint == 1, "hint %u", hint);
	x.tid = 2;
	CHECK(pe_builder_sample(b, &x, &hint) == 1, "the block is full");
	CHECK(hint == 2, "a new row for another thread");
	agg = pe_builder_agg_rows(b, &n);
	CHECK(n == 2 && agg[0].samples == PE_BLOCK_SAMPLES - 1 && agg[0].first_seq == 1 &&
	      agg[1].samples == 1 && agg[1].first_seq == PE_BLOCK_SAMPLES &&
	      pe_builder_nr_samples(b) == PE_BLOCK_SAMPLES, "aggregate");
	pe_builder_free(b);
}

/* A store's model sums its aggregate from the stored blocks: the same rows
 * in the same (first_seq) order as the builder's own, across blocks, with
 * dying tasks and off-CPU time; a damaged block fails it. */
static void test_agg_from_blocks(void)
{
	static const char *const events[] = { "cpu-clock", "sched:sched_switch" };
	/* each event's period, and the off-CPU time charged to cpu-clock's */
	static const struct { int event, measure; } asks[] = {
		{ 0, PE_MEASURE_PERIOD }, { 1, PE_MEASURE_PERIOD }, { 0, PE_MEASURE_OFFCPU },
	};
	mem_profile p;
	pe_blocks src = { mem_read, &p };
	const pe_agg_row *agg;
	const pe_row *rows;
	pe_model *built, *summed, *bad;
	pe_filter f = filter_all();
	uint32_t st[3], comm;
	size_t n, i, k;
	text t1, t2;

	mem_begin(&p, 1000);	/* a block every 1000 samples: six of them */
	pe_builder_event(p.b, 0, events[0], 1, 0, 0, 4000, 1, 0);
	pe_builder_event(p.b, 1, events[1], 2, 0, 0, 1, 0, 0);
	st[0] = mem_stack(&p, "main@/bin/app;a@/bin/app");
	st[1] = mem_stack(&p, "main@/bin/app;b@/bin/app;c@/lib/libc.so.6");
	st[2] = mem_stack(&p, "main@/bin/app;sys_read@[kernel.kallsyms]!");
	comm = pe_builder_string(p.b, "app");
	for (i = 0; i < 5500; i++) {
		pe_sample x = { .event = (uint32_t)(i / 11) % 2, .time = 1000 + i,
				.pid = 10 + (uint32_t)i % 2, .tid = 100 + (uint32_t)i % 3,
				.period = i + 1, .offcpu = i % 5 ? 0 : 77 + i,
				.stack = st[(i / 7) % 3], .comm = comm };

		if (i % 97 == 0)
			x.pid = x.tid = DYING;
		if (pe_builder_sample(p.b, &x, NULL) > 0 || ++p.in_block == p.every)
			mem_pack(&p);
	}
	mem_pack(&p);
	CHECK(p.nr_blocks == 6, "%zu blocks", p.nr_blocks);
	built = pe_model_new(1, 1);
	summed = pe_model_new(1, 1);
	rows = pe_builder_rows(p.b, &n);
	CHECK(built && summed && pe_model_load_rows(built, rows, n) == 0 &&
	      pe_model_load_rows(summed, rows, n) == 0, "model rows");
	agg = pe_builder_agg_rows(p.b, &n);
	for (i = 0; i < n; i++)
		pe_model_add_agg(built, &agg[i]);
	CHECK(n > 30, "%zu aggregate rows", n);
	CHECK(pe_model_agg_from_blocks(summed, &src) == 0, "summed from the blocks");
	CHECK(pe_model_agg_from_blocks(summed, &src) < 0, "only once");
	pe_model_seal(built);
	pe_model_seal(summed);
	/* unsorted folds list the rows in first_seq order */
	f.with_pid = f.with_tid = f.any_order = 1;
	for (k = 0; k < sizeof(asks) / sizeof(asks[0]); k++) {
		f.event = events[asks[k].event];
		f.measure = asks[k].measure;
		folded(built, &f, &p, &t1);
		folded(summed, &f, &p, &t2);
		CHECK(t1.len > 100 && !strcmp(t1.s, t2.s), "%s, measure %d:\n%s\nvs\n%s", f.event,
		      f.measure, t1.s, t2.s);
	}
	/* a block cut short: no aggregate, an error */
	p.blocks[3].len -= 5;
	bad = pe_model_new(1, 1);
	CHECK(bad && pe_model_agg_from_blocks(bad, &src) < 0, "a damaged block fails the sum");
	pe_model_free(bad);
	pe_model_free(built);
	pe_model_free(summed);
	mem_free(&p);
}

/* A damaged model row cannot make it huge; a damaged block fails the
 * question that reads it. */
static void test_damage(void)
{
	mem_profile p;
	pe_filter f = filter_all();
	pe_blocks src = { mem_read, &p };
	pe_selection *s = NULL;
	pe_model *m;
	text t;

	mem_begin(&p, 0);
	pe_builder_event(p.b, 0, "cpu-clock", 1, 0, 0, 1, 0, 1);
	mem_sample(&p, 0, 10, 1, 1, "a", "f", 1);
	m = mem_end(&p, 3);
	CHECK(pe_model_add_stack(m, PE_MAX_NODES, 1, 1) == 0 &&
	      pe_model_add_string(m, UINT32_MAX, "x") == 0, "ids out of range are ignored");
	CHECK_STR(folded(m, &f, &p, &t), "a;f 1/1\n");
	p.blocks[0].len -= 3;	/* cut */
	f.from_ns = 1;
	CHECK(pe_select(m, &f, &src, &s) < 0 && !s, "a corrupt block fails the range question");
	f.from_ns = 0;
	CHECK_STR(folded(m, &f, &p, &t), "a;f 1/1\n");
	mem_free(&p);
}

static pe_model *tiny(int64_t id, int64_t gen, size_t strings)
{
	pe_model *m = pe_model_new(id, gen);
	char name[32];
	size_t i;

	for (i = 1; m && i <= strings; i++) {
		snprintf(name, sizeof(name), "s%zu", i);
		pe_model_add_string(m, (uint32_t)i, name);
	}
	if (m)
		pe_model_seal(m);
	return m;
}

static void test_cache(void)
{
	pe_model *a = tiny(1, 1, 10), *a2 = tiny(1, 2, 10), *b, *c, *got;
	size_t bound = pe_model_bytes(a) * 2 + pe_model_bytes(a) / 2;
	pe_cache *cache = pe_cache_new(bound);

	pe_cache_put(cache, a);
	pe_cache_release(cache, a);	/* put's reference */
	got = pe_cache_get(cache, 1, 1);
	CHECK(got == a, "found by id and generation");
	CHECK(!pe_cache_get(cache, 1, 2), "not another generation");
	pe_cache_release(cache, got);
	/* a new generation replaces the old; the old stays alive while held */
	got = pe_cache_get(cache, 1, 1);
	pe_cache_put(cache, a2);
	CHECK(!pe_cache_get(cache, 1, 1), "the old generation is gone");
	CHECK(pe_model_id(got) == 1 && pe_model_gen(got) == 1, "a held model stays readable");
	pe_cache_release(cache, got);	/* frees a */
	pe_cache_release(cache, a2);
	/* the bound: the least recently used goes first */
	b = tiny(2, 1, 10);
	pe_cache_put(cache, b);
	pe_cache_release(cache, b);
	got = pe_cache_get(cache, 1, 2);	/* a2 is now the most recent */
	pe_cache_release(cache, got);
	c = tiny(3, 1, 10);
	pe_cache_put(cache, c);
	pe_cache_release(cache, c);
	CHECK(!pe_cache_get(cache, 2, 1), "the least recently used left");
	got = pe_cache_get(cache, 1, 2);
	CHECK(got == a2, "the recently used stays");
	pe_cache_release(cache, got);
	pe_cache_free(cache);
}

static int sum_fold(void *ctx, const char *line, uint64_t samples, uint64_t period)
{
	uint64_t *sum = ctx;

	(void)line;
	(void)period;
	sum[0] += samples;
	sum[1]++;
	return 0;
}

static int failing_hook(void *ctx, pe_builder *b, int with_block)
{
	(void)ctx;
	(void)b;
	(void)with_block;
	return -1;
}

#define HOOK_FRAMES (PE_ROWS_MAX + 1000)	/* three rows each: several row flushes */
#define HOOK_SAMPLES (3 * PE_BLOCK_SAMPLES + 5)	/* four blocks */

static void test_offline(void)
{
	pe_offline *o = pe_offline_new();
	pe_builder *b = o ? pe_offline_builder(o) : NULL, *nb;
	pe_sample x = { .pid = 1, .tid = 1, .period = 1 };
	pe_selection *sel = NULL;
	pe_filter f = filter_all();
	uint32_t last = 0, first = 0, comm;
	uint64_t sum[2] = { 0, 0 };
	char name[32];
	text t = { "", 0 };
	pe_model *m;
	size_t i;
	int rc = 0;

	if (!b) {
		CHECK(0, "out of memory");
		pe_offline_free(o);
		return;
	}
	for (i = 0; i < HOOK_FRAMES; i++) {
		snprintf(name, sizeof(name), "f%zu", i);
		last = pe_builder_stack(b, 0, pe_builder_frame(b, name, "/bin/x", 1, 0));
		if (!first)
			first = last;
	}
	comm = pe_builder_string(b, "c");
	CHECK(last && comm && !pe_builder_failed(b), "interned through the row flushes");
	for (i = 0; i < HOOK_SAMPLES && rc == 0; i++) {
		x.time = 1000 + i;
		x.stack = i % 2 ? last : first;
		x.comm = comm;
		rc = pe_builder_sample(b, &x, NULL);
	}
	CHECK(rc == 0, "the hook takes full blocks: sample returned %d", rc);
	pe_builder_event(b, 0, "cpu-clock", 1, 0, 0, 4000, 1, HOOK_SAMPLES);
	CHECK(pe_offline_finish(o) == 0 && (m = pe_offline_model(o)) != NULL, "finished");
	if (!pe_offline_model(o))
		goto out;
	CHECK(pe_offline_builder(o) == NULL, "the builder is gone after finishing");
	CHECK(pe_offline_block_bytes(o) > 0, "blocks kept");
	/* the first and the last frame interned, rows of the first and last flush */
	CHECK(pe_select(m, &f, pe_offline_blocks(o), &sel) == 0 &&
	      pe_fold(m, &f, sel, fold_line, &t) == 0, "fold");
	snprintf(name, sizeof(name), "f%u", (unsigned)HOOK_FRAMES - 1);
	CHECK(strstr(t.s, "c;f0 ") && strstr(t.s, name), "folded:\n%s", t.s);
	pe_selection_free(sel);
	sel = NULL;
	/* a time range reads the kept blocks: samples at 1000 + i, [from, to) */
	f.from_ns = 1000 + PE_BLOCK_SAMPLES + 7;
	f.to_ns = 1000 + 3 * PE_BLOCK_SAMPLES + 2;
	CHECK(pe_select(m, &f, pe_offline_blocks(o), &sel) == 0 &&
	      pe_fold(m, &f, sel, sum_fold, sum) == 0, "fold a time range");
	CHECK(sum[0] == 2 * PE_BLOCK_SAMPLES - 5 && sum[1] == 2, "time range: %llu samples, %llu lines",
	      (unsigned long long)sum[0], (unsigned long long)sum[1]);
	pe_selection_free(sel);
out:
	pe_offline_free(o);
	/* a hook that fails fails the builder; no hook, no flush */
	nb = pe_builder_new();
	if (!nb)
		return;
	CHECK(pe_builder_flush(nb) < 0, "flush without a hook");
	pe_builder_free(nb);
	nb = pe_builder_new();
	if (!nb)
		return;
	pe_builder_set_flush(nb, failing_hook, NULL);
	x.stack = 0;
	for (i = 0, rc = 0; i < PE_BLOCK_SAMPLES && rc == 0; i++)
		rc = pe_builder_sample(nb, &x, NULL);
	CHECK(rc < 0 && i == PE_BLOCK_SAMPLES && pe_builder_failed(nb),
	      "a failing hook fails the full block's sample (%d at %zu)", rc, i);
	pe_builder_free(nb);
}

int main(void)
{
	test_codec();
	test_builder();
	test_agg_from_blocks();
	test_damage();
	test_cache();
	test_offline();
	return check_done("engine-blocks");
}
