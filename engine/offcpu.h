/*
 * offcpu.h - off-CPU time while a recording is read: how long each thread
 * stayed switched out, charged to the stack it switched out with.
 *
 * Two sources, as hotspot and perf have them:
 *  - `perf record -e sched:sched_switch -g --switch-events`: a
 *    sched:sched_switch sample (its callchain is where the thread blocked)
 *    is held until the thread's next switch-in (PERF_RECORD_SWITCH or
 *    SWITCH_CPU_WIDE without the switch-out bit, for that thread), then
 *    written with the nanoseconds between as its off-CPU time. Samples are
 *    read in time order (pd_options.ordered). As perf --off-cpu, only a
 *    thread that blocked counts: one preempted while it could run (the
 *    switch-out record's preempt bit) was waiting for a CPU, not off it,
 *    and its sample is written with 0.
 *  - `perf record --off-cpu`: its "offcpu-time" samples carry the time as
 *    their period (and no real timestamp).
 *
 * Not measured: a switch-out before the recording began (a switch-in with
 * no sample held), and a thread still switched out when it ended (its
 * sample is written with 0); a sched_switch sample held over a lost or
 * missing switch-in is written with 0 when the same thread switches out
 * again. At most PE_OFFCPU_MAX_THREADS threads are held at once; beyond that a
 * sample is written at once, with 0.
 */
#ifndef PERFHUB_ENGINE_OFFCPU_H
#define PERFHUB_ENGINE_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "engine/builder.h"

#define PE_OFFCPU_MAX_THREADS 65536	/* threads switched out at once, held */
#define PE_OFFCPU_SWITCH_EVENT "sched:sched_switch"
#define PE_OFFCPU_EVENT "offcpu-time"	/* perf record --off-cpu */
/* perf record --off-cpu's samples come at the end with this fake time */
#define PE_OFFCPU_TIMESTAMP (~0ULL << 32)

enum pe_offcpu_kinds { PE_OFFCPU_OTHER = 0, PE_OFFCPU_SWITCH, PE_OFFCPU_TIME };

/* What an event is to this module, by its name ("sched:sched_switch" with
 * or without modifiers, "offcpu-time"). */
int pe_offcpu_kind(const char *name);

typedef struct pe_offcpu pe_offcpu;

typedef struct pe_offcpu_stats {
	uint64_t intervals, ns;		/* switch-outs matched with a switch-in */
	uint64_t preempted;		/* of those, preemptions (written with 0) */
	uint64_t unmatched_in;		/* switch-ins with nothing held */
	uint64_t never_in;		/* held samples written with 0 */
} pe_offcpu_stats;

pe_offcpu *pe_offcpu_new(void);
void pe_offcpu_free(pe_offcpu *t);

/* Holds switch-out sample s (its tid, time) until the thread switches in.
 * 0 held; 1 held, and *out is the sample it replaced (write it, with 0);
 * 2 not held (dying task, or PE_OFFCPU_MAX_THREADS held): write s now; -1 out of
 * memory. */
int pe_offcpu_hold(pe_offcpu *t, const pe_sample *s, pe_sample *out);
/* Thread tid's switch-out record: preempt says it could still run. */
void pe_offcpu_out(pe_offcpu *t, uint32_t tid, int preempt);
/* Thread tid switched in at `time`: 1 and *out = its held sample with the
 * off-CPU time set; 0 when none was held. */
int pe_offcpu_in(pe_offcpu *t, uint32_t tid, uint64_t time, pe_sample *out);
/* The samples still held, one per call (off-CPU 0): 1 and *out, 0 when
 * none is left. */
int pe_offcpu_drain(pe_offcpu *t, pe_sample *out);
void pe_offcpu_get_stats(const pe_offcpu *t, pe_offcpu_stats *out);

#endif
