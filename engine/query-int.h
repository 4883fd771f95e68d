/*
 * query-int.h - what the engine's query files share (internal to
 * engine/): the selection's layout and the folded event.
 */
#ifndef PERFHUB_ENGINE_QUERY_INT_H
#define PERFHUB_ENGINE_QUERY_INT_H

#include "engine/hashmap.h"
#include "engine/model-int.h"
#include "engine/query.h"

struct pe_selection {
	/* grouped rows: event 0; pid and tid 0 unless printed */
	pe_aggmap groups;
};

/* pe_event_pick's event; NULL = none (or out of memory: nothing to fold). */
const char *pe_fold_event(const pe_model *m, const char *want);
/* Which event indexes carry the name `ev` (flags by index, + 1 spare);
 * NULL out of memory. */
unsigned char *pe_event_set(const pe_model *m, const char *ev);

static inline int pe_in_set(const pe_model *m, const unsigned char *set, uint32_t event)
{
	return event < m->nr_events && set[event];
}

/* A dying task samples with pid/tid -1; `perfhub collapse` drops those
 * samples as the perf script | stackcollapse pipeline does, so folded
 * answers do too (they stay stored and counted). */
static inline int pe_dying_task(uint32_t pid, uint32_t tid)
{
	return pid == UINT32_MAX || tid == UINT32_MAX;
}

/* A growing NUL-terminated text. */
typedef struct pe_sbuf {
	char *p;
	size_t len, cap;
} pe_sbuf;

/* Appends s[0..n); 0 or -1 out of memory. */
int pe_sbuf_add(pe_sbuf *b, const char *s, size_t n);
/* The first field of a folded line for row r into b (emptied first): the
 * comm with spaces as '_', as stackcollapse-perf writes it, then -PID or
 * -PID/TID when the filter prints them. 0 or -1. */
int pe_comm_text(pe_sbuf *b, const pe_model *m, const pe_filter *f, const pe_agg_row *r);

#endif
