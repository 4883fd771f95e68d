/*
 * model.h - the profile engine's in-memory model of one parsed profile:
 * its interned strings, frames (name, DSO, kernel mark), the stack prefix
 * tree (a node is a frame under its parent node), event names and the
 * aggregate (samples and period per event, thread, comm and leaf stack
 * node), and the build-ids of its DSOs. Every query of one profile is answered from it, plus the sample
 * blocks when a time range is asked.
 *
 * A model is filled once - by a persistence backend's loader, or from a
 * builder's rows in tests - then sealed and shared read-only (see
 * cache.h). What a parse wrote never changes until the next parse, which
 * has a new generation, so a model is valid for (id, generation).
 */
#ifndef PERFHUB_ENGINE_MODEL_H
#define PERFHUB_ENGINE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define PE_MAX_NODES (1u << 30)	/* ids of strings, frames and stack nodes */

/* One aggregate row: the samples of one (event, thread, comm, stack). */
typedef struct pe_agg_row {
	uint32_t event, pid, tid, comm, stack;
	uint64_t samples, period;
	uint64_t first_seq;	/* the first such sample, in file order (from 1) */
	uint64_t offcpu;	/* nanoseconds the thread was switched out after
				   these samples (offcpu.h); 0 for most events */
} pe_agg_row;

typedef struct pe_model pe_model;

/* An empty model of profile `id` as of parse generation `gen`. */
pe_model *pe_model_new(int64_t id, int64_t gen);
/* Frees a model no cache holds (one that failed to load, or a test's). */
void pe_model_free(pe_model *m);

/* Loading. Ids are those the builder gave (0 = none); rows may come in
 * any order, a second row with an id replaces the first, an id beyond
 * PE_MAX_NODES is ignored (a damaged row cannot make the model huge).
 * 0, or -1 out of memory. */
int pe_model_add_string(pe_model *m, uint32_t id, const char *text);
int pe_model_add_frame(pe_model *m, uint32_t id, uint32_t name, uint32_t dso, int kernel);
int pe_model_add_stack(pe_model *m, uint32_t id, uint32_t parent, uint32_t frame);
int pe_model_add_event(pe_model *m, uint32_t idx, const char *name);
int pe_model_add_agg(pe_model *m, const pe_agg_row *r);
/* The aggregate summed from the profile's sample blocks, every one read
 * from src in file order: a store keeps no aggregate beside the blocks,
 * which hold each sample's event, thread, comm, stack and weights. On a
 * model without aggregate rows. 0, or -1 (a block that is not one, out of
 * memory, src failed). */
struct pe_blocks;
int pe_model_agg_from_blocks(pe_model *m, const struct pe_blocks *src);
/* The build-id (hex) of the DSO whose path is string `dso` (a mapping
 * of the recording named it); a DSO mapped with several keeps the last. */
int pe_model_add_build_id(pe_model *m, uint32_t dso, const char *hex);
/* The id of the string `text` among those added (strings are interned: at
 * most one), 0 when there is none. */
uint32_t pe_model_string_id(const pe_model *m, const char *text);
/* Ends loading: the aggregate is put in file order (first_seq) and the
 * model's size reckoned. 0 or -1. */
int pe_model_seal(pe_model *m);

/* Makes the name order flame graphs sort children by now, on a sealed
 * model (else the first flame graph makes it). 0, or -1 out of memory. */
int pe_model_order_names(pe_model *m);

/* The parse generation of a model filled while its parse was written
 * (the generation is known once the parse is stored); before the model
 * is shared. */
void pe_model_set_gen(pe_model *m, int64_t gen);

int64_t pe_model_id(const pe_model *m);
int64_t pe_model_gen(const pe_model *m);
/* Bytes the model holds, for the cache's bound. */
size_t pe_model_bytes(const pe_model *m);

#endif
