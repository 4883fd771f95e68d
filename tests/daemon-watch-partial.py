#!/usr/bin/env python3
"""perfhubd --watch never takes half a recording:

- a finished file-mode recording written in two pieces (two opens, each
  closed, a pause between them longer than the watcher's settling time)
  is taken once, whole: its header's data size and feature table say what
  must be there;
- a pipe-mode recording copied slowly (one writer, a pause mid-file) is
  taken once, whole, after its writer closes it;
- a recording written in place by `perf record` is not taken while perf
  runs; killed with -9 (data size 0, closed by the kernel) it is taken and
  parsed with the "did not end" warning.
Each profile's sha256 is that of the whole file. Skips (77) where perf
cannot record."""
import hashlib
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.environ.get("top_srcdir", "."), "tests"))
from perfhubd_harness import SKIP, BUSY, Daemon, check, have_perf_record, perf_record, tmpdir

PAUSE = 4	# seconds between pieces: longer than the watcher's settling time


def sha(data):
    return hashlib.sha256(data).hexdigest()


def profiles(d):
    return d.json("GET", "/api/v1/profiles?limit=1000")[1]["profiles"]


def in_pieces(d, inbox, data):
    """Two opens, each closed: the first holds everything but the end."""
    path = os.path.join(inbox, "pieces.data")
    cut = len(data) - 200
    with open(path, "wb") as f:
        f.write(data[:cut])
    time.sleep(PAUSE)
    check(not profiles(d), "the first piece was taken: %r" % profiles(d))
    with open(path, "ab") as f:
        f.write(data[cut:])
    p = d.wait(d.wait_profiles(1)["profiles"][0]["id"])
    check(p["sha256"] == sha(data) and p["status"] == "ready",
          "pieces: %s %s, the whole file's sha256 %s" % (p["status"], p["sha256"], sha(data)))
    print("ok: a file-mode recording written in two pieces is taken once, whole")


def slow_copy(d, inbox, data):
    """A pipe-mode recording, one writer pausing mid-file."""
    path = os.path.join(inbox, "slow.data")
    with open(path, "wb") as f:
        f.write(data[:len(data) // 2])
        f.flush()
        time.sleep(PAUSE)
        check(len(profiles(d)) == 1, "half a slow copy was taken")
        f.write(data[len(data) // 2:])
    lst = d.wait_profiles(2)["profiles"]
    p = d.wait(lst[0]["id"])
    check(p["sha256"] == sha(data) and p["status"] == "ready",
          "slow copy: %s %s, the whole file's sha256 %s" % (p["status"], p["sha256"], sha(data)))
    print("ok: a pipe-mode recording copied slowly is taken once, whole")


def killed_in_place(d, inbox):
    """perf record writing into the watched directory, killed."""
    path = os.path.join(inbox, "killed.data")
    proc = subprocess.Popen(["perf", "record", "-q", "-e", "cpu-clock", "-m", "4", "-g", "-o", path,
                             "--", "sh", "-c", "while :; do :; done"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 60
    while time.time() < deadline and (not os.path.exists(path) or
                                      os.path.getsize(path) < 100000):
        time.sleep(0.2)
    time.sleep(PAUSE)
    check(len(profiles(d)) == 2, "taken while perf record was writing it")
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    lst = d.wait_profiles(3)["profiles"]
    p = d.wait(lst[0]["id"])
    data = open(path, "rb").read()
    check(p["status"] == "ready" and p["sha256"] == sha(data) and
          any("did not end" in w for w in p.get("warnings", [])),
          "killed in place: %s %r" % (p["status"], p.get("warnings")))
    print("ok: perf record's file is taken once perf is killed, with the warning")


def main():
    if not have_perf_record():
        print("SKIP: perf record does not work here")
        return SKIP
    work = tmpdir("watch-partial-")
    inbox = os.path.join(work, "inbox")
    os.makedirs(inbox)
    filemode = open(perf_record(os.path.join(work, "f.data"), ["-g", "-e", "cpu-clock"], BUSY),
                    "rb").read()
    pipe = subprocess.run(["perf", "record", "-q", "-g", "-e", "cpu-clock", "-o", "-", "--"] + BUSY,
                          capture_output=True, timeout=120).stdout
    check(pipe[:8] == b"PERFILE2" and len(pipe) > 1000, "no pipe-mode recording")
    with Daemon(args=["--watch", inbox]) as d:
        in_pieces(d, inbox, filemode)
        slow_copy(d, inbox, pipe)
        killed_in_place(d, inbox)
        check(len(profiles(d)) == 3, "%d profiles, want 3" % len(profiles(d)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
