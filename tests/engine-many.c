/*
 * engine-many: the engine's answers about many profiles (engine/
 * many.h, stats.h and the merged pe_diff), from models built in memory
 * and compared with answers worked out by hand: the per-profile summary
 * series read, series values, merged flame graphs (summed, normalized,
 * pruned), merged /top, the ranked changes with each significance test,
 * the statistics against closed forms and independently integrated
 * values, and merged timelines.
 */
#include "config.h"

#include <math.h>

#include "engine_common.h"
#include "engine/many.h"
#include "engine/stats.h"

#define CHECK_NEAR(got, want, tol) do { \
	double g_ = (got), w_ = (want); \
	CHECK(fabs(g_ - w_) <= (tol), "%s = %.9g, want %.9g", #got, g_, w_); \
} while (0)

/* ---- the summary ------------------------------------------------------------------- */

static pe_model *summary_profile(mem_profile *p)
{
	mem_begin(p, 0);
	pe_builder_event(p->b, 0, "cpu-clock", 1, 0, 0, 1, 0, 5);
	pe_builder_event(p->b, 1, "sched:sched_switch", 2, 0, 0, 1, 0, 1);
	mem_sample(p, 0, 1, 1, 1, "app", "main@/bin/app;hot@/bin/app", 10);
	mem_sample(p, 0, 2, 1, 1, "app", "main@/bin/app;hot@/bin/app", 10);
	mem_sample(p, 0, 3, 1, 1, "app", "main@/bin/app;libfn@/lib/libc.so.6", 5);
	mem_sample(p, 0, 4, 2, 2, "sh", "main@/bin/sh;hot@/bin/app", 1);
	mem_sample(p, 0, 5, UINT32_MAX, UINT32_MAX, "dying", "main@/bin/app;hot@/bin/app", 7);
	mem_sample(p, 1, 6, 1, 1, "app", "main@/bin/app;sw@[kernel.kallsyms]!", 1);
	return mem_end(p, 1);
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_summary(void)
{
	static const char *const kinds[] = { "fn", "dso", "base", "comm" };
	mem_profile p;
	pe_model *m = summary_profile(&p);
	pe_summary s;
	char *lines[64];
	size_t i, n = 0;
	text t = { .len = 0 };

	CHECK(pe_summary_make(m, &s) == 0, "summary");
	CHECK(s.nr_events == 2, "events %zu", s.nr_events);
	if (s.nr_events == 2) {
		CHECK(s.events[0].ord == 0 && !strcmp(s.events[0].name, "cpu-clock") &&
		      s.events[0].samples == 4 && s.events[0].period == 26, "event 0: %s %llu/%llu",
		      s.events[0].name, (unsigned long long)s.events[0].samples,
		      (unsigned long long)s.events[0].period);
		CHECK(s.events[1].ord == 1 && !strcmp(s.events[1].name, "sched:sched_switch") &&
		      s.events[1].samples == 1 && s.events[1].period == 1, "event 1");
	}
	for (i = 0; i < s.nr_rows && n < 64; i++) {
		const pe_sum_row *r = &s.rows[i];
		char *l = malloc(256);
		snprintf(l, 256, "%u %s %s%s%s %llu/%llu %llu/%llu\n", r->ord, kinds[r->kind], r->key,
			 r->dso ? "@" : "", r->dso ? r->dso : "", (unsigned long long)r->self_samples,
			 (unsigned long long)r->self_period, (unsigned long long)r->total_samples,
			 (unsigned long long)r->total_period);
		lines[n++] = l;
	}
	qsort(lines, n, sizeof(*lines), cmp_line);
	for (i = 0; i < n; i++) {
		text_add(&t, "%s", lines[i]);
		free(lines[i]);
	}
	/* key self(samples/period) total(samples/period); dying tasks left out;
	 * "main" from two DSOs is one function, named by its first frame's */
	CHECK_STR(t.s,
		  "0 base app 3/21 4/26\n"
		  "0 base libc.so.6 1/5 1/5\n"
		  "0 base sh 0/0 1/1\n"
		  "0 comm app 3/25 3/25\n"
		  "0 comm sh 1/1 1/1\n"
		  "0 dso /bin/app 3/21 4/26\n"
		  "0 dso /bin/sh 0/0 1/1\n"
		  "0 dso /lib/libc.so.6 1/5 1/5\n"
		  "0 fn hot@/bin/app 3/21 3/21\n"
		  "0 fn libfn@/lib/libc.so.6 1/5 1/5\n"
		  "0 fn main@/bin/app 0/0 4/26\n"
		  "1 base [kernel.kallsyms] 1/1 1/1\n"
		  "1 base app 0/0 1/1\n"
		  "1 comm app 1/1 1/1\n"
		  "1 dso /bin/app 0/0 1/1\n"
		  "1 dso [kernel.kallsyms] 1/1 1/1\n"
		  "1 fn main@/bin/app 0/0 1/1\n"
		  "1 fn sw@[kernel.kallsyms] 1/1 1/1\n");
	pe_summary_free(&s);
	mem_free(&p);
}

static void test_metrics(void)
{
	pe_sum_value v = { 200, 400, 50, 100, 80, 160 }, none = { 0, 0, 0, 0, 0, 0 };

	CHECK(pe_metric_parse("self_share") == PE_M_SELF_SHARE &&
	      pe_metric_parse("total_share") == PE_M_TOTAL_SHARE &&
	      pe_metric_parse("samples") == PE_M_SAMPLES && pe_metric_parse("period") == PE_M_PERIOD &&
	      pe_metric_parse("self_samples") == PE_M_SELF_SAMPLES &&
	      pe_metric_parse("self_period") == PE_M_SELF_PERIOD && pe_metric_parse("share") < 0 &&
	      pe_metric_parse(NULL) < 0, "metric names");
	CHECK_NEAR(pe_metric_value(PE_M_SELF_SHARE, &v), 25, 1e-12);
	CHECK_NEAR(pe_metric_value(PE_M_TOTAL_SHARE, &v), 40, 1e-12);
	CHECK_NEAR(pe_metric_value(PE_M_SAMPLES, &v), 80, 0);
	CHECK_NEAR(pe_metric_value(PE_M_PERIOD, &v), 160, 0);
	CHECK_NEAR(pe_metric_value(PE_M_SELF_SAMPLES, &v), 50, 0);
	CHECK_NEAR(pe_metric_value(PE_M_SELF_PERIOD, &v), 100, 0);
	CHECK_NEAR(pe_metric_value(PE_M_SELF_SHARE, &none), 0, 0);
}

/* ---- merged flame graphs and /top --------------------------------------------------------- */

static pe_model *profile_b(mem_profile *p)
{
	int i;

	mem_begin(p, 0);
	pe_builder_event(p->b, 0, "cpu-clock", 1, 0, 0, 1, 0, 8);
	mem_sample(p, 0, 1, 7, 7, "app", "main@/bin/app;common@/lib/libc.so.6", 2);
	for (i = 0; i < 6; i++)
		mem_sample(p, 0, 2 + (uint64_t)i, 7, 8, "app", "main@/bin/app;beta@/bin/app", 9);
	mem_sample(p, 0, 9, 7, 8, "worker", "main@/bin/app;beta@/bin/app", 1);
	return mem_end(p, 2);
}

static int vnode(void *ctx, const char *name, size_t len, const char *dso, uint64_t base,
		 uint64_t target)
{
	text_add(ctx, "%.*s=%llu(", (int)len, name, (unsigned long long)base);
	(void)dso;
	(void)target;
	return 0;
}

static int nnode(void *ctx, const char *name, size_t len, const char *dso, double base,
		 double target)
{
	text_add(ctx, "%.*s=%g(", (int)len, name, base);
	(void)dso;
	(void)target;
	return 0;
}

static int nleave(void *ctx)
{
	text_add(ctx, ")");
	return 0;
}

/* a and b merged into side 0 of a pe_diff */
static pe_diff *merged(pe_model *a, pe_model *b, int normalize)
{
	pe_filter f = filter_all();
	pe_diff *d = pe_diff_new();
	pe_model *ms[2] = { a, b };
	int k;

	if (d && normalize)
		pe_diff_normalize(d);
	for (k = 0; k < 2 && d; k++) {
		pe_selection *s;
		pe_diff_side(d, 0);
		if (pe_select(ms[k], &f, NULL, &s) < 0 ||
		    pe_flame(ms[k], &f, s, 1, &pe_diff_tree_cb, d) < 0)
			CHECK(0, "flame into the merge failed");
		pe_selection_free(s);
	}
	CHECK(d && !pe_diff_failed(d), "merge");
	return d;
}

static void test_merge(pe_model *a, pe_model *b)
{
	static const pe_diff_cb vcb = { vnode, nleave };
	static const pe_norm_cb ncb = { nnode, nleave };
	pe_diff *d = merged(a, b, 0);
	text t = { .len = 0 };

	/* sums of samples: each node the sum of both graphs' */
	CHECK(pe_diff_walk(d, &vcb, &t) == 0, "walk");
	CHECK_STR(t.s, "all=12(app=10(main=10(alpha=2()beta=6()common=2()))sh=1(run=1())"
		  "worker=1(main=1(beta=1())))");
	CHECK(pe_diff_nodes(d) == 11, "nodes %zu", pe_diff_nodes(d));
	/* the 4 largest: still a tree */
	CHECK(pe_diff_prune(d, 4) == 0, "prune");
	t.len = 0;
	pe_diff_walk(d, &vcb, &t);
	CHECK_STR(t.s, "all=12(app=10(main=10(beta=6())))");
	CHECK(pe_diff_prune(d, 0) == 0, "unprune");
	/* folded lines: each node's own value, bytewise order */
	t.len = 0;
	CHECK(pe_diff_fold(d, 0, fold_line, &t) == 0, "fold");
	CHECK_STR(t.s, "app;main;alpha 2/2\napp;main;beta 6/6\napp;main;common 2/2\n"
		  "sh;run 1/1\nworker;main;beta 1/1\n");
	t.len = 0;
	pe_diff_walk(d, &vcb, &t);
	CHECK(strstr(t.s, "alpha=2") != NULL, "prune(0) shows all again: %s", t.s);
	pe_diff_free(d);

	/* normalized: a sample of a (4) weighs 1/4, of b (8) 1/8; the root
	 * counts the profiles */
	d = merged(a, b, 1);
	t.len = 0;
	CHECK(pe_diff_walk_norm(d, &ncb, &t) == 0, "walk norm");
	CHECK_STR(t.s, "all=2(app=1.625(main=1.625(alpha=0.5()beta=0.75()common=0.375()))"
		  "sh=0.25(run=0.25())worker=0.125(main=0.125(beta=0.125())))");
	/* pruned by shares: beta (0.75) passes alpha (0.5) */
	pe_diff_prune(d, 4);
	t.len = 0;
	pe_diff_walk_norm(d, &ncb, &t);
	CHECK_STR(t.s, "all=2(app=1.625(main=1.625(beta=0.75())))");
	pe_diff_free(d);
}

static void add_top(pe_fntab *t, int side, pe_model *m, double seconds)
{
	pe_filter f = filter_all();
	pe_selection *s;
	pe_top_row *rows;
	uint64_t samples, period;
	size_t n;

	if (pe_select(m, &f, NULL, &s) < 0 || pe_top(m, &f, s, 1, &rows, &n) < 0) {
		CHECK(0, "top");
		return;
	}
	pe_selection_totals(s, &samples, &period);
	CHECK(pe_fntab_add(t, side, rows, n, samples, samples, seconds) == 0, "fntab add");
	pe_top_free(rows, n);
	pe_selection_free(s);
}

static void test_merged_top(pe_model *a, pe_model *b)
{
	pe_fntab *t = pe_fntab_new();
	const pe_fnsum *r;
	size_t n, i;
	text x = { .len = 0 };

	add_top(t, 0, a, 0);
	add_top(t, 0, b, 0);
	CHECK(pe_fntab_merged(t, 0, &r, &n) == 0 && n == 5, "merged %zu", n);
	for (i = 0; i < n; i++)
		text_add(&x, "%s@%s %g/%g %.2f/%.2f\n", r[i].name, r[i].dso ? r[i].dso : "-",
			 r[i].self, r[i].total, r[i].self_share, r[i].total_share);
	CHECK_STR(x.s, "beta@/bin/app 7/7 58.33/58.33\n"
		  "alpha@/bin/app 2/2 16.67/16.67\n"
		  "common@/lib/libc.so.6 2/2 16.67/16.67\n"
		  "run@/bin/sh 1/1 8.33/8.33\n"
		  "main@/bin/app 0/11 0.00/91.67\n");
	/* normalized: each profile's counts over its own total */
	CHECK(pe_fntab_merged(t, 1, &r, &n) == 0, "merged normalized");
	x.len = 0;
	for (i = 0; i < n; i++)
		text_add(&x, "%s %g/%g %.2f/%.2f\n", r[i].name, r[i].self, r[i].total,
			 r[i].self_share, r[i].total_share);
	CHECK_STR(x.s, "beta 0.875/0.875 43.75/43.75\n"
		  "alpha 0.5/0.5 25.00/25.00\n"
		  "common 0.375/0.375 18.75/18.75\n"
		  "run 0.25/0.25 12.50/12.50\n"
		  "main 0/1.75 0.00/87.50\n");
	pe_fntab_free(t);
}

/* ---- ranked changes ------------------------------------------------------------------- */

/* 100 samples: `hot` of them in main;hot, the rest in main;cold */
static pe_model *run(mem_profile *p, int64_t id, int hot)
{
	int i;

	mem_begin(p, 0);
	pe_builder_event(p->b, 0, "cpu-clock", 1, 0, 0, 1, 0, 100);
	for (i = 0; i < 100; i++)
		mem_sample(p, 0, (uint64_t)i + 1, 1, 1, "bench",
			   i < hot ? "main@/bin/bench;hot@/bin/bench" : "main@/bin/bench;cold@/bin/bench",
			   1);
	return mem_end(p, id);
}

static pe_fntab *sides(const int *base, int nb, const int *target, int nt)
{
	pe_fntab *t = pe_fntab_new();
	mem_profile p;
	int i;

	for (i = 0; i < nb + nt; i++) {
		pe_model *m = run(&p, i + 1, i < nb ? base[i] : target[i - nb]);
		add_top(t, i >= nb, m, 1.0);
		mem_free(&p);
	}
	return t;
}

static const pe_change *find(const pe_change *c, size_t n, const char *fn)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(c[i].function, fn))
			return &c[i];
	return NULL;
}

