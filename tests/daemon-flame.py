#!/usr/bin/env python3
"""/flamegraph is the tree of /collapsed's lines: for corpus recordings and
every filter kind, the flame graph equals the tree built here from the
collapsed text (values summed along each path, children in bytewise name
order), and /top's self counts add up to the samples with a stack."""
import os
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, corpus

FILES = ["mstange-sleep.data", "perfparser-cpp-inlining.perf.data",
         "perfdataconverter-multi-event-single-process.perf.data"]


def tree(lines):
    root = {"name": "all", "value": 0, "children": []}
    index = {}
    for line in lines:
        stack, _, n = line.rpartition(" ")
        n = int(n)
        root["value"] += n
        node, path = root, ()
        for fr in stack.split(";"):
            path += (fr,)
            k = index.get(path)
            if k is None:
                k = index[path] = {"name": fr, "value": 0, "children": []}
                node["children"].append(k)
            k["value"] += n
            node = k

    def order(n):
        n["children"].sort(key=lambda c: c["name"].encode())
        for c in n["children"]:
            order(c)
    order(root)
    return root


def main():
    paths = [corpus(f) for f in FILES]
    if not all(os.path.exists(p) for p in paths):
        print("no corpus at %s" % os.path.dirname(paths[0]))
        return SKIP
    with Daemon() as d:
        for path in paths:
            st, r = d.upload(path)
            pid = r["id"]
            p = d.wait(pid)
            check(p["status"] == "ready", "%s: %r" % (path, p.get("error")))
            hdr = p["header"].get("sample_time") or {}
            lo, hi = hdr.get("first_ns", 0), hdr.get("last_ns", 0)
            _, th = d.json("GET", "/api/v1/profiles/%d/threads" % pid)
            tid = th["threads"][0]["tid"] if th["threads"] else 0
            queries = ["", "?weight=samples", "?with_pid=1", "?with_tid=1&kernel=1",
                       "?tid=%d" % tid, "?from_ns=%d&to_ns=%d" % (lo + 1, (lo + hi) // 2 + 1)]
            for q in queries:
                st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed%s" % (pid, q))
                check(st == 200, "collapsed%s: %d" % (q, st))
                want = tree(body.decode("utf-8", "replace").splitlines())
                for _ in range(2):	# computed, then kept
                    st, got = d.json("GET", "/api/v1/profiles/%d/flamegraph%s" % (pid, q))
                    check(st == 200 and got == want,
                          "%s: flamegraph%s differs from the tree of /collapsed" %
                          (os.path.basename(path), q))
            # /top: self adds up to the samples with a stack; every function has a dso key
            st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples" % pid)
            with_stack = sum(int(l.rpartition(" ")[2]) for l in body.decode().splitlines()
                             if ";" in l)
            st, top = d.json("GET", "/api/v1/profiles/%d/top?limit=100000" % pid)
            fns = top["functions"]
            check(sum(f["self"] for f in fns) == with_stack,
                  "top self %d, samples with a stack %d" % (sum(f["self"] for f in fns),
                                                           with_stack))
            check(all("dso" in f for f in fns) and any(f["dso"] for f in fns),
                  "top without dso: %r" % fns[:3])
    print("ok: flame graphs equal the trees of /collapsed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
