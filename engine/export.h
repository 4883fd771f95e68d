/*
 * export.h - one profile in the formats other tools read, from its model
 * and a selection (query.h), with no SQL and no HTTP, so that the server
 * and the command line share the encoders:
 *
 *   pe_pprof        pprof's profile.proto, gzipped (go tool pprof, Pyroscope,
 *                   Parca read it); encoded with protobuf-c
 *   pe_speedscope   speedscope's file format (JSON, sampled profiles)
 *
 * The selection must be made with the same filter, with f->with_tid set
 * when threads are to be told apart (pprof's pid/tid labels, speedscope's
 * profile per thread).
 */
#ifndef PERFHUB_ENGINE_EXPORT_H
#define PERFHUB_ENGINE_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/query.h"

/* The unit a sample's period counts in for this event: "nanoseconds" for
 * the clock events (cpu-clock, task-clock), else "count". */
const char *pe_event_unit(const char *event);

/* The profile as pprof's profile.proto, gzipped. Sample types, in order:
 * samples/count, then the event's period (type: the event's name without
 * the modifiers perf appends, cpu-clock:ppp -> cpu-clock; unit:
 * pe_event_unit). A sample per selected (thread,
 * comm, stack) with labels comm (text), pid and tid (numbers, with
 * f->with_tid); a location per frame (its function and its DSO's mapping);
 * a function per name as /top names it ("_[k]" under f->kernel); a mapping
 * per DSO, with its build-id when the recording named one. OUT: *out
 * (malloc'ed), *len. 0, or -1 out of memory. */
int pe_pprof(const pe_model *m, const pe_filter *f, const pe_selection *s, uint8_t **out,
	     size_t *len);

/*
 * Many profiles as one pprof profile: each profile's selection added
 * (pe_pprof_b_add), then the message made (pe_pprof_b_finish). Functions
 * (name and DSO), mappings (path and build-id) and locations are made once
 * over all the profiles; every row stays a sample with its comm (and pid
 * and tid) labels. Values: samples, period, and with `offcpu` adds (a
 * selection made under PE_MEASURE_OFFCPU) a third type, offcpu/nanoseconds,
 * that those rows fill (0 samples and period, so the first two still sum
 * to what /top counts).
 */
#define PE_PPROF_VALUES 3
#define PE_PPROF_MAX_SAMPLES (1u << 20)		/* samples of one answer, at most */
#define PE_PPROF_MAX_LOCATION_IDS (1u << 24)	/* stack entries of one answer, at most */
typedef struct pe_pprof_b pe_pprof_b;
pe_pprof_b *pe_pprof_b_new(void);
void pe_pprof_b_free(pe_pprof_b *b);
/* 0, -1 out of memory, -3 past PE_PPROF_MAX_SAMPLES or _LOCATION_IDS. */
int pe_pprof_b_add(pe_pprof_b *b, const pe_model *m, const pe_filter *f, const pe_selection *s,
		   int offcpu);
/* Whether an off-CPU selection was added. */
int pe_pprof_b_offcpu(const pe_pprof_b *b);
/* The gzipped profile (offcpu the default sample type with default_offcpu
 * when there is one). 0 or -1 out of memory. */
int pe_pprof_b_finish(pe_pprof_b *b, int default_offcpu, uint8_t **out, size_t *len);

typedef struct pe_speedscope_opts {
	const char *name;	/* the file's name (NULL: none) */
	const char *exporter;	/* e.g. "perfhub 1.0" */
	int by_samples;		/* weights: samples, else the period */
	int by_comm;		/* one profile per comm, else per thread (f->with_tid) */
} pe_speedscope_opts;
/* The profile in speedscope's file format: shared frames (name, and the
 * DSO as file), then one sampled profile per thread ("comm pid/tid") or
 * per comm, heaviest first; each stack outermost first with its weight.
 * OUT: *out (malloc'ed, NUL-terminated), *len. 0, or -1 out of memory. */
int pe_speedscope(const pe_model *m, const pe_filter *f, const pe_selection *s,
		  const pe_speedscope_opts *o, char **out, size_t *len);

#endif
