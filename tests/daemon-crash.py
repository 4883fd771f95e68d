#!/usr/bin/env python3
"""perfhubd crash safety: kill -9 right after a 202 and in the middle of a
large ingest; after a restart every acknowledged upload is there and ends
with the same answer as an undisturbed run. SIGTERM exits 0.

On PostgreSQL the restarted node is a new node: the job the killed one was
parsing comes back when its lease runs out (at start, or when the node's
keeper looks), never by stealing."""
import os
import re
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, Daemon, check, have_perf_record, perf_record, tmpdir)

BIG = ["sh", "-c", "i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done"]


def collapsed(d, pid):
    st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples" % pid)
    check(st == 200, "collapsed %s" % st)
    return body


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("crash-")
    big = perf_record(os.path.join(work, "big.data"), ["-g", "-F", "20000", "-e", "cpu-clock"],
                      BIG)
    small = perf_record(os.path.join(work, "small.data"), ["-e", "cpu-clock"],
                        ["sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done"])

    # the undisturbed answer
    with Daemon(workers=1) as d:
        st, r = d.upload(big)
        check(st == 202, "upload %s" % st)
        p = d.wait(r["id"], timeout=300)
        check(p["status"] == "ready", "clean run: %s" % p.get("error"))
        want = collapsed(d, r["id"])
        want_records = p["records"]

    state = tmpdir("crash-state-")
    d = Daemon(state=state, workers=1).start()
    try:
        # acknowledged, then killed at once: the upload must survive
        st, r1 = d.upload(small)
        check(st == 202, "small upload %s" % st)
        d.kill9()
        d = Daemon(state=state, workers=1).start()
        p = d.wait(r1["id"])
        check(p["status"] == "ready", "small after kill -9: %s" % p)

        # killed while the large one is being parsed
        st, r2 = d.upload(big)
        check(st == 202, "big upload %s" % st)
        deadline = time.time() + 60
        while time.time() < deadline:
            st, p = d.json("GET", "/api/v1/profiles/%d" % r2["id"])
            if p["status"] != "queued":
                break
            time.sleep(0.005)
        was = p["status"]
        d.kill9()
        d = Daemon(state=state, workers=1).start()
        p = d.wait(r2["id"], timeout=300)
        if was == "parsing":
            check(re.search(r'msg="requeued interrupted jobs" count=1|'
                            r'msg="expired leases" requeued=1', d.read_log()),
                  "interrupted job not requeued")
        check(p["status"] == "ready", "big after kill -9: %s" % p.get("error"))
        check(p["records"] == want_records, "records differ after the crash")
        check(collapsed(d, r2["id"]) == want, "collapsed differs after the crash")
        st, lst = d.json("GET", "/api/v1/profiles")
        check(lst["total"] == 2, "profiles after crashes: %r" % lst)
        print("killed while %s: same answer after restart" % was)
    finally:
        rc = d.stop()
    check(rc == 0, "SIGTERM exit status %s" % rc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
