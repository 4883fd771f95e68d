/*
 * query.h - the profile engine's answers: every question about one
 * profile (folded stacks, flame graph, top, timeline, threads), the diff
 * of two flame graphs and the aggregate over many profiles, computed from
 * models (model.h) and, for time ranges and timelines, from the sample
 * blocks a persistence backend hands over through pe_blocks. No SQL here;
 * nothing here knows where the rows are kept.
 *
 * A per-profile question runs in two steps: pe_select() picks and groups
 * the samples the filter asks for (from the aggregate, or from the blocks
 * for a time range) - the only step that may read stored data - then an
 * algorithm (pe_fold, pe_flame, pe_top) answers from the selection.
 */
#ifndef PERFHUB_ENGINE_QUERY_H
#define PERFHUB_ENGINE_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/block.h"
#include "engine/builder.h"
#include "engine/model.h"

/* What a selected group's `period` sums (pe_filter.measure); samples are
 * counted whatever the measure. */
enum pe_measure {
	PE_MEASURE_PERIOD = 0,	/* the folded event's period */
	PE_MEASURE_OFFCPU,	/* nanoseconds switched out, charged to the stack the
				   thread switched out with (event: the off-CPU event) */
	PE_MEASURE_WALL,	/* on-CPU nanoseconds (the period of a cpu-clock or
				   task-clock event) plus the off-CPU event's */
};

typedef struct pe_filter {
	const char *event;		/* NULL = the default: pe_event_pick's
					   (PE_MEASURE_OFFCPU: the off-CPU event;
					   PE_MEASURE_WALL: the on-CPU one) */
	const char *comm;		/* NULL = any */
	int64_t pid, tid;		/* -1 = any */
	uint64_t from_ns, to_ns;	/* 0 = open */
	int with_pid, with_tid;		/* comm-PID / comm-PID/TID first frames */
	int kernel;			/* kernel frames get "_[k]" */
	int any_order;			/* pe_fold: lines unsorted, a text maybe twice */
	size_t max_nodes;		/* pe_flame: 0 = every node, else the largest */
	int measure;			/* enum pe_measure */
} pe_filter;

/* Where the stored sample blocks of the model's profile come from: read()
 * hands every block that may hold samples in [from_ns, to_ns) (0 = open)
 * to cb, in file order. 0, or -1 on a storage error. */
typedef struct pe_blocks {
	int (*read)(void *src, uint64_t from_ns, uint64_t to_ns, pe_block_cb cb, void *ctx);
	void *src;
} pe_blocks;

/* A weight's name (samples, period, offcpu, wall) to by_samples and an
 * enum pe_measure: 0, or -1 for any other name. */
int pe_weight_parse(const char *name, int *by_samples, int *measure);
/* The name of by_samples and measure. */
const char *pe_weight_name(int by_samples, int measure);

/* ---- the event a question folds ------------------------------------------------ */

/* The event questions about the model fold for `want` (the filter's event;
 * NULL: the default), counted in the recording's own event order (perf
 * report's), not in the order of the first samples: the first event
 * answering to `want` ("cpu-clock" also matches "cpu-clock:ppp") that has
 * samples, else the first answering to it; the default is the first event
 * that has samples. OUT: *out, the model's text; NULL when no event answers
 * (or, for the default, none has samples). 0, or -1 out of memory. */
int pe_event_pick(const pe_model *m, const char *want, const char **out);
#define PE_EVENT_NAMES_LISTED 32	/* names pe_event_names lists at most */
/* The model's event names, each once, joined by ", " (for a message that
 * says which events there are). malloc'ed; NULL out of memory. */
char *pe_event_names(const pe_model *m);

/* ---- selecting ----------------------------------------------------------------- */

typedef struct pe_selection pe_selection;

/* The event whose samples carry off-CPU time (the first, in file order,
 * with any), or NULL when the profile has none. */
const char *pe_offcpu_event(const pe_model *m);
/* Whether f->measure applies to m: 0, or 1 and *why (a sentence) when the
 * profile has no off-CPU time, or no time-based on-CPU event for
 * PE_MEASURE_WALL. pe_select then selects nothing. */
int pe_measure_check(const pe_model *m, const pe_filter *f, const char **why);

/* The samples of the folded event (pe_event_pick's for f->event) that pass
 * the filter, grouped as folded text tells them apart (comm, leaf stack,
 * and pid/tid when printed). Samples of dying tasks (pid or tid -1) are
 * left out, as `perfhub collapse` leaves them out. `blocks` is read only
 * for a time range. OUT: *out (empty when the event has no samples).
 * 0, or -1 (storage error, corrupt block, out of memory). */
int pe_select(const pe_model *m, const pe_filter *f, const pe_blocks *blocks,
	      pe_selection **out);
void pe_selection_free(pe_selection *s);
/* The samples and period a selection holds (a flame graph's root). */
void pe_selection_totals(const pe_selection *s, uint64_t *samples, uint64_t *period);

