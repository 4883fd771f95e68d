/*
 * engine-compare: questions about several profiles, from models built in
 * memory - the diff of two flame graphs (nodes of either side, both
 * values, name order) and the aggregate across profiles by every key.
 */
#include "config.h"

#include "engine_common.h"

static pe_model *target_profile(mem_profile *p)
{
	mem_begin(p, 0);
	pe_builder_event(p->b, 0, "cpu-clock", 1, 0, 0, 1, 0, 4);
	mem_sample(p, 0, 1, 7, 7, "app", "main@/bin/app;common@/lib/libc.so.6", 2);
	mem_sample(p, 0, 2, 7, 7, "app", "main@/bin/app;beta@/bin/app", 9);
	mem_sample(p, 0, 3, 7, 8, "app", "main@/bin/app;beta@/bin/app", 9);
	mem_sample(p, 0, 4, 7, 8, "worker", "main@/bin/app;beta@/bin/app", 1);
	return mem_end(p, 2);
}

static int dnode(void *ctx, const char *name, size_t len, const char *dso, uint64_t base,
		 uint64_t target)
{
	text_add(ctx, "%.*s%s%s=%llu/%llu(", (int)len, name, dso ? "@" : "", dso ? dso : "",
		 (unsigned long long)base, (unsigned long long)target);
	return 0;
}

static int dleave(void *ctx)
{
	text_add(ctx, ")");
	return 0;
}

static void test_diff(pe_model *a, pe_model *b)
{
	static const pe_diff_cb cb = { dnode, dleave };
	pe_filter f = filter_all();
	pe_selection *s;
	pe_diff *d = pe_diff_new();
	text t = { .len = 0 };
	int side;

	for (side = 0; side < 2 && d; side++) {
		pe_model *m = side ? b : a;
		pe_diff_side(d, side);
		if (pe_select(m, &f, NULL, &s) < 0 ||
		    pe_flame(m, &f, s, 0, &pe_diff_tree_cb, d) < 0)
			CHECK(0, "flame into the diff failed");
		pe_selection_free(s);
	}
	CHECK(d && !pe_diff_failed(d) && pe_diff_walk(d, &cb, &t) == 0, "diff");
	CHECK_STR(t.s,
		  "all=13/21(app=12/20(main@/bin/app=12/20(alpha@/bin/app=10/0()"
		  "beta@/bin/app=0/18()common@/lib/libc.so.6=2/2()))"
		  "sh=1/0(run@/bin/sh=1/0())worker=0/1(main@/bin/app=0/1(beta@/bin/app=0/1())))");
	pe_diff_free(d);
}

static const char *aggregated(const char *by, pe_model *a, const char *ha, pe_model *b,
			      const char *hb, text *t)
{
	int bad = 0;
	pe_aggregate *g = pe_aggregate_new(by, &bad);
	const pe_aggregate_row *rows;
	size_t n, i;

	t->len = 0;
	t->s[0] = 0;
	if (!g)
		return bad ? "(bad group)" : "(out of memory)";
	if (pe_aggregate_add(g, a, ha) < 0 || pe_aggregate_add(g, b, hb) < 0 ||
	    !(rows = pe_aggregate_rows(g, &n))) {
		pe_aggregate_free(g);
		return "(failed)";
	}
	text_add(t, "%s:", pe_aggregate_group(g));
	for (i = 0; i < n; i++)
		text_add(t, " %s=%llu/%llu/%llu", rows[i].key ? rows[i].key : "(null)",
			 (unsigned long long)rows[i].samples, (unsigned long long)rows[i].period,
			 (unsigned long long)rows[i].profiles);
	pe_aggregate_free(g);
	return t->s;
}

static void test_aggregate(pe_model *a, pe_model *b)
{
	text t;

	/* key=samples/period/profiles, most samples first, then by key */
	CHECK_STR(aggregated("comm", a, "h1", b, NULL, &t),
		  "comm: app=6/32/2 sh=1/1/1 worker=1/1/1");
	CHECK_STR(aggregated("hostname", a, "h1", b, NULL, &t),
		  "hostname: (null)=4/21/1 h1=4/13/1");
	CHECK_STR(aggregated("symbol", a, "h1", b, "h1", &t),
		  "symbol: beta=3/19/1 alpha=2/10/1 common=2/4/2 run=1/1/1");
	CHECK_STR(aggregated("dso", a, "h1", b, "h1", &t),
		  "dso: /bin/app=5/29/2 /lib/libc.so.6=2/4/2 /bin/sh=1/1/1");
	CHECK_STR(aggregated("event", a, "h1", b, "h1", &t), "event: cpu-clock=8/34/2");
	CHECK_STR(aggregated("pid", a, "h1", b, "h1", &t), "(bad group)");
}

int main(void)
{
	mem_profile pa, pb;
	pe_model *a = mem_base_profile(&pa), *b = target_profile(&pb);

	test_diff(a, b);
	test_aggregate(a, b);
	mem_free(&pa);
	mem_free(&pb);
	return check_done("engine-compare");
}
