/*
 * engine-views: the deeper views of one profile, from a model built in
 * memory with the engine's builder (no database): off-CPU time as a
 * measure (folded, flame graph, time ranges, the combined on+off-CPU
 * view, the timeline spreading it over the buckets it covers), callers and
 * callees of a function (recursion counted once, roots equal to pe_top's
 * total), a function's self samples by address (equal to pe_top's self)
 * with its DSO's build-id from the model,
 * the builder's leaf rows made in chunks, and blocks of the first format
 * (no off-CPU column) still decoding. Every answer is worked out by hand.
 */
#include "config.h"

#include <zstd.h>

#include "engine_common.h"

#define EV_CLOCK 0
#define EV_SWITCH 1
#define DYING UINT32_MAX
#define MAX_LEAVES 64
#define APP_BUILD_ID "0123456789abcdef0123456789abcdef01234567"

typedef struct views {
	mem_profile p;
	pe_leaf_row leaves[MAX_LEAVES];
	size_t nr_leaves;
} views;

/* A sample with its off-CPU time and leaf address (the leaf frame is the
 * last of `folded`, as ingest gives it). */
static void vsample(views *v, uint32_t event, uint64_t time, uint32_t pid, const char *folded,
		    uint64_t period, uint64_t offcpu, uint64_t leaf_addr)
{
	const char *last = strrchr(folded, ';') ? strrchr(folded, ';') + 1 : folded;
	char leaf[256], *at;
	size_t l;
	int kernel;
	pe_sample s = { .event = event, .time = time, .pid = pid, .tid = pid, .period = period,
			.offcpu = offcpu, .leaf_addr = leaf_addr };

	s.stack = mem_stack(&v->p, folded);
	/* "name@dso", a trailing "!" for a kernel frame, as mem_stack reads it */
	snprintf(leaf, sizeof(leaf), "%s", last);
	l = strlen(leaf);
	kernel = l && leaf[l - 1] == '!';
	if (kernel)
		leaf[l - 1] = 0;
	if ((at = strchr(leaf, '@')))
		*at++ = 0;
	s.leaf_frame = pe_builder_frame(v->p.b, leaf, at, 1, kernel);
	s.comm = pe_builder_string(v->p.b, "app");
	if (pe_builder_sample(v->p.b, &s, NULL) > 0 ||
	    (v->p.every && ++v->p.in_block == v->p.every))
		mem_pack(&v->p);
}

/*
 * cpu-clock: work calls hot (two addresses), other calls hot, a recursion
 * rec;rec;hot, work as the leaf, and a dying task; sched_switch: a sleep
 * of 0.5 ms, a switch-out never followed by a switch-in, and one of 0.1 ms.
 */
