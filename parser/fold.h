/*
 * fold.h - folded stacks: "comm;outer;...;leaf count" lines with the rules
 * of FlameGraph's stackcollapse-perf.pl (default options) applied to
 * `perf script` output, and the same data as a d3-flame-graph tree.
 */
#ifndef PERFHUB_FOLD_H
#define PERFHUB_FOLD_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "symbols.h"

#ifdef __cplusplus
extern "C" {
#endif

enum pd_fold_flags {
	PD_FOLD_PID = 1,	/* first field comm-PID */
	PD_FOLD_TID = 2,	/* first field comm-PID/TID */
	PD_FOLD_KERNEL = 4,	/* kernel frames get "_[k]" */
};

typedef struct pd_fold pd_fold;

pd_fold *pd_fold_new(unsigned flags);
void pd_fold_free(pd_fold *f);

/* Add one sample's stack with its weight. 0, or -1 when out of memory or
 * over the limit of distinct stacks. */
int pd_fold_add(pd_fold *f, const pd_stack *st, uint64_t weight);

/* The distinct stack the last add counted, as an id that stays valid for
 * the life of the fold; pd_fold_add_id() adds weight to it again without
 * symbolizing or folding (callers caching stacks by raw callchain).
 * pd_fold_add_id returns -1 for an id the fold never gave. */
size_t pd_fold_last_id(const pd_fold *f);
int pd_fold_add_id(pd_fold *f, size_t id, uint64_t weight);

/* Stacks as ids: a folded name (a frame's, or the comm field's) is
 * interned once; a stack is its ids, comm field first, then frames
 * outermost first. PD_FOLD_DROPPED stands for a frame stackcollapse-perf
 * drops (a name starting "("); such ids are skipped by pd_fold_add_ids.
 * Each returns 0, or -1 out of memory or over a limit. */
#define PD_FOLD_DROPPED UINT32_MAX
int pd_fold_frame_id(pd_fold *f, const pd_frame *fr, uint32_t *id);
int pd_fold_comm_id(pd_fold *f, const pd_stack *st, uint32_t *id);
int pd_fold_add_ids(pd_fold *f, const uint32_t *ids, size_t n, uint64_t weight);

/* Add every stack of src to dst (folds of the same flags: parts of one
 * recording folded apart). 0, or -1 out of memory or over a limit. */
int pd_fold_merge(pd_fold *dst, const pd_fold *src);

/* One frame's name as stackcollapse-perf.pl writes it, into buf (always
 * terminated). Returns 0 when the frame is dropped (a name starting "("). */
int pd_fold_frame_name(const pd_frame *fr, unsigned flags, char *buf, size_t len);

size_t pd_fold_count(const pd_fold *f);	/* distinct stacks */
uint64_t pd_fold_total(const pd_fold *f);	/* sum of weights */

/* Each stack in byte order (as `sort` in Perl), with its count. A non-zero
 * return from cb stops the walk and is returned. */
typedef int (*pd_fold_fn)(void *ctx, const char *stack, uint64_t count);
int pd_fold_foreach(const pd_fold *f, pd_fold_fn cb, void *ctx);

/* d3-flame-graph tree {"name": "all", "value", "children": [...]}: first
 * level the comm field, then frames outermost first. NULL out of memory. */
json_t *pd_fold_tree(const pd_fold *f);

#ifdef __cplusplus
}
#endif
#endif
