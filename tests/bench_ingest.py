"""The ingest benchmark behind tests/bench-ingest (prints figures)."""
import os
import shutil
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (Daemon, cpu_seconds, have_perf_record, perf_record,
                              proc_status_kb, tmpdir)

SECONDS = float(os.environ.get("PERFHUB_BENCH_SECONDS", "60"))
# existing recordings to use instead of recording (space separated; the
# first is used with 1 worker, all with 2)
FILES = os.environ.get("PERFHUB_BENCH_FILES", "").split()
MIN_BYTES = 200 * 1000 * 1000


def query_ms(d, path, n=5):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        st, _, body = d.request("GET", path)
        times.append((time.perf_counter() - t) * 1000)
        assert st == 200, (path, st)
    times.sort()
    return times[len(times) // 2], len(body)


def run(files, workers):
    d = Daemon(workers=workers)
    try:
        measure(d, files, workers)
    finally:
        # the spool holds a copy of every upload: hundreds of MB
        shutil.rmtree(d.state, ignore_errors=True)


def measure(d, files, workers):
    with d:
        cpu0 = cpu_seconds(d.proc.pid)
        t0 = time.perf_counter()
        ids = []
        lock = threading.Lock()

        def up(path):
            st, r = d.upload(path)
            assert st == 202, (st, r)
            with lock:
                ids.append(r["id"])

        th = [threading.Thread(target=up, args=(f,)) for f in files]
        for t in th:
            t.start()
        for t in th:
            t.join()
        t_up = time.perf_counter() - t0
        profiles = [d.wait(i, timeout=3600) for i in ids]
        t_ready = time.perf_counter() - t0
        cpu = cpu_seconds(d.proc.pid) - cpu0
        assert all(p["status"] == "ready" for p in profiles), [p.get("error") for p in profiles]
        samples = sum(p["samples"] for p in profiles)
        size = sum(os.path.getsize(f) for f in files)
        db = os.path.getsize(os.path.join(d.state, "perfhub.db"))
        wal = os.path.join(d.state, "perfhub.db-wal")
        print("workers=%d files=%d perf.data=%.1f MB samples=%d" %
              (workers, len(files), size / 1e6, samples))
        print("  upload (to 202): %.2f s; upload to ready: %.2f s; parse_ms: %s" %
              (t_up, t_ready, [p["parse_ms"] for p in profiles]))
        print("  end to end: %.0f samples/s, %.1f MB/s" % (samples / t_ready, size / 1e6 / t_ready))
        print("  perfhubd CPU: %.1f s (user+sys) = %.0f samples per CPU second; load average "
              "%s" % (cpu, samples / max(cpu, 1e-9), " ".join(open("/proc/loadavg").read().split()[:3])))
        print("  database: %.1f MB (+ WAL %.1f MB), %.1f bytes/sample, %.1f%% of perf.data" %
              (db / 1e6, (os.path.getsize(wal) if os.path.exists(wal) else 0) / 1e6,
               db / max(samples, 1), 100.0 * db / size))
        pid = ids[0]
        p = profiles[0]
        mid = (p["header"].get("sample_time") or {})
        for path in ("/api/v1/profiles/%d" % pid, "/api/v1/profiles/%d/collapsed" % pid,
                     "/api/v1/profiles/%d/flamegraph" % pid,
                     "/api/v1/profiles/%d/collapsed?from_ns=%d&to_ns=%d" % (
                         pid, mid.get("first_ns", 0) + 1,
                         (mid.get("first_ns", 0) + mid.get("last_ns", 0)) // 2 or 1),
                     "/api/v1/profiles?limit=100"):
            ms, n = query_ms(d, path)
            print("  GET %-60s p50 %8.1f ms (%d bytes)" % (path[:60], ms, n))
        print("  peak RSS of perfhubd: %.1f MB" % (proc_status_kb(d.proc.pid, "VmHWM") / 1024.0))
        # the daemon's own account of each parse (ms; per-record phases estimated)
        for line in d.read_log().splitlines():
            if 'msg="parse phases"' in line:
                print("  phases:", " ".join(w for w in line.split()
                                            if w.partition("=")[0] not in ("ts", "level", "msg")
                                            and w != 'phases"'))


def main():
    if not have_perf_record():
        print("bench-ingest: perf record does not work here; nothing measured")
        return 0
    files = FILES
    work = None
    if not files:
        # system-wide at a high rate: >= 200 MB of -g samples in about a minute
        work = tmpdir("bench-")
        for i in range(2):
            f = os.path.join(work, "g%d.data" % i)
            perf_record(f, ["-g", "-a", "-F", "30000", "-e", "cpu-clock"],
                        ["sh", "-c", "end=$(($(date +%%s)+%d)); while [ $(date +%%s) -lt $end ]; "
                         "do :; done & while [ $(date +%%s) -lt $end ]; do :; done; "
                         "wait" % int(SECONDS)])
            files.append(f)
    for f in files:
        if os.path.getsize(f) < MIN_BYTES:
            print("note: %s is %.1f MB, less than the 200 MB the goal asks for" %
                  (f, os.path.getsize(f) / 1e6))
    run(files[:1], 1)
    run(files, 2)
    if work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
