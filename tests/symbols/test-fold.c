/* test-fold.c - folding rules of stackcollapse-perf.pl, the flame-graph
 * tree, maps overlap handling and ELF symbol lookup of this very program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dso.h"
#include "fold.h"
#include "maps.h"
#include "symtab.h"
#include "thread.h"

static int failures;

#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: FAIL %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

static void name_is(const char *sym, const char *dso, unsigned flags, const char *want)
{
	pd_frame fr = { .sym = sym, .dso = dso };
	char buf[256];

	if (!pd_fold_frame_name(&fr, flags, buf, sizeof(buf)))
		strcpy(buf, "(dropped)");
	if (strcmp(buf, want)) {
		fprintf(stderr, "FAIL name(%s, %s) = '%s', want '%s'\n", sym ? sym : "NULL",
			dso ? dso : "NULL", buf, want);
		failures++;
	}
}

static int collect(void *ctx, const char *stack, uint64_t count)
{
	char *out = ctx;
	size_t o = strlen(out);

	snprintf(out + o, 4096 - o, "%s %llu\n", stack, (unsigned long long)count);
	return 0;
}

/* Lines in byte order, each once: checked line by line by strcmp. */
typedef struct order_check {
	char prev[512];
	int lines, sorted, merged_xy;
	uint64_t total;
} order_check;

static int check_order(void *ctx, const char *stack, uint64_t count)
{
	order_check *c = ctx;

	if (c->lines && strcmp(c->prev, stack) >= 0)
		c->sorted = 0;
	snprintf(c->prev, sizeof(c->prev), "%s", stack);
	c->lines++;
	c->total += count;
	if (!strcmp(stack, "x;y;f"))
		c->merged_xy = (int)count;
	return 0;
}

/* n stacks of 1-5 frames drawn from syms (nsyms) under comms (4),
 * weighing 1 + i % 3 (weighted) or 1: their total weight. */
static uint64_t fold_random(pd_fold *f, const char *const *comms, const char *const *syms,
			    unsigned nsyms, int weighted, unsigned *seed)
{
	uint64_t total = 0;
	unsigned i, k;

	for (i = 0; i < 3000 && f; i++) {
		pd_frame fr[5];
		pd_stack st = { .pid = 1, .tid = 1, .frames = fr };
		uint64_t w = weighted ? 1 + i % 3 : 1;

		*seed = *seed * 1103515245 + 12345;
		st.comm = comms[(*seed >> 8) % 4];
		st.nr = 1 + (*seed >> 12) % 5;
		for (k = 0; k < st.nr; k++) {
			*seed = *seed * 1103515245 + 12345;
			fr[k] = (pd_frame){ .sym = syms[(*seed >> 8) % nsyms], .dso = "/bin/x" };
		}
		CHECK(pd_fold_add(f, &st, w) == 0);
		total += w;
	}
	return total;
}

/* Stacks of names one of which starts another ("a", "a b", "a<b", "ab":
 * bytes below and above the ';' that follows a name), comms with a ';'
 * and without: the lines come out in strcmp's order, and the two stacks
 * that print as one line ("x;y" then f, "x" then y and f) are one. */