/* ---- folded stacks, the flame graph, top ------------------------------------------- */

/* One call per distinct folded line "comm;outer;...;leaf", sorted
 * bytewise (unless f->any_order). A non-zero return stops the walk. */
typedef int (*pe_fold_cb)(void *ctx, const char *line, uint64_t samples, uint64_t period);
int pe_fold(const pe_model *m, const pe_filter *f, const pe_selection *s, pe_fold_cb cb,
	    void *ctx);

/* A tree handed out depth first: enter() for a node, its children in
 * bytewise name order, then leave(). A non-zero return stops. */
typedef struct pe_tree_cb {
	int (*enter)(void *ctx, const char *name, size_t len, const char *dso, uint64_t value);
	int (*leave)(void *ctx);
} pe_tree_cb;
/* The flame graph of what pe_fold would print: the root "all", then comms,
 * then frames outermost first, each node's value the sum of its lines'
 * samples (by_samples) or period; `dso` of a frame node is that of the
 * first frame of its name placed there (NULL for the root and comms). With
 * f->max_nodes only the largest that many nodes (the root always). Built
 * from the stack tree, no folded text in between. 0 or -1. */
int pe_flame(pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
	     const pe_tree_cb *cb, void *ctx);

typedef struct pe_top_row {
	const char *name;	/* the frame name ("..._[k]" under f->kernel); freed with the rows */
	const char *dso;	/* of its first frame; NULL when none */
	uint64_t self, total;	/* leaf; anywhere on the stack, once per stack */
} pe_top_row;
/* Per function, unsorted. OUT: rows (free with pe_top_free). 0 or -1. */
int pe_top(const pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
	   pe_top_row **rows, size_t *n);
void pe_top_free(pe_top_row *rows, size_t n);

/* ---- callers and callees ------------------------------------------------------------- */

/* The sandwich view of one function (its frame name as pe_top names it):
 * the callers tree, inverted, the function at its root, then each caller
 * outwards and the comm last; and the callees tree, the function at its
 * root, then what it called, down to the leaves. Both trees come as
 * pe_flame's does (depth first, children in bytewise name order; f->max_nodes
 * applies to each) and both roots are the function's total (pe_top's): a
 * stack counts once, at the outermost frame of the function when it
 * recurses. 0; 1 when no frame of the profile has that name; -1. */
int pe_sandwich(pe_model *m, const pe_filter *f, const pe_selection *s, int by_samples,
		const char *function, const pe_tree_cb *callers, void *callers_ctx,
		const pe_tree_cb *callees, void *callees_ctx);

/* ---- the samples of a function by address ------------------------------------------- */

/* A function's leaf samples at one address of one frame (builder.h,
 * PE_ROW_LEAF_ADDR), as persistence keeps them. */
typedef struct pe_leaf_row {
	uint32_t frame, event;
	uint64_t addr, samples, period, offcpu;
} pe_leaf_row;
typedef int (*pe_leaf_cb)(void *ctx, const pe_leaf_row *r);
/* A builder row of kind PE_ROW_LEAF_ADDR read into *out: 1, or 0 for a
 * row of another kind. */
int pe_leaf_row_of(const pe_row *r, pe_leaf_row *out);
/* Where the leaf rows of a frame come from: read() hands each to cb;
 * 0, or -1 on a storage error. */
typedef struct pe_leaves {
	int (*read)(void *src, uint32_t frame, pe_leaf_cb cb, void *ctx);
	void *src;
} pe_leaves;

typedef struct pe_addr_count {
	uint64_t addr;		/* file offset in the DSO (kernel: the address) */
	uint64_t samples, value;	/* value: as the measure weighs them */
} pe_addr_count;

/* A function's self samples by DSO and address, under f's event and
 * measure (its other filters do not apply). */
typedef struct pe_annot_dso {
	const char *dso;	/* the model's text; NULL = frames without a DSO */
	const char *build_id;	/* the model's hex, NULL = none known */
	int kernel;		/* its frames are kernel frames */
	uint64_t samples, value;
	pe_addr_count *addrs;	/* by address */
	size_t n;
} pe_annot_dso;

typedef struct pe_annot {
	pe_annot_dso *dsos;	/* most value first (then samples, then name) */
	size_t n;
	uint64_t samples, value;	/* over all of them: pe_top's self */
} pe_annot;
/* 0; 1 when no frame of the profile has that name; -1. Free with
 * pe_annot_free. */
int pe_annotate(const pe_model *m, const pe_filter *f, const char *function,
		const pe_leaves *src, pe_annot *out);
void pe_annot_free(pe_annot *a);

/* ---- timeline and threads ------------------------------------------------------------- */

typedef struct pe_bucket {
	uint64_t t_ns, samples, period;
	uint64_t offcpu;	/* off-CPU nanoseconds that fell in the bucket */
} pe_bucket;

