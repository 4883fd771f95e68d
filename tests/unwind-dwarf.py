#!/usr/bin/env python3
"""DWARF unwinding of --call-graph dwarf samples, checked two ways.

Builds tests/unwind-deep.c with -O0 -g -fomit-frame-pointer (no frame
pointers: only CFI can walk it), records it with
`perf record --call-graph dwarf`, unwinds every sample with unwind-walk
(the parser, the unwinder and a map table from MMAP2 records) and
  1. compares each stack, frame by frame (map-relative ips), with
     `perf script -F tid,time,ip,sym,dso` for the same sample;
  2. checks the stacks against the program's known call chains: every
     sample in leaf_spin must unwind to main (or the worker thread);
  3. unwinds every sample again with libdwfl alone (no cached CFI rows):
     most walks must come from the rows, and every one must match.
Prints both agreement percentages. Exit 77 when perf record or a C
compiler is unavailable.
"""
import os
import re
import shutil
import subprocess
import sys

MIN_AGREEMENT = 97.0     # % of samples whose stack equals perf's
MIN_FULL = 97.0          # % of leaf_spin samples unwound to their root
MIN_SAMPLES = 100

CHAIN = ["leaf_spin", "chain_d", "chain_c", "chain_b", "chain_a"]
RECURSE_DEPTH = 6
EXPECTED = [
    CHAIN + ["main"],
    CHAIN + ["worker"],
    ["leaf_spin"] + ["recurse"] * (RECURSE_DEPTH + 1) + ["main"],
]
PROGRAM_SYMS = set(CHAIN + ["recurse", "main", "worker"])


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def fail(why):
    print("FAIL: " + why)
    sys.exit(1)


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


def parse_perf_script(text):
    """{(tid, time_ns): [(ip, sym, dso)...]} from perf script output."""
    stacks = {}
    cur = None
    head = re.compile(r"^\s*(\d+)\s+(\d+)\.(\d{9}):")
    frame = re.compile(r"^\s+([0-9a-f]+) (.*) \((.*)\)$")
    for line in text.splitlines():
        m = head.match(line)
        if m:
            cur = []
            key = (int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3)))
            stacks[key] = cur
            continue
        m = frame.match(line)
        if m and cur is not None:
            ip, sym, dso = m.groups()
            ip = int(ip, 16)
            # perf lists the functions inlined at an ip as "(inlined)"
            # entries before the frame's own; they are one frame. An ip
            # with only inlined entries is still a frame.
            if cur and cur[-1][2] == "(inlined)" and cur[-1][0] == ip:
                cur.pop()
            cur.append((ip, sym, "(inlined)" if dso == "inlined"
                        else os.path.basename(dso)))
    for stack in stacks.values():
        # perf ends a walk that ran out of copied stack with an ip of -1,
        # not a frame
        while stack and stack[-1][0] == 0xffffffffffffffff:
            stack.pop()
    return stacks


def parse_walk(text):
    stacks = {}
    cur = None
    for line in text.splitlines():
        f = line.split(" ")
        if f[0] == "S":
            cur = []
            stacks[(int(f[1]), int(f[2]))] = cur
        elif cur is not None and len(f) >= 3:
            cur.append((int(f[0], 16), f[1], f[2]))
    return stacks


def program_part(stack):
    """The program's own frames, innermost first, up to its root."""
    syms = [s for _, s, _ in stack]
    out = []
    for s in syms:
        if s in PROGRAM_SYMS:
            out.append(s)
        elif out:
            break
    return out


