"""The benchmark of questions about many recordings behind tests/bench-many
(prints figures; not a test).

Stores 1,000 distinct profiles made cheaply from two real recordings of
tests/progs/regress (a fast and a slow build; the HOSTNAME feature
rewritten so each has its own sha256, as tests/stress does), then times

  - a series of hash_rows' self share over all 1,000 (target: <= 100 ms warm);
  - the merged flame graph of 100 of them (target: <= 1 s cold);
  - the ranked diff of two selectors of 20 profiles each;

each "cold" (the first request after perfhubd started: no model in memory,
the files in the OS page cache) and "warm" (median of 5 more), beside the
same answers put together the way a client had to before (one request per
profile, merged in the client; warm) and perf report on the same files.
"""
import http.client
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests", "stress"))
from perfhubd_harness import Daemon, builddir, have_perf_record, perf_record, tmpdir  # noqa: E402
from stress_lib import with_hostname  # noqa: E402

N_SERIES = int(os.environ.get("PERFHUB_BENCH_PROFILES", "1000"))
# rounds of the workload per recording (25: about 0.3 s, 1,100 samples)
ROUNDS = os.environ.get("PERFHUB_BENCH_ROUNDS", "25")
# a file-mode recording to store instead of the workload's fast build (a
# real program has many more distinct stacks than regress)
FILE = os.environ.get("PERFHUB_BENCH_FILE")
N_MERGE = 100
N_SIDE = 20
WARM = 5


def q(text):
    return urllib.parse.quote(text, safe="")


class Client:
    def __init__(self, port):
        self.port = port
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def request(self, method, path, body=None, headers=None):
        self.c.request(method, path, body=body, headers=headers or {})
        r = self.c.getresponse()
        data = r.read()
        return r.status, data

    def timed(self, path):
        """(ms, parsed JSON)"""
        t = time.perf_counter()
        st, data = self.request("GET", path)
        ms = (time.perf_counter() - t) * 1000
        if st != 200:
            raise RuntimeError("%s: %d %s" % (path, st, data[:200]))
        return ms, json.loads(data)


def nodes(tree):
    n, stack = 0, [tree]
    while stack:
        t = stack.pop()
        n += 1
        stack.extend(t.get("children", []))
    return n


def load():
    return open("/proc/loadavg").read().split()[0]


def upload_all(d, fast, slow):
    """Profiles 1..N_SERIES: every one branch=main; the first N_MERGE also
    set=merge; then N_SIDE fast ones side=base and N_SIDE slow ones
    side=target (ids in that order, each distinct)."""
    cl = Client(d.port)
    t0 = time.perf_counter()
    for i in range(N_SERIES):
        tags = ["branch=main"]
        data = fast
        if i < N_MERGE:
            tags.append("set=merge")
        elif i < N_MERGE + N_SIDE:
            tags.append("side=base")
        elif i < N_MERGE + 2 * N_SIDE:
            tags.append("side=target")
            data = slow
        body = with_hostname(data, "bench-%d" % i)
        st, ans = cl.request("POST", "/api/v1/profiles?name=run-%d&%s" % (
            i, "&".join("tag=" + t for t in tags)), body,
            {"Content-Type": "application/octet-stream"})
        if st != 202:
            raise RuntimeError("upload %d: %d %s" % (i, st, ans[:200]))
    while True:
        st, data = cl.request("GET", "/api/v1/profiles?status=ready&limit=0")
        if json.loads(data)["total"] >= N_SERIES:
            break
        time.sleep(0.5)
    return time.perf_counter() - t0


def restarted(d):
    """A fresh perfhubd on the same data: nothing in memory."""
    d.stop()
    d.start()
    return Client(d.port)


def warm(cl, path):
    return statistics.median(cl.timed(path)[0] for _ in range(WARM))


def client_side_flame(cl, ids):
    """What a client did before: every profile's flame graph, merged here."""
    t = time.perf_counter()
    merged = {}

    def add(node, path):
        p = path + (node["name"],)
        merged[p] = merged.get(p, 0) + node["value"]
        for c in node.get("children", []):
            add(c, p)
    for pid in ids:
        _, fg = cl.timed("/api/v1/profiles/%d/flamegraph" % pid)
        add(fg, ())
    return (time.perf_counter() - t) * 1000


def client_side_tops(cl, ids):
    t = time.perf_counter()
    for pid in ids:
        cl.timed("/api/v1/profiles/%d/top?limit=100000" % pid)
    return (time.perf_counter() - t) * 1000


def perf_reports(paths):
    t = time.perf_counter()
    for p in paths:
        subprocess.run(["perf", "report", "--stdio", "--sort", "symbol", "-i", p],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) * 1000


def row(what, cold, warm_ms, target=""):
    print("%-52s %10s %10s  %s" % (what, "%.1f" % cold if cold is not None else "-",
                                   "%.1f" % warm_ms if warm_ms is not None else "-", target))