static pe_model *scenario(views *v)
{
	const pe_row *rows;
	size_t n, i;

	memset(v, 0, sizeof(*v));
	mem_begin(&v->p, 3);
	pe_builder_event(v->p.b, EV_CLOCK, "cpu-clock:ppp", 1, 0, 0, 4000, 1, 6);
	pe_builder_event(v->p.b, EV_SWITCH, "sched:sched_switch", 2, 0, 0, 1, 0, 3);
	/* /bin/app's build-id, as the parse notes it: /annotate names it */
	pe_builder_mmap(v->p.b, 10, 0x400000, 0x1000, 0, "/bin/app", APP_BUILD_ID, 500);
	vsample(v, EV_CLOCK, 1000, 10, "main@/bin/app;work@/bin/app;hot@/bin/app", 100, 0, 0x10);
	vsample(v, EV_CLOCK, 2000, 10, "main@/bin/app;work@/bin/app;hot@/bin/app", 100, 0, 0x14);
	vsample(v, EV_CLOCK, 3000, 10, "main@/bin/app;other@/bin/app;hot@/bin/app", 50, 0, 0x10);
	vsample(v, EV_CLOCK, 4000, 10, "main@/bin/app;rec@/bin/app;rec@/bin/app;hot@/bin/app", 10,
		0, 0x18);
	vsample(v, EV_CLOCK, 5000, 10, "main@/bin/app;work@/bin/app", 20, 0, 0x40);
	vsample(v, EV_CLOCK, 5500, DYING, "main@/bin/app;work@/bin/app;hot@/bin/app", 7, 0, 0x10);
	vsample(v, EV_SWITCH, 6000, 10,
		"main@/bin/app;sleeper@/bin/app;nanosleep@/lib/libc.so.6;schedule@[kernel.kallsyms]!",
		1, 500000, 0xffff0010);
	vsample(v, EV_SWITCH, 700000, 10,
		"main@/bin/app;sleeper@/bin/app;nanosleep@/lib/libc.so.6;schedule@[kernel.kallsyms]!",
		1, 0, 0xffff0010);
	vsample(v, EV_SWITCH, 800000, 10, "main@/bin/app;work@/bin/app;schedule@[kernel.kallsyms]!",
		1, 100000, 0xffff0020);
	/* the leaf rows, two per call, as a writer stores them between blocks */
	for (i = 0; i < 10 && pe_builder_leaf_rows(v->p.b, 2) > 0; i++)
		;
	CHECK(i == 2, "6 leaf rows in chunks of 2: %zu calls said more", i);
	CHECK(pe_builder_leaf_dropped(v->p.b) == 0, "none dropped");
	rows = pe_builder_rows(v->p.b, &n);
	for (i = 0; i < n; i++)
		if (v->nr_leaves < MAX_LEAVES && pe_leaf_row_of(&rows[i], &v->leaves[v->nr_leaves]))
			v->nr_leaves++;
	return mem_end(&v->p, 1);
}

static void test_offcpu(pe_model *m, views *v)
{
	pe_filter f = filter_all();
	const char *why;
	text t;

	CHECK_STR(pe_offcpu_event(m), "sched:sched_switch");
	/* the never-resumed switch-out weighs nothing and is left out */
	f.measure = PE_MEASURE_OFFCPU;
	CHECK(pe_measure_check(m, &f, &why) == 0, "applies");
	CHECK_STR(folded(m, &f, &v->p, &t),
		  "app;main;sleeper;nanosleep;schedule 2/500000\n"
		  "app;main;work;schedule 1/100000\n");
	f.kernel = 1;
	CHECK_STR(flamed(m, &f, 0, &v->p, &t),
		  "all=600000(app=600000(main@/bin/app=600000(sleeper@/bin/app=500000("
		  "nanosleep@/lib/libc.so.6=500000(schedule_[k]@[kernel.kallsyms]=500000()))"
		  "work@/bin/app=100000(schedule_[k]@[kernel.kallsyms]=100000()))))");
	/* a time range: switch-outs in [700000, 900000) */
	f = filter_all();
	f.measure = PE_MEASURE_OFFCPU;
	f.from_ns = 700000;
	f.to_ns = 900000;
	CHECK_STR(folded(m, &f, &v->p, &t), "app;main;work;schedule 1/100000\n");
	/* an event named that has no off-CPU time */
	f = filter_all();
	f.measure = PE_MEASURE_OFFCPU;
	f.event = "cpu-clock";
	CHECK(pe_measure_check(m, &f, &why) == 1 && why, "cpu-clock carries none");
	CHECK_STR(folded(m, &f, &v->p, &t), "");
	/* on-CPU nanoseconds of cpu-clock plus off-CPU ones */
	f = filter_all();
	f.measure = PE_MEASURE_WALL;
	CHECK(pe_measure_check(m, &f, &why) == 0, "wall applies");
	CHECK_STR(folded(m, &f, &v->p, &t),
		  "app;main;other;hot 1/50\n"
		  "app;main;rec;rec;hot 1/10\n"
		  "app;main;sleeper;nanosleep;schedule 2/500000\n"
		  "app;main;work 1/20\n"
		  "app;main;work;hot 2/200\n"
		  "app;main;work;schedule 1/100000\n");
	f.event = "sched:sched_switch";
	CHECK(pe_measure_check(m, &f, &why) == 1, "wall needs a clock event: %s", why);
}

