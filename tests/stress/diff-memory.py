#!/usr/bin/env python3
"""/api/v1/diff under load: a recording with deep, varied stacks (a program
built here recursing at random through four functions, about 700,000
flame-graph nodes from a 6 MB perf.data) is diffed with itself: once alone,
then by six clients at once, the same diff, then six different ones
(another max_nodes each, so none is kept for the next). Checked: every
answer 200; the same diff is computed once and the six cost about what one
does; six different ones, four at a time (--max-queries 4), cost at most
about four times one (six at once rose from 83 to 941 MB before the
bound); with --max-queries 1, twelve different diffs at once get 503 with
Retry-After beyond the one running and the four waiting.

STRESS_SIZE=full records for longer (more nodes)."""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stress_lib as S  # noqa: E402
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, tmpdir  # noqa: E402

DEEP_C = r"""
#include <stdlib.h>
static volatile unsigned long sink;
static unsigned rng = 1;
static unsigned next(void) { rng = rng * 1103515245u + 12345u; return rng >> 16; }
void fa(int d); void fb(int d); void fc(int d); void fd(int d);
static void pick(int d)
{
	if (d == 0) { for (int i = 0; i < 20000; i++) sink += i; return; }
	switch (next() & 3) {
	case 0: fa(d - 1); break;
	case 1: fb(d - 1); break;
	case 2: fc(d - 1); break;
	default: fd(d - 1);
	}
}
void fa(int d) { pick(d); sink++; }
void fb(int d) { pick(d); sink++; }
void fc(int d) { pick(d); sink++; }
void fd(int d) { pick(d); sink++; }
int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	for (int i = 0; i < n; i++)
		pick(40 + (int)(next() % 40));
	return 0;
}
"""

SLACK_MB = 48           # allocator and sampling noise on top of the bounds


def metric(d, name):
    st, _, body = d.request("GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            return float(line.rsplit(" ", 1)[1])
    return 0.0


def parallel(d, paths):
    """GETs every path at once; [(status, headers, seconds)], peak RSS."""
    res = [None] * len(paths)
    peak = [S.proc_status(d.proc.pid, "VmRSS")]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], S.proc_status(d.proc.pid, "VmRSS"))
            time.sleep(0.01)

    def get(i):
        t0 = time.time()
        st, h, _ = d.request("GET", paths[i], timeout=600)
        res[i] = (st, h, time.time() - t0)

    sampler = threading.Thread(target=sample)
    sampler.start()
    ts = [threading.Thread(target=get, args=(i,)) for i in range(len(paths))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    done.set()
    sampler.join()
    return res, peak[0]


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("diffmem-")
    src = os.path.join(work, "deep.c")
    with open(src, "w") as f:
        f.write(DEEP_C)
    exe = os.path.join(work, "deep")
    subprocess.run(["cc", "-O0", "-fno-omit-frame-pointer", "-o", exe, src], check=True)
    rec = os.path.join(work, "deep.data")
    subprocess.run(["perf", "record", "-q", "-g", "-F", "4000", "-o", rec, exe,
                    str(S.size_arg("iterations", 30000, 60000))], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    asan = S.daemon_has_asan()
    rows = []
    # four at a time whatever the CPUs, so the bound means the same anywhere
    with Daemon(args=["--max-queries", "4"]) as d:
        st, r = d.upload(rec)
        check(st == 202, "upload: %s %s" % (st, r))
        pid = r["id"]
        check(d.wait(pid, 600)["status"] == "ready", "profile ready")
        diff = "/api/v1/diff?base=%d&target=%d" % (pid, pid)
        rss_one = S.proc_status(d.proc.pid, "VmRSS")
        res, peak_one = parallel(d, ["%s&max_nodes=99999" % diff])
        check(res[0][0] == 200, "one diff: %s" % res[0][0])
        one = max(peak_one - rss_one, 1 << 20)
        rows.append(("one diff", "%.1f s, peak RSS %d -> %d MB" %
                     (res[0][2], rss_one >> 20, peak_one >> 20)))
        rss0 = S.proc_status(d.proc.pid, "VmRSS")
        res, peak_same = parallel(d, [diff] * 6)
        check(all(x[0] == 200 for x in res), "same diff: %s" % [x[0] for x in res])
        rows.append(("six identical diffs", "%.1f s, peak RSS %d -> %d MB" %
                     (max(x[2] for x in res), rss0 >> 20, peak_same >> 20)))
        computed = metric(d, 'perfhub_query_answers_total{source="computed"}')
        kept = metric(d, 'perfhub_query_answers_total{source="kept"}')
        check(kept >= 5 and computed == 2,
              "the same diff was computed %d times, served kept %d" % (computed - 1, kept))
        if not asan:
            check(peak_same - rss0 < one * 3 // 2 + (SLACK_MB << 20),
                  "six identical diffs took %d MB, one takes %d MB" %
                  ((peak_same - rss0) >> 20, one >> 20))
        rss1 = S.proc_status(d.proc.pid, "VmRSS")
        res, peak_diff = parallel(d, ["%s&max_nodes=%d" % (diff, 99990 + i) for i in range(6)])
        check(all(x[0] == 200 for x in res), "different diffs: %s" % [x[0] for x in res])
        rows.append(("six different diffs", "%.1f s, peak RSS %d -> %d MB" %
                     (max(x[2] for x in res), rss1 >> 20, peak_diff >> 20)))
        if not asan:
            check(peak_diff - rss1 < one * 5 + (SLACK_MB << 20),
                  "six different diffs took %d MB, one takes %d MB" %
                  ((peak_diff - rss1) >> 20, one >> 20))
    with Daemon(args=["--max-queries", "1"]) as d:
        st, r = d.upload(rec)
        pid = r["id"]
        check(d.wait(pid, 600)["status"] == "ready", "profile ready")
        diff = "/api/v1/diff?base=%d&target=%d" % (pid, pid)
        res, _ = parallel(d, ["%s&max_nodes=%d" % (diff, 99000 + i) for i in range(12)])
        busy = [x for x in res if x[0] == 503]
        check(all(x[0] in (200, 503) for x in res), "statuses: %s" % [x[0] for x in res])
        check(busy and all(x[1].get("Retry-After") for x in busy),
              "no 503 with Retry-After beyond --max-queries: %s" % [x[0] for x in res])
        check(len(res) - len(busy) >= 5, "only %d answered" % (len(res) - len(busy)))
        check(metric(d, "perfhub_http_busy_total") == len(busy),
              "/metrics counts %s 503s, %d seen" % (metric(d, "perfhub_http_busy_total"),
                                                   len(busy)))
        rows.append(("twelve at once, --max-queries 1", "%d answered, %d told 503 Retry-After %s"
                     % (len(res) - len(busy), len(busy), busy[0][1].get("Retry-After"))))
    S.table("diff memory (%s)" % ("ASan build: RSS not checked" if asan else "RSS checked"), rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
