/*
 * unwind-self: the unwinder on stacks this program captures of itself, and
 * on garbage.
 *
 * 1. A known chain main -> chain_outer -> chain_mid -> chain_inner ->
 *    capture: capture() takes the registers and copies the stack the way
 *    the kernel does for PERF_SAMPLE_REGS_USER/STACK_USER; the unwinder
 *    must walk back through every function of the chain to main (names
 *    from libdwfl's symbol lookup, maps from /proc/self/maps).
 * 2. The same snapshot with truncated stacks: fewer frames, never wrong
 *    ones, never a crash; a copy cut before the leaf's return address
 *    gives the leaf and perf's frame at 0.
 * 2b. A frame whose CFA is computed from %rbx (as ld.so's
 *    _dl_runtime_resolve_xsavec, which realigns the stack), below a frame
 *    whose CFI says nothing of %rbx: main -> rbx_outer ->
 *    unwind_self_rbx_frame -> unwind_self_rbx_leaf -> capture must unwind
 *    to main although libdwfl forgets %rbx (unwind.c, struct walk).
 * 2c. A sample in an epilogue whose CFI still names registers it popped
 *    (below the stack pointer), called from a frame whose CFA is %rbp:
 *    perf's two frames, no frame at 0 after them.
 * 3. Random register values, masks, sizes and stack bytes (GARBAGE_ROUNDS
 *    per architecture): no crash, no
 *    more frames than asked for.
 * x86_64 only for the capture; elsewhere part 1 and 2 are skipped.
 */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind.h"

#define STACK_COPY	8192
#define MAX_MAPS	512
#define GARBAGE_ROUNDS	6000

struct map {
	uint64_t start, end, pgoff;
	char path[256];
};

static struct map maps[MAX_MAPS];
static size_t nr_maps;
static uint64_t stack_top;	/* end of the [stack] mapping */

static int
load_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) && nr_maps < MAX_MAPS) {
		struct map *m = &maps[nr_maps];
		char perms[8];
		int pathpos = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n",
			   &m->start, &m->end, perms, &m->pgoff, &pathpos) < 4)
			continue;
		char *path = line + pathpos;
		path[strcspn(path, "\n")] = '\0';
		if (strcmp(path, "[stack]") == 0)
			stack_top = m->end;
		snprintf(m->path, sizeof(m->path), "%s", path);
		nr_maps++;
	}
	fclose(f);
	return 0;
}

static int
find_map(void *ctx, uint32_t pid, uint64_t addr, unwind_map *out)
{
	(void)ctx;
	(void)pid;
	for (size_t i = 0; i < nr_maps; i++) {
		if (addr < maps[i].start || addr >= maps[i].end)
			continue;
		out->start = maps[i].start;
		out->end = maps[i].end;
		out->pgoff = maps[i].pgoff;
		out->path = maps[i].path[0] == '/' ? maps[i].path : NULL;
		out->build_id = NULL;
		out->build_id_size = 0;
		return 1;
	}
	return 0;
}

/* ---- 1. a captured chain ----------------------------------------------- */

#if defined(__x86_64__)
/* perf_regs x86: AX BX CX DX SI DI BP SP IP FLAGS CS SS (DS ES FS GS) R8-R15,
 * the mask perf records for --call-graph dwarf */
#define X86_MASK	0xff0fffULL

struct snapshot {
	uint64_t regs[24];	/* one per mask bit */
	unsigned nr_regs;
	unsigned char stack[STACK_COPY];
	uint64_t stack_size;
};

static struct snapshot snap;

/* Copies the stack as the kernel does: word by word, past the sanitizer's
 * poisoned redzones between locals. */
__attribute__((noinline, no_sanitize_address)) static void
copy_stack(unsigned char *dst, uint64_t src, uint64_t n)
{
	const volatile uint64_t *from = (const volatile uint64_t *)(uintptr_t)src;
	for (uint64_t i = 0; i < n / 8; i++) {
		uint64_t v = from[i];
		memcpy(dst + 8 * i, &v, 8);
	}
}

