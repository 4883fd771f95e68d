/*
 * test-kernelwait.c - samples folded while the kernel's table is not
 * there yet (pd_foldcache_defer_kernel) give exactly the fold that waited
 * for it. A synthesized recording maps the kernel (a kallsyms file of its
 * own) and a process, samples kernel-and-user callchains, then registers
 * a BPF program (PERF_RECORD_KSYMBOL) over an address the kernel's table
 * named until then and samples that address again: a sample kept past
 * that record would take the program's name. Two processes sample in
 * turn. A second recording has no
 * such record, so every kernel sample is kept to the end. Nothing loads
 * the table ahead here, so every sample with a kernel frame the caches
 * do not know is kept until the fold cache itself must name it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "fold.h"
#include "fold-lines.h"
#include "foldcache.h"
#include "pdwrite.h"
#include "symbols.h"

#define KBASE 0xffffffff81000000ull
#define UBASE 0x400000ull

static const char kallsyms[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81001000 T kfunc_a\n"
	"ffffffff81002000 T kfunc_b\n"
	"ffffffff81003000 T kfunc_c\n"
	"ffffffff81004000 T _etext\n";

static void sample(pdw *w, uint32_t pid, uint64_t t, const uint64_t *ch, unsigned n)
{
	pd_sample s = { .identifier = 9, .pid = pid, .tid = pid, .time = t, .period = 100 + t,
			.nr_callchain = n, .callchain = (uint64_t *)ch, .ip = ch[1] };

	pdw_sample(w, 0, ch[0] == PD_CONTEXT_KERNEL ? PD_MISC_KERNEL : PD_MISC_USER, &s);
}

/* Kernel and user frames, user only, the kernel's three functions; two
 * processes in turn, so that samples kept one after the other fold to
 * different stacks. */
static void samples(pdw *w, uint64_t *t, uint64_t kleaf)
{
	for (unsigned i = 0; i < 24; i++) {
		uint64_t ch[6] = { PD_CONTEXT_KERNEL, kleaf + i % 5, KBASE + 0x1010 + i % 3,
				   PD_CONTEXT_USER, UBASE + 0x100 + i % 4, UBASE + 0x200 };
		uint32_t pid = i % 2 ? 200 : 100;

		if (i % 4 == 3)
			sample(w, pid, (*t)++, ch + 3, 3);	/* user only */
		else
			sample(w, pid, (*t)++, ch, 6);
	}
}

static uint8_t *build(int with_ksymbol, size_t *len)
{
	pdw *w = pdw_new(&(pdw_config){ .attr_size = 128 });
	pd_sample_id sid = { .time = 1, .id = 9, .identifier = 9, .pid = 100, .tid = 100 };
	uint8_t *buf = NULL;
	uint64_t t = 10;

	pdw_add_cpu_clock(w, PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
			      PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN, 9);
	pdw_mmap(w, 0, &(pd_mmap){ .pid = UINT32_MAX, .tid = 0, .start = KBASE, .len = 0x4000,
		 .pgoff = KBASE, .filename = "[kernel.kallsyms]_text" }, &sid);
	pdw_comm(w, 0, &(pd_comm){ .pid = 100, .tid = 100, .comm = "prog" }, &sid);
	pdw_mmap2(w, 0, PD_MISC_USER, &(pd_mmap){ .pid = 100, .tid = 100, .start = UBASE,
		  .len = 0x1000, .prot = 5, .flags = 2, .filename = "/nonexistent/prog" }, &sid);
	pdw_comm(w, 0, &(pd_comm){ .pid = 200, .tid = 200, .comm = "other" }, &sid);
	pdw_mmap2(w, 0, PD_MISC_USER, &(pd_mmap){ .pid = 200, .tid = 200, .start = UBASE,
		  .len = 0x1000, .prot = 5, .flags = 2, .filename = "/nonexistent/other" }, &sid);
	samples(w, &t, KBASE + 0x2010);
	if (with_ksymbol) {
		/* a BPF program over kfunc_b's first bytes */
		pdw_record_begin(w, PD_RECORD_KSYMBOL, 0);
		pdw_put_u64(w, KBASE + 0x2000);
		pdw_put_u32(w, 0x100);
		pdw_put_u16(w, 1);	/* PERF_RECORD_KSYMBOL_TYPE_BPF */
		pdw_put_u16(w, 0);
		pdw_put_string(w, "bpf_prog_feedbeef_test", 8);
		pdw_record_end(w, 0, &sid);
		samples(w, &t, KBASE + 0x2010);
	}
	if (pdw_finish(w, &buf, len))
		buf = NULL;
	pdw_free(w);
	return buf;
}

