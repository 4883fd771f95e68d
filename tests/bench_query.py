"""The query benchmark behind tests/bench-query (prints figures).

Latencies are measured per request from a client thread on a keep-alive
connection; filtered requests use parameters not asked before (a new time
range each time, each thread once), so they show the work of a filter, not
an answer kept from an earlier request. "cold" is the first request after
the profile became ready. "browser" rows send Accept-Encoding: gzip as every
browser does and end when the (gzip) body has arrived; "plain" rows do not
ask for gzip. Inflating is the client's work (a browser does it natively
while the bytes arrive): the time this Python client takes to inflate the
flame graph once is printed on its own line.
"""
import http.client
import os
import zlib
import random
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import Daemon, have_perf_record, perf_record, tmpdir

MIN_SAMPLES = 2000000
DATA = os.environ.get("PERFHUB_BENCH_DATA")
RECORD_SECONDS = float(os.environ.get("PERFHUB_BENCH_SECONDS", "80"))
# requests per measurement, as a share of the defaults (a busy system-wide
# recording can have a flame graph of tens of MB)
SCALE = float(os.environ.get("PERFHUB_BENCH_SCALE", "1"))

BUSY = ("import time,json,re\n"
        "end=time.time()+%f\n"
        "def f(n):\n"
        "    return 1 if n<2 else f(n-1)+f(n-2)\n"
        "d={'a':[1,2,3]*50}\n"
        "while time.time()<end:\n"
        "    f(18); json.loads(json.dumps(d)); re.findall(r'a+b', 'aab'*100)\n")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


class Client:
    def __init__(self, port, browser=False):
        self.c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        self.headers = {"Accept-Encoding": "gzip, deflate, br"} if browser else {}

    def get(self, path, inflate=False):
        """-> (ms until the body arrived, bytes on the wire, bytes of the
        body inflated (0 unless asked), ms to inflate)"""
        t = time.perf_counter()
        self.c.request("GET", path, headers=self.headers)
        r = self.c.getresponse()
        wire = r.read()
        ms = (time.perf_counter() - t) * 1000
        if r.status != 200:
            raise AssertionError("%s: %d %s" % (path, r.status, wire[:200]))
        size, inflate_ms = 0, 0.0
        if inflate:
            t = time.perf_counter()
            size = len(zlib.decompress(wire, 16 + zlib.MAX_WBITS)
                       if r.getheader("Content-Encoding") == "gzip" else wire)
            inflate_ms = (time.perf_counter() - t) * 1000
        return ms, len(wire), size, inflate_ms


