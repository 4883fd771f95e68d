#!/usr/bin/env python3
"""The profile engine offline: a recording made now (two events, several
processes, kernel frames) is read into a profile in memory by the engine's
feed and folded by the engine (tests/engine-fold); every answer must equal,
byte for byte, `perfhub collapse` of the file and perfhubd's /collapsed of
the same upload, for the default event and weight, --weight samples,
--event, --pid, --tid and --kernel; a time range (read from the sample
blocks kept in memory) must equal the daemon's."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, Daemon, check, have_perf_record, perf_record, tmpdir

BUILD = os.environ.get("top_builddir", ".")
ENGINE_FOLD = os.path.join(BUILD, "tests", "engine-fold")
PERFHUB = os.path.join(BUILD, "cli", "perfhub")
PROGS = os.path.join(BUILD, "tests", "progs")

# (engine-fold and perfhub collapse flags, the daemon's query)
CASES = [
    ([], ""),
    (["--weight", "samples"], "weight=samples"),
    (["--event", "task-clock"], "event=task-clock"),
    (["--pid"], "with_pid=1"),
    (["--tid"], "with_tid=1"),
    (["--kernel"], "kernel=1"),
    (["--pid", "--kernel", "--weight", "samples"], "with_pid=1&kernel=1&weight=samples"),
]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, timeout=300)
    check(r.returncode == 0, "%s: exit %d: %s" % (" ".join(cmd), r.returncode,
                                                  r.stderr.decode(errors="replace")[:500]))
    return r.stdout


def first_difference(a, b):
    la, lb = a.decode(errors="replace").splitlines(), b.decode(errors="replace").splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return "line %d:\n  engine %s\n  other  %s" % (i + 1, x, y)
    return "%d lines against %d" % (len(la), len(lb))


def total(folded):
    return sum(int(l.rpartition(b" ")[2]) for l in folded.splitlines())


def main():
    if not have_perf_record():
        print("perf record does not work here")
        return SKIP
    work = tmpdir("engine-offline-")
    data = os.path.join(work, "p.data")
    # calls (user frames in a program and a library), forker (comm changes,
    # a child process), dd (time in the kernel: system calls)
    perf_record(data, ["-g", "-e", "cpu-clock", "-e", "task-clock"],
                ["sh", "-c", "%s/calls 0.4 & %s/forker %s/calls & "
                 "dd if=/dev/zero of=/dev/null bs=4k count=200000 2>/dev/null; wait" %
                 (PROGS, PROGS, PROGS)])

    answers = {}
    for flags, _ in CASES:
        got = run([ENGINE_FOLD, data] + flags)
        want = run([PERFHUB, "collapse", data] + flags)
        check(got, "engine-fold %s printed nothing" % " ".join(flags))
        check(got == want, "engine fold %s differs from perfhub collapse: %s" %
              (" ".join(flags), first_difference(got, want)))
        answers[tuple(flags)] = got
    # the cases really differ: kernel frames marked, pid and tid shown
    check(b"_[k]" in answers[("--kernel",)], "no kernel frame in the recording")
    check(answers[("--kernel",)] != answers[()], "--kernel changed nothing")
    check(answers[("--tid",)] != answers[("--pid",)], "--tid and --pid agree")
    check(total(answers[("--weight", "samples")]) < total(answers[()]),
          "samples weigh as much as periods")

    with Daemon() as d:
        st, r = d.upload(data)
        check(st == 202, "upload: %s %r" % (st, r))
        p = d.wait(r["id"])
        check(p["status"] == "ready", "profile %r" % p.get("error"))
        for flags, q in CASES:
            st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?%s" % (r["id"], q))
            check(st == 200, "collapsed?%s: %s" % (q, st))
            check(body == answers[tuple(flags)], "engine fold %s differs from /collapsed?%s: %s" %
                  (" ".join(flags), q, first_difference(answers[tuple(flags)], body)))

        # a time range: the samples of the blocks kept in memory, chosen
        # by time as the daemon chooses them from its stored blocks
        t = p["header"]["sample_time"]
        lo = t["first_ns"] + (t["last_ns"] - t["first_ns"]) // 4
        hi = t["first_ns"] + (t["last_ns"] - t["first_ns"]) // 2
        got = run([ENGINE_FOLD, data, "--weight", "samples", "--from", str(lo), "--to", str(hi)])
        st, _, body = d.request("GET", "/api/v1/profiles/%d/collapsed?weight=samples&"
                                "from_ns=%d&to_ns=%d" % (r["id"], lo, hi))
        check(st == 200 and body == got, "time range differs from the daemon's: %s" %
              first_difference(got, body))
        n, whole = total(got), total(answers[("--weight", "samples")])
        check(0 < n < whole, "time range has %d of %d samples" % (n, whole))
    print("engine fold equals perfhub collapse and /collapsed in %d cases and a time range"
          % len(CASES))
    return 0


if __name__ == "__main__":
    sys.exit(main())