__attribute__((noinline)) static void
capture(void)
{
	uint64_t rsp, rip, rbp, rbx;

	__asm__ volatile("lea 0(%%rip), %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n\t"
			 "mov %%rbx, %3"
			 : "=r"(rip), "=r"(rsp), "=r"(rbp), "=r"(rbx));
	/* in mask order: AX BX CX DX SI DI BP SP IP FLAGS CS SS R8..R15 */
	memset(snap.regs, 0, sizeof(snap.regs));
	snap.regs[1] = rbx;
	snap.regs[6] = rbp;
	snap.regs[7] = rsp;
	snap.regs[8] = rip;
	snap.nr_regs = 20;
	uint64_t n = STACK_COPY;
	if (stack_top > rsp && stack_top - rsp < n)
		n = stack_top - rsp;
	snap.stack_size = n & ~7ULL;
	copy_stack(snap.stack, rsp, snap.stack_size);
}

static volatile int depth_sink;

__attribute__((noinline)) static void chain_inner(void) { capture(); depth_sink++; }
__attribute__((noinline)) static void chain_mid(void) { chain_inner(); depth_sink++; }
__attribute__((noinline)) static void chain_outer(void) { chain_mid(); depth_sink++; }

/* unwind_self_rbx_frame(fn): saves %rbx, keeps its CFA in it (CFA = rbx+16)
 * while the stack is realigned and calls unwind_self_rbx_leaf, whose CFI
 * has no rule for %rbx, which calls fn. */
void unwind_self_rbx_frame(void (*fn)(void));
__asm__(".text\n"
	".globl unwind_self_rbx_frame\n"
	".type unwind_self_rbx_frame, @function\n"
	"unwind_self_rbx_frame:\n"
	"	.cfi_startproc\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbx, -16\n"
	"	mov %rsp, %rbx\n"
	"	.cfi_def_cfa_register %rbx\n"
	"	and $-64, %rsp\n"
	"	sub $576, %rsp\n"
	"	call unwind_self_rbx_leaf\n"
	"	mov %rbx, %rsp\n"
	"	.cfi_def_cfa_register %rsp\n"
	"	pop %rbx\n"
	"	.cfi_restore %rbx\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size unwind_self_rbx_frame, .-unwind_self_rbx_frame\n"
	".globl unwind_self_rbx_leaf\n"
	".type unwind_self_rbx_leaf, @function\n"
	"unwind_self_rbx_leaf:\n"
	"	.cfi_startproc\n"
	"	sub $8, %rsp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	call *%rdi\n"
	"	add $8, %rsp\n"
	"	.cfi_def_cfa_offset 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size unwind_self_rbx_leaf, .-unwind_self_rbx_leaf\n");

__attribute__((noinline)) static void rbx_outer(void) { unwind_self_rbx_frame(capture); depth_sink++; }

/* unwind_self_epi's CFI keeps the rules for %rbp and %rbx after popping
 * them (as glibc's malloc does before a tail call): at unwind_self_epi_stale
 * they are said to lie below the stack pointer. unwind_self_epi_caller
 * keeps its CFA in %rbp. Neither is run: the test builds a sample at
 * unwind_self_epi_stale called from unwind_self_epi_caller. */
void unwind_self_epi(void);
void unwind_self_epi_caller(void);
extern const char unwind_self_epi_stale[], unwind_self_epi_ret[];
__asm__(".text\n"
	".globl unwind_self_epi\n"
	".type unwind_self_epi, @function\n"
	"unwind_self_epi:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	push %rbx\n"
	"	.cfi_def_cfa_offset 24\n"
	"	.cfi_offset %rbx, -24\n"
	"	pop %rbx\n"
	"	.cfi_def_cfa_offset 16\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa_offset 8\n"
	".globl unwind_self_epi_stale\n"
	"unwind_self_epi_stale:\n"
	"	nop\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size unwind_self_epi, .-unwind_self_epi\n"
	".globl unwind_self_epi_caller\n"
	".type unwind_self_epi_caller, @function\n"
	"unwind_self_epi_caller:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	call unwind_self_epi\n"
	".globl unwind_self_epi_ret\n"
	"unwind_self_epi_ret:\n"
	"	pop %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	"	.cfi_endproc\n"
	".size unwind_self_epi_caller, .-unwind_self_epi_caller\n");