static void test_line_order(void)
{
	static const char *syms[] = { "a", "a b", "a<b", "ab", "b", "y", "f", "a:" };
	static const char *comms[] = { "x", "x;y", "a", "a b" };
	pd_fold *f = pd_fold_new(0);
	unsigned seed = 7;
	uint64_t total = fold_random(f, comms, syms, 8, 1, &seed);
	order_check c = { .sorted = 1 };

	{
		pd_frame xy[2] = { { .sym = "f", .dso = "/bin/x" }, { .sym = "y", .dso = "/bin/x" } };
		pd_stack one = { .comm = "x;y", .pid = 1, .tid = 1, .nr = 1, .frames = xy };
		pd_stack two = { .comm = "x", .pid = 1, .tid = 1, .nr = 2, .frames = xy };
		pd_fold *g = pd_fold_new(0);
		order_check d = { .sorted = 1 };

		CHECK(g && pd_fold_add(g, &one, 5) == 0 && pd_fold_add(g, &two, 6) == 0);
		CHECK(pd_fold_add(g, &one, 1) == 0);
		pd_fold_foreach(g, check_order, &d);
		CHECK(d.lines == 1 && d.merged_xy == 12);
		pd_fold_free(g);
	}
	pd_fold_foreach(f, check_order, &c);
	CHECK(c.sorted && c.total == total && c.lines > 500);
	pd_fold_free(f);
	/* no name holds a ';': lines are ordered by the first 8 bytes after
	 * the ids they share, then byte by byte; names alike in those 8
	 * bytes, and bytes below and above the ';' and the line's end */
	{
		static const char *syms2[] = { "abcdefgh", "abcdefgh.cold", "abcdefgh1", "abcdefg",
					       "abcdefg!", "a", "a.b", "ab", "zz",
					       "b" };
		static const char *comms2[] = { "x", "a", "a b", "abcdefgh" };
		pd_fold *h = pd_fold_new(0);
		order_check e = { .sorted = 1 };
		uint64_t sum = fold_random(h, comms2, syms2, 10, 0, &seed);

		pd_fold_foreach(h, check_order, &e);
		CHECK(e.sorted && e.total == sum && e.lines > 500);
		pd_fold_free(h);
	}
}

int known_function_for_lookup(int x);
__attribute__((noinline)) int known_function_for_lookup(int x)
{
	return x * 3 + 1;
}

/* A scratch file holding text, made from the mkstemp template path;
 * 0, or -1 when it could not be written. */
static int scratch_file(char *path, const char *text)
{
	int fd = mkstemp(path);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;

	if (!fp) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	fputs(text, fp);
	return fclose(fp) == 0 ? 0 : -1;
}

