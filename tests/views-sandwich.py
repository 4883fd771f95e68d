#!/usr/bin/env python3
"""/sandwich: callers and callees of a function. A program built here calls
a hot function from two known callers (and itself recursively) under perf
record -e cpu-clock -g: both roots equal /top's total of the function for
every weight and filter, the callers tree holds the known callers with the
shares perf script's stacks give, recursion is counted once, the callees of
main hold both callers, and the leaves of the callers tree are comms.
Unknown functions are 404, a missing one 400; perfhub callers and callees
print the same trees, from the server or from the recording itself."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, builddir, check, tmpdir  # noqa: E402
from views_common import (build, get, names, need_tools, perf_script_stacks,  # noqa: E402
                          record, sums_ok, top_row)

PROGRAM = r"""
static volatile unsigned long sink;

__attribute__((noinline)) static unsigned long hot(unsigned long n)
{
	unsigned long s = 0, i;
	for (i = 0; i < n; i++)
		s += i * i ^ (s >> 3);
	return s;
}

/* recursion: hot under deep, under deep again */
__attribute__((noinline)) static unsigned long deep(int levels, unsigned long n)
{
	return levels ? deep(levels - 1, n) + 1 : hot(n);
}

__attribute__((noinline)) static void caller_a(void) { sink += hot(60000000); }
__attribute__((noinline)) static void caller_b(void) { sink += hot(20000000); }
__attribute__((noinline)) static void caller_c(void) { sink += deep(3, 20000000); }