static void
input_from_snapshot(unwind_input *in, uint64_t stack_bytes)
{
	memset(in, 0, sizeof(*in));
	in->pid = in->tid = (uint32_t)getpid();
	in->regs_abi = UNWIND_REGS_ABI_64;
	in->regs_mask = X86_MASK;
	in->regs = snap.regs;
	in->nr_regs = snap.nr_regs;
	in->stack = snap.stack;
	in->stack_size = snap.stack_size;
	in->stack_dyn_size = stack_bytes < snap.stack_size ? stack_bytes
							    : snap.stack_size;
}

/* Unwind the snapshot into ips (64 slots); 0 when the functions `want`
 * (five, innermost first) are among its frames in order. */
static int
expect_frames(unwinder *u, const char *const want[5], uint64_t ips[64], int *n)
{
	unwind_input in;
	size_t w = 0;

	input_from_snapshot(&in, snap.stack_size);
	*n = unwind_sample(u, &in, ips, 64);
	printf("captured stack, %d frames:", *n);
	for (int i = 0; i < *n; i++) {
		const char *s = unwind_symbol_name(u, in.pid, ips[i]);
		printf(" %s", s ? s : "?");
		if (w < 5 && s && strcmp(s, want[w]) == 0)
			w++;
	}
	printf("\n");
	if (*n < 5 || w != 5) {
		printf("FAIL: the chain %s..%s was not unwound in order\n",
		       want[0], want[4]);
		return 1;
	}
	return 0;
}

static int
check_chain(unwinder *u)
{
	static const char *const want[] = {
		"capture", "chain_inner", "chain_mid", "chain_outer", "main",
	};
	uint64_t ips[64];
	unwind_input in;
	int n;

	if (expect_frames(u, want, ips, &n) != 0)
		return 1;

	/* truncated copies: a prefix of the full chain, never other frames,
	 * but for perf's frame at 0 where a return address lies past the copy
	 * (it reads 0 there) */
	int zero_frames = 0;
	for (uint64_t bytes = 0; bytes <= snap.stack_size; bytes += 8) {
		uint64_t ips2[64];
		input_from_snapshot(&in, bytes);
		int m = unwind_sample(u, &in, ips2, 64);
		if (m < 0 || m > n + 1) {
			printf("FAIL: %d frames from %" PRIu64 " stack bytes\n", m, bytes);
			return 1;
		}
		if (m > 1 && ips2[m - 1] == 0 && bytes < snap.stack_size) {
			zero_frames++;
			m--;
		}
		for (int i = 0; i < m; i++)
			if (ips2[i] != ips[i]) {
				printf("FAIL: frame %d differs with %" PRIu64
				       " stack bytes\n", i, bytes);
				return 1;
			}
	}
	if (zero_frames == 0) {
		printf("FAIL: no copy cut before a return address gave perf's frame at 0\n");
		return 1;
	}
	/* a copy that ends before the leaf's own return address: the leaf,
	 * then perf's frame at 0 (libdwfl unwinds the first frame after the
	 * walk has counted it, unlike the others) */
	input_from_snapshot(&in, 8);
	{
		uint64_t ips2[64];
		int m = unwind_sample(u, &in, ips2, 64);

		if (m != 2 || ips2[0] != ips[0] || ips2[1] != 0) {
			printf("FAIL: 8 stack bytes: %d frames, not the leaf and a frame at 0:", m);
			for (int i = 0; i < m; i++)
				printf(" %#" PRIx64, ips2[i]);
			printf(" (full: %#" PRIx64 " %#" PRIx64 ")\n", ips[0], ips[1]);
			return 1;
		}
	}
	/* max frames honoured */
	input_from_snapshot(&in, snap.stack_size);
	if (unwind_sample(u, &in, ips, 2) != 2) {
		printf("FAIL: max=2 not honoured\n");
		return 1;
	}
	return 0;
}

/* 2c. A sample in unwind_self_epi's epilogue, called from
 * unwind_self_epi_caller, the return address the copy's first word:
 * %rbp is read below the stack pointer (in the stack's map, past the
 * copy: 0, as perf reads it), so the caller's CFA is 16 and its return
 * address, at 8, lies in no map. perf's walk ends there with the two
 * frames; a frame at 0 (a 0 read past the copy ending the walk) would
 * be one too many. */
