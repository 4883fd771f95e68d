#!/usr/bin/env python3
"""/annotate: a function's instructions and source lines with their samples.
A program built here (-O0 -g) spends its time in a loop of a known function
that also runs code inlined from a header, under perf record -e cpu-clock:
the instructions and the lines each add up to /top's self count of the
function (samples and period), the hottest line is the loop body, and the
instructions are perf annotate --stdio's, each with its percentage; the
inlined code is charged to the header's own line. Source text comes only
for a file under --source-root; perfhub annotate prints the listing, and
gives the same answer for the recording itself, without a server."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, builddir, check, tmpdir  # noqa: E402
from views_common import (build, get, line_of, need_tools, perf_annotate, record,  # noqa: E402
                          top_row)

HEADER = r"""
static inline __attribute__((always_inline)) unsigned long mix(unsigned long s, unsigned long i)
{
	return (s >> 3) ^ (i << 1);	/* MIX LINE */
}
"""

PROGRAM = r"""
#include "mix.h"

static volatile unsigned long sink, divisor = 7919;

__attribute__((noinline)) static unsigned long hot(unsigned long n)
{
	unsigned long s = 1, i;
	for (i = 0; i < n; i++)
		s += (s * i + 12345) % divisor + mix(s, i);	/* HOT LOOP */
	return s;
}

