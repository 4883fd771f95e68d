/*
 * hashmap.h - the open-addressing tables the profile engine interns with
 * (internal to engine/): u64 -> u32, string -> u32, and aggregate
 * rows by their (event, pid, tid, comm, stack) key. Capacities are powers
 * of two; tables grow at half full.
 */
#ifndef PERFHUB_ENGINE_HASHMAP_H
#define PERFHUB_ENGINE_HASHMAP_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "engine/model.h"

static inline uint64_t pe_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

/* FNV-1a, never 0 */
static inline uint64_t pe_hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h | 1;
}

/* u64 key -> u32 value (0 = empty slot; keys are never 0) */
typedef struct pe_u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;
} pe_u64map;

/* Doubles the table (4096 slots at first). 0 or -1 out of memory. */
int pe_u64map_grow(pe_u64map *m);
void pe_u64map_free(pe_u64map *m);

/* Slot for key: *found = 1 if present, else the empty slot to fill. */
static inline size_t pe_u64map_slot(const pe_u64map *m, uint64_t key, int *found)
{
	size_t j;

	for (j = pe_mix64(key) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key) {
			*found = 1;
			return j;
		}
	*found = 0;
	return j;
}

/* string -> id; the strings are owned */
typedef struct pe_strmap {
	char **strs;
	uint64_t *hashes;
	uint32_t *ids;
	size_t cap, n;
} pe_strmap;

/* Doubles the table (1024 slots at first). 0 or -1 out of memory. */
int pe_strmap_grow(pe_strmap *m);
void pe_strmap_free(pe_strmap *m);
/* The slot holding s (hash h), or the empty slot where it would go. */
static inline size_t pe_strmap_slot(const pe_strmap *m, const char *s, uint64_t h)
{
	size_t j;

	for (j = h & (m->cap - 1); m->strs[j]; j = (j + 1) & (m->cap - 1))
		if (m->hashes[j] == h && !strcmp(m->strs[j], s))
			break;
	return j;
}

/* Interns s: OUT *slot (m->strs[*slot] is the map's copy, m->ids[*slot]
 * its id). 1 when added with id `id`, 0 when it was there, -1 out of
 * memory. */
int pe_strmap_put(pe_strmap *m, const char *s, uint32_t id, size_t *slot);

/* Aggregate rows by key: open addressing over row indexes (+1; 0 = empty). */
typedef struct pe_aggmap {
	pe_agg_row *rows;
	size_t n, cap;
	uint32_t *slots;
	size_t nr_slots;
} pe_aggmap;

/* The row for this key, added with zero counts when new; NULL out of memory. */
pe_agg_row *pe_aggmap_get(pe_aggmap *m, uint32_t event, uint32_t pid, uint32_t tid,
			  uint32_t comm, uint32_t stack);
/* The row for this key, or NULL when there is none. */
pe_agg_row *pe_aggmap_find(const pe_aggmap *m, uint32_t event, uint32_t pid, uint32_t tid,
			   uint32_t comm, uint32_t stack);
void pe_aggmap_free(pe_aggmap *m);

#endif