static int
check_epilogue(unwinder *u)
{
	uint64_t ips[64];
	unwind_input in;
	uint64_t ret = (uint64_t)(uintptr_t)unwind_self_epi_ret;
	int n;

	capture();
	memcpy(snap.stack, &ret, sizeof(ret));
	snap.regs[1] = 0x1111;	/* %rbx, %rbp: whatever the epilogue left */
	snap.regs[6] = 0x2222;
	snap.regs[8] = (uint64_t)(uintptr_t)unwind_self_epi_stale;
	input_from_snapshot(&in, 64);
	n = unwind_sample(u, &in, ips, 64);
	printf("epilogue with stale CFI, %d frames:", n);
	for (int i = 0; i < n; i++) {
		const char *s = unwind_symbol_name(u, in.pid, ips[i]);
		printf(" %s", s ? s : "0");
	}
	printf("\n");
	if (n != 2 || ips[0] != (uint64_t)(uintptr_t)unwind_self_epi_stale ||
	    ips[1] != ret - 1) {
		printf("FAIL: expected unwind_self_epi, unwind_self_epi_caller and no more\n");
		return 1;
	}
	return 0;
}

/* The maps' stamp: a caller's file checked at one stamp is not checked
 * again while the stamp stays; a new stamp has it checked, and a file
 * that changed under it is then seen (the walk stops there). */
static int
check_stamp(unwinder *u)
{
	uint64_t a[64], b[64], c[64];
	unwind_input in;
	const struct map *leaf = NULL;
	char old[sizeof(maps[0].path)] = "";
	size_t renamed = 0;
	int na, nb, nc, k;

	input_from_snapshot(&in, snap.stack_size);
	in.maps_stamp = 1000;
	na = unwind_sample(u, &in, a, 64);
	for (size_t i = 0; i < nr_maps; i++)
		if (a[0] >= maps[i].start && a[0] < maps[i].end)
			leaf = &maps[i];
	/* the outermost frame in another file than the leaf's (libc) */
	for (k = na - 1; k > 0 && !old[0]; k--)
		for (size_t i = 0; i < nr_maps; i++)
			if (a[k] >= maps[i].start && a[k] < maps[i].end && leaf &&
			    maps[i].path[0] == '/' && strcmp(maps[i].path, leaf->path))
				snprintf(old, sizeof(old), "%s", maps[i].path);
	if (!old[0]) {
		printf("stamp: every frame in the leaf's file; not checked\n");
		return 0;
	}
	for (size_t i = 0; i < nr_maps; i++)
		if (!strcmp(maps[i].path, old)) {
			snprintf(maps[i].path, sizeof(maps[i].path), "/usr/bin/true");
			renamed++;
		}
	nb = unwind_sample(u, &in, b, 64);
	in.maps_stamp = 1001;
	nc = unwind_sample(u, &in, c, 64);
	for (size_t i = 0; i < nr_maps; i++)
		if (!strcmp(maps[i].path, "/usr/bin/true"))
			snprintf(maps[i].path, sizeof(maps[i].path), "%s", old);
	printf("stamp: %d frames; %s renamed in %zu maps: %d frames at the same stamp, "
	       "%d at a new one\n", na, old, renamed, nb, nc);
	if (nb != na || memcmp(a, b, (size_t)na * sizeof(*a))) {
		printf("FAIL: the same stamp checked the files again\n");
		return 1;
	}
	if (nc == na && !memcmp(a, c, (size_t)na * sizeof(*a))) {
		printf("FAIL: a new stamp did not see the file changed\n");
		return 1;
	}
	return 0;
}
#endif

/* ---- 3. garbage ------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state << 13;	/* xorshift64 */
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* an address inside some mapping, or anything */
static uint64_t
some_addr(void)
{
	if (nr_maps > 0 && (rng() & 1)) {
		const struct map *m = &maps[rng() % nr_maps];
		return m->start + rng() % (m->end - m->start);
	}
	return rng() >> (rng() % 64);
}