int main(void)
{
	sink = hot(40000000);
	return 0;	/* perf record exits with the workload's status */
}
"""


def check_sums(d, pid, a, weight):
    want = top_row(d, pid, "hot", weight=weight)["self"]
    insns = sum(i["samples"] for i in a["instructions"])
    lines = sum(x["samples"] for x in a["lines"])
    check(a["self"] == insns == lines == want > 0,
          "%s: self %d, instructions %d, lines %d, /top %d" % (weight, a["self"], insns, lines,
                                                              want))


def main():
    why = need_tools()
    if why:
        print(why)
        return SKIP
    work = tmpdir("views-annotate-")
    other = tmpdir("views-annotate-other-")
    try:
        with open(os.path.join(work, "mix.h"), "w") as f:
            f.write(HEADER)
        exe = build(work, "loop", PROGRAM)
        src = os.path.join(work, "loop.c")
        body = line_of(src, "HOT LOOP")
        mixline = line_of(os.path.join(work, "mix.h"), "MIX LINE")
        rec = os.path.join(work, "loop.data")
        check(record(rec, ["-e", "cpu-clock"], [exe]), "perf record")
        perf_insns, perf_lines = perf_annotate(rec, "hot")
        check(perf_insns, "perf annotate printed no instructions")
        # the same program outside every source root
        with open(os.path.join(other, "mix.h"), "w") as f:
            f.write(HEADER)
        exe2 = build(other, "loop2", PROGRAM)
        rec2 = os.path.join(other, "loop2.data")
        check(record(rec2, ["-e", "cpu-clock"], [exe2]), "perf record 2")
        with Daemon(args=["--source-root", work]) as d:
            st, up = d.upload(rec)
            check(st == 202 and d.wait(up["id"])["status"] == "ready", "upload: %r" % (up,))
            pid = up["id"]
            a = get(d, pid, "annotate", function="hot", weight="samples")
            check(a["function"] == "hot" and a["weight"] == "samples" and a["dso"] == exe and
                  a["file"] == src and a["symbol"] == "hot" and a["addresses"] == "dso" and
                  a["disassembler"].startswith("capstone") and "problem" not in a,
                  "header: %r" % ({k: v for k, v in a.items()
                                   if k not in ("lines", "instructions", "source")},))
            check_sums(d, pid, a, "samples")
            hottest = max((x for x in a["lines"] if "file" not in x), key=lambda x: x["samples"])
            check(hottest["line"] == body, "hottest line %d, the loop body is %d" %
                  (hottest["line"], body))
            # inlined code: the header's own file and line
            inl = [x for x in a["lines"] if x.get("file", "").endswith("/mix.h")]
            check(inl and inl[0]["line"] == mixline and inl[0]["samples"] > 0,
                  "inlined lines: %r" % inl)
            check(any(i.get("file", "").endswith("/mix.h") for i in a["instructions"]),
                  "inlined instructions")
            # perf annotate: the same instructions, the same shares (by period)
            p = get(d, pid, "annotate", function="hot", weight="period")
            check_sums(d, pid, p, "period")
            check(get(d, pid, "annotate", function="hot") == p, "the default weight is period")
            ours = {int(i["address"], 16): 100.0 * i["samples"] / p["self"]
                    for i in p["instructions"]}
            check(set(perf_insns) <= set(ours), "addresses perf lists that we do not: %r" %
                  sorted(set(perf_insns) - set(ours)))
            worst = max(abs(ours[k] - v) for k, v in perf_insns.items())
            check(worst <= 0.015, "an instruction's share differs from perf annotate's by %.3f"
                  % worst)
            perf_hot = max(perf_lines, key=perf_lines.get)
            check(perf_hot == body, "perf annotate's hottest line %d" % perf_hot)
            check(all(i["text"] for i in p["instructions"]), "every instruction has its text")
            # source text from the root; none from elsewhere
            s = a.get("source")
            check(s and s["file"] == src and
                  "HOT LOOP" in s["text"][body - s["first_line"]], "source: %r" % s)
            st, up2 = d.upload(rec2)
            check(st == 202 and d.wait(up2["id"])["status"] == "ready", "upload 2")
            a2 = get(d, up2["id"], "annotate", function="hot")
            check("source" not in a2 and a2["file"] == os.path.join(other, "loop2.c") and
                  a2["lines"], "outside the roots: lines, no text: %r" %
                  ((a2.get("problem"), a2.get("dso"), a2.get("build_id"), a2.get("file"),
                    a2.get("lines")),))
            # errors
            for query, status in (("function=nosuch", 404), ("", 400),
                                  ("function=hot&comm=loop", 400),
                                  ("function=hot&dso=/nowhere", 404),
                                  ("function=hot&weight=bogus", 400)):
                st, j = d.json("GET", "/api/v1/profiles/%d/annotate?%s" % (pid, query))
                check(st == status, "%s: %d %r" % (query, st, j))
            a3 = get(d, pid, "annotate", function="hot", dso=exe, weight="samples")
            check(a3 == a, "dso= names the one there is")
            # the CLI
            env = dict(os.environ, PERFHUB_SERVER=d.url)
            out = subprocess.run([os.path.join(builddir(), "cli", "perfhub"), "annotate",
                                  str(pid), "hot"], capture_output=True, text=True, env=env,
                                 timeout=60)
            check(out.returncode == 0 and "HOT LOOP" in out.stdout and "MIX LINE" not in
                  out.stdout and "mix.h" in out.stdout, "perfhub annotate: %r %r" %
                  (out.stdout[-2000:], out.stderr))
            # a local recording, no server: the same answer
            out = subprocess.run([os.path.join(builddir(), "cli", "perfhub"), "annotate",
                                  rec, "hot", "--json"], capture_output=True, text=True,
                                 timeout=300)
            check(out.returncode == 0 and json.loads(out.stdout) == p,
                  "perfhub annotate FILE --json differs from /annotate: %r" % out.stderr)
            out = subprocess.run([os.path.join(builddir(), "cli", "perfhub"), "annotate",
                                  rec, "hot", "--weight", "samples", "--json"],
                                 capture_output=True, text=True, timeout=300)
            check(out.returncode == 0 and json.loads(out.stdout) == a,
                  "perfhub annotate FILE --weight samples: %r" % out.stderr)
        print("hot: %d samples, line %d hottest (%d), perf annotate within %.3f points" %
              (a["self"], body, hottest["samples"], worst))
        return 0
    finally:
        subprocess.run(["rm", "-rf", work, other])


if __name__ == "__main__":
    sys.exit(main())