def main():
    if not have_perf_record():
        print("bench-many: perf record does not work here")
        return 0
    work = tmpdir("bench-many-")
    prog = os.path.join(builddir(), "tests", "progs", "regress")
    fast = open(FILE or perf_record(os.path.join(work, "fast.data"), ["-g"], [prog, ROUNDS]),
                "rb").read()
    slow = open(perf_record(os.path.join(work, "slow.data"), ["-g"], [prog, "--slow", ROUNDS]),
                "rb").read()
    print("bench-many: load average %s at the start; %d profiles (%d and %d bytes each, %s)" %
          (load(), N_SERIES, len(fast), len(slow),
           FILE if FILE else "regress %s rounds" % ROUNDS))
    with Daemon(workers=2, args=["--local-uploads"]) as d:
        secs = upload_all(d, fast, slow)
        print("stored and parsed %d profiles in %.1f s (%.1f ms each, summaries included)" %
              (N_SERIES, secs, 1000 * secs / N_SERIES))
        fn = os.environ.get("PERFHUB_BENCH_FUNCTION", "hash_rows")
        series = "/api/v1/series?function=%s&q=%s" % (fn, q('{branch="main"}'))
        merge = "/api/v1/query/flamegraph?q=" + q('{set="merge"}')
        diff = "/api/v1/diff?base_q=%s&target_q=%s" % (q('{side="base"}'), q('{side="target"}'))
        print()
        print("%-52s %10s %10s  %s" % ("perfhub (ms)", "cold", "warm", "target"))
        cl = restarted(d)
        cold, ans = cl.timed(series)
        assert len(ans["points"]) == N_SERIES, ans.get("profiles")
        row("series of %s over %d profiles" % (fn, N_SERIES), cold, warm(cl, series),
            "<= 100 ms warm")
        cl = restarted(d)
        cold, ans = cl.timed(merge + "&weight=samples")
        assert ans["profiles"] == N_MERGE
        print("(%d samples in the merged flame graph, %d per profile; %d nodes)" %
              (ans["value"], ans["value"] // N_MERGE, nodes(ans)))
        row("merged flame graph of %d profiles" % N_MERGE, cold, warm(cl, merge + "&weight=samples"),
            "<= 1000 ms cold")
        cl = restarted(d)
        cold, ans = cl.timed(diff)
        assert ans["summary"]["base_profiles"] == N_SIDE
        assert FILE or ans["regressions"][0]["function"] == "hash_rows"
        row("ranked diff, %d against %d profiles" % (N_SIDE, N_SIDE), cold, warm(cl, diff))
        # summaries made on first need (profiles stored before they existed)
        d.stop()
        db = sqlite3.connect(os.path.join(d.state, "perfhub.db"))
        for t in ("summary_state", "summary_keys", "summary_events"):
            db.execute("DELETE FROM " + t)
        db.commit()
        db.close()
        t0 = time.perf_counter()
        cl = Client(d.start().port)
        first, ans = cl.timed(series)
        row("series, summaries missing (%d pending then)" % ans["pending"], first, None,
            "after an upgrade")
        while ans["pending"]:
            time.sleep(0.2)
            _, ans = cl.timed(series)
        print("(the idle workers made the missing summaries in %.1f s)" %
              (time.perf_counter() - t0))

        print()
        print("%-52s %10s %10s" % ("the same, one request per profile (ms)", "", "warm"))
        ids_merge = list(range(1, N_MERGE + 1))
        client_side_flame(cl, ids_merge)
        row("%d /flamegraph, merged in the client" % N_MERGE, None,
            client_side_flame(cl, ids_merge))
        client_side_tops(cl, range(1, N_SERIES + 1))
        row("%d /top (a series' points)" % N_SERIES, None,
            client_side_tops(cl, range(1, N_SERIES + 1)))
        row("%d /top (the diff's two sides)" % (2 * N_SIDE), None,
            client_side_tops(cl, range(N_MERGE + 1, N_MERGE + 2 * N_SIDE + 1)))
    print()
    paths = []
    for i in range(N_MERGE + 2 * N_SIDE):
        p = os.path.join(work, "v%d.data" % i)
        with open(p, "wb") as f:
            f.write(with_hostname(slow if i >= N_MERGE + N_SIDE else fast, "bench-%d" % i))
        paths.append(p)
    print("%-52s %10s %10s" % ("perf report --stdio --sort symbol (ms)", "", "total"))
    row("on the %d files of the merge, one after another" % N_MERGE, None,
        perf_reports(paths[:N_MERGE]))
    row("on the 2 x %d files of the diff" % N_SIDE, None, perf_reports(paths[N_MERGE:]))
    print("\nbench-many: load average %s at the end" % load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