def run(port, paths, clients, browser=False):
    """paths: a list of request paths, shared out round robin. -> (ms list, seconds)."""
    lat = []
    lock = threading.Lock()
    it = iter(paths)

    def worker():
        c = Client(port, browser)
        mine = []
        while True:
            with lock:
                p = next(it, None)
            if p is None:
                break
            mine.append(c.get(p)[0])
        with lock:
            lat.extend(mine)

    t0 = time.perf_counter()
    th = [threading.Thread(target=worker) for _ in range(clients)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    return lat, time.perf_counter() - t0


def row(name, browser, clients, lat, secs):
    print("  %-34s %-7s %2d client%s: p50 %8.1f ms  p99 %8.1f ms  %7.1f req/s (%d requests)"
          "  load %.1f" % (name, "browser" if browser else "plain", clients,
                           "s" if clients > 1 else " ", pct(lat, 50), pct(lat, 99),
                           len(lat) / secs, len(lat), os.getloadavg()[0]))
    sys.stdout.flush()


def report(name, port, make_paths, n1=20, n16=160):
    for browser in (True, False):
        for clients, n in ((1, n1), (16, n16)):
            n = max(clients, int(n * SCALE))
            lat, secs = run(port, make_paths(n), clients, browser)
            row(name, browser, clients, lat, secs)


def small_recordings(work, n):
    files = []
    for i in range(n):
        f = os.path.join(work, "small%02d.data" % i)
        perf_record(f, ["-g", "-F", "2000", "-e", "cpu-clock"],
                    ["python3", "-c", BUSY % (0.2 + 0.01 * i)])
        files.append(f)
    return files


def main():
    if not DATA and not have_perf_record():
        print("bench-query: perf record does not work here and PERFHUB_BENCH_DATA is unset; "
              "nothing measured")
        return 0
    work = tmpdir("benchq-")
    big = DATA
    if not big:
        big = os.path.join(work, "big.data")
        perf_record(big, ["-g", "-a", "-F", "30000", "-e", "cpu-clock"],
                    ["python3", "-c", BUSY % RECORD_SECONDS])
    smalls = small_recordings(work, 19)
    with Daemon(workers=2) as d:
        st, r = d.upload(big)
        assert st in (200, 202), (st, r)
        pid = r["id"]
        p = d.wait(pid, timeout=3600)
        assert p["status"] == "ready", p.get("error")
        ids = [pid]
        for f in smalls:
            st, r = d.upload(f)
            assert st in (200, 202), (st, r)
            ids.append(r["id"])
        for i in ids[1:]:
            assert d.wait(i, timeout=600)["status"] == "ready"
        n = p["samples"]
        print("profile %d: %d samples (%s%.1f MB perf.data); %d profiles stored; "
              "perfhubd pid %d" % (pid, n, "" if n >= MIN_SAMPLES else "FEWER THAN 2M, ",
                                   os.path.getsize(big) / 1e6, len(ids), d.proc.pid))
        base = "/api/v1/profiles/%d" % pid
        c = Client(d.port, browser=True)
        for path in (base + "/flamegraph", base + "/top", base + "/timeline"):
            ms, wire, size, _ = c.get(path, inflate=True)
            print("  cold %-40s %8.1f ms (%d bytes, %d gzip)" % (path, ms, size, wire))
        for path in (base + "/flamegraph", base + "/collapsed"):
            _, wire, size, inflate_ms = c.get(path, inflate=True)
            print("  body %-40s %d bytes plain, %d bytes gzip (%.1fx); this client "
                  "inflates it in %.1f ms" % (path, size, wire, size / max(1, wire), inflate_ms))
        _, th = d.json("GET", base + "/threads")
        tids = [t["tid"] for t in th["threads"]]
        _, tl = d.json("GET", base + "/timeline?bucket_ms=10")
        t_lo = tl["start_ns"]
        t_hi = max(b["t_ns"] for b in tl["buckets"]) + tl["bucket_ns"]
        rnd = random.Random(1)

        def ranges(k):
            out = []
            for _ in range(k):
                a = rnd.randint(t_lo, t_hi)
                w = rnd.randint((t_hi - t_lo) // 20, (t_hi - t_lo) // 2)
                out.append(base + "/flamegraph?from_ns=%d&to_ns=%d" % (a, a + w))
            return out

        thread_q = [base + "/flamegraph?tid=%d" % t for t in tids]
        report("/flamegraph", d.port, lambda k: [base + "/flamegraph"] * k, 50, 400)
        report("/flamegraph?from_ns&to_ns (new)", d.port, ranges, 20, 64)
        # each thread once: a quarter of them per row, the busiest first
        k1 = min(20, len(thread_q) // 4)
        rest = thread_q[k1 * 2:]
        k16 = len(rest) // 2
        for name, qs, clients, browser in (
                ("/flamegraph?tid (new)", thread_q[:k1], 1, True),
                ("/flamegraph?tid (new)", thread_q[k1:2 * k1], 1, False),
                ("/flamegraph?tid (new)", rest[:k16], 16, True),
                ("/flamegraph?tid (new)", rest[k16:], 16, False)):
            if qs:
                lat, secs = run(d.port, qs, clients, browser)
                row(name, browser, clients, lat, secs)
        report("/top", d.port, lambda k: [base + "/top"] * k, 50, 400)
        report("/timeline", d.port, lambda k: [base + "/timeline"] * k, 50, 400)
        report("/aggregate?group_by=symbol (20)", d.port,
               lambda k: ["/api/v1/aggregate?group_by=symbol"] * k, 10, 32)
        report("/aggregate?group_by=comm (20)", d.port,
               lambda k: ["/api/v1/aggregate?group_by=comm"] * k, 10, 32)
        report("/healthz", d.port, lambda k: ["/healthz"] * k, 500, 5000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
