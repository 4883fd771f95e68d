/*
 * foldcache.h - samples into a pd_fold, fast: most samples of a recording
 * repeat a callchain seen before, or differ from one only in their leaf.
 *
 * Bounded caches sit in front of the symbolizer and the fold, each entry
 * valid while nothing its thread's stacks depend on has changed
 * (pd_symbolizer_stamp): a thread's whole raw callchain -> its folded
 * stack; an address of a process (of the kernel) -> its folded frame
 * name; a thread -> its folded comm field. A new callchain is folded
 * address by address through the frame cache; only an address not seen
 * before is symbolized. --call-graph dwarf samples (their user stack is
 * unwound) are symbolized and folded whole, as without the caches.
 */
#ifndef PERFHUB_FOLDCACHE_H
#define PERFHUB_FOLDCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "fold.h"
#include "perfdata.h"
#include "symbols.h"

typedef struct pd_foldcache pd_foldcache;

/* Both must outlive the cache. NULL out of memory. */
pd_foldcache *pd_foldcache_new(pd_symbolizer *sym, pd_fold *fold);
void pd_foldcache_free(pd_foldcache *c);

/* Fold the sample `r` (a PD_RECORD_SAMPLE read from the symbolizer's file)
 * with this weight. 0, -1 out of memory, -2 too many distinct stacks. */
int pd_foldcache_add(pd_foldcache *c, const pd_record *r, uint64_t weight);

/* While another thread loads the kernel's symbol table (preload.h), keep
 * a sample whose kernel frames would wait for it, its comm and user
 * frames named, and fold it once the table is there: up to max_bytes of
 * them (past that, wait for it; 0, the default: always wait). Nearly
 * every sample of a system-wide recording has kernel frames; reading
 * /proc/kallsyms takes 35-45 ms. Then every record that is not a sample
 * goes through pd_foldcache_record, and pd_foldcache_finish ends the
 * fold. */
#define PD_FOLDCACHE_WAIT_MAX (64u << 20)
void pd_foldcache_defer_kernel(pd_foldcache *c, size_t max_bytes);

/* Give a record that is not a sample to the symbolizer; the samples kept
 * for the kernel's table are folded first if it may change how kernel
 * addresses are named. 0, or pd_foldcache_add's failures. */
int pd_foldcache_record(pd_foldcache *c, const pd_record *r);

/* Fold what is still kept (loading the kernel's table here if it must).
 * 0, or pd_foldcache_add's failures. */
int pd_foldcache_finish(pd_foldcache *c);

/* How samples were folded (for benchmarks): whole callchain found, folded
 * address by address, symbolized whole; kept for the kernel's table. */
typedef struct pd_foldcache_stats {
	uint64_t chain_hits, frame_folds, misses, kernel_waits;
} pd_foldcache_stats;
void pd_foldcache_get_stats(const pd_foldcache *c, pd_foldcache_stats *out);

#endif
