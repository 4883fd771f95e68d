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
 * again. At most OC_MAX_THREADS threads are held at once; beyond that a
 * sample is written at once, with 0.
 */
#ifndef PERFHUB_DAEMON_OFFCPU_H
#define PERFHUB_DAEMON_OFFCPU_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

#define OC_MAX_THREADS 65536	/* threads switched out at once, held */
#define OC_SWITCH_EVENT "sched:sched_switch"
#define OC_OFFCPU_EVENT "offcpu-time"	/* perf record --off-cpu */
/* perf record --off-cpu's samples come at the end with this fake time */
#define OC_OFFCPU_TIMESTAMP (~0ULL << 32)

enum oc_kind { OC_OTHER = 0, OC_SWITCH, OC_OFFCPU_TIME };

/* What an event is to this module, by its name ("sched:sched_switch" with
 * or without modifiers, "offcpu-time"). */
int oc_event_kind(const char *name);

typedef struct oc_tracker oc_tracker;

typedef struct oc_stats {
	uint64_t intervals, ns;		/* switch-outs matched with a switch-in */
	uint64_t preempted;		/* of those, preemptions (written with 0) */
	uint64_t unmatched_in;		/* switch-ins with nothing held */
	uint64_t never_in;		/* held samples written with 0 */
} oc_stats;

oc_tracker *oc_new(void);
void oc_free(oc_tracker *t);

/* Holds switch-out sample s (its tid, time) until the thread switches in.
 * 0 held; 1 held, and *out is the sample it replaced (write it, with 0);
 * 2 not held (dying task, or OC_MAX_THREADS held): write s now; -1 out of
 * memory. */
int oc_hold(oc_tracker *t, const st_sample *s, st_sample *out);
/* Thread tid's switch-out record: preempt says it could still run. */
void oc_switch_out(oc_tracker *t, uint32_t tid, int preempt);
/* Thread tid switched in at `time`: 1 and *out = its held sample with the
 * off-CPU time set; 0 when none was held. */
int oc_switch_in(oc_tracker *t, uint32_t tid, uint64_t time, st_sample *out);
/* The samples still held, one per call (off-CPU 0): 1 and *out, 0 when
 * none is left. */
int oc_drain(oc_tracker *t, st_sample *out);
void oc_get_stats(const oc_tracker *t, oc_stats *out);

#endif