static void test_rank(void)
{
	static const int base[] = { 20, 22, 18 }, target[] = { 40, 42, 38 };
	pe_fntab *t = sides(base, 3, target, 3);
	pe_ranked r;
	const pe_change *hot, *cold;

	CHECK(pe_fntab_rank(t, 0, 0.01, 0, &r) == 0, "rank");
	CHECK(r.test == PE_TEST_WELCH && !strcmp(pe_test_name(r.test), "welch-t"), "test %d", r.test);
	/* main is 100% on both sides: in neither list */
	CHECK(r.nr_regressions == 1 && r.nr_improvements == 1, "rows %zu %zu", r.nr_regressions,
	      r.nr_improvements);
	hot = find(r.regressions, r.nr_regressions, "hot");
	cold = find(r.improvements, r.nr_improvements, "cold");
	CHECK(hot && cold, "hot regressed, cold improved");
	if (hot) {
		CHECK(!strcmp(hot->dso, "/bin/bench"), "dso");
		CHECK_NEAR(hot->base_self_share, 20, 1e-9);
		CHECK_NEAR(hot->target_self_share, 40, 1e-9);
		CHECK_NEAR(hot->delta_self, 20, 1e-9);
		CHECK_NEAR(hot->delta_total, 20, 1e-9);
		CHECK_NEAR(hot->base_self, 20, 1e-9);
		CHECK_NEAR(hot->target_self, 40, 1e-9);
		CHECK_NEAR(hot->self_change_pct, 100, 1e-9);
		CHECK_NEAR(hot->base_self_per_s, 20, 1e-9);
		/* means 20 and 40, variances 4: t = 12.25 on 4 degrees of freedom */
		CHECK_NEAR(hot->p_value, pe_stat_t_p2(20 / sqrt(8.0 / 3), 4), 1e-12);
		CHECK(hot->p_value < 0.001 && hot->significant == 1, "hot significant (p %g)",
		      hot->p_value);
	}
	if (cold)
		CHECK_NEAR(cold->delta_self, -20, 1e-9);
	CHECK_NEAR(r.profiles[0], 3, 0);
	CHECK_NEAR(r.total[1], 100, 1e-9);
	CHECK_NEAR(r.per_s[0], 100, 1e-9);
	pe_ranked_free(&r);
	/* min_share leaves out what is small on both sides; limit cuts */
	CHECK(pe_fntab_rank(t, 50, 0.01, 0, &r) == 0 && r.nr_regressions == 0 &&
	      r.nr_improvements == 1, "min_share");
	pe_ranked_free(&r);
	pe_fntab_free(t);

	/* the same build twice: tiny changes, not significant */
	{
		static const int b2[] = { 20, 22, 18 }, t2[] = { 21, 19, 19 };
		t = sides(b2, 3, t2, 3);
		pe_fntab_rank(t, 0, 0.01, 0, &r);
		hot = find(r.improvements, r.nr_improvements, "hot");
		CHECK(hot && hot->significant == 0 && fabs(hot->delta_self) < 1, "same build");
		pe_ranked_free(&r);
		pe_fntab_free(t);
	}
	/* one base profile against three: a prediction test, df 2 */
	{
		static const int b1[] = { 20 };
		t = sides(b1, 1, target, 3);
		pe_fntab_rank(t, 0, 0.01, 0, &r);
		hot = find(r.regressions, r.nr_regressions, "hot");
		CHECK(r.test == PE_TEST_PREDICT, "predict test");
		CHECK(hot != NULL, "hot");
		if (hot)
			CHECK_NEAR(hot->p_value, 0.013072457560346473, 1e-9);
		pe_ranked_free(&r);
		pe_fntab_free(t);
	}
	/* one against one: the two-proportion z-test on the sample counts */
	{
		static const int b1[] = { 20 }, t1[] = { 40 };
		t = sides(b1, 1, t1, 1);
		pe_fntab_rank(t, 0, 0.01, 1, &r);
		hot = find(r.regressions, r.nr_regressions, "hot");
		CHECK(r.test == PE_TEST_TWO_PROP && hot != NULL, "two-proportion test");
		if (hot)
			CHECK_NEAR(hot->p_value, 0.0020282311484520776, 1e-9);
		pe_ranked_free(&r);
		pe_fntab_free(t);
	}
	/* no profile on a side: nothing to test */
	{
		static const int b1[] = { 20 };
		t = sides(b1, 1, NULL, 0);
		pe_fntab_rank(t, 0, 0.01, 0, &r);
		CHECK(r.test == PE_TEST_NONE && r.nr_improvements == 3 &&
		      r.improvements[0].significant == -1, "one side empty");
		pe_ranked_free(&r);
		pe_fntab_free(t);
	}
}

