/*
 * symbols.h - symbolized stacks of perf.data samples.
 *
 * A pd_symbolizer follows one recording: feed it every record in order
 * (pd_symbolizer_record) and ask it for the stack of each sample
 * (pd_symbolize). It keeps threads and comms over time, per-process maps,
 * kernel and module maps, KSYMBOLs, and resolves addresses through a
 * pd_symcache of symbol tables that many symbolizers on many threads can
 * share (loaded once, read-only, bounded memory).
 *
 * Frames are named as `perf script` names them: demangled symbol, the dso
 * as perf prints it ("/usr/lib/x86_64-linux-gnu/libc.so.6",
 * "[kernel.kallsyms]", "[vdso]", "/tmp/perf-PID.map"). An unresolved frame
 * keeps its dso and file offset so it can be resolved later.
 *
 * No globals, no printing: problems are collected as warnings.
 */
#ifndef PERFHUB_SYMBOLS_H
#define PERFHUB_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include "perfdata.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pd_dso_cache pd_symcache;
typedef struct pd_symbolizer pd_symbolizer;

/* A cache of symbol tables for any number of symbolizers and threads;
 * tables no symbolizer holds are dropped beyond max_bytes (0 = default). */
pd_symcache *pd_symcache_new(size_t max_bytes);
void pd_symcache_free(pd_symcache *c);	/* after all its symbolizers */

typedef struct pd_sym_options {
	const char *symfs;	 /* root for binaries, like perf --symfs */
	const char *buildid_dir; /* perf's build-id cache; NULL = ~/.debug */
	const char *debug_dir;	 /* NULL = /usr/lib/debug */
	const char *kallsyms;	 /* kernel symbols file; NULL = the recording's
				    kcore_dir/kallsyms, or /proc/kallsyms when
				    its os_release is the running kernel's
				    and no symfs is given (as perf) */
	const char *recording;	 /* path of the recording (finds kcore_dir) */
	const char *jit_dir;	 /* where perf-PID.map files are; NULL = /tmp */
	int no_kernel_symbols;	 /* never read the running kernel's symbols */
	unsigned max_stack;	 /* frames per stack; 0 = 127 as perf script */
	int no_unwind;		 /* use the callchain even for dwarf samples */
	const char *debuginfo_dir; /* files by build-id, looked at first:
				      DIR/.build-id/xx/rest/{elf,debug} */
	int build_id_files_only; /* the recording came from elsewhere (an
				    upload): a file of this machine names
				    symbols only when its build-id equals the
				    recorded one; no JIT map, no running
				    kernel's kallsyms, no file for a DSO
				    without a build-id. 0: perf's rules */
} pd_sym_options;

/*
 * The symbol tables the recording's header says its samples hit (perf
 * record writes the build-ids of the DSOs with samples), keyed as the
 * symbolizer will ask the cache for them, the kernel's first (nearly
 * every sample of a system-wide recording has kernel frames; a fold cache
 * that defers them goes on without it meanwhile, foldcache.h): up to max
 * references into out, which the caller returns with pd_dso_put(). For
 * loading them ahead (preload.h); none for a pipe or a file without the
 * list.
 */
struct pd_dso;
size_t pd_symbolizer_header_dsos(pd_symbolizer *s, struct pd_dso **out, size_t max);
/* The cache the symbolizer's tables come from. */
pd_symcache *pd_symbolizer_cache(const pd_symbolizer *s);
/* Whether samples of event e carry the user registers and a copy of the
 * user stack to unwind (--call-graph dwarf). */
static inline int pd_event_unwinds(const pd_event *e)
{
	return e && (e->attr.sample_type & (PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER)) ==
		    (PD_SAMPLE_REGS_USER | PD_SAMPLE_STACK_USER);
}
/* Whether samples of the recording have their user stacks unwound
 * (--call-graph dwarf): their frames are then named from DWARF too. */
int pd_symbolizer_unwinds(const pd_symbolizer *s);

/* `f` gives the header facts (build-ids, os_release, arch); it must stay
 * open while the symbolizer is used. cache NULL = a private one. */
pd_symbolizer *pd_symbolizer_new(pd_file *f, pd_symcache *cache,
				 const pd_sym_options *opt);
void pd_symbolizer_free(pd_symbolizer *s);

/* Threads that fold one recording's DWARF-unwound samples between them
 * settle binutils' first questions together (firstq.h); `who` is this
 * symbolizer's thread there. Alone, a symbolizer settles them itself, in
 * the order it is asked. */
