/*
 * maps.h - the address space of one process (or of the kernel) over time:
 * a sorted set of non-overlapping maps. A newer map replaces the parts of
 * older ones it overlaps, as the kernel does on mmap.
 */
#ifndef PERFHUB_MAPS_H
#define PERFHUB_MAPS_H

#include <stddef.h>
#include <stdint.h>
#include "dso.h"

typedef struct pd_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t pgoff;		/* file offset of start */
	pd_dso *dso;		/* symbol source; NULL for none (a reference) */
	char *name;		/* the dso as perf script names it (owned,
				   or the dso's path when that is the name) */
	char *fixed_sym;	/* KSYMBOL/BPF: the one symbol of the map */
	int identity;		/* dso lookups by address, not file offset */
	int name_is_dso_path;	/* set by pd_maps_insert: name not owned */
} pd_map;

typedef struct pd_maps pd_maps;

/* Maps hold dso references; they are returned to `cache` when dropped. */
pd_maps *pd_maps_new(pd_dso_cache *cache);
/* A copy for a forked process (new references). NULL on no memory. */
pd_maps *pd_maps_clone(const pd_maps *m);
void pd_maps_ref(pd_maps *m);
void pd_maps_unref(pd_maps *m);

/* Insert a copy of *map (takes over map->dso's reference, copies the
 * strings). Returns 0, or -1 when out of memory or over the map limit. */
int pd_maps_insert(pd_maps *m, const pd_map *map);
/* Remove the map starting at start (KSYMBOL unregister). */
void pd_maps_remove(pd_maps *m, uint64_t start);
const pd_map *pd_maps_find(const pd_maps *m, uint64_t addr);
/* The symbolizer's generation of the last change (0 for none, and for a
 * new or cloned set until it is stamped). */
uint64_t pd_maps_stamp(const pd_maps *m);
void pd_maps_set_stamp(pd_maps *m, uint64_t stamp);
size_t pd_maps_count(const pd_maps *m);
/* The lowest start of a map of this dso, 0 when none: what perf's
 * libunwind takes for the file's load address (maps kept from before an
 * exec included, as perf keeps them). */
uint64_t pd_maps_dso_low(const pd_maps *m, const pd_dso *dso);

#endif