/* A profile with no off-CPU time: the measure does not apply. */
static void test_no_offcpu(void)
{
	mem_profile p;
	pe_filter f = filter_all();
	pe_model *m;
	const char *why = NULL;
	text t;

	mem_begin(&p, 0);
	pe_builder_event(p.b, 0, "cycles", 0, 0, 0, 4000, 1, 1);
	mem_sample(&p, 0, 10, 1, 1, "x", "main@/bin/x", 5);
	m = mem_end(&p, 2);
	f.measure = PE_MEASURE_OFFCPU;
	CHECK(!pe_offcpu_event(m), "no off-CPU event");
	CHECK(pe_measure_check(m, &f, &why) == 1 && why && strstr(why, "switch-events"),
	      "why: %s", why ? why : "(none)");
	CHECK_STR(folded(m, &f, &p, &t), "");
	f.measure = PE_MEASURE_WALL;
	CHECK(pe_measure_check(m, &f, &why) == 1, "no wall either");
	mem_free(&p);
}

static uint64_t top_of(pe_model *m, const pe_filter *f, const char *name, int by_samples,
		       int self)
{
	pe_selection *s;
	pe_top_row *rows;
	size_t n, i;
	uint64_t v = UINT64_MAX;

	if (pe_select(m, f, NULL, &s) < 0 || pe_top(m, f, s, by_samples, &rows, &n) < 0)
		return v;
	for (i = 0; i < n; i++)
		if (!strcmp(rows[i].name, name))
			v = self ? rows[i].self : rows[i].total;
	pe_top_free(rows, n);
	pe_selection_free(s);
	return v;
}

static const char *sandwiched(pe_model *m, const pe_filter *f, const char *fn, int by_samples,
			      views *v, text *t, int *rc)
{
	static const pe_tree_cb cb = { tree_enter, tree_leave };
	pe_selection *s = pick(m, f, &v->p, t);

	*rc = -1;
	if (s) {
		text_add(t, "callers ");
		*rc = pe_sandwich(m, f, s, by_samples, fn, &cb, t, &cb, t);
	}
	pe_selection_free(s);
	return t->s;
}

static void test_sandwich(pe_model *m, views *v)
{
	pe_filter f = filter_all();
	text t;
	int rc;

	/* callers inverted down to the comm; callees from the function */
	CHECK_STR(sandwiched(m, &f, "hot", 0, v, &t, &rc),
		  "callers hot@/bin/app=260(other@/bin/app=50(main@/bin/app=50(app=50()))"
		  "rec@/bin/app=10(rec@/bin/app=10(main@/bin/app=10(app=10())))"
		  "work@/bin/app=200(main@/bin/app=200(app=200())))"
		  "hot@/bin/app=260()");
	CHECK(top_of(m, &f, "hot", 0, 0) == 260, "top's total of hot");
	CHECK_STR(sandwiched(m, &f, "work", 0, v, &t, &rc),
		  "callers work@/bin/app=220(main@/bin/app=220(app=220()))"
		  "work@/bin/app=220(hot@/bin/app=200())");
	/* recursion counts once, from the outermost frame */
	CHECK_STR(sandwiched(m, &f, "rec", 1, v, &t, &rc),
		  "callers rec@/bin/app=1(main@/bin/app=1(app=1()))"
		  "rec@/bin/app=1(rec@/bin/app=1(hot@/bin/app=1()))");
	CHECK(top_of(m, &f, "rec", 1, 0) == 1, "top's total of rec");
	/* off-CPU: who called the function that switched out */
	f.measure = PE_MEASURE_OFFCPU;
	CHECK_STR(sandwiched(m, &f, "schedule", 0, v, &t, &rc),
		  "callers schedule@[kernel.kallsyms]=600000(nanosleep@/lib/libc.so.6=500000("
		  "sleeper@/bin/app=500000(main@/bin/app=500000(app=500000())))"
		  "work@/bin/app=100000(main@/bin/app=100000(app=100000())))"
		  "schedule@[kernel.kallsyms]=600000()");
	CHECK(top_of(m, &f, "schedule", 0, 0) == 600000, "off-CPU total of schedule");
	/* unknown name; a known name the filter selects nothing of */
	f = filter_all();
	sandwiched(m, &f, "nosuch", 0, v, &t, &rc);
	CHECK(rc == 1, "unknown function: %d", rc);
	f.comm = "nobody";
	CHECK_STR(sandwiched(m, &f, "hot", 0, v, &t, &rc), "callers hot=0()hot=0()");
	CHECK(rc == 0, "known but not selected");
}

