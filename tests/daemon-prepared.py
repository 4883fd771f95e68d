#!/usr/bin/env python3
"""The flame graphs a profile is first asked for - /flamegraph without
parameters (the API's) and with kernel=1 (the page's) - are made as its parse
finishes: asked once perfhub_prepared_answers_total has counted them, both
are sent from the answer cache (perfhub_query_answers_total{source="computed"}
does not move), byte for byte what the same
question computes under another cache key (max_nodes above the node count)
and what a restarted daemon computes from the stored rows. A re-symbolized
profile (a new parse) has its first answers made again; a renamed one keeps
them; a deleted one answers 404. Recordings: synthetic (two events), the
corpus's when ../shared has them, and a system-wide -a -g one (kernel
frames) where perf can record.

Made beside the parse's last transaction, they are normally counted before
the profile is ready; a slow build (the sanitizers') can finish them just
after, when a question asked at once computes its own: so the questions
wait for the count, not for ready alone (tests/bench-farm times the first
question at ready)."""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (Daemon, builddir, check, corpus, have_perf_record, perf_record,
                              tmpdir)

CORPUS = ["perfdataconverter-multi-event-single-process.perf.data",
          "perfparser-cpp-inlining.perf.data", "mstange-sleep.data"]
FIRST = ["", "?kernel=1&weight=period"]	# the API's first question, the page's
COLD = ["?max_nodes=2147483647", "?kernel=1&max_nodes=2147483647"]


def metrics(d):
    text = d.request("GET", "/metrics")[2].decode()
    kept = re.search(r'^perfhub_query_answers_total\{source="kept"\} (\d+)$', text, re.M)
    computed = re.search(r'^perfhub_query_answers_total\{source="computed"\} (\d+)$', text,
                         re.M)
    prepared = re.search(r"^perfhub_prepared_answers_total (\d+)$", text, re.M)
    parses = re.search(r"^perfhub_parses_total (\d+)$", text, re.M)
    check(kept and computed and prepared and parses, "metrics lack the counters:\n" + text)
    return {"kept": int(kept.group(1)), "computed": int(computed.group(1)),
            "prepared": int(prepared.group(1)), "parses": int(parses.group(1))}


def ready_now(d, pid, parses=None, timeout=300):
    """Polls without a pause until the profile is ready (and, with parses,
    that many parses are done): the first question then comes at once."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        st, p = d.json("GET", "/api/v1/profiles/%d" % pid)
        check(p.get("status") != "failed", "parse failed: %r" % p)
        if st == 200 and p["status"] == "ready" and p.get("resymbolizing") is not True and (
                parses is None or metrics(d)["parses"] >= parses):
            return p
        time.sleep(0.001)
    raise AssertionError("profile %d not ready after %ds" % (pid, timeout))


def first_flames(d, pid, what, prepared):
    """The two first flame graphs, once `prepared` answers are counted,
    checked to come from the cache."""
    deadline = time.time() + 120
    while metrics(d)["prepared"] < prepared and time.time() < deadline:
        time.sleep(0.01)
    check(metrics(d)["prepared"] == prepared, "%s: %r prepared answers, want %d" %
          (what, metrics(d), prepared))
    before = metrics(d)
    out = []
    for q in FIRST:
        st, _, body = d.request("GET", "/api/v1/profiles/%d/flamegraph%s" % (pid, q),
                                timeout=300)
        check(st == 200, "%s: flamegraph%s: %d %r" % (what, q, st, body[:200]))
        out.append(body)
    after = metrics(d)
    check(after["computed"] == before["computed"] and after["kept"] == before["kept"] + 2,
          "%s: the first flame graphs were computed, not kept (before %r, after %r)" %
          (what, before, after))
    return out


def cold_flames(d, pid, what):
    out = []
    before = metrics(d)["computed"]
    for q in COLD:
        st, _, body = d.request("GET", "/api/v1/profiles/%d/flamegraph%s" % (pid, q),
                                timeout=300)
        check(st == 200, "%s: flamegraph%s: %d" % (what, q, st))
        out.append(body)
    check(metrics(d)["computed"] == before + 2, "%s: the cold questions were not computed" % what)
    return out


def recordings(work):
    gen = os.path.join(builddir(), "tests", "views-gen")
    syn = os.path.join(work, "switch.data")
    subprocess.run([gen, "switch", syn], check=True)
    recs = [("synthetic", syn)]
    for name in CORPUS:
        if os.path.exists(corpus(name)):
            recs.append((name, corpus(name)))
    if have_perf_record():
        sw = os.path.join(work, "sw.data")
        perf_record(sw, ["-a", "-g", "-F", "997"], ["sh", "-c", "ls -lR /usr/include >/dev/null"])
        recs.append(("system-wide", sw))
    return recs


def main():
    work = tmpdir("prepared-")
    state = tmpdir("prepared-state-")
    try:
        recs = recordings(work)
        first = {}
        with Daemon(state=state) as d:
            for n, (what, path) in enumerate(recs, 1):
                st, r = d.upload(path)
                check(st == 202, "%s: upload %d %r" % (what, st, r))
                ready_now(d, r["id"])
                got = first_flames(d, r["id"], what, 2 * n)
                cold = cold_flames(d, r["id"], what)
                for q, a, b in zip(FIRST, got, cold):
                    check(a == b, "%s: flamegraph%s made at ready differs from the one computed:"
                          "\n%r\n%r" % (what, q, a[:300], b[:300]))
                check(got[0] != got[1] or what != "system-wide",
                      "%s: kernel=1 should mark kernel frames" % what)
                first[r["id"]] = (what, got)
            pid, (what, want) = next(iter(first.items()))
            # a new parse: its first answers are made in its generation
            parses = metrics(d)["parses"]
            st, r = d.json("POST", "/api/v1/profiles/%d/resymbolize" % pid, b"")
            check(st == 202, "resymbolize: %d %r" % (st, r))
            ready_now(d, pid, parses + 1)
            check(first_flames(d, pid, what + ", parsed again", 2 * len(recs) + 2) == want,
                  "%s: parsed again, another flame graph" % what)
            # a new name: the same answers
            st, _ = d.json("PATCH", "/api/v1/profiles/%d" % pid, b'{"name": "renamed"}',
                           {"Content-Type": "application/json"})
            check(st == 200, "PATCH: %d" % st)
            st, _, body = d.request("GET", "/api/v1/profiles/%d/flamegraph" % pid)
            check(st == 200 and body == want[0], "renamed: another flame graph (%d)" % st)
            # deleted: its kept answers are not served
            gone = max(first)
            st, _, _ = d.request("DELETE", "/api/v1/profiles/%d" % gone)
            check(st == 204, "DELETE: %d" % st)
            for q in FIRST:
                st, _, body = d.request("GET", "/api/v1/profiles/%d/flamegraph%s" % (gone, q))
                check(st == 404, "deleted: flamegraph%s %d %r" % (q, st, body[:100]))
            del first[gone]
        # a restarted daemon computes them from the stored rows
        with Daemon(state=state) as d:
            for pid, (what, want) in first.items():
                check(cold_flames(d, pid, what) == want,
                      "%s: the flame graphs made at ready differ from those read back" % what)
        print("%d recordings: the first flame graphs made at ready, equal to computed ones" %
              len(recs))
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
