/*
 * engine-query: the profile engine answers one profile's questions from a
 * model built in memory with its own builder - no database: folded
 * stacks (every filter), the flame graph, top, time ranges read from the
 * packed blocks, the timeline, threads. Every answer is compared with the
 * one worked out by hand from the samples below.
 */
#include "config.h"

#include "engine_common.h"

/* The shared samples (engine_common.h), a block every two samples: time
 * ranges skip blocks. */
static pe_model *scenario(mem_profile *p)
{
	mem_begin(p, 2);
	mem_two_events(p);
	return mem_end(p, 1);
}

static void test_fold(pe_model *m, mem_profile *p)
{
	pe_filter f = filter_all();
	text t;

	/* the first sample's event, dying task left out, bytewise order */
	CHECK_STR(folded(m, &f, p, &t),
		  "cc1_x;main;emit;write;sys_write 1/10\n"
		  "cc1_x;main;parse;lex 1/10\n"
		  "make;main;parse 1/50\n"
		  "make;main;parse;lex 2/200\n");
	f.kernel = 1;
	f.with_pid = 1;
	CHECK_STR(folded(m, &f, p, &t),
		  "cc1_x-20;main;emit;write;sys_write_[k] 1/10\n"
		  "cc1_x-20;main;parse;lex 1/10\n"
		  "make-10;main;parse 1/50\n"
		  "make-10;main;parse;lex 2/200\n");
	f = filter_all();
	f.with_tid = 1;
	f.tid = 11;
	CHECK_STR(folded(m, &f, p, &t), "make-10/11;main;parse 1/50\n");
	f = filter_all();
	f.comm = "cc1 x";
	CHECK_STR(folded(m, &f, p, &t),
		  "cc1_x;main;emit;write;sys_write 1/10\ncc1_x;main;parse;lex 1/10\n");
	f.pid = 10;
	CHECK_STR(folded(m, &f, p, &t), "");
	/* an event by its name, and by the name before its modifiers */
	f = filter_all();
	f.event = "sched:sched_switch";
	CHECK_STR(folded(m, &f, p, &t), "cc1_x 1/1\nmake;main;parse 1/1\n");
	f.event = "cpu-clock";
	CHECK_STR(folded(m, &f, p, &t),
		  "cc1_x;main;emit;write;sys_write 1/10\n"
		  "cc1_x;main;parse;lex 1/10\n"
		  "make;main;parse 1/50\n"
		  "make;main;parse;lex 2/200\n");
	f.event = "cycles";
	CHECK_STR(folded(m, &f, p, &t), "");
}

static void test_time_range(pe_model *m, mem_profile *p)
{
	pe_filter f = filter_all();
	text t;

	/* [2000, 4500): three samples; the blocks of [1000,2000] .. [7000,8000] */
	f.from_ns = 2000;
	f.to_ns = 4500;
	mem_reads = 0;
	CHECK_STR(folded(m, &f, p, &t),
		  "cc1_x;main;emit;write;sys_write 1/10\n"
		  "make;main;parse 1/50\n"
		  "make;main;parse;lex 1/100\n");
	CHECK(mem_reads == 2, "a range reads only the blocks it overlaps: %u read", mem_reads);
	/* open ends; the comm filter on block samples; an unknown comm */
	f.to_ns = 0;
	f.from_ns = 4500;
	f.comm = "cc1 x";
	CHECK_STR(folded(m, &f, p, &t), "cc1_x;main;parse;lex 1/10\n");
	f.comm = "nobody";
	CHECK_STR(folded(m, &f, p, &t), "");
	f = filter_all();
	f.to_ns = 1001;
	f.with_tid = 1;
	CHECK_STR(folded(m, &f, p, &t), "make-10/10;main;parse;lex 1/100\n");
}

