/*
 * inlines.h - the functions at an address, inlined ones included, named
 * as `addr2line -f -i` names them (what perf 6.1 shows for frames of
 * --call-graph dwarf samples), from an index of a DWARF file's function
 * ranges.
 *
 * The index of a compile unit is built the first time an address in it is
 * asked about: every subprogram and inlined subroutine range, flattened
 * into sorted spans that each name the function addr2line picks there
 * (the smallest range containing the address; of equal ones the later
 * DIE). A lookup is then two binary searches and a walk up the callers.
 * Indexes are bounded in memory: past the budget the least recently used
 * compile units are dropped and rebuilt when asked again.
 *
 * An index is shared: pd_inl_get() finds the one of a file by its path and
 * build-id (size and time without one), so the symbol tables of the same
 * library in many recordings use one index. Thread-safe.
 */
#ifndef PERFHUB_INLINES_H
#define PERFHUB_INLINES_H

#include <stddef.h>
#include <stdint.h>

typedef struct pd_inl pd_inl;		/* the index of one DWARF file */
typedef struct pd_inl_cache pd_inl_cache;

/* max_bytes bounds the memory of all indexes together; 0 = default. */
pd_inl_cache *pd_inl_cache_new(size_t max_bytes);
void pd_inl_cache_free(pd_inl_cache *c);	/* after every pd_inl_put */

/* The index of the DWARF in `path` (opened on first lookup); build_id may
 * be NULL. A reference: return it with pd_inl_put. NULL out of memory. */
pd_inl *pd_inl_get(pd_inl_cache *c, const char *path, const uint8_t *build_id,
		   size_t build_id_size);
void pd_inl_put(pd_inl_cache *c, pd_inl *f);

/* How binutils names the innermost function of a lookup when its name is
 * a plain DW_AT_name in a language where that need not be the symbol's
 * (C++, Go, Rust: not C). The first time a function is the innermost one
 * of a question, addr2line answers with the ELF symbol covering the
 * address and, if that symbol starts where the function does (its first
 * range), keeps it as the function's name; every later question about
 * the function gets the name kept (the DWARF name when none was): a
 * `static` C++ function inlined into main's cold part is "main.cold" at
 * the first address asked, "thrower" at the others. */
typedef struct pd_inl_naming {
	uint64_t func;		/* the function, unique in its file; UINT64_MAX:
				   its DWARF name stands */
	uint64_t low;		/* where it starts */
} pd_inl_naming;

/* The functions at `addr` (an address of the DWARF file), innermost first:
 * the function addr2line picks there and, when that one is an inlined
 * copy, each function it was inlined into, up to the concrete one. Names
 * are demangled as perf demangles them and stay valid while the reference
 * is held. Returns how many were written (0: no DWARF function there);
 * *how says how the first is named (above). */
size_t pd_inl_lookup(pd_inl *f, uint64_t addr, const char **names, size_t max,
		     pd_inl_naming *how);

/* Open the file and list its units now, as the first lookup would (for
 * loading ahead). NULL is ignored. */
void pd_inl_prepare(pd_inl *f);

/* Memory held by all indexes (for tests and metrics). */
size_t pd_inl_cache_bytes(pd_inl_cache *c);

#endif
