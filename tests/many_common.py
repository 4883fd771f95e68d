"""many_common - what the tests of questions about many recordings share:
the workload with a known regression (tests/progs/regress), recorded at
test time several times per build, uploaded with labels, and the
single-profile answers the merged ones must add up to."""
import os
import sys
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from perfhubd_harness import builddir, check, perf_record  # noqa: E402

# name -> (regress arguments, tags); uploaded in this order (ids 1..8)
RUNS = [
    ("fast1", [], {"branch": "main", "build": "fast"}),
    ("fast2", [], {"branch": "main", "build": "fast"}),
    ("fast3", [], {"branch": "main", "build": "fast"}),
    ("slow1", ["--slow"], {"branch": "pr-7", "build": "slow"}),
    ("slow2", ["--slow"], {"branch": "pr-7", "build": "slow"}),
    ("slow3", ["--slow"], {"branch": "pr-7", "build": "slow"}),
    ("fast4", [], {"branch": "main", "build": "fast", "kind": "again"}),
    ("uniform1", ["--uniform"], {"branch": "pr-8", "build": "uniform"}),
]


def regress_prog():
    return os.path.join(builddir(), "tests", "progs", "regress")


# rounds of each run: enough that what does not scale with the work (the
# start and the exit) keeps to a point or two of the shares a uniform
# slowdown must keep
ROUNDS = 60


def record_runs(work, runs=RUNS):
    """{name: path} of a perf record -g of each run."""
    out = {}
    for name, args, _ in runs:
        out[name] = perf_record(os.path.join(work, name + ".data"), ["-g"],
                                [regress_prog()] + args + [str(ROUNDS)])
    return out


def upload_runs(d, paths, runs=RUNS):
    """{name: id}, each ready."""
    ids = {}
    for name, _, tags in runs:
        q = "?name=" + name + "".join("&tag=%s=%s" % kv for kv in sorted(tags.items()))
        st, r = d.upload(paths[name], q)
        check(st == 202, "upload %s: %s %r" % (name, st, r))
        ids[name] = r["id"]
    for name, pid in ids.items():
        check(d.wait(pid)["status"] == "ready", "%s not ready" % name)
    return ids


def q(text):
    return urllib.parse.quote(text, safe="")


def flat(tree, path=(), out=None):
    """{path of names: value} of a flame graph tree."""
    out = {} if out is None else out
    p = path + (tree["name"],)
    out[p] = out.get(p, 0) + tree["value"]
    for c in tree.get("children", []):
        flat(c, p, out)
    return out


def collapsed(text):
    res = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        res[stack] = res.get(stack, 0) + int(n)
    return res


def top_rows(d, pid, weight="samples"):
    st, t = d.json("GET", "/api/v1/profiles/%d/top?limit=100000&weight=%s" % (pid, weight))
    check(st == 200, "top %d: %s" % (pid, st))
    return {f["name"]: f for f in t["functions"]}


def root(d, pid, weight="samples"):
    st, fg = d.json("GET", "/api/v1/profiles/%d/flamegraph?weight=%s" % (pid, weight))
    check(st == 200, "flamegraph %d: %s" % (pid, st))
    return fg