def main():
    srcdir = os.environ.get("top_srcdir", ".")
    builddir = os.environ.get("top_builddir", ".")
    tmp = os.path.join(os.environ.get("PERFHUB_TEST_TMP", "/tmp"), "unwind-dwarf")
    os.makedirs(tmp, exist_ok=True)
    walk = os.path.join(builddir, "tests", "unwind-walk")
    perf = shutil.which("perf")
    if perf is None:
        skip("perf not installed")
    cc = None
    for c in [os.environ.get("CC", ""), "cc", "gcc", "clang"]:
        if c and shutil.which(c.split()[0]):
            cc = c
            break
    if cc is None:
        skip("no C compiler")

    prog = os.path.join(tmp, "unwind-deep")
    r = run(cc.split() + ["-O0", "-g", "-fomit-frame-pointer", "-pthread",
                          "-o", prog, os.path.join(srcdir, "tests", "unwind-deep.c")])
    if r.returncode != 0:
        skip("cannot build the test program: " + r.stderr.strip()[:200])

    data = os.path.join(tmp, "deep.data")
    r = run([perf, "record", "-q", "--call-graph", "dwarf", "-e", "cpu-clock:u",
             "-F", "2000", "-o", data, prog, "500"])
    if r.returncode != 0 or not os.path.exists(data):
        skip("perf record --call-graph dwarf failed: " + r.stderr.strip()[:200])

    r = run([perf, "script", "-i", data, "-F", "tid,time,ip,sym,dso", "--ns"])
    if r.returncode != 0:
        fail("perf script failed: " + r.stderr.strip()[:300])
    theirs = parse_perf_script(r.stdout)

    r = run([walk, data])
    if r.returncode != 0:
        fail("unwind-walk failed (%d): %s" % (r.returncode, r.stderr.strip()[:300]))
    print("unwind-walk: " + r.stderr.strip())
    ours = parse_walk(r.stdout)

    r = run([walk, "--compare", data])
    m = re.search(r"compare: (\d+) samples, (\d+) walked from CFI rows, (\d+) differ", r.stdout)
    print(r.stdout.strip()[-2000:] if r.stdout else r.stderr.strip()[:300])
    rows_ok = r.returncode == 0 and m is not None and int(m.group(3)) == 0 and \
        int(m.group(2)) * 2 >= int(m.group(1))

    if len(theirs) < MIN_SAMPLES:
        skip("only %d samples recorded" % len(theirs))

    same = 0
    shown = 0
    for key, stack in sorted(theirs.items()):
        mine = ours.get(key)
        if mine is not None and [f[0] for f in mine] == [f[0] for f in stack]:
            same += 1
        elif shown < 5:
            shown += 1
            print("differs at tid %d time %d:" % key)
            print("  perf: " + " ".join("%x:%s" % (ip, s) for ip, s, _ in stack))
            print("  ours: " + (" ".join("%x:%s" % (ip, s) for ip, s, _ in mine)
                                if mine else "(none)"))
    agreement = 100.0 * same / len(theirs)

    in_leaf = 0
    full = 0
    for key, stack in ours.items():
        if not stack or stack[0][1] != "leaf_spin":
            continue
        in_leaf += 1
        if program_part(stack) in EXPECTED:
            full += 1
    full_pct = 100.0 * full / in_leaf if in_leaf else 0.0

    print("samples: perf %d, unwound %d" % (len(theirs), len(ours)))
    print("agreement with perf script: %.2f%% (%d of %d stacks identical)"
          % (agreement, same, len(theirs)))
    print("full stacks (leaf_spin .. main/worker as built): %.2f%% (%d of %d)"
          % (full_pct, full, in_leaf))
    # The binary replaced after recording (another build-id): its file
    # must not be used, so no frame may be named from it and no stack may
    # pass through it beyond the leaf.
    rebuilt = run(cc.split() + ["-O0", "-g", "-fomit-frame-pointer", "-pthread",
                                "-DRECURSE_DEPTH=5", "-o", prog,
                                os.path.join(srcdir, "tests", "unwind-deep.c")])
    replaced_ok = True
    if rebuilt.returncode == 0:
        r = run([walk, data])
        m = re.search(r"build_id_mismatch (\d+)", r.stderr)
        named = sum(1 for st in parse_walk(r.stdout).values()
                    for _, s, _ in st if s in PROGRAM_SYMS)
        print("binary replaced: %s; frames named from it: %d"
              % (m.group(0) if m else r.stderr.strip()[:200], named))
        replaced_ok = r.returncode == 0 and m is not None and \
            int(m.group(1)) > 0 and named == 0

    if not rows_ok:
        fail("walks from cached CFI rows: too few, or not libdwfl's (see above)")
    if in_leaf < MIN_SAMPLES // 2:
        fail("only %d samples in leaf_spin" % in_leaf)
    if agreement < MIN_AGREEMENT:
        fail("agreement %.2f%% < %.0f%%" % (agreement, MIN_AGREEMENT))
    if full_pct < MIN_FULL:
        fail("full stacks %.2f%% < %.0f%%" % (full_pct, MIN_FULL))
    if not replaced_ok:
        fail("a binary with another build-id was used for unwinding")
    print("PASS")


if __name__ == "__main__":
    main()