/* ---- statistics ------------------------------------------------------------------------- */

static void test_stats(void)
{
	pe_moments a = { 5, 15, 55 }, b = { 5, 30, 220 }, flat = { 3, 30, 300 };

	/* closed forms: I_x(2, 3) = 11/16 at 1/2; df 1 (Cauchy) and df 2 */
	CHECK_NEAR(pe_stat_ibeta(0.5, 2, 3), 0.6875, 1e-12);
	CHECK_NEAR(pe_stat_ibeta(0.2, 1, 1), 0.2, 1e-12);
	CHECK_NEAR(pe_stat_t_p2(1, 1), 0.5, 1e-12);
	CHECK_NEAR(pe_stat_t_p2(2, 1), 1 - 2 / M_PI * atan(2), 1e-12);
	CHECK_NEAR(pe_stat_t_p2(3, 2), 1 - 3 / sqrt(11), 1e-12);
	CHECK_NEAR(pe_stat_t_p2(0, 7), 1, 1e-12);
	/* a table value, and the normal's */
	CHECK_NEAR(pe_stat_t_p2(2.228, 10), 0.050011771817110647, 1e-9);
	CHECK_NEAR(pe_stat_z_p2(1.959963984540054), 0.05, 1e-12);
	/* 1..5 against 2..10: t = -1.897 on 5.88 degrees of freedom */
	CHECK_NEAR(pe_stat_mean(&b), 6, 1e-12);
	CHECK_NEAR(pe_stat_var(&b), 10, 1e-12);
	CHECK_NEAR(pe_stat_welch(&a, &b), 0.10753119493062581, 1e-8);
	CHECK_NEAR(pe_stat_predict(9, &a), 0.02572142074250684, 1e-8);
	CHECK_NEAR(pe_stat_two_prop(0.30, 1000, 0.25, 1200), 0.008740975739678197, 1e-12);
	/* no spread at all: certain, unless there is no difference either */
	CHECK_NEAR(pe_stat_welch(&flat, &flat), 1, 0);
	CHECK_NEAR(pe_stat_predict(11, &flat), 0, 0);
	CHECK_NEAR(pe_stat_predict(10, &flat), 1, 0);
	CHECK_NEAR(pe_stat_two_prop(0, 10, 0, 10), 1, 0);
	CHECK_NEAR(pe_stat_welch(&a, &(pe_moments){ 1, 3, 9 }), 1, 0);
}