int main(void)
{
	/* names */
	name_is("foo", "/bin/x", 0, "foo");
	name_is("ns::foo<int>(int, char)", "/bin/x", 0, "ns::foo<int>");
	/* stackcollapse-perf.pl skips frames whose name starts with '(' */
	name_is("(anonymous namespace)::bar(long)", "/bin/x", 0, "(dropped)");
	name_is("ns::(anonymous namespace)::bar(long)", "/bin/x", 0, "ns::(anonymous namespace)::bar");
	name_is("a;b", "/bin/x", 0, "a:b");
	name_is("it's \"q\"", "/bin/x", 0, "its q");
	name_is(NULL, "/usr/lib/libc.so.6", 0, "[libc.so.6]");
	name_is(NULL, NULL, 0, "[unknown]");
	name_is(NULL, "[kernel.kallsyms]", PD_FOLD_KERNEL, "[[kernel.kallsyms]]_[k]");
	name_is("schedule", "[kernel.kallsyms]", PD_FOLD_KERNEL, "schedule_[k]");
	name_is("schedule", "[kernel.kallsyms]", 0, "schedule");
	name_is("f", "/boot/vmlinux", PD_FOLD_KERNEL, "f_[k]");
	name_is("(process)", "/bin/x", 0, "(dropped)");
	name_is("main.(*T).m.func1", "/bin/go", 0, "main.(*T).m.func1");
	name_is("x.(a).y", "/bin/go", 0, "x.(a).y");
	/* perf script's "[unknown] (/memfd:x (deleted))" splits at the last " (" */
	name_is(NULL, "/memfd:x (deleted)", 0, "[unknown] ");
	name_is("f", "/memfd:x (deleted)", 0, "f+0x0 ");

	test_line_order();

	/* folding: outermost first, comm fields, weights, byte order */
	{
		pd_frame fr[3] = { { .sym = "leaf", .dso = "/a" }, { .sym = "mid", .dso = "/a" },
				   { .sym = "main", .dso = "/a" } };
		pd_stack st = { .comm = "my prog", .pid = 10, .tid = 11, .nr = 3, .frames = fr };
		pd_stack st2 = { .comm = "Z", .pid = 1, .tid = 1, .nr = 1, .frames = fr };
		pd_fold *f = pd_fold_new(0), *ft = pd_fold_new(PD_FOLD_TID), *fp = pd_fold_new(PD_FOLD_PID);
		char out[4096] = "";
		json_t *tree;
		char *js;

		CHECK(pd_fold_add(f, &st, 5) == 0);
		CHECK(pd_fold_add(f, &st, 7) == 0);
		CHECK(pd_fold_add(f, &st2, 1) == 0);
		pd_fold_foreach(f, collect, out);
		CHECK(!strcmp(out, "Z;leaf 1\nmy_prog;main;mid;leaf 12\n"));
		CHECK(pd_fold_total(f) == 13 && pd_fold_count(f) == 2);
		out[0] = '\0';
		pd_fold_add(ft, &st, 1);
		pd_fold_foreach(ft, collect, out);
		CHECK(!strcmp(out, "my_prog-10/11;main;mid;leaf 1\n"));
		out[0] = '\0';
		pd_fold_add(fp, &st, 1);
		pd_fold_foreach(fp, collect, out);
		CHECK(!strcmp(out, "my_prog-10;main;mid;leaf 1\n"));
		tree = pd_fold_tree(f);
		js = json_dumps(tree, JSON_COMPACT | JSON_PRESERVE_ORDER);
		CHECK(js && !strcmp(js, "{\"name\":\"all\",\"value\":13,\"children\":["
			"{\"name\":\"Z\",\"value\":1,\"children\":[{\"name\":\"leaf\",\"value\":1,\"children\":[]}]},"
			"{\"name\":\"my_prog\",\"value\":12,\"children\":[{\"name\":\"main\",\"value\":12,\"children\":"
			"[{\"name\":\"mid\",\"value\":12,\"children\":[{\"name\":\"leaf\",\"value\":12,\"children\":[]}]}]}]}]}"));
		if (js && failures)
			fprintf(stderr, "tree: %s\n", js);
		free(js);
		json_decref(tree);
		pd_fold_free(f);
		pd_fold_free(ft);
		pd_fold_free(fp);
	}

	/* folds of parts of one recording merge into the fold of the whole */
	{
		pd_frame fr[2] = { { .sym = "leaf", .dso = "/bin/x" }, { .sym = "main", .dso = "/bin/x" } };
		pd_stack a = { .comm = "p", .pid = 1, .tid = 1, .nr = 2, .frames = fr };
		pd_stack b = { .comm = "q", .pid = 2, .tid = 2, .nr = 1, .frames = fr };
		pd_fold *whole = pd_fold_new(0), *p1 = pd_fold_new(0), *p2 = pd_fold_new(0);
		char w[4096] = "", m[4096] = "";

		pd_fold_add(whole, &a, 3);
		pd_fold_add(whole, &b, 4);
		pd_fold_add(whole, &a, 5);
		pd_fold_add(p1, &a, 3);
		pd_fold_add(p2, &b, 4);	/* p2 interns names in another order */
		pd_fold_add(p2, &a, 5);
		CHECK(pd_fold_merge(p1, p2) == 0);
		pd_fold_foreach(whole, collect, w);
		pd_fold_foreach(p1, collect, m);
		CHECK(!strcmp(w, m) && !strcmp(m, "p;main;leaf 8\nq;leaf 4\n"));
		CHECK(pd_fold_total(p1) == 12 && pd_fold_count(p1) == 2);
		pd_fold_free(whole);
		pd_fold_free(p1);
		pd_fold_free(p2);
	}

	/* exited threads are forgotten past the newest 8192, live ones never */
	{
		pd_threads *t = pd_threads_new(NULL);
		uint32_t i;

		CHECK(pd_threads_findnew(t, 1, 1) != NULL);
		for (i = 0; i < 20000; i++) {
			CHECK(pd_threads_fork(t, 100 + i, 100 + i, 1, 1, 1) == 0);
			pd_threads_exit(t, 100 + i, 100 + i);
		}
		CHECK(pd_threads_count(t) == 1 + 8192);
		CHECK(pd_threads_find(t, 1) && pd_threads_find(t, 100 + 19999) &&
		      !pd_threads_find(t, 100));
		pd_threads_free(t);
	}

	/* a fork copies the parent's maps, but not one perf synthesized for a
	 * process already running (PERF_RECORD_MISC_FORK_EXEC): its own maps
	 * follow, and the parent's would linger beside them */
	{
		pd_threads *t = pd_threads_new(NULL);
		pd_map lib = { .start = 0x7000, .end = 0x9000, .pgoff = 0, .name = "lib" };
		pd_thread *parent = pd_threads_findnew(t, 10, 10), *child;

		CHECK(parent && pd_maps_insert(parent->maps, &lib) == 0);
		CHECK(pd_threads_fork(t, 11, 11, 10, 10, 1) == 0);
		child = pd_threads_find(t, 11);
		CHECK(child && pd_maps_count(child->maps) == 1 && pd_maps_find(child->maps, 0x8000));
		CHECK(pd_threads_fork(t, 12, 12, 10, 10, 0) == 0);
		child = pd_threads_find(t, 12);
		CHECK(child && pd_maps_count(child->maps) == 0 && !strcmp(child->comm, parent->comm));
		pd_threads_free(t);
	}

	/* maps: a newer map splits and trims older ones */
	{
		pd_maps *m = pd_maps_new(NULL);
		pd_map a = { .start = 0x1000, .end = 0x9000, .pgoff = 0, .name = "a" };
		pd_map b = { .start = 0x3000, .end = 0x4000, .pgoff = 0, .name = "b" };
		pd_map c = { .start = 0x8000, .end = 0xa000, .pgoff = 0, .name = "c" };
		const pd_map *x;

		CHECK(pd_maps_insert(m, &a) == 0);
		CHECK(pd_maps_insert(m, &b) == 0);
		CHECK(pd_maps_insert(m, &c) == 0);
		CHECK(pd_maps_count(m) == 4);
		x = pd_maps_find(m, 0x2fff);
		CHECK(x && !strcmp(x->name, "a") && x->end == 0x3000);
		x = pd_maps_find(m, 0x3000);
		CHECK(x && !strcmp(x->name, "b"));
		x = pd_maps_find(m, 0x4000);
		CHECK(x && !strcmp(x->name, "a") && x->pgoff == 0x3000 && x->end == 0x8000);
		x = pd_maps_find(m, 0x9fff);
		CHECK(x && !strcmp(x->name, "c"));
		CHECK(pd_maps_find(m, 0xa000) == NULL && pd_maps_find(m, 0xfff) == NULL);
		pd_maps_unref(m);
	}

	/* ELF symbols of this executable, through /proc/self/maps */
	{
		pd_dso_cache *c = pd_dso_cache_new(0);
		char exe[4096], line[8192];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		unsigned long addr = (unsigned long)(void *)known_function_for_lookup, lo, hi, off;
		FILE *fp = fopen("/proc/self/maps", "r");
		int found = 0;

		CHECK(n > 0);
		exe[n > 0 ? n : 0] = '\0';
		while (fp && fgets(line, sizeof(line), fp)) {
			if (sscanf(line, "%lx-%lx %*s %lx", &lo, &hi, &off) == 3 && addr >= lo && addr < hi) {
				pd_dso *d = pd_dso_get(c, PD_DSO_ELF, exe, NULL, 0, NULL);
				uint64_t so = 99;
				const char *s = pd_dso_lookup(d, addr - lo + off + 3, &so);

				CHECK(s && !strcmp(s, "known_function_for_lookup"));
				CHECK(so == 3);
				CHECK(pd_dso_problem(d) == NULL);
				pd_dso_put(c, d);
				found = 1;
			}
		}
		if (fp)
			fclose(fp);
		CHECK(found);
		/* a wrong build-id: the file is not used for names */
		{
			uint8_t bid[20] = { 1, 2, 3 };
			pd_dso *d = pd_dso_get(c, PD_DSO_ELF, exe, bid, 20, NULL);

			CHECK(pd_dso_lookup(d, 0x1000, NULL) == NULL);
			CHECK(pd_dso_problem(d) && strstr(pd_dso_problem(d), "build-id mismatch"));
			pd_dso_put(c, d);
		}
		pd_dso_cache_free(c);
	}
	/* over its budget the cache drops a table when its last holder gives
	 * it back, never one still held */
	{
		pd_dso_cache *c = pd_dso_cache_new(1);
		char exe[4096];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		pd_dso *d, *again;
		uint64_t serial;

		exe[n > 0 ? n : 0] = '\0';
		d = pd_dso_get(c, PD_DSO_ELF, exe, NULL, 0, NULL);
		CHECK(d);
		if (!d)
			return 1;
		(void)pd_dso_lookup(d, 0x1000, NULL);	/* loads the table */
		serial = pd_dso_serial(d);
		CHECK(pd_dso_cache_bytes(c) > 1);
		/* this program's DWARF (it is built with -g) is opened ahead,
		 * before any lookup of inlined frames; a second time is a no-op */
		CHECK(pd_dso_cache_inline_bytes(c) == 0);
		pd_dso_prepare_inlines(d);
		CHECK(pd_dso_cache_inline_bytes(c) > 0);
		{
			size_t once = pd_dso_cache_inline_bytes(c);

			pd_dso_prepare_inlines(d);
			CHECK(pd_dso_cache_inline_bytes(c) == once);
		}
		pd_dso_ref(c, d);
		pd_dso_put(c, d);	/* one holder left: kept */
		again = pd_dso_get(c, PD_DSO_ELF, exe, NULL, 0, NULL);
		CHECK(again == d && pd_dso_serial(again) == serial);
		pd_dso_put(c, again);
		pd_dso_put(c, d);	/* the last: dropped */
		CHECK(pd_dso_cache_bytes(c) == 0);
		again = pd_dso_get(c, PD_DSO_ELF, exe, NULL, 0, NULL);
		CHECK(again && pd_dso_serial(again) != serial);
		pd_dso_put(c, again);
		pd_dso_cache_free(c);
	}
	/* kallsyms: aliases at one address (the later one wins, as perf), module
	 * symbols, unsized symbols ending at the next one */
	{
		char path[] = "/tmp/perfhub-test-kallsyms-XXXXXX";
		pd_dso_cache *c = pd_dso_cache_new(0);
		pd_dso *d;
		uint64_t off = 0;
		const char *s;
		int ok = scratch_file(path, "ffffffff81000000 T _text\n"
					    "ffffffff81000100 T __ia32_sys_vfork\n"
					    "ffffffff81000100 T __x64_sys_vfork\n"
					    "ffffffff81000200 t local_fn\n"
					    "ffffffff81000300 D some_data\n"
					    "FFFFFFFF81000400 T upper_fn\n"
					    "1ffffffff81000500 T seventeen_digits\n"
					    " ffffffff81000500 T leading_blank\n"
					    "0xffffffff81000500 T hex_prefix\n"
					    "ffffffff81000600 T after_fn\n"
					    "ffffffffc0001000 t mod_fn\t[mymod]\n"
					    "ffffffffc0001800 t last_fn\t[mymod]") == 0;

		CHECK(ok);
		if (ok) {
			d = pd_dso_get(c, PD_DSO_KALLSYMS, path, NULL, 0, NULL);
			s = pd_dso_lookup(d, 0xffffffff81000110ULL, &off);
			CHECK(s && !strcmp(s, "__x64_sys_vfork") && off == 0x10);
			s = pd_dso_lookup(d, 0xffffffff81000250ULL, NULL);
			CHECK(s && !strcmp(s, "local_fn"));
			/* perf reads an address as bare hex digits, either case; a
			 * line with more than 16, a blank or 0x before them is no
			 * symbol: upper_fn reaches after_fn */
			s = pd_dso_lookup(d, 0xffffffff81000510ULL, &off);
			CHECK(s && !strcmp(s, "upper_fn") && off == 0x110);
			s = pd_dso_lookup(d, 0xffffffff81000600ULL, NULL);
			CHECK(s && !strcmp(s, "after_fn"));
			s = pd_dso_lookup(d, 0xffffffffc0001010ULL, NULL);
			CHECK(s && !strcmp(s, "mod_fn"));
			/* the kernel's last symbol before a module's ends a
			 * page on, not at the module */
			s = pd_dso_lookup(d, 0xffffffff81001fffULL, NULL);
			CHECK(s && !strcmp(s, "after_fn"));
			CHECK(pd_dso_lookup(d, 0xffffffff81002000ULL, NULL) == NULL);
			/* a last line without its newline */
			s = pd_dso_lookup(d, 0xffffffffc0001810ULL, NULL);
			CHECK(s && !strcmp(s, "last_fn"));
			pd_dso_put(c, d);
			unlink(path);
		}
		pd_dso_cache_free(c);
	}
	/* a kallsyms over 128 MB (an upload, say) is not read into memory */
	{
		char path[] = "/tmp/perfhub-test-bigkallsyms-XXXXXX";
		pd_dso_cache *c = pd_dso_cache_new(0);
		int fd = mkstemp(path);
		pd_dso *d;
		const char *p;
		int ok = fd >= 0 && write(fd, "ffffffff81000000 T _text\n", 25) == 25 &&
			 ftruncate(fd, (off_t)129 << 20) == 0;

		CHECK(ok);
		if (fd >= 0)
			close(fd);
		if (ok) {
			d = pd_dso_get(c, PD_DSO_KALLSYMS, path, NULL, 0, NULL);
			CHECK(pd_dso_lookup(d, 0xffffffff81000010ULL, NULL) == NULL);
			p = pd_dso_problem(d);
			CHECK(p && strstr(p, "too large"));
			pd_dso_put(c, d);
		}
		unlink(path);
		pd_dso_cache_free(c);
	}
	/* a JIT map: "START SIZE name" */
	{
		char path[] = "/tmp/perfhub-test-perfmap-XXXXXX";
		pd_dso_cache *c = pd_dso_cache_new(0);
		pd_dso *d;
		const char *s;
		int ok = scratch_file(path, "7f0000001000 40 jit_compiled_a\n"
					    "7f0000001040 20 LFoo;::bar\n") == 0;

		CHECK(ok);
		if (ok) {
			d = pd_dso_get(c, PD_DSO_PERFMAP, path, NULL, 0, NULL);
			s = pd_dso_lookup(d, 0x7f0000001010ULL, NULL);
			CHECK(s && !strcmp(s, "jit_compiled_a"));
			s = pd_dso_lookup(d, 0x7f0000001045ULL, NULL);
			CHECK(s && !strcmp(s, "LFoo;::bar"));
			CHECK(pd_dso_lookup(d, 0x7f0000001060ULL, NULL) == NULL);
			pd_dso_put(c, d);
			unlink(path);
		}
		pd_dso_cache_free(c);
	}
	/* demangling as perf */
	{
		char *d = pd_demangle("_ZN12perfhub_test10overloadedEi");

		CHECK(d && !strcmp(d, "perfhub_test::overloaded"));
		free(d);
		CHECK(pd_demangle("main") == NULL);
		d = pd_demangle("_ZN4core3fmt5write17h0123456789abcdefE");
		CHECK(d && !strncmp(d, "core::fmt::write", 16));
		free(d);
	}
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
