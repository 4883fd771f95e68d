/*
 * engine-offcpu: the off-CPU tracker of the feed (engine/offcpu.h): a
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
#include "engine/offcpu.h"

static pe_sample at(uint32_t tid, uint64_t time, uint32_t stack)
{
	pe_sample s;

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
	pe_offcpu *t = pe_offcpu_new();
	pe_sample s, out;
	pe_offcpu_stats st;
	int n = 0;

	CHECK(pe_offcpu_kind("sched:sched_switch") == PE_OFFCPU_SWITCH &&
	      pe_offcpu_kind("sched:sched_switch:u") == PE_OFFCPU_SWITCH &&
	      pe_offcpu_kind("sched:sched_switcher") == PE_OFFCPU_OTHER &&
	      pe_offcpu_kind("offcpu-time") == PE_OFFCPU_TIME && pe_offcpu_kind(NULL) == PE_OFFCPU_OTHER,
	      "event kinds");
	s = at(7, 1000, 3);
	CHECK(pe_offcpu_hold(t, &s, &out) == 0, "held");
	pe_offcpu_out(t, 7, 0);
	CHECK(pe_offcpu_in(t, 7, 4000, &out) == 1 && out.offcpu == 3000 && out.stack == 3,
	      "blocked 3000 ns: %llu", (unsigned long long)out.offcpu);
	CHECK(pe_offcpu_in(t, 7, 5000, &out) == 0, "nothing held any more");
	s = at(8, 100, 4);
	pe_offcpu_hold(t, &s, &out);
	pe_offcpu_out(t, 8, 1);
	CHECK(pe_offcpu_in(t, 8, 900, &out) == 1 && out.offcpu == 0, "preempted: 0");
	s = at(9, 100, 5);
	pe_offcpu_hold(t, &s, &out);
	s = at(9, 200, 6);
	CHECK(pe_offcpu_hold(t, &s, &out) == 1 && out.stack == 5 && out.offcpu == 0,
	      "switched out twice: the first goes with 0");
	CHECK(pe_offcpu_in(t, 9, 250, &out) == 1 && out.stack == 6 && out.offcpu == 50, "the second");
	s = at(UINT32_MAX, 1, 1);
	CHECK(pe_offcpu_hold(t, &s, &out) == 2, "a dying task is not held");
	s = at(10, 1, 1);
	pe_offcpu_hold(t, &s, &out);
	s = at(11, 1, 1);
	pe_offcpu_hold(t, &s, &out);
	while (pe_offcpu_drain(t, &out)) {
		CHECK(out.offcpu == 0, "drained with 0");
		n++;
	}
	CHECK(n == 2, "two drained: %d", n);
	pe_offcpu_get_stats(t, &st);
	CHECK(st.intervals == 3 && st.preempted == 1 && st.ns == 3050 && st.unmatched_in == 1 &&
	      st.never_in == 3, "stats %llu %llu %llu %llu %llu", (unsigned long long)st.intervals,
	      (unsigned long long)st.preempted, (unsigned long long)st.ns,
	      (unsigned long long)st.unmatched_in, (unsigned long long)st.never_in);
	pe_offcpu_free(t);
}

/* 20000 threads out at once, back in a scrambled order, twice over. */
static void test_many(void)
{
	enum { N = 20000 };
	pe_offcpu *t = pe_offcpu_new();
	pe_sample s, out;
	uint32_t i, k, bad = 0;

	for (k = 0; k < 2; k++) {
		for (i = 0; i < N; i++) {
			s = at(i * 7919u, 10, i);
			if (pe_offcpu_hold(t, &s, &out) != 0)
				bad++;
		}
		for (i = 0; i < N; i++) {
			uint32_t j = (i * 7u + k) % N;	/* 7 and N coprime: each once */
			if (pe_offcpu_in(t, j * 7919u, 10 + j, &out) != 1 || out.stack != j ||
			    out.offcpu != j)
				bad++;
		}
	}
	CHECK(!bad, "%u threads lost or mixed up", bad);
	CHECK(!pe_offcpu_drain(t, &out), "nothing left");
	pe_offcpu_free(t);
}

int main(void)
{
	test_rules();
	test_many();
	return check_done("engine-offcpu");
}
