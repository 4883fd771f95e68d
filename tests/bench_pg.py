"""The store benchmark behind tests/bench-pg (prints figures; not a test):
the same recordings ingested and queried on SQLite and on PostgreSQL, on
the same machine in one run.

  ingest   one node (one worker) on SQLite, one on PostgreSQL, then two
           nodes (one worker each) on one PostgreSQL sharing a spool:
           samples/s from the first upload to the last profile ready, the
           nodes' CPU seconds, bytes stored per sample
  queries  per store, on the largest profile: the first flame graph after
           a restart (the model read from the store), then p50 of 5 of
           the flame graph, a time range's folded stacks and the timeline
           (both read sample blocks), the profile list and an aggregate

PostgreSQL runs as the tests run it (tests/pg_harness.py: a server of its
own on a unix socket, fsync off, 64 MB shared buffers); the figures are
for that setup. PERFHUB_BENCH_FILES="a.data b.data ..." uses existing
recordings; else PERFHUB_BENCH_RECORDINGS (default 8) system-wide -g
recordings of PERFHUB_BENCH_SECONDS (default 5) each.
"""
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
import perfhubd_harness as H  # noqa: E402
import pg_harness  # noqa: E402

SECONDS = float(os.environ.get("PERFHUB_BENCH_SECONDS", "5"))
FILES = os.environ.get("PERFHUB_BENCH_FILES", "").split()
# several recordings, so that two nodes share the work evenly
NR_RECORDINGS = int(os.environ.get("PERFHUB_BENCH_RECORDINGS", "8"))


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def pg_cpu_seconds(pg):
    """CPU seconds of the PostgreSQL server and its backends so far."""
    total = 0.0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                fields = f.read().rpartition(")")[2].split()
            ppid = int(fields[1])
            if int(pid) == pg.pid or ppid == pg.pid:
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            pass
    return total


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def ingest(nodes, files, pg=None):
    """Uploads files round robin over the nodes; (seconds to all ready,
    profiles, node CPU seconds, PostgreSQL CPU seconds)."""
    cpu0 = [cpu_seconds(n.proc.pid) for n in nodes]
    pgcpu0 = pg_cpu_seconds(pg) if pg else 0.0
    ids, lock = [], threading.Lock()
    t0 = time.perf_counter()

    def up(i, path):
        st, r = nodes[i % len(nodes)].upload(path)
        assert st == 202, (st, r)
        with lock:
            ids.append(r["id"])

    th = [threading.Thread(target=up, args=(i, f)) for i, f in enumerate(files)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    profiles = [nodes[0].wait(i, timeout=7200) for i in ids]
    secs = time.perf_counter() - t0
    assert all(p["status"] == "ready" for p in profiles), [p.get("error") for p in profiles]
    cpu = sum(cpu_seconds(n.proc.pid) - c for n, c in zip(nodes, cpu0))
    pgcpu = pg_cpu_seconds(pg) - pgcpu0 if pg else 0.0
    return secs, profiles, cpu, pgcpu


def p50_ms(node, path, n=5):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        st, _, _ = node.request("GET", path)
        times.append((time.perf_counter() - t) * 1000)
        assert st == 200, (path, st)
    return sorted(times)[n // 2]


def queries(node, restart, p):
    """Latencies (ms) on profile p; restart() gives a node with empty caches."""
    pid = p["id"]
    t = p["header"].get("sample_time") or {}
    lo, hi = t.get("first_ns", 0), t.get("last_ns", 0)
    node = restart(node)
    t0 = time.perf_counter()
    st, _, _ = node.request("GET", "/api/v1/profiles/%d/flamegraph" % pid)
    cold = (time.perf_counter() - t0) * 1000
    assert st == 200, st
    out = {"flame graph, first after a restart": cold}
    third = (hi - lo) // 3
    # a new parameter each time: the answer cache holds none of them
    for name, make in (
            ("flame graph (model kept)",
             lambda k: "flamegraph?max_nodes=%d" % (100000 + k)),
            ("collapsed, middle third (blocks)",
             lambda k: "collapsed?from_ns=%d&to_ns=%d" % (lo + third + k, lo + 2 * third)),
            ("timeline, ~100 ms buckets (blocks)",
             lambda k: "timeline?bucket_ms=%d" % (100 + k))):
        times = []
        for k in range(5):
            q = "/api/v1/profiles/%d/%s" % (pid, make(k))
            t0 = time.perf_counter()
            st, _, _ = node.request("GET", q)
            times.append((time.perf_counter() - t0) * 1000)
            assert st == 200, (q, st)
        out[name] = sorted(times)[2]
    out["profile list"] = p50_ms(node, "/api/v1/profiles?limit=100")
    out["aggregate by symbol (all profiles)"] = p50_ms(node, "/api/v1/aggregate?group_by=symbol"
                                                       "&limit=20")
    # a series of the profile's hottest function over every profile (the
    # per-profile summaries the store keeps)
    st, _, body = node.request("GET", "/api/v1/profiles/%d/top?limit=1" % pid)
    assert st == 200, st
    fn = json.loads(body)["functions"][0]["name"]
    out["series of its hottest function (all profiles)"] = p50_ms(
        node, "/api/v1/series?function=" + urllib.parse.quote(fn))
    return node, out


def recordings(work):
    files = []
    for i in range(NR_RECORDINGS):
        f = os.path.join(work, "g%d.data" % i)
        H.perf_record(f, ["-g", "-a", "-F", "20000", "-e", "cpu-clock"],
                      ["sh", "-c", "end=$(($(date +%%s)+%d)); while [ $(date +%%s) -lt $end ]; "
                       "do :; done & while [ $(date +%%s) -lt $end ]; do :; done; wait"
                       % int(SECONDS)])
        files.append(f)
    return files


def main():
    if not H.have_perf_record() and not FILES:
        print("bench-pg: perf record does not work here; nothing measured")
        return 0
    if not pg_harness.bindir():
        print("bench-pg: PostgreSQL is not installed; nothing measured")
        return 0
    work = H.tmpdir("bench-pg-")
    files = FILES or recordings(work)
    size = sum(os.path.getsize(f) for f in files)
    print("bench-pg: %d recordings, %.1f MB of perf.data; load average %s; %d CPUs" % (
        len(files), size / 1e6, loadavg(), os.cpu_count()))
    rows, lat = [], {}
    pg = pg_harness.Postgres().start()
    try:
        # SQLite, one node
        st = os.path.join(work, "sqlite")
        os.makedirs(st)
        one = H.Daemon(state=st, workers=1, args=["--db", os.path.join(st, "p.db"),
                                                   "--spool", os.path.join(st, "spool")]).start()
        secs, prof, cpu, _ = ingest([one], files)
        samples = sum(p["samples"] for p in prof)
        stored = sum(os.path.getsize(os.path.join(st, f)) for f in os.listdir(st)
                     if f.startswith("p.db"))
        rows.append(("SQLite, 1 node", secs, samples, cpu, 0.0, stored))
        big = max(prof, key=lambda p: p["samples"])

        def restart_sqlite(n):
            n.stop()
            return H.Daemon(state=st, workers=1, args=n.args).start()
        one, lat["SQLite"] = queries(one, restart_sqlite, big)
        one.stop()
        shutil.rmtree(os.path.join(st, "spool"), ignore_errors=True)

        def pg_nodes(db, count):
            uri = pg.create_db(db)
            spool = os.path.join(work, db + "-spool")
            nodes = []
            for k in range(count):
                s = os.path.join(work, "%s-%d" % (db, k))
                os.makedirs(s)
                nodes.append(H.Daemon(state=s, workers=1, args=[
                    "--db", uri, "--spool", spool, "--cache-dir", os.path.join(s, "cache")]).start())
            return nodes

        def pg_bytes(db):
            return int(pg.psql(db, "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c"
                                   " WHERE c.relkind = 'r' AND c.relnamespace ="
                                   " current_schema()::regnamespace"))

        for db, count in (("one", 1), ("two", 2)):
            nodes = pg_nodes(db, count)
            base = pg_bytes(db)
            secs, prof, cpu, pgcpu = ingest(nodes, files, pg)
            samples = sum(p["samples"] for p in prof)
            rows.append(("PostgreSQL, %d node%s" % (count, "s" if count > 1 else ""), secs,
                         samples, cpu, pgcpu, pg_bytes(db) - base))
            if count == 1:
                pbig = max(prof, key=lambda p: p["samples"])

                def restart_pg(n):
                    n.stop()
                    return H.Daemon(state=n.state, workers=1, args=n.args).start()
                nodes[0], lat["PostgreSQL"] = queries(nodes[0], restart_pg, pbig)
            for n in nodes:
                n.stop()
    finally:
        pg.cleanup()
    print("\ningest (one worker per node):")
    print("  %-22s %9s %12s %10s %10s %12s %14s" % ("store", "seconds", "samples/s", "node CPU",
                                                    "PG CPU", "stored MB", "bytes/sample"))
    for name, secs, samples, cpu, pgcpu, stored in rows:
        print("  %-22s %9.2f %12.0f %9.1fs %9.1fs %12.1f %14.1f" % (
            name, secs, samples / secs, cpu, pgcpu, stored / 1e6, stored / max(samples, 1)))
    sq, p1, p2 = (r[2] / r[1] for r in rows)
    print("  PostgreSQL 1 node / SQLite: %.0f%% (target >= 70%%); 2 nodes / 1 node: %.2fx" % (
        100 * p1 / sq, p2 / p1))
    print("\nqueries on the largest profile (%d samples), ms:" % big["samples"])
    print("  %-46s %10s %12s" % ("", "SQLite", "PostgreSQL"))
    for k in lat["SQLite"]:
        print("  %-46s %10.1f %12.1f" % (k, lat["SQLite"][k], lat["PostgreSQL"][k]))
    print("load average at the end: %s" % loadavg())
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
