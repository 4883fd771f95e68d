#!/usr/bin/env python3
"""/flamegraph is the tree of /collapsed's lines: for corpus recordings and
every filter kind, the flame graph equals the tree built here from the
collapsed text (values summed along each path, children in bytewise name
order), and /top's self counts add up to the samples with a stack. Frame
nodes carry their DSO: on a recording made here, each is the DSO perf script
shows for that symbol; /diff nodes carry the same."""
import gzip
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.parse

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import (SKIP, Daemon, check, corpus, have_perf_record, perf_record,
                              tmpdir)

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


def strip_dso(node):
    """The node without its "dso" keys (the tree of /collapsed has none)."""
    return {"name": node["name"], "value": node["value"],
            "children": [strip_dso(c) for c in node["children"]]}


def fold_name(sym):
    """A perf script symbol as a folded stack names it."""
    keep = sym.replace("(anonymous namespace)", "\0")
    if "(" in keep:
        keep = keep[:keep.index("(")]
    return keep.replace("\0", "(anonymous namespace)").replace(";", ":")


def perf_dsos(path):
    """{frame name: {dso paths}} from perf script's call chains."""
    out = subprocess.run(["perf", "script", "-F", "comm,ip,sym,dso", "-i", path],
                         capture_output=True, text=True, timeout=300).stdout
    res = {}
    for line in out.splitlines():
        m = re.match(r"^\s+[0-9a-f]+ (.*) \((.*)\)$", line)
        if not m:
            continue
        sym, dso = m.groups()
        if dso == "unknown" or dso == "[unknown]":
            continue
        name = "[%s]" % os.path.basename(dso) if sym == "[unknown]" else fold_name(sym)
        res.setdefault(name, set()).add(dso)
    return res


def check_dsos(d, work):
    """Every frame node's dso is one perf script shows for its symbol."""
    rec = perf_record(os.path.join(work, "dso.data"), ["-g", "-e", "cpu-clock"],
                      ["python3", "-c", "import json,zlib\nfor i in range(20000): "
                       "zlib.compress(json.dumps({'a': list(range(60))}).encode())"])
    want = perf_dsos(rec)
    st, r = d.upload(rec)
    pid = r["id"]
    check(d.wait(pid)["status"] == "ready", "dso recording not ready")
    st, fg = d.json("GET", "/api/v1/profiles/%d/flamegraph" % pid)
    check(st == 200, "flamegraph: %d" % st)
    check("dso" not in fg, "the root has a dso")
    checked, wrong, without = 0, [], []

    def walk(node, depth):
        nonlocal checked
        if depth == 1:
            check("dso" not in node, "comm node %s has a dso" % node["name"])
        elif depth > 1:
            dsos = want.get(node["name"])
            if dsos:
                if node.get("dso") in dsos:
                    checked += 1
                else:
                    wrong.append((node["name"], node.get("dso"), sorted(dsos)))
            elif node["name"] != "[unknown]" and "dso" not in node:
                without.append(node["name"])
        for c in node["children"]:
            walk(c, depth + 1)
    walk(fg, 0)
    check(not wrong, "frame DSOs differ from perf script's: %r" % wrong[:10])
    check(not without, "frames without a dso: %r" % without[:10])
    check(checked >= 20, "only %d frames checked against perf script" % checked)
    # a user-space library path, not only the kernel
    check(any(s.startswith("/") for ds in want.values() for s in ds), "no file DSO in perf")
    # /diff: a frame node carries the same dso as in the flame graph
    st, df = d.json("GET", "/api/v1/diff?base=%d&target=%d" % (pid, pid))
    check(st == 200, "diff: %d" % st)

    def same(f, g):
        check(f["name"] == g["name"] and f.get("dso") == g.get("dso") and
              f["value"] == g["base"] == g["target"],
              "diff node %s differs from the flame graph's" % f["name"])
        check(len(f["children"]) == len(g["children"]), "diff children of %s" % f["name"])
        for a, b in zip(f["children"], g["children"]):
            same(a, b)
    same(fg, df)
    check_max_nodes(d, pid, strip_dso(fg))
    check_blocks(d, pid)
    check_gzip(d, pid)
    check_single_flight(d, pid)
    print("ok: %d frame DSOs agree with perf script" % checked)


def check_blocks(d, pid):
    """The sample blocks (read for any time range) fold to what the
    per-profile aggregate (read without one) gives, under every filter."""
    _, th = d.json("GET", "/api/v1/profiles/%d/threads" % pid)
    qs = ["", "weight=samples", "with_pid=1", "with_tid=1&kernel=1"]
    for t in th["threads"][:3]:
        qs += ["tid=%d" % t["tid"], "pid=%d&with_tid=1" % t["pid"],
               "comm=%s&with_pid=1" % urllib.parse.quote(t["comms"][0])]
    for q in qs:
        st, _, whole = d.request("GET", "/api/v1/profiles/%d/collapsed?%s" % (pid, q))
        st2, _, ranged = d.request("GET", "/api/v1/profiles/%d/collapsed?%s&from_ns=1&to_ns=%d"
                                   % (pid, q, 2**62))
        check(st == st2 == 200 and whole == ranged,
              "collapsed?%s: the blocks fold differently from the aggregate" % q)


def nodes(node, path=()):
    """{path: value} of every node."""
    path += (node["name"],)
    out = {path: node["value"]}
    for c in node["children"]:
        out.update(nodes(c, path))
    return out


