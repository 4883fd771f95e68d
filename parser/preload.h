/*
 * preload.h - symbol tables loaded ahead, on threads of their own.
 *
 * Folding a recording needs the symbol tables of the DSOs its samples
 * hit; loading them (reading, sorting and choosing among ELF symbols,
 * parsing kallsyms) is a fixed cost of a fold that the reading thread
 * would otherwise pay in turn, the first time a sample names each. The
 * recording's header lists those DSOs, so idle CPUs can load them while
 * the records are read: a thread that needs a table being loaded waits
 * for that load only, and loads itself one not yet started. For a
 * recording whose user stacks are unwound, each file's DWARF (which
 * names inlined frames there) is opened ahead as well.
 */
#ifndef PERFHUB_PRELOAD_H
#define PERFHUB_PRELOAD_H

#include "symbols.h"

typedef struct pd_preload pd_preload;

/* Start loading, on `threads` threads, the tables the symbolizer's header
 * names (pd_symbolizer_header_dsos); they stay referenced, so cached,
 * until pd_preload_stop. NULL when there is nothing to load or no memory
 * (the tables are then loaded when first needed, as without it). */
pd_preload *pd_preload_start(pd_symbolizer *s, unsigned threads);

/* Stop: loads under way finish, the others are skipped; the references
 * are returned. NULL is ignored. */
void pd_preload_stop(pd_preload *p);

/* How many tables were loaded ahead (for benchmarks and tests). */
size_t pd_preload_loaded(const pd_preload *p);

#endif
