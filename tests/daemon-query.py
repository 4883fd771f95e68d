#!/usr/bin/env python3
"""perfhubd query API over real recordings: /threads, /timeline, /top,
time-range and thread filters of /collapsed, /diff and /aggregate, each
checked against perf script or against the other answers it must sum to;
bad parameters."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, BUSY, Daemon, check, have_perf_record, perf_record,
                              perf_stats, tmpdir)


def perf_script_samples(path):
    """[(pid, tid, time_ns)] from perf script --ns."""
    out = subprocess.run(["perf", "script", "--ns", "-F", "pid,tid,time", "-G", "-i", path],
                         capture_output=True, text=True, timeout=300).stdout
    res = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        pid, tid = parts[0].split("/")
        sec, ns = parts[1].rstrip(":").split(".")
        res.append((int(pid), int(tid), int(sec) * 10**9 + int(ns)))
    return res


def collapsed_total(d, pid, q):
    st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples&%s" % (pid, q))
    check(st == 200, "collapsed %s: %s" % (q, st))
    return sum(int(l.rpartition(" ")[2]) for l in body.decode().splitlines())


def walk(node, fn):
    fn(node)
    for c in node.get("children", []):
        walk(c, fn)


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("query-")
    a = perf_record(os.path.join(work, "a.data"), ["-g", "-e", "cpu-clock"], BUSY)
    b = perf_record(os.path.join(work, "b.data"), ["-g", "-e", "cpu-clock"],
                    ["sh", "-c", "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done"])
    samples = perf_script_samples(a)
    na = perf_stats(a)[0]["SAMPLE"]
    nb = perf_stats(b)[0]["SAMPLE"]
    check(len(samples) == na, "perf script %d samples, stats %d" % (len(samples), na))

    with Daemon() as d:
        st, ra = d.upload(a, "?tag=side=a")
        st, rb = d.upload(b, "?tag=side=b")
        ia, ib = ra["id"], rb["id"]
        check(d.wait(ia)["status"] == "ready" and d.wait(ib)["status"] == "ready", "ready")

        # threads: per (pid, tid) sample counts as perf script has them
        st, th = d.json("GET", "/api/v1/profiles/%d/threads" % ia)
        check(st == 200, "threads %s" % st)
        want = {}
        for pid, tid, _ in samples:
            want[(pid, tid)] = want.get((pid, tid), 0) + 1
        got = {(t["pid"], t["tid"]): t["samples"] for t in th["threads"]}
        check(got == want, "threads %r, perf %r" % (got, want))

        # timeline: buckets add up to all samples
        st, tl = d.json("GET", "/api/v1/profiles/%d/timeline?bucket_ms=20" % ia)
        check(st == 200 and sum(x["samples"] for x in tl["buckets"]) == na, "timeline sum")
        check(tl["start_ns"] == min(t for _, _, t in samples), "timeline start")

        # a time range: the samples perf script shows in [from, to)
        times = sorted(t for _, _, t in samples)
        lo, hi = times[len(times) // 4], times[3 * len(times) // 4]
        want_n = sum(1 for t in times if lo <= t < hi)
        got_n = collapsed_total(d, ia, "from_ns=%d&to_ns=%d" % (lo, hi))
        check(got_n == want_n, "time range: %d, perf script %d" % (got_n, want_n))
        st, fg = d.json("GET", "/api/v1/profiles/%d/flamegraph?weight=samples&from_ns=%d&to_ns=%d"
                        % (ia, lo, hi))
        check(fg["value"] == want_n, "flamegraph time range %d vs %d" % (fg["value"], want_n))
        # a thread
        (pid, tid), n = max(want.items(), key=lambda kv: kv[1])
        check(collapsed_total(d, ia, "tid=%d" % tid) == sum(
            v for (p, t), v in want.items() if t == tid), "tid filter")
        check(collapsed_total(d, ia, "pid=%d" % pid) == sum(
            v for (p, t), v in want.items() if p == pid), "pid filter")

        # top: self sums to the samples with a stack; total >= self; sorted
        st, top = d.json("GET", "/api/v1/profiles/%d/top?limit=100000&weight=samples" % ia)
        fns = top["functions"]
        check(st == 200 and fns, "top %s" % st)
        check(all(f["total"] >= f["self"] for f in fns), "total < self")
        check([f["self"] for f in fns] == sorted((f["self"] for f in fns), reverse=True),
              "top not sorted by self")
        check(sum(f["self"] for f in fns) <= na, "self sum exceeds samples")
        st, top3 = d.json("GET", "/api/v1/profiles/%d/top?limit=3&weight=samples" % ia)
        check(top3["functions"] == fns[:3], "top limit")

        # diff: a profile against itself is all zero difference
        st, df = d.json("GET", "/api/v1/diff?base=%d&target=%d&weight=samples" % (ia, ia))
        check(st == 200 and df["base"] == na, "self diff root")
        walk(df, lambda n: check(n["base"] == n["target"], "self diff node %s" % n["name"]))
        st, df = d.json("GET", "/api/v1/diff?base=%d&target=%d&weight=samples" % (ia, ib))
        check(df["base"] == na and df["target"] == nb, "diff roots %d %d" % (df["base"],
                                                                            df["target"]))

        # aggregate: sums of the per-profile answers
        st, ag = d.json("GET", "/api/v1/aggregate?group_by=hostname")
        check(st == 200 and len(ag["rows"]) == 1 and ag["rows"][0]["samples"] == na + nb and
              ag["rows"][0]["profiles"] == 2, "aggregate hostname %r" % ag)
        st, ag = d.json("GET", "/api/v1/aggregate?group_by=comm&tag=side=a")
        want_c = {}
        for t in th["threads"]:
            want_c[t["comms"][0]] = want_c.get(t["comms"][0], 0) + t["samples"]
        got_c = {r["key"]: r["samples"] for r in ag["rows"]}
        if all(len(t["comms"]) == 1 for t in th["threads"]):
            check(got_c == want_c, "aggregate comm %r, threads %r" % (got_c, want_c))
        st, ag = d.json("GET", "/api/v1/aggregate?group_by=event")
        check(sum(r["samples"] for r in ag["rows"]) == na + nb, "aggregate event")
        st, ag = d.json("GET", "/api/v1/aggregate?group_by=symbol&limit=5")
        check(st == 200 and 0 < len(ag["rows"]) <= 5, "aggregate symbol")

        # bad parameters and unknown paths
        for path, want_st in (("/api/v1/aggregate?group_by=nope", 400),
                              ("/api/v1/profiles/%d/timeline?bucket_ms=x" % ia, 400),
                              ("/api/v1/profiles/%d/timeline?bucket_ms=0" % ia, 400),
                              ("/api/v1/diff?base=%d" % ia, 400),
                              ("/api/v1/diff?base=%d&target=999999" % ia, 404),
                              ("/api/v1/profiles/%d/top?limit=0" % ia, 400),
                              ("/api/v1/profiles/%d/collapsed?pid=x" % ia, 400),
                              ("/api/v1/nope", 404),
                              ("/api/v1/profiles/abc", 404)):
            st, body = d.json("GET", path)
            check(st == want_st and "error" in body, "%s: %s %r" % (path, st, body))
        st, _ = d.json("PUT", "/healthz", b"x")
        check(st == 405, "PUT /healthz: %s" % st)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