typedef struct pe_timeline {
	const char *event;	/* the folded event (the model's text); NULL = none */
	uint64_t start_ns, bucket_ns;
	pe_bucket *buckets;	/* non-empty buckets, in time order */
	size_t n;
} pe_timeline;
/* Samples of the folded event per bucket_ns, from the first one on; reads
 * every block. 0 or -1. Free with pe_timeline_free. */
int pe_timeline_make(const pe_model *m, const char *event, uint64_t bucket_ns,
		     const pe_blocks *blocks, pe_timeline *out);
/* The same under f's event and measure (its other filters do not apply):
 * samples of the selected events, the period of those that count it, and
 * the off-CPU time of each sample spread over the buckets its switched-out
 * interval [time, time + offcpu) covers (charged to the switch-out bucket
 * when the timeline would have more than 4,000,000 buckets). */
int pe_timeline_measured(const pe_model *m, const pe_filter *f, uint64_t bucket_ns,
			 const pe_blocks *blocks, pe_timeline *out);
void pe_timeline_free(pe_timeline *t);

typedef struct pe_thread {
	uint32_t pid, tid;
	uint64_t samples;
	const char **comms;	/* the model's texts, most samples first */
	size_t nr_comms;
} pe_thread;
/* Every thread with samples (any event), most samples first. 0 or -1. */
int pe_threads(const pe_model *m, pe_thread **out, size_t *n);
void pe_threads_free(pe_thread *t, size_t n);

/* ---- the diff of two flame graphs ------------------------------------------------------ */

typedef struct pe_diff pe_diff;

/* An empty diff tree ("all"). */
pe_diff *pe_diff_new(void);
void pe_diff_free(pe_diff *d);
/* Adds a flame graph (pe_flame with this callback and d as ctx) as the
 * base (side 0) or the target (side 1). Both come depth first with
 * children in bytewise name order, so each level merges like two sorted
 * lists. */
void pe_diff_side(pe_diff *d, int side);
extern const pe_tree_cb pe_diff_tree_cb;
/* 1 when out of memory or the trees were too deep, 2 when the merged tree
 * would pass PE_DIFF_MAX_NODES. */
int pe_diff_failed(const pe_diff *d);

typedef struct pe_diff_cb {
	int (*enter)(void *ctx, const char *name, size_t len, const char *dso, uint64_t base,
		     uint64_t target);
	int (*leave)(void *ctx);
} pe_diff_cb;
/* The merged tree, depth first, children in bytewise name order. */
int pe_diff_walk(const pe_diff *d, const pe_diff_cb *cb, void *ctx);

/* ---- merged flame graphs: the same tree, any number of graphs per side ---------------- */

#define PE_DIFF_MAX_NODES (1u << 22)	/* nodes of one merged tree, at most */

/* Before adding: every flame graph added from now on also counts, in each
 * node, its value divided by its own root (so each weighs one). */
void pe_diff_normalize(pe_diff *d);
size_t pe_diff_nodes(const pe_diff *d);
/* From now on walks hand out only the max_nodes largest nodes (by both
 * sides' values, or shares when normalized; the root always), still a
 * tree. 0 (max_nodes 0: all), -1 out of memory. */
int pe_diff_prune(pe_diff *d, size_t max_nodes);
typedef struct pe_norm_cb {
	int (*enter)(void *ctx, const char *name, size_t len, const char *dso, double base,
		     double target);
	int (*leave)(void *ctx);
} pe_norm_cb;
/* The tree with the normalized values (pe_diff_normalize): each side's
 * root is its number of graphs. */
int pe_diff_walk_norm(const pe_diff *d, const pe_norm_cb *cb, void *ctx);
/* The folded lines of one side of the tree (before any pe_diff_prune): a
 * line per node whose own value (its value less its children's) is not 0,
 * sorted bytewise, with that value as both counts - a merged /collapsed.
 * 0 or -1. */
int pe_diff_fold(const pe_diff *d, int side, pe_fold_cb cb, void *ctx);

/* ---- across profiles ------------------------------------------------------------------ */

typedef struct pe_aggregate pe_aggregate;

/* group_by: comm, event, hostname, symbol or dso (symbol and dso of the
 * leaf frame). NULL for another name (*bad = 1) or out of memory. */
pe_aggregate *pe_aggregate_new(const char *group_by, int *bad);
void pe_aggregate_free(pe_aggregate *a);
const char *pe_aggregate_group(const pe_aggregate *a);
/* Adds a profile's aggregate (hostname: its hostname, may be NULL). 0 or -1. */
int pe_aggregate_add(pe_aggregate *a, const pe_model *m, const char *hostname);

typedef struct pe_aggregate_row {
	const char *key;	/* NULL for profiles without that key (hostname) */
	uint64_t samples, period, profiles;
} pe_aggregate_row;
/* The rows, most samples first (then by key, NULL first); valid until the
 * aggregate is freed. NULL when out of memory. */
const pe_aggregate_row *pe_aggregate_rows(pe_aggregate *a, size_t *n);

#endif
