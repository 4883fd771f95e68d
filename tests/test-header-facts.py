#!/usr/bin/env python3
"""Header facts decoded by feat.c against `perf report --header-only -I`.

Records real files with `perf record` (several feature mixes, file and
pipe mode), then takes the corpus files perf itself can read, and compares
every header line that tests/feat-header prints with perf's line for the
same fact: each of ours must be in perf's output, and each of perf's lines
for a fact we decode (hostname ... compressed) must be in ours. File-mode
files are checked twice: feat.c fed straight from the feature table, and
through the reader (pd_open_path); pipe-mode files through the reader.
Exit 77 when perf cannot record.
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
    r" +\d+ \[|clockid frequency|directory data version|compressed :|hybrid cpu system|"
    r"\S+ cpu list :|\S+ pmu capabilities:|contains samples with branch stack|"
    r"clockid: |reference time:)"
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


def is_pipe(path):
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head[:8] not in (b"PERFILE2", b"2ELIFREP") or len(head) < 16:
        return None  # not a PERFILE2 file (the v1 format has no features)
    order = "little" if head[:8] == b"PERFILE2" else "big"
    return int.from_bytes(head[8:16], order) == 16


def broken_feature(path, mode):
    """perf stops processing features at the first malformed one, so what
    it shows after that is not the file's content: such files are skipped."""
    r = run([HELPER, "--json"] + mode + [path])
    broken = [w for w in r.stdout.splitlines() if w.startswith("warning: feature ")]
    return broken[0] if broken else None


def compare_modes(path, label):
    modes = [["--reader"]] if is_pipe(path) else [[], ["--reader"]]
    bad = 0
    for mode in modes:
        tag = "%s%s" % (label, " (reader)" if mode else "")
        broken = broken_feature(path, mode)
        if broken:
            print("%s: skipped, perf stops at a malformed feature: %s" % (tag, broken))
            continue
        bad += compare(path, tag, mode) or 0
    return bad


def compare(path, label, mode):
    """Returns the number of mismatches (0 when equal); None when skipped."""
    theirs = perf_header(path)
    if theirs is None:
        return None
    if not any(COVERED.match(t) for t in theirs):
        print("%s: perf shows no header facts (cannot read the file)" % label)
        return None
    r = run([HELPER] + mode + [path])
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


def corpus_table(corpus):
    """SOURCES.md's Table 2: file -> (perf version, arch, os release, cmdline
    prefix); '—' is a fact the file does not carry."""
    facts = {}
    try:
        text = open(os.path.join(corpus, "SOURCES.md"), encoding="utf-8").read()
    except OSError:
        return facts
    table = text.split("## Table 2", 1)[-1].split("\n## ", 1)[0]
    for line in table.splitlines():
        cols = [c.strip() for c in line.split("|")]
        if len(cols) < 8 or not cols[1].startswith("`"):
            continue
        facts[cols[1].strip("`")] = (cols[2], cols[3], cols[4], cols[-2].strip("`"))
    return facts


def compare_table(path, label, want):
    """Header facts through the reader against the corpus table, for every
    file, including those perf 6.1 cannot read."""
    r = run([HELPER, "--reader", path])
    ours = {}
    for line in r.stdout.splitlines():
        m = re.match(r"^# (perf version|arch|os release|cmdline) : (.*)$", line)
        if m:
            ours[m.group(1)] = m.group(2).rstrip()
    bad = 0
    for key, value in zip(("perf version", "arch", "os release"), want[:3]):
        got = ours.get(key, "—")
        if value != "—" and got != value:
            print("%s: %s is %r, the corpus table says %r" % (label, key, got, value))
            bad += 1
    # the table cuts command lines at 60 characters
    cmd = want[3].rstrip()
    if cmd and not ours.get("cmdline", "").startswith(cmd):
        print("%s: cmdline %r, the corpus table says %r" % (label, ours.get("cmdline"), cmd))
        bad += 1
    print("%s: corpus table facts %s" % (label, "differ" if bad else "equal"))
    return bad


def main():
    if not shutil.which("perf"):
        print("perf not installed")
        return 77
    os.makedirs(TMP, exist_ok=True)
    recordings = [
        ("plain", [], False),
        ("zstd-mono-group", ["-z", "-k", "mono", "-e", "{cpu-clock,task-clock}"], False),
        ("callgraph-tracepoint", ["-g", "-e", "cpu-clock", "-e", "sched:sched_switch"], False),
        ("pipe", [], True),
        ("pipe-zstd-mono", ["-z", "-k", "mono"], True),
    ]
    total_bad = 0
    recorded = 0
    for name, args, pipe in recordings:
        out = os.path.join(TMP, "header-facts-%s.data" % name)
        if pipe:
            with open(out, "wb") as fh:
                r = subprocess.run(["perf", "record", "-q", "-o", "-"] + args +
                                   ["--", "sleep", "0.05"], stdout=fh,
                                   stderr=subprocess.PIPE)
        else:
            r = run(["perf", "record", "-q", "-o", out] + args + ["--", "sleep", "0.05"])
        if r.returncode != 0 or not os.path.exists(out):
            print("perf record %s failed: %s" % (name, str(r.stderr).strip()[:200]))
            continue
        recorded += 1
        total_bad += compare_modes(out, name)
        os.unlink(out)
    if recorded == 0:
        print("perf record does not work here")
        return 77

    corpus = os.path.join(SHARED, "corpus", "external")
    if os.path.isdir(corpus):
        table = corpus_table(corpus)
        for f in sorted(table):
            path = os.path.join(corpus, f)
            if os.path.exists(path):
                total_bad += compare_table(path, f, table[f])
        for f in sorted(os.listdir(corpus)):
            path = os.path.join(corpus, f)
            if f.endswith(".md") or is_pipe(path) is None:
                continue
            total_bad += compare_modes(path, f)
    else:
        print("no corpus at %s" % corpus)
    return 1 if total_bad else 0


if __name__ == "__main__":
    sys.exit(main())