static void test_flame(pe_model *m, mem_profile *p)
{
	pe_filter f = filter_all();
	text t;
	size_t opens = 0, i;

	CHECK_STR(flamed(m, &f, 0, p, &t),
		  "all=270(cc1_x=20(main@/bin/app=20(emit@/bin/app=10(write@/lib/libc.so.6=10("
		  "sys_write@[kernel.kallsyms]=10()))parse@/bin/app=10(lex@/bin/app=10())))"
		  "make=250(main@/bin/app=250(parse@/bin/app=250(lex@/bin/app=200()))))");
	f.kernel = 1;
	CHECK_STR(flamed(m, &f, 1, p, &t),
		  "all=5(cc1_x=2(main@/bin/app=2(emit@/bin/app=1(write@/lib/libc.so.6=1("
		  "sys_write_[k]@[kernel.kallsyms]=1()))parse@/bin/app=1(lex@/bin/app=1())))"
		  "make=3(main@/bin/app=3(parse@/bin/app=3(lex@/bin/app=2()))))");
	/* the largest 4 nodes: all, make, its main and parse (lex is smaller) */
	f = filter_all();
	f.max_nodes = 4;
	CHECK_STR(flamed(m, &f, 0, p, &t),
		  "all=270(make=250(main@/bin/app=250(parse@/bin/app=250())))");
	/* no sample of that event: the root alone */
	f = filter_all();
	f.event = "cycles";
	CHECK_STR(flamed(m, &f, 0, p, &t), "all=0()");
	for (i = 0; t.s[i]; i++)
		opens += t.s[i] == '(';
	CHECK(opens == 1, "one node");
}

static void test_top(pe_model *m)
{
	pe_filter f = filter_all();
	pe_selection *s;
	pe_top_row *rows;
	size_t n, i;
	text t = { .len = 0 };

	f.kernel = 1;
	if (pe_select(m, &f, NULL, &s) < 0 || pe_top(m, &f, s, 0, &rows, &n) < 0) {
		CHECK(0, "top failed");
		return;
	}
	/* rows in name-id order: main, parse, lex, emit, write, sys_write_[k] */
	for (i = 0; i < n; i++)
		text_add(&t, "%s@%s self=%llu total=%llu\n", rows[i].name,
			 rows[i].dso ? rows[i].dso : "-", (unsigned long long)rows[i].self,
			 (unsigned long long)rows[i].total);
	CHECK_STR(t.s,
		  "main@/bin/app self=0 total=270\n"
		  "parse@/bin/app self=50 total=260\n"
		  "lex@/bin/app self=210 total=210\n"
		  "emit@/bin/app self=0 total=10\n"
		  "write@/lib/libc.so.6 self=0 total=10\n"
		  "sys_write_[k]@[kernel.kallsyms] self=10 total=10\n");
	pe_top_free(rows, n);
	pe_selection_free(s);
}

static void test_timeline(pe_model *m, mem_profile *p)
{
	pe_blocks src = { mem_read, p };
	pe_timeline tl;
	text t = { .len = 0 };
	size_t i;

	/* every sample of the event, dying ones too, from the first */
	if (pe_timeline_make(m, NULL, 2500, &src, &tl) < 0) {
		CHECK(0, "timeline failed");
		return;
	}
	CHECK_STR(tl.event, "cpu-clock:ppp");
	CHECK(tl.start_ns == 1000 && tl.bucket_ns == 2500, "start %llu",
	      (unsigned long long)tl.start_ns);
	for (i = 0; i < tl.n; i++)
		text_add(&t, "%llu:%llu/%llu ", (unsigned long long)tl.buckets[i].t_ns,
			 (unsigned long long)tl.buckets[i].samples,
			 (unsigned long long)tl.buckets[i].period);
	CHECK_STR(t.s, "1000:3/250 3500:2/20 6000:1/5 ");
	pe_timeline_free(&tl);
	t.len = 0;
	if (pe_timeline_make(m, "sched:sched_switch", 0, &src, &tl) == 0) {
		for (i = 0; i < tl.n; i++)
			text_add(&t, "%llu:%llu ", (unsigned long long)tl.buckets[i].t_ns,
				 (unsigned long long)tl.buckets[i].samples);
		CHECK_STR(t.s, "7000:1 8000:1 ");
		CHECK(tl.bucket_ns == 1, "bucket 0 means 1 ns");
		pe_timeline_free(&tl);
	}
	if (pe_timeline_make(m, "cycles", 10, &src, &tl) == 0) {
		CHECK(!tl.event && !tl.n, "no such event: no buckets");
		pe_timeline_free(&tl);
	}
}

