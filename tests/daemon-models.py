#!/usr/bin/env python3
"""A parse leaves its profile's model in memory: the questions asked right
after the profile became ready are answered without reading it back from
the database (perfhub_profile_models_total{source="database"} stays 0, even
for a question asked the moment it is ready), and
every answer equals the one a restarted daemon gives from the model it
reads back - byte for byte, on a system-wide -a -g recording of a small
build made here (short-lived processes, many DSOs, kernel stacks)."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, perf_record, tmpdir

SOURCE = r"""
#include <stdio.h>
static unsigned long fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
int main(void) { printf("%lu\n", fib(27)); return 0; }
"""


def models(d):
    text = d.request("GET", "/metrics")[2].decode()
    got = dict(re.findall(r'^perfhub_profile_models_total\{source="(\w+)"\} (\d+)$', text,
                          re.M))
    return int(got.get("memory", -1)), int(got.get("database", -1))


def wait_ready_now(d, pid, timeout=600):
    """Polls without a pause until the profile is ready or failed."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        if p["status"] in ("ready", "failed"):
            return p
        time.sleep(0.001)
    raise AssertionError("profile %d not done after %ds" % (pid, timeout))


def answers(d, pid):
    """Every per-profile question that reads the model, with its bytes."""
    base = "/api/v1/profiles/%d" % pid
    paths = [base + "/flamegraph", base + "/collapsed", base + "/top?limit=50",
             base + "/threads", base + "/timeline", base + "/flamegraph?max_nodes=40",
             base + "/collapsed?kernel=1", base + "/speedscope", base + "/pprof"]
    st, _, body = d.request("GET", base + "/top?limit=5")
    check(st == 200, "top: %d %s" % (st, body[:200]))
    names = [f["name"] for f in json.loads(body)["functions"] if f.get("dso")]
    check(names, "no function with a DSO in /top: %s" % body[:300])
    for name in names[:2]:
        q = urllib.parse.quote(name)
        paths += [base + "/sandwich?function=" + q, base + "/annotate?function=" + q]
    out = {}
    for p in paths:
        st, _, body = d.request("GET", p, timeout=120)
        check(st == 200, "%s: %d %s" % (p, st, body[:200]))
        out[p] = (st, body)
    return out


def main():
    if not have_perf_record():
        print("perf record does not work here (not root, or no perf): nothing to record")
        return SKIP
    work = tmpdir("models-")
    try:
        src = os.path.join(work, "fib.c")
        with open(src, "w") as f:
            f.write(SOURCE)
        rec = os.path.join(work, "sw.data")
        # a small build: compilers, linkers and the programs they made,
        # each a short-lived process
        build = ("cd %s && for i in 1 2 3 4; do cc -O2 -o fib$i fib.c && ./fib$i >/dev/null; "
                 "done" % work)
        perf_record(rec, ["-a", "-g", "-F", "2000"], ["sh", "-c", build])
        state = tmpdir("models-state-")
        with Daemon(state=state) as d:
            st, r = d.upload(rec)
            check(st == 202, "upload: %s %s" % (st, r))
            # asked the moment it is ready: the parse's last steps after its
            # commit (the model going into the cache) must not be missed
            p = wait_ready_now(d, r["id"])
            check(p["status"] == "ready", "parse: %s" % p)
            first = answers(d, r["id"])
            memory, database = models(d)
            check(database == 0 and memory >= len(first),
                  "right after the parse the model was read back from the database: "
                  "memory %d, database %d" % (memory, database))
        # a new process has nothing in memory: each answer from the stored rows
        with Daemon(state=state) as d:
            again = answers(d, r["id"])
            memory, database = models(d)
            check(database == 1, "a restarted daemon read the model %d times" % database)
        check(sorted(first) == sorted(again), "different questions asked")
        for path in first:
            check(first[path] == again[path],
                  "%s differs between the model the parse left and the one read back:\n"
                  "%s\n%s" % (path, first[path][1][:300], again[path][1][:300]))
        print("%d answers equal; models from memory after the parse, from the database after "
              "a restart" % len(first))
        shutil.rmtree(state, ignore_errors=True)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