def check_max_nodes(d, pid, full):
    """max_nodes=N keeps the N largest nodes, as a tree, with their values."""
    every = nodes(full)
    for n in (1, 7, 50, len(every) - 1, len(every), len(every) + 10):
        st, got = d.json("GET", "/api/v1/profiles/%d/flamegraph?max_nodes=%d" % (pid, n))
        check(st == 200, "max_nodes=%d: %d" % (n, st))
        kept = nodes(strip_dso(got))
        check(len(kept) == min(n, len(every)), "max_nodes=%d gave %d nodes" % (n, len(kept)))
        check(all(every.get(p) == v for p, v in kept.items()),
              "max_nodes=%d: a node's value or path differs from the full tree's" % n)
        dropped = [v for p, v in every.items() if p not in kept]
        check(not dropped or min(kept.values()) >= max(dropped),
              "max_nodes=%d left out a larger node than one it kept" % n)
    st, _ = d.json("GET", "/api/v1/profiles/%d/flamegraph?max_nodes=0" % pid)
    check(st == 400, "max_nodes=0 answers %d" % st)


def answers(d):
    """{source: count} of perfhub_query_answers_total."""
    _, _, body = d.request("GET", "/metrics")
    return {m.group(1): int(m.group(2)) for m in re.finditer(
        r'^perfhub_query_answers_total\{source="(\w+)"\} (\d+)$', body.decode(), re.M)}


def check_single_flight(d, pid):
    """Requests for one answer at once: one computes it, the others wait
    for it and get the same bytes."""
    path = "/api/v1/profiles/%d/flamegraph?weight=samples&from_ns=2&with_pid=1" % pid
    before = answers(d)
    out = [None] * 8
    go = threading.Barrier(len(out))

    def get(i):
        go.wait()
        out[i] = d.request("GET", path)
    th = [threading.Thread(target=get, args=(i,)) for i in range(len(out))]
    for t in th:
        t.start()
    for t in th:
        t.join()
    after = answers(d)
    check(all(r[0] == 200 and r[2] == out[0][2] for r in out), "concurrent answers differ")
    check(after["computed"] - before["computed"] == 1 and
          after["kept"] - before["kept"] == len(out) - 1,
          "8 requests at once: computed %d times, kept %d" % (
              after["computed"] - before["computed"], after["kept"] - before["kept"]))


def check_gzip(d, pid):
    """Big answers go gzip'ed to a client that asks (the same bytes once
    inflated), plain to one that does not or says q=0."""
    for ep in ("flamegraph", "collapsed", "top?limit=100000", "flamegraph?from_ns=1"):
        path = "/api/v1/profiles/%d/%s" % (pid, ep)
        st, h, plain = d.request("GET", path)
        check(st == 200 and "Content-Encoding" not in h, "%s plain: %d %r" % (ep, st, h))
        if len(plain) < 1024:
            continue
        check(h.get("Vary") == "Accept-Encoding", "%s: no Vary: %r" % (ep, h))
        for _ in range(2):	# made, then kept
            st, h, zipped = d.request("GET", path, headers={"Accept-Encoding": "deflate, gzip"})
            check(st == 200 and h.get("Content-Encoding") == "gzip" and
                  h.get("Vary") == "Accept-Encoding", "%s gzip: %d %r" % (ep, st, h))
            check(len(zipped) < len(plain) and gzip.decompress(zipped) == plain,
                  "%s: gzip body is not the plain one compressed" % ep)
        st, h, body = d.request("GET", path, headers={"Accept-Encoding": "gzip;q=0, br"})
        check(st == 200 and "Content-Encoding" not in h and body == plain,
              "%s with gzip;q=0: %r" % (ep, h))
        # zstd (RFC 9659) where the client takes it, as current browsers do
        for _ in range(2):
            st, h, zst = d.request("GET", path,
                                   headers={"Accept-Encoding": "gzip, deflate, br, zstd"})
            check(st == 200 and h.get("Content-Encoding") == "zstd" and len(zst) < len(plain),
                  "%s zstd: %d %r" % (ep, st, h))
            if shutil.which("zstd"):
                check(subprocess.run(["zstd", "-dc"], input=zst, capture_output=True,
                                     timeout=60).stdout == plain,
                      "%s: zstd body is not the plain one compressed" % ep)
        st, h, _ = d.request("GET", path, headers={"Accept-Encoding": "zstd;q=0, gzip"})
        check(h.get("Content-Encoding") == "gzip", "%s with zstd;q=0: %r" % (ep, h))
        print("%s: %d bytes plain, %d gzip, %d zstd" % (ep, len(plain), len(zipped), len(zst)))


def main():
    paths = [corpus(f) for f in FILES]
    if not all(os.path.exists(p) for p in paths):
        print("no corpus at %s" % os.path.dirname(paths[0]))
        return SKIP
    # recordings of this machine, compared with perf script's names
    with Daemon(args=["--local-uploads"]) as d:
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
                    check(st == 200 and strip_dso(got) == want,
                          "%s: flamegraph%s differs from the tree of /collapsed" %
                          (os.path.basename(path), q))
            check_blocks(d, pid)
            # /top: self adds up to the samples with a stack; every function has a dso key
            st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples" % pid)
            with_stack = sum(int(l.rpartition(" ")[2]) for l in body.decode().splitlines()
                             if ";" in l)
            st, top = d.json("GET", "/api/v1/profiles/%d/top?limit=100000&weight=samples" % pid)
            fns = top["functions"]
            check(sum(f["self"] for f in fns) == with_stack,
                  "top self %d, samples with a stack %d" % (sum(f["self"] for f in fns),
                                                           with_stack))
            check(all("dso" in f for f in fns) and any(f["dso"] for f in fns),
                  "top without dso: %r" % fns[:3])
        if have_perf_record():
            check_dsos(d, tmpdir("flame-"))
        else:
            print("perf record does not work here: DSOs not checked against perf")
    print("ok: flame graphs equal the trees of /collapsed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