static int leaf_read(void *src, uint32_t frame, pe_leaf_cb cb, void *ctx)
{
	views *v = src;
	size_t i;
	int rc;

	for (i = 0; i < v->nr_leaves; i++)
		if (v->leaves[i].frame == frame && (rc = cb(ctx, &v->leaves[i])) != 0)
			return rc;
	return 0;
}

static const char *annotated(pe_model *m, const pe_filter *f, const char *fn, views *v,
			     text *t, int *rc)
{
	pe_leaves src = { leaf_read, v };
	pe_annot a;
	size_t i, k;

	t->len = 0;
	t->s[0] = 0;
	*rc = pe_annotate(m, f, fn, &src, &a);
	text_add(t, "%llu/%llu", (unsigned long long)a.samples, (unsigned long long)a.value);
	for (i = 0; i < a.n; i++) {
		text_add(t, " %s%s%s:", a.dsos[i].dso ? a.dsos[i].dso : "-",
			 a.dsos[i].kernel ? "!" : "",
			 !a.dsos[i].build_id ? "" :
			 strcmp(a.dsos[i].build_id, APP_BUILD_ID) ? "#wrong" : "#bid");
		for (k = 0; k < a.dsos[i].n; k++)
			text_add(t, " %llx=%llu/%llu", (unsigned long long)a.dsos[i].addrs[k].addr,
				 (unsigned long long)a.dsos[i].addrs[k].samples,
				 (unsigned long long)a.dsos[i].addrs[k].value);
	}
	pe_annot_free(&a);
	return t->s;
}

static void test_annotate(pe_model *m, views *v)
{
	pe_filter f = filter_all();
	text t;
	int rc;

	/* the dying task's sample is not counted: the sums are top's self */
	CHECK_STR(annotated(m, &f, "hot", v, &t, &rc), "4/260 /bin/app#bid: 10=2/150 14=1/100 18=1/10");
	CHECK(top_of(m, &f, "hot", 0, 1) == 260 && top_of(m, &f, "hot", 1, 1) == 4, "top's self");
	CHECK_STR(annotated(m, &f, "work", v, &t, &rc), "1/20 /bin/app#bid: 40=1/20");
	f.measure = PE_MEASURE_OFFCPU;
	CHECK_STR(annotated(m, &f, "schedule", v, &t, &rc),
		  "3/600000 [kernel.kallsyms]!: ffff0010=2/500000 ffff0020=1/100000");
	f.measure = PE_MEASURE_PERIOD;
	f.event = "sched:sched_switch";
	CHECK_STR(annotated(m, &f, "schedule", v, &t, &rc),
		  "3/3 [kernel.kallsyms]!: ffff0010=2/2 ffff0020=1/1");
	annotated(m, &f, "nosuch", v, &t, &rc);
	CHECK(rc == 1, "unknown function");
}