/* More buckets than an array may hold: the sparse path. */
static void test_timeline_sparse(void)
{
	mem_profile p;
	pe_blocks src = { mem_read, &p };
	pe_timeline tl;
	pe_model *m;

	mem_begin(&p, 0);
	pe_builder_event(p.b, 0, "cpu-clock", 1, 0, 0, 1, 0, 3);
	mem_sample(&p, 0, 10000001, 1, 1, "a", "f", 2);
	mem_sample(&p, 0, 1, 1, 1, "a", "f", 3);
	mem_sample(&p, 0, 2, 1, 1, "a", "f", 4);
	m = mem_end(&p, 2);
	if (pe_timeline_make(m, NULL, 1, &src, &tl) == 0) {
		CHECK(tl.start_ns == 1 && tl.n == 3 && tl.buckets[0].t_ns == 1 &&
		      tl.buckets[1].t_ns == 2 && tl.buckets[2].t_ns == 10000001 &&
		      tl.buckets[2].period == 2, "sparse buckets: %zu", tl.n);
		pe_timeline_free(&tl);
	} else {
		CHECK(0, "sparse timeline failed");
	}
	mem_free(&p);
}

static void test_threads(pe_model *m)
{
	pe_thread *th;
	text t = { .len = 0 };
	size_t n, i, k;

	if (pe_threads(m, &th, &n) < 0) {
		CHECK(0, "threads failed");
		return;
	}
	for (i = 0; i < n; i++) {
		text_add(&t, "%u/%u=%llu", th[i].pid, th[i].tid, (unsigned long long)th[i].samples);
		for (k = 0; k < th[i].nr_comms; k++)
			text_add(&t, ",%s", th[i].comms[k]);
		text_add(&t, " ");
	}
	/* any event, dying tasks too; most samples first, then pid, tid */
	CHECK_STR(t.s, "10/10=3,make 20/20=3,cc1 x 10/11=1,make 4294967295/4294967295=1,make ");
	pe_threads_free(th, n);
}

/* A thread that exec'd: its comms by samples; with as many, the later
 * name first. */
static void test_threads_exec(void)
{
	mem_profile p;
	pe_thread *th;
	pe_model *m;
	size_t n;

	mem_begin(&p, 0);
	pe_builder_event(p.b, 0, "cpu-clock", 1, 0, 0, 1, 0, 5);
	mem_sample(&p, 0, 1, 5, 5, "perf-exec", "f", 1);
	mem_sample(&p, 0, 2, 5, 5, "perf-exec", "f", 1);
	mem_sample(&p, 0, 3, 5, 5, "lsattr", "g", 1);
	mem_sample(&p, 0, 4, 5, 5, "lsattr", "f", 1);
	mem_sample(&p, 0, 5, 6, 6, "sh", "f", 1);
	m = mem_end(&p, 4);
	if (pe_threads(m, &th, &n) == 0) {
		CHECK(n == 2 && th[0].samples == 4 && th[0].nr_comms == 2 &&
		      !strcmp(th[0].comms[0], "lsattr") && !strcmp(th[0].comms[1], "perf-exec"),
		      "tied comms: %s first", n ? th[0].comms[0] : "?");
		pe_threads_free(th, n);
	} else {
		CHECK(0, "threads failed");
	}
	mem_free(&p);
}

int main(void)
{
	mem_profile p;
	pe_model *m = scenario(&p);

	CHECK(p.nr_blocks == 4, "blocks: %zu", p.nr_blocks);
	CHECK(pe_model_id(m) == 1 && pe_model_gen(m) == 1 && pe_model_bytes(m) > 0, "model");
	test_fold(m, &p);
	test_time_range(m, &p);
	test_flame(m, &p);
	test_top(m);
	test_timeline(m, &p);
	test_timeline_sparse();
	test_threads(m);
	test_threads_exec();
	mem_free(&p);
	return check_done("engine-query");
}
