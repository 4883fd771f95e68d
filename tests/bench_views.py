"""The benchmark behind tests/bench-views (prints figures, not a test).

A program with several threads that compute in a few known functions and
sleep in another is built and recorded here (perf record -e cpu-clock -e
sched:sched_switch -g --switch-events), stored in a perfhubd, and each
view is timed beside perf's own tool for the same question on the same
file:

  annotate   GET /annotate?function=F       perf annotate --stdio -s F
  callers    GET /sandwich?function=F       perf report --stdio --no-children -G -S F
  off-CPU    GET /flamegraph?weight=offcpu  perf script --show-switch-events,
                                            folded here (what a user of perf does)

"cold" is the first request for the answer (the model may be cached from
another question, the answer is not), "warm" a repeated one (the answer
cache); perf's figure is one run of its command (best of 3). The off-CPU
totals of both are printed too: they must agree.
"""
import json
import os
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import Daemon, tmpdir  # noqa: E402
from views_common import build, need_tools, perf_offcpu, record  # noqa: E402

SECONDS = float(os.environ.get("PERFHUB_BENCH_SECONDS", "6"))

PROGRAM = r"""
#include <pthread.h>
#include <time.h>

static volatile unsigned long sink, divisor = 7919;
static double end;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static unsigned long crunch(unsigned long n)
{
	unsigned long s = 1, i;
	for (i = 0; i < n; i++)
		s += (s * i + 12345) % divisor;
	return s;
}

__attribute__((noinline)) static unsigned long mix(unsigned long n)
{
	unsigned long s = 0, i;
	for (i = 0; i < n; i++)
		s ^= s << 7 ^ i;
	return s;
}

__attribute__((noinline)) static void nap(long us)
{
	struct timespec ts = { 0, us * 1000 };
	nanosleep(&ts, 0);
}

__attribute__((noinline)) static void wait_a_bit(long us) { nap(us); sink++; }
__attribute__((noinline)) static void stage_a(void) { sink += crunch(200000); }
__attribute__((noinline)) static void stage_b(void) { sink += crunch(100000) + mix(300000); }

static void *worker(void *arg)
{
	long id = (long)arg;
	while (now() < end) {
		stage_a();
		stage_b();
		wait_a_bit(500 + 300 * id);
	}
	return 0;
}

int main(void)
{
	pthread_t t[4];
	long i;
	end = now() + SECONDS;
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], 0, worker, (void *)i);
	for (i = 0; i < 4; i++)
		pthread_join(t[i], 0);
	return 0;	/* perf record exits with the workload's status */
}
"""


def timed(fn, n=1):
    best = None
    for _ in range(n):
        t0 = time.perf_counter()
        out = fn()
        dt = time.perf_counter() - t0
        best = dt if best is None or dt < best else best
    return best, out


def main():
    why = need_tools()
    if why:
        print("bench-views: %s" % why)
        return 0
    work = tmpdir("bench-views-")
    try:
        exe = build(work, "stages", PROGRAM.replace("SECONDS", repr(SECONDS)),
                    ("-O0", "-g", "-fno-omit-frame-pointer", "-pthread"))
        rec = os.path.join(work, "stages.data")
        if not record(rec, ["-e", "cpu-clock", "-e", "sched:sched_switch", "-g",
                            "--switch-events"], [exe]):
            print("bench-views: perf cannot record sched:sched_switch here")
            return 0
        size = os.path.getsize(rec)
        with Daemon() as d:
            t0 = time.perf_counter()
            st, up = d.upload(rec)
            p = d.wait(up["id"], timeout=600)
            ingest = time.perf_counter() - t0
            pid = up["id"]
            base = "/api/v1/profiles/%d/" % pid

            def ask(path):
                st, _, body = d.request("GET", base + path)
                assert st == 200, (path, st, body[:200])
                return body

            rows = []
            for what, path, cmd in (
                    ("annotate crunch", "annotate?function=crunch",
                     ["perf", "annotate", "-i", rec, "--stdio", "-s", "crunch"]),
                    ("callers of crunch", "sandwich?function=crunch",
                     ["perf", "report", "-i", rec, "--stdio", "--no-children", "-G", "-S",
                      "crunch"]),
                    ("off-CPU flame graph", "flamegraph?weight=offcpu", None)):
                cold, _ = timed(lambda: ask(path))
                warm, _ = timed(lambda: ask(path), 5)
                if cmd:
                    theirs, _ = timed(lambda: subprocess.run(cmd, capture_output=True,
                                                             timeout=600), 3)
                else:
                    theirs, (perf_total, _) = timed(lambda: perf_offcpu(rec), 3)
                rows.append((what, cold, warm, theirs))
            ours_total = json.loads(ask("flamegraph?weight=offcpu"))["value"]
        load = open("/proc/loadavg").read().split()[:3]
        print("bench-views: %s, %.1f MB, %d samples, ingest %.2f s (parse_ms %d); load %s" %
              (os.path.basename(rec), size / 1e6, p["samples"], ingest, p["parse_ms"],
               " ".join(load)))
        print("%-22s %12s %12s %14s" % ("view", "ours cold", "ours warm", "perf"))
        for what, cold, warm, theirs in rows:
            print("%-22s %10.1f ms %10.2f ms %12.1f ms" % (what, cold * 1e3, warm * 1e3,
                                                          theirs * 1e3))
        print("off-CPU total: ours %.3f ms, perf script %.3f ms" % (ours_total / 1e6,
                                                                 perf_total / 1e6))
        return 0
    finally:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
