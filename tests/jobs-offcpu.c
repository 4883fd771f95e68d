/*
 * jobs-offcpu: the off-CPU tracker of ingest (daemon/jobs/offcpu.h): a
 * held switch-out gets the time to its thread's switch-in, a preempted one
 * 0, a second switch-out without a switch-in releases the first with 0, a
 * switch-in with nothing held is only counted, dying tasks are not held,
 * what is left at the end drains with 0; and the table keeps every thread
 * apart while thousands come and go in any order (deletions included).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "jobs/offcpu.h"

static st_sample at(uint32_t tid, uint64_t time, uint32_t stack)
{
	st_sample s;

	memset(&s, 0, sizeof(s));
	s.pid = 1;
	s.tid = tid;
	s.time = time;
	s.stack = stack;
	s.period = 1;
	return s;
}

static void test_rules(void)
{
	oc_tracker *t = oc_new();
	st_sample s, out;
	oc_stats st;
	int n = 0;

	CHECK(oc_event_kind("sched:sched_switch") == OC_SWITCH &&
	      oc_event_kind("sched:sched_switch:u") == OC_SWITCH &&
	      oc_event_kind("sched:sched_switcher") == OC_OTHER &&
	      oc_event_kind("offcpu-time") == OC_OFFCPU_TIME && oc_event_kind(NULL) == OC_OTHER,
	      "event kinds");
	s = at(7, 1000, 3);
	CHECK(oc_hold(t, &s, &out) == 0, "held");
	oc_switch_out(t, 7, 0);
	CHECK(oc_switch_in(t, 7, 4000, &out) == 1 && out.offcpu == 3000 && out.stack == 3,
	      "blocked 3000 ns: %llu", (unsigned long long)out.offcpu);
	CHECK(oc_switch_in(t, 7, 5000, &out) == 0, "nothing held any more");
	s = at(8, 100, 4);
	oc_hold(t, &s, &out);
	oc_switch_out(t, 8, 1);
	CHECK(oc_switch_in(t, 8, 900, &out) == 1 && out.offcpu == 0, "preempted: 0");
	s = at(9, 100, 5);
	oc_hold(t, &s, &out);
	s = at(9, 200, 6);
	CHECK(oc_hold(t, &s, &out) == 1 && out.stack == 5 && out.offcpu == 0,
	      "switched out twice: the first goes with 0");
	CHECK(oc_switch_in(t, 9, 250, &out) == 1 && out.stack == 6 && out.offcpu == 50, "the second");
	s = at(UINT32_MAX, 1, 1);
	CHECK(oc_hold(t, &s, &out) == 2, "a dying task is not held");
	s = at(10, 1, 1);
	oc_hold(t, &s, &out);
	s = at(11, 1, 1);
	oc_hold(t, &s, &out);
	while (oc_drain(t, &out)) {
		CHECK(out.offcpu == 0, "drained with 0");
		n++;
	}
	CHECK(n == 2, "two drained: %d", n);
	oc_get_stats(t, &st);
	CHECK(st.intervals == 3 && st.preempted == 1 && st.ns == 3050 && st.unmatched_in == 1 &&
	      st.never_in == 3, "stats %llu %llu %llu %llu %llu", (unsigned long long)st.intervals,
	      (unsigned long long)st.preempted, (unsigned long long)st.ns,
	      (unsigned long long)st.unmatched_in, (unsigned long long)st.never_in);
	oc_free(t);
}

/* 20000 threads out at once, back in a scrambled order, twice over. */
static void test_many(void)
{
	enum { N = 20000 };
	oc_tracker *t = oc_new();
	st_sample s, out;
	uint32_t i, k, bad = 0;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < N; i++) {
			s = at(i * 7919u, 10, i);
			if (oc_hold(t, &s, &out) != 0)
				bad++;
		}
		for (i = 0; i < N; i++) {
			uint32_t j = (i * 7u + k) % N;	/* 7 and N coprime: each once */
			if (oc_switch_in(t, j * 7919u, 10 + j, &out) != 1 || out.stack != j ||
			    out.offcpu != j)
				bad++;
		}
	}
	CHECK(!bad, "%u threads lost or mixed up", bad);
	CHECK(!oc_drain(t, &out), "nothing left");
	oc_free(t);
}

int main(void)
{
	test_rules();
	test_many();
	return check_done("jobs-offcpu");
}
