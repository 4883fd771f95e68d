/*
 * cache.h - the models of recently asked profiles, shared by every reader:
 * bounded by bytes, least recently used first out, keyed by (profile,
 * parse generation) so a new parse never answers from an old model.
 */
#ifndef PERFHUB_ENGINE_CACHE_H
#define PERFHUB_ENGINE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/model.h"

typedef struct pe_cache pe_cache;

pe_cache *pe_cache_new(size_t max_bytes);
/* Frees the cache and the models no reader holds (call when none is
 * running). */
void pe_cache_free(pe_cache *c);

/* The model of (id, gen) with a reference for the caller, or NULL. */
pe_model *pe_cache_get(pe_cache *c, int64_t id, int64_t gen);
/* Adds a sealed model with one reference for the caller. Older
 * generations of its profile (or a twin another reader loaded meanwhile)
 * and, beyond the bound, the least recently used leave the list; a model
 * in use is freed by its last release. */
void pe_cache_put(pe_cache *c, pe_model *m);
void pe_cache_release(pe_cache *c, pe_model *m);

#endif