/* ---- merged timelines ------------------------------------------------------------------- */

static void test_timeline(void)
{
	pe_bucket b1[] = { { 1000, 2, 20, 0 }, { 1020, 1, 10, 0 } };
	pe_bucket b2[] = { { 5000, 3, 30, 0 }, { 5010, 1, 1, 0 } };
	pe_timeline t1 = { "cpu-clock", 1000, 10, b1, 2 }, t2 = { "cpu-clock", 5000, 10, b2, 2 };
	pe_tlmerge *m = pe_tlmerge_new(10);
	const pe_tlbucket *b;
	size_t n, i;
	text t = { .len = 0 };

	CHECK(m && pe_tlmerge_add(m, &t1, 100) == 0 && pe_tlmerge_add(m, &t2, 100) == 0, "add");
	b = pe_tlmerge_buckets(m, &n);
	for (i = 0; i < n; i++)
		text_add(&t, "%llu:%llu/%llu/%llu ", (unsigned long long)b[i].offset_ns,
			 (unsigned long long)b[i].samples, (unsigned long long)b[i].period,
			 (unsigned long long)b[i].profiles);
	CHECK_STR(t.s, "0:5/50/2 10:1/1/1 20:1/10/1 ");
	CHECK(pe_tlmerge_add(m, &t1, 100) < 0, "no add after the buckets went out");
	pe_tlmerge_free(m);
	m = pe_tlmerge_new(10);
	CHECK(pe_tlmerge_add(m, &t1, 2) == 0 && pe_tlmerge_add(m, &t2, 2) < 0, "bucket cap");
	pe_tlmerge_free(m);
}

int main(void)
{
	mem_profile pa, pb;
	pe_model *a = mem_base_profile(&pa), *b = profile_b(&pb);

	test_summary();
	test_metrics();
	test_merge(a, b);
	test_merged_top(a, b);
	test_rank();
	test_stats();
	test_timeline();
	mem_free(&pa);
	mem_free(&pb);
	return check_done("engine-many");
}
