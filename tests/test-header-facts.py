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
import json
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
    r"clockid: |reference time:|group: |contains AUX area data)"
)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, errors="replace", **kw)


_outputs = {}


def cached(cmd):
    """Output of a command that only reads a file: each file is looked at
    several ways, each command needs running once."""
    key = tuple(cmd)
    if key not in _outputs:
        _outputs[key] = run(cmd, env=dict(os.environ, HOME=TMP))
    return _outputs[key]


def perf_header(path):
    r = cached(["perf", "report", "--header-only", "-I", "-i", path])
    if r.returncode != 0:
        return None
    return [line.rstrip() for line in r.stdout.splitlines()]


def is_pipe(path):
    if os.path.isdir(path):  # perf.data directory: the reader's business
        return True
    with open(path, "rb") as fh:
        head = fh.read(16)
    if head[:8] not in (b"PERFILE2", b"2ELIFREP") or len(head) < 16:
        return None  # not a PERFILE2 file (the v1 format has no features)
    order = "little" if head[:8] == b"PERFILE2" else "big"
    return int.from_bytes(head[8:16], order) == 16


def broken_feature(path, mode):
    """perf stops processing features at the first malformed one, so what
    it shows after that is not the file's content: such files are skipped."""
    r = cached([HELPER, "--json"] + mode + [path])
    broken = [w for w in r.stdout.splitlines() if w.startswith("warning: feature ")]
    return broken[0] if broken else None


def compare_build_ids(path, label, mode):
    """BUILD_ID feature entries against `perf buildid-list` (file mode).
    Without the feature perf reads build ids from the binaries on disk, so
    only files that have it are compared; perf lists an id+file once
    however often the section repeats it (per pid), so sets are compared."""
    js = cached([HELPER, "--json"] + mode + [path]).stdout
    if not re.search(r"^build_id: \[", js, re.M):
        return 0
    r = cached(["perf", "buildid-list", "-i", path])
    theirs = sorted(set(l.strip() for l in r.stdout.splitlines() if l.strip()))
    if r.returncode != 0 or not theirs:
        return 0
    ours = sorted(set(l.strip() for l in run([HELPER, "--build-ids"] + mode + [path])
                      .stdout.splitlines() if l.strip()))
    if ours != theirs:
        print("%s: build ids differ from perf buildid-list: ours %d, perf %d, "
              "first difference %r" % (label, len(ours), len(theirs),
                                       sorted(set(ours) ^ set(theirs))[:1]))
        return 1
    print("%s: %d build ids equal" % (label, len(ours)))
    return 0


def perf_events(lines):
    """(name, ids, type, size, config, period) from perf's '# event :' lines;
    perf leaves out fields that are zero."""
    events = []
    for line in lines:
        if not line.startswith("# event : name = "):
            continue
        rest = line[len("# event : name = "):]
        m = re.match(r"(.*?), (?:, )?(?=id = |type = |size = )", rest)
        if not m:
            continue
        name = m.group(1)

        def field(pattern, default=0):
            f = re.search(pattern, rest[m.end() - 2:])
            return int(f.group(1), 0) if f else default

        ids = re.search(r"id = \{ ([^}]*) \}", rest)
        events.append((name,
                       [int(x) for x in ids.group(1).split(",")] if ids else [],
                       field(r", type = (\d+)"), field(r", size = (\d+)"),
                       field(r", config = (0x[0-9a-f]+)"),
                       field(r", (?:\{ sample_period, sample_freq \}|sample_period|"
                             r"sample_freq) = (\d+)")))
    return events


def compare_events(path, label, mode, theirs):
    """EVENT_DESC against perf's event lines: name, ids, type, attr size,
    config and period/frequency of each event, in order."""
    want = perf_events(theirs)
    js = cached([HELPER, "--json"] + mode + [path]).stdout
    m = re.search(r"^event_desc: (.*)$", js, re.M)
    if not want or not m:
        return 0
    try:
        descs = json.loads(m.group(1))
    except ValueError:
        print("%s: event_desc is not JSON" % label)
        return 1
    if not isinstance(descs, list):
        return 0  # malformed: reported elsewhere
    got = [(d["name"], d["ids"], d["type"], d["size"], d["config"],
            d.get("sample_freq", d.get("sample_period"))) for d in descs]
    if got != want:
        for g, w in zip(got + [None] * len(want), want + [None] * len(got)):
            if g != w:
                print("%s: event ours %r, perf's %r" % (label, g, w))
                break
        return 1
    print("%s: %d events equal" % (label, len(got)))
    return 0


