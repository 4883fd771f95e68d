/*
 * model-int.h - the model's layout, for the engine's own files (the
 * queries walk its arrays directly; nothing outside engine/ includes
 * this). Once sealed a model is read-only, except for the name order a
 * flame graph makes once under rank_lock.
 */
#ifndef PERFHUB_ENGINE_MODEL_INT_H
#define PERFHUB_ENGINE_MODEL_INT_H

#include <pthread.h>

#include "engine/model.h"

#define PE_MAX_DEPTH 8192	/* frames per folded stack */

struct pe_model {
	int64_t id, gen;
	size_t bytes;
	/* the cache's bookkeeping (cache.c) */
	unsigned refs;
	int dead;		/* dropped from the list; freed by the last release */
	pe_model *prev, *next;
	char **strs;		/* by string id; NULL = none */
	size_t nr_strs, cap_strs;
	uint32_t *frame_name, *frame_kernel, *frame_dso;	/* by frame id */
	size_t nr_frames, cap_frames;
	uint32_t *stack_parent, *stack_frame;	/* by stack node id */
	size_t nr_stacks, cap_stacks;
	char **event_names;	/* by event index; NULL = none */
	size_t nr_events, cap_events;
	char **build_ids;	/* hex, by the string id of the DSO's path; NULL = none */
	size_t nr_build_ids, cap_build_ids;
	pe_agg_row *agg;	/* in first_seq order once sealed */
	size_t nr_agg, cap_agg;
	/* bytewise order of frame names, by key (name string id * 2 + "_[k]"
	 * mark): made by the first flame graph that needs it */
	pthread_mutex_t rank_lock;
	uint32_t *rank;
};

static inline const char *pe_str(const pe_model *m, uint32_t i)
{
	return i < m->nr_strs ? m->strs[i] : NULL;
}

static inline const char *pe_event_name(const pe_model *m, uint32_t idx)
{
	return idx < m->nr_events ? m->event_names[idx] : NULL;
}

static inline const char *pe_build_id(const pe_model *m, uint32_t dso)
{
	return dso < m->nr_build_ids ? m->build_ids[dso] : NULL;
}

/* The rank of every frame name key (2 * nr_strs + 2 of them), made once
 * and shared: sorting a big tree's children then compares integers, not
 * strings. NULL when out of memory. */
const uint32_t *pe_model_ranks(pe_model *m);

#endif
