/*
 * feed.h - a recording read by the parser library into the engine's
 * builder: the one path from perf.data records to a profile, shared by
 * the daemon (its builder's rows and blocks go to persistence, see
 * store.h's st_writer) and by offline tools (their builder fills a model
 * in memory, offline.h; pe_feed_load does it all for a path).
 *
 * Each sample is symbolized (parser/symbols.h) and its frames named by
 * pd_fold_frame_name, the code `perfhub collapse` uses, so the engine's
 * folded stacks of a profile are what `perfhub collapse` prints for the
 * file. Memory is that of the builder (strings, frames, stack nodes, the
 * aggregate) and of fixed-size caches, not of the file: a sample whose raw
 * callchain was seen before in the same thread reuses its stack and
 * aggregate row while nothing its stacks depend on changed; one that
 * differs in its leaf only reuses its callers' node; a frame is named
 * once per (symbol, DSO).
 */
#ifndef PERFHUB_ENGINE_FEED_H
#define PERFHUB_ENGINE_FEED_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "engine/builder.h"
#include "engine/offcpu.h"
#include "engine/offline.h"
#include "perfdata.h"
#include "symbols.h"

#define PE_FEED_MAX_BUILD_ID 20	/* bytes; what perf.data records carry */
#define PE_FEED_HEX_LEN (2 * PE_FEED_MAX_BUILD_ID + 1)
#define PE_FEED_MAX_DSOS 4096	/* distinct dsos remembered, at most */
#define PE_FEED_TIME_EVERY 16	/* records between timed ones (a power of 2) */

typedef struct pe_feed pe_feed;

/* What the run did. The per-phase times (nanoseconds of wall time: reading
 * and ordering records, symbolizing, interning frames and stacks, adding
 * samples, other records) are estimated from every PE_FEED_TIME_EVERY-th
 * record. */
typedef struct pe_feed_stats {
	uint64_t records, samples;
	uint64_t resolved_samples;	/* samples whose every frame has a symbol */
	uint64_t chain_hits;		/* samples whose callchain was cached */
	uint64_t tail_hits;		/* of the others, those whose callers were */
	uint64_t symbolizer_limits;	/* records the symbolizer took only in part */
	uint64_t read_ns, symbolize_ns, intern_ns, sample_ns, other_ns;
	pe_offcpu_stats offcpu;		/* switch-outs to switch-ins (offcpu.h) */
} pe_feed_stats;

/* A dso the recording names (BUILD_ID feature, HEADER_BUILD_ID records,
 * MMAP2): its build-id in hex ("" when none was seen) and how many frames
 * in it stayed unresolved (a lower bound: cached callchains are not
 * counted). */
typedef struct pe_feed_dso {
	char *path;
	char hex[PE_FEED_HEX_LEN];
	uint64_t unresolved;
} pe_feed_dso;

enum pe_feed_status {
	PE_FEED_DONE = 0,
	PE_FEED_PARSE_ERROR = -1,	/* the recording is broken: see the pd_error */
	PE_FEED_BUILD_ERROR = -2,	/* the builder failed (memory, its flush hook) */
	PE_FEED_STOPPED = -3,		/* *stop was set */
};

/* A feed of f's records, symbolized by sym, into b, which must have a
 * flush hook (pe_builder_set_flush: it takes the rows and full blocks).
 * f, sym and b stay the caller's and must outlive the feed. Notes the
 * build-ids of f's header. NULL out of memory. */
pe_feed *pe_feed_new(pd_file *f, pd_symbolizer *sym, pe_builder *b);
void pe_feed_free(pe_feed *in);

/* Reads every record of f to its end: samples into the builder, comms and
 * maps as rows. Looks at *stop (may be NULL) every few thousand records.
 * enum pe_feed_status; err is filled on PE_FEED_PARSE_ERROR. */
int pe_feed_run(pe_feed *in, atomic_int *stop, pd_error *err);

/* After the run: the rows of f's events, header features and record
 * counts, the latter two from `report` (report_json(f) of parser/report.h,
 * whose "header"."features" and "records" it reads; NULL: none). 0 or -1. */
int pe_feed_summary(pe_feed *in, const json_t *report);

const pe_feed_stats *pe_feed_get_stats(const pe_feed *in);
/* The dsos noted so far; valid until the next call on `in`. */
const pe_feed_dso *pe_feed_dsos(const pe_feed *in, size_t *n);

/* ---- offline: a path in, a queryable profile out ---------------------------- */

/* Called with each of the symbolizer's warnings (a missing kernel symbol
 * table, a build-id mismatch ...), once each, after the run. */
typedef void (*pe_feed_warn_fn)(void *ctx, const char *text);

/* Opens `path` (file, pipe dump or directory; records in time order),
 * symbolizes with `so` (NULL: defaults; so->recording NULL: path) and a
 * private symbol cache, and builds the profile in memory: its model and
 * its sample blocks, ready for query.h (pe_offline_model, _blocks). NULL
 * on error, with a message naming what and where (the byte offset of a
 * parse error) in msg. */
pe_offline *pe_feed_load(const char *path, const pd_sym_options *so, pe_feed_warn_fn warn,
			 void *ctx, char *msg, size_t msglen);

#endif