struct pd_firstq;
void pd_symbolizer_share_firstq(pd_symbolizer *s, struct pd_firstq *q, unsigned who);

/* Apply a record: COMM, FORK, EXIT, MMAP, MMAP2, KSYMBOL, BPF_EVENT,
 * HEADER_BUILD_ID; others are ignored. Returns 0, or -1 when a limit or
 * memory ran out (a warning says which). */
int pd_symbolizer_record(pd_symbolizer *s, const pd_record *r);

/* Changes whenever a record changed threads, comms or maps: stacks
 * symbolized under one generation stay right while it lasts (callers may
 * cache them by raw callchain). */
uint64_t pd_symbolizer_generation(const pd_symbolizer *s);

/* The generation of the last record that changed what a stack of thread
 * pid/tid can fold to: its comm, its process's maps, the kernel's maps,
 * build-ids. A stack symbolized at generation G is still right while this
 * stays <= G, whatever other threads did meanwhile. */
uint64_t pd_symbolizer_stamp(pd_symbolizer *s, uint32_t pid, uint32_t tid);

typedef struct pd_frame {
	uint64_t ip;
	const char *sym;	/* demangled symbol, NULL when unresolved */
	uint64_t sym_off;	/* ip - symbol start */
	const char *dso;	/* as perf script prints it; NULL without a map */
	uint64_t dso_off;	/* file offset (user dsos) or ip (kernel) */
	int kernel;		/* from kernel context */
	uint64_t dso_serial;	/* pd_dso_serial of the symbol table, 0 for
				   none: with sym, it identifies the name */
} pd_frame;

typedef struct pd_stack {
	const char *comm;	/* the thread's comm at sample time */
	uint32_t pid, tid;
	size_t nr;
	const pd_frame *frames;	/* innermost (the sample ip) first */
} pd_stack;

/*
 * The stack of a sample read from the same file (rec is its record, for
 * the cpumode). Valid until the next call on `s`. Returns 0, or -1 out of
 * memory.
 */
int pd_symbolize(pd_symbolizer *s, const pd_record *rec, pd_stack *out);

/* Whether naming a kernel address now would wait for the kernel's symbol
 * table (another thread, preload.h, is loading it): 1, else 0 (loaded, or
 * none chosen yet). Never loads. */
int pd_symbolizer_kernel_waits(pd_symbolizer *s);

/* Whether record r, given to pd_symbolizer_record, can change how a
 * kernel address is named (the kernel's maps, build-ids). */
int pd_symbolizer_renames_kernel(const pd_record *r);

/* One address of thread pid/tid (cpumode PD_MISC_USER or PD_MISC_KERNEL)
 * as pd_symbolize would name it as a frame of a callchain. Returns 0, or
 * -1 out of memory. Not through pd_symbolize's memo of names by dso
 * offset: its caller keeps one (foldcache.c). */
int pd_symbolize_ip(pd_symbolizer *s, uint32_t pid, uint32_t tid, uint64_t ip, int cpumode,
		    pd_frame *out);

/* Where pd_symbolize_ip would look the address up: the serial of the
 * dso (never reused by the cache, so a frame's name is a function of
 * serial, offset and cpumode), 0 when the address has no symbol table;
 * *dso_off the offset in it; *unmapped 1 when no map covers the address
 * at all (pd_symbolize_ip names it with neither symbol nor dso), else 0.
 * A pd_symbolize_ip of the same address next reuses the map found here. */
uint64_t pd_symbolize_where(pd_symbolizer *s, uint32_t pid, uint32_t tid, uint64_t ip,
			    int cpumode, uint64_t *dso_off, int *unmapped);

/* The comm of thread pid/tid as pd_symbolize gives it for a sample now
 * (valid until the next record changes it). */
const char *pd_symbolizer_comm(pd_symbolizer *s, uint32_t pid, uint32_t tid);

/* 1 when every frame of the stack has a symbol name (the daemon's
 * symbolized_pct counts these samples), else 0. */
int pd_stack_all_named(const pd_stack *st);

/* Warnings (a build-id mismatch, missing kernel symbols ...), each once. */
size_t pd_symbolizer_nr_warnings(const pd_symbolizer *s);
const char *pd_symbolizer_warning(const pd_symbolizer *s, size_t i);

#ifdef __cplusplus
}
#endif
#endif
