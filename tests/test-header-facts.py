#!/usr/bin/env python3
"""Header facts decoded by feat.c against `perf report --header-only -I`.

Records real files with `perf record` (several feature mixes), then takes
the corpus files perf itself can read, and compares every header line that
tests/feat-header prints with perf's line for the same fact: each of ours
must be in perf's output, and each of perf's lines for a fact we decode
(hostname ... compressed) must be in ours. Exit 77 when perf cannot record.
"""
import os
import re
import shutil
import subprocess
import sys

BUILD = os.environ.get("top_builddir", ".")
TMP = os.environ.get("PERFHUB_TEST_TMP", "/tmp")
SHARED = os.environ.get("PERFHUB_SHARED", "")
HELPER = os.path.join(BUILD, "tests", "feat-header")

# perf's header lines for the facts feat-header prints
COVERED = re.compile(
    r"^# (hostname|os release|perf version|arch|nrcpus online|nrcpus avail|cpudesc|"
    r"cpuid|total memory|cmdline|sibling sockets|sibling dies|sibling threads|"
    r"CPU \d+: Core ID|node\d+ meminfo|node\d+ cpu list|pmu mappings:|CPU cache info|"
    r" +L\d |time of first sample|time of last sample|sample duration|memory nodes|"
    r" +\d+ \[|clockid frequency|directory data version|compressed :)"
)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, errors="replace", **kw)


def perf_header(path):
    r = run(["perf", "report", "--header-only", "-I", "-i", path],
            env=dict(os.environ, HOME=TMP))
    if r.returncode != 0:
        return None
    return [line.rstrip() for line in r.stdout.splitlines()]


def compare(path, label):
    """Returns the number of mismatches (0 when equal); None when skipped."""
    theirs = perf_header(path)
    if theirs is None:
        return None
    r = run([HELPER, path])
    if r.returncode != 0:
        print("%s: feat-header failed: %s" % (label, r.stderr.strip()))
        return 1
    ours = [line.rstrip() for line in r.stdout.splitlines()]
    # perf finds the per-cpu part of CPU_TOPOLOGY by adding up string
    # sizes rounded to 64 bytes, not the lengths stored; files whose writer
    # padded otherwise (quipper) lose it in perf, while we read it
    if any("Socket ID information is not available" in t for t in theirs):
        ours = [o for o in ours if not re.match(r"^# CPU \d+: Core ID", o)]
    bad = 0
    their_set = set(theirs)
    our_set = set(ours)
    for line in ours:
        if line not in their_set:
            print("%s: ours, not perf's: %r" % (label, line))
            bad += 1
    for line in theirs:
        # perf prints "(null)"/"not available" for facts a file lacks or has
        # broken; those we leave out, so only real values must match
        if COVERED.match(line) and "(null)" not in line and line not in our_set:
            print("%s: perf's, not ours: %r" % (label, line))
            bad += 1
    print("%s: %d lines compared, %d mismatches" % (label, len(ours), bad))
    return bad


def main():
    if not shutil.which("perf"):
        print("perf not installed")
        return 77
    os.makedirs(TMP, exist_ok=True)
    recordings = [
        ("plain", []),
        ("zstd-mono-group", ["-z", "-k", "mono", "-e", "{cpu-clock,task-clock}"]),
        ("callgraph-tracepoint", ["-g", "-e", "cpu-clock", "-e", "sched:sched_switch"]),
    ]
    total_bad = 0
    recorded = 0
    for name, args in recordings:
        out = os.path.join(TMP, "header-facts-%s.data" % name)
        r = run(["perf", "record", "-q", "-o", out] + args + ["--", "sleep", "0.05"])
        if r.returncode != 0 or not os.path.exists(out):
            print("perf record %s failed: %s" % (name, r.stderr.strip()[:200]))
            continue
        recorded += 1
        bad = compare(out, name)
        total_bad += bad or 0
        os.unlink(out)
    if recorded == 0:
        print("perf record does not work here")
        return 77

    corpus = os.path.join(SHARED, "corpus", "external")
    if os.path.isdir(corpus):
        for f in sorted(os.listdir(corpus)):
            path = os.path.join(corpus, f)
            with open(path, "rb") as fh:
                head = fh.read(16)
            # file mode only: pipe-mode features arrive as records
            if head[:8] not in (b"PERFILE2", b"2ELIFREP") or len(head) < 16:
                continue
            order = "little" if head[:8] == b"PERFILE2" else "big"
            if int.from_bytes(head[8:16], order) == 16:
                continue
            # perf stops processing features at the first malformed one,
            # so what it shows after that is not the file's content
            r = run([HELPER, "--json", path])
            broken = [w for w in r.stdout.splitlines() if w.startswith("warning: feature ")]
            if broken:
                print("%s: skipped, perf stops at a malformed feature: %s" % (f, broken[0]))
                continue
            bad = compare(path, f)
            total_bad += bad or 0
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