static int
check_garbage(int arch)
{
	static uint64_t regs[64];
	static unsigned char stack[4096];
	uint64_t ips[32];
	unwind_options opt = { .max_processes = 3, .max_modules = 4 };
	unwinder *u = unwind_new(arch, find_map, NULL, &opt);
	if (u == NULL) {
		printf("FAIL: unwind_new\n");
		return 1;
	}
	for (int iter = 0; iter < GARBAGE_ROUNDS; iter++) {
		unwind_input in;
		memset(&in, 0, sizeof(in));
		in.pid = (uint32_t)(rng() % 5);
		in.tid = (uint32_t)rng();
		in.regs_abi = rng() % 8 ? UNWIND_REGS_ABI_64 : rng() % 4;
		in.regs_mask = rng() % 4 ? (arch == UNWIND_ARCH_X86_64 ? 0xff0fffULL
								 : 0x1ffffffffULL)
					 : rng();
		in.nr_regs = (unsigned)__builtin_popcountll(in.regs_mask);
		if (rng() % 16 == 0)
			in.nr_regs = (unsigned)(rng() % 65);
		if (in.nr_regs > 64)
			in.nr_regs = 64;
		in.regs = rng() % 32 ? regs : NULL;
		for (unsigned i = 0; i < 64; i++)
			regs[i] = some_addr();
		for (size_t i = 0; i + 8 <= sizeof(stack); i += 8) {
			uint64_t v = some_addr();
			memcpy(stack + i, &v, 8);
		}
		in.stack = stack;
		in.stack_size = rng() % (sizeof(stack) + 1);
		in.stack_dyn_size = rng() % 8 ? rng() % (in.stack_size + 1) : rng();
		in.maps_stamp = rng() % 4;
		/* the SP register pointing at or near the copied stack */
		if (arch == UNWIND_ARCH_X86_64 && in.nr_regs > 8 && (rng() & 1))
			regs[7] = (uint64_t)(uintptr_t)stack;
		size_t max = rng() % 33;
		int n = unwind_sample(u, &in, ips, max);
		if (n < 0 || (size_t)n > max) {
			printf("FAIL: garbage iteration %d: %d frames, max %zu\n",
			       iter, n, max);
			unwind_free(u);
			return 1;
		}
		if (rng() % 64 == 0)
			unwind_forget_process(u, (uint32_t)(rng() % 5));
	}
	const unwind_stats *st = unwind_get_stats(u);
	printf("garbage: %" PRIu64 " samples, %" PRIu64 " frames, %" PRIu64
	       " without usable registers, %" PRIu64 " sessions (%" PRIu64
	       " evicted)\n", st->samples, st->frames, st->no_regs,
	       st->sessions_created, st->sessions_evicted);
	unwind_free(u);
	return 0;
}

int
main(int argc, char **argv)
{
	int rc = 0;
	/* --garbage: only part 3 (e.g. under valgrind, whose stack is not
	 * the one /proc/self/maps shows) */
	int garbage_only = argc > 1 && strcmp(argv[1], "--garbage") == 0;

	if (unwind_new(UNWIND_ARCH_UNKNOWN, find_map, NULL, NULL) != NULL ||
	    unwind_arch_from_name("x86_64") != UNWIND_ARCH_X86_64 ||
	    unwind_arch_from_name("aarch64") != UNWIND_ARCH_AARCH64 ||
	    unwind_arch_from_name("arm64") != UNWIND_ARCH_AARCH64 ||
	    unwind_arch_from_name("s390") != UNWIND_ARCH_UNKNOWN ||
	    unwind_arch_from_name(NULL) != UNWIND_ARCH_UNKNOWN) {
		printf("FAIL: arch names\n");
		return 1;
	}
#if defined(__x86_64__)
	if (load_maps() != 0 || stack_top == 0) {
		printf("SKIP: no /proc/self/maps\n");
		return 77;
	}
	if (!garbage_only) {
		chain_outer();
		unwinder *u = unwind_new(UNWIND_ARCH_X86_64, find_map, NULL, NULL);
		if (u == NULL) {
			printf("FAIL: unwind_new\n");
			return 1;
		}
		rc |= check_chain(u);
		rc |= check_stamp(u);
		/* 2b: through a frame whose CFA is %rbx-based */
		static const char *const via_rbx[] = {
			"capture", "unwind_self_rbx_leaf",
			"unwind_self_rbx_frame", "rbx_outer", "main",
		};
		uint64_t ips[64];
		int n;
		rbx_outer();
		rc |= expect_frames(u, via_rbx, ips, &n);
		rc |= check_epilogue(u);
		unwind_free(u);
	}
	rc |= check_garbage(UNWIND_ARCH_X86_64);
#else
	load_maps();
	printf("capture test is x86_64 only\n");
#endif
	rc |= check_garbage(UNWIND_ARCH_AARCH64);
	if (rc == 0)
		printf("PASS\n");
	return rc;
}