static void test_timeline(pe_model *m, views *v)
{
	pe_blocks src = { mem_read, &v->p };
	pe_filter f = filter_all();
	pe_timeline tl;
	text t = { .len = 0 };
	size_t i;

	/* [6000, 506000) over five buckets; 6000 in [706000, 806000), 94000 after */
	f.measure = PE_MEASURE_OFFCPU;
	if (pe_timeline_measured(m, &f, 100000, &src, &tl) < 0) {
		CHECK(0, "timeline failed");
		return;
	}
	CHECK_STR(tl.event, "sched:sched_switch");
	for (i = 0; i < tl.n; i++)
		text_add(&t, "%llu:%llu/%llu/%llu ", (unsigned long long)tl.buckets[i].t_ns,
			 (unsigned long long)tl.buckets[i].samples,
			 (unsigned long long)tl.buckets[i].period,
			 (unsigned long long)tl.buckets[i].offcpu);
	CHECK_STR(t.s, "6000:1/0/100000 106000:0/0/100000 206000:0/0/100000 306000:0/0/100000 "
		  "406000:0/0/100000 606000:1/0/0 706000:1/0/6000 806000:0/0/94000 ");
	pe_timeline_free(&tl);
	/* combined: cpu-clock's period and the off-CPU time side by side */
	f.measure = PE_MEASURE_WALL;
	t.len = 0;
	if (pe_timeline_measured(m, &f, 500000, &src, &tl) == 0) {
		CHECK_STR(tl.event, "cpu-clock:ppp");
		for (i = 0; i < tl.n; i++)
			text_add(&t, "%llu:%llu/%llu/%llu ", (unsigned long long)tl.buckets[i].t_ns,
				 (unsigned long long)tl.buckets[i].samples,
				 (unsigned long long)tl.buckets[i].period,
				 (unsigned long long)tl.buckets[i].offcpu);
		CHECK_STR(t.s, "1000:7/287/495000 501000:2/0/105000 ");
		pe_timeline_free(&tl);
	}
}

/* A block written before the off-CPU column existed still decodes. */
static void test_block_v1(void)
{
	uint8_t raw[8 + 2 * PE_BLOCK_ROW_BYTES_V1], *p = raw, *dec = malloc(PE_BLOCK_RAW_MAX);
	uint8_t z[1024];
	pe_block *b = calloc(1, sizeof(*b));
	size_t zl, i;
	static const uint64_t cols64[2][2] = { { 100, 5 }, { 7, 8 } };	/* time deltas, period */

#define PUT32(v) do { uint32_t x_ = (v); for (i = 0; i < 4; i++) *p++ = (uint8_t)(x_ >> (8 * i)); } while (0)
#define PUT64(v) do { uint64_t y_ = (v); PUT32((uint32_t)y_); PUT32((uint32_t)(y_ >> 32)); } while (0)
	if (!dec || !b) {
		CHECK(0, "out of memory");
		goto out;
	}
	PUT32(PE_BLOCK_MAGIC_V1);
	PUT32(2);
	PUT64(cols64[0][0]); PUT64(cols64[0][1]);	/* time: 100, 105 */
	PUT32(1); PUT32(1);	/* event */
	PUT32(0); PUT32(1);	/* cpu */
	PUT32(4); PUT32(4);	/* pid */
	PUT32(4); PUT32(5);	/* tid */
	PUT64(cols64[1][0]); PUT64(cols64[1][1]);	/* period */
	PUT64(0); PUT64(3);	/* weight */
	PUT32(9); PUT32(10);	/* stack */
	PUT32(2); PUT32(2);	/* comm */
	zl = ZSTD_compress(z, sizeof(z), raw, (size_t)(p - raw), 1);
	CHECK(!ZSTD_isError(zl), "compress");
	CHECK(pe_block_decode(z, zl, 2, dec, b) == 0, "a first-format block decodes");
	CHECK(b->n == 2 && b->time[1] == 105 && b->tid[1] == 5 && b->period[1] == 8 &&
	      b->weight[1] == 3 && b->stack[1] == 10 && b->comm[0] == 2 && !b->offcpu[0] &&
	      !b->offcpu[1], "its columns, off-CPU 0");
	/* a first-format magic with the new size is refused, and the other way round */
	raw[0] ^= 0x70;	/* "PHSB" -> "2HSB" */
	zl = ZSTD_compress(z, sizeof(z), raw, (size_t)(p - raw), 1);
	CHECK(pe_block_decode(z, zl, 2, dec, b) < 0, "a wrong magic");
out:
	free(dec);
	free(b);
#undef PUT32
#undef PUT64
}

int main(void)
{
	views v;
	pe_model *m = scenario(&v);

	test_offcpu(m, &v);
	test_no_offcpu();
	test_sandwich(m, &v);
	test_annotate(m, &v);
	test_timeline(m, &v);
	test_block_v1();
	mem_free(&v.p);
	return check_done("engine-views");
}