/* The recording folded through a fold cache, up to `defer` bytes of
 * samples kept for the kernel's table (0: none); the lines, and how many
 * samples were kept. */
static char *fold(const uint8_t *buf, size_t len, const char *ksyms, size_t defer,
		  uint64_t *kept)
{
	pd_error err;
	pd_file *f = pd_open_mem(buf, len, NULL, &err);
	pd_symcache *cache = pd_symcache_new(0);
	pd_sym_options so = { .kallsyms = ksyms };
	pd_symbolizer *s = f ? pd_symbolizer_new(f, cache, &so) : NULL;
	pd_fold *fo = pd_fold_new(0);
	pd_foldcache *fc = s && fo ? pd_foldcache_new(s, fo) : NULL;
	pd_foldcache_stats st = { 0 };
	pd_record r;
	char *out = NULL;

	CHECK(fc, "setup");
	if (!fc)
		goto done;
	pd_foldcache_defer_kernel(fc, defer);
	while (pd_next(f, &r, &err) > 0) {
		if (r.type != PD_RECORD_SAMPLE)
			CHECK(pd_foldcache_record(fc, &r) == 0, "record");
		else
			CHECK(pd_foldcache_add(fc, &r, r.u.sample.period) == 0, "sample");
	}
	CHECK(pd_foldcache_finish(fc) == 0, "finish");
	pd_foldcache_get_stats(fc, &st);
	pd_fold_foreach(fo, collect, &out);
done:
	*kept = st.kernel_waits;
	pd_foldcache_free(fc);
	pd_fold_free(fo);
	pd_symbolizer_free(s);
	pd_symcache_free(cache);
	pd_close(f);
	return out;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	char ksyms[4096];
	FILE *fp;

	snprintf(ksyms, sizeof(ksyms), "%s/kernelwait-%d.kallsyms", tmp ? tmp : "/tmp",
		 (int)getpid());
	fp = fopen(ksyms, "w");
	if (!fp || fputs(kallsyms, fp) < 0 || fclose(fp)) {
		printf("FAIL: cannot write %s\n", ksyms);
		return 1;
	}
	for (int with_ksymbol = 0; with_ksymbol <= 1; with_ksymbol++) {
		size_t len;
		uint8_t *buf = build(with_ksymbol, &len);
		uint64_t kept_waiting = 0, kept_deferred = 0, kept_capped = 0;
		char *waited = buf ? fold(buf, len, ksyms, 0, &kept_waiting) : NULL;
		char *deferred = buf ? fold(buf, len, ksyms, PD_FOLDCACHE_WAIT_MAX, &kept_deferred)
				     : NULL;
		/* 512 bytes keep 7 of them (9 words each): the 8th folds those
		 * and itself, loading the table here, and none is kept after */
		char *capped = buf ? fold(buf, len, ksyms, 512, &kept_capped) : NULL;

		CHECK(buf, "cannot write the recording");
		CHECK(waited && deferred && !strcmp(waited, deferred),
		      "ksymbol %d: the folds differ:\n--- waited\n%s--- deferred\n%s", with_ksymbol,
		      waited ? waited : "", deferred ? deferred : "");
		CHECK(waited && capped && !strcmp(waited, capped),
		      "ksymbol %d: the folds differ:\n--- waited\n%s--- 512 bytes kept\n%s", with_ksymbol,
		      waited ? waited : "", capped ? capped : "");
		CHECK(kept_capped == 7, "ksymbol %d: %llu samples kept in 512 bytes, not 7",
		      with_ksymbol, (unsigned long long)kept_capped);
		CHECK(kept_waiting == 0, "%llu samples kept without deferring",
		      (unsigned long long)kept_waiting);
		/* 18 samples with kernel frames before the KSYMBOL record */
		CHECK(kept_deferred == 18, "ksymbol %d: %llu samples kept, not 18", with_ksymbol,
		      (unsigned long long)kept_deferred);
		CHECK(waited && strstr(waited, "prog;[prog];[prog];kfunc_a;kfunc_b "),
		      "no kernel frame named from the table:\n%s", waited ? waited : "");
		if (with_ksymbol)
			CHECK(waited && strstr(waited, ";kfunc_a;bpf_prog_feedbeef_test "),
			      "the program's samples are not named by it:\n%s", waited ? waited : "");
		free(waited);
		free(deferred);
		free(capped);
		free(buf);
	}
	unlink(ksyms);
	return check_done("test-kernelwait");
}