int main(void)
{
	caller_a();
	caller_b();
	caller_c();
	return 0;	/* perf record exits with the workload's status */
}
"""


def leaves(tree):
    if not tree["children"]:
        return [tree["name"]]
    out = []
    for c in tree["children"]:
        out += leaves(c)
    return out


def child(tree, name):
    for c in tree["children"]:
        if c["name"] == name:
            return c
    return None


def main():
    why = need_tools()
    if why:
        print(why)
        return SKIP
    work = tmpdir("views-sandwich-")
    try:
        exe = build(work, "calls", PROGRAM)
        rec = os.path.join(work, "calls.data")
        check(record(rec, ["-e", "cpu-clock", "-g"], [exe]), "perf record")
        stacks = perf_script_stacks(rec, "cpu-clock")
        with Daemon() as d:
            st, up = d.upload(rec)
            check(st == 202 and d.wait(up["id"])["status"] == "ready", "upload: %r" % (up,))
            pid = up["id"]
            # perf script's view: samples with hot anywhere; the caller right above
            # its outermost frame
            with_hot = [s for s in stacks if "hot" in s[3]]
            by_caller = {}
            for s in with_hot:
                outer = len(s[3]) - 1 - s[3][::-1].index("hot")
                up_one = s[3][outer + 1] if outer + 1 < len(s[3]) else None
                by_caller[up_one] = by_caller.get(up_one, 0) + 1
            for weight in ("samples", "period"):
                sw = get(d, pid, "sandwich", function="hot", weight=weight)
                total = top_row(d, pid, "hot", weight=weight)["total"]
                check(sw["function"] == "hot" and sw["weight"] == weight, "header")
                check(sw["callers"]["value"] == sw["callees"]["value"] == total > 0,
                      "%s: roots %d %d, top %d" % (weight, sw["callers"]["value"],
                                                   sw["callees"]["value"], total))
                check(sums_ok(sw["callers"]) and sums_ok(sw["callees"]), "sums")
            sw = get(d, pid, "sandwich", function="hot", weight="samples")
            check(sw["callers"]["value"] == len(with_hot),
                  "samples with hot: %d, perf script %d" % (sw["callers"]["value"], len(with_hot)))
            for name in ("caller_a", "caller_b", "deep"):
                c = child(sw["callers"], name)
                check(c and c["value"] == by_caller.get(name, 0),
                      "caller %s: %r, perf script %d" % (name, c and c["value"],
                                                        by_caller.get(name, 0)))
            check(set(leaves(sw["callers"])) == {"calls"}, "callers end at the comm")
            check(sw["callers"]["dso"] == exe and sw["callees"]["dso"] == exe, "root dso")
            # recursion counts once: deep's total is the samples under caller_c
            rec_sw = get(d, pid, "sandwich", function="deep", weight="samples")
            in_deep = sum(1 for s in stacks if "deep" in s[3])
            check(rec_sw["callers"]["value"] == rec_sw["callees"]["value"] == in_deep ==
                  top_row(d, pid, "deep")["total"], "deep counted once per stack")
            check([c["name"] for c in rec_sw["callers"]["children"]] == ["caller_c"],
                  "deep's outermost frame is called by caller_c")
            check(child(rec_sw["callees"], "deep") is not None, "deep calls deep")
            mn = get(d, pid, "sandwich", function="main", weight="samples")
            check({"caller_a", "caller_b", "caller_c"} <= names(mn["callees"]), "main's callees")
            # filters as /flamegraph: a comm, a time range, max_nodes
            t0, t1 = min(s[1] for s in stacks), max(s[1] for s in stacks)
            mid = (t0 + t1) // 2
            for params in ({"comm": "calls"}, {"from_ns": mid}, {"to_ns": mid},
                           {"comm": "nobody"}):
                sw = get(d, pid, "sandwich", function="hot", weight="samples", **params)
                total = top_row(d, pid, "hot", weight="samples", **params)["total"]
                check(sw["callers"]["value"] == sw["callees"]["value"] == total,
                      "%r: %d %d vs %d" % (params, sw["callers"]["value"],
                                           sw["callees"]["value"], total))
            small = get(d, pid, "sandwich", function="hot", max_nodes=3)
            check(len(names(small["callers"])) <= 3, "max_nodes")
            # what is not there
            st, j = d.json("GET", "/api/v1/profiles/%d/sandwich?function=nosuch" % pid)
            check(st == 404 and "nosuch" in j["error"], "unknown: %d %r" % (st, j))
            st, j = d.json("GET", "/api/v1/profiles/%d/sandwich" % pid)
            check(st == 400 and "function" in j["error"], "missing: %d %r" % (st, j))
            st, j = d.json("GET", "/api/v1/profiles/%d/sandwich?function=%s" % (pid, "x" * 5000))
            check(st == 400, "too long: %d" % st)
            st, j = d.json("GET", "/api/v1/profiles/%d/sandwich?function=%%ff%%fe" % pid)
            check(st == 400 and "UTF-8" in j["error"], "not UTF-8: %d %r" % (st, j))
            st, j = d.json("GET", "/api/v1/profiles/999/sandwich?function=hot")
            check(st == 404, "no profile: %d" % st)
            # the CLI
            env = dict(os.environ, PERFHUB_SERVER=d.url)
            cli = os.path.join(builddir(), "cli", "perfhub")
            out = subprocess.run([cli, "callers", str(pid), "hot"], capture_output=True,
                                 text=True, env=env, timeout=60)
            check(out.returncode == 0 and "caller_a" in out.stdout and "caller_b" in out.stdout
                  and out.stdout.splitlines()[1].lstrip().startswith("100.00%"),
                  "perfhub callers: %r %r" % (out.stdout, out.stderr))
            out = subprocess.run([cli, "callees", str(pid), "main", "--json", "--weight",
                                  "samples"], capture_output=True, text=True, env=env, timeout=60)
            check(out.returncode == 0 and json.loads(out.stdout) == mn["callees"],
                  "perfhub callees --json: %r" % out.stderr)
            out = subprocess.run([cli, "callers", str(pid), "nosuch"], capture_output=True,
                                 text=True, env=env, timeout=60)
            check(out.returncode == 1 and "nosuch" in out.stderr, "unknown: %r" % out.stderr)
            # a local recording, no server: the same trees
            for fn, side, args in (("hot", "callers", []), ("main", "callees",
                                                            ["--weight", "samples"])):
                want = get(d, pid, "sandwich", function=fn,
                           weight=args[1] if args else None)[side]
                out = subprocess.run([cli, side, rec, fn, "--json"] + args, capture_output=True,
                                     text=True, timeout=300)
                check(out.returncode == 0 and json.loads(out.stdout) == want,
                      "perfhub %s FILE %s: %r" % (side, fn, out.stderr))
        print("hot: %d samples, callers %r" % (len(with_hot), by_caller))
        return 0
    finally:
        subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    sys.exit(main())
