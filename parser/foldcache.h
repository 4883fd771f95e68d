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

/* How samples were folded (for benchmarks): whole callchain found, folded
 * address by address, or symbolized whole. */
typedef struct pd_foldcache_stats {
	uint64_t chain_hits, frame_folds, misses;
} pd_foldcache_stats;
void pd_foldcache_get_stats(const pd_foldcache *c, pd_foldcache_stats *out);

#endif
