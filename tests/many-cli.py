#!/usr/bin/env python3
"""perfhub ls SELECTOR, top, flamegraph (--svg) and diff against a test
server and on local files, and perfhub record's --fail-over/--base gate,
around the workload with a known regression: the answers equal the API's
(a file's equal the server's for the same bytes), the SVG is well-formed
and draws what the flame graph holds, diff exits 1 on the injected
regression and 0 on two runs of the same build (from the server and from
files), 2 on errors; record exits 1 when its run regressed against the
base selector and 0 when it did not."""
import json
import os
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, tmpdir  # noqa: E402
from client_common import perfhub  # noqa: E402
from many_common import RUNS, q, record_runs, regress_prog, upload_runs  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
# three slow runs: with two, Welch's test can have one degree of freedom
# and a busy machine's spread makes the regression not significant
RUNS_CLI = [r for r in RUNS if r[0] in ("fast1", "fast2", "fast3", "slow1", "slow2", "slow3", "fast4")]


def ph(d, *args):
    return perfhub(list(args) + ["--server", d.url])


def record(d, *args):
    """perfhub record's own options go before "--"."""
    return perfhub(["record", "--server", d.url] + list(args))


def test_ls_top(d, ids, paths):
    r = ph(d, "ls", '{build="slow"}')
    listed = [int(line.split()[0]) for line in r.stdout.splitlines()[1:]]
    check(r.returncode == 0 and sorted(listed) == sorted([ids["slow1"], ids["slow2"], ids["slow3"]]),
          "ls selector: %s %r" % (r.returncode, r.stdout))
    r = ph(d, "ls", '{build=~"fast|slow"}', "--since", "1d", "--limit", "2")
    check(r.returncode == 0 and len(r.stdout.splitlines()) == 3, "ls --since --limit")
    r = ph(d, "ls", '{build="slow"')
    check(r.returncode == 1 and "position 14" in r.stderr, "ls bad selector: %r" % r.stderr)
    # top: an id, a selector, a file - each what the API answers
    r = ph(d, "top", str(ids["fast1"]), "--json", "--limit", "1000")
    mine = json.loads(r.stdout)
    st, api = d.json("GET", "/api/v1/query/top?rows=1000&q=" + q('{id="%d"}' % ids["fast1"]))
    check(r.returncode == 0 and mine["functions"] == api["functions"], "top ID = the API's")
    r = perfhub(["top", paths["fast1"], "--json", "--limit", "1000"])
    check(r.returncode == 0 and json.loads(r.stdout)["functions"] == api["functions"],
          "top FILE (offline) = the server's for the same bytes")
    r = ph(d, "top", '{build="slow"}', "--limit", "3")
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and "3 profiles" in lines[0] and "hash_rows" in lines[2],
          "top SELECTOR table: %r" % r.stdout)
    r = ph(d, "top", '{build="none"}')
    check(r.returncode == 1 and "no ready profile" in r.stderr, "top of nothing")


def svg_frames(text):
    root = ET.fromstring(text)
    check(root.tag == SVG + "svg" and root.find(SVG + "script") is not None, "an SVG with its script")
    return {g.get("data-n"): g.find(SVG + "title").text for g in root.iter(SVG + "g")}


def test_flamegraph(d, ids, paths):
    r = perfhub(["flamegraph", paths["fast1"]])
    st, api = d.json("GET", "/api/v1/profiles/%d/flamegraph" % ids["fast1"])
    check(r.returncode == 0 and json.loads(r.stdout) == api, "flamegraph FILE = the server's")
    r = ph(d, "flamegraph", str(ids["fast1"]))
    check(r.returncode == 0 and json.loads(r.stdout) == api, "flamegraph ID")
    r = ph(d, "flamegraph", '{build="slow"}', "--svg", "--title", "slow <builds>")
    frames = svg_frames(r.stdout)
    check(r.returncode == 0 and "hash_rows" in frames and "run_batch" in frames,
          "the SVG draws the frames: %r" % list(frames)[:8])
    check("slow &lt;builds&gt;" in r.stdout and "3 profiles" in r.stdout, "title and what")
    check(frames["all"].startswith("all: ") and "100.00%" in frames["all"], "root tooltip")
    r = perfhub(["flamegraph", paths["slow1"], "--svg", "--weight", "samples", "--width", "800"])
    frames = svg_frames(r.stdout)
    check(r.returncode == 0 and 'width="800"' in r.stdout and "hash_rows" in frames,
          "flamegraph FILE --svg")


