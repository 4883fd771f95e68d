"""The export benchmark behind tests/bench-export (prints figures).

perfhub's route to a table of top functions of a stored recording is one
GET of /pprof (the engine encodes it from the model kept in memory) read
by `go tool pprof -top`; perf's is `perf report` over the perf.data file.
`perfhub export FILE` reads and symbolizes the file itself, as perf
report does. All are timed on the same recording, median of RUNS, wall
clock."""
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import Daemon, have_perf_record, perf_record, tmpdir

RUNS = int(os.environ.get("PERFHUB_BENCH_RUNS", "5"))
SECONDS = float(os.environ.get("PERFHUB_BENCH_SECONDS", "20"))
WORK = ("import json,re,time\nend=time.time()+%f\n"
        "def f(n):\n    return 1 if n<2 else f(n-1)+f(n-2)\n"
        "while time.time()<end:\n    f(16); json.loads(json.dumps({'a':[1]*200})); "
        "re.findall(r'a+b','aab'*200)\n")


def timed(fn):
    xs = []
    for _ in range(RUNS):
        t = time.perf_counter()
        out = fn()
        xs.append(time.perf_counter() - t)
    return statistics.median(xs), out


def main():
    data = os.environ.get("PERFHUB_BENCH_DATA")
    work = tmpdir("bench-export-")
    if not data:
        if not have_perf_record():
            print("perf record does not work here; set PERFHUB_BENCH_DATA")
            return 0
        data = perf_record(os.path.join(work, "bench.data"), ["-g", "-F", "4000", "-a"],
                           ["python3", "-c", WORK % SECONDS])
    env = dict(os.environ, HOME=work)
    with Daemon() as d:
        st, r = d.upload(data)
        pid = r["id"]
        p = d.wait(pid, timeout=1800)
        print("recording %s: %d bytes, %s samples, load %s" % (
            data, os.path.getsize(data), p.get("samples"), os.getloadavg()[0]))
        base = "/api/v1/profiles/%d" % pid
        t0 = time.perf_counter()
        st, _, body = d.request("GET", base + "/pprof", timeout=600)
        first = time.perf_counter() - t0
        rows = []
        for name, q in (("/pprof", "/pprof"), ("/speedscope", "/speedscope"),
                        ("/collapsed", "/collapsed")):
            t, (st, _, b) = timed(lambda: d.request("GET", base + q, timeout=600))
            rows.append((name, t, len(b)))
            if name == "/pprof":
                with open(os.path.join(work, "p.pb.gz"), "wb") as f:
                    f.write(b)
        go = shutil.which("go")
        if go:
            tp, _ = timed(lambda: subprocess.run(
                [go, "tool", "pprof", "-top", "-nodecount=20", os.path.join(work, "p.pb.gz")],
                capture_output=True, env=env, check=True))
        exe = os.path.join(os.environ.get("top_builddir", "."), "cli", "perfhub")
        off = os.path.join(work, "off.pb.gz")
        to, _ = timed(lambda: subprocess.run(
            [exe, "export", data, "--format", "pprof", "-o", off], capture_output=True,
            check=True))
        tr, rep = timed(lambda: subprocess.run(
            ["perf", "report", "--stdio", "--no-children", "--sort", "sym", "-i", data],
            capture_output=True, check=True))
    print("%-42s %10s %12s" % ("", "seconds", "bytes"))
    print("%-42s %10.3f %12d" % ("perfhub /pprof, model not yet loaded", first, len(body)))
    for name, t, n in rows:
        # /collapsed is kept whole by the answer cache; the exports are
        # encoded again from the kept model on every request
        how = "answer kept" if name == "/collapsed" else "model kept"
        print("%-42s %10.3f %12d" % ("perfhub %s (%s)" % (name, how), t, n))
    if go:
        print("%-42s %10.3f" % ("go tool pprof -top on the /pprof answer", tp))
        print("%-42s %10.3f" % ("perfhub: /pprof + go tool pprof -top", rows[0][1] + tp))
    print("%-42s %10.3f %12d" % ("perfhub export FILE --format pprof", to,
                                  os.path.getsize(off)))
    print("%-42s %10.3f %12d" % ("perf report --stdio --sort sym (perf.data)", tr,
                                  os.path.getsize(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
