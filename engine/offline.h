/*
 * offline.h - a profile built and kept in memory, for the tools that read
 * a recording without a server: a builder whose rows go straight into a
 * model (the rows a backend would store for it: strings, frames, stack
 * nodes, events, then the aggregate) and whose sample blocks are kept,
 * compressed, for time ranges and timelines, and its leaf addresses for
 * annotation. Every query.h question is
 * then answered as the daemon answers it.
 *
 *   o = pe_offline_new();  feed pe_offline_builder(o) (feed.h);
 *   pe_offline_finish(o);  pe_select(pe_offline_model(o), &f,
 *   pe_offline_blocks(o), &sel) ...;  pe_offline_free(o);
 *
 * pe_feed_load (feed.h) does the first three steps for a perf.data path.
 */
#ifndef PERFHUB_ENGINE_OFFLINE_H
#define PERFHUB_ENGINE_OFFLINE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/builder.h"
#include "engine/model.h"
#include "engine/query.h"

typedef struct pe_offline pe_offline;

/* An empty profile; its model has id 0, generation 0. NULL out of memory. */
pe_offline *pe_offline_new(void);
void pe_offline_free(pe_offline *o);

/* The builder to fill (its flush hook is the profile's; do not replace
 * it). NULL after pe_offline_finish. */
pe_builder *pe_offline_builder(pe_offline *o);

/* Ends the building: the last block kept, the aggregate into the model,
 * the model sealed and the builder freed. 0, or -1 (the builder failed or
 * out of memory). */
int pe_offline_finish(pe_offline *o);

/* After a successful finish (else NULL): the model, and where its blocks
 * are read from (in file order; the time-range rule of persistence: a
 * block may hold [from, to) when max_time >= from and min_time < to). */
pe_model *pe_offline_model(pe_offline *o);
const pe_blocks *pe_offline_blocks(const pe_offline *o);

/* The build-ids the recording gave its DSOs (pe_feed_load notes them):
 * one DSO path and its hex build-id, copied; 0 or -1. And the one noted
 * for `path`, NULL when none. */
int pe_offline_note_dso(pe_offline *o, const char *path, const char *hex);
const char *pe_offline_build_id(const pe_offline *o, const char *path);

/* Where the leaf rows of a frame come from (pe_annotate), after a
 * successful finish (else NULL). */
const pe_leaves *pe_offline_leaves(const pe_offline *o);

/* Bytes kept: the compressed sample blocks (the model has pe_model_bytes). */
size_t pe_offline_block_bytes(const pe_offline *o);

#endif