def test_diff(d, ids, paths):
    r = ph(d, "diff", '{build="fast", kind!="again"}', '{build="slow"}')
    rows = [line for line in r.stdout.splitlines() if line.startswith("hash_rows ")]
    check(r.returncode == 1 and "FAIL: hash_rows grew" in r.stdout and rows and
          r.stdout.index(rows[0]) < r.stdout.index("IMPROVEMENTS"),
          "diff selectors: regression, exit 1 (%d)\n%s" % (r.returncode, r.stdout))
    r = ph(d, "diff", '{build="fast"}', '{build="slow"}', "--json", "--limit", "2")
    j = json.loads(r.stdout)
    check(r.returncode == 1 and j["gate"]["failed"] and j["gate"]["function"] == "hash_rows" and
          j["regressions"][0]["function"] == "hash_rows" and len(j["regressions"]) == 2 and
          j["summary"]["base_profiles"] == 4, "diff --json: %r" % j.get("gate"))
    r = ph(d, "diff", '{build="fast"}', '{build="slow"}', "--fail-over", "50")
    check(r.returncode == 0 and "ok:" in r.stdout, "--fail-over 50: exit 0")
    r = ph(d, "diff", '{build="fast"}', '{build="slow"}', "--significant-only", "--json")
    j = json.loads(r.stdout)
    check(r.returncode == 1 and j["gate"]["significant_only"] and
          j["regressions"][0]["significant"], "--significant-only: the regression stands out")
    # a threshold of 0: some function always grows a little
    r = ph(d, "diff", str(ids["fast1"]), str(ids["fast4"]), "--fail-over", "0")
    check(r.returncode == 1, "--fail-over 0 on the same build: exit 1")
    # the same build twice: the default threshold holds, from the server and from files
    r = ph(d, "diff", str(ids["fast1"]), str(ids["fast4"]))
    check(r.returncode == 0, "same build (ids): exit 0\n%s" % r.stdout)
    r = perfhub(["diff", paths["fast1"], paths["fast4"]])
    check(r.returncode == 0, "same build (files): exit 0\n%s" % r.stdout)
    r = perfhub(["diff", paths["fast2"], paths["slow2"], "--json"])
    off = json.loads(r.stdout)
    check(r.returncode == 1 and off["regressions"][0]["function"] == "hash_rows",
          "files: the regression, exit 1")
    st, on = d.json("GET", "/api/v1/diff?rows=0&base=%d&target=%d" % (ids["fast2"], ids["slow2"]))
    for a in off["regressions"]:
        b = [x for x in on["regressions"] if x["function"] == a["function"]]
        check(b and abs(a["delta_self"] - b[0]["delta_self"]) < 1e-6 and
              abs(a["delta_total"] - b[0]["delta_total"]) < 1e-6 and
              a["significant"] == b[0]["significant"],
              "offline %s = the server's %r" % (a["function"], b))
    # errors: exit 2
    for args in (["diff", paths["fast1"], str(ids["slow1"])],
                 ["diff", '{build="x"', '{build="y"}'],
                 ["diff", "/no/such/file", "1"],
                 ["diff", "1"],
                 ["diff", "1", "2", "--fail-over", "x"],
                 ["diff", "1", "2", "--bogus"]):
        r = ph(d, *args)
        check(r.returncode == 2, "%r: exit 2 (%d) %s" % (args, r.returncode, r.stderr))
    r = perfhub(["diff", "1", "2", "--server", "http://127.0.0.1:1"])
    check(r.returncode == 2, "no server: exit 2 (%d)" % r.returncode)


def test_record_gate(d):
    r = record(d, "--fail-over", "5", "--base", '{build="fast"}', "--", regress_prog(), "--slow")
    check(r.returncode == 1 and "FAIL: hash_rows grew" in r.stdout,
          "record of a slower build: exit 1 (%d)\n%s%s" % (r.returncode, r.stdout, r.stderr))
    r = record(d, "--base", '{build="fast"}', "--base-last", "3", "--", regress_prog())
    check(r.returncode == 0 and "ok: no function" in r.stdout,
          "record of the same build: exit 0 (%d)\n%s%s" % (r.returncode, r.stdout, r.stderr))
    r = record(d, "--json", "--fail-over", "5", "--base", '{build="fast"}', "--", regress_prog(),
               "--slow")
    check(r.returncode == 1 and json.loads(r.stdout)["status"] == "ready" and
          "FAIL: hash_rows" in r.stderr, "record --json: the gate's table on stderr")
    r = record(d, "--fail-over", "5", "--", "true")
    check(r.returncode == 2 and "--base" in r.stderr, "--fail-over without --base")


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("many-cli-")
    paths = record_runs(work, RUNS_CLI)
    # recordings of this machine: symbolized from its files as the offline
    # answers are
    with Daemon(args=["--local-uploads"]) as d:
        ids = upload_runs(d, paths, RUNS_CLI)
        test_ls_top(d, ids, paths)
        test_flamegraph(d, ids, paths)
        test_diff(d, ids, paths)
        test_record_gate(d)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
