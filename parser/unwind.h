/*
 * unwind.h - DWARF unwinding of `perf record --call-graph dwarf` samples.
 *
 * A sample taken with --call-graph dwarf carries the user registers
 * (PERF_SAMPLE_REGS_USER) and a copy of the top of the user stack
 * (PERF_SAMPLE_STACK_USER). This module rebuilds the user call chain from
 * them with elfutils' unwinder (libdwfl: CFI from .eh_frame/.debug_frame),
 * the way perf does when it is built with libdw.
 *
 * The unwinder knows nothing of threads or maps over time: the caller
 * supplies a callback that answers "which file is mapped at this address
 * in this process now" (start, end, pgoff, path, expected build-id).
 *
 * One unwinder per thread of use (not thread-safe). It caches one libdwfl
 * session per process, with the modules (ELF files and their CFI) it has
 * reported; at most unwind_options.max_processes sessions and
 * max_modules modules in all are kept (least recently used session first out),
 * so memory stays bounded whatever the input.
 *
 * Every input is untrusted: register sets, stack sizes and stack contents
 * are checked; garbage yields a short (or empty) chain, never a crash or a
 * hang (the number of frames is capped by the caller's `max`).
 *
 * Usage:
 *	unwinder *u = unwind_new(unwind_arch_from_name(hdr->arch),
 *				 my_find_map, my_maps, NULL);
 *	unwind_input in;
 *	uint64_t ips[128];
 *	unwind_input_from_sample(&in, &rec.u.sample, info->swapped);
 *	int n = unwind_sample(u, &in, ips, 128);
 *	... ips[0] is the sample's ip, ips[1..n-1] its callers ...
 *	unwind_free(u);
 */
#ifndef PERFHUB_UNWIND_H
#define PERFHUB_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "perfdata.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct unwinder unwinder;

/* The register layout of the recording (perf_regs numbering). */
enum unwind_arch {
	UNWIND_ARCH_UNKNOWN = 0,
	UNWIND_ARCH_X86_64,	/* PERF_REG_X86_*: AX=0 ... IP=8 ... R15=23 */
	UNWIND_ARCH_AARCH64,	/* PERF_REG_ARM64_*: X0=0 ... SP=31, PC=32 */
};

/* From the perf.data arch feature ("x86_64", "aarch64", "arm64"); the
 * unknown value for anything else (or NULL). */
int unwind_arch_from_name(const char *perf_arch);

/* PERF_SAMPLE_REGS_ABI_* (pd_regs.abi) */
#define UNWIND_REGS_ABI_NONE	0
#define UNWIND_REGS_ABI_32	1
#define UNWIND_REGS_ABI_64	2

/* A file mapping of a process, as the caller's map table knows it. */
typedef struct unwind_map {
	uint64_t start, end;	/* [start, end) virtual addresses */
	uint64_t pgoff;		/* file offset mapped at start */
	const char *path;	/* the ELF file to read CFI from (already
				   resolved: symfs, build-id cache, ...);
				   NULL when there is none (anonymous, JIT,
				   an [vdso] not saved) */
	const uint8_t *build_id; /* the build-id the recording saw, or NULL;
				   a file whose build-id differs is not used */
	size_t build_id_size;
	uint64_t file_low;	/* the lowest start of any map of the same
				   file in the process (those inherited at fork
				   and kept across exec included), 0 unknown:
				   perf's libunwind takes it for the file's load
				   address */
} unwind_map;

/*
 * The caller's map lookup: fill *out and return 1 when `addr` lies in a
 * mapping of process `pid` (at the time of the sample being unwound),
 * else return 0. Strings and bytes in *out need to stay valid only until
 * the callback is called again or unwind_sample() returns.
 */
typedef int (*unwind_find_map_fn)(void *ctx, uint32_t pid, uint64_t addr,
				  unwind_map *out);

typedef struct unwind_options {
	unsigned max_processes;	/* cached per-process sessions; 0 = default */
	unsigned max_modules;	/* ELF files open over all sessions (each
				   holds a descriptor); 0 = default */
	const char *debuginfo_path; /* separate debug file search path as
				   libdwfl takes it; NULL = its default */
	int no_cfi_rows;	/* walk every sample with libdwfl, not from
				   cached CFI rows (tests: both must agree) */
} unwind_options;

#define UNWIND_DEFAULT_MAX_PROCESSES	32
#define UNWIND_DEFAULT_MAX_MODULES	256

/* NULL when arch is unknown or out of memory. */
unwinder *unwind_new(int arch, unwind_find_map_fn find_map, void *ctx,
		     const unwind_options *opt);
void unwind_free(unwinder *u);

/* What one sample gives the unwinder. */
typedef struct unwind_input {
	uint32_t pid, tid;
	uint64_t regs_abi;	/* UNWIND_REGS_ABI_* */
	uint64_t regs_mask;	/* attr.sample_regs_user: which regs[] are */
	const uint64_t *regs;	/* one value per set mask bit, ascending */
	unsigned nr_regs;
	const void *stack;	/* the copied stack, starting at the user SP */
	uint64_t stack_size;	/* bytes at `stack` */
	uint64_t stack_dyn_size; /* bytes of it that are valid (<= size) */
	int swapped;		/* stack words are in the other byte order */
	uint64_t maps_stamp;	/* changes whenever the process's maps may
				   have: files checked at one stamp are not
				   checked again (0: unknown, always check) */
} unwind_input;

/* Fill *in from a decoded sample (REGS_USER, STACK_USER). `swapped` is
 * pd_info.swapped of the recording. */
void unwind_input_from_sample(unwind_input *in, const pd_sample *s,
			      int swapped);

/*
 * Unwind one sample. OUT: ips[0] is the interrupted pc (the sample's ip),
 * ips[1..] the callers, innermost first. A caller's ip is its return
 * address minus one (inside the call instruction), as perf reports it, so
 * it symbolizes to the calling function. Writes at most `max` entries.
 * Returns the number written (0 when the sample has no usable user
 * registers), or -1 on a hard error (out of memory).
 */
int unwind_sample(unwinder *u, const unwind_input *in, uint64_t *ips,
		  size_t max);

/* The process exited or exec'ed: drop its cached session. */
void unwind_forget_process(unwinder *u, uint32_t pid);

/*
 * The symbol name libdwfl finds for `addr` in process `pid` (ELF symbol
 * tables of the modules this unwinder reported; no demangling), or NULL.
 * Valid until the next call on `u`. For tests and diagnostics: real
 * symbolization is the symbolizer's job.
 */
const char *unwind_symbol_name(unwinder *u, uint32_t pid, uint64_t addr);

typedef struct unwind_stats {
	uint64_t samples;	/* unwind_sample() calls */
	uint64_t frames;	/* ips written */
	uint64_t no_regs;	/* samples without usable registers */
	uint64_t no_module;	/* frames whose pc had no usable ELF file */
	uint64_t build_id_mismatch; /* files refused: not the recorded build */
	uint64_t stale_sessions; /* sessions rebuilt because maps changed */
	uint64_t errors;	/* unwinds libdwfl stopped with an error */
	uint64_t resumed;	/* walks resumed past a lost %rbx (unwind.c) */
	uint64_t row_walks;	/* walks made from cached CFI rows alone */
	uint64_t sessions_created, sessions_evicted;
} unwind_stats;

const unwind_stats *unwind_get_stats(const unwinder *u);

#ifdef __cplusplus
}
#endif
#endif /* PERFHUB_UNWIND_H */