def compare_bpf(path, label, mode, theirs):
    """BPF_PROG_INFO against perf's bpf_prog_info lines: each program's id
    and each jited sub-program's tag, address and size (perf takes the
    names from BTF, which is not decoded here)."""
    want, prog = [], None
    for line in theirs:
        m = re.match(r"^# bpf_prog_info (\d+):(.*)$", line)
        s = re.match(r"^# \tsub_prog \d+: bpf_prog_([0-9a-f]{16})\S* addr (0x[0-9a-f]+) "
                     r"size (\d+)$", line)
        if m:
            prog = (int(m.group(1)), [])
            want.append(prog)
            one = re.match(r" bpf_prog_([0-9a-f]{16})\S* addr (0x[0-9a-f]+) size (\d+)$",
                           m.group(2))
            if one:
                prog[1].append((one.group(1), one.group(2), int(one.group(3))))
        elif s and prog:
            prog[1].append((s.group(1), s.group(2), int(s.group(3))))
    btf_want = [int(m.group(1)) for m in
                (re.match(r"^# btf info of id (\d+)$", t) for t in theirs) if m]
    if not want and not btf_want:
        return 0
    js = cached([HELPER, "--json"] + mode + [path]).stdout
    m = re.search(r"^bpf_btf: (.*)$", js, re.M)
    btf_got = [b["id"] for b in json.loads(m.group(1))] if m else []
    if btf_got != btf_want:
        print("%s: btf ids %r, perf's %r" % (label, btf_got, btf_want))
        return 1
    m = re.search(r"^bpf_prog_info: (.*)$", js, re.M)
    got = [(p["id"], [(sp.get("tag"), sp["addr"], sp.get("size"))
                      for sp in p.get("sub_progs", [])])
           for p in json.loads(m.group(1))] if m else []
    if got != want:
        print("%s: bpf programs differ from perf's: ours %r..., perf's %r..." %
              (label, got[:1], want[:1]))
        return 1
    print("%s: %d bpf programs and %d btf ids equal" % (label, len(got), len(btf_got)))
    return 0


def compare_modes(path, label):
    pipe = is_pipe(path)  # (or a directory: only the reader opens those)
    modes = [["--reader"]] if pipe else [[], ["--reader"]]
    bad = 0
    for mode in modes:
        tag = "%s%s" % (label, " (reader)" if mode else "")
        broken = broken_feature(path, mode)
        if broken:
            print("%s: skipped, perf stops at a malformed feature: %s" % (tag, broken))
            continue
        bad += compare(path, tag, mode) or 0
        if not pipe:
            bad += compare_build_ids(path, tag, mode)
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
    bad = compare_events(path, label, mode, theirs)
    bad += compare_bpf(path, label, mode, theirs)
    # perf finds the per-cpu part of CPU_TOPOLOGY by adding up string
    # sizes rounded to 64 bytes, not the lengths stored; files whose writer
    # padded otherwise (quipper) lose it in perf, while we read it
    if any("Socket ID information is not available" in t for t in theirs):
        ours = [o for o in ours if not re.match(r"^# CPU \d+: Core ID", o)]
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
    record = ["perf", "record", "-q"]
    recordings = [
        ("plain", record, [], "file"),
        ("zstd-mono-group", record, ["-z", "-k", "mono", "-e", "{cpu-clock,task-clock}"],
         "file"),
        ("callgraph-tracepoint", record, ["-g", "-e", "cpu-clock", "-e", "sched:sched_switch"],
         "file"),
        ("pipe", record, [], "pipe"),
        ("pipe-zstd-mono", record, ["-z", "-k", "mono"], "pipe"),
        ("threads", record, ["--threads"], "dir"),
        ("stat", ["perf", "stat", "record"], [], "file"),
    ]
    total_bad = 0
    recorded = 0
    for name, cmd, args, kind in recordings:
        out = os.path.join(TMP, "header-facts-%s.data" % name)
        shutil.rmtree(out, ignore_errors=True)
        if kind == "pipe":
            with open(out, "wb") as fh:
                r = subprocess.run(cmd + ["-o", "-"] + args + ["--", "sleep", "0.05"],
                                   stdout=fh, stderr=subprocess.PIPE)
        else:
            r = run(cmd + ["-o", out] + args + ["--", "sleep", "0.05"])
        if r.returncode != 0 or not os.path.exists(out):
            print("perf record %s failed: %s" % (name, str(r.stderr).strip()[:200]))
            continue
        recorded += 1
        total_bad += compare_modes(out, name)
        if os.path.isdir(out):
            shutil.rmtree(out)
        else:
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
