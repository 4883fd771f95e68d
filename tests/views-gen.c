/*
 * views-gen - synthetic recordings for the off-CPU tests, with times chosen
 * so that every off-CPU figure is known exactly:
 *
 *   views-gen switch OUT	cpu-clock and sched:sched_switch samples with
 *				switch events (perf record -e sched:sched_switch
 *				--switch-events -g)
 *   views-gen offcpu OUT	cpu-clock samples and perf record --off-cpu's
 *				"offcpu-time" samples (period = nanoseconds,
 *				the fake time perf gives them)
 *
 * One process (pid 100) "sleepy", threads 1001..1005, a binary mapped at
 * 0x400000 that the server has no file for: frames fold to "[sleepy]", and
 * stacks differ by depth. The expected figures are in tests/views-offcpu.py.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pdwrite.h"

#define PID 100
#define SW_OUT (1 << 13)	/* PERF_RECORD_MISC_SWITCH_OUT */
#define SW_PREEMPT (1 << 14)	/* PERF_RECORD_MISC_SWITCH_OUT_PREEMPT */
#define CONTEXT_SWITCH (1ULL << 26)	/* attr.context_switch */
#define OFFCPU_TIME (~0ULL << 32)	/* perf --off-cpu's sample time */

static const uint64_t stack2[] = { PD_CONTEXT_USER, 0x400100, 0x400200 };
static const uint64_t stack3[] = { PD_CONTEXT_USER, 0x400100, 0x400200, 0x400300 };

static int add_event(pdw *w, const char *name, uint32_t type, uint64_t config, uint64_t id,
		     uint64_t flags)
{
	pdw_event ev = { 0 };

	ev.attr.type = type;
	ev.attr.config = config;
	ev.attr.sample_period = 1;
	ev.attr.sample_type = PD_SAMPLE_IDENTIFIER | PD_SAMPLE_IP | PD_SAMPLE_TID | PD_SAMPLE_TIME |
			      PD_SAMPLE_ID | PD_SAMPLE_CPU | PD_SAMPLE_PERIOD | PD_SAMPLE_CALLCHAIN;
	ev.attr.flags = PD_ATTR_SAMPLE_ID_ALL | flags;
	ev.name = name;
	ev.ids[0] = id;
	ev.nr_ids = 1;
	return pdw_add_event(w, &ev);
}

static void sample(pdw *w, int ev, uint64_t id, uint32_t tid, uint64_t time, uint64_t period,
		   const uint64_t *chain, size_t n)
{
	pd_sample s = { 0 };

	s.identifier = s.id = id;
	s.ip = chain[1];
	s.pid = PID;
	s.tid = tid;
	s.time = time;
	s.period = period;
	s.nr_callchain = n;
	s.callchain = chain;
	pdw_sample(w, ev, PD_MISC_USER, &s);
}

static void sw(pdw *w, int ev, uint32_t tid, uint64_t time, uint16_t misc)
{
	pd_sample_id sid = { .pid = PID, .tid = tid, .time = time, .id = 1, .identifier = 1 };

	pdw_record_begin(w, PD_RECORD_SWITCH, misc);
	pdw_record_end(w, ev, &sid);
}

static void setup(pdw *w)
{
	pd_sample_id sid = { .pid = PID, .tid = 1001, .time = 1, .id = 1, .identifier = 1 };
	pd_mmap m = { .pid = PID, .tid = 1001, .start = 0x400000, .len = 0x10000,
		      .filename = "/opt/views-gen/sleepy" };
	uint32_t tid;

	pdw_feature_string(w, PD_FEAT_HOSTNAME, "views-gen");
	pdw_feature_string(w, PD_FEAT_ARCH, "x86_64");
	pdw_feature_event_desc(w);
	for (tid = 1001; tid <= 1005; tid++) {
		pd_comm c = { .pid = PID, .tid = tid, .comm = "sleepy" };
		sid.tid = tid;
		pdw_comm(w, 0, &c, &sid);
	}
	pdw_mmap2(w, 0, PD_MISC_USER, &m, &sid);
}

/*
 * tid 1001 blocks for 2 ms (depth 2); 1002 is preempted for 1 ms (0);
 * 1003 switches in with nothing held; 1004 is still out at the end (0,
 * depth 3); 1005 switches out twice with the switch-in between lost (the
 * first 0), then blocks for 0.5 ms (depth 2). Off-CPU: 2.5 ms, all depth 2.
 */
static void switches(pdw *w)
{
	int clk = add_event(w, "cpu-clock", 1, 0, 1, CONTEXT_SWITCH);
	int ss = add_event(w, "sched:sched_switch", 2, 316, 2, 0);

	setup(w);
	sample(w, clk, 1, 1001, 900000, 250000, stack3, 4);
	sample(w, ss, 2, 1001, 1000000, 1, stack2, 3);
	sw(w, clk, 1001, 1000100, SW_OUT);
	sw(w, clk, 1003, 1200000, 0);
	sample(w, ss, 2, 1002, 1500000, 1, stack2, 3);
	sw(w, clk, 1002, 1500100, SW_OUT | SW_PREEMPT);
	sw(w, clk, 1002, 2500000, 0);
	sw(w, clk, 1001, 3000000, 0);
	sample(w, clk, 1, 1001, 3100000, 250000, stack3, 4);
	sample(w, ss, 2, 1004, 4000000, 1, stack3, 4);
	sw(w, clk, 1004, 4000100, SW_OUT);
	sample(w, ss, 2, 1005, 5000000, 1, stack2, 3);
	sw(w, clk, 1005, 5000100, SW_OUT);
	sample(w, ss, 2, 1005, 6000000, 1, stack2, 3);
	sw(w, clk, 1005, 6000100, SW_OUT);
	sw(w, clk, 1005, 6500000, 0);
	sample(w, clk, 1, 1005, 6600000, 250000, stack3, 4);
	pdw_finished_round(w);
}

/* offcpu-time: 7 ms at depth 2 and 3 ms at depth 3, after the last
 * cpu-clock sample (at 3 ms), with perf's fake time. */
static void offcpu(pdw *w)
{
	int clk = add_event(w, "cpu-clock", 1, 0, 1, 0);
	int off = add_event(w, "offcpu-time", 1, 10, 2, 0);

	setup(w);
	sample(w, clk, 1, 1001, 1000000, 250000, stack3, 4);
	sample(w, clk, 1, 1002, 3000000, 250000, stack3, 4);
	pdw_finished_round(w);
	sample(w, off, 2, 1001, OFFCPU_TIME, 7000000, stack2, 3);
	sample(w, off, 2, 1002, OFFCPU_TIME, 3000000, stack3, 4);
	pdw_finished_round(w);
}

int main(int argc, char **argv)
{
	pdw_config cfg = { .attr_size = 136 };
	uint8_t *buf;
	size_t len;
	pdw *w;
	int rc;

	if (argc != 3 || (strcmp(argv[1], "switch") && strcmp(argv[1], "offcpu"))) {
		fprintf(stderr, "usage: views-gen switch|offcpu OUT\n");
		return 2;
	}
	if (!(w = pdw_new(&cfg)))
		return 1;
	if (!strcmp(argv[1], "switch"))
		switches(w);
	else
		offcpu(w);
	rc = pdw_finish(w, &buf, &len);
	pdw_free(w);
	if (rc)
		return 1;
	rc = pdw_write_file(argv[2], buf, len);
	free(buf);
	return rc ? 1 : 0;
}
