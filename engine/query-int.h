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

/* The event perfhub collapse folds: that of the first sample (in file
 * order) whose event matches `want` ("cpu-clock" matches "cpu-clock:ppp"),
 * or of the very first sample. NULL = none. */
const char *pe_fold_event(const pe_model *m, const char *want);
/* Which event indexes carry the name `ev` (flags by index, + 1 spare);
 * NULL out of memory. */
unsigned char *pe_event_set(const pe_model *m, const char *ev);

/* Which events a question (f's event and measure) selects and what each
 * adds to a group's period, by event index (+ 1 spare): PE_PLAN_PERIOD its
 * period, PE_PLAN_OFFCPU its off-CPU time. NULL when nothing applies
 * (*none = 1: no such event, no samples, a measure that does not apply)
 * or out of memory (*none = 0). pe_in_set tells the selected ones. */
enum { PE_PLAN_NONE, PE_PLAN_PERIOD, PE_PLAN_OFFCPU };
unsigned char *pe_event_plan(const pe_model *m, const pe_filter *f, int *none);

/* What a selected sample (or row) of `event` adds to the measure. */
static inline uint64_t pe_plan_value(const unsigned char *plan, uint32_t event, uint64_t period,
				     uint64_t offcpu)
{
	return plan[event] == PE_PLAN_OFFCPU ? offcpu : period;
}

static inline int pe_in_set(const pe_model *m, const unsigned char *set, uint32_t event)
{
	return event < m->nr_events && set[event];
}

/* The frame name key (name string id * 2 + "_[k]" mark under f->kernel)
 * of the function pe_top calls `function` ("name_[k]" for a kernel frame
 * under f->kernel), or 0 when no frame of the profile has that name. */
uint64_t pe_function_key(const pe_model *m, const pe_filter *f, const char *function);

/* The frame name key of frame fr (0 for a frame the model lacks). */
static inline uint64_t pe_frame_key(const pe_model *m, const pe_filter *f, uint32_t fr)
{
	if (fr >= m->nr_frames)
		return 0;
	return (uint64_t)m->frame_name[fr] << 1 | (uint64_t)(f->kernel && m->frame_kernel[fr]);
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
